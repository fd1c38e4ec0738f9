"""Merge-on-read merging of one file slice: its log files folded per record key, then combined with the base
file (Hudi ``HoodieMergedLogRecordScanner`` + ``AbstractHoodieLogRecordReader.scanInternalV1`` for the log
scan, and the Spark ``HoodieMergeOnReadRDD`` / ``RecordMergingFileIterator`` for the base-file combine;
docs/FORMAT.md §5.4 and §5.6).

**Log scan** (:func:`scan_log_blocks`, docs/FORMAT.md §5.4). The slice's log files are read in log order (the
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
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.formats.avro_schema import META_FIELDS
from engine.formats.conform import conform_array, conform_table, field_values
from engine.formats.log_format import (
    AvroDataBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    ParquetDataBlock,
    load_block_content,
)
from engine.payloads import fill_nulls
from engine.read.base_reader import read_base_batches
from engine.read.log_scan import (
    COMMIT_TIME,
    DEFAULT_PAYLOAD,
    BlockFilter,
    MergeSettings,
    scan_log_blocks,
    work_schema,
)
from engine.read.record_buffer import (
    LogRecordBuffer,
    MergedLogRecords,
    _block_where,
    _column,
    _delete_arrays,
    _greater,
    _Keys,
    merge_log_blocks,
)
from engine.read.spill import _MAX_SPILL_PARTITIONS, SpilledLogRecords, stable_key_hash
from engine.schema.history import SchemaEvolution
from engine.storage import Storage

logger = logging.getLogger(__name__)

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


def _first_unclaimed(index_np: np.ndarray, claimed: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """A base batch's log-key indexes (``-1``: no log entry) kept only for the first base row of each key that
    no earlier row claimed; ``claimed`` is updated. Later rows with that key are left as stored (Hudi 0.15's
    file group reader removes a log record from its map when the first base row with its key takes it)."""
    hit = np.flatnonzero(index_np >= 0)
    if hit.size == 0:
        return pa.nulls(index_np.shape[0], pa.int32()), index_np
    _, first = np.unique(index_np[hit], return_index=True)
    keep = np.zeros(index_np.shape[0], dtype=bool)
    rows = hit[first]
    rows = rows[~claimed[index_np[rows]]]
    keep[rows] = True
    claimed[index_np[rows]] = True
    out = np.where(keep, index_np, -1)
    return pa.array(np.where(keep, out, 0), pa.int32(), mask=~keep), out


def _combine_with_base(base_batches: Iterator[pa.Table] | None, base_file: str, merged: MergedLogRecords,
                       settings: MergeSettings, event_time: bool) -> Iterator[pa.Table]:
    """Base rows combined with the folded log (module docstring, "Base combine"), then the log records no
    base row consumed (log-only inserts)."""
    n_records = len(merged.record_keys)
    all_keys = merged.all_keys
    consumed = np.zeros(n_records, dtype=bool)
    claimed = np.zeros(len(all_keys), dtype=bool)  # log keys (records and deletes) a base row already took
    keys_of = _Keys(settings)
    soft = merged.soft_deleted
    ordering_type = merged.ordering.type if merged.ordering is not None else None
    if base_batches is not None:
        for base in base_batches:
            if base.num_rows == 0:
                continue
            keys = keys_of(base, base_file)
            index = pc.index_in(keys, value_set=all_keys)
            index_np = pc.fill_null(index, -1).to_numpy(zero_copy_only=False)
            if settings.log_record_applies_once:
                index, index_np = _first_unclaimed(index_np, claimed)
            matched = pc.is_valid(index)
            is_record = pa.array((index_np >= 0) & (index_np < n_records))
            record_index = pc.filter(index, is_record)
            if event_time and merged.ordering is not None and ordering_type is not None \
                    and settings.precombine_field:
                base_ordering_col = field_values(base, settings.precombine_field)
                base_ordering = (conform_array(base_ordering_col, ordering_type, settings.precombine_field)
                                 if base_ordering_col is not None else pa.nulls(base.num_rows, ordering_type))
                record_or_null = pc.if_else(is_record, index, pa.scalar(None, pa.int32()))
                log_ordering = pc.take(merged.ordering, record_or_null)
                # FirstValueAvroPayload.needUpdatingPersistedRecord: the stored record stays on equal values.
                base_wins = pc.and_(is_record, pc.invert(_greater(log_ordering, base_ordering))
                                    if settings.first_on_ties else _greater(base_ordering, log_ordering))
            else:
                base_wins = pa.array(np.zeros(base.num_rows, dtype=bool))
            keep_base = pc.or_(pc.invert(matched), base_wins)
            use_log = pc.and_(is_record, pc.invert(base_wins))
            if len(record_index):
                consumed[record_index.to_numpy(zero_copy_only=False)] = True
            log_index = pc.filter(index, use_log)
            log_index = pc.filter(log_index, pc.invert(pc.take(soft, log_index)))
            updates = merged.records.take(log_index)
            if settings.fills_nulls_from_base and updates.num_rows:
                safe = pc.if_else(is_record, pc.fill_null(index, 0), pa.scalar(0, index.type))
                replaced = pc.and_(use_log, pc.invert(pc.take(soft, safe)))
                updates = fill_nulls(updates, base.filter(replaced), skip=META_FIELDS)
            parts = [base.filter(keep_base), updates]
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
    "DEFAULT_PAYLOAD",
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
