"""MERGE INTO against delta-rs in four table shapes on TPC-H lineitem; prints one JSON document.

Measures (issue 14, item 6): ``MERGE INTO`` of 1% changed rows of lineitem (the source of
:func:`bench_cow.merge_source_sql`: half updates of existing rows, half new keys; record key
``l_orderkey,l_linenumber``, no precombine field) through ``Session.sql``, against delta-rs
(``DeltaTable.merge(...).when_matched_update_all().when_not_matched_insert_all()``) on the same rows in the same
run, for {copy-on-write, merge-on-read} x {partitioned by ``l_shipyear``, non-partitioned}. delta-rs has no
table types: it runs once per partitioning and both Hudi types are compared with it. Targets: merge-on-read at
most 0.5x, copy-on-write at most 1.0x delta-rs's median.

Each table is built once (Hudi: CTAS, a bulk insert, as bench_cow; Delta: ``write_deltalake`` streaming the
same rows from a dataset scanner) and kept pristine. Then, in 1 warm-up round and ``--runs`` timed rounds (every
shape and Delta table once a round, in alternating order), the pristine folder is copied to a scratch folder
(untimed) and merged: for Hudi ``CREATE TABLE ... USING hudi LOCATION '<copy>'``, the timed ``MERGE INTO``, then
``DROP TABLE``; for delta-rs the timed ``DeltaTable(<copy>).merge(...).execute()``. After the warm-up round each
Hudi table is checked against the Delta table of its partitioning: ``count(*)``, ``sum(l_quantity)`` and the
rows with ``l_comment = 'updated'`` must be equal (the script fails otherwise). Both sides write parquet with
``--codec`` (merge-on-read log blocks are Avro, uncompressed).

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` then
``python bench/bench_merge.py --data bench/data/sf1 [--runs 3] [--shapes mor-partitioned,cow-nonpartitioned]
[--codec snappy] [--index BUCKET] [--buckets N] [--work DIR]``.
"""

from __future__ import annotations

import os
import shutil
import statistics
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench_cow import (  # same folder (run as a script)
    PeakMemory,
    bench_main,
    merge_source_sql,
    profiled,
    timed,
    write_delta_rs_inputs,
)

