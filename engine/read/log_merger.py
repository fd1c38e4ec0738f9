"""Merge-on-read merging of one file slice: its log files folded per record key, then combined with the base
file (Hudi ``HoodieMergedLogRecordScanner`` + ``AbstractHoodieLogRecordReader.scanInternalV1`` for the log
scan, and the Spark ``HoodieMergeOnReadRDD`` / ``RecordMergingFileIterator`` for the base-file combine;
FORMAT.md §5.4 and §5.6).

**Log scan** (:func:`scan_log_blocks`, FORMAT.md §5.4). The slice's log files are read in log order (the
planner's order: base instant, version, write token) and their blocks in file order:

* a block whose ``INSTANT_TIME`` is after the query instant (``as.of.instant`` / incremental end, else the
  latest completed commit) is skipped. Java's ``scanInternalV1`` *stops* at the first such block; skipping
  is identical for single-writer logs (instants only grow along a slice) and keeps blocks of a slower
  concurrent writer that land after it;
* data and delete blocks whose instant is not committed are skipped: committed means a completed
  commit/deltacommit/replacecommit, or (Java ``containsOrBeforeTimelineStarts``) an instant older than the
  first completed commit, i.e. one whose commit was archived — unless that instant is still on the active
  timeline as a requested/inflight write (Java also skips blocks of inflight instants);
* incremental queries keep only data/delete blocks with instant in ``(begin, end]``;
* a ROLLBACK command block (``COMMAND_BLOCK_TYPE`` ``"0"``) drops every previously queued block whose
  instant equals its ``TARGET_INSTANT_TIME``; command blocks bypass the commit filter;
* corrupt regions (:class:`~engine.formats.log_format.CorruptBlock`) are skipped with a warning naming the
  file (Java queues and later ignores them); HFile/CDC blocks are skipped with a warning;
* blocks written twice by retried Spark tasks (``BLOCK_IDENTIFIER`` ``"<attempt>,<seq>"``, 0.14.1+
  ``reconcileSpuriousBlocksAndGetValidOnes``): per instant with several attempts only the attempt with the
  most blocks is kept (ties: the lowest attempt, as Java's ordered iteration does).

**Log fold** (:class:`LogRecordBuffer`, ``HoodieMergedLogRecordScanner.processNextRecord`` /
``processNextDeletedRecord``), processed block by block, vectorized within a block:

* record after record (same key): the buffered one is kept only when its ordering (precombine) value is
  strictly greater (``OverwriteWithLatestAvroPayload.preCombine``); ties go to the later record; null
  ordering values sort lowest; without a precombine field every record ties (commit order);
* record after a delete: the record wins (natural order for delete placeholders);
* delete after a buffered record: the delete is ignored only when its ``orderingVal`` is not ``Integer 0``,
  has the Java class of the record's ordering value (same wrapper as
  :func:`~engine.formats.log_format.ordering_wrapper_for` of the ordering column) and the record's value is
  greater; a null ``orderingVal`` counts as natural order. Deletes of keys absent from the log are kept
  (they delete base rows).

**Base combine** (payload ``combineAndGetUpdateValue``): a base row whose key has a log delete is dropped;
with a log record it is replaced by it (``OverwriteWithLatestAvroPayload``, the 0.14 default), or kept when
its ordering value is strictly greater (``DefaultHoodieRecordPayload`` / ``EventTimeAvroPayload``); log
records whose key is not in the base file are appended (inserts into logs, log-only slices). A log record
with ``_hoodie_is_deleted = true`` acts as a delete once it has won (``isDeleteRecord``).

**Memory** (Hudi ``ExternalSpillableMap``, done the Arrow way). Decoded log records are held as Arrow
tables (one per data block plus a small key index); superseded rows are compacted away when the buffer
exceeds ``hoodie.memory.merge.max.size`` (:class:`engine.config.MemoryConfig`, default 1 GiB). When the live
records alone still exceed it, the slice spills (:class:`SpilledLogRecords`): a private folder
``hudi-merge-*`` is created under ``hoodie.memory.spillable.map.path``, the records folded so far and every
remaining block are split by :func:`stable_key_hash` of the record key into K partitions written as Arrow
IPC files, and the merge then runs per group of partitions (about half the limit of spilled bytes each):
fold the group's pieces in log order, stream back the group's base rows (the base file is split by group
onto disk once, before the first group), append the group's log-only records. The result has the same rows as the in-memory merge (grouped by partition, so in
another order — the in-memory path does not keep base order either). The folder is removed when the merge
ends, fails or is closed. Costs: the base file is read once per group; log records are written and read
back once. Limits: one decoded log block is held whole while it is partitioned, and a single partition
larger than the limit (e.g. huge records) is merged in memory with a warning. Base files are streamed
batch by batch.

**Keys.** ``_hoodie_record_key``; tables with ``hoodie.populate.meta.fields=false`` use virtual keys built
from the record key fields by :class:`engine.keygen.KeyGenerator` (Java ``simpleKeyGenFields``).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from engine.config import HoodieConfig, MemoryConfig, TableConfig
from engine.errors import CorruptFile, SchemaMismatch, StorageError, UnsupportedTable
from engine.formats.avro_schema import META_FIELDS, add_meta_fields, avro_to_arrow
from engine.formats.conform import conform_array, conform_table, field_type, field_values
from engine.formats.log_format import (
    AvroDataBlock,
    CommandBlock,
    CorruptBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    ParquetDataBlock,
    load_block_content,
    ordering_wrapper_for,
    read_log_blocks,
)
from engine.read.base_reader import read_base_batches
from engine.schema.history import SchemaEvolution
from engine.storage import Storage
from engine.table import Table

logger = logging.getLogger(__name__)

COMMIT_TIME = META_FIELDS[0]
RECORD_KEY = META_FIELDS[2]
IS_DELETED = "_hoodie_is_deleted"
"""Soft-delete column honoured by Hudi payloads (``HoodieRecordPayload.isDeleteRecord``)."""

OVERWRITE_WITH_LATEST_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"
_LATEST_WINS_PAYLOADS = frozenset({OVERWRITE_WITH_LATEST_PAYLOAD})
_EVENT_TIME_PAYLOADS = frozenset({DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD})


@dataclass(frozen=True)
class MergeSettings:
    """Table-level settings of a merge (picklable; built once per query by the planner).

    Attributes:
        record_key_fields: ``hoodie.table.recordkey.fields``.
        precombine_field: ordering field (``hoodie.table.precombine.field``), a column or a dotted path into struct members, or None.
        payload_class: ``hoodie.compaction.payload.class`` (OverwriteWithLatestAvroPayload when unset).
        populate_meta_fields: False = virtual keys from ``record_key_fields``.
        table_schema: the table's Arrow schema with the meta columns (types of columns the merge needs but
            the query did not ask for), or None when the table has no schema yet.
        table_config: ``hoodie.properties`` entries (key generator for virtual keys).
        max_memory_bytes: ``hoodie.memory.merge.max.size`` (bytes).
        spill_path: ``hoodie.memory.spillable.map.path``: directory under which a merge whose log records
            exceed ``max_memory_bytes`` creates its temporary spill folder (None = the system temp dir).
        evolution: how to read blocks and base files written under older schemas of a table whose schema
            evolved on read (None: columns are matched by name).
    """

    record_key_fields: tuple[str, ...] = ()
    precombine_field: str | None = None
    payload_class: str = OVERWRITE_WITH_LATEST_PAYLOAD
    populate_meta_fields: bool = True
    table_schema: pa.Schema | None = None
    table_config: tuple[tuple[str, str], ...] = ()
    max_memory_bytes: int = 1073741824
    spill_path: str | None = None
    evolution: SchemaEvolution | None = None

    @staticmethod
    def from_table(table: Table, options: HoodieConfig | None = None) -> MergeSettings:
        """Settings of ``table`` (hoodie.properties), memory keys from ``options``.

        Raises:
            ConfigError: a malformed memory option.
            CorruptFile: the table schema is not valid JSON.
        """
        opts = options or HoodieConfig({})
        avro = table.latest_avro_schema()
        schema = avro_to_arrow(add_meta_fields(avro)) if avro is not None else None
        payload = (opts.raw(TableConfig.PAYLOAD_CLASS) or table.config.raw(TableConfig.PAYLOAD_CLASS)
                   or OVERWRITE_WITH_LATEST_PAYLOAD)
        return MergeSettings(
            record_key_fields=tuple(table.record_key_fields),
            precombine_field=table.precombine_field or None,
            payload_class=payload.strip(),
            populate_meta_fields=table.populate_meta_fields,
            table_schema=schema,
            table_config=tuple(sorted(table.config.as_dict().items())),
            max_memory_bytes=opts.get(MemoryConfig.MAX_MEMORY_FOR_MERGE),
            spill_path=opts.get_optional(MemoryConfig.SPILLABLE_MAP_PATH),
            evolution=SchemaEvolution.of(table),
        )

    @property
    def event_time_ordering(self) -> bool:
        """Whether a base record with a greater ordering value survives a log update
        (``DefaultHoodieRecordPayload`` semantics).

        Raises:
            UnsupportedTable: a payload class whose merge this engine does not implement (partial updates,
                custom payloads).
        """
        if self.payload_class in _EVENT_TIME_PAYLOADS:
            return True
        if self.payload_class in _LATEST_WINS_PAYLOADS:
            return False
        raise UnsupportedTable(
            f"payload class {self.payload_class!r} is not supported for merge-on-read reads (supported: "
            f"{', '.join(sorted(_LATEST_WINS_PAYLOADS | _EVENT_TIME_PAYLOADS))})"
        )


@dataclass(frozen=True)
class BlockFilter:
    """Which log blocks a scan keeps (FORMAT.md §5.4).

    Attributes:
        latest_instant: query instant; blocks after it are skipped (None = no bound).
        completed: completed commit/deltacommit/replacecommit instants (≤ the query instant suffices).
        timeline_start: first completed commit instant on the active timeline, or None.
        pending: requested/inflight write instants on the active timeline.
        begin: incremental lower bound (exclusive), or None.
    """

    latest_instant: str | None
    completed: frozenset[str]
    timeline_start: str | None = None
    pending: frozenset[str] = frozenset()
    begin: str | None = None

    def is_committed(self, instant: str) -> bool:
        """Java ``containsOrBeforeTimelineStarts`` minus pending instants."""
        if instant in self.completed:
            return True
        if self.timeline_start is None or instant >= self.timeline_start:
            return False
        return instant not in self.pending

    def keeps_data(self, instant: str) -> bool:
        """Whether a data/delete block of ``instant`` is visible."""
        if self.latest_instant is not None and instant > self.latest_instant:
            return False
        if self.begin is not None and instant <= self.begin:
            return False
        return self.is_committed(instant)


def _reconcile_spurious_blocks(blocks: list[LogBlock]) -> list[LogBlock]:
    """Drop duplicate blocks of retried task attempts (Java ``reconcileSpuriousBlocksAndGetValidOnes``)."""
    attempts: dict[str, dict[str, int]] = {}
    for block in blocks:
        ident = block.block_identifier
        if ident and "," in ident and block.instant_time is not None:
            attempt = ident.split(",", 1)[0].strip()
            per = attempts.setdefault(block.instant_time, {})
            per[attempt] = per.get(attempt, 0) + 1
    chosen: dict[str, str] = {}
    for instant, per in attempts.items():
        if len(per) > 1:
            best = sorted(per.items(), key=lambda kv: (-kv[1], int(kv[0]) if kv[0].isdigit() else 0))[0][0]
            chosen[instant] = best
            logger.warning("log blocks of instant %s were written by %d task attempts; keeping attempt %s",
                           instant, len(per), best)
    if not chosen:
        return blocks
    out = []
    for block in blocks:
        ident = block.block_identifier
        instant = block.instant_time or ""
        if instant in chosen and ident and "," in ident and ident.split(",", 1)[0].strip() != chosen[instant]:
            continue
        out.append(block)
    return out


def scan_log_blocks(storage: Storage, log_paths: Sequence[str], block_filter: BlockFilter) -> list[LogBlock]:
    """The data and delete blocks of a slice's log files that a reader applies, in log order
    (``AbstractHoodieLogRecordReader.scanInternalV1``; rules in the module docstring).

    Args:
        storage: table storage.
        log_paths: the slice's log files in log order.
        block_filter: instant visibility.

    Returns:
        :class:`AvroDataBlock`, :class:`ParquetDataBlock` and :class:`DeleteBlock` instances (contents not
        yet decoded; contents over 256 KiB not yet read — :func:`merge_file_slice` reads each block when
        it folds it and drops it after, so a scan holds headers, not the log).

    Raises:
        StorageError: a log file cannot be opened.
    """
    queued: list[LogBlock] = []
    for path in log_paths:
        for block in read_log_blocks(storage, path, lazy=True):
            if isinstance(block, CorruptBlock):
                logger.warning("log file %s: skipping corrupt block at offset %d (%d bytes)",
                               path, block.offset, block.size)
                continue
            instant = block.instant_time
            if instant is None:
                logger.warning("log file %s: block at offset %d has no INSTANT_TIME header; skipped",
                               path, block.offset)
                continue
            if block_filter.latest_instant is not None and instant > block_filter.latest_instant:
                continue
            if isinstance(block, CommandBlock):
                if not block.is_rollback:
                    logger.warning("log file %s: unknown command block type at offset %d; skipped",
                                   path, block.offset)
                    continue
                target = block.target_instant_time
                before = len(queued)
                queued = [b for b in queued if b.instant_time != target]
                logger.debug("log file %s: rollback %s of instant %s removed %d block(s)",
                             path, instant, target, before - len(queued))
                continue
            if not isinstance(block, (AvroDataBlock, ParquetDataBlock, DeleteBlock)):
                logger.warning("log file %s: skipping %s at offset %d (not readable as table data)",
                               path, type(block).__name__, block.offset)
                continue
            if not block_filter.keeps_data(instant):
                logger.debug("log file %s: skipping block of instant %s (uncommitted or out of range)",
                             path, instant)
                continue
            queued.append(block)
    return _reconcile_spurious_blocks(queued)


def work_schema(requested: pa.Schema, settings: MergeSettings) -> pa.Schema:
    """``requested`` plus the columns the merge needs (record key or key fields, precombine field, commit
    time, ``_hoodie_is_deleted``), typed from the table schema; columns unknown to it are left out."""
    fields = list(requested)
    have = {f.name.lower() for f in requested}
    table_schema = settings.table_schema
    wanted: list[str] = [COMMIT_TIME]
    if settings.populate_meta_fields:
        wanted.append(RECORD_KEY)
    else:
        wanted.extend(settings.record_key_fields)
    if settings.precombine_field:
        wanted.append(settings.precombine_field.split(".")[0])  # a nested field comes with its top column
    wanted.append(IS_DELETED)
    for name in wanted:
        if name.lower() in have:
            continue
        found: pa.Field | None = None
        if table_schema is not None:
            for candidate in table_schema:
                if candidate.name.lower() == name.lower():
                    found = candidate
                    break
        if found is None and name in (COMMIT_TIME, RECORD_KEY):
            found = pa.field(name, pa.string())
        if found is not None:
            fields.append(found)
            have.add(name.lower())
    return pa.schema(fields)


def _column(table: pa.Table, name: str) -> pa.Array | None:
    lowered = {n.lower(): n for n in table.column_names}
    actual = lowered.get(name.lower())
    if actual is None:
        return None
    col = table.column(actual)
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


def _greater(left: pa.Array, right: pa.Array) -> pa.Array:
    """Element-wise ``left > right`` with nulls lowest (null > x is false, x > null is true for valid x)."""
    gt = pc.fill_null(pc.greater(left, right), False)
    return pc.or_(gt, pc.and_(pc.is_valid(left), pc.is_null(right)))


class _Keys:
    """Record keys of a table (``_hoodie_record_key`` or virtual keys)."""

    def __init__(self, settings: MergeSettings) -> None:
        self._settings = settings
        self._keygen: Any = None

    def __call__(self, table: pa.Table, where: str) -> pa.Array:
        if self._settings.populate_meta_fields:
            keys = _column(table, RECORD_KEY)
            if keys is None or keys.null_count:
                bad = keys.null_count if keys is not None else table.num_rows
                raise CorruptFile(f"{where}: {RECORD_KEY} is missing or null in {bad} row(s) of a table "
                                  "with meta fields")
            return keys.cast(pa.string())
        if self._keygen is None:
            from engine.keygen import KeyGenerator

            self._keygen = KeyGenerator.from_config(HoodieConfig(dict(self._settings.table_config)))
        keys = self._keygen.record_keys(table)
        return keys if isinstance(keys, pa.Array) else pa.concat_arrays(keys.chunks)


_STATE_SCHEMA_BASE = [("k", pa.string()), ("d", pa.bool_()), ("s", pa.int32()), ("r", pa.int64())]


@dataclass
class MergedLogRecords:
    """The folded log of one slice (``HoodieMergedLogRecordScanner.getRecords``).

    Attributes:
        records: the winning log record per key, rows of the work schema.
        record_keys: their keys (string, aligned with ``records``).
        ordering: their ordering values (aligned), or None without a precombine field.
        soft_deleted: bool array, ``_hoodie_is_deleted`` of each record (aligned).
        deleted_keys: keys whose final log state is a delete.
    """

    records: pa.Table
    record_keys: pa.Array
    ordering: pa.Array | None
    soft_deleted: pa.Array
    deleted_keys: pa.Array

    @property
    def all_keys(self) -> pa.Array:
        """``record_keys`` followed by ``deleted_keys``."""
        return pa.concat_arrays([self.record_keys, self.deleted_keys])


@dataclass
class LogRecordBuffer:
    """Columnar ``HoodieMergedLogRecordScanner`` record map: feed blocks in log order, then :meth:`finish`.

    Rows of every data block are kept (conformed to ``schema``) and a state table indexes, per key, the
    winning row (block, row) or a delete placeholder. Each block is merged vectorized (sort within the
    block, ``index_in`` against the state).

    Args:
        schema: the work schema rows are conformed to (:func:`work_schema`).
        settings: merge settings.
        context: the slice, for messages.
    """

    schema: pa.Schema
    settings: MergeSettings
    context: str = ""
    _tables: list[pa.Table] = field(default_factory=list)
    _tables_nbytes: int = 0
    """Sum of ``nbytes`` of ``_tables``, kept as they change (summing per check is quadratic)."""
    _state: pa.Table | None = None
    _ordering_type: pa.DataType | None = None
    _keys: _Keys | None = None
    _warned_memory: bool = False
    spill_allowed: bool = False
    """True when the caller spills on overflow (:meth:`over_limit`); no warning is logged then."""

    def __post_init__(self) -> None:
        self._keys = _Keys(self.settings)
        if self.settings.precombine_field:
            self._ordering_type = field_type(self.schema, self.settings.precombine_field)
        fields = [pa.field(n, t) for n, t in _STATE_SCHEMA_BASE]
        if self._ordering_type is not None:
            fields.append(pa.field("o", self._ordering_type))
        self._state = pa.schema(fields).empty_table()

    # -------------------------------------------------------------- helpers

    def _ordering_of(self, table: pa.Table, where: str) -> pa.Array | None:
        if self._ordering_type is None or self.settings.precombine_field is None:
            return None
        col = field_values(table, self.settings.precombine_field)
        if col is None:
            return pa.nulls(table.num_rows, self._ordering_type)
        return conform_array(col, self._ordering_type, f"{where}.{self.settings.precombine_field}")

    def _state_rows(self, keys: pa.Array, deleted: bool, src: int, rows: pa.Array,
                    ordering: pa.Array | None) -> pa.Table:
        assert self._state is not None
        n = len(keys)
        arrays: list[pa.Array] = [
            keys,
            pa.array(np.full(n, deleted), pa.bool_()),
            pa.array(np.full(n, src, dtype=np.int32)),
            rows.cast(pa.int64()),
        ]
        if self._ordering_type is not None:
            arrays.append(ordering if ordering is not None else pa.nulls(n, self._ordering_type))
        return pa.Table.from_arrays(arrays, schema=self._state.schema)

    def _replace_state(self, remove: pa.Array, add: pa.Table) -> None:
        """Drop state rows at indices ``remove`` and append ``add``."""
        assert self._state is not None
        keep = np.ones(self._state.num_rows, dtype=bool)
        if len(remove):
            keep[remove.to_numpy(zero_copy_only=False)] = False
        self._state = pa.concat_tables([self._state.filter(pa.array(keep)), add]).combine_chunks()

    def _lookup(self, keys: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array | None]:
        """(state index or null, matched mask, is-delete of the match, ordering of the match)."""
        assert self._state is not None
        state_keys = self._state.column("k").combine_chunks()
        index = pc.index_in(keys, value_set=state_keys)
        matched = pc.is_valid(index)
        deleted = pc.fill_null(pc.take(self._state.column("d").combine_chunks(), index), False)
        ordering = (pc.take(self._state.column("o").combine_chunks(), index)
                    if self._ordering_type is not None else None)
        return index, matched, deleted, ordering

    # -------------------------------------------------------------- feeding

    def add_data(self, table: pa.Table, where: str) -> None:
        """Fold a decoded data block (already in log order after earlier blocks).

        Raises:
            SchemaMismatch: the block's columns cannot be conformed to the work schema.
            CorruptFile: null record keys in a table with meta fields.
        """
        if table.num_rows == 0:
            return
        assert self._keys is not None
        data = conform_table(table, self.schema, context=where)
        keys = self._keys(data, where)
        ordering = self._ordering_of(data, where)
        n = data.num_rows
        positions = pa.array(np.arange(n, dtype=np.int64))
        # Winner per key inside the block: greatest (ordering, position); nulls lowest.
        sort_cols: dict[str, pa.Array] = {"k": keys}
        sort_keys: list[tuple[str, ...]] = [("k", "ascending")]
        if ordering is not None:
            sort_cols["o"] = ordering
            sort_keys.append(("o", "ascending", "at_start"))
        sort_cols["p"] = positions
        sort_keys.append(("p", "ascending"))
        try:
            order = pc.sort_indices(pa.table(sort_cols), sort_keys=sort_keys)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
            raise SchemaMismatch(
                f"{where}: cannot order records by precombine field '{self.settings.precombine_field}': {exc}"
            ) from exc
        sorted_keys = pc.take(keys, order)
        last = np.ones(n, dtype=bool)
        if n > 1:
            last[:-1] = pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1)).to_numpy(
                zero_copy_only=False)
        winners = pc.filter(order, pa.array(last))
        new_keys = pc.take(keys, winners)
        new_ordering = pc.take(ordering, winners) if ordering is not None else None

        index, matched, old_deleted, old_ordering = self._lookup(new_keys)
        if old_ordering is not None and new_ordering is not None:
            keep_old = pc.and_(pc.and_(matched, pc.invert(old_deleted)), _greater(old_ordering, new_ordering))
        else:
            keep_old = pa.array(np.zeros(len(new_keys), dtype=bool))
        new_wins = pc.invert(keep_old)
        src = len(self._tables)
        self._tables.append(data)
        self._tables_nbytes += data.nbytes
        add = self._state_rows(pc.filter(new_keys, new_wins), False, src, pc.filter(winners, new_wins),
                               pc.filter(new_ordering, new_wins) if new_ordering is not None else None)
        remove = pc.filter(index, pc.and_(matched, new_wins))
        self._replace_state(remove, add)
        self._check_memory()

    def add_deletes(self, deletes: Sequence[DeleteRecord], where: str) -> None:
        """Fold a delete block (``processNextDeletedRecord``)."""
        keys, delete_ordering = _delete_arrays(deletes, self._ordering_type, where)
        self.apply_deletes(keys, delete_ordering)

    def apply_deletes(self, keys: pa.Array, delete_ordering: pa.Array | None) -> None:
        """Fold a delete block given as arrays (:func:`_delete_arrays`): ``keys`` (string) and, with a
        precombine field, their ordering values (null = natural order), aligned with ``keys``."""
        n = len(keys)
        if n == 0:
            return
        index, matched, old_deleted, old_ordering = self._lookup(keys)
        if old_ordering is not None and delete_ordering is not None:
            newer_record = pc.and_(pc.is_valid(delete_ordering), _greater(old_ordering, delete_ordering))
            ineffective = pc.and_(pc.and_(matched, pc.invert(old_deleted)), newer_record)
        else:
            ineffective = pa.array(np.zeros(n, dtype=bool))
        effective = pc.filter(keys, pc.invert(ineffective))
        if len(effective) == 0:
            return
        deleted = pc.unique(effective)
        assert self._state is not None
        state_keys = self._state.column("k").combine_chunks()
        hit = pc.is_in(state_keys, value_set=deleted)
        remove = pc.filter(pa.array(np.arange(len(state_keys), dtype=np.int64)), hit)
        add = self._state_rows(deleted, True, -1, pa.array(np.full(len(deleted), -1, dtype=np.int64)), None)
        self._replace_state(remove, add)

    def add_block(self, block: LogBlock) -> None:
        """Decode and fold one data or delete block.

        Raises:
            CorruptFile: undecodable block content (a structurally valid block whose records cannot be
                read; never silently skipped).
            UnsupportedTable: a Kryo (pre-0.11) delete block.
        """
        if not block.is_content_loaded:
            raise CorruptFile(f"{_block_where(block)}: block content was not read; load it first "
                              "(engine.formats.log_format.load_block_content)")
        where = _block_where(block)
        if isinstance(block, DeleteBlock):
            self.add_deletes(block.delete_records(), where)
        elif isinstance(block, (AvroDataBlock, ParquetDataBlock)):
            self.add_data(block.to_table(), where)

    # -------------------------------------------------------------- memory

    def nbytes(self) -> int:
        """Bytes of Arrow memory held (block rows + key index)."""
        assert self._state is not None
        return self._tables_nbytes + self._state.nbytes

    def over_limit(self) -> bool:
        """Whether the held records exceed ``hoodie.memory.merge.max.size`` (0 or less = unlimited)."""
        limit = self.settings.max_memory_bytes
        return limit > 0 and self.nbytes() > limit

    def _check_memory(self) -> None:
        limit = self.settings.max_memory_bytes
        if limit <= 0 or self.nbytes() <= limit:
            return
        self._compact()
        if self.nbytes() > limit and not self._warned_memory and not self.spill_allowed:
            self._warned_memory = True
            logger.warning(
                "%s: live log records take %d bytes, more than hoodie.memory.merge.max.size=%d even after "
                "spilling (one hash partition does not fit); continuing in memory", self.context, self.nbytes(), limit)

    def _live_rows(self) -> tuple[pa.Table, pa.Array]:
        """(state rows of records, global row indices into the concatenated block tables)."""
        assert self._state is not None
        records = self._state.filter(pc.invert(self._state.column("d")))
        offsets = np.zeros(len(self._tables) + 1, dtype=np.int64)
        np.cumsum([t.num_rows for t in self._tables], out=offsets[1:])
        src = records.column("s").to_numpy()
        rows = records.column("r").to_numpy()
        return records, pa.array(offsets[src] + rows if len(src) else np.zeros(0, dtype=np.int64))

    def _compact(self) -> None:
        """Keep only the live rows of every block (one table)."""
        if len(self._tables) <= 1 and self._state is not None and \
                self._state.num_rows >= sum(t.num_rows for t in self._tables):
            return
        records, rows = self._live_rows()
        combined = pa.concat_tables(self._tables).take(rows) if self._tables else self.schema.empty_table()
        assert self._state is not None
        deletes = self._state.filter(self._state.column("d"))
        renumbered = records.set_column(
            records.schema.get_field_index("s"), "s", pa.array(np.zeros(records.num_rows, dtype=np.int32)))
        rows_index = pa.array(np.arange(records.num_rows, dtype=np.int64))
        renumbered = renumbered.set_column(renumbered.schema.get_field_index("r"), "r", rows_index)
        self._tables = [combined.combine_chunks()]
        self._tables_nbytes = self._tables[0].nbytes
        self._state = pa.concat_tables([renumbered, deletes]).combine_chunks()

    # -------------------------------------------------------------- result

    def finish(self) -> MergedLogRecords:
        """The folded log."""
        assert self._state is not None
        records_state, rows = self._live_rows()
        data = (pa.concat_tables(self._tables).take(rows) if self._tables else self.schema.empty_table())
        soft = _column(data, IS_DELETED)
        soft_deleted = (pc.fill_null(soft.cast(pa.bool_()), False) if soft is not None
                        else pa.array(np.zeros(data.num_rows, dtype=bool)))
        deletes = self._state.filter(self._state.column("d"))
        return MergedLogRecords(
            records=data,
            record_keys=records_state.column("k").combine_chunks(),
            ordering=(records_state.column("o").combine_chunks()
                      if self._ordering_type is not None else None),
            soft_deleted=soft_deleted,
            deleted_keys=deletes.column("k").combine_chunks(),
        )


def merge_log_blocks(blocks: Iterable[LogBlock], schema: pa.Schema, settings: MergeSettings,
                     context: str = "") -> MergedLogRecords:
    """Fold ``blocks`` (from :func:`scan_log_blocks`) into one record per key.

    Args:
        blocks: data/delete blocks in log order.
        schema: work schema (:func:`work_schema`).
        settings: merge settings.
        context: slice description for messages.

    Raises:
        CorruptFile, SchemaMismatch, UnsupportedTable: see :meth:`LogRecordBuffer.add_block`.
    """
    buffer = LogRecordBuffer(schema, settings, context)
    for block in blocks:
        buffer.add_block(block)
    return buffer.finish()


def _block_where(block: LogBlock) -> str:
    """``<log file>@<offset> (instant <t>)`` for messages."""
    return f"{block.file_path or '<memory>'}@{block.offset} (instant {block.instant_time})"


def _delete_arrays(deletes: Sequence[DeleteRecord], ordering_type: pa.DataType | None,
                   where: str) -> tuple[pa.Array, pa.Array | None]:
    """Keys (string) and ordering values (``ordering_type``, null = natural order; None without a
    precombine field) of a delete block's records with a key (rules in the module docstring)."""
    kept = [d for d in deletes if d.record_key is not None]
    if len(kept) != len(deletes):
        logger.warning("%s: %d delete record(s) without a record key ignored", where, len(deletes) - len(kept))
    keys = pa.array([d.record_key for d in kept], pa.string())
    if ordering_type is None:
        return keys, None
    wrapper = ordering_wrapper_for(ordering_type)
    values: list[Any] = []
    for d in kept:
        natural = (d.ordering_value is None or d.ordering_type != wrapper
                   or (d.ordering_type == "IntWrapper" and d.ordering_value == 0))
        values.append(None if natural else d.ordering_value)
    try:
        return keys, pa.array(values, type=ordering_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return keys, pa.nulls(len(kept), ordering_type)


_HASH_MULTIPLIER = np.uint64(0x100000001B3)


_HASH_CHUNK_KEYS = 4096
"""Keys hashed at a time: the vectorized hash needs about 40 bytes of temporaries per key byte."""


def stable_key_hash(keys: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string of ``keys`` that depends only on its UTF-8 bytes (stable across
    processes and runs, unlike Python's ``hash``): a polynomial hash over the bytes finished with the
    splitmix64 mixer, vectorized with numpy.

    Args:
        keys: ``string`` or ``large_string`` array (nulls hash like the empty string).

    Returns:
        ``uint64`` numpy array of ``len(keys)``.
    """
    n = len(keys)
    if n > _HASH_CHUNK_KEYS:
        return np.concatenate([stable_key_hash(keys.slice(start, _HASH_CHUNK_KEYS))
                               for start in range(0, n, _HASH_CHUNK_KEYS)])
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out
    if not (pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type)):
        keys = keys.cast(pa.string())
    buffers = keys.buffers()
    offset_type = np.int64 if pa.types.is_large_string(keys.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[keys.offset:keys.offset + n + 1].astype(np.int64)
    lengths = np.diff(offsets)
    total = int(offsets[-1] - offsets[0])
    with np.errstate(over="ignore"):
        if total:
            assert buffers[2] is not None
            data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0]:offsets[-1]].astype(np.uint64)
            starts = offsets[:-1] - offsets[0]
            position = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
            powers = np.ones(int(lengths.max()), dtype=np.uint64)
            if len(powers) > 1:
                powers[1:] = np.cumprod(np.full(len(powers) - 1, _HASH_MULTIPLIER, dtype=np.uint64))
            contrib = (data + np.uint64(1)) * powers[position]
            nonempty = lengths > 0
            out[nonempty] = np.add.reduceat(contrib, starts[nonempty])
        h = out ^ lengths.astype(np.uint64)
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


_MAX_SPILL_PARTITIONS = 4096

_SPILL_WRITE_BUFFER = 1024 * 1024
"""Bytes buffered per spill file write (the IPC writer issues one write per Arrow buffer otherwise)."""


@dataclass
class _Segment:
    seq: int
    partition: int
    """Hash partition of log pieces; pass (partition group) number of base pieces."""
    path: str
    kind: str
    """``data`` or ``del`` (log records), ``base`` (base-file rows)."""
    nbytes: int
    batch: int
    """Index of the piece's record batch in its file."""


class SpilledLogRecords:
    """Log records of one slice hash-partitioned on disk (the Arrow counterpart of Hudi's
    ``ExternalSpillableMap`` / ``BitCaskDiskMap``, FORMAT.md §5.6 memory).

    Every data block (conformed to the work schema) and delete block (keys + ordering values) is split by
    ``stable_key_hash(record key) % partitions`` and written as one Arrow IPC file
    ``<seq>.{data,del}.arrow``, one record batch per non-empty partition piece (read back by batch index),
    in a private folder ``hudi-merge-*`` created under ``hoodie.memory.spillable.map.path``. Partitions
    are key-disjoint, so folding each partition's pieces in
    log order (``seq``) with a :class:`LogRecordBuffer` yields exactly the in-memory fold restricted to its
    keys. :meth:`passes` groups partitions so that each group's spilled bytes stay within half the memory
    limit; :meth:`fold` loads one group. Base-file rows are spilled the same way, split by group
    (``<seq>.base.arrow``, :meth:`add_base`), and streamed back one piece at a time (:meth:`base_of_pass`).

    Args:
        spill_root: ``hoodie.memory.spillable.map.path`` (None = system temp dir); created if missing.
        partitions: K, the number of hash partitions (≥ 1).
        schema: work schema.
        settings: merge settings (``max_memory_bytes`` is the budget).
        context: the slice, for messages.

    Raises:
        StorageError: the spill folder cannot be created or written (message names the path and slice).
    """

    def __init__(self, spill_root: str | None, partitions: int, schema: pa.Schema, settings: MergeSettings,
                 context: str, ordering_type: pa.DataType | None) -> None:
        self.partitions = max(1, partitions)
        self.schema = schema
        self.settings = settings
        self.context = context
        self.ordering_type = ordering_type
        root = spill_root or tempfile.gettempdir()
        try:
            os.makedirs(root, exist_ok=True)
            self.directory = tempfile.mkdtemp(prefix="hudi-merge-", dir=root)
        except OSError as exc:
            raise StorageError(f"{context}: cannot create a merge spill folder under {root!r} "
                               f"(hoodie.memory.spillable.map.path): {exc}") from exc
        self.segments: list[_Segment] = []
        self.partition_bytes = np.zeros(self.partitions, dtype=np.int64)
        self._seq = 0
        self.largest_pass_bytes = 0
        """Spilled bytes of the largest group loaded by :meth:`fold` (diagnostics, tests)."""
        delete_fields = [pa.field("k", pa.string())]
        if ordering_type is not None:
            delete_fields.append(pa.field("o", ordering_type))
        self._delete_schema = pa.schema(delete_fields)

    def partition_of(self, keys: pa.Array) -> np.ndarray:
        """Partition number (int64 numpy array) of each key."""
        return (stable_key_hash(keys) % np.uint64(self.partitions)).astype(np.int64)

    def _write(self, table: pa.Table, parts: np.ndarray, buckets: int, kind: str) -> None:
        """Write ``table``'s rows split by ``parts`` (bucket number per row, ``buckets`` in all)."""
        seq = self._seq
        self._seq += 1
        if table.num_rows == 0:
            return
        order = np.argsort(parts, kind="stable")
        counts = np.bincount(parts, minlength=buckets)
        ordered = table.take(pa.array(order)).combine_chunks()
        path = os.path.join(self.directory, f"{seq:08d}.{kind}.arrow")
        start = 0
        try:
            with pa.OSFile(path, "wb") as raw, pa.BufferedOutputStream(raw, _SPILL_WRITE_BUFFER) as sink, \
                    ipc.new_file(sink, ordered.schema) as writer:
                for index, bucket in enumerate(np.nonzero(counts)[0]):
                    count = int(counts[bucket])
                    piece = ordered.slice(start, count)
                    start += count
                    writer.write_batch(pa.RecordBatch.from_arrays(
                        [column.chunk(0) for column in piece.columns], schema=piece.schema))
                    if kind != "base":
                        self.partition_bytes[bucket] += piece.nbytes
                    self.segments.append(_Segment(seq, int(bucket), path, kind, piece.nbytes, index))
        except OSError as exc:
            raise StorageError(f"{self.context}: cannot write merge spill file {path}: {exc}") from exc

    def add_data(self, data: pa.Table, keys: pa.Array) -> None:
        """Spill a data block's rows (work schema) with their record keys (aligned)."""
        self._write(data, self.partition_of(keys), self.partitions, "data")

    def add_deletes(self, keys: pa.Array, ordering: pa.Array | None) -> None:
        """Spill a delete block (:func:`_delete_arrays`)."""
        arrays = [keys] if ordering is None else [keys, ordering]
        self._write(pa.Table.from_arrays(arrays, schema=self._delete_schema), self.partition_of(keys),
                    self.partitions, "del")

    def add_base(self, base: pa.Table, keys: pa.Array, groups: list[np.ndarray]) -> None:
        """Spill base-file rows (work schema) with their record keys (aligned), split by the pass of
        ``groups`` (:meth:`passes`, computed once every log record is spilled) their key falls into, so
        each pass reads back only its own base rows (:meth:`base_of_pass`)."""
        pass_of = np.empty(self.partitions, dtype=np.int64)
        for number, group in enumerate(groups):
            pass_of[group] = number
        self._write(base, pass_of[self.partition_of(keys)], len(groups), "base")

    def _read(self, pieces: Sequence[_Segment]) -> Iterator[tuple[_Segment, pa.Table]]:
        """Each piece's rows, opening each spill file once for consecutive pieces of the same file."""
        current = ""
        source: pa.NativeFile | None = None
        try:
            for piece in pieces:
                if piece.path != current:
                    if source is not None:
                        source.close()
                    source = pa.OSFile(piece.path, "rb")
                    reader = ipc.open_file(source)
                    current = piece.path
                yield piece, pa.Table.from_batches([reader.get_batch(piece.batch)])
        except (OSError, pa.ArrowInvalid) as exc:
            raise StorageError(f"{self.context}: cannot read merge spill file {current}: {exc}") from exc
        finally:
            if source is not None:
                source.close()

    def base_of_pass(self, number: int, batch_rows: int) -> Iterator[pa.Table]:
        """The spilled base rows of pass ``number`` (:meth:`add_base`) in base-file order, pieces joined up to
        ``batch_rows`` rows (the combine builds one key lookup per table, so fewer, larger tables).

        Raises:
            StorageError: a spill file cannot be read.
        """
        pending: list[pa.Table] = []
        rows = 0
        for _, table in self._read([s for s in self.segments if s.kind == "base" and s.partition == number]):
            pending.append(table)
            rows += table.num_rows
            if rows >= batch_rows:
                yield pa.concat_tables(pending)
                pending, rows = [], 0
        if pending:
            yield pa.concat_tables(pending)

    def passes(self) -> list[np.ndarray]:
        """Partition groups to merge one at a time (int64 arrays of partition numbers, together all K):
        consecutive partitions are packed while their spilled bytes stay within half the memory limit; a
        partition larger than that forms its own group."""
        budget = max(1, self.settings.max_memory_bytes // 2)
        groups: list[list[int]] = [[]]
        used = 0
        for partition in range(self.partitions):
            size = int(self.partition_bytes[partition])
            if groups[-1] and used + size > budget:
                groups.append([])
                used = 0
            groups[-1].append(partition)
            used += size
        return [np.array(g, dtype=np.int64) for g in groups]

    def fold(self, group: np.ndarray) -> MergedLogRecords:
        """Fold the spilled pieces of the partitions in ``group`` in log order.

        Raises:
            StorageError: a spill file cannot be read.
            CorruptFile, SchemaMismatch: as :meth:`LogRecordBuffer.add_data`.
        """
        wanted = set(int(p) for p in group)
        pieces = sorted((s for s in self.segments if s.kind != "base" and s.partition in wanted),
                        key=lambda s: (s.seq, s.partition))
        self.largest_pass_bytes = max(self.largest_pass_bytes, sum(s.nbytes for s in pieces))
        buffer = LogRecordBuffer(self.schema, self.settings, self.context)
        # Consecutive data pieces are folded as one table: within a table the later row wins on equal
        # ordering values, exactly as a later piece does, and one key lookup per run instead of one per
        # piece keeps the fold linear in the group's size.
        run: list[pa.Table] = []
        where = ""

        def fold_run() -> None:
            if run:
                buffer.add_data(pa.concat_tables(run), where)
                run.clear()

        for piece, table in self._read(pieces):
            if piece.kind == "del":
                fold_run()
                ordering = table.column("o").combine_chunks() if "o" in table.column_names else None
                buffer.apply_deletes(table.column("k").combine_chunks(), ordering)
            else:
                if not run:
                    where = f"{self.context} spill file {piece.path}"
                run.append(table)
        fold_run()
        return buffer.finish()

    def cleanup(self) -> None:
        """Remove the spill folder (errors are logged, never raised)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        if os.path.exists(self.directory):
            logger.warning("%s: could not remove merge spill folder %s", self.context, self.directory)


_UNLIMITED_RUN_BYTES = 64 * 1024 * 1024
"""Decoded log bytes folded at a time when ``hoodie.memory.merge.max.size`` is unlimited (≤ 0)."""

_DECODE_CHUNK_ROWS = 8192
"""Records decoded from an Avro data block at a time while folding (bounds the Python objects alive)."""

_Unit = tuple[str, "pa.Table | list[DeleteRecord]", float]


def _log_units(storage: Storage, blocks: Sequence[LogBlock], evolution: SchemaEvolution | None = None) -> \
        Iterator[_Unit]:
    """``(where, records or deletes, encoded bytes)`` in log order. Data blocks are decoded
    in chunks of ``_DECODE_CHUNK_ROWS``; an Avro block a lazy scan left on disk is streamed from its log
    file (never loaded whole), other blocks are read when reached. Each chunk carries its share of the
    block's encoded size (by record count), so decoded/encoded ratios can be measured mid-block."""
    for lazy_block in blocks:
        if isinstance(lazy_block, AvroDataBlock) and not lazy_block.is_content_loaded:
            block: LogBlock = lazy_block
            total_rows = max(1, lazy_block.record_count_from(storage))
            tables = lazy_block.iter_tables(_DECODE_CHUNK_ROWS, storage)
        else:
            block = load_block_content(storage, lazy_block)
            if isinstance(block, DeleteBlock):
                yield _block_where(block), block.delete_records(), float(block.encoded_size)
                continue
            if not isinstance(block, (AvroDataBlock, ParquetDataBlock)):
                continue
            total_rows = max(1, block.record_count)
            tables = block.iter_tables(_DECODE_CHUNK_ROWS)
        where = _block_where(block)
        per_row = block.encoded_size / total_rows
        for table in tables:
            if evolution is not None:
                table = evolution.align(table, block.instant_time)
            yield where, table, per_row * table.num_rows
        del block, tables


@dataclass
class _Run:
    """Consecutive decoded data chunks waiting to be folded as one table (same schema)."""

    tables: list[pa.Table] = field(default_factory=list)
    nbytes: int = 0
    where: str = ""

    def add(self, table: pa.Table, where: str) -> None:
        if not self.tables:
            self.where = where
        self.tables.append(table)
        self.nbytes += table.nbytes

    def fold_into(self, buffer: LogRecordBuffer) -> None:
        if self.tables:
            buffer.add_data(self.tables[0] if len(self.tables) == 1 else pa.concat_tables(self.tables),
                            self.where)
            self.tables = []
            self.nbytes = 0


def _fold_log(storage: Storage, blocks: Sequence[LogBlock], schema: pa.Schema, settings: MergeSettings,
              context: str) -> MergedLogRecords | SpilledLogRecords:
    """Fold ``blocks`` in memory, switching to :class:`SpilledLogRecords` when the live records exceed
    ``hoodie.memory.merge.max.size``: the records folded so far are written as the first pieces, the
    remaining records (the rest of the current block, then the following blocks) are decoded a chunk at a
    time and partitioned straight to disk.

    K = ceil(estimated decoded log bytes / (limit / 2)), clamped to [2, 4096]; the estimate extrapolates the
    decoded/encoded ratio of the records read so far (each chunk counts its share of its block's content
    bytes) to the log content not yet read. Overestimates
    only cost small files (groups are re-packed by :meth:`SpilledLogRecords.passes`).
    """
    buffer = LogRecordBuffer(schema, settings, context, spill_allowed=True)
    decoded = encoded = seen = 0.0
    spilled = False
    limit = settings.max_memory_bytes
    # Decoded chunks are folded in runs of up to an eighth of the limit: each fold looks up every key
    # held so far, so folding 8,192-record chunks one by one would be quadratic in the log size.
    run_cap = max(1, limit // 8) if limit > 0 else _UNLIMITED_RUN_BYTES
    run = _Run()
    units = _log_units(storage, blocks, settings.evolution)
    for where, payload, size in units:
        if isinstance(payload, pa.Table):
            decoded += payload.nbytes
            encoded += size
            if run.tables and payload.schema != run.tables[0].schema:
                run.fold_into(buffer)  # another writer schema: conformed separately
            run.add(payload, where)
            if run.nbytes >= run_cap:
                run.fold_into(buffer)
        else:
            run.fold_into(buffer)
            buffer.add_deletes(payload, where)
        seen += size
        del payload
        if buffer.over_limit():
            spilled = True
            break
    run.fold_into(buffer)
    if not spilled and buffer.over_limit():
        spilled = True
    if not spilled:
        return buffer.finish()
    ratio = decoded / encoded if encoded else 4.0
    remaining = max(0.0, sum(b.encoded_size for b in blocks) - seen)
    estimate = buffer.nbytes() + ratio * remaining
    partitions = int(min(_MAX_SPILL_PARTITIONS, max(2, -(-estimate // max(1, limit // 2)))))
    logger.info("%s: log records take %d bytes, more than hoodie.memory.merge.max.size=%d; spilling to %d "
                "hash partitions under %s", context, buffer.nbytes(), limit, partitions,
                settings.spill_path or tempfile.gettempdir())
    spill = SpilledLogRecords(settings.spill_path, partitions, schema, settings, context, buffer._ordering_type)
    try:
        folded = buffer.finish()
        del buffer
        spill.add_data(folded.records, folded.record_keys)
        spill.add_deletes(folded.deleted_keys, (pa.nulls(len(folded.deleted_keys), spill.ordering_type)
                                                if spill.ordering_type is not None else None))
        del folded
        keys_of = _Keys(settings)
        for where, payload, _ in units:
            if isinstance(payload, pa.Table):
                data = conform_table(payload, schema, context=where)
                if data.num_rows:
                    spill.add_data(data, keys_of(data, where))
                del data
            else:
                keys, ordering = _delete_arrays(payload, spill.ordering_type, where)
                spill.add_deletes(keys, ordering)
            del payload
    except BaseException:
        spill.cleanup()
        raise
    return spill


def _base_batches(storage: Storage, path: str, schema: pa.Schema, batch_rows: int,
                  evolution: SchemaEvolution | None = None) -> Iterator[pa.Table]:
    for batch in read_base_batches(storage, path, schema.names, batch_rows, evolution):
        yield conform_table(batch, schema, context=path)


def merge_file_slice(
    storage: Storage,
    base_file: str | None,
    blocks: Sequence[LogBlock],
    schema: pa.Schema,
    settings: MergeSettings,
    *,
    batch_rows: int = 131072,
    context: str = "",
) -> Iterator[pa.Table]:
    """Merged rows of one file slice, in the work schema: base rows (replaced, kept or dropped per the
    payload rules) batch by batch, then log-only records.

    When the decoded log records exceed ``settings.max_memory_bytes`` they are spilled
    (:class:`SpilledLogRecords`) and the merge runs once per partition group: the base file's rows are first
    split by group onto disk, then for each group its log records are folded from disk, its base rows
    streamed back and combined, and its log-only records follow. Same rows as the in-memory merge; the order
    differs (grouped by hash partition). I/O cost of a spilled merge, linear in the slice: the log blocks
    and the base file are each read once, and their records written and read back once as Arrow IPC. The
    spill folder is removed when the generator finishes, fails or is closed.

    Args:
        storage: table storage.
        base_file: base file path, or None for a log-only slice.
        blocks: the slice's applicable log blocks (:func:`scan_log_blocks`).
        schema: work schema (:func:`work_schema` of the requested schema).
        settings: merge settings.
        batch_rows: base-file rows per batch.
        context: slice description for messages.

    Yields:
        Tables of ``schema`` (possibly empty ones are skipped).

    Raises:
        UnsupportedTable: unsupported payload class; Kryo delete blocks.
        CorruptFile: undecodable log block content, null record keys.
        SchemaMismatch: data that does not conform to ``schema``.
        StorageError: unreadable files; a spill folder that cannot be created, written or read.
    """
    event_time = settings.event_time_ordering
    folded = _fold_log(storage, blocks, schema, settings, context)
    if isinstance(folded, MergedLogRecords):
        whole = (_base_batches(storage, base_file, schema, batch_rows, settings.evolution)
                 if base_file is not None else None)
        yield from _combine_with_base(whole, base_file or "", folded, settings, event_time)
        return
    spill = folded
    try:
        keys_of = _Keys(settings)
        groups = spill.passes()
        if base_file is not None and len(groups) > 1:
            # Split the base rows by pass once (linear), rather than reading the base file every pass.
            for batch in _base_batches(storage, base_file, schema, batch_rows, settings.evolution):
                spill.add_base(batch, keys_of(batch, base_file), groups)
                del batch
        for number, group in enumerate(groups):
            merged = spill.fold(group)
            base: Iterator[pa.Table] | None = None
            if base_file is not None:
                base = (spill.base_of_pass(number, batch_rows) if len(groups) > 1
                        else _base_batches(storage, base_file, schema, batch_rows, settings.evolution))
            yield from _combine_with_base(base, base_file or "", merged, settings, event_time)
            del merged
        logger.debug("%s: spilled merge done, %d group(s), largest group %d bytes", context,
                     len(groups), spill.largest_pass_bytes)
    finally:
        spill.cleanup()


def _combine_with_base(base_batches: Iterator[pa.Table] | None, base_file: str, merged: MergedLogRecords,
                       settings: MergeSettings, event_time: bool) -> Iterator[pa.Table]:
    """Base rows combined with the folded log (module docstring, "Base combine"), then the log records no
    base row consumed (log-only inserts)."""
    n_records = len(merged.record_keys)
    all_keys = merged.all_keys
    consumed = np.zeros(n_records, dtype=bool)
    keys_of = _Keys(settings)
    soft = merged.soft_deleted
    ordering_type = merged.ordering.type if merged.ordering is not None else None
    if base_batches is not None:
        for base in base_batches:
            if base.num_rows == 0:
                continue
            keys = keys_of(base, base_file)
            index = pc.index_in(keys, value_set=all_keys)
            matched = pc.is_valid(index)
            index_np = pc.fill_null(index, -1).to_numpy(zero_copy_only=False)
            is_record = pa.array((index_np >= 0) & (index_np < n_records))
            record_index = pc.filter(index, is_record)
            if event_time and merged.ordering is not None and ordering_type is not None \
                    and settings.precombine_field:
                base_ordering_col = field_values(base, settings.precombine_field)
                base_ordering = (conform_array(base_ordering_col, ordering_type, settings.precombine_field)
                                 if base_ordering_col is not None else pa.nulls(base.num_rows, ordering_type))
                record_or_null = pc.if_else(is_record, index, pa.scalar(None, pa.int32()))
                log_ordering = pc.take(merged.ordering, record_or_null)
                base_wins = pc.and_(is_record, _greater(base_ordering, log_ordering))
            else:
                base_wins = pa.array(np.zeros(base.num_rows, dtype=bool))
            keep_base = pc.or_(pc.invert(matched), base_wins)
            use_log = pc.and_(is_record, pc.invert(base_wins))
            if len(record_index):
                consumed[record_index.to_numpy(zero_copy_only=False)] = True
            log_index = pc.filter(index, use_log)
            log_index = pc.filter(log_index, pc.invert(pc.take(soft, log_index)))
            parts = [base.filter(keep_base), merged.records.take(log_index)]
            out = pa.concat_tables(parts)
            if out.num_rows:
                yield out
    remaining = pa.array(~consumed & ~soft.to_numpy(zero_copy_only=False))
    rest = merged.records.filter(remaining)
    if rest.num_rows:
        yield rest


def filter_commit_range(table: pa.Table, begin: str, end: str | None) -> pa.Table:
    """Rows whose ``_hoodie_commit_time`` is in ``(begin, end]`` (incremental queries); a table without the
    column is returned unchanged."""
    times = _column(table, COMMIT_TIME)
    if times is None:
        return table
    keep = pc.greater(times, begin)
    if end is not None:
        keep = pc.and_(keep, pc.less_equal(times, end))
    return table.filter(pc.fill_null(keep, False))


__all__ = [
    "BlockFilter",
    "SpilledLogRecords",
    "LogRecordBuffer",
    "MergeSettings",
    "MergedLogRecords",
    "filter_commit_range",
    "merge_file_slice",
    "merge_log_blocks",
    "scan_log_blocks",
    "stable_key_hash",
    "work_schema",
]
