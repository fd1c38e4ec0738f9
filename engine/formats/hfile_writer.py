"""Writing HFiles (v3) as Hudi 0.14/0.15 do through HBase 2.4's ``HFileWriterImpl``.

What is written, in file order (HBase ``HFileWriterImpl`` / ``HFileBlockIndex.BlockIndexWriter``):

* data blocks: a block is closed before the cell that finds it holding ``block_size`` or more uncompressed
  bytes; cells are HBase ``KeyValue``\\ s (row = the key, empty family and qualifier, latest timestamp, type
  Put) followed by a one-byte MVCC timestamp (0);
* leaf index blocks, written between data blocks as soon as the pending leaf entries reach
  ``max_index_chunk`` bytes in the non-root format (``hfile.index.block.max.size``, 128 KiB); each data
  block's index key is the shortest row between the previous block's last row and its own first row
  (``getMidpoint``), the first block's its real first key;
* meta blocks, sorted by name (Hudi: ``bloomFilter``);
* intermediate index blocks while the root level would exceed ``max_index_chunk`` and holds more than
  ``min_index_entries`` (16) entries; the root index (with HBase's 16-byte mid-key metadata when the index has
  more than one level), the meta index, the file info and the 4096-byte trailer.

Blocks carry CRC32 checksums (checksum type 1, which HBase verifies with ``java.util.zip.CRC32``; HBase itself
defaults to CRC32C). The comparator named in the trailer is Hudi's ``HoodieHBaseKVComparator``.
"""

from __future__ import annotations

import logging
import struct
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from typing import Final

from engine.errors import HFileError
from engine.formats.hfile_blocks import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CHECKSUM_CRC32,
    CHECKSUM_CRC32C,
    CHECKSUM_NULL,
    CREATE_TIME_KEY,
    DATA,
    FILE_INFO,
    HEADER_SIZE,
    I32,
    I64,
    INTERMEDIATE_INDEX,
    KEY_VALUE_VERSION,
    KEY_VALUE_VERSION_WITH_MVCC,
    LAST_KEY,
    LATEST_TIMESTAMP,
    LEAF_INDEX,
    MAX_MEMSTORE_TS_KEY,
    META,
    RESERVED_PREFIX,
    ROOT_INDEX,
    SUPPORTED_COMPRESSION,
    TRAILER_SIZE,
    TYPE_PUT,
    IndexEntry,
    Trailer,
    cell_key,
    encode_block,
    encode_file_info,
    encode_nonroot_index,
    encode_root_index,
    encode_trailer,
    index_key,
    midpoint_row,
    write_vlong,
)

logger = logging.getLogger(__name__)

DEFAULT_BLOCK_SIZE: Final = 1024 * 1024
"""Hudi's ``hoodie.hfile.block.size`` default (``HoodieStorageConfig.HFILE_BLOCK_SIZE``)."""
DEFAULT_COMPRESSION: Final = "GZ"
"""Hudi's ``hoodie.hfile.compression.algorithm`` default, used by the metadata table."""
MAX_INDEX_CHUNK: Final = 128 * 1024
"""HBase's ``hfile.index.block.max.size`` default (``HFileBlockIndex.DEFAULT_MAX_CHUNK_SIZE``)."""
MIN_INDEX_ENTRIES: Final = 16
"""HBase's ``hfile.index.block.min.entries`` default (``HFileBlockIndex.DEFAULT_MIN_INDEX_NUM_ENTRIES``)."""
HUDI_COMPARATOR: Final = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
"""The comparator class Hudi 0.14/0.15 files name in their trailer."""
MAX_ROW_LENGTH: Final = 32767
"""``Short.MAX_VALUE``: HBase refuses longer rows."""

_CELL_TAIL: Final = b"\x00" + I64.pack(LATEST_TIMESTAMP) + bytes((TYPE_PUT,))
_CELL_HEAD: Final = struct.Struct(">iiH")
_MID_KEY: Final = struct.Struct(">qii")


