"""Write rules MERGE, DELETE and keyless tables rely on (no JVM): auto-generated keys (Hudi
``AutoRecordKeyGenerationUtils``), and which deletes win over a greater stored ordering value in the
copy-on-write merge handle (``ExpressionPayload`` / ``EmptyHoodieRecordPayload`` vs
``DefaultHoodieRecordPayload``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from engine.auto_keys import auto_record_key, auto_record_keys, is_keyless, validate_auto_key_config
from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.formats.base_file import read_base_file
from engine.write.handles import EXPRESSION_PAYLOAD, TaskIdentity, WriteContext, create_file_group
from engine.write.merge_handle import merge_file_group, stored_key_index
from engine.write.planner import ExistingFileGroup
from tests.unit.test_write_planning import context, records


def test_auto_keys_are_instant_partition_and_row() -> None:
    assert auto_record_key("20240101000000001", 3, 7) == "20240101000000001_3_7"
    assert auto_record_keys("20240101000000001", 2, 3, start=5).to_pylist() == [
        "20240101000000001_2_5", "20240101000000001_2_6", "20240101000000001_2_7"]


def test_keyless_means_no_record_key_anywhere() -> None:
    assert is_keyless(HoodieConfig({}))
    assert is_keyless(HoodieConfig({"hoodie.table.recordkey.fields": " "}))
    assert not is_keyless(HoodieConfig({"hoodie.table.recordkey.fields": "id"}))
    assert not is_keyless(HoodieConfig({"hoodie.datasource.write.recordkey.field": "id"}))


@pytest.mark.parametrize("key, value, message", [
    ("hoodie.combine.before.insert", "true", "Enabling hoodie.combine.before.insert"),
    ("hoodie.datasource.write.insert.drop.duplicates", "true", "Enabling hoodie.datasource.write.insert.drop"),
    ("hoodie.populate.meta.fields", "false", "Disabling hoodie.populate.meta.fields"),
])
def test_auto_keys_refuse_what_hudi_refuses(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"t1: {message}.*auto generation of record keys"):
        validate_auto_key_config(HoodieConfig({key: value}), "t1")
    validate_auto_key_config(HoodieConfig({}), "t1")


def _stored(tmp_path: Path, payload: str | None, operation: str | None) -> tuple[WriteContext, ExistingFileGroup]:
    ctx = context(tmp_path, payload)
    [created] = create_file_group(ctx, "p=a", "fg-1", records([("a", 5, "stored"), ("b", 5, "kept")]),
                                  TaskIdentity())
    props = {**ctx.props, **({"hoodie.datasource.write.operation": operation} if operation else {})}
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000003", ctx.data_schema, ctx.avro_schema, props)
    return later, ExistingFileGroup("p=a", "fg-1", str(tmp_path / created.path), ctx.instant_time, 1)


@pytest.mark.parametrize("payload, operation, deleted", [
    (EXPRESSION_PAYLOAD, "upsert", True),  # MERGE: a matched DELETE deletes whatever the ordering value
    ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", "delete", True),  # delete operation
    ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", "upsert", False),  # flagged delete loses
])
def test_which_deletes_win_over_a_greater_stored_ordering_value(
        tmp_path: Path, payload: str, operation: str, deleted: bool) -> None:
    later, fg = _stored(tmp_path, payload, operation)
    [merged] = merge_file_group(later, fg, records([("a", 1, "x")], deleted=[True]), TaskIdentity())
    ids = [r["id"] for r in read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()]
    assert ids == (["b"] if deleted else ["a", "b"])


def test_merge_update_with_smaller_ordering_keeps_the_stored_row(tmp_path: Path) -> None:
    later, fg = _stored(tmp_path, EXPRESSION_PAYLOAD, "upsert")
    [merged] = merge_file_group(later, fg, records([("a", 4, "older"), ("b", 6, "newer")]), TaskIdentity())
    rows = read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()
    assert [(r["id"], r["v"]) for r in rows] == [("a", "stored"), ("b", "newer")]


@pytest.mark.parametrize("filter_type", ["DYNAMIC_V0", "SIMPLE"])
@pytest.mark.parametrize("deleting", [False, True])
def test_a_merged_file_carries_a_bloom_filter_and_key_range_of_exactly_its_keys(
        tmp_path: Path, filter_type: str, deleting: bool) -> None:
    """A merge that keeps every stored record extends the stored file's filter with the inserted keys; one that
    deletes builds it afresh. Either way every key of the new file passes the filter, the footer's range is the
    keys' (Java order), and the filter is the configured kind."""
    from engine.formats.base_file import (
        BLOOM_FILTER_KEY,
        BLOOM_FILTER_TYPE_CODE_KEY,
        MAX_RECORD_KEY,
        MIN_RECORD_KEY,
        java_min_max,
        read_footer,
    )
    from engine.formats.bloom import deserialize_bloom_filter

    ctx = context(tmp_path, EXPRESSION_PAYLOAD)
    props = {**ctx.props, "hoodie.bloom.index.filter.type": filter_type}
    ctx = WriteContext(ctx.storage, ctx.base_path, ctx.instant_time, ctx.data_schema, ctx.avro_schema, props)
    stored = [(f"k{i:03d}", 1, "stored") for i in range(0, 200, 2)]
    [created] = create_file_group(ctx, "p=a", "fg-1", records(stored), TaskIdentity())
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000003", ctx.data_schema, ctx.avro_schema, props)
    fg = ExistingFileGroup("p=a", "fg-1", str(tmp_path / created.path), ctx.instant_time, 1)
    # the stored filter is the configured kind: it is carried on
    assert stored_key_index(later, read_footer(later.storage, fg.base_file_path), fg.base_file_path) is not None
    incoming = [("k010", 2, "updated"), ("k001", 2, "new"), ("k999", 2, "new"), ("a", 2, "new")]
    [merged] = merge_file_group(later, fg, records(incoming + ([("k000", 3, "x")] if deleting else []),
                                                   deleted=[False] * 4 + ([True] if deleting else [])),
                                TaskIdentity())
    path = str(tmp_path / merged.path)
    keys = read_base_file(later.storage, path).column("_hoodie_record_key").combine_chunks()
    assert ("k000" in keys.to_pylist()) is not deleting and {"k001", "k999", "a"} <= set(keys.to_pylist())
    footer = read_footer(later.storage, path)
    bloom = deserialize_bloom_filter(footer[BLOOM_FILTER_KEY], footer.get(BLOOM_FILTER_TYPE_CODE_KEY))
    assert bloom.might_contain_many(keys).all()
    assert (footer[MIN_RECORD_KEY], footer[MAX_RECORD_KEY]) == java_min_max(keys)
    assert footer.get(BLOOM_FILTER_TYPE_CODE_KEY, "") == ("DYNAMIC_V0" if filter_type == "DYNAMIC_V0" else "")


