"""Compaction of merge-on-read tables (Hudi ``ScheduleCompactionActionExecutor`` /
``RunCompactionActionExecutor`` / ``HoodieCompactor``): schedule → execute → commit.

* **Schedule** picks the latest file slice of every file group that has log files (and is not already in a
  pending compaction) and writes ``<t>.compaction.requested``: an Avro ``HoodieCompactionPlan`` (plan
  version 2: base and log file *names*). Whether to schedule follows
  ``hoodie.compact.inline.trigger.strategy`` (NUM_COMMITS, TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME) with
  ``hoodie.compact.inline.max.delta.commits`` and ``hoodie.compact.inline.max.delta.seconds``, counted
  from the last completed compaction (or the first instant).
* **Execute** (one task per operation, see :mod:`engine.spark.compaction`): the base file and log blocks of
  instants before the compaction instant are merged by record key, as a snapshot read does, and written
  as the new base file ``<fileId>_<token>_<compactionInstant>.parquet``; records keep their meta columns
  (``preserveHoodieMetadata``).
* **Commit**: ``<t>.commit`` with ``compacted: true`` and ``operationType: COMPACT``.

While a compaction is pending, writers append to the new file slice whose base instant is the compaction
instant (the file-system view's raw latest slice), and readers merge it with the previous slice.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.concurrency.transaction import TransactionManager
from engine.config import CompactionConfig, HoodieConfig
from engine.errors import ConcurrentWriteError, EngineError, TableServiceError
from engine.filegroup.naming import base_file_name
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro, avro_to_arrow
from engine.formats.base_file import BaseFileWriter
from engine.formats.conform import conform_table
from engine.metadata.disable import refuse_metadata_table
from engine.read.log_merger import BlockFilter, MergeSettings, merge_file_slice, scan_log_blocks
from engine.schema.history import LATEST_SCHEMA, SchemaEvolution, avro_of
from engine.storage import Storage
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from engine.timeline.instant import Instant, State, parse_instant_time
from engine.write.handles import TaskIdentity
from engine.write.heartbeat import HeartbeatClient, HeartbeatStatus
from engine.write.markers import (
    IOType,
    Marker,
    create_marker,
    delete_marker_dir,
    delete_uncommitted_files,
    list_markers,
)

logger = logging.getLogger(__name__)

PLAN_VERSION = 2


@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact (Avro ``HoodieCompactionOperation``).

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_instant: base instant of the slice.
        base_file_name: base file name, or ``None`` for a log-only slice.
        log_file_names: the slice's log file names in log order.
        metrics: Hudi's operation metrics (sizes in bytes, counts).
    """

    partition_path: str
    file_id: str
    base_instant: str
    base_file_name: str | None
    log_file_names: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict)

    def to_avro(self) -> dict[str, object]:
        """The Avro record."""
        return {"baseInstantTime": self.base_instant, "deltaFilePaths": list(self.log_file_names),
                "dataFilePath": self.base_file_name, "fileId": self.file_id,
                "partitionPath": self.partition_path, "metrics": dict(self.metrics), "bootstrapFilePath": None}

    @staticmethod
    def from_avro(record: dict[str, object]) -> CompactionOperation:
        """Parse an Avro record (plan version 1 full paths are reduced to names)."""
        def name(path: object) -> str:
            return str(path).rstrip("/").rsplit("/", 1)[-1]

        data = record.get("dataFilePath")
        logs = record.get("deltaFilePaths") or []
        assert isinstance(logs, list)
        return CompactionOperation(
            str(record.get("partitionPath") or ""), str(record["fileId"]), str(record["baseInstantTime"]),
            name(data) if data else None, tuple(name(p) for p in logs),
            dict(record.get("metrics") or {}),  # type: ignore[call-overload]
        )


def _last_compaction_or_start(table: Table) -> tuple[str | None, int]:
    """(time of the last completed compaction or of the first instant, delta commits since then)."""
    timeline = table.timeline
    completed = timeline.completed_commits()
    last: str | None = None
    for instant in completed:
        if instant.action == "commit" and table.commit_metadata(instant).compacted:
            last = instant.timestamp
    since = [i for i in completed if i.action == "deltacommit" and (last is None or i.timestamp > last)]
    start = last or (completed[0].timestamp if completed else None)
    return start, len(since)


