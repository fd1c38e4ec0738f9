"""Which slices Spark's parquet scan reads (engine.read.parquet_slices), without Spark: the split of a query's
latest slices, what stays with the Python reader, the type check, partition pruning, and the reader options
that restrict the Python part (file groups, pinned instant)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.formats.avro_schema import avro_to_arrow
from engine.read.parquet_slices import plan_parquet_read, prune_partitions, reads_alike
from engine.read.planner import file_groups_option, plan_query
from engine.table import Table

COW = "sample_table/cow/v6_complexkeygen_hivestyle"
MOR = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle"


def query_schema(table: Table) -> pa.Schema:
    avro = table.latest_avro_schema(include_meta=True)
    assert avro is not None
    return avro_to_arrow(avro)


def options(path: str, **more: str) -> HoodieConfig:
    return HoodieConfig({"path": path, **more})


@pytest.mark.parametrize(("stored", "read", "alike"), [
    (pa.int64(), pa.int64(), True),
    (pa.int32(), pa.int8(), True),
    (pa.int32(), pa.int16(), True),
    (pa.int32(), pa.int64(), False),
    (pa.int64(), pa.int32(), False),
    (pa.timestamp("ms", "UTC"), pa.timestamp("us", "UTC"), True),
    (pa.timestamp("us"), pa.timestamp("us", "UTC"), False),
    (pa.timestamp("ns", "UTC"), pa.timestamp("us", "UTC"), False),
    (pa.decimal128(10, 2), pa.decimal128(12, 2), False),
    (pa.large_string(), pa.string(), True),
    (pa.string(), pa.binary(), False),
    (pa.list_(pa.field("element", pa.int32())), pa.list_(pa.field("item", pa.int32())), True),
    (pa.struct([("a", pa.int32())]), pa.struct([("a", pa.int32()), ("b", pa.string())]), True),
    (pa.struct([("a", pa.int32())]), pa.struct([("A", pa.int32())]), False),
    (pa.struct([("a", pa.int64())]), pa.struct([("a", pa.int32())]), False),
    (pa.map_(pa.string(), pa.float64()), pa.map_(pa.string(), pa.float64()), True),
])
def test_reads_alike(stored: pa.DataType, read: pa.DataType, alike: bool) -> None:
    assert reads_alike(stored, read) is alike


def test_copy_on_write_reads_every_latest_base_file(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(COW))
    plan = plan_parquet_read(table, options(table.base_path), query_schema(table))
    assert plan.mode == "parquet" and plan.reason is None
    assert plan.pinned_instant == table.timeline.completed_commits()[-1].timestamp
    latest = {bf.path for bf in table.file_system_view().all_latest_base_files()}
    assert {f.path for f in plan.files} == latest
    assert all(f.size > 0 and f.mtime_ms > 0 for f in plan.files)


def test_merge_on_read_splits_by_log_files(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(MOR))
    schema = query_schema(table)
    plan = plan_parquet_read(table, options(table.base_path), schema)
    assert plan.mode == "union"
    slices = table.file_system_view().all_latest_file_slices()
    with_logs = {(s.partition_path, s.file_id) for s in slices if s.log_files}
    assert set(plan.merged_groups) == with_logs
    assert {f.path for f in plan.files} == {s.base_file.path for s in slices
                                            if not s.log_files and s.base_file is not None}
    # read-optimized: base files only, every file group
    ro = plan_parquet_read(table, options(table.base_path, **{"hoodie.datasource.query.type": "read_optimized"}),
                           schema)
    assert ro.mode == "parquet" and len(ro.files) == len(slices)
    # the Python part reads exactly the file groups it is given
    part = plan_query(table, options(table.base_path, **{"sqlext.read.file.groups":
                                                         file_groups_option(plan.merged_groups)}))
    assert {(s.partition_path, s.file_id) for s in part.splits} == with_logs


def test_an_empty_base_file_goes_to_the_python_reader_which_names_it(hudi_fixture: Callable[..., str]) -> None:
    """Spark's scan skips a 0-byte file silently (its rows would vanish); the Python reader calls it corrupt."""
    import os

    from engine.errors import CorruptFile
    from engine.read.base_reader import read_base_batches

    table = Table.load(hudi_fixture(COW, fresh=True))
    victim = sorted(bf.path for bf in table.file_system_view().all_latest_base_files())[0]
    open(victim, "wb").close()  # noqa: SIM115 - truncating in place
    table = Table.load(table.base_path)
    plan = plan_parquet_read(table, options(table.base_path), query_schema(table))
    assert plan.mode == "python" and os.path.basename(victim) in (plan.reason or "") and "0 bytes" in plan.reason
    with pytest.raises(CorruptFile, match=os.path.basename(victim)):
        next(read_base_batches(table.storage, victim, ["id"], 100))


