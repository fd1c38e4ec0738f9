"""``sqlext serve`` end to end: a merge-on-read table hive-synced into a real metastore, read by BI-style
clients (beeline and PyHive) over JDBC from a separate ``sqlext serve`` process that uses that metastore.

``_ro`` must return the base files only (pre-update values), ``_rt`` and the snapshot table the merged
rows (updates from the log files, new rows)."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from hive_sync.metastore import find_java, free_port, port_in_use, pyspark_jars_dir
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

TABLE = "jdbc_mor"
SERVER_START_TIMEOUT_S = 180.0
Rows = set[tuple[int, str]]



@dataclass
class ServeProcess:
    """A ``sqlext serve`` subprocess and where it listens / logs."""

    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    def log_tail(self) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-40:])

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while "JDBC server ready: jdbc:hive2://" not in self.log_path.read_text(errors="replace"):
            if self.proc.poll() is not None:
                pytest.fail(f"sqlext serve exited with {self.proc.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"sqlext serve not ready after {timeout_s:.0f} s:\n{self.log_tail()}")
            time.sleep(0.5)
        assert port_in_use(self.port)


@pytest.fixture(scope="module")
def serve_process(tmp_path_factory: pytest.TempPathFactory, metastore: str) -> Iterator[ServeProcess]:
    """``sqlext serve`` launched in a subprocess (own warehouse, the remote metastore), not yet waited for:
    it boots while the table is written. Stopped with SIGTERM at the end; a clean stop exits 0."""
    work = tmp_path_factory.mktemp("serve")
    port = free_port()
    log_path = work / "serve.log"
    cmd = [sys.executable, "-m", "sqlext.shell", "serve", "--port", str(port), "--host", "127.0.0.1",
           "--warehouse", str(work / "warehouse"), "--master", "local[2]",
           "--conf", "spark.sql.shuffle.partitions=2", "--hiveconf", f"hive.metastore.uris={metastore}", "-v"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=work, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    served = ServeProcess(proc, port, log_path)
    rc: int | None = None
    try:
        yield served
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    assert rc == 0, f"sqlext serve exit code {rc} after SIGTERM:\n{served.log_tail()}"
    assert not port_in_use(port)


@pytest.fixture(scope="module")
def synced_table(serve_process: ServeProcess, session: Session, metastore: str) -> str:
    """A MOR table whose file groups have log files, synced (``t``, ``t_ro``, ``t_rt``) after each commit;
    returns its base path. (Takes ``serve_process`` first so the server boots meanwhile.)"""
    session.sql(f"DROP TABLE IF EXISTS {TABLE}")
    session.sql(f"""CREATE TABLE {TABLE} (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.datasource.hive_sync.enable' = 'true',
                       'hoodie.datasource.hive_sync.metastore.uris' = '{metastore}')""")
    session.sql(f"INSERT INTO {TABLE} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y')")
    session.sql(f"UPDATE {TABLE} SET v = 'a2', ts = 2 WHERE id = 1")
    session.sql(f"INSERT INTO {TABLE} VALUES (3, 'c2', 2, 'y'), (4, 'd', 2, 'x')")
    entry = session.catalog.lookup_name(TABLE)
    assert entry is not None
    assert list(Path(entry.location).glob("p=*/.*.log.*")), "the updates should have written log files"
    return entry.location


def base_file_rows(base_path: str) -> Rows:
    """``(id, v)`` of every parquet base file (no compaction ran, so each file group has one base file:
    these are exactly the rows a read-optimized query returns)."""
    rows: Rows = set()
    for f in Path(base_path).glob("p=*/*.parquet"):
        rows |= {(r["id"], r["v"]) for r in pq.read_table(f, columns=["id", "v"]).to_pylist()}
    return rows


@pytest.fixture(scope="module")
def server(serve_process: ServeProcess, synced_table: str) -> int:
    """The port of the ready ``sqlext serve``, once the table is synced."""
    serve_process.wait_ready(SERVER_START_TIMEOUT_S)
    return serve_process.port


_BEELINE_PROMPT = re.compile(r"^(?:\d+: jdbc:hive2://\S*> |(?:\. )*\.> )+")
"""Beeline's prompt (``0: jdbc:hive2://...> ``, continuation ``. . .> ``), printed before the csv header."""


