"""Which file slices of a query Spark's own parquet scan may read (Hudi ``BaseFileOnlyRelation`` /
``HoodieFileIndex``: copy-on-write snapshot and read-optimized queries are a ``HadoopFsRelation`` over the
latest base files with Spark's ``ParquetFileFormat``).

sqlext's session catalog asks :func:`plan_parquet_read` while Spark analyses a query (through the Py4J
callback in :mod:`sqlext.jvm.read_planner`). A slice without log files is a base file whose rows are the
slice's rows, so Spark's parquet reader — vectorized, with column pruning and predicate push-down — reads
it as the file-group reader would, as long as reading columns *by name* into the query's types gives what
:func:`engine.formats.conform.conform_table` gives. The answer is :class:`ParquetReadPlan`: the base files
for Spark, the file groups with log files for the Python merge (:mod:`engine.read.file_group_reader`),
or a reason why the whole query stays on the Python reader.

A slice with log files is split when a log record wins over its base row whatever the base row holds
(:func:`_split_merge_keys`): Spark's scan reads its base file less the first row of each record key the logs
name (:attr:`ParquetReadPlan.keyed_files`, keys from :mod:`engine.read.log_keys`), and the Python reader returns
the log records only (``sqlext.read.log.records.only``) — Hudi's ``HoodieMergeOnReadRDD`` with its log record map
reduced to keys on the JVM side. Decided conservatively; the Python reader keeps:

* incremental and CDC queries (commit-time filtering, change images);
* tables whose schema evolved on read (``.hoodie/.schema``: files are read by column id, renamed and
  retyped columns), tables whose data files leave out the partition columns
  (``hoodie.datasource.write.drop.partition.columns``), bootstrapped tables, non-parquet base files;
* tables on stores other than the local file system (Spark's Hadoop file systems are not configured for
  the stores pyarrow opens);
* a query schema with non-nullable fields (Spark's reader refuses a file lacking a required column; the
  Python reader fills nulls);
* a query whose columns a base file's schema (that of the commit which wrote it, or of the table's
  creation for archived commits) holds with another type or another spelling (Spark's parquet reader
  would fail or, with a case-sensitive session, read nulls where the Python reader casts).

:func:`prune_partitions` prunes the base files' partitions with the predicates Spark pushes to the scan.
"""

from __future__ import annotations

import datetime
import logging
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, ReadConfig, TableConfig
from engine.errors import EngineError
from engine.formats.avro_schema import META_FIELDS, avro_to_arrow, parse_avro_schema
from engine.read.cdc import is_cdc_query
from engine.read.log_keys import log_record_count, slice_log_keys
from engine.read.planner import (
    QueryPlan,
    QueryType,
    ReadSplit,
    normalize_instant,
    plan_query,
    takes_path_value,
)
from engine.read.pruning import Predicate, partition_filter
from engine.table import Table

logger = logging.getLogger(__name__)

_BOOTSTRAP_BASE_PATH = "hoodie.bootstrap.base.path"


@dataclass(frozen=True)
class ParquetFile:
    """One base file Spark's parquet scan reads.

    Attributes:
        path: local absolute path (no scheme).
        size: bytes.
        mtime_ms: modification time, milliseconds since the epoch (0 when unknown).
        partition_path: the slice's relative partition path (``""`` non-partitioned).
    """

    path: str
    size: int
    mtime_ms: int
    partition_path: str


@dataclass(frozen=True)
class KeyedParquetFile:
    """The base file of a slice with log files, which Spark's parquet scan reads less the rows whose record keys
    the slice's logs name (the first row with each such key; later rows with that key, duplicates written by
    ``insert``, stay as stored, as in the Python merge). The keys are read when the query runs
    (:func:`log_keys_of`), not when it is planned: a statement that only analyses a read pays nothing.

    Attributes:
        file: the base file.
        file_id: its file group.
    """

    file: ParquetFile
    file_id: str


