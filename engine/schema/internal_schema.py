"""Hudi's internal schema (schema on read): a record type whose every field, list element and map key/value
carries a column id that survives renames, so files written under an older schema are read by id.

Mirrors ``org.apache.hudi.internal.schema.InternalSchema`` and ``Types``; the JSON form is exactly what
Hudi's ``SerDeHelper`` writes into commit metadata (``extraMetadata.latest_schema``) and into the history
files under ``.hoodie/.schema/``::

    {"max_column_id":7,"version_id":20240102030405678,"type":"record","fields":[
      {"id":0,"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""}, ...]}

Primitive types are written as ``boolean``, ``int``, ``long``, ``float``, ``double``, ``date``, ``time``,
``timestamp``, ``string``, ``uuid``, ``binary``, ``fixed[n]``, ``decimal(p, s)``; nested ones as objects with
``type`` = ``record`` (``fields``), ``array`` (``element_id``, ``element``, ``element_optional``) or ``map``
(``key_id``, ``key``, ``value_id``, ``value``, ``value_optional``).

Ids are assigned as Hudi's ``AvroInternalSchemaConverter`` does for a schema seen for the first time: the
fields of a record take consecutive ids first (the root record from 0), then the nested types are visited
in field order; a list takes one id for its element, a map two (key, value).

Conversion to and from Arrow uses the Arrow types the engine reads and writes (``int32``, ``int64``,
``timestamp[us, tz=UTC]``, ``decimal128``, ...); :func:`engine.formats.avro_schema.arrow_to_avro` then gives
the Avro schema Hudi derives for the same Spark schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from engine.errors import SchemaMismatch

PRIMITIVES = ("boolean", "int", "long", "float", "double", "date", "time", "timestamp", "string", "uuid",
              "binary")
"""Primitive type names as Hudi's ``Types.*.toString`` prints them (decimal and fixed have parameters)."""

_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_FIXED = re.compile(r"fixed\[(\d+)\]")


@dataclass(frozen=True)
class Field:
    """A record field (Hudi ``Types.Field``).

    Attributes:
        id: column id, unique in the schema.
        name: field name.
        type: a primitive type name (:data:`PRIMITIVES`, ``decimal(p, s)``, ``fixed[n]``) or a nested type.
        optional: nullable.
        doc: the column comment, or None.
    """

    id: int
    name: str
    type: InternalType
    optional: bool = True
    doc: str | None = None


@dataclass(frozen=True)
class RecordType:
    """A record (Hudi ``Types.RecordType``): fields in order."""

    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        """The field called ``name`` (exact name first, then case-insensitive), or None."""
        for f in self.fields:
            if f.name == name:
                return f
        lowered = name.lower()
        return next((f for f in self.fields if f.name.lower() == lowered), None)


@dataclass(frozen=True)
class ArrayType:
    """A list (Hudi ``Types.ArrayType``)."""

    element_id: int
    element: InternalType
    element_optional: bool = True


@dataclass(frozen=True)
class MapType:
    """A map (Hudi ``Types.MapType``); keys are strings in every schema Spark writes."""

    key_id: int
    key: InternalType
    value_id: int
    value: InternalType
    value_optional: bool = True


InternalType = str | RecordType | ArrayType | MapType


