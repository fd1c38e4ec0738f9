"""The split merge-on-read read (engine.read.log_keys + ``sqlext.read.log.records.only``): Spark's parquet scan
reads each base file less the first row of every key its slice's logs name, the Python reader returns the log
records that win. Here the scan's filter is done in Python (the same rule as the JVM's HudiLogFilteredParquet),
so the split is checked against the whole-slice merge on every log shape the merge tests build: rollbacks,
uncommitted blocks, precombine ordering, deletes, re-inserts, log-only file groups, time travel, and the
Hudi-written fixtures."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from engine.config import HoodieConfig, ReadConfig, TableConfig
from engine.formats.avro_decode import covers
from engine.formats.avro_schema import add_meta_fields, avro_to_arrow
from engine.formats.conform import conform_table
from engine.formats.log_format import AvroDataBlock, CommandBlock, DeleteBlock, DeleteRecord
from engine.read.base_reader import read_base_batches
from engine.read.file_group_reader import read_split
from engine.read.log_keys import log_record_count, slice_log_keys
from engine.read.parquet_slices import log_keys_of, plan_parquet_read
from engine.read.planner import file_groups_option, plan_query
from engine.storage import Storage
from engine.table import Table
from tests.unit.test_log_merger import (
    KEY_A,
    MOR_FIXTURES,
    SF,
    T1,
    T2,
    T3,
    T4,
    TRIPS,
    Logs,
    canon,
    instants,
    read_table,
)

RECORD_KEY = "_hoodie_record_key"


@pytest.fixture
def logs(hudi_fixture: Callable[..., str]) -> Logs:
    return Logs(hudi_fixture(TRIPS, fresh=True))


def split_read(path: str, options: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The rows of a snapshot read of ``path`` done as the split read does it."""
    options = dict(options or {})
    table = Table.load(path)
    plan = plan_query(table, HoodieConfig(options), None)
    avro = table.latest_avro_schema()
    assert avro is not None
    schema = avro_to_arrow(add_meta_fields(avro))
    storage = Storage.for_uri(path)
    rows: list[dict[str, Any]] = []
    merged = [s for s in plan.splits if s.log_files]
    for split in plan.splits:
        if not split.log_files:
            rows += [r for b in read_split(storage, split, schema, plan) for r in b.to_pylist()]
        elif split.base_file is not None:
            pending = set(slice_log_keys(storage, split.log_files, plan.block_filter()).to_pylist())
            for batch in read_base_batches(storage, split.base_file, schema.names, 3):
                for row in conform_table(batch, schema).to_pylist():
                    if row[RECORD_KEY] in pending:
                        pending.discard(row[RECORD_KEY])  # the first row with the key only
                        continue
                    rows.append(row)
    if merged:
        groups = file_groups_option((s.partition_path, s.file_id) for s in merged)
        logs_only = plan_query(table, HoodieConfig({**options, ReadConfig.FILE_GROUPS.key: groups,
                                                    ReadConfig.LOG_RECORDS_ONLY.key: "true"}), None)
        assert {(s.partition_path, s.file_id) for s in logs_only.splits} == {(s.partition_path, s.file_id)
                                                                               for s in merged}
        assert all(s.base_file is None for s in logs_only.splits)
        rows += [r for s in logs_only.splits for b in read_split(storage, s, schema, logs_only) for r in b.to_pylist()]
    return rows


def assert_split_equals_merge(path: str, options: dict[str, str] | None = None) -> None:
    whole = read_table(path, options)
    assert canon(split_read(path, options)) == canon(whole)


def splits_merge(path: str, options: dict[str, str] | None = None) -> bool:
    """Whether the planner splits the merge of this read (the payload lets a log record win outright)."""
    table = Table.load(path)
    avro = table.latest_avro_schema(include_meta=True)
    assert avro is not None
    plan = plan_parquet_read(table, HoodieConfig({"path": path, **(options or {})}), avro_to_arrow(avro))
    return bool(plan.keyed_files)


# ---------------------------------------------------------------------------------- keys of a block


