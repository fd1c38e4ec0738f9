"""Starting and completing a write on the timeline (Hudi ``BaseHoodieWriteClient.startCommit`` /
``commitStats``).

``start_write`` fails at once when another writer is live (single-writer mode), rolls back any failed
write, starts the instant's heartbeat, then writes ``T.<action>.requested`` and the inflight file;
``finish_write`` removes files of failed task attempts (found through markers), writes the completed
instant atomically, deletes the markers and stops the heartbeat. A commit is visible only once its
completed instant file exists.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from engine.concurrency.conflicts import WriteStart
from engine.concurrency.transaction import (
    SINGLE_WRITER,
    TransactionManager,
    failed_writes_lazy,
    forget_start,
    remember_start,
)
from engine.config import HoodieConfig, WriteConfig
from engine.errors import ConcurrentWriteError, PendingRestoreError, TimelineError
from engine.schema.history import LATEST_SCHEMA, record_write_schema
from engine.table import Table
from engine.timeline.avro_serde import serialize
from engine.timeline.commit_metadata import CommitMetadata, WriteStat
from engine.timeline.instant import RESTORE, Instant, new_instant_time
from engine.write.heartbeat import HeartbeatClient, HeartbeatStatus
from engine.write.markers import delete_marker_dir, list_markers
from engine.write.operation import WriteOperation, commit_action
from engine.write.rollback import pending_writes, rollback_failed_writes

logger = logging.getLogger(__name__)

_INSTANT_TIME_ATTEMPTS = 5
"""Instant times tried when another writer creates the same one first (same millisecond)."""

def heartbeat_client(table: Table, conf: HoodieConfig | None = None) -> HeartbeatClient:
    """The heartbeat client of ``table`` with the interval and misses of ``conf`` (default: the table's).

    Raises:
        ConfigError: bad heartbeat settings.
    """
    return HeartbeatClient.from_config(table.storage, table.base_path, conf if conf is not None else table.config)


def check_concurrency_mode(table: Table, conf: HoodieConfig) -> TransactionManager:
    """The transaction manager of a write with ``conf``: ``hoodie.write.concurrency.mode`` is
    ``single_writer`` (Hudi's default) or ``optimistic_concurrency_control`` (then the lock provider and
    conflict strategy are checked too), ``hoodie.cleaner.policy.failed.writes`` is ``eager`` or ``lazy``.

    Raises:
        ConfigError: another mode, policy, lock provider or conflict strategy, naming the key and the table.
    """
    failed_writes_lazy(conf, f"table {table.name} at {table.base_path}")
    return TransactionManager(table, conf)


def concurrent_write_error(table: Table, live: Sequence[tuple[Instant, HeartbeatStatus]],
                           heartbeats: HeartbeatClient) -> ConcurrentWriteError:
    """The one-line error for a writer that found live pending writes (oldest first) on ``table``."""
    instant, status = live[0]
    more = f" (and {len(live) - 1} more live instants)" if len(live) > 1 else ""
    return ConcurrentWriteError(
        f"table {table.name} at {table.base_path} is being written by another writer: {instant.action} "
        f"instant {instant.timestamp} ({instant.state.name.lower()}) has a live heartbeat "
        f"({status.describe(heartbeats.now_ms())}){more}; "
        f"{WriteConfig.WRITE_CONCURRENCY_MODE.key}={SINGLE_WRITER.lower()} allows one writer at a time, so "
        f"this write did not start: run it again when that one has finished, or let several writers run at "
        f"once with {WriteConfig.WRITE_CONCURRENCY_MODE.key}=optimistic_concurrency_control and a "
        f"hoodie.write.lock.provider")


def check_no_pending_restore(table: Table) -> None:
    """Refuse to write while a restore is unfinished (Hudi ``BaseHoodieWriteClient.startCommit``): the table
    may be half restored, and a write on top would make the rest of the restore undo it.

    Raises:
        PendingRestoreError: a ``restore`` instant is requested or inflight.
    """
    pending = [i.timestamp for i in table.timeline.reload().of_actions([RESTORE]) if i.is_pending]
    if pending:
        raise PendingRestoreError(
            f"Found pending restore in the active timeline of {table.base_path} (restore {', '.join(pending)}): "
            f"the table may be in an inconsistent state. Run the restore to the same savepoint again to finish "
            f"it (CALL rollback_to_savepoint(table => ..., instant_time => '<savepoint>')) before writing.")


def start_write(table: Table, operation: WriteOperation, conf: HoodieConfig | None = None) -> Instant:
    """Begin a write (Hudi ``BaseHoodieWriteClient.startCommit``): fail if another writer is live (single
    writer only), roll back failed writes (``EAGER`` policy only; ``LAZY`` leaves them to the cleaner), start
    this instant's heartbeat, then create the requested and inflight instants. Under optimistic concurrency
    control what the writer saw of the timeline is kept for the conflict check of :func:`finish_write`.

    The heartbeat (:mod:`engine.write.heartbeat`) runs until :func:`finish_write` completes the instant or
    :func:`engine.write.rollback.rollback_instant` rolls it back; callers must call one of them.

    Args:
        table: the table (its timeline is reloaded).
        operation: the write operation.
        conf: the write's options over the table config (default: the table config): concurrency mode and
            heartbeat settings.

    Returns:
        The inflight instant; its ``timestamp`` is the instant time for file names and meta columns.

    Raises:
        UnsupportedTable: a Hudi 1.x table (:meth:`Table.check_writable`), before anything is written.
        ConfigError: an unsupported ``hoodie.write.concurrency.mode`` or bad heartbeat settings.
        PendingRestoreError: a restore did not finish (:func:`check_no_pending_restore`).
        ConcurrentWriteError: (single writer) a pending write instant has a live heartbeat (checked before
            anything is changed, and again once this writer's requested instant exists: then this writer's
            requested instant is deleted again).
    """
    table.check_writable()
    conf = conf if conf is not None else table.config
    txn = check_concurrency_mode(table, conf)
    check_no_pending_restore(table)
    heartbeats = heartbeat_client(table, conf)
    if not txn.optimistic:
        live = [(i, s) for i, s in pending_writes(table, heartbeats) if s.live]
        if live:
            raise concurrent_write_error(table, live, heartbeats)
    if not failed_writes_lazy(conf):
        rolled_back = rollback_failed_writes(table, heartbeats)
        if rolled_back:
            logger.info("rolled back failed writes %s of %s", rolled_back, table.base_path)
    timeline = table.timeline
    timeline.reload()
    action = commit_action(operation, table.is_mor)
    # What this writer saw before its instant existed: the conflict check at commit looks at everything
    # completed (or scheduled) since (Hudi preWrite's lastCompletedTxnAndMetadata / pending instants).
    start = WriteStart.capture(timeline)
    requested_content = b""
    if action == "replacecommit":
        requested_content = serialize(
            "HoodieRequestedReplaceMetadata",
            # As Hudi 0.14/0.15 write it for overwrites: every field null (see the fixtures).
            {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None},
        )
    for attempt in range(_INSTANT_TIME_ATTEMPTS):
        instant_time = new_instant_time(timeline.all_instant_times())
        # The heartbeat exists before the instant does, so no other writer ever sees this instant pending
        # without a heartbeat (and takes it for a failed write).
        heartbeats.start(instant_time)
        requested: Instant | None = None
        try:
            try:
                requested = timeline.create_requested(instant_time, action, requested_content)
            except TimelineError:
                if attempt + 1 < _INSTANT_TIME_ATTEMPTS and timeline.storage_instant_files(instant_time):
                    # Another process took this instant time in the same millisecond: take the next one. Its
                    # heartbeat file is that writer's now: stop beating without deleting it.
                    heartbeats.stop(instant_time, delete=False)
                    timeline.reload()
                    continue
                raise
            if not txn.optimistic:
                _give_way_to_other_writer(table, requested, heartbeats)
            workload = CommitMetadata(
                partition_to_write_stats={},
                compacted=False,
                extra_metadata={},
                operation_type=operation.commit_name,
                partition_to_replace_file_ids={} if action == "replacecommit" else None,
            )
            inflight = timeline.transition_to_inflight(requested, workload.to_json())
        except BaseException:
            if requested is not None:
                timeline.delete_instant_files(instant_time, action)  # nothing was written under it yet
            heartbeats.stop(instant_time)
            raise
        break
    if txn.optimistic:
        remember_start(table.base_path, instant_time, start)
    logger.info("started %s %s on %s", action, instant_time, table.base_path)
    return inflight


def _give_way_to_other_writer(table: Table, requested: Instant, heartbeats: HeartbeatClient) -> None:
    """Two writers that both passed the first check before either created its instant: each creates its
    heartbeat, then its instant, then looks again, so at least the later of the two looks sees the other
    and gives way (deleting its requested instant). Both give way when both see each other: a rare retry,
    never two writers going on.

    Raises:
        ConcurrentWriteError: another pending write instant has a live heartbeat.
    """
    if not any(i.timestamp != requested.timestamp for i in table.timeline.pending_commits()):
        return
    live = [(i, s) for i, s in pending_writes(table, heartbeats)
            if i.timestamp != requested.timestamp and s.live]
    if live:
        raise concurrent_write_error(table, live, heartbeats)


def _remove_files_of_failed_attempts(table: Table, instant: Instant, stats: Sequence[WriteStat]) -> int:
    """Delete data files that have a marker but are in no write stat (retried or speculative tasks);
    Hudi ``HoodieTable.reconcileAgainstMarkers`` (CDC logs listed in ``cdcStats`` are kept, as its
    ``validCDCDataPaths``)."""
    committed = {stat.path for stat in stats} | {path for stat in stats for path in (stat.cdc_stats or {})}
    removed = 0
    for marker in list_markers(table.storage, table.base_path, instant.timestamp):
        relative = marker.data_file_relative_path
        if relative not in committed:
            table.storage.delete(table.storage.join(table.base_path, relative))
            removed += 1
    if removed:
        logger.info("removed %d files of failed task attempts of %s", removed, instant.timestamp)
    return removed


def finish_write(
    table: Table,
    instant: Instant,
    operation: WriteOperation,
    stats: Sequence[WriteStat],
    avro_schema: Mapping[str, Any],
    replaced_file_ids: Mapping[str, Sequence[str]] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
    conf: HoodieConfig | None = None,
) -> CommitMetadata:
    """Complete a write: reconcile markers, write the completed instant, delete markers.

    Args:
        table: the table.
        instant: the inflight instant from :func:`start_write`.
        operation: the write operation (``operationType``).
        stats: write stats returned by the tasks.
        avro_schema: the write schema without meta fields (``extraMetadata.schema``).
        replaced_file_ids: partition -> file ids replaced (replacecommits only).
        extra_metadata: more ``extraMetadata`` entries.
        conf: the write's effective config (default: the table's): with optimistic concurrency control the
            completed instant is written under the table lock, after the conflict check.

    Returns:
        The commit metadata written.

    Raises:
        CommitConflict: (optimistic concurrency control) a write that completed, or a compaction or clustering
            scheduled, since this write started touched the same file groups; nothing was committed and the
            caller rolls the instant back.
        LockError: the table lock could not be had; nothing was committed.
    """
    _remove_files_of_failed_attempts(table, instant, stats)
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    extra = {"schema": json.dumps(avro_schema, separators=(",", ":"))}
    extra.update(extra_metadata or {})
    if LATEST_SCHEMA not in extra:
        recorded = record_write_schema(table, instant.timestamp, avro_schema)
        if recorded is not None:
            extra["schema"] = json.dumps(recorded[0], separators=(",", ":"))
            extra[LATEST_SCHEMA] = recorded[1]
    is_replace = instant.action == "replacecommit"
    metadata = CommitMetadata(
        partition_to_write_stats=by_partition,
        compacted=False,
        extra_metadata=extra,
        operation_type=operation.commit_name,
        partition_to_replace_file_ids=(
            {p: list(ids) for p, ids in (replaced_file_ids or {}).items()} if is_replace else None
        ),
    )
    conf = conf if conf is not None else table.config
    heartbeats = heartbeat_client(table, conf)
    txn = TransactionManager(table, conf)
    try:
        with txn.transaction(f"{instant.action} {instant.timestamp}"):
            txn.check_conflicts(instant, metadata)
            heartbeats.abort_if_expired(instant.timestamp)
            table.timeline.complete(instant, metadata.to_json())
    except BaseException:
        # The instant is a failed write now: stop beating (this process then judges it dead at once) but
        # keep the file until the caller's rollback, which deletes it.
        heartbeats.stop(instant.timestamp, delete=False)
        raise
    finally:
        forget_start(table.base_path, instant.timestamp)
    delete_marker_dir(table.storage, table.base_path, instant.timestamp)
    heartbeats.stop(instant.timestamp)
    logger.info("completed %s %s on %s (%d files)", instant.action, instant.timestamp, table.base_path,
                len(stats))
    return metadata
