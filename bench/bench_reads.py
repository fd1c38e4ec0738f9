"""Read benchmark: a snapshot aggregate over a copy-on-write TPC-H lineitem table through Spark's own parquet
scan (the base files of the latest slices, ``FileScan parquet``) against the ``hudi`` Python data source
(``SET spark.sqlext.read.parquet.enabled=false``, the path before), and Spark over the same parquet files
without Hudi. Prints one JSON document: seconds (median of ``--repeat`` runs after one warm-up each; the parquet
scan and plain Spark take turns, run by run).

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` then
``python bench/bench_reads.py --data bench/data/sf1``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

AGGREGATE = """SELECT l_returnflag, l_linestatus, sum(l_quantity) AS q, sum(l_extendedprice) AS p,
                      avg(l_discount) AS d, count(*) AS n
               FROM {source} GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"""
SELECTIVE = """SELECT l_shipmode, count(*) AS n, sum(l_extendedprice) AS p FROM {source}
               WHERE l_shipyear = 1995 AND l_quantity < 10 GROUP BY l_shipmode ORDER BY l_shipmode"""
ENABLED = "spark.sqlext.read.parquet.enabled"


def median_seconds(run: Any, repeat: int) -> tuple[float, Any]:
    """Median wall-clock seconds of ``repeat`` calls of ``run`` after one warm-up call, and its last result."""
    result = run()
    times = []
    for _ in range(repeat):
        start = time.monotonic()
        result = run()
        times.append(time.monotonic() - start)
    return statistics.median(times), result


def alternating_medians(runs: dict[str, Any], repeat: int) -> dict[str, tuple[float, Any]]:
    """Per side, the median wall-clock seconds of ``repeat`` calls and its last result: each side is called once
    as a warm-up, then the sides take turns (so neither gains from running after the other has warmed the JVM)."""
    results = {name: run() for name, run in runs.items()}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.monotonic()
            results[name] = run()
            times[name].append(time.monotonic() - start)
    return {name: (statistics.median(times[name]), results[name]) for name in runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder holding lineitem.parquet")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mor", action="store_true",
                        help="also a merge-on-read table with 1%% of its rows updated into logs (aggregate only)")
    args = parser.parse_args(argv)

    import sqlext
    from engine.table import Table

    with tempfile.TemporaryDirectory(prefix="bench-reads-") as work:
        session = sqlext.connect(warehouse=Path(work) / "warehouse", conf={
            "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
        spark = session.spark
        lineitem = f"parquet.`{args.data.resolve()}/lineitem.parquet`"
        results: dict[str, Any] = {"data": str(args.data), "repeat": args.repeat}
        start = time.monotonic()
        session.sql(f"""CREATE TABLE lineitem USING hudi PARTITIONED BY (l_shipyear)
            TBLPROPERTIES (type = 'cow', primaryKey = 'l_orderkey,l_linenumber')
            AS SELECT *, year(l_shipdate) AS l_shipyear FROM {lineitem}""").collect()
        results["bulk_insert_s"] = round(time.monotonic() - start, 1)
        entry = session.catalog.lookup_name("lineitem")
        assert entry is not None
        view = Table.load(entry.location).file_system_view()
        files = [bf.path for bf in view.all_latest_base_files()]
        results["rows"] = spark.sql("SELECT count(*) FROM lineitem").collect()[0][0]
        results["base_files"] = len(files)
        spark.read.parquet(*files).createOrReplaceTempView("lineitem_files")

        for name, query in (("aggregate", AGGREGATE), ("selective", SELECTIVE)):
            answers = {}
            spark.conf.set(ENABLED, "false")
            seconds, answers["python"] = median_seconds(
                lambda q=query: spark.sql(q.format(source="lineitem")).collect(), args.repeat)
            results[f"{name}_python_reader_s"] = round(seconds, 2)
            spark.conf.set(ENABLED, "true")
            plan = spark.sql(query.format(source="lineitem"))._jdf.queryExecution().executedPlan().toString()
            assert "FileScan parquet" in plan and "(Python)" not in plan, plan
            timed = alternating_medians({
                "parquet": lambda q=query: spark.sql(q.format(source="lineitem")).collect(),
                "plain": lambda q=query: spark.sql(q.format(source="lineitem_files")).collect()}, args.repeat)
            seconds, answers["parquet"] = timed["parquet"]
            results[f"{name}_parquet_scan_s"] = round(seconds, 2)
            seconds, answers["plain"] = timed["plain"]
            results[f"{name}_plain_spark_parquet_s"] = round(seconds, 2)
            results[f"{name}_same_answer"] = answers["python"] == answers["parquet"] == answers["plain"]
            results[f"{name}_speedup"] = round(results[f"{name}_python_reader_s"]
                                               / results[f"{name}_parquet_scan_s"], 1)
        if args.mor:
            # Merge-on-read with 1% of the rows updated into log files (the ">= 0.7x plain parquet").
            session.sql(f"""CREATE TABLE lineitem_mor USING hudi PARTITIONED BY (l_shipyear)
                TBLPROPERTIES (type = 'mor', primaryKey = 'l_orderkey,l_linenumber',
                               preCombineField = 'l_shipdate', 'hoodie.compact.inline' = 'false')
                AS SELECT *, year(l_shipdate) AS l_shipyear FROM {lineitem}""").collect()
            updates = f"parquet.`{args.data.resolve()}/updates_lineitem.parquet`"
            session.sql(f"""MERGE INTO lineitem_mor t USING (SELECT *, year(l_shipdate) AS l_shipyear FROM {updates}) s
                ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
                WHEN MATCHED THEN UPDATE SET *""")
            entry = session.catalog.lookup_name("lineitem_mor")
            assert entry is not None
            slices = list(Table.load(entry.location).file_system_view().all_latest_file_slices())
            results["mor_updated_rows"] = spark.sql(f"SELECT count(*) FROM {updates}").collect()[0][0]
            results["mor_file_slices"] = len(slices)
            results["mor_slices_with_logs"] = sum(1 for sl in slices if sl.log_files)
            timed = alternating_medians({
                "mor": lambda: spark.sql(AGGREGATE.format(source="lineitem_mor")).collect(),
                "plain": lambda: spark.sql(AGGREGATE.format(source="lineitem_files")).collect()}, args.repeat)
            seconds, mor_answer = timed["mor"]
            results["aggregate_mor_1pct_logs_s"] = round(seconds, 2)
            results["aggregate_mor_plain_spark_parquet_s"] = round(timed["plain"][0], 2)
            results["aggregate_mor_1pct_logs_vs_plain"] = round(timed["plain"][0] / seconds, 2)
            results["aggregate_mor_same_row_count"] = (
                sum(r["n"] for r in mor_answer) == results["rows"])
            # The split read (Spark's scan of the base rows the logs leave alone + the log records from Python)
            # against every slice merged whole by the Python reader: the same answer.
            plan = spark.sql(AGGREGATE.format(source="lineitem_mor"))._jdf.queryExecution().executedPlan().toString()
            results["aggregate_mor_split_read"] = "HudiLogFilteredParquet" in plan
            spark.read.format("hudi").option("sqlext.read.log.keys.max", "0").load(entry.location) \
                .createOrReplaceTempView("lineitem_mor_whole")
            seconds, whole_answer = median_seconds(
                lambda: spark.sql(AGGREGATE.format(source="lineitem_mor_whole")).collect(), 1)
            results["aggregate_mor_whole_slice_merge_s"] = round(seconds, 2)
            results["aggregate_mor_same_answer_as_whole_slice_merge"] = whole_answer == mor_answer
        session.stop()
    json.dump(results, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