def test_records_naming_a_stored_copy_replace_that_copy_only(tmp_path: Path) -> None:
    """A key stored twice (inserts without combining): an incoming record naming a copy by its
    ``_hoodie_commit_seqno`` replaces that copy, one naming none replaces every copy of its key, and a copy no
    record names is kept (Hudi's merge handle meets each stored record of a key)."""
    from engine.write.prepare import STORED_SEQNO

    ctx = context(tmp_path)
    props = {k: v for k, v in ctx.props.items() if k != "hoodie.table.precombine.field"}
    stored = records([("a", 1, "a1"), ("a", 1, "a2"), ("b", 1, "b1"), ("b", 1, "b2"), ("c", 1, "c1")])
    ctx = WriteContext(ctx.storage, ctx.base_path, ctx.instant_time, ctx.data_schema, ctx.avro_schema,
                       {**props, "hoodie.combine.before.upsert": "false"})
    [created] = create_file_group(ctx, "p=a", "fg-1", stored, TaskIdentity())
    old = read_base_file(ctx.storage, str(tmp_path / created.path))
    seqno = dict(zip(old.column("v").to_pylist(), old.column("_hoodie_commit_seqno").to_pylist(), strict=True))
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000003", ctx.data_schema, ctx.avro_schema, props)
    fg = ExistingFileGroup("p=a", "fg-1", str(tmp_path / created.path), ctx.instant_time, 1)
    incoming = records([("a", 2, "a2-new"), ("b", 2, "b-new"), ("d", 2, "d-new")])
    incoming = incoming.append_column(STORED_SEQNO, pa.array([seqno["a2"], None, None], pa.string()))
    [merged] = merge_file_group(later, fg, incoming, TaskIdentity())
    rows = read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()
    assert [r["v"] for r in rows] == ["a1", "a2-new", "b-new", "b-new", "c1", "d-new"]
    assert (merged.num_update_writes, merged.num_inserts) == (3, 1)
    assert STORED_SEQNO not in rows[0]


