"""Write-conflict detection between concurrent writers (Hudi 0.14 ``ConcurrentOperation``,
``SimpleConcurrentFileWritesConflictResolutionStrategy``, ``BucketIndexConcurrentFileWritesConflictResolutionStrategy``,
``TransactionUtils.resolveWriteConflictIfAny``).

Under optimistic concurrency control a writer checks, while it holds the table lock and just before it writes
its completed instant, every instant that may have changed the file groups it wrote:

* write instants (``commit``, ``deltacommit``, ``replacecommit``; a completed compaction is a ``commit``) that
  completed after the last one completed when this writer started;
* write instants that were pending when this writer started and have completed since (whatever their time);
* compactions and replacecommits (clustering, insert overwrite) scheduled after this writer's instant and still
  pending.

Two operations conflict when the ``(partition path, file id)`` pairs they mutate intersect (with the bucket
strategy: the ``(partition path, bucket id)`` pairs, so two writers that each created a new file group for the
same bucket conflict too). A conflict with a compaction scheduled *before* this writer's instant is resolved
(this writer already wrote to the compaction's new file slice); every other conflict aborts this write.

What an operation mutates, by instant (as Hudi reads it):

=====================================  =============================================================
completed commit / deltacommit         every write stat's file id
completed replacecommit                write stats' file ids and the replaced file ids
requested replacecommit                a clustering plan's input slices (insert overwrite: nothing yet)
inflight replacecommit                 the inflight metadata's write stats, else the clustering plan
pending compaction                     the plan's operations
=====================================  =============================================================
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.config import HoodieConfig, LockConfig
from engine.errors import CommitConflict, ConfigError
from engine.index import index_type
from engine.timeline.active import ActiveTimeline
from engine.timeline.avro_serde import deserialize
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State

logger = logging.getLogger(__name__)

SIMPLE_STRATEGY = "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy"
"""Hudi's default strategy: conflicts are intersecting ``(partition, file id)`` pairs."""

BUCKET_STRATEGY = "org.apache.hudi.client.transaction.BucketIndexConcurrentFileWritesConflictResolutionStrategy"
"""Hudi's strategy for ``hoodie.index.type=BUCKET`` (inferred when the key is unset): conflicts are intersecting
``(partition, bucket id)`` pairs, the bucket id being the file id's first eight digits."""

COMPACT_OPERATION = "compact"
CLUSTER_OPERATION = "cluster"


@dataclass(frozen=True)
class ConcurrentOperation:
    """What one instant changed or plans to change (Hudi ``ConcurrentOperation``).

    Attributes:
        instant: the instant (its state as read).
        operation_type: lower-case ``WriteOperationType`` value (``upsert``, ``compact``, ``cluster``, ...;
            ``unknown`` when the metadata does not say).
        mutated: ``(partition path, file id)`` pairs (partition ``""`` for a non-partitioned table).
    """

    instant: Instant
    operation_type: str
    mutated: frozenset[tuple[str, str]] = field(default_factory=frozenset)

    def describe(self) -> str:
        """E.g. ``deltacommit 20240101000000000 (upsert, completed)``."""
        return (f"{self.instant.action} {self.instant.timestamp} ({self.operation_type}, "
                f"{self.instant.state.name.lower()})")


def _pairs_of(metadata: CommitMetadata) -> set[tuple[str, str]]:
    pairs = {(partition, fid) for partition, ids in metadata.file_ids_by_partition().items() for fid in ids}
    pairs.update((partition, fid) for partition, ids in metadata.replaced_file_ids().items() for fid in ids)
    return pairs


def operation_of_metadata(instant: Instant, metadata: CommitMetadata) -> ConcurrentOperation:
    """The operation of this writer, from the commit metadata it is about to write."""
    return ConcurrentOperation(instant, (metadata.operation_type or "unknown").lower(), frozenset(_pairs_of(metadata)))


def _plan_slices(plan: Mapping[str, object] | None) -> set[tuple[str, str]]:
    """(partition, file id) of every input slice of a clustering plan (``HoodieClusteringPlan``)."""
    pairs: set[tuple[str, str]] = set()
    groups = (plan or {}).get("inputGroups") or []
    for group in groups if isinstance(groups, list) else []:
        for piece in group.get("slices") or []:
            pairs.add((str(piece.get("partitionPath") or ""), str(piece.get("fileId"))))
    return pairs


