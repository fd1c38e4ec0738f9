"""The reliability suite's concurrent writers, reduced for CI (issue 15): bench/bench_concurrency.py with two
writer processes — each its own sqlext session and Spark driver, their catalogs registering one LOCATION —
MERGEing overlapping keys of a merge-on-read table under optimistic concurrency control with the file-system
lock. The script itself checks that every batch committed exactly once or reported a conflict, and that the
table hudi-rs reads equals a serial replay of the committed batches; here we check what it reports. The full
counts (1, 2, 4, 8 writers; copy-on-write and merge-on-read; disjoint and overlapping keys) run from bench/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_two_writer_processes_on_overlapping_keys(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_concurrency.py"), "--writers", "2", "--batches", "1",
         "--types", "mor", "--modes", "overlap", "--keys", "8", "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert report["lock"].endswith("FileSystemBasedLockProvider")
    (case,) = report["results"]
    assert case["writers"] == 2 and case["batches_each"] == 1
    assert case["committed"] + case["gave_up"] == 2
    assert case["committed"] >= 1
    assert case["checked"]["commits"] == case["committed"]
    # Each attempt either committed its batch or lost a conflict (no other error, no attempt unaccounted for).
    assert case["attempts"] == case["committed"] + case["conflicts"]
