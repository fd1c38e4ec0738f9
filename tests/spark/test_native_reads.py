"""Base files through Spark's own parquet scan (Hudi ``BaseFileOnlyRelation.toHadoopFsRelation``): copy-on-write
snapshot and read-optimized reads, time travel, and the log-free slices of merge-on-read tables are read by
``FileScan parquet`` (vectorized, column pruning, pushed filters, partition pruning); only slices with log
files go through the Python merge. Every answer is checked against the Python reader
(``spark.sqlext.read.parquet.enabled=false``, the previous path) and against hudi-rs."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pyspark.sql import DataFrame

from engine.table import Table
from sqlext.session import Session
from tests.conftest import HUDI_FIXTURE_NAMES, hudi_rs_rows, normalised

pytestmark = pytest.mark.spark

ENABLED = "spark.sqlext.read.parquet.enabled"
ONE_COMMIT = "options => 'hoodie.compact.inline.max.delta.commits=1'"


def plan_of(df: DataFrame) -> str:
    """The physical plan Spark runs for ``df``."""
    return str(df._jdf.queryExecution().executedPlan().toString())


def assert_parquet_scan(df: DataFrame) -> str:
    plan = plan_of(df)
    assert "FileScan parquet" in plan, plan
    assert "(Python)" not in plan, plan
    return plan


def assert_python_scan(df: DataFrame) -> str:
    plan = plan_of(df)
    assert "(Python)" in plan and "FileScan parquet" not in plan, plan
    return plan


@contextmanager
def python_reader(session: Session) -> Iterator[None]:
    """Reads in the block go through the ``hudi`` Python data source only (the path before this change)."""
    session.spark.conf.set(ENABLED, "false")
    try:
        yield
    finally:
        session.spark.conf.set(ENABLED, "true")


def rows(df: DataFrame) -> list[str]:
    """The rows of ``df``, each as the repr of its values, sorted (an exact, order-free comparison)."""
    return sorted(repr(tuple(r)) for r in df.collect())


def both_paths(session: Session, query: Callable[[], DataFrame]) -> list[str]:
    """The rows of ``query()`` through Spark's parquet scan, asserted equal to the Python reader's."""
    ours = rows(query())
    with python_reader(session):
        before = rows(query())
    assert ours == before
    return ours


def location(session: Session, name: str) -> str:
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return entry.location


def scan_metric(df: DataFrame, metric: str) -> int:
    """Metric ``metric`` of the one parquet scan of ``df``'s last execution (``df.collect()`` first)."""
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    scans = [leaves.apply(i) for i in range(leaves.size()) if leaves.apply(i).nodeName().startswith("Scan parquet")]
    assert len(scans) == 1, [leaves.apply(i).nodeName() for i in range(leaves.size())]
    return int(scans[0].metrics().apply(metric).value())


