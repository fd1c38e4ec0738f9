"""Metadata table record model without a table: the key hashes against values Hudi 0.15's own classes compute,
the payload merge rules on hand-made records, and the Avro codec of ``HoodieMetadataRecord``."""

from __future__ import annotations

import datetime
import io
import json
import time
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from engine.errors import CorruptFile, SchemaMismatch
from engine.formats.hfile_writer import write_hfile
from engine.formats.log_block import HeaderKey, HFileDataBlock
from engine.formats.log_delete import DeleteBlock, DeleteRecord
from engine.java_hash import java_int, java_string_hash
from engine.metadata import records
from engine.metadata.builders import (
    bloom_filter_record,
    column_stats_record,
    files_record,
    partition_list_record,
    record_index_delete,
    record_index_record,
    wrap_stat,
)
from engine.metadata.hfile_records import block_records
from engine.metadata.keys import (
    bloom_filter_key,
    column_index_id,
    column_stats_key,
    file_group_index,
    file_index_id,
    partition_index_id,
    xxh64,
)
from engine.metadata.payload import combine, merge_column_stats, merge_with_base
from engine.metadata.records import (
    MISSING_FILE_INDEX,
    RAW_STRING_ENCODING,
    FileInfo,
    MetadataRecord,
    RecordIndexInfo,
    StatValue,
    decode_datum,
    encode_datum,
)
from engine.metadata.schema import (
    METADATA_RECORD_SCHEMA,
    MetadataPartition,
    RecordType,
    metadata_schema_json,
    writer_schema_json,
)
from engine.read.log_scan import BlockFilter, scan_log_blocks
from engine.storage import Storage

# ----------------------------------------------------------------------------------------------------------
# Keys. Expected values were printed by Hudi 0.15.0's own classes (hudi-spark3.5-bundle_2.12-0.15.0.jar) with
# a one-off Java program: new ColumnIndexID(c).asBase64EncodedString(), new PartitionIndexID(p)...,
# new FileIndexID(f)..., HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex(key, n). The hash is
# (HoodieTableMetadataUtil, 0.15):
#     int h = 0; for (i...) h = 31 * h + key.charAt(i); return Math.abs(Math.abs(h) % numFileGroups);
# e.g. "polygenelubricants".hashCode() == Integer.MIN_VALUE: Math.abs keeps it negative, MIN_VALUE % 10 == -8.

JAVA_COLUMN_IDS = {"id": "sLZoasJosec=", "_hoodie_record_key": "uSJGdDiVr/k=", "price": "XV1ds8/f890=",
                   "naïve_column": "ppYUmwmbteI=", "": "DW/eaNVbRdo="}
JAVA_PARTITION_IDS = {"": "FXThHwelITM=", "region=us": "431THTTwO5Q=", "2024/01/02": "UOkNQXKj44U=",
                      "dt=2024-01-01/hh=07": "wggTopwEXaQ="}
JAVA_FILE_IDS = {
    "5b41b675-ecac-48f3-8d05-13ce68cfa10c-0_1-44-79_20261128220649991.parquet": "gnXPNad+ZjX8ys1k2lTwlw==",
    ".f1_20240101.log.1_0-1-2": "Bvp068qfeCpxBi0NjZs+Dw==",
}
JAVA_FILE_GROUPS = {  # key -> index for 1, 2, 4, 10, 7 file groups
    "1": (0, 1, 1, 9, 0), "key-000042": (0, 0, 0, 0, 1), "polygenelubricants": (0, 0, 0, 8, 2),
    "GydZG_": (0, 0, 0, 8, 2), "": (0, 0, 0, 0, 0), "ü😀": (0, 1, 3, 1, 2),
    "uuid-5b41b675-ecac-48f3-8d05-13ce68cfa10c": (0, 0, 2, 8, 5), "id:17,name:x": (0, 0, 0, 2, 0),
}


def test_xxh64_reference_vectors() -> None:
    # xxHash's published XXH64 values (seed 0)
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999
    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1


@pytest.mark.parametrize("column", sorted(JAVA_COLUMN_IDS))
def test_column_index_id_equals_java(column: str) -> None:
    assert column_index_id(column) == JAVA_COLUMN_IDS[column]


@pytest.mark.parametrize("partition", sorted(JAVA_PARTITION_IDS))
def test_partition_index_id_equals_java(partition: str) -> None:
    assert partition_index_id(partition) == JAVA_PARTITION_IDS[partition]


