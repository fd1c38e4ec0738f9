"""Columnar decoding of Avro binary records into Arrow (the payloads of ``HoodieAvroDataBlock``).

Decoding record by record with fastavro builds a Python dict per record: about 25 µs per TPC-H lineitem row
and some 3 KB of Python objects per record alive until the chunk is converted to Arrow; it was half of a
compaction task's time. This module decodes a whole chunk of records field by field with numpy instead: the
read position of every record advances together, each field's bytes are gathered into Arrow buffers, and
the result equals ``pa.Table.from_pylist(fastavro records, schema=avro_to_arrow(schema))`` (the unit test
compares them).

Covered, as in :mod:`engine.formats.avro_encode`: a top-level record whose fields are ``boolean``, ``int``,
``long``, ``float``, ``double``, ``string``, ``bytes``, the logical types ``date``, ``time-*``,
``timestamp-*``, ``local-timestamp-*`` and ``decimal`` on ``bytes`` or ``fixed`` (unscaled values within 64
bits), each optionally in a two-branch union with ``null``. :func:`decode_records` returns ``None`` for
anything else, and for bytes it cannot account for exactly (a record not consumed to its last byte, a union
branch out of range, invalid UTF-8, an overlong varint); the caller then decodes with fastavro, which
reports what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

_MAX_VARINT_BYTES = 10
_PADDING = bytes(_MAX_VARINT_BYTES + 8)


class _Malformed(Exception):
    """Bytes this decoder cannot account for (the caller falls back to fastavro)."""


class _Cursor:
    """The byte buffer of a chunk of records and the read position of each record (``pos``, int64)."""

    def __init__(self, data: bytes | memoryview, starts: np.ndarray, lengths: np.ndarray) -> None:
        self.size = len(data)
        self.buf = np.zeros(self.size + len(_PADDING), dtype=np.uint8)
        self.buf[:self.size] = np.frombuffer(data, dtype=np.uint8)
        self.pos = starts.astype(np.int64, copy=True)
        self.ends = self.pos + lengths

    def varints(self, rows: np.ndarray | None) -> np.ndarray:
        """Zigzag varints (int64) at the positions of ``rows`` (all when None), advancing them."""
        pos = self.pos if rows is None else self.pos[rows]
        if len(pos) == 0:
            return np.zeros(0, dtype=np.int64)
        raw = self.buf[pos[:, None] + np.arange(_MAX_VARINT_BYTES)]
        more = (raw & 0x80) != 0
        if more.all(axis=1).any():
            raise _Malformed("varint longer than 10 bytes")
        widths = np.argmin(more, axis=1) + 1
        unsigned = np.zeros(len(pos), dtype=np.uint64)
        for k in range(int(widths.max())):
            part = (raw[:, k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
            unsigned |= np.where(widths > k, part, np.uint64(0))
        values = (unsigned >> np.uint64(1)).astype(np.int64) ^ -(unsigned & np.uint64(1)).astype(np.int64)
        self._advance(rows, widths)
        return values

    def fixed(self, rows: np.ndarray | None, width: int) -> np.ndarray:
        """``width`` raw bytes per row, shape (rows, width), advancing the rows."""
        pos = self.pos if rows is None else self.pos[rows]
        out = self.buf[pos[:, None] + np.arange(width)]
        self._advance(rows, np.full(len(pos), width, dtype=np.int64))
        return out

    def spans(self, rows: np.ndarray | None, lengths: np.ndarray) -> np.ndarray:
        """The bytes of each row's next ``lengths[i]`` bytes, concatenated, advancing the rows."""
        pos = self.pos if rows is None else self.pos[rows]
        if np.any(lengths < 0):
            raise _Malformed("negative length")
        total = int(lengths.sum())
        starts = np.zeros(len(lengths), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        index = np.repeat(pos - starts, lengths) + np.arange(total, dtype=np.int64)
        if total and int(index.max()) >= self.size:
            raise _Malformed("value runs past the chunk")
        out = self.buf[index]
        self._advance(rows, lengths)
        return out

    def _advance(self, rows: np.ndarray | None, widths: np.ndarray) -> None:
        if rows is None:
            self.pos += widths
        else:
            self.pos[rows] += widths


def _offsets(lengths: np.ndarray) -> pa.Buffer:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.py_buffer(offsets)


def _signed_big_endian(raw: np.ndarray) -> np.ndarray:
    """int64 values of big-endian two's complement byte rows (shape (n, width), width ≤ 8)."""
    width = raw.shape[1]
    value = np.zeros(raw.shape[0], dtype=np.uint64)
    for k in range(width):
        value = (value << np.uint64(8)) | raw[:, k].astype(np.uint64)
    signed = value.view(np.int64)
    if 0 < width < 8:
        shift = np.int64(64 - 8 * width)
        signed = (signed << shift) >> shift
    return signed


def _decimal_array(unscaled: np.ndarray, typ: pa.DataType) -> pa.Array:
    pairs = np.empty((len(unscaled), 2), dtype=np.int64)
    pairs[:, 0] = unscaled
    pairs[:, 1] = unscaled >> 63
    return pa.Array.from_buffers(typ, len(unscaled), [None, pa.py_buffer(pairs)])


def _decimal_on_bytes(cursor: _Cursor, rows: np.ndarray | None, typ: pa.DataType) -> pa.Array:
    lengths = cursor.varints(rows)
    if len(lengths) and (lengths.max() > 8 or lengths.min() < 1):
        raise _NotCovered("decimal wider than 64 bits")
    raw = cursor.spans(rows, lengths)
    padded = np.zeros((len(lengths), 8), dtype=np.uint8)
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    for k in range(8):
        has = lengths > k  # byte k from the right of each value
        padded[has, 7 - k] = raw[starts[has] + lengths[has] - 1 - k]
    negative = raw[starts] >= 0x80 if len(lengths) else np.zeros(0, dtype=bool)
    for k in range(8):
        fill = negative & (lengths <= k)
        padded[fill, 7 - k] = 0xFF
    return _decimal_array(_signed_big_endian(padded), typ)


def _decimal_on_fixed(cursor: _Cursor, rows: np.ndarray | None, size: int, typ: pa.DataType) -> pa.Array:
    raw = cursor.fixed(rows, size)
    if size > 8:
        low = raw[:, size - 8:]
        sign = np.where(low[:, 0] >= 0x80, 0xFF, 0x00).astype(np.uint8)
        if not np.all(raw[:, :size - 8] == sign[:, None]):
            raise _NotCovered("decimal wider than 64 bits")
        raw = low
    return _decimal_array(_signed_big_endian(raw), typ)


class _NotCovered(Exception):
    """A type or value this decoder does not handle (the caller falls back to fastavro)."""


_INT_TYPES = {"int": np.int32, "long": np.int64}


def _decode_value(cursor: _Cursor, rows: np.ndarray | None, node: Any, typ: pa.DataType) -> pa.Array:
    """Non-null values of Avro type ``node`` at ``rows``, as an Arrow array of ``typ``."""
    logical = node.get("logicalType") if isinstance(node, dict) else None
    kind = node.get("type") if isinstance(node, dict) else node
    if logical == "decimal" and pa.types.is_decimal128(typ):
        if kind == "bytes":
            return _decimal_on_bytes(cursor, rows, typ)
        if kind == "fixed":
            return _decimal_on_fixed(cursor, rows, int(node.get("size", 0)), typ)
        raise _NotCovered(f"decimal on {kind}")
    if kind in _INT_TYPES:
        values = cursor.varints(rows).astype(_INT_TYPES[kind])
        array = pa.array(values)
        if array.type == typ:
            return array
        if (pa.types.is_timestamp(typ) or pa.types.is_date(typ) or pa.types.is_time(typ)) \
                and typ.bit_width == array.type.bit_width:
            return array.view(typ)
        raise _NotCovered(f"{kind} as {typ}")
    if kind == "boolean" and pa.types.is_boolean(typ):
        return pa.array(cursor.fixed(rows, 1)[:, 0] != 0)
    if kind in ("float", "double") and pa.types.is_floating(typ):
        width = 4 if kind == "float" else 8
        values = np.ascontiguousarray(cursor.fixed(rows, width)).view("<f4" if width == 4 else "<f8")[:, 0]
        return pa.array(values, type=typ)
    if kind in ("string", "bytes") and (pa.types.is_string(typ) or pa.types.is_binary(typ)):
        lengths = cursor.varints(rows)
        data = cursor.spans(rows, lengths)
        large = pa.large_string() if pa.types.is_string(typ) else pa.large_binary()
        array = pa.Array.from_buffers(large, len(lengths), [None, _offsets(lengths), pa.py_buffer(data)])
        if pa.types.is_string(typ):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise _Malformed(str(exc)) from exc
        return array.cast(typ)
    raise _NotCovered(f"Avro type {node!r}")


def _decode_field(cursor: _Cursor, node: Any, typ: pa.DataType) -> pa.Array:
    if not isinstance(node, list):
        return _decode_value(cursor, None, node, typ)
    branches = [b for b in node if b != "null"]
    if len(node) != 2 or len(branches) != 1:
        raise _NotCovered("union other than [null, T]")
    null_branch = node.index("null")
    branch = cursor.varints(None)
    if len(branch) and (branch.min() < 0 or branch.max() > 1):
        raise _Malformed("union branch out of range")
    present = branch != null_branch
    if present.all():
        return _decode_value(cursor, None, branches[0], typ)
    rows = np.nonzero(present)[0]
    values = _decode_value(cursor, rows, branches[0], typ)
    slots = np.cumsum(present) - 1
    return values.take(pa.array(np.where(present, slots, 0), mask=~present))


def decode_records(payloads: Sequence[bytes | memoryview], schema: Mapping[str, Any], arrow_schema: pa.Schema
                   ) -> pa.Table | None:
    """Decode schemaless Avro records (fastavro ``schemaless_reader`` with ``schema`` as writer schema).

    Args:
        payloads: one bytes-like per record.
        schema: the Avro record schema they were written with (parsed JSON).
        arrow_schema: ``avro_to_arrow(schema)``: the result's schema.

    Returns:
        A table of ``len(payloads)`` rows, or None when a field type or value is outside what this module
        covers or the bytes do not decode cleanly (module docstring).
    """
    lengths = np.fromiter((len(p) for p in payloads), dtype=np.int64, count=len(payloads))
    starts = np.zeros(len(payloads), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return decode_spans(b"".join(payloads), starts, lengths, schema, arrow_schema)


def decode_spans(data: bytes | memoryview, starts: np.ndarray, lengths: np.ndarray, schema: Mapping[str, Any],
                 arrow_schema: pa.Schema) -> pa.Table | None:
    """:func:`decode_records` of records that lie in one buffer (as in a log block's content, between
    their length prefixes): record ``i`` is ``data[starts[i]:starts[i] + lengths[i]]``.

    Args:
        data: the bytes holding the records.
        starts, lengths: int64 arrays, one entry per record, within ``data``.
        schema, arrow_schema: as :func:`decode_records`.

    Returns:
        As :func:`decode_records`.
    """
    if schema.get("type") != "record" or len(schema.get("fields", [])) != len(arrow_schema):
        return None
    cursor = _Cursor(data, starts, lengths)
    columns: list[pa.Array] = []
    try:
        for field, arrow_field in zip(schema["fields"], arrow_schema, strict=True):
            columns.append(_decode_field(cursor, field["type"], arrow_field.type))
    except (_NotCovered, _Malformed, IndexError):
        return None
    if not np.array_equal(cursor.pos, cursor.ends):
        return None
    return pa.Table.from_arrays(columns, schema=arrow_schema)


def decode_leading_field(data: bytes | memoryview, starts: np.ndarray, lengths: np.ndarray,
                         schema: Mapping[str, Any], name: str, typ: pa.DataType) -> pa.Array | None:
    """One field of records that lie in one buffer (as :func:`decode_spans`), decoding only the fields up to
    it: a record's leading fields are read to find where ``name`` starts, the rest of the record is skipped.
    Used for the record keys of a log block (``_hoodie_record_key`` is the third field of Hudi's schemas).

    Args:
        data, starts, lengths: as :func:`decode_spans`.
        schema: the Avro record schema the records were written with (parsed JSON).
        name: the field wanted.
        typ: its Arrow type (``avro_to_arrow`` of the field).

    Returns:
        One value per record, or None when the schema has no such field, a field before it (or it) is of a
        type this module does not cover, or the bytes do not decode cleanly (the caller then decodes whole
        records).
    """
    if schema.get("type") != "record":
        return None
    cursor = _Cursor(data, starts, lengths)
    try:
        for field in schema.get("fields", []):
            if field.get("name") == name:
                values = _decode_field(cursor, field["type"], typ)
                return values if bool(np.all(cursor.pos <= cursor.ends)) else None
            node = field["type"]
            if not covers({"type": "record", "fields": [field]}):
                return None
            _decode_field(cursor, node, _skip_type(node))
    except (_NotCovered, _Malformed, IndexError):
        return None
    return None


def _skip_type(node: Any) -> pa.DataType:
    """An Arrow type :func:`_decode_value` accepts for Avro type ``node`` (the value is decoded, then dropped)."""
    if isinstance(node, list):
        node = next(b for b in node if b != "null")
    kind = node.get("type") if isinstance(node, dict) else node
    logical = node.get("logicalType") if isinstance(node, dict) else None
    if logical == "decimal":
        return pa.decimal128(38, int(node.get("scale", 0)))
    return {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
            "double": pa.float64(), "string": pa.binary(), "bytes": pa.binary()}[str(kind)]


def covers(schema: Mapping[str, Any]) -> bool:
    """Whether :func:`decode_records` handles every field type of record ``schema`` (values may still fall
    back, e.g. a decimal wider than 64 bits)."""
    if schema.get("type") != "record":
        return False
    for field in schema.get("fields", []):
        node = field["type"]
        if isinstance(node, list):
            branches = [b for b in node if b != "null"]
            if len(node) != 2 or len(branches) != 1:
                return False
            node = branches[0]
        kind = node.get("type") if isinstance(node, dict) else node
        logical = node.get("logicalType") if isinstance(node, dict) else None
        if logical == "decimal":
            if kind not in ("bytes", "fixed"):
                return False
        elif kind not in ("boolean", "int", "long", "float", "double", "string", "bytes"):
            return False
    return True
