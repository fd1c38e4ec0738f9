"""Write buckets are packed into Spark tasks of equal work: each record reaches the task its bucket was given."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import functions as F

from engine.spark.task_slots import SLOT, slot_column, slot_values, spark_hash_int
from sqlext.session import Session

pytestmark = pytest.mark.spark


def test_the_hash_is_sparks(session: Session) -> None:
    values = [0, 1, 2, 7, 42, 1000, 2**31 - 1, -1, -(2**31), 123456789]
    row = session.spark.range(1).select(*[F.hash(F.lit(v).cast("int")).alias(f"h{i}")
                                          for i, v in enumerate(values)]).collect()[0]
    assert [row[f"h{i}"] for i in range(len(values))] == [spark_hash_int(v) for v in values]


@pytest.mark.parametrize("buckets", [1, 3, 14, 64])
def test_each_bucket_lands_in_the_task_asked(session: Session, buckets: int) -> None:
    task_of = {b: buckets - 1 - b for b in range(buckets)}  # the last bucket first
    rows = session.spark.range(0, buckets * 50).select((F.col("id") % buckets).cast("int").alias("b"))
    slotted = rows.withColumn(SLOT, slot_column(F.col("b"), task_of)).repartition(buckets, SLOT)
    placed = slotted.select("b", F.spark_partition_id().alias("task")).distinct().collect()
    assert sorted((r["b"], r["task"]) for r in placed) == sorted(task_of.items())
    assert len(set(slot_values(buckets))) == buckets


def test_an_upsert_spreads_equal_file_groups_evenly(session: Session, tmp_path) -> None:
    spark = session.spark
    session.sql(f"""CREATE TABLE slots (id INT, name STRING, p INT) USING hudi PARTITIONED BY (p)
        LOCATION '{tmp_path / "slots"}' TBLPROPERTIES (primaryKey = 'id', type = 'cow')""")
    session.sql("INSERT INTO slots SELECT id, concat('n', id), id % 6 FROM range(600)")
    session.sql("SET hoodie.insert.shuffle.parallelism = 3")
    try:
        session.sql("INSERT INTO slots SELECT id, 'changed', id % 6 FROM range(0, 600, 5)")
    finally:
        session.sql("RESET hoodie.insert.shuffle.parallelism")
    # A base file's write token is <task partition>-<stage>-<attempt>: 6 equal rewrites in 3 tasks, 2 each.
    instant = spark.sql("SELECT max(_hoodie_commit_time) FROM slots").collect()[0][0]
    written = [p.name for p in (tmp_path / "slots").glob(f"p=*/*_{instant}.parquet")]
    assert len(written) == 6
    per_task = sorted(Counter(name.split("_")[1].split("-")[0] for name in written).values())
    assert per_task == [2, 2, 2]
    rows = spark.sql("SELECT count(*) AS n, count_if(name = 'changed') AS c FROM slots").collect()[0]
    # an insert keeps the stored rows of the keys it writes again (hoodie.merge.allow.duplicate.on.inserts is
    # true, as in Hudi 0.14+): 600 stored + 120 inserted
    assert (rows["n"], rows["c"]) == (720, 120)