@pytest.mark.parametrize("name", sorted(JAVA_FILE_IDS))
def test_file_index_id_equals_java(name: str) -> None:
    assert file_index_id(name) == JAVA_FILE_IDS[name]


def test_index_keys_concatenate_ids_in_hudi_order() -> None:
    name = next(iter(JAVA_FILE_IDS))
    assert column_stats_key("region=us", name, "id") == "sLZoasJosec=" + "431THTTwO5Q=" + JAVA_FILE_IDS[name]
    assert bloom_filter_key("", name) == "FXThHwelITM=" + JAVA_FILE_IDS[name]


@pytest.mark.parametrize("key", sorted(JAVA_FILE_GROUPS))
def test_file_group_index_equals_java(key: str) -> None:
    got = tuple(file_group_index(key, n) for n in (1, 2, 4, 10, 7))
    assert got == JAVA_FILE_GROUPS[key]


def test_java_string_hash_uses_utf16_units_and_wraps() -> None:
    assert java_int(java_string_hash("hello")) == 99162322
    assert java_int(java_string_hash("polygenelubricants")) == -(2**31)
    assert java_int(java_string_hash("😀")) == 31 * 0xD83D + 0xDE00  # a surrogate pair counts as two chars
    with pytest.raises(ValueError):
        file_group_index("k", 0)


def test_file_group_ids() -> None:
    assert MetadataPartition.RECORD_INDEX.file_group_id(3) == "record-index-0003-0"
    assert MetadataPartition.COLUMN_STATS.file_group_id(0) == "col-stats-0000-0"


# ----------------------------------------------------------------------------------------------------------
# Payload merge rules (HoodieMetadataPayload.preCombine, 0.15)


def files(key: str, entries: dict[str, int | None], type_: RecordType = RecordType.FILE_LIST) -> MetadataRecord:
    """A listing: size None = deletion marker."""
    return MetadataRecord(key, type_, files={n: FileInfo(0, True) if s is None else FileInfo(s)
                                             for n, s in entries.items()})


def test_file_listing_union_with_deletions() -> None:
    older = files("p1", {"a.parquet": 10, "b.parquet": 20, "c.log": 5})
    newer = files("p1", {"b.parquet": None, "c.log": 3, "d.parquet": 7, "e.parquet": None})
    merged = combine(older, newer)
    assert merged.files == {"a.parquet": FileInfo(10), "c.log": FileInfo(5), "d.parquet": FileInfo(7),
                            "e.parquet": FileInfo(0, True)}  # a deletion of an unknown file is carried forward
    # the carried tombstone removes the file once merged with the base listing that has it
    base = files("p1", {"e.parquet": 9, "f.parquet": 1})
    assert merge_with_base(base, merged) is not None
    assert merge_with_base(base, merged).files == {  # type: ignore[union-attr]
        "a.parquet": FileInfo(10), "c.log": FileInfo(5), "d.parquet": FileInfo(7), "f.parquet": FileInfo(1)}


def test_partition_list_merges_like_files() -> None:
    older = files("__all_partitions__", {"p1": 0, "p2": 0}, RecordType.PARTITION_LIST)
    newer = files("__all_partitions__", {"p2": None, "p3": 0}, RecordType.PARTITION_LIST)
    assert combine(older, newer).files == {"p1": FileInfo(0), "p3": FileInfo(0)}


def test_live_file_of_size_zero_is_refused() -> None:
    with pytest.raises(CorruptFile, match="size > 0"):
        combine(files("p1", {"a": 1}), files("p1", {"b": 0}))


def test_tombstones() -> None:
    live = files("p1", {"a": 1})
    gone = MetadataRecord.tombstone("p1")
    assert combine(live, gone).deleted  # a newer delete wins
    assert combine(gone, live) == live  # a record added after a delete replaces it
    assert merge_with_base(live, gone) is None  # merged into the base: the key disappears
    assert merge_with_base(None, gone) == gone  # log-only tombstone stays (readers skip it)
    assert merge_with_base(live, None) == live


def test_mismatched_records_are_refused() -> None:
    with pytest.raises(CorruptFile, match="type"):
        combine(files("p1", {"a": 1}), MetadataRecord("p1", RecordType.RECORD_INDEX))
    with pytest.raises(CorruptFile, match="keys differ"):
        combine(files("p1", {"a": 1}), files("p2", {"a": 1}))


