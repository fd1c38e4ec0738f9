"""MERGE INTO semantics of Hudi 0.15's MergeIntoHoodieTableCommand + ExpressionPayload (issues 12 and 30), and
UPDATE's assignment rules; every change is read back with the hudi-rs oracle.

Behaviours from Hudi's dml suites: TestMergeIntoTable (source without alias, ordering on COW, partial updates
with casts, delete clause, validations), TestMergeIntoTableWithNonRecordKeyField (the record key decides a
match, extra ON equalities play no part), TestMergeIntoTable2 (clause conditions, partition change with a
global index), TestUpdateTable (record key / partition assignment refused). Beyond Hudi: WHEN NOT MATCHED BY
SOURCE. More of Hudi's suites, statement by statement: test_merge_hudi_suites.py.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import pyarrow.parquet as pq
import pytest

from sqlext.commands import dispatch
from sqlext.errors import SqlAnalysisError, SqlError
from sqlext.parser import parse_statement
from sqlext.parser.statements import MergeClause, MergeInto
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def oracle(session: Session, table: str, *columns: str) -> list[tuple[object, ...]]:
    """The table's rows as hudi-rs reads them."""
    entry = session.catalog.lookup_name(table)
    assert entry is not None
    return sorted(tuple(r[c] for c in columns) for r in hudi_rs_rows(entry.location))


def merge(session: Session, sql: str, *, fallback: str | None = None,
          clauses: Sequence[MergeClause] = (), **fields: object) -> None:
    """Run MERGE ``sql``; until the parser reads its syntax (NOT MATCHED BY SOURCE, source column aliases),
    run ``fallback`` parsed with ``clauses`` appended and ``fields`` replaced in the statement."""
    try:
        parse_statement(sql)
    except SqlError:
        assert fallback is not None, sql
        stmt = parse_statement(fallback)
        assert isinstance(stmt, MergeInto)
        stmt = dataclasses.replace(stmt, clauses=(*stmt.clauses, *clauses), **fields)  # type: ignore[arg-type]
        dispatch(session.context, stmt)
        return
    session.sql(sql)


def create(session: Session, name: str, kind: str, *, partitioned: bool = False, extra: str = "") -> None:
    part = ", dt STRING) USING hudi PARTITIONED BY (dt)" if partitioned else ") USING hudi"
    session.sql(f"CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT{part} "
                f"TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts'{extra})")


