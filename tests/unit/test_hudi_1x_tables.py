"""Hudi 1.x tables (table versions 8 and 9, timeline layout 2), without a JVM: instant file names, Avro commit
metadata, completion-time file slicing, the LSM archived timeline, the 1.x table config, the refusals (Lance
base files, every write), and reads of the copy-on-write fixtures against hudi-rs (merge-on-read ones:
tests/unit/test_log_merger.py)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.errors import CorruptFile, TimelineError, TimeTravelError, UnsupportedTable
from engine.filegroup.naming import parse_log_file_name
from engine.filegroup.slices import base_instant_by_completion
from engine.payloads import DEFAULT, OVERWRITE_WITH_LATEST
from engine.read.planner import completion_time_range
from engine.read.retention import load_window
from engine.storage import Storage
from engine.table import Table
from engine.table_v1x import effective_properties
from engine.timeline import avro_serde, lsm_archive
from engine.timeline.active import ActiveTimeline
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from engine.timeline.layout import LAYOUT_V1, layout_for
from engine.timeline.layout_v2 import TimelineLayoutV2, decode_commit_metadata, file_name, parse_file_name
from tests.conftest import HUDI_1X_FIXTURE_NAMES, HUDI_LANCE_FIXTURE_NAMES
from tests.unit.test_log_merger import assert_same, hudi_rs, read_table

R, INF, C = State.REQUESTED, State.INFLIGHT, State.COMPLETED
T, DONE = "20251220210108078", "20251220210109593"
TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
COW_1X = [n for n in HUDI_1X_FIXTURE_NAMES if "/cow/" in n]


# ---------------------------------------------------------------------------------- instant file names


@pytest.mark.parametrize(("name", "instant"), [
    (f"{T}_{DONE}.commit", Instant(T, COMMIT, C, DONE)),
    (f"{T}_{DONE}.deltacommit", Instant(T, DELTA_COMMIT, C, DONE)),
    (f"{T}_{DONE}.replacecommit", Instant(T, REPLACE_COMMIT, C, DONE)),
    (f"{T}_{DONE}.clean", Instant(T, "clean", C, DONE)),
    (f"{T}.commit.requested", Instant(T, COMMIT, R)),
    (f"{T}.inflight", Instant(T, COMMIT, INF)),
    (f"{T}.deltacommit.inflight", Instant(T, DELTA_COMMIT, INF)),
    (f"{T}.compaction.requested", Instant(T, COMPACTION, R)),
    (f"{T}.clustering.inflight", Instant(T, REPLACE_COMMIT, INF)),
])
def test_layout_2_names_parse(name: str, instant: Instant) -> None:
    parsed = parse_file_name(name)
    assert parsed == instant
    assert parsed is not None and parsed.completion_time == instant.completion_time
    if "clustering" not in name:
        assert file_name(parsed) == name


@pytest.mark.parametrize("name", [
    f"{T}.commit",  # a completed layout-2 instant always carries its completion time
    f"{T}_{DONE}.compaction",  # a compaction completes as a commit
    f"{T}_{DONE}.commit.requested",
    f"{T}_{DONE}.inflight",
    "hoodie.properties", "history", f".{T}_{DONE}.commit.crc",
])
def test_layout_2_rejects_other_names(name: str) -> None:
    assert parse_file_name(name) is None


def test_completion_time_is_not_identity() -> None:
    assert Instant(T, COMMIT, C, DONE) == Instant(T, COMMIT, C)
    assert hash(Instant(T, COMMIT, C, DONE)) == hash(Instant(T, COMMIT, C))
    assert repr(Instant(T, COMMIT, C)) == repr(Instant(T, COMMIT, C, DONE))
    with pytest.raises(TimelineError, match="completion time"):
        file_name(Instant(T, COMMIT, C))
    assert file_name(Instant(T, COMPACTION, C, DONE)) == f"{T}_{DONE}.commit"


def test_layout_for_versions() -> None:
    assert layout_for(6, "1", "t") is LAYOUT_V1
    v2 = layout_for(8, "2", "t", timeline_folder="tl", history_folder="h")
    assert isinstance(v2, TimelineLayoutV2) and (v2.timeline_folder, v2.history_folder) == ("tl", "h")
    assert layout_for(9, None, "t").version == 2
    with pytest.raises(UnsupportedTable, match="version 7"):
        layout_for(7, "2", "t")
    with pytest.raises(UnsupportedTable, match="layout 1; version 8 tables need layout 2"):
        layout_for(8, "1", "t")


# ---------------------------------------------------------------------------------- the active timeline


def _timeline_folder(tmp_path: Path, names: dict[str, bytes]) -> tuple[Storage, str]:
    meta = tmp_path / ".hoodie"
    (meta / "timeline" / "history").mkdir(parents=True)
    for name, content in names.items():
        (meta / "timeline" / name).write_bytes(content)
    return Storage.for_uri(str(tmp_path)), str(meta)


def test_active_timeline_layout_2(tmp_path: Path) -> None:
    commit_bytes = avro_serde.serialize("HoodieCommitMetadata", {
        "partitionToWriteStats": {"p": [{"fileId": "f1", "path": "p/f1_0-1-2_3.parquet", "numWrites": 4}]},
        "compacted": False, "extraMetadata": {"schema": "{}"}, "operationType": "UPSERT"})
    storage, meta = _timeline_folder(tmp_path, {
        "001.deltacommit.requested": b"", "001.deltacommit.inflight": b"", "001_004.deltacommit": commit_bytes,
        "002.compaction.requested": b"", "002.compaction.inflight": b"", "002_003.commit": b"",
        "005.clustering.requested": b"x", "006.deltacommit.requested": b"",
    })
    timeline = ActiveTimeline(storage, meta, layout=TimelineLayoutV2())
    assert [(i.timestamp, i.action, i.state, i.completion_time) for i in timeline.instants] == [
        ("001", DELTA_COMMIT, C, "004"), ("002", COMMIT, C, "003"), ("005", REPLACE_COMMIT, R, None),
        ("006", DELTA_COMMIT, R, None)]
    assert timeline.completion_times() == {"001": "004", "002": "003"}
    assert [i.timestamp for i in timeline.completed_commits()] == ["001", "002"]
    assert timeline.read_details(Instant("005", REPLACE_COMMIT, R)) == b"x"  # found by its listed name
    read = decode_commit_metadata(timeline.read_details(timeline.instants[0]), "001")
    assert read.operation_type == "UPSERT" and read.schema == "{}"
    assert [(s.file_id, s.num_writes) for s in read.all_write_stats()] == [("f1", 4)]
    with pytest.raises(UnsupportedTable, match="layout 2"):
        timeline.create_requested("007", COMMIT)
    assert not (Path(meta) / "timeline" / "007.commit.requested").exists()


def test_commit_metadata_layout_2_forms() -> None:
    assert decode_commit_metadata(b"") == CommitMetadata()
    assert decode_commit_metadata(b'{"operationType": "INSERT"}').operation_type == "INSERT"  # upgraded JSON
    replace = avro_serde.serialize("HoodieReplaceCommitMetadata", {
        "partitionToWriteStats": {}, "partitionToReplaceFileIds": {"p": ["f1", "f2"]}, "compacted": False,
        "extraMetadata": {}, "operationType": "INSERT_OVERWRITE"})
    decoded = decode_commit_metadata(replace)
    assert decoded.is_replace and decoded.replaced_file_ids() == {"p": ["f1", "f2"]}
    with pytest.raises(CorruptFile):
        decode_commit_metadata(b"Obj\x01 not avro")


def test_fixture_commit_metadata_is_avro(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(TRIPS))
    commits = table.timeline.completed_commits()
    raw = table.timeline.read_details(commits[0])
    assert raw.startswith(avro_serde.MAGIC)
    for instant in commits:
        metadata = table.commit_metadata(instant)
        assert metadata.all_write_stats(), instant
        for partition, stat in metadata.iter_write_stats():
            assert stat.path and stat.path.startswith(partition + "/")
    compaction = [i for i in commits if i.action == COMMIT]
    assert compaction and table.commit_metadata(compaction[0]).operation_type == "COMPACT"


# ---------------------------------------------------------------------------------- completion-time slicing


@pytest.mark.parametrize(("log", "completion", "starts", "expected"), [
    ("5", "6", [], "5"),  # no base file yet: the log starts its own slice
    ("5", "6", ["1", "4"], "4"),
    ("5", "9", ["1", "4", "7"], "7"),  # completed after a compaction was scheduled at 7: its slice
    ("5", "6", ["1", "4", "7"], "4"),
    ("5", "6", ["7"], "5"),  # every slice starts later
    ("5", None, ["1", "4", "7"], "7"),  # pending: the latest slice
    ("5", "7", ["7"], "7"),  # completion at the base instant itself counts
])
def test_base_instant_by_completion(log: str, completion: str | None, starts: list[str], expected: str) -> None:
    assert base_instant_by_completion(log, completion, starts) == expected


def test_fixture_log_files_join_slices_by_completion_time(hudi_fixture: Callable[..., str]) -> None:
    path = Path(hudi_fixture(TRIPS))
    completions = {m.group(1): m.group(2) for f in (path / ".hoodie" / "timeline").iterdir()
                   if (m := re.match(r"^(\d+)_(\d+)\.(?:deltacommit|commit)$", f.name))}
    table = Table.load(str(path))
    view = table.file_system_view()
    placed = {lf.name: s.base_instant for g in view.all_file_groups() for s in g.slices for lf in s.log_files}
    logs = sorted(p for p in path.rglob(".*.log.*") if ".hoodie" not in p.parts)
    assert logs and set(placed) == {p.name for p in logs}
    moved = 0
    for log in logs:
        parsed = parse_log_file_name(log.name)
        assert parsed is not None
        bases = sorted(b.name.rsplit("_", 1)[1].removesuffix(".parquet")
                       for b in log.parent.glob(f"{parsed.file_id}_*.parquet"))
        expected = max(b for b in bases if b <= completions[parsed.base_instant])
        assert placed[log.name] == expected, log.name
        moved += expected != bases[0]
    assert moved, "the fixture has a log written after its compaction was scheduled"
    # As of before the compaction, the latest slice of every group is the first one with all earlier logs.
    first = min(completions)
    compaction = next(i.timestamp for i in table.timeline.completed_commits() if i.action == COMMIT)
    before = table.file_system_view(as_of=max(t for t in completions if t < compaction))
    for file_slice in before.all_latest_file_slices():
        assert file_slice.base_instant == first


# ---------------------------------------------------------------------------------- incremental ranges


def test_completion_time_range() -> None:
    commits = [Instant("10", COMMIT, C, "12"), Instant("11", COMMIT, C, "15"), Instant("13", COMMIT, C, "14")]
    begin, end, chosen = completion_time_range(commits, "12", "14")
    assert [i.timestamp for i in chosen] == ["13"] and (begin, end) == ("12", "13")
    begin, end, chosen = completion_time_range(commits, "00", None)
    assert [i.timestamp for i in chosen] == ["10", "11", "13"] and (begin, end) == ("09", "13")
    assert completion_time_range(commits, "15", None) == ("15", "15", [])


# ---------------------------------------------------------------------------------- LSM archived timeline


def test_lsm_archive_range(tmp_path: Path) -> None:
    storage = Storage.for_uri(str(tmp_path))
    history = tmp_path / "history"
    assert lsm_archive.archived_range(storage, str(history)) is None
    history.mkdir()
    (history / "20240101000000000_20240102000000000_0.parquet").write_bytes(b"")
    (history / "20240103000000000_20240104000000000_0.parquet").write_bytes(b"")
    span = lsm_archive.archived_range(storage, str(history))  # no version file: every data file
    assert span is not None and str(span) == "[20240101000000000, 20240104000000000]"
    (history / "_version_").write_text("2")
    (history / "manifest_2").write_text(json.dumps(
        {"files": [{"fileName": "20240103000000000_20240104000000000_0.parquet", "fileLen": 0}]}))
    span = lsm_archive.archived_range(storage, str(history))  # the manifest's snapshot only
    assert span is not None and (span.first, span.last) == ("20240103000000000", "20240104000000000")
    (history / "manifest_2").write_text("{not json")
    with pytest.raises(CorruptFile, match="manifest_2"):
        lsm_archive.archived_range(storage, str(history))


def test_time_travel_into_the_lsm_archive_is_refused(hudi_fixture: Callable[..., str]) -> None:
    path = Path(hudi_fixture("sample_table/cow/v8_nonpartitioned", fresh=True))
    table = Table.load(str(path))
    first = table.timeline.completed_commits()[0].timestamp
    assert not table.has_archived_instants()
    history = path / ".hoodie" / "timeline" / "history"
    (history / "20250101000000000_20250102000000000_0.parquet").write_bytes(b"")
    (history / "_version_").write_text("1")
    (history / "manifest_1").write_text(json.dumps(
        {"files": [{"fileName": "20250101000000000_20250102000000000_0.parquet", "fileLen": 0}]}))
    table = Table.load(str(path))
    assert table.has_archived_instants()
    window = load_window(table)
    with pytest.raises(TimeTravelError, match=r"LSM archived timeline .*history holds instants "
                                              r"\[20250101000000000, 20250102000000000\]"):
        window.check_as_of("20250102000000000")
    window.check_as_of(first)  # the active timeline stays readable


# ---------------------------------------------------------------------------------- table config and refusals


def test_effective_properties() -> None:
    props = {TableConfig.KEYGEN_TYPE.key: "TIMESTAMP", TableConfig.ORDERING_FIELDS.key: "ts",
             TableConfig.RECORD_MERGE_MODE.key: "COMMIT_TIME_ORDERING", TableConfig.PAYLOAD_CLASS.key: DEFAULT}
    out = effective_properties(props, "t")
    assert out[TableConfig.KEYGEN_CLASS.key] == "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
    assert out[TableConfig.PRECOMBINE_FIELD.key] == "ts"
    assert out[TableConfig.PAYLOAD_CLASS.key] == OVERWRITE_WITH_LATEST  # the merge mode decides
    event = effective_properties({TableConfig.RECORD_MERGE_MODE.key: "EVENT_TIME_ORDERING"}, "t")
    assert event[TableConfig.PAYLOAD_CLASS.key] == DEFAULT
    custom = {TableConfig.RECORD_MERGE_MODE.key: "CUSTOM", TableConfig.PAYLOAD_CLASS.key: "x.Custom"}
    assert effective_properties(custom, "t")[TableConfig.PAYLOAD_CLASS.key] == "x.Custom"
    kept = {TableConfig.KEYGEN_TYPE.key: "SIMPLE", TableConfig.KEYGEN_CLASS.key: "a.B"}
    assert effective_properties(kept, "t")[TableConfig.KEYGEN_CLASS.key] == "a.B"
    with pytest.raises(UnsupportedTable, match="several fields"):
        effective_properties({TableConfig.ORDERING_FIELDS.key: "a,b"}, "t")
    with pytest.raises(UnsupportedTable, match="merge mode"):
        effective_properties({TableConfig.RECORD_MERGE_MODE.key: "OTHER"}, "t")


@pytest.mark.parametrize("name", HUDI_1X_FIXTURE_NAMES)
def test_1x_fixtures_load(hudi_fixture: Callable[..., str], name: str) -> None:
    table = Table.load(hudi_fixture(name))
    assert table.is_hudi_1x and table.table_version == int(name.rsplit("/v", 1)[1][0])
    assert table.timeline_layout.version == 2 and table.keygen_class.startswith("org.apache.hudi.keygen.")
    assert all(i.completion_time for i in table.timeline.completed())


@pytest.mark.parametrize("name", HUDI_LANCE_FIXTURE_NAMES)
def test_lance_fixtures_are_refused(hudi_fixture: Callable[..., str], name: str) -> None:
    path = hudi_fixture(name)
    with pytest.raises(UnsupportedTable, match=r"\(table version 9\) stores its base files as LANCE"):
        Table.load(path)


def test_unknown_table_version_is_refused(hudi_fixture: Callable[..., str]) -> None:
    path = Path(hudi_fixture("sample_table/cow/v8_empty", fresh=True))
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=8", "hoodie.table.version=7"))
    with pytest.raises(UnsupportedTable, match="has version 7; this engine reads table versions 6, 8, 9"):
        Table.load(str(path))


def test_writes_to_a_1x_table_are_refused(hudi_fixture: Callable[..., str]) -> None:
    from engine.write.commit import start_write
    from engine.write.operation import WriteOperation

    path = Path(hudi_fixture(TRIPS, fresh=True))
    before = sorted(str(p.relative_to(path)) for p in path.rglob("*"))
    props = (path / ".hoodie" / "hoodie.properties").read_bytes()
    table = Table.load(str(path))
    message = f"table {path} was written by Hudi 1.x (table version 8); this engine writes table version 6 only"
    attempts: list[Callable[[], object]] = [
        lambda: start_write(table, WriteOperation.UPSERT),
        lambda: table.update_properties({TableConfig.NAME.key: "renamed"}),
        table.before_change,
        lambda: table.timeline.create_requested_now(COMMIT),
    ]
    for attempt in attempts:
        with pytest.raises(UnsupportedTable) as caught:
            attempt()
        assert str(caught.value) == message
    assert sorted(str(p.relative_to(path)) for p in path.rglob("*")) == before  # metadata table kept too
    assert (path / ".hoodie" / "hoodie.properties").read_bytes() == props


# ---------------------------------------------------------------------------------- reads against hudi-rs


@pytest.mark.parametrize("name", COW_1X)
def test_cow_1x_reads_match_hudi_rs(hudi_fixture: Callable[..., str], name: str) -> None:
    from hudi import HudiQueryType

    def as_of(ts: str) -> Callable[[Any], Any]:
        return lambda options: options.with_as_of_timestamp(ts)

    def incremental(begin: str, end: str) -> Callable[[Any], Any]:
        return lambda options: (options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin)
                                .with_end_timestamp(end))

    path = hudi_fixture(name)
    assert_same(read_table(path), hudi_rs(path))
    times = [i.timestamp for i in Table.load(path).timeline.completed_commits()]
    for ts in sorted({times[0], times[len(times) // 2], times[-1]} if times else set()):
        assert_same(read_table(path, {"as.of.instant": ts}), hudi_rs(path, as_of(ts)))
    if not times or "nometa" in name or "no_metafields" in name:
        return
    # Bounds are completion times in Hudi 1.x: (first, first] holds no commit, (0, last] all but the last.
    for begin, end in sorted({("19700101000000000", times[-1]), (times[0], times[-1]), (times[0], times[0])}):
        ours = read_table(path, {"hoodie.datasource.query.type": "incremental",
                                 "hoodie.datasource.read.begin.instanttime": begin,
                                 "hoodie.datasource.read.end.instanttime": end})
        assert_same(ours, hudi_rs(path, incremental(begin, end)))


def test_copy_is_untouched(tmp_path: Path, hudi_fixture: Callable[..., str]) -> None:
    """Reading a 1.x table changes nothing on storage (no metadata table deletion, no timeline files)."""
    source = Path(hudi_fixture(TRIPS))
    copy = tmp_path / "t"
    shutil.copytree(source, copy)
    before = sorted((str(p.relative_to(copy)), p.stat().st_size) for p in copy.rglob("*"))
    read_table(str(copy))
    read_table(str(copy), {"hoodie.datasource.query.type": "incremental",
                           "hoodie.datasource.read.begin.instanttime": "0"})
    assert sorted((str(p.relative_to(copy)), p.stat().st_size) for p in copy.rglob("*")) == before


def test_logs_of_pending_delta_commits_are_left_out(hudi_fixture: Callable[..., str]) -> None:
    path = Path(hudi_fixture(TRIPS, fresh=True))
    expected = read_table(str(path))
    log = next(p for p in sorted(path.rglob(".*.log.*")) if ".hoodie" not in p.parts)
    parsed = parse_log_file_name(log.name)
    assert parsed is not None
    pending = "20251220210140000"
    (path / ".hoodie" / "timeline" / f"{pending}.deltacommit.requested").write_bytes(b"")
    stray = log.with_name(log.name.replace(f"_{parsed.base_instant}.log.", f"_{pending}.log."))
    shutil.copy(log, stray)
    view = Table.load(str(path)).file_system_view()
    assert stray.name not in {lf.name for s in view.all_latest_file_slices() for lf in s.log_files}
    assert_same(read_table(str(path)), expected)


def test_partial_update_blocks_are_refused(tmp_path: Path) -> None:
    import struct

    from engine.formats.avro_schema import add_meta_fields, avro_to_arrow
    from engine.formats.log_block import IS_PARTIAL_HEADER
    from engine.formats.log_format import AvroDataBlock
    from engine.read.log_scan import BlockFilter, scan_log_blocks

    schema = add_meta_fields({"type": "record", "name": "r", "fields": [{"name": "id", "type": ["null", "long"]}]})
    rows = pa.Table.from_pylist([{"_hoodie_record_key": "k", "id": 1}], schema=avro_to_arrow(schema))

    def block(instant: str, partial: str | None) -> bytes:
        """A data block; with ``partial``, an IS_PARTIAL header (this engine never writes one: it is put in place
        of a BLOCK_IDENTIFIER entry of the same length)."""
        if partial is None:
            return AvroDataBlock.from_table(rows, schema, instant).encode()
        encoded = AvroDataBlock.from_table(rows, schema, instant, {6: partial}).encode()
        entry = struct.pack(">ii", 6, len(partial)) + partial.encode()
        assert encoded.count(entry) == 1
        return encoded.replace(entry, struct.pack(">ii", IS_PARTIAL_HEADER, len(partial)) + partial.encode())

    storage = Storage.for_uri(str(tmp_path))
    path = str(tmp_path / ".f1_001.log.1_0-1-0")
    storage.write_bytes(path, block("001", None) + block("002", "false") + block("003", "true"))
    assert len(scan_log_blocks(storage, [path], BlockFilter("002", frozenset({"001", "002"})))) == 2
    with pytest.raises(UnsupportedTable, match="block of instant 003 .* partial updates"):
        scan_log_blocks(storage, [path], BlockFilter("003", frozenset({"001", "002", "003"})))


def test_cdc_queries_of_1x_tables_are_refused(hudi_fixture: Callable[..., str]) -> None:
    from engine.config import HoodieConfig
    from engine.read.cdc import plan_cdc

    table = Table.load(hudi_fixture(TRIPS))
    with pytest.raises(UnsupportedTable, match=r"CDC query on .*Hudi 1\.x tables \(table version 8\)"):
        plan_cdc(table, HoodieConfig({"hoodie.datasource.read.begin.instanttime": "0"}))


def test_archived_delta_commits_take_their_completion_times_from_the_lsm_archive(
        hudi_fixture: Callable[..., str]) -> None:
    import pyarrow.parquet as pq

    path = Path(hudi_fixture(TRIPS, fresh=True))
    timeline = path / ".hoodie" / "timeline"
    table = Table.load(str(path))
    compaction = next(i for i in table.timeline.completed_commits() if i.action == COMMIT)
    archived = [i for i in table.timeline.instants if i.timestamp < compaction.timestamp]
    late = max(i.timestamp for i in archived if i.action == DELTA_COMMIT)
    log = next(p for p in path.rglob(f".*_{late}.log.*") if ".hoodie" not in p.parts)
    # Archive every instant before the compaction; say the last delta commit completed after it was scheduled.
    moved_completion = str(int(compaction.timestamp) + 1)
    times = {i.timestamp: (moved_completion if i.timestamp == late else i.completion_time) for i in archived}
    for f in list(timeline.iterdir()):
        if f.is_file() and f.name.split(".")[0].split("_")[0] in times:
            f.unlink()
    rows = pa.table({"instantTime": list(times), "completionTime": list(times.values()),
                     "action": [i.action for i in archived]})
    name = f"{min(times)}_{max(times)}_0.parquet"
    pq.write_table(rows, timeline / "history" / name)
    (timeline / "history" / "_version_").write_text("1")
    (timeline / "history" / "manifest_1").write_text(json.dumps({"files": [{"fileName": name, "fileLen": 1}]}))
    table = Table.load(str(path))
    assert table.timeline.archived_completion_times()[late] == moved_completion
    placed = {lf.name: s.base_instant for g in table.file_system_view().all_file_groups() for s in g.slices
              for lf in s.log_files}
    assert placed[log.name] == compaction.timestamp  # completed after the compaction was scheduled
    earlier = [n for n in placed if late not in n and int(n.split("_")[1].split(".")[0]) < int(compaction.timestamp)]
    assert earlier and all(placed[n] < compaction.timestamp for n in earlier)


def test_partition_fields_with_key_generator_type_suffixes(hudi_fixture: Callable[..., str]) -> None:
    path = Path(hudi_fixture("sample_table/cow/v8_simplekeygen_nonhivestyle", fresh=True))
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text(encoding="latin-1")
    assert "hoodie.table.partition.fields=byteField\n" in text
    props.write_text(text.replace("hoodie.table.partition.fields=byteField\n",
                                  "hoodie.table.partition.fields=byteField:SIMPLE\n")
                     .replace("hoodie.table.keygenerator.type=SIMPLE", "hoodie.table.keygenerator.type=CUSTOM"),
                     encoding="latin-1")
    table = Table.load(str(path))
    assert table.partition_fields == ["byteField"]
    assert table.keygen_class == "org.apache.hudi.keygen.CustomKeyGenerator"
    # hudi-rs 0.5.0 refuses the suffix ("Partition field `byteField:SIMPLE` ... is not present"): the rows are
    # those of the unchanged table.
    assert_same(read_table(str(path)), read_table(hudi_fixture("sample_table/cow/v8_simplekeygen_nonhivestyle")))


def test_commit_procedures_see_the_layout_2_timeline(hudi_fixture: Callable[..., str]) -> None:
    """``show_commits``' state transition times come from the timeline folder of the table's layout: a completed
    1.x commit shows its completion time, and every instant file of ``.hoodie/timeline`` has a modification
    time (a version 6 table keeps reading ``.hoodie``)."""
    from sqlext.procedures.commits import completed_commits_newest_first, file_mtimes, transition_time

    table = Table.load(hudi_fixture(TRIPS))
    times = file_mtimes(table)
    commits = completed_commits_newest_first(table)
    assert commits and all((i.timestamp, i.action, i.state) in times for i in commits)
    assert [transition_time(table, i, times) for i in commits] == [i.completion_time for i in commits]
    assert all(i.completion_time and i.completion_time > i.timestamp for i in commits)
    v6 = Table.load(hudi_fixture("quickstart_trips_table/mor/avro/v6_trips_8i1u"))
    v6_times = file_mtimes(v6)
    assert all(transition_time(v6, i, v6_times) is not None for i in completed_commits_newest_first(v6))
