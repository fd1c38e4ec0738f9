"""Reading HFiles (v3) from bytes: the metadata table's base files and the content of its HFile log blocks.

Mirrors Hudi's ``hudi-io`` ``HFileReaderImpl`` (and what ``HoodieAvroHFileReaderImplBase`` asks of it): the
trailer and the load-on-open section (root data index, meta index, file info) are read when the reader is
built; intermediate and leaf index blocks are read when a lookup first goes through them; data blocks are
decompressed and split into cells when first needed and kept in a small LRU cache. Only the row of each cell
key is used (family, qualifier, timestamp and type are ignored, as Hudi does). Compression NONE and GZ;
block checksums are skipped unless ``verify_checksums=True`` (CRC32 is checked with zlib, CRC32C — HBase's
default — in pure Python, which is slow).

The caller reads the file (``engine.storage.Storage.read_bytes``) and hands the bytes over; see
:mod:`engine.formats.hfile_blocks` for the layout.
"""

from __future__ import annotations

import logging
import struct
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from engine.errors import HFileError
from engine.formats.hfile_blocks import (
    BLOCK_NAMES,
    DATA,
    ENCODED_DATA,
    FILE_INFO,
    HEADER,
    HEADER_SIZE,
    INTERMEDIATE_INDEX,
    KEY_VALUE_VERSION,
    KEY_VALUE_VERSION_WITH_MVCC,
    KV_HEAD,
    LAST_KEY,
    LEAF_INDEX,
    MAX_MEMSTORE_TS_KEY,
    META,
    ROOT_INDEX,
    TRAILER_SIZE,
    U16,
    BlockHeader,
    IndexEntry,
    Trailer,
    block_checksums,
    decode_file_info,
    decode_nonroot_index,
    decode_root_index,
    decode_trailer,
    decompress,
    key_row,
    vlong_size,
)

logger = logging.getLogger(__name__)

Key = str | bytes


@dataclass
class _Node:
    """An index block (root, intermediate or leaf) with the rows of its entries, for bisection."""

    rows: list[bytes]
    entries: list[IndexEntry]


@dataclass
class _Cells:
    """A decoded data block: its rows in order, where each value starts and ends in ``payload``, and the offset
    of the block after it in the file."""

    rows: list[bytes]
    starts: list[int]
    ends: list[int]
    payload: bytes
    next_offset: int

    def value(self, i: int) -> bytes:
        """The value of the ``i``-th cell."""
        return self.payload[self.starts[i]:self.ends[i]]


