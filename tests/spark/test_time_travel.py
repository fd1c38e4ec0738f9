"""Time travel and Hudi's table-valued functions, as a Hudi 0.14 user writes them (Hudi's
TestTimeTravelTable, TestHoodieTableValuedFunction): ``TIMESTAMP AS OF`` with an instant (quoted or not) or a
timestamp/date string, ``VERSION AS OF``, on any table reference of any statement, through sqlext and plain
``spark.sql``; ``hudi_table_changes`` and ``hudi_query``."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def ids(session: Session, sql: str) -> list[int]:
    return sorted(r[0] for r in session.sql(sql).collect())


@pytest.fixture(scope="module", params=["cow", "mor"])
def history(request: pytest.FixtureRequest, session: Session) -> Iterator[tuple[str, list[str]]]:
    """A table written by three commits (insert 1,2; insert 3; update 1 and delete 2) and its instants."""
    name = f"tt_history_{request.param}"
    session.sql(f"CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                f"TBLPROPERTIES (type = '{request.param}', primaryKey = 'id', preCombineField = 'ts')")
    instants = []
    for statement in (f"INSERT INTO {name} VALUES (1, 'a1', 10, 1000), (2, 'a2', 20, 1000)",
                      f"INSERT INTO {name} VALUES (3, 'a3', 30, 1000)",
                      f"UPDATE {name} SET price = 11 WHERE id = 1"):
        session.sql(statement)
        instants.append(session.sql(f"SELECT max(_hoodie_commit_time) FROM {name}").collect()[0][0])
        time.sleep(1.05)  # distinct seconds for the timestamp forms
    session.sql(f"DELETE FROM {name} WHERE id = 2")
    yield name, instants
    session.sql(f"DROP TABLE {name} PURGE")


def test_every_instant_form_reads_that_commit(session: Session, history: tuple[str, list[str]]) -> None:
    name, (first, second, third) = history
    for clause in (f"TIMESTAMP AS OF '{first}'", f"TIMESTAMP AS OF {first}", f"VERSION AS OF '{first}'",
                   f"VERSION AS OF {first}", f"FOR SYSTEM_TIME AS OF '{first}'", f"timestamp as of '{first}'"):
        assert ids(session, f"SELECT id FROM {name} {clause}") == [1, 2], clause
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '{second}'") == [1, 2, 3]
    price = session.sql(f"SELECT price FROM {name} TIMESTAMP AS OF '{second}' WHERE id = 1").collect()
    assert [r[0] for r in price] == [10.0]
    price = session.sql(f"SELECT price FROM {name} TIMESTAMP AS OF '{third}' WHERE id = 1").collect()
    assert [r[0] for r in price] == [11.0]
    assert ids(session, f"SELECT id FROM {name}") == [1, 3]
    # the oracle agrees on what each commit holds
    location = session.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").collect()[0][1]
    assert sorted(r["id"] for r in hudi_rs_rows(location.removeprefix("file:"), as_of=first)) == [1, 2]
    assert sorted(r["id"] for r in hudi_rs_rows(location.removeprefix("file:"), as_of=second)) == [1, 2, 3]


def test_timestamp_and_date_strings(session: Session, history: tuple[str, list[str]]) -> None:
    """'yyyy-MM-dd HH:mm:ss[.SSS]' and 'yyyy-MM-dd' are wall-clock times in the session time zone, as Hudi's
    HoodieSqlCommonUtils.formatQueryInstant reads them."""
    name, (first, second, _) = history
    as_text = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '{as_text}'") == [1, 2]
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '2100-01-01'") == [1, 3]
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '2000-01-01 00:00:00'") == []


def test_time_travel_in_every_statement(session: Session, history: tuple[str, list[str]]) -> None:
    name, (first, _, _) = history
    suffix = name.rsplit("_", 1)[1]
    session.sql(f"CREATE TABLE tt_probe_{suffix} (id INT) USING parquet")
    session.sql(f"INSERT INTO tt_probe_{suffix} VALUES (1), (3)")
    # subqueries, joins, IN, CTEs
    assert ids(session, f"SELECT x.id FROM (SELECT id FROM {name} TIMESTAMP AS OF '{first}') x "
                        f"JOIN tt_probe_{suffix} p ON x.id = p.id") == [1]
    assert ids(session, f"SELECT id FROM tt_probe_{suffix} WHERE id IN "
                        f"(SELECT id FROM {name} VERSION AS OF '{first}')") == [1]
    assert ids(session, f"WITH old AS (SELECT * FROM {name} TIMESTAMP AS OF {first}) SELECT id FROM old") == [1, 2]
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '{first}' WHERE id = 1 UNION "
                        f"SELECT id FROM {name} WHERE id > 1") == [1, 3]
    assert ids(session, f"SELECT id FROM {name} TIMESTAMP AS OF '{first}' "
                        "DISTRIBUTE BY CAST(rand() * 2 AS INT)") == [1, 2]
    # CTAS, INSERT ... SELECT and MERGE ... USING read the old commit
    copy = f"tt_copy_{suffix}"
    session.sql(f"CREATE TABLE {copy} USING hudi TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') "
                f"AS SELECT id, name, price, ts FROM {name} TIMESTAMP AS OF '{first}'")
    assert ids(session, f"SELECT id FROM {copy}") == [1, 2]
    session.sql(f"INSERT INTO {copy} SELECT id + 10, name, price, ts FROM {name} TIMESTAMP AS OF '{first}'")
    assert ids(session, f"SELECT id FROM {copy}") == [1, 2, 11, 12]
    session.sql(f"MERGE INTO {copy} t USING (SELECT id + 20 AS id, name, price, ts FROM {name} "
                f"TIMESTAMP AS OF '{first}') s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    assert ids(session, f"SELECT id FROM {copy}") == [1, 2, 11, 12, 21, 22]
    location = session.sql(f"DESCRIBE FORMATTED {copy}").where("col_name = 'Location'").collect()[0][1]
    assert sorted(r["id"] for r in hudi_rs_rows(location.removeprefix("file:"))) == [1, 2, 11, 12, 21, 22]
    # plain Spark SQL (what sqlext serve / JDBC runs) reads the instant form too
    rows = session.spark.sql(f"SELECT id FROM {name} TIMESTAMP AS OF '{first}'").collect()
    assert sorted(r[0] for r in rows) == [1, 2]


def test_hudi_table_changes(session: Session, history: tuple[str, list[str]]) -> None:
    """hudi_table_changes(table | path, 'latest_state', begin | 'earliest' [, end]): rows changed in (begin, end],
    in their latest state within the range."""
    name, (first, second, third) = history
    assert ids(session, f"SELECT id FROM hudi_table_changes('{name}', 'latest_state', 'earliest')") == [1, 3]
    assert ids(session, f"SELECT id FROM hudi_table_changes('default.{name}', 'latest_state', '{first}')") == [1, 3]
    assert ids(session, f"SELECT id FROM hudi_table_changes('{name}', 'latest_state', '{first}', '{second}')") == [3]
    assert ids(session, f"SELECT id FROM hudi_table_changes('{name}', 'latest_state', 'earliest', '{first}')") == [
        1, 2]
    location = session.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").collect()[0][1]
    by_path = ids(session, f"SELECT id FROM hudi_table_changes('{location.removeprefix('file:')}', "
                           f"'latest_state', '{first}', '{second}')")
    assert by_path == [3]
    expected = sorted(r["id"] for r in hudi_rs_rows(location.removeprefix("file:"), begin=first, end=second))
    assert by_path == expected
    rows = session.spark.sql(f"SELECT id FROM hudi_table_changes('{name}', 'latest_state', '{second}', "
                             f"'{third}')").collect()
    assert [r[0] for r in rows] == [1]


def test_hudi_query(session: Session, history: tuple[str, list[str]]) -> None:
    name, (first, _, _) = history
    assert ids(session, f"SELECT id FROM hudi_query('{name}', 'snapshot')") == [1, 3]
    assert set(ids(session, f"SELECT id FROM hudi_query('{name}', 'read_optimized')")) <= {1, 2, 3}
    assert ids(session, f"SELECT id FROM hudi_query('{name}', 'incremental', '{first}')") == [1, 3]


def test_table_function_errors_are_hudis(session: Session, history: tuple[str, list[str]]) -> None:
    name, _ = history
    with pytest.raises(Exception, match="Expect arguments .* for function `hudi_table_changes`"):
        session.sql(f"SELECT * FROM hudi_table_changes('{name}', 'latest_state')").collect()
    with pytest.raises(Exception, match="'hudi_table_changes' doesn't support `snapshot`"):
        session.sql(f"SELECT * FROM hudi_table_changes('{name}', 'snapshot', 'earliest')").collect()
    with pytest.raises(Exception, match="'hudi_query' doesn't currently support `bogus`"):
        session.sql(f"SELECT * FROM hudi_query('{name}', 'bogus')").collect()
    with pytest.raises(Exception, match="It isn't a CDC hudi table on"):
        session.sql(f"SELECT * FROM hudi_table_changes('{name}', 'cdc', 'earliest')").collect()
