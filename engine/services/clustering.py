"""Clustering (Hudi ``ClusteringPlanActionExecutor`` + ``SparkSizeBasedClusteringPlanStrategy`` to plan,
``SparkExecuteClusteringCommitActionExecutor`` to run): schedule → execute → commit as a ``replacecommit``.

* **Schedule** writes ``<t>.replacecommit.requested``: Avro ``HoodieRequestedReplaceMetadata`` with
  ``operationType = CLUSTER`` and a ``HoodieClusteringPlan``. Partitions: ``…partition.selected`` (a list) or
  every partition matching ``…partition.regex.pattern``, then ``hoodie.clustering.plan.partition.filter.mode``
  (NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING). Per partition the latest file slices outside pending
  compactions and clusterings whose base file is under ``…small.file.limit`` are sorted by size (largest first;
  a log-only slice counts as ``hoodie.parquet.max.file.size``) and cut into groups of at most
  ``…max.bytes.per.group``; each group writes ``ceil(group bytes / …target.file.max.bytes)`` file groups; a
  last group of a single slice is kept only with sort columns or ``…single.group.clustering.enabled``; at most
  ``…max.num.groups`` groups in all. With ``hoodie.clustering.inline`` / ``async.enabled`` a plan is only made
  once ``inline.max.commits`` / ``async.max.commits`` commits completed since the last clustering.
* **Execute** (:mod:`engine.spark.clustering`, rows handled by :mod:`engine.services.clustering_tasks`): each
  group's slices are read as a snapshot query reads them (MOR logs merged), ordered by the sort columns
  (``hoodie.layout.optimize.strategy``: linear, z-order, hilbert) and written as new file groups; rows keep
  their ``_hoodie_commit_time`` / seqno (``preserveHoodieMetadata``).
* **Commit**: ``<t>.replacecommit`` (``operationType: CLUSTER``) whose ``partitionToReplaceFileIds`` lists every
  input file group: readers drop them from then on; the cleaner deletes them once no retained instant reads them.

While a clustering is pending its input file groups stay readable, take no inserts (small-file packing skips
them) and a write that would update or delete their records fails (Hudi ``SparkRejectUpdateStrategy``).
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.concurrency.transaction import TransactionManager
from engine.config import ClusteringConfig, HoodieConfig, IndexConfig, LayoutConfig, WriteConfig, parse_list
from engine.errors import ConcurrentWriteError, ConfigError, TableServiceError
from engine.filegroup.naming import parse_base_file_name, parse_log_file_name
from engine.filegroup.slices import FileSlice
from engine.filegroup.view import FileSystemView
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro, avro_to_arrow
from engine.index import index_type
from engine.metadata.disable import refuse_metadata_table
from engine.schema.history import LATEST_SCHEMA, SchemaEvolution, avro_of
from engine.table import Table
from engine.timeline.avro_serde import deserialize, serialize
from engine.timeline.commit_metadata import CommitMetadata, WriteStat
from engine.timeline.instant import REPLACE_COMMIT, Instant, State
from engine.write.heartbeat import HeartbeatClient, HeartbeatStatus
from engine.write.markers import delete_marker_dir, delete_uncommitted_files
from engine.write.rollback import revert_table_service

logger = logging.getLogger(__name__)

PLAN_VERSION = 1
"""``ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1``."""
CLUSTER = "CLUSTER"
FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING")
SIZE_BASED_PLAN = "SparkSizeBasedClusteringPlanStrategy"
SORT_AND_SIZE_EXECUTION = "SparkSortAndSizeExecutionStrategy"
REJECT_UPDATES = "SparkRejectUpdateStrategy"


@dataclass(frozen=True)
class ClusteringSlice:
    """One input file slice (Avro ``HoodieSliceInfo``).

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_file: base file name, or ``""`` for a log-only slice (the plan stores full paths, as Hudi).
        log_files: log file names in log order.
        base_instant: the slice's base instant (not in the Avro record; taken from the file names).
    """

    partition_path: str
    file_id: str
    base_file: str
    log_files: tuple[str, ...]
    base_instant: str

    def to_avro(self, table: Table) -> dict[str, Any]:
        """The Avro record, with full paths."""
        folder = table.storage.join(table.base_path, self.partition_path) if self.partition_path else table.base_path
        return {"dataFilePath": table.storage.join(folder, self.base_file) if self.base_file else "",
                "deltaFilePaths": [table.storage.join(folder, name) for name in self.log_files],
                "fileId": self.file_id, "partitionPath": self.partition_path, "bootstrapFilePath": "",
                "version": PLAN_VERSION}

    @staticmethod
    def from_avro(record: dict[str, Any]) -> ClusteringSlice:
        """Parse a ``HoodieSliceInfo`` (paths reduced to file names: the plan stays valid if the table moves)."""
        base = (record.get("dataFilePath") or "").rsplit("/", 1)[-1]
        logs = tuple(str(p).rsplit("/", 1)[-1] for p in record.get("deltaFilePaths") or [])
        instant = ""
        parsed = parse_base_file_name(base, "." + base.rsplit(".", 1)[-1]) if base else None
        if parsed is not None:
            instant = parsed[2]
        elif logs:
            log = parse_log_file_name(logs[0])
            instant = log.base_instant if log is not None else ""
        return ClusteringSlice(record.get("partitionPath") or "", record.get("fileId") or "", base, logs, instant)


@dataclass(frozen=True)
class ClusteringGroup:
    """Slices rewritten together (Avro ``HoodieClusteringGroup``).

    Attributes:
        slices: the input slices, all of one partition.
        num_output_file_groups: new file groups to write.
        metrics: Hudi's group metrics (``TOTAL_IO_READ_MB`` ..., ``TOTAL_LOG_FILES``).
    """

    slices: tuple[ClusteringSlice, ...]
    num_output_file_groups: int
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def partition_path(self) -> str:
        """The partition of the group's slices."""
        return self.slices[0].partition_path if self.slices else ""


