"""Hudi log files: decode the Hudi-written fixtures, re-encode blocks byte for byte, survive corruption."""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from engine.errors import CorruptFile, SchemaMismatch, StorageError, UnsupportedTable
from engine.formats import log_avro
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro
from engine.formats.log_format import (
    MAGIC,
    AvroDataBlock,
    BlockType,
    CommandBlock,
    CorruptBlock,
    DeleteBlock,
    DeleteRecord,
    HeaderKey,
    LogBlock,
    LogWriter,
    ParquetDataBlock,
    encode_metadata,
    iter_log_blocks,
    load_block_content,
    ordering_wrapper_for,
    read_log_blocks,
)
from engine.storage import Storage

LOG_FIXTURES = [
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle",
    "sample_table/mor/parquet/v6_nonpartitioned",
    "sample_table/mor/parquet/v6_nonpartitioned_rollback",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable",
    "quickstart_trips_table/mor/avro/v6_trips_8i1u",
    "quickstart_trips_table/mor/avro/v6_trips_8i3d",
]

# docs/FORMAT.md §5.1: Hudi's 105-byte rollback log (v6_nonpartitioned_rollback, .log.2_1-0-1)
ROLLBACK_105 = bytes.fromhex(
    "234855444923"
    "000000000000005b"
    "00000001"
    "00000000"
    "00000003"
    "00000000"
    "00000011" + b"20250126040936578".hex() + "00000003"
    "00000001" + b"0".hex() + "00000001"
    "00000011" + b"20250126040826878".hex() + "0000000000000000"
    "00000000"
    "0000000000000061"
)


def log_files(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob(".*.log.*") if ".hoodie" not in p.parts)


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    return Storage.for_uri(str(tmp_path))


# --------------------------------------------------------------------------------------------------------
# Hudi-written fixtures
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LOG_FIXTURES)
def test_fixture_logs_decode_and_reencode(name: str, hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture(name))
    files = log_files(base)
    assert files
    local = Storage.for_uri(str(base))
    for path in files:
        data = path.read_bytes()
        blocks = list(read_log_blocks(local, str(path)))
        assert blocks and not any(isinstance(b, CorruptBlock) for b in blocks)
        assert b"".join(b.encode() for b in blocks) == data  # framing + header order byte-identical
        assert blocks[0].offset == 0 and sum(b.size for b in blocks) == len(data)
        for block in blocks:
            assert block.file_path == str(path)
            if isinstance(block, (AvroDataBlock, ParquetDataBlock)):
                table = block.to_table()
                assert table.num_rows == block.record_count > 0
                assert set(table.column("_hoodie_commit_time").to_pylist()) == {block.instant_time}
                assert table.column("_hoodie_record_key").null_count == 0


def test_fixture_avro_block(hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture("quickstart_trips_table/mor/avro/v6_trips_8i1u"))
    (path,) = log_files(base)
    (block,) = list(iter_log_blocks(path.read_bytes(), str(path)))
    assert isinstance(block, AvroDataBlock) and block.block_type is BlockType.AVRO_DATA_BLOCK
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert block.instant_time == "20250331030645735"
    records = block.records()
    assert [r["_hoodie_record_key"] for r in records] == ["9909a8b1-2d15-4d3d-8ec9-efc48c536a00"]
    assert records[0]["_hoodie_partition_path"] == "city=san_francisco"
    # re-encode from decoded records and from the Arrow table: identical bytes
    again = AvroDataBlock.from_records(records, block.schema_json or "", "20250331030645735")
    assert again.encode() == block.encode()
    from_arrow = AvroDataBlock.from_table(block.to_table(), block.schema_json or "", "20250331030645735")
    assert from_arrow.encode() == block.encode()


def test_fixture_delete_block(hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture("quickstart_trips_table/mor/avro/v6_trips_8i3d"))
    (path,) = log_files(base)
    (block,) = list(iter_log_blocks(path.read_bytes(), str(path)))
    assert isinstance(block, DeleteBlock)
    assert list(block.header) == [HeaderKey.SCHEMA, HeaderKey.INSTANT_TIME]
    deletes = block.delete_records()
    assert [d.record_key for d in deletes] == [
        "e96c4396-3fad-413a-a942-4cb36106d721",
        "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330",
    ]
    assert {(d.partition_path, d.ordering_value, d.ordering_type) for d in deletes} == {
        ("city=san_francisco", 0, "IntWrapper")
    }
    again = DeleteBlock.from_records(deletes, block.instant_time or "", block.schema_json)
    assert again.encode() == block.encode()


