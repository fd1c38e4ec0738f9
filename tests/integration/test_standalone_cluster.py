"""Beyond one machine's ``local[*]``: a real Spark standalone cluster (a master and two workers started from the
pyspark wheel, each worker its own JVM with one core) runs the README's main job through the ``sqlext`` shell
(``--master spark://...``), then a MERGE INTO and a DELETE on a merge-on-read table and its compaction.

The driver is a fresh ``sqlext`` process with its own warehouse; the project reaches the executors' Python
workers only as a zip shipped with ``spark.submit.pyFiles`` (the workers run without ``PYTHONPATH``), as the
README's "Running on a cluster" says. Checked: the rows (the shell's output and the hudi-rs oracle), that the
compaction folded the logs into base files (read-optimized rows), and that the application's executors ran on
both workers, each of which fetched the zip.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyspark
import pytest

from hive_sync.metastore import free_port
from tests.conftest import hudi_rs_rows

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.cluster]

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
PACKAGES = ("engine", "sqlext", "hive_sync")
ZIP_NAME = "sqlext-packages.zip"

MOR_SQL = """
CREATE TABLE events (id BIGINT, v STRING, ts BIGINT) USING hudi
TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts');
INSERT INTO events VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 1);
MERGE INTO events t USING (SELECT * FROM VALUES (2, 'b2', 2), (4, 'd', 2) AS s(id, v, ts)) s
ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
DELETE FROM events WHERE id = 3;
SELECT id, v, ts FROM events ORDER BY id;
CALL run_compaction(op => 'run', table => 'events', options => 'hoodie.compact.inline.max.delta.commits=1');
"""


@dataclass
class Cluster:
    """A running standalone cluster: its master URL, web UI ports and the workers' work folders."""

    url: str
    master_ui: int
    worker_uis: list[int]
    worker_dirs: list[Path]


def _json(port: int) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/", timeout=10) as response:
        return json.load(response)


def _spark_class(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``<pyspark>/bin/spark-class <args>`` in its own process group (so teardown stops the daemon and the
    executor JVMs it forked, and nothing else)."""
    with log.open("wb") as out:
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _wait_for_workers(cluster: Cluster, processes: list[subprocess.Popen[bytes]], logs: list[Path]) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        for process, log in zip(processes, logs, strict=True):
            if process.poll() is not None:
                raise AssertionError(f"{log.name} exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if _json(cluster.master_ui).get("aliveworkers") == len(cluster.worker_uis):
                return
        except OSError:
            pass  # the master's UI is not up yet
        time.sleep(1)
    raise AssertionError("the workers did not register with the master in 240 s:\n" +
                         "\n".join(log.read_text()[-2000:] for log in logs))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and two workers (``--cores 1 --memory 1g``) on 127.0.0.1, stopped at teardown."""
    root = tmp_path_factory.mktemp("standalone")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "SPARK_WORKER_DIR")}
    env.update({"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                # no REST submission server: it would take the fixed port 6066
                "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"})
    port, master_ui = free_port(), free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", master_ui, [free_port(), free_port()],
                      [root / "worker-1", root / "worker-2"])
    processes: list[subprocess.Popen[bytes]] = []
    logs = [root / "master.log"]
    try:
        processes.append(_spark_class(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                                       str(port), "--webui-port", str(master_ui)], env, logs[0]))
        for ui, folder in zip(cluster.worker_uis, cluster.worker_dirs, strict=True):
            folder.mkdir()
            logs.append(root / f"{folder.name}.log")
            processes.append(_spark_class(
                ["org.apache.spark.deploy.worker.Worker", cluster.url, "--host", "127.0.0.1", "--cores", "1",
                 "--memory", "1g", "--webui-port", str(ui), "--work-dir", str(folder)],
                {**env, "SPARK_WORKER_DIR": str(folder)}, logs[-1]))
        _wait_for_workers(cluster, processes, logs)
        yield cluster
    finally:
        for process in reversed(processes):
            _stop(process)