@dataclass(frozen=True)
class ClusteringPlan:
    """A clustering plan (Avro ``HoodieClusteringPlan``).

    Attributes:
        groups: the input groups.
        strategy_class: the execution strategy class name.
        strategy_params: strategy parameters (``hoodie.clustering.plan.strategy.sort.columns`` when sorting).
        preserve_metadata: rows keep their commit time and seqno.
        extra_metadata: the plan's extra metadata.
    """

    groups: tuple[ClusteringGroup, ...]
    strategy_class: str
    strategy_params: dict[str, str] = field(default_factory=dict)
    preserve_metadata: bool = True
    extra_metadata: dict[str, str] = field(default_factory=dict)

    @property
    def sort_columns(self) -> list[str]:
        """The sort columns, in order (empty: rows keep the order they are read in)."""
        return parse_list(self.strategy_params.get(ClusteringConfig.SORT_COLUMNS.key, "") or "")

    @property
    def partitions(self) -> list[str]:
        """Partitions of the plan's groups, sorted, each once."""
        return sorted({g.partition_path for g in self.groups})

    def file_groups(self) -> dict[str, list[str]]:
        """Partition → input file group ids (the replaced file ids of the commit)."""
        out: dict[str, list[str]] = {}
        for group in self.groups:
            for s in group.slices:
                out.setdefault(s.partition_path, []).append(s.file_id)
        return out

    def to_requested(self, table: Table) -> bytes:
        """``HoodieRequestedReplaceMetadata`` Avro bytes holding this plan."""
        plan = {
            "inputGroups": [{"slices": [s.to_avro(table) for s in g.slices], "metrics": dict(g.metrics),
                             "numOutputFileGroups": g.num_output_file_groups, "extraMetadata": None,
                             "version": PLAN_VERSION} for g in self.groups],
            "strategy": {"strategyClassName": self.strategy_class, "strategyParams": dict(self.strategy_params),
                         "version": PLAN_VERSION},
            "extraMetadata": dict(self.extra_metadata), "version": PLAN_VERSION,
            "preserveHoodieMetadata": self.preserve_metadata,
        }
        return serialize("HoodieRequestedReplaceMetadata", {"operationType": CLUSTER, "clusteringPlan": plan,
                                                            "extraMetadata": {}, "version": PLAN_VERSION})

    @staticmethod
    def from_avro(plan: dict[str, Any]) -> ClusteringPlan:
        """Parse a ``HoodieClusteringPlan`` record."""
        strategy = plan.get("strategy") or {}
        groups = tuple(ClusteringGroup(tuple(ClusteringSlice.from_avro(s) for s in g.get("slices") or []),
                                       int(g.get("numOutputFileGroups") or 1), dict(g.get("metrics") or {}))
                       for g in plan.get("inputGroups") or [])
        preserve = plan.get("preserveHoodieMetadata")
        return ClusteringPlan(groups, strategy.get("strategyClassName") or "",
                              dict(strategy.get("strategyParams") or {}),
                              True if preserve is None else bool(preserve), dict(plan.get("extraMetadata") or {}))


