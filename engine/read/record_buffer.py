"""The in-memory log record buffer: the newest record per key, folded block by block with the table's
payload semantics (Hudi ``HoodieMergedLogRecordScanner``'s record map and ``HoodieRecordPayload.preCombine``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig
from engine.errors import CorruptFile, SchemaMismatch
from engine.formats.conform import conform_array, conform_table, field_type, field_values
from engine.formats.log_format import (
    AvroDataBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    ParquetDataBlock,
    ordering_wrapper_for,
)
from engine.read.log_scan import IS_DELETED, RECORD_KEY, MergeSettings

logger = logging.getLogger(__name__)

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
        # FirstValueAvroPayload.preCombine keeps the first of equal ordering values, the others the later one.
        sort_keys.append(("p", "descending" if self.settings.first_on_ties else "ascending"))
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
            old_wins = _greater(old_ordering, new_ordering)
            if self.settings.first_on_ties:
                old_wins = pc.invert(_greater(new_ordering, old_ordering))
            keep_old = pc.and_(pc.and_(matched, pc.invert(old_deleted)), old_wins)
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
