"""Write planning and handles without Spark: precombine de-duplication, the upsert partitioner (small files,
new file groups, insert weights), average record size, and the merge/create handles on real files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from engine.config import HoodieConfig
from engine.formats.base_file import read_base_file
from engine.storage import Storage
from engine.timeline.commit_metadata import CommitMetadata, WriteStat
from engine.write.handles import TaskIdentity, WriteContext, create_file_group
from engine.write.merge_handle import merge_file_group
from engine.write.planner import (
    BucketKind,
    ExistingFileGroup,
    WorkloadProfile,
    average_record_size,
    plan_writes,
    small_file_candidates,
)
from engine.write.prepare import IS_DELETED, PARTITION_PATH, RECORD_KEY, dedupe_by_key


def records(rows: list[tuple[str, int, str]], deleted: list[bool] | None = None) -> pa.Table:
    table = pa.table({
        "id": pa.array([r[0] for r in rows], pa.string()),
        "ts": pa.array([r[1] for r in rows], pa.int64()),
        "v": pa.array([r[2] for r in rows], pa.string()),
        RECORD_KEY: pa.array([r[0] for r in rows], pa.string()),
        PARTITION_PATH: pa.array(["p=a"] * len(rows), pa.string()),
    })
    if deleted is not None:
        table = table.append_column(IS_DELETED, pa.array(deleted, pa.bool_()))
    return table


def test_dedupe_keeps_greatest_precombine_and_last_arrival_on_ties() -> None:
    data = records([("k1", 1, "a"), ("k2", 5, "b"), ("k1", 3, "c"), ("k1", 3, "d"), ("k2", 4, "e")])
    kept = dedupe_by_key(data, "ts").to_pydict()
    assert dict(zip(kept["id"], kept["v"], strict=True)) == {"k1": "d", "k2": "b"}
    no_order = dedupe_by_key(data, None).to_pydict()
    assert dict(zip(no_order["id"], no_order["v"], strict=True)) == {"k1": "d", "k2": "e"}


def existing(file_id: str, size: int, partition: str = "p=a") -> ExistingFileGroup:
    return ExistingFileGroup(partition, file_id, f"/t/{partition}/{file_id}_0-0-0_1.parquet", "1", size)


def test_inserts_fill_small_files_then_new_groups() -> None:
    conf = HoodieConfig({"hoodie.parquet.max.file.size": "1000", "hoodie.parquet.small.file.limit": "600"})
    small = existing("small", 400)
    plan = plan_writes(WorkloadProfile(updates={"big": 3}, inserts={"p=a": 25}),
                       {"big": existing("big", 900), "small": small}, {"p=a": [small]}, 100, conf)
    kinds = [(b.kind, b.file_id) for b in plan.buckets]
    assert kinds[0] == (BucketKind.UPDATE, "big")
    assert kinds[1] == (BucketKind.UPDATE, "small")  # (1000 - 400) / 100 = 6 inserts fit
    new = [b for b in plan.buckets if b.kind is BucketKind.INSERT]
    assert len(new) == 2  # 19 left, 10 per new file group (1000 / 100)
    weights = plan.insert_weights["p=a"]
    assert weights[-1][0] == 1.0
    assert weights[0] == (pytest.approx(6 / 25), 1)
    assert plan.insert_bucket("p=a", 0.0) == 1
    assert plan.insert_bucket("p=a", 0.99) == new[-1].index


def test_no_small_file_handling_when_limit_is_zero_and_split_size_without_auto_split() -> None:
    conf = HoodieConfig({"hoodie.parquet.small.file.limit": "0", "hoodie.copyonwrite.insert.auto.split": "false",
                         "hoodie.copyonwrite.insert.split.size": "7"})
    small = existing("small", 10)
    plan = plan_writes(WorkloadProfile(inserts={"p=a": 15}), {}, {"p=a": [small]}, 100, conf)
    assert [b.kind for b in plan.buckets] == [BucketKind.INSERT] * 3


def test_small_file_candidates_copy_on_write_takes_every_small_base_file() -> None:
    conf = HoodieConfig({"hoodie.parquet.small.file.limit": "600"})
    latest = {f.file_id: f for f in (existing("a", 500), existing("b", 100), existing("c", 700),
                                     existing("d", 50, "p=b"))}
    profile = WorkloadProfile(updates={"a": 1}, inserts={"p=a": 3})
    small = small_file_candidates(latest, profile, conf, merge_on_read=False, excluded=[("p=a", "b")])
    assert {p: [f.file_id for f in fs] for p, fs in small.items()} == {"p=a": ["a"], "p=b": ["d"]}


def test_small_file_candidates_merge_on_read_follow_hudi_delta_commit_partitioner() -> None:
    """Merge-on-read: base-only slices, smallest first, one per partition by default, only where inserts arrive;
    a candidate with updates stays a candidate (its updates are merged into the new base file)."""
    latest = {f.file_id: f for f in (existing("a", 500), existing("b", 100), existing("c", 300),
                                     existing("d", 50, "p=b"),
                                     ExistingFileGroup("p=a", "e", "", "1", 0))}
    profile = WorkloadProfile(updates={"b": 2}, inserts={"p=a": 3})
    default = HoodieConfig({"hoodie.parquet.small.file.limit": "600"})
    small = small_file_candidates(latest, profile, default, merge_on_read=True, log_free=["a", "b", "d", "e"])
    assert {p: [f.file_id for f in fs] for p, fs in small.items()} == {"p=a": ["b"]}
    wider = HoodieConfig({"hoodie.parquet.small.file.limit": "600",
                          "hoodie.merge.small.file.group.candidates.limit": "5"})
    small = small_file_candidates(latest, profile, wider, merge_on_read=True, log_free=["a", "b", "d", "e"])
    assert [f.file_id for f in small["p=a"]] == ["b", "a"]  # c has log files; e has no base file
    no_inserts = WorkloadProfile(updates={"b": 2}, inserts={})
    assert small_file_candidates(latest, no_inserts, wider, merge_on_read=True, log_free=["a", "b"]) == {}


def test_average_record_size_from_newest_large_enough_commit() -> None:
    conf = HoodieConfig({"hoodie.parquet.small.file.limit": "1000"})
    stat = WriteStat(file_id="f", path="p/f", num_writes=10, total_write_bytes=5000)
    tiny = WriteStat(file_id="g", path="p/g", num_writes=10, total_write_bytes=50)
    big = CommitMetadata(partition_to_write_stats={"p": [stat]}, compacted=False, extra_metadata={},
                         operation_type="UPSERT")
    small = CommitMetadata(partition_to_write_stats={"p": [tiny]}, compacted=False, extra_metadata={},
                           operation_type="UPSERT")
    assert average_record_size([small, big], conf) == 500
    assert average_record_size([small], conf) == 1024


def context(tmp_path: Path, payload: str | None = None) -> WriteContext:
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
    from engine.formats.avro_schema import add_meta_fields, arrow_to_avro

    props = {"hoodie.table.precombine.field": "ts", "hoodie.table.recordkey.fields": "id"}
    if payload:
        props["hoodie.datasource.write.payload.class"] = payload
    return WriteContext(Storage.for_uri(str(tmp_path)), str(tmp_path), "20240101000000001", schema,
                        add_meta_fields(arrow_to_avro(schema, "t")), props)


def test_create_then_merge_updates_in_place_deletes_and_appends(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    [created] = create_file_group(ctx, "p=a", "fg-0", records([("a", 1, "x"), ("b", 1, "y"), ("c", 1, "z")]),
                                  TaskIdentity(2, 0, 0))
    assert created.num_inserts == 3 and created.prev_commit == "null"
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000002", ctx.data_schema, ctx.avro_schema, ctx.props)
    fg = ExistingFileGroup("p=a", "fg-0", str(tmp_path / created.path), ctx.instant_time, 1)
    incoming = records([("b", 2, "Y"), ("c", 2, "gone"), ("d", 2, "new")], deleted=[False, True, False])
    [merged] = merge_file_group(later, fg, incoming, TaskIdentity(1, 0, 0))
    assert (merged.num_update_writes, merged.num_deletes, merged.num_inserts, merged.num_writes) == (1, 1, 1, 3)
    rows = read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()
    assert [(r["id"], r["v"]) for r in rows] == [("a", "x"), ("b", "Y"), ("d", "new")]
    assert rows[0]["_hoodie_commit_time"] == ctx.instant_time  # untouched record keeps its meta
    assert rows[0]["_hoodie_commit_seqno"] == f"{ctx.instant_time}_2_0"
    assert rows[1]["_hoodie_commit_seqno"] == f"{later.instant_time}_1_0"
    assert rows[2]["_hoodie_commit_seqno"] == f"{later.instant_time}_1_1"
    assert {r["_hoodie_file_name"] for r in rows} == {merged.path.split("/")[-1]}


def test_event_time_payload_keeps_stored_record_with_greater_ordering(tmp_path: Path) -> None:
    ctx = context(tmp_path, "org.apache.hudi.common.model.DefaultHoodieRecordPayload")
    [created] = create_file_group(ctx, "p=a", "fg-1", records([("a", 5, "stored")]), TaskIdentity())
    fg = ExistingFileGroup("p=a", "fg-1", str(tmp_path / created.path), ctx.instant_time, 1)
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000003", ctx.data_schema, ctx.avro_schema, ctx.props)
    [merged] = merge_file_group(later, fg, records([("a", 4, "older")]), TaskIdentity())
    rows = read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()
    assert [r["v"] for r in rows] == ["stored"] and merged.num_update_writes == 0


def test_concurrent_tasks_creating_one_partition_metafile_never_fail(tmp_path: Path) -> None:
    import threading

    from engine.filegroup.partition_metadata import read_partition_metadata, write_partition_metadata

    storage = Storage.for_uri(str(tmp_path))
    errors: list[BaseException] = []

    def create() -> None:
        try:
            write_partition_metadata(storage, str(tmp_path), "p=a", "20240101000000000", 0)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert read_partition_metadata(storage, str(tmp_path), "p=a").commit_time == "20240101000000000"
    assert [f.name for f in storage.list_dir(str(tmp_path / "p=a"))] == [".hoodie_partition_metadata"]