@dataclass(frozen=True)
class ParquetReadPlan:
    """How one snapshot or read-optimized query splits between Spark's parquet scan and the Python reader.

    Attributes:
        reason: why the whole query stays on the Python reader, or None when Spark reads :attr:`files`.
        base_path: the table's base path (local, no scheme).
        pinned_instant: the instant the plan was made at: ``as.of.instant`` for time travel, else the latest
            completed commit (None for a table without commits). The Python part reads with
            ``sqlext.read.pinned.instant`` set to it, so both parts see one snapshot.
        files: base files of the slices without log files (Spark's parquet scan).
        merged_groups: ``(partition path, file id)`` of the slices with log files (the Python reader, with
            ``sqlext.read.file.groups``).
        keyed_files: when set, the merge of :attr:`merged_groups` is split: Spark's parquet scan reads these
            base files less the rows their logs name, and the Python reader reads :attr:`merged_groups` without
            their base files (``sqlext.read.log.records.only``): the log records that win. Empty when every
            slice with log files is merged whole by the Python reader.
        path_columns: the partition columns Spark's scan takes from :attr:`path_values` instead of the files
            (query spelling; :class:`engine.read.planner.PartitionColumns`), empty when none.
        path_values: partition path → the values of :attr:`path_columns` there, as text Spark's types parse
            (``yyyy-MM-dd`` dates, ``NaN``/``Infinity`` floats) or None for null.
    """

    reason: str | None
    base_path: str
    pinned_instant: str | None = None
    files: tuple[ParquetFile, ...] = ()
    merged_groups: tuple[tuple[str, str], ...] = ()
    path_columns: tuple[str, ...] = ()
    path_values: tuple[tuple[str, tuple[str | None, ...]], ...] = ()
    keyed_files: tuple[KeyedParquetFile, ...] = ()

    @property
    def mode(self) -> str:
        """``python`` (everything through the Python reader), ``parquet`` (everything through Spark's parquet
        scan) or ``union`` (both, each its own file groups)."""
        if self.reason is not None:
            return "python"
        return "union" if self.merged_groups else "parquet"


_MIN_PARQUET_BYTES = 12
"""``PAR1``, the 4-byte footer length and ``PAR1``: no parquet file is shorter."""


def _python(base_path: str, reason: str) -> ParquetReadPlan:
    return ParquetReadPlan(reason, base_path)


def _local_path(path: str) -> str | None:
    """``path`` as an absolute local path (no scheme), or None when it lives on another store."""
    if "://" in path:
        scheme, rest = path.split("://", 1)
        if scheme.lower() != "file":
            return None
        path = "/" + rest.lstrip("/")
    elif path.startswith("file:"):
        path = "/" + path.removeprefix("file:").lstrip("/")
    return os.path.abspath(path)


def _all_nullable(dtype: pa.DataType) -> bool:
    """Whether every nested field of ``dtype`` is nullable."""
    if pa.types.is_struct(dtype):
        return all(dtype.field(i).nullable and _all_nullable(dtype.field(i).type) for i in range(dtype.num_fields))
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return bool(dtype.value_field.nullable) and _all_nullable(dtype.value_type)
    if pa.types.is_map(dtype):
        return bool(dtype.item_field.nullable) and _all_nullable(dtype.item_type)
    return True


def reads_alike(file_type: pa.DataType, query_type: pa.DataType) -> bool:
    """Whether Spark's parquet reader reads a column stored as ``file_type`` into ``query_type`` giving the
    values the Python reader's cast gives: equal types (list item and map entry names and nullability
    aside); timestamps of another unit (milli- or microseconds) with the same time zone presence; 32-bit
    integers read as ``TINYINT``/``SMALLINT`` (Hudi's Avro schemas store those as ``int``); structs whose
    members present in both read alike and are spelled alike.
    """
    if file_type.equals(query_type):
        return True
    if pa.types.is_struct(file_type) and pa.types.is_struct(query_type):
        members = {file_type.field(i).name.lower(): file_type.field(i) for i in range(file_type.num_fields)}
        for i in range(query_type.num_fields):
            wanted = query_type.field(i)
            found = members.get(wanted.name.lower())
            if found is not None and (found.name != wanted.name or not reads_alike(found.type, wanted.type)):
                return False
        return True
    lists = (pa.types.is_list, pa.types.is_large_list)
    if any(f(file_type) for f in lists) and any(f(query_type) for f in lists):
        return reads_alike(file_type.value_type, query_type.value_type)
    if pa.types.is_map(file_type) and pa.types.is_map(query_type):
        return reads_alike(file_type.key_type, query_type.key_type) and reads_alike(
            file_type.item_type, query_type.item_type)
    if pa.types.is_timestamp(file_type) and pa.types.is_timestamp(query_type):
        return (file_type.unit in ("ms", "us") and query_type.unit == "us"
                and (file_type.tz is None) == (query_type.tz is None))
    if pa.types.is_int32(file_type) and (pa.types.is_int8(query_type) or pa.types.is_int16(query_type)):
        return True
    strings = (pa.types.is_string, pa.types.is_large_string)
    if any(f(file_type) for f in strings) and any(f(query_type) for f in strings):
        return True
    binaries = (pa.types.is_binary, pa.types.is_large_binary)
    return any(f(file_type) for f in binaries) and any(f(query_type) for f in binaries)


