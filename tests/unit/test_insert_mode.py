"""Hudi 0.15's INSERT operation deduction (ProvidesHoodieConfig.buildHoodieInsertConfig, deduceOperation,
deduceSparkSqlInsertIntoWriteOperation, getDropDupsConfig, HoodieSparkSqlWriter's upsert-to-insert correction),
table-driven, without Spark."""

from __future__ import annotations

import pytest

from sqlext.commands.insert_mode import InsertTarget, deduce_insert
from sqlext.errors import SqlAnalysisError

OP = "hoodie.datasource.write.operation"
SQL_OP = "hoodie.spark.sql.insert.into.operation"
MODE = "hoodie.sql.insert.mode"
BULK = "hoodie.sql.bulk.insert.enable"
POLICY = "hoodie.datasource.insert.dup.policy"
DROP = "hoodie.datasource.write.insert.drop.duplicates"
COMBINE = "hoodie.combine.before.insert"

PK_PRE = InsertTarget("t", has_primary_key=True, precombine_field="ts", partitioned=True)
PK_ONLY = InsertTarget("t", has_primary_key=True, precombine_field="", partitioned=True)
PK_PRE_MOR = InsertTarget("t", has_primary_key=True, precombine_field="ts", partitioned=True, copy_on_write=False)
OVERWRITE_TABLE = InsertTarget("t", True, "ts", True, overwrite_table=True)
OVERWRITE_PARTITION = InsertTarget("t", True, "ts", True, overwrite_partition=True)

# (target, options, operation, dup policy the writer applies, combine before insert default)
CASES = [
    # no settings: upsert with a precombine field, else insert (deduceSparkSqlInsertIntoWriteOperation)
    (PK_PRE, {}, "upsert", "none", "true"),
    (PK_ONLY, {}, "insert", "none", "false"),
    (OVERWRITE_TABLE, {}, "insert_overwrite_table", "none", "true"),
    (OVERWRITE_PARTITION, {}, "insert_overwrite", "none", "true"),
    # hoodie.spark.sql.insert.into.operation wins over the precombine rule and over the legacy insert mode
    (PK_PRE, {SQL_OP: "insert"}, "insert", "none", "true"),
    (PK_PRE, {SQL_OP: "bulk_insert"}, "bulk_insert", "none", "true"),
    (PK_ONLY, {SQL_OP: "upsert"}, "upsert", "none", "false"),
    (PK_PRE, {SQL_OP: "insert", MODE: "upsert"}, "insert", "none", "true"),
    (PK_PRE, {SQL_OP: "BULK_INSERT", MODE: "strict", BULK: "true"}, "bulk_insert", "none", "true"),
    (OVERWRITE_TABLE, {SQL_OP: "insert"}, "insert_overwrite_table", "none", "true"),
    # hoodie.datasource.write.operation wins over everything
    (PK_PRE, {OP: "insert", SQL_OP: "upsert", MODE: "upsert"}, "insert", "none", "true"),
    (OVERWRITE_TABLE, {OP: "bulk_insert"}, "insert_overwrite_table", "none", "true"),  # SaveMode.Overwrite
    (OVERWRITE_PARTITION, {OP: "insert"}, "insert", "none", "true"),
    # the legacy flow: hoodie.sql.insert.mode set, hoodie.spark.sql.insert.into.operation not (deduceOperation)
    (PK_PRE, {MODE: "upsert"}, "upsert", "none", "true"),
    (PK_ONLY, {MODE: "upsert"}, "insert", "none", "false"),
    (PK_PRE, {MODE: "strict"}, "upsert", "fail", "true"),
    (PK_PRE_MOR, {MODE: "strict"}, "upsert", "none", "true"),  # MOR: no ValidateDuplicateKeyPayload
    (PK_ONLY, {MODE: "strict"}, "insert", "fail", "false"),
    (PK_PRE, {MODE: "non-strict"}, "insert", "none", "true"),
    (PK_PRE, {MODE: "non-strict", BULK: "true"}, "bulk_insert", "none", "true"),
    (PK_PRE, {MODE: "upsert", DROP: "true"}, "insert", "drop", "true"),
    (PK_PRE, {MODE: "strict", POLICY: "none"}, "upsert", "none", "true"),  # an explicit policy wins
    (OVERWRITE_PARTITION, {MODE: "non-strict", BULK: "true"}, "insert_overwrite", "none", "true"),
    # the bulk insert switch alone is the legacy flow's: ignored without hoodie.sql.insert.mode
    (PK_PRE, {BULK: "true"}, "upsert", "none", "true"),
    # hoodie.datasource.insert.dup.policy outside the legacy flow; drop turns upsert into insert
    (PK_PRE, {POLICY: "drop"}, "insert", "drop", "true"),
    (PK_PRE, {POLICY: "fail"}, "upsert", "fail", "true"),
    (PK_PRE, {POLICY: "fail", SQL_OP: "insert"}, "insert", "fail", "true"),
    (PK_PRE, {POLICY: "DROP", SQL_OP: "upsert"}, "insert", "drop", "true"),
    # hoodie.datasource.write.insert.drop.duplicates counts only in the legacy flow
    (PK_PRE, {DROP: "true"}, "upsert", "none", "true"),
]