def test_fixture_rollback_block(hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned_rollback"))
    path = next(p for p in log_files(base) if ".log.2_" in p.name)
    assert path.read_bytes() == ROLLBACK_105
    (block,) = list(iter_log_blocks(ROLLBACK_105))
    assert isinstance(block, CommandBlock) and block.is_rollback
    assert block.target_instant_time == "20250126040826878" and block.instant_time == "20250126040936578"
    assert CommandBlock.rollback("20250126040936578", "20250126040826878").encode() == ROLLBACK_105


def test_fixture_parquet_block_reads_rows(hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture("sample_table/mor/parquet/v6_complexkeygen_hivestyle"))
    (path,) = log_files(base)
    (block,) = list(iter_log_blocks(path.read_bytes(), str(path)))
    assert isinstance(block, ParquetDataBlock)
    table = block.to_table()
    assert table.column("_hoodie_record_key").to_pylist() == ["id:1,name:Alice"]
    assert table.column("_hoodie_partition_path").to_pylist() == ["byteField=10/shortField=300"]
    assert table.schema.field("timestampField").type == pa.timestamp("us", tz="UTC")
    # a block written from these rows reads back equal
    again = ParquetDataBlock.from_table(table, block.schema_json or "", block.instant_time or "")
    assert again.to_table().equals(table)
    assert list(again.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]


# --------------------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------------------


def sample_table() -> tuple[pa.Table, dict[str, object]]:
    data = pa.table(
        {
            "_hoodie_commit_time": ["20250101000000000"] * 2,
            "_hoodie_commit_seqno": ["20250101000000000_0_1", "20250101000000000_0_2"],
            "_hoodie_record_key": ["1", "2"],
            "_hoodie_partition_path": ["", ""],
            "_hoodie_file_name": ["f-0", "f-0"],
            "id": pa.array([1, 2], pa.int32()),
            "price": pa.array([Decimal("1.50"), None], pa.decimal128(10, 2)),
            "ts": pa.array(
                [dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.UTC), None], pa.timestamp("us", tz="UTC")
            ),
            "d": pa.array([dt.date(2023, 4, 1), dt.date(1970, 1, 1)]),
            "tags": pa.array([["a"], []], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        }
    )
    avro = add_meta_fields(
        arrow_to_avro(
            data.drop_columns([c for c in data.column_names if c.startswith("_hoodie")]).schema, "t"
        )
    )
    return data, avro


def test_avro_block_roundtrip_from_arrow() -> None:
    data, avro = sample_table()
    block = AvroDataBlock.from_table(data, avro, "20250101000000000")
    (parsed,) = list(iter_log_blocks(block.encode()))
    assert isinstance(parsed, AvroDataBlock) and parsed.record_count == 2
    table = parsed.to_table()
    assert table.column("attrs").to_pylist() == [[("k", 1)], None]
    assert table.column("price").to_pylist() == [Decimal("1.50"), None]
    assert table.column("_hoodie_record_key").to_pylist() == ["1", "2"]
    assert AvroDataBlock.from_table(table, avro, "20250101000000000").encode() == block.encode()
    with pytest.raises(SchemaMismatch):
        AvroDataBlock.from_records([{"id": "not an int"}], avro, "1")


def test_parquet_block_roundtrip() -> None:
    data, avro = sample_table()
    block = ParquetDataBlock.from_table(data, avro, "20250101000000000", compression="snappy")
    assert block.content[:4] == b"PAR1" and block.content[-4:] == b"PAR1"
    (parsed,) = list(iter_log_blocks(block.encode()))
    assert isinstance(parsed, ParquetDataBlock)
    assert parsed.to_table().column("id").to_pylist() == [1, 2]
    assert parsed.to_table().column("attrs").to_pylist() == [[("k", 1)], None]


def test_delete_block_wrappers_and_versions() -> None:
    deletes = [
        DeleteRecord("a", "p=1", 7, "LongWrapper"),
        DeleteRecord("b", None, "x", "StringWrapper"),
        DeleteRecord("c", "p=2", 1.5, "DoubleWrapper"),
        DeleteRecord("d", "p=3", Decimal("2.5"), "DecimalWrapper"),
        DeleteRecord(None, "p=4"),
    ]
    block = DeleteBlock.from_records(deletes, "20250101000000000")
    assert list(block.header) == [HeaderKey.INSTANT_TIME]
    decoded = block.delete_records()
    assert [(d.record_key, d.ordering_type) for d in decoded] == [
        ("a", "LongWrapper"),
        ("b", "StringWrapper"),
        ("c", "DoubleWrapper"),
        ("d", "DecimalWrapper"),
        (None, None),
    ]
    assert decoded[3].ordering_value == Decimal("2.500000000000000")
    assert DeleteBlock.from_records(decoded, "20250101000000000").encode() == block.encode()
    with pytest.raises(SchemaMismatch, match="wrapper"):
        DeleteBlock.from_records([DeleteRecord("a", None, 1, "Int")], "1")
    kryo = DeleteBlock(header={HeaderKey.INSTANT_TIME: "1"}, content=bytes.fromhex("0000000200000000"))
    with pytest.raises(UnsupportedTable, match="version 2"):
        kryo.delete_records()
    with pytest.raises(CorruptFile):
        DeleteBlock(content=bytes.fromhex("00000003000000ff00")).delete_records()


@pytest.mark.parametrize(
    ("arrow_type", "wrapper"),
    [
        (pa.int32(), "IntWrapper"),
        (pa.int64(), "LongWrapper"),
        (pa.timestamp("us", tz="UTC"), "LongWrapper"),
        (pa.float64(), "DoubleWrapper"),
        (pa.string(), "StringWrapper"),
        (pa.date32(), "IntWrapper"),
    ],
)
def test_ordering_wrapper_for(arrow_type: pa.DataType, wrapper: str) -> None:
    assert ordering_wrapper_for(arrow_type) == wrapper


def test_header_rules() -> None:
    assert encode_metadata({}) == b"\x00\x00\x00\x00"
    with pytest.raises(SchemaMismatch, match="ordinal 7"):
        LogBlock(header={7: "x"}).encode()
    ident = CommandBlock.rollback("2", "1")
    ident.header[HeaderKey.BLOCK_IDENTIFIER] = "0,1"
    (parsed,) = list(iter_log_blocks(ident.encode()))
    assert parsed.block_identifier == "0,1"


# --------------------------------------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------------------------------------


def test_log_writer(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "p" / ".f1-0_20250101000000000.log.1_0-1-1")
    data, avro = sample_table()
    blocks: list[LogBlock] = [
        AvroDataBlock.from_table(data, avro, "20250101000000000"),
        DeleteBlock.from_records([DeleteRecord("1", "", 0, "IntWrapper")], "20250101000000001"),
        CommandBlock.rollback("20250101000000002", "20250101000000001"),
    ]
    with LogWriter(storage, path) as writer:
        positions = writer.append_blocks(blocks)
        assert writer.size == sum(size for _, size in positions)
    assert storage.read_bytes(path) == b"".join(b.encode() for b in blocks)
    read = list(read_log_blocks(storage, path))
    assert [type(b) for b in read] == [AvroDataBlock, DeleteBlock, CommandBlock]
    assert [(b.offset, b.size) for b in read] == positions
    with pytest.raises(StorageError, match="already exists"):
        LogWriter(storage, path)
    with LogWriter(storage, path, append_existing=True) as writer:
        writer.append_block(CommandBlock.rollback("20250101000000003", "20250101000000000"))
    assert len(list(read_log_blocks(storage, path))) == 4
    closed = LogWriter(storage, path + "x")
    closed.close()
    with pytest.raises(StorageError, match="closed"):
        closed.append_block(blocks[2])


def test_lazy_read_leaves_large_contents_on_disk(storage: Storage, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / ".f2-0_20250101000000000.log.1_0-1-1")
    data, avro = sample_table()
    big = pa.concat_tables([data] * 5000)  # ~10k records: a content well over the 256 KiB lazy threshold
    blocks: list[LogBlock] = [
        AvroDataBlock.from_table(big, avro, "20250101000000000"),
        DeleteBlock.from_records([DeleteRecord("1", "", 0, "IntWrapper")], "20250101000000001"),
    ]
    with LogWriter(storage, path) as writer:
        writer.append_blocks(blocks)
    eager = list(read_log_blocks(storage, path))
    lazy = list(read_log_blocks(storage, path, lazy=True))
    assert [type(b) for b in lazy] == [AvroDataBlock, DeleteBlock]
    assert not lazy[0].is_content_loaded and lazy[0].content == b""
    assert lazy[0].encoded_size == len(eager[0].content) > 256 * 1024
    assert lazy[1].is_content_loaded  # small contents are read at once
    assert [(b.header, b.footer, b.offset, b.size) for b in lazy] == [(b.header, b.footer, b.offset, b.size)
                                                                      for b in eager]
    # Streamed from disk in small windows (records straddle window edges): the same rows, never loaded.
    monkeypatch.setattr(log_avro, "CONTENT_WINDOW_BYTES", 1000)
    assert isinstance(lazy[0], AvroDataBlock)
    streamed = pa.concat_tables(list(lazy[0].iter_tables(777, storage)))
    assert streamed.equals(eager[0].to_table()) and lazy[0].record_count_from(storage) == big.num_rows
    assert max(t.num_rows for t in lazy[0].iter_tables(777, storage)) <= 777
    monkeypatch.setattr(log_avro, "CONTENT_WINDOW_BYTES", 16)  # windows smaller than one record
    assert pa.concat_tables(list(lazy[0].iter_tables(777, storage))).equals(streamed)
    assert not lazy[0].is_content_loaded
    with pytest.raises(CorruptFile, match="left on disk"):
        next(lazy[0].iter_tables(777))
    loaded = load_block_content(storage, lazy[0])
    assert loaded.content == eager[0].content and loaded.is_content_loaded
    assert isinstance(loaded, AvroDataBlock) and loaded.to_table().equals(eager[0].to_table())
    # A file that shrank after the scan: the content is reported lost, never half-read.
    raw = storage.read_bytes(path)
    storage.write_bytes(path, raw[: lazy[0].offset + 1000])
    with pytest.raises(CorruptFile, match="lost its content"):
        load_block_content(storage, lazy[0])
    with pytest.raises(CorruptFile, match="shrank"):
        list(lazy[0].iter_tables(777, storage))
    # A lazily read block whose footer is damaged is a corrupt block, as in an eager read.
    damaged = bytearray(raw)
    end = lazy[0].offset + lazy[0].size
    damaged[end - 12: end - 8] = b"\x00\x00\x00\x07"  # footer entry count 7 with no entries
    storage.write_bytes(path, bytes(damaged))
    for mode in (False, True):
        assert isinstance(next(iter(read_log_blocks(storage, path, lazy=mode))), CorruptBlock)


# --------------------------------------------------------------------------------------------------------
# Corruption
# --------------------------------------------------------------------------------------------------------


def three_blocks() -> bytes:
    return (
        CommandBlock.rollback("20250101000000002", "20250101000000001").encode()
        + DeleteBlock.from_records([DeleteRecord("k", "p", 0, "IntWrapper")], "20250101000000001").encode()
        + ROLLBACK_105
    )


def test_truncation_at_every_offset_never_crashes(caplog: pytest.LogCaptureFixture) -> None:
    data = three_blocks()
    first = len(CommandBlock.rollback("20250101000000002", "20250101000000001").encode())
    for cut in range(len(data) + 1):
        blocks = list(iter_log_blocks(data[:cut], "trunc.log"))
        intact = [b for b in blocks if not isinstance(b, CorruptBlock)]
        if cut >= first:
            assert isinstance(blocks[0], CommandBlock)
        assert all(b.offset + b.size <= cut for b in blocks)
        if cut in (first, len(data)):
            assert not any(isinstance(b, CorruptBlock) for b in blocks)
        assert len(intact) <= 3
    with caplog.at_level(logging.WARNING, logger="engine.formats.log_format"):
        blocks = list(iter_log_blocks(data[: first + 30], "trunc.log"))
    assert [type(b) for b in blocks] == [CommandBlock, CorruptBlock]
    assert blocks[1].offset == first and blocks[1].size == 30
    assert "trunc.log" in caplog.text and "corrupt block" in caplog.text


def test_reverse_pointer_mismatch_resumes_at_next_magic(caplog: pytest.LogCaptureFixture) -> None:
    data = bytearray(three_blocks())
    first = len(CommandBlock.rollback("20250101000000002", "20250101000000001").encode())
    data[first - 1] ^= 0x01  # break the first block's reverse pointer
    with caplog.at_level(logging.WARNING):
        blocks = list(iter_log_blocks(bytes(data), "bad-pointer.log"))
    assert [type(b) for b in blocks] == [CorruptBlock, DeleteBlock, CommandBlock]
    assert blocks[0].offset == 0 and blocks[0].size == first
    assert "reverse pointer" in caplog.text and "bad-pointer.log" in caplog.text


def test_block_size_mismatch_and_garbage() -> None:
    data = bytearray(three_blocks())
    data[13] = 0x7F  # first block size no longer matches
    assert [type(b) for b in iter_log_blocks(bytes(data))] == [CorruptBlock, DeleteBlock, CommandBlock]
    blocks = list(iter_log_blocks(b"junk!!" + three_blocks() + b"\x00\x01"))
    assert [type(b) for b in blocks] == [CorruptBlock, CommandBlock, DeleteBlock, CommandBlock]
    assert blocks[0].content == b"junk!!"
    assert list(iter_log_blocks(b"")) == []
    assert [type(b) for b in iter_log_blocks(MAGIC)] == [CorruptBlock]


def test_random_damage_never_crashes(storage: Storage, tmp_path: Path) -> None:
    rng = random.Random(11)
    clean = three_blocks()
    for _ in range(400):
        data = bytearray(clean)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        for block in iter_log_blocks(bytes(data)):
            if isinstance(block, DeleteBlock):
                try:
                    block.delete_records()
                except (CorruptFile, UnsupportedTable):
                    pass
    path = str(tmp_path / "damaged.log")
    storage.write_bytes(path, clean[:-3] + b"#HUDI#\x00\x00")
    blocks = list(read_log_blocks(storage, path))
    assert [type(b) for b in blocks] == [CommandBlock, DeleteBlock, CorruptBlock, CorruptBlock]


# --------------------------------------------------------------------------------------------------------
# Oracle: hudi-rs reads blocks written here
# --------------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_hudi_rs_reads_written_blocks(hudi_fixture: Callable[..., str]) -> None:
    hudi = pytest.importorskip("hudi")
    base = Path(hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned", fresh=True))
    (path,) = log_files(base)
    (original,) = list(iter_log_blocks(path.read_bytes()))
    assert isinstance(original, ParquetDataBlock)
    rows = original.to_table()
    schema, instant = original.schema_json or "", original.instant_time or ""

    def snapshot() -> dict[int, str]:
        result = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
        table = result if isinstance(result, pa.Table) else pa.Table.from_batches(result)
        return dict(zip(table.column("id").to_pylist(), table.column("name").to_pylist(), strict=True))

    assert snapshot() == {1: "Alice", 2: "Bob", 3: "Carol", 4: "Diana"}
    renamed = rows.set_column(rows.schema.get_field_index("name"), "name", pa.array(["ViaParquet"]))
    path.write_bytes(ParquetDataBlock.from_table(renamed, schema, instant).encode())
    assert snapshot()[1] == "ViaParquet"
    renamed = rows.set_column(rows.schema.get_field_index("name"), "name", pa.array(["ViaAvro"]))
    delete = DeleteBlock.from_records([DeleteRecord("2", "", 0, "IntWrapper")], instant, schema)
    path.write_bytes(AvroDataBlock.from_table(renamed, schema, instant).encode() + delete.encode())
    assert snapshot() == {1: "ViaAvro", 3: "Carol", 4: "Diana"}


def test_a_damaged_schema_header_names_the_log_file(hudi_fixture: Callable[..., str]) -> None:
    """A flipped byte inside a block's SCHEMA header (the block's framing still intact) is a corrupt file named
    by its path, not a bare schema error."""
    def avro_logs(base: Path) -> list[Path]:
        return [p for p in log_files(base)
                if any(isinstance(b, AvroDataBlock) for b in read_log_blocks(Storage.for_uri(str(base)), str(p)))]

    name = next(n for n in LOG_FIXTURES if avro_logs(Path(hudi_fixture(n))))
    base = Path(hudi_fixture(name, fresh=True))
    path = avro_logs(base)[0]
    data = bytearray(path.read_bytes())
    at = data.index(b'"string"')
    data[at + 2] = ord("4")  # "string" -> "s4ring": still JSON, no longer a type
    path.write_bytes(bytes(data))
    blocks = [b for b in read_log_blocks(Storage.for_uri(str(base)), str(path)) if isinstance(b, AvroDataBlock)]
    with pytest.raises(CorruptFile, match=path.name):
        blocks[0].to_table()
