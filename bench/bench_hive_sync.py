"""Hive sync benchmark: first and incremental sync of wide partitioned tables; prints one JSON document.

Measures (issue 4, item 6), for copy-on-write tables of N partitions (``--partitions``, default 100 and
1,000; one row per partition, written by one ``INSERT``) synced into a real Hive Metastore (Thrift, Derby)
started from the pyspark jars:
* the first (full) sync: seconds and metastore calls;
* one commit touching 3 partitions (2 existing, 1 new), then the incremental sync: seconds and calls (these
  should not grow with N);
* the same incremental sync again fetching every metastore partition instead of the touched ones
  (``filter_pushdown_max_size=0``, which is what Hudi does by default), for comparison.

Usage: ``python bench/bench_hive_sync.py [--partitions 100,1000,10000] [--work DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

DATABASE = "bench"


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """``(seconds, fn())``."""
    start = time.monotonic()
    result = fn()
    return time.monotonic() - start, result


def run_size(session: Any, uri: str, partitions: int) -> dict[str, Any]:
    """Build a ``partitions``-partition COW table, sync it, commit to 3 partitions, sync incrementally."""
    from hive_sync.client import HiveMetastoreClient
    from hive_sync.sync_tool import HiveSyncTool

    name = f"wide_{partitions}"
    session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT, p INT) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts')""")
    build_s, _ = timed(lambda: session.sql(f"""INSERT INTO {name} SELECT CAST(k AS INT) AS id,
        concat('v', k) AS v, 1L AS ts, CAST(k AS INT) AS p FROM (SELECT id AS k FROM range({partitions}))""")
        .collect())
    base = session.catalog.lookup_name(name).location
    options = {"hoodie.datasource.hive_sync.mode": "hms", "hoodie.datasource.hive_sync.metastore.uris": uri,
               "hoodie.datasource.hive_sync.database": DATABASE, "hoodie.datasource.hive_sync.table": name}
    out: dict[str, Any] = {"build_s": round(build_s, 2)}
    with HiveMetastoreClient(uri) as client:
        first_s, first = timed(lambda: HiveSyncTool(base, options, client).sync())
        commit_s, _ = timed(lambda: session.sql(f"""INSERT INTO {name} VALUES (0, 'u0', 2, 0), (1, 'u1', 2, 1),
            ({partitions}, 'new', 2, {partitions})""").collect())
        inc_s, inc = timed(lambda: HiveSyncTool(base, options, client).sync())
        # Replay the same incremental sync, listing every metastore partition (Hudi's default).
        table = client.get_table(DATABASE, name)
        table.parameters["last_commit_time_sync"] = first.tables[0].last_commit_time_sync
        client.alter_table(DATABASE, name, table)
        listing = {**options, "hoodie.datasource.hive_sync.filter_pushdown_max_size": "0"}
        all_s, all_result = timed(lambda: HiveSyncTool(base, listing, client).sync())
        registered = len(client.partition_names(DATABASE, name))
    out.update({
        "first_sync_s": round(first_s, 3),
        "first_sync_calls": first.metastore_calls,
        "first_sync_call_counts": first.call_counts,
        "commit_3_partitions_s": round(commit_s, 2),
        "incremental_sync_s": round(inc_s, 3),
        "incremental_sync_calls": inc.metastore_calls,
        "incremental_sync_call_counts": inc.call_counts,
        "incremental_partitions_added": len(inc.tables[0].partitions_added),
        "incremental_sync_listing_all_s": round(all_s, 3),
        "incremental_sync_listing_all_calls": all_result.metastore_calls,
        "metastore_partitions": registered,
    })
    return out


def run(work: Path, sizes: list[int]) -> dict[str, Any]:
    """Start a metastore and a session under ``work`` and measure every size."""
    import sqlext
    from hive_sync.metastore import Metastore, free_port

    results: dict[str, Any] = {"cores": os.cpu_count(), "partitions": {}}
    metastore = Metastore(work / "hms", free_port())
    start_s, uri = timed(lambda: metastore.start(timeout_s=180))
    results["metastore_start_s"] = round(start_s, 1)
    session = sqlext.connect(warehouse=work / "warehouse", conf={"spark.ui.showConsoleProgress": "false"})
    try:
        session.sql("SELECT 1").collect()
        for n in sizes:
            results["partitions"][str(n)] = run_size(session, uri, n)
    finally:
        session.stop()
        metastore.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    """``--partitions`` (comma list, default ``100,1000``), ``--work`` (default: a temp dir removed after)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--partitions", default="100,1000", help="comma-separated partition counts")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.partitions.split(",") if s.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_hive_sync_"))
    try:
        results = run(work.resolve(), sizes)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(results, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