@pytest.mark.parametrize(("target", "options", "operation", "policy", "combine"), CASES)
def test_deduction(target: InsertTarget, options: dict[str, str], operation: str, policy: str,
                   combine: str) -> None:
    decision = deduce_insert(options, target)
    assert decision.operation == operation
    written = dict(options)
    decision.apply(written)
    assert written[OP] == operation
    assert written[POLICY] == policy
    assert written[COMBINE] == combine


def test_combine_before_insert_set_by_the_user_wins() -> None:
    written = {COMBINE: "false"}
    deduce_insert(written, PK_PRE).apply(written)
    assert written[COMBINE] == "false"


REFUSALS = [
    (PK_PRE, {MODE: "upsert", BULK: "true"}, "Table with primaryKey can not use bulk insert in upsert mode."),
    (PK_PRE, {MODE: "strict", BULK: "true"}, "Table with primaryKey can not use bulk insert in strict mode."),
    (PK_PRE, {MODE: "non-strict", BULK: "true", DROP: "true"},
     "Bulk insert cannot support drop duplication. Please disable Key: "
     "'hoodie.datasource.write.insert.drop.duplicates'"),
    (PK_PRE, {SQL_OP: "bulk_insert", POLICY: "drop"},
     "Dropping duplicates with bulk_insert in row writer path is not supported yet"),
    (PK_PRE, {MODE: "bogus"}, "hoodie.sql.insert.mode='bogus' for table t"),
    (PK_PRE, {SQL_OP: "merge"}, "hoodie.spark.sql.insert.into.operation='merge' for table t"),
    (PK_PRE, {POLICY: "keep"}, "hoodie.datasource.insert.dup.policy='keep' for table t"),
]


@pytest.mark.parametrize(("target", "options", "message"), REFUSALS)
def test_refusals(target: InsertTarget, options: dict[str, str], message: str) -> None:
    with pytest.raises(SqlAnalysisError) as raised:
        deduce_insert(options, target)
    assert message in str(raised.value)


@pytest.mark.parametrize(("options", "allowed"), [
    ({OP: "insert", "hoodie.merge.allow.duplicate.on.inserts": "false"}, "true"),
    ({SQL_OP: "insert", POLICY: "drop"}, "true"),
    ({SQL_OP: "insert", POLICY: "fail"}, None),
    ({}, None),  # an upsert: the key is not touched
])
def test_an_insert_allows_duplicates_unless_its_policy_is_fail(options: dict[str, str], allowed: str | None) -> None:
    """HoodieSparkSqlWriter sets hoodie.merge.allow.duplicate.on.inserts=true for an insert whose
    hoodie.datasource.insert.dup.policy is not fail, over the session's value (checked against Hudi 0.15: INSERT of
    a stored key with the key set to false keeps both rows)."""
    decision = deduce_insert(options, PK_PRE)
    assert decision.overrides.get("hoodie.merge.allow.duplicate.on.inserts") == allowed
