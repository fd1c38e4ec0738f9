"""The cleaner (Hudi ``CleanPlanner``, ``CleanPlanActionExecutor``, ``CleanActionExecutor``): removes the file
versions no query within the retention needs, so storage stops growing with every update.

* **Plan** (:func:`plan_clean`) — by ``hoodie.cleaner.policy``:

  - ``KEEP_LATEST_COMMITS`` (default, ``hoodie.cleaner.commits.retained`` = 10): once there are more
    completed commits than that, the earliest commit to retain is the N-th newest (never after the earliest
    pending write). In every file group a slice is removed when its base instant is before that commit,
    unless it is the group's latest slice or the newest slice before that commit (which serves queries
    as of it);
  - ``KEEP_LATEST_BY_HOURS`` (``hoodie.cleaner.hours.retained``): the earliest commit to retain is the first
    completed commit of the last N hours; slices before it go, except each group's latest;
  - ``KEEP_LATEST_FILE_VERSIONS`` (``hoodie.cleaner.fileversions.retained`` = 3): each file group keeps its
    newest N slices.

  Never removed: a slice a pending compaction reads, a file group under pending clustering, a base file a
  savepoint holds. File groups replaced (INSERT OVERWRITE, DELETE PARTITION, clustering) by a replacecommit
  before the earliest commit to retain (any, for file versions) are removed whole. A removed slice takes its
  log files with it (merge-on-read) and its CDC logs. With ``hoodie.cleaner.incremental.mode`` only
  partitions written since the last clean's retained commit are looked at.
* **Schedule** — when ``hoodie.clean.max.commits`` commits completed since the last clean and the plan
  removes something: ``<t>.clean.requested`` holding the Avro ``HoodieCleanerPlan`` (version 2, full paths).
  Nothing to remove: no instant.
* **Execute** — ``.clean.inflight`` (the plan again), the files deleted (a file already gone is listed as
  failed, as Hudi does), then ``<t>.clean``: Avro ``HoodieCleanMetadata`` version 2 (file names per
  partition). A clean left pending by a crash is executed first by the next run.

Not done here, on purpose or not yet: partitions left without file groups are not deleted (Hudi marks them
``isPartitionDeleted``); bootstrap base files do not exist in tables this engine writes.
"""

from __future__ import annotations

import datetime
import logging
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from engine.concurrency.transaction import TransactionManager, failed_writes_lazy
from engine.config import CleanConfig, HoodieConfig, TableConfig
from engine.errors import ConfigError, CorruptFile, StorageError
from engine.filegroup.naming import parse_log_file_name
from engine.filegroup.slices import FileGroup, FileSlice
from engine.filegroup.view import FileSystemView
from engine.metadata.disable import refuse_metadata_table
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.instant import CLEAN, Instant, State
from engine.write.heartbeat import HeartbeatClient
from engine.write.rollback import rollback_failed_writes

logger = logging.getLogger(__name__)

CLEAN_PLAN_VERSION = 2
CLEAN_METADATA_VERSION = 2


class CleanPolicy(Enum):
    """``hoodie.cleaner.policy`` (Hudi ``HoodieCleaningPolicy``)."""

    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"

    @staticmethod
    def of(conf: HoodieConfig, table: str) -> CleanPolicy:
        """The policy the config names.

        Raises:
            ConfigError: an unknown policy, naming the key and the table.
        """
        raw = conf.get(CleanConfig.POLICY).strip().upper()
        try:
            return CleanPolicy(raw)
        except ValueError:
            raise ConfigError(f"{CleanConfig.POLICY.key}={raw!r} for table {table}: expected one of "
                              f"{', '.join(p.value for p in CleanPolicy)}") from None


