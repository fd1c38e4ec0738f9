"""Schema changes on an internal schema (Hudi ``TableChanges`` + ``SchemaChangeUtils``): add, delete, rename,
retype, comment, nullability and position of columns, each returning a new :class:`InternalSchema`.

Rules, as Hudi's:

* meta columns (``_hoodie_*``) cannot be changed (``cannot modify hudi meta col``);
* an added column is optional and takes the next id (``max_column_id + 1``, nested types after it);
  names are unique case-insensitively among siblings;
* a deleted column's id is never reused (``max_column_id`` is kept);
* a type may only widen (:func:`type_update_allowed`, Hudi ``SchemaChangeUtils.isTypeUpdateAllow``);
* nullability may only go from required to optional;
* positions: ``FIRST`` or ``AFTER <sibling>`` within the parent record. Differs from Hudi on purpose: at the
  top level ``FIRST`` puts the column first among the data columns, after the meta columns, which every
  Hudi reader expects first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.errors import SchemaEvolutionError
from engine.formats.avro_schema import META_FIELDS
from engine.schema.internal_schema import (
    _DECIMAL,
    PRIMITIVES,
    ArrayType,
    Field,
    InternalSchema,
    InternalType,
    MapType,
    RecordType,
    _Counter,
)


def _check_not_meta(path: str) -> None:
    if path in META_FIELDS:
        raise SchemaEvolutionError(f"cannot modify hudi meta col: {path}")


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition(".")
    return parent, name


def _require(schema: InternalSchema, path: str, what: str) -> Field:
    found = schema.find(path)
    if found is None:
        raise SchemaEvolutionError(f"cannot {what} a missing column: {path}")
    return found


def _rewrite(schema: InternalSchema, parent_path: str, func: Callable[[RecordType], RecordType]) -> InternalSchema:
    """``schema`` with ``func(record) -> record`` applied to the record at ``parent_path`` ('' = root)."""

    def walk(t: InternalType, path: str) -> InternalType:
        if isinstance(t, RecordType):
            fields = tuple(replace(f, type=walk(f.type, f"{path}.{f.name}" if path else f.name)) for f in t.fields)
            record = RecordType(fields)
            return func(record) if path.lower() == parent_path.lower() else record
        if isinstance(t, ArrayType):
            return replace(t, element=walk(t.element, path))
        if isinstance(t, MapType):
            return replace(t, value=walk(t.value, path))
        return t

    if parent_path:
        parent = schema.find(parent_path)
        if parent is None:
            raise SchemaEvolutionError(f"cannot find parent column: {parent_path}")
        inner = parent.type
        while isinstance(inner, (ArrayType, MapType)):
            inner = inner.element if isinstance(inner, ArrayType) else inner.value
        if not isinstance(inner, RecordType):
            raise SchemaEvolutionError("only support add nested columns to struct column")
        # walk names by the schema's own spelling of the parent path
        parent_path = _canonical_path(schema, parent_path)
    root = walk(schema.record, "")
    assert isinstance(root, RecordType)
    return InternalSchema(root, schema.version_id, schema.max_column_id)


def _canonical_path(schema: InternalSchema, path: str) -> str:
    names = []
    current: InternalType = schema.record
    for part in path.split("."):
        while isinstance(current, (ArrayType, MapType)):
            current = current.element if isinstance(current, ArrayType) else current.value
        assert isinstance(current, RecordType)
        f = current.field(part)
        assert f is not None
        names.append(f.name)
        current = f.type
    return ".".join(names)


def _position(fields: list[Field], moved: Field, position: str | None, at_root: bool) -> list[Field]:
    rest = [f for f in fields if f.id != moved.id]
    if position is None:
        return [*rest, moved]
    text = position.strip()
    if text.upper() == "FIRST":
        start = sum(1 for f in rest if f.name in META_FIELDS) if at_root else 0
        return [*rest[:start], moved, *rest[start:]]
    if text.upper().startswith("AFTER "):
        anchor = text[6:].strip().strip("`").rpartition(".")[2]
        for i, f in enumerate(rest):
            if f.name.lower() == anchor.lower():
                return [*rest[: i + 1], moved, *rest[i + 1:]]
        raise SchemaEvolutionError(f"cannot find column {anchor} to place {moved.name} after")
    raise SchemaEvolutionError(f"unknown column position {position!r}")


def _renumber(t: InternalType, counter: _Counter) -> InternalType:
    if isinstance(t, RecordType):
        first = counter.take(len(t.fields))
        types = [_renumber(f.type, counter) for f in t.fields]
        return RecordType(tuple(replace(f, id=first + i, type=types[i]) for i, f in enumerate(t.fields)))
    if isinstance(t, ArrayType):
        element_id = counter.take(1)
        return ArrayType(element_id, _renumber(t.element, counter), t.element_optional)
    if isinstance(t, MapType):
        key_id = counter.take(2)
        return MapType(key_id, t.key, key_id + 1, _renumber(t.value, counter), t.value_optional)
    return t


def add_column(schema: InternalSchema, path: str, column_type: InternalType, doc: str | None = None,
               position: str | None = None) -> InternalSchema:
    """``schema`` with an optional column added at dotted ``path`` (Hudi ``ColumnAddChange.addColumns``).

    Raises:
        SchemaEvolutionError: a meta column name, an existing name, or a missing / non-record parent.
    """
    _check_not_meta(path)
    parent, name = _split(path)
    if schema.find(path) is not None:
        raise SchemaEvolutionError(f"cannot add column: {name} which already exist")
    counter = _Counter(schema.max_column_id + 2)
    new_id = schema.max_column_id + 1
    new_field = Field(new_id, name, _renumber(column_type, counter), True, doc)

    def add(record: RecordType) -> RecordType:
        return RecordType(tuple(_position(list(record.fields), new_field, position, at_root=not parent)))

    out = _rewrite(schema, parent, add)
    return InternalSchema(out.record, schema.version_id, counter.next - 1)


def delete_column(schema: InternalSchema, path: str) -> InternalSchema:
    """``schema`` without the column at ``path``; ``max_column_id`` is kept (Hudi ``ColumnDeleteChange``).

    Raises:
        SchemaEvolutionError: a meta column or a missing column.
    """
    _check_not_meta(path)
    target = schema.find(path)
    if target is None:
        raise SchemaEvolutionError(f"cannot delete missing columns: {path}")
    parent, _ = _split(path)

    def drop(record: RecordType) -> RecordType:
        kept = tuple(f for f in record.fields if f.id != target.id)
        if not kept:
            raise SchemaEvolutionError(f"cannot delete column {path}: a struct needs at least one field")
        return RecordType(kept)

    return _rewrite(schema, parent, drop)


def _update_field(schema: InternalSchema, path: str, **changes: object) -> InternalSchema:
    target = schema.find(path)
    assert target is not None
    parent, _ = _split(path)

    def update(record: RecordType) -> RecordType:
        return RecordType(tuple(replace(f, **changes) if f.id == target.id else f  # type: ignore[arg-type]
                                for f in record.fields))

    return _rewrite(schema, parent, update)


def rename_column(schema: InternalSchema, path: str, new_name: str) -> InternalSchema:
    """``schema`` with the column at ``path`` renamed (same id; Hudi ``ColumnUpdateChange.renameColumn``).

    Raises:
        SchemaEvolutionError: a meta column, a missing column, an empty or existing new name.
    """
    _check_not_meta(path)
    _require(schema, path, "update")
    if not new_name:
        raise SchemaEvolutionError(f"cannot rename column: {path} to empty")
    parent, _ = _split(path)
    sibling = f"{parent}.{new_name}" if parent else new_name
    if schema.find(sibling) is not None:
        raise SchemaEvolutionError(f"cannot rename column: {path} to a existing name")
    return _update_field(schema, path, name=new_name)


def type_update_allowed(source: InternalType, target: InternalType) -> bool:
    """Hudi ``SchemaChangeUtils.isTypeUpdateAllow``: int → long/float/double/string/decimal, long →
    float/double/string/decimal, float → double/string/decimal, double → string/decimal, date → string,
    decimal → a decimal at least as wide (or same scale, larger precision) or string, string →
    date/decimal; anything to itself."""
    if not isinstance(source, str) or not isinstance(target, str):
        raise SchemaEvolutionError("only support update primitive type")
    if source == target:
        return True
    target_decimal = _DECIMAL.fullmatch(target)
    widening = {
        "int": ("long", "float", "double", "string"),
        "long": ("float", "double", "string"),
        "float": ("double", "string"),
        "double": ("string",),
        "date": ("string",),
        "string": ("date",),
    }
    if source in widening:
        if target in widening[source]:
            return True
        return bool(target_decimal) and source in ("int", "long", "float", "double", "string")
    source_decimal = _DECIMAL.fullmatch(source)
    if source_decimal:
        if target == "string":
            return True
        if target_decimal:
            sp, ss = int(source_decimal.group(1)), int(source_decimal.group(2))
            tp, ts = int(target_decimal.group(1)), int(target_decimal.group(2))
            wider = ts >= ss and (tp - ts) >= (sp - ss)
            return wider or (tp >= sp and ts == ss)
    return False


def update_column_type(schema: InternalSchema, path: str, new_type: InternalType) -> InternalSchema:
    """``schema`` with the column at ``path`` retyped, widening only (Hudi
    ``ColumnUpdateChange.updateColumnType``).

    Raises:
        SchemaEvolutionError: a meta column, a missing or nested column, a narrowing change.
    """
    _check_not_meta(path)
    target = _require(schema, path, "update")
    if not isinstance(new_type, str) or not isinstance(target.type, str):
        raise SchemaEvolutionError(f"only support update primitive type but find nest column: {path}")
    if not type_update_allowed(target.type, new_type):
        raise SchemaEvolutionError(f"cannot update origin type: {target.type} to a incompatibility type: {new_type}")
    return schema if target.type == new_type else _update_field(schema, path, type=new_type)


def update_column_comment(schema: InternalSchema, path: str, doc: str | None) -> InternalSchema:
    """``schema`` with the column comment replaced (Hudi ``updateColumnComment``).

    Raises:
        SchemaEvolutionError: a meta column or a missing column.
    """
    _check_not_meta(path)
    _require(schema, path, "update")
    return _update_field(schema, path, doc=doc)


def update_column_nullability(schema: InternalSchema, path: str, nullable: bool) -> InternalSchema:
    """``schema`` with the column's nullability changed; only required → optional (Hudi
    ``updateColumnNullability``).

    Raises:
        SchemaEvolutionError: a meta column, a missing column, or optional → required.
    """
    _check_not_meta(path)
    target = _require(schema, path, "update")
    if target.optional == nullable:
        return schema
    if target.optional and not nullable:
        raise SchemaEvolutionError("cannot update column Nullability: optional to required")
    return _update_field(schema, path, optional=nullable)


def move_column(schema: InternalSchema, path: str, position: str) -> InternalSchema:
    """``schema`` with the column at ``path`` moved to ``FIRST`` or ``AFTER <sibling>``.

    Raises:
        SchemaEvolutionError: a meta column, a missing column or anchor.
    """
    _check_not_meta(path)
    target = _require(schema, path, "update")
    parent, _ = _split(path)

    def move(record: RecordType) -> RecordType:
        return RecordType(tuple(_position(list(record.fields), target, position, at_root=not parent)))

    return _rewrite(schema, parent, move)


def reconcile(schema: InternalSchema, write_schema: InternalSchema) -> InternalSchema:
    """The table schema after a write whose schema is ``write_schema`` (Hudi
    ``AvroSchemaEvolutionUtils.reconcileSchema``): top-level columns the write has and the table lacks are
    added at the end with new ids; everything else keeps the table's ids, names and types."""
    out = schema
    for f in write_schema.fields:
        if schema.record.field(f.name) is None and f.name not in META_FIELDS:
            out = add_column(out, f.name, f.type, f.doc)
    return out


__all__ = ["PRIMITIVES", "add_column", "delete_column", "move_column", "reconcile", "rename_column",
           "type_update_allowed", "update_column_comment", "update_column_nullability", "update_column_type"]
