"""Partition column values from partition paths (engine.read.planner.PartitionColumns and
engine.read.file_group_reader.fill_partition_columns), without Spark."""

from __future__ import annotations

import datetime

import pyarrow as pa

from engine.read.file_group_reader import fill_partition_columns
from engine.read.planner import PartitionColumns

CONFIG = (("hoodie.datasource.write.hive_style_partitioning", "true"),
          ("hoodie.table.keygenerator.class", "org.apache.hudi.keygen.ComplexKeyGenerator"),
          ("hoodie.table.partition.fields", "p,d"), ("hoodie.table.recordkey.fields", "id"))


def test_values_parse_a_path_or_give_none() -> None:
    columns = PartitionColumns(("p", "d"), CONFIG, in_files=True)
    assert columns.values("p=7/d=2024-01-02") == {"p": "7", "d": "2024-01-02"}
    assert columns.values("p=__HIVE_DEFAULT_PARTITION__/d=x") == {"p": None, "d": "x"}
    assert columns.values("p=7") is None  # one segment for two fields: the path does not parse


def batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"id": [1, 2], "p": pa.array([8, 9], pa.int32()), "d": pa.array([datetime.date(2024, 1, 3)] * 2),
         "t": pa.array([datetime.datetime(2024, 1, 3)] * 2, pa.timestamp("us"))})


def test_path_values_replace_stored_ones_of_types_they_name_exactly() -> None:
    filled = fill_partition_columns(batch(), {"p": "7", "d": "2024-01-02", "t": "2024-01-02 00:00:00"},
                                    keep_stored=True)
    assert filled.column("p").to_pylist() == [7, 7]
    assert filled.column("d").to_pylist() == [datetime.date(2024, 1, 2)] * 2
    assert filled.column("t").to_pylist() == [datetime.datetime(2024, 1, 3)] * 2  # a timestamp keeps its value
    assert filled.column("id").to_pylist() == [1, 2]
    assert filled.schema == batch().schema


def test_a_value_that_does_not_cast_keeps_the_stored_one_or_is_null_when_files_lack_the_column() -> None:
    assert fill_partition_columns(batch(), {"p": "x"}, keep_stored=True).column("p").to_pylist() == [8, 9]
    assert fill_partition_columns(batch(), {"p": "x"}).column("p").to_pylist() == [None, None]
    assert fill_partition_columns(batch(), {"p": None}, keep_stored=True).column("p").to_pylist() == [None, None]