@dataclass(frozen=True)
class CleanPlan:
    """What a clean removes (Avro ``HoodieCleanerPlan``).

    Attributes:
        earliest_instant_to_retain: the earliest commit whose reads stay possible, or None (file versions).
        last_completed_commit: the newest completed commit when planned.
        policy: the policy.
        files: partition → absolute paths of the files to delete.
    """

    earliest_instant_to_retain: Instant | None
    last_completed_commit: str
    policy: CleanPolicy
    files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def file_count(self) -> int:
        """Number of files the plan deletes."""
        return sum(len(v) for v in self.files.values())

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieCleanerPlan`` record."""
        earliest = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": None if earliest is None else {
                "timestamp": earliest.timestamp, "action": earliest.action, "state": earliest.state.name},
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "policy": self.policy.value,
            "filesToBeDeletedPerPartition": {},
            "version": CLEAN_PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                partition: [{"filePath": path, "isBootstrapBaseFile": False} for path in paths]
                for partition, paths in self.files.items()},
            "partitionsToBeDeleted": [],
            "extraMetadata": None,
        }

    @staticmethod
    def from_avro(record: dict[str, Any]) -> CleanPlan:
        """Inverse of :meth:`to_avro` (plans version 1 list paths in ``filesToBeDeletedPerPartition``)."""
        earliest = record.get("earliestInstantToRetain")
        instant = None if not earliest else Instant(earliest["timestamp"], earliest["action"],
                                                    State[earliest.get("state") or "COMPLETED"])
        files: dict[str, list[str]] = {}
        for partition, infos in (record.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[partition] = [i["filePath"] for i in infos if i.get("filePath")]
        for partition, paths in (record.get("filesToBeDeletedPerPartition") or {}).items():
            files.setdefault(partition, list(paths))
        return CleanPlan(instant, record.get("lastCompletedCommitTimestamp") or "",
                         CleanPolicy(record.get("policy") or CleanPolicy.KEEP_LATEST_COMMITS.value), files)


@dataclass(frozen=True)
class CleanResult:
    """One executed clean (the ``HoodieCleanMetadata`` essentials, and what ``run_clean`` returns).

    Attributes:
        instant: the clean instant.
        time_taken_ms: milliseconds the execution took.
        files_deleted: files deleted.
        earliest_commit_to_retain: the plan's earliest commit to retain ("" for file versions).
        failed: files that could not be deleted (already gone).
        metadata: the whole ``HoodieCleanMetadata`` record.
    """

    instant: str
    time_taken_ms: int
    files_deleted: int
    earliest_commit_to_retain: str
    failed: int
    metadata: dict[str, Any]


# ------------------------------------------------------------------------------------------------ planning


def _completed_commits(table: Table) -> list[Instant]:
    return table.timeline.completed_commits()


def earliest_commit_to_retain(table: Table, policy: CleanPolicy, conf: HoodieConfig,
                              now: datetime.datetime | None = None) -> Instant | None:
    """Hudi ``CleanerUtils.getEarliestCommitToRetain``: the earliest commit queries may still read as of.

    Args:
        table: the table.
        policy: the clean policy.
        conf: cleaner options.
        now: the current time (tests), default the clock.
    """
    completed = _completed_commits(table)
    if policy is CleanPolicy.KEEP_LATEST_COMMITS:
        retained = conf.get(CleanConfig.COMMITS_RETAINED)
        if len(completed) <= retained:
            return None
        nth = completed[len(completed) - retained]
        pending = table.timeline.pending_commits()
        if pending and nth.timestamp > pending[0].timestamp:
            before = [i for i in completed if i.timestamp < pending[0].timestamp]
            return before[-1] if before else None
        return nth
    if policy is CleanPolicy.KEEP_LATEST_BY_HOURS:
        hours = conf.get(CleanConfig.HOURS_RETAINED)
        utc = table.timeline_timezone.upper() == "UTC"
        clock = now or (datetime.datetime.now(datetime.UTC) if utc else datetime.datetime.now())
        if clock.tzinfo is not None and not utc:
            clock = clock.astimezone().replace(tzinfo=None)
        threshold = (clock - datetime.timedelta(hours=hours)).strftime("%Y%m%d%H%M%S%f")[:17]
        return next((i for i in completed if i.timestamp >= threshold), None)
    return None


def _last_clean(table: Table) -> tuple[Instant, dict[str, Any]] | None:
    cleans = [i for i in table.timeline.cleans() if i.state is State.COMPLETED]
    for instant in reversed(cleans):
        try:
            return instant, deserialize(table.timeline.read_details(instant), "HoodieCleanMetadata",
                                        source=instant.file_name)
        except (CorruptFile, StorageError) as exc:
            logger.warning("cannot read clean metadata %s of %s: %s", instant.file_name, table.base_path, exc)
    return None


def commits_since_last_clean(table: Table) -> int:
    """Completed commits after the last clean's last completed commit (Hudi ``getCommitsSinceLastCleaning``)."""
    completed = _completed_commits(table)
    last = _last_clean(table)
    if last is None:
        return len(completed)
    since = last[1].get("lastCompletedCommitTimestamp") or ""
    return sum(1 for i in completed if i.timestamp > since)


