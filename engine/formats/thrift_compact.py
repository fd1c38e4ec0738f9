"""Thrift's compact protocol, decoded and encoded generically: ``[field id, Thrift type, value]`` triples.

Parquet footers (``FileMetaData`` of ``parquet.thrift``) and page headers are Thrift compact-protocol structs.
:mod:`engine.formats.parquet_splice` rewrites footers field by field without generated classes, so that fields
it does not know survive a copy. The ``thrift`` package's ``TCompactProtocol`` reads a byte at a time through a
transport object and costs about 4 ms per row group of a 22-column footer; this codec works on one ``bytes``
buffer with an index and writes into one ``bytearray`` (the same bytes as ``TCompactProtocol`` writes, which the
tests check against footers pyarrow wrote).

Representation (the ``thrift`` package's ``TType`` codes, so values compare with what it decodes):

- a struct is a list of ``[field id, type, value]``;
- scalars: ``bool``, ``int`` (byte, i16, i32, i64), ``float`` (double), ``bytes`` (binary/string);
- a list or set is ``(element type, [items])``; a map is ``(key type, value type, [(key, value)])``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from engine.errors import CorruptFile

Field = list[Any]
"""``[field id, Thrift type, value]``."""

# TType codes (thrift.Thrift.TType)
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15

# compact-protocol type ids
_C_TRUE, _C_FALSE, _C_BYTE, _C_I16, _C_I32, _C_I64, _C_DOUBLE, _C_BINARY, _C_LIST, _C_SET, _C_MAP, _C_STRUCT = (
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
_TO_TTYPE = {_C_TRUE: BOOL, _C_FALSE: BOOL, _C_BYTE: BYTE, _C_I16: I16, _C_I32: I32, _C_I64: I64,
             _C_DOUBLE: DOUBLE, _C_BINARY: STRING, _C_LIST: LIST, _C_SET: SET, _C_MAP: MAP, _C_STRUCT: STRUCT}
_TO_COMPACT = {BOOL: _C_TRUE, BYTE: _C_BYTE, I16: _C_I16, I32: _C_I32, I64: _C_I64, DOUBLE: _C_DOUBLE,
               STRING: _C_BINARY, LIST: _C_LIST, SET: _C_SET, MAP: _C_MAP, STRUCT: _C_STRUCT}
_INTS = frozenset((I16, I32, I64))
_DOUBLE = struct.Struct("<d")


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def varint(self) -> int:
        data, pos = self.data, self.pos
        result = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.pos = pos
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, ttype: int) -> Any:
        if ttype in _INTS:
            return self.zigzag()
        if ttype == STRING:
            size = self.varint()
            start = self.pos
            self.pos = start + size
            if self.pos > len(self.data):
                raise IndexError("binary runs past the end")
            return bytes(self.data[start:self.pos])
        if ttype == STRUCT:
            return self.struct()
        if ttype == BYTE:
            byte = self.data[self.pos]
            self.pos += 1
            return byte - 256 if byte > 127 else byte
        if ttype == BOOL:  # a collection element: one byte
            byte = self.data[self.pos]
            self.pos += 1
            return byte == _C_TRUE
        if ttype == DOUBLE:
            (number,) = _DOUBLE.unpack_from(self.data, self.pos)
            self.pos += 8
            return number
        if ttype in (LIST, SET):
            header = self.data[self.pos]
            self.pos += 1
            size = header >> 4
            if size == 15:
                size = self.varint()
            element = _TO_TTYPE[header & 0x0F]
            return element, [self.value(element) for _ in range(size)]
        if ttype == MAP:
            size = self.varint()
            if not size:
                return STOP, STOP, []
            kinds = self.data[self.pos]
            self.pos += 1
            key, val = _TO_TTYPE[kinds >> 4], _TO_TTYPE[kinds & 0x0F]
            return key, val, [(self.value(key), self.value(val)) for _ in range(size)]
        raise CorruptFile(f"unknown Thrift type {ttype}")

    def struct(self) -> list[Field]:
        fields: list[Field] = []
        last = 0
        data = self.data
        while True:
            header = data[self.pos]
            self.pos += 1
            if header == STOP:
                return fields
            delta, ctype = header >> 4, header & 0x0F
            fid = last + delta if delta else self.zigzag()
            last = fid
            ttype = _TO_TTYPE[ctype]
            if ttype == BOOL:
                fields.append([fid, BOOL, ctype == _C_TRUE])
            else:
                fields.append([fid, ttype, self.value(ttype)])


def _write_varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _write_zigzag(out: bytearray, n: int, bits: int) -> None:
    _write_varint(out, ((n << 1) ^ (n >> (bits - 1))) & ((1 << bits) - 1))


_BITS = {I16: 16, I32: 32, I64: 64}


def _write_value(out: bytearray, ttype: int, value: Any) -> None:
    if ttype in _INTS:
        _write_zigzag(out, value, _BITS[ttype])
    elif ttype == STRING:
        data = value.encode("utf-8") if isinstance(value, str) else value
        _write_varint(out, len(data))
        out += data
    elif ttype == STRUCT:
        _write_struct(out, value)
    elif ttype == BYTE:
        out.append(value & 0xFF)
    elif ttype == BOOL:
        out.append(_C_TRUE if value else _C_FALSE)
    elif ttype == DOUBLE:
        out += _DOUBLE.pack(value)
    elif ttype in (LIST, SET):
        element, items = value
        size = len(items)
        if size < 15:
            out.append((size << 4) | _TO_COMPACT[element])
        else:
            out.append(0xF0 | _TO_COMPACT[element])
            _write_varint(out, size)
        for item in items:
            _write_value(out, element, item)
    elif ttype == MAP:
        key, val, pairs = value
        if not pairs:
            out.append(0)
            return
        _write_varint(out, len(pairs))
        out.append((_TO_COMPACT[key] << 4) | _TO_COMPACT[val])
        for k, v in pairs:
            _write_value(out, key, k)
            _write_value(out, val, v)
    else:
        raise ValueError(f"unknown Thrift type {ttype}")


def _write_struct(out: bytearray, fields: Sequence[Field]) -> None:
    last = 0
    for fid, ttype, value in sorted(fields, key=lambda f: f[0]):
        ctype = (_C_TRUE if value else _C_FALSE) if ttype == BOOL else _TO_COMPACT[ttype]
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | ctype)
        else:
            out.append(ctype)
            _write_zigzag(out, fid, 16)
        last = fid
        if ttype != BOOL:
            _write_value(out, ttype, value)
    out.append(STOP)


def decode_struct(data: bytes, start: int = 0) -> tuple[list[Field], int]:
    """The compact-protocol struct at ``data[start:]`` and the offset just past it.

    Raises:
        CorruptFile: the bytes are not a compact-protocol struct (truncated, unknown type).
    """
    reader = _Reader(data)
    reader.pos = start
    try:
        fields = reader.struct()
    except CorruptFile:
        raise
    except (IndexError, KeyError, struct.error) as exc:
        raise CorruptFile(f"Thrift compact struct does not decode at byte {reader.pos}: {exc!r}") from exc
    return fields, reader.pos


def encode_struct(fields: Sequence[Field]) -> bytes:
    """The compact-protocol bytes of ``fields`` (the inverse of :func:`decode_struct`; field ids in ascending
    order, as Thrift writes them)."""
    out = bytearray()
    _write_struct(out, fields)
    return bytes(out)