@dataclass(frozen=True)
class InternalSchema:
    """A versioned internal schema (Hudi ``InternalSchema``).

    Attributes:
        record: the root record, meta fields (``_hoodie_*``) included when the table has them.
        version_id: the instant (as a number) the schema was committed at; 0 for a schema derived from an
            Avro schema that was never committed as an internal schema.
        max_column_id: the highest id ever assigned (a deleted column's id is never reused).
    """

    record: RecordType
    version_id: int = 0
    max_column_id: int = -1

    def __post_init__(self) -> None:
        if self.max_column_id < 0:
            object.__setattr__(self, "max_column_id", max(all_ids(self.record), default=-1))

    @property
    def fields(self) -> tuple[Field, ...]:
        """Top-level fields."""
        return self.record.fields

    def with_version(self, version_id: int) -> InternalSchema:
        """This schema under another version id."""
        return replace(self, version_id=version_id)

    def find(self, path: str) -> Field | None:
        """The field at dotted ``path`` (``a.b`` descends into records, list elements and map values;
        names matched case-insensitively), or None."""
        current: InternalType = self.record
        found: Field | None = None
        for part in path.split("."):
            current = _descend(current)
            if not isinstance(current, RecordType):
                return None
            found = current.field(part)
            if found is None:
                return None
            current = found.type
        return found

    def id_to_name(self) -> dict[int, str]:
        """Column id → dotted full name, for every record field."""
        out: dict[int, str] = {}
        for path, f in iter_fields(self.record):
            out[f.id] = path
        return out

    # ------------------------------------------------------------------ JSON (SerDeHelper)

    def to_json(self) -> str:
        """Hudi ``SerDeHelper.toJson(InternalSchema)``: compact JSON, keys in Hudi's order."""
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of :meth:`to_json`."""
        return {"max_column_id": self.max_column_id, "version_id": self.version_id,
                **_record_json(self.record)}

    @staticmethod
    def from_json(text: str | dict[str, Any]) -> InternalSchema:
        """Parse Hudi's JSON form (``SerDeHelper.fromJson``).

        Raises:
            SchemaMismatch: not an internal schema.
        """
        try:
            node = json.loads(text) if isinstance(text, str) else text
            record = _parse_type(node)
            if not isinstance(record, RecordType):
                raise ValueError("the root is not a record")
            return InternalSchema(record, int(node.get("version_id", 0)), int(node.get("max_column_id", -1)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SchemaMismatch(f"not a Hudi internal schema ({exc}): {str(text)[:200]}") from exc

    # ------------------------------------------------------------------ Arrow

    @staticmethod
    def from_arrow(schema: pa.Schema) -> InternalSchema:
        """The internal schema Hudi derives from the equivalent Avro schema (``AvroInternalSchemaConverter
        .convert``): ids as described in the module doc, version 0.

        Raises:
            SchemaMismatch: an Arrow type with no Hudi equivalent.
        """
        counter = _Counter(len(schema))
        fields = _assign_record(list(schema), 0, counter, "")
        return InternalSchema(RecordType(fields), 0)

    @staticmethod
    def from_avro(avro: dict[str, Any]) -> InternalSchema:
        """:meth:`from_arrow` of an Avro record schema, keeping the top-level fields' ``doc`` (Hudi's meta
        fields carry ``"doc": ""``)."""
        from engine.formats.avro_schema import avro_to_arrow

        schema = InternalSchema.from_arrow(avro_to_arrow(avro))
        docs = {f["name"]: f.get("doc") for f in avro.get("fields", [])}
        fields = tuple(replace(f, doc=docs[f.name]) if docs.get(f.name) is not None else f for f in schema.fields)
        return InternalSchema(RecordType(fields), 0, schema.max_column_id)

    def to_arrow(self) -> pa.Schema:
        """Arrow schema of the record (comments as field metadata ``comment``)."""
        return pa.schema([_arrow_field(f) for f in self.record.fields])


# ---------------------------------------------------------------------------------------------------------
# helpers


def _descend(t: InternalType) -> InternalType:
    while True:
        if isinstance(t, ArrayType):
            t = t.element
        elif isinstance(t, MapType):
            t = t.value
        else:
            return t


def iter_fields(record: RecordType, prefix: str = "") -> Iterator[tuple[str, Field]]:
    """``(dotted name, field)`` of every record field, depth first (list elements and map values are
    transparent in names, as in Hudi's ``InternalSchema.findFullName``)."""
    for f in record.fields:
        path = f"{prefix}{f.name}"
        yield path, f
        inner = _descend(f.type)
        if isinstance(inner, RecordType):
            yield from iter_fields(inner, path + ".")


def all_ids(t: InternalType) -> Iterator[int]:
    """Every id used in ``t``: fields, list elements, map keys and values."""
    if isinstance(t, RecordType):
        for f in t.fields:
            yield f.id
            yield from all_ids(f.type)
    elif isinstance(t, ArrayType):
        yield t.element_id
        yield from all_ids(t.element)
    elif isinstance(t, MapType):
        yield t.key_id
        yield t.value_id
        yield from all_ids(t.key)
        yield from all_ids(t.value)


def _record_json(record: RecordType) -> dict[str, Any]:
    fields = []
    for f in record.fields:
        item: dict[str, Any] = {"id": f.id, "name": f.name, "optional": f.optional, "type": _type_json(f.type)}
        if f.doc is not None:
            item["doc"] = f.doc
        fields.append(item)
    return {"type": "record", "fields": fields}


def _type_json(t: InternalType) -> Any:
    if isinstance(t, RecordType):
        return _record_json(t)
    if isinstance(t, ArrayType):
        return {"type": "array", "element_id": t.element_id, "element": _type_json(t.element),
                "element_optional": t.element_optional}
    if isinstance(t, MapType):
        return {"type": "map", "key_id": t.key_id, "key": _type_json(t.key), "value_id": t.value_id,
                "value": _type_json(t.value), "value_optional": t.value_optional}
    return t


def _parse_type(node: Any) -> InternalType:
    if isinstance(node, str):
        text = node.lower()
        if text in PRIMITIVES or _DECIMAL.fullmatch(text) or _FIXED.fullmatch(text):
            match = _DECIMAL.fullmatch(text)
            return f"decimal({match.group(1)}, {match.group(2)})" if match else text
        raise ValueError(f"unknown type {node!r}")
    kind = node["type"]
    if kind == "record":
        return RecordType(tuple(Field(int(f["id"]), str(f["name"]), _parse_type(f["type"]), bool(f["optional"]),
                                      f.get("doc")) for f in node["fields"]))
    if kind == "array":
        return ArrayType(int(node["element_id"]), _parse_type(node["element"]), bool(node["element_optional"]))
    if kind == "map":
        return MapType(int(node["key_id"]), _parse_type(node["key"]), int(node["value_id"]),
                       _parse_type(node["value"]), bool(node["value_optional"]))
    raise ValueError(f"unknown type {kind!r}")


@dataclass
class _Counter:
    next: int = 0

    def take(self, n: int) -> int:
        first = self.next
        self.next += n
        return first


def _assign_record(fields: list[pa.Field], first_id: int, counter: _Counter, where: str) -> tuple[Field, ...]:
    types = [_assign_type(f.type, counter, f"{where}{f.name}") for f in fields]
    out = []
    for i, (f, t) in enumerate(zip(fields, types, strict=True)):
        doc = f.metadata.get(b"comment").decode("utf-8") if f.metadata and b"comment" in f.metadata else None
        out.append(Field(first_id + i, f.name, t, f.nullable, doc))
    return tuple(out)


def _assign_type(dtype: pa.DataType, counter: _Counter, where: str) -> InternalType:
    if pa.types.is_struct(dtype):
        children = [dtype.field(i) for i in range(dtype.num_fields)]
        first = counter.take(len(children))
        return RecordType(_assign_record(children, first, counter, where + "."))
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        element_id = counter.take(1)
        value_field = dtype.value_field
        return ArrayType(element_id, _assign_type(value_field.type, counter, where + ".element"),
                         value_field.nullable)
    if pa.types.is_map(dtype):
        key_id = counter.take(2)
        item = dtype.item_field
        return MapType(key_id, _assign_type(dtype.key_type, counter, where + ".key"), key_id + 1,
                       _assign_type(item.type, counter, where + ".value"), item.nullable)
    return primitive_of(dtype, where)


_PRIMITIVE_TESTS: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
    (pa.types.is_boolean, "boolean"),
    (lambda t: pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t), "int"),
    (pa.types.is_int64, "long"),
    (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"),
    (pa.types.is_date, "date"),
    (pa.types.is_timestamp, "timestamp"),
    (pa.types.is_time, "time"),
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "string"),
    (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t), "binary"),
)
"""Arrow type tests and the Hudi primitive each maps to (Spark's Avro has no 8/16-bit integers: ``int``)."""