def _partitions_to_clean(table: Table, view: FileSystemView, policy: CleanPolicy, conf: HoodieConfig,
                         earliest: Instant | None) -> list[str]:
    """Every partition, or (incremental mode, Hudi ``CleanPlanner.getPartitionPathsForIncrementalCleaning``)
    those written by completed commits in ``[last clean's earliest commit to retain, earliest)``.

    The full listing is used when the last clean retained nothing or retained from before the active
    timeline starts (archived; Hudi ``isBeforeTimelineStarts``). When the earliest commit to retain is now
    at or before the last clean's (a restore or a rollback removed the commits after a savepoint, or a
    pending write holds it back), nothing was written in between: every file version older than it was
    already looked at by that clean, so no partition is listed.
    """
    last = _last_clean(table)
    if not (conf.get(CleanConfig.INCREMENTAL_MODE) and last is not None and earliest is not None
            and policy is not CleanPolicy.KEEP_LATEST_FILE_VERSIONS
            and last[1].get("earliestCommitToRetain")):
        return view.partition_paths()
    previous = str(last[1]["earliestCommitToRetain"])
    completed = _completed_commits(table)
    if completed and previous < completed[0].timestamp:
        return view.partition_paths()
    if earliest.timestamp <= previous:
        logger.debug("%s: incremental clean: the earliest commit to retain %s is not after the last clean's %s "
                     "(commits after it were restored or rolled back); no partition to look at",
                     table.base_path, earliest.timestamp, previous)
        return []
    partitions: set[str] = set()
    for instant in completed:
        if previous <= instant.timestamp < earliest.timestamp:
            metadata = table.commit_metadata(instant)
            partitions.update(metadata.partition_to_write_stats)
            partitions.update(metadata.replaced_file_ids())
    logger.debug("%s: incremental clean looks at %d partition(s) written in [%s, %s)", table.base_path,
                 len(partitions), previous, earliest.timestamp)
    return sorted(partitions)


def savepointed_files(table: Table) -> set[str]:
    """Base file names held by completed savepoints (Avro ``HoodieSavepointMetadata``)."""
    names: set[str] = set()
    for instant in table.timeline.savepoints():
        try:
            metadata = deserialize(table.timeline.read_details(instant), "HoodieSavepointMetadata",
                                   source=instant.file_name)
        except (CorruptFile, StorageError) as exc:
            raise CorruptFile(f"cannot read savepoint {instant.file_name} of {table.base_path}: {exc}; not "
                              "cleaning, so no savepointed file is lost") from exc
        for partition in (metadata.get("partitionMetadata") or {}).values():
            names.update(partition.get("savepointDataFile") or [])
    return names


class _SliceFiles:
    """Paths of a slice's files, CDC logs included (the file-system view leaves them out of slices)."""

    def __init__(self, table: Table, partition: str) -> None:
        storage = table.storage
        folder = storage.join(table.base_path, partition) if partition else table.base_path
        self._cdc: dict[tuple[str, str], list[str]] = {}
        if table.config.get(TableConfig.CDC_ENABLED):
            for info in storage.list_dir(folder):
                parsed = parse_log_file_name(info.name)
                if parsed is not None and parsed.is_cdc:
                    self._cdc.setdefault((parsed.file_id, parsed.base_instant), []).append(info.path)

    def of(self, file_slice: FileSlice) -> list[str]:
        paths = [file_slice.base_file.path] if file_slice.base_file is not None else []
        paths += [lf.path for lf in file_slice.log_files]
        paths += self._cdc.get((file_slice.file_id, file_slice.base_instant), [])
        return paths


def _is_savepointed(file_slice: FileSlice, saved: set[str]) -> bool:
    """Hudi ``isFileSliceExistInSavepointedFiles``: the slice's base file or one of its log files is held."""
    if file_slice.base_file is not None and file_slice.base_file.name in saved:
        return True
    return any(lf.name in saved for lf in file_slice.log_files)