@pytest.mark.parametrize("kind", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
def test_the_record_key_decides_a_match(session: Session, table_name: str, kind: str) -> None:
    create(session, table_name, kind, partitioned=True)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1, 'x'), (2, 'b', 20.0, 1, 'x'), "
                "(3, 'c', 30.0, 1, 'x')")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW ms_src AS SELECT * FROM VALUES "
                "(1, 'a2', 11.0, 2L, 'y'), (2, 'b2', 22.0, 2L, 'x') AS v(id, name, price, ts, dt)")
    # id 1 is stored in x, the source says y: the (non-global) index looks it up in y only, so it is not
    # matched (and there is no INSERT clause); id 2 is matched in x (Hudi TestMergeIntoTable2 "create empty
    # partitions": no partition y appears)
    session.sql(f"MERGE INTO {table_name} t USING ms_src s ON t.id = s.id AND t.dt = s.dt "
                "WHEN MATCHED THEN UPDATE SET *")
    expected = [(1, "a", 10.0, "x"), (2, "b2", 22.0, "x"), (3, "c", 30.0, "x")]
    assert rows(session, f"SELECT id, name, price, dt FROM {table_name}") == expected
    assert rows(session, f"SELECT DISTINCT _hoodie_partition_path FROM {table_name}") == [("dt=x",)]
    # an equality on a non-key column plays no part: every stored key matches (Hudi decides by record key)
    session.sql(f"MERGE INTO {table_name} t USING (SELECT id, 'z' AS name, 3L AS ts FROM VALUES (2), (3) AS v(id)) s "
                "ON t.id = s.id AND t.name = 'c' WHEN MATCHED THEN UPDATE SET name = s.name")
    expected = [(1, "a", 10.0, "x"), (2, "z", 22.0, "x"), (3, "z", 30.0, "x")]
    assert rows(session, f"SELECT id, name, price, dt FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "dt") == expected


def test_source_named_by_its_table_name_and_key_from_a_source_expression(session: Session, table_name: str) -> None:
    create(session, table_name, "cow")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1), (2, 'b', 20.0, 1)")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW ms_named AS SELECT * FROM VALUES (1, 5.0, 2L), (7, 7.0, 2L) "
                "AS v(sid, price, ts)")
    session.sql(f"MERGE INTO {table_name} USING ms_named ON {table_name}.id = ms_named.sid "
                f"WHEN MATCHED THEN UPDATE SET price = ms_named.price, ts = ms_named.ts "
                f"WHEN NOT MATCHED THEN INSERT (id, name, price, ts) VALUES (ms_named.sid, 'new', "
                "ms_named.price, ms_named.ts)")
    expected = [(1, "a", 5.0, 2), (2, "b", 20.0, 1), (7, "new", 7.0, 2)]
    assert rows(session, f"SELECT id, name, price, ts FROM {table_name}") == expected
    # the key side must be a source column (or a cast of one), as Hudi requires
    with pytest.raises(SqlAnalysisError, match="Only simple conditions of the form `t.id = s.id` are allowed on "
                                               "the primary-key and partition path column. Found `t.id = s.k"):
        session.sql(f"MERGE INTO {table_name} t USING (SELECT 1 AS k, 3L AS ts) s ON t.id = s.k + 1 "
                    "WHEN MATCHED THEN UPDATE SET name = 'plus', ts = s.ts")
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 2L AS k, 3L AS ts) s ON t.id = CAST(s.k AS INT) "
                "WHEN MATCHED THEN UPDATE SET name = 'cast', ts = s.ts")
    assert oracle(session, table_name, "id", "name") == [(1, "a"), (2, "cast"), (7, "new")]


@pytest.mark.parametrize("kind", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_matched_rows_try_the_updates_before_the_delete(session: Session, table_name: str, kind: str) -> None:
    """Hudi's ExpressionPayload: a matched row takes the first UPDATE clause whose condition holds, and the
    DELETE clause only when none does, wherever the DELETE is written."""
    create(session, table_name, kind)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1), (2, 'b', 20.0, 1), (3, 'c', 30.0, 1)")
    src = ("(SELECT * FROM VALUES (1, 'd', 2L), (2, 'u', 2L), (4, 'i', 2L), (5, 'skip', 2L) "
           "AS v(id, flag, ts)) s")
    # the DELETE written first takes the rows no UPDATE clause takes
    session.sql(f"MERGE INTO {table_name} t USING {src} ON t.id = s.id "
                "WHEN MATCHED AND s.flag = 'd' THEN DELETE "
                "WHEN MATCHED AND s.flag <> 'd' THEN UPDATE SET name = s.flag, ts = s.ts "
                "WHEN NOT MATCHED AND s.flag = 'i' THEN INSERT (id, name, price, ts) VALUES (s.id, s.flag, 0, s.ts)")
    expected = [(2, "u"), (3, "c"), (4, "i")]
    assert rows(session, f"SELECT id, name FROM {table_name}") == expected
    # an unconditional UPDATE takes every matched row, even one the DELETE written before it would take
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 2 AS id, 'd' AS flag, 3L AS ts) s ON t.id = s.id "
                "WHEN MATCHED AND s.flag = 'd' THEN DELETE "
                "WHEN MATCHED THEN UPDATE SET name = 'updated', ts = s.ts")
    expected = [(2, "updated"), (3, "c"), (4, "i")]
    assert rows(session, f"SELECT id, name FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name") == expected