def test_dedupe_per_stored_copy_keeps_one_record_per_key_and_copy() -> None:
    from engine.write.prepare import STORED_SEQNO, dedupe_by_key

    data = records([("k1", 1, "a"), ("k1", 1, "b"), ("k1", 2, "c"), ("k2", 1, "d")])
    data = data.append_column(STORED_SEQNO, pa.array(["s1", "s2", "s1", None], pa.string()))
    kept = dedupe_by_key(data, "ts", per_stored_copy=True).column("v").to_pylist()
    assert sorted(kept) == ["b", "c", "d"]
    assert sorted(dedupe_by_key(data, "ts").column("v").to_pylist()) == ["c", "d"]


@pytest.mark.parametrize("case", ["updates-and-inserts", "deletes", "ordering-keeps-stored", "nothing-touched",
                                  "every-group-updated", "deletes-in-every-group", "update-keeps-a-column"])
def test_merging_by_copying_row_groups_writes_the_rows_a_whole_rewrite_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """A stored file of several row groups: untouched groups are copied as bytes (new _hoodie_file_name), the
    touched ones and the inserts encoded; rows, meta columns, footer keys and bloom filter equal the whole-file
    rewrite's, and hudi-rs-style readers (pyarrow) read the file."""
    from engine.formats.base_file import read_footer
    from engine.formats.parquet_splice import ParquetFooter
    from engine.write import merge_handle as handles

    ctx = context(tmp_path)
    small = {**ctx.props, "hoodie.parquet.block.size": "2000"}  # row groups of ~100 rows
    ctx = WriteContext(ctx.storage, ctx.base_path, ctx.instant_time, ctx.data_schema, ctx.avro_schema, small)
    stored = [(f"k{i:04d}", 5, f"v{i}") for i in range(1000)]
    [created] = create_file_group(ctx, "p=a", "fg-2", records(stored), TaskIdentity(3, 0, 0))
    path = str(tmp_path / created.path)
    with open(path, "rb") as f:
        assert len(ParquetFooter.read(f, created.file_size_in_bytes, path).row_groups) > 3
    incoming = {
        "updates-and-inserts": records([("k0010", 6, "u10"), ("k0011", 6, "u11"), ("n1", 1, "new")]),
        "deletes": records([("k0500", 6, "x"), ("n2", 1, "new")], deleted=[True, False]),
        "ordering-keeps-stored": records([("k0700", 1, "older"), ("n3", 1, "new")]),
        "nothing-touched": records([("n4", 1, "new")]),
        "every-group-updated": records([(f"k{i:04d}", 6, f"u{i}") for i in range(0, 1000, 7)] + [("n5", 1, "new")]),
        "deletes-in-every-group": records([(f"k{i:04d}", 6, "x") for i in range(0, 1000, 7)],
                                          deleted=[True] * len(range(0, 1000, 7))),
        "update-keeps-a-column": records([("k0020", 9, "v20"), ("k0900", 9, "v900")]),
    }[case]
    encoded_columns: list[list[str]] = []
    chunks = handles._changed_chunks

    def spy_chunks(*args: object) -> object:
        encoded_columns.append(list(args[2]))  # type: ignore[arg-type]
        return chunks(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(handles, "_changed_chunks", spy_chunks)
    outputs = []
    copied_by_bytes: list[object] = []
    copying = handles.merge_copying_row_groups

    def spy(*args: object) -> object:
        copied_by_bytes.append(result := copying(*args))  # type: ignore[arg-type]
        return result

    monkeypatch.setattr(handles, "merge_copying_row_groups", spy)
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000005", ctx.data_schema, ctx.avro_schema, small)
    fg = ExistingFileGroup("p=a", "fg-2", path, ctx.instant_time, created.file_size_in_bytes)
    for copy, attempt in ((True, 0), (False, 1)):  # one instant, two task attempts: two files
        monkeypatch.setattr(handles, "_copies_row_groups", lambda _ctx, copy=copy: copy)
        [merged] = merge_file_group(later, fg, incoming, TaskIdentity(1, 0, attempt))
        file = str(tmp_path / merged.path)
        rows = read_base_file(later.storage, file).to_pylist()
        assert {r["_hoodie_file_name"] for r in rows} == {file.rsplit("/", 1)[1]}
        footer = read_footer(later.storage, file)
        outputs.append((merged, rows, footer))
    (copied, copied_rows, copied_footer), (whole, whole_rows, whole_footer) = outputs
    key = "_hoodie_record_key"
    if case == "deletes-in-every-group":  # every row group touched by a delete: the whole file is rewritten
        assert len(copied_by_bytes) == 1 and copied_by_bytes[0][0] is None  # type: ignore[index]
        return
    assert len(copied_by_bytes) == 1 and copied_by_bytes[0][0] is not None  # type: ignore[index]  # copied
    if case != "deletes":  # updates in place: Hudi's row order, touched groups splice their changed columns only
        assert [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in copied_rows] \
            == [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in whole_rows]
    if case == "update-keeps-a-column":
        assert encoded_columns == [["_hoodie_commit_time", "_hoodie_commit_seqno", "ts"]]
    if case == "every-group-updated":
        assert encoded_columns == [["_hoodie_commit_time", "_hoodie_commit_seqno", "ts", "v"]]
    assert [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in sorted(copied_rows, key=lambda r: r[key])] \
        == [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in sorted(whole_rows, key=lambda r: r[key])]
    for field in ("num_writes", "num_inserts", "num_update_writes", "num_deletes"):
        assert getattr(copied, field) == getattr(whole, field), field
    for name in ("hoodie_min_record_key", "hoodie_max_record_key", "org.apache.hudi.bloomfilter"):
        assert copied_footer[name] == whole_footer[name], name


@pytest.mark.parametrize("values", ["low-cardinality", "past-the-dictionary-limit"])
def test_touched_row_groups_splice_dictionary_and_plain_columns_as_a_whole_rewrite_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, values: str) -> None:
    """Updates in every row group of a column stored with a dictionary (read as one, commit times given new
    indices) or one whose dictionary overflowed into plain pages (encoded plain at once): the rows equal the
    whole-file rewrite's, and the re-encoded chunks of the overflowing column carry no dictionary page."""
    import pyarrow.parquet as pq

    from engine.formats.parquet_splice import ParquetFooter
    from engine.write import merge_handle as handles

    ctx = context(tmp_path)
    low = values == "low-cardinality"
    # 1.5 KB values, ~2,500 rows a row group: the writer's 1 MB dictionary page is full after its first 1,024 rows
    small = {**ctx.props, "hoodie.parquet.block.size": "2000" if low else "4000000"}
    ctx = WriteContext(ctx.storage, ctx.base_path, ctx.instant_time, ctx.data_schema, ctx.avro_schema, small)
    value = (lambda i: "abc"[i % 3]) if low else (lambda i: f"{i:05d}" * 300)
    count = 600 if low else 8000
    [created] = create_file_group(ctx, "p=a", "fg-3", records([(f"k{i:04d}", 5, value(i)) for i in range(count)]),
                                  TaskIdentity(3, 0, 0))
    path = str(tmp_path / created.path)
    with open(path, "rb") as f:
        stored = ParquetFooter.read(f, created.file_size_in_bytes, path)
    v = stored.column_names.index("v")
    assert len(stored.row_groups) > 2
    fell_back = [not stored.dictionary_only(g, v) for g in range(len(stored.row_groups))]
    assert not any(fell_back) if low else sum(fell_back) >= 2
    incoming = records([(f"k{i:04d}", 6, "d" if low else f"u{i}") for i in range(0, count, 11)] + [("n1", 1, "new")])
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000005", ctx.data_schema, ctx.avro_schema, small)
    fg = ExistingFileGroup("p=a", "fg-3", path, ctx.instant_time, created.file_size_in_bytes)
    outputs = []
    for copy, attempt in ((True, 0), (False, 1)):
        monkeypatch.setattr(handles, "_copies_row_groups", lambda _ctx, copy=copy: copy)
        [merged] = merge_file_group(later, fg, incoming, TaskIdentity(1, 0, attempt))
        file = str(tmp_path / merged.path)
        outputs.append((file, read_base_file(later.storage, file).to_pylist()))
    (copied, copied_rows), (_, whole_rows) = outputs
    assert [{k: val for k, val in r.items() if k != "_hoodie_file_name"} for r in copied_rows] \
        == [{k: val for k, val in r.items() if k != "_hoodie_file_name"} for r in whole_rows]
    assert sum(r["_hoodie_commit_time"] == "20240101000000005" for r in copied_rows) == len(range(0, count, 11)) + 1
    metadata = pq.read_metadata(copied)
    chunks = [metadata.row_group(g).column(v) for g in range(metadata.num_row_groups)]
    assert all((c.dictionary_page_offset is not None) == low for c in chunks[:len(stored.row_groups)])


