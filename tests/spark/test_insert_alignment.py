"""INSERT after ALTER TABLE and Hudi 0.15's duplicate rules for INSERT INTO (Hudi TestInsertTable: "Test Insert
Into with static partition", ingestAndValidateData / ingestAndValidateDataNoPrecombine /
ingestAndValidateDataDupPolicy, "Test Hudi should not record empty preCombineKey in hoodie.properties";
AlterHoodieTableAddColumnsCommand keeps partition columns last)."""

from __future__ import annotations

import datetime
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


def data_columns(session: Session, name: str) -> list[str]:
    return [c for c in session.spark.table(name).columns if not c.startswith("_hoodie")]


@pytest.mark.parametrize(("table_type", "levels"), [("cow", 1), ("mor", 1), ("cow", 2), ("mor", 2)])
def test_positional_insert_after_add_columns_follows_the_catalog_order(
        session: Session, table_name: str, table_type: str, levels: int) -> None:
    """ADD COLUMNS puts the new column before the partition columns (DESCRIBE, SELECT *, the committed schema);
    positional VALUES and SELECT * FROM t then land in the right columns and partitions."""
    t = table_name
    partitions = ["dt", "hh"][:levels]
    declared = ", ".join(f"{p} STRING" for p in partitions)
    session.sql(f"CREATE TABLE {t} (id INT, v STRING, ts BIGINT, {declared}) USING hudi "
                f"PARTITIONED BY ({', '.join(partitions)}) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', "
                "preCombineField = 'ts')")
    first = ["'d1'", "'h1'"][:levels]
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 1, {', '.join(first)})")
    session.sql(f"ALTER TABLE {t} ADD COLUMNS (extra STRING)")
    expected_columns = ["id", "v", "ts", "extra", *partitions]
    assert data_columns(session, t) == expected_columns
    described = [r[0] for r in session.sql(f"DESCRIBE {t}").collect()]
    assert described[5:5 + len(expected_columns)] == expected_columns
    table = Table.load(location(session, t))
    committed = [f["name"] for f in json.loads(table.commit_metadata(table.timeline.completed_commits()[-1]).schema)[
        "fields"] if not f["name"].startswith("_hoodie")]
    assert committed == expected_columns
    second = ["'d2'", "'h2'"][:levels]
    session.sql(f"INSERT INTO {t} VALUES (2, 'b', 1, 'x-extra', {', '.join(second)})")
    session.sql(f"INSERT INTO {t} SELECT * FROM {t} WHERE id = 1")
    where = ["d1", "h1"][:levels], ["d2", "h2"][:levels]
    expected = [(1, "a", None, *where[0]), (2, "b", "x-extra", *where[1])]
    query = f"SELECT id, v, extra, {', '.join(partitions)} FROM {t}"
    assert rows(session, query) == expected
    oracle = hudi_rs_rows(location(session, t))
    assert sorted((r["id"], r["v"], r["extra"], *(r[p] for p in partitions)) for r in oracle) == expected
    paths = sorted({str(r["_hoodie_partition_path"]) for r in oracle})
    assert paths == sorted("/".join(f"{p}={v}" for p, v in zip(partitions, w, strict=True)) for w in where)


