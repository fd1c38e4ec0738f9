"""ALTER TABLE column changes on Hudi tables, as a Hudi 0.14 user types them (Hudi's TestAlterTable,
TestSpark3DDL and TestTimeTravelTable's schema-evolution case): with ``hoodie.schema.on.read.enable=true``
columns are added anywhere, renamed, dropped and widened, files written before are read by column id and
time travel reads a commit with the columns it had; without it Hudi's own refusals."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from sqlext.errors import SqlAnalysisError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


@pytest.fixture
def schema_on_read(session: Session) -> Iterator[None]:
    session.sql("SET hoodie.schema.on.read.enable=true")
    yield
    session.sql("RESET hoodie.schema.on.read.enable")


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    df = session.sql(sql)
    return [tuple(r) for r in df.drop(*[c for c in META if c in df.columns]).collect()]


def location(session: Session, name: str) -> str:
    found = session.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").collect()[0][1]
    return str(found).removeprefix("file:")


def last_commit(session: Session, name: str) -> str:
    return str(session.sql(f"SELECT max(_hoodie_commit_time) FROM {name}").collect()[0][0])


@pytest.mark.parametrize("table_type", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_time_travel_reads_each_commit_with_its_columns(session: Session, schema_on_read: None, table_name: str,
                                                         table_type: str) -> None:
    """Hudi TestTimeTravelTable 'Test Time Travel With Schema Evolution'."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts LONG) USING hudi "
                f"TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000)")
    first = last_commit(session, table_name)
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (company STRING)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 11, 1100, 'hudi')")
    second = last_commit(session, table_name)
    session.sql(f"ALTER TABLE {table_name} DROP COLUMN price")

    assert rows(session, f"SELECT * FROM {table_name} TIMESTAMP AS OF {first} ORDER BY id") == [(1, "a1", 10.0, 1000)]
    assert rows(session, f"SELECT * FROM {table_name} TIMESTAMP AS OF {second} ORDER BY id") == [
        (1, "a1", 10.0, 1000, None), (2, "a2", 11.0, 1100, "hudi")]
    assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == [
        (1, "a1", 1000, None), (2, "a2", 1100, "hudi")]


@pytest.mark.parametrize("table_type", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
def test_renamed_and_widened_columns_keep_their_values_through_updates(
        session: Session, schema_on_read: None, table_name: str, table_type: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, qty INT, ts LONG, dt STRING) USING hudi "
                f"PARTITIONED BY (dt) "
                f"TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 5, 1000, 'd1'), (2, 'a2', 6, 1000, 'd2')")
    session.sql(f"ALTER TABLE {table_name} RENAME COLUMN name TO full_name")
    session.sql(f"ALTER TABLE {table_name} ALTER COLUMN qty TYPE BIGINT")
    assert [f.name for f in session.sql(f"SELECT * FROM {table_name}").schema.fields][5:] == [
        "id", "full_name", "qty", "ts", "dt"]
    assert dict((f.name, f.dataType.simpleString()) for f in session.sql(
        f"SELECT * FROM {table_name}").schema.fields)["qty"] == "bigint"
    assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == [
        (1, "a1", 5, 1000, "d1"), (2, "a2", 6, 1000, "d2")]
    # an update rewrites (COW) or logs over (MOR) a file written under the old names
    session.sql(f"UPDATE {table_name} SET full_name = 'x1', ts = 2000 WHERE id = 1")
    session.sql(f"INSERT INTO {table_name} VALUES (3, 'a3', 7000000000, 1000, 'd1')")
    expected = [(1, "x1", 5, 2000, "d1"), (2, "a2", 6, 1000, "d2"), (3, "a3", 7000000000, 1000, "d1")]
    assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == expected
    assert rows(session, f"SELECT id, full_name FROM {table_name} WHERE dt = 'd1' AND full_name = 'x1'") == [(1, "x1")]
    if table_type == "mor":
        session.sql(f"CALL run_compaction(op => 'scheduleAndExecute', table => '{table_name}')")
        assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == expected


def test_a_dropped_column_added_again_is_a_new_column(session: Session, schema_on_read: None,
                                                      table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, price DOUBLE, ts LONG) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 10, 1000)")
    session.sql(f"ALTER TABLE {table_name} DROP COLUMN price")
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (price DOUBLE)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 1000, 20)")
    assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == [(1, 1000, None), (2, 1000, 20.0)]