def bloom(key: str, ts: str, deleted: bool = False) -> MetadataRecord:
    return MetadataRecord(key, RecordType.BLOOM_FILTER,
                          bloom_filter=records.BloomFilterInfo("DYNAMIC_V0", ts, ts.encode(), deleted))


def test_bloom_filter_newer_replaces_older() -> None:
    assert combine(bloom("k", "1"), bloom("k", "2")).bloom_filter == bloom("k", "2").bloom_filter
    assert combine(bloom("k", "2"), bloom("k", "1", deleted=True)).bloom_filter.is_deleted  # type: ignore[union-attr]


def stats(file: str, lo: object, hi: object, nulls: int, count: int, deleted: bool = False,
          wrapper: str = "IntWrapper") -> records.ColumnStats:
    return records.ColumnStats(file, "c", None if lo is None else StatValue(wrapper, lo),
                       None if hi is None else StatValue(wrapper, hi), count, nulls, 100, 200, deleted)


def test_column_stats_merge_min_max_and_sums() -> None:
    merged = merge_column_stats(stats("f", 3, 9, 1, 10), stats("f", None, 12, 2, 5))
    assert merged.min_value == StatValue("IntWrapper", 3) and merged.max_value == StatValue("IntWrapper", 12)
    assert (merged.null_count, merged.value_count, merged.total_size, merged.total_uncompressed_size) == \
        (3, 15, 200, 400)
    record = combine(MetadataRecord("k", RecordType.COLUMN_STATS, column_stats=stats("f", 1, 2, 0, 1)),
                     MetadataRecord("k", RecordType.COLUMN_STATS, column_stats=stats("f", 0, 1, 0, 1)))
    assert record.column_stats is not None and record.column_stats.min_value == StatValue("IntWrapper", 0)


def test_column_stats_deleted_side_wins_whole() -> None:
    tomb = stats("f", 0, 0, 0, 0, deleted=True)
    assert merge_column_stats(stats("f", 3, 9, 1, 10), tomb) == tomb
    fresh = stats("f", 5, 6, 0, 2)
    assert merge_column_stats(tomb, fresh) == fresh
    with pytest.raises(CorruptFile):
        merge_column_stats(stats("f", 1, 1, 0, 1), stats("g", 1, 1, 0, 1))


def test_column_stats_compare_like_java() -> None:
    # String.compareTo orders UTF-16 code units: U+FF21 (one unit) sorts after U+1F600 (surrogates D83D DE00)
    merged = merge_column_stats(stats("f", "\U0001F600", "\U0001F600", 0, 1, wrapper="StringWrapper"),
                                stats("f", "\uFF21", "\uFF21", 0, 1, wrapper="StringWrapper"))
    assert merged.min_value == StatValue("StringWrapper", "\U0001F600")
    assert merged.max_value == StatValue("StringWrapper", "\uFF21")
    # ByteBuffer.compareTo compares signed bytes: 0x80 (-128) < 0x01
    merged = merge_column_stats(stats("f", b"\x01", b"\x01", 0, 1, wrapper="BytesWrapper"),
                                stats("f", b"\x80", b"\x80", 0, 1, wrapper="BytesWrapper"))
    assert merged.min_value == StatValue("BytesWrapper", b"\x80")


def location(file_id: str) -> MetadataRecord:
    return MetadataRecord("key1", RecordType.RECORD_INDEX,
                          record_index=RecordIndexInfo.of("p", file_id, "20240102030405678", utc=True))


def test_record_index_latest_mapping_wins() -> None:
    newer = location("5b41b675-ecac-48f3-8d05-13ce68cfa10c-1")
    assert combine(location("5b41b675-ecac-48f3-8d05-13ce68cfa10c-0"), newer) is newer


# ----------------------------------------------------------------------------------------------------------
# Record index entries (HoodieMetadataPayload.createRecordIndexUpdate / getLocationFromRecordIndexInfo)