def test_static_partition_and_dynamic_inserts_after_add_columns(session: Session, table_name: str) -> None:
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"ALTER TABLE {t} ADD COLUMNS (price DOUBLE, note STRING)")
    session.sql(f"INSERT INTO {t} PARTITION (dt = '2021-01-05') SELECT 1, 'a1', 1000, 10, 'n1'")
    session.sql(f"INSERT INTO {t} PARTITION (dt) SELECT 2, 'a2', 1000, 20, 'n2', '2021-01-06'")
    session.sql(f"INSERT OVERWRITE {t} PARTITION (dt = '2021-01-07') VALUES (3, 'a3', 1000, 30, 'n3')")
    expected = [(1, "a1", 1000, 10.0, "n1", "2021-01-05"), (2, "a2", 1000, 20.0, "n2", "2021-01-06"),
                (3, "a3", 1000, 30.0, "n3", "2021-01-07")]
    assert rows(session, f"SELECT * FROM {t}".replace("*", "id, name, ts, price, note, dt")) == expected
    # arity errors name the columns in the catalog's order
    with pytest.raises(SqlAnalysisError) as raised:
        session.sql(f"INSERT INTO {t} VALUES (4, 'a4', 1000, '2021-01-08')")
    assert "Table columns: `id`, `name`, `ts`, `price`, `note`, `dt`." in str(raised.value)
    with pytest.raises(SqlAnalysisError) as raised:
        session.sql(f"INSERT INTO {t} PARTITION (dt = '2021-01-08') VALUES (4, 'a4', 1000, 40, 'n', 'x')")
    assert "Table columns: `id`, `name`, `ts`, `price`, `note`." in str(raised.value)
    # a value that cannot be cast: Hudi's message, both schemas, the table's in the catalog's order
    with pytest.raises(SqlAnalysisError) as raised:
        session.sql(f"INSERT INTO {t} PARTITION (dt = '2021-01-08') SELECT 4, 'a4', 1000, array(1), 'n'")
    assert str(raised.value).startswith(
        "Expected table's schema: [StructField(id,IntegerType,true), StructField(name,StringType,true), "
        "StructField(ts,LongType,true), StructField(price,DoubleType,true), StructField(note,StringType,true), "
        "StructField(dt,StringType,true)], query's output (including static partition values): [StructField(4,"
        "IntegerType,false), StructField(a4,StringType,false), StructField(1000,IntegerType,false), "
        "StructField(array(1),ArrayType(IntegerType,false),false), StructField(n,StringType,false), "
        "StructField(dt,StringType,true)]")


