"""Record keys and partition paths, vectorized, exactly as Hudi 0.14 (table version 6) writes them.

Mirrors ``org.apache.hudi.keygen``: ``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``,
``NonpartitionedAvroKeyGenerator``, ``TimestampBasedAvroKeyGenerator``, ``CustomAvroKeyGenerator``,
``GlobalAvroDeleteKeyGenerator``, the helpers ``KeyGenUtils`` / ``PartitionPathEncodeUtils`` and Spark SQL's
``org.apache.spark.sql.hudi.command.SqlKeyGenerator`` wrapper (FORMAT.md §6).

Everything works on whole Arrow columns (``pyarrow.compute``); Python-level work is only done once per
*distinct* value for the rare types that need Java-specific formatting (floating point, decimals, binary,
non-ASCII escaping, Joda date parsing).

**How values become strings.** Hudi 0.14's Spark writer (SQL ``INSERT``/``MERGE``/``UPDATE`` and DataFrame
upserts) converts each Spark row to an Avro record and calls the Avro key generator, which stringifies a
field with ``HoodieAvroUtils.getNestedFieldValAsString`` (``convertValueForAvroLogicalTypes`` +
``StringUtils.objToString``). The Arrow equivalents are:

=====================================  ============================================================
Arrow type (Spark type)                string
=====================================  ============================================================
string / large_string / dictionary     the value
int8/16/32/64 (Byte/Short/Int/Long)    decimal digits (``10``; byte and short become Avro int)
bool                                   ``true`` / ``false``
float32 / float64                      Java ``Float.toString`` / ``Double.toString`` (``1.0``,
                                       ``1.0E10``, ``1.0E-5``, ``NaN``, ``Infinity``)
decimal128/256                         Java ``BigDecimal.toString`` with the column scale
                                       (``12345.67890``, ``1.000E-7``)
date32/date64 (DateType)               ``LocalDate.toString``: ``2023-04-01``
timestamp with tz (TimestampType)      epoch **microseconds** as digits (``1680350460000000``), or,
                                       with ``hoodie.datasource.write.keygenerator.consistent.logical.
                                       timestamp.enabled=true``, ``java.sql.Timestamp.toString`` in the
                                       JVM zone (``2023-04-01 12:01:00.0``)
timestamp without tz (TimestampNTZ)    epoch microseconds of the wall clock as digits (Avro
                                       ``local-timestamp-micros`` is never converted)
binary / fixed_size_binary (Binary)    lower-case hex of the bytes (``objToString`` of a ByteBuffer)
struct member (``a.b`` dotted name)    as above for the leaf; a null parent gives null
list / map / struct leaf               unsupported: :class:`InvalidRecordKey`
=====================================  ============================================================

**Spark SQL partition columns of type TIMESTAMP.** When the writer runs through Spark SQL, Hudi wraps the
key generator in ``SqlKeyGenerator``. After the normal partition path is built, it splits the path on ``/``
and, if the number of fragments equals the number of partition columns, rewrites every fragment belonging
to a ``TimestampType`` column: the micros value is turned into milliseconds (truncated), printed with
Joda pattern ``yyyy-MM-dd HH:mm:ss`` in the JVM default zone and *always* escaped with
``escapePathName`` (``2023-04-01 12%3A01%3A00``), whatever ``urlencode`` says. Enable this by setting
``hoodie.datasource.write.keygenerator.class=org.apache.spark.sql.hudi.command.SqlKeyGenerator`` with
``hoodie.sql.origin.keygen.class=<real class>`` (as Hudi's ``ProvidesHoodieConfig`` does) or by passing
``sql_writer=True`` to :meth:`KeyGenerator.from_config`. Which partition columns are TIMESTAMP comes from
``hoodie.sql.partition.schema`` (Spark DDL) if set, else from the Arrow type (timestamp *with* a time
zone). DATE partition values are never rewritten (``2023-04-01``). Deviation: Hudi fails with
``NumberFormatException`` on a null TIMESTAMP partition value in this path; we keep
``__HIVE_DEFAULT_PARTITION__``.

"JVM default zone" (Joda ``DateTimeZone.getDefault()`` and ``java.sql.Timestamp``) is the engine-only
setting ``hoodie.keygen.engine.jvm.timezone`` (default ``UTC``).

**Complex keys with one field.** 0.14.0 writes ``id:1``; 0.14.1, 0.15.0 and 1.0.0-1.0.2 write ``1``
(HUDI-7001), and 0.14.2/0.15.1/1.0.3+ went back to ``id:1`` behind
``hoodie.write.complex.keygen.encode.single.record.key.field.name`` (default true). We follow that key.

**TimestampBasedKeyGenerator** patterns are Joda-Time ``DateTimeFormat`` patterns (Hudi uses Joda, not
``SimpleDateFormat``); see :class:`JodaDateFormat` for the supported letters.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, KeyGenConfig, TableConfig, parse_bool, parse_list
from engine.errors import ConfigError, InvalidRecordKey, UnsafePartitionPath
from engine.formats.conform import field_values
from engine.java_format import (
    java_decimal_to_string,
    java_double_to_string,
    java_float_to_string,
    java_local_date_to_string,
)
from engine.joda import JodaDateFormat, Zone, resolve_java_zone
from engine.partition_path import escape_leading_dot, first_unsafe, unsafe_partition_message

logger = logging.getLogger(__name__)

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
"""Partition value written for a null or empty partition field (``PartitionPathEncodeUtils``)."""
NULL_RECORDKEY_PLACEHOLDER = "__null__"
"""Complex-key placeholder for a null key part (``KeyGenerator.NULL_RECORDKEY_PLACEHOLDER``)."""
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
"""Complex-key placeholder for an empty key part (``KeyGenerator.EMPTY_RECORDKEY_PLACEHOLDER``)."""
RECORD_KEY_PARTS_SEPARATOR = ","
COLUMN_VALUE_SEPARATOR = ":"
PARTITION_PATH_SEPARATOR = "/"

SIMPLE_KEYGEN = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX_KEYGEN = "org.apache.hudi.keygen.ComplexKeyGenerator"
NONPARTITIONED_KEYGEN = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
TIMESTAMP_KEYGEN = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
CUSTOM_KEYGEN = "org.apache.hudi.keygen.CustomKeyGenerator"
GLOBAL_DELETE_KEYGEN = "org.apache.hudi.keygen.GlobalDeleteKeyGenerator"
SQL_KEYGEN = "org.apache.spark.sql.hudi.command.SqlKeyGenerator"

_LEGACY_TIMEBASED_PREFIX = "hoodie.deltastreamer.keygen.timebased."
_TIMEBASED_PREFIX = "hoodie.keygen.timebased."
_DEFAULT_DATETIME_PARSER = "org.apache.hudi.keygen.parser.HoodieDateTimeParser"
_SQL_TIMESTAMP_PATTERN = "yyyy-MM-dd HH:mm:ss"


# ---------------------------------------------------------------------------------------------------------
# Partition path escaping (PartitionPathEncodeUtils)
# ---------------------------------------------------------------------------------------------------------

_ESCAPED_CHARS = [chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^")
_ESCAPE_TABLE = {ord(c): f"%{ord(c):02X}" for c in _ESCAPED_CHARS}
_NEEDS_ESCAPE_RE2 = r'[\x00-\x1f"#%' + "'" + r"*/:=?\\\x7f{\[\]^]"
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def escape_path_name(value: str | None) -> str:
    """Escape one partition value Hive-style (``PartitionPathEncodeUtils.escapePathName``).

    Characters 0x00-0x1F, ``" # % ' * / : = ? \\ 0x7F { [ ] ^`` become ``%XX`` (upper-case hex); all
    others (including space and non-ASCII) are kept. ``None`` or ``""`` gives ``__HIVE_DEFAULT_PARTITION__``.
    """
    if not value:
        return DEFAULT_PARTITION_PATH
    return value.translate(_ESCAPE_TABLE)


def unescape_path_name(value: str) -> str:
    """Undo :func:`escape_path_name` (``PartitionPathEncodeUtils.unescapePathName``): every ``%XX`` with two
    hex digits becomes that character; anything else is kept."""
    if "%" not in value:
        return value
    out: list[str] = []
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c == "%" and i + 2 < n and value[i + 1] in _HEX_DIGITS and value[i + 2] in _HEX_DIGITS:
            out.append(chr(int(value[i + 1 : i + 3], 16)))
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def escape_path_names(values: pa.Array) -> pa.Array:
    """Vectorized :func:`escape_path_name` over a string array; nulls stay null, ``""`` stays ``""``
    (callers substitute the default partition first). Returns a ``pa.string()`` array of the same length."""
    values = _as_string_array(values)
    if len(values) == 0:
        return values
    needs = pc.match_substring_regex(values, _NEEDS_ESCAPE_RE2)
    if not pc.any(needs).as_py():
        return values
    return _map_distinct(values, lambda v: v.translate(_ESCAPE_TABLE))


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


# ---------------------------------------------------------------------------------------------------------
# Configuration parsing
# ---------------------------------------------------------------------------------------------------------


class KeyGenType(Enum):
    """Built-in key generator kinds (Hudi ``KeyGeneratorType``)."""

    SIMPLE = "SIMPLE"
    COMPLEX = "COMPLEX"
    NON_PARTITION = "NON_PARTITION"
    TIMESTAMP = "TIMESTAMP"
    CUSTOM = "CUSTOM"
    GLOBAL_DELETE = "GLOBAL_DELETE"


_CLASS_TO_TYPE = {
    "org.apache.hudi.keygen.SimpleKeyGenerator": KeyGenType.SIMPLE,
    "org.apache.hudi.keygen.SimpleAvroKeyGenerator": KeyGenType.SIMPLE,
    "org.apache.hudi.keygen.ComplexKeyGenerator": KeyGenType.COMPLEX,
    "org.apache.hudi.keygen.ComplexAvroKeyGenerator": KeyGenType.COMPLEX,
    "org.apache.hudi.keygen.NonpartitionedKeyGenerator": KeyGenType.NON_PARTITION,
    "org.apache.hudi.keygen.NonpartitionedAvroKeyGenerator": KeyGenType.NON_PARTITION,
    "org.apache.hudi.keygen.TimestampBasedKeyGenerator": KeyGenType.TIMESTAMP,
    "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator": KeyGenType.TIMESTAMP,
    "org.apache.hudi.keygen.CustomKeyGenerator": KeyGenType.CUSTOM,
    "org.apache.hudi.keygen.CustomAvroKeyGenerator": KeyGenType.CUSTOM,
    "org.apache.hudi.keygen.GlobalDeleteKeyGenerator": KeyGenType.GLOBAL_DELETE,
    "org.apache.hudi.keygen.GlobalAvroDeleteKeyGenerator": KeyGenType.GLOBAL_DELETE,
}
_TYPE_TO_CLASS = {
    KeyGenType.SIMPLE: SIMPLE_KEYGEN,
    KeyGenType.COMPLEX: COMPLEX_KEYGEN,
    KeyGenType.NON_PARTITION: NONPARTITIONED_KEYGEN,
    KeyGenType.TIMESTAMP: TIMESTAMP_KEYGEN,
    KeyGenType.CUSTOM: CUSTOM_KEYGEN,
    KeyGenType.GLOBAL_DELETE: GLOBAL_DELETE_KEYGEN,
}


def _raw(conf: HoodieConfig, *keys: str) -> str | None:
    for key in keys:
        if key in conf:
            return conf[key]
    return None


def _timebased(conf: HoodieConfig, suffix: str) -> str | None:
    return _raw(conf, _TIMEBASED_PREFIX + suffix, _LEGACY_TIMEBASED_PREFIX + suffix)


def _bool_conf(conf: HoodieConfig, key: str, default: bool) -> bool:
    value = _raw(conf, key)
    if value is None or not value.strip():
        return default
    try:
        return parse_bool(value)
    except ValueError as exc:
        raise ConfigError(f"config '{key}' has an invalid value {value!r}") from exc


_TIME_UNIT_MS = {  # milliseconds per unit as (multiplier, divisor)
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_WARNED_IMPLICIT_TYPE: set[str] = set()


def _to_millis(values: np.ndarray, unit: tuple[int, int]) -> np.ndarray:
    """``TimeUnit.MILLISECONDS.convert(v, unit)``: saturating multiply or truncating divide (int64)."""
    mul, div = unit
    if div > 1:
        q = np.abs(values) // div
        return np.where(values < 0, -q, q)
    if mul == 1:
        return values
    limit = _LONG_MAX // mul
    out = values * mul
    out = np.where(values > limit, _LONG_MAX, out)
    return np.where(values < -limit, _LONG_MIN, out)


@dataclass(frozen=True)
class TimestampKeyGenSpec:
    """``hoodie.keygen.timebased.*`` settings of a TimestampBasedKeyGenerator
    (``TimestampKeyGeneratorConfig``).

    Attributes:
        timestamp_type: UNIX_TIMESTAMP, DATE_STRING, MIXED, EPOCHMILLISECONDS, EPOCHMICROSECONDS or SCALAR.
        time_unit: (multiplier, divisor) converting numeric values to milliseconds; None for
            DATE_STRING/MIXED.
        input_formats: parsers for DATE_STRING/MIXED (tried in order, first full match wins).
        output_format: the partition path pattern.
        input_zone / output_zone: None when unset (Hudi then uses the parsed offset / the parsed zone or
            the JVM zone).
    """

    timestamp_type: str
    time_unit: tuple[int, int] | None
    input_formats: tuple[JodaDateFormat, ...]
    output_format: JodaDateFormat
    input_zone: Zone | None
    output_zone: Zone | None

    @staticmethod
    def from_config(conf: HoodieConfig) -> TimestampKeyGenSpec:
        """Read the timebased keys (new ``hoodie.keygen.timebased.*`` and legacy
        ``hoodie.deltastreamer.keygen.timebased.*`` names).

        ``timestamp.type`` is required by Hudi; 0.14 does not persist it in ``hoodie.properties``, so when
        it is missing but ``input.dateformat`` is set we assume DATE_STRING (with a warning).

        Raises:
            ConfigError: missing/invalid type, output format or unit, a custom date-time parser class, or an
                unsupported pattern letter.
        """
        parser_class = _raw(
            conf, "hoodie.keygen.datetime.parser.class", "hoodie.deltastreamer.keygen.datetime.parser.class"
        )
        if parser_class and parser_class.strip() != _DEFAULT_DATETIME_PARSER:
            raise ConfigError(f"custom date-time parser class {parser_class!r} is not supported")
        ts_type = (_timebased(conf, "timestamp.type") or "").strip().upper()
        input_fmt = (_timebased(conf, "input.dateformat") or "").strip()
        if not ts_type:
            if not input_fmt:
                raise ConfigError(f"TimestampBasedKeyGenerator needs '{KeyGenConfig.TIMESTAMP_TYPE.key}'")
            if input_fmt not in _WARNED_IMPLICIT_TYPE:
                _WARNED_IMPLICIT_TYPE.add(input_fmt)
                logger.warning(
                    "'%s' is not set; assuming DATE_STRING because '%s' is set",
                    KeyGenConfig.TIMESTAMP_TYPE.key,
                    KeyGenConfig.INPUT_DATEFORMAT.key,
                )
            ts_type = "DATE_STRING"
        units = {
            "UNIX_TIMESTAMP": "SECONDS",
            "EPOCHMILLISECONDS": "MILLISECONDS",
            "EPOCHMICROSECONDS": "MICROSECONDS",
        }
        time_unit: tuple[int, int] | None
        if ts_type in units:
            time_unit = _TIME_UNIT_MS[units[ts_type]]
        elif ts_type == "SCALAR":
            unit_name = (_timebased(conf, "timestamp.scalar.time.unit") or "SECONDS").strip().upper()
            if unit_name not in _TIME_UNIT_MS:
                raise ConfigError(
                    f"'{KeyGenConfig.TIMESTAMP_SCALAR_UNIT.key}' has an invalid value {unit_name!r}"
                )
            time_unit = _TIME_UNIT_MS[unit_name]
        elif ts_type in ("DATE_STRING", "MIXED"):
            time_unit = None
        else:
            raise ConfigError(
                f"'{KeyGenConfig.TIMESTAMP_TYPE.key}' has an invalid value {ts_type!r} (UNIX_TIMESTAMP, "
                "DATE_STRING, MIXED, EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR)"
            )
        out_fmt = _timebased(conf, "output.dateformat") or ""
        if not out_fmt.strip():
            raise ConfigError(f"TimestampBasedKeyGenerator needs '{KeyGenConfig.OUTPUT_DATEFORMAT.key}'")
        formats: tuple[JodaDateFormat, ...] = ()
        if ts_type in ("DATE_STRING", "MIXED"):
            if not input_fmt:
                raise ConfigError(
                    f"TimestampBasedKeyGenerator with {ts_type} needs '{KeyGenConfig.INPUT_DATEFORMAT.key}'"
                )
            delimiter = _timebased(conf, "input.dateformat.list.delimiter.regex") or ","
            formats = tuple(JodaDateFormat(p.strip()) for p in re.split(delimiter, input_fmt))
        both = _timebased(conf, "timezone")
        in_tz = both if both is not None else _timebased(conf, "input.timezone")
        out_tz = both if both is not None else _timebased(conf, "output.timezone")
        return TimestampKeyGenSpec(
            timestamp_type=ts_type,
            time_unit=time_unit,
            input_formats=formats,
            output_format=JodaDateFormat(out_fmt),
            input_zone=resolve_java_zone(in_tz) if in_tz and in_tz.strip() else None,
            output_zone=resolve_java_zone(out_tz) if out_tz and out_tz.strip() else None,
        )

    def parse_string(self, text: str, jvm_zone: Zone) -> tuple[int, Zone]:
        """Parse a DATE_STRING value with the input formats (first full match wins).

        Raises:
            ValueError: no format matches.
        """
        errors: list[str] = []
        for fmt in self.input_formats:
            try:
                return fmt.parse(text, self.input_zone, jvm_zone)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))

    def default_value_text(self) -> str:
        """``TimestampBasedAvroKeyGenerator.getDefaultPartitionVal`` for DATE_STRING/MIXED: epoch + 1 ms
        printed with the first input format in the input zone, else output zone, else GMT."""
        zone = self.input_zone or self.output_zone or Zone.utc()
        return self.input_formats[0].format(1, zone)


# ---------------------------------------------------------------------------------------------------------
# Key generators
# ---------------------------------------------------------------------------------------------------------


def _parse_sql_partition_schema(ddl: str) -> dict[str, str]:
    """Column name -> upper-case type name from a Spark ``StructType.toDDL`` string."""
    out: dict[str, str] = {}
    for m in re.finditer(r"`((?:[^`]|``)+)`\s+([A-Za-z_]+)", ddl):
        out[m.group(1).replace("``", "`")] = m.group(2).upper()
    if not out:
        for part in ddl.split(","):
            bits = part.strip().split()
            if len(bits) >= 2:
                out[bits[0]] = bits[1].upper()
    return out


class KeyGenerator:
    """Vectorized Hudi key generator (base of the Simple/Complex/... generators below).

    Build one with :meth:`from_config`. Attributes: ``record_key_fields`` and ``partition_fields`` (names,
    type suffixes of CustomKeyGenerator stripped), ``hive_style``, ``url_encode``, ``key_class_name`` (the
    class name to persist in ``hoodie.table.keygenerator.class``), ``kind`` (:class:`KeyGenType`),
    ``sql_writer`` (apply ``SqlKeyGenerator``'s TIMESTAMP partition rewrite).
    """

    kind: KeyGenType = KeyGenType.SIMPLE

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        *,
        hive_style: bool = False,
        url_encode: bool = False,
        consistent_logical_timestamp: bool = False,
        jvm_zone: Zone | None = None,
        encode_single_complex_field_name: bool = True,
        key_class_name: str | None = None,
        sql_writer: bool = False,
        sql_partition_types: dict[str, str] | None = None,
        table_name: str | None = None,
    ) -> None:
        self.table_name = table_name
        self.record_key_fields = list(record_key_fields)
        self.partition_fields = list(partition_fields)
        self.hive_style = hive_style
        self.url_encode = url_encode
        self.consistent_logical_timestamp = consistent_logical_timestamp
        self.jvm_zone = jvm_zone or Zone.utc()
        self.encode_single_complex_field_name = encode_single_complex_field_name
        self.key_class_name = key_class_name or _TYPE_TO_CLASS[self.kind]
        self.sql_writer = sql_writer
        self.sql_partition_types = dict(sql_partition_types or {})
        self._stringifier = _Stringifier(consistent_logical_timestamp, self.jvm_zone)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(record_key_fields={self.record_key_fields}, "
            f"partition_fields={self.partition_fields}, hive_style={self.hive_style}, "
            f"url_encode={self.url_encode})"
        )

    # -- construction ----------------------------------------------------------------------------------

    @staticmethod
    def from_config(conf: HoodieConfig, *, sql_writer: bool | None = None) -> KeyGenerator:
        """Build the key generator a Hudi writer would use for ``conf``.

        ``conf`` holds the table config (``hoodie.table.*``, hive style, urlencode, timebased keys), possibly
        overlaid with write options. Write options win: ``hoodie.datasource.write.keygenerator.class`` /
        ``.type`` over ``hoodie.table.keygenerator.class``; ``hoodie.datasource.write.recordkey.field`` over
        ``hoodie.table.recordkey.fields``; ``hoodie.datasource.write.partitionpath.field`` over
        ``hoodie.table.partition.fields`` (CustomKeyGenerator needs the typed ``field:simple|timestamp`` form,
        which only the write option carries). Without a class the type is inferred like
        ``KeyGenUtils.inferKeyGeneratorType`` (no partition field: non-partitioned; one partition and one key
        field: simple; else complex).

        Args:
            conf: the configuration.
            sql_writer: force (True/False) the Spark SQL ``SqlKeyGenerator`` TIMESTAMP partition rewrite;
                None = on when the configured class is ``SqlKeyGenerator``.

        Raises:
            ConfigError: unknown class/type, several record key fields for a simple/timestamp generator,
                bad timebased settings.
        """
        cls_name = (_raw(conf, KeyGenConfig.KEYGEN_CLASS.key) or "").strip()
        table_cls = (conf.raw(TableConfig.KEYGEN_CLASS) or "").strip()
        is_sql = cls_name == SQL_KEYGEN
        if is_sql:
            cls_name = (_raw(conf, KeyGenConfig.SQL_ORIGIN_KEYGEN_CLASS.key) or table_cls).strip()
        elif not cls_name:
            cls_name = table_cls
        if cls_name == SQL_KEYGEN:
            raise ConfigError(
                f"SqlKeyGenerator needs the original class in '{KeyGenConfig.SQL_ORIGIN_KEYGEN_CLASS.key}'"
            )
        if sql_writer is None:
            sql_writer = is_sql

        rk_raw = _raw(conf, KeyGenConfig.RECORDKEY_FIELD.key)
        if rk_raw is None or not rk_raw.strip():
            rk_raw = conf.raw(TableConfig.RECORDKEY_FIELDS) or ""
        record_keys = parse_list(rk_raw)
        pp_raw = _raw(conf, KeyGenConfig.PARTITIONPATH_FIELD.key)
        if pp_raw is None:
            pp_raw = conf.raw(TableConfig.PARTITION_FIELDS) or ""
        partition_specs = parse_list(pp_raw)

        kind: KeyGenType
        if cls_name:
            if cls_name not in _CLASS_TO_TYPE:
                raise ConfigError(
                    f"key generator class {cls_name!r} is not supported (supported: "
                    f"{', '.join(sorted(_TYPE_TO_CLASS.values()))})"
                )
            kind = _CLASS_TO_TYPE[cls_name]
        else:
            type_name = (_raw(conf, KeyGenConfig.KEYGEN_TYPE.key) or "").strip().upper()
            if type_name:
                type_name = type_name.removesuffix("_AVRO")
                aliases = {
                    "NON_PARTITION": KeyGenType.NON_PARTITION,
                    "GLOBAL_DELETE": KeyGenType.GLOBAL_DELETE,
                }
                try:
                    kind = aliases.get(type_name) or KeyGenType[type_name]
                except KeyError as exc:
                    raise ConfigError(
                        f"'{KeyGenConfig.KEYGEN_TYPE.key}' has an unsupported value {type_name!r}"
                    ) from exc
            elif not partition_specs:
                kind = KeyGenType.NON_PARTITION
            elif ":" in partition_specs[0]:
                kind = KeyGenType.CUSTOM
            elif len(partition_specs) == 1 and len(record_keys) <= 1:
                kind = KeyGenType.SIMPLE
            else:
                kind = KeyGenType.COMPLEX
            cls_name = _TYPE_TO_CLASS[kind]

        jvm_zone = resolve_java_zone(conf.get(KeyGenConfig.JVM_TIMEZONE))
        sql_types: dict[str, str] = {}
        ddl = _raw(conf, KeyGenConfig.SQL_PARTITION_SCHEMA.key)
        if ddl and ddl.strip():
            sql_types = _parse_sql_partition_schema(ddl)
        common: dict[str, Any] = dict(
            hive_style=_bool_conf(conf, TableConfig.HIVE_STYLE_PARTITIONING.key, False),
            url_encode=_bool_conf(conf, TableConfig.URL_ENCODE_PARTITIONING.key, False),
            consistent_logical_timestamp=_bool_conf(
                conf, KeyGenConfig.CONSISTENT_LOGICAL_TIMESTAMP.key, False
            ),
            jvm_zone=jvm_zone,
            encode_single_complex_field_name=_bool_conf(
                conf, KeyGenConfig.COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME.key, True
            ),
            key_class_name=cls_name,
            sql_writer=sql_writer,
            sql_partition_types=sql_types,
            table_name=conf.raw(TableConfig.NAME),
        )
        if kind in (KeyGenType.SIMPLE, KeyGenType.TIMESTAMP) and len(record_keys) > 1:
            raise ConfigError(
                f"{cls_name} needs a single record key field, got {record_keys} (use ComplexKeyGenerator)"
            )
        names = [spec.split(":")[0].strip() for spec in partition_specs]
        if kind is KeyGenType.SIMPLE:
            if len(names) > 1:
                raise ConfigError(
                    f"{cls_name} needs a single partition field, got {names} (use ComplexKeyGenerator)"
                )
            return SimpleKeyGenerator(record_keys, names, **common)
        if kind is KeyGenType.COMPLEX:
            return ComplexKeyGenerator(record_keys, names, **common)
        if kind is KeyGenType.NON_PARTITION:
            return NonpartitionedKeyGenerator(record_keys, [], **common)
        if kind is KeyGenType.GLOBAL_DELETE:
            return GlobalDeleteKeyGenerator(record_keys, [], **common)
        if kind is KeyGenType.TIMESTAMP:
            if len(names) > 1:
                logger.warning("TimestampBasedKeyGenerator uses only the first partition field of %s", names)
            return TimestampBasedKeyGenerator(
                record_keys, names[:1], TimestampKeyGenSpec.from_config(conf), **common
            )
        types: list[str | None] = []
        for spec in partition_specs:
            bits = spec.split(":")
            if len(bits) == 1:
                types.append(None)
            elif len(bits) == 2 and bits[1].strip().upper() in ("SIMPLE", "TIMESTAMP"):
                types.append(bits[1].strip().upper())
            else:
                raise ConfigError(
                    f"CustomKeyGenerator partition field {spec!r} must be 'field:simple' or 'field:timestamp'"
                )
        spec_ts: TimestampKeyGenSpec | None = None
        if "TIMESTAMP" in types:
            spec_ts = TimestampKeyGenSpec.from_config(conf)
        return CustomKeyGenerator(record_keys, names, types, spec_ts, **common)

    # -- public API ------------------------------------------------------------------------------------

    @property
    def is_partitioned(self) -> bool:
        """Whether partition paths are non-empty."""
        return bool(self.partition_fields)

    def record_keys(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        """``_hoodie_record_key`` of every row (``pa.string()``, no nulls, same length as ``data``).

        Raises:
            ConfigError: no record key field is configured (auto-generated keys are not supported).
            InvalidRecordKey: a key field is missing, has an unsupported type, or is null/empty (the message
                names the field, the row number and the row's values).
        """
        if not self.record_key_fields:
            raise ConfigError(
                "no record key field configured ('hoodie.table.recordkey.fields'); "
                "auto-generated record keys are not supported"
            )
        if self.single_value_record_key:
            return self._simple_record_keys(data, self.record_key_fields[0])
        return self._complex_record_keys(data)

    @property
    def single_value_record_key(self) -> bool:
        """Whether the record key is the bare value of its one field (``1``) rather than the complex
        ``field:value,...`` form (``id:1``): one key field and a Simple/Timestamp/Nonpartitioned/Custom
        generator, or a Complex one with
        ``hoodie.write.complex.keygen.encode.single.record.key.field.name=false``."""
        return len(self.record_key_fields) == 1 and (
            self.kind
            in (KeyGenType.SIMPLE, KeyGenType.TIMESTAMP, KeyGenType.NON_PARTITION, KeyGenType.CUSTOM)
            or (self.kind is KeyGenType.COMPLEX and not self.encode_single_complex_field_name)
        )

    def partition_paths(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        """``_hoodie_partition_path`` of every row (``pa.string()``, no nulls; ``""`` when non-partitioned).

        Raises:
            InvalidRecordKey: a partition field is missing, has an unsupported type or cannot be parsed.
            UnsafePartitionPath: a field's segment would leave the base path or is not a valid folder
                name (:mod:`engine.partition_path`); the message names table, field, value and setting.
            ConfigError: a CustomKeyGenerator field has no ``:simple``/``:timestamp`` type.
        """
        n = data.num_rows
        if not self.partition_fields:
            return pa.array([""] * n, pa.string()) if n else pa.array([], pa.string())
        segments = [self._partition_segment(data, i) for i in range(len(self.partition_fields))]
        for i, segment in enumerate(segments):
            row = first_unsafe(segment)
            if row is not None:
                field = self.partition_fields[i]
                value = _resolve_field(data, field)[row].as_py()
                raise UnsafePartitionPath(unsafe_partition_message(
                    self.table_name, field, value, str(segment[row].as_py()), self.url_encode))
        if len(segments) == 1:
            paths = segments[0]
        else:
            paths = pc.binary_join_element_wise(*segments, PARTITION_PATH_SEPARATOR)
        if self.sql_writer:
            paths = self._sql_rewrite(data, paths)
        return paths

    def partition_values(self, partition_path: str) -> list[str]:
        """Split a relative partition path back into one value per partition field: strips the
        ``field=`` prefix (hive style) and unescapes ``%XX`` when urlencode is on. A path with a different
        number of segments than fields (e.g. a timestamp format ``yyyy/MM/dd``) gives the whole path as
        the value of a single field. ``__HIVE_DEFAULT_PARTITION__`` is returned as is.

        Raises:
            InvalidRecordKey: the segment count does not fit several partition fields.
        """
        if not self.partition_fields:
            return []
        segments = partition_path.split(PARTITION_PATH_SEPARATOR) if partition_path else [""]
        fields = self.partition_fields
        if len(segments) != len(fields):
            if len(fields) != 1:
                raise InvalidRecordKey(
                    f"partition path {partition_path!r} has {len(segments)} segments but the "
                    f"table has partition fields {fields}"
                )
            segments = [partition_path]
        values: list[str] = []
        for field, seg in zip(fields, segments, strict=True):
            if self.hive_style and seg.startswith(field + "="):
                seg = seg[len(field) + 1 :]
            if self.url_encode or self.sql_writer:
                seg = unescape_path_name(seg)
            values.append(seg)
        return values

    # -- internals -------------------------------------------------------------------------------------

    def _render(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        return self._stringifier.render(_resolve_field(data, field), field)

    def _simple_record_keys(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        keys = self._render(data, field)
        bad = pc.or_kleene(pc.is_null(keys), pc.equal(pc.utf8_length(keys), 0)).fill_null(True)
        if pc.any(bad).as_py():
            row = _first_true(bad)
            value = keys[row].as_py()
            raise InvalidRecordKey(
                f"record key field '{field}' is {'null' if value is None else 'empty'} in row {row} "
                f"(example row: {_example_row(data, row, [field])}); Hudi requires a non-null, non-empty key "
                "(KeyGenUtils.getRecordKey)"
            )
        return keys

    def _complex_record_keys(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        parts: list[Any] = []
        all_bad: pa.Array | None = None
        for i, field in enumerate(self.record_key_fields):
            values = self._render(data, field)
            empty = pc.equal(pc.utf8_length(values), 0)
            bad = pc.or_kleene(pc.is_null(values), empty).fill_null(True)
            all_bad = bad if all_bad is None else pc.and_(all_bad, bad)
            filled = pc.if_else(empty.fill_null(False), EMPTY_RECORDKEY_PLACEHOLDER, values)
            filled = filled.fill_null(NULL_RECORDKEY_PLACEHOLDER)
            prefix = ("" if i == 0 else RECORD_KEY_PARTS_SEPARATOR) + field + COLUMN_VALUE_SEPARATOR
            parts.extend([pa.scalar(prefix, pa.string()), filled])
        assert all_bad is not None
        if pc.any(all_bad).as_py():
            row = _first_true(all_bad)
            raise InvalidRecordKey(
                f"record key fields {self.record_key_fields} are all null or empty in row {row} "
                f"(example row: {_example_row(data, row, self.record_key_fields)}); Hudi requires at least "
                "one non-empty value (KeyGenUtils.getRecordKey)"
            )
        return pc.binary_join_element_wise(*parts, "")

    def _simple_segment(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        """One partition segment as ``KeyGenUtils.getPartitionPath`` / ``getRecordPartitionPath`` build it."""
        values = self._render(data, field)
        default = pc.or_kleene(pc.is_null(values), pc.equal(pc.utf8_length(values), 0)).fill_null(True)
        if self.url_encode:
            values = escape_path_names(values)
            if not self.hive_style:
                values = escape_leading_dot(values)
        values = pc.if_else(default, DEFAULT_PARTITION_PATH, values)
        if self.hive_style:
            values = pc.binary_join_element_wise(pa.scalar(field + "=", pa.string()), values, "")
        return values

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        return self._simple_segment(data, self.partition_fields[index])

    def _sql_timestamp_fields(self, data: pa.Table | pa.RecordBatch) -> list[int]:
        out: list[int] = []
        for i, field in enumerate(self.partition_fields):
            if self.sql_partition_types:
                typ = self.sql_partition_types.get(field)
                if typ is None:
                    lowered = {k.lower(): v for k, v in self.sql_partition_types.items()}
                    typ = lowered.get(field.lower())
                if typ == "TIMESTAMP":
                    out.append(i)
                continue
            try:
                col = _resolve_field(data, field)
            except InvalidRecordKey:
                continue
            if pa.types.is_timestamp(col.type) and col.type.tz is not None:
                out.append(i)
        return out

    def _sql_rewrite(self, data: pa.Table | pa.RecordBatch, paths: pa.Array) -> pa.Array:
        """``SqlKeyGenerator.convertPartitionPathToSqlType`` (Avro-record path)."""
        ts_fields = self._sql_timestamp_fields(data)
        if not ts_fields or len(paths) == 0:
            return paths
        n_fields = len(self.partition_fields)
        fields = self.partition_fields
        zone = self.jvm_zone
        consistent = self.consistent_logical_timestamp

        def convert(path: str) -> str:
            frags = path.split(PARTITION_PATH_SEPARATOR)
            if len(frags) != n_fields:
                return path
            for i in ts_fields:
                prefix = f"{fields[i]}="
                hive = frags[i].startswith(prefix)
                value = frags[i][len(prefix) :] if hive else frags[i]
                if value == DEFAULT_PARTITION_PATH:
                    continue
                try:
                    if consistent:
                        millis = _parse_sql_timestamp(value, zone)
                    else:
                        millis = _trunc_div(int(value), 1000)
                except ValueError as exc:
                    raise InvalidRecordKey(
                        f"partition field '{fields[i]}' value {value!r} is not a timestamp "
                        "(SqlKeyGenerator cannot convert it)"
                    ) from exc
                text = escape_path_name(_SQL_TS_FORMAT.format(millis, zone))
                frags[i] = prefix + text if hive else text
            return PARTITION_PATH_SEPARATOR.join(frags)

        return _map_distinct(paths, convert)


_SQL_TS_RE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?$")


def _parse_sql_timestamp(text: str, zone: Zone) -> int:
    """``java.sql.Timestamp.valueOf(text).getTime()`` in ``zone`` (epoch ms)."""
    m = _SQL_TS_RE.match(text)
    if not m:
        raise ValueError(f"Timestamp format must be yyyy-mm-dd hh:mm:ss[.fffffffff]: {text!r}")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = int(((m.group(7) or "") + "000")[:3])
    local = datetime(y, mo, d, h, mi, s)
    off = local.replace(tzinfo=zone.tz).utcoffset() or timedelta(0)
    return (
        (local - datetime(1970, 1, 1)) // timedelta(milliseconds=1) + frac - off // timedelta(milliseconds=1)
    )


class SimpleKeyGenerator(KeyGenerator):
    """``SimpleKeyGenerator`` / ``SimpleAvroKeyGenerator``: key = the single field's value; partition path =
    the single partition field's value (``__HIVE_DEFAULT_PARTITION__`` when null/empty; escaped when
    urlencode; ``field=value`` when hive style)."""

    kind = KeyGenType.SIMPLE


class ComplexKeyGenerator(KeyGenerator):
    """``ComplexKeyGenerator`` / ``ComplexAvroKeyGenerator``: key ``f1:v1,f2:v2`` with ``__null__`` /
    ``__empty__`` placeholders (error if every part is null/empty); partition path = segments of every
    partition field joined by ``/``."""

    kind = KeyGenType.COMPLEX


class NonpartitionedKeyGenerator(KeyGenerator):
    """``NonpartitionedKeyGenerator``: key like Simple (one field) or Complex (several); partition ``""``."""

    kind = KeyGenType.NON_PARTITION


class GlobalDeleteKeyGenerator(KeyGenerator):
    """``GlobalDeleteKeyGenerator``: complex-format key (``f:v`` even for one field); partition ``""``."""

    kind = KeyGenType.GLOBAL_DELETE


class TimestampBasedKeyGenerator(KeyGenerator):
    """``TimestampBasedKeyGenerator`` / ``TimestampBasedAvroKeyGenerator``: key like Simple; partition path
    = the first partition field read as a timestamp (``hoodie.keygen.timebased.*``) and printed with the
    output pattern, then escaped (urlencode, the whole formatted text incl. ``/``) and prefixed (hive).

    Value handling (as Hudi): strings are parsed with the input patterns (DATE_STRING/MIXED only);
    integers, ``float``/``double`` (truncated), decimals (truncated) and dates (epoch *days*) are numbers in
    the configured unit; a timestamp column is its epoch micros taken as a number in that unit, or its
    milliseconds when the consistent-logical-timestamp option is on. A null value becomes epoch + 1 (unit)
    (DATE_STRING: epoch + 1 ms printed with the first input pattern), not the default partition. Numbers
    are printed in the output zone (unset: JVM zone); strings in the output zone (unset: the zone parsed
    from the value, else input zone, else JVM zone).
    """

    kind = KeyGenType.TIMESTAMP

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        spec: TimestampKeyGenSpec,
        **kwargs: Any,
    ) -> None:
        super().__init__(record_key_fields, partition_fields, **kwargs)
        self.spec = spec

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        return _timestamp_segment(self, self.spec, data, self.partition_fields[index])


class CustomKeyGenerator(KeyGenerator):
    """``CustomKeyGenerator`` / ``CustomAvroKeyGenerator``: key like Simple (one field) or Complex;
    partition fields ``name:simple`` (as SimpleKeyGenerator) or ``name:timestamp`` (as
    TimestampBasedKeyGenerator), joined by ``/``."""

    kind = KeyGenType.CUSTOM

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        partition_types: Sequence[str | None],
        spec: TimestampKeyGenSpec | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(record_key_fields, partition_fields, **kwargs)
        self.partition_types = list(partition_types)
        self.spec = spec

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        field = self.partition_fields[index]
        typ = self.partition_types[index]
        if typ is None:
            raise ConfigError(
                f"CustomKeyGenerator needs the type of partition field '{field}': set "
                f"'{KeyGenConfig.PARTITIONPATH_FIELD.key}' to 'field:simple' or 'field:timestamp'"
            )
        if typ == "SIMPLE":
            return self._simple_segment(data, field)
        assert self.spec is not None
        return _timestamp_segment(self, self.spec, data, field)


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


def _timestamp_segment(
    gen: KeyGenerator, spec: TimestampKeyGenSpec, data: pa.Table | pa.RecordBatch, field: str
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


def _last_index_of(text: str, ch: str, from_index: int) -> int:
    """Java ``String.lastIndexOf(ch, fromIndex)``."""
    return -1 if from_index < 0 else text.rfind(ch, 0, from_index + 1)


def extract_record_keys(record_key: str, fields: Sequence[str] = ()) -> list[str | None]:
    """Split a stored record key back into its values (``KeyGenUtils.extractRecordKeysByFields``), e.g. for
    bucket index hashing. A key without both ``,`` and ``:`` is a simple key (one value). ``__null__`` ->
    None, ``__empty__`` -> ``""``. ``fields`` restricts the result to those field names (empty = all).
    Values may contain ``:`` (timestamps); a ``,`` inside a value is ambiguous, as in Hudi."""
    if RECORD_KEY_PARTS_SEPARATOR not in record_key or COLUMN_VALUE_SEPARATOR not in record_key:
        return [record_key]
    keep_all = not fields or (len(fields) == 1 and not fields[0])
    values: list[str | None] = []
    processed, n = 0, len(record_key)
    while processed < n:
        sep1 = record_key.find(COLUMN_VALUE_SEPARATOR, processed)
        if sep1 < 0:
            break
        current_field = record_key[processed:sep1]
        sep2 = record_key.find(COLUMN_VALUE_SEPARATOR, sep1 + 1)
        if sep2 < 0:
            value = record_key[sep1 + 1 :]
            processed = n
        else:
            comma = _last_index_of(record_key, RECORD_KEY_PARTS_SEPARATOR, sep2)
            while comma < sep1 and sep2 > 0:
                sep2 = record_key.find(COLUMN_VALUE_SEPARATOR, sep2 + 1)
                comma = _last_index_of(record_key, RECORD_KEY_PARTS_SEPARATOR, sep2)
            if comma > 0:
                value = record_key[sep1 + 1 : comma]
                processed = comma + 1
            else:
                value = record_key[sep1 + 1 :]
                processed = n
        if keep_all or current_field in fields:
            values.append(
                None
                if value == NULL_RECORDKEY_PLACEHOLDER
                else ""
                if value == EMPTY_RECORDKEY_PLACEHOLDER
                else value
            )
    return values if values else [record_key]


__all__ = [
    "COMPLEX_KEYGEN",
    "CUSTOM_KEYGEN",
    "DEFAULT_PARTITION_PATH",
    "EMPTY_RECORDKEY_PLACEHOLDER",
    "GLOBAL_DELETE_KEYGEN",
    "NONPARTITIONED_KEYGEN",
    "NULL_RECORDKEY_PLACEHOLDER",
    "SIMPLE_KEYGEN",
    "SQL_KEYGEN",
    "TIMESTAMP_KEYGEN",
    "ComplexKeyGenerator",
    "CustomKeyGenerator",
    "GlobalDeleteKeyGenerator",
    "JodaDateFormat",
    "KeyGenType",
    "KeyGenerator",
    "NonpartitionedKeyGenerator",
    "SimpleKeyGenerator",
    "TimestampBasedKeyGenerator",
    "TimestampKeyGenSpec",
    "Zone",
    "escape_path_name",
    "escape_path_names",
    "extract_record_keys",
    "java_decimal_to_string",
    "java_double_to_string",
    "java_float_to_string",
    "java_local_date_to_string",
    "resolve_java_zone",
    "unescape_path_name",
]
