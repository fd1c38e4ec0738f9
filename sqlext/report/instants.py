"""Reading the instants of a table for ``sqlext report``: what each active instant is (a completed compaction
is a ``commit`` on the timeline, a clustering a ``replacecommit``), what its plan holds while pending and
what it did once completed, how long it took; and the archived timeline.

A file that cannot be read is noted as a warning (and logged); the instant is still drawn.
"""

from __future__ import annotations

import datetime as _dt
import logging
from dataclasses import dataclass
from typing import Any

from engine.errors import EngineError
from engine.services.archive import read_archived
from engine.services.clean import CleanPlan
from engine.services.clustering import is_clustering_commit, read_clustering_plan
from engine.services.compaction import CompactionOperation
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
    comparable_action,
)
from sqlext.report.charts import fmt_bytes, fmt_count, fmt_duration
from sqlext.report.data import (
    CLUSTERING,
    OVERWRITE,
    SERVICE_KINDS,
    ServiceEntry,
    TimelineEntry,
    instant_moment,
)

logger = logging.getLogger(__name__)

MAX_DURATION = _dt.timedelta(days=1)
"""Longer gaps between an instant time and its completed file's time are not believed (copied tables)."""


def plural(count: int, word: str) -> str:
    """``1 file`` / ``12,345 files``."""
    return f"{fmt_count(count)} {word}" if count == 1 else f"{fmt_count(count)} {word}s"


def from_millis(ms: int, utc: bool) -> _dt.datetime:
    """Epoch milliseconds as a naive datetime on the UTC (``utc``) or the local clock."""
    if utc:
        return _dt.datetime.fromtimestamp(ms / 1000.0, tz=_dt.UTC).replace(tzinfo=None)
    return _dt.datetime.fromtimestamp(ms / 1000.0)


def plausible(start: _dt.datetime | None, end: _dt.datetime | None) -> _dt.datetime | None:
    """``end`` when it is after ``start`` by at most :data:`MAX_DURATION`, else ``None``."""
    if start is None or end is None or not (_dt.timedelta(0) <= end - start <= MAX_DURATION):
        return None
    return end


class Reader:
    """Reads the instant files of one table; failures become warnings.

    Args:
        table: the table.
        warnings: list the warnings are appended to.
    """

    def __init__(self, table: Table, warnings: list[str]) -> None:
        self.table = table
        self.warnings = warnings

    def warn(self, what: str, exc: Exception) -> None:
        """Note (and log) that ``what`` failed with ``exc``."""
        message = f"{what}: {exc}"
        logger.warning("report of %s: %s", self.table.base_path, message)
        self.warnings.append(message)

    def avro(self, instant: Instant, record: str) -> dict[str, Any] | None:
        """The Avro ``record`` an instant file holds, or ``None`` (empty or unreadable file)."""
        try:
            content = self.table.timeline.read_details(instant)
            return deserialize(content, record, source=instant.file_name) if content else None
        except EngineError as exc:
            self.warn(f"cannot read {instant.file_name}", exc)
            return None

    def mtime_ms(self, file_name: str) -> int | None:
        """Modification time (ms) of ``.hoodie/<file_name>``, or ``None`` if it is missing or has none."""
        try:
            info = self.table.storage.file_info(self.table.storage.join(self.table.meta_path, file_name))
        except EngineError as exc:
            self.warn(f"cannot stat {file_name}", exc)
            return None
        return info.mtime_ms if info is not None and info.mtime_ms > 0 else None

    def commit(self, instant: Instant) -> CommitMetadata | None:
        """The commit metadata of a completed commit/deltacommit/replacecommit, or ``None`` if unreadable."""
        try:
            return self.table.commit_metadata(instant)
        except EngineError as exc:
            self.warn(f"cannot read {instant.file_name}", exc)
            return None


@dataclass
class _Described:
    """What the report says about one instant."""

    kind: str
    plan: str = ""
    summary: str = ""
    duration: str = ""


# ---------------------------------------------------------------------------------------------- per action


def _write_summary(metadata: CommitMetadata) -> str:
    stats = metadata.all_write_stats()
    parts = [metadata.operation_type,
             f"{plural(len(stats), 'file')} in {plural(len(metadata.partition_to_write_stats), 'partition')}",
             f"{fmt_count(sum(s.num_inserts for s in stats))} inserts, "
             f"{fmt_count(sum(s.num_update_writes for s in stats))} updates, "
             f"{fmt_count(sum(s.num_deletes for s in stats))} deletes",
             f"{fmt_bytes(sum(s.total_write_bytes for s in stats))} written"]
    if metadata.is_replace:
        parts.append(f"{plural(sum(len(v) for v in metadata.replaced_file_ids().values()), 'file group')} replaced")
    return " · ".join(parts)