# ---------------------------------------------------------------------------------------------- planning


def filter_partitions(partitions: Sequence[str], conf: HoodieConfig, hour: int | None = None) -> list[str]:
    """Partitions a plan looks at (Hudi ``PartitionAwareClusteringPlanStrategy`` + ``ClusteringPlanPartitionFilter``).

    Args:
        partitions: every partition of the table.
        conf: the clustering config.
        hour: hour of the day for DAY_ROLLING (default: now, local time as Hudi's ``DateTime.now()``).

    Raises:
        ConfigError: an unknown filter mode or a bad regex.
    """
    selected = conf.get_optional(ClusteringConfig.PARTITION_SELECTED)
    if selected:
        chosen = [p.strip() for p in selected.split(",")]
    else:
        chosen = list(partitions)
        pattern = conf.get_optional(ClusteringConfig.PARTITION_REGEX)
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"{ClusteringConfig.PARTITION_REGEX.key}: bad regex {pattern!r}: {exc}") from exc
            chosen = [p for p in chosen if regex.fullmatch(p)]
    mode = conf.get(ClusteringConfig.PARTITION_FILTER_MODE).strip().upper()
    if mode == "NONE":
        return chosen
    if mode == "RECENT_DAYS":
        lookback = conf.get(ClusteringConfig.LOOKBACK_PARTITIONS)
        skip = max(conf.get(ClusteringConfig.SKIP_PARTITIONS_FROM_LATEST), 0)
        newest = sorted(chosen, reverse=True)[skip:]
        return newest[:lookback] if lookback > 0 else newest
    if mode == "SELECTED_PARTITIONS":
        begin = conf.get_optional(ClusteringConfig.BEGIN_PARTITION)
        end = conf.get_optional(ClusteringConfig.END_PARTITION)
        return [p for p in chosen if (begin is None or p >= begin) and (end is None or p <= end)]
    if mode == "DAY_ROLLING":
        now_hour = datetime.datetime.now().hour if hour is None else hour
        return [p for i, p in enumerate(sorted(chosen)) if i % 24 == now_hour]
    raise ConfigError(f"{ClusteringConfig.PARTITION_FILTER_MODE.key}: unknown partition filter mode {mode!r}; "
                      f"expected one of {', '.join(FILTER_MODES)}")


def _slice_size(fs: FileSlice, default: int) -> int:
    return fs.base_file.size if fs.base_file is not None else default


def group_metrics(slices: Sequence[FileSlice], default_base_size: int) -> dict[str, float]:
    """Hudi ``FileSliceMetricUtils.addFileSliceCommonMetrics`` (MB values are whole mebibytes)."""
    logs = sum(len(fs.log_files) for fs in slices)
    log_bytes = sum(lf.size for fs in slices for lf in fs.log_files if lf.size >= 0)
    read = sum(fs.base_file.size if fs.base_file else 0 for fs in slices)
    write = sum(fs.base_file.size if fs.base_file and fs.base_file.size > 0 else default_base_size for fs in slices)
    read_mb, write_mb = (read + log_bytes) // 2**20, write // 2**20
    return {"TOTAL_IO_READ_MB": float(read_mb), "TOTAL_IO_WRITE_MB": float(write_mb),
            "TOTAL_IO_MB": float(read_mb + write_mb), "TOTAL_LOG_FILES_SIZE": float(log_bytes),
            "TOTAL_LOG_FILES": float(logs)}


