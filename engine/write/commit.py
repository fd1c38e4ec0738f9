"""Starting and completing a write on the timeline (Hudi ``BaseHoodieWriteClient.startCommit`` /
``commitStats``).

``start_write`` rolls back any failed write first, then writes ``T.<action>.requested`` and the inflight
file; ``finish_write`` removes files of failed task attempts (found through markers), writes the
completed instant atomically and deletes the markers. A commit is visible only once its completed
instant file exists.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from engine.table import Table
from engine.timeline.avro_serde import serialize
from engine.timeline.commit_metadata import CommitMetadata, WriteStat
from engine.timeline.instant import Instant, new_instant_time
from engine.write.markers import delete_marker_dir, list_markers
from engine.write.operation import WriteOperation, commit_action
from engine.write.rollback import rollback_failed_writes

logger = logging.getLogger(__name__)


def start_write(table: Table, operation: WriteOperation) -> Instant:
    """Begin a write: roll back failed writes, then create the requested and inflight instants.

    Args:
        table: the table (its timeline is reloaded).
        operation: the write operation.

    Returns:
        The inflight instant; its ``timestamp`` is the instant time for file names and meta columns.
    """
    rolled_back = rollback_failed_writes(table)
    if rolled_back:
        logger.info("rolled back failed writes %s of %s", rolled_back, table.base_path)
    timeline = table.timeline
    timeline.reload()
    action = commit_action(operation, table.is_mor)
    instant_time = new_instant_time(timeline.all_instant_times())
    requested_content = b""
    if action == "replacecommit":
        requested_content = serialize(
            "HoodieRequestedReplaceMetadata",
            # As Hudi 0.14/0.15 write it for overwrites: every field null (see the fixtures).
            {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None},
        )
    requested = timeline.create_requested(instant_time, action, requested_content)
    workload = CommitMetadata(
        partition_to_write_stats={},
        compacted=False,
        extra_metadata={},
        operation_type=operation.commit_name,
        partition_to_replace_file_ids={} if action == "replacecommit" else None,
    )
    inflight = timeline.transition_to_inflight(requested, workload.to_json())
    logger.info("started %s %s on %s", action, instant_time, table.base_path)
    return inflight


def _remove_files_of_failed_attempts(table: Table, instant: Instant, stats: Sequence[WriteStat]) -> int:
    """Delete data files that have a marker but are in no write stat (retried or speculative tasks);
    Hudi ``HoodieTable.reconcileAgainstMarkers``."""
    committed = {stat.path for stat in stats}
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

    Returns:
        The commit metadata written.
    """
    _remove_files_of_failed_attempts(table, instant, stats)
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    extra = {"schema": json.dumps(avro_schema, separators=(",", ":"))}
    extra.update(extra_metadata or {})
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
    table.timeline.complete(instant, metadata.to_json())
    delete_marker_dir(table.storage, table.base_path, instant.timestamp)
    logger.info("completed %s %s on %s (%d files)", instant.action, instant.timestamp, table.base_path,
                len(stats))
    return metadata
