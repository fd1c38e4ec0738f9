"""Parquet files assembled from row groups of other parquet files, their column chunks copied as bytes.

A copy-on-write merge rewrites a whole base file when one of its records changes (Hudi ``HoodieMergeHandle``).
Row groups holding no changed record need not be decoded and encoded again: their column chunks are copied as
they are (Hudi 1.x's binary-copy clustering does the same with parquet-mr). Only ``_hoodie_file_name`` differs
between the stored rows and their copy (Hudi points every record at the file holding it), so that chunk is
replaced by one encoded for the new name.

The footer (Thrift compact protocol, ``FileMetaData`` of ``parquet.thrift``) is read and written field by field
without generated classes (:mod:`engine.formats.thrift_compact`): :func:`decode_struct` gives ``[field id, Thrift
type, value]`` triples and :func:`encode_struct` writes them back byte for byte, so fields this module does not know survive a copy. Copied
chunks lose their page indexes and parquet bloom filters (offsets that would point into the old file); statistics,
encodings and dictionary pages travel with them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from engine.errors import CorruptFile
from engine.formats import thrift_compact
from engine.formats.thrift_compact import I16, I64, LIST, STRUCT, Field, encode_struct

MAGIC = b"PAR1"

# parquet.thrift field ids
_FMD_SCHEMA, _FMD_NUM_ROWS, _FMD_ROW_GROUPS = 2, 3, 4
_RG_COLUMNS, _RG_TOTAL_BYTE_SIZE, _RG_NUM_ROWS, _RG_FILE_OFFSET, _RG_TOTAL_COMPRESSED, _RG_ORDINAL = 1, 2, 3, 5, 6, 7
_CC_FILE_OFFSET, _CC_META = 2, 3
_CC_PAGE_INDEX_FIELDS = (4, 5, 6, 7)  # offset/column index offsets and lengths
_MD_TOTAL_UNCOMPRESSED, _MD_TOTAL_COMPRESSED = 6, 7
_MD_DATA_PAGE, _MD_INDEX_PAGE, _MD_DICTIONARY_PAGE = 9, 10, 11
_MD_ENCODING_STATS = 13
_MD_BLOOM_FIELDS = (14, 15)
_PAGE_DATA, _PAGE_DATA_V2 = 0, 3
_DICTIONARY_ENCODINGS = frozenset((2, 8))  # PLAIN_DICTIONARY, RLE_DICTIONARY
_SE_NAME, _SE_NUM_CHILDREN = 4, 5


def decode_struct(data: bytes) -> list[Field]:
    """A Thrift compact-protocol struct as ``[field id, type, value]`` triples
    (:func:`engine.formats.thrift_compact.decode_struct`).

    Raises:
        CorruptFile: the bytes are not a compact-protocol struct.
    """
    try:
        return thrift_compact.decode_struct(data)[0]
    except CorruptFile as exc:
        raise CorruptFile(f"parquet footer does not decode: {exc}") from exc


def _get(fields: Sequence[Field], fid: int) -> Any:
    for field in fields:
        if field[0] == fid:
            return field[2]
    return None


def _set(fields: list[Field], fid: int, ttype: int, value: Any) -> None:
    for field in fields:
        if field[0] == fid:
            field[1], field[2] = ttype, value
            return
    fields.append([fid, ttype, value])


def _without(fields: Sequence[Field], fids: Iterable[int]) -> list[Field]:
    drop = set(fids)
    return [list(f) for f in fields if f[0] not in drop]


@dataclass(frozen=True)
class ColumnChunk:
    """One column chunk: its footer struct and where its pages lie in its file."""

    struct: list[Field]
    start: int
    length: int


@dataclass(frozen=True)
class ParquetFooter:
    """A parquet file's decoded ``FileMetaData`` and where its footer begins.

    Attributes:
        fields: the decoded struct.
        footer_start: byte offset of the footer (after the last page).
    """

    fields: list[Field]
    footer_start: int

    @staticmethod
    def read(source: BinaryIO, size: int, name: str) -> ParquetFooter:
        """The footer of the parquet file ``source`` (``size`` bytes; ``name`` for messages).

        Raises:
            CorruptFile: no parquet magic, or a footer that does not decode.
        """
        if size < 12:
            raise CorruptFile(f"parquet file {name}: {size} bytes, too few for parquet")
        source.seek(size - 8)
        tail = source.read(8)
        if tail[4:] != MAGIC:
            raise CorruptFile(f"parquet file {name}: no PAR1 magic at its end")
        length = struct.unpack("<I", tail[:4])[0]
        start = size - 8 - length
        if start < 4:
            raise CorruptFile(f"parquet file {name}: footer length {length} exceeds the file")
        source.seek(start)
        return ParquetFooter(decode_struct(source.read(length)), start)

    @property
    def schema(self) -> list[Any]:
        """The ``SchemaElement`` structs (the root first)."""
        return list(_get(self.fields, _FMD_SCHEMA)[1])

    @property
    def column_names(self) -> list[str]:
        """Names of the leaf columns in order (top-level flat schemas: the columns)."""
        return [_get(e, _SE_NAME).decode("utf-8") for e in self.schema[1:]]

    @property
    def row_groups(self) -> list[list[Field]]:
        """The ``RowGroup`` structs."""
        groups = _get(self.fields, _FMD_ROW_GROUPS)
        return list(groups[1]) if groups else []

    def num_rows(self, group: int) -> int:
        """Rows of row group ``group``."""
        return int(_get(self.row_groups[group], _RG_NUM_ROWS))

    def chunks(self, group: int) -> list[ColumnChunk]:
        """The column chunks of row group ``group``, in column order."""
        out = []
        for chunk in _get(self.row_groups[group], _RG_COLUMNS)[1]:
            meta = _get(chunk, _CC_META)
            dictionary = _get(meta, _MD_DICTIONARY_PAGE)
            start = dictionary if dictionary else _get(meta, _MD_DATA_PAGE)
            out.append(ColumnChunk(chunk, int(start), int(_get(meta, _MD_TOTAL_COMPRESSED))))
        return out

    def dictionary_only(self, group: int, column: int) -> bool:
        """Whether every data page of leaf ``column`` in row group ``group`` is dictionary-encoded (its
        ``encoding_stats``; True when the writer recorded none). False when the chunk has no dictionary or its
        writer fell back to plain pages after the dictionary grew too large: encoding that column again need not
        try a dictionary first."""
        chunk = _get(self.row_groups[group], _RG_COLUMNS)[1][column]
        stats = _get(_get(chunk, _CC_META), _MD_ENCODING_STATS)
        if not stats:
            return True
        return all(_get(s, 2) in _DICTIONARY_ENCODINGS for s in stats[1]
                   if _get(s, 1) in (_PAGE_DATA, _PAGE_DATA_V2) and _get(s, 3))

    @property
    def is_flat(self) -> bool:
        """Whether every column is a top-level leaf (no groups): leaf ``i`` is then schema element ``i + 1``."""
        return all(not _get(e, _SE_NUM_CHILDREN) for e in self.schema[1:])

    def same_leaf(self, index: int, other: ParquetFooter, other_index: int) -> bool:
        """Whether leaf column ``index`` here is declared as ``other``'s leaf ``other_index`` (equal
        ``SchemaElement``s; both schemas flat): a chunk of one can then stand in for the other's."""
        if not (self.is_flat and other.is_flat):
            return False
        return encode_struct(self.schema[index + 1]) == encode_struct(other.schema[other_index + 1])

    def same_layout(self, other: ParquetFooter) -> bool:
        """Whether both files declare the same columns with the same types (their ``SchemaElement`` lists are
        equal): row groups of one can then stand in the other."""
        return encode_struct([[1, LIST, (STRUCT, self.schema)]]) == encode_struct(
            [[1, LIST, (STRUCT, other.schema)]])