def build_groups(slices: Sequence[FileSlice], conf: HoodieConfig) -> list[ClusteringGroup]:
    """Cut one partition's eligible slices into groups (Hudi ``buildClusteringGroupsForPartition``)."""
    default_size = conf.get(WriteConfig.PARQUET_MAX_FILE_SIZE)
    max_group = conf.get(ClusteringConfig.MAX_BYTES_PER_GROUP)
    target = max(1, conf.get(ClusteringConfig.TARGET_FILE_MAX_BYTES))
    max_groups = conf.get(ClusteringConfig.MAX_NUM_GROUPS)
    sort_columns = conf.get_optional(ClusteringConfig.SORT_COLUMNS)
    single = bool(sort_columns) or conf.get(ClusteringConfig.SINGLE_GROUP_CLUSTERING)
    ordered = sorted(slices, key=lambda fs: -_slice_size(fs, default_size))
    cut: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    total = 0
    for fs in ordered:
        size = _slice_size(fs, default_size)
        if current and total + size > max_group:
            cut.append((current, math.ceil(total / target)))
            current, total = [], 0
            if len(cut) >= max_groups:
                break
        current.append(fs)
        total += size
    else:
        if current and (len(current) > 1 or single):
            cut.append((current, math.ceil(total / target)))
    return [ClusteringGroup(tuple(ClusteringSlice(fs.partition_path, fs.file_id,
                                                  fs.base_file.name if fs.base_file else "",
                                                  tuple(lf.name for lf in fs.log_files), fs.base_instant)
                                  for fs in group),
                            max(1, outputs), group_metrics(group, default_size))
            for group, outputs in cut]


def eligible_slices(view: FileSystemView, partition: str, conf: HoodieConfig,
                    busy: set[tuple[str, str]]) -> list[FileSlice]:
    """Latest slices of ``partition`` outside ``busy`` (file groups in pending compactions and clusterings) whose
    base file is under ``hoodie.clustering.plan.strategy.small.file.limit`` (Hudi
    ``getFileSlicesEligibleForClustering``)."""
    limit = conf.get(ClusteringConfig.SMALL_FILE_LIMIT)
    return [fs for fs in view.latest_file_slices(partition, merge_pending_compaction=False)
            if (partition, fs.file_id) not in busy and not fs.is_empty
            and (fs.base_file.size if fs.base_file else 0) < limit]


def check_clustering_config(conf: HoodieConfig, where: str) -> None:
    """Refuse clustering settings this engine does not implement.

    Raises:
        ConfigError: another plan, execution or update strategy; rolling back pending clustering on conflict;
            an unknown layout strategy or curve build method; an unknown partition filter mode.
    """
    from engine.services.layout import layout_strategy

    for prop, wanted in ((ClusteringConfig.PLAN_STRATEGY_CLASS, SIZE_BASED_PLAN),
                         (ClusteringConfig.EXECUTION_STRATEGY_CLASS, SORT_AND_SIZE_EXECUTION),
                         (ClusteringConfig.UPDATES_STRATEGY, REJECT_UPDATES)):
        value = conf.get(prop) or ""
        if value.rsplit(".", 1)[-1] != wanted:
            raise ConfigError(f"{prop.key}={value} for {where}: only {wanted} is implemented")
    if conf.get(ClusteringConfig.ROLLBACK_PENDING_ON_CONFLICT):
        raise ConfigError(f"{ClusteringConfig.ROLLBACK_PENDING_ON_CONFLICT.key}=true for {where}: not supported; "
                          "writes to file groups under pending clustering are rejected")
    layout_strategy(conf.get(LayoutConfig.STRATEGY))
    if conf.get(LayoutConfig.CURVE_BUILD_METHOD).strip().lower() != "direct":
        raise ConfigError(f"{LayoutConfig.CURVE_BUILD_METHOD.key}={conf.get(LayoutConfig.CURVE_BUILD_METHOD)} for "
                          f"{where}: only 'direct' is implemented")
    mode = conf.get(ClusteringConfig.PARTITION_FILTER_MODE).strip().upper()
    if mode not in FILTER_MODES:
        raise ConfigError(f"{ClusteringConfig.PARTITION_FILTER_MODE.key}: unknown partition filter mode {mode!r} "
                          f"for {where}; expected one of {', '.join(FILTER_MODES)}")