def _completed_commit(reader: Reader, instant: Instant) -> _Described:
    """commit / deltacommit / replacecommit: a write, a compaction or a clustering, by its metadata."""
    metadata = reader.commit(instant)
    if metadata is None:
        return _Described(OVERWRITE if instant.action == REPLACE_COMMIT else instant.action)
    operation = metadata.operation_type
    stats = metadata.all_write_stats()
    partitions = plural(len(metadata.partition_to_write_stats), "partition")
    if (instant.action == COMMIT and (metadata.compacted or operation == "COMPACT")) or \
            (instant.action == DELTA_COMMIT and operation == "LOG_COMPACT"):
        kind = COMPACTION if instant.action == COMMIT else LOG_COMPACTION
        logs = sum(s.total_log_files_compacted for s in stats)
        return _Described(kind, summary=(
            f"merged {plural(logs, 'log file')} ({fmt_bytes(sum(s.total_log_size_compacted for s in stats))}) into "
            f"{plural(len(stats), 'base file')} ({fmt_bytes(sum(s.file_size_in_bytes for s in stats))}) in "
            f"{partitions}"))
    if instant.action == REPLACE_COMMIT and operation == "CLUSTER":
        replaced = metadata.replaced_file_ids()
        return _Described(CLUSTERING, summary=(
            f"replaced {plural(sum(len(v) for v in replaced.values()), 'file group')} in "
            f"{plural(len(replaced), 'partition')} with {plural(len(stats), 'new file group')} "
            f"({fmt_bytes(sum(s.file_size_in_bytes for s in stats))})"))
    kind = OVERWRITE if instant.action == REPLACE_COMMIT else instant.action
    return _Described(kind, summary=_write_summary(metadata))


def _pending_replace(reader: Reader, instant: Instant) -> _Described:
    """A pending replacecommit: a clustering (with its plan) or an overwrite."""
    try:
        clustering = is_clustering_commit(reader.table, instant)
    except EngineError as exc:
        reader.warn(f"cannot read the plan of {instant}", exc)
        clustering = False
    if not clustering:
        return _Described(OVERWRITE, summary="overwrite in progress, or failed (the next writer rolls it back)")
    try:
        plan = read_clustering_plan(reader.table, instant.timestamp)
    except EngineError as exc:
        reader.warn(f"cannot read the clustering plan of {instant}", exc)
        return _Described(CLUSTERING)
    slices = sum(len(g.slices) for g in plan.groups)
    read_mb = sum(int(g.metrics.get("TOTAL_IO_READ_MB", 0)) for g in plan.groups)
    outputs = sum(g.num_output_file_groups for g in plan.groups)
    text = (f"{plural(len(plan.groups), 'group')} · {plural(slices, 'file slice')} in "
            f"{plural(len(plan.partitions), 'partition')} → {plural(outputs, 'new file group')} · "
            + (f"{fmt_count(read_mb)} MiB to read" if read_mb else "under 1 MiB to read"))
    sort = ", ".join(plan.sort_columns)
    return _Described(CLUSTERING, text, "rewrites small file slices" + (f" sorted by {sort}" if sort else "")
                      + "; its file groups take no updates until it completes")


def _pending_compaction(reader: Reader, instant: Instant) -> _Described:
    """A pending compaction/logcompaction and the size of its plan."""
    plan = ""
    record = reader.avro(Instant(instant.timestamp, instant.action, State.REQUESTED), "HoodieCompactionPlan")
    if record is not None:
        operations = [CompactionOperation.from_avro(op) for op in record.get("operations") or []]
        logs = sum(len(op.log_file_names) for op in operations)
        log_bytes = sum(int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0)) for op in operations)
        plan = (f"{plural(len(operations), 'file group')} in "
                f"{plural(len({op.partition_path for op in operations}), 'partition')} · "
                f"{plural(logs, 'log file')} ({fmt_bytes(log_bytes)})")
    return _Described(instant.action, plan, "waiting to be executed" if instant.is_requested
                      else "being executed, or interrupted (the next run executes it again)")


