"""A writer on an embedded warehouse killed with ``kill -9`` and restarted at once (issue 31): the killed
session's Spark JVM, whose Python parent is gone, still holds the Derby metastore while it shuts down; the
restart waits for it (sqlext.embedded_metastore.check_not_busy) instead of being refused ("... admits one
process at a time", seen in 2 of 8 rounds). Each round starts two Spark processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow,
              pytest.mark.extended]  # two Spark processes per round besides the shared session

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 2

WRITER = """
import sys
import sqlext
session = sqlext.connect(warehouse=sys.argv[1], master="local[1]",
                         conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"})
session.sql("CREATE TABLE IF NOT EXISTS t (id INT, v STRING, ts INT) USING hudi "
            "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
print("ready", session.spark.sql("SELECT count(*) FROM t").collect()[0][0], flush=True)
if sys.argv[2] == "write-forever":
    n = 0
    while True:
        n += 1
        session.sql(f"INSERT INTO t VALUES ({n}, 'v{n}', {n})")
"""


def _writer(warehouse: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(warehouse), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=warehouse.parent)


def test_a_writer_killed_with_kill_9_restarts_at_once(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    for round_ in range(ROUNDS):
        writer = _writer(warehouse, "write-forever")
        assert writer.stdout is not None
        line = writer.stdout.readline()
        assert line.startswith("ready"), f"round {round_}: {line!r} {writer.stderr.read() if writer.stderr else ''}"
        time.sleep(3)  # an INSERT is under way
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        restarted = _writer(warehouse, "once")  # at once: the killed session's JVM may still hold the lock
        out, err = restarted.communicate(timeout=600)
        assert restarted.returncode == 0, f"round {round_}: {err[-3000:]}"
        assert out.startswith("ready"), out
        assert "admits one process at a time" not in err
