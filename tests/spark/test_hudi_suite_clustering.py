"""Apache Hudi 0.15's ``TestClusteringProcedure`` (``hudi-spark-datasource/hudi-spark``), ported as the SQL a
user types: ``CALL run_clustering`` / ``show_clustering`` give Hudi 0.15's rows (checked against Hudi 0.15.0
itself through tests/hudi_oracle's runner): input group counts, states, involved partitions, and the
instants later calls name.

Rewritten in SQL: Hudi's cases schedule plans with the write client's ``scheduleClusteringAtInstant``; here
``run_clustering(op => 'schedule')`` writes the same plan. Hudi's ``HoodieDataSourceHelpers`` timeline checks
(replace commits completed, nothing written after a plan) are ``show_commits`` rows. Hudi runs "By Table" for
cow and mor, as here; "By Path" and "With Partition Pruning" run once each (cow, mor) to keep the suite fast.
The data source writes of "with specific instants" / "op" (``writeRecords``) are INSERTs of the same shape.

Left out: "Order Strategy" (400,000 records, and it compares HoodieFileIndex's data-skipping file counts of
linear and z-order layouts: the space-filling-curve orders are tested in tests/spark/test_clustering.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlext.session import Session

pytestmark = pytest.mark.spark

CLUSTERING_COLUMNS = ["timestamp", "input_group_size", "state", "involved_partitions"]


def call(session: Session, sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
    frame = session.sql(sql)
    return list(frame.columns), [tuple(r) for r in frame.collect()]


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return call(session, sql)[1]


def partitioned(session: Session, name: str, location: Path, table_type: str, extra: str = "") -> None:
    session.sql(f"""create table {name} (id int, name string, price double, ts long) using hudi
        options (primaryKey = 'id', type = '{table_type}', preCombineField = 'ts' {extra})
        partitioned by (ts) location '{location}'""")


def insert(session: Session, name: str, *ids: int, ts_base: int = 999) -> None:
    """``insert into t values(i, 'ai', 10, ts_base + i)``, one commit each."""
    for i in ids:
        session.sql(f"insert into {name} values({i}, 'a{i}', 10, {ts_base + i})")


def replace_commits(session: Session, name: str) -> list[str]:
    """Completed replacecommits, newest first (Hudi: allCompletedCommitsCompactions filtered by action)."""
    return [r[0] for r in rows(session, f"call show_commits(table => '{name}', limit => 100)")
            if r[2] == "replacecommit"]


def expected_rows(*ids: int, ts_base: int = 999) -> list[tuple[object, ...]]:
    return [(i, f"a{i}", 10.0, ts_base + i) for i in ids]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_run_clustering_by_table(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test Call run_clustering Procedure By Table."""
    partitioned(session, table_name, tmp_path / table_name, table_type)
    insert(session, table_name, 1, 2, 3)
    first = rows(session, f"call run_clustering(table => '{table_name}', op => 'schedule')")
    insert(session, table_name, 4)
    second = rows(session, f"call run_clustering(table => '{table_name}', op => 'schedule')")
    assert [r[1:] for r in first + second] == [(3, "REQUESTED", "*"), (1, "REQUESTED", "*")]
    first_at, second_at = first[0][0], second[0][0]
    assert call(session, f"call show_clustering('{table_name}')") == (
        CLUSTERING_COLUMNS, [(second_at, 1, "REQUESTED", "*"), (first_at, 3, "REQUESTED", "*")])
    # both plans run; none is scheduled, nothing was written since the second plan
    assert rows(session, f"call run_clustering(table => '{table_name}', order => 'ts', "
                         "show_involved_partition => true)") == [
        (second_at, 1, "COMPLETED", "ts=1003"), (first_at, 3, "COMPLETED", "ts=1000,ts=1001,ts=1002")]
    assert replace_commits(session, table_name) == [second_at, first_at]
    assert max(r[0] for r in rows(session, f"call show_commits(table => '{table_name}', limit => 100)")) == \
        second_at
    assert rows(session, f"select id, name, price, ts from {table_name} order by id") == expected_rows(1, 2, 3, 4)
    assert rows(session, f"call show_clustering(table => '{table_name}')") == [
        (second_at, 1, "COMPLETED", "*"), (first_at, 3, "COMPLETED", "*")]
    # without a pending plan, run_clustering schedules one: every partition's file group
    insert(session, table_name, 5, 6)
    third = rows(session, f"call run_clustering(table => '{table_name}', order => 'ts', "
                          "show_involved_partition => true)")
    assert [r[1:] for r in third] == [(6, "COMPLETED", ",".join(f"ts={1000 + i}" for i in range(6)))]
    assert replace_commits(session, table_name) == [third[0][0], second_at, first_at]
    assert rows(session, f"select id, name, price, ts from {table_name} order by id") == \
        expected_rows(1, 2, 3, 4, 5, 6)