def _clean(reader: Reader, instant: Instant) -> _Described:
    """A clean: files deleted, or the files its plan deletes."""
    if not instant.is_completed:
        record = reader.avro(Instant(instant.timestamp, CLEAN, State.REQUESTED), "HoodieCleanerPlan")
        if record is None:
            return _Described(CLEAN)
        plan = CleanPlan.from_avro(record)
        earliest = plan.earliest_instant_to_retain
        return _Described(CLEAN, f"{plural(plan.file_count, 'file')} in {plural(len(plan.files), 'partition')}",
                          plan.policy.value + (f"; earliest commit to retain {earliest.timestamp}" if earliest else ""))
    record = reader.avro(instant, "HoodieCleanMetadata")
    if record is None:
        return _Described(CLEAN)
    partitions = (record.get("partitionMetadata") or {}).values()
    failed = sum(len(p.get("failedDeleteFiles") or []) for p in partitions)
    touched = sum(1 for p in partitions if p.get("successDeleteFiles"))
    policy = next((p.get("policy") for p in partitions if p.get("policy")), "")
    earliest = record.get("earliestCommitToRetain")
    summary = (f"deleted {plural(int(record.get('totalFilesDeleted') or 0), 'file')} in {plural(touched, 'partition')}"
               + (f" ({failed} already gone)" if failed else "")
               + (f"; earliest commit to retain {earliest}" if earliest else "") + (f"; {policy}" if policy else ""))
    return _Described(CLEAN, summary=summary,
                      duration=fmt_duration(int(record.get("timeTakenInMillis") or 0) / 1000.0))


def _rollback(reader: Reader, instant: Instant) -> _Described:
    """A rollback: what it rolled back and the files it deleted, or what it will roll back."""
    if not instant.is_completed:
        record = reader.avro(Instant(instant.timestamp, ROLLBACK, State.REQUESTED), "HoodieRollbackPlan")
        if record is None:
            return _Described(ROLLBACK)
        target = (record.get("instantToRollback") or {}).get("commitTime") or "?"
        return _Described(ROLLBACK, plural(len(record.get("RollbackRequests") or []), "rollback request"),
                          f"rolls back {target}")
    record = reader.avro(instant, "HoodieRollbackMetadata")
    if record is None:
        return _Described(ROLLBACK)
    commits = ", ".join(str(t) for t in record.get("commitsRollback") or []) or "nothing"
    return _Described(ROLLBACK, summary=f"rolled back {commits}; deleted "
                                        f"{plural(int(record.get('totalFilesDeleted') or 0), 'file')}",
                      duration=fmt_duration(int(record.get("timeTakenInMillis") or 0) / 1000.0))


def _restore(reader: Reader, instant: Instant) -> _Described:
    """A restore: the instants it rolled back (or will)."""
    if instant.is_completed:
        record = reader.avro(instant, "HoodieRestoreMetadata")
    else:
        record = reader.avro(Instant(instant.timestamp, RESTORE, State.REQUESTED), "HoodieRestorePlan")
    if record is None:
        return _Described(RESTORE)
    rolled = [str(i.get("commitTime") if isinstance(i, dict) else i) for i in record.get("instantsToRollback") or []]
    shown = ", ".join(rolled[:5]) + (", …" if len(rolled) > 5 else "")
    verb = "rolled back" if instant.is_completed else "rolls back"
    return _Described(RESTORE, "" if instant.is_completed else plural(len(rolled), "instant"),
                      f"{verb} {plural(len(rolled), 'instant')}" + (f": {shown}" if shown else ""))


def _savepoint(reader: Reader, instant: Instant) -> _Described:
    """A savepoint: the partitions whose files it keeps, by whom, why."""
    record = reader.avro(instant, "HoodieSavepointMetadata")
    if record is None:
        return _Described(SAVEPOINT)
    by, comments = record.get("savepointedBy") or "", record.get("comments") or ""
    return _Described(SAVEPOINT, summary=(
        f"keeps the files of {plural(len(record.get('partitionMetadata') or {}), 'partition')}"
        + (f"; by {by}" if by else "") + (f": {comments}" if comments else "")))


