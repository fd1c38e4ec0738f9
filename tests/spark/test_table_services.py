"""Table services after commits, as a Hudi user relies on them: the cleaner bounds the file versions every
update leaves behind (automatically, or with ``CALL run_clean``), the clean procedures show what happened, and
commit callbacks reach a real HTTP server; query results and time travel within the retention are unchanged."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def base_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.rglob("*.parquet"))


def spark_incremental(session: Session, path: Path, begin: str, fallback: bool = False) -> list[tuple[object, ...]]:
    """(id, name) rows of an incremental read from ``begin``."""
    reader = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", begin)
    if fallback:
        reader = reader.option("hoodie.datasource.read.incr.fallback.fulltablescan.enable", "true")
    return sorted(tuple(r) for r in reader.load(str(path)).select("id", "name").collect())


def completed_commits(path: Path) -> list[str]:
    return [i.timestamp for i in Table.load(str(path)).timeline.completed_commits()]


def test_updates_no_longer_keep_every_file_version(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '2')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
        for version in range(2, 7):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        commits = completed_commits(path)
        assert len(commits) == 6
        # Two retained commits: the latest version, the one serving the earliest retained commit, and the
        # retained commit's own; older versions are gone.
        assert len(base_files(path)) == 3
        rows = sorted((r["id"], r["name"]) for r in hudi_rs_rows(path))
        assert rows == [(1, "a6"), (2, "b")]
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, name FROM {table_name}").collect()) == rows
        # Time travel to the earliest retained commit still reads, the same as hudi-rs.
        earliest = commits[-2]
        travelled = sorted(tuple(r) for r in session.sql(
            f"SELECT id, name FROM {table_name} TIMESTAMP AS OF '{earliest}'").collect())
        assert travelled == sorted((r["id"], r["name"]) for r in hudi_rs_rows(path, as_of=earliest)) == \
            [(1, "a5"), (2, "b")]
        cleans = session.sql(f"CALL show_cleans(table => '{table_name}')").collect()
        assert cleans and all(r["action"] == "clean" for r in cleans)
        assert sum(r["total_files_deleted"] for r in cleans) == 3
        assert cleans[0]["earliest_commit_to_retain"] == commits[-2]
        partitions = session.sql(f"CALL show_cleans_metadata(table => '{table_name}')").collect()
        assert {r["policy"] for r in partitions} == {"KEEP_LATEST_COMMITS"}
        assert sum(r["success_delete_files"] for r in partitions) == 3
        plans = session.sql(f"CALL show_clean_plans(table => '{table_name}', filter => \"policy = "
                            "'KEEP_LATEST_COMMITS'\")").collect()
        assert len(plans) == len(cleans) and all(r["total_partitions_to_clean"] == 1 for r in plans)
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_run_clean_procedure(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.clean.automatic' = 'false')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'd1'), (2, 'b', 1, 'd2')")
        for version in range(2, 5):
            session.sql(f"UPDATE {table_name} SET name = 'v{version}', ts = {version} WHERE id IN (1, 2)")
        assert len(base_files(path)) == 8  # no automatic clean
        assert session.sql(f"CALL run_clean(table => '{table_name}')").collect() == []  # 4 commits <= 10
        rows = session.sql(f"CALL run_clean(table => '{table_name}', retain_commits => 1)").collect()
        assert len(rows) == 1
        row = rows[0]
        assert row["total_files_deleted"] == 4 and row["version"] == 2
        assert row["earliest_commit_to_retain"] == completed_commits(path)[-1]
        assert json.loads(row["bootstrap_part_metadata"]) == {}
        assert len(base_files(path)) == 4
        assert session.sql(f"CALL run_clean(table => '{table_name}', retain_commits => 1)").collect() == []
        by_versions = session.sql(f"CALL run_clean(table => '{table_name}', clean_policy => "
                                  "'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1, "
                                  "trigger_max_commits => 0)").collect()
        assert by_versions[0]["total_files_deleted"] == 2 and len(base_files(path)) == 2
        assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(path)) == [(1, "v4"), (2, "v4")]
        with pytest.raises(Exception, match="clean_policy must be one of"):
            session.sql(f"CALL run_clean(table => '{table_name}', clean_policy => 'KEEP_ALL')").collect()
    finally:
        session.sql(f"DROP TABLE {table_name}")


class _Recorder(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        self.received.append({"headers": dict(self.headers), "body": json.loads(self.rfile.read(length))})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def callback_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hudi", _Recorder.received
    server.shutdown()
    server.server_close()


def test_commit_callbacks_reach_a_real_http_server(session: Session, table_name: str, tmp_path: Path,
                                                   callback_server: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = callback_server
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.write.commit.callback.on' = 'true',
                       'hoodie.write.commit.callback.http.url' = '{url}',
                       'hoodie.write.commit.callback.http.api.key' = 'secret-key',
                       'hoodie.write.commit.callback.http.custom.headers' = 'X-Team:lake;X-Env:test')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
        session.sql(f"UPDATE {table_name} SET name = 'b', ts = 2 WHERE id = 1")
        commits = completed_commits(path)
        assert [r["body"]["commitTime"] for r in received] == commits
        first = received[0]
        assert first["headers"]["HUDI-CALLBACK-KEY"] == "secret-key"
        assert first["headers"]["X-Team"] == "lake" and first["headers"]["X-Env"] == "test"
        assert first["headers"]["Content-Type"] == "application/json"
        body = first["body"]
        assert body["tableName"] == table_name and body["basePath"] == str(path)
        assert body["commitActionType"] == "commit"
        assert [s["path"].endswith(".parquet") for s in body["hoodieWriteStat"]] == [True]
        assert body["hoodieWriteStat"][0]["numInserts"] == 1
        # A callback that cannot be delivered is logged; the commit stands.
        session.sql(f"ALTER TABLE {table_name} SET TBLPROPERTIES "
                    "('hoodie.write.commit.callback.http.url' = 'http://127.0.0.1:9/nowhere')")
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'c', 1)")
        assert sorted(r["id"] for r in hudi_rs_rows(path)) == [1, 2]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_services_we_do_not_run_are_refused_before_writing(session: Session, table_name: str,
                                                           tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"CREATE TABLE {table_name} (id INT, ts BIGINT) USING hudi TBLPROPERTIES (primaryKey = 'id') "
                f"LOCATION '{path}'")
    try:
        for key, value, match in (("hoodie.clustering.updates.strategy",
                                   "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
                                   "only SparkRejectUpdateStrategy is implemented"),
                                  ("hoodie.write.commit.callback.on", "true", "needs hoodie.write.commit.callback"
                                                                              ".http.url")):
            session.sql(f"SET {key}={value}")
            try:
                with pytest.raises(Exception, match=match):
                    session.sql(f"INSERT INTO {table_name} VALUES (1, 1)")
            finally:
                session.sql(f"RESET {key}")
        assert completed_commits(path) == []
    finally:
        session.sql(f"DROP TABLE {table_name}")


@pytest.mark.parametrize("table_type", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
def test_archival_keeps_the_active_timeline_short_and_every_reader_right(
        session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}',
                       'hoodie.cleaner.commits.retained' = '1', 'hoodie.keep.min.commits' = '2',
                       'hoodie.keep.max.commits' = '3')
        LOCATION '{path}'""")
    try:
        for n in range(1, 7):  # each commit adds a partition: files of archived commits stay live
            session.sql(f"INSERT INTO {table_name} VALUES ({n}, 'v{n}', 1, 'd{n}')")
        session.sql(f"UPDATE {table_name} SET name = 'u1', ts = 2 WHERE id = 1")
        timeline = Table.load(str(path)).timeline
        assert len(timeline.completed_commits()) <= 3
        archived = sorted(p.name for p in (path / ".hoodie" / "archived").iterdir())
        assert archived and all(n.startswith(".commits_.archive.") for n in archived)
        expected = [(1, "u1")] + [(n, f"v{n}") for n in range(2, 7)]
        assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(path)) == expected
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, name FROM {table_name}").collect()) == expected
        shown = session.sql(f"CALL show_commits(table => '{table_name}', limit => 50, showArchived => true)").collect()
        # 7 writes; merge-on-read adds the inline compaction after the 5th delta commit (Hudi's data source default).
        assert len(shown) == (8 if table_type == "mor" else 7) and sum(r["total_records_written"] for r in shown if r["action"] != "commit"
                                       or table_type == "cow") >= 7
        assert len(session.sql(f"CALL show_commits(table => '{table_name}', limit => 50)").collect()) <= 3
        archived_rows = session.sql(f"CALL show_archived_commits(table => '{table_name}', limit => 50, "
                                    "startTs => '0', endTs => '99991231000000000')").collect()
        assert len(archived_rows) == len(shown) - len(Table.load(str(path)).timeline.completed_commits())
        per_file = session.sql(f"CALL show_archived_commits_metadata(table => '{table_name}', limit => 50, "
                               "startTs => '0', endTs => '99991231000000000')").collect()
        assert {r["commit_time"] for r in per_file} == {r["commit_time"] for r in archived_rows}
        timeline_rows = session.sql(f"CALL show_timeline(table => '{table_name}', limit => 100, showArchived => "
                                    "true)").collect()
        assert {r["timeline_type"] for r in timeline_rows} == {"ACTIVE", "ARCHIVED"}
        assert all(r["state"] == "COMPLETED" for r in timeline_rows if r["timeline_type"] == "ARCHIVED")
        # Incremental queries from before the active timeline (Hudi IncrementalRelation): the active commits of
        # the range only, or, with hoodie.datasource.read.incr.fallback.fulltablescan.enable, the latest
        # snapshot's rows committed after the begin instant.
        active = [i.timestamp for i in Table.load(str(path)).timeline.completed_commits()]
        first_written = min(r["_hoodie_commit_time"] for r in session.sql(
            f"SELECT _hoodie_commit_time FROM {table_name}").collect())
        begin = f"{int(first_written) - 1:017d}"
        incremental = spark_incremental(session, path, begin)
        assert incremental == sorted(tuple(r) for r in session.sql(
            f"SELECT id, name FROM {table_name} WHERE _hoodie_commit_time >= '{active[0]}'").collect())
        assert len(incremental) < len(expected)
        assert spark_incremental(session, path, begin, fallback=True) == expected
        if table_type == "cow":
            before = len(archived)
            session.sql(f"UPDATE {table_name} SET name = 'u2', ts = 3 WHERE id = 2")
            assert session.sql(f"CALL archive_commits(table => '{table_name}', min_commits => 2, max_commits => 3, "
                               "retain_commits => 1)").collect()[0]["result"] == 0
            assert len(list((path / ".hoodie" / "archived").iterdir())) >= before
            assert len(Table.load(str(path)).timeline.completed_commits()) <= 3
    finally:
        session.sql(f"DROP TABLE {table_name}")
