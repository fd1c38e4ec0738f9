"""Generate TPC-H data with DuckDB's standard dbgen and write one parquet file per table.

The ``tpch`` extension is loaded from the ``duckdb-extension-tpch`` wheel by path (no network).
Besides the base tables it writes the refresh-function inputs the merge example uses:
``rf1_lineitem`` (line items of new orders, TPC-H RF1 shape) and ``rf2_orderkeys`` (order keys to
delete, RF2 shape), both about 0.1% of lineitem as the spec's SF-relative sizes give, plus
``updates_lineitem`` (about ``update_fraction`` of existing line items with a new quantity and price).

Usage: ``python bench/tpch_gen.py --sf 1 --out bench/data/sf1`` (prints a JSON summary).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import duckdb

TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")


def extension_path() -> Path:
    """Path of the tpch extension file inside the ``duckdb-extension-tpch`` wheel."""
    import duckdb_extension_tpch

    root = Path(duckdb_extension_tpch.__file__).parent / "extensions"
    found = sorted(root.glob("v*/tpch.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no tpch.duckdb_extension under {root}")
    return found[-1]


def generate(sf: float, out: Path, update_fraction: float = 0.01, seed: float = 0.42) -> dict[str, object]:
    """Generate TPC-H at scale factor ``sf`` into ``out`` and return row counts and timings."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute(f"LOAD '{extension_path()}'")
    start = time.monotonic()
    con.execute(f"CALL dbgen(sf={sf})")
    generated = time.monotonic() - start
    counts: dict[str, int] = {}
    for name in TABLES:
        con.execute(f"COPY {name} TO '{out / (name + '.parquet')}' (FORMAT PARQUET)")
        counts[name] = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]  # type: ignore[index]
    max_order = con.execute("SELECT max(l_orderkey) FROM lineitem").fetchone()[0]  # type: ignore[index]
    con.execute(f"SELECT setseed({seed})")
    # RF1: new orders' line items (keys above the current maximum), copied from a sample of orders.
    con.execute(f"""COPY (
        SELECT l_orderkey + {max_order} AS l_orderkey, * EXCLUDE (l_orderkey)
        FROM lineitem WHERE l_orderkey % 1000 = 7) TO '{out / 'rf1_lineitem.parquet'}' (FORMAT PARQUET)""")
    # RF2: orders to delete.
    con.execute(f"""COPY (SELECT DISTINCT l_orderkey FROM lineitem WHERE l_orderkey % 1000 = 13)
        TO '{out / 'rf2_orderkeys.parquet'}' (FORMAT PARQUET)""")
    # Updates: existing line items with a changed quantity and price.
    con.execute(f"""COPY (
        SELECT * REPLACE (l_quantity + 1 AS l_quantity, l_extendedprice * 1.01 AS l_extendedprice,
                          'updated' AS l_comment)
        FROM lineitem WHERE random() < {update_fraction}) TO '{out / 'updates_lineitem.parquet'}' (FORMAT PARQUET)""")
    for extra in ("rf1_lineitem", "rf2_orderkeys", "updates_lineitem"):
        counts[extra] = con.execute(
            f"SELECT count(*) FROM read_parquet('{out / (extra + '.parquet')}')").fetchone()[0]  # type: ignore[index]
    return {"sf": sf, "out": str(out), "generate_seconds": round(generated, 2),
            "total_seconds": round(time.monotonic() - start, 2), "rows": counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (1 = 6,001,215 line items)")
    parser.add_argument("--out", type=Path, default=Path("bench/data/sf1"), help="output folder")
    parser.add_argument("--update-fraction", type=float, default=0.01,
                        help="fraction of line items in updates_lineitem")
    args = parser.parse_args(argv)
    summary = generate(args.sf, args.out, args.update_fraction)
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write(os.linesep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
