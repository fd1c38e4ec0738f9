"""Hudi 0.15's own MERGE INTO suites, statement by statement, through ``session.sql``: the rows Hudi's
``checkAnswer`` expects (TestMergeIntoTable, TestMergeIntoTable2, TestMergeIntoTableWithNonRecordKeyField).

Left out: cases that need Hudi's Scala API (meta client, log block headers of TestPartialUpdateForMergeInto),
Spark 2 variants, record merge modes (``recordMergeMode``, Hudi 1.x), and the MOR refusal of target columns on
the right of an update (accepted here: the stored row is read, as on copy-on-write). Every table is
copy-on-write unless the case is about merge-on-read; each test keeps to one or two small tables.
"""

from __future__ import annotations

import pytest

from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def oracle(session: Session, table: str, *columns: str) -> list[tuple[object, ...]]:
    """The table's rows as hudi-rs reads them."""
    entry = session.catalog.lookup_name(table)
    assert entry is not None
    return sorted(tuple(r[c] for c in columns) for r in hudi_rs_rows(entry.location))


def test_merge_into_basic(session: Session, table_name: str) -> None:
    """TestMergeIntoTable "Test MergeInto Basic": an extra source column in a clause condition, a target column
    on the right of an update, a conditional insert, an UPDATE condition failing so the DELETE clause runs."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"MERGE INTO {t} USING (SELECT 1 AS id, 'a1' AS name, 10 AS price, 1000 AS ts, '1' AS flag) s0 "
                f"ON s0.id = {t}.id WHEN MATCHED AND flag = '1' THEN UPDATE SET "
                "id = s0.id, name = s0.name, price = s0.price, ts = s0.ts WHEN NOT MATCHED AND flag = '1' THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [(1, "a1", 10.0, 1000)]
    session.sql(f"MERGE INTO {t} USING (SELECT 1 AS id, 'a1' AS name, 10 AS price, 1001 AS ts) s0 "
                f"ON s0.id = {t}.id WHEN MATCHED THEN UPDATE SET "
                f"id = s0.id, name = s0.name, price = s0.price + {t}.price, ts = s0.ts WHEN NOT MATCHED THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [(1, "a1", 20.0, 1001)]
    session.sql(f"MERGE INTO {t} USING (SELECT * FROM (SELECT 1 AS id, 'a1' AS name, 10 AS price, 1002 AS ts "
                "UNION ALL SELECT 2 AS id, 'a2' AS name, 12 AS price, 1001 AS ts)) s0 "
                f"ON s0.id = {t}.id WHEN MATCHED THEN UPDATE SET "
                f"id = s0.id, name = s0.name, price = s0.price + {t}.price, ts = s0.ts "
                "WHEN NOT MATCHED AND s0.id % 2 = 0 THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [(1, "a1", 30.0, 1002), (2, "a2", 12.0, 1001)]
    session.sql(f"MERGE INTO {t} USING (SELECT 1 AS id, 'a1' AS name, 12 AS price, 1003 AS ts) s0 "
                f"ON s0.id = {t}.id WHEN MATCHED AND s0.id != 1 THEN UPDATE SET "
                "id = s0.id, name = s0.name, price = s0.price, ts = s0.ts "
                "WHEN MATCHED AND s0.id = 1 THEN DELETE WHEN NOT MATCHED THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [(2, "a2", 12.0, 1001)]
    # TestMergeIntoTable2 "String cast to Double": a string assigned to a double column is cast
    session.sql(f"MERGE INTO {t} t0 USING (SELECT 'a2' AS name, 2 AS id, '10.1' AS price, 1004 AS ts) s0 "
                "ON t0.id = s0.id WHEN MATCHED THEN UPDATE SET t0.price = s0.price, t0.ts = s0.ts "
                "WHEN NOT MATCHED THEN INSERT *")
    assert oracle(session, t, "id", "name", "price", "ts") == [(2, "a2", 10.1, 1004)]


def test_extra_on_equalities_play_no_part(session: Session, table_name: str) -> None:
    """TestMergeIntoTableWithNonRecordKeyField "Test Merge into extra cond": ``t.price = s.price`` in ON does not
    turn a stored key into an insert; the record key decides the match."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a1', 10, 100), (2, 'a2', 20, 200), (3, 'a3', 20, 100)")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW mhs_two AS SELECT * FROM VALUES (1, 'u1', 10.0, 999L), "
                "(3, 'u3', 30.0, 9999L), (4, 'u4', 40.0, 99999L) AS v(id, name, price, ts)")
    session.sql(f"MERGE INTO {t} AS oldData USING mhs_two ON oldData.id = mhs_two.id "
                "WHEN MATCHED AND oldData.price = mhs_two.price THEN UPDATE SET oldData.name = mhs_two.name")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [
        (1, "u1", 10.0, 100), (2, "a2", 20.0, 200), (3, "a3", 20.0, 100)]
    session.sql(f"MERGE INTO {t} AS oldData USING mhs_two ON oldData.id = mhs_two.id AND oldData.price = mhs_two.price "
                "WHEN MATCHED THEN UPDATE SET oldData.name = mhs_two.name WHEN NOT MATCHED THEN INSERT *")
    expected = [(1, "u1", 10.0, 100), (2, "a2", 20.0, 200), (3, "u3", 20.0, 100), (4, "u4", 40.0, 99999)]
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == expected
    assert oracle(session, t, "id", "name", "price", "ts") == expected


