"""Arrow ⇄ Avro schemas as Hudi and Spark derive them (docs/FORMAT.md §4.1, §4.2).

Hudi stores a table's schema as Avro JSON in three places, which this module produces exactly:

* ``extraMetadata.schema`` of commits, the ``parquet.avro.schema`` footer and log block headers:
  Hudi ``AvroConversionUtils.convertStructTypeToAvroSchema`` = Spark ``SchemaConverters.toAvroType``
  followed by ``getAvroSchemaWithDefaults`` (nullable unions become ``["null", T]`` and nullable record
  fields get ``"default": null``). This is :func:`arrow_to_avro`'s default.
* ``hoodie.table.create.schema`` in ``hoodie.properties`` (Spark SQL ``CREATE TABLE``): the plain Spark
  ``SchemaConverters.toAvroType`` output, ``[T, "null"]`` and no defaults — ``arrow_to_avro(...,
  with_defaults=False)``.

Arrow types are read as the Spark types PySpark maps them from (``int8``/``int16`` = ByteType/ShortType,
timestamps = TimestampType, ...). Names follow Spark: the top record is ``<table>_record`` in namespace
``hoodie.<table>`` (``AvroConversionUtils.getAvroRecordNameAndNamespace``); a nested record is named after
its field, in the namespace ``<parent namespace>.<parent name>``; a decimal is a ``fixed`` named
``fixed`` in the namespace ``<record namespace>.<record name>.<field>``.

:func:`avro_to_arrow` is the inverse and yields the Arrow types hudi-rs returns for such a schema
(``decimal128``, ``date32``, ``timestamp[us, tz=UTC]``, ``list<element: T>``, ``map<string, T>``).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from engine.errors import SchemaMismatch

logger = logging.getLogger(__name__)

META_FIELDS: tuple[str, ...] = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
"""Hudi meta columns in file order (``HoodieRecord.HOODIE_META_COLUMNS``)."""

AvroSchema = dict[str, Any]
"""A parsed Avro *record* schema (JSON object with ``type: record``)."""

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")
_INVALID_FIRST_CHAR = re.compile(r"[^A-Za-z_]")
_NAME_MASK = "__"
_NAMED_TYPES = ("record", "fixed", "enum")


# ---------------------------------------------------------------------------------------------------------
# names


def sanitize_name(name: str) -> str:
    """Hudi ``HoodieAvroUtils.sanitizeName``: an invalid first character, then every character outside
    ``[A-Za-z0-9_]``, is replaced by ``__``."""
    if name and _INVALID_FIRST_CHAR.match(name[0]):
        name = _INVALID_FIRST_CHAR.sub(_NAME_MASK, name, count=1)
    return _INVALID_NAME_CHARS.sub(_NAME_MASK, name)


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """``(<table>_record, hoodie.<table>)`` for a table name (``getAvroRecordNameAndNamespace``)."""
    name = sanitize_name(table_name)
    return f"{name}_record", f"hoodie.{name}"


def min_bytes_for_precision(precision: int) -> int:
    """Bytes of a ``fixed`` holding any unscaled decimal of ``precision`` digits (Spark
    ``Decimal.minBytesForPrecision``): the least ``n`` with ``2^(8n-1) >= 10^precision``."""
    n = 1
    while math.pow(2.0, 8 * n - 1) < math.pow(10.0, precision):
        n += 1
    return n


# ---------------------------------------------------------------------------------------------------------
# Arrow -> Avro


def _avro_type(dtype: pa.DataType, nullable: bool, record_name: str, namespace: str, where: str) -> Any:
    """Spark ``SchemaConverters.toAvroType(catalystType, nullable, recordName, nameSpace)`` for the Spark
    type an Arrow type stands for; ``nullable`` wraps the result as ``[T, "null"]``."""
    schema: Any
    if pa.types.is_dictionary(dtype):
        return _avro_type(dtype.value_type, nullable, record_name, namespace, where)
    if pa.types.is_null(dtype):
        return "null"  # Spark NullType: never wrapped in a union
    if pa.types.is_boolean(dtype):
        schema = "boolean"
    elif pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_int32(dtype) \
            or pa.types.is_uint8(dtype) or pa.types.is_uint16(dtype):
        schema = "int"  # Spark ByteType / ShortType / IntegerType
    elif pa.types.is_int64(dtype) or pa.types.is_uint32(dtype):
        schema = "long"
    elif pa.types.is_float16(dtype) or pa.types.is_float32(dtype):
        schema = "float"
    elif pa.types.is_float64(dtype):
        schema = "double"
    elif pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        schema = "string"
    elif pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype) \
            or pa.types.is_fixed_size_binary(dtype):
        schema = "bytes"  # Spark BinaryType
    elif pa.types.is_decimal(dtype):
        full_name = f"{namespace}.{record_name}" if namespace else record_name
        schema = {"type": "fixed", "name": "fixed", "namespace": full_name,
                  "size": min_bytes_for_precision(dtype.precision),
                  "logicalType": "decimal", "precision": dtype.precision, "scale": dtype.scale}
    elif pa.types.is_date(dtype):
        schema = {"type": "int", "logicalType": "date"}
    elif pa.types.is_timestamp(dtype):
        # Spark TimestampType. Deliberately also for tz-naive Arrow timestamps: Spark would call those
        # TimestampNTZType (local-timestamp-micros), which hudi-rs 0.5 cannot read (todo!() in its
        # avro_to_arrow) and Hudi 0.14 does not support; they are stored as UTC instants instead.
        schema = {"type": "long", "logicalType": "timestamp-micros"}
    elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype) \
            or pa.types.is_list_view(dtype) or pa.types.is_large_list_view(dtype):
        item = dtype.value_field
        schema = {"type": "array",
                  "items": _avro_type(item.type, item.nullable, record_name, namespace, f"{where}[]")}
    elif pa.types.is_map(dtype):
        if not (pa.types.is_string(dtype.key_type) or pa.types.is_large_string(dtype.key_type)):
            raise SchemaMismatch(f"column '{where}': Avro maps need string keys, got {dtype.key_type}")
        item = dtype.item_field
        schema = {"type": "map",
                  "values": _avro_type(item.type, item.nullable, record_name, namespace, f"{where}.value")}
    elif pa.types.is_struct(dtype):
        schema = _avro_record(list(dtype), record_name, namespace, where)
    else:
        raise SchemaMismatch(f"column '{where}': Arrow type {dtype} has no Spark/Avro equivalent")
    return [schema, "null"] if nullable else schema


def _avro_record(fields: list[pa.Field], name: str, namespace: str, where: str) -> AvroSchema:
    child_namespace = f"{namespace}.{name}" if namespace else name
    avro_fields = []
    for field in fields:
        path = f"{where}.{field.name}" if where else field.name
        avro_fields.append({"name": field.name,
                            "type": _avro_type(field.type, field.nullable, field.name, child_namespace, path)})
    record: AvroSchema = {"type": "record", "name": name}
    if namespace:
        record["namespace"] = namespace
    record["fields"] = avro_fields
    return record


def _is_null(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, dict) and schema.get("type") == "null")


def _with_defaults(schema: Any, arrow_type: pa.DataType | None) -> Any:
    """Hudi ``AvroConversionUtils.getAvroSchemaWithDefaults``: every union containing null is reordered
    null-first; record fields whose type is such a union get ``"default": null``; a field's ``doc`` comes
    from the Spark ``comment`` metadata (Arrow field metadata ``comment``)."""
    if isinstance(schema, list):
        if any(_is_null(branch) for branch in schema):
            return ["null", *(_with_defaults(b, arrow_type) for b in schema if not _is_null(b))]
        return [_with_defaults(b, arrow_type) for b in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "record":
        arrow_fields = list(arrow_type) if arrow_type is not None and pa.types.is_struct(arrow_type) else []
        by_name = {f.name: f for f in arrow_fields}
        fields = []
        for field in schema["fields"]:
            arrow_field = by_name.get(field["name"])
            new_field: dict[str, Any] = {
                "name": field["name"],
                "type": _with_defaults(field["type"], arrow_field.type if arrow_field is not None else None),
            }
            doc = _comment(arrow_field) if arrow_field is not None else None
            if doc is None:
                doc = field.get("doc")
            if doc is not None:
                new_field["doc"] = doc
            if isinstance(field["type"], list) and any(_is_null(b) for b in field["type"]):
                new_field["default"] = None
            elif "default" in field:
                new_field["default"] = field["default"]
            fields.append(new_field)
        return {**{k: v for k, v in schema.items() if k != "fields"}, "fields": fields}
    if kind == "array":
        element = arrow_type.value_type if arrow_type is not None and hasattr(arrow_type, "value_type") else None
        return {**schema, "items": _with_defaults(schema["items"], element)}
    if kind == "map":
        value = arrow_type.item_type if arrow_type is not None and pa.types.is_map(arrow_type) else None
        return {**schema, "values": _with_defaults(schema["values"], value)}
    return schema


def _comment(field: pa.Field) -> str | None:
    if field.metadata and b"comment" in field.metadata:
        return field.metadata[b"comment"].decode("utf-8")
    return None


def arrow_to_avro(schema: pa.Schema, table_name: str, *, with_defaults: bool = True) -> AvroSchema:
    """The Avro record schema Hudi derives for a Spark schema (the Arrow ``schema``'s Spark equivalent).

    Args:
        schema: data columns in table order, without meta columns (meta columns, if present, are
            converted like any string column; use :func:`add_meta_fields` instead).
        table_name: Hudi table name; gives record ``<table>_record`` in namespace ``hoodie.<table>``.
        with_defaults: ``True`` (default): Hudi ``AvroConversionUtils.convertStructTypeToAvroSchema`` —
            nullable as ``["null", T]`` with ``"default": null`` on fields, as in commit
            ``extraMetadata.schema`` and the ``parquet.avro.schema`` footer. ``False``: Spark
            ``SchemaConverters.toAvroType`` — ``[T, "null"]`` and no defaults, as in
            ``hoodie.table.create.schema``.

    Returns:
        The schema as a JSON-ready dict (key order as Avro's ``Schema.toString``).

    Raises:
        SchemaMismatch: a type with no Spark equivalent (time, interval, union, non-string map keys,
            unsigned 64-bit, ...).
    """
    name, namespace = record_name_and_namespace(table_name)
    record = _avro_record(list(schema), name, namespace, "")
    if not with_defaults:
        return record
    result: AvroSchema = _with_defaults(record, pa.struct(list(schema)))
    return result


# ---------------------------------------------------------------------------------------------------------
# Avro -> Arrow


class _Names:
    """Named Avro types seen so far (records, fixed, enums), for references by name."""

    def __init__(self) -> None:
        self.types: dict[str, Any] = {}

    @staticmethod
    def full_name(schema: Mapping[str, Any], namespace: str) -> tuple[str, str]:
        name = str(schema["name"])
        if "." in name:
            return name, name.rsplit(".", 1)[0]
        space = schema.get("namespace", namespace) or ""
        return (f"{space}.{name}" if space else name), space

    def resolve(self, name: str, namespace: str) -> Any:
        for candidate in (f"{namespace}.{name}" if namespace else name, name):
            if candidate in self.types:
                return self.types[candidate]
        raise SchemaMismatch(f"Avro schema references unknown type '{name}'")


_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}

_LOGICAL: dict[tuple[str, str], pa.DataType] = {
    ("int", "date"): pa.date32(),
    ("int", "time-millis"): pa.time32("ms"),
    ("long", "time-micros"): pa.time64("us"),
    ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"),
    ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
    ("long", "timestamp-nanos"): pa.timestamp("ns", tz="UTC"),
    ("long", "local-timestamp-millis"): pa.timestamp("ms"),
    ("long", "local-timestamp-micros"): pa.timestamp("us"),
    ("long", "local-timestamp-nanos"): pa.timestamp("ns"),
}


def _arrow_type(schema: Any, namespace: str, names: _Names, where: str) -> tuple[pa.DataType, bool]:
    """Arrow type and nullability of an Avro (sub)schema."""
    if isinstance(schema, list):
        branches = [b for b in schema if not _is_null(b)]
        if len(branches) == 1 and len(schema) == 2:
            dtype, _ = _arrow_type(branches[0], namespace, names, where)
            return dtype, True
        if not branches:
            return pa.null(), True
        raise SchemaMismatch(f"column '{where}': Avro union {json.dumps(schema)} is not supported "
                             "(only [null, T] and [T, null])")
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema], schema == "null"
        return _arrow_type(names.resolve(schema, namespace), namespace, names, where)
    if not isinstance(schema, dict):
        raise SchemaMismatch(f"column '{where}': malformed Avro type {schema!r}")
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return _arrow_type(kind, namespace, names, where)
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        if kind == "fixed":
            names.types[names.full_name(schema, namespace)[0]] = schema
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        return (pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)), False
    if isinstance(kind, str) and (kind, logical) in _LOGICAL:
        return _LOGICAL[(kind, str(logical))], False
    if kind in _PRIMITIVES:
        return _PRIMITIVES[str(kind)], kind == "null"
    if kind == "record":
        full_name, space = names.full_name(schema, namespace)
        names.types[full_name] = schema
        fields = [_arrow_field(f, space, names, where) for f in schema.get("fields", [])]
        return pa.struct(fields), False
    if kind == "array":
        dtype, nullable = _arrow_type(schema["items"], namespace, names, f"{where}[]")
        return pa.list_(pa.field("element", dtype, nullable=nullable)), False
    if kind == "map":
        dtype, nullable = _arrow_type(schema["values"], namespace, names, f"{where}.value")
        return pa.map_(pa.string(), pa.field("value", dtype, nullable=nullable)), False
    if kind == "fixed":
        names.types[names.full_name(schema, namespace)[0]] = schema
        return pa.binary(int(schema["size"])), False
    if kind == "enum":
        names.types[names.full_name(schema, namespace)[0]] = schema
        return pa.string(), False
    raise SchemaMismatch(f"column '{where}': unsupported Avro type {json.dumps(schema)}")


def _arrow_field(field: Mapping[str, Any], namespace: str, names: _Names, where: str) -> pa.Field:
    name = str(field["name"])
    path = f"{where}.{name}" if where else name
    dtype, nullable = _arrow_type(field["type"], namespace, names, path)
    return pa.field(name, dtype, nullable=nullable)


def parse_avro_schema(text: str) -> AvroSchema:
    """Parse Avro schema JSON, tolerating the Java ``Properties`` escape ``\\:`` that
    ``hoodie.table.create.schema`` carries (like hudi-rs ``sanitize_avro_schema_str``).

    Raises:
        SchemaMismatch: not JSON or not a record schema.
    """
    text = text.strip()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        try:
            parsed = json.loads(text.replace("\\:", ":"))
        except json.JSONDecodeError as exc:
            raise SchemaMismatch(f"Avro schema is not valid JSON: {exc}") from exc
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise SchemaMismatch("Avro table schema must be a record")
    return parsed


def avro_to_arrow(avro: AvroSchema | str) -> pa.Schema:
    """Arrow schema of an Avro record schema, with the types hudi-rs reads such tables as.

    ``[null, T]`` / ``[T, null]`` → nullable ``T``; ``int``/``long``/``float``/``double``/``boolean``/
    ``string``/``bytes`` → ``int32``/``int64``/``float32``/``float64``/``bool``/``string``/``binary``;
    ``decimal`` (fixed or bytes) → ``decimal128(p, s)``; ``date`` → ``date32``; ``timestamp-micros`` →
    ``timestamp[us, tz=UTC]`` (``-millis`` → ``ms``; ``local-timestamp-*`` → no zone); ``array`` →
    ``list<element>``; ``map`` → ``map<string, value>``; ``record`` → ``struct``; ``enum`` → ``string``;
    plain ``fixed`` → ``fixed_size_binary``.

    Args:
        avro: record schema as dict or JSON text (``\\:`` escapes tolerated).

    Raises:
        SchemaMismatch: malformed schema, or unions other than a nullable single type.
    """
    record = parse_avro_schema(avro) if isinstance(avro, str) else avro
    if record.get("type") != "record":
        raise SchemaMismatch("Avro table schema must be a record")
    names = _Names()
    full_name, space = names.full_name(record, "")
    names.types[full_name] = record
    return pa.schema([_arrow_field(f, space, names, "") for f in record.get("fields", [])])


# ---------------------------------------------------------------------------------------------------------
# meta fields and JSON


def _meta_field(name: str) -> dict[str, Any]:
    return {"name": name, "type": ["null", "string"], "doc": "", "default": None}


def strip_meta_fields(avro: AvroSchema) -> AvroSchema:
    """``avro`` without the five ``_hoodie_*`` meta fields (Hudi ``HoodieAvroUtils.removeMetadataFields``)."""
    return {**{k: v for k, v in avro.items() if k != "fields"},
            "fields": [f for f in avro["fields"] if f["name"] not in META_FIELDS]}


def add_meta_fields(avro: AvroSchema) -> AvroSchema:
    """``avro`` with the five meta fields prepended (Hudi ``HoodieAvroUtils.addMetadataFields``): each
    ``{"name": ..., "type": ["null", "string"], "doc": "", "default": null}``. Existing meta fields are
    replaced, so the call is idempotent."""
    stripped = strip_meta_fields(avro)
    return {**{k: v for k, v in stripped.items() if k != "fields"},
            "fields": [_meta_field(name) for name in META_FIELDS] + stripped["fields"]}


def avro_schema_json(avro: AvroSchema) -> str:
    """Compact JSON as Avro's ``Schema.toString()`` (Jackson) writes it: no spaces, keys in insertion order,
    non-ASCII characters unescaped."""
    return json.dumps(avro, separators=(",", ":"), ensure_ascii=False)