def refuse_bucket_clustering(conf: HoodieConfig, where: str) -> None:
    """Refuse clustering a bucket index table (as Hudi does): a bucket is one file group with a fixed id, which
    rewriting file groups into new ones would break.

    Raises:
        ConfigError: ``hoodie.index.type=BUCKET``.
    """
    if index_type(conf) == "BUCKET":
        # Hudi's words: the execution strategy's check of the table layout (and HoodieWriteConfig's)
        raise ConfigError("Executor SparkExecuteClusteringCommitActionExecutor is not compatible with table layout "
                          f"HoodieSimpleBucketLayout: Clustering is not supported for bucket index "
                          f"({IndexConfig.TYPE.key}=BUCKET, {where})")


def commits_since_last_clustering(table: Table) -> tuple[str | None, int]:
    """The last completed clustering instant (or ``None``) and the completed commits after it."""
    timeline = table.timeline
    last = None
    for instant in timeline.completed_replace_commits():
        if is_clustering_commit(table, instant):
            last = instant.timestamp
    commits = [i for i in timeline.completed_commits() if last is None or i.timestamp > last]
    return last, len([i for i in commits if not (i.action == REPLACE_COMMIT and is_clustering_commit(table, i))])


def is_clustering_commit(table: Table, instant: Instant) -> bool:
    """Whether a replacecommit is a clustering (its requested file holds a clustering plan)."""
    return _requested_plan(table, instant.timestamp) is not None


def _requested_plan(table: Table, instant_time: str) -> dict[str, Any] | None:
    requested = Instant(instant_time, REPLACE_COMMIT, State.REQUESTED)
    try:
        content = table.timeline.read_details(requested)
    except Exception:  # noqa: BLE001 - archived or missing requested file: not a clustering we can read
        return None
    if not content:
        return None
    metadata = deserialize(content, "HoodieRequestedReplaceMetadata", source=requested.file_name)
    plan = metadata.get("clusteringPlan")
    return plan if plan else None


def why_not_due(table: Table, conf: HoodieConfig) -> str | None:
    """Why inline/async clustering may not be scheduled yet (Hudi ``ClusteringPlanActionExecutor``), else None."""
    last, commits = commits_since_last_clustering(table)
    for enabled, maximum in ((ClusteringConfig.INLINE, ClusteringConfig.INLINE_MAX_COMMITS),
                             (ClusteringConfig.ASYNC_ENABLED, ClusteringConfig.ASYNC_MAX_COMMITS)):
        if conf.get(enabled) and conf.get(maximum) > commits:
            return (f"only {commits} commit(s) since the last clustering {last or '(none)'}; {maximum.key} asks "
                    f"for {conf.get(maximum)}")
    return None