def test_query_aliases_naming_every_column_are_aligned_by_name(session: Session, table_name: str) -> None:
    """Hudi aligns a query whose output names are the table's columns by name, in whatever order (TestInsertTable
    "Test Insert Into with static partition"); other queries go by position."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, dt STRING, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {t} PARTITION (dt = '2021-01-05') SELECT 1 AS id, 'a1' AS name, 10 AS price, "
                "1000 AS ts")
    session.sql(f"INSERT INTO {t} PARTITION (dt = '2021-01-06') SELECT 20 AS price, 2000 AS ts, 2 AS id, "
                "'a2' AS name")
    session.sql(f"INSERT INTO {t} SELECT 3, 'a3', 30, 3000, '2021-01-07'")
    session.sql(f"INSERT INTO {t} SELECT 'a4' AS NAME, '2021-01-08' AS dt, 4 AS id, 4000 AS ts, 40 AS price")
    assert data_columns(session, t) == ["id", "name", "price", "ts", "dt"]
    assert rows(session, f"SELECT id, name, price, ts, dt FROM {t}") == [
        (1, "a1", 10.0, 1000, "2021-01-05"), (2, "a2", 20.0, 2000, "2021-01-06"),
        (3, "a3", 30.0, 3000, "2021-01-07"), (4, "a4", 40.0, 4000, "2021-01-08")]


def test_static_partition_values_are_cast_to_the_column_types(session: Session, table_name: str) -> None:
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, ts TIMESTAMP, d DATE, n INT) USING hudi "
                "PARTITIONED BY (ts, d, n) TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {t} PARTITION (ts = '2021-05-20 00:00:00', d = '2021-05-20 00:00:00', n = '7') "
                "SELECT 1, 'a1'")
    session.sql(f"INSERT INTO {t} PARTITION (ts = '2021-05-21 10:30:00', d = '2021-05-21', n) SELECT 2, 'a2', 8")
    assert rows(session, f"SELECT id, name, ts, d, n FROM {t}") == [
        (1, "a1", datetime.datetime(2021, 5, 20, 0, 0), datetime.date(2021, 5, 20), 7),
        (2, "a2", datetime.datetime(2021, 5, 21, 10, 30), datetime.date(2021, 5, 21), 8)]
    assert rows(session, f"SELECT id FROM {t} WHERE d = DATE '2021-05-20' AND n = 7") == [(1,)]
    session.sql(f"INSERT OVERWRITE {t} PARTITION (ts = '2021-05-20 00:00:00', d = '2021-05-20 00:00:00', n = 7) "
                "SELECT 3, 'a3'")
    expected = [(2, "a2", datetime.datetime(2021, 5, 21, 10, 30), datetime.date(2021, 5, 21), 8),
                (3, "a3", datetime.datetime(2021, 5, 20, 0, 0), datetime.date(2021, 5, 20), 7)]
    assert rows(session, f"SELECT id, name, ts, d, n FROM {t}") == expected
    assert sorted((r["id"], r["n"]) for r in hudi_rs_rows(location(session, t))) == [(2, 8), (3, 7)]


BATCH = "(1, 'a1_1', 10, '2021-07-18'), (2, 'a2', 20, '2021-07-18'), (2, 'a2_2', 30, '2021-07-18')"
ALL_FOUR = [(1, "a1"), (1, "a1_1"), (2, "a2"), (2, "a2_2")]

# (precombine field, session settings, rows after the second INSERT, operation of its commit)
DUPLICATE_CASES = {
    "default-upsert": ("name", {}, [(1, "a1_1"), (2, "a2_2")], "UPSERT"),
    "insert": ("name", {"hoodie.spark.sql.insert.into.operation": "insert"},
               [(1, "a1"), (1, "a1_1"), (2, "a2_2")], "INSERT"),
    "bulk_insert": ("name", {"hoodie.spark.sql.insert.into.operation": "bulk_insert"},
                    [(1, "a1"), (1, "a1_1"), (2, "a2_2")], "BULK_INSERT"),
    "insert-overrides-mode": ("name", {"hoodie.spark.sql.insert.into.operation": "insert",
                                       "hoodie.sql.insert.mode": "upsert"},
                              [(1, "a1"), (1, "a1_1"), (2, "a2_2")], "INSERT"),
    "no-precombine": (None, {}, ALL_FOUR, "INSERT"),
    "no-precombine-bulk": (None, {"hoodie.spark.sql.insert.into.operation": "bulk_insert"}, ALL_FOUR,
                           "BULK_INSERT"),
    "no-combine": ("name", {"hoodie.spark.sql.insert.into.operation": "insert",
                            "hoodie.combine.before.insert": "false"}, ALL_FOUR, "INSERT"),
    "drop": ("name", {"hoodie.spark.sql.insert.into.operation": "insert",
                      "hoodie.datasource.insert.dup.policy": "drop"}, [(1, "a1"), (2, "a2_2")], "INSERT"),
    "drop-turns-upsert-to-insert": ("name", {"hoodie.datasource.insert.dup.policy": "drop"},
                                    [(1, "a1"), (2, "a2_2")], "INSERT"),
    "non-strict": ("name", {"hoodie.sql.insert.mode": "non-strict"}, [(1, "a1"), (1, "a1_1"), (2, "a2_2")],
                   "INSERT"),
}


@pytest.mark.parametrize(("case", "table_type"), [(case, "cow") for case in DUPLICATE_CASES]
                         + [("default-upsert", "mor"), ("insert", "mor")])
def test_duplicate_keys_within_a_batch_and_against_stored_rows(session: Session, table_name: str, case: str,
                                                               table_type: str) -> None:
    """Hudi TestInsertTable.ingestAndValidateData: the rows each setting leaves after inserting (1, a1), then a
    batch repeating key 1 and holding key 2 twice."""
    precombine, settings, expected, operation = DUPLICATE_CASES[case]
    t = table_name
    props = f"type = '{table_type}', primaryKey = 'id'" + (f", preCombineField = '{precombine}'" if precombine
                                                           else "")
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, dt STRING) USING hudi PARTITIONED BY (dt) "
                f"TBLPROPERTIES ({props})")
    for key, value in settings.items():
        session.spark.conf.set(key, value)
    try:
        session.sql(f"INSERT INTO {t} VALUES (1, 'a1', 10, '2021-07-18')")
        session.sql(f"INSERT INTO {t} VALUES {BATCH}")
    finally:
        for key in settings:
            session.spark.conf.unset(key)
    assert rows(session, f"SELECT id, name FROM {t}") == expected
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location(session, t))) == expected
    table = Table.load(location(session, t))
    last = table.timeline.completed_commits()[-1]
    assert table.commit_metadata(last).operation_type == operation


@pytest.mark.parametrize("settings", [{"hoodie.datasource.insert.dup.policy": "fail"},
                                      {"hoodie.sql.insert.mode": "strict"}])
def test_fail_policy_and_strict_mode_refuse_a_stored_key(session: Session, table_name: str,
                                                         settings: dict[str, str]) -> None:
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, dt STRING) USING hudi PARTITIONED BY (dt) "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'name')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a1', 10, '2021-07-18')")
    for key, value in settings.items():
        session.spark.conf.set(key, value)
    try:
        with pytest.raises(Exception, match="Duplicate key found for insert statement, key is: 1"):
            session.sql(f"INSERT INTO {t} VALUES {BATCH}")
        # duplicates within the batch alone are combined, not refused
        session.sql(f"INSERT INTO {t} VALUES (3, 'a3', 30, '2021-07-18'), (3, 'a3_3', 30, '2021-07-18')")
    finally:
        for key in settings:
            session.spark.conf.unset(key)
    assert rows(session, f"SELECT id, name FROM {t}") == [(1, "a1"), (3, "a3_3")]


def test_drop_policy_with_bulk_insert_is_refused(session: Session, table_name: str) -> None:
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    settings = {"hoodie.spark.sql.insert.into.operation": "bulk_insert", "hoodie.datasource.insert.dup.policy": "drop"}
    for key, value in settings.items():
        session.spark.conf.set(key, value)
    try:
        with pytest.raises(SqlAnalysisError, match="Dropping duplicates with bulk_insert in row writer path is not "
                                                   "supported yet"):
            session.sql(f"INSERT INTO {t} VALUES (1, 'a1')")
    finally:
        for key in settings:
            session.spark.conf.unset(key)
    assert rows(session, f"SELECT id FROM {t}") == []


def test_empty_precombine_field_is_not_recorded(session: Session, table_name: str) -> None:
    """Hudi "Test Hudi should not record empty preCombineKey in hoodie.properties"."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.spark.conf.set("hoodie.datasource.write.operation", "insert")
    try:
        session.sql(f"INSERT INTO {t} SELECT 1, 'name1', 11")
        assert rows(session, f"SELECT id, name, price FROM {t}") == [(1, "name1", 11.0)]
        session.sql(f"INSERT OVERWRITE TABLE {t} SELECT 2, 'name2', 12")
        assert rows(session, f"SELECT id, name, price FROM {t}") == [(2, "name2", 12.0)]
        session.sql(f"INSERT INTO {t} SELECT 3, 'name3', 13")
    finally:
        session.spark.conf.unset("hoodie.datasource.write.operation")
    assert rows(session, f"SELECT id, name, price FROM {t}") == [(2, "name2", 12.0), (3, "name3", 13.0)]
    with open(f"{location(session, t)}/.hoodie/hoodie.properties", encoding="utf-8") as handle:
        properties = handle.read()
    assert "precombine" not in properties.lower()


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_positional_insert_after_schema_on_read_changes(session: Session, table_name: str, table_type: str) -> None:
    """With schema on read, ADD COLUMNS appends to the internal schema after the partition columns, but the catalog
    (DESCRIBE, SELECT *) keeps partition columns last, and positional INSERT follows the catalog through renames,
    drops and type changes."""
    t = table_name
    session.sql("SET hoodie.schema.on.read.enable=true")
    try:
        session.sql(f"CREATE TABLE {t} (id INT, v STRING, qty INT, ts BIGINT, dt STRING, hh INT) USING hudi "
                    f"PARTITIONED BY (dt, hh) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', "
                    "preCombineField = 'ts')")
        session.sql(f"INSERT INTO {t} VALUES (1, 'a', 5, 1, 'd1', 10)")
        session.sql(f"ALTER TABLE {t} ADD COLUMNS (extra STRING)")
        session.sql(f"ALTER TABLE {t} RENAME COLUMN v TO name")
        session.sql(f"ALTER TABLE {t} ALTER COLUMN qty TYPE BIGINT")
        assert data_columns(session, t) == ["id", "name", "qty", "ts", "extra", "dt", "hh"]
        session.sql(f"INSERT INTO {t} VALUES (2, 'b', 7000000000, 1, 'x2', 'd2', 20)")
        session.sql(f"ALTER TABLE {t} DROP COLUMN qty")
        assert data_columns(session, t) == ["id", "name", "ts", "extra", "dt", "hh"]
        session.sql(f"INSERT INTO {t} VALUES (3, 'c', 1, 'x3', 'd3', 30)")
        session.sql(f"INSERT INTO {t} SELECT * FROM {t} WHERE id = 1")
    finally:
        session.sql("RESET hoodie.schema.on.read.enable")
    expected = [(1, "a", None, "d1", 10), (2, "b", "x2", "d2", 20), (3, "c", "x3", "d3", 30)]
    assert rows(session, f"SELECT id, name, extra, dt, hh FROM {t}") == expected
    partitions = sorted({str(r["_hoodie_partition_path"]) for r in hudi_rs_rows(location(session, t))})
    assert partitions == ["dt=d1/hh=10", "dt=d2/hh=20", "dt=d3/hh=30"]
