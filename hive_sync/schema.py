"""Avro table schema → Hive column types, and the schema difference between a Hive table and a Hudi table.

Mirrors Hudi ``org.apache.hudi.hive.util.HiveSchemaUtil`` (``convertField``, ``createHiveStruct``,
``createHiveArray``, ``createHiveMap``, ``getSchemaDifference``, ``isSchemaTypeUpdateAllowed``) in its HMS
form (``doFormat=false``, types lower-cased as ``convertMapSchemaToHiveFieldSchema`` does). Hudi converts the
Parquet schema written by parquet-avro; this module converts the Avro schema directly with the same outcome:

========================================  ==============================================
Avro                                       Hive
========================================  ==============================================
int / long / float / double / boolean      int / bigint / float / double / boolean
string (any logical type), enum            string
bytes, fixed                               binary
decimal(p, s) on bytes or fixed            decimal(p,s)
date                                       date
timestamp-/local-timestamp-millis|micros   timestamp if ``support_timestamp`` else bigint
time-millis / time-micros                  int / bigint
array<T>                                   array<T>
map<T>                                     map<string,T>
record                                     struct<name:T,...> (nested ``$``→``_dollar_``, ``-``→``_``)
[null, T] / [T, null]                      T
[A, B, ...] (several non-null branches)    struct<member0:A,member1:B,...> (parquet-avro)
========================================  ==============================================
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive_sync.errors import SchemaConversionError, SyncError

logger = logging.getLogger(__name__)

AvroSchema = dict[str, Any] | list[Any] | str
"""An Avro schema as parsed JSON: a primitive name, a union list or a complex-type dict."""

_PRIMITIVES = {
    "int": "int", "long": "bigint", "float": "float", "double": "double", "boolean": "boolean",
    "string": "string", "bytes": "binary",
}
_TIMESTAMPS = {"timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"}


def translate_nested_column(name: str) -> str:
    """Hudi ``ColumnNameXLator.translateNestedColumn``: ``$`` → ``_dollar_`` in nested field names."""
    return name.replace("$", "_dollar_")


class _Converter:
    """One conversion pass; remembers named types (records/enums/fixed) for later references by name."""

    def __init__(self, support_timestamp: bool) -> None:
        self.support_timestamp = support_timestamp
        self.named: dict[str, Any] = {}

    def _remember(self, schema: dict[str, Any]) -> None:
        name = schema.get("name")
        if isinstance(name, str):
            ns = schema.get("namespace")
            self.named[name] = schema
            if ns and "." not in name:
                self.named[f"{ns}.{name}"] = schema
            elif "." in name:
                self.named[name.rsplit(".", 1)[1]] = schema

    def convert(self, schema: AvroSchema, where: str) -> str:
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            if not branches:
                raise SchemaConversionError(f"column {where}: a union of only null has no Hive type")
            if len(branches) == 1:
                return self.convert(branches[0], where)
            members = [f"member{i}:{self.convert(b, f'{where}.member{i}')}" for i, b in enumerate(branches)]
            return f"struct<{','.join(members)}>"
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _PRIMITIVES[schema]
            if schema in self.named:
                return self.convert(self.named[schema], where)
            raise SchemaConversionError(f"column {where}: cannot convert Avro type {schema!r} to a Hive type")
        if not isinstance(schema, dict) or "type" not in schema:
            raise SchemaConversionError(f"column {where}: malformed Avro schema {schema!r}")
        avro_type = schema["type"]
        logical = schema.get("logicalType")
        if avro_type in ("record", "enum", "fixed"):
            self._remember(schema)
        if logical == "decimal" and avro_type in ("bytes", "fixed"):
            try:
                return f"decimal({int(schema['precision'])},{int(schema.get('scale', 0))})"
            except (KeyError, ValueError) as e:
                raise SchemaConversionError(f"column {where}: decimal without a valid precision") from e
        if logical == "date" and avro_type == "int":
            return "date"
        if logical in _TIMESTAMPS and avro_type == "long":
            return "timestamp" if self.support_timestamp else "bigint"
        if logical == "time-millis" and avro_type == "int":
            return "int"
        if logical == "time-micros" and avro_type == "long":
            return "bigint"
        if avro_type == "record":
            fields = schema.get("fields") or []
            if not fields:
                raise SchemaConversionError(f"column {where}: empty record {schema.get('name')!r}")
            parts = []
            for f in fields:
                ftype = self.convert(f["type"], where + "." + f["name"])
                parts.append(f"{translate_nested_column(f['name'])}:{ftype}")
            # HiveSchemaUtil.createHiveStruct: struct strings cannot contain '-'.
            return f"struct<{','.join(parts)}>".replace("-", "_")
        if avro_type == "enum":
            return "string"
        if avro_type == "fixed":
            return "binary"
        if avro_type == "array":
            return f"array<{self.convert(schema['items'], f'{where}.element')}>"
        if avro_type == "map":
            return f"map<string,{self.convert(schema['values'], f'{where}.value')}>"
        if isinstance(avro_type, (str, list, dict)):
            return self.convert(avro_type, where)
        raise SchemaConversionError(f"column {where}: cannot convert Avro type {avro_type!r}")


def _as_record(schema: Mapping[str, Any] | str) -> dict[str, Any]:
    parsed = json.loads(schema) if isinstance(schema, str) else dict(schema)
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise SchemaConversionError(f"table schema must be an Avro record, got {str(parsed)[:200]}")
    return parsed


def avro_to_hive_type(schema: AvroSchema, support_timestamp: bool = False, column: str = "<column>") -> str:
    """Hive type string (lower case, no spaces) of one Avro type, e.g. ``{"type": "map", "values": "long"}``
    → ``"map<string,bigint>"``. Raises :class:`SchemaConversionError` naming ``column``."""
    return _Converter(support_timestamp).convert(schema, column)


def avro_to_hive_schema(schema: Mapping[str, Any] | str, support_timestamp: bool = False) -> dict[str, str]:
    """Ordered ``{column name: hive type}`` of every top-level field of an Avro record schema (dict or JSON
    text, e.g. ``Table.latest_avro_schema(include_meta=True)``); Hudi ``convertParquetSchemaToHiveSchema``.
    Raises :class:`SchemaConversionError` for non-record schemas or unconvertible fields."""
    record = _as_record(schema)
    conv = _Converter(support_timestamp)
    conv._remember(record)
    return {f["name"]: conv.convert(f["type"], f["name"]) for f in record.get("fields", [])}


def hive_field_schemas(schema: Mapping[str, Any] | str, partition_fields: Sequence[str],
                       support_timestamp: bool = False,
                       omit_metadata_fields: bool = False) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(data columns, partition columns)`` as ``(name, hive type)`` lists for an HMS table.

    Data columns exclude the partition fields (Hudi ``convertMapSchemaToHiveFieldSchema``); partition
    columns take their type from the schema, ``string`` when absent (``getPartitionKeyType``). With
    ``omit_metadata_fields`` the ``_hoodie_*`` meta columns are dropped.
    """
    hive = avro_to_hive_schema(schema, support_timestamp)
    parts = set(partition_fields)
    cols = [(n, t) for n, t in hive.items()
            if n not in parts and not (omit_metadata_fields and n.startswith("_hoodie_"))]
    lower = {n.lower(): t for n, t in hive.items()}
    pcols = [(p, lower.get(p.lower(), "string")) for p in partition_fields]
    return cols, pcols