def describe(reader: Reader, instant: Instant, completed_ms: int | None, utc: bool,
             ) -> tuple[TimelineEntry, ServiceEntry | None]:
    """The timeline entry of an active instant and, for table services and pending instants, its table row.

    Args:
        reader: reads the instant's files.
        instant: the instant (latest state).
        completed_ms: modification time of its completed file, or ``None``.
        utc: the timeline time zone is UTC (else the local clock).
    """
    action = instant.action
    if instant.is_completed and action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT):
        described = _completed_commit(reader, instant)
    elif action == REPLACE_COMMIT:
        described = _pending_replace(reader, instant)
    elif action in (COMPACTION, LOG_COMPACTION):
        described = _pending_compaction(reader, instant)
    elif action in (CLEAN, ROLLBACK, RESTORE, SAVEPOINT):
        described = {CLEAN: _clean, ROLLBACK: _rollback, RESTORE: _restore, SAVEPOINT: _savepoint}[action](
            reader, instant)
    elif instant.is_pending and action in (COMMIT, DELTA_COMMIT):
        described = _Described(action, summary="write in progress, or failed (the next writer rolls it back)")
    else:
        described = _Described(action)
    moment = instant_moment(instant.timestamp)
    completed_at = None
    if instant.is_completed and completed_ms:
        completed_at = plausible(moment, from_millis(completed_ms, utc))
    if action == SAVEPOINT:
        # A savepoint's instant time is the commit it keeps, not when it was made: its own time is from its
        # inflight file to its completed file (it said "took 18.1 s", measured from the commit, for a 0.38 s call).
        started_ms = reader.mtime_ms(Instant(instant.timestamp, SAVEPOINT, State.INFLIGHT).file_name)
        if instant.is_completed and completed_ms and started_ms is not None and completed_ms >= started_ms:
            described.duration = fmt_duration((completed_ms - started_ms) / 1000.0)
        completed_at = None  # no bar from the commit's time on the timeline chart either
    elif completed_at is not None and moment is not None and not described.duration:
        described.duration = fmt_duration((completed_at - moment).total_seconds())
    if instant.is_pending:
        described.duration = ""
    detail = " · ".join(p for p in (described.plan, described.summary) if p)
    entry = TimelineEntry(instant.timestamp, moment, described.kind, instant.state, False, completed_at, detail)
    if instant.is_pending or described.kind in SERVICE_KINDS:
        return entry, ServiceEntry(instant.timestamp, described.kind, instant.state, described.plan,
                                   described.summary, described.duration)
    return entry, None


def completed_file_times(table: Table) -> dict[tuple[str, str], int]:
    """(instant time, comparable action) → modification time (ms) of its completed file in ``.hoodie``.

    ``{}`` when every instant file has the same modification time to the second although there are several:
    the timeline was copied or unpacked, and the times say nothing about when instants completed.

    Raises:
        StorageError: ``.hoodie`` cannot be listed.
    """
    out: dict[tuple[str, str], int] = {}
    times = []
    for info in table.storage.list_dir(table.meta_path):
        instant = None if info.is_dir else Instant.parse(info.name)
        if instant is None or info.mtime_ms <= 0:
            continue
        times.append(info.mtime_ms)
        if instant.is_completed:
            out[(instant.timestamp, comparable_action(instant.action))] = info.mtime_ms
    if len(times) > 1 and len({ms // 1000 for ms in times}) == 1:
        logger.debug("instant files of %s all have the same modification time: not used", table.base_path)
        return {}
    return out


def archived_entries(reader: Reader, limit: int) -> tuple[list[TimelineEntry], int]:
    """The newest ``limit`` archived instants (latest state each, oldest first) and how many there are.

    An archived ``commit`` whose metadata says ``COMPACT`` is a compaction, a ``replacecommit`` with
    ``CLUSTER`` (or a clustering plan) a clustering.
    """
    table = reader.table
    if not table.storage.exists(table.archive_path):
        return [], 0
    try:
        records = read_archived(table)
    except (EngineError, OSError) as exc:
        reader.warn(f"cannot read the archived timeline {table.archive_path}", exc)
        return [], 0
    grouped: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for record in records:
        key = (str(record.get("commitTime")), comparable_action(str(record.get("actionType") or "")))
        grouped.setdefault(key, {})[str(record.get("actionState"))] = record
    rank = {State.REQUESTED.name: 0, State.INFLIGHT.name: 1, State.COMPLETED.name: 2}
    entries = []
    for (timestamp, action), states in sorted(grouped.items()):
        state_name = max(states, key=lambda name: rank.get(name, -1))
        record = states[state_name]
        kind = str(record.get("actionType") or action)
        data = record.get("hoodieReplaceCommitMetadata") or record.get("hoodieCommitMetadata") or {}
        operation = str(data.get("operationType") or "")
        if operation == "COMPACT" or any(str(r.get("actionType")) == COMPACTION for r in states.values()):
            kind = COMPACTION
        elif operation == "LOG_COMPACT" or kind == LOG_COMPACTION:
            kind = LOG_COMPACTION
        elif kind == REPLACE_COMMIT:
            requested = (states.get(State.REQUESTED.name) or {}).get("hoodieRequestedReplaceMetadata") or {}
            kind = CLUSTERING if operation == "CLUSTER" or requested.get("clusteringPlan") else OVERWRITE
        clean = record.get("hoodieCleanMetadata") or {}
        detail = operation or (f"deleted {plural(int(clean.get('totalFilesDeleted') or 0), 'file')}" if clean else "")
        moment = instant_moment(timestamp)
        state = State[state_name] if state_name in rank else State.COMPLETED
        done = instant_moment(str(record.get("stateTransitionTime") or ""))
        entries.append(TimelineEntry(timestamp, moment, kind, state, True,
                                     plausible(moment, done) if state is State.COMPLETED else None, detail))
    return (entries[-limit:] if limit > 0 else []), len(entries)
