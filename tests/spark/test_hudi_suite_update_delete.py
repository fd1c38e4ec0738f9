"""Apache Hudi's own UPDATE and DELETE suites (``TestUpdateTable``, ``TestDeleteTable`` of
``hudi-spark-datasource/hudi-spark``), ported as the SQL a user types: each statement gives Hudi's rows.

Cases that need Hudi's Scala API are rewritten in SQL (the data source write of the url-encoded partition
case becomes a CREATE TABLE + INSERT with the same options) or left out with a reason beside them. Hudi's
suites run most cases with ``hoodie.spark.sql.optimized.writes.enable`` true and false; the setting changes
how Hudi's own writer is driven, not the rows, and is set here as a user would set it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlext.session import Session

pytestmark = pytest.mark.spark

OPTIMIZED_WRITES = "hoodie.spark.sql.optimized.writes.enable"


def answer(session: Session, sql: str) -> list[tuple[object, ...]]:
    """Rows of a query, sorted (Hudi's ``checkAnswer`` compares without order)."""
    return sorted(tuple(r) for r in session.sql(sql).collect())


def create(session: Session, name: str, tmp: Path, columns: str, props: str, tail: str = "") -> None:
    session.sql(f"CREATE TABLE {name} ({columns}) USING hudi LOCATION '{tmp / name}' "
                f"TBLPROPERTIES ({props}) {tail}")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_update_table(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test Update Table; Test decimal type (a DECIMAL(38, 10) column beside the updated one)."""
    create(session, table_name, tmp_path, "id int, name string, price double, ts long, ff decimal(38, 10)",
           f"type = '{table_type}', primaryKey = 'id', preCombineField = 'ts'")
    session.sql(f"insert into {table_name} select 1, 'a1', 10, 1000, 10.0")
    select = f"select id, name, price, ts from {table_name}"
    assert answer(session, select) == [(1, "a1", 10.0, 1000)]
    session.sql(f"set {OPTIMIZED_WRITES}=true")
    try:
        session.sql(f"update {table_name} set price = 20 where id = 1")
        assert answer(session, select) == [(1, "a1", 20.0, 1000)]
    finally:
        session.sql(f"set {OPTIMIZED_WRITES}=false")
    session.sql(f"update {table_name} set price = price * 2 where id = 1")
    assert answer(session, select) == [(1, "a1", 40.0, 1000)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@pytest.mark.parametrize("partitioned", [True, False])
def test_update_and_delete_without_primary_key(session: Session, table_name: str, tmp_path: Path,
                                               table_type: str, partitioned: bool) -> None:
    """Test Update Table Without Primary Key; Test Delete Table Without Primary Key."""
    create(session, table_name, tmp_path, "id int, price double, ts long, name string",
           f"type = '{table_type}', preCombineField = 'ts'", "PARTITIONED BY (name)" if partitioned else "")
    session.sql(f"insert into {table_name} select 1, 10, 1000, 'a1'")
    select = f"select id, name, price, ts from {table_name}"
    assert answer(session, select) == [(1, "a1", 10.0, 1000)]
    session.sql(f"update {table_name} set price = 20 where id = 1")
    assert answer(session, select) == [(1, "a1", 20.0, 1000)]
    session.sql(f"update {table_name} set price = price * 2 where id = 1")
    assert answer(session, select) == [(1, "a1", 40.0, 1000)]
    session.sql(f"delete from {table_name} where id = 1")
    assert answer(session, f"select count(1) from {table_name}") == [(0,)]
    session.sql(f"insert into {table_name} select 2, 10, 1000, 'a2'")
    session.sql(f"delete from {table_name} where id = 1")
    assert answer(session, select) == [(2, "a2", 10.0, 1000)]
    session.sql(f"delete from {table_name}")
    assert answer(session, f"select count(1) from {table_name}") == [(0,)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_update_and_delete_on_non_pk_condition(session: Session, table_name: str, tmp_path: Path,
                                               table_type: str) -> None:
    """Test Update Table On Non-PK Condition; Test Delete Table On Non-PK Condition (partitioned tables)."""
    create(session, table_name, tmp_path, "id int, name string, price double, ts long, pt string",
           f"type = '{table_type}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (pt)")
    session.sql(f"""insert into {table_name}
        values (1, 'a1', 10.0, 1000, "2021"), (2, 'a2', 20.0, 1000, "2021"), (3, 'a2', 30.0, 1000, "2022")""")
    select = f"select id, name, price, ts, pt from {table_name}"
    session.sql(f"update {table_name} set price = price * 1.1, ts = ts + 1 where name = 'a2'")
    assert answer(session, select) == [(1, "a1", 10.0, 1000, "2021"), (2, "a2", 22.0, 1001, "2021"),
                                       (3, "a2", 33.0, 1001, "2022")]
    session.sql(f"update {table_name} set price = price + 5, ts = ts + 1 where pt = '2021'")
    assert answer(session, select) == [(1, "a1", 15.0, 1001, "2021"), (2, "a2", 27.0, 1002, "2021"),
                                       (3, "a2", 33.0, 1001, "2022")]
    session.sql(f"delete from {table_name} where name = 'a2'")
    assert answer(session, select) == [(1, "a1", 15.0, 1001, "2021")]
    session.sql(f"delete from {table_name} where pt = '2021'")
    assert answer(session, select) == []


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_update_ignores_case(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test ignoring case for Update Table: upper-case column names, table options given with OPTIONS."""
    session.sql(f"""create table {table_name} (ID int, NAME string, PRICE double, TS long) using hudi
        location '{tmp_path / table_name}'
        options (type = '{table_type}', primaryKey = 'ID', preCombineField = 'TS')""")
    session.sql(f"insert into {table_name} select 1, 'a1', 10, 1000")
    select = f"select id, name, price, ts from {table_name}"
    assert answer(session, select) == [(1, "a1", 10.0, 1000)]
    session.sql(f"update {table_name} set PRICE = 20 where ID = 1")
    assert answer(session, select) == [(1, "a1", 20.0, 1000)]
    session.sql(f"update {table_name} set PRICE = PRICE * 2 where ID = 1")
    assert answer(session, select) == [(1, "a1", 40.0, 1000)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_update_then_clustering(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test Update Table with Clustering: a partition column named ``partition`` (a keyword), then
    ``run_clustering`` over every partition. Hudi's test schedules the plan through its Scala write client;
    here ``run_clustering`` schedules and executes it, and returns Hudi's row shape
    (instant, input groups, state, involved partitions)."""
    create(session, table_name, tmp_path, "id int, name string, price double, ts long, partition long",
           f"type = '{table_type}', primaryKey = 'id', preCombineField = 'ts'", "partitioned by (partition)")
    for i in (1, 2, 3):
        session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, {999 + i}, {999 + i})")
    session.sql(f"update {table_name} set price = 20 where id > 1")
    assert answer(session, f"select id, name, price, ts from {table_name} where id > 1") == [
        (2, "a2", 20.0, 1001), (3, "a3", 20.0, 1002)]
    session.sql(f"update {table_name} set price = price * 2 where id = 2")
    assert answer(session, f"select id, name, price, ts from {table_name} where id = 2") == [(2, "a2", 40.0, 1001)]
    result = session.sql(f"call run_clustering(path => '{tmp_path / table_name}', order => 'partition', "
                         f"show_involved_partition => true)").collect()
    assert len(result) == 1
    assert tuple(result[0])[1:3] == (3, "COMPLETED")
    assert sorted(str(result[0][3]).split(",")) == ["partition=1000", "partition=1001", "partition=1002"]
    assert answer(session, f"select id, price from {table_name}") == [(1, 10.0), (2, 40.0), (3, 20.0)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_delete_table(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test Delete Table; Test Delete Table with op upsert (the table property
    ``hoodie.datasource.write.operation = 'upsert'`` does not turn DELETE into an upsert)."""
    create(session, table_name, tmp_path, "id int, name string, price double, ts long",
           f"type = '{table_type}', primaryKey = 'id', preCombineField = 'ts', "
           "hoodie.datasource.write.operation = 'upsert'")
    session.sql(f"insert into {table_name} select 1, 'a1', 10, 1000")
    assert answer(session, f"select id, name, price, ts from {table_name}") == [(1, "a1", 10.0, 1000)]
    session.sql(f"delete from {table_name} where id = 1")
    assert answer(session, f"select count(1) from {table_name}") == [(0,)]
    session.sql(f"insert into {table_name} select 2, 'a2', 10, 1000")
    session.sql(f"delete from {table_name} where id = 1")
    assert answer(session, f"select id, name, price, ts from {table_name}") == [(2, "a2", 10.0, 1000)]
    session.sql(f"delete from {table_name}")
    assert answer(session, f"select count(1) from {table_name}") == [(0,)]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_delete_from_partitioned_table_without_primary_key(session: Session, table_name: str, tmp_path: Path,
                                                           table_type: str) -> None:
    """Test Delete From Partitioned Table Without Primary Key (precombine on a double, partitioned by ts)."""
    create(session, table_name, tmp_path, "id int, name string, price double, ts long",
           f"type = '{table_type}', preCombineField = 'price'", "partitioned by (ts)")
    session.sql(f"""insert into {table_name} values
        (1, 'a1', cast(10.0 as double), 1000), (2, 'a2', cast(20.0 as double), 1000),
        (3, 'a2', cast(30.0 as double), 1000)""")
    select = f"select id, name, price, ts from {table_name}"
    assert answer(session, select) == [(1, "a1", 10.0, 1000), (2, "a2", 20.0, 1000), (3, "a2", 30.0, 1000)]
    session.sql(f"delete from {table_name} where id = 1")
    assert answer(session, select) == [(2, "a2", 20.0, 1000), (3, "a2", 30.0, 1000)]


@pytest.mark.parametrize("urlencode", [False, True])
def test_delete_partition_of_single_partition_table(session: Session, table_name: str, tmp_path: Path,
                                                     urlencode: bool) -> None:
    """Test Delete single-partition table' partitions: partition values holding ``/``, with and without
    ``hoodie.datasource.write.partitionpath.urlencode``. Hudi's test writes the table with its Scala data
    source writer (``df.write.format("hudi")``, which this project's ``hudi`` data source does not offer: it
    reads only) and registers it with ``create table ... using hudi location``; here the same table is
    written with SQL and the same options."""
    create(session, table_name, tmp_path, "id int, name string, ts string, dt string",
           "type = 'mor', primaryKey = 'id', preCombineField = 'ts', "
           f"hoodie.datasource.write.partitionpath.urlencode = '{str(urlencode).lower()}'", "partitioned by (dt)")
    session.sql(f"insert into {table_name} values (1, 'z3', 'v1', '2021/10/01'), (2, 'l4', 'v1', '2021/10/02')")
    session.sql(f"delete from {table_name} where dt = '2021/10/01'")
    assert answer(session, f"select dt from {table_name}") == [("2021/10/02",)]
