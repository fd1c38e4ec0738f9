"""The columnar Avro encoder writes the same bytes as fastavro's record-by-record writer."""

from __future__ import annotations

import datetime
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from engine.errors import SchemaMismatch
from engine.formats.avro_encode import encode_rows, frame_records
from engine.formats.log_avro import AvroDataBlock, _to_avro_value

SCHEMA: dict[str, Any] = {"type": "record", "name": "r", "fields": [
    {"name": "b", "type": ["null", "boolean"], "default": None},
    {"name": "i", "type": "int"},
    {"name": "l", "type": ["null", "long"], "default": None},
    {"name": "f", "type": ["float", "null"]},
    {"name": "d", "type": ["null", "double"], "default": None},
    {"name": "s", "type": ["null", "string"], "default": None},
    {"name": "by", "type": ["null", "bytes"], "default": None},
    {"name": "dt", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    {"name": "tsu", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "dec", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 2}],
     "default": None},
    {"name": "fx", "type": ["null", {"type": "fixed", "name": "fx", "size": 9, "logicalType": "decimal",
                                     "precision": 18, "scale": 4}], "default": None},
    {"name": "fs", "type": {"type": "fixed", "name": "fs", "size": 3, "logicalType": "decimal",
                            "precision": 6, "scale": 1}},
]}

ARROW = pa.schema([("b", pa.bool_()), ("i", pa.int32()), ("l", pa.int64()), ("f", pa.float32()),
                   ("d", pa.float64()), ("s", pa.string()), ("by", pa.binary()), ("dt", pa.date32()),
                   ("tsu", pa.timestamp("us", "UTC")), ("tsm", pa.timestamp("ms", "UTC")),
                   ("dec", pa.decimal128(18, 2)), ("fx", pa.decimal128(18, 4)), ("fs", pa.decimal128(6, 1))])

EDGE_INTS = [0, 1, -1, 63, -64, 64, -65, 127, 128, 2**31 - 1, -2**31, 2**40, -2**40, 2**62, -2**63, 2**63 - 1]
EDGE_UNSCALED = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 2**31, -2**31,
                 10**17, -10**17, 999999999999999999, -999999999999999999]


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    rows = []
    for k in range(n):
        def maybe(value: Any) -> Any:
            return None if rnd.random() < 0.2 else value
        rows.append({
            "b": maybe(rnd.random() < 0.5),
            "i": rnd.choice([rnd.randint(-2**31, 2**31 - 1), 0, -1, 127, -65]),
            "l": maybe(EDGE_INTS[k % len(EDGE_INTS)] if k < 40 else rnd.randint(-2**63, 2**63 - 1)),
            "f": maybe(rnd.uniform(-1e6, 1e6)),
            "d": maybe(rnd.uniform(-1e12, 1e12)),
            "s": maybe("".join(rnd.choice("aé☃𝄞 ,") for _ in range(rnd.randint(0, 200)))),
            "by": maybe(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 140)))),
            "dt": maybe(datetime.date(1900, 1, 1) + datetime.timedelta(days=rnd.randint(0, 80000))),
            "tsu": maybe(epoch + datetime.timedelta(microseconds=rnd.randint(-2**40, 2**50))),
            "tsm": epoch + datetime.timedelta(milliseconds=rnd.randint(-2**40, 2**42)),
            "dec": maybe(Decimal(EDGE_UNSCALED[k % len(EDGE_UNSCALED)] if k < 60
                                 else rnd.randint(-10**17, 10**17)).scaleb(-2)),
            "fx": maybe(Decimal(EDGE_UNSCALED[(k + 3) % len(EDGE_UNSCALED)] if k < 60
                                else rnd.randint(-10**17, 10**17)).scaleb(-4)),
            "fs": Decimal(rnd.choice([0, 1, -1, 127, -128, 32767, -32768, 99999, -99999])).scaleb(-1),
        })
    return rows


def _fastavro_block(table: pa.Table, schema: dict[str, Any]) -> bytes:
    named: dict[str, Any] = {}
    records = (_to_avro_value(row, schema, named) for row in table.to_pylist())
    return AvroDataBlock.from_records(records, schema, "001").content


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_columnar_encoding_equals_fastavro_byte_for_byte(seed: int) -> None:
    table = pa.Table.from_pylist(_rows(500, seed), schema=ARROW)
    encoded = encode_rows(table, SCHEMA)
    assert encoded is not None and len(encoded) == 500
    block = AvroDataBlock.from_table(table, SCHEMA, "001")
    assert block.content == _fastavro_block(table, SCHEMA)
    assert block.to_table().to_pylist() == AvroDataBlock(header=block.header, content=block.content).to_table().to_pylist()
    decoded = block.records()
    assert [r["l"] for r in decoded] == table.column("l").to_pylist()
    assert [r["dec"] for r in decoded] == table.column("dec").to_pylist()
    assert [r["fx"] for r in decoded] == table.column("fx").to_pylist()
    assert [r["fs"] for r in decoded] == table.column("fs").to_pylist()


def test_sliced_and_chunked_columns_encode_like_whole_ones() -> None:
    table = pa.Table.from_pylist(_rows(300, 9), schema=ARROW)
    pieces = pa.concat_tables([table.slice(0, 100), table.slice(100, 77), table.slice(177)])
    window = table.slice(50, 120)
    assert frame_records(encode_rows(pieces, SCHEMA)) == frame_records(encode_rows(table, SCHEMA))  # type: ignore[arg-type]
    assert AvroDataBlock.from_table(window, SCHEMA, "001").content == _fastavro_block(window, SCHEMA)


def test_unsupported_schemas_fall_back_to_fastavro() -> None:
    nested = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"},
        {"name": "tags", "type": ["null", {"type": "array", "items": "string"}], "default": None}]}
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "tags": pa.array([["a"], None], pa.list_(pa.string()))})
    assert encode_rows(table, nested) is None
    block = AvroDataBlock.from_table(table, nested, "001")
    assert block.records() == [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": None}]
    wide = {"type": "record", "name": "r", "fields": [
        {"name": "v", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 0}]}]}
    big = pa.table({"v": pa.array([Decimal(10**25)], pa.decimal128(30, 0))})
    assert encode_rows(big, wide) is None
    assert AvroDataBlock.from_table(big, wide, "001").records() == [{"v": Decimal(10**25)}]


def test_nulls_in_a_non_nullable_field_name_the_field() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]}
    with pytest.raises(SchemaMismatch, match="'id'"):
        encode_rows(pa.table({"id": pa.array([1, None], pa.int64())}), schema)
