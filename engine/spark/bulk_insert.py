"""Bulk insert on Spark (Hudi ``bulk_insert`` through the row writer, ``HoodieDatasetBulkInsertHelper``): rows
stream into new file groups with no index lookup and no workload profile.

* :func:`bulk_insert`: each task writes the rows it holds, one open base file per partition path, rolling over
  at ``hoodie.parquet.max.file.size``; a source that is a plain parquet scan is read by the writing tasks
  themselves (:mod:`engine.spark.source_scan`). ``hoodie.bulkinsert.sort.mode``,
  ``hoodie.combine.before.insert`` and ``hoodie.bulkinsert.shuffle.parallelism`` shape the rows first.
* :func:`bucket_bulk_insert`: a table with the bucket index whose file groups are all new (Hudi
  ``BucketIndexBulkInsertPartitionerWithRows``): rows are shuffled by partition and bucket, sorted by both, and
  each bucket becomes exactly one file group.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame

from engine.auto_keys import is_keyless
from engine.config import HoodieConfig, WriteConfig
from engine.filegroup.partition_metadata import check_partition_layout
from engine.index.bucket import BucketSpec
from engine.spark import tasks
from engine.spark.index import bucket_id_column
from engine.spark.record_keys import add_keys, dedupe_in_spark, key_schema
from engine.spark.source_scan import direct_parquet_source
from engine.table import Table
from engine.timeline.commit_metadata import WriteStat
from engine.write.handles import WriteContext
from engine.write.metrics import WriteMetrics
from engine.write.prepare import BUCKET_ID, PARTITION_PATH, RECORD_KEY

SORTED_MODES = ("GLOBAL_SORT", "PARTITION_SORT")
"""``hoodie.bulkinsert.sort.mode`` values that order each file's rows by record key."""


def bulk_insert(
    df: DataFrame, table: Table, conf: HoodieConfig, ctx: WriteContext, metrics: WriteMetrics, prepped: bool,
    table_schema: pa.Schema,
) -> list[WriteStat]:
    """Write ``df`` into new file groups (no bucket index), one Spark job; the stats of every file written.

    Args:
        df: the rows (prepped: already keyed).
        table_schema: the table's data schema (the key generator's input types).

    Raises:
        NestedPartitionPath: two partitions of this write nest.
        EngineError: a task failed (the cause from the executors).
    """
    mode = conf.get(WriteConfig.BULKINSERT_SORT_MODE).upper()
    combine = conf.get(WriteConfig.COMBINE_BEFORE_INSERT)
    parallelism = conf.get(WriteConfig.BULKINSERT_PARALLELISM)
    keyless = is_keyless(conf)
    if not prepped and not keyless and mode == "NONE" and not combine and parallelism <= 0:
        # One pass: each task computes keys and writes (no shuffle, no second Arrow round trip).
        source = direct_parquet_source(df.sparkSession, df)
        fn = tasks.bulk_insert_fn(ctx, conf.as_dict(), key_schema(table, table_schema, conf), source)
        if source is None:
            written = df.mapInArrow(fn, tasks.STATS_SCHEMA_DDL)
        else:
            # The tasks read the source's parquet files themselves: no row crosses Spark's Arrow bridge.
            splits = len(source.splits)
            written = df.sparkSession.range(splits, numPartitions=splits).mapInArrow(fn, tasks.STATS_SCHEMA_DDL)
    else:
        keyed = df if prepped else add_keys(df, table, conf, table_schema, auto_key_instant=ctx.instant_time)
        if combine:
            keyed = dedupe_in_spark(keyed, ctx.precombine_field)
        if mode == "GLOBAL_SORT":
            keyed = keyed.sort(PARTITION_PATH, RECORD_KEY)
        elif mode == "PARTITION_SORT":
            keyed = keyed.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
        elif mode == "PARTITION_PATH_REPARTITION":
            keyed = keyed.repartition(PARTITION_PATH)
        if parallelism > 0:
            keyed = keyed.repartition(parallelism)
        written = keyed.mapInArrow(tasks.bulk_insert_fn(ctx), tasks.STATS_SCHEMA_DDL)
    return _written(written, table, metrics)


def bucket_bulk_insert(
    df: DataFrame, table: Table, conf: HoodieConfig, ctx: WriteContext, metrics: WriteMetrics,
    table_schema: pa.Schema,
) -> list[WriteStat]:
    """Write ``df`` into one new file group per ``(partition, bucket)`` of the bucket index, one Spark job:
    the record keys are hashed in Python (:func:`engine.spark.index.bucket_id_column`), the rows shuffled by
    partition and bucket into :func:`bucket_write_tasks` tasks and sorted by both (and by record key for the
    ``GLOBAL_SORT`` / ``PARTITION_SORT`` sort modes), and each task writes its buckets one after another. The
    caller checks that no file group of the table already holds one of these buckets.

    Raises:
        ConfigError: bad bucket settings.
        NestedPartitionPath: two partitions of this write nest.
        EngineError: a task failed (the cause from the executors).
    """
    spec = BucketSpec.from_config(conf, table.base_path)
    keyed = add_keys(df, table, conf, table_schema, auto_key_instant=ctx.instant_time)
    if conf.get(WriteConfig.COMBINE_BEFORE_INSERT):
        keyed = dedupe_in_spark(keyed, ctx.precombine_field)
    order = [PARTITION_PATH, BUCKET_ID]
    if conf.get(WriteConfig.BULKINSERT_SORT_MODE).upper() in SORTED_MODES:
        order.append(RECORD_KEY)
    bucketed = (keyed.withColumn(BUCKET_ID, bucket_id_column(spec))
                .repartition(bucket_write_tasks(df.sparkSession.sparkContext.defaultParallelism, conf),
                             PARTITION_PATH, BUCKET_ID)
                .sortWithinPartitions(*order))
    return _written(bucketed.mapInArrow(tasks.bucket_bulk_insert_fn(ctx), tasks.STATS_SCHEMA_DDL), table, metrics)


def bucket_write_tasks(slots: int, conf: HoodieConfig) -> int:
    """Tasks of a bucket bulk insert: ``hoodie.bulkinsert.shuffle.parallelism`` when set (> 0), else two per
    task slot. Every bucket of a partition goes to one task, which writes it whole, so a bucket never needs
    a task of its own; each task beyond the slots costs a Python worker round (on 2 cores, 1.5M rows took
    16.6 s in 200 tasks and 9.2 s in 2)."""
    configured = conf.get(WriteConfig.BULKINSERT_PARALLELISM)
    return configured if configured > 0 else max(1, 2 * slots)


def _written(written: DataFrame, table: Table, metrics: WriteMetrics) -> list[WriteStat]:
    with metrics.phase("write"):
        stats = tasks.collect_stats(written)
    # Bulk insert learns its partitions only as tasks write: each task refuses a partition nested in one on
    # storage, but two new partitions of this write may still nest (the commit then fails and rolls back).
    check_partition_layout(table.storage, table.base_path, {s.partition_path or "" for s in stats}, table.name,
                           stored=False)
    return stats