def compaction_triggered(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None) -> bool:
    """Whether the trigger strategy asks for a compaction now (Hudi ``needCompact``).

    Raises:
        TableServiceError: unknown trigger strategy.
    """
    strategy = conf.get(CompactionConfig.TRIGGER_STRATEGY).upper()
    start, delta_commits = _last_compaction_or_start(table)
    by_number = delta_commits >= conf.get(CompactionConfig.MAX_DELTA_COMMITS)
    elapsed = 0.0
    if start is not None:
        current = now or datetime.datetime.now(datetime.UTC)
        elapsed = (current - parse_instant_time(start)).total_seconds()
    by_time = start is not None and elapsed >= conf.get(CompactionConfig.MAX_DELTA_SECONDS)
    if strategy == "NUM_COMMITS":
        return by_number
    if strategy == "TIME_ELAPSED":
        return by_time
    if strategy == "NUM_AND_TIME":
        return by_number and by_time
    if strategy == "NUM_OR_TIME":
        return by_number or by_time
    raise TableServiceError(f"{CompactionConfig.TRIGGER_STRATEGY.key}={strategy} is not one of NUM_COMMITS, "
                            "TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME")


def why_nothing_to_schedule(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None) -> str | None:
    """Why :func:`schedule_compaction` would write no plan now, in the trigger strategy's own terms, or
    ``None`` when it would write one.

    Returns:
        e.g. ``"hoodie.compact.inline.trigger.strategy=NUM_COMMITS asks for 5 delta commits since the last
        compaction (hoodie.compact.inline.max.delta.commits), and there are 1"``, or that no file slice
        outside a pending compaction has log files.

    Raises:
        TableServiceError: unknown trigger strategy.
    """
    if not compaction_triggered(table, conf, now):
        strategy = conf.get(CompactionConfig.TRIGGER_STRATEGY).upper()
        start, delta_commits = _last_compaction_or_start(table)
        commits = (f"{conf.get(CompactionConfig.MAX_DELTA_COMMITS)} delta commits since the last compaction "
                   f"({CompactionConfig.MAX_DELTA_COMMITS.key}), and there are {delta_commits}")
        elapsed = 0
        if start is not None:
            current = now or datetime.datetime.now(datetime.UTC)
            elapsed = int((current - parse_instant_time(start)).total_seconds())
        seconds = (f"{conf.get(CompactionConfig.MAX_DELTA_SECONDS)} seconds since the last compaction "
                   f"({CompactionConfig.MAX_DELTA_SECONDS.key}), and {elapsed} have passed")
        wants = {"NUM_COMMITS": commits, "TIME_ELAPSED": seconds, "NUM_AND_TIME": f"{commits}; and {seconds}",
                 "NUM_OR_TIME": f"{commits}; or {seconds}"}[strategy]
        return f"{CompactionConfig.TRIGGER_STRATEGY.key}={strategy} asks for {wants}"
    operations = plan_operations(table)
    if not operations:
        return "no file slice outside a pending compaction has log files to merge"
    if not select_operations(operations, conf):
        return (f"{CompactionConfig.STRATEGY.key}={conf.get(CompactionConfig.STRATEGY)} takes none of the "
                f"{len(operations)} file slices with log files")
    return None


