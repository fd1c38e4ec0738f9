"""Peak memory of one compaction task against ``hoodie.memory.merge.max.size``; prints one JSON document.

Builds two merge-on-read tables from the 1995 rows of TPC-H lineitem (about 910k rows): ``li95`` with two
file groups, ``li95_single`` with one (twice the rows and log of li95's). Updates every row (one large log
per file group), schedules a compaction, then runs the compaction task of the largest file group
(``engine.services.compaction.compact_operation``, the code a Spark task runs) in a fresh Python process per
setting, with the environment sqlext gives Spark Python workers (``spark.executorEnv.*``), sampling that
process's RSS and Arrow memory pool every 5 ms. The baseline is the RSS just before the task, with the
libraries a Spark Python worker has loaded (pyarrow, pandas). Reported per setting: peak RSS above the
baseline, the Arrow pool's peak, seconds, whether the merge spilled and the largest partition group folded
in memory.

Besides the log records (bounded by ``merge.max.size``), a task holds what any rewrite of the base file
holds: one decoded row group of the base file (pyarrow decodes a row group whole) and the new file's pending
row group (up to ``hoodie.parquet.block.size`` of Arrow data, 120 MB by default, as parquet-mr buffers a
row group for Hudi). ``*_rewrite_only*`` measures that floor: the same task with the log files left out of
the operation. ``merge_added_mb`` is a setting's peak minus the floor at the same block size: the memory the
log merge costs, which ``merge.max.size`` bounds. The ``_block_`` settings shrink the row group too.

A bounded merge shows as the same peak for both tables at the same settings.

Usage: ``python bench/bench_compaction_memory.py --data bench/data/sf1 [--limits-mb 16,64,1024]
[--small-blocks-mb 16]``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_cow import bench_main  # same folder (run as a script)

TASK = r"""
import json, logging, re, sys, threading, time
import pandas  # noqa: F401  (loaded in every Spark Python worker, so part of the baseline)
import psutil
import pyarrow as pa
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
logging.getLogger("engine.read").setLevel(logging.DEBUG)
from engine.config import HoodieConfig
from engine.services.compaction import compaction_context, read_plan
from engine.table import Table
from engine.write.handles import TaskIdentity
from engine.services.compaction import compact_operation

location, instant, file_id, limit, spill, attempt, block, logs = sys.argv[1:9]
table = Table.load(location)
conf = table.config.overlay({"hoodie.memory.merge.max.size": limit, "hoodie.memory.spillable.map.path": spill,
                             **({"hoodie.parquet.block.size": block} if block != "default" else {})})
ctx = compaction_context(table, instant, conf)
op = next(o for o in read_plan(table, instant) if o.file_id == file_id)
if logs == "without-logs":  # the same base file rewritten, no log to merge: the task's floor
    import dataclasses
    op = dataclasses.replace(op, log_file_names=())
process = psutil.Process()
baseline = process.memory_info().rss
peak = baseline
arrow_peak = 0
done = threading.Event()

def sample():
    global peak, arrow_peak
    while not done.is_set():
        peak = max(peak, process.memory_info().rss)
        arrow_peak = max(arrow_peak, pa.total_allocated_bytes())
        time.sleep(0.005)

thread = threading.Thread(target=sample, daemon=True)
thread.start()
start = time.monotonic()
stat = compact_operation(ctx, op, TaskIdentity(int(attempt), 9, int(attempt)))
seconds = time.monotonic() - start
done.set()
thread.join()
peak = max(peak, process.memory_info().rss)
print(json.dumps({"peak_above_baseline_mb": round((peak - baseline) / 2**20, 1),
                  "arrow_pool_peak_mb": round(arrow_peak / 2**20, 1),
                  "baseline_rss_mb": round(baseline / 2**20, 1), "seconds": round(seconds, 2),
                  "rows_written": stat.num_writes}))
