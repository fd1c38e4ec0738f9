"""Rolling back failed writes (Hudi ``BaseRollbackActionExecutor`` with marker-based rollback, falling
back to listing when a write left no markers).

A write that died after creating its instant leaves a requested/inflight commit, its markers and partial
files. The next writer calls :func:`rollback_failed_writes` before it starts (only instants whose writer's
heartbeat expired or never existed are failed, :mod:`engine.write.heartbeat`): for each failed instant it
writes ``R.rollback.requested`` (Avro ``HoodieRollbackPlan``), ``R.rollback.inflight``, deletes the base
files the failed write created, writes ``R.rollback`` (Avro ``HoodieRollbackMetadata``), and removes the
failed instant's timeline files and markers.

Log files a failed deltacommit appended to are not deleted: as Hudi 0.14 does (``BaseRollbackHelper`` with
``MarkerBasedRollbackStrategy.getRollbackRequestForAppend``), each touched file group gets a new log
version (write token ``1-0-1``) holding one ``COMMAND_BLOCK`` (ROLLBACK_BLOCK, ``TARGET_INSTANT_TIME`` = the
failed instant), which tells every log reader to drop that instant's blocks (docs/FORMAT.md §5.3). Readers that
filter blocks by the timeline skip them anyway, since the failed instant never completed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from engine.errors import LogFileExists, TimelineError
from engine.filegroup.naming import (
    UNKNOWN_WRITE_TOKEN,
    log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from engine.formats.log_format import CommandBlock, LogWriter
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.instant import Instant, State
from engine.write.heartbeat import HeartbeatClient, HeartbeatStatus
from engine.write.markers import IOType, delete_marker_dir, list_markers

logger = logging.getLogger(__name__)

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def is_pending_clustering(table: Table, instant: Instant) -> bool:
    """Whether ``instant`` is a replacecommit whose requested plan is a clustering plan."""
    if instant.action != "replacecommit":
        return False
    try:
        requested = table.timeline.read_details(
            Instant(instant.timestamp, instant.action, State.REQUESTED)
        )
        plan = deserialize(requested) if requested else {}
    except Exception:  # noqa: BLE001 - an unreadable plan is treated as a plain overwrite
        return False
    return bool(plan.get("clusteringPlan"))


def pending_writes(table: Table, heartbeats: HeartbeatClient | None = None) -> \
        list[tuple[Instant, HeartbeatStatus]]:
    """Pending commit/deltacommit/replacecommit instants (not pending clustering), oldest first, each with
    what its heartbeat says (one listing of ``.hoodie/.heartbeat``).

    Args:
        table: the table (its timeline is reloaded).
        heartbeats: judges heartbeats; default: from the table config.
    """
    table.timeline.reload()
    pending = [i for i in table.timeline.pending()
               if i.action in WRITE_ACTIONS and not is_pending_clustering(table, i)]
    if not pending:
        return []
    client = heartbeats or HeartbeatClient.from_config(table.storage, table.base_path, table.config)
    statuses = client.statuses(i.timestamp for i in pending)
    return [(i, statuses[i.timestamp]) for i in pending]


def failed_writes(table: Table, heartbeats: HeartbeatClient | None = None) -> list[Instant]:
    """Pending write instants whose writer is dead (heartbeat expired or absent, Hudi EAGER policy for
    instants without one), oldest first. Instants with a live heartbeat are never returned; an instant
    that completed while its heartbeat was being read is not returned either (the timeline is read
    again after the heartbeats, and a writer deletes its heartbeat only after completing)."""
    candidates = pending_writes(table, heartbeats)
    for instant, status in candidates:
        if status.live:
            logger.info("pending %s %s of %s has a live heartbeat; not rolling it back", instant.action,
                        instant.timestamp, table.base_path)
    dead = [i for i, status in candidates if status.expired]
    if not dead:
        return []
    still_pending = {(i.timestamp, i.action) for i in table.timeline.reload().pending()}
    return [i for i in dead if (i.timestamp, i.action) in still_pending]


@dataclass
class _PartitionRollback:
    """What rolling back one failed instant does in one partition."""

    files_to_delete: list[str] = field(default_factory=list)
    """Absolute paths of base files the failed write created or rewrote."""
    failed_logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(file id, base instant) → absolute paths of log files the failed write appended."""