def _moved_chunk(chunk: ColumnChunk, to: int) -> list[Field]:
    """``chunk``'s struct with its page offsets moved to start at ``to`` (page indexes and bloom filter dropped)."""
    shift = to - chunk.start
    meta = _without(_get(chunk.struct, _CC_META), _MD_BLOOM_FIELDS)
    for fid in (_MD_DATA_PAGE, _MD_INDEX_PAGE, _MD_DICTIONARY_PAGE):
        value = _get(meta, fid)
        if value:
            _set(meta, fid, I64, value + shift)
    moved = _without(chunk.struct, _CC_PAGE_INDEX_FIELDS)
    _set(moved, _CC_META, STRUCT, meta)
    _set(moved, _CC_FILE_OFFSET, I64, to)
    return moved


@dataclass(frozen=True)
class GroupSource:
    """A row group to place in the assembled file.

    Attributes:
        source: the file holding it (readable, seekable).
        footer: that file's footer.
        group: the row group's index there.
        replace: column index → (source, chunk) whose bytes and metadata stand in for that column's chunk
            (same row count and column type).
    """

    source: BinaryIO
    footer: ParquetFooter
    group: int
    replace: tuple[tuple[int, BinaryIO, ColumnChunk], ...] = ()


def _copy(source: BinaryIO, start: int, length: int, out: BinaryIO, block: int = 8 << 20) -> None:
    source.seek(start)
    left = length
    read = getattr(source, "read_buffer", None) or source.read  # Arrow files: no copy into Python bytes
    while left > 0:
        data = read(min(block, left))
        if not len(data):
            raise CorruptFile(f"parquet column chunk ends early ({left} bytes missing at {start + length - left})")
        out.write(data)
        left -= len(data)


