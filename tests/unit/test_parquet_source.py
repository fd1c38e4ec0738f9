"""Reading a bulk insert's parquet source directly (engine/formats/parquet_source.py): splits, projections and
filters evaluated as Spark evaluates them, without a JVM."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import StorageError
from engine.formats.parquet_source import (
    Call,
    Col,
    Lit,
    ParquetSplit,
    ScanProgram,
    plan_splits,
    read_split,
    result_schema,
    row_group_sizes,
)
from engine.storage import Storage


def test_splits_are_contiguous_runs_of_about_equal_bytes() -> None:
    files = [("a", [10] * 7), ("b", [10] * 3)]
    splits = plan_splits(files, 2)
    assert splits == [ParquetSplit((("a", (0, 1, 2, 3, 4)),)),
                      ParquetSplit((("a", (5, 6)), ("b", (0, 1, 2))))]
    # 49 equal row groups on 2 slots: 2 splits, never a third holding one group (Spark's packing would)
    assert [len(s.parts[0][1]) for s in plan_splits([("f", [4] * 49)], 2)] == [24, 25]


def test_a_row_group_larger_than_a_share_goes_where_its_midpoint_falls_and_empty_splits_are_dropped() -> None:
    splits = plan_splits([("a", [100, 1, 1])], 4)
    assert splits == [ParquetSplit((("a", (0,)),)), ParquetSplit((("a", (1, 2)),))]
    assert plan_splits([("a", [])], 2) == []


@pytest.fixture
def source(tmp_path: Path) -> tuple[Storage, str]:
    table = pa.table({
        "id": pa.array([1, 2, 3, None, 5, 6], pa.int32()),
        "name": pa.array(["a", None, "c", "d", "e", "f"]),
        "day": pa.array([datetime.date(2023, 1, 31), datetime.date(2024, 2, 29), None,
                         datetime.date(1999, 12, 1), datetime.date(2023, 6, 1), datetime.date(2023, 7, 4)]),
        "price": pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.00"), None, decimal.Decimal("0.10"),
                           decimal.Decimal("9.99"), decimal.Decimal("2.00")], pa.decimal128(5, 2)),
        "flag": pa.array([True, False, None, True, None, False]),
    })
    path = tmp_path / "src.parquet"
    pq.write_table(table, path, row_group_size=2)
    return Storage.for_uri(str(tmp_path)), str(path)


def _read(storage: Storage, path: str, outputs: tuple[tuple[str, object], ...], filter_: object = None,
          groups: tuple[int, ...] = (0, 1, 2)) -> pa.Table:
    schema, _, _ = row_group_sizes(storage, path)
    program = ScanProgram(outputs, filter_, result_schema(outputs, schema))  # type: ignore[arg-type]
    batches = list(read_split(storage, ParquetSplit(((path, groups),)), program, batch_rows=4))
    return pa.Table.from_batches(batches, schema=program.schema)


def test_projection_renames_widens_and_takes_date_parts_as_spark_types(source: tuple[Storage, str]) -> None:
    storage, path = source
    got = _read(storage, path, (
        ("key", Call("cast", (Col("id"),), pa.int64())),
        ("y", Call("year", (Col("day"),))),
        ("m", Call("month", (Col("day"),))),
        ("d", Call("day", (Col("day"),))),
        ("price", Call("cast", (Col("price"),), pa.decimal128(7, 3))),
    ))
    assert got.schema.types == [pa.int64(), pa.int32(), pa.int32(), pa.int32(), pa.decimal128(7, 3)]
    assert got.column("key").to_pylist() == [1, 2, 3, None, 5, 6]
    assert got.column("y").to_pylist() == [2023, 2024, None, 1999, 2023, 2023]
    assert got.column("m").to_pylist() == [1, 2, None, 12, 6, 7]
    assert got.column("d").to_pylist() == [31, 29, None, 1, 1, 4]
    assert got.column("price").to_pylist()[0] == decimal.Decimal("1.500")


def test_filters_keep_only_rows_that_are_true_with_three_valued_logic(source: tuple[Storage, str]) -> None:
    storage, path = source
    outputs = (("id", Col("id")),)

    def ids(predicate: object) -> list[object]:
        return _read(storage, path, outputs, predicate).column("id").to_pylist()

    # NOT (id > 2): the null id is unknown, so dropped, as in Spark
    assert ids(Call("not", (Call("gt", (Col("id"), Lit(2, pa.int32()))),))) == [1, 2]
    # unknown OR true is true; unknown AND false is false
    assert ids(Call("or", (Call("eq", (Col("flag"), Lit(True, pa.bool_()))),
                           Call("eq", (Col("name"), Lit("c", pa.string())))))) == [1, 3, None]
    assert ids(Call("and", (Call("is_null", (Col("flag"),)),
                            Call("ge", (Col("day"), Lit(datetime.date(2023, 1, 1), pa.date32())))))) == [5]
    assert ids(Call("is_not_null", (Col("name"),))) == [1, 3, None, 5, 6]
    assert ids(Call("le", (Col("price"), Lit(decimal.Decimal("2.00"), pa.decimal128(5, 2))))) == [1, 2, None, 6]
    # row groups not in the split are not read
    got = _read(storage, path, outputs, None, groups=(1,))
    assert got.column("id").to_pylist() == [3, None]


def test_unknown_operations_are_refused() -> None:
    with pytest.raises(ValueError, match="not supported"):
        result_schema((("x", Call("upper", (Col("name"),))),), pa.schema([("name", pa.string())]))


def test_a_file_that_changed_since_planning_fails_naming_it(source: tuple[Storage, str], tmp_path: Path) -> None:
    storage, path = source
    outputs = (("id", Col("id")),)
    schema, _, _ = row_group_sizes(storage, path)
    program = ScanProgram(outputs, None, result_schema(outputs, schema))
    pq.write_table(pa.table({"other": [1]}), path)
    with pytest.raises(StorageError, match="src.parquet"):
        list(read_split(storage, ParquetSplit(((path, (0,)),)), program))
    with pytest.raises(StorageError, match="missing.parquet"):
        row_group_sizes(storage, str(tmp_path / "missing.parquet"))
