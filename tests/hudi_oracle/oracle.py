"""The two sides of the comparison: Apache Hudi's Spark (a :mod:`runner` process) and sqlext's session.

Both answer a statement as an :class:`Answer` (rows as JSON-able values, or the error's class and message)."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hudi_oracle import setup
from tests.hudi_oracle.values import jsonable

RUNNER = Path(__file__).with_name("runner.py")
REQUEST_TIMEOUT_S = float(os.environ.get("SQLEXT_ORACLE_TIMEOUT", "600"))
"""Longest wait for one statement's answer from Hudi's runner (seconds)."""


@dataclass
class Answer:
    """One statement's outcome on one side."""

    ok: bool
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    error_class: str = ""
    message: str = ""
    seconds: float = 0.0

    def headline(self) -> str:
        """The error in one line (class and the message's first line), or the row count."""
        if self.ok:
            return f"{len(self.rows)} row(s)"
        lines = [line.strip() for line in self.message.strip().splitlines() if line.strip()]
        first = lines[0][:160] if lines else ""
        causes = [line for line in lines[1:] if re.match(r"^[\w.$]+(Exception|Error)\b.*:", line)]
        root = f" | cause: {causes[-1][:300]}" if causes else ""
        return f"{self.error_class}: {first}{root}"


class OracleUnavailable(RuntimeError):
    """Hudi's runner could not start or died."""


class HudiRunner:
    """Hudi 0.15.0 on Spark 3.5 in its own process (one per test session): ``sql()``, ``read(path)``."""

    def __init__(self, warehouse: Path, log: Path) -> None:
        status = setup.read_status()
        if not status.get("ok"):
            raise OracleUnavailable(str(status.get("reason")))
        self.warehouse = warehouse
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_HOME", "PYTHONPATH", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
        env["PYSPARK_PYTHON"] = str(status["python"])
        env["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory 1g --jars {status['jar']} pyspark-shell"
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log = log.open("w")
        start = time.monotonic()
        self._proc = subprocess.Popen([str(status["python"]), str(RUNNER), str(warehouse)], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                      text=True, bufsize=1)
        ready = self._receive()
        if not ready.get("ready"):
            raise OracleUnavailable(f"Hudi runner did not start: {ready} (log {log})")
        self.startup_seconds = time.monotonic() - start
        self.spark_version = str(ready.get("spark"))

    def _receive(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        readable, _, _ = select.select([self._proc.stdout], [], [], REQUEST_TIMEOUT_S)
        if not readable:
            self.close(kill=True)
            raise OracleUnavailable(f"Hudi runner gave no answer in {REQUEST_TIMEOUT_S} s")
        line = self._proc.stdout.readline()
        if not line:
            raise OracleUnavailable(f"Hudi runner exited with {self._proc.poll()} (see {self._log.name})")
        return dict(json.loads(line))

    def _ask(self, request: dict[str, Any]) -> Answer:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        a = self._receive()
        if a["ok"]:
            return Answer(True, a["columns"], a["rows"], seconds=a["seconds"])
        message = "\n".join([a["message"], *a.get("causes", [])])
        return Answer(False, error_class=a["class"], message=message, seconds=a["seconds"])

    def sql(self, statement: str) -> Answer:
        """Run one statement in Hudi's session."""
        return self._ask({"sql": statement})

    def read(self, path: str) -> Answer:
        """``spark.read.format("hudi").load(path)`` in Hudi's session."""
        return self._ask({"read": path})

    def close(self, kill: bool = False) -> None:
        """Stop the runner (politely unless ``kill``)."""
        if self._proc.poll() is None:
            try:
                if not kill and self._proc.stdin is not None:
                    self._proc.stdin.write(json.dumps({"quit": True}) + "\n")
                    self._proc.stdin.flush()
                    self._proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
        self._log.close()


def _df_answer(df: Any, start: float) -> Answer:
    rows = df.collect()
    return Answer(True, list(df.columns), [[jsonable(v) for v in r] for r in rows],
                  seconds=round(time.monotonic() - start, 3))


def _error_answer(e: Exception, start: float) -> Answer:
    java = getattr(e, "java_exception", None)
    cls = java.getClass().getName() if java is not None else type(e).__name__
    return Answer(False, error_class=cls, message=str(e)[:4000], seconds=round(time.monotonic() - start, 3))


def sqlext_sql(session: Any, statement: str) -> Answer:
    """Run one statement through ``sqlext``'s ``Session.sql`` and collect it."""
    start = time.monotonic()
    try:
        return _df_answer(session.sql(statement), start)
    except Exception as e:  # the error is the answer
        return _error_answer(e, start)


def sqlext_read(session: Any, path: str) -> Answer:
    """sqlext's ``hudi`` data source reading a table by path."""
    start = time.monotonic()
    try:
        return _df_answer(session.spark.read.format("hudi").load(path), start)
    except Exception as e:
        return _error_answer(e, start)


def hudi_rs_read(path: str) -> Answer:
    """hudi-rs (the ``hudi`` Python package) reading a table's snapshot."""
    from tests.conftest import hudi_rs_rows

    start = time.monotonic()
    try:
        rows = hudi_rs_rows(path)
    except Exception as e:
        return _error_answer(e, start)
    columns = list(rows[0]) if rows else []
    return Answer(True, columns, [[jsonable(r[c]) for c in columns] for r in rows],
                  seconds=round(time.monotonic() - start, 3))


def record(entry: dict[str, Any]) -> None:
    """Append one entry to the run log, ``$SQLEXT_ORACLE_HOME/last-run.jsonl`` (scripts, times, differences)."""
    log = setup.home() / "last-run.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        f.write(json.dumps({"time": time.time(), **entry}) + "\n")
