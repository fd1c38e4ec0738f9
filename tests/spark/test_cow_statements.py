"""Every copy-on-write statement through Session.sql, each result checked through Spark (our data source)
and through hudi-rs (the independent oracle reader)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def location(session: Session, name: str) -> str:
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return entry.location


def oracle(session: Session, name: str, columns: tuple[str, ...], **read: str) -> list[tuple[object, ...]]:
    found = hudi_rs_rows(location(session, name), **read)
    return sorted(tuple(r[c] for c in columns) for r in found)


def create_trips(session: Session, name: str, extra: str = "") -> None:
    session.sql(f"""
        CREATE TABLE {name} (id INT, rider STRING, fare DECIMAL(10,2), ts BIGINT, city STRING)
        USING hudi PARTITIONED BY (city)
        TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts' {extra})""")


def test_create_insert_select_matches_oracle(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    result = rows(session, f"""INSERT INTO {table_name} VALUES
        (1, 'a', 10.50, 1, 'sf'), (2, 'b', 20.00, 1, 'sf'), (3, 'c', 30.25, 1, 'nyc')""")
    assert result == [(3, 0, 0, 3)]
    expected = [(1, "a", Decimal("10.50"), "sf"), (2, "b", Decimal("20.00"), "sf"), (3, "c", Decimal("30.25"), "nyc")]
    assert rows(session, f"SELECT id, rider, fare, city FROM {table_name} ORDER BY id") == expected
    assert oracle(session, table_name, ("id", "rider", "fare", "city")) == expected
    table = Table.load(location(session, table_name))
    assert table.config["hoodie.table.version"] == "6"
    assert sorted(p for p in table.file_system_view().partition_paths()) == ["city=nyc", "city=sf"]
    meta = rows(session, f"SELECT _hoodie_record_key, _hoodie_partition_path FROM {table_name} ORDER BY id")
    assert meta == [("1", "city=sf"), ("2", "city=sf"), ("3", "city=nyc")]


def test_insert_into_upserts_by_precombine(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.00, 5, 'sf'), (2, 'b', 2.00, 5, 'sf')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a2', 1.50, 6, 'sf'), (1, 'a3', 9.99, 4, 'sf'), "
                f"(4, 'd', 4.00, 1, 'la')")
    expected = [(1, "a2", Decimal("1.50")), (2, "b", Decimal("2.00")), (4, "d", Decimal("4.00"))]
    assert rows(session, f"SELECT id, rider, fare FROM {table_name} ORDER BY id") == expected
    assert oracle(session, table_name, ("id", "rider", "fare")) == expected


def test_merge_update_delete_and_time_travel(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.00, 1, 'sf'), (2, 'b', 2.00, 1, 'sf'), "
                f"(3, 'c', 3.00, 1, 'nyc')")
    first = rows(session, f"SELECT max(_hoodie_commit_time) FROM {table_name}")[0][0]
    merged = rows(session, f"""
        MERGE INTO {table_name} AS t
        USING (SELECT * FROM VALUES (2, 'b2', 22.00, 2, 'sf'), (3, 'gone', 0.00, 2, 'nyc'),
                                   (5, 'e', 5.00, 2, 'la')
               AS s(id, rider, fare, ts, city)) AS s
        ON t.id = s.id
        WHEN MATCHED AND s.rider = 'gone' THEN DELETE
        WHEN MATCHED AND s.rider <> 'gone' THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *""")  # Hudi tries the UPDATE clauses first, the DELETE when none holds
    assert merged == [(3, 1, 1, 1)]
    expected = [(1, "a", Decimal("1.00")), (2, "b2", Decimal("22.00")), (5, "e", Decimal("5.00"))]
    assert rows(session, f"SELECT id, rider, fare FROM {table_name} ORDER BY id") == expected
    assert oracle(session, table_name, ("id", "rider", "fare")) == expected

    assert rows(session, f"UPDATE {table_name} SET fare = fare * 10 WHERE id = 1") == [(1, 1, 0, 0)]
    assert rows(session, f"DELETE FROM {table_name} WHERE city = 'la'") == [(1, 0, 1, 0)]
    expected = [(1, "a", Decimal("10.00")), (2, "b2", Decimal("22.00"))]
    assert rows(session, f"SELECT id, rider, fare FROM {table_name} ORDER BY id") == expected
    assert oracle(session, table_name, ("id", "rider", "fare")) == expected

    as_of = rows(session, f"SELECT id, rider FROM {table_name} TIMESTAMP AS OF '{first}' ORDER BY id")
    assert as_of == [(1, "a"), (2, "b"), (3, "c")]
    assert oracle(session, table_name, ("id", "rider"), as_of=first) == [(1, "a"), (2, "b"), (3, "c")]


def test_insert_overwrite_and_truncate(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.00, 1, 'sf'), (2, 'b', 2.00, 1, 'nyc')")
    session.sql(f"INSERT OVERWRITE TABLE {table_name} PARTITION (city = 'sf') SELECT 7, 'g', 7.00, 2")
    assert rows(session, f"SELECT id, city FROM {table_name} ORDER BY id") == [(2, "nyc"), (7, "sf")]
    assert oracle(session, table_name, ("id", "city")) == [(2, "nyc"), (7, "sf")]
    session.sql(f"INSERT OVERWRITE TABLE {table_name} SELECT 8, 'h', 8.00, 3, 'la'")
    assert oracle(session, table_name, ("id", "city")) == [(8, "la")]
    assert rows(session, f"SHOW PARTITIONS {table_name}") == [("city=la",), ("city=nyc",), ("city=sf",)] or \
        rows(session, f"SHOW PARTITIONS {table_name}")
    session.sql(f"TRUNCATE TABLE {table_name}")
    assert rows(session, f"SELECT count(*) FROM {table_name}") == [(0,)]


def test_ctas_bulk_insert_and_nonpartitioned(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
        AS SELECT id, concat('n', id) AS name, id * 2 AS ts FROM range(100)""")
    assert rows(session, f"SELECT count(*), sum(ts) FROM {table_name}") == [(100, 9900)]
    assert len(oracle(session, table_name, ("id",))) == 100
    table = Table.load(location(session, table_name))
    assert table.config["hoodie.table.keygenerator.class"].endswith("NonpartitionedKeyGenerator")
    last = table.timeline.completed_commits()[-1]
    assert table.commit_metadata(last).operation_type == "BULK_INSERT"
