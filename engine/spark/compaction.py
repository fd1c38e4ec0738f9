"""Running a compaction on Spark: one task per file-slice operation of the plan (Hudi
``SparkRDDWriteClient.compact``). The driver reads the plan and commits; executors merge and write."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import pyarrow as pa
from pyspark.sql import SparkSession

from engine.config import CompactionConfig
from engine.errors import TableServiceError
from engine.metadata.disable import refuse_metadata_table
from engine.services.compaction import (
    CompactionOperation,
    compact_operation,
    compaction_context,
    compaction_in_progress_error,
    complete_compaction,
    pending_compactions,
    read_plan,
    schedule_compaction,
    start_compaction,
)
from engine.spark import tasks
from engine.spark.task_errors import failure_summary
from engine.table import Table
from engine.timeline.commit_metadata import WriteStat
from engine.write.commit import heartbeat_client

logger = logging.getLogger(__name__)


@dataclass
class CompactionMetrics:
    """Outcome of one compaction: instant, file groups compacted, log files and records merged, bytes."""

    instant: str
    file_groups: int = 0
    log_files_compacted: int = 0
    records_written: int = 0
    bytes_written: int = 0
    stats: list[WriteStat] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, object]:
        """Metrics without the raw stats."""
        values = asdict(self)
        values.pop("stats")
        return values


def execute_compaction(spark: SparkSession, table: Table, instant_time: str,
                       options: dict[str, str] | None = None) -> CompactionMetrics:
    """Execute the pending compaction ``instant_time`` and commit it.

    The compaction keeps a heartbeat (``.hoodie/.heartbeat/<instant>``) while it runs, so another run
    never rolls it back or executes it twice.

    Raises:
        TableServiceError: no such pending compaction, or a task failed (the compaction stays inflight and
            the next run rolls back its partial files and runs it again).
        ConcurrentWriteError: another live process is executing this compaction.
        WriteError: this run's heartbeat expired before the commit (run it again).
    """
    conf = table.config.overlay(options)
    refuse_metadata_table(conf, table)
    operations = read_plan(table, instant_time)
    heartbeats = heartbeat_client(table, conf)
    status = heartbeats.status(instant_time)
    if status.live:
        raise compaction_in_progress_error(table, instant_time, status, heartbeats)
    # The heartbeat runs from before the instant goes inflight until it completes or this run fails; a
    # failed run leaves the compaction inflight without heartbeat, so the next run redoes it.
    heartbeats.start(instant_time)
    try:
        inflight = start_compaction(table, instant_time)
        ctx = compaction_context(table, instant_time, conf)
        rows = [(json.dumps(op.to_avro()),) for op in operations]
        frame = spark.createDataFrame(rows, "operation string")
        frame = frame.repartition(max(1, min(len(rows), spark.sparkContext.defaultParallelism * 2)))

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            task = tasks.current_task()
            for batch in batches:
                stats = [compact_operation(ctx, CompactionOperation.from_avro(json.loads(raw)), task)
                         for raw in batch.column(0).to_pylist()]
                yield tasks.stats_batch(stats)

        try:
            collected = frame.mapInArrow(run, tasks.STATS_SCHEMA_DDL).collect()
        except Exception as exc:
            raise TableServiceError(
                f"compaction {instant_time} of {table.base_path} failed and stays inflight; run it again "
                f"(CALL run_compaction(op => 'execute', ...)) to roll back its partial files and retry: "
                f"{failure_summary(exc)}") from exc
        stats = [WriteStat.from_dict(json.loads(r[0])) for r in collected]
        heartbeats.abort_if_expired(instant_time)
        complete_compaction(table, inflight, stats, conf)
    finally:
        heartbeats.stop(instant_time)
    return CompactionMetrics(instant_time, len(stats), sum(s.total_log_files_compacted or 0 for s in stats),
                             sum(s.num_writes for s in stats), sum(s.total_write_bytes for s in stats), stats)


def run_inline_compaction(spark: SparkSession, table: Table, options: dict[str, str] | None = None) -> \
        CompactionMetrics | None:
    """After a merge-on-read write with ``hoodie.compact.inline=true``: schedule by the trigger strategy and
    execute what was scheduled (Hudi inline compaction)."""
    conf = table.config.overlay(options)
    if not table.is_mor or not conf.get(CompactionConfig.INLINE):
        return None
    table.reload()
    instant = schedule_compaction(table, conf)
    if instant is None:
        return None
    return execute_compaction(spark, table, instant, options)


def execute_pending(spark: SparkSession, table: Table, options: dict[str, str] | None = None) -> \
        list[CompactionMetrics]:
    """Execute every pending compaction, oldest first."""
    return [execute_compaction(spark, table, i.timestamp, options) for i in pending_compactions(table)]


