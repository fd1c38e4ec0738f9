"""Fixtures of the Hudi oracle: one Hudi runner per test session (skipped with the set-up's reason when the oracle
could not be set up), and a log of every script's outcome (``$SQLEXT_ORACLE_HOME/last-run.jsonl``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hudi_oracle import setup
from tests.hudi_oracle.oracle import HudiRunner, OracleUnavailable, record


@pytest.fixture(scope="session")
def hudi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HudiRunner]:
    """Apache Hudi 0.15.0's Spark session in its own process (``runner.py``)."""
    status = setup.read_status()
    if not status.get("ok"):
        pytest.skip(str(status.get("reason")))
    folder = tmp_path_factory.mktemp("hudi_oracle")
    try:
        runner = HudiRunner(folder / "warehouse", folder / "runner.log")
    except OracleUnavailable as e:
        pytest.skip(f"Hudi oracle unavailable: {e}")
    record({"event": "runner_started", "seconds": round(runner.startup_seconds, 1),
             "spark": runner.spark_version})
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def oracle_log() -> Path:
    """The run log (one JSON object a line)."""
    return setup.home() / "last-run.jsonl"