def test_add_columns_first_and_after_and_nested(session: Session, schema_on_read: None, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, info STRUCT<a: INT>, ts LONG) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, named_struct('a', 1), 1000)")
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (c0 STRING FIRST, c1 STRING AFTER id, info.b STRING)")
    schema = session.sql(f"SELECT * FROM {table_name}").schema
    assert schema.fieldNames()[5:] == ["c0", "id", "c1", "info", "ts"]
    assert schema["info"].dataType.simpleString() == "struct<a:int,b:string>"
    session.sql(f"ALTER TABLE {table_name} RENAME COLUMN info.a TO a2")
    session.sql(f"INSERT INTO {table_name} VALUES ('z', 2, 'y', named_struct('a2', 5, 'b', 'q'), 1000)")
    assert rows(session, f"SELECT id, info.a2, info.b, c0 FROM {table_name} ORDER BY id") == [
        (1, 1, None, None), (2, 5, "q", "z")]


def test_history_files_and_commit_metadata_as_hudi_writes_them(session: Session, schema_on_read: None,
                                                               table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts LONG) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    session.sql(f"ALTER TABLE {table_name} RENAME COLUMN name TO nm")
    base = location(session, table_name)
    commits = sorted(f for f in os.listdir(f"{base}/.hoodie") if f.endswith(".commit"))
    alter = commits[-1].split(".")[0]
    assert sorted(os.listdir(f"{base}/.hoodie/.schema")) == [
        f"{alter}.schemacommit", f"{alter}.schemacommit.inflight", f"{alter}.schemacommit.requested"]
    with open(f"{base}/.hoodie/{commits[-1]}") as handle:
        metadata = json.load(handle)
    assert metadata["operationType"] == "ALTER_SCHEMA"
    assert metadata["partitionToWriteStats"] == {}
    latest = json.loads(metadata["extraMetadata"]["latest_schema"])
    assert list(latest) == ["max_column_id", "version_id", "type", "fields"]
    assert latest["version_id"] == int(alter) and latest["max_column_id"] == 7
    assert [(f["id"], f["name"], f["type"]) for f in latest["fields"]][5:] == [
        (5, "id", "int"), (6, "nm", "string"), (7, "ts", "long")]
    assert [f["name"] for f in json.loads(metadata["extraMetadata"]["schema"])["fields"]] == ["id", "nm", "ts"]
    with open(f"{base}/.hoodie/.schema/{alter}.schemacommit") as handle:
        history = json.load(handle)["schemas"]
    assert [s["version_id"] for s in history] == [int(alter), 0]
    assert [f["name"] for f in history[1]["fields"]][5:] == ["id", "name", "ts"]
    # later writes carry the schema too, and the history file of their instant
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 1000)")
    insert = sorted(f for f in os.listdir(f"{base}/.hoodie") if f.endswith(".commit"))[-1]
    with open(f"{base}/.hoodie/{insert}") as handle:
        assert json.loads(json.load(handle)["extraMetadata"]["latest_schema"])["version_id"] == int(alter)
    assert f"{insert.split('.')[0]}.schemacommit" in os.listdir(f"{base}/.hoodie/.schema")


def test_refused_changes_leave_the_table_as_it_was(session: Session, schema_on_read: None, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts LONG, dt STRING) USING hudi "
                f"PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000, 'd1')")
    base = location(session, table_name)
    before = sorted(os.listdir(f"{base}/.hoodie"))
    for statement in (f"ALTER TABLE {table_name} RENAME COLUMN id TO id2",
                      f"ALTER TABLE {table_name} DROP COLUMN ts",
                      f"ALTER TABLE {table_name} DROP COLUMN dt"):
        with pytest.raises(SqlAnalysisError, match="cannot support apply changes for primaryKey/CombineKey/partitionKey"):
            session.sql(statement)
    with pytest.raises(SqlAnalysisError, match="cannot update origin type: string to a incompatibility type: int"):
        session.sql(f"ALTER TABLE {table_name} ALTER COLUMN name TYPE INT")
    with pytest.raises(SqlAnalysisError, match="cannot rename column: name to a existing name"):
        session.sql(f"ALTER TABLE {table_name} RENAME COLUMN name TO ts")
    with pytest.raises(SqlAnalysisError, match="cannot delete missing columns: nope"):
        session.sql(f"ALTER TABLE {table_name} DROP COLUMN nope")
    with pytest.raises(SqlAnalysisError, match="Renaming column is not supported in Hive-style ALTER COLUMN"):
        session.sql(f"ALTER TABLE {table_name} CHANGE COLUMN name name2 STRING")
    assert sorted(os.listdir(f"{base}/.hoodie")) == before
    assert rows(session, f"SELECT * FROM {table_name}") == [(1, "a1", 1000, "d1")]
    session.sql(f"ALTER TABLE {table_name} DROP COLUMN IF EXISTS nope")


