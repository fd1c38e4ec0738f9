"""Planning file groups for a write (Hudi ``UpsertPartitioner`` / ``WorkloadProfile``).

Updates go to the file group that holds their key. Inserts of each partition first fill the partition's
small files (base files under ``hoodie.parquet.small.file.limit``) up to ``hoodie.parquet.max.file.size``,
then go to new file groups sized by ``max file size / average record size`` (or
``hoodie.copyonwrite.insert.split.size`` records when auto split is off). Each insert finds its bucket by
the hash of its record key against the buckets' cumulative weights, so every copy of one key lands in
one bucket. The planner runs on the driver over counts only, never over records.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from engine.config import HoodieConfig, WriteConfig
from engine.errors import ClusteringUpdateConflict
from engine.filegroup.naming import new_file_id
from engine.timeline.commit_metadata import CommitMetadata


class BucketKind(Enum):
    """``UPDATE`` rewrites an existing file group (merge handle); ``INSERT`` creates a new one."""

    UPDATE = "update"
    INSERT = "insert"


@dataclass(frozen=True)
class ExistingFileGroup:
    """The latest base file of a file group, as the planner needs it.

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_file_path: absolute path of the latest base file (``""`` for a merge-on-read file group
            whose slices so far have log files only).
        base_instant: commit time of that base file (the slice's base instant when it has none).
        size_bytes: its size in bytes.
    """

    partition_path: str
    file_id: str
    base_file_path: str
    base_instant: str
    size_bytes: int


@dataclass(frozen=True)
class Bucket:
    """One unit of write work = one file group written by one task.

    Attributes:
        index: bucket number (the value of the shuffle key).
        kind: update (merge into ``existing``) or insert (new file group).
        partition_path: relative partition path.
        file_id: file group id (new for inserts).
        existing: the base file being merged, for updates.
    """

    index: int
    kind: BucketKind
    partition_path: str
    file_id: str
    existing: ExistingFileGroup | None = None


@dataclass
class WorkloadProfile:
    """Counts of incoming records (Hudi ``WorkloadProfile``).

    Attributes:
        updates: records per existing file group id.
        inserts: new records per partition path.
    """

    updates: dict[str, int] = field(default_factory=dict)
    inserts: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def from_counts(rows: Iterable[tuple[str, str | None, int]]) -> WorkloadProfile:
        """Build from ``(partition_path, file_id or None, count)`` rows."""
        profile = WorkloadProfile()
        for partition, file_id, count in rows:
            if file_id:
                profile.updates[file_id] = profile.updates.get(file_id, 0) + int(count)
            else:
                profile.inserts[partition] = profile.inserts.get(partition, 0) + int(count)
        return profile


@dataclass
class WritePlan:
    """Buckets of a write and the rule that routes each record to one.

    Attributes:
        buckets: all buckets, ``buckets[i].index == i``.
        update_buckets: file id -> bucket index (of updates, and of new file groups the index named).
        insert_weights: partition -> list of (cumulative weight in (0, 1], bucket index).
    """

    buckets: list[Bucket] = field(default_factory=list)
    update_buckets: dict[str, int] = field(default_factory=dict)
    insert_weights: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    def insert_bucket(self, partition_path: str, hash_fraction: float) -> int:
        """Bucket of a new record of ``partition_path`` whose key hashes to ``hash_fraction`` in [0, 1).

        Raises:
            KeyError: the partition had no inserts in the profile.
        """
        weights = self.insert_weights[partition_path]
        cumulative = [w for w, _ in weights]
        pos = bisect.bisect_right(cumulative, hash_fraction)
        return weights[min(pos, len(weights) - 1)][1]

    def _add(self, kind: BucketKind, partition: str, file_id: str,
             existing: ExistingFileGroup | None = None) -> int:
        index = len(self.buckets)
        self.buckets.append(Bucket(index, kind, partition, file_id, existing))
        if kind is BucketKind.UPDATE:
            self.update_buckets[file_id] = index
        return index


def average_record_size(commits: Iterable[CommitMetadata], conf: HoodieConfig) -> int:
    """Bytes per record from the newest commit that wrote enough data (Hudi
    ``AverageRecordSizeUtils.averageBytesPerRecord``), else ``hoodie.copyonwrite.record.size.estimate``.

    Args:
        commits: completed commit metadata, newest first.
        conf: write config.
    """
    threshold = conf.get(WriteConfig.SMALL_FILE_LIMIT)
    for metadata in commits:
        stats = metadata.all_write_stats()
        total_bytes = sum(s.total_write_bytes for s in stats)
        total_records = sum(s.num_writes for s in stats)
        if total_bytes > threshold and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return conf.get(WriteConfig.RECORD_SIZE_ESTIMATE)


def small_file_candidates(
    latest: Mapping[str, ExistingFileGroup],
    profile: WorkloadProfile,
    conf: HoodieConfig,
    *,
    merge_on_read: bool,
    log_free: Iterable[str] = (),
    excluded: Iterable[tuple[str, str]] = (),
) -> dict[str, list[ExistingFileGroup]]:
    """Per partition, the base files that take this write's inserts (Hudi ``UpsertPartitioner.getSmallFiles`` and,
    for merge-on-read, ``SparkUpsertDeltaCommitPartitioner.getSmallFileCandidates``).

    Copy-on-write: every base file under ``hoodie.parquet.small.file.limit``. Merge-on-read (an index that cannot
    index log files, as all of ours): only file groups whose latest slice is a base file without log files (and no
    pending compaction), under the limit, the smallest first, at most ``hoodie.merge.small.file.group.candidates.limit``
    of them per partition, and only in partitions that receive inserts. A merge-on-read candidate's *updates* are
    merged into its new base file too, not appended to a log ("small file corrections for updates",
    ``BaseSparkDeltaCommitActionExecutor.handleUpdate``): the caller must not append to it.

    Args:
        latest: latest base file per file id (log-only file groups have ``base_file_path == ""``).
        profile: incoming record counts.
        conf: write config.
        merge_on_read: the table type.
        log_free: merge-on-read file ids whose latest slice has a base file and no log file.
        excluded: ``(partition, file id)`` pairs that never take inserts (pending clustering).

    Returns:
        partition path -> candidates (smallest first).
    """
    limit = conf.get(WriteConfig.SMALL_FILE_LIMIT)
    if limit <= 0:
        return {}
    skip = set(excluded)
    clean = set(log_free)
    per_partition: dict[str, list[ExistingFileGroup]] = {}
    for fg in latest.values():
        if fg.size_bytes >= limit or (fg.partition_path, fg.file_id) in skip or not fg.base_file_path:
            continue
        if merge_on_read and (fg.file_id not in clean or profile.inserts.get(fg.partition_path, 0) <= 0):
            continue
        per_partition.setdefault(fg.partition_path, []).append(fg)
    for files in per_partition.values():
        files.sort(key=lambda f: (f.size_bytes, f.file_id))
        if merge_on_read:
            del files[conf.get(WriteConfig.SMALL_FILE_GROUP_CANDIDATES_LIMIT):]
    return {p: f for p, f in per_partition.items() if f}


def plan_writes(
    profile: WorkloadProfile,
    existing: Mapping[str, ExistingFileGroup],
    small_files: Mapping[str, list[ExistingFileGroup]],
    avg_record_size: int,
    conf: HoodieConfig,
    new_file_groups: Mapping[str, str] | None = None,
) -> WritePlan:
    """Assign update and insert buckets (Hudi ``UpsertPartitioner.assignUpdates/assignInserts``).

    Args:
        profile: incoming record counts.
        existing: latest base file per file id, for every file group receiving updates.
        small_files: per partition, base files eligible to take inserts (smallest first is not required).
        avg_record_size: bytes per record used for sizing.
        conf: write config (max file size, small file limit, split size).
        new_file_groups: file id → partition of new file groups the index chose (the bucket index names a
            bucket's file group before it exists, Hudi ``SparkBucketIndexPartitioner``); records tagged with
            one are routed to it by file id like updates, and each is created by one task.

    Returns:
        The plan; an update bucket exists for every file id in ``profile.updates`` and for every small
        file that received inserts.
    """
    plan = WritePlan()
    created = new_file_groups or {}
    for file_id in sorted(profile.updates):
        if file_id in created:
            plan.update_buckets[file_id] = plan._add(BucketKind.INSERT, created[file_id], file_id)
            continue
        fg = existing[file_id]
        plan._add(BucketKind.UPDATE, fg.partition_path, file_id, fg)

    max_size = conf.get(WriteConfig.PARQUET_MAX_FILE_SIZE)
    small_limit = conf.get(WriteConfig.SMALL_FILE_LIMIT)
    per_bucket = (
        max(1, max_size // max(1, avg_record_size))
        if conf.get(WriteConfig.INSERT_AUTO_SPLIT)
        else conf.get(WriteConfig.INSERT_SPLIT_SIZE)
    )
    for partition in sorted(profile.inserts):
        total = profile.inserts[partition]
        if total <= 0:
            continue
        unassigned = total
        assigned: list[tuple[int, int]] = []  # (bucket, records)
        if small_limit > 0:
            for small in sorted(small_files.get(partition, []), key=lambda f: f.size_bytes):
                room = (max_size - small.size_bytes) // max(1, avg_record_size)
                take = min(room, unassigned)
                if take <= 0:
                    continue
                bucket = plan.update_buckets.get(small.file_id)
                if bucket is None:
                    bucket = plan._add(BucketKind.UPDATE, partition, small.file_id, small)
                assigned.append((bucket, take))
                unassigned -= take
                if unassigned <= 0:
                    break
        if unassigned > 0:
            count = max(1, math.ceil(unassigned / per_bucket))
            for i in range(count):
                records = per_bucket if i < count - 1 else unassigned - (count - 1) * per_bucket
                bucket = plan._add(BucketKind.INSERT, partition, new_file_id())
                assigned.append((bucket, records))
        cumulative = 0.0
        weights: list[tuple[float, int]] = []
        for bucket, records in assigned:
            cumulative += records / total
            weights.append((cumulative, bucket))
        weights[-1] = (1.0, weights[-1][1])
        plan.insert_weights[partition] = weights
    return plan


def reject_updates_in_clustering(
    profile: WorkloadProfile,
    existing: Mapping[str, ExistingFileGroup],
    replaced: Mapping[str, Sequence[str]],
    in_clustering: Mapping[tuple[str, str], str],
    table: str,
) -> None:
    """Fail a write that updates, deletes or replaces file groups under a pending clustering (Hudi
    ``SparkRejectUpdateStrategy``, the default ``hoodie.clustering.updates.strategy``).

    Args:
        profile: incoming record counts (updates per file id).
        existing: the file groups receiving updates (for their partitions).
        replaced: partition → file ids an overwrite replaces.
        in_clustering: (partition, file id) → pending clustering instant.
        table: the table's base path, for the message.

    Raises:
        ClusteringUpdateConflict: naming the file groups and the clustering instants.
    """
    if not in_clustering:
        return
    hits: dict[str, str] = {}
    for file_id in profile.updates:
        fg = existing.get(file_id)
        if fg is not None and (fg.partition_path, file_id) in in_clustering:
            hits[file_id] = in_clustering[(fg.partition_path, file_id)]
    for partition, file_ids in replaced.items():
        for file_id in file_ids:
            if (partition, file_id) in in_clustering:
                hits[file_id] = in_clustering[(partition, file_id)]
    if hits:
        instants = sorted(set(hits.values()))
        raise ClusteringUpdateConflict(
            f"Not allowed to update the clustering file group {sorted(hits)[:5]} of table {table}: they are under "
            f"pending clustering {', '.join(instants)} (hoodie.clustering.updates.strategy = "
            f"SparkRejectUpdateStrategy); nothing was written. Retry after the clustering completes "
            f"(CALL run_clustering(op => 'execute', ...)) or is rolled back "
            f"(CALL run_rollback_inflight_tableservice(...)).")


def bucket_work(
    plan: WritePlan, profile: WorkloadProfile, appended: Iterable[str], avg_record_size: int
) -> dict[int, float]:
    """Bucket number -> records its task reads or writes (an estimate): the incoming records, plus the stored
    ones of a base file it rewrites (its size over ``avg_record_size``). A bucket's share of its partition's
    inserts follows the plan's insert weights.

    Args:
        plan: the write plan.
        profile: incoming record counts.
        appended: file ids whose updates go to a log file (merge-on-read): their base file is not rewritten.
        avg_record_size: bytes per record.
    """
    logged = set(appended)
    inserts: dict[int, float] = {}
    for partition, weights in plan.insert_weights.items():
        previous = 0.0
        for cumulative, index in weights:
            inserts[index] = inserts.get(index, 0.0) + profile.inserts.get(partition, 0) * (cumulative - previous)
            previous = cumulative
    work: dict[int, float] = {}
    for bucket in plan.buckets:
        stored = 0.0
        if bucket.existing is not None and bucket.file_id not in logged:
            stored = bucket.existing.size_bytes / max(1, avg_record_size)
        work[bucket.index] = stored + profile.updates.get(bucket.file_id, 0) + inserts.get(bucket.index, 0.0)
    return work


def pack(weights: Mapping[int, float], tasks: int) -> dict[int, int]:
    """Bucket number -> task index (``0 .. min(tasks, len(weights)) - 1``), task 0 the heaviest.

    Longest-processing-time first: buckets by weight, heaviest first, each into the task with the least weight so
    far (ties: the lower bucket number first, the lower task first), so equal buckets spread evenly. Hudi's
    ``UpsertPartitioner`` gives each bucket a task of its own; here small buckets share one (a Python task has a
    fixed cost of about 0.15 s).

    Args:
        weights: bucket number -> expected work (any unit, e.g. :func:`bucket_work`'s records).
        tasks: the most tasks to use (at least 1).
    """
    n = max(1, min(tasks, len(weights)))
    loads = [0.0] * n
    members: list[list[int]] = [[] for _ in range(n)]
    for bucket in sorted(weights, key=lambda b: (-weights[b], b)):
        target = min(range(n), key=lambda t: (loads[t], t))
        loads[target] += max(0.0, float(weights[bucket]))
        members[target].append(bucket)
    ranked = sorted(range(n), key=lambda t: (-loads[t], t))
    return {bucket: rank for rank, t in enumerate(ranked) for bucket in members[t]}
