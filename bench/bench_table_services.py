"""Clean and archive cost against table history: prints one JSON document.

Builds copy-on-write tables with a synthetic timeline (no Spark: each commit writes one new base file version
per file group in each of 20 partitions and a completed commit with its write stats), with 10 and 100 commits,
then measures, median of ``--repeat`` runs on fresh copies:

* ``clean``: one clean with ``hoodie.cleaner.commits.retained=5`` after the history (removing every older
  version), then a second clean after one more commit (incremental mode: only what that commit touched);
* ``archive``: one archival with ``hoodie.keep.min.commits=6`` / ``max=8`` over the history.

For each: seconds and storage calls (listings, reads, deletes, other) counted by wrapping
:class:`engine.storage.Storage`. Work proportional to what is removed shows as the second clean costing the
same at 10 and 100 commits, and the archive's calls growing with the instants archived, not with the files.

Usage: ``python bench/bench_table_services.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.config import HoodieConfig  # noqa: E402
from engine.filegroup.naming import base_file_name  # noqa: E402
from engine.filegroup.partition_metadata import write_partition_metadata  # noqa: E402
from engine.services.archive import archive  # noqa: E402
from engine.services.clean import run_clean  # noqa: E402
from engine.storage import Storage  # noqa: E402
from engine.table import Table  # noqa: E402
from engine.timeline import CommitMetadata, WriteStat  # noqa: E402

PARTITIONS = 20
GROUPS_PER_PARTITION = 5
_COUNTED = {"list_dir": "listings", "list_files_recursive": "listings", "read_bytes": "reads",
            "open_input": "reads", "delete": "deletes", "exists": "other", "size": "other",
            "create_if_absent": "writes", "write_atomic": "writes", "open_output": "writes"}


def _instant(n: int) -> str:
    return f"2025{1 + n // 28 // 24 % 12:02d}{1 + n // 24 % 28:02d}{n % 24:02d}0000000"


def build(root: Path, commits: int) -> str:
    base = root / f"t{commits}"
    table = Table.create(str(base), {
        "hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "p",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"})
    for p in range(PARTITIONS):
        write_partition_metadata(table.storage, table.base_path, f"p={p}", _instant(0))
    for n in range(commits):
        commit(table, n)
    return str(base)


def commit(table: Table, n: int) -> None:
    ts = _instant(n)
    metadata = CommitMetadata(operation_type="UPSERT")
    for p in range(PARTITIONS):
        for g in range(GROUPS_PER_PARTITION):
            name = base_file_name(f"g{g}-0", "0-0-0", ts)
            (Path(table.base_path) / f"p={p}" / name).write_bytes(b"x")
            metadata.add_write_stat(f"p={p}", WriteStat(file_id=f"g{g}-0", path=f"p={p}/{name}",
                                                        prev_commit=_instant(n - 1) if n else "null",
                                                        num_writes=1, num_update_writes=1 if n else 0))
    timeline = table.reload_timeline()
    inflight = timeline.transition_to_inflight(timeline.create_requested(ts, "commit"))
    timeline.complete(inflight, metadata.to_json())
    table.reload()


def counted(action: Callable[[], Any]) -> tuple[float, dict[str, int]]:
    calls: collections.Counter[str] = collections.Counter()
    originals = {name: getattr(Storage, name) for name in _COUNTED}

    def wrap(name: str) -> Callable[..., Any]:
        original = originals[name]

        def call(self: Storage, *args: Any, **kwargs: Any) -> Any:
            calls[_COUNTED[name]] += 1
            return original(self, *args, **kwargs)
        return call

    for name in _COUNTED:
        setattr(Storage, name, wrap(name))
    try:
        start = time.perf_counter()
        action()
        return time.perf_counter() - start, dict(calls)
    finally:
        for name, original in originals.items():
            setattr(Storage, name, original)


def measure(commits: int, repeat: int) -> dict[str, Any]:
    results: dict[str, list[tuple[float, dict[str, int]]]] = collections.defaultdict(list)
    clean_conf = HoodieConfig({"hoodie.cleaner.commits.retained": "5"})
    archive_conf = HoodieConfig({"hoodie.keep.min.commits": "6", "hoodie.keep.max.commits": "8",
                                 "hoodie.cleaner.commits.retained": "5"})
    with tempfile.TemporaryDirectory() as scratch:
        template = build(Path(scratch) / "template", commits)
        for run in range(repeat):
            copy = Path(scratch) / f"run{run}"
            shutil.copytree(template, copy)
            table = Table.load(str(copy))
            results["clean_first"].append(counted(lambda t=table: run_clean(t, clean_conf)))
            commit(table.reload(), commits)
            results["clean_incremental"].append(counted(lambda t=table: run_clean(t.reload(), clean_conf)))
            results["archive"].append(counted(lambda t=table: archive(t.reload(), archive_conf)))
    out: dict[str, Any] = {}
    for name, runs in results.items():
        out[name] = {"seconds_median": round(statistics.median(r[0] for r in runs), 4),
                     "storage_calls": runs[len(runs) // 2][1]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report = {"partitions": PARTITIONS, "file_groups_per_partition": GROUPS_PER_PARTITION, "repeat": args.repeat,
              "commits": {str(n): measure(n, args.repeat) for n in (10, 100)}}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