def assert_like_oracle(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    """Every column hudi-rs returns, equal (up to time zone and decimal scale representation)."""
    assert len(ours) == len(theirs)
    if not theirs:
        return
    columns = list(theirs[0])
    assert set(columns) <= set(ours[0])
    assert (sorted(repr(tuple(normalised(r[c]) for c in columns)) for r in ours)
            == sorted(repr(tuple(normalised(r[c]) for c in columns)) for r in theirs))


@pytest.fixture(scope="module")
def cow(session: Session) -> Iterator[str]:
    """A partitioned copy-on-write table written by four commits (inserts, an update, a delete); one partition
    folder holds a space, a colon and a percent sign."""
    name = "native_cow"
    session.sql(f"""CREATE TABLE {name} (id BIGINT, v STRING, price DOUBLE, small TINYINT, d DATE,
        at TIMESTAMP, amount DECIMAL(12, 3), p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'id')""")
    session.sql(f"""INSERT INTO {name} VALUES
        (1, 'a', 1.5, 1, DATE'1500-01-01', TIMESTAMP'1899-12-31 23:59:59', 1.5, 'x'),
        (2, 'b', 2.5, 2, DATE'2024-02-29', TIMESTAMP'2024-01-02 03:04:05.678', 22.125, 'y'),
        (3, 'c', NULL, NULL, NULL, NULL, NULL, 'z')""")
    session.sql(f"""INSERT INTO {name} VALUES (4, 'd', 4.5, 4, DATE'2024-03-01', TIMESTAMP'2024-03-01 00:00:00', 4, 'x'),
        (5, 'e', 5.5, 5, DATE'2024-03-02', TIMESTAMP'2024-03-02 00:00:00', 5, 'a b:c%d')""")
    session.sql(f"UPDATE {name} SET v = 'b2', price = 20.0 WHERE id = 2")
    session.sql(f"DELETE FROM {name} WHERE id = 3")
    yield name
    session.sql(f"DROP TABLE {name} PURGE")


def test_cow_snapshot_is_a_parquet_scan_with_pruning_and_pushdown(session: Session, cow: str) -> None:
    df = session.sql(f"SELECT id, v FROM {cow} WHERE price > 2 AND p = 'x'")
    plan = assert_parquet_scan(df)
    assert "Batched: true" in plan
    # p is a partition column (its values come from the paths, as Hudi's file index gives them): not read from files
    assert "ReadSchema: struct<id:bigint,v:string,price:double>" in plan
    assert "GreaterThan(price,2.0)" in plan and "PartitionFilters: [isnotnull(p" in plan and "(p#" in plan
    assert rows(df) == ["(4, 'd')"]
    # partition pruning: only the files of p=x are opened
    table = Table.load(location(session, cow))
    files_in_x = len(table.file_system_view().latest_base_files("p=x"))
    assert scan_metric(df, "numFiles") == files_in_x
    assert files_in_x < len(table.file_system_view().all_latest_base_files())
    with python_reader(session):
        assert_python_scan(session.sql(f"SELECT id, v FROM {cow} WHERE price > 2 AND p = 'x'"))


def test_cow_results_equal_the_python_reader_and_hudi_rs(session: Session, cow: str) -> None:
    full = both_paths(session, lambda: session.sql(f"SELECT * FROM {cow}"))
    assert len(full) == 4
    assert both_paths(session, lambda: session.sql(f"SELECT count(*) FROM {cow}")) == ["(4,)"]
    assert both_paths(session, lambda: session.sql(f"SELECT id FROM {cow} WHERE p = 'a b:c%d'")) == ["(5,)"]
    both_paths(session, lambda: session.sql(f"SELECT d, at, amount, small FROM {cow} WHERE id < 3"))
    both_paths(session, lambda: session.sql(f"SELECT p, sum(price) FROM {cow} GROUP BY p"))
    both_paths(session, lambda: session.sql(f"SELECT _hoodie_record_key, _hoodie_commit_time FROM {cow}"))
    ours = session.sql(f"SELECT * FROM {cow}").toArrow().to_pylist()
    assert_like_oracle(ours, hudi_rs_rows(location(session, cow)))
    # the data source by path, and hudi_query, take the same scan
    path_read = session.spark.read.format("hudi").load(location(session, cow))
    assert_parquet_scan(path_read)
    assert rows(path_read) == full
    # the file index lists the latest base files, and sizes the relation by them
    latest = Table.load(location(session, cow)).file_system_view().all_latest_base_files()
    assert sorted(f.removeprefix("file:") for f in path_read.inputFiles()) == sorted(bf.path for bf in latest)
    size = path_read._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()
    assert int(size) == sum(bf.size for bf in latest)
    assert_parquet_scan(session.sql(f"SELECT * FROM hudi_query('{cow}', 'snapshot')"))


def test_cow_time_travel_reads_that_commits_base_files(session: Session, cow: str) -> None:
    instants = [i.timestamp for i in Table.load(location(session, cow)).timeline.completed_commits()]
    for instant in instants:
        for clause in (f"VERSION AS OF '{instant}'", f"TIMESTAMP AS OF '{instant}'"):
            assert_parquet_scan(session.sql(f"SELECT id FROM {cow} {clause}"))
            ours = both_paths(session, lambda c=clause: session.sql(f"SELECT id, v, price FROM {cow} {c}"))
            theirs = hudi_rs_rows(location(session, cow), as_of=instant)
            assert ours == sorted(repr((r["id"], r["v"], r["price"])) for r in theirs)
    path_read = (session.spark.read.format("hudi").option("as.of.instant", instants[0])
                 .load(location(session, cow)).select("id"))
    assert_parquet_scan(path_read)
    assert rows(path_read) == ["(1,)", "(2,)", "(3,)"]


def test_incremental_and_cdc_reads_stay_with_the_python_reader(session: Session, cow: str) -> None:
    first = Table.load(location(session, cow)).timeline.completed_commits()[0].timestamp
    changes = session.sql(f"SELECT id FROM hudi_table_changes('{cow}', 'latest_state', '{first}')")
    assert_python_scan(changes)
    assert rows(changes) == ["(2,)", "(4,)", "(5,)"]


def test_added_columns_read_null_from_older_files(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a')")
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (extra STRUCT<n: INT, s: STRING>)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', named_struct('n', 2, 's', 'two'))")
    df = session.sql(f"SELECT id, v, extra FROM {table_name}")
    assert_parquet_scan(df)
    assert both_paths(session, lambda: session.sql(f"SELECT id, v, extra FROM {table_name}")) == [
        "(1, 'a', None)", "(2, 'b', Row(n=2, s='two'))"]


def test_schema_evolved_on_read_stays_with_the_python_reader(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING) USING hudi
        TBLPROPERTIES (primaryKey = 'id', 'hoodie.schema.on.read.enable' = 'true')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a')")
    session.sql(f"ALTER TABLE {table_name} RENAME COLUMN v TO w")
    df = session.sql(f"SELECT id, w FROM {table_name}")
    assert_python_scan(df)
    assert rows(df) == ["(1, 'a')"]


def make_mor(session: Session, name: str) -> str:
    """A merge-on-read table with one file group per partition; the update leaves log files in p=x only."""
    session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y'), (4, 'd', 1, 'y')")
    session.sql(f"UPDATE {name} SET v = 'b2', ts = 2 WHERE id = 2")
    return location(session, name)


def test_mor_log_slices_merge_in_python_beside_a_parquet_scan(session: Session, table_name: str) -> None:
    base = make_mor(session, table_name)
    df = session.sql(f"SELECT id, v FROM {table_name}")
    plan = plan_of(df)
    assert "Union" in plan and "FileScan parquet" in plan and "(Python)" in plan, plan
    expected = ["(1, 'a')", "(2, 'b2')", "(3, 'c')", "(4, 'd')"]
    assert both_paths(session, lambda: session.sql(f"SELECT id, v FROM {table_name}")) == expected
    assert sorted(repr((r["id"], r["v"])) for r in hudi_rs_rows(base)) == expected
    assert both_paths(session, lambda: session.sql(f"SELECT count(*) FROM {table_name} WHERE p = 'x'")) == ["(2,)"]
    assert_like_oracle(session.sql(f"SELECT * FROM {table_name}").toArrow().to_pylist(), hudi_rs_rows(base))
    # read-optimized: the base files only, all through the parquet scan
    for ro in (session.sql(f"SELECT id, v FROM hudi_query('{table_name}', 'read_optimized')"),
               session.spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized")
               .load(base).select("id", "v")):
        assert_parquet_scan(ro)
        assert rows(ro) == ["(1, 'a')", "(2, 'b')", "(3, 'c')", "(4, 'd')"]
    assert sorted(repr((r["id"], r["v"])) for r in hudi_rs_rows(base, read_optimized="true")) == rows(ro)
    with python_reader(session):
        assert rows(session.sql(f"SELECT id, v FROM hudi_query('{table_name}', 'read_optimized')")) == rows(ro)


def test_mor_base_rows_the_logs_leave_alone_are_read_by_spark(session: Session, table_name: str) -> None:
    """A slice with log files is read in two parts: Spark's parquet scan reads its base file less the rows whose
    keys the logs name (HudiLogFilteredParquet), the Python reader returns only the log records that win."""
    base = make_mor(session, table_name)
    session.sql(f"DELETE FROM {table_name} WHERE id = 1")
    session.sql(f"INSERT INTO {table_name} VALUES (5, 'e', 1, 'x')")
    df = session.sql(f"SELECT id, v FROM {table_name}")
    plan = plan_of(df)
    assert "HudiLogFilteredParquet" in plan and "(Python)" in plan, plan
    expected = ["(2, 'b2')", "(3, 'c')", "(4, 'd')", "(5, 'e')"]
    assert both_paths(session, lambda: session.sql(f"SELECT id, v FROM {table_name}")) == expected
    assert sorted(repr((r["id"], r["v"])) for r in hudi_rs_rows(base)) == expected
    assert_like_oracle(session.sql(f"SELECT * FROM {table_name}").toArrow().to_pylist(), hudi_rs_rows(base))
    assert both_paths(session, lambda: session.sql(
        f"SELECT p, count(*), sum(ts) FROM {table_name} WHERE id > 1 GROUP BY p")) == ["('x', 2, 3)", "('y', 2, 2)"]
    # Every slice merged whole by the Python reader (no keys shipped to the scan): the same rows.
    whole = session.spark.read.format("hudi").option("sqlext.read.log.keys.max", "0").load(base).select("id", "v")
    assert "HudiLogFilteredParquet" not in plan_of(whole) and "(Python)" in plan_of(whole)
    assert rows(whole) == expected
    # Time travel to before the delete: the delete block's key filters nothing.
    first = Table.load(base).timeline.completed_commits()[1].timestamp
    travel = session.sql(f"SELECT id, v FROM {table_name} TIMESTAMP AS OF '{first}'")
    assert rows(travel) == ["(1, 'a')", "(2, 'b2')", "(3, 'c')", "(4, 'd')"]


def test_mor_duplicate_keys_in_a_base_file_keep_their_later_rows(session: Session, table_name: str) -> None:
    """A log record replaces the first base row with its key; a duplicate written by insert stays as stored,
    as Hudi 0.15's file group reader and hudi-rs read it."""
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'id')""")
    session.sql("SET hoodie.sql.bulk.insert.enable = true")
    session.sql("SET hoodie.sql.insert.mode = non-strict")
    try:
        session.sql(f"""INSERT INTO {table_name}
            SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a'), (1, 'a-dup'), (2, 'b') AS s(id, v)""")
    finally:
        session.sql("RESET hoodie.sql.bulk.insert.enable")
        session.sql("RESET hoodie.sql.insert.mode")
    session.sql(f"UPDATE {table_name} SET v = 'b2' WHERE id = 2")
    base = location(session, table_name)
    stored = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized").load(base)
    assert len({r["_hoodie_file_name"] for r in stored.collect()}) == 1  # both rows with key 1 in one base file
    session.sql(f"UPDATE {table_name} SET v = 'z' WHERE id = 1")
    df = session.sql(f"SELECT id, v FROM {table_name}")
    assert "HudiLogFilteredParquet" in plan_of(df)
    ours = both_paths(session, lambda: session.sql(f"SELECT id, v FROM {table_name}"))
    assert sorted(repr((r["id"], r["v"])) for r in hudi_rs_rows(base)) == ours
    assert ours == ["(1, 'a-dup')", "(1, 'z')", "(2, 'b2')"]  # the first row with key 1 took the update


def test_both_parts_of_a_mor_read_see_the_snapshot_it_was_planned_at(session: Session, table_name: str) -> None:
    make_mor(session, table_name)
    df = session.sql(f"SELECT id, v FROM {table_name}")  # analysed: p=y by the parquet scan, p=x merged
    before = rows(df)
    session.sql(f"UPDATE {table_name} SET v = 'd2', ts = 2 WHERE id = 4")  # p=y gains log files
    session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', {ONE_COMMIT})")  # p=x compacted
    assert rows(df) == before, "no file group lost or read twice"
    assert rows(session.sql(f"SELECT id, v FROM {table_name}")) == ["(1, 'a')", "(2, 'b2')", "(3, 'c')",
                                                                     "(4, 'd2')"]


def test_mor_after_compaction_is_all_parquet(session: Session, table_name: str) -> None:
    base = make_mor(session, table_name)
    session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', {ONE_COMMIT})")
    df = session.sql(f"SELECT id, v FROM {table_name} WHERE id > 1")
    plan = assert_parquet_scan(df)
    assert "Union" not in plan and "GreaterThan(id,1)" in plan
    assert both_paths(session, lambda: session.sql(f"SELECT id, v FROM {table_name}")) == sorted(
        repr((r["id"], r["v"])) for r in hudi_rs_rows(base))


def fixture_reads(session: Session, path: str, options: dict[str, str]) -> DataFrame:
    reader = session.spark.read.format("hudi")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path)