def test_updates_to_a_file_with_nested_columns_rewrite_it_whole(tmp_path: Path) -> None:
    """A stored file with a struct column (its leaves are not the top-level columns): touched row groups are not
    spliced column by column; the merge rewrites the file and every row reads back, the update applied."""
    from engine.formats.avro_schema import add_meta_fields, arrow_to_avro
    from engine.storage import Storage
    from engine.write.prepare import PARTITION_PATH, RECORD_KEY

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()),
                        ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])), ("v", pa.string())])
    props = {"hoodie.table.precombine.field": "ts", "hoodie.table.recordkey.fields": "id",
             "hoodie.parquet.block.size": "2000"}

    def rows(ids: list[int], ts: int, v: str) -> pa.Table:
        keys = [f"k{i:04d}" for i in ids]
        return pa.table({"id": keys, "ts": pa.array([ts] * len(ids), pa.int64()),
                         "s": pa.array([{"a": i, "b": f"b{i}"} for i in ids], schema.field("s").type),
                         "v": [f"{v}{i}" for i in ids], RECORD_KEY: keys, PARTITION_PATH: ["p=a"] * len(ids)})

    ctx = WriteContext(Storage.for_uri(str(tmp_path)), str(tmp_path), "20240101000000001", schema,
                       add_meta_fields(arrow_to_avro(schema, "t")), props)
    [created] = create_file_group(ctx, "p=a", "fg-n", rows(list(range(500)), 1, "v"), TaskIdentity(1, 0, 0))
    later = WriteContext(ctx.storage, ctx.base_path, "20240101000000002", schema, ctx.avro_schema, props)
    fg = ExistingFileGroup("p=a", "fg-n", str(tmp_path / created.path), ctx.instant_time, created.file_size_in_bytes)
    [merged] = merge_file_group(later, fg, rows([3, 250, 499], 2, "u"), TaskIdentity(1, 0, 1))
    out = read_base_file(later.storage, str(tmp_path / merged.path)).to_pylist()
    assert len(out) == 500 and merged.num_update_writes == 3
    assert {r["id"]: r["v"] for r in out if r["_hoodie_commit_time"] == "20240101000000002"} \
        == {"k0003": "u3", "k0250": "u250", "k0499": "u499"}
    assert [r["s"] for r in out[:2]] == [{"a": 0, "b": "b0"}, {"a": 1, "b": "b1"}]
