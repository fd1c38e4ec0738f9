"""The routing rule as a Spark expression gives every record the bucket the Python pass gives it."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StructField, StructType

from engine.spark import bucket_column as bucket_module
from engine.spark.bucket_column import bucket_column
from engine.spark.tasks import assign_buckets_fn
from engine.write.planner import WritePlan
from engine.write.prepare import BUCKET, FILE_ID, KEY_HASH, PARTITION_PATH, RECORD_KEY
from sqlext.session import Session

pytestmark = pytest.mark.spark


def _plan() -> WritePlan:
    plan = WritePlan()
    plan.update_buckets = {"fg-a": 0, "fg-b": 1, "fg-c": 2}
    plan.insert_weights = {
        "p=1": [(0.25, 3), (0.5, 1), (1.0, 4)],   # a small file group (bucket 1) takes a share of inserts
        "p=2": [(1.0, 5)],
        "p=3": [(0.1, 6), (0.7000000000000001, 7), (0.9999, 8)],  # last weight below 1: capped
    }
    return plan


def test_expression_routes_like_the_python_pass(session: Session) -> None:
    spark = session.spark
    plan = _plan()
    rows = spark.range(0, 20_000).select(
        F.concat(F.lit("key-"), F.col("id").cast("string")).alias(RECORD_KEY),
        F.when(F.col("id") % 5 == 0, F.lit("fg-a")).when(F.col("id") % 5 == 1, F.lit("fg-c"))
        .otherwise(F.lit(None).cast("string")).alias(FILE_ID),
        F.concat(F.lit("p="), ((F.col("id") % 3) + 1).cast("string")).alias(PARTITION_PATH),
    ).withColumn(KEY_HASH, F.abs(F.xxhash64(RECORD_KEY)))
    column = bucket_column(plan)
    assert column is not None
    native = rows.withColumn("native", column)
    schema = StructType([*native.schema.fields, StructField(BUCKET, IntegerType(), False)])
    both = native.mapInArrow(assign_buckets_fn(plan), schema)
    result = both.groupBy((F.col("native") == F.col(BUCKET)).alias("same")).count().collect()
    assert {r["same"]: r["count"] for r in result} == {True: 20_000}
    used = {r[0] for r in both.select("native").distinct().collect()}
    assert used == {0, 2, 3, 1, 4, 5, 6, 7, 8}


def test_unknown_insert_partition_fails_naming_it(session: Session) -> None:
    plan = _plan()
    column = bucket_column(plan)
    assert column is not None
    df = session.spark.createDataFrame([(None, "p=9", 17)], f"{FILE_ID} string, {PARTITION_PATH} string, "
                                                           f"{KEY_HASH} bigint")
    with pytest.raises(Exception, match="no insert bucket for partition 'p=9'"):
        df.select(column).collect()


def test_large_plans_are_left_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan()
    monkeypatch.setattr(bucket_module, "MAX_INSERT_WEIGHTS", 6)
    assert bucket_column(plan) is None
    monkeypatch.setattr(bucket_module, "MAX_INSERT_WEIGHTS", 7)
    monkeypatch.setattr(bucket_module, "MAX_UPDATE_BUCKETS", 2)
    assert bucket_column(plan) is None
    only_inserts = WritePlan(insert_weights={"": [(1.0, 0)]})
    assert bucket_column(only_inserts) is not None
