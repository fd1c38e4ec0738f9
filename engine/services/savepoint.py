"""Savepoints, restore and rolling back a completed commit (Hudi ``SavepointActionExecutor``,
``RestorePlanActionExecutor`` / ``BaseRestoreActionExecutor``, ``BaseHoodieWriteClient.rollback``).

* **Savepoint** (:func:`create_savepoint`) — marks a completed commit so the cleaner keeps the files that
  read it: ``<commit>.savepoint.inflight`` then ``<commit>.savepoint`` holding Avro ``HoodieSavepointMetadata``
  (who, when in ms, comments, per partition the base files — and on merge-on-read the log files — of the
  latest file slices as of the commit). A commit older than the last clean's earliest retained commit cannot
  be savepointed: its older file versions may be gone.
* **Restore** (:func:`restore_to_savepoint`) — ``<t>.restore.requested`` (Avro ``HoodieRestorePlan``: every
  write instant after the savepoint, pending clusterings first, then newest first), ``.restore.inflight``,
  each instant rolled back (its files deleted, its log blocks cancelled by rollback blocks, its timeline
  files removed), then ``<t>.restore`` (Avro ``HoodieRestoreMetadata`` with each rollback's metadata); the
  rollback instants the restore created are then removed from the timeline, as Hudi does.
* **Rollback to instant** (:func:`rollback_to_instant`) — rolls back the latest completed commit (Hudi
  refuses any other: "please rollback greater commits first").
"""

from __future__ import annotations

import logging
import time
from typing import Any