def test_ordering_on_copy_on_write(session: Session, table_name: str) -> None:
    create(session, table_name, "cow")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1000), (2, 'b', 20.0, 1000)")
    # an update with a smaller ordering value keeps the stored row; a greater one wins
    session.sql(f"MERGE INTO {table_name} t USING (SELECT * FROM VALUES (1, 'old', 5L), (2, 'new', 2000L) "
                "AS v(id, name, ts)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name, ts = s.ts")
    assert rows(session, f"SELECT id, name, ts FROM {table_name}") == [(1, "a", 1000), (2, "new", 2000)]
    # a matched DELETE deletes whatever the ordering value
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 1L AS ts) s ON t.id = s.id "
                "WHEN MATCHED THEN DELETE")
    assert rows(session, f"SELECT id FROM {table_name}") == [(2,)]
    assert oracle(session, table_name, "id", "name", "ts") == [(2, "new", 2000)]


@pytest.mark.parametrize("kind", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_a_key_stored_twice_gets_each_copys_own_update(session: Session, table_name: str, kind: str) -> None:
    """Without a preCombineField, INSERT keeps both rows of key 1. A MERGE that reads the target row meets the
    source row once per stored copy (Hudi 0.15's merge handle): the copy whose condition holds is updated from its
    own values, the other stays as stored (checked against Apache Hudi 0.15: [1, a, 11.0], [1, b, 2.0]). On
    merge-on-read the file group takes the new key 2, so its updates are merged into a new base file."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE) USING hudi "
                f"TBLPROPERTIES (type = '{kind}', primaryKey = 'id')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 1.0), (1, 'b', 2.0), (3, 'c', 3.0)")
    session.sql(f"MERGE INTO {t} t USING (SELECT 1 AS id, 10.0 AS price UNION ALL SELECT 2, 20.0) s ON t.id = s.id "
                "WHEN MATCHED AND t.name = 'a' THEN UPDATE SET price = s.price + t.price "
                "WHEN NOT MATCHED THEN INSERT (id, name, price) VALUES (s.id, 'new', s.price)")
    expected = [(1, "a", 11.0), (1, "b", 2.0), (2, "new", 20.0), (3, "c", 3.0)]
    assert rows(session, f"SELECT id, name, price FROM {t}") == expected
    assert oracle(session, t, "id", "name", "price") == expected
    if kind == "mor":  # (an update alone goes to a log file, whose record Hudi's readers apply to one copy)
        return
    session.sql(f"MERGE INTO {t} t USING (SELECT 1 AS id, 5.0 AS price) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET price = t.price * s.price")
    expected = [(1, "a", 55.0), (1, "b", 10.0), (2, "new", 20.0), (3, "c", 3.0)]
    assert rows(session, f"SELECT id, name, price FROM {t}") == expected


def test_without_ordering_field_or_update_clause_a_merge_is_an_insert(session: Session, table_name: str) -> None:
    """Hudi 0.15 writes a MERGE with no UPDATE clause into a table without preCombineField as an ``insert``
    (MergeIntoHoodieTableCommand): no record is tagged, so WHEN MATCHED ... DELETE deletes nothing and a source
    row whose key is stored is inserted again by WHEN NOT MATCHED (checked against Apache Hudi 0.15)."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 1.0), (4, 'b', 4.0)")
    session.sql(f"MERGE INTO {t} t USING (SELECT 4 AS id, 'z' AS nm) s ON t.id = s.id "
                "WHEN MATCHED AND t.name = 'b' THEN DELETE")
    assert rows(session, f"SELECT id, name, price FROM {t}") == [(1, "a", 1.0), (4, "b", 4.0)]
    session.sql(f"MERGE INTO {t} t USING (SELECT 1 AS id, 'x' AS name, 9.0 AS price) s ON t.id = s.id "
                "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *")
    expected = [(1, "a", 1.0), (1, "x", 9.0), (4, "b", 4.0)]
    assert rows(session, f"SELECT id, name, price FROM {t}") == expected
    assert oracle(session, t, "id", "name", "price") == expected