def test_column_values_decodes_only_up_to_the_key() -> None:
    schema = add_meta_fields({"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "v", "type": ["null", "string"]}]})
    rows = [{"_hoodie_commit_time": "1", "_hoodie_commit_seqno": f"1_0_{i}", "_hoodie_record_key": f"k{i}" * (i % 70),
             "_hoodie_partition_path": "", "_hoodie_file_name": "f", "id": i, "v": None if i % 3 else "é" * i}
            for i in range(1, 400)]
    block = AvroDataBlock.from_table(pa.Table.from_pylist(rows, schema=avro_to_arrow(schema)), schema, "1")
    keys = block.column_values(RECORD_KEY)
    assert keys.to_pylist() == [r["_hoodie_record_key"] for r in rows]  # 2-byte length varints included
    assert block.column_values("v").to_pylist() == [r["v"] for r in rows]
    assert block.column_values("absent").null_count == len(rows)


def test_column_values_falls_back_to_whole_records_past_an_uncovered_field() -> None:
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "tags", "type": {"type": "array", "items": "int"}},
        {"name": "_hoodie_record_key", "type": ["null", "string"]}]}
    assert not covers(schema)  # the columnar decoder cannot skip the array: whole records are decoded
    records = [{"tags": list(range(i % 4)), "_hoodie_record_key": f"key-{i}"} for i in range(50)]
    block = AvroDataBlock.from_records(records, schema, "1")
    assert block.column_values(RECORD_KEY).to_pylist() == [f"key-{i}" for i in range(50)]


def test_slice_log_keys_are_the_keys_the_merge_folds(logs: Logs) -> None:
    for ts in (T1, T2, T3):
        logs.commit(ts)
    logs.commit(T4, state="inflight")
    other = next(k for k in logs.rows if k != KEY_A)
    logs.append(logs.data_block(T1, logs.record("a", 5, 1.0, T1), logs.record("b", 5, 1.0, T1)))
    logs.append(DeleteBlock.from_records([DeleteRecord(other, SF, 0, "IntWrapper")], T2, logs.schema))
    logs.append(logs.data_block(T3, logs.record("rolled-back", 5, 1.0, T3)), CommandBlock.rollback(T3, T3))
    logs.append(logs.data_block(T4, logs.record("inflight", 5, 1.0, T4)))
    table = Table.load(logs.path)
    plan = plan_query(table, HoodieConfig({}), None)
    split = next(s for s in plan.splits if s.file_id == logs.split.file_id)
    keys = set(slice_log_keys(logs.storage, split.log_files, plan.block_filter()).to_pylist())
    assert {"a", "b", other, KEY_A} <= keys  # KEY_A: the fixture's own update
    assert "inflight" not in keys and "rolled-back" not in keys
    # The planner bounds the keys by the applied blocks' record counts (headers only) against the limit.
    counted = log_record_count(logs.storage, split.log_files, plan.block_filter())
    assert counted >= len(keys) and counted == 4  # the fixture's update, a, b, the delete
    avro = table.latest_avro_schema(include_meta=True)
    assert avro is not None
    for limit, split_read_planned in ((counted - 1, False), (counted, True)):
        planned = plan_parquet_read(table, HoodieConfig({"path": logs.path, ReadConfig.LOG_KEYS_MAX.key: str(limit)}),
                                    avro_to_arrow(avro))
        assert bool(planned.keyed_files) is split_read_planned, limit


# ---------------------------------------------------------------------------------- split == whole merge


def test_split_read_of_hand_built_logs(logs: Logs) -> None:
    for ts in (T1, T2, T3, T4):
        logs.commit(ts)
    other = next(k for k in logs.rows if k != KEY_A)
    logs.append(logs.data_block(T1, logs.record("ins", 5, 1.0, T1), logs.record("keep", 5000, 1.0, T1),
                                logs.record("again", 5, 1.0, T1), logs.record(other, 10, 7.0, T1)))
    logs.append(DeleteBlock.from_records([
        DeleteRecord("ins", SF, 0, "IntWrapper"), DeleteRecord(KEY_A, SF, 0, "IntWrapper"),
        DeleteRecord("keep", SF, 10, "LongWrapper"), DeleteRecord("again", SF, 0, "IntWrapper"),
    ], T2, logs.schema))
    logs.append(logs.data_block(T3, logs.record("again", 1, 9.0, T3)))
    assert splits_merge(logs.path)
    for options in ({}, {"as.of.instant": T1}, {"as.of.instant": T2}, {"as.of.instant": T3}):
        assert_split_equals_merge(logs.path, options)
    rows = {r["uuid"]: r for r in split_read(logs.path)}
    assert KEY_A not in rows and rows[other]["fare"] == 7.0 and rows["again"]["fare"] == 9.0