class HFileWriter:
    """Builds an HFile in memory (HBase ``HFile.Writer`` as driven by Hudi's ``HoodieAvroHFileWriter``).

    Add cells with :meth:`add` in strictly ascending key order, meta blocks with :meth:`add_meta_block`, file
    info with :meth:`set_file_info`, then call :meth:`finish` for the file's bytes.

    Args:
        block_size: uncompressed bytes after which a data block is closed.
        compression: ``"GZ"`` or ``"NONE"``.
        name: the file's path or a description, used in error messages.
        max_index_chunk: largest index block (non-root format for leaves, root format for the root) before the
            index gets another level.
        min_index_entries: fewest entries an intermediate index block is cut at, and the root must exceed
            before another level is added.
        comparator: the comparator class written in the trailer.
        checksum_type: ``CHECKSUM_CRC32`` (1, zlib: fast), ``CHECKSUM_CRC32C`` (2, HBase's default, computed in
            pure Python: slow) or ``CHECKSUM_NULL`` (0, none).

    Raises:
        HFileError: an unsupported compression, or a block size or chunk size that is not positive.
    """

    def __init__(self, *, block_size: int = DEFAULT_BLOCK_SIZE, compression: str = DEFAULT_COMPRESSION,
                 name: str = "<bytes>", max_index_chunk: int = MAX_INDEX_CHUNK,
                 min_index_entries: int = MIN_INDEX_ENTRIES, comparator: str = HUDI_COMPARATOR,
                 checksum_type: int = CHECKSUM_CRC32) -> None:
        compression = compression.upper()
        if compression not in SUPPORTED_COMPRESSION:
            raise HFileError(f"HFile {name}: unsupported compression {compression!r} (only "
                             f"{', '.join(SUPPORTED_COMPRESSION)} are written)")
        if checksum_type not in (CHECKSUM_NULL, CHECKSUM_CRC32, CHECKSUM_CRC32C):
            raise HFileError(f"HFile {name}: unknown checksum type {checksum_type}")
        if block_size <= 0 or max_index_chunk <= 0 or min_index_entries < 2:
            raise HFileError(f"HFile {name}: block size {block_size} and index chunk size {max_index_chunk} "
                             f"must be positive, min index entries {min_index_entries} at least 2")
        self.name = name
        self.block_size = block_size
        self.compression = compression
        self.max_index_chunk = max_index_chunk
        self.min_index_entries = min_index_entries
        self.comparator = comparator
        self.checksum_type = checksum_type
        self._out = bytearray()
        self._prev_offset: dict[bytes, int] = {}
        self._block = bytearray()
        self._block_first: bytes | None = None
        self._last_row: bytes | None = None
        self._prev_block_last: bytes | None = None
        self._leaf: list[IndexEntry] | None = []
        self._leaf_size = 0
        self._root: list[IndexEntry] = []
        self._root_counts: list[int] = []
        self._levels = 1
        self._data_blocks = 0
        self._first_data = -1
        self._last_data = -1
        self._entries = 0
        self._key_bytes = 0
        self._value_bytes = 0
        self._total_uncompressed = 0
        self._index_uncompressed = 0
        self._meta: dict[str, bytes] = {}
        self._info: dict[str, bytes] = {}
        self._finished = False

    def add(self, key: str | bytes, value: bytes) -> None:
        """Append a cell.

        Raises:
            HFileError: ``key`` is not strictly greater than the previous key (both are named), is longer than
                32767 bytes, or the writer is finished.
        """
        row = key.encode() if isinstance(key, str) else bytes(key)
        if self._finished:
            raise HFileError(f"HFile {self.name}: add({key!r}) after finish()")
        if self._last_row is not None and row <= self._last_row:
            what = "duplicate key" if row == self._last_row else "key out of order"
            raise HFileError(f"HFile {self.name}: {what}: {key!r} added after {self._last_row!r} (keys must be "
                             f"added in strictly ascending byte order)")
        if len(row) > MAX_ROW_LENGTH:
            raise HFileError(f"HFile {self.name}: key of {len(row)} bytes is longer than {MAX_ROW_LENGTH}: "
                             f"{row[:40]!r}...")
        if len(self._block) >= self.block_size:
            self._finish_block()
            self._write_leaf(closing=False)
        if self._block_first is None:
            self._block_first = row
        klen = len(row) + 12
        self._block += _CELL_HEAD.pack(klen, len(value), len(row))
        self._block += row
        self._block += _CELL_TAIL
        self._block += value
        self._block += b"\x00"
        self._last_row = row
        self._entries += 1
        self._key_bytes += klen
        self._value_bytes += len(value)

    def add_meta_block(self, name: str, content: bytes) -> None:
        """Add (or replace) the meta block ``name`` (HBase ``appendMetaBlock``; Hudi's bloom filter is the
        meta block ``bloomFilter`` holding the filter's serialized string as UTF-8)."""
        self._meta[name] = bytes(content)

    def set_file_info(self, key: str, value: bytes) -> None:
        """Set a file info entry (HBase ``appendFileInfo``).

        Raises:
            HFileError: ``key`` starts with ``hfile.``, which HBase reserves for the entries it computes.
        """
        if key.startswith(RESERVED_PREFIX):
            raise HFileError(f"HFile {self.name}: file info key {key!r} uses the reserved prefix "
                             f"{RESERVED_PREFIX!r}")
        self._info[key] = bytes(value)

    @property
    def entry_count(self) -> int:
        """Cells added so far."""
        return self._entries

    def finish(self) -> bytes:
        """Write the remaining blocks, the load-on-open section and the trailer; return the whole file.

        Raises:
            HFileError: called twice.
        """
        if self._finished:
            raise HFileError(f"HFile {self.name}: finish() called twice")
        self._finished = True
        self._finish_block()
        self._write_leaf(closing=True)
        meta_entries = []
        for name in sorted(self._meta, key=lambda s: s.encode()):
            offset, size, _ = self._write(META, self._meta[name], uncompressed_total=True)
            meta_entries.append(IndexEntry(name.encode(), offset, size, name.encode()))
        mid_key = self._mid_key() if self._levels > 1 else b""
        root = self._root
        while (self._levels > 1 and _root_size(root) > self.max_index_chunk
               and len(root) > self.min_index_entries and self._levels < 16):
            root = self._intermediate_level(root)
            self._levels += 1
        root_payload = encode_root_index(root) + mid_key
        load_on_open, _, _ = self._write(ROOT_INDEX, root_payload, uncompressed_total=False)
        self._index_uncompressed += len(root_payload)
        self._write(ROOT_INDEX, encode_root_index(meta_entries), uncompressed_total=True)
        file_info_offset, _, _ = self._write(FILE_INFO, encode_file_info(self._file_info()),
                                             uncompressed_total=True)
        trailer = Trailer(
            file_info_offset=file_info_offset, load_on_open_offset=load_on_open,
            uncompressed_data_index_size=self._index_uncompressed,
            total_uncompressed_bytes=self._total_uncompressed + TRAILER_SIZE,
            data_index_count=len(root), meta_index_count=len(meta_entries), entry_count=self._entries,
            num_data_index_levels=self._levels, first_data_block_offset=self._first_data,
            last_data_block_offset=self._last_data, comparator_class_name=self.comparator,
            compression=self.compression)
        self._out += encode_trailer(trailer)
        logger.debug("HFile %s: %d cells in %d data blocks, %d-level index, %d bytes", self.name,
                     self._entries, self._data_blocks, self._levels, len(self._out))
        data = bytes(self._out)
        self._out = bytearray()
        return data

    # ----------------------------------------------------------------------------------------------------------

    def _write(self, magic: bytes, payload: bytes, *, uncompressed_total: bool) -> tuple[int, int, int]:
        """Append a block; returns its offset, on-disk size with header and uncompressed payload size."""
        offset = len(self._out)
        block = encode_block(magic, payload, self.compression, self._prev_offset.get(magic, -1),
                             self.checksum_type)
        self._out += block
        self._prev_offset[magic] = offset
        if uncompressed_total:
            self._total_uncompressed += HEADER_SIZE + len(payload)
        return offset, len(block), len(payload)

    def _finish_block(self) -> None:
        if not self._block or self._block_first is None:
            return
        offset, size, _ = self._write(DATA, bytes(self._block), uncompressed_total=True)
        if self._first_data < 0:
            self._first_data = offset
        self._last_data = offset
        self._data_blocks += 1
        first = self._block_first
        if self._prev_block_last is None:
            key, row = cell_key(first), first
        else:
            row = midpoint_row(self._prev_block_last, first)
            key = index_key(row)
        assert self._leaf is not None
        self._leaf.append(IndexEntry(row, offset, size, key))
        self._leaf_size += 12 + len(key)
        self._prev_block_last = self._last_row
        self._block = bytearray()
        self._block_first = None

    def _write_leaf(self, *, closing: bool) -> None:
        """HBase ``BlockIndexWriter.shouldWriteBlock`` / ``writeInlineBlock`` / ``blockWritten``."""
        leaf = self._leaf
        if not leaf:
            return
        if closing and not self._root:
            self._root, self._leaf = leaf, None  # one level: the pending leaf entries become the root
            return
        if not closing and 4 + 4 * (len(leaf) + 1) + self._leaf_size < self.max_index_chunk:
            return
        payload = encode_nonroot_index(leaf)
        offset, size, _ = self._write(LEAF_INDEX, payload, uncompressed_total=True)
        self._index_uncompressed += len(payload)
        self._levels = max(self._levels, 2)
        self._root.append(IndexEntry(leaf[0].row, offset, size, leaf[0].key))
        self._root_counts.append(self._data_blocks)
        self._leaf, self._leaf_size = [], 0

    def _mid_key(self) -> bytes:
        """HBase ``BlockIndexChunk.getMidKeyMetadata``: the leaf block holding the middle data block entry,
        its size and the entry's position in it."""
        counts = self._root_counts
        mid = (counts[-1] - 1) // 2
        i = bisect_right(counts, mid)
        before = counts[i - 1] if i > 0 else 0
        return _MID_KEY.pack(self._root[i].offset, self._root[i].size, mid - before)

    def _intermediate_level(self, level: list[IndexEntry]) -> list[IndexEntry]:
        """HBase ``writeIntermediateLevel``: cut ``level`` into intermediate index blocks; return their
        entries (the next level up)."""
        parent: list[IndexEntry] = []
        chunk: list[IndexEntry] = []
        for i, entry in enumerate(level):
            chunk.append(entry)
            if i >= self.min_index_entries and _root_size(chunk) >= self.max_index_chunk:
                parent.append(self._intermediate_block(chunk))
                chunk = []
        if chunk:
            parent.append(self._intermediate_block(chunk))
        return parent

    def _intermediate_block(self, chunk: list[IndexEntry]) -> IndexEntry:
        payload = encode_nonroot_index(chunk)
        offset, size, _ = self._write(INTERMEDIATE_INDEX, payload, uncompressed_total=False)
        self._index_uncompressed += len(payload)
        return IndexEntry(chunk[0].row, offset, size, chunk[0].key)

    def _file_info(self) -> dict[str, bytes]:
        """User entries plus what HBase's ``finishFileInfo`` and ``close`` add."""
        info = dict(self._info)
        n = self._entries
        if self._last_row is not None:
            info[LAST_KEY] = cell_key(self._last_row)
        info[AVG_KEY_LEN] = I32.pack(self._key_bytes // n if n else 0)
        info[CREATE_TIME_KEY] = I64.pack(0)
        info[AVG_VALUE_LEN] = I32.pack(self._value_bytes // n if n else 0)
        info[MAX_MEMSTORE_TS_KEY] = I64.pack(0)
        info[KEY_VALUE_VERSION] = I32.pack(KEY_VALUE_VERSION_WITH_MVCC)
        return info


def _root_size(entries: list[IndexEntry]) -> int:
    """Bytes of ``entries`` in the root index format (``BlockIndexChunk.getRootSize``)."""
    return sum(12 + len(write_vlong(len(e.key))) + len(e.key) for e in entries)


def write_hfile(entries: Iterable[tuple[str | bytes, bytes]], *, file_info: Mapping[str, bytes] | None = None,
                meta_blocks: Mapping[str, bytes] | None = None, block_size: int = DEFAULT_BLOCK_SIZE,
                compression: str = DEFAULT_COMPRESSION, name: str = "<bytes>") -> bytes:
    """An HFile holding ``entries`` (``(key, value)`` in strictly ascending key order), the given file info and
    meta blocks: see :class:`HFileWriter`. With no entries, a valid empty HFile.

    Raises:
        HFileError: keys out of order or duplicated (naming both), a reserved file info key, an unsupported
            compression.
    """
    writer = HFileWriter(block_size=block_size, compression=compression, name=name)
    for info_key, info_value in (file_info or {}).items():
        writer.set_file_info(info_key, info_value)
    for meta_name, content in (meta_blocks or {}).items():
        writer.add_meta_block(meta_name, content)
    for key, value in entries:
        writer.add(key, value)
    return writer.finish()
