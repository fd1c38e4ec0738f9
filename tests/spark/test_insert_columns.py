"""INSERT column resolution as Spark and Hudi do it (Hudi TestInsertTable, TestCreateTable): partition columns
move to the end of the table schema; INSERT maps by position, by column list or BY NAME; static, dynamic and
mixed partition specs; unaliased literals; Spark's error classes for arity and unknown columns."""

from __future__ import annotations

import json
import os

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


@pytest.mark.parametrize("table_type", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
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
        run(f"INSERT INTO {table_name} VALUES (5, 'a5', 1000)",
            **{"hoodie.sql.bulk.insert.enable": "true", "hoodie.sql.insert.mode": "upsert"})
    run(f"INSERT INTO {table_name} VALUES (5, 'a5', 1000)",
        **{"hoodie.sql.bulk.insert.enable": "true", "hoodie.sql.insert.mode": "non-strict"})
    assert rows(session, f"SELECT id FROM {table_name}") == [(1,), (2,), (3,), (4,), (5,)]


def test_inserts_into_a_small_file_keep_duplicates(session: Session, table_name: str) -> None:
    """The insert operation routes new rows into the small base file, and a key already stored there stays with the
    new row beside it (Hudi 0.14+, hoodie.merge.allow.duplicate.on.inserts=true, HoodieConcatHandle), even with the
    setting false: Hudi 0.15's HoodieSparkSqlWriter forces it true for an insert whose
    hoodie.datasource.insert.dup.policy is not fail (checked against Apache Hudi 0.15: five rows, one file)."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
                "'hoodie.spark.sql.insert.into.operation' = 'insert')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000), (2, 'a2', 1000)")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'b1', 1001)")
    assert rows(session, f"SELECT id, name FROM {table_name}") == [(1, "a1"), (1, "b1"), (2, "a2")]
    session.spark.conf.set("hoodie.merge.allow.duplicate.on.inserts", "false")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'c2', 1002), (3, 'a3', 1000)")
    finally:
        session.spark.conf.unset("hoodie.merge.allow.duplicate.on.inserts")
    expected = [(1, "a1"), (1, "b1"), (2, "a2"), (2, "c2"), (3, "a3")]
    assert rows(session, f"SELECT id, name FROM {table_name}") == expected
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location(session, table_name))) == expected
    files = {r[0] for r in session.sql(f"SELECT _hoodie_file_name FROM {table_name}").collect()}
    assert len(files) == 1


@pytest.mark.parametrize("table_type", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_nested_fields_as_primary_key_and_precombine_field(session: Session, table_name: str,
                                                           table_type: str) -> None:
    """primaryKey 'nestedcol.a1' and preCombineField 'nestedcol.a2.b2.c2': an INSERT's rows with one key keep the
    greatest ordering value (Hudi combines before insert when the table has both), in every insert operation;
    UPDATE and DELETE find rows by the nested key."""
    session.sql(f"""CREATE TABLE {table_name} (name STRING, price DOUBLE, ts BIGINT,
            nestedcol STRUCT<a1: STRING, a2: STRUCT<b1: STRING, b2: STRUCT<c1: STRING, c2: INT>>>) USING hudi
        OPTIONS (type = '{table_type}', primaryKey = 'nestedcol.a1', preCombineField = 'nestedcol.a2.b2.c2')""")
    values = ("('name_1', 10, 1000, struct('a', struct('b', struct('c', 999)))), "
              "('name_2', 20, 2000, struct('a', struct('b', struct('c', 333))))")
    query = f"SELECT _hoodie_record_key, name, price, nestedcol.a1, nestedcol.a2.b2.c2 FROM {table_name}"
    for operation in ("insert", "upsert"):
        session.spark.conf.set("hoodie.spark.sql.insert.into.operation", operation)
        try:
            session.sql(f"INSERT INTO {table_name} VALUES {values}")
        finally:
            session.spark.conf.unset("hoodie.spark.sql.insert.into.operation")
        assert rows(session, query) == [("a", "name_1", 10.0, "a", 999)]
    session.sql(f"UPDATE {table_name} SET price = 5 WHERE nestedcol.a1 = 'a'")
    assert rows(session, f"SELECT name, price FROM {table_name}")[0][1] == 5.0
    oracle = hudi_rs_rows(location(session, table_name))
    assert [(r["_hoodie_record_key"], r["price"]) for r in oracle] == [("a", 5.0)]
    session.sql(f"DELETE FROM {table_name} WHERE nestedcol.a1 = 'a'")
    assert rows(session, query) == [] and hudi_rs_rows(location(session, table_name)) == []


def _parquet_columns(base: str) -> set[str]:
    import pyarrow.parquet as pq

    names: set[str] = set()
    for root, _, files in os.walk(base):
        for file in files:
            if file.endswith(".parquet") and ".hoodie" not in root:
                names.update(pq.read_schema(os.path.join(root, file)).names)
    return names


@pytest.mark.parametrize("table_type", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_drop_partition_columns_keeps_them_out_of_files_and_reads_them_from_paths(
        session: Session, table_name: str, table_type: str) -> None:
    """hoodie.datasource.write.drop.partition.columns=true (Hudi DROP_PARTITION_COLUMNS): data files and commit
    schemas hold no partition columns; queries take them from the partition path, typed as declared; a write
    that asks otherwise than the table is refused."""
    key = "hoodie.datasource.write.drop.partition.columns"
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING, hh INT) USING hudi
        PARTITIONED BY (dt, hh) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts',
        '{key}' = 'true')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1, '2021-01-01', 10), (2, 'a2', 1, '2021-01-02', 11)")
    session.sql(f"UPDATE {table_name} SET name = 'b1', ts = 2 WHERE id = 1")
    session.sql(f"""MERGE INTO {table_name} t USING (SELECT 2 AS id, 'c2' AS name, 3 AS ts, '2021-01-02' AS dt,
        11 AS hh UNION ALL SELECT 3, 'c3', 3, '2021-01-03', 12) s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    expected = [(1, "b1", "2021-01-01", 10), (2, "c2", "2021-01-02", 11), (3, "c3", "2021-01-03", 12)]
    assert rows(session, f"SELECT id, name, dt, hh FROM {table_name}") == expected
    assert rows(session, f"SELECT id FROM {table_name} WHERE hh = 11 AND dt = '2021-01-02'") == [(2,)]
    base = location(session, table_name)
    table = Table.load(base)
    assert table.config.raw_value(key) == "true"
    last = table.timeline.completed_commits()[-1]
    stored = [f["name"] for f in json.loads(table.commit_metadata(last).schema)["fields"]]
    assert "dt" not in stored and "hh" not in stored and "name" in stored
    assert {"dt", "hh"}.isdisjoint(_parquet_columns(base)) and "name" in _parquet_columns(base)
    with pytest.raises(Exception, match="drop.partition.columns"):  # hudi-rs 0.x refuses such tables
        hudi_rs_rows(base)
    if table_type == "mor":
        session.sql(f"CALL run_compaction(op => 'scheduleAndExecute', table => '{table_name}')")
        assert rows(session, f"SELECT id, name, dt, hh FROM {table_name}") == expected
        assert {"dt", "hh"}.isdisjoint(_parquet_columns(base))
    session.spark.conf.set(key, "false")
    try:
        with pytest.raises(Exception, match=f"{key}=false conflicts with table"):
            session.sql(f"INSERT INTO {table_name} VALUES (4, 'a4', 1, '2021-01-04', 13)")
    finally:
        session.spark.conf.unset(key)


def test_values_that_do_not_cast_fail_before_any_instant(session: Session, table_name: str) -> None:
    """An INSERT whose values cannot be cast to the table's types fails with Spark's CAST_INVALID_INPUT and
    leaves nothing on the timeline (not even a rolled-back instant)."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    before = [i.timestamp for i in Table.load(location(session, table_name)).timeline.instants]
    for operation in ("upsert", "insert"):
        session.spark.conf.set("hoodie.spark.sql.insert.into.operation", operation)
        try:
            with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
                session.sql(f"INSERT INTO {table_name} SELECT 2, 'a2', 'not a number'")
        finally:
            session.spark.conf.unset("hoodie.spark.sql.insert.into.operation")
    assert [i.timestamp for i in Table.load(location(session, table_name)).timeline.instants] == before
    assert rows(session, f"SELECT id, name FROM {table_name}") == [(1, "a1")]


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_overwrite_with_some_partition_values_in_static_and_dynamic_mode(session: Session, table_name: str,
                                                                        mode: str) -> None:
    """Hudi TestInsertTable "Test insert overwrite for multi partitioned table" (Hudi 0.15 deduceOverwriteConfig):
    in static mode PARTITION (dt = '2023-12-06', hh) replaces every stored dt=2023-12-06/hh=* partition, hh=01 the
    query does not write included; in dynamic mode only the partitions written."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, dt STRING, hh STRING) USING hudi "
                "PARTITIONED BY (dt, hh) TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {table_name} VALUES (0, 'a0', '2023-12-05', '00'), (1, 'a1', '2023-12-06', '00'), "
                "(2, 'a2', '2023-12-06', '01')")
    session.sql(f"SET hoodie.datasource.overwrite.mode = {mode}")
    try:
        session.sql(f"INSERT OVERWRITE TABLE {table_name} PARTITION (dt = '2023-12-06', hh) VALUES "
                    "(3, 'a3', '00'), (4, 'a4', '02')")
    finally:
        session.sql("RESET hoodie.datasource.overwrite.mode")
    kept = [(2, "2023-12-06", "01")] if mode == "dynamic" else []
    assert rows(session, f"SELECT id, dt, hh FROM {table_name}") == sorted(
        [(0, "2023-12-05", "00"), (3, "2023-12-06", "00"), (4, "2023-12-06", "02"), *kept])
