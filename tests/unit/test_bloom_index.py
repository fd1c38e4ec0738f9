"""The bloom index's file probe without Spark, on base files Apache Hudi wrote (their footers' key ranges and
bloom filters are Hudi's own): every stored key is found in its file and only there, absent keys never are,
and files whose range or filter rules keys out have no key column read."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from engine.config import HoodieConfig
from engine.formats.base_file import read_record_keys
from engine.index.bloom import ProbeStats, keys_in_range, lookup_file, lookup_files
from engine.index.simple import KeyedFile
from engine.storage import Storage
from tests.unit.fixture_tables import base_files, extract_tables


def test_hudi_written_files_are_probed_exactly(tmp_path: Path) -> None:
    table_dir = extract_tables(tmp_path, "sample_table/cow/v6_complexkeygen_hivestyle.zip")[0]
    storage = Storage.for_uri(str(table_dir))
    files = [KeyedFile(str(p.parent.relative_to(table_dir)), p.name.split("_")[0], str(p), p.stat().st_size)
             for p in base_files(table_dir)]
    assert len(files) >= 2
    stored = {f.path: read_record_keys(storage, f.path).to_pylist() for f in files}
    absent = ["zz-not-there", "00-not-there", "m-not-there"]
    every_key = pa.array(sorted({k for keys in stored.values() for k in keys} | set(absent)), pa.string())
    conf = HoodieConfig({})
    stats = ProbeStats()
    found = lookup_files(storage, files, None, every_key, conf, stats)
    by_file = {(r["_hoodie_file_id"], r["_hoodie_record_key"]) for r in found.to_pylist()}
    expected = {(f.file_id, k) for f in files for k in stored[f.path]}
    assert by_file == expected
    assert stats.files == len(files) and stats.footers_read == len(files)
    assert stats.keys_found == sum(len(keys) for keys in stored.values())  # old versions of a file group too
    # Keys outside every file's range: no bloom probe, no key read.
    outside = ProbeStats()
    assert lookup_file(storage, files[0], pa.array(["~~~~"], pa.string()), conf, outside).num_rows == 0
    assert outside.files_pruned_by_range == 1 and outside.files_key_checked == 0
    # Without range pruning the bloom filter rules the key out.
    no_ranges = HoodieConfig({"hoodie.bloom.index.prune.by.ranges": "false"})
    bloom_only = ProbeStats()
    assert lookup_file(storage, files[0], pa.array(["~~~~"], pa.string()), no_ranges, bloom_only).num_rows == 0
    assert bloom_only.files_pruned_by_bloom == 1 and bloom_only.keys_probed == 1


def test_key_ranges_in_java_order() -> None:
    keys = pa.array(["a", "b", "c", "d", "\U0001F600x", "\uffff"], pa.string())
    assert keys_in_range(keys, "b", "c").to_pylist() == ["b", "c", "\U0001F600x"]  # unsure keys kept
    assert keys_in_range(keys, None, "c").to_pylist() == keys.to_pylist()
    assert keys_in_range(keys, "\U0001F600", "\U0001F601").to_pylist() == keys.to_pylist()
