"""Bloom filters: bit-exact with the filters Hudi (Java) wrote into the fixture base files."""

from __future__ import annotations

import base64
import logging
import random
import struct
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import HoodieConfig, IndexConfig
from engine.errors import ConfigError, CorruptFile, InvalidRecordKey, UnsupportedTable
from engine.formats.bloom import (
    DYNAMIC_V0,
    DynamicBloomFilter,
    SimpleBloomFilter,
    bloom_bit_size,
    bloom_filter_from_config,
    bloom_num_hashes,
    deserialize_bloom_filter,
    hash_positions,
    murmur_hash,
)
from tests.unit.fixture_tables import base_files, extract_tables

logger = logging.getLogger(__name__)

BLOOM_KEY = b"org.apache.hudi.bloomfilter"
TYPE_CODE_KEY = b"hoodie_bloom_filter_type_code"


# ------------------------------------------------------------------------------------------------------
# An independent, literal transliteration of the Java code (Hudi MurmurHash / HashFunction /
# InternalDynamicBloomFilter), kept deliberately naive: every int operation wraps to int32.


def _i32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value >= 0x80000000 else value


def _ushr(value: int, bits: int) -> int:
    return (value & 0xFFFFFFFF) >> bits


def java_murmur(data: bytes, seed: int) -> int:
    jbytes = [b - 256 if b > 127 else b for b in data]  # Java byte[] is signed
    m = 0x5BD1E995
    length = len(jbytes)
    h = _i32(seed ^ length)
    len4 = length >> 2
    for i in range(len4):
        i4 = i << 2
        k = jbytes[i4 + 3]
        k = _i32(k << 8)
        k = k | (jbytes[i4 + 2] & 0xFF)
        k = _i32(k << 8)
        k = k | (jbytes[i4 + 1] & 0xFF)
        k = _i32(k << 8)
        k = k | (jbytes[i4] & 0xFF)
        k = _i32(k * m)
        k ^= _ushr(k, 24)
        k = _i32(k * m)
        h = _i32(h * m)
        h = _i32(h ^ k)
    left = length - (len4 << 2)
    if left != 0:
        if left >= 3:
            h = _i32(h ^ (jbytes[length - 3] << 16))
        if left >= 2:
            h = _i32(h ^ (jbytes[length - 2] << 8))
        if left >= 1:
            h = _i32(h ^ jbytes[length - 1])
        h = _i32(h * m)
    h = _i32(h ^ _ushr(h, 13))
    h = _i32(h * m)
    h = _i32(h ^ _ushr(h, 15))
    return h


def java_hash(key: str, nb_hash: int, max_value: int) -> list[int]:
    data = key.encode("utf-8")
    result, initval = [], 0
    for _ in range(nb_hash):
        initval = java_murmur(data, initval)
        java_remainder = -(-initval % max_value) if initval < 0 else initval % max_value  # sign of dividend
        result.append(abs(java_remainder))
    return result


