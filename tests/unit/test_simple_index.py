"""The simple index's file reading: filtering by wanted keys, and splitting files into even groups."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from engine.config import HoodieConfig
from engine.index.simple import KeyedFile, balanced_groups, read_key_locations
from engine.storage import Storage


def test_groups_are_even_and_keep_every_file() -> None:
    sizes = [100, 90, 80, 10, 10, 10, 5, 5, 1, 0]
    files = [KeyedFile("p", f"fg{i}", f"/t/p/f{i}.parquet", size) for i, size in enumerate(sizes)]
    groups = balanced_groups(files, 3)
    assert len(groups) == 3
    assert sorted(f.path for g in groups for f in g) == sorted(f.path for f in files)
    totals = sorted(sum(f.size for f in g) for g in groups)
    assert totals[-1] - totals[0] <= 10
    assert balanced_groups(files[:2], 8) == [[files[0]], [files[1]]]
    assert balanced_groups([], 4) == []


def test_wanted_keys_filter_one_file(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"_hoodie_record_key": ["a", "b", "c", "d"], "v": [1, 2, 3, 4]}), path)
    storage = Storage.for_uri(str(tmp_path))
    conf = HoodieConfig({"hoodie.populate.meta.fields": "true"})
    file = KeyedFile("p=1", "fg", str(path))
    everything = read_key_locations(storage, file, conf)
    assert everything.column(0).to_pylist() == ["a", "b", "c", "d"]
    kept = read_key_locations(storage, file, conf, pa.array(["d", "b", "zz"]))
    assert kept.to_pylist() == [
        {"_hoodie_record_key": "b", "_hoodie_partition_path": "p=1", "_hoodie_file_id": "fg"},
        {"_hoodie_record_key": "d", "_hoodie_partition_path": "p=1", "_hoodie_file_id": "fg"},
    ]
    assert read_key_locations(storage, file, conf, pa.array([], pa.string())).num_rows == 0
