"""Query planning: which file slices a query reads (Hudi ``HoodieFileIndex`` / ``MergeOnReadSnapshotRelation``
/ ``IncrementalRelation``).

* snapshot: latest file slice of every file group, as of the latest completed instant or ``as.of.instant``;
* read_optimized: the same slices without their log files;
* incremental: file groups written by completed commits in ``(begin, end]``, rows then filtered by
  ``_hoodie_commit_time`` in that range.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import Enum
from functools import cached_property

import pyarrow as pa

from engine.config import HoodieConfig, ReadConfig
from engine.errors import ConfigError, EngineError
from engine.keygen import DEFAULT_PARTITION_PATH, KeyGenerator, KeyGenType
from engine.read.log_scan import BlockFilter, MergeSettings
from engine.read.retention import load_window
from engine.schema.history import SchemaEvolution
from engine.table import Table
from engine.timeline.instant import Instant


class QueryType(Enum):
    """Hudi query types (``hoodie.datasource.query.type``)."""

    SNAPSHOT = "snapshot"
    READ_OPTIMIZED = "read_optimized"
    INCREMENTAL = "incremental"


@dataclass(frozen=True)
class ReadSplit:
    """One file slice to read.

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_instant: the slice's base instant.
        base_file: absolute path of the base file, or ``None`` for a log-only slice.
        log_files: absolute paths of the slice's log files, in log order.
        size_bytes: total bytes of the slice's files (for split sizing).
        base_mtime_ms: the base file's modification time (milliseconds since the epoch; 0 when unknown or none).
    """

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    size_bytes: int
    base_mtime_ms: int = 0


@dataclass(frozen=True)
class PartitionColumns:
    """Partition columns whose values come from each slice's partition path, parsed as Hudi's file index parses
    them (``SparkHoodieTableFileIndex.parsePartitionColumnValues``).

    Two cases:

    * the data files leave the columns out (``hoodie.datasource.write.drop.partition.columns``; Hudi
      ``shouldExtractPartitionValuesFromPartitionPath``): every row gets the path's values, nulls where the
      path does not parse;
    * the files hold them (``in_files``), and the query is one Hudi 0.15 answers from a ``HadoopFsRelation``
      with the file index's partition schema (copy-on-write snapshot and time travel, read-optimized queries,
      or ``hoodie.datasource.read.extract.partition.values.from.path``): Spark's rule gives a partition column's
      value from the path, not from the file. The two differ only for a record a global index kept in its old
      partition (``hoodie.simple.index.update.partition.path=false``) while its partition column changed. A
      slice whose path does not parse keeps the stored values (Hudi then reads the table as non-partitioned),
      and so does a column whose type a path value does not name exactly (:func:`takes_path_value`).

    Attributes:
        names: the partition fields, in order.
        table_config: the table's ``hoodie.properties`` items (hive style, URL encoding, key generator).
        in_files: whether the data files hold the columns too.
    """

    names: tuple[str, ...]
    table_config: tuple[tuple[str, str], ...]
    in_files: bool = False

    @cached_property
    def _key_generator(self) -> KeyGenerator:
        return KeyGenerator.from_config(HoodieConfig(dict(self.table_config)))

    def values(self, partition_path: str) -> dict[str, str | None] | None:
        """Lower-cased column name → value (None for ``__HIVE_DEFAULT_PARTITION__``), or None for a path that
        does not fit the partition fields (or a key generator the table config does not describe)."""
        try:
            parsed: list[str] = self._key_generator.partition_values(partition_path)
        except EngineError:
            return None
        if len(parsed) != len(self.names):
            return None
        return {name.lower(): (None if value == DEFAULT_PARTITION_PATH else value)
                for name, value in zip(self.names, parsed, strict=True)}


def takes_path_value(dtype: pa.DataType) -> bool:
    """Whether a partition column of this type takes its value from the partition path when the files hold it
    too: strings, integers, floating point, decimals, booleans and dates, whose path text casts back to the
    stored value. Timestamps (formatted by the key generator, in a time zone) and nested or binary types keep
    the stored value."""
    return bool(pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_integer(dtype)
                or pa.types.is_floating(dtype) or pa.types.is_decimal(dtype) or pa.types.is_boolean(dtype)
                or pa.types.is_date32(dtype))


_PATH_VALUE_KEYGENS = frozenset({KeyGenType.SIMPLE, KeyGenType.COMPLEX})
"""Key generators whose partition path segments are the partition columns' own values (a timestamp-based or
custom key generator formats them: Hudi 0.15's reader then fails to cast them back, sqlext keeps the stored
values)."""


def partition_columns_of(table: Table, query_type: QueryType, options: HoodieConfig) -> PartitionColumns | None:
    """The partition columns a query of ``query_type`` fills from partition paths, or None (see
    :class:`PartitionColumns`)."""
    config = tuple(sorted(table.config.as_dict().items()))
    dropped = table.dropped_partition_columns
    if dropped:
        return PartitionColumns(tuple(dropped), config)
    fields = table.partition_fields
    if not fields or query_type is QueryType.INCREMENTAL:
        return None
    from_path = (options.get(ReadConfig.EXTRACT_PARTITION_VALUES_FROM_PATH)
                 or query_type is QueryType.READ_OPTIMIZED or not table.is_mor)
    if not from_path:
        return None
    try:
        kind = KeyGenerator.from_config(HoodieConfig(dict(config))).kind
    except EngineError:
        return None
    return PartitionColumns(tuple(fields), config, in_files=True) if kind in _PATH_VALUE_KEYGENS else None


@dataclass(frozen=True)
class QueryPlan:
    """What to read and how to filter rows.

    Attributes:
        splits: file slices to read.
        query_type: the query type.
        as_of: upper instant bound (inclusive) of visible data, or ``None`` for latest.
        begin: incremental lower bound (exclusive), or ``None``.
        end: incremental upper bound (inclusive), or ``None``.
        completed_instants: completed write instants ≤ ``as_of``/``end`` (log blocks of others are ignored).
        timeline_start: first completed write instant of the active timeline (older log blocks count as
            committed: their commits were archived), or ``None``.
        pending_instants: requested/inflight write instants (their log blocks are ignored).
        merge: merge-on-read settings (set for snapshot/incremental queries on MOR tables).
        evolution: how to read files written under older schemas when the table's schema evolved on read
            (the query schema is the one as of ``as_of``), else None.
        partition_columns: partition columns filled from the partition path (files leave them out), or None.
    """

    splits: tuple[ReadSplit, ...]
    query_type: QueryType
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None
    completed_instants: frozenset[str] = frozenset()
    timeline_start: str | None = None
    pending_instants: frozenset[str] = frozenset()
    merge: MergeSettings | None = None
    evolution: SchemaEvolution | None = None
    partition_columns: PartitionColumns | None = None

    def block_filter(self) -> BlockFilter:
        """Which log blocks the query applies (docs/FORMAT.md §5.4): instant ≤ the query instant (``as_of`` /
        ``end``, else the latest completed instant), committed, and in ``(begin, end]`` for incremental
        queries."""
        latest = self.as_of or self.end or (max(self.completed_instants) if self.completed_instants else None)
        return BlockFilter(latest, self.completed_instants, self.timeline_start, self.pending_instants,
                           self.begin)


def normalize_instant(value: str) -> str:
    """Accept ``yyyyMMddHHmmss[SSS]``, ``yyyy-MM-dd HH:mm:ss[.SSS]`` or ``yyyy-MM-dd`` (Hudi
    ``HoodieSqlCommonUtils.formatQueryInstant``) and return the instant form.

    Raises:
        ConfigError: unrecognized format.
    """
    text = value.strip().strip("'\"")
    digits = "".join(ch for ch in text if ch.isdigit())
    if text.isdigit() and len(text) in (14, 17):
        return text
    if len(text) == 10 and text[4] == "-" and text[7] == "-":
        return digits + "000000000"
    if len(text) >= 19 and text[4] == "-" and text[10] in " T":
        base, millis = digits[:14], digits[14:17]
        return base + millis.ljust(3, "0")
    raise ConfigError(
        f"unsupported instant {value!r}: expected yyyyMMddHHmmss[SSS], 'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'"
    )


def _incremental_bound(value: str) -> str:
    """An incremental query bound: digits are compared with instants as written (Hudi compares instant strings,
    so ``'000'`` and a shorter prefix such as ``'202305150000'`` work); other forms as :func:`normalize_instant`."""
    text = value.strip().strip("'\"")
    return text if text.isdigit() else normalize_instant(text)


def file_groups_option(groups: Iterable[tuple[str, str]]) -> str:
    """The value of ``sqlext.read.file.groups`` (:attr:`ReadConfig.FILE_GROUPS`) naming ``(partition path, file
    id)`` pairs."""
    return json.dumps([list(g) for g in groups], separators=(",", ":"))


def _file_groups(options: HoodieConfig, table: Table) -> frozenset[tuple[str, str]] | None:
    """The file groups ``sqlext.read.file.groups`` restricts a read to, or None when it is not set.

    Raises:
        ConfigError: the value is not a JSON list of ``[partition, file id]`` string pairs.
    """
    raw = options.raw(ReadConfig.FILE_GROUPS)
    if raw is None:
        return None
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, list):
            raise TypeError("not a list")
        groups = frozenset((str(p), str(f)) for p, f in parsed)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{ReadConfig.FILE_GROUPS.key} on table {table.base_path}: expected a JSON list of "
                          f"[partition path, file id] pairs: {exc}") from None
    return groups


def completion_time_range(commits: list[Instant], begin: str, end: str | None) -> tuple[str, str, list[Instant]]:
    """An incremental range of a Hudi 1.x table (timeline layout 2), whose bounds are *completion* times (Hudi 1.x
    ``IncrementalQueryAnalyzer``; hudi-rs 0.5.0 reads so too): the commits that completed in ``(begin, end]``,
    and the requested-time bounds ``(b, e]`` the planner and the log/row filters then use: ``e`` the latest
    requested time of those commits (the snapshot the read sees), ``b`` one millisecond before the earliest.

    Args:
        commits: completed write instants (sorted by requested time), with completion times.
        begin: exclusive lower bound (completion time; digits compare as strings, so prefixes work).
        end: inclusive upper bound, or ``None`` for no bound.

    Returns:
        ``(b, e, commits in range)``; with no commit in range, ``(begin, begin, [])``: nothing to read.

    Where this differs from Hudi: rows are kept by commit time in ``(b, e]``, not by membership in the set of
    commits; an instant requested inside that span but completed outside the range (concurrent writers) would
    be read too.
    """
    in_range = [i for i in commits
                if begin < (i.completion_time or i.timestamp) and (end is None or (i.completion_time or i.timestamp) <= end)]
    if not in_range:
        return begin, begin, []
    head = in_range[0].timestamp
    return f"{int(head) - 1:0{len(head)}d}", in_range[-1].timestamp, in_range


def plan_query(
    table: Table, options: HoodieConfig, partition_filter: Callable[[str], bool] | None = None
) -> QueryPlan:
    """Plan a read of ``table``.

    Args:
        table: the table.
        options: read options (``hoodie.datasource.query.type``, ``as.of.instant``,
            ``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``, ``hoodie.query.as.ro.table``),
            and sqlext's internal ``sqlext.read.pinned.instant`` (a snapshot or read-optimized read without
            ``as.of.instant`` reads as of that instant when newer commits completed since) and
            ``sqlext.read.file.groups`` (only these file groups; :func:`file_groups_option`), with
            ``sqlext.read.log.records.only`` (their slices without their base files).
        partition_filter: keeps only partitions for which it returns True (partition pruning).

    Raises:
        ConfigError: bad query type or instant, an incremental query without a begin instant, or a malformed
            ``sqlext.read.file.groups``.
        TimeTravelError: ``as.of.instant`` (or an incremental end instant, without
            ``hoodie.datasource.read.incr.fallback.fulltablescan.enable``) is before what the cleaner and the
            archiver kept (:mod:`engine.read.retention`).
    """
    raw_type = options.get(ReadConfig.QUERY_TYPE).strip().lower()
    if options.get_optional(ReadConfig.QUERY_AS_RO_TABLE):
        raw_type = QueryType.READ_OPTIMIZED.value
    try:
        query_type = QueryType(raw_type)
    except ValueError:
        raise ConfigError(f"hoodie.datasource.query.type: unknown query type {raw_type!r} for table "
                          f"{table.base_path}") from None
    timeline = table.timeline
    completed = [i.timestamp for i in timeline.completed_commits()]
    as_of = options.raw(ReadConfig.AS_OF_INSTANT)
    as_of = normalize_instant(as_of) if as_of else None
    if as_of is not None and query_type is not QueryType.INCREMENTAL:
        load_window(table).check_as_of(as_of)
    pinned = options.raw(ReadConfig.PINNED_INSTANT)
    if pinned and as_of is None and query_type is not QueryType.INCREMENTAL and completed and completed[-1] > pinned:
        as_of = normalize_instant(pinned)  # commits completed since the query was planned: read what it saw
    only_groups = _file_groups(options, table)
    logs_only = only_groups is not None and bool(options.get(ReadConfig.LOG_RECORDS_ONLY))
    begin = end = None
    touched: set[str] | None = None
    if query_type is QueryType.INCREMENTAL:
        raw_begin = options.raw(ReadConfig.BEGIN_INSTANTTIME)
        if not raw_begin:
            raise ConfigError(f"incremental query on {table.base_path} needs "
                              f"'{ReadConfig.BEGIN_INSTANTTIME.key}'")
        incremental_format = options.get(ReadConfig.INCREMENTAL_FORMAT).strip().lower()
        if incremental_format != "latest_state":
            expected = ("CDC queries are planned by engine.read.cdc.plan_cdc" if incremental_format == "cdc"
                        else "expected 'latest_state' or 'cdc'")
            raise ConfigError(f"{ReadConfig.INCREMENTAL_FORMAT.key}={incremental_format!r} on table "
                              f"{table.base_path}: {expected}")
        begin = _incremental_bound(raw_begin)
        raw_end = options.raw(ReadConfig.END_INSTANTTIME)
        if table.is_hudi_1x:
            commits = timeline.completed_commits()
            archived_begin = bool(commits) and begin < (commits[0].completion_time or commits[0].timestamp)
            begin, end, in_range = completion_time_range(commits, begin,
                                                         _incremental_bound(raw_end) if raw_end else None)
        else:
            end = _incremental_bound(raw_end) if raw_end else (completed[-1] if completed else begin)
            in_range = [i for i in timeline.completed_commits() if begin < i.timestamp <= end]
            archived_begin = bool(completed) and begin < completed[0]
        as_of = end
        fallback = options.get(ReadConfig.INCR_FALLBACK_FULL_TABLE_SCAN)
        window = load_window(table)
        end_cleaned = not window.readable_as_of(end)
        if end_cleaned and not fallback:
            window.check_incremental_end(end, ReadConfig.INCR_FALLBACK_FULL_TABLE_SCAN.key)
        if (archived_begin or end_cleaned) and fallback:
            # Hudi IncrementalRelation: the latest snapshot, rows with commit time in (begin, end].
            as_of = None
            if in_range:
                end = in_range[-1].timestamp
        else:
            if archived_begin and in_range:
                # Hudi reads the active commits of the range only: rows from its first one on.
                head = in_range[0].timestamp
                begin = f"{int(head) - 1:0{len(head)}d}"
            touched = set()
            for instant in in_range:
                touched.update(stat.file_id for stat in table.commit_metadata(instant).all_write_stats())
    visible = frozenset(t for t in completed if as_of is None or t <= as_of)
    view = table.file_system_view(as_of)
    splits = []
    group_partitions = None if only_groups is None else {p for p, _ in only_groups}
    for partition in view.partition_paths():
        if partition_filter is not None and not partition_filter(partition):
            continue
        if group_partitions is not None and partition not in group_partitions:
            continue
        for slice_ in view.latest_file_slices(partition):
            if touched is not None and slice_.file_id not in touched:
                continue
            if only_groups is not None and (partition, slice_.file_id) not in only_groups:
                continue
            logs = () if query_type is QueryType.READ_OPTIMIZED else tuple(lf.path for lf in slice_.log_files)
            base = slice_.base_file
            if logs_only and logs:
                base = None  # Spark's parquet scan reads the base rows the logs leave alone
            if base is None and not logs:
                continue
            size = (base.size if base else 0) + sum(lf.size for lf in slice_.log_files if lf.path in logs)
            splits.append(ReadSplit(partition, slice_.file_id, slice_.base_instant,
                                    base.path if base else None, logs, size, base.mtime_ms if base else 0))
    evolution = SchemaEvolution.of(table, as_of)
    merge = None
    if table.is_mor and query_type is not QueryType.READ_OPTIMIZED and any(s.log_files for s in splits):
        merge = replace(MergeSettings.from_table(table, options), evolution=evolution)
    pending = frozenset(i.timestamp for i in timeline.pending_commits())
    partition_columns = partition_columns_of(table, query_type, options)
    return QueryPlan(tuple(splits), query_type, as_of, begin, end, visible,
                     completed[0] if completed else None, pending, merge, evolution, partition_columns)