def plan_clustering(table: Table, conf: HoodieConfig) -> tuple[ClusteringPlan | None, str]:
    """Make a plan (nothing is written).

    Returns:
        ``(plan, "")``, or ``(None, reason)`` naming what made every file slice ineligible.
    """
    check_clustering_config(conf, f"table {table.base_path}")
    refuse_bucket_clustering(conf, f"table {table.base_path}")
    not_due = why_not_due(table, conf)
    if not_due is not None:
        return None, not_due
    view = table.file_system_view()
    busy = set(view.pending_compaction_file_groups()) | set(view.file_groups_in_pending_clustering())
    partitions = filter_partitions(view.partition_paths(), conf)
    if not partitions:
        return None, "no partition selected (partition filter, regex or selected partitions)"
    max_groups = conf.get(ClusteringConfig.MAX_NUM_GROUPS)
    groups: list[ClusteringGroup] = []
    candidates = 0
    for partition in partitions:
        slices = eligible_slices(view, partition, conf, busy)
        candidates += len(slices)
        groups.extend(build_groups(slices, conf)[:max_groups])
        if len(groups) >= max_groups:
            break
    groups = groups[:max_groups]
    if not groups:
        limit = ClusteringConfig.SMALL_FILE_LIMIT
        if candidates:
            return None, (f"only single file slices are small ({candidates}) and "
                          f"{ClusteringConfig.SINGLE_GROUP_CLUSTERING.key}=false without sort columns")
        return None, (f"no file slice outside pending compaction/clustering has a base file under "
                      f"{limit.key}={conf.get(limit)} bytes in partitions {partitions[:5]}")
    params = {}
    sort = conf.get_optional(ClusteringConfig.SORT_COLUMNS)
    if sort:
        params[ClusteringConfig.SORT_COLUMNS.key] = sort
    return ClusteringPlan(tuple(groups), conf.get(ClusteringConfig.EXECUTION_STRATEGY_CLASS) or "", params,
                          conf.get(ClusteringConfig.PRESERVE_COMMIT_METADATA)), ""


def schedule_clustering(table: Table, conf: HoodieConfig, instant_time: str | None = None) -> tuple[str | None, str]:
    """Write ``<t>.replacecommit.requested`` with a clustering plan if there is work (under the table lock with
    optimistic concurrency control).

    Returns:
        ``(instant, "")`` or ``(None, why nothing was scheduled)``.

    Raises:
        ConfigError: unsupported clustering settings or sort columns missing from the table.
    """
    refuse_metadata_table(conf, table)
    sort = parse_list(conf.get_optional(ClusteringConfig.SORT_COLUMNS) or "")
    if sort:
        validate_sort_columns(table, sort)
    with TransactionManager(table, conf).transaction("schedule clustering"):
        table.timeline.reload()
        plan, reason = plan_clustering(table, conf)
        if plan is None:
            logger.info("no clustering scheduled on %s: %s", table.base_path, reason)
            return None, reason
        instant = instant_time or table.timeline.new_instant_time()
        table.timeline.create_requested(instant, REPLACE_COMMIT, plan.to_requested(table))
    size = sum(int(g.metrics.get("TOTAL_IO_READ_MB", 0)) for g in plan.groups)
    logger.info("scheduled clustering %s on %s: %d groups, %d file slices, %d MB to read", instant,
                table.base_path, len(plan.groups), sum(len(g.slices) for g in plan.groups), size)
    return instant, ""


def validate_sort_columns(table: Table, columns: Sequence[str]) -> None:
    """Raises ConfigError naming a sort column the table does not have (Hudi "Order column not exist")."""
    avro = table.latest_avro_schema(include_meta=True) or {}
    names = {str(f["name"]).lower() for f in avro.get("fields", [])}
    for column in columns:
        if column.lower() not in names:
            raise ConfigError(f"Order column not exist: {column} (table {table.base_path} has columns "
                              f"{sorted(names)})")


def pending_clusterings(table: Table) -> list[Instant]:
    """Pending clustering instants (requested or inflight replacecommits with a clustering plan), oldest first."""
    table.timeline.reload()
    return [i for i in table.timeline.of_actions([REPLACE_COMMIT])
            if i.is_pending and _requested_plan(table, i.timestamp) is not None]


def read_clustering_plan(table: Table, instant_time: str) -> ClusteringPlan:
    """The plan of a clustering instant (any state).

    Raises:
        TableServiceError: ``instant_time`` is not a clustering on the active timeline.
    """
    plan = _requested_plan(table, instant_time)
    if plan is None:
        raise TableServiceError(f"no clustering plan at instant {instant_time} on {table.base_path}")
    return ClusteringPlan.from_avro(plan)


