"""INSERT column resolution as Spark and Hudi do it (Hudi TestInsertTable, TestCreateTable): partition columns
move to the end of the table schema; INSERT maps by position, by column list or BY NAME; static, dynamic and
mixed partition specs; unaliased literals; Spark's error classes for arity and unknown columns."""

from __future__ import annotations

import json

import pytest

from engine.table import Table
from sqlext.errors import SqlAnalysisError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def location(session: Session, name: str) -> str:
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return entry.location


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_partition_columns_move_to_the_end(session: Session, table_name: str, table_type: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, dt STRING, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                f"PARTITIONED BY (dt) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', "
                "preCombineField = 'ts')")
    data_columns = [c for c in session.spark.table(table_name).columns if not c.startswith("_hoodie")]
    assert data_columns == ["id", "name", "price", "ts", "dt"]
    create_schema = json.loads(Table.load(location(session, table_name)).config.raw_value(
        "hoodie.table.create.schema"))
    assert [f["name"] for f in create_schema["fields"]] == ["id", "name", "price", "ts", "dt"]
    # positional: the partition value comes last, as the table's columns do
    session.sql(f"INSERT INTO {table_name} SELECT 1, 'a1', 10, 1000, '2021-01-05'")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 20, 1000, '2021-01-06')")
    # a column list in any order, and BY NAME
    session.sql(f"INSERT INTO {table_name} (dt, id, ts, name, price) VALUES ('2021-01-07', 3, 1000, 'a3', 30)")
    session.sql(f"INSERT INTO {table_name} BY NAME SELECT 1000 AS ts, 40.0 AS price, 'a4' AS name, 4 AS id, "
                "'2021-01-08' AS dt")
    # static and dynamic partition specs
    session.sql(f"INSERT INTO {table_name} PARTITION (dt = '2021-01-09') SELECT 5, 'a5', 50, 1000")
    session.sql(f"INSERT INTO {table_name} PARTITION (dt) SELECT 6, 'a6', 60, 1000, '2021-01-10'")
    expected = [(1, "a1", 10.0, 1000, "2021-01-05"), (2, "a2", 20.0, 1000, "2021-01-06"),
                (3, "a3", 30.0, 1000, "2021-01-07"), (4, "a4", 40.0, 1000, "2021-01-08"),
                (5, "a5", 50.0, 1000, "2021-01-09"), (6, "a6", 60.0, 1000, "2021-01-10")]
    assert rows(session, f"SELECT id, name, price, ts, dt FROM {table_name}") == expected
    oracle = sorted((r["id"], r["name"], r["price"], r["ts"], r["dt"])
                    for r in hudi_rs_rows(location(session, table_name)))
    assert oracle == expected


def test_multi_level_partitions_static_dynamic_and_mixed(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, dt STRING, hh STRING, name STRING, ts BIGINT) USING hudi "
                "PARTITIONED BY (dt, hh) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} PARTITION (dt = '2021-01-05', hh = '10') SELECT 1, 'a1', 1000")
    session.sql(f"INSERT INTO {table_name} PARTITION (dt = '2021-01-05', hh) SELECT 2, 'a2', 1000, '11'")
    session.sql(f"INSERT INTO {table_name} PARTITION (dt, hh) SELECT 3, 'a3', 1000, '2021-01-06', '12'")
    session.sql(f"INSERT INTO {table_name} SELECT 4, 'a4', 1000, '2021-01-06', '13'")
    assert rows(session, f"SELECT id, dt, hh FROM {table_name}") == [
        (1, "2021-01-05", "10"), (2, "2021-01-05", "11"), (3, "2021-01-06", "12"), (4, "2021-01-06", "13")]
    partitions = sorted(r["_hoodie_partition_path"] for r in hudi_rs_rows(location(session, table_name)))
    assert partitions == ["dt=2021-01-05/hh=10", "dt=2021-01-05/hh=11", "dt=2021-01-06/hh=12",
                          "dt=2021-01-06/hh=13"]