"""


def _largest_operation(location: str) -> tuple[str, Any]:
    """Schedule a compaction of every file group; return its instant and the largest operation."""
    from engine.services.compaction import read_plan, schedule_compaction
    from engine.table import Table

    table = Table.load(location)
    instant = schedule_compaction(table, table.config.overlay({"hoodie.compact.inline.max.delta.commits": "1"}),
                                  force=True)
    assert instant is not None
    operations = read_plan(Table.load(location), instant)
    return instant, max(operations, key=lambda o: float(o.metrics.get("TOTAL_LOG_FILES_SIZE", 0)))


def _worker_environment() -> dict[str, str]:
    """This process's environment plus the ``spark.executorEnv.*`` variables sqlext's sessions give Spark
    Python workers (the environment a compaction task runs in)."""
    from sqlext.session import session_conf

    prefix = "spark.executorEnv."
    extra = {k[len(prefix):]: v for k, v in session_conf(Path.cwd()).items() if k.startswith(prefix)}
    return {**os.environ, **extra}


def _run_task(work: Path, location: str, instant: str, file_id: str, limit_mb: int, block: str,
              attempt: int, logs: str = "with-logs") -> dict[str, Any]:
    spill = work / f"spill{attempt}"
    spill.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", TASK, location, instant, file_id, str(limit_mb * 2**20), str(spill),
         str(attempt), block, logs], capture_output=True, text=True, check=True, env=_worker_environment())
    measured: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    measured["spilled"] = "spilling to" in out.stderr
    group = re.search(r"largest group (\d+) bytes", out.stderr)
    if group:
        measured["largest_spilled_group_mb"] = round(int(group.group(1)) / 2**20, 1)
    return measured


def run(data: Path, work: Path, limits_mb: str, small_blocks_mb: str) -> dict[str, Any]:
    import sqlext

    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    lineitem = f"parquet.`{data}/lineitem.parquet`"
    locations = {}
    # li95: two file groups of ~470k rows; li95_single: the same rows in one file group (twice the log).
    for name, parallelism in (("li95", "0"), ("li95_single", "1")):
        session.sql(f"SET hoodie.bulkinsert.shuffle.parallelism={parallelism}").collect()
        session.sql(f"""CREATE TABLE {name} USING hudi TBLPROPERTIES (type = 'mor',
            primaryKey = 'l_orderkey,l_linenumber') AS SELECT * FROM {lineitem} WHERE year(l_shipdate) = 1995""").collect()
        session.sql(f"UPDATE {name} SET l_comment = concat(l_comment, ' (revised)')").collect()
        locations[name] = session.catalog.lookup_name(name).location  # type: ignore[union-attr]
    session.stop()

    results: dict[str, Any] = {"tasks": {}}
    attempt = 0
    for name, location in locations.items():
        instant, largest = _largest_operation(location)
        results[f"{name}_file_group"] = {
            "log_mb": round(float(largest.metrics.get("TOTAL_LOG_FILES_SIZE", 0)) / 2**20, 1),
            "base_file": largest.base_file_name,
        }
        settings = [(int(x), "default") for x in limits_mb.split(",")] if name == "li95" else \
            [(int(limits_mb.split(",")[0]), "default")]
        settings += [(int(x), str(int(x) * 2**20)) for x in small_blocks_mb.split(",") if x]
        floors: dict[str, float] = {}
        for block in dict.fromkeys(block for _, block in settings):
            attempt += 1
            suffix = "" if block == "default" else f"_block_{int(block) >> 20}mb"
            measured = _run_task(work, location, instant, largest.file_id, 16, block, attempt, "without-logs")
            results["tasks"][f"{name}_rewrite_only{suffix}"] = measured
            floors[block] = measured["peak_above_baseline_mb"]
        for limit_mb, block in settings:
            attempt += 1
            measured = _run_task(work, location, instant, largest.file_id, limit_mb, block, attempt)
            measured["merge_added_mb"] = round(measured["peak_above_baseline_mb"] - floors[block], 1)
            suffix = "" if block == "default" else f"_block_{int(block) >> 20}mb"
            results["tasks"][f"{name}_merge_max_{limit_mb}mb{suffix}"] = measured
    return results


def main(argv: list[str] | None = None) -> int:
    """``--data``, ``--work`` as bench_cow; ``--limits-mb`` comma list of merge.max.size values (MiB) run at
    the default ``hoodie.parquet.block.size``; ``--small-blocks-mb`` values run with merge.max.size and
    block.size both set to the value (the task's floor when the writer's row group is small too)."""
    return bench_main(run, __doc__.splitlines()[0], argv, limits_mb="16,64,1024", small_blocks_mb="16")


if __name__ == "__main__":
    raise SystemExit(main())