@pytest.mark.parametrize("kind", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_partial_update_keeps_other_columns_and_casts_values(session: Session, table_name: str, kind: str) -> None:
    create(session, table_name, kind, partitioned=True)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1, 'x'), (2, 'b', 20.0, 1, 'x')")
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 15 AS p, 2 AS ts) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET t.price = s.p, t.ts = s.ts "
                "WHEN NOT MATCHED THEN INSERT (id, ts, dt) VALUES (s.id, s.ts, 'x')")
    # MERGE with a target column on the right of an assignment (Hudi refuses this on MOR)
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 2 AS id, 3 AS ts) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET price = t.price * 2, ts = s.ts")
    expected = [(1, "a", 15.0, 2, "x"), (2, "b", 40.0, 3, "x")]
    assert rows(session, f"SELECT id, name, price, ts, dt FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "ts", "dt") == expected
    types = dict(session.sql(f"SELECT price, ts FROM {table_name}").dtypes)
    assert types == {"price": "double", "ts": "bigint"}
    # UPDATE refuses a partition column as Hudi does (the row would keep its stored partition path)
    with pytest.raises(SqlAnalysisError, match="Detected disallowed assignment clause in UPDATE statement for "
                                               "partition field `dt`"):
        session.sql(f"UPDATE {table_name} SET dt = 'z' WHERE id = 1")
    session.sql(f"UPDATE {table_name} SET price = 1 WHERE id = 1")
    assert rows(session, f"SELECT id, name, price FROM {table_name} WHERE id = 1") == [(1, "a", 1.0)]


@pytest.mark.parametrize("index, move", [("GLOBAL_SIMPLE", "true"), ("GLOBAL_SIMPLE", "false"), ("SIMPLE", "true")])
def test_changing_the_partition_follows_the_index(session: Session, table_name: str, index: str, move: str) -> None:
    create(session, table_name, "cow", partitioned=True,
           extra=f", 'hoodie.index.type' = '{index}', 'hoodie.simple.index.update.partition.path' = '{move}'")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1, 'x'), (2, 'b', 20.0, 1, 'x')")
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 'a2' AS name, 11.0 AS price, 2L AS ts, "
                "'y' AS dt) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    got = rows(session, f"SELECT id, name, dt, _hoodie_partition_path FROM {table_name}")
    if index == "GLOBAL_SIMPLE" and move == "true":  # delete in x, insert in y
        expected = [(1, "a2", "y", "dt=y"), (2, "b", "x", "dt=x")]
    elif index == "GLOBAL_SIMPLE":  # updated where it is stored; Hudi's copy-on-write read shows the path's dt
        expected = [(1, "a2", "x", "dt=x"), (2, "b", "x", "dt=x")]
    else:  # non-global: the key is looked up in y only, so the row is new there (Hudi's behaviour)
        expected = [(1, "a", "x", "dt=x"), (1, "a2", "y", "dt=y"), (2, "b", "x", "dt=x")]
    assert got == expected
    assert oracle(session, table_name, "id", "name", "_hoodie_partition_path") == [(r[0], r[1], r[3]) for r in expected]


@pytest.mark.parametrize("kind, index, move", [
    ("cow", "GLOBAL_BLOOM", "true"), ("mor", "GLOBAL_SIMPLE", "true"), ("cow", "GLOBAL_SIMPLE", "false")])