# ---------------------------------------------------------------------------------------------- running


def clustering_in_progress_error(table: Table, instant_time: str, status: HeartbeatStatus,
                                 heartbeats: HeartbeatClient) -> ConcurrentWriteError:
    """The one-line error for a clustering another live process is executing."""
    return ConcurrentWriteError(
        f"clustering {instant_time} of table {table.name} at {table.base_path} is being executed by another "
        f"writer ({status.describe(heartbeats.now_ms())}, live heartbeat); wait for it to finish")


def start_clustering(table: Table, instant_time: str) -> Instant:
    """Requested → inflight (an inflight clustering without a live heartbeat is rolled back first: its partial
    files deleted, back to requested, as Hudi's ``rollbackInflightClustering``).

    Raises:
        TableServiceError: no pending clustering at ``instant_time``.
    """
    for instant in pending_clusterings(table):
        if instant.timestamp != instant_time:
            continue
        if instant.state is State.INFLIGHT:
            revert_table_service(table, instant)
            logger.warning("rolled back the partial files of interrupted clustering %s on %s", instant_time,
                           table.base_path)
        requested = Instant(instant_time, REPLACE_COMMIT, State.REQUESTED)
        return table.timeline.transition_to_inflight(requested, b"")
    raise TableServiceError(f"no pending clustering at instant {instant_time} on {table.base_path}")


def file_schemas(table: Table, instant_time: str) -> tuple[dict[str, Any], SchemaEvolution | None]:
    """The Avro schema (with meta fields) new files are written in, and the schema evolution to read older
    files with (``None`` unless the table evolves its schema on read).

    Raises:
        TableServiceError: the table has no schema.
    """
    evolution = SchemaEvolution.of(table, instant_time)
    avro = avro_of(evolution.query, table.name) if evolution is not None else \
        table.latest_avro_schema(include_meta=False)
    if avro is None:
        raise TableServiceError(f"table {table.base_path} has no schema to cluster with")
    avro = table.without_dropped_partition_columns(avro)
    return add_meta_fields(arrow_to_avro(avro_to_arrow(avro), table.name)), evolution


def complete_clustering(table: Table, inflight: Instant, plan: ClusteringPlan,
                        stats: Sequence[WriteStat], conf: HoodieConfig | None = None) -> CommitMetadata:
    """Write ``<t>.replacecommit`` (``operationType: CLUSTER``, the input file groups replaced) and drop the
    markers (files of failed task attempts are deleted first); with optimistic concurrency control in ``conf``
    under the table lock (Hudi ``completeClustering``: no conflict check with the simple strategy — writers
    check against clusterings).

    Raises:
        LockError: the table lock could not be had (the clustering stays inflight).
    """
    delete_uncommitted_files(table.storage, table.base_path, inflight.timestamp, {s.path for s in stats})
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    avro, evolution = file_schemas(table, inflight.timestamp)
    schema = {**avro, "fields": [f for f in avro["fields"] if not str(f["name"]).startswith("_hoodie_")]}
    extra = {"schema": json.dumps(schema, separators=(",", ":"))}
    if evolution is not None:
        extra[LATEST_SCHEMA] = evolution.query.to_json()
    metadata = CommitMetadata(partition_to_write_stats=by_partition, compacted=False, extra_metadata=extra,
                              operation_type=CLUSTER, partition_to_replace_file_ids=plan.file_groups())
    with TransactionManager(table, conf if conf is not None else table.config).transaction(
            f"clustering {inflight.timestamp}"):
        table.timeline.complete(inflight, metadata.to_json())
    delete_marker_dir(table.storage, table.base_path, inflight.timestamp)
    logger.info("completed clustering %s on %s: %d file groups replaced by %d", inflight.timestamp,
                table.base_path, sum(len(g.slices) for g in plan.groups), len(stats))
    return metadata
