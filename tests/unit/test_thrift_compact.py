"""The compact-protocol codec against the ``thrift`` package's own ``TCompactProtocol`` (an independent
implementation): same bytes written, same values read, on parquet footers pyarrow wrote and on hand-made
structs with every Thrift type."""

from __future__ import annotations

import io
import struct
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from thrift.protocol.TCompactProtocol import TCompactProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from engine.errors import CorruptFile
from engine.formats import thrift_compact
from engine.formats.thrift_compact import decode_struct, encode_struct

_SCALARS = {TType.BOOL: "Bool", TType.BYTE: "Byte", TType.I16: "I16", TType.I32: "I32", TType.I64: "I64",
            TType.DOUBLE: "Double", TType.STRING: "Binary"}


def _thrift_write(proto: TCompactProtocol, ttype: int, value: Any) -> None:
    if ttype in _SCALARS:
        getattr(proto, "write" + _SCALARS[ttype])(value)
    elif ttype == TType.STRUCT:
        proto.writeStructBegin("")
        for fid, ftype, fvalue in sorted(value, key=lambda f: f[0]):
            proto.writeFieldBegin("", ftype, fid)
            _thrift_write(proto, ftype, fvalue)
            proto.writeFieldEnd()
        proto.writeFieldStop()
        proto.writeStructEnd()
    elif ttype in (TType.LIST, TType.SET):
        element, items = value
        proto.writeListBegin(element, len(items))
        for item in items:
            _thrift_write(proto, element, item)
        proto.writeListEnd()
    else:
        key, val, pairs = value
        proto.writeMapBegin(key, val, len(pairs))
        for k, v in pairs:
            _thrift_write(proto, key, k)
            _thrift_write(proto, val, v)
        proto.writeMapEnd()


def _thrift_read(proto: TCompactProtocol, ttype: int) -> Any:
    if ttype in _SCALARS:
        return getattr(proto, "read" + _SCALARS[ttype])()
    if ttype == TType.STRUCT:
        fields = []
        proto.readStructBegin()
        while True:
            _, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                proto.readStructEnd()
                return fields
            fields.append([fid, ftype, _thrift_read(proto, ftype)])
            proto.readFieldEnd()
    if ttype in (TType.LIST, TType.SET):
        element, size = proto.readListBegin()
        items = [_thrift_read(proto, element) for _ in range(size)]
        proto.readListEnd()
        return element, items
    key, val, size = proto.readMapBegin()
    pairs = [(_thrift_read(proto, key), _thrift_read(proto, val)) for _ in range(size)]
    proto.readMapEnd()
    return key, val, pairs


def _thrift_bytes(fields: list[Any]) -> bytes:
    buffer = TMemoryBuffer()
    _thrift_write(TCompactProtocol(buffer), TType.STRUCT, fields)
    return bytes(buffer.getvalue())


def _footer(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=3, compression="snappy")
    raw = sink.getvalue()
    length = struct.unpack("<I", raw[-8:-4])[0]
    return raw[-8 - length:-8]


def test_parquet_footers_decode_as_thrift_decodes_them_and_encode_back_byte_for_byte() -> None:
    table = pa.table({"id": pa.array(range(10), pa.int64()), "name": [f"n{i}" for i in range(10)],
                      "price": pa.array([i / 3 for i in range(10)]), "flag": [i % 2 == 0 for i in range(10)],
                      "tags": [[str(i)] * (i % 3) for i in range(10)], "empty": pa.nulls(10, pa.string())})
    raw = _footer(table)
    ours, end = decode_struct(raw)
    assert end == len(raw)
    assert ours == _thrift_read(TCompactProtocol(TMemoryBuffer(raw)), TType.STRUCT)
    assert encode_struct(ours) == raw
    assert len(ours[3][2][1]) == 4  # four row groups decoded


def test_every_type_and_edge_value_matches_thrift() -> None:
    nested = [[1, TType.I32, -1], [16, TType.BOOL, False], [40, TType.STRING, b""]]  # a field-id jump > 15
    fields = [
        [1, TType.BOOL, True], [2, TType.BOOL, False], [3, TType.BYTE, -128], [4, TType.I16, -32768],
        [5, TType.I32, 2**31 - 1], [6, TType.I64, -(2**63)], [7, TType.DOUBLE, -0.5],
        [8, TType.STRING, "é€𝄞".encode()], [9, TType.STRUCT, nested],
        [10, TType.LIST, (TType.I64, list(range(-20, 20)))],  # 40 items: the long list header
        [11, TType.LIST, (TType.BOOL, [True, False, True])], [12, TType.SET, (TType.STRING, [b"a", b"b"])],
        [13, TType.MAP, (TType.STRING, TType.I32, [(b"k", 1), (b"l", -2)])], [14, TType.MAP, (0, 0, [])],
        [15, TType.LIST, (TType.STRUCT, [nested, []])], [300, TType.I64, 7],
    ]
    expected = _thrift_bytes(fields)
    assert encode_struct(fields) == expected
    decoded, _ = decode_struct(expected)
    thrift = _thrift_read(TCompactProtocol(TMemoryBuffer(expected)), TType.STRUCT)
    # an empty map carries no key/value types: thrift reports them as 0 too
    assert decoded == thrift
    assert [f[2] for f in decoded[:8]] == [f[2] for f in fields[:8]]


@pytest.mark.parametrize("garbage", [b"\x15", b"\x18\x05ab", b"\x1d\x00", b"\x19\x3c\x02"])
def test_truncated_or_unknown_bytes_raise_corrupt_file(garbage: bytes) -> None:
    with pytest.raises(CorruptFile, match="does not decode|unknown Thrift type"):
        decode_struct(garbage)


def test_decoding_starts_at_an_offset_and_reports_where_the_struct_ends() -> None:
    one = encode_struct([[1, TType.I32, 5]])
    two = encode_struct([[2, TType.STRING, b"x"]])
    first, end = decode_struct(one + two)
    second, after = thrift_compact.decode_struct(one + two, end)
    assert (first, second, after) == ([[1, TType.I32, 5]], [[2, TType.STRING, b"x"]], len(one + two))
