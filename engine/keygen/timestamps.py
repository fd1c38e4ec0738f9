"""Timestamp partition segments (Hudi ``TimestampBasedAvroKeyGenerator.getPartitionPath``): numeric and
formatted input values to the output date format, vectorized."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import InvalidRecordKey
from engine.joda import Zone
from engine.keygen.escaping import escape_path_names
from engine.keygen.spec import TimestampKeyGenSpec, _to_millis
from engine.keygen.values import (
    _as_string_array,
    _map_distinct,
    _micros_of,
    _millis_trunc_from_micros,
    _resolve_field,
)
from engine.partition_path import escape_leading_dot


class SegmentStyle(Protocol):
    """What a timestamp partition segment needs of its key generator (``engine.keygen.generators.KeyGenerator``
    has these attributes): the JVM time zone Hudi formats numbers in, Hudi's
    ``hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled``, and the partition path's
    url-encoding and hive-style settings."""

    jvm_zone: Zone
    consistent_logical_timestamp: bool
    url_encode: bool
    hive_style: bool

def _numeric_longs(arr: pa.Array, consistent: bool) -> tuple[np.ndarray, bool]:
    """Java ``long`` values Hudi derives from a numeric/date/timestamp column for the timestamp key
    generator, and whether they are already milliseconds (``java.sql.Timestamp`` case)."""
    t = arr.type
    valid_fill = arr.fill_null(0) if arr.null_count else arr
    if pa.types.is_integer(t):
        return np.asarray(
            pc.cast(valid_fill, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64
        ), False
    if pa.types.is_floating(t):
        f = np.asarray(pc.cast(valid_fill, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        f = np.where(np.isnan(f), 0.0, f)
        out = np.trunc(np.clip(f, -9.223372036854775e18, 9.223372036854775e18)).astype(np.int64)
        return out, False
    if pa.types.is_decimal(t):
        vals = [int(v) if v is not None else 0 for v in arr.to_pylist()]
        wrapped = [((v + 2**63) % 2**64) - 2**63 for v in vals]
        return np.array(wrapped, dtype=np.int64), False
    if pa.types.is_date(t):
        days = pc.cast(valid_fill, pa.date32()).view(pa.int32())
        return np.asarray(days.to_numpy(zero_copy_only=False), dtype=np.int64), False
    if pa.types.is_timestamp(t):
        micros = np.asarray(_micros_of(valid_fill).to_numpy(zero_copy_only=False), dtype=np.int64)
        if consistent and t.tz is not None:
            return _millis_trunc_from_micros(micros), True
        return micros, False
    raise InvalidRecordKey(f"type {t} is not supported by TimestampBasedKeyGenerator")


def timestamp_segment(
    gen: SegmentStyle, spec: TimestampKeyGenSpec, data: pa.Table | pa.RecordBatch, field: str
) -> pa.Array:
    """Partition segment of ``TimestampBasedAvroKeyGenerator.getPartitionPath`` for one field."""
    col = _resolve_field(data, field)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary.take(col.indices)
    t = col.type
    n = len(col)
    jvm = gen.jvm_zone
    out_zone = spec.output_zone
    fmt = spec.output_format

    def format_string(text: str) -> str:
        try:
            millis, zone = spec.parse_string(text, jvm)
        except ValueError as exc:
            raise InvalidRecordKey(
                f"partition field '{field}': unable to parse input partition field {text!r}: {exc}"
            ) from exc
        return fmt.format(millis, out_zone or zone)

    def format_number(value: int) -> str:
        if spec.time_unit is None:
            raise InvalidRecordKey(
                f"partition field '{field}': {spec.timestamp_type} values must be strings; "
                "hoodie.keygen.timebased.timestamp.scalar.time.unit is not specified but a "
                "number was supplied"
            )
        millis = int(_to_millis(np.array([value], np.int64), spec.time_unit)[0])
        return fmt.format(millis, out_zone or jvm)

    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        if spec.time_unit is not None or spec.timestamp_type not in ("DATE_STRING", "MIXED"):
            raise InvalidRecordKey(
                f"partition field '{field}' is a string but timestamp type "
                f"{spec.timestamp_type} has no input date format (Missing input formatter)"
            )
        texts = _map_distinct(_as_string_array(col), format_string)
    elif pa.types.is_boolean(t) or pa.types.is_binary(t) or pa.types.is_nested(t):
        raise InvalidRecordKey(
            f"partition field '{field}' has type {t}: unexpected type for TimestampBasedKeyGenerator"
        )
    elif n == 0:
        texts = pa.array([], pa.string())
    else:
        longs, is_millis = _numeric_longs(col, gen.consistent_logical_timestamp)
        valid = ~np.asarray(pc.is_null(col).to_numpy(zero_copy_only=False), dtype=bool)
        if is_millis:
            millis = longs
        elif spec.time_unit is None:
            if valid.any():
                format_number(int(longs[valid][0]))  # raises the Hudi error
            millis = longs
        else:
            millis = _to_millis(longs, spec.time_unit)
        texts = fmt.format_many(millis, valid, out_zone or jvm)
    if texts.null_count:
        if spec.timestamp_type in ("DATE_STRING", "MIXED"):
            default = format_string(spec.default_value_text())
        else:
            default = format_number(1)
        texts = texts.fill_null(default)
    if gen.url_encode:
        texts = escape_path_names(texts)
        if not gen.hive_style:
            texts = escape_leading_dot(texts)
    if gen.hive_style:
        texts = pc.binary_join_element_wise(pa.scalar(field + "=", pa.string()), texts, "")
    return texts
