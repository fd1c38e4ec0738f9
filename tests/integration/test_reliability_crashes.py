"""The reliability suite's crash-anywhere cases, reduced for CI (issue 15): bench/bench_crashes.py kills (SIGKILL)
a clean, an archive, a rollback and a restore at seeded points among the storage and timeline calls a crash-free
run makes (and, in the extended set, upserts in their Spark driver or Python worker); after each, the next writer
runs. The script checks that hudi-rs reads the rows from before or from after the operation
(never a mix), plus the next writer's row, and that no write instant is left pending; here we check its report.
The full 200 points run from bench/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def crash_suite(tmp_path: Path, points: int, ops: str, seed: int, types: str = "COPY_ON_WRITE,MERGE_ON_READ"
                ) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_crashes.py"), "--points", str(points), "--ops", ops,
         "--seed", str(seed), "--types", types, "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=1200, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-5000:]
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_table_services_killed_anywhere_lose_nothing(tmp_path: Path) -> None:
    # Copy-on-write: its clean has files to delete with these options (merge-on-read's census may have none);
    # restore on merge-on-read runs by default in tests/spark/test_savepoints.py's interrupted restore.
    report = crash_suite(tmp_path, 4, "clean,archive,rollback,restore", 15, "COPY_ON_WRITE")
    assert report["all_checks_passed"] is True
    assert report["points"] == 4
    assert report["killed"] >= 3  # a run may take a shorter path than its census and finish before the point
    assert set(report["by_operation"]) == {"clean", "archive", "rollback", "restore"}  # type: ignore[arg-type]


@pytest.mark.extended  # two more Spark processes (about a minute); killed compactions and clusterings run by default
def test_writes_killed_anywhere_lose_nothing(tmp_path: Path) -> None:
    report = crash_suite(tmp_path, 2, "upsert", 7)
    assert report["all_checks_passed"] is True
    assert report["points"] == 2
