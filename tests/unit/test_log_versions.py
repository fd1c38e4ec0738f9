"""engine.write.append_handle.LogVersions: the next log version of each file slice a task appends to, with
each partition listed once per task and write, and the task's own new log files counted."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from engine.filegroup.naming import log_file_name
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro
from engine.storage import Storage
from engine.write.append_handle import LatestSlice, LogVersions, append_to_file_group
from engine.write.handles import TaskIdentity, WriteContext
from engine.write.prepare import PARTITION_PATH, RECORD_KEY

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])
BASE = "20240101000000001"
NOW = "20240102000000001"


def context(tmp_path: Path) -> WriteContext:
    conf = {"hoodie.table.recordkey.fields": "id", "hoodie.table.type": "MERGE_ON_READ"}
    return WriteContext(Storage.for_uri(str(tmp_path)), str(tmp_path), NOW, SCHEMA,
                        add_meta_fields(arrow_to_avro(SCHEMA, "t")), conf)


def touch(folder: Path, file_id: str, version: int, token: str = "0-1-2", base: str = BASE) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / log_file_name(file_id, base, version, token)).write_bytes(b"")


def test_each_partition_is_listed_once_and_leftovers_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(tmp_path)
    touch(tmp_path / "p=a", "fg1", 1)
    touch(tmp_path / "p=a", "fg1", 3, token="1-4-9")  # a failed attempt's leftover, higher than the slice knows
    touch(tmp_path / "p=a", "fg2", 1)
    touch(tmp_path / "p=a", "fg2", 7, base="20230101000000001")  # an older slice of the same file group
    touch(tmp_path / "p=b", "fg3", 2)
    listed: list[str] = []
    original = Storage.list_dir

    def counting(self: Storage, path: str) -> list:  # type: ignore[type-arg]
        listed.append(path)
        return original(self, path)

    monkeypatch.setattr(Storage, "list_dir", counting)
    versions = LogVersions(ctx)
    slices = {fid: LatestSlice(p, fid, BASE, "") for fid, p in
              (("fg1", "p=a"), ("fg2", "p=a"), ("fg3", "p=b"), ("fg4", "p=b"))}
    assert [versions.next(slices[f]) for f in ("fg1", "fg2", "fg3", "fg4")] == [4, 2, 3, 1]
    assert sorted(listed) == [str(tmp_path / "p=a"), str(tmp_path / "p=b")]
    versions.record(slices["fg1"], 5)
    assert versions.next(slices["fg1"]) == 6
    assert len(listed) == 2


def test_a_task_appending_twice_to_a_slice_takes_the_next_version(tmp_path: Path) -> None:
    """The task's own log files count without listing again: the second append does not reuse version 1."""
    ctx = context(tmp_path)
    versions = LogVersions(ctx)
    slice_ = LatestSlice("", "fg1", BASE, "")
    rows = pa.table({"id": ["k1"], "ts": pa.array([1], pa.int64()), RECORD_KEY: ["k1"], PARTITION_PATH: [""]})
    first = append_to_file_group(ctx, slice_, rows, TaskIdentity(0, 1, 2), versions)
    second = append_to_file_group(ctx, slice_, rows, TaskIdentity(0, 1, 2), versions)
    assert [s.log_version for s in first + second] == [1, 2]
    assert len({s.path for s in first + second}) == 2
