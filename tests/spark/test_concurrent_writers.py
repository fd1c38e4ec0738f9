"""Two writers on one table (two catalog names over one LOCATION, as two warehouses or a shared metastore
give): the second fails at once with one line while the first is live, the first commits, and both read
the table; heartbeats appear during a write and are gone after it, on every exit path; a compaction being
executed is never rolled back by another run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import engine.spark.writer as spark_writer
from engine.errors import ConcurrentWriteError, WriteError
from engine.services.compaction import pending_compactions, start_compaction
from engine.table import Table
from engine.write.heartbeat import HeartbeatClient
from sqlext.errors import ProcedureError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


def heartbeat_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("hudi-heartbeat-")]


def heartbeat_files(location: Path) -> list[str]:
    folder = location / ".hoodie" / ".heartbeat"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def rows(session: Session, name: str) -> list[tuple[int, str]]:
    return sorted((r[0], r[1]) for r in session.sql(f"SELECT id, name FROM {name}").collect())


def holder(held: threading.Event, release: threading.Event) -> Callable[..., object]:
    """A stand-in for the writer's file-group step that signals ``held`` and waits for ``release`` (the
    instant has started, no file is written yet), then writes."""
    original = spark_writer._bucketed_write

    def hold_inside_the_write(*args: object, **kwargs: object) -> object:
        held.set()
        assert release.wait(120)
        return original(*args, **kwargs)

    return hold_inside_the_write


def two_names_one_location(session: Session, table_name: str, location: Path) -> str:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
    other = f"{table_name}_elsewhere"
    session.sql(f"CREATE TABLE {other} USING hudi LOCATION '{location}'")
    return other


def test_a_second_writer_fails_at_once_and_the_first_commits(
        session: Session, table_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    location = tmp_path / "shared"
    other = two_names_one_location(session, table_name, location)
    held, release = threading.Event(), threading.Event()
    hold_inside_the_write = holder(held, release)
    monkeypatch.setattr(spark_writer, "_bucketed_write", hold_inside_the_write)
    failures: list[BaseException] = []

    def first_writer() -> None:
        try:
            session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 2)")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    thread = threading.Thread(target=first_writer)
    thread.start()
    try:
        assert held.wait(120)
        monkeypatch.undo()
        pending = Table.load(str(location)).timeline.pending()
        assert len(pending) == 1
        live = pending[0]
        assert heartbeat_files(location) == [live.timestamp]
        assert heartbeat_threads() == [f"hudi-heartbeat-{live.timestamp}"]

        started = time.monotonic()
        with pytest.raises(ConcurrentWriteError) as caught:
            session.sql(f"INSERT INTO {other} VALUES (3, 'c', 3)")
        assert time.monotonic() - started < 10
        message = str(caught.value)
        assert "\n" not in message
        assert f"table {table_name} at {location}" in message
        assert f"commit instant {live.timestamp} (inflight) has a live heartbeat" in message
        assert "optimistic_concurrency_control" in message and "hoodie.write.lock.provider" in message
        # The second writer changed nothing: the first one's instant is still the only pending one.
        assert [i.timestamp for i in Table.load(str(location)).timeline.pending()] == [live.timestamp]
    finally:
        release.set()
        thread.join(120)
    assert not failures, failures
    assert rows(session, table_name) == rows(session, other) == [(1, "a"), (2, "b")]
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location)) == [(1, "a"), (2, "b")]
    assert heartbeat_files(location) == [] and heartbeat_threads() == []

    session.sql(f"INSERT INTO {other} VALUES (3, 'c', 3)")  # the first is done: the second may write
    assert rows(session, table_name) == rows(session, other) == [(1, "a"), (2, "b"), (3, "c")]
    assert not Table.load(str(location)).timeline.rollbacks()


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_the_heartbeat_is_gone_after_a_failed_write(
        session: Session, table_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        failure: type[BaseException]) -> None:
    location = tmp_path / "t"
    two_names_one_location(session, table_name, location)
    seen: list[list[str]] = []

    def die_inside_the_write(*args: object, **kwargs: object) -> object:
        seen.append(heartbeat_files(location))
        raise failure("injected failure inside the write")

    monkeypatch.setattr(spark_writer, "_bucketed_write", die_inside_the_write)
    with pytest.raises(WriteError if failure is RuntimeError else KeyboardInterrupt):
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 2)")
    monkeypatch.undo()
    table = Table.load(str(location))
    assert len(seen) == 1 and len(seen[0]) == 1  # the failed instant had a heartbeat while it ran
    assert heartbeat_files(location) == [] and heartbeat_threads() == []
    assert not table.timeline.pending() and len(table.timeline.rollbacks()) == 1
    assert rows(session, table_name) == [(1, "a")]


def test_a_compaction_being_executed_is_not_rolled_back_by_another_run(
        session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'b2', 2)")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    instant = session.sql(f"CALL run_compaction(op => 'schedule', table => '{table_name}', "
                          "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()[0]["timestamp"]
    table = Table.load(entry.location)
    # Another executor of this compaction (here: a heartbeat this process runs for it) is live.
    executor = HeartbeatClient(table.storage, table.base_path)
    executor.start(instant)
    try:
        start_compaction(table, instant)
        with pytest.raises(ProcedureError, match=f"compaction {instant} of table {table_name} .*being executed"):
            session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')")
        assert [(i.timestamp, i.state.name) for i in pending_compactions(table)] == [(instant, "INFLIGHT")]
    finally:
        executor.stop(instant)
    # That executor is gone: the next run redoes the compaction.
    ran = session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')").collect()
    assert [(r["timestamp"], r["state"]) for r in ran] == [(instant, "COMPLETED")]
    assert rows(session, table_name) == [(1, "a"), (2, "b2")]
    assert heartbeat_files(Path(entry.location)) == [] and heartbeat_threads() == []


OCC_SETTINGS = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_optimistic_writers_commit_side_by_side_and_the_loser_of_a_file_group_retries(
        session: Session, table_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_type: str) -> None:
    """hoodie.write.concurrency.mode=optimistic_concurrency_control: while one UPDATE is inside its write, a
    writer on another partition and a writer on the same key both commit; the held one then fails with a
    retryable conflict naming the file group, leaves nothing behind, and its retry commits."""
    location = tmp_path / "shared"
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, p STRING) USING hudi
        PARTITIONED BY (p) LOCATION '{location}'
        TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
    other = f"{table_name}_elsewhere"
    session.sql(f"CREATE TABLE {other} USING hudi LOCATION '{location}'")
    for key, value in OCC_SETTINGS.items():
        session.sql(f"SET {key}={value}")
    held, release = threading.Event(), threading.Event()
    hold_inside_the_write = holder(held, release)
    failures: list[BaseException] = []

    def first_writer() -> None:
        try:
            session.sql(f"UPDATE {table_name} SET name = 'first', ts = 5 WHERE id = 1")
        except BaseException as exc:  # noqa: BLE001 - checked below
            failures.append(exc)

    monkeypatch.setattr(spark_writer, "_bucketed_write", hold_inside_the_write)
    thread = threading.Thread(target=first_writer)
    try:
        thread.start()
        assert held.wait(120)
        monkeypatch.undo()
        session.sql(f"INSERT INTO {other} VALUES (3, 'c', 1, 'z')")  # another partition: commits
        session.sql(f"UPDATE {other} SET name = 'second', ts = 6 WHERE id = 1")  # same file group: commits
        release.set()
        thread.join(120)
    finally:
        release.set()
        for key in OCC_SETTINGS:
            session.sql(f"RESET {key}")
    assert len(failures) == 1, failures
    message = str(failures[0])
    assert f"write conflict on table {table_name}" in message or f"at {location}" in message
    assert "p=x/" in message or "x/" in message
    assert "run the statement again" in message
    table = Table.load(str(location))
    assert not table.timeline.pending()
    assert len(table.timeline.rollbacks()) == 1
    expected = [(1, "second"), (2, "b"), (3, "c")]
    assert rows(session, table_name) == rows(session, other) == expected
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location)) == expected
    assert heartbeat_files(location) == [] and heartbeat_threads() == []
    for key, value in OCC_SETTINGS.items():
        session.sql(f"SET {key}={value}")
    try:
        session.sql(f"UPDATE {table_name} SET name = 'first', ts = 7 WHERE id = 1")  # the retry
    finally:
        for key in OCC_SETTINGS:
            session.sql(f"RESET {key}")
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(location)) == [(1, "first"), (2, "b"), (3, "c")]
