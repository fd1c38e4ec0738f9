"""Record keys back into field values (Hudi ``KeyGenUtils.extractRecordKeys`` /
``extractRecordKeysByFields``)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.java_format import (
    java_decimal_to_string,
    java_double_to_string,
    java_float_to_string,
    java_local_date_to_string,
)
from engine.joda import JodaDateFormat, Zone, resolve_java_zone
from engine.keygen.escaping import (
    COLUMN_VALUE_SEPARATOR,
    COMPLEX_KEYGEN,
    CUSTOM_KEYGEN,
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    GLOBAL_DELETE_KEYGEN,
    NONPARTITIONED_KEYGEN,
    NULL_RECORDKEY_PLACEHOLDER,
    RECORD_KEY_PARTS_SEPARATOR,
    SIMPLE_KEYGEN,
    SQL_KEYGEN,
    TIMESTAMP_KEYGEN,
    escape_path_name,
    escape_path_names,
    unescape_path_name,
)
from engine.keygen.generators import (
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    KeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
)
from engine.keygen.spec import KeyGenType, TimestampKeyGenSpec


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
