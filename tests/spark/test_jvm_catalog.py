"""The session-catalog cases need their own JVM (they register a toy ``hudi`` data source and start
sessions with other metastores), so they run in a separate pytest process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]  # ~3 min: -m extended

CASES = Path(__file__).parent / "isolated" / "jvm_catalog_cases.py"


def test_session_catalog_cases_pass_in_their_own_process() -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)],
        capture_output=True, text=True, timeout=900, env=env, cwd=Path(__file__).resolve().parents[2],
    )
    tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
    assert result.returncode == 0, tail
    assert " passed" in result.stdout and "skipped" not in result.stdout.splitlines()[-1], tail
