"""Savepoints, restore and rollback as a Hudi user runs them (Hudi's TestSavepointsProcedure,
TestRollbackToInstantProcedure, TestRestore*): a savepoint keeps a commit's files from the cleaner, restoring
it rolls every later instant back (compactions included) and the table reads as it did then — also for
hudi-rs; rollback_to_instant undoes the latest commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def commits(path: Path) -> list[str]:
    return [i.timestamp for i in Table.load(str(path)).timeline.completed_commits()]


def rows(session: Session, table: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(f"SELECT id, name FROM {table}").collect())


def oracle(path: Path, **read: str) -> list[tuple[object, ...]]:
    return sorted((r["id"], r["name"]) for r in hudi_rs_rows(path, **read))


# MOR restore runs by default in the interrupted-restore test below.
@pytest.mark.parametrize("table_type", ["cow", pytest.param("mor", marks=pytest.mark.extended)])
def test_restore_to_a_savepoint_reads_as_then(session: Session, table_name: str, tmp_path: Path,
                                              table_type: str) -> None:
    path = tmp_path / table_name
    compaction = ("'hoodie.compact.inline' = 'true', 'hoodie.compact.inline.max.delta.commits' = '2',"
                  if table_type == "mor" else "")
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', {compaction}
                       'hoodie.cleaner.commits.retained' = '1', type = '{table_type}')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
        session.sql(f"UPDATE {table_name} SET name = 'a2', ts = 2 WHERE id = 1")
        saved = commits(path)[-1]
        assert session.sql(f"CALL create_savepoint(table => '{table_name}', commit_time => '{saved}', "
                           "user => 'analyst', comments => 'before the nightly load')").collect()[0][0] is True
        assert [r["savepoint_time"] for r in session.sql(f"CALL show_savepoints(table => '{table_name}')"
                                                         ).collect()] == [saved]
        expected = rows(session, table_name)
        for version in range(3, 7):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 1)")
        session.sql(f"DELETE FROM {table_name} WHERE id = 2")
        assert rows(session, table_name) == [(1, "a6"), (3, "c")]
        # The cleaner keeps one commit, yet the savepointed versions stay readable.
        assert sorted((r["id"], r["name"]) for r in session.sql(
            f"SELECT id, name FROM {table_name} TIMESTAMP AS OF '{saved}'").collect()) == expected
        assert session.sql(f"CALL rollback_to_savepoint(table => '{table_name}', instant_time => '{saved}')"
                           ).collect()[0][0] is True
        assert commits(path)[-1] == saved
        assert rows(session, table_name) == expected == oracle(path)
        timeline = Table.load(str(path)).timeline
        assert [i.state.name for i in timeline if i.action == "restore"] == ["COMPLETED"]
        assert not [i for i in timeline if i.action == "rollback" and i.timestamp > saved]
        # Writing goes on from the savepoint.
        session.sql(f"UPDATE {table_name} SET name = 'b2', ts = 9 WHERE id = 2")
        assert rows(session, table_name) == oracle(path) == [(1, "a2"), (2, "b2")]
        assert session.sql(f"CALL delete_savepoint(table => '{table_name}', instant_time => '{saved}')"
                           ).collect()[0][0] is True
        assert session.sql(f"CALL show_savepoints(table => '{table_name}')").collect() == []
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_rollback_to_instant_undoes_the_latest_commit(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
        session.sql(f"UPDATE {table_name} SET name = 'a2', ts = 2 WHERE id = 1")
        first, second = commits(path)
        with pytest.raises(Exception, match="please rollback greater commits first"):
            session.sql(f"CALL rollback_to_instant(table => '{table_name}', instant_time => '{first}')").collect()
        with pytest.raises(Exception, match="Commit 20000101000000000 not found in Commits"):
            session.sql(f"CALL rollback_to_instant(table => '{table_name}', instant_time => '20000101000000000')"
                        ).collect()
        assert session.sql(f"CALL rollback_to_instant(table => '{table_name}', instant_time => '{second}')"
                           ).collect()[0][0] is True
        assert commits(path) == [first]
        assert rows(session, table_name) == oracle(path) == [(1, "a"), (2, "b")]
        shown = session.sql(f"CALL show_rollbacks(table => '{table_name}')").collect()
        assert [r["rollback_instant"] for r in shown] == [second] and shown[0]["total_files_deleted"] == 1
        detail = session.sql(f"CALL show_rollback_detail(table => '{table_name}', instant_time => "
                             f"'{shown[0]['instant']}')").collect()
        assert len(detail) == 1 and detail[0]["succeeded"] is True and second in detail[0]["deleted_file"]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_a_commit_the_cleaner_may_have_removed_cannot_be_savepointed(session: Session, table_name: str,
                                                                     tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '1')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
        for version in range(2, 5):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        oldest = commits(path)[0]
        assert session.sql(f"CALL create_savepoint(table => '{table_name}', commit_time => '{oldest}')"
                           ).collect()[0][0] is False
        assert session.sql(f"CALL show_savepoints(table => '{table_name}')").collect() == []
        with pytest.raises(Exception, match="There are no completed savepoint to run delete"):
            session.sql(f"CALL rollback_to_savepoint(table => '{table_name}', instant_time => '{oldest}')"
                        ).collect()
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_rollback_of_an_inflight_compaction(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
        session.sql(f"UPDATE {table_name} SET name = 'b', ts = 2 WHERE id = 1")
        scheduled = session.sql(f"CALL run_compaction(op => 'schedule', table => '{table_name}', options => "
                                "'hoodie.compact.inline.max.delta.commits=1')").collect()
        instant = scheduled[0]["timestamp"]
        timeline = Table.load(str(path)).timeline
        requested = next(i for i in timeline.pending_compactions() if i.timestamp == instant)
        timeline.transition_to_inflight(requested, b"")
        with pytest.raises(Exception, match="is not a pending compaction or clustering instant"):
            session.sql(f"CALL run_rollback_inflight_tableservice(table => '{table_name}', pending_instant => "
                        "'20000101000000000')").collect()
        row = session.sql(f"CALL run_rollback_inflight_tableservice(table => '{table_name}', pending_instant => "
                          f"'{instant}')").collect()[0]
        assert row["instant"] == instant and row["time_cost"] >= 0
        assert [i.state.name for i in Table.load(str(path)).timeline.pending_compactions()] == ["REQUESTED"]
        session.sql(f"CALL run_rollback_inflight_tableservice(table => '{table_name}', pending_instant => "
                    f"'{instant}', delete_request_instant_file => true)")
        assert Table.load(str(path)).timeline.pending_compactions() == []
        assert rows(session, table_name) == [(1, "b")]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_an_interrupted_restore_blocks_writers_until_it_is_run_again(session: Session, table_name: str,
                                                                     tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Hudi's rule (``startCommit``: "Found pending restore in active timeline"): a restore that stopped half way
    leaves the table at an intermediate commit; no write starts until the restore, run again to the same
    savepoint, finishes under its own instant."""
    import engine.services.savepoint as savepoint_module

    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
        saved = commits(path)[-1]
        session.sql(f"CALL create_savepoint(table => '{table_name}', commit_time => '{saved}')").collect()
        for version in range(2, 5):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        real_rollback = savepoint_module.rollback_instant
        calls = []

        def dies_on_the_second(*args: object, **kwargs: object) -> str:
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt("the restore's process stops here")
            return real_rollback(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(savepoint_module, "rollback_instant", dies_on_the_second)
        with pytest.raises(KeyboardInterrupt):
            savepoint_module.restore_to_savepoint(Table.load(str(path)), saved)
        monkeypatch.setattr(savepoint_module, "rollback_instant", real_rollback)
        pending = [i for i in Table.load(str(path)).timeline if i.action == "restore"]
        assert [i.state.name for i in pending] == ["INFLIGHT"]
        assert rows(session, table_name) == [(1, "a3"), (2, "b")]  # one of three updates undone
        with pytest.raises(Exception, match="pending restore.*" + pending[0].timestamp):
            session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 1)")
        assert rows(session, table_name) == [(1, "a3"), (2, "b")]
        assert session.sql(f"CALL rollback_to_savepoint(table => '{table_name}', instant_time => '{saved}')"
                           ).collect()[0][0] is True
        timeline = Table.load(str(path)).timeline
        assert [(i.timestamp, i.state.name) for i in timeline if i.action == "restore"] == \
            [(pending[0].timestamp, "COMPLETED")]
        assert commits(path)[-1] == saved
        assert rows(session, table_name) == oracle(path) == [(1, "a"), (2, "b")]
        session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 1)")
        assert rows(session, table_name) == oracle(path) == [(1, "a"), (2, "b"), (3, "c")]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_a_rollback_of_a_completed_commit_stopped_half_way_hides_it_and_the_next_writer_finishes(
        session: Session, table_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hudi's order (``CopyOnWriteRollbackActionExecutor``: "Unpublishing instant" before any file is deleted):
    a rollback_to_instant that stops after undoing part of a commit's files (here: the rollback block over its
    log update written, its new base file not yet deleted) leaves the commit pending, so every reader sees the
    table as it was before the commit, never half of it; the next writer redoes the rollback from its plan."""
    from engine.services.savepoint import rollback_to_instant
    from engine.storage import Storage

    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, p STRING) USING hudi
        PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x')")
        before = rows(session, table_name)
        session.sql(f"""MERGE INTO {table_name} t USING (SELECT 1 AS id, 'a2' AS name, 2L AS ts, 'x' AS p
                        UNION ALL SELECT 3, 'c', 2L, 'y') s ON t.id = s.id
                        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        target = commits(path)[-1]
        assert rows(session, table_name) == [(1, "a2"), (2, "b"), (3, "c")]
        real_delete = Storage.delete

        def stops_at_a_data_file(self: Storage, file: str) -> None:
            if "/.hoodie/" not in file and file.endswith(".parquet"):
                raise KeyboardInterrupt("the rollback's process stops here")
            real_delete(self, file)

        monkeypatch.setattr(Storage, "delete", stops_at_a_data_file)
        with pytest.raises(KeyboardInterrupt):
            rollback_to_instant(Table.load(str(path)), target)
        monkeypatch.setattr(Storage, "delete", real_delete)
        timeline = Table.load(str(path)).timeline
        assert target not in commits(path)  # unpublished before any file was touched
        assert [i.state.name for i in timeline if i.action == "rollback"] == ["INFLIGHT"]
        assert any((path / "p=y").glob(f"*_{target}.parquet"))  # its new base file is still there ...
        assert oracle(path) == rows(session, table_name) == before  # ... and no reader sees it
        session.sql(f"INSERT INTO {table_name} VALUES (4, 'd', 1, 'x')")  # the next writer finishes the rollback
        timeline = Table.load(str(path)).timeline
        assert [i.state.name for i in timeline if i.action == "rollback"] == ["COMPLETED"]
        assert not [i for i in timeline if i.timestamp == target]
        assert not any((path / "p=y").glob(f"*_{target}.parquet"))
        assert oracle(path) == rows(session, table_name) == [*before, (4, "d")]
    finally:
        session.sql(f"DROP TABLE {table_name}")