class JavaDynamicFilter:
    """``InternalDynamicBloomFilter`` one key at a time, bits as Python sets."""

    def __init__(self, nr: int, fpp: float, max_nr: int) -> None:
        self.vector_size = bloom_bit_size(nr, fpp)
        self.nb_hash = bloom_num_hashes(self.vector_size, nr)
        self.nr, self.max_nr = nr, max_nr
        self.current = 0
        self.reached_max = False
        self.cur_index = 0
        self.matrix: list[set[int]] = [set()]

    def _active(self) -> set[int] | None:
        if self.reached_max:
            row = self.matrix[self.cur_index % len(self.matrix)]
            self.cur_index += 1
            return row
        if self.current >= self.nr and len(self.matrix) * self.nr < self.max_nr:
            return None
        if self.current >= self.nr and len(self.matrix) * self.nr >= self.max_nr:
            self.reached_max = True
            return self.matrix[0]
        return self.matrix[-1]

    def add(self, key: str) -> None:
        row = self._active()
        if row is None:
            self.matrix.append(set())
            row = self.matrix[-1]
            self.current = 0
        row.update(java_hash(key, self.nb_hash, self.vector_size))
        self.current += 1

    def serialize(self) -> str:
        def row_bytes(bits: set[int]) -> bytes:
            out = bytearray((self.vector_size + 7) // 8)
            for i in bits:
                out[i >> 3] |= 1 << (i & 7)
            return struct.pack(">iibi", -1, self.nb_hash, 1, self.vector_size) + bytes(out)

        data = struct.pack(">iibi", -1, self.nb_hash, 1, self.vector_size)
        data += struct.pack(">iii", self.nr, self.current, len(self.matrix))
        data += b"".join(row_bytes(r) for r in self.matrix)
        return base64.b64encode(data).decode()


# ------------------------------------------------------------------------------------------------------

NON_ASCII_KEYS = [
    "é", "ü1", "日本", "日本語", "ключ-1", "clé:é", "😀", "a😀", "ab😀", "abc😀", "\u00ff\u00fe\u00fd",
    "id:1,name:Zoë", "\U0010ffff", "mixed-ascii-and-日本語-tail", "x" * 13 + "é", "\x7f\x80",
]


@pytest.fixture(scope="module")
def fixture_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tables = extract_tables(tmp_path_factory.mktemp("bloom"), "sample_table/cow/v6_*.zip")
    files = [f for t in tables for f in base_files(t)]
    assert len(files) >= 15
    return files


def test_default_sizing_matches_hudi() -> None:
    assert bloom_bit_size(60000, 0.000000001) == 2587966
    assert bloom_num_hashes(2587966, 60000) == 30
    conf_filter = bloom_filter_from_config(HoodieConfig())
    assert isinstance(conf_filter, DynamicBloomFilter)
    assert (conf_filter.vector_size, conf_filter.nb_hash, conf_filter.type_code) == (2587966, 30, DYNAMIC_V0)


def test_rebuilds_every_fixture_filter_bit_exactly(fixture_files: list[Path]) -> None:
    checked = 0
    for path in fixture_files:
        footer = pq.read_metadata(path).metadata
        if BLOOM_KEY not in footer:  # hoodie.populate.meta.fields=false tables carry no filter
            assert b"_no_metafields" in str(path).encode()
            continue
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0)
        bloom = bloom_filter_from_config(HoodieConfig())
        bloom.add_many(keys)
        assert bloom.serialize() == footer[BLOOM_KEY].decode(), path
        assert bloom.type_code == footer[TYPE_CODE_KEY].decode()
        checked += 1
    assert checked >= 12


def test_fixture_filters_deserialize_and_answer_membership(fixture_files: list[Path]) -> None:
    for path in fixture_files:
        footer = pq.read_metadata(path).metadata
        if BLOOM_KEY not in footer:
            continue
        text = footer[BLOOM_KEY].decode()
        bloom = deserialize_bloom_filter(text, footer[TYPE_CODE_KEY].decode())
        assert bloom.serialize() == text
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert all(bloom.might_contain(k) for k in keys)
        assert not bloom.might_contain_many([f"absent-{i}" for i in range(200)]).any()


def test_murmur_matches_java_for_non_ascii_and_all_tail_lengths() -> None:
    rng = random.Random(7)
    keys = NON_ASCII_KEYS + ["".join(chr(rng.randrange(32, 0x3000)) for _ in range(n)) for n in range(1, 40)]
    for key in keys:
        data = key.encode("utf-8")
        for seed in (0, 1, -1, 123456789, -2147483648, 2147483647):
            assert murmur_hash(data, seed) == java_murmur(data, seed), (key, seed)


def test_vectorized_positions_match_java_reference() -> None:
    rng = random.Random(11)
    keys = NON_ASCII_KEYS + [
        "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x800), rng.randrange(0x800, 0xD800),
                                rng.randrange(0xE000, 0x10FFFF)]))
                for _ in range(rng.randrange(1, 25)))
        for _ in range(300)
    ]
    positions = hash_positions(keys, 30, 2587966)
    for key, row in zip(keys, positions, strict=True):
        assert row.tolist() == java_hash(key, 30, 2587966), key


