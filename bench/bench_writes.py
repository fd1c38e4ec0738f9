"""Write benchmark (issue 14, item 4): a bulk insert (``CREATE TABLE ... USING hudi AS SELECT``, Hudi's
``bulk_insert``) of TPC-H ``lineitem`` against Spark writing the same rows as plain parquet (same codec, snappy,
and for the partitioned shape the same ``partitionBy``), in one session, alternating sides, on the same data.
Prints one JSON document: per shape the seconds of every timed run, their medians and
``ratio = spark_parquet_median / hudi_median`` (the issue's target: >= 0.9). Each side runs once as a warm-up
first; every Hudi table's row count is checked against the source.

A third side, ``spark_parquet_meta``, is Spark writing the same rows plus Hudi's five meta columns
(``_hoodie_commit_time``, ``_hoodie_commit_seqno``, ``_hoodie_record_key``, ``_hoodie_partition_path``,
``_hoodie_file_name``, with the values Hudi gives them, computed as Spark expressions) as plain parquet: what any
writer of Hudi's file layout costs at Spark's own speed, bloom filter aside; ``meta_ratio = spark_parquet_median /
spark_parquet_meta_median`` bounds the ratio any such writer, Hudi's own row writer included, can reach.

A fourth side, ``python_floor``, is the least any writer running in Python tasks can cost: the same rows handed to
a ``mapInArrow`` function that only counts them (Spark's conversion of its rows to Arrow and their transfer to the
Python worker); ``floor_ratio = spark_parquet_median / python_floor_median`` bounds what such a writer can reach.

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` then
``python bench/bench_writes.py --data bench/data/sf1 --runs 3``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SHAPES = {"partitioned": "l_shipyear", "non_partitioned": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder holding lineitem.parquet")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side and shape (after one warm-up)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")

    import sqlext

    source = f"parquet.`{args.data.resolve()}/lineitem.parquet`"
    select = f"SELECT *, year(l_shipdate) AS l_shipyear FROM {source}"
    results: dict[str, Any] = {"data": str(args.data), "runs": args.runs, "cpus": os.cpu_count(),
                               "codec": "snappy", "shapes": {}}
    with tempfile.TemporaryDirectory(prefix="bench-writes-") as work:
        session = sqlext.connect(warehouse=Path(work) / "warehouse", conf={
            "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g",
            "spark.sql.parquet.compression.codec": "snappy"})
        spark = session.spark
        rows = spark.sql(f"SELECT count(*) FROM {source}").collect()[0][0]
        results["rows"] = rows
        counter = 0

        def hudi(partition: str | None) -> float:
            nonlocal counter
            counter += 1
            name = f"lineitem_{counter}"
            part = f" PARTITIONED BY ({partition})" if partition else ""
            start = time.monotonic()
            session.sql(f"""CREATE TABLE {name} USING hudi{part}
                TBLPROPERTIES (type = 'cow', primaryKey = 'l_orderkey,l_linenumber',
                               'hoodie.parquet.compression.codec' = 'snappy')
                AS {select}""").collect()
            seconds = time.monotonic() - start
            written = spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0]
            if written != rows:
                raise AssertionError(f"{name}: {written} rows, the source has {rows}")
            session.sql(f"DROP TABLE {name}")
            shutil.rmtree(session.warehouse / name, ignore_errors=True)
            return seconds

        def plain(partition: str | None) -> float:
            target = Path(work) / "plain"
            shutil.rmtree(target, ignore_errors=True)
            writer = spark.sql(select).write.mode("overwrite")
            if partition:
                writer = writer.partitionBy(partition)
            start = time.monotonic()
            writer.parquet(str(target))
            return time.monotonic() - start

        def plain_meta(partition: str | None) -> float:
            from pyspark.sql import functions as F

            target = Path(work) / "plain_meta"
            shutil.rmtree(target, ignore_errors=True)
            instant = "20261126150000000"
            source = spark.sql(select)
            part_value = F.concat(F.lit(f"{partition}="), F.col(partition).cast("string")) if partition else F.lit("")
            with_meta = source.select(
                F.lit(instant).alias("_hoodie_commit_time"),
                F.concat(F.lit(instant + "_"), F.spark_partition_id().cast("string"), F.lit("_"),
                         F.monotonically_increasing_id().cast("string")).alias("_hoodie_commit_seqno"),
                F.concat(F.lit("l_orderkey:"), F.col("l_orderkey").cast("string"), F.lit(",l_linenumber:"),
                         F.col("l_linenumber").cast("string")).alias("_hoodie_record_key"),
                part_value.alias("_hoodie_partition_path"),
                F.lit(f"{'0' * 8}-{'0' * 4}-{'0' * 4}-{'0' * 4}-{'0' * 12}-0_0-1-2_{instant}.parquet")
                .alias("_hoodie_file_name"),
                "*")
            writer = with_meta.write.mode("overwrite")
            if partition:
                writer = writer.partitionBy(partition)
            start = time.monotonic()
            writer.parquet(str(target))
            return time.monotonic() - start

        def count_rows(batches: Any) -> Any:
            import pyarrow as pa

            yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})

        def floor(partition: str | None) -> float:
            start = time.monotonic()
            counted = sum(r["n"] for r in spark.sql(select).mapInArrow(count_rows, "n long").collect())
            seconds = time.monotonic() - start
            if counted != rows:
                raise AssertionError(f"the Python tasks saw {counted} rows, the source has {rows}")
            return seconds

        sides = {"hudi": hudi, "spark_parquet": plain, "spark_parquet_meta": plain_meta,
                 "python_floor": floor}
        for shape in shapes:
            partition = SHAPES[shape]
            times: dict[str, list[float]] = {side: [] for side in sides}
            warmup = {side: round(run(partition), 2) for side, run in sides.items()}
            for _ in range(args.runs):
                for side, run in sides.items():
                    times[side].append(round(run(partition), 2))
            medians = {side: statistics.median(ts) for side, ts in times.items()}
            results["shapes"][shape] = {
                "warmup_s": warmup, "runs_s": times,
                "median_s": {side: round(m, 2) for side, m in medians.items()},
                "ratio": round(medians["spark_parquet"] / medians["hudi"], 2),
                "meta_ratio": round(medians["spark_parquet"] / medians["spark_parquet_meta"], 2),
                "floor_ratio": round(medians["spark_parquet"] / medians["python_floor"], 2),
            }
            print(json.dumps({shape: results["shapes"][shape]}), file=sys.stderr, flush=True)
        session.stop()
    json.dump(results, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