def test_duplicate_source_keys(session: Session, table_name: str) -> None:
    """TestMergeIntoTable2 "Test only insert for source table in dup key with / without preCombineField": with an
    ordering field the greatest value of a key wins; without one (and without an UPDATE clause) the MERGE is an
    insert and every source row is kept; a later upsert updates every stored copy of a key."""
    ordered, plain = table_name, f"{table_name}_plain"
    for name, props in ((ordered, ", preCombineField = 'ts'"), (plain, "")):
        session.sql(f"CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi "
                    f"PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id'{props})")
    two = ("(SELECT 1 AS id, 'a1' AS name, 10.1 AS price, 1000 AS ts, '2021-03-21' AS dt UNION ALL "
           "SELECT 1 AS id, 'a2' AS name, 10.2 AS price, 1002 AS ts, '2021-03-21' AS dt) AS s0")
    session.sql(f"MERGE INTO {ordered} AS t0 USING {two} ON t0.id = s0.id WHEN NOT MATCHED THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts, dt FROM {ordered}") == [(1, "a2", 10.2, 1002, "2021-03-21")]
    session.sql(f"MERGE INTO {ordered} AS t0 USING (SELECT 1 AS id, 'a1_new' AS name, 10.1 AS price, 1003 AS ts, "
                "'2021-03-21' AS dt UNION ALL SELECT 3, 'a3', 10.3, 1003, '2021-03-21' UNION ALL "
                "SELECT 3, 'a3', 10.3, 1003, '2021-03-21') AS s0 ON t0.id = s0.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    expected = [(1, "a1_new", 10.1, 1003, "2021-03-21"), (3, "a3", 10.3, 1003, "2021-03-21")]
    assert oracle(session, ordered, "id", "name", "price", "ts", "dt") == expected

    session.sql("SET hoodie.merge.allow.duplicate.on.inserts = true")
    try:
        session.sql(f"MERGE INTO {plain} AS t0 USING {two} ON t0.id = s0.id WHEN NOT MATCHED THEN INSERT *")
        assert rows(session, f"SELECT id, name, price, ts, dt FROM {plain}") == [
            (1, "a1", 10.1, 1000, "2021-03-21"), (1, "a2", 10.2, 1002, "2021-03-21")]
        session.sql(f"MERGE INTO {plain} AS t0 USING (SELECT 3 AS id, 'a3' AS name, 10.3 AS price, 1003 AS ts, "
                    "'2021-03-21' AS dt UNION ALL SELECT 1, 'a2', 10.4, 1004, '2021-03-21') AS s0 ON t0.id = s0.id "
                    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    finally:
        session.spark.conf.unset("hoodie.merge.allow.duplicate.on.inserts")
    expected = [(1, "a2", 10.4, 1004, "2021-03-21"), (1, "a2", 10.4, 1004, "2021-03-21"),
                (3, "a3", 10.3, 1003, "2021-03-21")]
    assert oracle(session, plain, "id", "name", "price", "ts", "dt") == expected
    session.sql(f"DROP TABLE {plain} PURGE")


@pytest.mark.parametrize("ordering", [True, False], ids=["precombine", "no-precombine"])
def test_keyless_table_several_source_rows_match_one(session: Session, table_name: str, ordering: bool) -> None:
    """TestMergeIntoTableWithNonRecordKeyField "Test pkless multiple source match": two source rows match one stored
    row; with an ordering field the source row with the greatest value wins (the update does not assign it, so
    the stored value stays); without one the choice is Hudi's "nondeterministic" one."""
    props = " TBLPROPERTIES (preCombineField = 'ts')" if ordering else ""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts INT) USING hudi{props}")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 100)")
    session.sql(f"MERGE INTO {table_name} USING (SELECT 1 AS id, 'a1' AS name, 20 AS price, 200 AS ts UNION ALL "
                f"SELECT 2 AS id, 'a1' AS name, 30 AS price, 100 AS ts) s0 ON {table_name}.name = s0.name "
                "WHEN MATCHED THEN UPDATE SET price = s0.price WHEN NOT MATCHED THEN INSERT *")
    got = rows(session, f"SELECT id, name, price, ts FROM {table_name}")
    assert got == oracle(session, table_name, "id", "name", "price", "ts")
    if ordering:
        assert got == [(1, "a1", 20.0, 100)]
    else:  # Hudi warns the choice is nondeterministic (its suite sees the last row, 30.0): one of them wins
        assert got in ([(1, "a1", 20.0, 100)], [(1, "a1", 30.0, 100)])


