"""Copy-on-write benchmark on TPC-H lineitem; prints one JSON document.

Measures (issue 2, item 10):
* bulk insert (CTAS) throughput vs Spark writing the same DataFrame as plain partitioned parquet, with the
  same codec (``--codec``, default snappy; Hudi's default gzip is reported too with ``--also-gzip``);
* ``MERGE INTO`` of 1% changed rows (half updates, half inserts), and the same merge with the
  ``deltalake`` package (delta-rs) on the same data as the peer figure;
* a snapshot aggregate (``GROUP BY l_returnflag, l_linestatus``) vs Spark over the same parquet files;
* peak resident memory of the driver (Python process + its JVM), sampled every 50 ms.

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` then
``python bench/bench_cow.py --data bench/data/sf1``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

AGGREGATE = """SELECT l_returnflag, l_linestatus, sum(l_quantity) AS q, sum(l_extendedprice) AS p,
                      avg(l_discount) AS d, count(*) AS n
               FROM {source} GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"""


class PeakMemory:
    """Samples the RSS of this process and its children (the Spark JVM) in a background thread."""

    def __init__(self) -> None:
        self.peak = 0
        self.peak_python = 0
        self.peak_jvm = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                python = me.memory_info().rss
                jvm = sum(c.memory_info().rss for c in me.children(recursive=True) if "java" in c.name().lower())
                self.peak = max(self.peak, python + jvm)
                self.peak_python = max(self.peak_python, python)
                self.peak_jvm = max(self.peak_jvm, jvm)
            except psutil.Error:
                pass
            time.sleep(0.05)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def timed(fn: Any) -> tuple[float, Any]:
    start = time.monotonic()
    result = fn()
    return time.monotonic() - start, result


def spark_jobs_between(spark: Any, start_ms: int, end_ms: int) -> list[dict[str, Any]]:
    """The Spark jobs submitted in ``[start_ms, end_ms]`` (epoch milliseconds), oldest first, from the driver's
    status store: ``{"job": id, "name": call site, "s": seconds from submission to completion}``."""
    store = spark.sparkContext._jsc.sc().statusStore()
    jobs = store.jobsList(None)
    found = []
    for i in range(jobs.size()):
        job = jobs.apply(i)
        submitted = job.submissionTime()
        if not submitted.isDefined():
            continue
        begin = submitted.get().getTime()
        if not start_ms <= begin <= end_ms:
            continue
        completed = job.completionTime()
        finish = completed.get().getTime() if completed.isDefined() else end_ms
        found.append({"job": job.jobId(), "name": str(job.name()).split(" at ")[0],
                      "s": round((finish - begin) / 1000, 3), "_begin": begin, "_end": finish})
    found.sort(key=lambda j: j["_begin"])
    return found


def profiled(session: Any, fn: Any) -> tuple[float, Any, dict[str, Any]]:
    """Run ``fn`` (one sqlext statement) and split its wall time: ``spark_jobs`` (count and each job's seconds),
    ``in_spark_jobs_s`` (time covered by at least one running job), ``driver_only_s`` (the rest: planning,
    driver-side Python, commit), and the write's ``phase_ms`` (tag, plan, write, commit, post-commit services)."""
    start_ms = int(time.time() * 1000)
    seconds, result = timed(fn)
    end_ms = int(time.time() * 1000) + 1
    jobs = spark_jobs_between(session.spark, start_ms, end_ms)
    covered, reach = 0, start_ms
    for job in jobs:
        begin, finish = max(job["_begin"], reach), job["_end"]
        if finish > begin:
            covered += finish - begin
            reach = finish
    metrics = session.last_write_metrics
    profile = {
        "spark_jobs": len(jobs),
        "jobs": [{k: v for k, v in j.items() if not k.startswith("_")} for j in jobs],
        "in_spark_jobs_s": round(covered / 1000, 3),
        "driver_only_s": round(seconds - covered / 1000, 3),
        "phase_ms": dict(metrics.phase_ms) if metrics is not None else {},
    }
    return seconds, result, profile


def merge_source_sql(data: Path) -> str:
    """1% of lineitem: half updates of existing rows, half new rows (new order keys)."""
    updates = f"parquet.`{data}/updates_lineitem.parquet`"
    return f"""(SELECT * FROM (
        SELECT * FROM {updates} WHERE l_orderkey % 2 = 0
        UNION ALL
        SELECT l_orderkey + 1000000000 AS l_orderkey, l_partkey, l_suppkey, l_linenumber, l_quantity,
               l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate,
               l_receiptdate, l_shipinstruct, l_shipmode, l_comment
        FROM {updates} WHERE l_orderkey % 2 = 1))"""


def run(data: Path, work: Path, codec: str = "snappy", also_gzip: bool = False) -> dict[str, Any]:
    import sqlext
    from engine.table import Table

    results: dict[str, Any] = {"data": str(data), "codec": codec, "cores": os.cpu_count()}
    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    spark = session.spark
    lineitem = f"parquet.`{data}/lineitem.parquet`"
    rows = spark.sql(f"SELECT count(*) FROM {lineitem}").collect()[0][0]
    results["lineitem_rows"] = rows
    source_df = f"SELECT *, year(l_shipdate) AS l_shipyear FROM {lineitem}"

    with PeakMemory() as memory:
        # 1. Spark plain parquet write of the same DataFrame (warm-up read first).
        spark.sql(f"SELECT sum(l_quantity) FROM {lineitem}").collect()
        plain_dir = work / "plain_parquet"
        seconds, _ = timed(lambda: spark.sql(source_df).write.mode("overwrite")
                           .option("compression", codec).partitionBy("l_shipyear").parquet(str(plain_dir)))
        results["spark_parquet_write_s"] = round(seconds, 2)

        # 2. Bulk insert (CTAS) into a Hudi table.
        session.sql(f"SET hoodie.parquet.compression.codec={codec}")
        seconds, _ = timed(lambda: session.sql(f"""CREATE TABLE lineitem USING hudi PARTITIONED BY (l_shipyear)
            TBLPROPERTIES (type = 'cow', primaryKey = 'l_orderkey,l_linenumber') AS {source_df}""").collect())
        results["hudi_bulk_insert_s"] = round(seconds, 2)
        results["bulk_insert_rows_per_s"] = int(rows / seconds)
        results["bulk_insert_vs_spark_parquet"] = round(results["spark_parquet_write_s"] / seconds, 3)
        if also_gzip:
            session.sql("SET hoodie.parquet.compression.codec=gzip")
            seconds, _ = timed(lambda: session.sql(f"""CREATE TABLE lineitem_gzip USING hudi
                PARTITIONED BY (l_shipyear) TBLPROPERTIES (type = 'cow', primaryKey = 'l_orderkey,l_linenumber')
                AS {source_df}""").collect())
            results["hudi_bulk_insert_gzip_s"] = round(seconds, 2)
            session.sql("DROP TABLE lineitem_gzip PURGE")
            session.sql(f"SET hoodie.parquet.compression.codec={codec}")

        # 3. Snapshot aggregate: ours vs Spark over the same (latest) base files.
        entry = session.catalog.lookup_name("lineitem")
        assert entry is not None
        table = Table.load(entry.location)
        files = [bf.path for bf in table.file_system_view().all_latest_base_files()]
        spark.read.parquet(*files).createOrReplaceTempView("lineitem_files")
        for _ in range(2):  # warm-up
            session.sql(AGGREGATE.format(source="lineitem")).collect()
            spark.sql(AGGREGATE.format(source="lineitem_files")).collect()
        ours = min(timed(lambda: session.sql(AGGREGATE.format(source="lineitem")).collect())[0] for _ in range(3))
        plain = min(timed(lambda: spark.sql(AGGREGATE.format(source="lineitem_files")).collect())[0]
                    for _ in range(3))
        results["aggregate_hudi_s"] = round(ours, 2)
        results["aggregate_spark_parquet_s"] = round(plain, 2)
        results["aggregate_vs_spark_parquet"] = round(plain / ours, 3)

        # 4. MERGE INTO of 1% changed rows (half updates, half inserts).
        source = merge_source_sql(data)
        changed = spark.sql(f"SELECT count(*) FROM {source}").collect()[0][0]
        results["merge_source_rows"] = changed
        merge_sql = f"""MERGE INTO lineitem t USING (SELECT *, year(l_shipdate) AS l_shipyear FROM {source}) s
            ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
            WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"""
        seconds, metrics = timed(lambda: session.sql(merge_sql).collect())
        results["hudi_merge_s"] = round(seconds, 2)
        results["hudi_merge_metrics"] = metrics[0].asDict()
    results["driver_peak_rss_mb"] = round(memory.peak / 2**20)
    results["driver_python_peak_rss_mb"] = round(memory.peak_python / 2**20)
    results["driver_jvm_peak_rss_mb"] = round(memory.peak_jvm / 2**20)

    # 5. Peer: the same merge with delta-rs on the same data.
    write_delta_rs_inputs(spark, data, work)
    session.stop()
    results.update(delta_rs_merge(work))
    return results


def write_delta_rs_inputs(spark: Any, data: Path, work: Path) -> None:
    """Write what :func:`delta_rs_merge` reads: lineitem with ``l_shipyear`` and the 1% merge source, as
    plain parquet under ``work``."""
    spark.sql(f"SELECT *, year(l_shipdate) AS l_shipyear FROM parquet.`{data}/lineitem.parquet`") \
        .write.mode("overwrite").parquet(str(work / "lineitem_with_year"))
    spark.sql(f"SELECT *, year(l_shipdate) AS l_shipyear FROM {merge_source_sql(data)}").write.mode(
        "overwrite").parquet(str(work / "merge_source"))


def delta_rs_merge(work: Path) -> dict[str, Any]:
    """delta-rs: write lineitem as a partitioned Delta table, then MERGE the same 1% source."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable, write_deltalake

    target = work / "delta_lineitem"
    full = ds.dataset(str(work / "lineitem_with_year"), format="parquet").to_table()
    seconds_write, _ = timed(lambda: write_deltalake(str(target), full, partition_by=["l_shipyear"]))
    source = ds.dataset(str(work / "merge_source"), format="parquet").to_table()
    table = DeltaTable(str(target))
    seconds, metrics = timed(lambda: table.merge(
        source, "t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber",
        source_alias="s", target_alias="t").when_matched_update_all().when_not_matched_insert_all().execute())
    return {"delta_rs_initial_write_s": round(seconds_write, 2), "delta_rs_merge_s": round(seconds, 2),
            "delta_rs_merge_metrics": {k: metrics[k] for k in ("num_target_rows_updated",
                                                               "num_target_rows_inserted",
                                                               "num_target_files_added") if k in metrics}}


def bench_main(run_fn: Any, description: str, argv: list[str] | None, **extra: Any) -> int:
    """Shared command line of the bench scripts: ``--data``, ``--work`` (default: a temp dir removed
    afterwards), plus ``extra`` options (name -> default); prints ``run_fn(data, work, **options)`` as JSON."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", type=Path, default=Path("bench/data/sf1"), help="tpch_gen.py output folder")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    for name, default in extra.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, default=default)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_"))
    try:
        results = run_fn(args.data.resolve(), work.resolve(), **{k: getattr(args, k) for k in extra})
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(results, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``--codec`` (default snappy) for both writers; ``--also-gzip`` times a gzip bulk insert too."""
    return bench_main(run, __doc__.splitlines()[0], argv, codec="snappy", also_gzip=False)


if __name__ == "__main__":
    raise SystemExit(main())
