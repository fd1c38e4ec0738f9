"""Which metadata table log blocks a reader may apply (Hudi 0.15 ``HoodieTableMetadataUtil
.getValidInstantTimestamps`` and ``isValidInstant``; ``HoodieBackedTableMetadata.getLogRecordScanner``).

The metadata table is written before the data table's instant completes, so a completed MDT deltacommit does
not mean the data change is visible: only blocks whose instant is *valid* are read. Valid instants are

1. every completed instant of the data timeline (any action);
2. completed MDT deltacommits written by MDT-only operations: 20-character times ending in a fixed operation
   suffix ``001``-``006`` (compaction, clean, restore, indexer, log compaction, rollback) or a partition
   initialization suffix ``>= 010``;
3. the instants rolled back by completed data-table rollbacks/restores later than the earliest valid instant
   (their MDT deltacommits carry the rollback's file deletions);
4. completed MDT rollback and restore instants;
5. completed MDT deltacommits starting with ``00000000000000`` (the initial bootstrap).

Blocks must also be committed on the MDT's own timeline and not later than its last completed instant
(:func:`metadata_block_filter`).
"""

from __future__ import annotations

import logging

from engine.errors import CorruptFile, StorageError
from engine.read.log_scan import BlockFilter
from engine.timeline import avro_serde
from engine.timeline.active import ActiveTimeline
from engine.timeline.instant import DELTA_COMMIT, RESTORE, ROLLBACK, Instant, State

LOG = logging.getLogger(__name__)

SOLO_COMMIT_TIMESTAMP = "00000000000000"
"""``HoodieTimeline.INIT_INSTANT_TS`` / ``SOLO_COMMIT_TIMESTAMP``."""
MILLIS_INSTANT_ID_LENGTH = 17
OPERATION_SUFFIXES = frozenset({"001", "002", "003", "004", "005", "006"})
"""``HoodieTableMetadataUtil.OperationSuffix``: compaction, clean, restore, metadata indexer, log compaction,
rollback."""
PARTITION_INITIALIZATION_TIME_SUFFIX = 10
"""Suffixes from ``010`` up mark the deltacommits initializing MDT partitions."""


def is_valid_metadata_instant(instant: Instant) -> bool:
    """``HoodieTableMetadataUtil.isValidInstant``: a deltacommit whose time is 17 digits plus an operation or
    partition-initialization suffix."""
    if instant.action != DELTA_COMMIT:
        return False
    ts = instant.timestamp
    if len(ts) != MILLIS_INSTANT_ID_LENGTH + 3:
        return False
    suffix = ts[-3:]
    return suffix in OPERATION_SUFFIXES or suffix >= f"{PARTITION_INITIALIZATION_TIME_SUFFIX:03d}"


def rolled_back_instants(timeline: ActiveTimeline, instant: Instant) -> list[str]:
    """The instants a completed rollback or restore undid (``getRollbackedCommits``): ``commitsRollback`` of a
    rollback's metadata (its plan's ``instantToRollback`` when the completed file is empty), or of every
    rollback in a restore's metadata.

    Raises:
        CorruptFile: the metadata cannot be decoded (names the instant file).
        StorageError: it cannot be read.
    """
    content = timeline.read_details(instant)
    if instant.action == ROLLBACK:
        if not content:
            requested = Instant(instant.timestamp, ROLLBACK, State.REQUESTED)
            plan = avro_serde.deserialize(timeline.read_details(requested), "HoodieRollbackPlan",
                                          source=requested.file_name)
            target = (plan.get("instantToRollback") or {}).get("commitTime")
            LOG.warning("rollback %s has an empty completed file; read its target from %s", instant.timestamp,
                        requested.file_name)
            return [target] if target else []
        metadata = avro_serde.deserialize(content, "HoodieRollbackMetadata", source=instant.file_name)
        return list(metadata.get("commitsRollback") or [])
    if instant.action == RESTORE:
        metadata = avro_serde.deserialize(content, "HoodieRestoreMetadata", source=instant.file_name)
        out: list[str] = []
        for rollbacks in (metadata.get("hoodieRestoreMetadata") or {}).values():
            for rollback in rollbacks or []:
                out.extend(rollback.get("commitsRollback") or [])
        return out
    return []


def valid_instant_timestamps(data_timeline: ActiveTimeline, metadata_timeline: ActiveTimeline) -> frozenset[str]:
    """The instants whose MDT log blocks may be read (module docstring, rules 1-5).

    Raises:
        CorruptFile: rollback/restore metadata of the data timeline cannot be decoded.
        StorageError: it cannot be read.
    """
    valid = {i.timestamp for i in data_timeline.completed()}
    valid.update(i.timestamp for i in metadata_timeline.completed() if is_valid_metadata_instant(i))
    earliest = min(valid) if valid else SOLO_COMMIT_TIMESTAMP
    for instant in data_timeline.completed():
        if instant.action in (ROLLBACK, RESTORE) and instant.timestamp > earliest:
            try:
                valid.update(rolled_back_instants(data_timeline, instant))
            except (CorruptFile, StorageError) as exc:
                raise type(exc)(f"metadata table read: cannot tell which instants {instant.file_name} rolled "
                                f"back: {exc}") from exc
    valid.update(i.timestamp for i in metadata_timeline.completed() if i.action in (ROLLBACK, RESTORE))
    valid.update(i.timestamp for i in metadata_timeline.completed()
                 if i.action == DELTA_COMMIT and i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP))
    return frozenset(valid)


def metadata_block_filter(data_timeline: ActiveTimeline, metadata_timeline: ActiveTimeline) -> BlockFilter:
    """The log block filter of an MDT read (``HoodieMetadataLogRecordReader`` as built by
    ``getLogRecordScanner``): blocks up to the MDT's last completed instant (any action; the first later block
    ends the scan, as Java's), committed on the MDT's commits timeline, and of a valid instant
    (:func:`valid_instant_timestamps`).

    Raises:
        CorruptFile, StorageError: see :func:`valid_instant_timestamps`.
    """
    completed = metadata_timeline.completed()
    latest = completed[-1].timestamp if completed else SOLO_COMMIT_TIMESTAMP
    commits = metadata_timeline.completed_commits()
    return BlockFilter(
        latest_instant=latest,
        completed=frozenset(i.timestamp for i in commits),
        timeline_start=commits[0].timestamp if commits else None,
        pending=frozenset(i.timestamp for i in metadata_timeline.commits_timeline() if i.is_pending),
        valid_instants=valid_instant_timestamps(data_timeline, metadata_timeline),
        stop_after_latest=True,
    )


__all__ = ["SOLO_COMMIT_TIMESTAMP", "is_valid_metadata_instant", "metadata_block_filter", "rolled_back_instants",
           "valid_instant_timestamps"]