def _rollback_work(table: Table, instant: Instant) -> dict[str, _PartitionRollback]:
    """The failed write's files by partition: from its markers, else by listing base files carrying the
    instant time (a write that left no markers wrote no log blocks that any reader will keep: its
    instant never completes)."""
    storage = table.storage
    work: dict[str, _PartitionRollback] = {}
    markers = list_markers(storage, table.base_path, instant.timestamp)
    for marker in markers:
        path = storage.join(table.base_path, marker.data_file_relative_path)
        entry = work.setdefault(marker.partition_path, _PartitionRollback())
        parsed_log = parse_log_file_name(marker.file_name) if marker.io_type is IOType.APPEND else None
        if parsed_log is not None:
            entry.failed_logs.setdefault((parsed_log.file_id, parsed_log.base_instant), []).append(path)
        else:
            entry.files_to_delete.append(path)
    if markers:
        return work
    view = table.file_system_view()
    for partition in view.partition_paths():
        folder = storage.join(table.base_path, partition) if partition else table.base_path
        for info in storage.list_dir(folder):
            parsed = parse_base_file_name(info.name)
            if parsed is not None and parsed[2] == instant.timestamp:
                work.setdefault(partition, _PartitionRollback()).files_to_delete.append(info.path)
    return work


def _completed_work(table: Table, instant: Instant) -> dict[str, _PartitionRollback]:
    """A completed instant's files by partition, from its commit metadata (its markers are gone): base files
    and CDC logs it wrote are deleted, log files it appended to get a rollback block; a log file starting a
    slice at the instant itself is deleted."""
    storage = table.storage
    work: dict[str, _PartitionRollback] = {}
    completed = next((i for i in table.timeline.find(instant.timestamp) if i.is_completed), None)
    if completed is None:
        return work
    metadata = table.commit_metadata(completed)
    for partition, stat in metadata.iter_write_stats():
        entry = work.setdefault(partition, _PartitionRollback())
        for relative in (stat.cdc_stats or {}):
            entry.files_to_delete.append(storage.join(table.base_path, relative))
        if not stat.path:
            continue
        path = storage.join(table.base_path, stat.path)
        parsed_log = parse_log_file_name(stat.path.rsplit("/", 1)[-1])
        if parsed_log is not None and parsed_log.base_instant != instant.timestamp:
            entry.failed_logs.setdefault((parsed_log.file_id, parsed_log.base_instant), []).append(path)
        else:
            entry.files_to_delete.append(path)
    return work


def _plan(table: Table, failed: Instant, work: dict[str, _PartitionRollback]) -> dict[str, object]:
    """The ``HoodieRollbackPlan`` of ``work``: one request per partition's deleted files, one per touched log
    file group (with the sizes of its log files)."""
    requests: list[dict[str, object]] = []
    for partition, entry in sorted(work.items()):
        if entry.files_to_delete:
            requests.append({"partitionPath": partition, "fileId": "", "latestBaseInstant": "",
                             "filesToBeDeleted": sorted(entry.files_to_delete), "logBlocksToBeDeleted": None})
        for (file_id, base_instant), logs in sorted(entry.failed_logs.items()):
            requests.append({"partitionPath": partition, "fileId": file_id, "latestBaseInstant": base_instant,
                             "filesToBeDeleted": [], "logBlocksToBeDeleted": _file_sizes(table, logs)})
    return {"instantToRollback": {"commitTime": failed.timestamp, "action": failed.action},
            "RollbackRequests": requests, "version": 1}


def _work_of(plan: dict[str, Any]) -> dict[str, _PartitionRollback]:
    """The work a ``HoodieRollbackPlan`` describes (the inverse of :func:`_plan`)."""
    work: dict[str, _PartitionRollback] = {}
    for request in plan.get("RollbackRequests") or []:
        entry = work.setdefault(str(request.get("partitionPath") or ""), _PartitionRollback())
        entry.files_to_delete.extend(request.get("filesToBeDeleted") or [])
        logs = request.get("logBlocksToBeDeleted") or {}
        if logs:
            key = (str(request.get("fileId") or ""), str(request.get("latestBaseInstant") or ""))
            entry.failed_logs.setdefault(key, []).extend(sorted(logs))
    return work


