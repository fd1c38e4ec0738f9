"""Spilling a merge that outgrows ``hoodie.memory.merge.max.size`` to disk, partitioned by a stable key hash
(Hudi ``ExternalSpillableMap`` / ``BitCaskDiskMap``, here as Arrow IPC segments)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from engine.errors import StorageError
from engine.read.log_scan import MergeSettings
from engine.read.record_buffer import LogRecordBuffer, MergedLogRecords

logger = logging.getLogger(__name__)

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
    ``ExternalSpillableMap`` / ``BitCaskDiskMap``, docs/FORMAT.md §5.6 memory).

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