def is_schema_type_update_allowed(prev_type: str, new_type: str) -> bool:
    """Hudi ``isSchemaTypeUpdateAllowed``: same type, int→bigint, float→double, or struct→struct."""
    if not prev_type or not prev_type.strip() or not new_type or not new_type.strip():
        return False
    prev, new = prev_type.lower(), new_type.lower()
    return (prev == new or (prev == "int" and new == "bigint") or (prev == "float" and new == "double")
            or ("struct" in prev and "struct" in new))


@dataclass
class SchemaDifference:
    """Hudi ``SchemaDifference``: columns to add (``{name: type}``, schema order), to change
    (``{hive column name (lower case): new type}``) and Hive-only columns to delete (lower case)."""

    added: dict[str, str] = field(default_factory=dict)
    updated: dict[str, str] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        """True when the Hive table already matches the table schema."""
        return not (self.added or self.updated or self.deleted)


def _normalise_type(type_str: str) -> str:
    return re.sub(r"\s+", "", type_str).replace("`", "").lower()


def schema_difference(table_schema: Mapping[str, Any] | str, hive_columns: Mapping[str, str] | Sequence[tuple[str, str]],
                      partition_fields: Sequence[str], support_timestamp: bool = False,
                      strict_type_changes: bool = True) -> SchemaDifference:
    """Difference between the Hive table's columns (``{name: type}`` or pairs, partition keys included as
    the metastore returns them) and the Hudi table's Avro schema; Hudi ``HiveSchemaUtil.getSchemaDifference``.

    Names compare case-insensitively, types ignoring case, blanks and back-ticks. Partition keys missing
    from the table schema are not deletions. With ``strict_type_changes`` (Hudi ≤ 0.x behaviour) a type
    change other than int→bigint, float→double or struct→struct raises :class:`SyncError`
    ("Could not convert field Type from X to Y for field F"); otherwise every change is an update.
    """
    expected = avro_to_hive_schema(table_schema, support_timestamp)
    expected_lower = {n.lower(): t for n, t in expected.items()}
    partitions = {p.lower() for p in partition_fields}
    items = hive_columns.items() if isinstance(hive_columns, Mapping) else hive_columns
    diff = SchemaDifference()
    seen: set[str] = set()
    for name, hive_type in items:
        lname = name.lower()
        seen.add(lname)
        if lname not in expected_lower:
            if lname not in partitions:
                diff.deleted.append(lname)
            continue
        want = expected_lower[lname]
        if _normalise_type(hive_type) != _normalise_type(want):
            if strict_type_changes and not is_schema_type_update_allowed(_normalise_type(hive_type),
                                                                          _normalise_type(want)):
                raise SyncError(f"Could not convert field Type from {_normalise_type(hive_type)} to "
                                f"{_normalise_type(want)} for field {lname}")
            diff.updated[lname] = want
    for name, hive_type in expected.items():
        if name.lower() not in seen:
            diff.added[name] = hive_type
    logger.debug("schema difference: %s", diff)
    return diff
