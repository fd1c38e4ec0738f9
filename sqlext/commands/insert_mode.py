"""Which write operation an INSERT statement runs, and with which duplicate rules (Hudi 0.15
``ProvidesHoodieConfig.buildHoodieInsertConfig``, ``deduceOperation``, ``deduceSparkSqlInsertIntoWriteOperation``,
``getDropDupsConfig`` and ``HoodieSparkSqlWriter``'s operation correction). Pure: no Spark, no storage.

Precedence, highest first:

1. ``hoodie.datasource.write.operation``, when set, is the operation.
2. The legacy flow, used only when ``hoodie.sql.insert.mode`` is set and ``hoodie.spark.sql.insert.into.operation``
   is not (:func:`_deduce_legacy`): ``hoodie.sql.bulk.insert.enable``, ``strict`` / ``non-strict`` / ``upsert``
   and ``hoodie.datasource.write.insert.drop.duplicates`` choose among bulk_insert, upsert and insert.
3. Otherwise (:func:`_deduce_sql_insert_into`): overwrite statements overwrite; without
   ``hoodie.spark.sql.insert.into.operation`` a table with a primary key and a precombine field upserts; else that
   setting (default ``insert``).

Duplicates: ``hoodie.combine.before.insert`` defaults to true when the table has a primary key and a precombine
field (rows of one batch with one key then keep the greatest ordering value, for insert and bulk_insert too);
``hoodie.datasource.insert.dup.policy`` (``none`` / ``drop`` / ``fail``) decides what happens to incoming keys the
table already holds, except in the legacy flow without an explicit policy, where ``strict`` on a copy-on-write
table fails on them (Hudi's ``ValidateDuplicateKeyPayload``) and ``hoodie.datasource.write.insert.drop.duplicates``
drops them. Dropping duplicates turns an upsert into an insert, as Hudi's writer does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.config import WriteConfig
from sqlext.errors import SqlAnalysisError

INSERT_INTO_OPERATIONS = ("insert", "upsert", "bulk_insert")
"""Values of ``hoodie.spark.sql.insert.into.operation``."""

INSERT_MODES = ("upsert", "strict", "non-strict")
"""Values of ``hoodie.sql.insert.mode`` (Hudi ``InsertMode``)."""

DUP_POLICIES = ("none", "drop", "fail")
"""Values of ``hoodie.datasource.insert.dup.policy``."""

DROP_DUPS_KEY_AS_PRINTED = f"Key: '{WriteConfig.INSERT_DROP_DUPLICATES.key}' , default: false"
"""How Hudi's messages print the ``INSERT_DROP_DUPS`` config property (``ConfigProperty.toString``, its start)."""


@dataclass(frozen=True)
class InsertTarget:
    """What the deduction needs to know of the statement and the table.

    Attributes:
        table: the table's name or path, for messages.
        has_primary_key: the table has record key fields (``primaryKey``).
        precombine_field: the precombine (ordering) field, ``""`` when the table has none.
        partitioned: the table has partition columns.
        copy_on_write: the table type is COPY_ON_WRITE.
        overwrite_table: INSERT OVERWRITE replacing the whole table.
        overwrite_partition: INSERT OVERWRITE replacing partitions.
    """

    table: str
    has_primary_key: bool
    precombine_field: str
    partitioned: bool
    copy_on_write: bool = True
    overwrite_table: bool = False
    overwrite_partition: bool = False


@dataclass(frozen=True)
class InsertDecision:
    """The outcome: ``operation`` (a ``hoodie.datasource.write.operation`` value), the options to force
    (``overrides``) and those to default when unset (``defaults``)."""

    operation: str
    overrides: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)

    def apply(self, options: dict[str, str]) -> None:
        """Write the decision into write ``options`` (defaults only where the key is unset)."""
        for key, value in self.defaults.items():
            options.setdefault(key, value)
        options.update(self.overrides)
        options[WriteConfig.OPERATION.key] = self.operation


def _choice(options: Mapping[str, str], key: str, allowed: tuple[str, ...], target: InsertTarget) -> str | None:
    value = options.get(key)
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered not in allowed:
        raise SqlAnalysisError(f"{key}={value!r} for table {target.table}: expected one of {', '.join(allowed)}")
    return lowered


def _flag(options: Mapping[str, str], key: str) -> bool:
    return options.get(key, "false").strip().lower() == "true"