def beeline(port: int, sql: str) -> list[dict[str, str]]:
    """Run ``sql`` with beeline from the pyspark jars; the rows of its csv2 output."""
    cmd = [find_java(), "-cp", f"{pyspark_jars_dir()}/*", "org.apache.hive.beeline.BeeLine",
           "-u", f"jdbc:hive2://127.0.0.1:{port}/default", "-n", "x", "--outputformat=csv2", "--silent=true",
           "-e", sql]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"beeline failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    lines = [_BEELINE_PROMPT.sub("", line) for line in done.stdout.splitlines()]
    lines = [line for line in lines if line.strip()]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def pyhive_rows(port: int, sql: str) -> list[tuple[Any, ...]]:
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=port, username="x", auth="NONE")
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        return list(cursor.fetchall())
    finally:
        connection.close()


EXPECTED_RO = {(1, "a"), (2, "b"), (3, "c"), (4, "d")}
EXPECTED_RT = {(1, "a2"), (2, "b"), (3, "c2"), (4, "d")}


def test_expected_rows_match_the_files_and_the_oracle(synced_table: str) -> None:
    # Base files: the first commit's values (the update of 1 and the upsert of 3 went to log files) plus the
    # new key 4, which the second delta commit wrote as a new base file (a new file group), as Hudi does;
    # hudi-rs' snapshot: the merged rows.
    assert base_file_rows(synced_table) == EXPECTED_RO
    assert {(r["id"], r["v"]) for r in hudi_rs_rows(synced_table)} == EXPECTED_RT


@pytest.mark.extended  # a beeline JVM (~1 min); PyHive covers the default run
def test_beeline_reads_ro_and_rt(server: int) -> None:
    tables = {row["tableName"] for row in beeline(server, "SHOW TABLES IN default")}
    assert {TABLE, f"{TABLE}_ro", f"{TABLE}_rt"} <= tables
    # One beeline run (a JVM start each) for the three tables: read-optimized, real-time, snapshot.
    rows = beeline(server, " UNION ALL ".join(
        f"SELECT '{suffix or 'snapshot'}' AS q, id, v FROM default.{TABLE}{suffix}" for suffix in ("_ro", "_rt", ""))
        + " ORDER BY q, id")
    for query, expected in (("_ro", EXPECTED_RO), ("_rt", EXPECTED_RT), ("snapshot", EXPECTED_RT)):
        got = [(int(r["id"]), r["v"]) for r in rows if r["q"] == query]
        assert got == sorted(expected), query


def test_pyhive_reads_ro_and_rt(server: int) -> None:
    tables = {row[1] for row in pyhive_rows(server, "SHOW TABLES")}
    assert {TABLE, f"{TABLE}_ro", f"{TABLE}_rt"} <= tables
    ro = pyhive_rows(server, f"SELECT id, v FROM {TABLE}_ro ORDER BY id")
    rt = pyhive_rows(server, f"SELECT id, v FROM {TABLE}_rt ORDER BY id")
    assert ro == sorted(EXPECTED_RO)
    assert rt == sorted(EXPECTED_RT)
    partition = pyhive_rows(server, f"SELECT id, v, p FROM {TABLE}_rt WHERE p = 'x' ORDER BY id")
    assert partition == [(1, "a2", "x"), (2, "b", "x"), (4, "d", "x")]


def test_pyhive_time_travel_and_table_functions(server: int, synced_table: str) -> None:
    """Over JDBC (plain Spark SQL in the server), Hudi's instant form of TIMESTAMP AS OF and its table-valued
    functions work as in sqlext."""
    instants = sorted({r["_hoodie_commit_time"] for r in hudi_rs_rows(synced_table)})
    first = instants[0]
    as_of = pyhive_rows(server, f"SELECT id, v FROM {TABLE} TIMESTAMP AS OF '{first}' ORDER BY id")
    assert as_of == [(1, "a"), (2, "b"), (3, "c")]
    assert as_of == sorted((r["id"], r["v"]) for r in hudi_rs_rows(synced_table, as_of=first))
    changed = pyhive_rows(server, f"SELECT id, v FROM hudi_table_changes('{TABLE}', 'latest_state', '{first}') "
                                  "ORDER BY id")
    assert changed == [(1, "a2"), (3, "c2"), (4, "d")]
    assert pyhive_rows(server, f"SELECT count(*) FROM hudi_query('{TABLE}', 'snapshot')") == [(4,)]