from engine.errors import EngineError, TableServiceError
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.instant import (
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from engine.write.rollback import is_pending_clustering, rollback_instant

logger = logging.getLogger(__name__)

WRITE_TIMELINE_ACTIONS = ("commit", "deltacommit", REPLACE_COMMIT, COMPACTION, LOG_COMPACTION)


class SavepointError(TableServiceError):
    """A savepoint cannot be created, deleted or restored (Hudi ``HoodieSavepointException``)."""


def savepoint_times(table: Table) -> list[str]:
    """Completed savepoints' commit times, oldest first."""
    return [i.timestamp for i in table.timeline.reload().savepoints()]


def _last_commit_retained(table: Table) -> str:
    cleans = [i for i in table.timeline.cleans() if i.state is State.COMPLETED]
    if cleans:
        metadata = deserialize(table.timeline.read_details(cleans[-1]), "HoodieCleanMetadata",
                               source=cleans[-1].file_name)
        retained = metadata.get("earliestCommitToRetain") or ""
        if retained:
            return str(retained)
    completed = table.timeline.completed_commits()
    return completed[0].timestamp if completed else ""


def create_savepoint(table: Table, commit_time: str, user: str = "", comments: str = "") -> dict[str, Any]:
    """Savepoint the completed commit ``commit_time``; returns the ``HoodieSavepointMetadata`` written.

    Raises:
        SavepointError: no such completed commit, already savepointed, or older than what the cleaner keeps.
    """
    timeline = table.timeline.reload()
    if commit_time not in {i.timestamp for i in timeline.completed_commits()}:
        raise SavepointError(f"Could not savepoint non-existing commit {commit_time} of {table.base_path}")
    if commit_time in savepoint_times(table):
        raise SavepointError(f"commit {commit_time} of {table.base_path} is already savepointed")
    retained = _last_commit_retained(table)
    if retained and commit_time < retained:
        raise SavepointError(f"Could not savepoint commit {commit_time} as this is beyond the lookup window "
                             f"{retained} (table {table.base_path})")
    view = table.file_system_view(commit_time)
    partitions: dict[str, dict[str, Any]] = {}
    for partition in view.partition_paths():
        names = []
        for file_slice in view.latest_file_slices(partition):
            if file_slice.base_file is not None:
                names.append(file_slice.base_file.name)
            if table.is_mor:
                names.extend(lf.name for lf in file_slice.log_files)
        partitions[partition] = {"partitionPath": partition, "savepointDataFile": names}
    metadata = {"savepointedBy": user or "", "savepointedAt": int(time.time() * 1000), "comments": comments or "",
                "partitionMetadata": partitions, "version": 1}
    inflight = timeline.create_inflight(commit_time, SAVEPOINT)
    timeline.complete(inflight, serialize("HoodieSavepointMetadata", metadata))
    logger.info("%s: commit %s savepointed (%d partition(s))", table.base_path, commit_time, len(partitions))
    return metadata


def delete_savepoint(table: Table, commit_time: str) -> None:
    """Remove the savepoint of ``commit_time`` (the cleaner may then remove its files).

    Raises:
        SavepointError: no such savepoint.
    """
    if commit_time not in savepoint_times(table):
        raise SavepointError(f"savepoint {commit_time} not found in {table.base_path} (savepoints: "
                             f"{', '.join(savepoint_times(table)) or 'none'})")
    table.timeline.delete_instant_files(commit_time, SAVEPOINT)
    logger.info("%s: savepoint %s deleted", table.base_path, commit_time)


def _rollback_metadata(table: Table, rollback_time: str) -> dict[str, Any] | None:
    instant = Instant(rollback_time, ROLLBACK, State.COMPLETED)
    try:
        return deserialize(table.timeline.reload().read_details(instant), "HoodieRollbackMetadata",
                           source=instant.file_name)
    except EngineError:
        return None


def _instants_after(table: Table, savepoint: str) -> list[Instant]:
    """Hudi ``RestorePlanActionExecutor``: pending clusterings after the savepoint first, then every other
    write-timeline instant after it, newest first."""
    timeline = table.timeline.reload()
    later = [i for i in timeline if i.action in WRITE_TIMELINE_ACTIONS and i.timestamp > savepoint]
    unique: dict[str, Instant] = {}
    for instant in later:  # one entry per instant time: its latest state
        current = unique.get(instant.timestamp)
        if current is None or instant.state.rank > current.state.rank:
            unique[instant.timestamp] = instant
    ordered = sorted(unique.values(), key=lambda i: i.timestamp, reverse=True)
    clustering = [i for i in ordered if i.is_pending and is_pending_clustering(table, i)]
    return clustering + [i for i in ordered if i not in clustering]


def pending_restores(table: Table) -> list[Instant]:
    """Requested or inflight ``restore`` instants, oldest first (Hudi
    ``getRestoreTimeline().filterInflightsAndRequested()``)."""
    return [i for i in table.timeline.reload().of_actions([RESTORE]) if i.is_pending]


def _restore_plan(table: Table, restore: Instant) -> list[Instant]:
    plan = deserialize(table.timeline.read_details(Instant(restore.timestamp, RESTORE, State.REQUESTED)),
                       "HoodieRestorePlan", source=f"{restore.timestamp}.restore.requested")
    return [Instant(i["commitTime"], i["action"], State.COMPLETED) for i in plan.get("instantsToRollback") or []]


def restore_savepoint_of(table: Table, restore: Instant) -> str | None:
    """The savepoint a restore instant restores to: the latest savepoint before the oldest instant its plan
    rolls back (Hudi ``RestoreUtils.getSavepointToRestoreTimestampV1Schema``); ``None`` for an empty plan or
    no such savepoint."""
    doomed = _restore_plan(table, restore)
    if not doomed:
        return None
    oldest = min(i.timestamp for i in doomed)
    earlier = [t for t in savepoint_times(table) if t < oldest]
    return earlier[-1] if earlier else None


def restore_to_savepoint(table: Table, savepoint: str) -> dict[str, Any]:
    """Roll the table back to the savepoint ``savepoint``; returns the ``HoodieRestoreMetadata`` written.

    A restore that was interrupted (its instant still requested or inflight) to the same savepoint is resumed
    under its own instant time and plan, the instants it already rolled back skipped — as Hudi's
    ``BaseHoodieWriteClient.scheduleAndGetRestorePlan`` reuses a failed restore. Until then no write may start
    (:class:`engine.errors.PendingRestoreError`).

    Raises:
        SavepointError: no such savepoint, or an interrupted restore to another savepoint is pending.
        StorageError: a file could not be deleted (the restore stays inflight; rerunning finishes it).
    """
    if savepoint not in savepoint_times(table):
        raise SavepointError(f"savepoint {savepoint} not found in {table.base_path} (savepoints: "
                             f"{', '.join(savepoint_times(table)) or 'none'})")
    start = time.monotonic()
    timeline = table.timeline
    pending = pending_restores(table)
    resumed = pending[-1] if pending else None
    if resumed is not None:
        target = restore_savepoint_of(table, resumed)
        if target not in (None, savepoint):
            raise SavepointError(f"restore {resumed.timestamp} of {table.base_path} to savepoint {target} did "
                                 f"not finish; run it again to savepoint {target} before restoring to {savepoint}")
        restore_time = resumed.timestamp
        present = {i.timestamp for i in timeline.reload() if i.action in WRITE_TIMELINE_ACTIONS}
        planned = _restore_plan(table, resumed)
        # Instants rolled back before the interruption are gone from the timeline; anything written after the
        # plan (no writer starts while a restore is pending, but a table service may have) is added.
        doomed = [i for i in planned if i.timestamp in present]
        known = {i.timestamp for i in planned}
        doomed += [i for i in _instants_after(table, savepoint) if i.timestamp not in known]
        inflight = resumed if resumed.state is State.INFLIGHT else timeline.transition_to_inflight(resumed, b"")
        logger.warning("%s: resuming restore %s to savepoint %s: %d of %d instant(s) left to roll back",
                       table.base_path, restore_time, savepoint, len(doomed), len(planned))
    else:
        doomed = _instants_after(table, savepoint)
        planned = doomed
        restore_time = timeline.new_instant_time()
        plan = {"instantsToRollback": [{"commitTime": i.timestamp, "action": i.action} for i in doomed],
                "version": 1}
        requested = timeline.create_requested(restore_time, RESTORE, serialize("HoodieRestorePlan", plan))
        inflight = timeline.transition_to_inflight(requested, b"")
    rollbacks: dict[str, list[dict[str, Any] | None]] = {}
    for instant in doomed:
        current = [i for i in table.timeline.reload().find(instant.timestamp)
                   if i.action in WRITE_TIMELINE_ACTIONS]
        rollback_time = rollback_instant(table.reload(), current[0] if current else instant, completed=True,
                                         reason=f"restore {restore_time} to savepoint {savepoint}")
        rollbacks[instant.timestamp] = [_rollback_metadata(table, rollback_time)]
    everything = planned + [i for i in doomed if i not in planned]
    metadata = {
        "startRestoreTime": restore_time, "timeTakenInMillis": int((time.monotonic() - start) * 1000),
        "instantsToRollback": [i.timestamp for i in everything], "hoodieRestoreMetadata": rollbacks, "version": 1,
        "restoreInstantInfo": [{"commitTime": i.timestamp, "action": i.action} for i in everything],
    }
    table.timeline.reload().complete(inflight, serialize("HoodieRestoreMetadata", metadata))
    for rollback in [i for i in table.timeline.reload().rollbacks() if i.timestamp > savepoint]:
        table.timeline.delete_instant_files(rollback.timestamp, ROLLBACK)
    logger.info("%s: restored to savepoint %s: %d instant(s) rolled back (restore %s)", table.base_path,
                savepoint, len(everything), restore_time)
    return metadata


def rollback_to_instant(table: Table, instant_time: str) -> str:
    """Roll back the completed commit ``instant_time``, which must be the latest (Hudi
    ``RollbackToInstantTimeProcedure``); returns the rollback instant time.

    Raises:
        SavepointError: no such completed commit, or later commits or pending writes exist.
    """
    timeline = table.timeline.reload()
    completed = timeline.completed_commits()
    target = next((i for i in completed if i.timestamp == instant_time), None)
    if target is None:
        raise SavepointError(f"Commit {instant_time} not found in Commits of {table.base_path} (completed: "
                             f"{', '.join(i.timestamp for i in completed[-10:]) or 'none'})")
    if any(i.timestamp > instant_time for i in completed):
        raise SavepointError(f"Found commits after time :{instant_time}, please rollback greater commits first "
                             f"(table {table.base_path})")
    if any(i.timestamp > instant_time for i in timeline.pending_commits()):
        raise SavepointError(f"Found in-flight commits after time :{instant_time}, please rollback greater "
                             f"commits first (table {table.base_path})")
    return rollback_instant(table, target, completed=True, reason="rollback to instant")


__all__ = ["SavepointError", "create_savepoint", "delete_savepoint", "pending_restores", "restore_savepoint_of",
           "restore_to_savepoint",
           "rollback_to_instant", "savepoint_times"]