def test_unaliased_literals_and_repeated_names(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, qty INT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {table_name} SELECT 1, 'a1', 10, 10")
    session.sql(f"INSERT INTO {table_name} SELECT 2 AS x, 'a2' AS x, 20 AS x, 20 AS x")
    assert rows(session, f"SELECT * FROM {table_name}".replace("*", "id, name, price, qty")) == [
        (1, "a1", 10.0, 10), (2, "a2", 20.0, 20)]


def test_wrong_columns_fail_with_sparks_error_classes(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, dt STRING) USING hudi PARTITIONED BY (dt) "
                "TBLPROPERTIES (primaryKey = 'id')")
    cases = {
        f"INSERT INTO {table_name} SELECT 1, 'a'": "INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS",
        f"INSERT INTO {table_name} SELECT 1, 'a', 'x', 'y'": "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
        f"INSERT INTO {table_name} PARTITION (dt = 'x') SELECT 1, 'a', 'y'":
            "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
        f"INSERT INTO {table_name} (id, nope) SELECT 1, 'a'": "UNRESOLVED_COLUMN.*`nope`",
    }
    for sql, message in cases.items():
        with pytest.raises(SqlAnalysisError, match=message) as raised:
            session.sql(sql)
        assert table_name in str(raised.value)
    assert rows(session, f"SELECT id FROM {table_name}") == []
    assert not Table.load(location(session, table_name)).timeline.instants


def test_insert_modes_and_duplicate_policy(session: Session, table_name: str) -> None:
    """hoodie.sql.insert.mode (strict fails on a present key with Hudi's message), hoodie.datasource.insert.dup.policy
    (drop leaves present keys out, fail fails), bad values named; nothing written on failure."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000), (2, 'a2', 1000)")
    settings = {"hoodie.sql.insert.mode": "strict"}

    def run(sql: str, **conf: str) -> None:
        for key, value in conf.items():
            session.spark.conf.set(key, value)
        try:
            session.sql(sql)
        finally:
            for key in conf:
                session.spark.conf.unset(key)

    with pytest.raises(Exception, match="Duplicate key found for insert statement, key is: 1"):
        run(f"INSERT INTO {table_name} VALUES (1, 'x', 2000)", **settings)
    run(f"INSERT INTO {table_name} VALUES (3, 'a3', 1000)", **settings)
    with pytest.raises(Exception, match="Duplicate key found for insert statement, key is: 2"):
        run(f"INSERT INTO {table_name} VALUES (2, 'x', 2000)", **{"hoodie.datasource.insert.dup.policy": "fail"})
    run(f"INSERT INTO {table_name} VALUES (1, 'x', 2000), (4, 'a4', 1000)",
        **{"hoodie.datasource.insert.dup.policy": "drop"})
    expected = [(1, "a1"), (2, "a2"), (3, "a3"), (4, "a4")]
    assert rows(session, f"SELECT id, name FROM {table_name}") == expected
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location(session, table_name))) == expected
    for key, value in (("hoodie.sql.insert.mode", "bogus"), ("hoodie.datasource.insert.dup.policy", "bogus"),
                       ("hoodie.spark.sql.insert.into.operation", "bogus")):
        with pytest.raises(Exception, match=f"{key}='bogus'"):
            run(f"INSERT INTO {table_name} VALUES (5, 'a5', 1000)", **{key: value})
    with pytest.raises(SqlAnalysisError, match="Table with primaryKey can not use bulk insert in upsert mode"):
        run(f"INSERT INTO {table_name} VALUES (5, 'a5', 1000)", **{"hoodie.sql.bulk.insert.enable": "true"})
    run(f"INSERT INTO {table_name} VALUES (5, 'a5', 1000)",
        **{"hoodie.sql.bulk.insert.enable": "true", "hoodie.sql.insert.mode": "non-strict"})
    assert rows(session, f"SELECT id FROM {table_name}") == [(1,), (2,), (3,), (4,), (5,)]