def read_operation(timeline: ActiveTimeline, instant: Instant) -> ConcurrentOperation:
    """The operation of another instant, read from its files on the timeline.

    Args:
        timeline: the table's :class:`engine.timeline.active.ActiveTimeline` (``read_details``).
        instant: a completed write, a pending compaction or a pending replacecommit.

    Raises:
        TimelineError, CorruptFile: the instant's file cannot be read.
    """
    read = timeline.read_details
    action = instant.action
    if action == COMPACTION:
        plan = deserialize(read(Instant(instant.timestamp, COMPACTION, State.REQUESTED)), source=instant.file_name)
        ops = plan.get("operations") or []
        mutated = {(str(op.get("partitionPath") or ""), str(op.get("fileId"))) for op in ops}
        return ConcurrentOperation(instant, COMPACT_OPERATION, frozenset(mutated))
    if action in (COMMIT, DELTA_COMMIT) or (action == REPLACE_COMMIT and instant.is_completed):
        return operation_of_metadata(instant, CommitMetadata.from_json(read(instant), source=instant.file_name))
    if action == REPLACE_COMMIT:
        requested_bytes = read(Instant(instant.timestamp, REPLACE_COMMIT, State.REQUESTED))
        requested = deserialize(requested_bytes, source=instant.file_name) if requested_bytes else {}
        clustering = requested.get("clusteringPlan")
        if instant.state is State.INFLIGHT:
            inflight = read(instant)
            if inflight:
                written = CommitMetadata.from_json(inflight, source=instant.file_name)
                if written.partition_to_write_stats or not clustering:
                    return operation_of_metadata(instant, written)
        if clustering:
            return ConcurrentOperation(instant, CLUSTER_OPERATION, frozenset(_plan_slices(clustering)))
        return ConcurrentOperation(instant, "unknown", frozenset())
    raise ValueError(f"{instant} is not a write, compaction or replacecommit instant")


def strategy_name(conf: HoodieConfig) -> str:
    """The conflict resolution strategy class of ``conf`` (Hudi infers the bucket strategy for bucket indexes).

    Raises:
        ConfigError: a strategy other than the simple and bucket ones.
    """
    key = LockConfig.CONFLICT_RESOLUTION_STRATEGY.key
    name = conf.raw(LockConfig.CONFLICT_RESOLUTION_STRATEGY)
    if not name:
        name = BUCKET_STRATEGY if index_type(conf) == "BUCKET" else SIMPLE_STRATEGY
    name = name.strip()
    if name not in (SIMPLE_STRATEGY, BUCKET_STRATEGY):
        raise ConfigError(f"{key}={name} is not supported: the supported strategies are {SIMPLE_STRATEGY} and "
                          f"{BUCKET_STRATEGY}")
    return name


def _conflict_keys(pairs: Iterable[tuple[str, str]], strategy: str) -> set[tuple[str, str]]:
    if strategy == BUCKET_STRATEGY:
        return {(partition, fid[:8]) for partition, fid in pairs}
    return set(pairs)


def intersection(this: ConcurrentOperation, other: ConcurrentOperation, strategy: str) -> set[tuple[str, str]]:
    """The ``(partition, file id)`` (bucket strategy: ``(partition, bucket id)``) pairs both operations mutate
    (Hudi ``hasConflict``)."""
    return _conflict_keys(this.mutated, strategy) & _conflict_keys(other.mutated, strategy)


def is_resolvable(this: ConcurrentOperation, other: ConcurrentOperation) -> bool:
    """Whether an overlap with ``other`` is harmless (Hudi ``resolveConflict``): a compaction scheduled before
    this writer's instant (this writer appended to the compaction's new file slice)."""
    return other.operation_type == COMPACT_OPERATION and other.instant.timestamp < this.instant.timestamp