def test_without_schema_on_read_hudi_refuses_renames_drops_and_retypes(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts LONG) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    with pytest.raises(SqlAnalysisError, match="RENAME COLUMN needs Hudi's schema on read: SET "
                                               "hoodie.schema.on.read.enable=true"):
        session.sql(f"ALTER TABLE {table_name} RENAME COLUMN name TO nm")
    with pytest.raises(SqlAnalysisError, match="DROP COLUMN needs Hudi's schema on read"):
        session.sql(f"ALTER TABLE {table_name} DROP COLUMN name")
    with pytest.raises(SqlAnalysisError, match="ALTER TABLE CHANGE COLUMN is not supported for changing column 'id' "
                                               "with type 'IntegerType' to 'id' with type 'LongType'"):
        session.sql(f"ALTER TABLE {table_name} ALTER COLUMN id TYPE BIGINT")
    with pytest.raises(SqlAnalysisError, match="Can't find column `nope` given table data columns"):
        session.sql(f"ALTER TABLE {table_name} CHANGE COLUMN nope nope STRING")
    session.sql(f"ALTER TABLE {table_name} ALTER COLUMN name COMMENT 'the name'")
    session.sql(f"ALTER TABLE {table_name} CHANGE COLUMN ts ts BIGINT COMMENT 'event time'")
    described = {r[0]: r[2] for r in session.sql(f"DESCRIBE {table_name}").collect()}
    assert described["name"] == "the name" and described["ts"] == "event time"
    assert not os.path.exists(f"{location(session, table_name)}/.hoodie/.schema")
    assert rows(session, f"SELECT * FROM {table_name}") == [(1, "a1", 1000)]


def test_time_travel_before_add_columns_without_schema_on_read(session: Session, table_name: str) -> None:
    """Hudi reads a commit with the schema of that commit (TableSchemaResolver.getTableAvroSchema(instant))."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts LONG) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    first = last_commit(session, table_name)
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (price DOUBLE COMMENT 'in euro')")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 1000, 2.5)")
    assert rows(session, f"SELECT * FROM {table_name} VERSION AS OF '{first}'") == [(1, "a1", 1000)]
    assert rows(session, f"SELECT * FROM {table_name} ORDER BY id") == [(1, "a1", 1000, None), (2, "a2", 1000, 2.5)]
    oracle = hudi_rs_rows(location(session, table_name))
    assert sorted((r["id"], r["price"]) for r in oracle) == [(1, None), (2, 2.5)]


def test_set_location_points_the_table_at_another_hudi_table(session: Session, table_name: str,
                                                             tmp_path: object) -> None:
    other = f"{table_name}_copy"
    session.sql(f"CREATE TABLE {table_name} (id INT, ts LONG) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"CREATE TABLE {other} (id INT, ts LONG) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {other} VALUES (7, 1)")
    session.sql(f"ALTER TABLE {table_name} SET LOCATION '{location(session, other)}'")
    assert rows(session, f"SELECT * FROM {table_name}") == [(7, 1)]
    with pytest.raises(SqlAnalysisError, match="no Hudi table there"):
        session.sql(f"ALTER TABLE {table_name} SET LOCATION '{tmp_path}'")


def test_rename_table_after_column_changes_keeps_history_and_time_travel(session: Session, schema_on_read: None,
                                                                         table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10.0, 1000)")
    first = last_commit(session, table_name)
    session.sql(f"ALTER TABLE {table_name} RENAME COLUMN name TO title")
    session.sql(f"ALTER TABLE {table_name} DROP COLUMN price")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 1001)")
    renamed = f"{table_name}_renamed"
    session.sql(f"ALTER TABLE {table_name} RENAME TO {renamed}")
    path = location(session, renamed)
    assert not os.path.exists(os.path.join(path, "..", table_name, ".hoodie"))
    with open(os.path.join(path, ".hoodie", "hoodie.properties")) as handle:
        assert f"hoodie.table.name={renamed}\n" in handle.read()
    assert sorted(rows(session, f"SELECT id, title, ts FROM {renamed}")) == [(1, "a1", 1000), (2, "a2", 1001)]
    assert rows(session, f"SELECT id, name, price FROM {renamed} TIMESTAMP AS OF '{first}'") == [(1, "a1", 10.0)]
    session.sql(f"UPDATE {renamed} SET title = 'b1' WHERE id = 1")
    assert sorted((r["id"], r["title"]) for r in hudi_rs_rows(path)) == [(1, "b1"), (2, "a2")]
