"""Parquet files assembled from row groups of other parquet files, their column chunks copied as bytes.

A copy-on-write merge rewrites a whole base file when one of its records changes (Hudi ``HoodieMergeHandle``).
Row groups holding no changed record need not be decoded and encoded again: their column chunks are copied as
they are (Hudi 1.x's binary-copy clustering does the same with parquet-mr). Only ``_hoodie_file_name`` differs
between the stored rows and their copy (Hudi points every record at the file holding it), so that chunk is
replaced by one encoded for the new name.

The footer (Thrift compact protocol, ``FileMetaData`` of ``parquet.thrift``) is read and written field by field
without generated classes: :func:`decode_struct` gives ``[field id, Thrift type, value]`` triples and
:func:`encode_struct` writes them back byte for byte, so fields this module does not know survive a copy. Copied
chunks lose their page indexes and parquet bloom filters (offsets that would point into the old file); statistics,
encodings and dictionary pages travel with them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from thrift.protocol.TCompactProtocol import TCompactProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from engine.errors import CorruptFile

MAGIC = b"PAR1"

Field = list[Any]
"""``[field id, Thrift type, value]``; a struct value is a list of fields, a list value ``(element type, items)``,
a map value ``(key type, value type, [(key, value)])``."""

# parquet.thrift field ids
_FMD_SCHEMA, _FMD_NUM_ROWS, _FMD_ROW_GROUPS = 2, 3, 4
_RG_COLUMNS, _RG_TOTAL_BYTE_SIZE, _RG_NUM_ROWS, _RG_FILE_OFFSET, _RG_TOTAL_COMPRESSED, _RG_ORDINAL = 1, 2, 3, 5, 6, 7
_CC_FILE_OFFSET, _CC_META = 2, 3
_CC_PAGE_INDEX_FIELDS = (4, 5, 6, 7)  # offset/column index offsets and lengths
_MD_TOTAL_UNCOMPRESSED, _MD_TOTAL_COMPRESSED = 6, 7
_MD_DATA_PAGE, _MD_INDEX_PAGE, _MD_DICTIONARY_PAGE = 9, 10, 11
_MD_BLOOM_FIELDS = (14, 15)
_SE_NAME, _SE_NUM_CHILDREN = 4, 5


_SCALARS = {TType.BOOL: "Bool", TType.BYTE: "Byte", TType.I16: "I16", TType.I32: "I32", TType.I64: "I64",
            TType.DOUBLE: "Double", TType.STRING: "Binary"}
"""Thrift scalar types → the suffix of their ``read…``/``write…`` protocol methods."""


def _read_value(proto: TCompactProtocol, ttype: int) -> Any:
    if ttype in _SCALARS:
        return getattr(proto, "read" + _SCALARS[ttype])()
    if ttype == TType.STRUCT:
        return _read_struct(proto)
    if ttype in (TType.LIST, TType.SET):
        element, size = proto.readListBegin()
        items = [_read_value(proto, element) for _ in range(size)]
        proto.readListEnd()
        return element, items
    if ttype == TType.MAP:
        key, value, size = proto.readMapBegin()
        pairs = [(_read_value(proto, key), _read_value(proto, value)) for _ in range(size)]
        proto.readMapEnd()
        return key, value, pairs
    raise CorruptFile(f"parquet footer: unknown Thrift type {ttype}")


def _read_struct(proto: TCompactProtocol) -> list[Field]:
    proto.readStructBegin()
    fields: list[Field] = []
    while True:
        _, ttype, fid = proto.readFieldBegin()
        if ttype == TType.STOP:
            break
        fields.append([fid, ttype, _read_value(proto, ttype)])
        proto.readFieldEnd()
    proto.readStructEnd()
    return fields


def _write_value(proto: TCompactProtocol, ttype: int, value: Any) -> None:
    if ttype in _SCALARS:
        getattr(proto, "write" + _SCALARS[ttype])(value)
    elif ttype == TType.STRUCT:
        _write_struct(proto, value)
    elif ttype in (TType.LIST, TType.SET):
        element, items = value
        proto.writeListBegin(element, len(items))
        for item in items:
            _write_value(proto, element, item)
        proto.writeListEnd()
    elif ttype == TType.MAP:
        key, val, pairs = value
        proto.writeMapBegin(key, val, len(pairs))
        for k, v in pairs:
            _write_value(proto, key, k)
            _write_value(proto, val, v)
        proto.writeMapEnd()
    else:
        raise ValueError(f"unknown Thrift type {ttype}")


def _write_struct(proto: TCompactProtocol, fields: Sequence[Field]) -> None:
    proto.writeStructBegin("")
    for fid, ttype, value in sorted(fields, key=lambda f: f[0]):
        proto.writeFieldBegin("", ttype, fid)
        _write_value(proto, ttype, value)
        proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()


def decode_struct(data: bytes) -> list[Field]:
    """A Thrift compact-protocol struct as ``[field id, type, value]`` triples.

    Raises:
        CorruptFile: the bytes are not a compact-protocol struct.
    """
    try:
        return _read_struct(TCompactProtocol(TMemoryBuffer(data)))
    except CorruptFile:
        raise
    except Exception as exc:  # noqa: BLE001 - thrift raises assorted errors on garbage
        raise CorruptFile(f"parquet footer does not decode: {exc}") from exc


def encode_struct(fields: Sequence[Field]) -> bytes:
    """The compact-protocol bytes of ``fields`` (the inverse of :func:`decode_struct`)."""
    buffer = TMemoryBuffer()
    _write_struct(TCompactProtocol(buffer), fields)
    return bytes(buffer.getvalue())


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
        return encode_struct([[1, TType.LIST, (TType.STRUCT, self.schema)]]) == encode_struct(
            [[1, TType.LIST, (TType.STRUCT, other.schema)]])


def _moved_chunk(chunk: ColumnChunk, to: int) -> list[Field]:
    """``chunk``'s struct with its page offsets moved to start at ``to`` (page indexes and bloom filter dropped)."""
    shift = to - chunk.start
    meta = _without(_get(chunk.struct, _CC_META), _MD_BLOOM_FIELDS)
    for fid in (_MD_DATA_PAGE, _MD_INDEX_PAGE, _MD_DICTIONARY_PAGE):
        value = _get(meta, fid)
        if value:
            _set(meta, fid, TType.I64, value + shift)
    moved = _without(chunk.struct, _CC_PAGE_INDEX_FIELDS)
    _set(moved, _CC_META, TType.STRUCT, meta)
    _set(moved, _CC_FILE_OFFSET, TType.I64, to)
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
    while left > 0:
        data = source.read(min(block, left))
        if not data:
            raise CorruptFile(f"parquet column chunk ends early ({left} bytes missing at {start + length - left})")
        out.write(data)
        left -= len(data)


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
            _copy(source, chunk.start, chunk.length, out)
            moved = _moved_chunk(chunk, position)
            meta = _get(moved, _CC_META)
            compressed += int(_get(meta, _MD_TOTAL_COMPRESSED))
            uncompressed += int(_get(meta, _MD_TOTAL_UNCOMPRESSED))
            columns.append(moved)
            position += chunk.length
        group = _without(part.footer.row_groups[part.group], (_RG_FILE_OFFSET, _RG_TOTAL_COMPRESSED, _RG_ORDINAL))
        _set(group, _RG_COLUMNS, TType.LIST, (TType.STRUCT, columns))
        _set(group, _RG_TOTAL_BYTE_SIZE, TType.I64, uncompressed)
        _set(group, _RG_FILE_OFFSET, TType.I64, group_start)
        _set(group, _RG_TOTAL_COMPRESSED, TType.I64, compressed)
        _set(group, _RG_ORDINAL, TType.I16, ordinal)
        row_groups.append(group)
        total_rows += part.footer.num_rows(part.group)
    fields = [list(f) for f in footer.fields]
    _set(fields, _FMD_NUM_ROWS, TType.I64, total_rows)
    _set(fields, _FMD_ROW_GROUPS, TType.LIST, (TType.STRUCT, row_groups))
    encoded = encode_struct(fields)
    out.write(encoded)
    out.write(struct.pack("<I", len(encoded)))
    out.write(MAGIC)
    return position + len(encoded) + 8