def _package_zip(folder: Path) -> Path:
    """The project's three packages as one zip (what ``--py-files`` ships), package data included."""
    target = folder / ZIP_NAME
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in PACKAGES:
            for path in sorted((ROOT / package).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    archive.write(path, path.relative_to(ROOT))
    return target


def _last_result(stdout: str, header: str) -> list[list[str]]:
    """The rows printed under the last occurrence of ``header`` (tab-separated, as spark-sql prints): the lines
    after it that start with a digit (every result read here starts with a number; the next header does not)."""
    lines = stdout.splitlines()
    start = max(i for i, line in enumerate(lines) if line == header)
    rows = []
    for line in lines[start + 1:]:
        if not line[:1].isdigit():
            break
        rows.append(line.split("\t"))
    return rows


@pytest.mark.timeout(900)
def test_main_job_merge_and_compaction_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    script = job / "cluster.sql"
    script.write_text((ROOT / "examples" / "quickstart.sql").read_text(encoding="utf-8") + MOR_SQL, encoding="utf-8")
    packages = _package_zip(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("SQLEXT_WAREHOUSE", "SPARK_HOME")}
    env.update({"PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"})
    confs = {"spark.submit.pyFiles": str(packages), "spark.executor.memory": "512m",
             "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
             "spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
             "spark.ui.showConsoleProgress": "false"}
    command = [sys.executable, "-m", "sqlext.shell", "--master", cluster.url, "--warehouse", str(job / "warehouse"),
               *[arg for key, value in confs.items() for arg in ("--conf", f"{key}={value}")], "-f", str(script)]
    result = subprocess.run(command, cwd=job, env=env, capture_output=True, text=True, timeout=840)
    assert result.returncode == 0, f"sqlext failed ({result.returncode}):\n{result.stderr[-4000:]}"
    assert "Traceback" not in result.stderr
    found = re.search(rf"Spark master: {re.escape(cluster.url)}, Application Id: (app-\S+)", result.stderr)
    assert found, result.stderr[-2000:]
    app = found.group(1)

    # The README's main job: its last listing of trips, then hudi-rs reading the table it left.
    trips = [(int(r[0]), r[1], r[2], r[3]) for r in
             _last_result(result.stdout, "trip_id\trider\tfare\tcity\t_hoodie_commit_time")]
    expected_trips = [(1, "rider-A", "19.10", "san_francisco"), (2, "rider-B", "29.00", "san_francisco"),
                      (3, "rider-C", "67.80", "sao_paulo"), (4, "rider-D", "34.15", "chennai"),
                      (6, "rider-F", "41.06", "sao_paulo")]
    assert trips == expected_trips
    oracle = sorted((r["trip_id"], r["rider"], r["fare"], r["city"])
                    for r in hudi_rs_rows(job / "warehouse" / "trips"))
    assert oracle == [(i, rider, Decimal(fare), city) for i, rider, fare, city in expected_trips]

    # The merge-on-read MERGE and DELETE (a log data block and a delete block, written and read by executors
    # that import the zipped engine), then the compaction.
    expected_events = [(1, "a", 1), (2, "b2", 2), (4, "d", 2)]
    merged = [(int(i), v, int(ts)) for i, v, ts in _last_result(result.stdout, "id\tv\tts")]
    assert merged == expected_events
    compactions = _last_result(result.stdout, "timestamp\toperation_size\tstate")
    assert len(compactions) == 1 and compactions[0][2] == "COMPLETED", result.stdout[-2000:]
    events = job / "warehouse" / "events"
    for read in ({}, {"read_optimized": "true"}):  # read-optimized: base files only, so the logs were compacted
        assert sorted((r["id"], r["v"], r["ts"]) for r in hudi_rs_rows(events, **read)) == expected_events

    # Executors ran in separate JVMs on both workers, and each fetched the shipped packages.
    for ui, folder in zip(cluster.worker_uis, cluster.worker_dirs, strict=True):
        worker = _json(ui)
        ran = [e for e in worker["executors"] + worker["finishedexecutors"] if e["appid"] == app]
        assert ran, f"no executor of {app} on worker {worker['id']}"
        assert list((folder / app).glob(f"*/{ZIP_NAME}")), f"{ZIP_NAME} not fetched by {worker['id']}"
    apps = [a for a in _json(cluster.master_ui)["completedapps"] + _json(cluster.master_ui)["activeapps"]
            if a["id"] == app]
    assert apps and apps[0]["cores"] == 2
