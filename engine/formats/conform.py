"""Conforming Arrow data to a target Arrow schema: the one place where columns are matched by name,
missing ones filled with nulls and types cast (used by writers for incoming records and for base files
written under an older schema, and by readers to produce exactly the schema a query asked for)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import SchemaMismatch


def _find_field(names: list[str], wanted: str) -> int | None:
    if wanted in names:
        return names.index(wanted)
    lowered = [n.lower() for n in names]
    return lowered.index(wanted.lower()) if wanted.lower() in lowered else None


def conform_array(array: pa.Array | pa.ChunkedArray, target: pa.DataType, where: str) -> pa.Array:
    """Cast ``array`` to ``target``, matching struct fields by name (case-insensitive) and filling missing
    struct fields with nulls, recursively through lists and maps.

    Args:
        array: the values (chunked arrays are combined).
        target: the Arrow type to produce.
        where: column path used in error messages (e.g. ``"orders.l_qty"``).

    Raises:
        SchemaMismatch: the value type cannot be cast to ``target``.
    """
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    source = array.type
    if source == target:
        return array
    try:
        if pa.types.is_struct(target) and pa.types.is_struct(source):
            names = [source.field(i).name for i in range(source.num_fields)]
            children = []
            for i in range(target.num_fields):
                field = target.field(i)
                idx = _find_field(names, field.name)
                if idx is None:
                    children.append(pa.nulls(len(array), field.type))
                else:
                    children.append(conform_array(array.field(idx), field.type, f"{where}.{field.name}"))
            mask = array.is_null() if array.null_count else None
            return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
        if (pa.types.is_list(target) or pa.types.is_large_list(target)) and (
            pa.types.is_list(source) or pa.types.is_large_list(source)
        ):
            values = conform_array(array.flatten(), target.value_type, f"{where}[]")
            offsets = array.offsets
            if array.offset or array.null_count:
                # Rebuild offsets relative to the flattened values, keeping nulls.
                lengths = pc.fill_null(pc.list_value_length(array), 0)
                import numpy as np

                offs = np.zeros(len(array) + 1, dtype=np.int32)
                np.cumsum(lengths.to_numpy(zero_copy_only=False), out=offs[1:])
                offsets = pa.array(offs, type=pa.int32())
            mask = array.is_null() if array.null_count else None
            return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
        if pa.types.is_map(target) and pa.types.is_map(source):
            keys = conform_array(array.keys, target.key_type, f"{where}.key")
            items = conform_array(array.items, target.item_type, f"{where}.value")
            mask = array.is_null() if array.null_count else None
            return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
        if pa.types.is_timestamp(target) and pa.types.is_timestamp(source) and source.tz != target.tz:
            # Same instant, other zone label: Arrow stores UTC micros either way.
            if source.unit == target.unit:
                return array.view(target) if source.tz and target.tz else pc.cast(array, target)
        return pc.cast(array, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaMismatch(f"column '{where}': cannot convert {source} to {target}: {exc}") from exc


def conform_table(
    data: pa.Table | pa.RecordBatch, schema: pa.Schema, *, fill_missing: bool = True, context: str = ""
) -> pa.Table:
    """Select and cast the columns of ``data`` to exactly ``schema`` (names from ``schema``).

    Args:
        data: input rows; extra columns are dropped.
        schema: the target schema.
        fill_missing: add absent columns as nulls (else raise).
        context: prefix for error messages, e.g. the table name.

    Returns:
        A table with ``schema``'s fields in order.

    Raises:
        SchemaMismatch: a column is missing (``fill_missing=False``) or cannot be cast.
    """
    table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
    if len(schema) == 0:
        return table.select([])  # keeps the row count (count(*) reads no column)
    names = table.column_names
    columns = []
    prefix = f"{context}: " if context else ""
    for field in schema:
        idx = _find_field(names, field.name)
        if idx is None:
            if not fill_missing:
                raise SchemaMismatch(f"{prefix}column '{field.name}' is missing from the data")
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(idx)
        if column.type == field.type:
            columns.append(column)  # already the type: kept as it is, chunks and all (no copy)
            continue
        try:
            columns.append(conform_array(column, field.type, field.name))
        except SchemaMismatch as exc:
            raise SchemaMismatch(f"{prefix}{exc}") from exc
    return pa.Table.from_arrays(columns, schema=schema)


def _member_index(struct: pa.StructType, name: str) -> int:
    idx = struct.get_field_index(name)
    if idx >= 0:
        return idx
    lowered = [i for i in range(struct.num_fields) if struct.field(i).name.lower() == name.lower()]
    return lowered[0] if len(lowered) == 1 else -1


def field_values(data: pa.Table | pa.RecordBatch, path: str) -> pa.Array | None:
    """The values of column ``path`` of ``data``: a top-level name (exact, then case-insensitive) or a dotted
    path into struct members (``nestedcol.a2.b2.c2``; a null struct gives null), as Hudi resolves nested record
    key and precombine fields (``HoodieAvroUtils.getNestedFieldVal``).

    Returns:
        One array of ``data.num_rows`` values, or None when no such column or member exists.
    """
    names = data.schema.names
    if path in names:
        col = data.column(names.index(path))
        return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    lowered = [n for n in names if n.lower() == path.lower()]
    if len(lowered) == 1:
        col = data.column(names.index(lowered[0]))
        return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    parts = path.split(".")
    if len(parts) == 1:
        return None
    col = field_values(data, parts[0])
    for part in parts[1:]:
        if col is None or not pa.types.is_struct(col.type):
            return None
        idx = _member_index(col.type, part)
        if idx < 0:
            return None
        col = pc.struct_field(col, [idx])
    return col


def field_type(schema: pa.Schema, path: str) -> pa.DataType | None:
    """The type of column ``path`` in ``schema`` (resolved as :func:`field_values`), or None."""
    lowered = {n.lower(): n for n in schema.names}
    if path in schema.names or path.lower() in lowered:
        return schema.field(path if path in schema.names else lowered[path.lower()]).type
    parts = path.split(".")
    if len(parts) == 1 or parts[0].lower() not in lowered:
        return None
    current: pa.DataType = schema.field(lowered[parts[0].lower()]).type
    for part in parts[1:]:
        if not pa.types.is_struct(current):
            return None
        idx = _member_index(current, part)
        if idx < 0:
            return None
        current = current.field(idx).type
    return current
