"""Arrow ⇄ Avro schema conversion against the schemas Hudi wrote into the fixture tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import SchemaMismatch
from engine.formats.avro_schema import (
    META_FIELDS,
    add_meta_fields,
    arrow_to_avro,
    avro_schema_json,
    avro_to_arrow,
    min_bytes_for_precision,
    parse_avro_schema,
    record_name_and_namespace,
    sanitize_name,
    strip_meta_fields,
)
from tests.unit.fixture_tables import base_files, commit_schemas, extract_tables, table_properties


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    found = extract_tables(tmp_path_factory.mktemp("avro"))
    assert len(found) >= 16
    return found


def _spark_catalog_type(dtype: pa.DataType) -> pa.DataType:
    """The Arrow type of the Spark catalog type behind a column read from a Spark-written parquet file.

    parquet-avro writes 2-level lists (``repeated group array``), which read back with a *required* element;
    the Spark table schema had ``containsNull = true`` (the SQL default), which is what Hudi converted to
    Avro. Everything else reads back as declared (byte/short come back as int32, as Avro has them).
    """
    if pa.types.is_list(dtype):
        return pa.list_(pa.field("element", _spark_catalog_type(dtype.value_type), nullable=True))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _spark_catalog_type(f.type), f.nullable) for f in dtype])
    if pa.types.is_map(dtype):
        item = dtype.item_field
        return pa.map_(dtype.key_type, pa.field("value", _spark_catalog_type(item.type), item.nullable))
    return dtype


def _declared_columns(parquet_path: Path) -> pa.Schema:
    schema = pq.read_schema(parquet_path)
    return pa.schema([pa.field(f.name, _spark_catalog_type(f.type), f.nullable)
                      for f in schema if f.name not in META_FIELDS])


def test_arrow_to_avro_reproduces_create_and_commit_schemas(tables: list[Path]) -> None:
    compared = 0
    for base in tables:
        files = base_files(base)
        if not files:
            continue
        props = table_properties(base)
        name = props["hoodie.table.name"]
        arrow = _declared_columns(files[0])
        create = props["hoodie.table.create.schema"]
        raw = arrow_to_avro(arrow, name, with_defaults=False)
        assert raw == json.loads(create), base.name
        assert avro_schema_json(raw) == create, base.name
        schemas = commit_schemas(base)
        assert schemas, base.name
        for schema in schemas:
            converted = arrow_to_avro(arrow, name)
            assert converted == json.loads(schema), base.name
            assert avro_schema_json(converted) == schema, base.name
            compared += 1
    assert compared >= 20


def test_avro_to_arrow_round_trips_every_fixture_schema(tables: list[Path]) -> None:
    for base in tables:
        props = table_properties(base)
        name = props["hoodie.table.name"]
        create = props["hoodie.table.create.schema"]
        assert avro_schema_json(arrow_to_avro(avro_to_arrow(create), name, with_defaults=False)) == create
        for schema in commit_schemas(base):
            assert avro_schema_json(arrow_to_avro(avro_to_arrow(schema), name)) == schema


def test_avro_to_arrow_matches_hudi_rs_types(tables: list[Path]) -> None:
    hudi = pytest.importorskip("hudi")
    checked = 0
    for base in tables:
        if "/cow/" not in str(base) or not base_files(base):
            continue
        batches = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
        oracle = batches[0].schema
        schema = json.loads(commit_schemas(base)[-1])
        if META_FIELDS[0] in oracle.names:
            schema = add_meta_fields(schema)
        mine = avro_to_arrow(schema)
        assert mine.names == oracle.names
        for ours, theirs in zip(mine, oracle, strict=True):
            assert ours.type == theirs.type, (base.name, ours, theirs)
            if ours.name not in META_FIELDS:  # hudi-rs declares meta columns non-null; the files have them optional
                assert ours.nullable == theirs.nullable, (base.name, ours.name)
        checked += 1
    assert checked >= 5


def test_expected_arrow_types() -> None:
    avro = {
        "type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
            {"name": "d", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "x", "size": 5,
                                            "logicalType": "decimal", "precision": 10, "scale": 5}]},
            {"name": "day", "type": [{"type": "int", "logicalType": "date"}, "null"]},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {"name": "ms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
            {"name": "l", "type": ["null", {"type": "array", "items": ["null", {
                "type": "record", "name": "l", "namespace": "hoodie.t.t_record",
                "fields": [{"name": "a", "type": ["null", "string"]}]}]}]},
            {"name": "m", "type": {"type": "map", "values": "hoodie.t.t_record.l"}},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
            {"name": "raw", "type": {"type": "fixed", "name": "F", "size": 3}},
        ]}
    schema = avro_to_arrow(avro)
    element = pa.struct([pa.field("a", pa.string())])
    assert schema.field("d").type == pa.decimal128(10, 5) and schema.field("d").nullable
    assert schema.field("day").type == pa.date32() and schema.field("day").nullable
    assert schema.field("ts").type == pa.timestamp("us", tz="UTC") and not schema.field("ts").nullable
    assert schema.field("ms").type == pa.timestamp("ms", tz="UTC")
    assert schema.field("l").type == pa.list_(pa.field("element", element, nullable=True))
    assert schema.field("m").type == pa.map_(pa.string(), pa.field("value", element, nullable=False))
    assert schema.field("e").type == pa.string()
    assert schema.field("raw").type == pa.binary(3)


def test_spark_type_mapping_and_nested_names() -> None:
    arrow = pa.schema([
        pa.field("b", pa.int8()),
        pa.field("s", pa.int16(), nullable=False),
        pa.field("ts_local", pa.timestamp("us", tz="America/Chicago")),
        pa.field("ts_naive", pa.timestamp("us")),
        pa.field("amounts", pa.list_(pa.field("element", pa.decimal128(38, 2), nullable=False))),
        pa.field("st", pa.struct([pa.field("inner", pa.struct([pa.field("dec", pa.decimal128(4, 1))]))])),
        pa.field("big", pa.large_string()),
        pa.field("dict", pa.dictionary(pa.int32(), pa.string())),
    ])
    avro = arrow_to_avro(arrow, "tbl")
    fields = {f["name"]: f for f in avro["fields"]}
    assert (avro["name"], avro["namespace"]) == ("tbl_record", "hoodie.tbl")
    assert fields["b"] == {"name": "b", "type": ["null", "int"], "default": None}
    assert fields["s"] == {"name": "s", "type": "int"}  # not nullable: no union, no default
    assert fields["ts_local"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["ts_naive"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["amounts"]["type"][1]["items"] == {
        "type": "fixed", "name": "fixed", "namespace": "hoodie.tbl.tbl_record.amounts", "size": 16,
        "logicalType": "decimal", "precision": 38, "scale": 2}
    inner = fields["st"]["type"][1]["fields"][0]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.tbl.tbl_record.st")
    assert inner["fields"][0]["type"][1]["namespace"] == "hoodie.tbl.tbl_record.st.inner.dec"
    assert inner["fields"][0]["type"][1]["size"] == 2
    assert fields["big"]["type"] == ["null", "string"] and fields["dict"]["type"] == ["null", "string"]
    back = avro_to_arrow(avro)
    assert back.field("b").type == pa.int32() and back.field("s").type == pa.int32()
    assert back.field("ts_local").type == pa.timestamp("us", tz="UTC")


def test_field_comment_becomes_doc() -> None:
    arrow = pa.schema([pa.field("id", pa.int64(), metadata={b"comment": "the key"})])
    assert arrow_to_avro(arrow, "t")["fields"][0] == {
        "name": "id", "type": ["null", "long"], "doc": "the key", "default": None}


@pytest.mark.parametrize("dtype", [pa.uint64(), pa.time64("us"), pa.map_(pa.int32(), pa.string()),
                                   pa.month_day_nano_interval()])
def test_types_without_spark_equivalent_raise(dtype: pa.DataType) -> None:
    with pytest.raises(SchemaMismatch, match="'c'"):
        arrow_to_avro(pa.schema([pa.field("c", dtype)]), "t")


def test_unsupported_avro_raises() -> None:
    with pytest.raises(SchemaMismatch, match="union"):
        avro_to_arrow({"type": "record", "name": "r", "fields": [{"name": "u", "type": ["null", "int", "string"]}]})
    with pytest.raises(SchemaMismatch, match="unknown type"):
        avro_to_arrow({"type": "record", "name": "r", "fields": [{"name": "u", "type": "Missing"}]})
    with pytest.raises(SchemaMismatch):
        avro_to_arrow('{"type": "int"}')
    with pytest.raises(SchemaMismatch):
        parse_avro_schema("{not json")


def test_min_bytes_for_precision() -> None:
    for precision in range(1, 39):
        expected = next(n for n in range(1, 17) if 2 ** (8 * n - 1) >= 10 ** precision)
        assert min_bytes_for_precision(precision) == expected
    assert [min_bytes_for_precision(p) for p in (1, 2, 3, 9, 10, 18, 19, 38)] == [1, 1, 2, 4, 5, 8, 9, 16]


def test_names_are_sanitized_like_hudi() -> None:
    assert sanitize_name("trips") == "trips"
    assert sanitize_name("1st-table.x") == "__st__table__x"
    assert record_name_and_namespace("my-table") == ("my__table_record", "hoodie.my__table")


def test_meta_fields_and_json() -> None:
    base = arrow_to_avro(pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string())]), "t")
    with_meta = add_meta_fields(base)
    assert [f["name"] for f in with_meta["fields"]] == [*META_FIELDS, "id", "name"]
    assert with_meta["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "",
                                      "default": None}
    assert add_meta_fields(with_meta) == with_meta
    assert strip_meta_fields(with_meta) == base
    text = avro_schema_json(with_meta)
    assert text.startswith('{"type":"record","name":"t_record","namespace":"hoodie.t","fields":[{"name":')
    assert " " not in text
    assert avro_schema_json({"type": "record", "name": "é", "fields": []}) == '{"type":"record","name":"é","fields":[]}'
    escaped = text.replace(":", "\\:")
    assert parse_avro_schema(escaped) == with_meta
    assert avro_to_arrow(escaped).names == [*META_FIELDS, "id", "name"]
