"""Hive Metastore sync: external tables for Hudi tables (copy-on-write: one table; merge-on-read:
``_ro`` and ``_rt``), kept in step with every commit; and the table lock held in a Hive Metastore
(:mod:`hive_sync.lock_provider`). Reads tables through :mod:`engine` only."""