def plan_operations(table: Table) -> list[CompactionOperation]:
    """Latest slices with log files, outside pending compactions and clusterings."""
    view = table.file_system_view()
    # Hudi HoodieCompactor.generateCompactionPlan: file groups in pending compaction or clustering are skipped.
    pending = set(view.pending_compaction_file_groups()) | set(view.file_groups_in_pending_clustering())
    operations = []
    for partition in view.partition_paths():
        for fs in view.latest_file_slices(partition, merge_pending_compaction=False):
            if not fs.log_files or (partition, fs.file_id) in pending:
                continue
            log_size = sum(lf.size for lf in fs.log_files)
            base_size = fs.base_file.size if fs.base_file else 0
            read_mb, write_mb = float((base_size + log_size) // 2**20), float(base_size // 2**20)
            operations.append(CompactionOperation(
                partition, fs.file_id, fs.base_instant, fs.base_file.name if fs.base_file else None,
                tuple(lf.name for lf in fs.log_files),
                {"TOTAL_LOG_FILES": float(len(fs.log_files)), "TOTAL_LOG_FILES_SIZE": float(log_size),
                 "TOTAL_IO_READ_MB": read_mb, "TOTAL_IO_WRITE_MB": write_mb, "TOTAL_IO_MB": read_mb + write_mb},
            ))
    return operations


STRATEGY_PACKAGE = "org.apache.hudi.table.action.compact.strategy."
COMPACTION_STRATEGIES = ("LogFileSizeBasedCompactionStrategy", "LogFileNumBasedCompactionStrategy",
                         "BoundedIOCompactionStrategy", "UnBoundedCompactionStrategy")
"""``hoodie.compaction.strategy`` classes (simple names, under :data:`STRATEGY_PACKAGE`) this engine applies."""


def select_operations(operations: Sequence[CompactionOperation], conf: HoodieConfig) -> list[CompactionOperation]:
    """The operations a plan takes, in order, as Hudi's ``CompactionStrategy.orderAndFilter`` of
    ``hoodie.compaction.strategy``:

    * ``LogFileSizeBasedCompactionStrategy`` (default): slices whose log files total at least
      ``hoodie.compaction.logfile.size.threshold`` bytes, largest first, then bounded by IO;
    * ``LogFileNumBasedCompactionStrategy``: slices with at least ``hoodie.compaction.logfile.num.threshold``
      log files, most first, then bounded by IO;
    * ``BoundedIOCompactionStrategy``: in order until ``hoodie.compaction.target.io`` MB (read + write) are
      taken (the operation that crosses the bound is taken);
    * ``UnBoundedCompactionStrategy``: all.

    Raises:
        TableServiceError: another strategy class (named, with the supported ones).
    """
    name = conf.get(CompactionConfig.STRATEGY).strip()
    simple = name.rsplit(".", 1)[-1]
    if simple not in COMPACTION_STRATEGIES or (name != simple and not name.startswith(STRATEGY_PACKAGE)):
        raise TableServiceError(f"{CompactionConfig.STRATEGY.key}={name} is not supported (supported: "
                                f"{', '.join(STRATEGY_PACKAGE + s for s in COMPACTION_STRATEGIES)})")
    chosen = list(operations)
    if simple == "UnBoundedCompactionStrategy":
        return chosen
    if simple == "LogFileSizeBasedCompactionStrategy":
        threshold = conf.get(CompactionConfig.LOGFILE_SIZE_THRESHOLD)
        chosen = sorted((op for op in chosen if op.metrics.get("TOTAL_LOG_FILES_SIZE", 0.0) >= threshold),
                        key=lambda op: -op.metrics.get("TOTAL_LOG_FILES_SIZE", 0.0))
    elif simple == "LogFileNumBasedCompactionStrategy":
        threshold = conf.get(CompactionConfig.LOGFILE_NUM_THRESHOLD)
        chosen = sorted((op for op in chosen if len(op.log_file_names) >= threshold),
                        key=lambda op: -len(op.log_file_names))
    remaining = float(conf.get(CompactionConfig.TARGET_IO))
    bounded = []
    for op in chosen:
        bounded.append(op)
        remaining -= op.metrics.get("TOTAL_IO_MB", 0.0)
        if remaining <= 0:
            break
    return bounded


def schedule_compaction(table: Table, conf: HoodieConfig, *, force: bool = False) -> str | None:
    """Write a compaction plan if the trigger strategy (or ``force``) says so and there is work (under the table
    lock with optimistic concurrency control, as Hudi schedules table services).

    Returns:
        The compaction instant, or ``None`` when nothing was scheduled.

    Raises:
        UnsupportedTable: a Hudi 1.x table (read only; :meth:`Table.check_writable`).
        TableServiceError: a copy-on-write table.
    """
    table.check_writable()
    if not table.is_mor:
        raise TableServiceError(f"compaction needs a merge-on-read table; {table.base_path} is copy-on-write")
    refuse_metadata_table(conf, table)
    if not force and not compaction_triggered(table, conf):
        logger.debug("compaction not triggered on %s (%s)", table.base_path,
                    conf.get(CompactionConfig.TRIGGER_STRATEGY))
        return None
    with TransactionManager(table, conf).transaction("schedule compaction"):
        table.timeline.reload()
        operations = select_operations(plan_operations(table), conf)
        if not operations:
            logger.debug("nothing to compact on %s: no file slice has log files the compaction strategy takes",
                         table.base_path)
            return None
        timeline = table.timeline
        instant_time = timeline.new_instant_time()
        plan = {"operations": [op.to_avro() for op in operations], "extraMetadata": {}, "version": PLAN_VERSION,
                "strategy": None, "preserveHoodieMetadata": True}
        timeline.create_requested(instant_time, "compaction", serialize("HoodieCompactionPlan", plan))
    logger.info("scheduled compaction %s on %s: %d file groups", instant_time, table.base_path, len(operations))
    return instant_time


def pending_compactions(table: Table) -> list[Instant]:
    """Requested or inflight compaction instants, oldest first."""
    table.timeline.reload()
    return [i for i in table.timeline.pending() if i.action == "compaction"]


def compaction_history(table: Table) -> list[tuple[str, int, State]]:
    """Every compaction on the active timeline, newest first, as Hudi's ``ShowCompactionProcedure`` lists them:
    ``(instant, operations in its plan, state)``; a completed compaction (a ``commit`` with ``compacted``)
    is ``COMPLETED``."""
    table.timeline.reload()
    found: list[tuple[str, int, State]] = []
    for instant in table.timeline.instants:
        if instant.action == "compaction":
            found.append((instant.timestamp, plan_size(table, instant.timestamp), instant.state))
        elif instant.action == "commit" and instant.state is State.COMPLETED \
                and table.commit_metadata(instant).compacted:
            found.append((instant.timestamp, plan_size(table, instant.timestamp), State.COMPLETED))
    return sorted(found, key=lambda row: row[0], reverse=True)


def plan_size(table: Table, instant_time: str) -> int:
    """Operations in the compaction plan of ``instant_time`` (pending or completed; 0 when it cannot be read)."""
    try:
        data = table.timeline.read_details(Instant(instant_time, "compaction", State.REQUESTED))
        return len(deserialize(data).get("operations") or [])
    except EngineError:
        return 0


def read_plan(table: Table, instant_time: str) -> list[CompactionOperation]:
    """Operations of a pending compaction.

    Raises:
        TableServiceError: no pending compaction at ``instant_time``.
    """
    for instant in pending_compactions(table):
        if instant.timestamp == instant_time:
            requested = Instant(instant.timestamp, "compaction", State.REQUESTED)
            plan = deserialize(table.timeline.read_details(requested))
            return [CompactionOperation.from_avro(op) for op in plan.get("operations") or []]
    raise TableServiceError(f"no pending compaction at instant {instant_time} on {table.base_path}")


@dataclass(frozen=True)
class CompactionContext:
    """What a compaction task needs; picklable."""

    storage: Storage
    base_path: str
    instant_time: str
    settings: MergeSettings
    block_filter: BlockFilter
    avro_schema: dict[str, object]
    props: dict[str, str]


def compaction_context(table: Table, instant_time: str, conf: HoodieConfig) -> CompactionContext:
    """Build the task context: log blocks of completed instants before ``instant_time`` are merged."""
    timeline = table.timeline
    completed = frozenset(i.timestamp for i in timeline.completed_commits() if i.timestamp < instant_time)
    pending = frozenset(i.timestamp for i in timeline.pending() if i.action != "compaction")
    start = min(completed) if completed else None
    # Hudi's compaction merges each base row with its key's log record (HoodieMergeHandle), duplicates included.
    settings = replace(MergeSettings.from_table(table, conf), log_record_applies_once=False)
    # With schema on read, the new base files are written in the schema of the compaction instant (the
    # schema their name's instant stands for); the plan's log blocks are all older than it.
    evolution = SchemaEvolution.of(table, instant_time)
    if evolution is not None:
        settings = replace(settings, evolution=evolution)
        avro: dict[str, Any] | None = avro_of(evolution.query, table.name)
    else:
        avro = table.latest_avro_schema(include_meta=False)
    if avro is None:
        raise TableServiceError(f"table {table.base_path} has no schema to compact with")
    avro = table.without_dropped_partition_columns(avro)
    canonical = add_meta_fields(arrow_to_avro(avro_to_arrow(avro), table.name))
    if table.dropped_partition_columns:
        # New base files hold what the old ones held: no partition columns.
        settings = replace(settings, table_schema=avro_to_arrow(canonical))
    return CompactionContext(table.storage, table.base_path, instant_time, settings,
                             BlockFilter(instant_time, completed, start, pending), canonical, conf.as_dict())


COMPACTION_BATCH_ROWS = 32768
"""Base-file rows read at a time by a compaction task: a quarter of the query batch, because the task also
holds the new file's pending row group and (when spilling) re-reads the base file once per partition group."""


@contextlib.contextmanager
def returning_memory_pool() -> Iterator[None]:
    """Makes Arrow's default memory pool the system allocator for the block, then restores the previous one.

    A compaction task goes through phases (decode and spill the log, split the base file, fold each group,
    write row groups) whose buffers are freed between them; jemalloc, pyarrow's default pool, keeps 50–70 MB
    of such freed pages resident in a task over a 112 MB log (``bench/bench_compaction_memory.py``, 16 MB
    ``hoodie.memory.merge.max.size``: peak RSS 313–329 MB above the worker's baseline with jemalloc, 258–266
    MB with the system allocator, at the same speed). Only Arrow allocations made through pyarrow follow
    this switch; sqlext's sessions also start Python workers with ``ARROW_DEFAULT_MEMORY_POOL=system``, which
    covers Arrow's C++ internals too. Buffers allocated before the block keep their pool.
    """
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def compact_operation(ctx: CompactionContext, op: CompactionOperation, task: TaskIdentity) -> WriteStat:
    """Merge one slice into a new base file (executor side), with Arrow buffers from the system allocator
    (:func:`returning_memory_pool`).

    Raises:
        TableServiceError: a file of the slice is missing or unreadable.
    """
    with returning_memory_pool():
        return _compact_operation(ctx, op, task)


def _compact_operation(ctx: CompactionContext, op: CompactionOperation, task: TaskIdentity) -> WriteStat:
    start = time.monotonic()
    storage = ctx.storage
    folder = storage.join(ctx.base_path, op.partition_path) if op.partition_path else ctx.base_path
    logs = [storage.join(folder, name) for name in op.log_file_names]
    base = storage.join(folder, op.base_file_name) if op.base_file_name else None
    try:
        blocks = scan_log_blocks(storage, logs, ctx.block_filter)
        schema = ctx.settings.table_schema
        assert schema is not None
        file_name = base_file_name(op.file_id, task.write_token, ctx.instant_time)
        create_marker(storage, ctx.base_path, ctx.instant_time, Marker(op.partition_path, file_name, IOType.MERGE))
        writer = BaseFileWriter(storage, storage.join(folder, file_name), schema, ctx.avro_schema,
                                HoodieConfig(ctx.props), populate_meta_fields=ctx.settings.populate_meta_fields)
        rows = 0
        try:
            merged = merge_file_slice(storage, base, blocks, schema, ctx.settings, batch_rows=COMPACTION_BATCH_ROWS,
                                      context=f"{folder}/{op.file_id}")
            for batch in merged:
                out = conform_table(batch, schema)
                index = out.schema.get_field_index("_hoodie_file_name")
                names = pc.fill_null(pa.nulls(out.num_rows, pa.string()), file_name)
                writer.write(out.set_column(index, "_hoodie_file_name", names))
                rows += out.num_rows
        finally:
            stats = writer.close()
    except (OSError, FileNotFoundError) as exc:
        raise TableServiceError(f"compaction {ctx.instant_time} of file group {op.file_id} in "
                                f"'{op.partition_path}' failed: {exc}") from exc
    elapsed = int((time.monotonic() - start) * 1000)
    log_size = int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0))
    path = f"{op.partition_path}/{file_name}" if op.partition_path else file_name
    return WriteStat(
        file_id=op.file_id, path=path, prev_commit=op.base_instant, num_writes=stats.num_rows, num_deletes=0,
        num_update_writes=0, num_inserts=0, total_write_bytes=stats.file_size, total_write_errors=0,
        partition_path=op.partition_path, file_size_in_bytes=stats.file_size,
        total_log_files_compacted=len(op.log_file_names), total_log_size_compacted=log_size,
        total_log_blocks=len(blocks), total_log_records=rows,
        runtime_stats=RuntimeStats(total_scan_time=elapsed, total_upsert_time=0, total_create_time=0),
    )