SHAPES = ("cow-partitioned", "cow-nonpartitioned", "mor-partitioned", "mor-nonpartitioned")
TARGET_RATIO = {"cow": 1.0, "mor": 0.5}
"""Hudi median / delta-rs median at most this, per table type (issue 14, item 6)."""
ON = "t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber"
MERGE = ("MERGE INTO {t} t USING (SELECT *, year(l_shipdate) AS l_shipyear FROM {source}) s ON " + ON
         + " WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
CHECK = ("SELECT count(*) AS rows, sum(l_quantity) AS quantity, count_if(l_comment = 'updated') AS updated "
         "FROM {t}")


def run(data: Path, work: Path, runs: int | str = 3, shapes: str = ",".join(SHAPES),
        codec: str = "snappy", index: str = "", buckets: str = "") -> dict[str, Any]:
    import pyarrow.dataset as ds
    from deltalake import WriterProperties

    import sqlext

    wanted = [s.strip() for s in shapes.split(",") if s.strip()]
    unknown = sorted(set(wanted) - set(SHAPES))
    if unknown or not wanted:
        raise SystemExit(f"--shapes: unknown {unknown}; choose from {', '.join(SHAPES)}")
    rounds = int(runs)
    if rounds < 1:
        raise SystemExit("--runs: at least 1 timed run")
    layouts = sorted({s.split("-")[1] for s in wanted}, reverse=True)  # partitioned first
    results: dict[str, Any] = {"data": str(data), "codec": codec, "cores": os.cpu_count(), "runs": rounds,
                               "hoodie.index.type": index or "table default (SIMPLE)",
                               "hoodie.bucket.index.num.buckets": buckets or "default (256)"}
    session = sqlext.connect(warehouse=work / "warehouse", conf={
        "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "2g"})
    session.sql(f"SET hoodie.parquet.compression.codec={codec}")
    source = merge_source_sql(data)
    props = WriterProperties(compression=codec.upper())  # type: ignore[arg-type]
    pristine = work / "pristine"
    scratch = work / "runs"
    scratch.mkdir(parents=True, exist_ok=True)
    with PeakMemory() as memory:
        spark = session.spark
        lineitem = f"parquet.`{data}/lineitem.parquet`"
        results["lineitem_rows"] = spark.sql(f"SELECT count(*) FROM {lineitem}").collect()[0][0]
        results["merge_source_rows"] = spark.sql(f"SELECT count(*) FROM {source}").collect()[0][0]
        write_delta_rs_inputs(spark, data, work)
        merge_source = ds.dataset(str(work / "merge_source"), format="parquet").to_table()
        built: dict[str, float] = {}
        for shape in wanted:
            built[shape] = _build_hudi(session, data, shape, pristine / shape, index, buckets)
        for layout in layouts:
            built[layout] = _build_delta(work / "lineitem_with_year", pristine / f"delta-{layout}", layout, props)

        # Round 0 is the warm-up (and the correctness check); the order alternates between rounds.
        jobs = [("hudi", s) for s in wanted] + [("delta", x) for x in layouts]
        times: dict[tuple[str, str], list[float]] = {job: [] for job in jobs}
        metrics: dict[tuple[str, str], dict[str, Any]] = {}
        checks: dict[tuple[str, str], dict[str, Any]] = {}
        compared: dict[str, dict[str, Any]] = {}
        for i in range(rounds + 1):
            for engine, name in (jobs if i % 2 == 0 else jobs[::-1]):
                copy = scratch / f"{engine}-{name}-{i}"
                shutil.copytree(pristine / (name if engine == "hudi" else f"delta-{name}"), copy)
                if engine == "hudi":
                    seconds, metrics[engine, name], check = _hudi_merge(session, name, copy, source, i == 0,
                                                                        _index_props(index, buckets))
                else:
                    seconds, metrics[engine, name], check = _delta_merge(copy, merge_source, props, i == 0)
                if check is not None:
                    checks[engine, name] = check
                shutil.rmtree(copy)
                times[engine, name].append(round(seconds, 3))
            if i == 0:  # fail before the timed rounds if a merge went wrong
                compared = {shape: _compare(shape, checks["hudi", shape], checks["delta", shape.split("-")[1]])
                            for shape in wanted}
    session.stop()

    results["delta_rs"] = {layout: {
        "initial_write_s": round(built[layout], 2), "warmup_s": times["delta", layout][0],
        "runs_s": times["delta", layout][1:], "median_s": round(statistics.median(times["delta", layout][1:]), 3),
        "metrics": metrics["delta", layout]} for layout in layouts}
    results["shapes"] = {}
    for shape in wanted:
        kind, layout = shape.split("-")
        hudi_median = round(statistics.median(times["hudi", shape][1:]), 3)
        ratio = round(hudi_median / results["delta_rs"][layout]["median_s"], 3)
        results["shapes"][shape] = {
            "hudi_bulk_insert_s": round(built[shape], 2), "hudi_warmup_s": times["hudi", shape][0],
            "hudi_runs_s": times["hudi", shape][1:], "hudi_median_s": hudi_median,
            "delta_rs_median_s": results["delta_rs"][layout]["median_s"], "hudi_vs_delta_rs": ratio,
            "target_max_ratio": TARGET_RATIO[kind], "target_met": ratio <= TARGET_RATIO[kind],
            "hudi_merge_metrics": metrics["hudi", shape], "delta_rs_metrics": metrics["delta", layout],
            "check": compared[shape]}
    results["driver_python_peak_rss_mb"] = round(memory.peak_python / 2**20)
    results["driver_jvm_peak_rss_mb"] = round(memory.peak_jvm / 2**20)
    return results


def _table_name(shape: str) -> str:
    return "li_" + shape.replace("-", "_")


def _build_hudi(session: Any, data: Path, shape: str, location: Path, index: str = "", buckets: str = "") -> float:
    """CTAS (bulk insert) of lineitem plus ``l_shipyear`` at ``location``, with ``hoodie.index.type = index``
    when given (the table's own default otherwise); the catalog entry is dropped again, the folder stays as the
    pristine copy. Returns the CTAS seconds."""
    kind, layout = shape.split("-")
    name = _table_name(shape)
    partitioned = "PARTITIONED BY (l_shipyear)" if layout == "partitioned" else ""
    index_prop = f", 'hoodie.index.type' = '{index}'" if index else ""
    if buckets:
        index_prop += f", 'hoodie.bucket.index.num.buckets' = '{buckets}'"
    seconds, _ = timed(lambda: session.sql(f"""CREATE TABLE {name} USING hudi {partitioned}
        TBLPROPERTIES (type = '{kind}', primaryKey = 'l_orderkey,l_linenumber'{index_prop}) LOCATION '{location}'
        AS SELECT *, year(l_shipdate) AS l_shipyear FROM parquet.`{data}/lineitem.parquet`""").collect())
    session.sql(f"DROP TABLE {name}")
    return seconds


def _build_delta(rows: Path, target: Path, layout: str, props: Any) -> float:
    """Write the Delta table from a record batch reader over ``rows`` (never the whole table in memory)."""
    import pyarrow.dataset as ds
    from deltalake import write_deltalake

    reader = ds.dataset(str(rows), format="parquet").scanner().to_reader()
    seconds, _ = timed(lambda: write_deltalake(str(target), reader, writer_properties=props,
                                               partition_by=["l_shipyear"] if layout == "partitioned" else None))
    return seconds


def _index_props(index: str, buckets: str) -> str:
    """The TBLPROPERTIES entries naming the index (the write options a catalog entry carries: a table registered
    on a folder without them writes with the default index)."""
    props = [f"'hoodie.index.type' = '{index}'"] if index else []
    if buckets:
        props.append(f"'hoodie.bucket.index.num.buckets' = '{buckets}'")
    return ", ".join(props)


def _hudi_merge(session: Any, shape: str, copy: Path, source: str, check: bool,
                props: str = "") -> tuple[float, dict[str, Any], dict[str, Any] | None]:
    """Register ``copy`` (with TBLPROPERTIES ``props``), time the MERGE, optionally read the check figures, drop
    the entry."""
    name = _table_name(shape)
    properties = f" TBLPROPERTIES ({props})" if props else ""
    session.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'{properties}")
    try:
        seconds, rows, profile = profiled(session, lambda: session.sql(MERGE.format(t=name, source=source)).collect())
        figures = session.sql(CHECK.format(t=name)).first().asDict() if check else None
    finally:
        session.sql(f"DROP TABLE {name}")
    return seconds, {**rows[0].asDict(), "profile": profile}, figures


def _delta_merge(copy: Path, source: Any, props: Any,
                 check: bool) -> tuple[float, dict[str, Any], dict[str, Any] | None]:
    """Time opening ``copy`` and merging ``source`` into it; optionally read the check figures by batches."""
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    seconds, out = timed(lambda: DeltaTable(str(copy)).merge(
        source, ON, source_alias="s", target_alias="t", writer_properties=props)
        .when_matched_update_all().when_not_matched_insert_all().execute())
    kept = ("num_source_rows", "num_target_rows_updated", "num_target_rows_inserted", "num_target_rows_copied",
            "num_target_files_added", "num_target_files_removed")
    figures = None
    if check:  # batch by batch (a dataset filter on l_comment fails: string vs string_view in merged files)
        rows, quantity, updated = 0, Decimal(0), 0
        for batch in DeltaTable(str(copy)).to_pyarrow_dataset().to_batches(columns=["l_quantity", "l_comment"]):
            rows += batch.num_rows
            quantity += pc.sum(batch.column(0)).as_py() or 0
            updated += pc.sum(pc.equal(batch.column(1), "updated")).as_py() or 0
        figures = {"rows": rows, "quantity": quantity, "updated": updated}
    return seconds, {k: out[k] for k in kept if k in out}, figures


def _compare(shape: str, hudi: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """The check entry of one shape; raises when the two tables differ after the same merge."""
    if hudi != delta:
        raise RuntimeError(f"{shape}: the Hudi table differs from delta-rs's after the same MERGE: "
                           f"hudi {hudi} vs delta-rs {delta}")
    return {"equal": True, **{k: str(v) for k, v in hudi.items()}}


def main(argv: list[str] | None = None) -> int:
    """``--runs`` (timed rounds after the warm-up, default 3), ``--shapes`` (comma list of ``SHAPES``, default
    all four), ``--codec`` (both writers, default snappy), ``--index`` (``hoodie.index.type`` of the Hudi tables,
    e.g. ``BUCKET``; default: the table default), ``--buckets`` (``hoodie.bucket.index.num.buckets``; default:
    Hudi's 256), plus bench_cow's ``--data`` and ``--work``."""
    return bench_main(run, __doc__.splitlines()[0], argv, runs=3, shapes=",".join(SHAPES), codec="snappy",
                      index="", buckets="")


if __name__ == "__main__":
    raise SystemExit(main())
