"""Rolling back failed writes (Hudi ``BaseRollbackActionExecutor`` with marker-based rollback, falling
back to listing when a write left no markers).

A write that died after creating its instant leaves a requested/inflight commit, its markers and partial
files. The next writer calls :func:`rollback_failed_writes` before it starts: for each failed instant it
writes ``R.rollback.requested`` (Avro ``HoodieRollbackPlan``), ``R.rollback.inflight``, deletes the files
the failed write created, writes ``R.rollback`` (Avro ``HoodieRollbackMetadata``), and removes the failed
instant's timeline files and markers. Readers never see the failed data (its instant never completed).
"""

from __future__ import annotations

import logging
import time

from engine.filegroup.naming import parse_base_file_name
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.instant import Instant, State, new_instant_time
from engine.write.markers import delete_marker_dir, list_markers

logger = logging.getLogger(__name__)

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def _is_pending_clustering(table: Table, instant: Instant) -> bool:
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


def failed_writes(table: Table) -> list[Instant]:
    """Pending commit/deltacommit/replacecommit instants (not pending clustering), oldest first."""
    table.timeline.reload()
    return [
        i for i in table.timeline.pending()
        if i.action in WRITE_ACTIONS and not _is_pending_clustering(table, i)
    ]


def _files_written_by(table: Table, instant: Instant) -> dict[str, list[str]]:
    """Absolute paths of data files ``instant`` created, by partition: from markers, else by listing
    base files carrying the instant time."""
    storage = table.storage
    files: dict[str, list[str]] = {}
    markers = list_markers(storage, table.base_path, instant.timestamp)
    if markers:
        for marker in markers:
            files.setdefault(marker.partition_path, []).append(
                storage.join(table.base_path, marker.data_file_relative_path)
            )
        return files
    view = table.file_system_view()
    for partition in view.partition_paths():
        folder = storage.join(table.base_path, partition) if partition else table.base_path
        for info in storage.list_dir(folder):
            parsed = parse_base_file_name(info.name)
            if parsed is not None and parsed[2] == instant.timestamp:
                files.setdefault(partition, []).append(info.path)
    return files


def rollback_instant(table: Table, failed: Instant) -> str:
    """Roll back one pending write instant; returns the rollback instant time.

    Raises:
        StorageError: a file could not be deleted (the rollback stays inflight and is redone next time).
    """
    start = time.monotonic()
    storage = table.storage
    timeline = table.timeline
    rollback_time = new_instant_time(timeline.all_instant_times())
    files = _files_written_by(table, failed)
    instant_info = {"commitTime": failed.timestamp, "action": failed.action}
    plan = {
        "instantToRollback": instant_info,
        "RollbackRequests": [
            {"partitionPath": partition, "fileId": "", "latestBaseInstant": "",
             "filesToBeDeleted": sorted(paths), "logBlocksToBeDeleted": None}
            for partition, paths in sorted(files.items())
        ],
        "version": 1,
    }
    requested = timeline.create_requested(rollback_time, "rollback", serialize("HoodieRollbackPlan", plan))
    inflight = timeline.transition_to_inflight(requested, b"")
    partition_metadata = {}
    deleted_total = 0
    for partition, paths in sorted(files.items()):
        success = []
        for path in sorted(paths):
            if storage.exists(path):
                storage.delete(path)
                success.append(path)
        deleted_total += len(success)
        partition_metadata[partition] = {
            "partitionPath": partition, "successDeleteFiles": success, "failedDeleteFiles": [],
            "rollbackLogFiles": {}, "logFilesFromFailedCommit": {},
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
    logger.warning("rolled back failed %s %s of %s: %d files deleted (rollback instant %s)",
                   failed.action, failed.timestamp, table.base_path, deleted_total, rollback_time)
    return rollback_time


def rollback_failed_writes(table: Table) -> list[str]:
    """Roll back every failed write of ``table`` (oldest first); returns the instants rolled back."""
    done = []
    for failed in failed_writes(table):
        rollback_instant(table, failed)
        done.append(failed.timestamp)
    if done:
        table.timeline.reload()
    return done