def _schema_difference(file_schema: pa.Schema, query: pa.Schema) -> str | None:
    """The first query column ``file_schema`` holds with another type or spelling, described, or None."""
    stored = {f.name.lower(): f for f in file_schema}
    for field in query:
        if field.name in META_FIELDS:
            continue
        found = stored.get(field.name.lower())
        if found is None:
            continue  # added later: both readers give nulls
        if found.name != field.name:
            return f"column '{field.name}' is spelled '{found.name}' in files"
        if not reads_alike(found.type, field.type):
            return f"column '{field.name}' is stored as {found.type}, read as {field.type}"
    return None


def _written_schemas(table: Table, instants: Iterable[str]) -> dict[str, str | None]:
    """The Avro schema text each base instant's files were written with: that of the newest completed commit
    at or before it whose operation may change the schema (Hudi ``TableSchemaResolver``), else the table's
    create schema (None if neither). Each commit's metadata is read at most once."""
    commits = list(reversed(table.timeline.completed_commits()))  # newest first
    seen: dict[str, str | None] = {}  # commit time -> its usable schema text
    create = table.config.get_optional(TableConfig.CREATE_SCHEMA) or None
    schemas: dict[str, str | None] = {}
    for instant in sorted(set(instants), reverse=True):
        text: str | None = None
        for commit in commits:
            if commit.timestamp > instant:
                continue
            if commit.timestamp not in seen:
                metadata = table.commit_metadata(commit)
                seen[commit.timestamp] = (metadata.schema if metadata.schema and metadata.operation_type
                                          not in _SCHEMA_PRESERVING_OPERATIONS else None)
            text = seen[commit.timestamp]
            if text is not None:
                break
        schemas[instant] = text if text is not None else create
    return schemas


_SCHEMA_PRESERVING_OPERATIONS = frozenset({"CLUSTER", "COMPACT", "INDEX", "LOG_COMPACT"})
"""Operations whose commits keep the schema (Java ``WriteOperationType.canUpdateSchema`` is false)."""


def _ineligible_table(table: Table, options: HoodieConfig, query_type: QueryType) -> str | None:
    """Why no slice of this query goes to Spark's parquet scan (before planning), or None."""
    if is_cdc_query(options):
        return "CDC query"
    if query_type is QueryType.INCREMENTAL:
        return "incremental query (rows filtered by commit time)"
    if table.base_file_format.upper() != "PARQUET":
        return f"base file format {table.base_file_format}"
    if table.config.raw_value(_BOOTSTRAP_BASE_PATH):
        return "bootstrapped table"
    if table.dropped_partition_columns:
        return "data files leave out the partition columns (hoodie.datasource.write.drop.partition.columns)"
    if table.is_hudi_1x and any(k in table.keygen_class for k in ("TimestampBased", "Custom")):
        # Hudi 1.x declares such partition columns as strings in the table schema, while its files keep the
        # source type (a long): the Python reader converts them, Spark's scan would not.
        return "Hudi 1.x table with a timestamp-based or custom key generator (partition column types)"
    if _local_path(table.base_path) is None:
        return f"table on {table.base_path.split('://', 1)[0]} storage"
    return None


def _query_type(options: HoodieConfig) -> QueryType | None:
    """The query type as :func:`engine.read.planner.plan_query` reads it, or None for a value it refuses."""
    raw = options.get(ReadConfig.QUERY_TYPE).strip().lower()
    if options.get_optional(ReadConfig.QUERY_AS_RO_TABLE):
        raw = QueryType.READ_OPTIMIZED.value
    try:
        return QueryType(raw)
    except ValueError:
        return None


