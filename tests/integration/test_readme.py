"""Every README line runs as written: the set-up block's main job, then every SQL block and every Python
block, in the README's order, in a fresh folder (as a new user pastes them), each as its own process. These run
in the extended set (``-m extended``), to keep the default run under 20 minutes; the check that the README's
commands are the ones CI runs is in the default run.

The Python block that talks to ``sqlext serve`` gets a server started as the README's serve block starts
it, on a free port instead of 10000. The test command the README gives must be the one ``.ci/run`` runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
SQLEXT = [sys.executable, "-m", "sqlext.shell"]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(README.read_text(encoding="utf-8"))]


def setup_commands() -> list[str]:
    """The set-up block: install, the main job, the tests (comments stripped)."""
    first_bash = next(text for lang, text in blocks() if lang == "bash")
    return [line.split("#", 1)[0].strip() for line in first_bash.splitlines() if line.strip()]


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stderr[-3000:]}"
    return result


def no_error_lines(stderr: str) -> None:
    """Nothing a user would read as a failure: no error line from us, no JVM ERROR log line."""
    bad = [ln for ln in stderr.splitlines() if ln.startswith("Error") or " ERROR " in ln or "Traceback" in ln]
    assert not bad, "\n".join(bad[:20])


def test_the_readme_commands_match_ci() -> None:
    install, main_job, tests = setup_commands()
    assert install.startswith("pip install -e '.[test]'")
    assert main_job == "sqlext -f examples/quickstart.sql"
    assert tests in (ROOT / ".ci" / "run").read_text()


@pytest.mark.extended  # about four minutes of shell processes; test_the_readme_commands_match_ci runs by default
@pytest.mark.timeout(1200)
def test_the_main_job_and_every_readme_sql_block_run_in_order_in_a_fresh_folder(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if k != "SQLEXT_WAREHOUSE"}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYTHONPATH"] = str(ROOT)

    # The main job, as the set-up block writes it.
    main_job = shlex.split(setup_commands()[1])
    assert main_job[0] == "sqlext"
    quickstart = run([*SQLEXT, *main_job[1:]], tmp_path, env)
    no_error_lines(quickstart.stderr)
    assert "trip_id\trider\tfare\tcity" in quickstart.stdout  # the header the quickstart turns on
    assert (tmp_path / "warehouse" / "trips" / ".hoodie" / "hoodie.properties").is_file()

    # Every SQL block, in order, as one script.
    script = tmp_path / "readme.sql"
    script.write_text("\n".join(text for lang, text in blocks() if lang == "sql"))
    sql = run([*SQLEXT, "-f", str(script)], tmp_path, env)
    no_error_lines(sql.stderr)
    out = sql.stdout
    assert "7\trider-G\t12.25\tsao_paulo" in out  # the MERGE inserted the staged trip
    assert "2\trider-B\t31.00\tsan_francisco" in out  # and updated the other one
    assert "2\tb2\t2" in out  # the merge-on-read UPDATE, read through the log
    assert "COMPLETED" in out  # run_compaction ran, SHOW COMPACTION shows it
    assert "one of schedule, execute, scheduleAndExecute, run" in out  # CALL help(cmd => ...)


@pytest.mark.extended
@pytest.mark.timeout(1200)
def test_every_readme_python_block_runs_after_the_sql_blocks(tmp_path: Path) -> None:
    """The Python blocks (a PySpark session, PyHive over ``sqlext serve``) after the main job and the SQL
    blocks, as a user pastes them; left out of the default run (about three minutes of JVM starts)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if k != "SQLEXT_WAREHOUSE"}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYTHONPATH"] = str(ROOT)
    run([*SQLEXT, *shlex.split(setup_commands()[1])[1:]], tmp_path, env)
    script = tmp_path / "readme.sql"
    script.write_text("\n".join(text for lang, text in blocks() if lang == "sql"))
    run([*SQLEXT, "-f", str(script)], tmp_path, env)
    for lang, text in blocks():
        if lang != "python":
            continue
        if "hive.connect(" in text:
            python_over_jdbc(text, tmp_path, env)
        else:
            result = run([sys.executable, "-c", text], tmp_path, env)
            no_error_lines(result.stderr)
            assert "num_affected_rows" in result.stdout


def python_over_jdbc(text: str, cwd: Path, env: dict[str, str]) -> None:
    """Run a PyHive block against ``sqlext serve`` on a free port (the README's serve command)."""
    pytest.importorskip("pyhive")
    from hive_sync.metastore import free_port

    port = free_port()
    server = subprocess.Popen([*SQLEXT, "serve", "--port", str(port), "--host", "127.0.0.1"], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 300
        line = ""
        while time.monotonic() < deadline and not line.startswith("JDBC server ready"):
            line = server.stdout.readline()
            if not line and server.poll() is not None:
                raise AssertionError(f"sqlext serve exited: {server.stderr.read() if server.stderr else ''}")
        assert line.startswith(f"JDBC server ready: jdbc:hive2://127.0.0.1:{port}/default")
        assert "port=10000" in text
        result = run([sys.executable, "-c", text.replace("port=10000", f"port={port}")], cwd, env)
        assert "(1, " in result.stdout and "(8, " in result.stdout  # rows of trips, including the Python insert
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