def plan_clean(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None) -> CleanPlan:
    """The files a clean would delete now (Hudi ``CleanPlanner``; rules in the module docstring).

    Raises:
        ConfigError: an unknown policy or a retention below 1.
        CorruptFile: an unreadable savepoint (nothing is planned rather than risk a savepointed file).
    """
    policy = CleanPolicy.of(conf, table.base_path)
    for setting in (CleanConfig.COMMITS_RETAINED, CleanConfig.FILE_VERSIONS_RETAINED, CleanConfig.HOURS_RETAINED):
        if conf.get(setting) < 1:
            raise ConfigError(f"{setting.key}={conf.get(setting)} for table {table.base_path}: must be at least 1")
    completed = _completed_commits(table)
    last_completed = completed[-1].timestamp if completed else ""
    earliest = earliest_commit_to_retain(table, policy, conf, now)
    plan = CleanPlan(earliest, last_completed, policy)
    if policy is not CleanPolicy.KEEP_LATEST_FILE_VERSIONS and earliest is None:
        return plan
    view = table.file_system_view()
    saved = savepointed_files(table)
    pending_compaction = view.pending_compaction_file_groups()
    clustering = view.file_groups_in_pending_clustering()
    replaced = view.replaced_file_ids()
    for partition in _partitions_to_clean(table, view, policy, conf, earliest):
        files = _SliceFiles(table, partition)
        deletes: list[str] = []
        for group in view.replaced_file_groups(partition):
            replaced_at = replaced.get((partition, group.file_id), "")
            if earliest is not None and replaced_at >= earliest.timestamp:
                continue
            for file_slice in group.slices:
                if not _is_savepointed(file_slice, saved):
                    deletes += files.of(file_slice)
        for group in view.file_groups(partition):
            key = (partition, group.file_id)
            if key in clustering:
                continue
            needed = _compaction_input(group, pending_compaction.get(key))
            if policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
                deletes += _by_versions(group, needed, conf.get(CleanConfig.FILE_VERSIONS_RETAINED), saved, files)
            else:
                assert earliest is not None
                deletes += _by_commits(group, needed, earliest.timestamp, policy, saved, files)
        if deletes:
            plan.files[partition] = deletes
    return plan


def _compaction_input(group: FileGroup, compaction: str | None) -> str | None:
    """Base instant of the slice a pending compaction of ``group`` reads, or None."""
    if compaction is None:
        return None
    before = [s for s in group.slices if s.base_instant < compaction]
    return before[-1].base_instant if before else None


def _by_commits(group: FileGroup, needed: str | None, earliest: str, policy: CleanPolicy, saved: set[str],
                files: _SliceFiles) -> list[str]:
    """Hudi ``getFilesToCleanKeepingLatestCommits`` for one file group."""
    if not group.slices:
        return []
    latest = group.slices[-1].base_instant
    older = [s.base_instant for s in group.slices if s.base_instant < earliest]
    serving = older[-1] if older and policy is CleanPolicy.KEEP_LATEST_COMMITS else None
    out: list[str] = []
    for file_slice in group.slices:
        instant = file_slice.base_instant
        if _is_savepointed(file_slice, saved) or instant in (latest, serving, needed):
            continue
        if instant < earliest:
            out += files.of(file_slice)
    return out


def _by_versions(group: FileGroup, needed: str | None, keep: int, saved: set[str], files: _SliceFiles) -> list[str]:
    """Hudi ``getFilesToCleanKeepingLatestVersions`` for one file group."""
    newest_first = [s for s in reversed(group.slices) if s.base_instant != needed]
    if needed is not None:
        keep -= 1
    out: list[str] = []
    for file_slice in newest_first[max(keep, 0):]:
        if not _is_savepointed(file_slice, saved):
            out += files.of(file_slice)
    return out


# ----------------------------------------------------------------------------------------------- execution


def schedule_clean(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None,
                   force: bool = False) -> tuple[Instant | None, str]:
    """Write ``<t>.clean.requested`` when a clean is due and removes something.

    Args:
        table: the table.
        conf: cleaner options.
        now: the current time (tests).
        force: schedule whatever ``hoodie.clean.max.commits`` says.

    Returns:
        ``(requested instant, reason)``; the instant is None when nothing was scheduled and ``reason`` says why.
    """
    refuse_metadata_table(conf, table)
    strategy = conf.get(CleanConfig.TRIGGER_STRATEGY).strip().upper()
    if strategy != "NUM_COMMITS":
        raise ConfigError(f"{CleanConfig.TRIGGER_STRATEGY.key}={strategy!r} for table {table.base_path}: "
                          "only NUM_COMMITS exists")
    if not force:
        since, needed = commits_since_last_clean(table), conf.get(CleanConfig.MAX_COMMITS)
        if since < needed:
            return None, (f"{since} commit(s) since the last clean, fewer than "
                          f"{CleanConfig.MAX_COMMITS.key}={needed}")
    plan = plan_clean(table, conf, now)
    if not plan.file_count:
        if plan.earliest_instant_to_retain is None and plan.policy is CleanPolicy.KEEP_LATEST_COMMITS:
            return None, (f"{len(_completed_commits(table))} completed commit(s), not more than "
                          f"{CleanConfig.COMMITS_RETAINED.key}={conf.get(CleanConfig.COMMITS_RETAINED)}")
        return None, f"no file version is older than the retention ({plan.policy.value})"
    instant_time = table.timeline.new_instant_time()
    requested = table.timeline.create_requested(instant_time, CLEAN, serialize("HoodieCleanerPlan", plan.to_avro()))
    logger.info("%s: clean %s scheduled: %d file(s) in %d partition(s), earliest commit to retain %s",
                table.base_path, instant_time, plan.file_count, len(plan.files),
                plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else "-")
    return requested, ""


