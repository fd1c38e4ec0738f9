"""Apache Hudi 0.15's compaction suites (``TestCompactionProcedure`` and ``TestCompactionTable`` of
``hudi-spark-datasource/hudi-spark``), ported as the SQL a user types: ``CALL run_compaction`` /
``show_compaction`` and the ``SCHEDULE | RUN | SHOW COMPACTION ON`` statements give Hudi 0.15's rows (checked
against Hudi 0.15.0 itself through tests/hudi_oracle's runner). Instant times differ run to run: the tests
assert which instant a later call names and their order, not literals.

Already ported in tests/spark/test_procedures_hudi_rules.py: "by Table" (CALL form), "with options",
"with specific instants", "with operation"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sqlext.session import Session

pytestmark = pytest.mark.spark

COMPACTION_COLUMNS = ["timestamp", "operation_size", "state"]


def call(session: Session, sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
    frame = session.sql(sql)
    return list(frame.columns), [tuple(r) for r in frame.collect()]


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return call(session, sql)[1]


def mor(session: Session, name: str, location: Path) -> None:
    session.sql(f"""create table {name} (id int, name string, price double, ts long) using hudi
        location '{location}' tblproperties (primaryKey = 'id', type = 'mor', preCombineField = 'ts')""")


@pytest.fixture
def suite_settings(session: Session) -> Iterator[None]:
    """The suites' ``set hoodie.parquet.max.file.size = 10000``, ``hoodie.compact.inline=false``,
    ``hoodie.compact.schedule.inline=false``; reset afterwards (the session is shared)."""
    keys = {"hoodie.parquet.max.file.size": "10000", "hoodie.compact.inline": "false",
            "hoodie.compact.schedule.inline": "false"}
    for key, value in keys.items():
        session.sql(f"set {key} = {value}")
    try:
        yield
    finally:
        for key in keys:
            session.sql(f"reset {key}")


def select_all(session: Session, name: str) -> list[tuple[object, ...]]:
    return rows(session, f"select id, name, price, ts from {name} order by id")


@pytest.mark.usefixtures("suite_settings")
def test_compaction_table(session: Session, table_name: str, tmp_path: Path) -> None:
    """TestCompactionTable "Test compaction table" (TestCompactionProcedure "by Table" as statements): four
    inserts and an update reach the default 5 delta commits; two plans are scheduled and run newest first."""
    mor(session, table_name, tmp_path / table_name)
    for i in range(1, 5):
        session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, 1000)")
    session.sql(f"update {table_name} set price = 11 where id = 1")
    session.sql(f"schedule compaction  on {table_name}")
    session.sql(f"update {table_name} set price = 12 where id = 2")
    session.sql(f"schedule compaction  on {table_name}")
    columns, shown = call(session, f"show compaction on {table_name} limit 10")
    assert columns == COMPACTION_COLUMNS
    assert [r[2] for r in shown] == ["REQUESTED", "REQUESTED"] and shown[0][0] > shown[1][0]  # newest first
    timestamps = [r[0] for r in shown]
    session.sql(f"run compaction on {table_name} at {timestamps[1]}")
    expected = [(1, "a1", 11.0, 1000), (2, "a2", 12.0, 1000), (3, "a3", 10.0, 1000), (4, "a4", 10.0, 1000)]
    assert select_all(session, table_name) == expected
    assert sorted(r[2] for r in rows(session, f"show compaction on {table_name}")) == ["COMPLETED", "REQUESTED"]
    session.sql(f"run compaction on {table_name} at {timestamps[0]}")
    assert select_all(session, table_name) == expected
    assert [(r[0], r[2]) for r in rows(session, f"show compaction on {table_name}")] == \
        [(timestamps[0], "COMPLETED"), (timestamps[1], "COMPLETED")]


@pytest.mark.parametrize("syntax", ["call", "statement"])
@pytest.mark.usefixtures("suite_settings")
def test_compaction_by_path(session: Session, table_name: str, tmp_path: Path, syntax: str) -> None:
    """TestCompactionProcedure "by Path" (CALL) and TestCompactionTable "Test compaction path" (statements)."""
    location = tmp_path / table_name
    statements = {
        "call": {"run": f"call run_compaction(op => 'run', path => '{location}')",
                 "schedule": f"call run_compaction(op => 'schedule', path => '{location}')",
                 "show": f"call show_compaction(path => '{location}')",
                 "run_at": f"call run_compaction(op => 'run', path => '{location}', timestamp => 12345L)"},
        "statement": {"run": f"run compaction on '{location}'", "schedule": f"schedule compaction on '{location}'",
                      "show": f"show compaction on '{location}'", "run_at": f"run compaction on '{location}' at 12345"},
    }[syntax]
    mor(session, table_name, location)
    for i in range(1, 4):
        session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, 1000)")
    session.sql(f"update {table_name} set price = 11 where id = 1")
    # 4 delta commits: below the default trigger of 5, nothing is compacted
    assert call(session, statements["run"]) == (COMPACTION_COLUMNS, [])
    assert select_all(session, table_name) == [(1, "a1", 11.0, 1000), (2, "a2", 10.0, 1000), (3, "a3", 10.0, 1000)]
    assert rows(session, statements["show"]) == []
    session.sql(f"update {table_name} set price = 12 where id = 1")
    result_a = rows(session, statements["schedule"])
    session.sql(f"update {table_name} set price = 12 where id = 2")
    result_b = rows(session, statements["schedule"])
    assert len(result_a) == len(result_b) == 1 and result_b[0][0] > result_a[0][0]
    assert result_a[0][2] == result_b[0][2] == "REQUESTED"
    assert sorted(rows(session, statements["show"])) == sorted(result_a + result_b)
    # run: nothing new to schedule, both pending plans executed, newest first
    assert rows(session, statements["run"]) == [(result_b[0][0], result_b[0][1], "COMPLETED"),
                                                (result_a[0][0], result_a[0][1], "COMPLETED")]
    assert select_all(session, table_name) == [(1, "a1", 12.0, 1000), (2, "a2", 12.0, 1000), (3, "a3", 10.0, 1000)]
    assert len(rows(session, statements["show"])) == 2
    with pytest.raises(Exception, match="specific 12345 instants is not exist"):
        session.sql(statements["run_at"])


def test_show_compaction_by_path_after_inline_compactions(session: Session, table_name: str,
                                                          tmp_path: Path) -> None:
    """TestCompactionProcedure "Test show_compaction Procedure by Path": inline compaction every 2 delta
    commits; an insert and three updates compact twice."""
    location = tmp_path / table_name
    mor(session, table_name, location)
    session.sql("set hoodie.compact.inline=true")
    session.sql("set hoodie.compact.inline.max.delta.commits=2")
    try:
        session.sql(f"insert into {table_name} values(1, 'a1', 10, 1000)")
        for name in ("a2", "a3", "a4"):
            session.sql(f"update {table_name} set name = '{name}' where id = 1")
    finally:
        session.sql("reset hoodie.compact.inline")
        session.sql("reset hoodie.compact.inline.max.delta.commits")
    shown = rows(session, f"call show_compaction(path => '{location}')")
    assert [(r[1], r[2]) for r in shown] == [(1, "COMPLETED"), (1, "COMPLETED")]
    assert rows(session, f"select id, name from {table_name}") == [(1, "a4")]


@pytest.mark.usefixtures("suite_settings")
def test_compaction_before_and_after_deletes(session: Session, table_name: str, tmp_path: Path) -> None:
    """TestCompactionTable "Test compaction before and after deletes": deletes by key and by another column
    reach the base files through the next compaction."""
    mor(session, table_name, tmp_path / table_name)
    session.sql("set hoodie.compact.inline.max.delta.commits=2")
    try:
        for i in range(1, 4):
            session.sql(f"insert into {table_name} values({i}, 'a{i}', 10, 1000)")
        session.sql(f"update {table_name} set price = 11 where id = 1")
        session.sql(f"update {table_name} set price = 12 where id = 2")
        session.sql(f"schedule compaction  on {table_name}")
        shown = rows(session, f"show compaction on {table_name} limit 10")
        assert [r[1:] for r in shown] == [(2, "REQUESTED")]  # the file groups of ids 1 and 2
        session.sql(f"run compaction on {table_name} at {shown[0][0]}")
        assert select_all(session, table_name) == [(1, "a1", 11.0, 1000), (2, "a2", 12.0, 1000),
                                                   (3, "a3", 10.0, 1000)]
        assert len(rows(session, f"show compaction on {table_name}")) == 1
        session.sql(f"DELETE FROM {table_name} WHERE id = 41")  # no such row
        session.sql(f"DELETE FROM {table_name} WHERE name = 'a2'")
        session.sql(f"schedule compaction  on {table_name}")
        listed = rows(session, f"show compaction on {table_name} limit 10")
        assert [r[1:] for r in listed] == [(1, "REQUESTED"), (2, "COMPLETED")]  # newest first
        timestamps = sorted(r[0] for r in listed)
        assert timestamps[0] == shown[0][0]
        session.sql(f"run compaction on {table_name} at {timestamps[1]}")
        assert select_all(session, table_name) == [(1, "a1", 11.0, 1000), (3, "a3", 10.0, 1000)]
        assert [r[2] for r in rows(session, f"show compaction on {table_name} limit 10")] == ["COMPLETED"] * 2
    finally:
        session.sql("reset hoodie.compact.inline.max.delta.commits")


def test_compaction_procedure_errors_in_hudis_words(session: Session, table_name: str, tmp_path: Path) -> None:
    """What Hudi 0.15 answers for the argument errors around these suites (asked of Hudi itself)."""
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{tmp_path / table_name}' tblproperties (type = 'cow', primaryKey = 'id', preCombineField = 'ts')""")
    with pytest.raises(Exception, match="Compaction is not supported on a CopyOnWrite table"):
        session.sql(f"call run_compaction(table => '{table_name}', op => 'schedule')")
    with pytest.raises(Exception, match="Cannot show compaction on a Non Merge On Read table"):
        session.sql(f"call show_compaction(table => '{table_name}')")
    with pytest.raises(Exception, match=r"Invalid value \(null\)"):
        session.sql(f"call run_compaction(op => 'null', table => '{table_name}')")
    with pytest.raises(Exception, match="Argument: op is required"):
        session.sql(f"call run_compaction(table => '{table_name}')")
    with pytest.raises(Exception, match="Table name or table path must be given one"):
        session.sql("call run_compaction(op => 'schedule')")