def plan_parquet_read(table: Table, options: HoodieConfig, query_schema: pa.Schema) -> ParquetReadPlan:
    """Plan a snapshot or read-optimized read of ``table`` producing ``query_schema``, splitting its latest
    slices between Spark's parquet scan and the Python reader (see the module doc for what stays Python).

    Args:
        table: the table.
        options: the read options (as the ``hudi`` data source gets them).
        query_schema: the columns the query reads (meta columns included), as Arrow.

    Returns:
        The plan; ``reason`` is set when nothing goes to Spark's parquet scan.

    Raises:
        EngineError: the table or its timeline cannot be read, or the options are invalid (the caller keeps
            the query on the Python reader, which reports the error).
    """
    base_path = _local_path(table.base_path) or table.base_path
    query_type = _query_type(options)
    if query_type is None:  # the Python reader names the bad value
        return _python(base_path, f"unknown query type {options.get(ReadConfig.QUERY_TYPE)!r}")
    reason = _ineligible_table(table, options, query_type)
    if reason is not None:
        return _python(base_path, reason)
    if not all(f.nullable and _all_nullable(f.type) for f in query_schema):
        return _python(base_path, "the query schema has non-nullable fields")
    plan: QueryPlan = plan_query(table, options)
    if plan.evolution is not None:
        return _python(base_path, "schema evolved on read (files are read by column id)")
    completed = [i.timestamp for i in table.timeline.completed_commits()]
    as_of = options.raw(ReadConfig.AS_OF_INSTANT)
    pinned = normalize_instant(as_of) if as_of else (completed[-1] if completed else None)
    base_only = [s for s in plan.splits if not s.log_files and s.base_file is not None]
    merged_splits = [s for s in plan.splits if s.log_files]
    merged = tuple(sorted({(s.partition_path, s.file_id) for s in merged_splits}))
    may_split = _may_split_merge(table, options, plan, query_schema, merged_splits)
    keyed_splits = [s for s in merged_splits if s.base_file is not None] if may_split else []
    if not base_only and not keyed_splits:
        return _python(base_path, "every file slice has log files" if merged else "no base files")
    for instant, text in _written_schemas(table, (s.base_instant for s in base_only + keyed_splits)).items():
        if text is None:
            continue
        try:
            written = avro_to_arrow(parse_avro_schema(text))
        except EngineError as exc:
            return _python(base_path, f"schema of commit {instant} unreadable: {exc}")
        difference = _schema_difference(written, query_schema)
        if difference is not None:
            return _python(base_path, f"base files of {instant}: {difference}")
    files = []
    for split in base_only + keyed_splits:
        assert split.base_file is not None
        local = _local_path(split.base_file)
        if local is None:
            return _python(base_path, f"base file {split.base_file} is not a local file")
        base_bytes = split.size_bytes if not split.log_files else table.storage.size(split.base_file)
        if base_bytes < _MIN_PARQUET_BYTES:
            # Spark's scan skips an empty file without a word; the Python reader names it as corrupt.
            return _python(base_path, f"base file {split.base_file} has {base_bytes} bytes, too few for "
                                      f"parquet")
        files.append(ParquetFile(local, base_bytes, split.base_mtime_ms, split.partition_path))
    keyed = tuple(KeyedParquetFile(file, split.file_id)
                  for file, split in zip(files[len(base_only):], keyed_splits, strict=True))
    columns, values = _path_values(plan, query_schema, sorted({f.partition_path for f in files}))
    return ParquetReadPlan(None, base_path, pinned, tuple(files[:len(base_only)]), merged, columns, values, keyed)