def test_ignored_records(session: Session, table_name: str) -> None:
    """TestMergeIntoTable "Test MergeInto with ignored record": rows no clause takes are left out; an update may
    keep a target column (``name = t0.name``); the record key comes from a source column of another name."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW mhs_src AS SELECT * FROM VALUES (1, 'a1', 10.0, 1000L), "
                "(2, 'a2', 11.0, 1000L) AS v(id, name, price, ts)")
    session.sql(f"MERGE INTO {t} AS t0 USING (SELECT * FROM mhs_src) AS s0 ON t0.id = s0.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED AND s0.name = 'a1' THEN INSERT *")
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == [(1, "a1", 10.0, 1000)]
    session.sql(f"INSERT INTO {t} SELECT 3, 'a3', 12, 1000")
    session.sql(f"MERGE INTO {t} AS t0 USING (SELECT * FROM (SELECT 1 AS s_id, 'a1' AS name, 20 AS price, 1001 AS ts "
                "UNION ALL SELECT 3 AS s_id, 'a3' AS name, 20 AS price, 1003 AS ts UNION ALL "
                "SELECT 4 AS s_id, 'a4' AS name, 10 AS price, 1004 AS ts)) s0 ON s0.s_id = t0.id "
                "WHEN MATCHED AND s0.ts = 1001 THEN UPDATE SET id = s0.s_id, name = t0.name, price = s0.price, "
                "ts = s0.ts")
    expected = [(1, "a1", 20.0, 1001), (3, "a3", 12.0, 1000)]
    assert rows(session, f"SELECT id, name, price, ts FROM {t}") == expected
    assert oracle(session, t, "id", "name", "price", "ts") == expected
