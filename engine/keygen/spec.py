"""Key generator configuration: the generator type and ``TimestampBasedKeyGenerator`` settings (Hudi
``KeyGeneratorType``, ``TimestampBasedAvroKeyGenerator``'s ``hoodie.keygen.timebased.*`` keys)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from enum import Enum

import numpy as np

from engine.config import HoodieConfig, KeyGenConfig, parse_bool
from engine.errors import ConfigError
from engine.joda import JodaDateFormat, Zone, resolve_java_zone
from engine.keygen.escaping import (
    _DEFAULT_DATETIME_PARSER,
    _LEGACY_TIMEBASED_PREFIX,
    _TIMEBASED_PREFIX,
    COMPLEX_KEYGEN,
    CUSTOM_KEYGEN,
    GLOBAL_DELETE_KEYGEN,
    NONPARTITIONED_KEYGEN,
    SIMPLE_KEYGEN,
    TIMESTAMP_KEYGEN,
)

logger = logging.getLogger(__name__)


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


def class_of_type(type_name: str) -> str:
    """The key generator class of a ``KeyGeneratorType`` name (``SIMPLE``, ``COMPLEX``, ``NON_PARTITION``,
    ``TIMESTAMP``, ``CUSTOM``, ``GLOBAL_DELETE``; an ``_AVRO`` suffix is accepted), as Hudi 1.x's
    ``hoodie.table.keygenerator.type`` names it (``KeyGeneratorType.getKeyGeneratorClassName``).

    Raises:
        ConfigError: an unknown or unsupported type name.
    """
    name = type_name.strip().upper().removesuffix("_AVRO")
    try:
        return _TYPE_TO_CLASS[KeyGenType[name]]
    except KeyError:
        raise ConfigError(f"unsupported key generator type {type_name!r} (supported: "
                          f"{', '.join(t.value for t in _TYPE_TO_CLASS)})") from None

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