def test_an_upsert_moving_a_key_follows_the_global_index(session: Session, table_name: str, kind: str, index: str,
                                                         move: str) -> None:
    """INSERT INTO (an upsert: the table has a precombine field) of a stored key with another partition value:
    Hudi's global index deletes it from its stored partition and inserts it in the new one
    (``hoodie.*.index.update.partition.path=true``), or updates it where it is stored."""
    key = "bloom" if "BLOOM" in index else "simple"
    create(session, table_name, kind, partitioned=True,
           extra=f", 'hoodie.index.type' = '{index}', 'hoodie.{key}.index.update.partition.path' = '{move}'")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1, 'x'), (2, 'b', 20.0, 1, 'x')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a2', 11.0, 2, 'y'), (3, 'c', 30.0, 2, 'y')")
    got = rows(session, f"SELECT id, name, dt, _hoodie_partition_path FROM {table_name}")
    if move == "true":
        expected = [(1, "a2", "y", "dt=y"), (2, "b", "x", "dt=x"), (3, "c", "y", "dt=y")]
    else:  # kept where it is stored: the copy-on-write read shows the path's dt (test_native_reads)
        expected = [(1, "a2", "x", "dt=x"), (2, "b", "x", "dt=x"), (3, "c", "y", "dt=y")]
    assert got == expected
    assert oracle(session, table_name, "id", "name", "_hoodie_partition_path") == [(r[0], r[1], r[3]) for r in expected]
    # A delete of the moved key finds it where it now lives.
    session.sql(f"DELETE FROM {table_name} WHERE id = 1")
    assert oracle(session, table_name, "id") == [(2,), (3,)]


