"""Partition values as path segments: Hudi ``PartitionPathEncodeUtils`` escaping and the constants of
``KeyGenerator`` / ``KeyGenUtils`` (placeholders, separators, key generator class names)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from engine.keygen.values import _as_string_array, _map_distinct

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