def _may_split_merge(table: Table, options: HoodieConfig, plan: QueryPlan, query_schema: pa.Schema,
                      merged_splits: Sequence[ReadSplit]) -> bool:
    """Whether the merge of the slices with log files may be split (:attr:`ParquetReadPlan.keyed_files`), which
    needs all of:

    * a log record must win over the base row whatever the base row holds: not for payloads under which a
      base row with a greater ordering value survives (``DefaultHoodieRecordPayload``, ``EventTimeAvroPayload``
      with a precombine field) or which fill a log record's nulls from the base row
      (``OverwriteNonDefaultsWithLatestAvroPayload``), nor for payloads this engine does not merge;
    * the base files hold ``_hoodie_record_key`` (``hoodie.populate.meta.fields``), and the query reads it;
    * the logs hold at most ``sqlext.read.log.keys.max`` records in all (:attr:`ReadConfig.LOG_KEYS_MAX`: their
      keys are read on the driver when the query runs and shipped to the scan), counted from the blocks' headers.

    Raises:
        EngineError: a log file cannot be read (the caller keeps the query on the Python reader, which reports
            it).
    """
    limit = options.get(ReadConfig.LOG_KEYS_MAX)
    settings = plan.merge
    if limit is None or limit <= 0 or settings is None or not merged_splits:
        return False
    if META_FIELDS[2] not in query_schema.names:
        return False
    try:
        if (not settings.populate_meta_fields or not settings.log_record_applies_once
                or settings.fills_nulls_from_base
                or (settings.event_time_ordering and settings.precombine_field)):
            return False
    except EngineError:  # a payload the merge does not implement: the Python reader says so
        return False
    block_filter = plan.block_filter()
    total = 0
    for split in merged_splits:
        if split.base_file is None:
            continue
        total += log_record_count(table.storage, split.log_files, block_filter)
        if total > limit:
            logger.info("Table %s: the logs hold more than %s=%d records; slices with log files are merged "
                        "whole by the Python reader", table.base_path, ReadConfig.LOG_KEYS_MAX.key, limit)
            return False
    return True


def log_keys_of(table: Table, options: HoodieConfig) -> dict[str, tuple[str, ...]]:
    """The record keys each base file of a split read must give up (:attr:`ParquetReadPlan.keyed_files`), read
    when the query runs: the read's options name its file groups (``sqlext.read.file.groups``) and the instant it
    was planned at (``sqlext.read.pinned.instant``).

    Returns:
        base file name → the keys its slice's applicable log blocks name (:func:`engine.read.log_keys.slice_log_keys`).

    Raises:
        EngineError: the table, its timeline or a log file cannot be read; a log record without a key.
    """
    plan = plan_query(table, options)
    block_filter = plan.block_filter()
    return {os.path.basename(split.base_file): tuple(slice_log_keys(table.storage, split.log_files,
                                                                    block_filter).to_pylist())
            for split in plan.splits if split.base_file is not None and split.log_files}


def _path_values(plan: QueryPlan, query_schema: pa.Schema, partitions: Sequence[str]
                 ) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str | None, ...]], ...]]:
    """:attr:`ParquetReadPlan.path_columns` and :attr:`ParquetReadPlan.path_values` for ``partitions``: the
    columns of ``plan.partition_columns`` the query reads, whose type takes a path value and whose every
    partition's value casts to it (as the Python reader fills them); none when a path does not parse (Hudi then
    reads the table as non-partitioned)."""
    columns = plan.partition_columns
    if columns is None or not columns.in_files:
        return (), ()
    parsed = []
    for partition in partitions:
        values = columns.values(partition)
        if values is None:
            return (), ()
        parsed.append(values)
    fields = {f.name.lower(): f for f in query_schema}
    names: list[str] = []
    texts: list[list[str | None]] = []
    for name in columns.names:
        field = fields.get(name.lower())
        if field is None or not takes_path_value(field.type):
            continue
        try:
            cast = pc.cast(pa.array([values[name.lower()] for values in parsed], pa.string()), field.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue  # a value Spark could not parse either: the stored values stand
        names.append(field.name)
        texts.append([_spark_text(value) for value in cast.to_pylist()])
    if not names:
        return (), ()
    return tuple(names), tuple((partition, tuple(column[i] for column in texts))
                               for i, partition in enumerate(partitions))


def _spark_text(value: object) -> str | None:
    """A cast partition value as text Java parses back to it (Spark's ``Double.toString`` spellings)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def prune_partitions(table: Table, partitions: Sequence[str], predicates: Sequence[Predicate]) -> list[str]:
    """The partitions of ``partitions`` that may hold rows matching every predicate (all of them when the
    predicates do not restrict partition columns; :func:`engine.read.pruning.partition_filter`)."""
    keep = partition_filter(table, predicates)
    if keep is None:
        return list(partitions)
    return [p for p in partitions if keep(p)]
