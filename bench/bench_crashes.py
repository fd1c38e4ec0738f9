"""Crash anywhere (issue 15): kill -9 a writer or table service at seeded points and check nothing is lost;
prints one JSON document.

Each case copies a prepared table (copy-on-write or merge-on-read, partitioned, a few commits, a savepoint, a
pending compaction plan on merge-on-read), runs one operation in its own process — ``insert``, ``upsert``,
``delete`` (Spark writes), ``compaction``, ``clustering`` (Spark), ``clean``, ``archive``, ``rollback`` (of the
latest commit), ``restore`` (to the savepoint) — and SIGKILLs that process at the n-th call of one storage or
timeline function (``Storage.create_if_absent``, ``open_output``, ``delete``, ``rename``, ...,
``ActiveTimeline.complete`` ...), before or after the call, in the driver or in a Spark Python worker (which kills
the driver first). The points are drawn from a seed, among the calls a crash-free run of the same operation makes
(its census). Then the next writer runs (an upsert of one new row, in this process's Spark session) and then the
operation once more where Hudi would (compaction, clustering, clean: the next run completes them).

Checked for every case (the script fails otherwise): the rows hudi-rs reads after the next writer are the rows
before the operation or the rows a crash-free run of it gives (never a mix, nothing lost, nothing uncommitted
visible), plus the next writer's row; no write instant is left pending; and after the operation's rerun, the
table reads the same. Reported: points by operation and target, outcome (rolled back / committed / completed by
the rerun).

Usage: ``python bench/bench_crashes.py [--points 200] [--seed 15] [--ops insert,upsert,...]
[--types COPY_ON_WRITE,MERGE_ON_READ] [--work DIR]``. The CI
test runs a few points (tests/integration/test_reliability_crashes.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HOOK = Path(__file__).resolve().parent / "crash_hook"
ROOT = Path(__file__).resolve().parents[1]
SPARK_OPS = ("insert", "upsert", "delete", "compaction", "clustering")
PLAIN_OPS = ("clean", "archive", "rollback", "restore")
ALL_OPS = SPARK_OPS + PLAIN_OPS
MOR_ONLY = ("compaction",)
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
OPTIONS = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
           "hoodie.parquet.small.file.limit": "0"}

OPERATION = textwrap.dedent("""
    import json, os, sys
    os.environ["SQLEXT_CRASH_DRIVER"] = str(os.getpid())
    base, op, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    from engine.table import Table
    table = Table.load(base)
    conf = table.config.overlay(options)
    if op == "clean":
        from engine.services.clean import run_clean
        run_clean(table, conf.overlay({"hoodie.cleaner.commits.retained": "1"}), force=True)
    elif op == "archive":
        from engine.services.archive import archive
        archive(table, conf.overlay({"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                     "hoodie.cleaner.commits.retained": "1"}))
    elif op == "rollback":
        from engine.services.savepoint import rollback_to_instant
        rollback_to_instant(table, table.timeline.last_completed_commit().timestamp)
    elif op == "restore":
        from engine.services.savepoint import restore_to_savepoint, savepoint_times
        restore_to_savepoint(table, savepoint_times(table)[0])
    else:
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        if op in ("insert", "upsert", "delete"):
            from engine.spark.writer import write_dataframe
            from engine.write.operation import WriteOperation
            rows = {"insert": [(100, "new", 9, "d1"), (101, "new", 9, "d2")],
                    "upsert": [(0, "changed", 9, "d1"), (1, "changed", 9, "d2"), (102, "new", 9, "d1")],
                    "delete": [(0, "x", 9, "d1"), (3, "x", 9, "d2")]}[op]
            df = spark.createDataFrame(rows, "id INT, name STRING, ts BIGINT, dt STRING")
            operation = {"insert": WriteOperation.INSERT, "upsert": WriteOperation.UPSERT,
                         "delete": WriteOperation.DELETE}[op]
            write_dataframe(spark, table, df, operation, options)
        elif op == "compaction":
            from engine.services.compaction import pending_compactions
            from engine.spark.compaction import execute_compaction
            execute_compaction(spark, table, pending_compactions(table)[0].timestamp, options)
        elif op == "clustering":
            from engine.services.clustering import schedule_clustering
            from engine.spark.clustering import execute_clustering
            instant, _ = schedule_clustering(table, conf)
            execute_clustering(spark, table, instant, options)
    print("done")
""")

SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": ["null", "int"], "default": None},
    {"name": "name", "type": ["null", "string"], "default": None},
    {"name": "ts", "type": ["null", "long"], "default": None},
    {"name": "dt", "type": ["null", "string"], "default": None}]}
ROW_TYPE = "id INT, name STRING, ts BIGINT, dt STRING"


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SQLEXT_CRASH")}
    env["PYTHONPATH"] = os.pathsep.join([str(HOOK), str(ROOT), env.get("PYTHONPATH", "")])
    env["PYSPARK_PYTHON"] = sys.executable
    env.update(extra)
    return env


def _run(script: str, args: list[str], env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


def read_rows(base: Path) -> list[tuple[Any, ...]]:
    """(id, name, ts, dt) rows hudi-rs reads, sorted."""
    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    batches = HudiTableBuilder.from_base_uri(str(base)).build().read(HudiReadOptions())
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted((r["id"], r["name"], r["ts"], r["dt"]) for r in rows)


def pending_writes(base: Path) -> list[str]:
    from engine.table import Table
    from engine.write.rollback import is_pending_clustering

    table = Table.load(str(base))
    return [f"{i.timestamp}.{i.action}" for i in table.timeline.reload().pending()
            if i.action in ("commit", "deltacommit", "replacecommit") and not is_pending_clustering(table, i)]


def pending_restore(base: Path) -> bool:
    from engine.services.savepoint import pending_restores
    from engine.table import Table

    return bool(pending_restores(Table.load(str(base))))


class Harness:
    """Prepared tables, censuses and one Spark session for the next writer."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.prepared: dict[str, Path] = {}
        self.census: dict[tuple[str, str], dict[str, int]] = {}
        self.after: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        self._spark: Any = None

    def prepare(self, table_type: str) -> Path:
        """A partitioned table of ``table_type``: four upserts, a savepoint on the second, and (merge-on-read) a
        pending compaction plan; written in this process's Spark session."""
        if table_type not in self.prepared:
            from engine.services.compaction import schedule_compaction
            from engine.services.savepoint import create_savepoint
            from engine.spark.writer import write_dataframe
            from engine.table import Table
            from engine.write.operation import WriteOperation

            base = self.work / f"prepared-{table_type}"
            shutil.rmtree(base, ignore_errors=True)
            Table.create(str(base), {
                "hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.recordkey.fields": "id",
                "hoodie.table.precombine.field": "ts", "hoodie.table.partition.fields": "dt",
                "hoodie.datasource.write.hive_style_partitioning": "true",
                "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
                "hoodie.table.create.schema": json.dumps(SCHEMA)})
            spark = self.spark()
            for n in range(4):
                rows = [(2 * n, f"a{n}", n, "d1"), (2 * n + 1, f"b{n}", n, "d2")] + ([(0, f"u{n}", 10 + n, "d1")]
                                                                                 if n else [])
                write_dataframe(spark, Table.load(str(base)), spark.createDataFrame(rows, ROW_TYPE),
                                WriteOperation.UPSERT, OPTIONS)
                if n == 1:
                    table = Table.load(str(base))
                    last = table.timeline.last_completed_commit()
                    assert last is not None
                    create_savepoint(table, last.timestamp)
            if table_type == "MERGE_ON_READ":
                table = Table.load(str(base))
                schedule_compaction(table, table.config.overlay(OPTIONS), force=True)
            self.prepared[table_type] = base
        return self.prepared[table_type]

    def copy(self, table_type: str, name: str) -> Path:
        target = self.work / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.prepare(table_type), target)
        return target

    def take_census(self, table_type: str, op: str) -> dict[str, int]:
        """Calls per target (the most any one process made) of a crash-free run; keeps its resulting rows."""
        key = (table_type, op)
        if key not in self.census:
            base = self.copy(table_type, f"census-{table_type}-{op}")
            log = self.work / f"census-{table_type}-{op}.txt"
            log.unlink(missing_ok=True)
            done = _run(OPERATION, [str(base), op, json.dumps(OPTIONS)], _env({"SQLEXT_CRASH_CENSUS": str(log)}))
            if done.returncode != 0:
                raise RuntimeError(f"{op} on {table_type} failed without a crash:\n{done.stderr[-3000:]}")
            per_process: dict[tuple[str, str], int] = collections.Counter()
            for line in log.read_text().splitlines() if log.exists() else []:
                pid, target = line.split()
                per_process[(pid, target)] += 1
            counts: dict[str, int] = {}
            for (_, target), n in per_process.items():
                counts[target] = max(counts.get(target, 0), n)
            self.census[key] = counts
            self.after[key] = read_rows(base)
        return self.census[key]

    def spark(self) -> Any:
        if self._spark is None:
            from pyspark.sql import SparkSession

            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            self._spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                           .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        return self._spark

    def next_writer(self, base: Path, key: int) -> None:
        """The next writer: an upsert of one new row (rolls back what the crash left, as the next writer does)."""
        from engine.spark.writer import write_dataframe
        from engine.table import Table
        from engine.write.operation import WriteOperation

        spark = self.spark()
        df = spark.createDataFrame([(key, "next", 99, "d2")], ROW_TYPE)
        write_dataframe(spark, Table.load(str(base)), df, WriteOperation.UPSERT, OPTIONS)

    def next_writer_refused(self, base: Path, key: int) -> bool:
        """Whether the next writer is refused because a restore is pending (nothing written)."""
        from engine.errors import PendingRestoreError

        try:
            self.next_writer(base, key)
        except PendingRestoreError:
            return True
        return False

    def rerun(self, base: Path, op: str) -> None:
        """What a user runs next for a table service that was killed: the same service again (a restore only
        while it is pending)."""
        if op not in ("compaction", "clustering", "clean", "restore"):
            return
        from engine.table import Table

        table = Table.load(str(base))
        conf = table.config.overlay(OPTIONS)
        if op == "restore":
            from engine.services.savepoint import pending_restores, restore_to_savepoint, savepoint_times
            if pending_restores(table):
                restore_to_savepoint(table, savepoint_times(table)[0])
        elif op == "clean":
            from engine.services.clean import run_clean
            run_clean(table, conf.overlay({"hoodie.cleaner.commits.retained": "1"}))
        elif op == "compaction":
            from engine.services.compaction import pending_compactions
            from engine.spark.compaction import execute_compaction
            for instant in pending_compactions(table):
                execute_compaction(self.spark(), Table.load(str(base)), instant.timestamp, OPTIONS)
        else:
            from engine.services.clustering import pending_clusterings
            from engine.spark.clustering import execute_clustering
            for instant in pending_clusterings(table):
                execute_clustering(self.spark(), Table.load(str(base)), instant.timestamp, OPTIONS)


def draw_points(harness: Harness, count: int, seed: int, ops: list[str],
                types: tuple[str, ...] = TABLE_TYPES) -> list[dict[str, Any]]:
    """``count`` crash points, the operations in turn (an operation whose crash-free run makes no call of any
    target on the drawn table type is drawn again)."""
    rng = random.Random(seed)
    points: list[dict[str, Any]] = []
    attempts = 0
    while len(points) < count and attempts < 10 * count:
        op = ops[attempts % len(ops)]
        attempts += 1
        table_type = "MERGE_ON_READ" if op in MOR_ONLY else rng.choice(list(types))
        census = harness.take_census(table_type, op)
        if not census:
            continue
        target = rng.choice(sorted(census))
        points.append({"op": op, "type": table_type, "target": target, "when": rng.choice(["before", "after"]),
                       "nth": rng.randint(1, census[target])})
    return points


def run_point(harness: Harness, point: dict[str, Any], index: int) -> dict[str, Any]:
    table_type, op = point["type"], point["op"]
    base = harness.copy(table_type, f"case-{index}")
    before = read_rows(base)
    after = harness.after[(table_type, op)]
    spec = f"{point['target']}|{point['when']}|{point['nth']}"
    started = time.monotonic()
    done = _run(OPERATION, [str(base), op, json.dumps(OPTIONS)], _env({"SQLEXT_CRASH": spec}))
    killed = done.returncode == -9
    if not killed and done.returncode != 0:
        raise AssertionError(f"point {point}: the operation failed without being killed:\n{done.stderr[-3000:]}")
    right_after = read_rows(base)
    state = "before" if right_after == before else "after" if right_after == after else "mixed"
    next_key = 1000 + index
    if op == "restore" and pending_restore(base):
        # Hudi's rule: a half-done restore (readers may see an intermediate commit) blocks every writer until
        # the restore is run again; the rerun finishes it.
        if not harness.next_writer_refused(base, next_key):
            raise AssertionError(f"point {point}: a writer started while restore was pending")
        harness.rerun(base, op)
        if read_rows(base) != after:
            raise AssertionError(f"point {point}: the rerun restore reads {read_rows(base)}, expected {after}")
        state = f"{state}_resumed"
    elif state == "mixed":
        raise AssertionError(f"point {point}: hudi-rs reads neither the rows before nor after the operation: "
                             f"{right_after}")
    harness.next_writer(base, next_key)
    expected = sorted([*(before if state == "before" else after), (next_key, "next", 99, "d2")])
    rows = read_rows(base)
    if rows != expected:
        raise AssertionError(f"point {point}: after the next writer hudi-rs reads {rows}, expected {expected}")
    left = pending_writes(base)
    if left:
        raise AssertionError(f"point {point}: write instants left pending after the next writer: {left}")
    harness.rerun(base, op)
    if read_rows(base) != expected:
        raise AssertionError(f"point {point}: the rerun of {op} changed the rows")
    shutil.rmtree(base, ignore_errors=True)
    return {**point, "killed": killed, "state_after_crash": state, "seconds": round(time.monotonic() - started, 2)}


def run(work: Path, points: int, seed: int, ops: list[str], types: tuple[str, ...] = TABLE_TYPES,
        skip: int = 0, limit: int | None = None) -> dict[str, Any]:
    harness = Harness(work)
    chosen = draw_points(harness, points, seed, ops, types)
    results = []
    for index, point in enumerate(chosen):
        if index < skip or (limit is not None and index >= skip + limit):
            continue
        results.append(run_point(harness, point, index))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    by_op: dict[str, dict[str, int]] = {}
    for r in results:
        entry = by_op.setdefault(r["op"], collections.Counter())
        entry["points"] += 1
        entry["killed"] += int(r["killed"])
        entry[f"reads_{r['state_after_crash']}"] += 1
    targets = collections.Counter(r["target"] for r in results)
    return {"seed": seed, "points_drawn": points, "skipped": skip, "limit": limit, "points": len(results), "killed": sum(r["killed"] for r in results),
            "by_operation": {k: dict(v) for k, v in sorted(by_op.items())}, "by_target": dict(sorted(targets.items())),
            "all_checks_passed": True, "cases": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--ops", default=",".join(ALL_OPS))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--types", default=",".join(TABLE_TYPES),
                        help="table types to draw from (compaction always runs on MERGE_ON_READ)")
    parser.add_argument("--skip", type=int, default=0,
                        help="draw --points points but run only those after the first SKIP (resume a long run)")
    parser.add_argument("--limit", type=int, default=None,
                        help="run at most LIMIT of the drawn points after --skip (split a long run)")
    args = parser.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    types = tuple(t.strip().upper() for t in args.types.split(",") if t.strip())
    if not types or set(types) - set(TABLE_TYPES):
        parser.error(f"--types takes {', '.join(TABLE_TYPES)}")
    unknown = sorted(set(ops) - set(ALL_OPS))
    if unknown:
        parser.error(f"unknown operations {unknown}; known: {', '.join(ALL_OPS)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_crashes_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        report = run(work.resolve(), args.points, args.seed, ops, types, args.skip, args.limit)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
