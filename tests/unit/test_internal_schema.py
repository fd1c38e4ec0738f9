"""Hudi's internal schema without a JVM: ids as Hudi's AvroInternalSchemaConverter assigns them, the
SerDeHelper JSON, the TableChanges rules and reading files written under older schemas by column id."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from engine.errors import SchemaEvolutionError
from engine.schema import changes
from engine.schema.history import SchemaEvolution, SchemaHistory, inherit, parse_history
from engine.schema.internal_schema import InternalSchema

TABLE = pa.schema([
    pa.field("_hoodie_commit_time", pa.string()),
    pa.field("id", pa.int32()),
    pa.field("info", pa.struct([pa.field("a", pa.int64()), pa.field("tags", pa.list_(pa.string()))])),
    pa.field("attrs", pa.map_(pa.string(), pa.float64())),
    pa.field("price", pa.decimal128(10, 2)),
])


def test_ids_are_assigned_record_fields_first_then_nested_types() -> None:
    schema = InternalSchema.from_arrow(TABLE)
    assert [(f.id, f.name) for f in schema.fields] == [(0, "_hoodie_commit_time"), (1, "id"), (2, "info"),
                                                       (3, "attrs"), (4, "price")]
    info = schema.find("info")
    assert info is not None
    assert [(f.id, f.name) for f in info.type.fields] == [(5, "a"), (6, "tags")]  # type: ignore[union-attr]
    assert schema.find("info.tags").type.element_id == 7  # type: ignore[union-attr]
    attrs = schema.find("attrs").type  # type: ignore[union-attr]
    assert (attrs.key_id, attrs.value_id) == (8, 9)  # type: ignore[union-attr]
    assert schema.max_column_id == 9


def test_json_is_serde_helpers() -> None:
    schema = InternalSchema.from_arrow(TABLE).with_version(20240102030405678)
    node = json.loads(schema.to_json())
    assert list(node) == ["max_column_id", "version_id", "type", "fields"]
    assert node["fields"][1] == {"id": 1, "name": "id", "optional": True, "type": "int"}
    assert node["fields"][4]["type"] == "decimal(10, 2)"
    assert node["fields"][3]["type"] == {"type": "map", "key_id": 8, "key": "string", "value_id": 9,
                                         "value": "double", "value_optional": True}
    assert InternalSchema.from_json(schema.to_json()) == schema
    assert InternalSchema.from_json('{"max_column_id":1,"version_id":5,"type":"record","fields":[{"id":0,'
                                    '"name":"d","optional":false,"type":"decimal(5,1)","doc":"x"}]}').fields[0].type \
        == "decimal(5, 1)"


def test_changes_follow_hudis_table_changes() -> None:
    schema = InternalSchema.from_arrow(TABLE)
    added = changes.add_column(schema, "note", "string", "a comment", "FIRST")
    assert [f.name for f in added.fields][:3] == ["_hoodie_commit_time", "note", "id"]
    assert added.find("note").id == 10 and added.max_column_id == 10  # type: ignore[union-attr]
    after = changes.add_column(added, "info.b", "int", position="AFTER a")
    assert [f.name for f in after.find("info").type.fields] == ["a", "b", "tags"]  # type: ignore[union-attr]
    dropped = changes.delete_column(after, "note")
    assert dropped.find("note") is None and dropped.max_column_id == after.max_column_id
    assert changes.add_column(dropped, "note", "string").find("note").id == 12  # type: ignore[union-attr]
    renamed = changes.rename_column(schema, "info.a", "a2")
    assert renamed.find("info.a2").id == 5  # type: ignore[union-attr]
    widened = changes.update_column_type(schema, "id", "long")
    assert widened.find("id").type == "long"  # type: ignore[union-attr]
    assert changes.update_column_type(schema, "price", "decimal(12, 2)").find("price").type == "decimal(12, 2)"  # type: ignore[union-attr]
    for bad, message in (
        (lambda: changes.update_column_type(schema, "price", "decimal(8, 2)"), "incompatibility type"),
        (lambda: changes.update_column_type(schema, "id", "date"), "incompatibility type"),
        (lambda: changes.rename_column(schema, "id", "ID"), "to a existing name"),
        (lambda: changes.rename_column(schema, "_hoodie_commit_time", "x"), "cannot modify hudi meta col"),
        (lambda: changes.add_column(schema, "Id", "int"), "which already exist"),
        (lambda: changes.delete_column(schema, "nope"), "cannot delete missing columns: nope"),
        (lambda: changes.update_column_nullability(schema, "id", False), "optional to required"),
    ):
        with pytest.raises(SchemaEvolutionError, match=message):
            bad()


def test_widening_matrix() -> None:
    allowed = changes.type_update_allowed
    assert allowed("int", "long") and allowed("int", "double") and allowed("int", "string")
    assert allowed("long", "decimal(20, 0)") and allowed("float", "double") and allowed("date", "string")
    assert allowed("string", "date") and allowed("decimal(5, 2)", "decimal(7, 3)")
    assert not allowed("long", "int") and not allowed("double", "float") and not allowed("string", "int")
    assert not allowed("boolean", "int") and not allowed("decimal(5, 2)", "decimal(5, 3)")


def test_history_is_newest_first_and_searched_by_instant() -> None:
    v0 = InternalSchema.from_arrow(pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string())]))
    v1 = changes.rename_column(v0, "name", "nm").with_version(20240101000000000)
    v2 = changes.delete_column(v1, "nm").with_version(20240201000000000)
    text = inherit(v2, inherit(v1, inherit(v0, "")))
    assert text.startswith('{"schemas":[{"max_column_id":1,"version_id":20240201000000000')
    history = SchemaHistory(parse_history(text), text)
    assert [s.version_id for s in history.schemas] == [0, 20240101000000000, 20240201000000000]
    assert history.search("20231231000000000") == v0
    assert history.search("20240115000000000") == v1
    assert history.latest == v2


def test_files_are_aligned_to_the_query_schema_by_id() -> None:
    v0 = InternalSchema.from_arrow(pa.schema([
        pa.field("id", pa.int32()), pa.field("name", pa.string()), pa.field("price", pa.float64()),
        pa.field("info", pa.struct([pa.field("a", pa.int32())]))]))
    v1 = changes.rename_column(v0, "name", "full_name")
    v1 = changes.rename_column(v1, "info.a", "a2")
    v1 = changes.delete_column(v1, "price")
    v1 = changes.add_column(v1, "price", "double").with_version(20240101000000000)
    evolution = SchemaEvolution(v1, (v0, v1))
    old_file = pa.table({"id": [1], "name": ["a1"], "price": [9.5],
                         "info": pa.array([{"a": 3}], pa.struct([pa.field("a", pa.int32())]))})
    aligned = evolution.align(old_file, "20230101000000000")
    assert aligned.column_names == ["id", "full_name", "info"]  # the old price is another column
    assert aligned.to_pylist() == [{"id": 1, "full_name": "a1", "info": {"a2": 3}}]
    assert evolution.file_columns(["id", "name", "price", "info"], ["full_name", "price", "id"],
                                  "20230101000000000") == ["name", "id"]
    new_file = pa.table({"id": [2], "full_name": ["b"], "price": [1.0]})
    assert evolution.align(new_file, "20240102000000000") is new_file