class _Copier:
    """Copies byte ranges to ``out`` in order, joining a range that starts where the previous one from the same
    source ended (the column chunks of a copied row group lie back to back) into one read and write."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.pending: tuple[BinaryIO, int, int] | None = None

    def add(self, source: BinaryIO, start: int, length: int) -> None:
        if self.pending is not None:
            src, begin, size = self.pending
            if src is source and begin + size == start:
                self.pending = (src, begin, size + length)
                return
            _copy(src, begin, size, self.out)
        self.pending = (source, start, length)

    def flush(self) -> None:
        if self.pending is not None:
            _copy(*self.pending, self.out)
            self.pending = None


def assemble(out: BinaryIO, groups: Sequence[GroupSource], footer: ParquetFooter) -> int:
    """Write a parquet file of ``groups`` (in order) to ``out``, with ``footer``'s schema, key/value metadata and
    other fields (its row groups and row count are replaced). Every group's file must have ``footer``'s layout
    (:meth:`ParquetFooter.same_layout`).

    Returns:
        Bytes written.

    Raises:
        CorruptFile: a chunk cannot be read whole.
    """
    out.write(MAGIC)
    position = len(MAGIC)
    copier = _Copier(out)
    row_groups = []
    total_rows = 0
    for ordinal, part in enumerate(groups):
        chunks = part.footer.chunks(part.group)
        replaced = {index: (source, chunk) for index, source, chunk in part.replace}
        columns = []
        group_start = position
        compressed = uncompressed = 0
        for index, chunk in enumerate(chunks):
            source, chunk = replaced.get(index, (part.source, chunk))
            copier.add(source, chunk.start, chunk.length)
            moved = _moved_chunk(chunk, position)
            meta = _get(moved, _CC_META)
            compressed += int(_get(meta, _MD_TOTAL_COMPRESSED))
            uncompressed += int(_get(meta, _MD_TOTAL_UNCOMPRESSED))
            columns.append(moved)
            position += chunk.length
        group = _without(part.footer.row_groups[part.group], (_RG_FILE_OFFSET, _RG_TOTAL_COMPRESSED, _RG_ORDINAL))
        _set(group, _RG_COLUMNS, LIST, (STRUCT, columns))
        _set(group, _RG_TOTAL_BYTE_SIZE, I64, uncompressed)
        _set(group, _RG_FILE_OFFSET, I64, group_start)
        _set(group, _RG_TOTAL_COMPRESSED, I64, compressed)
        _set(group, _RG_ORDINAL, I16, ordinal)
        row_groups.append(group)
        total_rows += part.footer.num_rows(part.group)
    copier.flush()
    fields = [list(f) for f in footer.fields]
    _set(fields, _FMD_NUM_ROWS, I64, total_rows)
    _set(fields, _FMD_ROW_GROUPS, LIST, (STRUCT, row_groups))
    encoded = encode_struct(fields)
    out.write(encoded)
    out.write(struct.pack("<I", len(encoded)))
    out.write(MAGIC)
    return position + len(encoded) + 8