def _pending_rollback_of(table: Table, timestamp: str) -> tuple[Instant, dict[str, _PartitionRollback]] | None:
    """The pending rollback instant whose plan rolls back ``timestamp``, and that plan's work by partition;
    ``None`` when there is none (a plan that cannot be read is left alone, with a warning naming it)."""
    for pending in table.timeline.pending():
        if pending.action != "rollback":
            continue
        try:
            content = table.timeline.read_details(Instant(pending.timestamp, "rollback", State.REQUESTED))
            plan = deserialize(content) if content else {}
        except Exception:  # noqa: BLE001 - an unreadable plan: a new rollback is planned instead
            logger.warning("%s: rollback plan %s cannot be read; planning anew", table.base_path,
                           pending.timestamp)
            continue
        if (plan.get("instantToRollback") or {}).get("commitTime") == timestamp:
            return pending, _work_of(plan)
    return None


def _file_sizes(table: Table, paths: list[str]) -> dict[str, int]:
    """``path → size`` of those of ``paths`` that exist."""
    return {p: table.storage.size(p) for p in sorted(paths) if table.storage.exists(p)}


def _append_rollback_block(table: Table, partition: str, file_id: str, base_instant: str,
                           rollback_time: str, failed_time: str) -> tuple[str, int]:
    """Write the ROLLBACK command block as the file group's next log version; returns (path, size)."""
    storage = table.storage
    folder = storage.join(table.base_path, partition) if partition else table.base_path
    highest = 0
    for info in storage.list_dir(folder):
        parsed = parse_log_file_name(info.name)
        if parsed and parsed.file_id == file_id and parsed.base_instant == base_instant:
            highest = max(highest, parsed.version)
    version = highest + 1
    while True:
        path = storage.join(folder, log_file_name(file_id, base_instant, version, UNKNOWN_WRITE_TOKEN))
        try:
            writer = LogWriter(storage, path)
            break
        except LogFileExists:
            version += 1  # a concurrent writer took that version (optimistic concurrency control)
    try:
        writer.append_block(CommandBlock.rollback(rollback_time, failed_time))
    finally:
        size = writer.close()
    return path, size