@pytest.mark.parametrize("kind", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_a_table_with_hudis_soft_delete_column(session: Session, table_name: str, kind: str) -> None:
    """``_hoodie_is_deleted`` as a data column (Hudi's soft deletes): a MERGE writing true deletes the record, a
    DELETE clause deletes whatever the column says."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, _hoodie_is_deleted BOOLEAN) USING hudi "
                f"TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, false), (2, 'b', 1, false), (3, 'c', 1, false)")
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 'a2' AS name, 2L AS ts, true AS _hoodie_is_deleted "
                "UNION ALL SELECT 4, 'd', 2L, false) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    expected = [(2, "b", False), (3, "c", False), (4, "d", False)]
    assert rows(session, f"SELECT id, name, _hoodie_is_deleted FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "_hoodie_is_deleted") == expected
    session.sql(f"MERGE INTO {table_name} t USING (SELECT 2 AS id, 3L AS ts) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert oracle(session, table_name, "id", "name", "_hoodie_is_deleted") == expected[1:]


def test_hudi_validations_give_hudis_messages(session: Session, table_name: str) -> None:
    create(session, table_name, "cow")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1)")
    src = "(SELECT 1 AS id, 'x' AS name, 1.0 AS price, 2L AS ts) s"
    cases = {
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id WHEN MATCHED AND s.ts > 1 THEN DELETE "
        "WHEN MATCHED THEN DELETE": "Only one deleting action is supported in MERGE INTO statement (provided 2)",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id WHEN NOT MATCHED THEN INSERT (name, ts) "
        "VALUES (s.name, s.ts)": "No matching assignment found for target table record key field `id`",
        f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 2.0 AS price) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET price = s.price": "Failed to resolve pre-combine field `ts` w/in the source-table",
        # Hudi resolves the ordering field for every MERGE, deletes and inserts included
        f"MERGE INTO {table_name} t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE":
            "Failed to resolve pre-combine field `ts` w/in the source-table",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id WHEN MATCHED THEN UPDATE SET nope = 1":
            "UNRESOLVED_COLUMN.* `nope`",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, nope) "
        "VALUES (s.id, 1)": "UNRESOLVED_COLUMN.* `nope`",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.nope WHEN MATCHED THEN DELETE":
            "UNRESOLVED_COLUMN.* `s`.`nope`",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id AND t.price > s.price WHEN MATCHED THEN DELETE":
            "Currently only equality predicates are supported in MERGE INTO statement on primary key table",
        f"MERGE INTO {table_name} t USING {src} ON t.id = s.id AND s.name = 'x' WHEN MATCHED THEN DELETE":
            "Invalid MERGE INTO matching condition: `s.name = 'x'`: expected condition should be "
            "'target.id = <source-column-expr>'",
        f"MERGE INTO {table_name} t USING (SELECT 1L AS id, 2L AS ts) s ON t.id = s.id WHEN MATCHED THEN DELETE":
            "Invalid MERGE INTO matching condition: s.id: can't cast s.id (of LongType) to IntegerType",
        f"MERGE INTO {table_name} t USING (SELECT 1L AS id, 2L AS ts) s ON CAST(t.id AS BIGINT) = s.id "
        "WHEN MATCHED THEN DELETE": "Invalid MERGE INTO matching condition: s.id: can't cast s.id",
        f"MERGE INTO {table_name} t USING (SELECT 1, 'x', 1.0, 2L) s(id, name, price, ts) ON t.id = s.id "
        "WHEN MATCHED THEN DELETE": "COLUMN_ALIASES_IS_NOT_ALLOWED.* Columns aliases are not allowed in MERGE",
        f"UPDATE {table_name} SET id = 2 WHERE id = 1": "Detected disallowed assignment clause in UPDATE statement "
                                                        "for record key field `id`",
    }
    for sql, message in cases.items():
        with pytest.raises(SqlAnalysisError, match=message.replace("(", r"\(").replace(")", r"\)")):
            session.sql(sql)
    assert rows(session, f"SELECT id, name, price, ts FROM {table_name}") == [(1, "a", 10.0, 1)]


@pytest.mark.parametrize("kind", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_when_not_matched_by_source(session: Session, table_name: str, kind: str) -> None:
    from sqlext.parser.statements import WhenNotMatchedBySourceDelete, WhenNotMatchedBySourceUpdate

    create(session, table_name, kind)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 10.0, 1), (2, 'b', 20.0, 1), (3, 'c', 30.0, 1), "
                "(4, 'd', 40.0, 1)")
    base = (f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 'a2' AS name, 11.0 AS price, 2L AS ts) s "
            "ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    merge(session, base + " WHEN NOT MATCHED BY SOURCE AND t.price > 35 THEN DELETE "
                          "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET name = upper(t.name), ts = 5",
          fallback=base, clauses=(WhenNotMatchedBySourceDelete("t.price > 35"),
                                  WhenNotMatchedBySourceUpdate(None, (("name", "upper(t.name)"), ("ts", "5")))))
    expected = [(1, "a2", 11.0, 2), (2, "B", 20.0, 5), (3, "C", 30.0, 5)]
    assert rows(session, f"SELECT id, name, price, ts FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "ts") == expected


def test_record_key_columns_missing_from_on(session: Session, table_name: str) -> None:
    """A record-key column ON does not name is read from the source column of its name (Hudi 0.15), unless
    the session sets ``hoodie.spark.sql.optimized.writes.enable=true``: then ON must name every key column
    (Hudi TestMergeIntoTableWithNonRecordKeyField "extra cond", multiple record keys)."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id,name', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 100), (2, 'a2', 20, 200), (3, 'u3', 20, 100)")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW ms_keys AS SELECT * FROM VALUES (1, 'u1', 10.0, 999L), "
                "(3, 'u3', 30.0, 9999L), (4, 'u4', 40.0, 99999L) AS v(id, name, price, ts)")
    sql = (f"MERGE INTO {table_name} t0 USING (SELECT * FROM ms_keys) s0 ON t0.id = s0.id "
           "WHEN MATCHED THEN UPDATE SET id = t0.id, name = t0.name, price = t0.price, ts = s0.ts "
           "WHEN NOT MATCHED THEN INSERT (id, name, price, ts) VALUES (s0.id, s0.name, s0.price, s0.ts)")
    session.sql("SET hoodie.spark.sql.optimized.writes.enable = true")
    try:
        with pytest.raises(SqlAnalysisError, match="required to match on all primary key colum"):
            session.sql(sql)
    finally:
        session.spark.conf.unset("hoodie.spark.sql.optimized.writes.enable")
    session.sql(sql)
    expected = [(1, "a1", 10.0, 100), (1, "u1", 10.0, 999), (2, "a2", 20.0, 200), (3, "u3", 20.0, 9999),
                (4, "u4", 40.0, 99999)]
    assert rows(session, f"SELECT id, name, price, ts FROM {table_name}") == expected
    assert oracle(session, table_name, "id", "name", "price", "ts") == expected