def compaction_in_progress_error(table: Table, instant_time: str, status: HeartbeatStatus,
                                 heartbeats: HeartbeatClient) -> ConcurrentWriteError:
    """The one-line error for a compaction another live process is executing."""
    return ConcurrentWriteError(
        f"compaction {instant_time} of table {table.name} at {table.base_path} is being executed by another "
        f"writer ({status.describe(heartbeats.now_ms())}, live heartbeat); it is not rolled back or run twice: "
        f"wait for it to finish")


def start_compaction(table: Table, instant_time: str) -> Instant:
    """Move a requested compaction to inflight (an inflight one is rolled back first: its partial files are
    removed through its markers, then it runs again).

    Raises:
        TableServiceError: no pending compaction at ``instant_time``.
        ConcurrentWriteError: the compaction is inflight and another process executes it (its heartbeat
            is live and not the caller's own).
    """
    for instant in pending_compactions(table):
        if instant.timestamp != instant_time:
            continue
        if instant.state is State.INFLIGHT:
            heartbeats = HeartbeatClient.from_config(table.storage, table.base_path, table.config)
            if not heartbeats.is_running(instant_time):
                status = heartbeats.status(instant_time)
                if status.live:
                    raise compaction_in_progress_error(table, instant_time, status, heartbeats)
            _remove_partial_files(table, instant_time)
            table.timeline.revert_to_requested(instant)
            table.timeline.reload()
        requested = Instant(instant_time, "compaction", State.REQUESTED)
        return table.timeline.transition_to_inflight(requested, b"")
    raise TableServiceError(f"no pending compaction at instant {instant_time} on {table.base_path}")


