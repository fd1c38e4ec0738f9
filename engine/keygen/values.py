"""Column access and Java stringification of key and partition values (Hudi
``HoodieAvroUtils.getNestedFieldValAsString`` + ``StringUtils.objToString``, vectorized over Arrow)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import InvalidRecordKey
from engine.formats.conform import field_values
from engine.java_format import (
    java_decimal_to_string,
    java_double_to_string,
    java_float_to_string,
    java_local_date_to_string,
)
from engine.joda import JodaDateFormat, Zone

_SQL_TIMESTAMP_PATTERN = "yyyy-MM-dd HH:mm:ss"

# ---------------------------------------------------------------------------------------------------------
# Column access and stringification
# ---------------------------------------------------------------------------------------------------------


def _as_string_array(arr: pa.Array) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string():
        arr = pc.cast(arr, pa.string())
    return arr


def _map_distinct(arr: pa.Array, fn: Callable[[Any], str | None], key: pa.Array | None = None) -> pa.Array:
    """Apply ``fn`` once per distinct non-null value of ``arr`` and spread the results (string array).
    ``key`` (same length) is used for distinctness instead of ``arr`` (e.g. the bit pattern of floats)."""
    k = arr if key is None else key
    distinct = pc.unique(k)
    if key is None:
        values = distinct.to_pylist()
    else:
        first = pc.index_in(distinct, value_set=k)
        values = arr.take(first).to_pylist()
    texts = pa.array([None if v is None else fn(v) for v in values], pa.string())
    return texts.take(pc.index_in(k, value_set=distinct))


def _timestamp_sql_string(millis: int, zone: Zone) -> str:
    """``java.sql.Timestamp(millis).toString()`` in ``zone``: ``yyyy-MM-dd HH:mm:ss.f`` (fraction without
    trailing zeros, at least one digit)."""
    base = _SQL_TS_FORMAT.format(millis, zone)
    frac = f"{millis % 1000:03d}".rstrip("0") or "0"
    return f"{base}.{frac}"


_SQL_TS_FORMAT = JodaDateFormat(_SQL_TIMESTAMP_PATTERN)


def _micros_of(arr: pa.Array) -> pa.Array:
    """Epoch microseconds (int64) of a timestamp array, any unit (as Spark stores TimestampType)."""
    unit = arr.type.unit
    raw = arr.view(pa.int64()) if not isinstance(arr, pa.ChunkedArray) else pc.cast(arr, pa.int64())
    if unit == "us":
        return raw
    if unit == "ns":
        return pc.divide(raw, 1000)  # integer division truncates toward zero
    factor = 1_000_000 if unit == "s" else 1000
    return pc.multiply_checked(raw, factor)


def _trunc_div(value: int, divisor: int) -> int:
    """Java ``long`` division (truncates toward zero)."""
    q = abs(value) // divisor
    return -q if value < 0 else q


def _millis_trunc_from_micros(micros: np.ndarray) -> np.ndarray:
    """``TimeUnit.MILLISECONDS.convert(micros, MICROSECONDS)``: division truncating toward zero."""
    q = np.abs(micros) // 1000
    return np.where(micros < 0, -q, q)


@dataclass(frozen=True)
class _Stringifier:
    """Renders Arrow columns the way ``HoodieAvroUtils.getNestedFieldValAsString`` renders Avro values."""

    consistent_logical_timestamp: bool
    jvm_zone: Zone

    def render(self, arr: pa.Array, field: str) -> pa.Array:
        """String form (``pa.string()``, nulls kept) of ``arr`` for key field ``field``.

        Raises:
            InvalidRecordKey: the type cannot be part of a key (list, map, struct, ...).
        """
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        t = arr.type
        if pa.types.is_dictionary(t):
            return self.render(arr.dictionary, field).take(arr.indices)
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return _as_string_array(arr)
        if pa.types.is_null(t):
            return pa.nulls(len(arr), pa.string())
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            return pc.cast(arr, pa.string())
        if pa.types.is_floating(t):
            if pa.types.is_float16(t):
                arr = pc.cast(arr, pa.float32())
                t = pa.float32()
            if pa.types.is_float32(t):
                return _map_distinct(arr, java_float_to_string, key=arr.view(pa.int32()))
            return _map_distinct(arr, java_double_to_string, key=arr.view(pa.int64()))
        if pa.types.is_decimal(t):
            return _map_distinct(arr, java_decimal_to_string)
        if pa.types.is_date(t):
            days = (
                pc.cast(arr, pa.date32()).view(pa.int32()) if pa.types.is_date64(t) else arr.view(pa.int32())
            )
            if len(days) and days.null_count < len(days):
                mm = pc.min_max(days)
                if mm["min"].as_py() >= -719162 and mm["max"].as_py() <= 2932896:
                    return pc.cast(pc.cast(days, pa.date32()), pa.string())
            return _map_distinct(days, java_local_date_to_string)
        if pa.types.is_timestamp(t):
            micros = _micros_of(arr)
            if self.consistent_logical_timestamp and t.tz is not None:
                zone = self.jvm_zone
                return _map_distinct(micros, lambda us: _timestamp_sql_string(_trunc_div(us, 1000), zone))
            return pc.cast(micros, pa.string())
        if pa.types.is_time(t):
            return pc.cast(pc.cast(arr, pa.int64()), pa.string())
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            return _map_distinct(arr, lambda b: bytes(b).hex())
        raise InvalidRecordKey(
            f"field '{field}' has type {t}, which cannot be used in a record key or partition path"
        )


def _resolve_field(data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
    """The column for ``field`` (exact name, then case-insensitive; dotted names walk struct members).

    Raises:
        InvalidRecordKey: no such column/member.
    """
    col = field_values(data, field)
    if col is not None:
        return col
    raise InvalidRecordKey(
        f"key field '{field}' does not exist in the input data (columns: {', '.join(data.schema.names)})"
    )


def _example_row(data: pa.Table | pa.RecordBatch, row: int, fields: Sequence[str]) -> str:
    try:
        record = data.slice(row, 1).to_pylist()[0]
    except Exception:  # pragma: no cover - defensive: error text only
        return "<unavailable>"
    shown = {k: v for k, v in record.items() if k in fields or not k.startswith("_hoodie")}
    text = repr(shown)
    return text if len(text) <= 400 else text[:400] + "...}"


def _first_true(mask: pa.Array) -> int:
    return int(np.argmax(mask.to_numpy(zero_copy_only=False)))