def test_one_field_complex_keys_written_as_values_are_matched(session: Session, table_name: str) -> None:
    """With hoodie.write.complex.keygen.encode.single.record.key.field.name=false (Hudi 0.15.0's key form) a table
    with two partition fields stores key '1', not 'id:1'; MERGE, UPDATE and DELETE still find the record."""
    t = table_name
    session.sql(f"CREATE TABLE {t} (id INT, name STRING, ts BIGINT, a STRING, b STRING) USING hudi "
                "PARTITIONED BY (a, b) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
                "'hoodie.write.complex.keygen.encode.single.record.key.field.name' = 'false')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'x', 1, 'a1', 'b1'), (2, 'x', 1, 'a1', 'b1')")
    session.sql(f"MERGE INTO {t} USING (SELECT 1 AS id, 'y' AS name, 2 AS ts, 'a1' AS a, 'b1' AS b) s "
                f"ON {t}.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name, ts = s.ts WHEN NOT MATCHED THEN INSERT *")
    session.sql(f"UPDATE {t} SET name = 'z' WHERE id = 2")
    assert rows(session, f"SELECT _hoodie_record_key, id, name FROM {t}") == [("1", 1, "y"), ("2", 2, "z")]
    session.sql(f"DELETE FROM {t} WHERE id = 1")
    assert rows(session, f"SELECT _hoodie_record_key, id, name FROM {t}") == [("2", 2, "z")]


def test_a_merge_copies_untouched_row_groups_as_bytes_and_every_reader_agrees(session: Session,
                                                                             table_name: str) -> None:
    """A copy-on-write MERGE rewriting a file of several row groups copies those without changed records (their
    column chunks byte for byte, a new _hoodie_file_name) and encodes the rest: the table reads the same through
    sqlext and hudi-rs, and the copied chunks are the stored ones."""
    from engine.formats.parquet_splice import ParquetFooter
    from engine.table import Table

    session.sql(f"CREATE TABLE {table_name} (id INT, v STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.parquet.block.size' = '40000')")
    session.sql(f"INSERT INTO {table_name} SELECT CAST(id AS INT), concat('v', id), 1 FROM range(0, 6000)")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    table = Table.load(entry.location)
    [before] = table.file_system_view().all_latest_base_files()

    def footer(path: str) -> ParquetFooter:
        with open(path, "rb") as f:
            return ParquetFooter.read(f, os.path.getsize(path), path)

    old = footer(before.path)
    assert len(old.row_groups) >= 4
    session.sql(f"MERGE INTO {table_name} t USING (SELECT CAST(id AS INT) AS id, concat('u', id) AS v, 2L AS ts "
                "FROM range(10, 20) UNION ALL SELECT 7000, 'new', 2L) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    session.sql(f"DELETE FROM {table_name} WHERE id = 5990")
    expected = sorted([(i, f"u{i}" if 10 <= i < 20 else f"v{i}") for i in range(6000) if i != 5990] + [(7000, "new")])
    assert rows(session, f"SELECT id, v FROM {table_name}") == expected
    [after] = Table.load(entry.location).file_system_view().all_latest_base_files()
    assert sorted((r["id"], r["v"]) for r in hudi_rs_rows(entry.location)) == expected
    new = footer(after.path)
    # the row groups without changed records hold the stored `v` chunks' bytes, the others were encoded anew

    def chunk_bytes(path: str, parsed: ParquetFooter) -> list[bytes]:
        column = parsed.column_names.index("v")
        out = []
        with open(path, "rb") as f:
            for group in range(len(parsed.row_groups)):
                chunk = parsed.chunks(group)[column]
                f.seek(chunk.start)
                out.append(f.read(chunk.length))
        return out

    stored, written = chunk_bytes(before.path, old), set(chunk_bytes(after.path, new))
    parquet = pq.ParquetFile(before.path)
    changed = [bool({*range(10, 20), 5990} & set(parquet.read_row_group(g, columns=["id"]).column(0).to_pylist()))
               for g in range(len(old.row_groups))]
    assert 0 < sum(changed) < len(changed) - 3
    assert [chunk in written for chunk in stored] == [not c for c in changed]