# Every fixture is read like hudi-rs in test_read_hudi_written_tables; the plan and Python-reader checks here take
# one table of each kind by default, the rest under -m extended.
DEFAULT_NATIVE_FIXTURES = {"sample_table/cow/v6_complexkeygen_hivestyle", "sample_table/mor/parquet/v6_empty",
                           "sample_table/mor/parquet/v6_complexkeygen_hivestyle",
                           "quickstart_trips_table/mor/avro/v6_trips_8i1u"}


@pytest.mark.integration
@pytest.mark.parametrize("fixture", [
    pytest.param(f, marks=[] if f in DEFAULT_NATIVE_FIXTURES else [pytest.mark.extended]) for f in HUDI_FIXTURE_NAMES])
def test_hudi_written_tables(session: Session, hudi_fixture: Callable[..., str], fixture: str) -> None:
    path = hudi_fixture(fixture)
    table = Table.load(path)
    times = [i.timestamp for i in table.timeline.completed_commits()]
    reads: list[tuple[dict[str, str], dict[str, str]]] = [({}, {})]
    if table.is_mor:
        reads.append(({"hoodie.datasource.query.type": "read_optimized"}, {"read_optimized": "true"}))
    if times:
        reads.append(({"as.of.instant": times[0]}, {"as_of": times[0]}))
    for options, oracle in reads:
        df = fixture_reads(session, path, options)
        plan = plan_of(df)
        if "empty" not in fixture and (not table.is_mor or "hoodie.datasource.query.type" in options):
            assert "FileScan parquet" in plan and "(Python)" not in plan, (options, plan)
        ours = df.toArrow().to_pylist()
        with python_reader(session):
            before = fixture_reads(session, path, options).toArrow().to_pylist()
        assert sorted(map(repr, ours)) == sorted(map(repr, before)), options
        assert_like_oracle(ours, hudi_rs_rows(path, **oracle))