def test_dynamic_growth_and_round_robin_match_java_reference() -> None:
    # 10 keys per row, bound 25: rows are added until 3 * 10 >= 25, then keys go round-robin from row 0.
    keys = [f"key-{i}-é" if i % 3 else f"k{i}" for i in range(95)]
    reference = JavaDynamicFilter(10, 0.01, 25)
    for key in keys:
        reference.add(key)
    one_by_one = DynamicBloomFilter(10, 0.01, 25)
    for key in keys:
        one_by_one.add(key)
    batched = DynamicBloomFilter(10, 0.01, 25)
    batched.add_many(pa.array(keys[:7]))
    batched.add_many(pa.chunked_array([keys[7:40], keys[40:41]]))
    batched.add_many(keys[41:])
    assert len(reference.matrix) == 3
    assert one_by_one.serialize() == reference.serialize()
    assert batched.serialize() == reference.serialize()
    assert batched.num_rows == 3 and batched.current_nb_record == reference.current
    assert batched.might_contain_many(keys).all()


def test_simple_filter_layout_and_type_code() -> None:
    conf = HoodieConfig({IndexConfig.BLOOM_FILTER_TYPE.key: "simple", IndexConfig.BLOOM_NUM_ENTRIES.key: "100",
                         IndexConfig.BLOOM_FPP.key: "0.01"})
    bloom = bloom_filter_from_config(conf)
    assert isinstance(bloom, SimpleBloomFilter) and bloom.type_code is None
    bloom.add_many(["a", "b", "日本"])
    raw = base64.b64decode(bloom.serialize())
    version, nb_hash, hash_type, vector_size = struct.unpack(">iibi", raw[:13])
    assert (version, nb_hash, hash_type, vector_size) == (-1, 7, 1, 959)
    assert len(raw) == 13 + (959 + 7) // 8
    expected = bytearray((959 + 7) // 8)
    for key in ["a", "b", "日本"]:
        for pos in java_hash(key, 7, 959):
            expected[pos >> 3] |= 1 << (pos & 7)
    assert raw[13:] == bytes(expected)
    again = deserialize_bloom_filter(bloom.serialize(), None)
    assert isinstance(again, SimpleBloomFilter) and again.serialize() == bloom.serialize()
    assert again.might_contain("日本")


def test_sliced_arrow_keys_hash_like_python_strings() -> None:
    keys = pa.array([f"row-{i:04d}-{'é' * (i % 4)}" for i in range(200)])
    sliced = keys.slice(37, 100)
    assert (hash_positions(sliced, 5, 1000) == hash_positions(sliced.to_pylist(), 5, 1000)).all()
    assert (hash_positions(sliced.cast(pa.large_string()), 5, 1000) == hash_positions(sliced, 5, 1000)).all()


def test_bad_keys_and_bad_serializations_raise() -> None:
    bloom = bloom_filter_from_config(HoodieConfig())
    with pytest.raises(InvalidRecordKey):
        bloom.add_many(pa.array(["a", None]))
    with pytest.raises(InvalidRecordKey):
        bloom.add("")
    with pytest.raises(CorruptFile):
        deserialize_bloom_filter("not base64!", "DYNAMIC_V0")
    with pytest.raises(CorruptFile):
        deserialize_bloom_filter(bloom.serialize()[:100], "DYNAMIC_V0")
    with pytest.raises(UnsupportedTable):
        deserialize_bloom_filter(bloom.serialize(), "BLOCKED_V9")
    with pytest.raises(ConfigError):
        bloom_filter_from_config(HoodieConfig({IndexConfig.BLOOM_FILTER_TYPE.key: "cuckoo"}))


@pytest.mark.slow
def test_one_million_keys() -> None:
    """A million keys in one filter: its serialized size and membership (bench/bench_index.py measures speed)."""
    keys = pa.array([f"{i:08d}-7a3c1f0e-uuid-like-key{i % 10}" for i in range(1_000_000)])
    assert 30 <= len(keys[0].as_py()) <= 32
    bloom = bloom_filter_from_config(HoodieConfig())
    start = time.perf_counter()
    bloom.add_many(keys)
    text = bloom.serialize()
    elapsed = time.perf_counter() - start
    logger.info("1M-key bloom build + serialize: %.2f s", elapsed)
    assert len(text) > 431380  # two rows: 60000 + 40000 keys, then round-robin
    assert bloom.might_contain_many(keys[:1000]).all()
