"""Concurrent writers under optimistic concurrency control (issue 15): separate writer processes, each its own
``sqlext`` session (own Spark driver, own embedded metastore) whose catalog registers the same table
LOCATION, writing a fixed number of batches each and retrying conflicts; prints one JSON document.

For each table type (``--types cow,mor``) and writer count (``--writers 1,2,4,8``) and key mode:

* ``disjoint``: writer ``w`` inserts its batches into its own partition ``w<w>``: no two writers touch one file
  group, so nothing may conflict; the lock is the only cost (commits per minute).
* ``overlap``: every writer MERGEs the same few keys of one partition (update of ``--keys`` keys drawn per batch
  from a shared space of ``4 * --keys``, all written when the table is created): most commits touch the same
  file groups (conflict rate). Inserting the same *new* key from two writers at once is not checked: both
  commit, each into a new file group, as in Hudi (the conflict check compares file groups, not keys).

Every batch also upserts one receipt row of its own (partition ``r<w>``, never touched again), so its commit time
can be read back. The check (the script fails when it does not hold): every batch a writer reported committed has
its receipt, no batch it gave up on does; the table read by hudi-rs equals a serial replay of the committed
batches in commit-time order (each key holds the value of the last committed batch that wrote it; disjoint: every
inserted key exactly once); no write instant is left pending.

Writers start their Spark sessions first (writer 0 creates the table, the others then register it) and then wait
on a start file, so the timed part is the writes only.
Lock provider: ``--lock fs`` (FileSystemBasedLockProvider, default) or ``--lock hms`` (HiveMetastoreBasedLockProvider
against a metastore started for the run).

Usage: ``python bench/bench_concurrency.py [--writers 1,2,4,8] [--batches 5] [--types cow,mor]
[--modes disjoint,overlap] [--keys 20] [--work DIR]``. The reduced form runs in CI
(tests/integration/test_reliability_concurrency.py: 2 writers, 1 batch each).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
LOCKS = {"fs": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
         "hms": "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"}
MAX_ATTEMPTS = 8
"""Attempts per batch before a writer gives up on it (reported as ``gave_up``)."""


def _batch_sql(table: str, mode: str, writer: int, batch: int, keys: int, seed: int) -> str:
    tag = f"w{writer}b{batch}"
    receipt = f"(SELECT 'r-{tag}' AS id, '{tag}' AS tag, 0L AS ts, 'r{writer}' AS p)"
    if mode == "disjoint":
        rows = ", ".join(f"('k-{tag}-{i}', '{tag}', 0L, 'w{writer}')" for i in range(keys))
        return f"INSERT INTO {table} SELECT * FROM VALUES {rows} AS v(id, tag, ts, p) UNION ALL {receipt}"
    rng = random.Random(seed * 1000003 + writer * 1009 + batch)
    chosen = sorted(rng.sample(range(4 * keys), keys))
    rows = ", ".join(f"('k-{k}', '{tag}', 0L, 'shared')" for k in chosen)
    source = f"SELECT * FROM VALUES {rows} AS v(id, tag, ts, p) UNION ALL {receipt}"
    return (f"MERGE INTO {table} t USING ({source}) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")


def batch_keys(mode: str, writer: int, batch: int, keys: int, seed: int) -> list[str]:
    """The data keys (not the receipt) a batch writes."""
    tag = f"w{writer}b{batch}"
    if mode == "disjoint":
        return [f"k-{tag}-{i}" for i in range(keys)]
    rng = random.Random(seed * 1000003 + writer * 1009 + batch)
    return [f"k-{k}" for k in sorted(rng.sample(range(4 * keys), keys))]


def worker(args: argparse.Namespace) -> int:
    """One writer process: open a session, register the table, wait for the start file, write the batches."""
    import sqlext

    conf = {**OCC, "hoodie.write.lock.provider": LOCKS[args.lock], "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2"}
    if args.lock == "hms":
        conf.update({"hoodie.write.lock.hivemetastore.uris": args.hms_uri,
                     "hoodie.write.lock.hivemetastore.database": "default",
                     "hoodie.write.lock.hivemetastore.table": "bench_concurrency"})
    session = sqlext.connect(warehouse=args.warehouse, master="local[1]", conf=conf)
    if args.writer == 0:
        _create_table(session, args.location, args.table_type, args.mode, args.keys)
        Path(args.created).touch()
    else:
        deadline = time.monotonic() + 600
        while not Path(args.created).exists():
            if time.monotonic() > deadline:
                return 2
            time.sleep(0.05)
        session.sql(f"CREATE TABLE t USING hudi LOCATION '{args.location}'")
    Path(args.ready).touch()
    deadline = time.monotonic() + 600
    while not Path(args.go).exists():
        if time.monotonic() > deadline:
            return 2
        time.sleep(0.05)
    outcomes = []
    for batch in range(args.batches):
        sql = _batch_sql("t", args.mode, args.writer, batch, args.keys, args.seed)
        attempts, conflicts, result, error = 0, 0, "gave_up", ""
        started = time.monotonic()
        while attempts < MAX_ATTEMPTS:
            attempts += 1
            try:
                session.sql(sql)
                result = "committed"
                break
            except Exception as exc:  # noqa: BLE001 - classified below
                text = str(exc)
                if "write conflict" in text or "run the statement again" in text:
                    conflicts += 1
                    time.sleep(random.uniform(0.05, 0.3))
                    continue
                result, error = "error", text.splitlines()[0][:400] if text else type(exc).__name__
                break
        outcomes.append({"writer": args.writer, "batch": batch, "tag": f"w{args.writer}b{batch}",
                         "result": result, "attempts": attempts, "conflicts": conflicts, "error": error,
                         "seconds": round(time.monotonic() - started, 3)})
    Path(args.out).write_text(json.dumps(outcomes))
    session.spark.stop()
    return 0


def _create_table(session: Any, location: str, table_type: str, mode: str, keys: int) -> None:
    """The table (created by writer 0 before the start), and for ``overlap`` every key of the shared space already
    written (tag ``init``): the writers then only update, and every overlap is a file-group conflict (two writers
    inserting the same *new* key at once both commit, into two new file groups, in Hudi as here: OCC compares
    file groups, not keys)."""
    session.sql(f"""CREATE TABLE t (id STRING, tag STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        LOCATION '{location}' TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')""")
    if mode == "overlap":
        rows = ", ".join(f"('k-{k}', 'init', 0L, 'shared')" for k in range(4 * keys))
        session.sql(f"INSERT INTO t SELECT * FROM VALUES {rows} AS v(id, tag, ts, p)")


def verify(location: Path, mode: str, outcomes: list[dict[str, Any]], keys: int, seed: int) -> dict[str, Any]:
    """Check the table against a serial replay of the committed batches; returns counts, raises on a mismatch."""
    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    from engine.table import Table

    table = Table.load(str(location))
    pending = [i for i in table.timeline.reload().pending() if i.action in ("commit", "deltacommit",
                                                                            "replacecommit")]
    if pending:
        raise AssertionError(f"write instants left pending: {pending}")
    hudi = HudiTableBuilder.from_base_uri(str(location)).build()
    batches = hudi.read(HudiReadOptions())
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    receipts = {r["tag"]: r["_hoodie_commit_time"] for r in rows if str(r["id"]).startswith("r-")}
    committed = {o["tag"] for o in outcomes if o["result"] == "committed"}
    if set(receipts) != committed:
        raise AssertionError(f"receipts {sorted(receipts)} != batches reported committed {sorted(committed)}")
    data = [r for r in rows if not str(r["id"]).startswith("r-")]
    ids = [r["id"] for r in data]
    if len(ids) != len(set(ids)):
        raise AssertionError("a record key appears twice in the snapshot")
    expected: dict[str, str] = {f"k-{k}": "init" for k in range(4 * keys)} if mode == "overlap" else {}
    for o in sorted((o for o in outcomes if o["result"] == "committed"), key=lambda o: receipts[o["tag"]]):
        for key in batch_keys(mode, o["writer"], o["batch"], keys, seed):
            expected[key] = o["tag"]
    actual = {r["id"]: r["tag"] for r in data}
    if actual != expected:
        wrong = sorted(k for k in set(actual) | set(expected) if actual.get(k) != expected.get(k))
        raise AssertionError(f"{len(wrong)} keys differ from the serial replay, e.g. "
                             f"{[(k, actual.get(k), expected.get(k)) for k in wrong[:5]]}")
    return {"rows": len(data), "commits": len(receipts)}


def run_case(work: Path, table_type: str, mode: str, writers: int, batches: int, keys: int, lock: str,
             seed: int, hms_uri: str = "") -> dict[str, Any]:
    """One table, ``writers`` processes, ``batches`` each; returns the measured and checked numbers."""
    case = work / f"{table_type}-{mode}-{writers}"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir(parents=True)
    location = case / "table"
    go = case / "go"
    procs = []
    for w in range(writers):
        cmd = [sys.executable, __file__, "--worker", "--writer", str(w), "--mode", mode, "--batches", str(batches),
               "--keys", str(keys), "--seed", str(seed), "--lock", lock, "--hms-uri", hms_uri,
               "--location", str(location), "--warehouse", str(case / f"wh{w}"), "--ready", str(case / f"ready{w}"),
               "--go", str(go), "--out", str(case / f"out{w}.json"), "--created", str(case / "created"),
               "--table-type", table_type]
        log = open(case / f"writer{w}.log", "wb")  # noqa: SIM115 - closed below
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
    deadline = time.monotonic() + 900
    while not all((case / f"ready{w}").exists() for w in range(writers)):
        dead = [w for w, (p, _) in enumerate(procs) if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            for p, _ in procs:
                p.kill()
            tail = (case / f"writer{dead[0] if dead else 0}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"writer {dead} did not start:\n{tail}")
        time.sleep(0.1)
    started = time.monotonic()
    go.touch()
    for w, (p, log) in enumerate(procs):
        code = p.wait(timeout=1800)
        log.close()
        if code != 0:
            tail = (case / f"writer{w}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"writer {w} exited with {code}:\n{tail}")
    elapsed = time.monotonic() - started
    outcomes = [o for w in range(writers) for o in json.loads((case / f"out{w}.json").read_text())]
    errors = [o for o in outcomes if o["result"] == "error"]
    if errors:
        raise AssertionError(f"batches failed with errors other than conflicts: {errors[:3]}")
    checked = verify(location, mode, outcomes, keys, seed)
    attempts = sum(o["attempts"] for o in outcomes)
    conflicts = sum(o["conflicts"] for o in outcomes)
    committed = sum(o["result"] == "committed" for o in outcomes)
    shutil.rmtree(location, ignore_errors=True)
    return {"type": table_type, "mode": mode, "writers": writers, "batches_each": batches,
            "committed": committed, "gave_up": sum(o["result"] == "gave_up" for o in outcomes),
            "attempts": attempts, "conflicts": conflicts,
            "conflict_rate": round(conflicts / attempts, 3) if attempts else 0.0,
            "seconds": round(elapsed, 2), "commits_per_minute": round(committed * 60 / elapsed, 1),
            "checked": checked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="1,2,4,8")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--types", default="cow,mor")
    parser.add_argument("--modes", default="disjoint,overlap")
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--lock", choices=sorted(LOCKS), default="fs")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--work", type=Path, default=None)
    # worker mode (internal)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for name in ("writer", "mode", "location", "warehouse", "ready", "go", "out", "hms-uri", "created", "table-type"):
        parser.add_argument(f"--{name}", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        args.writer = int(args.writer)
        return worker(args)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_concurrency_"))
    results: list[dict[str, Any]] = []
    metastore = None
    hms_uri = ""
    try:
        if args.lock == "hms":
            from hive_sync.metastore import Metastore, free_port
            metastore = Metastore(work / "metastore", port=free_port())
            hms_uri = metastore.start()
        for table_type in [t.strip() for t in args.types.split(",") if t.strip()]:
            for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
                for writers in [int(n) for n in args.writers.split(",") if n.strip()]:
                    results.append(run_case(work.resolve(), table_type, mode, writers, args.batches, args.keys,
                                            args.lock, args.seed, hms_uri))
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    finally:
        if metastore is not None:
            metastore.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    json.dump({"lock": LOCKS[args.lock], "cpus": os.cpu_count(), "results": results}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