@pytest.mark.parametrize("layout", ["hive", "two-levels"])
def test_copy_on_write_partition_columns_come_from_the_path_as_in_hudi(session: Session, table_name: str,
                                                                       layout: str) -> None:
    """A global index that keeps a record in its stored partition (``update.partition.path=false``) while its
    partition column changes: the file holds the new value, the path the old one. Hudi 0.15's copy-on-write and
    read-optimized reads show the path's value (its file index gives Spark a partition schema) and filter on it;
    its merge-on-read snapshot shows the record's. Checked against Hudi 0.15."""
    if layout == "two-levels":  # non-hive-style p/d, typed values
        columns, partitions, select = "id INT, v INT, ts INT, p INT, d DATE", "p, d", "p, d"
        extra = ", 'hoodie.datasource.write.hive_style_partitioning' = 'false'"
        old, new = "7, DATE'2024-01-02'", "8 AS p, DATE'2024-01-03' AS d"
        at_path, in_file = (7, datetime.date(2024, 1, 2)), (8, datetime.date(2024, 1, 3))
        on_path, on_file = "p = 7", "p = 8"
    else:
        columns, partitions, select, extra = "id INT, v INT, ts INT, p STRING", "p", "p", ""
        old, new, at_path, in_file, on_path, on_file = "'a'", "'b' AS p", ("a",), ("b",), "p = 'a'", "p = 'b'"
    mor = f"{table_name}_mor"
    session.sql("SET hoodie.index.type = GLOBAL_SIMPLE")
    session.sql("SET hoodie.simple.index.update.partition.path = false")
    try:
        for name, kind in ((table_name, "cow"), (mor, "mor")):
            session.sql(f"CREATE TABLE {name} ({columns}) USING hudi PARTITIONED BY ({partitions}) "
                        f"TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts'{extra})")
            session.sql(f"INSERT INTO {name} VALUES (1, 1, 1, {old}), (2, 1, 1, {old})")
            session.sql(f"MERGE INTO {name} t USING (SELECT 1 AS id, 2 AS v, 2 AS ts, {new}) s ON t.id = s.id "
                        "WHEN MATCHED THEN UPDATE SET *")
    finally:
        session.sql("RESET hoodie.simple.index.update.partition.path")
        session.sql("RESET hoodie.index.type")

    def query(sql: str) -> Callable[[], DataFrame]:
        return lambda: session.sql(sql)

    assert both_paths(session, query(f"SELECT {select} FROM {table_name} WHERE id = 1")) == [repr(at_path)]
    assert both_paths(session, query(f"SELECT id FROM {table_name} WHERE {on_path}")) == ["(1,)", "(2,)"]
    assert both_paths(session, query(f"SELECT id FROM {table_name} WHERE {on_file}")) == []
    assert both_paths(session, query(f"SELECT id FROM {table_name} WHERE {on_path} AND v = 2")) == ["(1,)"]
    assert_parquet_scan(session.sql(f"SELECT id, {select} FROM {table_name} WHERE {on_path}"))
    base = location(session, table_name)
    latest = Table.load(base).timeline.completed_commits()[-1].timestamp
    assert both_paths(session, query(f"SELECT {select} FROM {table_name} TIMESTAMP AS OF '{latest}' "
                                     "WHERE id = 1")) == [repr(at_path)]
    # The file's value: hudi-rs, and the merge-on-read snapshot (Hudi's too); its read-optimized query: the path's.
    assert [tuple(r[c] for c in select.split(", ")) for r in hudi_rs_rows(base) if r["id"] == 1] == [in_file]
    assert both_paths(session, query(f"SELECT {select} FROM {mor} WHERE id = 1")) == [repr(in_file)]
    session.sql(f"CALL run_compaction(op => 'run', table => '{mor}')")  # the base file now holds the new value
    assert both_paths(session, query(f"SELECT {select} FROM {mor} WHERE id = 1")) == [repr(in_file)]
    ro = f"SELECT {select} FROM hudi_query('{mor}', 'read_optimized') WHERE id = 1"
    assert both_paths(session, query(ro)) == [repr(at_path)]
