"""Index types against each other: seconds, files and bytes read to tag incoming keys; prints one JSON document.

Builds one copy-on-write table (``--files`` bulk-inserted base files of ``--rows`` rows, keys ``k<10 digits>`` in
insert order, so each file holds a contiguous key range), then tags ``--keys`` incoming keys — half an existing
contiguous range (updates, as the issue's MERGE of 1%), half new keys — with ``hoodie.index.type`` SIMPLE,
BLOOM, GLOBAL_SIMPLE and GLOBAL_BLOOM, through the writer's tagging (:func:`engine.spark.index.tag_locations`),
median of ``--repeat`` runs each (interleaved, same data). For BLOOM the files whose footers were read, pruned by
range or bloom filter and whose key column was read come from :mod:`engine.index.bloom` run on the driver over
the same keys. BUCKET needs its own layout: the same rows in a second table with ``--files`` buckets, tagged by
:func:`engine.spark.index.tag_buckets` (no data file read).

Usage: ``python bench/bench_index.py [--files 20] [--rows 100000] [--keys 60000] [--repeat 3]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--keys", type=int, default=60000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import pyarrow as pa
    from pyspark.sql import functions as F

    import sqlext
    from engine.config import HoodieConfig
    from engine.index.bloom import ProbeStats, lookup_files
    from engine.index.simple import files_to_index
    from engine.spark.index import tag_buckets, tag_locations
    from engine.table import Table
    from engine.write.prepare import FILE_ID, PARTITION_PATH, RECORD_KEY

    work = Path(tempfile.mkdtemp(prefix="bench-index-"))
    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    spark = session.spark
    try:
        path = work / "t"
        session.sql(f"""CREATE TABLE bench_idx (id STRING, v DOUBLE, ts BIGINT) USING hudi
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.parquet.small.file.limit' = '0')
            LOCATION '{path}'""")
        for f in range(args.files):
            spark.range(f * args.rows, (f + 1) * args.rows).selectExpr(
                "concat('k', lpad(cast(id as string), 10, '0')) AS id", "rand(3) AS v", "id AS ts"
            ).createOrReplaceTempView("batch")
            session.sql("INSERT INTO bench_idx SELECT * FROM batch")
        table = Table.load(str(path))
        total = args.files * args.rows
        bucket_path = work / "b"
        session.sql(f"""CREATE TABLE bench_idx_bucket (id STRING, v DOUBLE, ts BIGINT) USING hudi
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.index.type' = 'BUCKET',
            'hoodie.bucket.index.num.buckets' = '{args.files}') LOCATION '{bucket_path}'""")
        spark.range(0, total).selectExpr("concat('k', lpad(cast(id as string), 10, '0')) AS id", "rand(3) AS v",
                                         "id AS ts").createOrReplaceTempView("all_rows")
        session.sql("INSERT INTO bench_idx_bucket SELECT * FROM all_rows")
        bucket_table = Table.load(str(bucket_path))
        half = args.keys // 2
        start = total // 2
        keys = [f"k{i:010d}" for i in range(start, start + half)] + \
            [f"k{i:010d}" for i in range(total + 1, total + 1 + args.keys - half)]
        keyed = spark.createDataFrame([(k, "") for k in keys], f"{RECORD_KEY} string, {PARTITION_PATH} string")
        keyed = keyed.persist()
        keyed.count()
        timings: dict[str, list[float]] = {t: [] for t in ("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET")}
        found: dict[str, int] = {}
        for _ in range(args.repeat):
            for index_type in timings:
                began = time.perf_counter()
                if index_type == "BUCKET":
                    conf = bucket_table.config.overlay({"hoodie.index.type": "BUCKET",
                                                        "hoodie.bucket.index.num.buckets": str(args.files)})
                    tagged, created = tag_buckets(spark, bucket_table, keyed, conf)
                    # keys routed to an existing bucket's file group (new keys too: buckets are fixed)
                    found[index_type] = tagged.filter(~F.col(FILE_ID).isin(list(created))).count()
                else:
                    conf = table.config.overlay({"hoodie.index.type": index_type})
                    tagged = tag_locations(spark, table, keyed, conf)
                    found[index_type] = tagged.filter(F.col(FILE_ID).isNotNull()).count()
                timings[index_type].append(time.perf_counter() - began)
        files = files_to_index(table, [""])
        stats = ProbeStats()
        lookup_files(table.storage, files, {"": pa.array(keys, pa.string())}, None, HoodieConfig(table.config), stats)
        all_bytes = sum(f.size for f in files)
        print(json.dumps({
            "cores": os.cpu_count(), "files": args.files, "rows": total, "incoming_keys": len(keys),
            "keys_found": found,
            "SIMPLE": {"seconds_median": statistics.median(timings["SIMPLE"]), "files_key_read": len(files),
                       "bytes_key_read": all_bytes},
            "BLOOM": {"seconds_median": statistics.median(timings["BLOOM"]), "footers_read": stats.footers_read,
                      "files_pruned_by_range": stats.files_pruned_by_range,
                      "files_pruned_by_bloom": stats.files_pruned_by_bloom,
                      "files_key_read": stats.files_key_checked, "bytes_key_read": stats.bytes_key_checked},
            "GLOBAL_SIMPLE": {"seconds_median": statistics.median(timings["GLOBAL_SIMPLE"]),
                              "files_key_read": len(files), "bytes_key_read": all_bytes},
            "GLOBAL_BLOOM": {"seconds_median": statistics.median(timings["GLOBAL_BLOOM"]),
                             "note": "prunes as BLOOM over every partition (one partition here)"},
            "BUCKET": {"seconds_median": statistics.median(timings["BUCKET"]), "files_key_read": 0,
                       "bytes_key_read": 0, "buckets": args.files},
            "speedup_median": statistics.median(timings["SIMPLE"]) / statistics.median(timings["BLOOM"]),
            "runs": timings,
        }, indent=2))
    finally:
        session.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
