"""Concurrency control between writers of one table (Hudi ``org.apache.hudi.client.transaction``).

:mod:`engine.concurrency.locks` holds the lock providers (file system, in-process; the Hive Metastore one lives
in :mod:`hive_sync.lock_provider`) and the :class:`~engine.concurrency.locks.LockManager` that optimistic
concurrency control takes around each commit.
"""
