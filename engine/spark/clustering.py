"""Running a clustering on Spark (Hudi ``SparkRDDWriteClient.cluster`` with
``SparkSortAndSizeExecutionStrategy``). The driver reads the plan and commits; executors read, order and write.

A group whose input fits in one task's memory (:func:`engine.services.clustering_tasks.estimated_memory` under
``hoodie.memory.merge.max.size``) is clustered inside one task; all such groups run as one Spark job, a task
per group. A larger group is read by a task per file slice, range-partitioned by its sort columns (or curve
key) into its ``numOutputFileGroups`` partitions and sorted by Spark (which spills), and each partition is
written as a new file group; up to ``hoodie.clustering.max.parallelism`` such groups run at once.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from engine.config import ClusteringConfig, HoodieConfig, MemoryConfig
from engine.errors import TableServiceError
from engine.metadata.disable import refuse_metadata_table
from engine.services.clustering import (
    ClusteringGroup,
    ClusteringPlan,
    clustering_in_progress_error,
    complete_clustering,
    pending_clusterings,
    read_clustering_plan,
    schedule_clustering,
    start_clustering,
)
from engine.services.clustering_tasks import (
    CURVE_KEY,
    ClusteringContext,
    cluster_group,
    clustering_context,
    estimated_memory,
    read_slices,
    with_curve_key,
    write_ordered,
)
from engine.services.layout import LINEAR
from engine.spark import tasks
from engine.spark.schema import arrow_to_spark
from engine.spark.task_errors import failure_summary
from engine.table import Table
from engine.timeline.commit_metadata import WriteStat
from engine.write.commit import heartbeat_client

logger = logging.getLogger(__name__)


@dataclass
class ClusteringMetrics:
    """Outcome of one clustering: instant, groups, input slices, output file groups, rows and bytes."""

    instant: str
    groups: int = 0
    file_slices: int = 0
    file_groups_written: int = 0
    records_written: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    elapsed_ms: int = 0
    stats: list[WriteStat] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, object]:
        """Metrics without the raw stats."""
        values = asdict(self)
        values.pop("stats")
        return values


def _stats_of(frame: DataFrame) -> list[WriteStat]:
    return [WriteStat.from_dict(json.loads(r[0])) for r in frame.collect()]


def _in_memory_groups(spark: SparkSession, ctx: ClusteringContext, groups: list[ClusteringGroup]) -> list[WriteStat]:
    frame = spark.createDataFrame([(i,) for i in range(len(groups))], "g int").repartition(len(groups))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task = tasks.current_task()
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield tasks.stats_batch(cluster_group(ctx, groups[index], task))

    return _stats_of(frame.mapInArrow(run, tasks.STATS_SCHEMA_DDL))


def _spark_sorted_group(spark: SparkSession, ctx: ClusteringContext, group: ClusteringGroup) -> list[WriteStat]:
    slices = list(group.slices)
    curve = bool(ctx.sort_columns) and ctx.strategy != LINEAR
    schema = ctx.write.file_schema
    if curve:
        schema = schema.append(pa.field(CURVE_KEY, pa.binary()))
    frame = spark.createDataFrame([(i,) for i in range(len(slices))], "s int").repartition(len(slices))

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                for rows in read_slices(ctx, [slices[index]]):
                    yield from (with_curve_key(rows, ctx) if curve else rows).to_batches()

    rows = frame.mapInArrow(read, arrow_to_spark(schema))
    outputs = max(1, group.num_output_file_groups)
    if ctx.sort_columns:
        keys = [CURVE_KEY] if curve else list(ctx.sort_columns)
        rows = rows.repartitionByRange(outputs, *keys).sortWithinPartitions(*keys)
    else:
        rows = rows.repartition(outputs)
    partition = group.partition_path

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task = tasks.current_task()
        yield tasks.stats_batch(write_ordered(ctx, partition, (pa.Table.from_batches([b]) for b in batches), task))

    return _stats_of(rows.mapInArrow(write, tasks.STATS_SCHEMA_DDL))


def _run_groups(spark: SparkSession, ctx: ClusteringContext, plan: ClusteringPlan, conf: HoodieConfig,
                instant_time: str) -> list[WriteStat]:
    budget = conf.get(MemoryConfig.MAX_MEMORY_FOR_MERGE)
    small = [g for g in plan.groups if estimated_memory(g) <= budget]
    large = [g for g in plan.groups if estimated_memory(g) > budget]
    total = len(plan.groups)
    stats: list[WriteStat] = []
    if small:
        stats.extend(_in_memory_groups(spark, ctx, small))
        logger.info("clustering %s: %d of %d groups done (each sorted in one task)", instant_time, len(small), total)
    if large:
        done = len(small)
        workers = max(1, min(conf.get(ClusteringConfig.MAX_PARALLELISM), len(large)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(lambda g: _spark_sorted_group(spark, ctx, g), large):
                stats.extend(result)
                done += 1
                logger.info("clustering %s: %d of %d groups done", instant_time, done, total)
    return stats


def execute_clustering(spark: SparkSession, table: Table, instant_time: str,
                       options: dict[str, str] | None = None) -> ClusteringMetrics:
    """Execute the pending clustering ``instant_time`` and commit it as a ``replacecommit``.

    The clustering keeps a heartbeat while it runs; an inflight clustering without a live heartbeat (a
    crashed run) has its partial files removed and runs again.

    Raises:
        TableServiceError: no such pending clustering, or a task failed (the clustering stays inflight; run
            it again to roll back its partial files and retry).
        ConcurrentWriteError: another live process is executing this clustering.
        WriteError: this run's heartbeat expired before the commit (run it again).
    """
    start = time.monotonic()
    conf = table.config.overlay(options)
    refuse_metadata_table(conf, table)
    plan = read_clustering_plan(table, instant_time)
    heartbeats = heartbeat_client(table, conf)
    status = heartbeats.status(instant_time)
    if status.live:
        raise clustering_in_progress_error(table, instant_time, status, heartbeats)
    read_bytes = sum(int(g.metrics.get("TOTAL_IO_READ_MB", 0)) for g in plan.groups) * 2**20
    logger.info("clustering %s on %s: %d groups, %d file slices, ~%d MB to read", instant_time, table.base_path,
                len(plan.groups), sum(len(g.slices) for g in plan.groups), read_bytes // 2**20)
    heartbeats.start(instant_time)
    try:
        inflight = start_clustering(table, instant_time)
        ctx = clustering_context(table, instant_time, plan, conf)
        try:
            stats = _run_groups(spark, ctx, plan, conf, instant_time)
        except Exception as exc:
            raise TableServiceError(
                f"clustering {instant_time} of {table.base_path} failed and stays inflight; run it again "
                f"(CALL run_clustering(op => 'execute', ...)) to roll back its partial files and retry: "
                f"{failure_summary(exc)}") from exc
        heartbeats.abort_if_expired(instant_time)
        complete_clustering(table, inflight, plan, stats, conf)
    finally:
        heartbeats.stop(instant_time)
    elapsed = int((time.monotonic() - start) * 1000)
    return ClusteringMetrics(instant_time, len(plan.groups), sum(len(g.slices) for g in plan.groups), len(stats),
                             sum(s.num_writes for s in stats), read_bytes, sum(s.total_write_bytes for s in stats),
                             elapsed, stats)


def run_inline_clustering(spark: SparkSession, table: Table, options: dict[str, str] | None = None) -> \
        dict[str, object] | None:
    """After a write: with ``hoodie.clustering.inline`` schedule (every ``inline.max.commits`` commits) and
    execute; with only ``hoodie.clustering.schedule.inline`` schedule when no clustering is pending.

    Returns:
        The metrics (``detail`` says what happened), or None when nothing was scheduled.
    """
    conf = table.config.overlay(options)
    table.reload()
    if conf.get(ClusteringConfig.INLINE):
        instant, _ = schedule_clustering(table, conf)
        if instant is None:
            return None
        metrics = execute_clustering(spark, table, instant, options).as_dict()
        return {**metrics, "detail": f"clustered {metrics['groups']} group(s) at {instant}"}
    if conf.get(ClusteringConfig.SCHEDULE_INLINE) and not pending_clusterings(table):
        instant, _ = schedule_clustering(table, conf)
        return None if instant is None else {"instant": instant, "detail": f"scheduled clustering {instant}"}
    return None


def execute_pending_clusterings(spark: SparkSession, table: Table, options: dict[str, str] | None = None) -> \
        list[ClusteringMetrics]:
    """Execute every pending clustering, oldest first."""
    return [execute_clustering(spark, table, i.timestamp, options) for i in pending_clusterings(table)]
