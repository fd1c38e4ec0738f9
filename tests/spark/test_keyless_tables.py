"""Tables without a primary key (Hudi 0.14 auto-generated record keys; issue 12, item 4): CREATE, CTAS,
INSERT generate ``<instant>_<partition id>_<row id>`` keys; UPDATE, DELETE and MERGE locate rows by the
stored ``_hoodie_record_key``; hudi-rs reads every state.

Behaviours from Hudi's suites: TestCreateTable / TestInsertTable (create and insert without primaryKey,
duplicates kept, hoodie.properties without record key fields), TestMergeIntoTableWithNonRecordKeyField
(MERGE on a non-key column of a keyless table), TestUpdateTable / TestDeleteTable (update and delete on
keyless tables), TestAutoGenerationOfRecordKeys (key shape, refused options).
"""

from __future__ import annotations

import re

import pytest

from engine.errors import ConfigError
from engine.table import Table
from sqlext.errors import SqlAnalysisError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

AUTO_KEY = re.compile(r"^\d{17}_\d+_\d+$")


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def location(session: Session, table: str) -> str:
    entry = session.catalog.lookup_name(table)
    assert entry is not None
    return entry.location


def oracle(session: Session, table: str, *columns: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r[c] for c in columns) for r in hudi_rs_rows(location(session, table)))


@pytest.mark.parametrize("kind", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
def test_keyless_table_insert_update_delete_merge(session: Session, table_name: str, kind: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, dt STRING) USING hudi "
                f"PARTITIONED BY (dt) TBLPROPERTIES (type = '{kind}')")
    props = Table.load(location(session, table_name)).config
    assert props.raw_value("hoodie.table.recordkey.fields") is None
    assert props.raw_value("hoodie.table.keygenerator.class") == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert props.raw_value("hoodie.populate.meta.fields") in (None, "true")

    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 'x'), (1, 'a', 10.0, 'x'), (2, 'b', 20.0, 'y')")
    session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 30.0, 'x')")
    keys = [r[0] for r in session.sql(f"SELECT _hoodie_record_key FROM {table_name}").collect()]
    assert len(keys) == 4 and len(set(keys)) == 4 and all(AUTO_KEY.match(k) for k in keys)
    commit_times = {r[0] for r in session.sql(f"SELECT _hoodie_commit_time FROM {table_name}").collect()}
    assert {k.split("_")[0] for k in keys} == commit_times
    assert rows(session, f"SELECT id, name FROM {table_name}") == [(1, "a"), (1, "a"), (2, "b"), (3, "c")]

    session.sql(f"UPDATE {table_name} SET price = price + 1 WHERE id = 1")
    session.sql(f"DELETE FROM {table_name} WHERE id = 2")
    expected = [(1, "a", 11.0, "x"), (1, "a", 11.0, "x"), (3, "c", 30.0, "x")]
    assert rows(session, f"SELECT id, name, price, dt FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "dt") == expected
    assert sorted(r[0] for r in session.sql(f"SELECT _hoodie_record_key FROM {table_name}").collect()) == \
        sorted(k for k in keys if k in {r["_hoodie_record_key"] for r in hudi_rs_rows(location(session, table_name))})

    # MERGE joins on the whole ON condition (any column); new rows get generated keys
    session.sql(f"MERGE INTO {table_name} t USING (SELECT * FROM VALUES ('c', 33.0, 'x'), ('n', 5.0, 'y') "
                "AS v(name, price, dt)) s ON t.name = s.name AND t.dt = s.dt "
                "WHEN MATCHED THEN UPDATE SET price = s.price "
                "WHEN NOT MATCHED THEN INSERT (id, name, price, dt) VALUES (9, s.name, s.price, s.dt)")
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 11.0 AS price) s ON t.price = s.price "
                "WHEN MATCHED AND t.id = 1 THEN DELETE")
    expected = [(3, "c", 33.0, "x"), (9, "n", 5.0, "y")]
    assert rows(session, f"SELECT id, name, price, dt FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "dt") == expected
    new_key = rows(session, f"SELECT _hoodie_record_key FROM {table_name} WHERE id = 9")[0][0]
    assert isinstance(new_key, str) and AUTO_KEY.match(new_key)


def test_keyless_ctas_and_upsert_setting(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} USING hudi AS SELECT * FROM VALUES (1, 'a'), (1, 'a'), (2, 'b') "
                "AS v(id, name)")
    props = Table.load(location(session, table_name)).config
    assert props.raw_value("hoodie.table.recordkey.fields") is None
    assert props.raw_value("hoodie.table.keygenerator.class") == "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    # an upsert with generated keys can only insert
    session.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'b')")
    finally:
        session.sql("RESET hoodie.spark.sql.insert.into.operation")
    expected = [(1, "a"), (1, "a"), (2, "b"), (2, "b")]
    assert rows(session, f"SELECT id, name FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name") == expected
    keys = [r[0] for r in session.sql(f"SELECT _hoodie_record_key FROM {table_name}").collect()]
    assert len(set(keys)) == 4 and all(AUTO_KEY.match(k) for k in keys)


def test_keyless_table_refuses_what_hudi_refuses(session: Session, table_name: str) -> None:
    with pytest.raises(SqlAnalysisError, match="Disabling hoodie.populate.meta.fields is not supported with auto"):
        session.sql(f"CREATE TABLE {table_name} (id INT, name STRING) USING hudi "
                    "TBLPROPERTIES ('hoodie.populate.meta.fields' = 'false')")
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING) USING hudi")
    session.sql("SET hoodie.combine.before.insert = true")
    try:
        with pytest.raises(ConfigError, match="Enabling hoodie.combine.before.insert is not supported with auto"):
            session.sql(f"INSERT INTO {table_name} VALUES (1, 'a')")
    finally:
        session.sql("RESET hoodie.combine.before.insert")
    assert rows(session, f"SELECT id FROM {table_name}") == []