class HFileReader:
    """An HFile held in memory (Hudi ``HFileReaderImpl``; HBase ``HFile.Reader``).

    Args:
        data: the whole file.
        name: the file's path or a description, used in error messages.
        str_keys: return keys as ``str`` (UTF-8, what Hudi stores) rather than ``bytes``. Keys passed in may be
            either.
        verify_checksums: check every block's checksums when it is read.
        cache_blocks: how many decoded data blocks to keep.

    Raises:
        HFileError: bad magic, truncated bytes, an unsupported version, compression or block encoding,
            a malformed trailer, index or file info (the message names ``name``).
    """

    def __init__(self, data: bytes | bytearray | memoryview, *, name: str = "<bytes>", str_keys: bool = True,
                 verify_checksums: bool = False, cache_blocks: int = 8) -> None:
        self._data = data if isinstance(data, bytes | memoryview) else bytes(data)
        self.name = name
        self.str_keys = str_keys
        self.verify_checksums = verify_checksums
        self._cache_size = max(1, cache_blocks)
        self._cells: OrderedDict[int, _Cells] = OrderedDict()
        self._nodes: dict[int, _Node] = {}
        self.trailer: Trailer = decode_trailer(self._data, name)
        self._end = len(self._data) - TRAILER_SIZE
        t = self.trailer
        for what, off in (("load-on-open section", t.load_on_open_offset), ("file info", t.file_info_offset)):
            if not 0 <= off < self._end:
                raise self._error(f"{what} offset {off} lies outside the file ({len(self._data)} bytes)")
        root_header, root_payload = self._read_block(t.load_on_open_offset, ROOT_INDEX)
        try:
            root_entries, _ = decode_root_index(root_payload, t.data_index_count, plain_names=False)
            meta_offset = t.load_on_open_offset + root_header.on_disk_size
            _, meta_payload = self._read_block(meta_offset, ROOT_INDEX)
            meta_entries, _ = decode_root_index(meta_payload, t.meta_index_count, plain_names=True)
            _, info_payload = self._read_block(t.file_info_offset, FILE_INFO)
            self.file_info: dict[str, bytes] = decode_file_info(info_payload)
        except ValueError as e:
            raise self._error(f"corrupt load-on-open section: {e}") from e
        self._root = _Node([e.row for e in root_entries], root_entries)
        self._meta = {e.row.decode("utf-8", "replace"): e for e in meta_entries}
        self._mvcc = self._int_info(KEY_VALUE_VERSION) == KEY_VALUE_VERSION_WITH_MVCC
        self._tags = "hfile.MAX_TAGS_LEN" in self.file_info
        # Bytes after each value when they never vary (HBase: MVCC timestamps are one byte when the file's
        # maximum is 0); -1 when each cell must be looked at.
        fixed = not self._tags and not (self._mvcc and (self._int_info(MAX_MEMSTORE_TS_KEY) or 0) > 0)
        self._fixed_tail = (1 if self._mvcc else 0) if fixed else -1
        self._first_row: bytes | None = None

    # ----------------------------------------------------------------------------------------------------------
    # Metadata

    @property
    def entry_count(self) -> int:
        """Number of cells in the file (the trailer's ``entry_count``)."""
        return self.trailer.entry_count

    def __len__(self) -> int:
        return self.entry_count

    @property
    def compression(self) -> str:
        """``"NONE"`` or ``"GZ"``."""
        return self.trailer.compression

    @property
    def index_levels(self) -> int:
        """Levels of the data block index (1: the root points at data blocks)."""
        return self.trailer.num_data_index_levels

    @property
    def meta_block_names(self) -> list[str]:
        """Names of the meta blocks (Hudi writes ``bloomFilter``)."""
        return list(self._meta)

    @property
    def first_key(self) -> Key | None:
        """The first cell's row, ``None`` for an empty file (read from the first data block)."""
        if self._first_row is None and self.entry_count and self._root.entries:
            self._first_row = self._cells_at(self._first_block().offset).rows[0]
        return None if self._first_row is None else self._out(self._first_row)

    @property
    def last_key(self) -> Key | None:
        """The last cell's row from file info ``hfile.LASTKEY``; ``None`` for an empty file."""
        raw = self.file_info.get(LAST_KEY)
        if not raw or not self.entry_count:
            return None
        try:
            return self._out(key_row(raw))
        except ValueError as e:
            raise self._error(f"corrupt {LAST_KEY} in file info: {e}") from e

    def meta_block(self, name: str) -> bytes | None:
        """The content of the meta block ``name`` (e.g. Hudi's ``bloomFilter``), ``None`` if there is none."""
        entry = self._meta.get(name)
        if entry is None:
            return None
        return self._read_block(entry.offset, META)[1]

    # ----------------------------------------------------------------------------------------------------------
    # Lookups

    def get(self, key: Key) -> bytes | None:
        """The value of the first cell whose row is ``key``, or ``None``."""
        row = _row(key)
        if not self.entry_count:
            return None
        cells = self._cells_at(self._find_block(row).offset)
        while True:
            i = bisect_left(cells.rows, row)
            if i < len(cells.rows):
                return cells.value(i) if cells.rows[i] == row else None
            nxt = self._next_data_block(cells.next_offset)
            if nxt is None:
                return None
            cells = self._cells_at(nxt)

    def get_many(self, keys: Iterable[Key]) -> dict[Key, bytes]:
        """Look many keys up at once: ``{key: value}`` for the keys present (first cell of each row), in key
        order. The keys are sorted (and deduplicated) first; the walk only moves forward, so each data block is
        decoded at most once however many keys fall in it (the record-level index looks thousands of keys up
        per file)."""
        wanted = sorted({_row(k): k for k in keys}.items())
        found: dict[Key, bytes] = {}
        if not wanted or not self.entry_count:
            return found
        cells: _Cells | None = None
        offset = -1
        for row, original in wanted:
            if cells is None or row > cells.rows[-1]:
                target = self._find_block(row).offset
                if cells is not None and target < cells.next_offset:
                    nxt = self._next_data_block(cells.next_offset)
                    if nxt is None:
                        break
                    target = nxt
                offset = target
                cells = self._cells_at(offset)
            while True:
                i = bisect_left(cells.rows, row)
                if i < len(cells.rows):
                    if cells.rows[i] == row:
                        found[original] = cells.value(i)
                    break
                nxt = self._next_data_block(cells.next_offset)
                if nxt is None:
                    return found
                offset = nxt
                cells = self._cells_at(offset)
        return found

    def scan(self, start_key: Key | None = None) -> Iterator[tuple[Key, bytes]]:
        """All cells in key order as ``(key, value)``, from the first one whose row is ``>= start_key``."""
        if not self.str_keys:
            yield from self._scan_rows(None if start_key is None else _row(start_key))
            return
        decode = self._decode
        for row, value in self._scan_rows(None if start_key is None else _row(start_key)):
            yield decode(row), value

    def prefix_scan(self, prefix: Key) -> Iterator[tuple[Key, bytes]]:
        """The cells whose row starts with ``prefix``, in key order."""
        p = _row(prefix)
        for row, value in self._scan_rows(p):
            if not row.startswith(p):
                return
            yield self._out(row), value

    # ----------------------------------------------------------------------------------------------------------
    # Internals

    def _scan_rows(self, start: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        if not self.entry_count or not self._root.entries:
            return
        offset: int | None = (self._first_block() if start is None else self._find_block(start)).offset
        first = True
        while offset is not None:
            cells = self._cells_at(offset)
            i = bisect_left(cells.rows, start) if first and start is not None else 0
            first = False
            rows, starts, ends, payload = cells.rows, cells.starts, cells.ends, cells.payload
            for j in range(i, len(rows)):
                yield rows[j], payload[starts[j]:ends[j]]
            offset = self._next_data_block(cells.next_offset)

    def _error(self, what: str) -> HFileError:
        return HFileError(f"HFile {self.name}: {what}")

    def _int_info(self, key: str) -> int | None:
        raw = self.file_info.get(key)
        return int.from_bytes(raw, "big", signed=True) if raw else None

    def _decode(self, row: bytes) -> str:
        try:
            return row.decode()
        except UnicodeDecodeError as e:
            raise self._error(f"key {row!r} is not UTF-8: read it with str_keys=False") from e

    def _out(self, row: bytes) -> Key:
        return self._decode(row) if self.str_keys else row

    def _header(self, offset: int) -> BlockHeader:
        if not 0 <= offset or offset + HEADER_SIZE > self._end:
            raise self._error(f"truncated: block header at offset {offset} runs past the data section "
                              f"(which ends at {self._end})")
        magic, *rest = HEADER.unpack_from(self._data, offset)
        h = BlockHeader(magic, *rest)
        if magic not in BLOCK_NAMES:
            raise self._error(f"bad block magic {magic!r} at offset {offset}")
        if h.on_disk_size_without_header < 0 or offset + h.on_disk_size > self._end:
            raise self._error(f"truncated: {BLOCK_NAMES[magic]} block at offset {offset} says it is "
                              f"{h.on_disk_size} bytes, past the data section (which ends at {self._end})")
        if not HEADER_SIZE <= h.on_disk_data_size_with_header <= h.on_disk_size \
                or h.uncompressed_size_without_header < 0:
            raise self._error(f"corrupt header of the {BLOCK_NAMES[magic]} block at offset {offset}")
        return h

    def _read_block(self, offset: int, expected: bytes) -> tuple[BlockHeader, bytes]:
        """Header and uncompressed payload of the block at ``offset``, which must be of type ``expected``."""
        h = self._header(offset)
        if h.magic != expected:
            if h.magic == ENCODED_DATA:
                raise self._error(f"encoded data block at offset {offset}: data block encodings are not "
                                  f"supported")
            raise self._error(f"expected a {BLOCK_NAMES[expected]} block at offset {offset}, found "
                              f"{BLOCK_NAMES[h.magic]}")
        end = offset + h.on_disk_data_size_with_header
        if self.verify_checksums:
            self._check(offset, h)
        try:
            payload = decompress(self._data[offset + HEADER_SIZE:end], self.trailer.compression,
                                 h.uncompressed_size_without_header)
        except ValueError as e:
            raise self._error(f"{BLOCK_NAMES[h.magic]} block at offset {offset}: {e}") from e
        return h, payload

    def _check(self, offset: int, h: BlockHeader) -> None:
        if h.checksum_type == 0:
            return
        if h.checksum_type not in (1, 2) or h.bytes_per_checksum <= 0:
            raise self._error(f"unknown checksum type {h.checksum_type} in the block at offset {offset}")
        end = offset + h.on_disk_data_size_with_header
        want = block_checksums(h.checksum_type, self._data[offset:end], h.bytes_per_checksum)
        have = bytes(self._data[end:offset + h.on_disk_size])
        if want != have:
            raise self._error(f"checksum mismatch in the {BLOCK_NAMES[h.magic]} block at offset {offset}")

    def _node(self, entry: IndexEntry, level: int) -> _Node:
        node = self._nodes.get(entry.offset)
        if node is None:
            magic = LEAF_INDEX if level == 2 else INTERMEDIATE_INDEX
            payload = self._read_block(entry.offset, magic)[1]
            try:
                entries = decode_nonroot_index(payload)
            except ValueError as e:
                raise self._error(f"corrupt {BLOCK_NAMES[magic]} block at offset {entry.offset}: {e}") from e
            if not entries:
                raise self._error(f"empty {BLOCK_NAMES[magic]} block at offset {entry.offset}")
            node = self._nodes[entry.offset] = _Node([e.row for e in entries], entries)
        return node

    def _find_block(self, row: bytes) -> IndexEntry:
        """The data block to start looking for ``row`` in: the last one whose index key is ``< row`` (the first
        one if none), descending through intermediate and leaf index blocks."""
        node, level = self._root, self.index_levels
        while True:
            if not node.entries:
                raise self._error("data block index has no entries but the file counts cells")
            entry = node.entries[max(0, bisect_left(node.rows, row) - 1)]
            if level <= 1:
                return entry
            node, level = self._node(entry, level), level - 1

    def _first_block(self) -> IndexEntry:
        node, level = self._root, self.index_levels
        while level > 1:
            node, level = self._node(node.entries[0], level), level - 1
        return node.entries[0]

    def _next_data_block(self, offset: int) -> int | None:
        """The offset of the first data block at or after ``offset`` (leaf index and bloom blocks written
        between data blocks are skipped), or ``None`` past the last one."""
        last = self.trailer.last_data_block_offset
        while 0 <= offset <= last:
            h = self._header(offset)
            if h.magic == DATA:
                return offset
            if h.magic == ENCODED_DATA:
                raise self._error(f"encoded data block at offset {offset}: data block encodings are not "
                                  f"supported")
            offset += h.on_disk_size
        return None

    def _cells_at(self, offset: int) -> _Cells:
        cells = self._cells.get(offset)
        if cells is not None:
            self._cells.move_to_end(offset)
            return cells
        h, payload = self._read_block(offset, DATA)
        cells = self._split(payload, offset)
        cells.next_offset = offset + h.on_disk_size
        self._cells[offset] = cells
        if len(self._cells) > self._cache_size:
            self._cells.popitem(last=False)
        return cells

    def _after_value(self, payload: bytes, pos: int) -> int:
        """Where the next cell starts, given where a value ends: past the tags and the MVCC vlong, if any."""
        if self._tags:
            pos += 2 + U16.unpack_from(payload, pos)[0]
        if self._mvcc:
            pos += vlong_size(payload[pos])
        return pos

    def _split(self, payload: bytes, offset: int) -> _Cells:
        """Split a data block payload into cells: int32 key length, int32 value length, key (int16 row
        length, row, ...), value, [int16 tags length, tags], [Hadoop vlong MVCC timestamp]."""
        rows: list[bytes] = []
        starts: list[int] = []
        ends: list[int] = []
        add_row, add_start, add_end = rows.append, starts.append, ends.append
        pos, n = 0, len(payload)
        unpack = KV_HEAD.unpack_from
        tail = self._fixed_tail  # bytes after each value when fixed (the usual case), else -1: look at each cell
        try:
            while pos < n:
                klen, vlen, rlen = unpack(payload, pos)
                vs = pos + 8 + klen
                end = vs + vlen
                if rlen + 2 > klen or vlen < 0 or end > n:
                    raise ValueError(f"cell {len(rows)} (key length {klen}, row length {rlen}, value "
                                     f"length {vlen}) does not fit the block")
                add_row(payload[pos + 10:pos + 10 + rlen])
                add_start(vs)
                add_end(end)
                pos = end + tail if tail >= 0 else self._after_value(payload, end)
            if pos != n:
                raise ValueError(f"last cell ends at {pos}, past the block's {n} bytes")
        except (ValueError, IndexError, struct.error) as e:
            raise self._error(f"corrupt data block at offset {offset}: {e}") from e
        if not rows:
            raise self._error(f"empty data block at offset {offset}")
        return _Cells(rows, starts, ends, payload, 0)


def _row(key: Key) -> bytes:
    return key.encode() if isinstance(key, str) else bytes(key)


def read_hfile(data: bytes | bytearray | memoryview, *, name: str = "<bytes>",
               str_keys: bool = True) -> list[tuple[Key, bytes]]:
    """Every cell of an HFile as ``(key, value)`` in key order (for small files: HFile log blocks).

    Raises:
        HFileError: as :class:`HFileReader`.
    """
    return list(HFileReader(data, name=name, str_keys=str_keys).scan())
