"""Clustering throughput against pyarrow sorting and writing the same rows; prints one JSON document.

Builds one copy-on-write table of ``--files`` small base files (``--rows`` rows each, one partition, small-file
packing off) with sqlext, then, median of ``--repeat`` runs on fresh copies of the table:

* ``clustering``: ``CALL run_clustering(path => ..., order => 'price')`` (schedule + execute + commit); MB/s =
  (bytes of the input base files + bytes of the written files) / seconds;
* ``pyarrow``: ``pyarrow.parquet.read_table`` of the same input files, ``sort_by('price')``, one
  ``pyarrow.parquet.write_table`` (same codec as the table: snappy, ``hoodie.parquet.compression.codec``) — the
  floor of the work;
  MB/s counted the same way.

The issue's target: clustering ≥ 0.5 × pyarrow. Usage: ``python bench/bench_clustering.py [--files 20]
[--rows 50000] [--repeat 3]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _base_files(path: Path) -> list[Path]:
    from engine.table import Table

    return [Path(bf.path) for bf in Table.load(str(path)).file_system_view().all_latest_base_files()]


def build(session: Any, root: Path, files: int, rows: int) -> Path:
    path = root / "source"
    session.sql(f"""CREATE TABLE bench_src (id BIGINT, name STRING, price DOUBLE, qty INT, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.parquet.small.file.limit' = '0')
        LOCATION '{path}'""")
    spark = session.spark
    for f in range(files):
        frame = spark.range(f * rows, (f + 1) * rows).selectExpr(
            "id", "concat('name-', cast(id % 9973 as string)) AS name", "rand(7) * 1000 AS price",
            "cast(id % 100 as int) AS qty", "id AS ts")
        frame.createOrReplaceTempView("bench_batch")
        session.sql("INSERT INTO bench_src SELECT * FROM bench_batch")
    session.sql("ALTER TABLE bench_src SET TBLPROPERTIES ('hoodie.clean.automatic' = 'false')")
    return path


def run_clustering(session: Any, source: Path, work: Path) -> dict[str, float]:
    copy = work / f"c{time.monotonic_ns()}"
    shutil.copytree(source, copy)
    inputs = sum(p.stat().st_size for p in _base_files(copy))
    start = time.perf_counter()
    session.sql(f"CALL run_clustering(path => '{copy}', order => 'price')").collect()
    seconds = time.perf_counter() - start
    outputs = _base_files(copy)
    written = sum(p.stat().st_size for p in outputs)
    shutil.rmtree(copy)
    return {"seconds": seconds, "mb_per_s": (inputs + written) / 2**20 / seconds, "files_written": len(outputs),
            "input_mb": inputs / 2**20, "output_mb": written / 2**20}


def run_pyarrow(source: Path, work: Path) -> dict[str, float]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    inputs = _base_files(source)
    out = work / f"p{time.monotonic_ns()}.parquet"
    start = time.perf_counter()
    table = pa.concat_tables([pq.read_table(p) for p in inputs]).sort_by("price")
    pq.write_table(table, out, compression="snappy")
    seconds = time.perf_counter() - start
    total = sum(p.stat().st_size for p in inputs) + out.stat().st_size
    out.unlink()
    return {"seconds": seconds, "mb_per_s": total / 2**20 / seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import sqlext

    work = Path(tempfile.mkdtemp(prefix="bench-clustering-"))
    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    try:
        source = build(session, work, args.files, args.rows)
        runs_c, runs_p = [], []
        for _ in range(args.repeat):  # interleaved: both sides see the same machine state
            runs_p.append(run_pyarrow(source, work))
            runs_c.append(run_clustering(session, source, work))
        clustering = {k: statistics.median(r[k] for r in runs_c) for k in runs_c[0]}
        pyarrow = {k: statistics.median(r[k] for r in runs_p) for k in runs_p[0]}
        ratios = [c["mb_per_s"] / p["mb_per_s"] for c, p in zip(runs_c, runs_p, strict=True)]
        print(json.dumps({
            "cores": os.cpu_count(), "files": args.files, "rows_per_file": args.rows, "repeat": args.repeat,
            "clustering": clustering, "pyarrow_sort_write": pyarrow,
            "ratio_median": statistics.median(ratios), "ratios": ratios, "target": 0.5,
        }, indent=2))
    finally:
        session.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