def rollback_instant(table: Table, failed: Instant, *, completed: bool = False, reason: str = "",
                     log_level: int = logging.INFO) -> str:
    """Roll back one write instant; returns the rollback instant time.

    Args:
        table: the table.
        failed: the instant (a pending write, or with ``completed`` a completed commit, deltacommit,
            replacecommit or compaction).
        completed: roll back a completed instant (``rollback_to_instant``, restore): its files come from its
            commit metadata.
        reason: why, for the log line (e.g. ``restore to savepoint 2026…``, ``failed write``).
        log_level: the level of the one line saying what was rolled back: INFO for a writer cleaning up its
            own failed write (the caller reports the error itself) and for restores; WARNING for a failed
            write another writer left behind (:func:`rollback_failed_writes`).

    Raises:
        StorageError: a file could not be deleted or the rollback block written (the rollback stays
            inflight and is redone next time).
        TimelineError: the instant has completed meanwhile and ``completed`` is false (nothing is changed).
    """
    start = time.monotonic()
    storage = table.storage
    timeline = table.timeline
    completed_instant = next((i for i in timeline.reload().find(failed.timestamp)
                              if i.is_completed and i.action in (failed.action, "commit", "deltacommit")), None)
    done = completed_instant is not None
    if done and not completed:
        raise TimelineError(f"{failed.action} {failed.timestamp} of {table.base_path} has completed; a "
                            f"completed commit is never rolled back as a failed write")
    resumed = _pending_rollback_of(table, failed.timestamp)
    if resumed is not None:
        # A rollback of this instant was interrupted: redo it from its own plan (Hudi reuses a pending rollback
        # instant), since the instant's commit metadata and markers may be gone by now.
        pending_rollback, work = resumed
        inflight = pending_rollback if pending_rollback.is_inflight else \
            timeline.transition_to_inflight(pending_rollback, b"")
        logger.warning("%s: resuming rollback %s of %s %s", table.base_path, inflight.timestamp, failed.action,
                       failed.timestamp)
    else:
        work = _completed_work(table, failed) if done else _rollback_work(table, failed)
        plan = _plan(table, failed, work)
        requested = timeline.create_requested_now("rollback", serialize("HoodieRollbackPlan", plan))
        inflight = timeline.transition_to_inflight(requested, b"")
    rollback_time = inflight.timestamp
    instant_info = {"commitTime": failed.timestamp, "action": failed.action}
    if completed_instant is not None:
        # Unpublish first (Hudi ``revertToInflight``): a crash while files are deleted then leaves a pending
        # instant no reader sees, never a completed commit with half of its files.
        timeline.revert_to_inflight(completed_instant)
    partition_metadata = {}
    deleted_total = 0
    for partition, entry in sorted(work.items()):
        success = []
        for path in sorted(entry.files_to_delete):
            if storage.exists(path):
                storage.delete(path)
                success.append(path)
        rollback_logs: dict[str, int] = {}
        failed_logs: dict[str, int] = {}
        for (file_id, base_instant), logs in sorted(entry.failed_logs.items()):
            failed_logs.update(_file_sizes(table, logs))
            path, size = _append_rollback_block(table, partition, file_id, base_instant,
                                                rollback_time, failed.timestamp)
            rollback_logs[path] = size
        deleted_total += len(success)
        partition_metadata[partition] = {
            "partitionPath": partition, "successDeleteFiles": success, "failedDeleteFiles": [],
            "rollbackLogFiles": rollback_logs, "logFilesFromFailedCommit": failed_logs,
        }
    metadata = {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": int((time.monotonic() - start) * 1000),
        "totalFilesDeleted": deleted_total,
        "commitsRollback": [failed.timestamp],
        "partitionMetadata": partition_metadata,
        "version": 1,
        "instantsRollback": [instant_info],
    }
    timeline.complete(inflight, serialize("HoodieRollbackMetadata", metadata))
    timeline.delete_instant_files(failed.timestamp, failed.action)
    delete_marker_dir(storage, table.base_path, failed.timestamp)
    # Last, as Hudi: while the rollback runs, its own writer's heartbeat keeps other writers away.
    HeartbeatClient.from_config(storage, table.base_path, table.config).stop(failed.timestamp)
    blocks = sum(len(m["rollbackLogFiles"]) for m in partition_metadata.values())
    logger.log(log_level, "rolled back %s %s %s of %s%s: %d files deleted, %d rollback blocks written "
               "(rollback instant %s)", "completed" if done else "failed", failed.action, failed.timestamp,
               table.base_path, f" ({reason})" if reason else "", deleted_total, blocks, rollback_time)
    return rollback_time


def rollback_failed_writes(table: Table, heartbeats: HeartbeatClient | None = None) -> list[str]:
    """Roll back every failed write of ``table`` (oldest first; see :func:`failed_writes`: never one
    with a live heartbeat); returns the instants rolled back. Each is logged as a WARNING: a writer died
    (or was killed) before it could clean up."""
    done = []
    for failed in failed_writes(table, heartbeats):
        rollback_instant(table, failed, reason="its writer stopped without finishing it",
                         log_level=logging.WARNING)
        done.append(failed.timestamp)
    if done:
        table.timeline.reload()
    return done


def revert_table_service(table: Table, instant: Instant, delete_requested: bool = False) -> None:
    """Undo a pending compaction or clustering (Hudi ``rollbackInflightCompaction`` /
    ``rollbackInflightClustering``): the files it wrote are deleted (from its markers, else by listing) and an
    inflight instant goes back to requested, so the plan runs again; with ``delete_requested`` the plan goes too.

    Raises:
        TimelineError: ``instant`` is not pending.
        StorageError: a file cannot be deleted.
    """
    if not instant.is_pending:
        raise TimelineError(f"{instant.action} {instant.timestamp} of {table.base_path} is not pending")
    storage = table.storage
    for entry in _rollback_work(table, instant).values():
        for path in entry.files_to_delete:
            if storage.exists(path):
                storage.delete(path)
        for paths in entry.failed_logs.values():
            for path in paths:
                if storage.exists(path):
                    storage.delete(path)
    delete_marker_dir(storage, table.base_path, instant.timestamp)
    if instant.is_inflight:
        table.timeline.revert_to_requested(instant)
    if delete_requested:
        table.timeline.delete_instant_files(instant.timestamp, instant.action)
    table.timeline.reload()
    logger.info("%s: pending %s %s reverted%s", table.base_path, instant.action, instant.timestamp,
                " and its plan deleted" if delete_requested else " to requested")