def test_run_clustering_by_path(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Call run_clustering Procedure By Path (cow)."""
    location = tmp_path / table_name
    partitioned(session, table_name, location, "cow")
    assert call(session, f"call run_clustering(path => '{location}')") == (CLUSTERING_COLUMNS, [])  # empty table
    assert rows(session, f"call show_clustering(path => '{location}')") == []
    insert(session, table_name, 1, 2, 3)
    first = rows(session, f"call run_clustering(path => '{location}', op => 'schedule')")
    assert len(first) == 1
    assert rows(session, f"call show_clustering(path => '{location}', show_involved_partition => true)") == [
        (first[0][0], 3, "REQUESTED", "ts=1000,ts=1001,ts=1002")]
    assert rows(session, f"call run_clustering(path => '{location}', order => 'ts')") == [
        (first[0][0], 3, "COMPLETED", "*")]
    assert rows(session, f"select id, name, price, ts from {table_name} order by id") == expected_rows(1, 2, 3)
    assert replace_commits(session, table_name) == [first[0][0]]
    insert(session, table_name, 4, 5)
    result = rows(session, f"call run_clustering(table => '{table_name}', predicate => 'ts >= 1003L', "
                           "show_involved_partition => true)")
    assert [r[1:] for r in result] == [(2, "COMPLETED", "ts=1003,ts=1004")]
    assert rows(session, f"select id, name, price, ts from {table_name} order by id") == \
        expected_rows(1, 2, 3, 4, 5)
    assert len(replace_commits(session, table_name)) == 2


def test_run_clustering_with_partition_pruning(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Call run_clustering Procedure With Partition Pruning (mor): a predicate over data columns is
    refused; single, And and And-Or partition predicates choose the partitions; none matching: no row."""
    partitioned(session, table_name, tmp_path / table_name, "mor")
    run = f"call run_clustering(table => '{table_name}', order => 'ts', show_involved_partition => true, predicate => "
    results = []
    for ids, bad, good, involved, groups in [
        ((1, 2, 3), "ts <= 1001L and id = 10", "ts <= 1001L", "ts=1000,ts=1001", 2),
        ((4, 5, 6), "ts > 1001L and ts <= 1005L and id = 10", "ts > 1001L and ts <= 1005L",
         "ts=1002,ts=1003,ts=1004,ts=1005", 4),
        ((7, 8, 9, 10), "ts < 1007L or ts >= 1008L or id = 10", "(ts >= 1006L and ts < 1008L) or ts >= 1009L",
         "ts=1006,ts=1007,ts=1009", 3)]:
        insert(session, table_name, *ids)
        with pytest.raises(Exception, match="Only partition predicates are allowed"):
            session.sql(f"{run}'{bad}')")
        result = rows(session, f"{run}'{good}')")
        assert [r[1:] for r in result] == [(groups, "COMPLETED", involved)]
        results.insert(0, result[0])
        assert replace_commits(session, table_name) == [r[0] for r in results]
        assert rows(session, f"call show_clustering(table => '{table_name}', show_involved_partition => true)") == \
            results
        assert rows(session, f"select id, name, price, ts from {table_name} order by id") == \
            expected_rows(*range(1, ids[-1] + 1))
    assert rows(session, f"{run}'ts > 1111L')") == []


def test_run_clustering_with_specific_instants_and_ops(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Call run_clustering Procedure with specific instants; Test Call run_clustering Procedure op
    (Hudi's table: c1 int, c2 string, c3 double, insert operation, unpartitioned)."""
    session.sql(f"""create table {table_name} (c1 int, c2 string, c3 double) using hudi
        options (primaryKey = 'c1', type = 'cow', hoodie.datasource.write.operation = 'insert')
        location '{tmp_path / table_name}'""")
    session.sql(f"insert into {table_name} values (1, 'foo1', 1.0), (2, 'foo2', 2.0)")
    first = rows(session, f"call run_clustering(table => '{table_name}', op => 'schedule')")
    session.sql(f"insert into {table_name} values (3, 'foo3', 3.0), (4, 'foo4', 4.0)")
    second = rows(session, f"call run_clustering(table => '{table_name}', op => 'schedule')")
    pending = [(second[0][0], 1, "REQUESTED", "*"), (first[0][0], 1, "REQUESTED", "*")]
    assert first + second == pending[::-1]
    assert rows(session, f"call show_clustering(table => '{table_name}')") == pending
    with pytest.raises(Exception, match="specific 000000 instants is not exist"):
        session.sql(f"call run_clustering(table => '{table_name}', instants => '000000, {first[0][0]}')")
    assert rows(session, f"call show_clustering(table => '{table_name}')") == pending  # nothing ran
    # specific instants run only those plans, without scheduling a new one
    assert rows(session, f"call run_clustering(table => '{table_name}', "
                         f"instants => '{first[0][0]},{second[0][0]}')") == \
        [(t, n, "COMPLETED", p) for t, n, _, p in pending]
    assert rows(session, f"call run_clustering(table => '{table_name}', op => 'execute')") == []
    for op in ("schedule", "scheduleAndExecute"):
        with pytest.raises(Exception, match="specific instants only can be used in 'execute' op or not specific op"):
            session.sql(f"call run_clustering(table => '{table_name}', instants => '000000', op => '{op}')")
    third = rows(session, f"call run_clustering(table => '{table_name}', op => 'schedule')")
    assert [r[1:] for r in third] == [(1, "REQUESTED", "*")]
    assert rows(session, f"call run_clustering(table => '{table_name}', instants => '{third[0][0]}', "
                         "op => 'execute')") == [(third[0][0], 1, "COMPLETED", "*")]
    # no op: schedule and execute; the clustered file is still small, so each call clusters it again
    for done in (4, 5):
        result = rows(session, f"call run_clustering(table => '{table_name}')")
        assert [r[1:] for r in result] == [(1, "COMPLETED", "*")]
        assert len(replace_commits(session, table_name)) == done
    assert [r[2] for r in rows(session, f"call show_clustering(table => '{table_name}')")] == ["COMPLETED"] * 5
    with pytest.raises(Exception, match="Invalid value"):
        session.sql(f"call run_clustering(table => '{table_name}', op => 'null')")
    assert sorted(rows(session, f"select c1, c2, c3 from {table_name}")) == [
        (i, f"foo{i}", float(i)) for i in range(1, 5)]


def test_run_clustering_with_partition_selected(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Call run_clustering with partition selected."""
    partitioned(session, table_name, tmp_path / table_name, "cow")
    for i, ts in ((1, 1010), (2, 1010), (3, 1011)):
        session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, {ts})")
    result = rows(session, f"call run_clustering(table => '{table_name}', selected_partitions => 'ts=1010', "
                           "show_involved_partition => true)")
    assert [r[1:] for r in result] == [(1, "COMPLETED", "ts=1010")]
    for i, ts in ((4, 1010), (5, 1011), (6, 1012)):
        session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, {ts})")
    result = rows(session, f"call run_clustering(table => '{table_name}', "
                           "selected_partitions => 'ts=1010,ts=1011,ts=1012', show_involved_partition => true)")
    assert [r[1:] for r in result] == [(3, "COMPLETED", "ts=1010,ts=1011,ts=1012")]
    assert rows(session, f"select id, name, price, ts from {table_name} order by id") == [
        (1, "a1", 10.0, 1010), (2, "a2", 10.0, 1010), (3, "a3", 10.0, 1011), (4, "a4", 10.0, 1010),
        (5, "a5", 10.0, 1011), (6, "a6", 10.0, 1012)]


def test_run_clustering_with_unsupported_bucket_index(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Call run_clustering with unsupported bucket index."""
    partitioned(session, table_name, tmp_path / table_name, "cow",
                ", hoodie.index.type = 'BUCKET', hoodie.bucket.index.hash.field = 'id'")
    session.sql(f"insert into {table_name} values(1, 'a1', 10, 1010)")
    session.sql(f"insert into {table_name} values(2, 'a2', 10, 1010)")
    with pytest.raises(Exception, match="Executor SparkExecuteClusteringCommitActionExecutor is not compatible "
                                        "with table layout HoodieSimpleBucketLayout"):
        session.sql(f"call run_clustering(table => '{table_name}')")