def deduce_insert(options: Mapping[str, str], target: InsertTarget) -> InsertDecision:
    """The operation and duplicate options of an INSERT INTO / INSERT OVERWRITE (module doc).

    Args:
        options: the statement's ``hoodie.*`` options (catalog properties overlaid with session confs).
        target: the statement and table facts.

    Raises:
        SqlAnalysisError: an unknown value of ``hoodie.sql.insert.mode``, ``hoodie.spark.sql.insert.into.operation``
            or ``hoodie.datasource.insert.dup.policy``; bulk insert refused as Hudi refuses it (``Table with
            primaryKey can not use bulk insert in <mode> mode.``, ``Bulk insert cannot support drop
            duplication.``, ``Dropping duplicates with bulk_insert in row writer path is not supported yet``).
    """
    insert_mode = _choice(options, WriteConfig.SQL_INSERT_MODE.key, INSERT_MODES, target)
    sql_operation = _choice(options, WriteConfig.SQL_INSERT_INTO_OPERATION.key, INSERT_INTO_OPERATIONS, target)
    dup_policy = _choice(options, WriteConfig.INSERT_DUP_POLICY.key, DUP_POLICIES, target)
    explicit = options.get(WriteConfig.OPERATION.key)
    combine_before_insert = target.has_primary_key and bool(target.precombine_field)
    legacy = insert_mode is not None and sql_operation is None
    drop_dups = _flag(options, WriteConfig.INSERT_DROP_DUPLICATES.key)
    if explicit:
        operation = explicit.strip().lower()
        if target.overwrite_table and operation not in ("insert_overwrite_table", "insert_overwrite"):
            # Hudi writes with SaveMode.Overwrite: the table's data is replaced whatever the operation.
            operation = "insert_overwrite_table"
    elif legacy:
        operation = _deduce_legacy(options, target, insert_mode or "upsert", drop_dups, combine_before_insert)
    else:
        operation = _deduce_sql_insert_into(target, sql_operation)
    overrides: dict[str, str] = {}
    if not legacy:
        # getDropDupsConfig: the policy decides, and "drop" is Hudi's drop-duplicates switch.
        drop_dups = dup_policy == "drop"
        overrides[WriteConfig.INSERT_DUP_POLICY.key] = dup_policy or "none"
        overrides[WriteConfig.INSERT_DROP_DUPLICATES.key] = str(drop_dups).lower()
    elif dup_policy is None:
        # The legacy flow without a policy: strict validates keys on copy-on-write tables
        # (ValidateDuplicateKeyPayload); drop.duplicates drops stored keys.
        strict_fails = insert_mode == "strict" and target.copy_on_write and operation in ("insert", "upsert")
        overrides[WriteConfig.INSERT_DUP_POLICY.key] = "fail" if strict_fails else "drop" if drop_dups else "none"
    else:
        overrides[WriteConfig.INSERT_DUP_POLICY.key] = "drop" if drop_dups and dup_policy == "none" else dup_policy
    if drop_dups and operation == "upsert":
        # HoodieSparkSqlWriter: upsert makes no sense with drop duplicates; it is written as insert.
        operation = "insert"
    if drop_dups and operation == "bulk_insert":
        raise SqlAnalysisError(f"Dropping duplicates with bulk_insert in row writer path is not supported yet "
                               f"(table {target.table}, {WriteConfig.INSERT_DUP_POLICY.key}=drop)")
    if operation == "insert" and overrides[WriteConfig.INSERT_DUP_POLICY.key] != "fail":
        # HoodieSparkSqlWriter: an insert whose duplicate policy is not "fail" allows duplicates on inserts, whatever
        # hoodie.merge.allow.duplicate.on.inserts says (a stored key written again keeps both rows).
        overrides[WriteConfig.MERGE_ALLOW_DUPLICATE_ON_INSERTS.key] = "true"
    defaults = {WriteConfig.COMBINE_BEFORE_INSERT.key: str(combine_before_insert).lower()}
    return InsertDecision(operation, overrides, defaults)


def _deduce_sql_insert_into(target: InsertTarget, sql_operation: str | None) -> str:
    """Hudi ``deduceSparkSqlInsertIntoWriteOperation``."""
    if target.overwrite_table:
        return "insert_overwrite_table"
    if target.overwrite_partition:
        return "insert_overwrite"
    if sql_operation is None and target.has_primary_key and target.precombine_field:
        return "upsert"
    return sql_operation or "insert"


def _deduce_legacy(options: Mapping[str, str], target: InsertTarget, insert_mode: str, drop_dups: bool,
                   combine_before_insert: bool) -> str:
    """Hudi ``deduceOperation`` (``hoodie.sql.insert.mode`` set, ``hoodie.spark.sql.insert.into.operation`` not).
    Bulk insert into an overwrite is written as the overwrite operation (same rows)."""
    bulk = _flag(options, WriteConfig.SQL_BULK_INSERT_ENABLE.key)
    non_strict = insert_mode == "non-strict"
    if bulk and not non_strict:
        raise SqlAnalysisError(f"Table with primaryKey can not use bulk insert in {insert_mode} mode. "
                               f"(table {target.table}; set {WriteConfig.SQL_INSERT_MODE.key}=non-strict)")
    if bulk and drop_dups:
        raise SqlAnalysisError(f"Bulk insert cannot support drop duplication. Please disable "
                               f"{DROP_DUPS_KEY_AS_PRINTED} and try again. (table {target.table})")
    if target.overwrite_table:
        return "insert_overwrite_table"
    if target.overwrite_partition:
        return "insert_overwrite"
    if not bulk and not drop_dups and not non_strict and combine_before_insert:
        return "upsert"
    if bulk:
        return "bulk_insert"
    return "insert"


__all__ = ["DUP_POLICIES", "INSERT_INTO_OPERATIONS", "INSERT_MODES", "InsertDecision", "InsertTarget",
           "deduce_insert"]