def _remove_partial_files(table: Table, instant_time: str) -> None:
    for marker in list_markers(table.storage, table.base_path, instant_time):
        table.storage.delete(table.storage.join(table.base_path, marker.data_file_relative_path))
    delete_marker_dir(table.storage, table.base_path, instant_time)
    logger.warning("removed partial files of interrupted compaction %s on %s", instant_time, table.base_path)


def complete_compaction(table: Table, inflight: Instant, stats: Sequence[WriteStat],
                        conf: HoodieConfig | None = None) -> CommitMetadata:
    """Write ``<t>.commit`` (``compacted: true``, ``operationType: COMPACT``) and drop the markers; with
    optimistic concurrency control in ``conf`` under the table lock (no conflict check: writers check against
    compactions, Hudi ``completeCompaction``).

    Raises:
        LockError: the table lock could not be had (the compaction stays inflight; running it again finishes it).
    """
    delete_uncommitted_files(table.storage, table.base_path, inflight.timestamp, {s.path for s in stats})
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    evolution = SchemaEvolution.of(table, inflight.timestamp)
    extra: dict[str, str] = {}
    if evolution is not None:
        schema = avro_of(evolution.query, table.name)
        extra[LATEST_SCHEMA] = evolution.query.to_json()
    else:
        avro = table.latest_avro_schema(include_meta=False)
        stored = table.without_dropped_partition_columns(avro) if avro is not None else None
        schema = arrow_to_avro(avro_to_arrow(stored), table.name) if stored is not None else {}
    metadata = CommitMetadata(partition_to_write_stats=by_partition, compacted=True,
                              extra_metadata={"schema": json.dumps(schema, separators=(",", ":")), **extra},
                              operation_type="COMPACT")
    with TransactionManager(table, conf if conf is not None else table.config).transaction(
            f"compaction {inflight.timestamp}"):
        table.timeline.complete(inflight, metadata.to_json())
    delete_marker_dir(table.storage, table.base_path, inflight.timestamp)
    logger.info("completed compaction %s on %s (%d file groups)", inflight.timestamp, table.base_path, len(stats))
    return metadata