def test_what_stays_with_the_python_reader(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(COW))
    schema = query_schema(table)
    first = table.timeline.completed_commits()[0].timestamp
    incremental = options(table.base_path, **{"hoodie.datasource.query.type": "incremental",
                                              "hoodie.datasource.read.begin.instanttime": first})
    assert "incremental" in (plan_parquet_read(table, incremental, schema).reason or "")
    cdc = options(table.base_path, **{"hoodie.datasource.query.type": "incremental",
                                      "hoodie.datasource.query.incremental.format": "cdc",
                                      "hoodie.datasource.read.begin.instanttime": first})
    assert "CDC" in (plan_parquet_read(table, cdc, schema).reason or "")
    required = pa.schema([f.with_nullable(False) if f.name == "id" else f for f in schema])
    assert "non-nullable" in (plan_parquet_read(table, options(table.base_path), required).reason or "")
    retyped = pa.schema([f.with_type(pa.string()) if f.name == "id" else f for f in schema])
    reason = plan_parquet_read(table, options(table.base_path), retyped).reason or ""
    assert "column 'id' is stored as int32, read as string" in reason
    respelled = pa.schema([f.with_name("ID") if f.name == "id" else f for f in schema])
    assert "spelled 'id'" in (plan_parquet_read(table, options(table.base_path), respelled).reason or "")


def test_pinned_instant_reads_as_of_it_once_newer_commits_exist(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(MOR))
    times = [i.timestamp for i in table.timeline.completed_commits()]
    assert len(times) > 1
    pinned = plan_query(table, options(table.base_path, **{"sqlext.read.pinned.instant": times[0]}))
    assert pinned.as_of == times[0]
    assert pinned.splits == plan_query(table, options(table.base_path, **{"as.of.instant": times[0]})).splits
    latest = plan_query(table, options(table.base_path, **{"sqlext.read.pinned.instant": times[-1]}))
    assert latest.as_of is None
    with pytest.raises(ConfigError, match="sqlext.read.file.groups"):
        plan_query(table, options(table.base_path, **{"sqlext.read.file.groups": "{not json"}))


def test_partition_pruning(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(COW))
    partitions = table.file_system_view().partition_paths()
    assert partitions == ["byteField=10/shortField=300", "byteField=20/shortField=100",
                          "byteField=30/shortField=100"]
    assert prune_partitions(table, partitions, [("byteField", "=", 20)]) == ["byteField=20/shortField=100"]
    assert prune_partitions(table, partitions, [("shortField", "<", 200), ("byteField", ">=", 25)]) == [
        "byteField=30/shortField=100"]
    assert prune_partitions(table, partitions, [("byteField", "in", (10, 30))]) == [
        "byteField=10/shortField=300", "byteField=30/shortField=100"]
    assert prune_partitions(table, partitions, [("name", "=", "x")]) == partitions


def test_partition_columns_come_from_paths_where_hudis_base_file_relation_takes_them(
        hudi_fixture: Callable[..., str]) -> None:
    """Copy-on-write snapshots and read-optimized queries give Spark the partition paths' values (Hudi 0.15's
    file index partition schema); a merge-on-read snapshot reads the stored values."""
    cow = Table.load(hudi_fixture(COW))
    plan = plan_parquet_read(cow, options(cow.base_path), query_schema(cow))
    assert plan.path_columns == ("byteField", "shortField")
    assert dict(plan.path_values) == {"byteField=10/shortField=300": ("10", "300"),
                                      "byteField=20/shortField=100": ("20", "100"),
                                      "byteField=30/shortField=100": ("30", "100")}
    assert {f.partition_path for f in plan.files} == set(dict(plan.path_values))
    mor = Table.load(hudi_fixture(MOR))
    snapshot = plan_parquet_read(mor, options(mor.base_path), query_schema(mor))
    assert snapshot.path_columns == () and snapshot.path_values == ()
    ro = plan_parquet_read(mor, options(mor.base_path, **{"hoodie.datasource.query.type": "read_optimized"}),
                           query_schema(mor))
    assert ro.path_columns == ("byteField",) and dict(ro.path_values) == {"10": ("10",), "20": ("20",), "30": ("30",)}
    extract = options(mor.base_path, **{"hoodie.datasource.read.extract.partition.values.from.path": "true"})
    assert plan_parquet_read(mor, extract, query_schema(mor)).path_columns == ("byteField",)
    # a column the query does not read, or of a type whose path text is not its value, keeps the stored values
    narrow = pa.schema([f for f in query_schema(cow) if f.name != "shortField"])
    assert plan_parquet_read(cow, options(cow.base_path), narrow).path_columns == ("byteField",)