def test_the_serve_output_names_pid_and_start_up_time_without_spark_submit_warnings(
        server: int, serve_process: ServeProcess) -> None:
    """What `sqlext serve --hiveconf hive.metastore.uris=...` prints: the ready line with the process id and
    the seconds since the command started (it said "ready after 0.0 s", the wait for the port alone), and no
    spark-submit "Ignoring non-Spark config property" although --hiveconf took effect (the tables above come
    from the remote metastore)."""
    log = serve_process.log_path.read_text(errors="replace")
    ready = re.search(r"^JDBC server ready: jdbc:hive2://127\.0\.0\.1:(\d+)/default \(pid (\d+), started in "
                      r"(\d+\.\d) s\)$", log, re.MULTILINE)
    assert ready is not None, log[-3000:]
    assert int(ready.group(1)) == server and int(ready.group(2)) == serve_process.proc.pid
    assert float(ready.group(3)) >= 1.0  # a JVM and a Spark session were started
    assert "Ignoring non-Spark config property" not in log, log[:3000]


def _refusal(port: int, sql: str, run_async: bool) -> tuple[str, list[str]]:
    """The error message and info messages (the server's stack lines) a JDBC client gets for ``sql``:
    run synchronously (PyHive's default: the error comes with ExecuteStatement) or asynchronously (beeline's
    way: the error comes with GetOperationStatus)."""
    from pyhive import hive
    from pyhive.exc import OperationalError
    from TCLIService.ttypes import TOperationState

    connection = hive.connect(host="127.0.0.1", port=port, username="x", auth="NONE")
    try:
        cursor = connection.cursor()
        if not run_async:
            with pytest.raises(OperationalError) as caught:
                cursor.execute(sql)
            status = caught.value.args[0].status
            return status.errorMessage, list(status.infoMessages or [])
        cursor.execute(sql, async_=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            response = cursor.poll()
            if response.operationState == TOperationState.ERROR_STATE:
                return response.errorMessage, []
            assert response.operationState not in (TOperationState.FINISHED_STATE,
                                                   TOperationState.CANCELED_STATE), response
            time.sleep(0.2)
        pytest.fail(f"no answer to {sql!r} within 120 s")
    finally:
        connection.close()


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_write_over_jdbc_is_refused_in_one_line(server: int, run_async: bool) -> None:
    """An INSERT sent by a JDBC client gets the refusal line alone: beeline showed it with ~85 lines of Java
    stack trace (the Thrift server sends an asynchronous statement's error as the whole printed stack of any
    exception, and a synchronous one's stack lines as info messages)."""
    message, info = _refusal(server, f"INSERT INTO {TABLE} VALUES (9, 'z', 9, 'x')", run_async)
    assert len(message.strip().splitlines()) == 1, message
    assert re.match(rf"INSERT on Hudi table (spark_catalog\.)?default\.{TABLE} is not run by plain Spark SQL",
                    message), message
    assert "sqlext shell" in message
    assert len(info) <= 1, info
    assert pyhive_rows(server, f"SELECT count(*) FROM {TABLE}") == [(4,)]


@pytest.mark.extended  # a beeline JVM (~1 min); the PyHive cases above cover the default run
def test_beeline_shows_a_refused_write_in_one_line(server: int) -> None:
    """What the user saw: beeline printed the refusal of an INSERT with ~85 lines of Java stack trace. Now its
    output holds the refusal line and no stack frame."""
    cmd = [find_java(), "-cp", f"{pyspark_jars_dir()}/*", "org.apache.hive.beeline.BeeLine",
           "-u", f"jdbc:hive2://127.0.0.1:{server}/default", "-n", "x", "--silent=true",
           "-e", f"INSERT INTO {TABLE} VALUES (9, 'z', 9, 'x')"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert re.search(rf"INSERT on Hudi table (spark_catalog\.)?default\.{TABLE} is not run by plain Spark SQL",
                     output), output
    frames = [line for line in output.splitlines() if re.match(r"\s+at [\w$.]+\(", line)]
    assert frames == [], output
