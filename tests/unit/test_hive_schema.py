"""HiveSchemaUtil mapping (Avro → Hive types) and schema difference; pure, no JVM."""

from __future__ import annotations

from typing import Any

import pytest

from hive_sync.errors import SchemaConversionError, SyncError
from hive_sync.schema import (
    avro_to_hive_schema,
    avro_to_hive_type,
    hive_field_schemas,
    is_schema_type_update_allowed,
    schema_difference,
)

DEC_BYTES = {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
DEC_FIXED = {"type": "fixed", "name": "d", "size": 9, "logicalType": "decimal", "precision": 20, "scale": 4}


@pytest.mark.parametrize(("avro", "support_ts", "hive"), [
    ("int", False, "int"),
    ("long", False, "bigint"),
    ("float", False, "float"),
    ("double", False, "double"),
    ("boolean", False, "boolean"),
    ("string", False, "string"),
    ({"type": "string", "logicalType": "uuid"}, False, "string"),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, False, "string"),
    ("bytes", False, "binary"),
    ({"type": "fixed", "name": "F", "size": 16}, False, "binary"),
    ({"type": "int", "logicalType": "date"}, False, "date"),
    (DEC_BYTES, False, "decimal(10,2)"),
    (DEC_FIXED, False, "decimal(20,4)"),
    ({"type": "long", "logicalType": "timestamp-micros"}, True, "timestamp"),
    ({"type": "long", "logicalType": "timestamp-millis"}, True, "timestamp"),
    ({"type": "long", "logicalType": "timestamp-micros"}, False, "bigint"),
    ({"type": "long", "logicalType": "timestamp-millis"}, False, "bigint"),
    ({"type": "int", "logicalType": "time-millis"}, True, "int"),
    ({"type": "long", "logicalType": "time-micros"}, True, "bigint"),
    (["null", "long"], False, "bigint"),
    (["double", "null"], False, "double"),
    ({"type": "array", "items": ["null", "int"]}, False, "array<int>"),
    ({"type": "map", "values": "long"}, False, "map<string,bigint>"),
    ({"type": "map", "values": {"type": "array", "items": "string"}}, False, "map<string,array<string>>"),
    ({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                                                {"name": "b", "type": ["null", "string"]}]},
     False, "struct<a:int,b:string>"),
    ({"type": "record", "name": "r", "fields": [{"name": "a$b", "type": "int"},
                                                {"name": "c-d", "type": "string"}]},
     False, "struct<a_dollar_b:int,c_d:string>"),
    ({"type": "array", "items": {"type": "record", "name": "x", "fields": [
        {"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}},
     True, "array<struct<t:timestamp>>"),
    (["null", "int", "string"], False, "struct<member0:int,member1:string>"),
])
def test_avro_to_hive_type(avro: Any, support_ts: bool, hive: str) -> None:
    assert avro_to_hive_type(avro, support_timestamp=support_ts) == hive


def _table_schema(*fields: tuple[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": "t_record", "namespace": "hoodie.t",
            "fields": [{"name": n, "type": t} for n, t in fields]}


def test_record_schema_with_meta_fields_and_named_reference() -> None:
    inner = {"type": "record", "name": "addr", "fields": [{"name": "city", "type": "string"}]}
    schema = _table_schema(("_hoodie_commit_time", ["null", "string"]), ("id", "long"),
                           ("home", ["null", inner]), ("work", ["null", "addr"]),
                           ("ts", {"type": "long", "logicalType": "timestamp-micros"}), ("dt", "string"))
    assert avro_to_hive_schema(schema, support_timestamp=True) == {
        "_hoodie_commit_time": "string", "id": "bigint", "home": "struct<city:string>",
        "work": "struct<city:string>", "ts": "timestamp", "dt": "string"}
    cols, pcols = hive_field_schemas(schema, ["dt", "missing"], omit_metadata_fields=True)
    assert cols == [("id", "bigint"), ("home", "struct<city:string>"), ("work", "struct<city:string>"),
                    ("ts", "bigint")]
    assert pcols == [("dt", "string"), ("missing", "string")]


@pytest.mark.parametrize("bad", ["null", ["null"], {"type": "record", "name": "e", "fields": []}, "nope"])
def test_unconvertible_types_raise(bad: Any) -> None:
    with pytest.raises(SchemaConversionError):
        avro_to_hive_type(bad, column="c")


def test_table_schema_must_be_record() -> None:
    with pytest.raises(SchemaConversionError):
        avro_to_hive_schema({"type": "array", "items": "int"})


@pytest.mark.parametrize(("prev", "new", "ok"), [
    ("int", "bigint", True), ("float", "double", True), ("INT", "int", True),
    ("struct<a:int>", "struct<a:int,b:int>", True), ("bigint", "int", False), ("string", "int", False),
    ("", "int", False),
])
def test_is_schema_type_update_allowed(prev: str, new: str, ok: bool) -> None:
    assert is_schema_type_update_allowed(prev, new) is ok


def test_schema_difference_added_updated_deleted_case_insensitive() -> None:
    schema = _table_schema(("ID", "long"), ("Name", "string"), ("score", "double"), ("new_col", "int"),
                           ("s", {"type": "record", "name": "s", "fields": [{"name": "x", "type": "int"},
                                                                             {"name": "y", "type": "int"}]}))
    hive = {"id": "int", "name": "STRING", "score": "float", "gone": "string", "dt": "string",
            "s": "struct<x : int>"}
    diff = schema_difference(schema, hive, ["dt"])
    assert diff.added == {"new_col": "int"}
    assert diff.updated == {"id": "bigint", "score": "double", "s": "struct<x:int,y:int>"}
    assert diff.deleted == ["gone"]
    assert not diff.is_empty


def test_schema_difference_empty_and_whitespace_insensitive() -> None:
    schema = _table_schema(("m", {"type": "map", "values": "int"}), ("d", DEC_BYTES))
    assert schema_difference(schema, [("M", "map<string, int>"), ("d", "DECIMAL(10, 2)")], []).is_empty


def test_schema_difference_incompatible_change() -> None:
    schema = _table_schema(("id", "string"))
    with pytest.raises(SyncError, match="Could not convert field Type from bigint to string for field id"):
        schema_difference(schema, {"id": "bigint"}, [])
    assert schema_difference(schema, {"id": "bigint"}, [], strict_type_changes=False).updated == {"id": "string"}