def test_split_read_keeps_rows_of_rolled_back_and_uncommitted_blocks(logs: Logs) -> None:
    logs.commit(T1)
    logs.append(logs.data_block(T1, logs.record(KEY_A, 1, 11.0, T1)))
    logs.append(CommandBlock.rollback(T2, T1))
    logs.commit(T3)
    logs.commit(T4, state="inflight")
    other = next(k for k in logs.rows if k != KEY_A)
    logs.append(logs.data_block(T4, logs.record(other, 1, 12.0, T4)))
    assert_split_equals_merge(logs.path)
    rows = {r["uuid"]: r for r in split_read(logs.path)}
    assert rows[other]["fare"] == logs.rows[other]["fare"]  # the inflight block's update is not applied
    assert rows[KEY_A]["_hoodie_commit_time"] == "20250331030645735"


def test_split_read_with_precombine_ordering_in_logs(logs: Logs) -> None:
    for ts in (T1, T2):
        logs.commit(ts)
    key = next(k for k in logs.rows if k != KEY_A)
    logs.append(logs.data_block(T1, logs.record(key, 2000, 1.0, T1), logs.record("n", 10, 1.0, T1)))
    logs.append(logs.data_block(T2, logs.record(key, 1000, 2.0, T2), logs.record("n", 10, 2.0, T2)))
    assert splits_merge(logs.path)
    assert_split_equals_merge(logs.path)


def test_event_time_payloads_are_not_split(hudi_fixture: Callable[..., str]) -> None:
    """Under DefaultHoodieRecordPayload a base row with a greater ordering value beats a log record, so the
    base rows the logs name cannot be dropped unread: such slices are merged whole by the Python reader."""
    path = hudi_fixture(TRIPS, fresh=True)
    table = Table.load(path)
    avro = table.latest_avro_schema(include_meta=True)
    assert avro is not None
    options = HoodieConfig({"path": path})
    plan = plan_parquet_read(table, options, avro_to_arrow(avro))
    assert plan.keyed_files and plan.mode == "union"
    import engine.read.parquet_slices as slices

    real = slices.plan_query

    def default_payload(table: Table, options: HoodieConfig, *rest: Any) -> Any:
        planned = real(table, options, *rest)
        assert planned.merge is not None
        return dataclasses.replace(planned, merge=dataclasses.replace(
            planned.merge, payload_class="org.apache.hudi.common.model.DefaultHoodieRecordPayload"))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(slices, "plan_query", default_payload)
        whole = plan_parquet_read(table, options, avro_to_arrow(avro))
    assert not whole.keyed_files and whole.merged_groups == plan.merged_groups
    no_keys = plan_parquet_read(table, HoodieConfig({"path": path, ReadConfig.LOG_KEYS_MAX.key: "0"}),
                                avro_to_arrow(avro))
    assert not no_keys.keyed_files
    few = plan_parquet_read(table, HoodieConfig({"path": path, ReadConfig.LOG_KEYS_MAX.key: "1"}),
                            avro_to_arrow(avro))
    assert few.keyed_files  # the fixture's logs hold one record: at the limit
    # The keys are read when the query runs, for the planned file groups as of the planned instant.
    groups = file_groups_option((k.file.partition_path, k.file_id) for k in plan.keyed_files)
    keys = log_keys_of(table, HoodieConfig({"path": path, ReadConfig.FILE_GROUPS.key: groups,
                                            ReadConfig.PINNED_INSTANT.key: plan.pinned_instant or ""}))
    assert set(keys) == {os.path.basename(k.file.path) for k in plan.keyed_files}
    assert KEY_A in {key for named in keys.values() for key in named}


@pytest.mark.parametrize("name", MOR_FIXTURES)
def test_split_read_of_hudi_written_tables(hudi_fixture: Callable[..., str], name: str) -> None:
    path = hudi_fixture(name)
    if not splits_merge(path):
        # No slice with log files (nothing to split), no _hoodie_record_key in the files (virtual keys), or a
        # Hudi 1.x table merging by event time (its stored record may win: no split).
        event_time = "/v8_" in name or "/v9_" in name
        assert event_time or name.endswith(("v6_empty", "_no_metafields", "_overwritetable")), name
        if event_time:
            assert Table.load(path).config.raw(TableConfig.RECORD_MERGE_MODE) == "EVENT_TIME_ORDERING"
        if "no_metafields" not in name:
            assert canon(split_read(path)) == canon(read_table(path))
        return
    assert_split_equals_merge(path)
    for ts in instants(path):
        assert_split_equals_merge(path, {"as.of.instant": ts})

