"""Write buckets are packed into Spark tasks of equal work: each record reaches the task its bucket was given."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import functions as F

from engine.spark.task_slots import SLOT, pack, slot_column, slot_values, spark_hash_int
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


def test_packing_balances_the_tasks() -> None:
    # 14 equal file-group rewrites in 4 tasks: 4, 4, 3, 3 (hashing the bucket numbers gave 6, 4, 2, 2).
    task_of = pack({b: 100.0 for b in range(14)}, 4)
    sizes = sorted((list(task_of.values()).count(t) for t in range(4)), reverse=True)
    assert sizes == [4, 4, 3, 3]
    # The heaviest bucket is alone in task 0; small ones fill the lighter tasks.
    task_of = pack({0: 1000.0, 1: 10.0, 2: 10.0, 3: 300.0, 4: 300.0, 5: 300.0}, 3)
    assert task_of[0] == 0 and [b for b, t in task_of.items() if t == 0] == [0]
    assert {task_of[3], task_of[4], task_of[5]} == {1, 2}
    assert pack({7: 1.0}, 8) == {7: 0}


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
    assert (rows["n"], rows["c"]) == (600, 120)
