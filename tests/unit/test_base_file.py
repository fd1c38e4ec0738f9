"""Parquet base files: footer, physical types, key range, and readability by hudi-rs."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import HoodieConfig, IndexConfig, WriteConfig
from engine.errors import ConfigError, CorruptFile, InvalidRecordKey, SchemaMismatch, StorageError
from engine.formats.avro_schema import META_FIELDS, add_meta_fields, arrow_to_avro, avro_schema_json
from engine.formats.base_file import (
    BLOOM_FILTER_KEY,
    BLOOM_FILTER_TYPE_CODE_KEY,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    PARQUET_AVRO_SCHEMA,
    WRITER_MODEL_NAME,
    BaseFileWriter,
    java_min_max,
    read_base_file,
    read_bloom_filter,
    read_footer,
    read_record_keys,
)
from engine.formats.bloom import bloom_filter_from_config
from engine.storage import Storage
from tests.unit.fixture_tables import base_files, extract_tables

HUDI_FOOTER_ORDER = [MIN_RECORD_KEY, BLOOM_FILTER_KEY, MAX_RECORD_KEY, BLOOM_FILTER_TYPE_CODE_KEY,
                     WRITER_MODEL_NAME, PARQUET_AVRO_SCHEMA]

# Keys whose Java (UTF-16) order differs from UTF-8 byte order: U+FF21 sorts after the emoji in UTF-8
# but before it in UTF-16 (the emoji is a surrogate pair starting with 0xD83D < 0xFF21).
KEYS = ["k-b", "k-a", "k-\U0001f600", "k-\uff21", "k-é", "k-z"]

DATA_SCHEMA = pa.schema([
    pa.field("id", pa.int64()),
    pa.field("tiny", pa.int8()),
    pa.field("small", pa.int16()),
    pa.field("price", pa.decimal128(10, 5)),
    pa.field("day", pa.date32()),
    pa.field("ts", pa.timestamp("us", tz="America/Chicago")),
    pa.field("tags", pa.list_(pa.field("element", pa.struct([pa.field("t", pa.string())])))),
    pa.field("attrs", pa.map_(pa.string(), pa.float64())),
    pa.field("nested", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
    pa.field("payload", pa.binary()),
])


def _table(keys: list[str]) -> pa.Table:
    n = len(keys)
    meta = {
        "_hoodie_commit_time": ["20240101000000000"] * n,
        "_hoodie_commit_seqno": [f"20240101000000000_0_{i}" for i in range(n)],
        "_hoodie_record_key": keys,
        "_hoodie_partition_path": ["p=1"] * n,
        "_hoodie_file_name": ["f-0_0-0-0_20240101000000000.parquet"] * n,
    }
    data = {
        "id": list(range(n)),
        "tiny": [i % 100 for i in range(n)],
        "small": [i * 7 for i in range(n)],
        "price": [Decimal(f"{i}.12345") for i in range(n)],
        "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)],
        "ts": [dt.datetime(2024, 1, 1, 12, tzinfo=dt.UTC) + dt.timedelta(seconds=i) for i in range(n)],
        "tags": [[{"t": f"tag{i}"}, None] for i in range(n)],
        "attrs": [[("a", float(i))] for i in range(n)],
        "nested": [{"x": i, "y": None} for i in range(n)],
        "payload": [bytes([i % 256]) for i in range(n)],
    }
    schema = pa.schema([pa.field(name, pa.string()) for name in META_FIELDS] + list(DATA_SCHEMA))
    return pa.table({**meta, **data}, schema=schema)


AVRO = add_meta_fields(arrow_to_avro(DATA_SCHEMA, "demo"))


@pytest.fixture()
def storage(tmp_path: Path) -> Storage:
    return Storage.for_uri(str(tmp_path))


def _write(storage: Storage, path: str, table: pa.Table, conf: HoodieConfig | None = None,
           populate: bool = True) -> BaseFileWriter:
    writer = BaseFileWriter(storage, path, table.schema, AVRO, conf or HoodieConfig(), populate_meta_fields=populate)
    writer.write(table)
    return writer


def test_footer_keys_key_range_and_bloom(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "p=1" / "f-0_0-0-0_20240101000000000.parquet")
    table = _table(KEYS)
    stats = _write(storage, path, table).close()
    footer = read_footer(storage, path)
    assert list(footer) == HUDI_FOOTER_ORDER
    assert footer[WRITER_MODEL_NAME] == "avro"
    assert footer[PARQUET_AVRO_SCHEMA] == avro_schema_json(AVRO)
    assert footer[BLOOM_FILTER_TYPE_CODE_KEY] == "DYNAMIC_V0"
    java_sorted = sorted(KEYS, key=lambda k: k.encode("utf-16-be"))
    assert (footer[MIN_RECORD_KEY], footer[MAX_RECORD_KEY]) == (java_sorted[0], java_sorted[-1]) == ("k-a", "k-\uff21")
    assert (stats.min_record_key, stats.max_record_key) == ("k-a", "k-\uff21")
    expected = bloom_filter_from_config(HoodieConfig())
    expected.add_many(KEYS)
    assert footer[BLOOM_FILTER_KEY] == expected.serialize()
    assert stats.num_rows == len(KEYS) and stats.file_size == Path(path).stat().st_size
    assert "ARROW:schema" not in footer
    bloom = read_bloom_filter(storage, path)
    assert bloom is not None and bloom.might_contain_many(KEYS).all()
    assert read_record_keys(storage, path).to_pylist() == KEYS


def test_physical_types_and_codec(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    _write(storage, path, _table(KEYS)).close()
    meta = pq.read_metadata(path)
    columns = {meta.schema.column(i).path: meta.schema.column(i) for i in range(meta.num_columns)}
    for name in META_FIELDS:
        assert columns[name].physical_type == "BYTE_ARRAY" and columns[name].logical_type.type == "STRING"
        assert columns[name].max_definition_level == 1  # optional
    assert columns["tiny"].physical_type == "INT32" and columns["tiny"].logical_type.type == "NONE"
    assert columns["small"].physical_type == "INT32" and columns["small"].logical_type.type == "NONE"
    assert columns["id"].physical_type == "INT64"
    assert columns["price"].physical_type == "FIXED_LEN_BYTE_ARRAY" and columns["price"].length == 5
    assert columns["day"].physical_type == "INT32" and columns["day"].logical_type.type == "DATE"
    ts = json.loads(columns["ts"].logical_type.to_json())
    assert columns["ts"].physical_type == "INT64"
    assert (ts["Type"], ts["isAdjustedToUTC"], ts["timeUnit"]) == ("Timestamp", True, "microseconds")
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    assert names[:5] == list(META_FIELDS)
    assert meta.row_group(0).column(0).compression == "SNAPPY"  # our default (Hudi 0.x: gzip)

    gzip = str(tmp_path / "b.parquet")
    _write(storage, gzip, _table(KEYS), HoodieConfig({WriteConfig.PARQUET_COMPRESSION.key: "gzip"})).close()
    assert pq.read_metadata(gzip).row_group(0).column(0).compression == "GZIP"


def test_round_trip_through_pyarrow(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    table = _table(KEYS)
    _write(storage, path, table).close()
    back = read_base_file(storage, path)
    assert back.schema.names == table.schema.names
    assert back.schema.field("tiny").type == pa.int32()
    assert back.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert back.column("ts").to_pylist() == table.column("ts").to_pylist()
    for name in table.schema.names:
        if name not in ("tiny", "small", "ts"):
            assert back.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert back.column("tiny").to_pylist() == table.column("tiny").to_pylist()
    projected = read_base_file(storage, path, ["price", "_hoodie_record_key"])
    assert projected.column_names == ["price", "_hoodie_record_key"]
    with pytest.raises(SchemaMismatch):
        read_base_file(storage, path, ["nope"])


def test_no_meta_fields_writes_only_schema_keys(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    table = _table(KEYS).set_column(2, "_hoodie_record_key", pa.nulls(len(KEYS), pa.string()))
    stats = _write(storage, path, table, populate=False).close()
    assert list(read_footer(storage, path)) == [WRITER_MODEL_NAME, PARQUET_AVRO_SCHEMA]
    assert stats.min_record_key is None and stats.max_record_key is None
    assert read_bloom_filter(storage, path) is None


def test_fixture_file_rewritten_has_identical_footer(storage: Storage, tmp_path: Path) -> None:
    table_dir = extract_tables(tmp_path / "fx", "sample_table/cow/v6_complexkeygen_hivestyle.zip")[0]
    for source in base_files(table_dir):
        footer = read_footer(storage, str(source))
        rows = read_base_file(storage, str(source))
        target = str(tmp_path / "out" / source.name)
        with BaseFileWriter(storage, target, rows.schema, json.loads(footer[PARQUET_AVRO_SCHEMA]),
                            HoodieConfig()) as writer:
            writer.write(rows)
        assert read_footer(storage, target) == footer
        assert list(read_footer(storage, target)) == list(footer)
        java, ours = pq.read_metadata(source).schema, pq.read_metadata(target).schema
        # Leaf columns agree in physical and logical type; only list nesting differs (3-level vs parquet-avro's
        # 2-level `repeated group array`, see engine/formats/base_file.py).
        java_leaves = {c.path.replace(".array.", ".").replace(".key_value.", "."): c for c in
                       (java.column(i) for i in range(len(java)))}
        our_leaves = {c.path.replace(".list.element.", ".").replace(".key_value.", "."): c for c in
                      (ours.column(i) for i in range(len(ours)))}
        assert java_leaves.keys() == our_leaves.keys()
        for leaf, column in java_leaves.items():
            assert our_leaves[leaf].physical_type == column.physical_type, leaf
            assert our_leaves[leaf].logical_type.to_json() == column.logical_type.to_json(), leaf
        assert read_base_file(storage, target).equals(rows)


def test_java_two_level_lists_read_normalized(storage: Storage, tmp_path: Path) -> None:
    table_dir = extract_tables(tmp_path / "fx", "sample_table/cow/v6_nonpartitioned.zip")[0]
    source = str(base_files(table_dir)[0])
    raw = pq.read_schema(source).field("arrayField").type
    assert raw.value_field.name == "array" and not raw.value_field.nullable
    normalized = read_base_file(storage, source).schema.field("arrayField").type
    assert normalized.value_field.name == "element" and normalized.value_field.nullable


def test_hudi_rs_reads_tables_with_rewritten_base_files(tmp_path: Path) -> None:
    hudi = pytest.importorskip("hudi")
    tables = extract_tables(tmp_path, "sample_table/cow/v6_*_hivestyle*.zip")
    assert len(tables) == 2
    for table_dir in tables:
        populate = "no_metafields" not in table_dir.name
        before = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(table_dir)).build().read())
        storage = Storage.for_uri(str(table_dir))
        for source in base_files(table_dir):
            rows = read_base_file(storage, str(source))
            avro = json.loads(read_footer(storage, str(source))[PARQUET_AVRO_SCHEMA])
            with BaseFileWriter(storage, str(source), rows.schema, avro, HoodieConfig(),
                                populate_meta_fields=populate) as writer:
                writer.write(rows)
            assert pq.read_metadata(source).created_by.startswith("parquet-cpp")
        after = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(table_dir)).build().read())
        key = "_hoodie_record_key" if populate else "id"
        assert after.num_rows == before.num_rows > 0
        assert after.sort_by(key).equals(before.sort_by(key))


def test_row_groups_and_size_estimate(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    conf = HoodieConfig({WriteConfig.PARQUET_BLOCK_SIZE.key: "20000", WriteConfig.PARQUET_MAX_FILE_SIZE.key: "60000",
                         IndexConfig.BLOOM_FILTER_TYPE.key: "SIMPLE", IndexConfig.BLOOM_NUM_ENTRIES.key: "1000"})
    keys = [f"key-{i:06d}" for i in range(3000)]
    table = _table(keys)
    writer = BaseFileWriter(storage, path, table.schema, AVRO, conf)
    assert writer.can_write()
    sizes = []
    for start in range(0, len(keys), 300):
        writer.write(table.slice(start, 300))
        sizes.append(writer.bytes_written)
    assert sizes == sorted(sizes) and sizes[0] > 0
    assert not writer.can_write()
    stats = writer.close()
    meta = pq.read_metadata(path)
    assert meta.num_row_groups > 2 and meta.num_rows == 3000 == stats.num_rows
    assert writer.bytes_written == stats.file_size
    assert BLOOM_FILTER_TYPE_CODE_KEY not in read_footer(storage, path)  # SIMPLE filter: no type code
    assert read_record_keys(storage, path).to_pylist() == keys
    with pytest.raises(StorageError):
        writer.write(table)


def test_java_min_max_orders_by_utf16() -> None:
    assert java_min_max(pa.array(["b", None, "a"])) == ("a", "b")
    assert java_min_max(pa.array(["\uff21", "\U0001f600"])) == ("\U0001f600", "\uff21")
    assert java_min_max(pa.chunked_array([["x"], ["\U0001f600", None]])) == ("x", "\U0001f600")
    assert java_min_max(pa.array([None], pa.string())) is None


def test_invalid_input_raises(storage: Storage, tmp_path: Path) -> None:
    table = _table(KEYS)
    path = str(tmp_path / "a.parquet")
    reordered = pa.schema([table.schema.field(i) for i in [1, 0, 2, 3, 4]] + list(DATA_SCHEMA))
    with pytest.raises(SchemaMismatch, match="meta columns"):
        BaseFileWriter(storage, path, reordered, AVRO, HoodieConfig())
    with pytest.raises(SchemaMismatch, match="missing"):
        BaseFileWriter(storage, path, table.schema.remove(6), AVRO, HoodieConfig())
    with pytest.raises(ConfigError):
        BaseFileWriter(storage, path, table.schema, AVRO, HoodieConfig({WriteConfig.PARQUET_COMPRESSION.key: "lzo"}))
    writer = BaseFileWriter(storage, path, table.schema, AVRO, HoodieConfig())
    with pytest.raises(InvalidRecordKey, match="null"):
        writer.write(table.set_column(2, "_hoodie_record_key", pa.nulls(len(KEYS), pa.string())))
    with pytest.raises(SchemaMismatch):
        writer.write(table.drop_columns(["payload"]))
    writer.abort()
    assert not Path(path).exists()
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CorruptFile):
        read_footer(storage, str(tmp_path / "bad.parquet"))


def test_context_manager_aborts_on_error(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    table = _table(KEYS)
    with pytest.raises(RuntimeError), BaseFileWriter(storage, path, table.schema, AVRO, HoodieConfig()) as writer:
        writer.write(table)
        raise RuntimeError("task failed")
    assert not Path(path).exists()
    with BaseFileWriter(storage, path, table.schema, AVRO, HoodieConfig()) as writer:
        writer.write(table)
    assert pq.read_metadata(path).num_rows == len(KEYS)


def test_empty_file_has_bloom_but_no_key_range(storage: Storage, tmp_path: Path) -> None:
    path = str(tmp_path / "a.parquet")
    table = _table(KEYS)
    stats = BaseFileWriter(storage, path, table.schema, AVRO, HoodieConfig()).close()
    assert stats.num_rows == 0 and stats.min_record_key is None
    assert list(read_footer(storage, path)) == [BLOOM_FILTER_KEY, BLOOM_FILTER_TYPE_CODE_KEY, WRITER_MODEL_NAME,
                                                PARQUET_AVRO_SCHEMA]