@dataclass(frozen=True)
class WriteStart:
    """What a writer saw of the timeline when it started (Hudi ``lastCompletedTxnAndMetadata`` and
    ``pendingInflightAndRequestedInstants``).

    Attributes:
        last_completed: the newest completed write instant's time (``None``: none).
        pending: ``(time, action)`` of write instants then pending, other than the writer's own.
    """

    last_completed: str | None
    pending: frozenset[tuple[str, str]]

    @staticmethod
    def capture(timeline: ActiveTimeline, own_time: str | None = None) -> WriteStart:
        """Read the start state from a (freshly reloaded) active timeline."""
        last = timeline.last_completed_commit()
        pending = frozenset((i.timestamp, i.action) for i in timeline.commits_timeline()
                            if i.is_pending and i.timestamp != own_time)
        return WriteStart(last.timestamp if last is not None else None, pending)

    @staticmethod
    def assumed(timeline: ActiveTimeline, own_time: str) -> WriteStart:
        """A conservative start state for an instant this process did not start: every completed write before
        ``own_time`` but the last counts as done before it, every other as possibly concurrent."""
        earlier = [i for i in timeline.completed_commits() if i.timestamp < own_time]
        return WriteStart(None, frozenset((i.timestamp, i.action) for i in earlier))


def candidate_instants(timeline: ActiveTimeline, current: Instant, start: WriteStart) -> list[Instant]:
    """Instants whose changes may overlap the current write (Hudi ``getCandidateInstants`` plus
    ``getCompletedInstantsDuringCurrentWriteOperation``), oldest first, each once.

    Args:
        timeline: the reloaded active timeline.
        current: this writer's instant.
        start: what the writer saw when it started.
    """
    chosen: dict[tuple[str, str], Instant] = {}
    for instant in timeline.completed_commits():
        if instant.timestamp == current.timestamp:
            continue
        after_last = start.last_completed is None or instant.timestamp > start.last_completed
        was_pending = (instant.timestamp, instant.action) in start.pending or (
            instant.action == COMMIT and (instant.timestamp, COMPACTION) in start.pending)
        if after_last or was_pending:
            chosen[(instant.timestamp, instant.action)] = instant
    for instant in timeline.of_actions([COMPACTION, REPLACE_COMMIT]):
        if instant.is_pending and instant.timestamp > current.timestamp:
            chosen[(instant.timestamp, instant.action)] = instant
    return sorted(chosen.values(), key=lambda i: (i.timestamp, i.action))


@dataclass(frozen=True)
class Conflict:
    """One unresolvable overlap: the other operation and the shared file groups."""

    other: ConcurrentOperation
    file_groups: tuple[tuple[str, str], ...]


def find_conflicts(timeline: ActiveTimeline, this: ConcurrentOperation, start: WriteStart, strategy: str) -> list[Conflict]:
    """Unresolvable conflicts of ``this`` with the candidate instants (empty: the write may commit)."""
    conflicts = []
    for instant in candidate_instants(timeline, this.instant, start):
        other = read_operation(timeline, instant)
        shared = intersection(this, other, strategy)
        if not shared:
            continue
        if is_resolvable(this, other):
            logger.info("overlap of %s with %s resolved (compaction scheduled before it)", this.describe(),
                        other.describe())
            continue
        logger.info("conflict between %s and %s on %d file groups", this.describe(), other.describe(), len(shared))
        conflicts.append(Conflict(other, tuple(sorted(shared))))
    return conflicts


def conflict_error(table_name: str, base_path: str, this: ConcurrentOperation,
                   conflicts: Sequence[Conflict], strategy: str) -> CommitConflict:
    """The error for a write that lost (Hudi ``HoodieWriteConflictException``), naming the table, the instant,
    the other instants and the file groups, and saying the statement can be retried."""
    unit = "bucket" if strategy == BUCKET_STRATEGY else "file group"
    parts = []
    for conflict in conflicts[:3]:
        groups = ", ".join(f"{p or '<non-partitioned>'}/{f}" for p, f in conflict.file_groups[:5])
        more = f" and {len(conflict.file_groups) - 5} more" if len(conflict.file_groups) > 5 else ""
        parts.append(f"{conflict.other.describe()} on {unit}s {groups}{more}")
    others = "; ".join(parts) + (f"; and {len(conflicts) - 3} more instants" if len(conflicts) > 3 else "")
    return CommitConflict(
        f"write conflict on table {table_name} at {base_path}: {this.instant.action} {this.instant.timestamp} "
        f"({this.operation_type}) changed the same {unit}s as {others}, which committed (or was scheduled) since "
        f"this write started; this write was rolled back and nothing of it is visible — run the statement again "
        f"(hoodie.write.concurrency.mode=optimistic_concurrency_control)")
