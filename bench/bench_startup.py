"""Start-up of the ``sqlext`` shell against plain ``spark-sql`` and a plain PySpark session, on this machine.

Each case runs as a fresh process, ``--runs`` times after one warm-up run (the JVM catalog jar is built and
the Derby metastores exist before timing); the JSON gives every run and the median, in seconds:

- ``spark_sql_select1``: ``spark-sql -S -e "SELECT 1"`` from the pyspark wheel (its Derby metastore in cwd);
- ``pyspark_select1``: ``python -c`` building a Hive-enabled SparkSession and collecting ``SELECT 1``;
- ``sqlext_to_prompt``: ``sqlext -S`` reading ``quit;`` from stdin: start-up until the prompt answers;
- ``sqlext_select1`` / ``sqlext_show_tables``: ``sqlext -S -e ...`` (the second touches the catalog);
- ``sqlext_first_statements``: one ``sqlext -e`` running CREATE TABLE, a first and a second INSERT; the
  shell's own ``Time taken`` of each statement is reported under ``statement_seconds``.

Usage: ``python bench/bench_startup.py [--runs 3]``. Not a test; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
PYSPARK_SELECT1 = (
    "from pyspark.sql import SparkSession\n"
    "spark = SparkSession.builder.master('local[*]').config('spark.ui.enabled', 'false')"
    ".enableHiveSupport().getOrCreate()\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "assert spark.sql('SELECT 1').collect()[0][0] == 1\n"
)
STATEMENTS = ("CREATE TABLE IF NOT EXISTS start_t (id BIGINT, v STRING, ts BIGINT) USING hudi "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts'); "
              "INSERT INTO start_t VALUES (1, 'a', 1); INSERT INTO start_t VALUES (2, 'b', 1);")
TIME_TAKEN = re.compile(r"Time taken: ([\d.]+) seconds")


def timed(cmd: list[str], cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Seconds a command takes (it must succeed) and its stderr."""
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=600)
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return elapsed, result.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per case (after one warm-up)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    sqlext = [sys.executable, "-m", "sqlext.shell", "--warehouse", str(root / "wh")]
    plain = root / "plain"
    plain.mkdir()
    cases: dict[str, tuple[list[str], Path, str | None]] = {
        "spark_sql_select1": ([str(SPARK_HOME / "bin" / "spark-sql"), "-S", "-e", "SELECT 1"], plain, None),
        "pyspark_select1": ([sys.executable, "-c", PYSPARK_SELECT1], plain, None),
        "sqlext_to_prompt": ([*sqlext, "-S"], root, "quit;\n"),
        "sqlext_select1": ([*sqlext, "-S", "-e", "SELECT 1"], root, None),
        "sqlext_show_tables": ([*sqlext, "-S", "-e", "SHOW TABLES"], root, None),
    }
    report: dict[str, object] = {"runs": args.runs, "cpus": os.cpu_count()}
    try:
        for name, (cmd, cwd, stdin) in cases.items():
            timed(cmd, cwd, stdin, env)  # warm-up: metastores created, catalog jar built
            runs = [round(timed(cmd, cwd, stdin, env)[0], 2) for _ in range(args.runs)]
            report[name] = {"median_s": statistics.median(runs), "runs_s": runs}
        first: list[float] = []
        statements: list[list[float]] = []
        for _ in range(args.runs):
            shutil.rmtree(root / "wh", ignore_errors=True)
            elapsed, err = timed([*sqlext, "-e", STATEMENTS], root, None, env)
            first.append(round(elapsed, 2))
            statements.append([float(t) for t in TIME_TAKEN.findall(err)])
        report["sqlext_first_statements"] = {
            "median_s": statistics.median(first), "runs_s": first,
            "statement_seconds": {"create_table": statistics.median(s[0] for s in statements),
                                  "first_insert": statistics.median(s[1] for s in statements),
                                  "second_insert": statistics.median(s[2] for s in statements)},
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
