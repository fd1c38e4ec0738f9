"""Table services killed (SIGKILL) at their requested, inflight and half-written stages: the next run rolls the
partial work back or completes it, and nothing is lost — the rows read the same (ours and hudi-rs's) before
the crash, after it and after the next run, and no file of the crashed attempt stays behind uncommitted."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

CRASHING_SERVICE = textwrap.dedent("""
    import os, signal, sys
    base, service, stage = sys.argv[1:4]
    options = dict(kv.split("=", 1) for kv in sys.argv[4].split(",") if kv)

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    from engine.table import Table
    table = Table.load(base)
    conf = table.config.overlay(options)
    if service == "clean":
        from engine.storage import Storage
        from engine.services.clean import run_clean
        real_delete = Storage.delete
        calls = []
        def delete_then_die(self, path):  # the first file goes, then the process is killed
            real_delete(self, path)
            calls.append(path)
            die()
        Storage.delete = delete_then_die
        run_clean(table, conf, force=True)
        sys.exit(3)
    if service == "clustering" and stage == "requested":
        from engine.services.clustering import schedule_clustering
        schedule_clustering(table, conf)
        die()
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    if service == "clustering":
        import engine.spark.clustering as clustering
        from engine.services.clustering import schedule_clustering
        instant, _ = schedule_clustering(table, conf)
        if stage == "inflight":
            clustering._run_groups = die            # inflight on the timeline, nothing written yet
        else:
            clustering.complete_clustering = die    # every file written, no commit
        clustering.execute_clustering(spark, table, instant, options)
    else:
        import engine.spark.compaction as compaction
        from engine.services.compaction import schedule_compaction
        instant = schedule_compaction(table, conf, force=True)
        compaction.complete_compaction = die
        compaction.execute_compaction(spark, table, instant, options)
    sys.exit(3)
""")


def crash(tmp_path: Path, base: Path, service: str, stage: str, extra: str = "") -> None:
    script = tmp_path / "crash_service.py"
    script.write_text(CRASHING_SERVICE)
    result = subprocess.run([sys.executable, str(script), str(base), service, stage, extra], capture_output=True,
                            text=True, timeout=300)
    # The killed process's heartbeat counts as expired at once: its owner process is gone (same host).
    assert result.returncode == -9, result.stderr[-2000:]


def rows(session: Session, name: str, path: Path) -> list[tuple[object, ...]]:
    ours = sorted(tuple(r) for r in session.sql(f"SELECT id, name, ts FROM {name}").collect())
    theirs = sorted((r["id"], r["name"], r["ts"]) for r in hudi_rs_rows(path))
    assert ours == theirs
    return ours


def files_of(path: Path, instant: str) -> set[str]:
    return {p.name for p in path.rglob(f"*{instant}*") if ".hoodie" not in p.parts}


def committed_files(path: Path, instant: str) -> set[str]:
    table = Table.load(str(path))
    metadata = table.commit_metadata([i for i in table.timeline.completed_commits() if i.timestamp == instant][0])
    return {s.path.rsplit("/", 1)[-1] for s in metadata.all_write_stats() if s.path}


def _table(session: Session, name: str, path: Path, table_type: str) -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
        TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts',
        'hoodie.parquet.small.file.limit' = '0') LOCATION '{path}'""")
    for n in range(3):
        session.sql(f"INSERT INTO {name} VALUES ({2 * n}, 'a{n}', {n}, 'd1'), ({2 * n + 1}, 'b{n}', {n}, 'd2')")


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["requested", pytest.param("written", marks=pytest.mark.extended)])
def test_killed_clustering_is_completed_by_the_next_run(session: Session, table_name: str, tmp_path: Path,
                                                        stage: str) -> None:
    path = tmp_path / table_name
    _table(session, table_name, path, "cow")
    try:
        before = rows(session, table_name, path)
        crash(tmp_path, path, "clustering", stage)
        table = Table.load(str(path))
        pending = [i for i in table.timeline.pending() if i.action == "replacecommit"]
        assert len(pending) == 1 and pending[0].state.name == ("REQUESTED" if stage == "requested" else "INFLIGHT")
        instant = pending[0].timestamp
        if stage == "written":
            assert files_of(path, instant), "the killed clustering should have written files"
        assert rows(session, table_name, path) == before  # readers never see the uncommitted files
        # Writes to the other partitions' file groups wait; the clustering is re-run with the call.
        done = session.sql(f"CALL run_clustering(table => '{table_name}', op => 'execute')").collect()
        assert [(r["timestamp"], r["state"]) for r in done] == [(instant, "COMPLETED")]
        assert rows(session, table_name, path) == before
        assert files_of(path, instant) == committed_files(path, instant)
        session.sql(f"UPDATE {table_name} SET name = 'z' WHERE id = 0")
        assert (0, "z", 0) in rows(session, table_name, path)
    finally:
        session.sql(f"DROP TABLE {table_name}")


@pytest.mark.slow
@pytest.mark.extended  # bench/bench_crashes.py kills compactions at seeded points
def test_killed_compaction_is_completed_by_the_next_run(session: Session, table_name: str,
                                                                   tmp_path: Path) -> None:
    path = tmp_path / table_name
    _table(session, table_name, path, "mor")
    try:
        session.sql(f"UPDATE {table_name} SET name = 'u' WHERE id IN (0, 1)")
        before = rows(session, table_name, path)
        crash(tmp_path, path, "compaction", "written")
        table = Table.load(str(path))
        pending = [i for i in table.timeline.pending() if i.action == "compaction"]
        assert len(pending) == 1 and pending[0].state.name == "INFLIGHT"
        instant = pending[0].timestamp
        assert files_of(path, instant)
        assert rows(session, table_name, path) == before
        done = session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')").collect()
        assert [(r["timestamp"], r["state"]) for r in done] == [(instant, "COMPLETED")]
        assert rows(session, table_name, path) == before
        assert files_of(path, instant) == committed_files(path, instant)

    finally:
        session.sql(f"DROP TABLE {table_name}")


@pytest.mark.slow
def test_killed_clean_is_completed_by_the_next_run(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    _table(session, table_name, path, "cow")
    try:
        for n in range(2):  # two new versions of the file groups of ids 0 and 1: the first ones can go
            session.sql(f"UPDATE {table_name} SET name = 'u{n}' WHERE id IN (0, 1)")
        before = rows(session, table_name, path)
        # Killed after deleting the first of the plan's files: the next clean finishes the plan.
        crash(tmp_path, path, "clean", "written", "hoodie.cleaner.commits.retained=1")
        table = Table.load(str(path))
        pending = [i for i in table.timeline.pending() if i.action == "clean"]
        assert len(pending) == 1 and pending[0].state.name == "INFLIGHT"
        assert rows(session, table_name, path) == before
        session.sql(f"CALL run_clean(table => '{table_name}')").collect()
        table = Table.load(str(path))
        assert not [i for i in table.timeline.pending() if i.action == "clean"]
        cleans = [i for i in table.timeline.completed() if i.action == "clean"]
        assert [c.timestamp for c in cleans][:1] == [pending[0].timestamp]
        shown = session.sql(f"CALL show_cleans_metadata(table => '{table_name}')").collect()
        assert sum(r["success_delete_files"] for r in shown) + sum(r["failed_delete_files"] for r in shown) == 2
        assert rows(session, table_name, path) == before
    finally:
        session.sql(f"DROP TABLE {table_name}")
