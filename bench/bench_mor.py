"""Merge-on-read benchmark on TPC-H lineitem; prints one JSON document.

Measures (issue 3, item 7):
* ``MERGE INTO`` of 1% changed rows (half updates, half inserts) on merge-on-read vs copy-on-write (median
  of ``MERGE_ROUNDS`` runs on fresh copies of each table, after a warm-up) and vs delta-rs on the same data;
* a snapshot aggregate after that round of logs vs a read-optimized aggregate on the same table;
* compaction throughput (bytes read + written per second) vs pyarrow reading and rewriting the same base
  files (the floor for rewriting them).

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` then
``python bench/bench_mor.py --data bench/data/sf1``.
"""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from bench_cow import (  # same folder (run as a script)
    AGGREGATE,
    PeakMemory,
    bench_main,
    delta_rs_merge,
    merge_source_sql,
    timed,
    write_delta_rs_inputs,
)

MERGE_ROUNDS = 5
"""Timed MERGE runs per table kind (after one warm-up each); the reported figure is their median (five: single
runs on a 2-core machine vary by a third)."""


def run(data: Path, work: Path) -> dict[str, Any]:
    import sqlext
    from engine.table import Table

    results: dict[str, Any] = {"data": str(data)}
    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    lineitem = f"parquet.`{data}/lineitem.parquet`"
    source = merge_source_sql(data)
    merge = """MERGE INTO {t} t USING (SELECT *, year(l_shipdate) AS l_shipyear FROM {source}) s
        ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"""
    with PeakMemory() as memory:
        # Both tables are built first and copied; every MERGE then runs on a fresh copy of its table, after
        # one untimed warm-up MERGE of each kind, in alternating order: the session's first-query costs
        # and JIT warm-up fall on neither side.
        pristine: dict[str, Path] = {}
        for kind in ("cow", "mor"):
            session.sql(f"""CREATE TABLE li_{kind} USING hudi PARTITIONED BY (l_shipyear)
                TBLPROPERTIES (type = '{kind}', primaryKey = 'l_orderkey,l_linenumber')
                AS SELECT *, year(l_shipdate) AS l_shipyear FROM {lineitem}""").collect()
            pristine[kind] = work / f"pristine_{kind}"
            shutil.copytree(_location(session, f"li_{kind}"), pristine[kind])

        def merge_once(kind: str) -> float:
            location = _location(session, f"li_{kind}")
            shutil.rmtree(location)
            shutil.copytree(pristine[kind], location)
            return timed(lambda: session.sql(merge.format(t=f"li_{kind}", source=source)).collect())[0]

        runs: dict[str, list[float]] = {"cow": [], "mor": []}
        for kind in ("cow", "mor"):
            results[f"merge_{kind}_warmup_s"] = round(merge_once(kind), 2)
        for i in range(MERGE_ROUNDS):
            for kind in (("cow", "mor") if i % 2 else ("mor", "cow")):
                runs[kind].append(round(merge_once(kind), 2))
        for kind in ("cow", "mor"):
            results[f"merge_{kind}_runs_s"] = runs[kind]
            results[f"merge_{kind}_s"] = statistics.median(runs[kind])
        results["merge_mor_speedup_vs_cow"] = round(results["merge_cow_s"] / results["merge_mor_s"], 2)

        location = _location(session, "li_mor")
        reader = session.spark.read.format("hudi")
        session.spark.sql("SELECT 1").collect()
        snapshot_view = reader.load(location)
        snapshot_view.createOrReplaceTempView("li_mor_snapshot")
        reader.option("hoodie.datasource.query.type", "read_optimized").load(location) \
            .createOrReplaceTempView("li_mor_ro")
        for _ in range(2):
            session.spark.sql(AGGREGATE.format(source="li_mor_snapshot")).collect()
            session.spark.sql(AGGREGATE.format(source="li_mor_ro")).collect()
        snap = min(timed(lambda: session.spark.sql(AGGREGATE.format(source="li_mor_snapshot")).collect())[0]
                   for _ in range(3))
        ro = min(timed(lambda: session.spark.sql(AGGREGATE.format(source="li_mor_ro")).collect())[0]
                 for _ in range(3))
        results["aggregate_snapshot_with_logs_s"] = round(snap, 2)
        results["aggregate_read_optimized_s"] = round(ro, 2)
        results["snapshot_vs_read_optimized"] = round(ro / snap, 3)

        table = Table.load(location)
        view = table.file_system_view()
        slices = [fs for p in view.partition_paths() for fs in view.latest_file_slices(p)]
        read_bytes = sum((fs.base_file.size if fs.base_file else 0) + sum(lf.size for lf in fs.log_files)
                         for fs in slices if fs.log_files)
        seconds, rows = timed(lambda: session.sql(
            "CALL run_compaction(op => 'run', table => 'li_mor', "
            "options => 'hoodie.compact.inline.max.delta.commits=1')").collect())
        table = Table.load(location)
        last = table.timeline.completed_commits()[-1]
        written = sum(s.total_write_bytes for s in table.commit_metadata(last).all_write_stats())
        results["compaction_s"] = round(seconds, 2)
        results["compaction_mb_per_s"] = round((read_bytes + written) / 2**20 / seconds, 1)

        base_files = [fs.base_file.path for fs in slices if fs.base_file is not None]
        rewrite_dir = work / "rewrite"
        rewrite_dir.mkdir()

        def rewrite() -> int:
            total = 0
            for i, path in enumerate(base_files):
                target = rewrite_dir / f"{i}.parquet"
                pq.write_table(pq.read_table(path), target, compression="snappy")
                total += Path(path).stat().st_size + target.stat().st_size
            return total

        seconds_rw, moved = timed(rewrite)
        results["pyarrow_rewrite_mb_per_s"] = round(moved / 2**20 / seconds_rw, 1)
        results["compaction_vs_pyarrow_rewrite"] = round(results["compaction_mb_per_s"]
                                                         / results["pyarrow_rewrite_mb_per_s"], 3)
        results["compaction_rows"] = [r.asDict() for r in rows]
    results["driver_python_peak_rss_mb"] = round(memory.peak_python / 2**20)
    results["driver_jvm_peak_rss_mb"] = round(memory.peak_jvm / 2**20)
    write_delta_rs_inputs(session.spark, data, work)
    session.stop()
    # Peer figure: delta-rs merging the same source into the same data (its own fresh table).
    results.update(delta_rs_merge(work))
    results["merge_mor_speedup_vs_delta_rs"] = round(results["delta_rs_merge_s"] / results["merge_mor_s"], 2)
    return results


def _location(session: Any, name: str) -> str:
    entry = session.catalog.lookup_name(name)
    assert entry is not None, name
    return str(entry.location)


def main(argv: list[str] | None = None) -> int:
    """``--data`` and ``--work`` as bench_cow."""
    return bench_main(run, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