def execute_clean(table: Table, instant: Instant) -> CleanResult:
    """Run a requested or inflight clean to completion (Hudi ``CleanActionExecutor.runPendingClean``).

    Raises:
        CorruptFile: the plan cannot be read.
        StorageError: a file or the timeline cannot be written (the clean stays pending and is redone).
    """
    start = time.monotonic()
    timeline = table.timeline
    requested = Instant(instant.timestamp, CLEAN, State.REQUESTED)
    content = timeline.read_details(requested)
    plan = CleanPlan.from_avro(deserialize(content, "HoodieCleanerPlan", source=requested.file_name))
    inflight = instant if instant.state is State.INFLIGHT else timeline.transition_to_inflight(instant, content)
    storage = table.storage
    partitions: dict[str, dict[str, Any]] = {}
    deleted = failed = 0
    for partition, paths in sorted(plan.files.items()):
        names, success, failures = [], [], []
        for path in paths:
            name = path.rsplit("/", 1)[-1]
            names.append(name)
            if storage.exists(path):
                storage.delete(path)
                success.append(name)
            else:
                failures.append(name)
        deleted += len(success)
        failed += len(failures)
        partitions[partition] = {"partitionPath": partition, "policy": plan.policy.value,
                                 "deletePathPatterns": names, "successDeleteFiles": success,
                                 "failedDeleteFiles": failures, "isPartitionDeleted": False}
    earliest = plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else ""
    elapsed = int((time.monotonic() - start) * 1000)
    metadata = {
        "startCleanTime": instant.timestamp, "timeTakenInMillis": elapsed, "totalFilesDeleted": deleted,
        "earliestCommitToRetain": earliest, "lastCompletedCommitTimestamp": plan.last_completed_commit,
        "partitionMetadata": partitions, "version": CLEAN_METADATA_VERSION, "bootstrapPartitionMetadata": {},
        "extraMetadata": None,
    }
    timeline.complete(inflight, serialize("HoodieCleanMetadata", metadata))
    logger.info("%s: clean %s deleted %d file(s)%s in %d ms", table.base_path, instant.timestamp, deleted,
                f" ({failed} already gone)" if failed else "", elapsed)
    return CleanResult(instant.timestamp, elapsed, deleted, earliest, failed, metadata)


def pending_cleans(table: Table) -> list[Instant]:
    """Requested or inflight cleans, oldest first."""
    return [i for i in table.timeline.cleans() if i.state is not State.COMPLETED]


def run_clean(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None,
              force: bool = False) -> tuple[list[CleanResult], str]:
    """Finish pending cleans, then schedule and execute a new one if due (Hudi ``BaseHoodieTableServiceClient.clean``).

    With ``hoodie.cleaner.policy.failed.writes=lazy`` (always under optimistic concurrency control) failed writes
    (pending writes whose heartbeat has expired) are rolled back first, as Hudi's ``CleanerUtils.rollbackFailedWrites``;
    under optimistic concurrency control all of it runs holding the table lock.

    Returns:
        ``(results, reason)``: the executed cleans (pending ones first) and, when no new clean was scheduled,
        why.

    Raises:
        UnsupportedTable: a Hudi 1.x table (read only; :meth:`Table.check_writable`).
    """
    table.check_writable()
    refuse_metadata_table(conf, table)
    txn = TransactionManager(table, conf)
    with txn.transaction("clean"):
        if failed_writes_lazy(conf):
            rolled_back = rollback_failed_writes(table, HeartbeatClient.from_config(table.storage, table.base_path,
                                                                                    conf))
            if rolled_back:
                logger.info("%s: clean rolled back failed writes %s", table.base_path, rolled_back)
        results = [execute_clean(table, instant) for instant in pending_cleans(table.reload())]
        requested, reason = schedule_clean(table.reload(), conf, now, force)
        if requested is not None:
            results.append(execute_clean(table.reload(), requested))
        elif reason:
            logger.debug("%s: no clean scheduled: %s", table.base_path, reason)
    return results, reason


__all__ = [
    "CLEAN_METADATA_VERSION",
    "CLEAN_PLAN_VERSION",
    "CleanPlan",
    "CleanPolicy",
    "CleanResult",
    "commits_since_last_clean",
    "earliest_commit_to_retain",
    "execute_clean",
    "pending_cleans",
    "plan_clean",
    "run_clean",
    "savepointed_files",
    "schedule_clean",
]
