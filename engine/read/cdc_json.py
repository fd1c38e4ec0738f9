"""The JSON text of CDC images, as Hudi's CDC reader prints them (the ``before`` / ``after`` columns).

Hudi prints images two ways, and so do we:

* :func:`avro_json` — images taken from CDC log records, printed by Avro's ``GenericData.toString``:
  ``{"id": 1, "name": "a1"}`` (``": "`` and ``", "``), strings escaped as Avro does (``/`` becomes ``\\/``),
  ``NaN`` / ``Infinity`` quoted, bytes as an ISO-8859-1 string; a missing image is the *string* ``"null"``
  (``GenericData.toString(null)``), not SQL NULL — what Hudi 0.14/0.15 return.
* :func:`row_json` — images read from base or log files (inferred changes), printed by Jackson from
  Spark's row: compact ``{"id":1,"name":"a1"}``, fields in schema order (Hudi 0.15 keeps it; 0.14 printed
  a hash order), the ``_hoodie_*`` meta columns included, binary as base64.

Both print doubles and floats as Java's ``Double/Float.toString``, dates as epoch days and timestamps as
the long they are stored as (Avro: in the column's unit; Spark rows: microseconds), as Hudi does.
Different on purpose: decimals print as their number (Hudi prints Avro fixed bytes, or Jackson's view of
Spark's ``Decimal`` object), and nested structs, arrays and maps as JSON objects and arrays.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.java_format import java_decimal_to_string, java_double_to_string, java_float_to_string

_Renderer = Callable[[Any], str]

_AVRO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "/": "\\/"}


def _avro_string(text: str) -> str:
    """Avro ``GenericData.writeEscapedString`` inside quotes."""
    out = ['"']
    for ch in text:
        escaped = _AVRO_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch <= "\x1f" or "\x7f" <= ch <= "\x9f" or "\u2000" <= ch <= "\u20ff":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _jackson_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _number(kind: pa.DataType, quote_special: Callable[[str], str]) -> _Renderer:
    fmt = java_float_to_string if pa.types.is_float32(kind) else java_double_to_string

    def render(value: Any) -> str:
        text = fmt(float(value))
        return quote_special(text) if text in ("NaN", "Infinity", "-Infinity") else text
    return render


def _renderer(kind: pa.DataType, avro: bool) -> _Renderer:
    """A function printing one non-null Python value (``to_pylist`` of the prepared column) of ``kind``."""
    string = _avro_string if avro else _jackson_string
    sep, colon = (", ", ": ") if avro else (",", ":")
    if pa.types.is_struct(kind):
        parts = [(string(f.name), _renderer(f.type, avro)) for f in kind]
        names = [f.name for f in kind]

        def struct(value: Any) -> str:
            items = (f"{key}{colon}{'null' if value[name] is None else render(value[name])}"
                     for (key, render), name in zip(parts, names, strict=True))
            return "{" + sep.join(items) + "}"
        return struct
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        element = _renderer(kind.value_type, avro)
        return lambda value: "[" + sep.join("null" if v is None else element(v) for v in value) + "]"
    if pa.types.is_map(kind):
        item = _renderer(kind.item_type, avro)
        return lambda value: "{" + sep.join(
            f"{string(str(k))}{colon}{'null' if v is None else item(v)}" for k, v in value) + "}"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return lambda value: string(str(value))
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        if avro:
            return lambda value: _avro_string(bytes(value).decode("latin-1"))
        return lambda value: '"' + base64.b64encode(bytes(value)).decode("ascii") + '"'
    if pa.types.is_boolean(kind):
        return lambda value: "true" if value else "false"
    if pa.types.is_floating(kind):
        return _number(kind, string)
    if pa.types.is_decimal(kind):
        return lambda value: java_decimal_to_string(value if isinstance(value, Decimal) else Decimal(value))
    return lambda value: str(value)


def _prepare(array: pa.Array, avro: bool) -> pa.Array:
    """``array`` with dates as epoch-day ints and timestamps as longs (Avro: in their unit; Spark rows:
    microseconds), recursively; other types unchanged."""
    kind = array.type
    if pa.types.is_timestamp(kind):
        if not avro and kind.unit != "us":
            array = pc.cast(array, pa.timestamp("us", kind.tz))
        return array.view(pa.int64())
    if pa.types.is_date32(kind):
        return array.view(pa.int32())
    if pa.types.is_date64(kind):
        return pc.divide(array.view(pa.int64()), 86_400_000)
    if pa.types.is_time(kind):
        return array.cast(pa.int64()) if kind.bit_width == 64 else array.cast(pa.int32())
    if pa.types.is_struct(kind):
        children = [_prepare(array.field(i), avro) for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type)
                                                            for f, c in zip(kind, children, strict=True)],
                                          mask=pc.is_null(array))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = _prepare(array.values, avro)
        cls = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
        return cls.from_arrays(array.offsets, values, mask=pc.is_null(array))
    if pa.types.is_map(kind):
        keys, items = _prepare(array.keys, avro), _prepare(array.items, avro)
        return pa.MapArray.from_arrays(array.offsets, keys, items, mask=pc.is_null(array))
    return array


def _render_rows(images: pa.Array | pa.ChunkedArray, avro: bool, null_text: str | None) -> list[str | None]:
    if isinstance(images, pa.ChunkedArray):
        images = images.combine_chunks() if images.num_chunks else pa.array([], images.type)
    prepared = _prepare(images, avro)
    render = _renderer(prepared.type, avro)
    return [null_text if value is None else render(value) for value in prepared.to_pylist()]


def avro_json(images: pa.Array | pa.ChunkedArray) -> list[str | None]:
    """Each struct value of ``images`` as Avro's ``GenericData.toString`` prints it; a null image is the
    string ``"null"`` (as Hudi returns it)."""
    return _render_rows(images, True, "null")


def row_json(rows: pa.Table) -> list[str]:
    """Each row of ``rows`` (all its columns, in order) as Jackson prints a Spark row map."""
    struct = pa.StructArray.from_arrays(
        [c.combine_chunks() if c.num_chunks else pa.array([], c.type) for c in rows.columns],
        fields=list(rows.schema))
    return [text or "{}" for text in _render_rows(struct, False, None)]


__all__ = ["avro_json", "row_json"]
