"""Hudi's insert duplicate policy (``hoodie.datasource.insert.dup.policy``): what an insert does with incoming
records whose key the table already holds. ``drop`` leaves them out (Hudi ``DataSourceUtils.dropDuplicates``,
``hoodie.datasource.write.insert.drop.duplicates``); ``fail`` fails the write before it starts, naming a key
(Hudi's strict insert mode, ``HoodieDuplicateKeyException``)."""

from __future__ import annotations

from pyspark.sql import DataFrame

from engine import errors
from engine.config import HoodieConfig, WriteConfig
from engine.index import is_global_index
from engine.table import Table
from engine.write.prepare import PARTITION_PATH, RECORD_KEY

POLICIES = ("none", "drop", "fail")
"""The values of ``hoodie.datasource.insert.dup.policy``."""


def insert_dup_policy(conf: HoodieConfig, table: Table) -> str:
    """The configured policy, lower-cased.

    Raises:
        ConfigError: a value other than :data:`POLICIES` (the message names key, value and table).
    """
    policy = conf.get(WriteConfig.INSERT_DUP_POLICY).strip().lower()
    if policy not in POLICIES:
        raise errors.ConfigError(f"{WriteConfig.INSERT_DUP_POLICY.key}={policy!r} for table {table.base_path}: "
                                 f"expected one of {', '.join(POLICIES)}")
    return policy


def apply_dup_policy(table: Table, keyed: DataFrame, stored: DataFrame, conf: HoodieConfig,
                     policy: str) -> DataFrame:
    """``keyed`` (records with ``_hoodie_record_key`` and ``_hoodie_partition_path``) under ``policy``.

    ``stored`` holds the table's keys (``_hoodie_record_key``, ``_hoodie_partition_path``: the simple index's
    side of the join). A key counts as present when the table holds it in the same partition, or anywhere
    with a global index (``GLOBAL_SIMPLE``), as Hudi's index tags it.

    Raises:
        WriteError: ``fail`` and an incoming key is present (``Duplicate key found for insert statement, key
            is: <key>``).
    """
    if policy == "none":
        return keyed
    on = [RECORD_KEY] if is_global_index(conf) else [RECORD_KEY, PARTITION_PATH]
    stored = stored.select(*on).distinct()
    if policy == "drop":
        return keyed.join(stored, on=on, how="left_anti")
    duplicate = keyed.join(stored, on=on, how="left_semi").select(RECORD_KEY).limit(1).collect()
    if duplicate:
        raise errors.WriteError(f"Duplicate key found for insert statement, key is: {duplicate[0][0]} "
                                f"(table {table.base_path}, {WriteConfig.INSERT_DUP_POLICY.key}=fail); "
                                "nothing was written")
    return keyed