def primitive_of(dtype: pa.DataType, where: str = "") -> str:
    """Hudi's primitive type name for an Arrow type.

    Raises:
        SchemaMismatch: no Hudi equivalent (named by ``where``).
    """
    if pa.types.is_fixed_size_binary(dtype):
        return f"fixed[{dtype.byte_width}]"
    for test, name in _PRIMITIVE_TESTS:
        if test(dtype):
            return name
    if pa.types.is_decimal(dtype):
        return f"decimal({dtype.precision}, {dtype.scale})"
    raise SchemaMismatch(f"column {where or '?'}: Arrow type {dtype} has no Hudi internal schema type")


def arrow_type_of(t: InternalType) -> pa.DataType:
    """The Arrow type the engine uses for an internal type."""
    if isinstance(t, RecordType):
        return pa.struct([_arrow_field(f) for f in t.fields])
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("element", arrow_type_of(t.element), nullable=t.element_optional))
    if isinstance(t, MapType):
        return pa.map_(arrow_type_of(t.key), pa.field("value", arrow_type_of(t.value), nullable=t.value_optional))
    simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
              "timestamp": pa.timestamp("us", tz="UTC"), "string": pa.string(), "uuid": pa.string(),
              "binary": pa.binary()}
    if t in simple:
        return simple[t]
    decimal = _DECIMAL.fullmatch(t)
    if decimal:
        return pa.decimal128(int(decimal.group(1)), int(decimal.group(2)))
    fixed = _FIXED.fullmatch(t)
    if fixed:
        return pa.binary(int(fixed.group(1)))
    raise SchemaMismatch(f"unknown internal type {t!r}")


def _arrow_field(f: Field) -> pa.Field:
    metadata = {b"comment": f.doc.encode("utf-8")} if f.doc else None
    return pa.field(f.name, arrow_type_of(f.type), nullable=f.optional, metadata=metadata)
