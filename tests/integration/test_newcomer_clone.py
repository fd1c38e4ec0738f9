"""A newcomer's first step, as a test: clone the repository into an empty folder and run the unit tests there.

The clone holds only what is committed (``HEAD``), so this catches a test, fixture or document that exists in
the working tree but not in the repository, and anything that reads a file beside the checkout. The clone's
own code is imported (``PYTHONPATH`` is the clone), with the interpreter running this test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_a_fresh_clone_passes_its_unit_tests(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the repository cannot be cloned")
    inside = git("rev-parse", "--is-inside-work-tree", cwd=ROOT)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        pytest.skip(f"{ROOT} is not a git checkout: there is nothing to clone")

    folder = tmp_path / "newcomer"
    folder.mkdir()
    clone = folder / "sqlext"
    cloned = git("clone", "--quiet", "--no-local", str(ROOT), str(clone), cwd=folder)
    assert cloned.returncode == 0, cloned.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["sqlext"]  # nothing beside the clone to lean on
    head = git("rev-parse", "HEAD", cwd=ROOT).stdout.strip()
    assert git("rev-parse", "HEAD", cwd=clone).stdout.strip() == head

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = str(clone)
    imported = subprocess.run([sys.executable, "-c", "import engine, sqlext, hive_sync, tests.conftest as c; "
                               "print(engine.__file__, sqlext.__file__, hive_sync.__file__, c.HUDI_FIXTURES)"],
                              cwd=clone, env=env, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert all(Path(p).is_relative_to(clone) for p in imported.stdout.split()), imported.stdout

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests/unit"],
                         cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    tail = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    summary = run.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), tail
    assert not re.search(r"\d+ (failed|errors?)\b", summary), tail