def test_record_index_file_id_round_trips() -> None:
    for file_id in ("5b41b675-ecac-48f3-8d05-13ce68cfa10c-0", "fbcea83c-8a37-8bf1-d24e-c4f1a98c6e5b-17",
                    "5b41b675-ecac-48f3-8d05-13ce68cfa10c"):
        info = RecordIndexInfo.of("p", file_id, "20240102030405678", utc=True)
        assert info.file_id == file_id
        assert info.instant_time(utc=True) == "20240102030405678"
    bare = RecordIndexInfo.of("p", "5b41b675-ecac-48f3-8d05-13ce68cfa10c", "20240102030405678", utc=True)
    assert bare.file_index == MISSING_FILE_INDEX
    high = RecordIndexInfo.of("p", "ffffffff-ffff-ffff-8000-000000000000-3", "20240102030405678", utc=True)
    assert high.file_id_high_bits == -1 and high.file_id_low_bits == -(2**63)  # Java longs are signed
    raw = RecordIndexInfo.of("p", "my-file", "20240102030405678", utc=True, encoding=RAW_STRING_ENCODING)
    assert raw.file_id == "my-file" and raw.file_id_high_bits == -1
    assert RecordIndexInfo.of("p", "x" * 36, "20240102030405", utc=True, encoding=1).instant_time(True) == \
        "20240102030405999"  # 14-digit instants parse with millis 999, as Java's parseDateFromInstantTime


def test_record_index_instant_in_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # LOCAL timeline time zone: epoch millis of the wall-clock instant in the process's zone, as Java
    monkeypatch.setenv("TZ", "America/Chicago")
    time.tzset()
    try:
        local = RecordIndexInfo.of("p", "5b41b675-ecac-48f3-8d05-13ce68cfa10c-0", "20240702030405678", utc=False)
        utc = RecordIndexInfo.of("p", "5b41b675-ecac-48f3-8d05-13ce68cfa10c-0", "20240702030405678", utc=True)
        assert local.instant_time_ms - utc.instant_time_ms == 5 * 3600 * 1000  # CDT is UTC-5
        assert local.instant_time(utc=False) == "20240702030405678"
    finally:
        monkeypatch.undo()
        time.tzset()


# ----------------------------------------------------------------------------------------------------------
# Avro codec


def sample_records() -> list[MetadataRecord]:
    return [
        files("__all_partitions__", {"p1": 0}, RecordType.PARTITION_LIST),
        files("p1", {"a.parquet": 10, "b.parquet": None}),
        bloom(bloom_filter_key("p1", "a.parquet"), "20240102030405678"),
        MetadataRecord(column_stats_key("p1", "a.parquet", "c"), RecordType.COLUMN_STATS, column_stats=records.ColumnStats(
            "a.parquet", "c", StatValue("DecimalWrapper", Decimal("1.250000000000000")),
            StatValue("DateWrapper", 19723), 3, 1, 50, 40, False)),
        location("5b41b675-ecac-48f3-8d05-13ce68cfa10c-0"),
    ]


def test_schema_is_hudi_015_shape() -> None:
    names = [f["name"] for f in METADATA_RECORD_SCHEMA["fields"]]
    assert names == ["key", "type", "filesystemMetadata", "BloomFilterMetadata", "ColumnStatsMetadata",
                     "recordIndexMetadata"]
    assert json.loads(metadata_schema_json()) == METADATA_RECORD_SCHEMA
    assert " " not in metadata_schema_json().split('"doc"')[0]  # compact, as Java's Schema.toString()


def test_codec_round_trip_and_key_truncation() -> None:
    for record in sample_records():
        data = encode_datum(record, meta_fields=False)
        stored = fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(METADATA_RECORD_SCHEMA), None)
        assert isinstance(stored, dict) and stored["key"] == ""  # the HFile cell key carries it
        assert decode_datum(data, key=record.key) == record
        assert decode_datum(encode_datum(record, truncate_key=False, meta_fields=False)) == record
        # as Hudi writes cells: under the schema with meta fields, null but a base file's own name
        in_base = encode_datum(record, base_file_name="files-0000-0_0-1-2_3.hfile")
        raw = fastavro.schemaless_reader(io.BytesIO(in_base), fastavro.parse_schema(json.loads(writer_schema_json())),
                                         None)
        assert isinstance(raw, dict) and raw["_hoodie_file_name"] == "files-0000-0_0-1-2_3.hfile"
        assert raw["_hoodie_commit_time"] is None and raw["key"] == ""
        assert decode_datum(in_base, writer_schema_json(), key=record.key) == record
        assert decode_datum(encode_datum(record), writer_schema_json(), key=record.key) == record
    with pytest.raises(ValueError):
        encode_datum(MetadataRecord.tombstone("k"))
    with pytest.raises(CorruptFile, match="where.hfile"):
        decode_datum(b"\x07", key="k", where="where.hfile")


