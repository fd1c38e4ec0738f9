"""The columnar Avro decoder gives the same Arrow table as fastavro's record-by-record reader, and steps
aside (``None``) for what it does not cover or cannot account for."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from engine.formats import log_avro
from engine.formats.avro_decode import covers, decode_records
from engine.formats.log_avro import AvroDataBlock, _to_avro_value
from tests.unit.test_avro_encode import ARROW, SCHEMA, _rows


def _payloads(rows: list[dict[str, Any]], schema: dict[str, Any], arrow: pa.Schema) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    named: dict[str, Any] = {}
    out = []
    for row in pa.Table.from_pylist(rows, schema=arrow).to_pylist():
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, _to_avro_value(row, schema, named))
        out.append(buffer.getvalue())
    return out


def _fastavro_table(payloads: list[bytes], schema: dict[str, Any], arrow: pa.Schema) -> pa.Table:
    parsed = fastavro.parse_schema(schema)
    records = [fastavro.schemaless_reader(io.BytesIO(p), parsed, None) for p in payloads]
    return pa.Table.from_pylist(records, schema=arrow)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_columnar_decoding_equals_fastavro(seed: int) -> None:
    payloads = _payloads(_rows(700, seed), SCHEMA, ARROW)
    decoded = decode_records(payloads, SCHEMA, ARROW)
    assert decoded is not None
    expected = _fastavro_table(payloads, SCHEMA, ARROW)
    assert decoded.schema == expected.schema
    assert decoded.equals(expected)
    assert covers(SCHEMA)


def test_all_null_and_empty_chunks() -> None:
    rows = [{**row, **{k: None for k in ("b", "l", "f", "d", "s", "by", "dt", "tsu", "dec", "fx")}}
            for row in _rows(5, 9)]
    payloads = _payloads(rows, SCHEMA, ARROW)
    decoded = decode_records(payloads, SCHEMA, ARROW)
    assert decoded is not None and decoded.equals(_fastavro_table(payloads, SCHEMA, ARROW))
    empty = decode_records([], SCHEMA, ARROW)
    assert empty is not None and empty.num_rows == 0 and empty.schema == ARROW


def test_wide_decimals_and_bad_bytes_step_aside() -> None:
    schema = {"type": "record", "name": "w", "fields": [
        {"name": "x", "type": {"type": "fixed", "name": "x", "size": 16, "logicalType": "decimal",
                               "precision": 38, "scale": 0}}]}
    arrow = pa.schema([pa.field("x", pa.decimal128(38, 0), nullable=False)])
    small = _payloads([{"x": Decimal(-5)}, {"x": Decimal(2**62)}], schema, arrow)
    decoded = decode_records(small, schema, arrow)
    assert decoded is not None and decoded.column(0).to_pylist() == [Decimal(-5), Decimal(2**62)]
    assert decode_records(_payloads([{"x": Decimal(2**70)}], schema, arrow), schema, arrow) is None

    payloads = _payloads(_rows(20, 4), SCHEMA, ARROW)
    assert decode_records([payloads[0][:-1], *payloads[1:]], SCHEMA, ARROW) is None  # truncated record
    assert decode_records([payloads[0] + b"\x00", *payloads[1:]], SCHEMA, ARROW) is None  # trailing byte
    nested = {"type": "record", "name": "n", "fields": [{"name": "a", "type": {"type": "array", "items": "int"}}]}
    assert not covers(nested)


def test_blocks_decode_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    table = pa.Table.from_pylist(_rows(300, 7), schema=ARROW)
    block = AvroDataBlock.from_table(table, SCHEMA, "001")
    columnar = list(block.iter_tables(64))
    monkeypatch.setattr(log_avro, "covers", lambda schema: False)
    record_by_record = list(block.iter_tables(64))
    assert [t.num_rows for t in columnar] == [64, 64, 64, 64, 44]
    assert pa.concat_tables(columnar).equals(pa.concat_tables(record_by_record))
    assert pa.concat_tables(columnar).to_pylist() == table.to_pylist()
