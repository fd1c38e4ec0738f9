"""Peak memory of one compaction task against ``hoodie.memory.merge.max.size``; prints one JSON document.

Builds a merge-on-read table from the 1995 rows of TPC-H lineitem (about 910k rows), updates every row
(one large log per file group), schedules a compaction, then runs the compaction task of the largest file
group (``engine.services.compaction.compact_operation``, the code a Spark task runs) in a fresh Python
process per setting, sampling that process's RSS and Arrow memory pool every 5 ms. Reported per
``merge.max.size``: peak RSS above the process's RSS just before the task, the Arrow pool's peak, seconds,
and whether the merge spilled.

Usage: ``python bench/bench_compaction_memory.py --data bench/data/sf1 [--limits-mb 16,64,1024]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_cow import bench_main  # same folder (run as a script)

TASK = r"""
import json, logging, sys, threading, time
import psutil
import pyarrow as pa
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from engine.config import HoodieConfig
from engine.services.compaction import compaction_context, read_plan
from engine.table import Table
from engine.write.handles import TaskIdentity
from engine.services.compaction import compact_operation

location, instant, file_id, limit, spill, attempt = sys.argv[1:7]
table = Table.load(location)
conf = table.config.overlay({"hoodie.memory.merge.max.size": limit, "hoodie.memory.spillable.map.path": spill})
ctx = compaction_context(table, instant, conf)
op = next(o for o in read_plan(table, instant) if o.file_id == file_id)
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


def run(data: Path, work: Path, limits_mb: str) -> dict[str, Any]:
    import sqlext
    from engine.services.compaction import read_plan, schedule_compaction
    from engine.table import Table

    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    session.sql(f"""CREATE TABLE li95 USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'l_orderkey,l_linenumber')
        AS SELECT * FROM parquet.`{data}/lineitem.parquet` WHERE year(l_shipdate) = 1995""").collect()
    session.sql("UPDATE li95 SET l_comment = concat(l_comment, ' (revised)')").collect()
    location = session.catalog.lookup_name("li95").location  # type: ignore[union-attr]
    session.stop()

    table = Table.load(location)
    instant = schedule_compaction(table, table.config.overlay({"hoodie.compact.inline.max.delta.commits": "1"}),
                                  force=True)
    assert instant is not None
    operations = read_plan(Table.load(location), instant)
    largest = max(operations, key=lambda o: float(o.metrics.get("TOTAL_LOG_FILES_SIZE", 0)))
    results: dict[str, Any] = {
        "file_groups": len(operations),
        "largest_log_mb": round(float(largest.metrics.get("TOTAL_LOG_FILES_SIZE", 0)) / 2**20, 1),
        "largest_base_file": largest.base_file_name,
        "tasks": {},
    }
    for attempt, limit_mb in enumerate(int(x) for x in limits_mb.split(",")):
        spill = work / f"spill{attempt}"
        spill.mkdir()
        out = subprocess.run(
            [sys.executable, "-c", TASK, location, instant, largest.file_id, str(limit_mb * 2**20), str(spill),
             str(attempt + 1)], capture_output=True, text=True, check=True)
        measured = json.loads(out.stdout.strip().splitlines()[-1])
        measured["spilled"] = "spilling to" in out.stderr
        results["tasks"][f"merge_max_{limit_mb}mb"] = measured
    return results


def main(argv: list[str] | None = None) -> int:
    """``--data``, ``--work`` as bench_cow; ``--limits-mb`` comma list of merge.max.size values (MiB)."""
    return bench_main(run, __doc__.splitlines()[0], argv, limits_mb="16,64,1024")


if __name__ == "__main__":
    raise SystemExit(main())