def test_decode_resolves_newer_writer_schema() -> None:
    # a writer schema with an extra optional field (Hudi 1.x adds some) resolves to the 0.15 reader schema
    schema = json.loads(metadata_schema_json())
    schema["fields"].insert(3, {"name": "basePathForPartition", "type": ["null", "string"], "default": None})
    record = files("p1", {"a.parquet": 10})
    datum = {**record.to_avro(), "basePathForPartition": "/somewhere"}
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), datum)
    assert decode_datum(buffer.getvalue(), json.dumps(schema), key="p1") == record


def test_hfile_data_block_records() -> None:
    records = sample_records()
    content = write_hfile(sorted((r.key, encode_datum(r)) for r in records))
    block = HFileDataBlock(header={HeaderKey.INSTANT_TIME: "20240102030405678",
                                   HeaderKey.SCHEMA: writer_schema_json()}, content=content)
    assert block_records(block) == {r.key: r for r in sorted(records, key=lambda r: r.key)}
    wanted = [records[1].key, "absent"]
    assert block_records(block, wanted) == {records[1].key: records[1]}
    broken = HFileDataBlock(header={HeaderKey.INSTANT_TIME: "1"}, content=b"not an hfile")
    with pytest.raises(CorruptFile, match="HFile data block"):
        block_records(broken)


# ----------------------------------------------------------------------------------------------------------
# Folding a slice's log (HoodieMergedLogRecordScanner on the MDT) and merging it with the base file


def hfile_block(instant: str, *records: MetadataRecord) -> HFileDataBlock:
    content = write_hfile(sorted((r.key, encode_datum(r)) for r in records))
    return HFileDataBlock(header={HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: writer_schema_json()},
                          content=content)


def test_log_folding_in_log_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.metadata import reader as reader_module

    a1, a2 = location("5b41b675-ecac-48f3-8d05-13ce68cfa10c-0"), location("5b41b675-ecac-48f3-8d05-13ce68cfa10c-1")
    other = MetadataRecord("key2", RecordType.RECORD_INDEX, record_index=a1.record_index)
    blocks = [
        hfile_block("1", a1, other),
        DeleteBlock.from_records([DeleteRecord("key1", "record_index")], "2"),  # delete, then add again
        hfile_block("3", a2),
        DeleteBlock.from_records([DeleteRecord("key2", "record_index")], "4"),
    ]
    monkeypatch.setattr(reader_module._Slice, "blocks", lambda self: blocks)
    monkeypatch.setattr(reader_module._Slice, "base", lambda self: None)
    opened = reader_module._Slice.__new__(reader_module._Slice)
    assert opened.log_records(None) == {"key1": a2, "key2": MetadataRecord.tombstone("key2")}
    assert opened.log_records(["key2"]) == {"key2": MetadataRecord.tombstone("key2")}
    # records(): log-only tombstones stay (read_records drops them); no base file here
    assert opened.records(["key1", "key2", "absent"]) == {"key1": a2, "key2": MetadataRecord.tombstone("key2")}


# ----------------------------------------------------------------------------------------------------------
# Builders (what the writer side will use)


def test_wrap_stat_per_type() -> None:
    assert wrap_stat(True, pa.bool_()) == StatValue("BooleanWrapper", True)
    assert wrap_stat(7, pa.int16()) == StatValue("IntWrapper", 7)
    assert wrap_stat(7, pa.int64()) == StatValue("LongWrapper", 7)
    assert wrap_stat(1.5, pa.float32()) == StatValue("FloatWrapper", 1.5)
    assert wrap_stat(b"\x00", pa.binary()) == StatValue("BytesWrapper", b"\x00")
    assert wrap_stat("x", pa.string()) == StatValue("StringWrapper", "x")
    day = datetime.date(2024, 1, 1)
    assert wrap_stat(day, pa.date32()) == StatValue("IntWrapper", 19723)
    assert wrap_stat(day, pa.date32(), as_committed=False) == StatValue("DateWrapper", 19723)
    moment = datetime.datetime(2024, 1, 1, 0, 0, 1, 5)
    assert wrap_stat(moment, pa.timestamp("us")) == StatValue("LongWrapper", 1704067201000005)
    assert wrap_stat(moment, pa.timestamp("us"), as_committed=False) == \
        StatValue("TimestampMicrosWrapper", 1704067201000005)
    assert wrap_stat(None, pa.int32()) is None
    with pytest.raises(SchemaMismatch):
        wrap_stat([1], pa.list_(pa.int32()))


