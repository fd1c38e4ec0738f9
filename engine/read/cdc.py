"""CDC queries: one row per change of every record in ``(begin, end]`` (Hudi ``HoodieCDCExtractor``, Spark
``CDCRelation`` / ``HoodieCDCRDD``).

Options: ``hoodie.datasource.query.type=incremental``, ``hoodie.datasource.query.incremental.format=cdc``,
``hoodie.datasource.read.begin.instanttime`` (required; ``earliest`` = ``000``) and ``...end.instanttime``
(default: the last instant of the active timeline). Rows: ``op`` (``i``/``u``/``d``), ``ts_ms`` (the
instant), ``before`` and ``after`` (JSON text, :mod:`engine.read.cdc_json`).

**Planning** (:func:`plan_cdc`, driver) — completed ``commit``/``deltacommit``/``replacecommit`` instants in
range whose operation changes data (Hudi ``WriteOperationType.isDataChange``: not compaction, clustering or
schema changes). Each write stat gives one :class:`CdcFileSplit` of its file group, by inference case
(``HoodieCDCInferenceCase``):

* ``AS_IS``: the stat has ``cdcStats`` — read the CDC log (with the previous base file for ``OP_KEY_ONLY``
  before images and the new base file for ``OP_KEY_ONLY`` / ``DATA_BEFORE`` after images);
* ``BASE_FILE_INSERT``: a new base file of inserts only — every row inserted;
* ``BASE_FILE_DELETE``: a rewrite that left nothing — every row of the previous base file deleted;
* ``LOG_FILE``: a merge-on-read log append — its records compared with the file slice before it (base
  file and the slice's other log files listed in the deltacommit);
* ``REPLACE_COMMIT``: a file group replaced (``INSERT OVERWRITE``, ``DELETE PARTITION``) — every row of its
  latest slice deleted.

**Reading** (:func:`read_cdc_group`, executors, pure pyarrow) — one file group's splits in instant order.

Errors as Hudi's: a table without ``hoodie.table.cdc.enabled`` ("It isn't a CDC hudi table on ..."), no
begin instant, begin after end, and a stat that rewrote a file without a CDC log (written before CDC was
enabled) — each a :class:`~engine.errors.ConfigError` naming the table (and file).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, ReadConfig, TableConfig
from engine.errors import ConfigError, UnsupportedTable
from engine.filegroup.naming import is_log_file, parse_base_file_name
from engine.formats.avro_schema import META_FIELDS, add_meta_fields, avro_to_arrow
from engine.formats.cdc import (
    CDC_AFTER_IMAGE,
    CDC_BEFORE_IMAGE,
    CDC_COLUMNS,
    CDC_OPERATION_TYPE,
    CDC_RECORD_KEY,
    DELETE,
    INSERT,
    UPDATE,
    SupplementalLoggingMode,
)
from engine.formats.conform import conform_table, field_values
from engine.formats.log_format import CdcDataBlock, read_log_blocks
from engine.keygen import KeyGenerator
from engine.read.cdc_json import avro_json, row_json
from engine.read.file_group_reader import read_split
from engine.read.log_merger import merge_log_blocks, scan_log_blocks, work_schema
from engine.read.log_scan import MergeSettings
from engine.read.planner import QueryPlan, QueryType, ReadSplit, _incremental_bound, partition_columns_of
from engine.read.record_buffer import _greater
from engine.read.retention import load_window
from engine.schema.history import SchemaEvolution
from engine.storage import Storage
from engine.table import Table
from engine.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT

logger = logging.getLogger(__name__)

CDC_SCHEMA = pa.schema([pa.field(name, pa.string()) for name in CDC_COLUMNS])
"""Arrow schema of CDC query rows: ``op``, ``ts_ms``, ``before``, ``after`` (strings)."""

DATA_CHANGE_OPERATIONS = frozenset({"INSERT", "UPSERT", "DELETE", "BULK_INSERT", "DELETE_PARTITION",
                                    "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE", "BOOTSTRAP"})
"""Operations whose commits a CDC query reads (Hudi ``WriteOperationType.isDataChange``)."""

_KEY = META_FIELDS[2]


class CdcInferCase(Enum):
    """How the changes of one file group in one commit are found (Hudi ``HoodieCDCInferenceCase``)."""

    AS_IS = "AS_IS"
    BASE_FILE_INSERT = "BASE_FILE_INSERT"
    BASE_FILE_DELETE = "BASE_FILE_DELETE"
    LOG_FILE = "LOG_FILE"
    REPLACE_COMMIT = "REPLACE_COMMIT"


@dataclass(frozen=True)
class SliceFiles:
    """The files of a file slice to read an image from (absolute paths).

    Attributes:
        base_file: the base file, or None (log-only slice).
        log_files: its log files in log order.
    """

    base_file: str | None
    log_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class CdcFileSplit:
    """One file group's changes in one commit (Hudi ``HoodieCDCFileSplit``).

    Attributes:
        instant: the commit.
        case: how the changes are found.
        cdc_files: absolute paths: the CDC logs (``AS_IS``), the new base file (``BASE_FILE_INSERT``) or the
            appended log file (``LOG_FILE``); empty otherwise.
        before: the slice holding the before images, when the case needs one.
        after: the slice holding the after images (``AS_IS`` with ``OP_KEY_ONLY`` / ``DATA_BEFORE``).
    """

    instant: str
    case: CdcInferCase
    cdc_files: tuple[str, ...] = ()
    before: SliceFiles | None = None
    after: SliceFiles | None = None


@dataclass(frozen=True)
class CdcFileGroupSplit:
    """The changes of one file group, in instant order (one Spark task reads one or more of these).

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        splits: its :class:`CdcFileSplit` s, sorted by instant.
    """

    partition_path: str
    file_id: str
    splits: tuple[CdcFileSplit, ...]


@dataclass(frozen=True)
class CdcPlan:
    """A planned CDC query.

    Attributes:
        groups: file groups with changes.
        mode: the table's supplemental logging mode.
        table_schema: the table's latest Arrow schema with meta columns (images read from files use it).
        read_plan: settings for reading file slices (merge, evolution, committed instants).
        begin: lower bound (exclusive).
        end: upper bound (inclusive).
        table_config: ``hoodie.properties`` items (virtual keys of tables without meta fields).
    """

    groups: tuple[CdcFileGroupSplit, ...]
    mode: SupplementalLoggingMode
    table_schema: pa.Schema
    read_plan: QueryPlan
    begin: str
    end: str
    table_config: tuple[tuple[str, str], ...]


def is_cdc_query(options: HoodieConfig) -> bool:
    """Whether ``options`` ask for a CDC query (incremental query type, ``cdc`` format)."""
    query_type = options.get(ReadConfig.QUERY_TYPE).strip().lower()
    return query_type == QueryType.INCREMENTAL.value and \
        options.get(ReadConfig.INCREMENTAL_FORMAT).strip().lower() == "cdc"


def _range(table: Table, options: HoodieConfig) -> tuple[str, str]:
    raw_begin = options.raw(ReadConfig.BEGIN_INSTANTTIME)
    if not raw_begin:
        raise ConfigError(f"CDC Query should provide the valid start version or timestamp "
                          f"('{ReadConfig.BEGIN_INSTANTTIME.key}') for table {table.base_path}")
    begin = "000" if raw_begin.strip().lower() == "earliest" else _incremental_bound(raw_begin)
    raw_end = options.raw(ReadConfig.END_INSTANTTIME)
    if raw_end:
        end = _incremental_bound(raw_end)
    else:
        instants = [i.timestamp for i in table.timeline]
        if not instants:
            raise ConfigError(f"No valid instant in Active Timeline of table {table.base_path}.")
        end = max(instants)
    if begin > end:
        raise ConfigError(f"This is not a valid range between {begin} and {end} (table {table.base_path})")
    return begin, end


def _read_plan(table: Table, options: HoodieConfig) -> QueryPlan:
    timeline = table.timeline
    completed = [i.timestamp for i in timeline.completed_commits()]
    evolution = SchemaEvolution.of(table, None)
    merge = replace(MergeSettings.from_table(table, options), evolution=evolution)
    partition_columns = partition_columns_of(table, QueryType.INCREMENTAL, options)  # dropped columns only
    return QueryPlan((), QueryType.SNAPSHOT, None, None, None, frozenset(completed),
                     completed[0] if completed else None,
                     frozenset(i.timestamp for i in timeline.pending_commits()), merge, evolution,
                     partition_columns)


def plan_cdc(table: Table, options: HoodieConfig) -> CdcPlan:
    """Plan a CDC query of ``table``.

    Args:
        table: the table.
        options: read options (begin/end instants).

    Raises:
        ConfigError: CDC not enabled on the table; no begin instant; begin after end; an unknown
            supplemental logging mode; a commit in range that rewrote a file without writing a CDC log.
        TimeTravelError: the range needs changes of commits the cleaner or the archiver no longer keeps
            (:mod:`engine.read.retention`).
        UnsupportedTable: a Hudi 1.x table (its CDC ranges are completion times and its CDC logs are named after
            their delta commits: not implemented).
    """
    if table.is_hudi_1x:
        raise UnsupportedTable(f"CDC query on {table.base_path}: reading the change data of Hudi 1.x tables (table "
                               f"version {table.table_version}) is not implemented")
    if not table.config.get(TableConfig.CDC_ENABLED):
        raise ConfigError(f"It isn't a CDC hudi table on {table.base_path} (set hoodie.table.cdc.enabled=true "
                          "when the table is created)")
    mode = SupplementalLoggingMode.parse(table.config.raw(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE),
                                         table.base_path)
    begin, end = _range(table, options)
    load_window(table).check_changes(begin, end)
    storage = table.storage
    avro = table.latest_avro_schema(include_meta=False)
    schema = avro_to_arrow(add_meta_fields(avro)) if avro is not None else pa.schema([])

    def absolute(relative: str) -> str:
        return storage.join(table.base_path, relative)

    def partition_file(partition: str, name: str) -> str:
        return storage.join(table.base_path, partition, name) if partition else absolute(name)

    base_files: dict[tuple[str, str, str], str] = {}
    view = table.file_system_view()

    def base_file_at(partition: str, file_id: str, instant: str) -> str | None:
        if not base_files:
            for group in view.all_file_groups(include_replaced=True):
                for file_slice in group.slices:
                    if file_slice.base_file is not None:
                        base_files[(group.partition_path, group.file_id, file_slice.base_instant)] = \
                            file_slice.base_file.path
        return base_files.get((partition, file_id, instant))

    groups: dict[tuple[str, str], list[CdcFileSplit]] = {}
    for instant in table.timeline.completed_commits():
        if instant.action not in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT) or not begin < instant.timestamp <= end:
            continue
        metadata = table.commit_metadata(instant)
        if metadata.operation_type.upper() not in DATA_CHANGE_OPERATIONS:
            continue
        ts = instant.timestamp
        for partition, stat in metadata.iter_write_stats():
            if not stat.file_id or not stat.path:
                continue
            where = f"commit {ts} of table {table.base_path}, file {stat.path}"
            name = stat.path.rsplit("/", 1)[-1]
            if stat.cdc_stats:
                cdc_files = tuple(absolute(p) for p in stat.cdc_stats)
                before = after = None
                if mode is not SupplementalLoggingMode.DATA_BEFORE_AFTER:
                    after = SliceFiles(absolute(stat.path))
                    if mode is SupplementalLoggingMode.OP_KEY_ONLY:
                        previous = base_file_at(partition, stat.file_id, stat.prev_commit)
                        if previous is None:
                            raise ConfigError(f"{where}: can not get the previous version of the base file "
                                              f"(instant {stat.prev_commit}) for its before images")
                        before = SliceFiles(previous)
                split = CdcFileSplit(ts, CdcInferCase.AS_IS, cdc_files, before, after)
            elif is_log_file(name):
                if stat.log_files is None and stat.base_file is None:
                    raise ConfigError(f"{where}: a log file whose write stat does not list its file slice")
                logs = tuple(partition_file(partition, n) for n in (stat.log_files or []) if n != name)
                base = partition_file(partition, stat.base_file) if stat.base_file else None
                split = CdcFileSplit(ts, CdcInferCase.LOG_FILE, (absolute(stat.path),), SliceFiles(base, logs))
            elif parse_base_file_name(name) is not None:
                if stat.num_writes == 0 and stat.num_deletes != 0:
                    previous = base_file_at(partition, stat.file_id, stat.prev_commit)
                    if previous is None:
                        raise ConfigError(f"{where}: can not get the previous version of the base file "
                                          f"(instant {stat.prev_commit}) whose records were deleted")
                    split = CdcFileSplit(ts, CdcInferCase.BASE_FILE_DELETE, (), SliceFiles(previous))
                elif stat.num_update_writes == 0 and stat.num_deletes == 0 and stat.num_writes == stat.num_inserts:
                    split = CdcFileSplit(ts, CdcInferCase.BASE_FILE_INSERT, (absolute(stat.path),))
                else:
                    raise ConfigError(f"{where}: There should be a cdc log file (the commit rewrote the file "
                                      "without recording its changes; was hoodie.table.cdc.enabled off then?)")
            else:
                raise ConfigError(f"{where}: not a base or log file name")
            groups.setdefault((partition, stat.file_id), []).append(split)
        for partition, file_ids in metadata.replaced_file_ids().items():
            for file_id in file_ids:
                latest = next((g.latest_slice for g in view.file_groups(partition, include_replaced=True)
                               if g.file_id == file_id), None)
                if latest is None or (latest.base_file is None and not latest.log_files):
                    continue
                files = SliceFiles(latest.base_file.path if latest.base_file else None,
                                   tuple(lf.path for lf in latest.log_files))
                groups.setdefault((partition, file_id), []).append(
                    CdcFileSplit(ts, CdcInferCase.REPLACE_COMMIT, (), files))
    planned = tuple(CdcFileGroupSplit(p, f, tuple(sorted(s, key=lambda x: x.instant)))
                    for (p, f), s in sorted(groups.items()))
    return CdcPlan(planned, mode, schema, _read_plan(table, options), begin, end,
                   tuple(sorted(table.config.as_dict().items())))


# ------------------------------------------------------------------------------------------------------
# Reading
# ------------------------------------------------------------------------------------------------------


def _read_slice(storage: Storage, plan: CdcPlan, group: CdcFileGroupSplit, files: SliceFiles,
                as_of: str | None = None) -> pa.Table:
    """The rows of a slice in the table schema (merged when it has log files)."""
    split = ReadSplit(group.partition_path, group.file_id, "", files.base_file, files.log_files, 0)
    read_plan = replace(plan.read_plan, as_of=as_of) if as_of else plan.read_plan
    batches = list(read_split(storage, split, plan.table_schema, read_plan))
    return pa.Table.from_batches(batches, schema=plan.table_schema)


def _keys(plan: CdcPlan, rows: pa.Table) -> pa.Array:
    if plan.read_plan.merge is None or plan.read_plan.merge.populate_meta_fields:
        column = rows.column(_KEY)
        return (column.combine_chunks() if column.num_chunks else pa.array([], pa.string())).cast(pa.string())
    return KeyGenerator.from_config(HoodieConfig(dict(plan.table_config))).record_keys(rows)


def _rows(ops: list[str], ts: str, before: list[str | None], after: list[str | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(ops, pa.string()), pa.array([ts] * len(ops), pa.string()),
         pa.array(before, pa.string()), pa.array(after, pa.string())], schema=CDC_SCHEMA)


def _take(rows: pa.Table, indices: np.ndarray) -> pa.Table:
    return rows.take(pa.array(indices, pa.int64()))


def _as_is(storage: Storage, plan: CdcPlan, group: CdcFileGroupSplit, split: CdcFileSplit) -> pa.RecordBatch:
    tables = []
    for path in split.cdc_files:
        for block in read_log_blocks(storage, path):
            if isinstance(block, CdcDataBlock):
                tables.append(block.to_table())
    if not tables:
        return _rows([], split.instant, [], [])
    records = pa.concat_tables(tables, promote_options="permissive")
    ops = [str(op) for op in records.column(CDC_OPERATION_TYPE).to_pylist()]
    if plan.mode is SupplementalLoggingMode.DATA_BEFORE_AFTER:
        return _rows(ops, split.instant, list(avro_json(records.column(CDC_BEFORE_IMAGE))),
                     list(avro_json(records.column(CDC_AFTER_IMAGE))))
    keys = [str(k) for k in records.column(CDC_RECORD_KEY).to_pylist()]
    after_rows = _read_slice(storage, plan, group, split.after) if split.after else plan.table_schema.empty_table()
    after_index = {k: i for i, k in enumerate(_keys(plan, after_rows).to_pylist())}
    after_json = row_json(after_rows)
    after: list[str | None] = [after_json[after_index[k]] if op != DELETE and k in after_index else None
                               for op, k in zip(ops, keys, strict=True)]
    if plan.mode is SupplementalLoggingMode.DATA_BEFORE:
        return _rows(ops, split.instant, list(avro_json(records.column(CDC_BEFORE_IMAGE))), after)
    before_rows = (_read_slice(storage, plan, group, split.before) if split.before
                   else plan.table_schema.empty_table())
    before_index = {k: i for i, k in enumerate(_keys(plan, before_rows).to_pylist())}
    before_json = row_json(before_rows)
    before: list[str | None] = [before_json[before_index[k]] if op != INSERT and k in before_index else None
                                for op, k in zip(ops, keys, strict=True)]
    return _rows(ops, split.instant, before, after)


def _log_file(storage: Storage, plan: CdcPlan, group: CdcFileGroupSplit, split: CdcFileSplit) -> pa.RecordBatch:
    """Changes of a log append: its records against the slice before it (Hudi ``loadNextLogRecord``)."""
    ts = split.instant
    before_rows = (_read_slice(storage, plan, group, split.before, as_of=ts) if split.before
                   else plan.table_schema.empty_table())
    before_keys = _keys(plan, before_rows)
    settings = plan.read_plan.merge
    if settings is None:
        raise ConfigError(f"CDC of log file {split.cdc_files[0]}: the table has no merge settings")
    read_plan = replace(plan.read_plan, as_of=ts)
    blocks = scan_log_blocks(storage, split.cdc_files, read_plan.block_filter())
    work = work_schema(plan.table_schema, settings)
    merged = merge_log_blocks(blocks, work, settings, context=split.cdc_files[0])
    records = conform_table(merged.records, plan.table_schema, context=split.cdc_files[0])
    index = pc.index_in(merged.record_keys, value_set=before_keys)
    found = np.asarray(index.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    at = np.asarray(pc.fill_null(index, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    soft = np.asarray(merged.soft_deleted.to_numpy(zero_copy_only=False), dtype=bool)
    inserts = np.nonzero(~soft & ~found)[0]
    candidates = np.nonzero(~soft & found)[0]
    if len(candidates) and settings.event_time_ordering and settings.precombine_field:
        stored = field_values(_take(before_rows, at[candidates]), settings.precombine_field)
        incoming = field_values(_take(records, candidates), settings.precombine_field)
        if stored is not None and incoming is not None:
            kept = np.asarray(pc.fill_null(_greater(stored, incoming), False).to_numpy(zero_copy_only=False),
                              dtype=bool)
            candidates = candidates[~kept]
    if len(candidates):
        old = _take(before_rows, at[candidates]).to_pylist()
        new = _take(records, candidates).to_pylist()
        candidates = candidates[np.array([a != b for a, b in zip(old, new, strict=True)], dtype=bool)]
    deleted_before = at[np.nonzero(soft & found)[0]]
    gone = pc.index_in(merged.deleted_keys, value_set=before_keys)
    deleted_before = np.concatenate([deleted_before, np.asarray(
        pc.drop_null(gone).to_numpy(zero_copy_only=False), dtype=np.int64)])
    after_json = row_json(_take(records, np.concatenate([candidates, inserts])))
    old_json = row_json(_take(before_rows, np.concatenate([at[candidates], deleted_before])))
    n_upd, n_ins, n_del = len(candidates), len(inserts), len(deleted_before)
    ops = [UPDATE] * n_upd + [INSERT] * n_ins + [DELETE] * n_del
    before: list[str | None] = [*old_json[:n_upd], *([None] * n_ins), *old_json[n_upd:]]
    after: list[str | None] = [*after_json, *([None] * n_del)]
    return _rows(ops, ts, before, after)


def read_cdc_group(storage: Storage, plan: CdcPlan, group: CdcFileGroupSplit) -> Iterator[pa.RecordBatch]:
    """The change rows of one file group, commit by commit, as batches of :data:`CDC_SCHEMA`.

    Raises:
        CorruptFile: an unreadable CDC log, base or log file.
        StorageError: a file of the plan is missing.
        ConfigError: a log append without merge settings.
    """
    for split in group.splits:
        if split.case is CdcInferCase.AS_IS:
            batch = _as_is(storage, plan, group, split)
        elif split.case is CdcInferCase.LOG_FILE:
            batch = _log_file(storage, plan, group, split)
        elif split.case is CdcInferCase.BASE_FILE_INSERT:
            rows = _read_slice(storage, plan, group, SliceFiles(split.cdc_files[0]))
            batch = _rows([INSERT] * rows.num_rows, split.instant, [None] * rows.num_rows, list(row_json(rows)))
        else:  # BASE_FILE_DELETE, REPLACE_COMMIT
            assert split.before is not None
            rows = _read_slice(storage, plan, group, split.before)
            batch = _rows([DELETE] * rows.num_rows, split.instant, list(row_json(rows)), [None] * rows.num_rows)
        if batch.num_rows:
            yield batch


__all__ = [
    "CDC_SCHEMA",
    "DATA_CHANGE_OPERATIONS",
    "CdcFileGroupSplit",
    "CdcFileSplit",
    "CdcInferCase",
    "CdcPlan",
    "SliceFiles",
    "is_cdc_query",
    "plan_cdc",
    "read_cdc_group",
]