@pytest.mark.parametrize(("value", "raw"), [
    ("6.25", bytes.fromhex("16345785d8a000")),  # 6.25e15, stored by Hudi in the fixtures
    ("0", b"\x00"),
    ("-0.000000000000128", b"\x80"),  # unscaled -128: one byte, as BigInteger.toByteArray()
    ("0.000000000000128", b"\x00\x80"),
    ("-1", (-(10**15)).to_bytes(7, "big", signed=True)),
])
def test_committed_decimal_stats_are_unscaled_bytes(value: str, raw: bytes) -> None:
    stat = wrap_stat(Decimal(value), pa.decimal128(10, 2))
    assert stat == StatValue("BytesWrapper", raw)
    assert wrap_stat(Decimal(value), pa.decimal128(30, 15), as_committed=False) == \
        StatValue("DecimalWrapper", Decimal(value).quantize(Decimal("1e-15")))


def test_record_builders() -> None:
    listing = files_record("p1", {"a.parquet": 10}, ["b.parquet"])
    assert listing == files("p1", {"a.parquet": 10, "b.parquet": None})
    assert files_record("", {"a": 1}).key == "."
    with pytest.raises(SchemaMismatch):
        files_record("p1", {"a.parquet": 0})
    assert partition_list_record(["p1", ""], ["p2"]).files == {
        "p1": FileInfo(0), ".": FileInfo(0), "p2": FileInfo(0, True)}
    entry = record_index_record("k", "p", "5b41b675-ecac-48f3-8d05-13ce68cfa10c-0", "20240102030405678", utc=True)
    assert entry.record_index is not None and entry.record_index.file_id == "5b41b675-ecac-48f3-8d05-13ce68cfa10c-0"
    assert record_index_delete("k") == MetadataRecord.tombstone("k")
    stats = column_stats_record("p", "f.parquet", "c", pa.int32(), 1, 9, value_count=3, null_count=1,
                                total_size=10, total_uncompressed_size=12)
    assert stats.key == column_stats_key("p", "f.parquet", "c")
    assert stats.column_stats == records.ColumnStats("f.parquet", "c", StatValue("IntWrapper", 1), StatValue("IntWrapper", 9),
                                             3, 1, 10, 12, False)
    gone = bloom_filter_record("p", "f.parquet", "20240102030405678", None, deleted=True)
    assert gone.key == bloom_filter_key("p", "f.parquet") and gone.bloom_filter is not None
    assert gone.bloom_filter.is_deleted and gone.bloom_filter.bloom_filter == b""


def test_scan_stops_at_the_first_block_after_the_latest_instant(tmp_path: Path) -> None:
    """AbstractHoodieLogRecordReader.scanInternalV1 breaks at a block later than the latest instant: blocks
    after it, in that log file and the next ones, are not applied (the MDT reader sets stop_after_latest)."""
    first = tmp_path / ".f1_000.log.1_0-0-0"
    second = tmp_path / ".f1_000.log.2_0-0-0"
    first.write_bytes(hfile_block("1", files("p1", {"a": 1})).encode() + hfile_block("3", files("p1", {"c": 3})).encode()
                      + hfile_block("2", files("p1", {"b": 2})).encode())
    second.write_bytes(hfile_block("2", files("p1", {"d": 4})).encode())
    storage = Storage.for_uri(str(tmp_path))
    paths = [str(first), str(second)]
    committed = frozenset({"1", "2", "3"})
    kept = scan_log_blocks(storage, paths, BlockFilter("2", committed, stop_after_latest=True), hfile_blocks=True)
    assert [b.instant_time for b in kept] == ["1"]
    kept = scan_log_blocks(storage, paths, BlockFilter("2", committed), hfile_blocks=True)
    assert [b.instant_time for b in kept] == ["1", "2", "2"]
    assert scan_log_blocks(storage, paths, BlockFilter("2", committed)) == []  # HFile blocks are opt-in
    valid = BlockFilter("3", committed, valid_instants=frozenset({"2", "3"}))
    assert [b.instant_time for b in scan_log_blocks(storage, paths, valid, hfile_blocks=True)] == ["3", "2", "2"]
