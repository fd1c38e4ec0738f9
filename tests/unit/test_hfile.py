"""HFile reader and writer (engine.formats.hfile_*): the nine HFiles HBase 2.4.9/2.4.13 wrote through Hudi
(tests/fixtures/hfile, from hudi-rs: their names give block size, compression and entry count) are read as
hudi-rs's own tests read them, rewritten byte for byte, and our own files round-trip."""

from __future__ import annotations

import dataclasses
import random
import re
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.errors import EngineError, HFileError
from engine.formats.hfile_blocks import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CHECKSUM_CRC32C,
    DATA,
    FILE_INFO,
    HBASE_COMPARATOR,
    I32,
    I64,
    LAST_KEY,
    ROOT_INDEX,
    TRAILER_SIZE,
    U16,
    IndexEntry,
    Trailer,
    cell_key,
    crc32c,
    decode_trailer,
    encode_block,
    encode_file_info,
    encode_root_index,
    encode_trailer,
    key_row,
    midpoint_row,
    read_vlong,
    write_vlong,
)
from engine.formats.hfile_reader import HFileReader, read_hfile
from engine.formats.hfile_writer import HUDI_COMPARATOR, HFileWriter, write_hfile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hfile"
NONE_5000 = "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile"
NONE_64K = "hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile"
GZ_20000 = "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile"
GZ_512K = "hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile"
NON_UNIQUE = "hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile"
FAKE_FIRST = "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile"
LARGE_KEYS = "hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile"
DEEP_INDEX = "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile"
NO_ENTRY = "hudi_1_0_hbase_2_4_9_no_entry.hfile"
LARGE_PREFIX = "hudi-key-" + "a" * 100 + "-"


def _raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _open(name: str, **kw: object) -> HFileReader:
    return HFileReader(_raw(name), name=name, **kw)  # type: ignore[arg-type]


def _key(i: int) -> str:
    return f"hudi-key-{i:09d}"


def _value(i: int) -> bytes:
    return f"hudi-value-{i:09d}".encode()


# (file, entry count, key of cell i, data block index levels)
PLAIN: list[tuple[str, int, Callable[[int], str], int]] = [
    (NONE_5000, 5000, _key, 1),
    (NONE_64K, 5000, _key, 1),
    (GZ_20000, 20000, _key, 1),
    (GZ_512K, 20000, _key, 1),
    (FAKE_FIRST, 20000, lambda i: _key(i) + "-abcdefghij", 1),
    (LARGE_KEYS, 20000, lambda i: f"{LARGE_PREFIX}{i:09d}", 2),
    (DEEP_INDEX, 10000, lambda i: f"{LARGE_PREFIX}{i:09d}", 3),
]


# ---------------------------------------------------------------------------------------------------------------
# Reading HBase-written files


@pytest.mark.parametrize(("name", "count", "key", "levels"), PLAIN, ids=[p[0] for p in PLAIN])
def test_fixture_full_scan_matches_the_pattern(name: str, count: int, key: Callable[[int], str],
                                               levels: int) -> None:
    r = _open(name)
    assert r.entry_count == len(r) == count
    assert r.index_levels == levels
    assert r.compression == ("NONE" if "_NONE_" in name else "GZ")
    assert list(r.scan()) == [(key(i), _value(i)) for i in range(count)]
    assert r.first_key == key(0)
    assert r.last_key == key(count - 1)
    assert key_row(r.file_info[LAST_KEY]) == key(count - 1).encode()
    assert r.file_info["hudi_hfile_testing.custom_key"] == b"hudi_custom_value"
    assert r.meta_block_names == ["bloomFilter"]
    assert r.meta_block("bloomFilter")
    assert r.meta_block("nope") is None


@pytest.mark.parametrize(("name", "count", "key", "levels"), PLAIN, ids=[p[0] for p in PLAIN])
def test_fixture_seeks(name: str, count: int, key: Callable[[int], str], levels: int) -> None:
    r = _open(name)
    for i in (0, 1, 100, count // 3, count // 2 + 7, count - 2, count - 1):
        assert r.get(key(i)) == _value(i)
    assert r.get("aaa") is None  # before the first key
    assert r.get(key(count - 1) + "a") is None  # after the last key
    assert r.get("hudi-key-999999999") is None
    assert r.get(key(100) + "a") is None  # between two keys
    assert r.get(key(5)[:-1]) is None  # a prefix of a key
    # scans from a key in range, from a missing key, before the first and after the last
    assert [k for k, _ in r.scan(key(count - 3))] == [key(count - 3), key(count - 2), key(count - 1)]
    assert next(iter(r.scan(key(100) + "a")))[0] == key(101)
    assert next(iter(r.scan("aaa")))[0] == key(0)
    assert list(r.scan(key(count - 1) + "a")) == []


def test_reads_keys_across_block_boundaries() -> None:
    # hudi-rs: block 0 of the 512 KB file ends near key 8886, of the 64 KB one near 1110
    r = _open(GZ_512K)
    for i in (8885, 8886, 8887, 8888, 5000, 10000, 15000, 19999):
        assert r.get(_key(i)) == _value(i)
    assert _open(NONE_64K).get(_key(1688)) == _value(1688)


def test_batched_lookup_touches_each_block_once() -> None:
    r = _open(GZ_20000, cache_blocks=1)
    keys = [_key(i) for i in range(0, 20000, 37)] + ["hudi-key-nonexistent", "aaa", "zzz", _key(3) + "x"]
    reads = []
    original = r._read_block

    def counting(offset: int, expected: bytes):  # type: ignore[no-untyped-def]
        reads.append(offset)
        return original(offset, expected)

    r._read_block = counting  # type: ignore[method-assign]
    found = r.get_many(reversed(keys))  # any order: sorted inside
    assert found == {_key(i): _value(i) for i in range(0, 20000, 37)}
    assert list(found) == sorted(found)
    assert len(reads) == len(set(reads)) == r.trailer.data_index_count
    assert r.get_many([]) == {}
    assert r.get_many(["nonexistent-key"]) == {}
    assert r.get_many([_key(0).encode(), _key(1)]) == {_key(0).encode(): _value(0), _key(1): _value(1)}


def test_prefix_scan() -> None:
    r = _open(NONE_5000)
    assert list(r.prefix_scan("hudi-key-00000010")) == [(_key(i), _value(i)) for i in range(100, 110)]
    assert len(list(r.prefix_scan("hudi-key-00000000"))) == 10
    assert list(r.prefix_scan("nonexistent-prefix-")) == []
    assert len(list(r.prefix_scan("hudi-key-"))) == 5000


def test_non_unique_keys() -> None:
    r = _open(NON_UNIQUE)
    assert r.entry_count == 4200
    cells = list(r.scan())
    expected = []
    for i in range(200):
        expected.append((_key(i), _value(i)))
        expected += [(_key(i), _value(i) + f"_{j}".encode()) for j in range(20)]
    assert cells == expected
    # a lookup finds the first cell of the key, a prefix scan all 21, also where a key spans two blocks
    for i in (0, 5, 13, 130, 199):
        assert r.get(_key(i)) == _value(i)
        assert [v for _, v in r.prefix_scan(_key(i))] == [v for k, v in expected if k == _key(i)]
    assert r.get_many([_key(5), _key(130)]) == {_key(5): _value(5), _key(130): _value(130)}


def test_fake_first_key() -> None:
    """HBase indexes a block under the shortest row between the previous block's last row and its first row:
    the second block's index key is ``hudi-key-000000235``, not a key of any cell."""
    r = _open(FAKE_FIRST)
    assert r.get("hudi-key-000000099-abcdefghij") == _value(99)
    assert r.get("hudi-key-000000469-abcdefghij") == _value(469)
    assert r.get("hudi-key-000000470-abcdefghij") == _value(470)
    # between the fake first key of a block and its real first key
    assert r.get("hudi-key-000000470") is None
    assert r.get("hudi-key-00000047") is None
    assert next(iter(r.scan("hudi-key-000000470")))[0] == "hudi-key-000000470-abcdefghij"
    assert midpoint_row(b"hudi-key-000000469-abcdefghij", b"hudi-key-000000470-abcdefghij") == \
        b"hudi-key-00000047"


def test_deep_index_last_key_and_past_it() -> None:
    r = _open(DEEP_INDEX)
    last = f"{LARGE_PREFIX}000009999"
    assert r.get(last) == _value(9999)
    assert r.get(last + "a") is None
    assert list(r.scan(last)) == [(last, _value(9999))]
    assert r.get(f"{LARGE_PREFIX}000005340") == _value(5340)


def test_empty_file_written_by_hudi() -> None:
    r = _open(NO_ENTRY)
    assert r.entry_count == 0 and len(r) == 0
    assert list(r.scan()) == [] and list(r.prefix_scan("a")) == []
    assert r.get("a") is None and r.get_many(["a", "b"]) == {}
    assert r.first_key is None and r.last_key is None
    assert r.trailer.first_data_block_offset == -1
    assert r.trailer.comparator_class_name == HUDI_COMPARATOR
    assert r.file_info["minRecordKey"] == b"" and r.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0"
    assert b'"name":"trip"' in r.file_info["schema"]
    assert r.meta_block("bloomFilter")


@pytest.mark.parametrize("name", [NONE_5000, GZ_20000, NO_ENTRY])
def test_crc32c_block_checksums_verify(name: str) -> None:
    r = _open(name, verify_checksums=True)
    assert len(list(r.scan())) == r.entry_count


def test_bytes_keys() -> None:
    r = _open(NONE_5000, str_keys=False)
    assert next(iter(r.scan())) == (_key(0).encode(), _value(0))
    assert r.first_key == _key(0).encode()
    assert r.get(_key(7)) == r.get(_key(7).encode()) == _value(7)


def _hand_made(cells: list[tuple[bytes, bytes, bytes]], info: dict[str, bytes], *, hudi1: bool = False) -> bytes:
    """An uncompressed one-block HFile whose cells ``(row, value, bytes after the value)`` carry tags or MVCC
    timestamps as HBase may write them; ``hudi1``: keys as Hudi 1.x's writer stores them (int16 length and row,
    nothing else)."""
    payload = b""
    for row, value, tail in cells:
        key = U16.pack(len(row)) + row if hudi1 else cell_key(row)
        payload += I32.pack(len(key)) + I32.pack(len(value)) + key + value + tail
    data = encode_block(DATA, payload, "NONE", -1)
    root = encode_block(ROOT_INDEX, encode_root_index([IndexEntry(cells[0][0], 0, len(data), cell_key(cells[0][0]))]),
                        "NONE", -1)
    meta = encode_block(ROOT_INDEX, b"", "NONE", len(data))
    info_offset = len(data) + len(root) + len(meta)
    file_info = encode_block(FILE_INFO, encode_file_info(info), "NONE", -1)
    trailer = Trailer(info_offset, len(data), 0, 0, 1, 0, len(cells), 1, 0, 0, HUDI_COMPARATOR, "NONE")
    return data + root + meta + file_info + encode_trailer(trailer)


MVCC_INFO = {"KEY_VALUE_VERSION": I32.pack(1), "MAX_MEMSTORE_TS_KEY": I64.pack(2**40)}


@pytest.mark.parametrize(("info", "tails", "hudi1"), [
    (MVCC_INFO, [write_vlong(t) for t in (0, 300, 5, 2**40)], False),
    ({"KEY_VALUE_VERSION": I32.pack(1), "MAX_MEMSTORE_TS_KEY": I64.pack(0), "hfile.MAX_TAGS_LEN": I32.pack(3)},
     [U16.pack(3) + b"tag" + b"\x00", U16.pack(0) + b"\x00", U16.pack(1) + b"t" + b"\x00", U16.pack(0) + b"\x00"],
     False),
    ({}, [b""] * 4, False),  # no KEY_VALUE_VERSION: no MVCC byte
    ({"KEY_VALUE_VERSION": I32.pack(1), "MAX_MEMSTORE_TS_KEY": I64.pack(0)}, [b"\x00"] * 4, True),
], ids=["mvcc-timestamps", "tags", "no-mvcc", "hudi-1.x-keys"])
def test_cells_with_mvcc_timestamps_tags_or_short_keys(info: dict[str, bytes], tails: list[bytes],
                                                        hudi1: bool) -> None:
    cells = [(b"a", b"1", tails[0]), (b"b", b"", tails[1]), (b"c", b"333", tails[2]), (b"d", b"4", tails[3])]
    r = HFileReader(_hand_made(cells, info, hudi1=hudi1), verify_checksums=True)
    assert list(r.scan()) == [("a", b"1"), ("b", b""), ("c", b"333"), ("d", b"4")]
    assert r.get("c") == b"333" and r.get("bb") is None
    assert r.get_many(["d", "a", "x"]) == {"a": b"1", "d": b"4"}


# ---------------------------------------------------------------------------------------------------------------
# Writing like HBase: the fixtures are reproduced byte for byte


@pytest.mark.parametrize("name", [n for n, *_ in PLAIN] + [NO_ENTRY])
def test_rewriting_a_fixture_gives_the_same_bytes(name: str) -> None:
    """Same cells, block size, compression, meta blocks and file info, HBase's comparator name and checksum
    type: our writer's bytes are HBase's (block boundaries, shortened index keys, leaf/intermediate index
    blocks, mid-key metadata, file info, trailer). The deep-index file was written with a 2 KiB index chunk
    and a lower minimum of entries per index block (HBase settings its test changed)."""
    original = _raw(name)
    r = HFileReader(original, name=name, str_keys=False)
    m = re.search(r"_(\d+)KB_", name)
    deep = name == DEEP_INDEX
    w = HFileWriter(block_size=int(m.group(1)) * 1024 if m else 64 * 1024, compression=r.compression,
                    max_index_chunk=2048 if deep else 128 * 1024, min_index_entries=2 if deep else 16,
                    comparator=r.trailer.comparator_class_name, checksum_type=CHECKSUM_CRC32C)
    for key, value in r.scan():
        w.add(key, value)
    for meta in r.meta_block_names:
        w.add_meta_block(meta, r.meta_block(meta) or b"")
    for k, v in r.file_info.items():
        if not k.startswith("hfile.") and k not in ("MAX_MEMSTORE_TS_KEY", "KEY_VALUE_VERSION"):
            w.set_file_info(k, v)
    out = w.finish()
    assert dataclasses.asdict(HFileReader(out).trailer) == dataclasses.asdict(r.trailer)
    assert out == original


# ---------------------------------------------------------------------------------------------------------------
# Round trips of our own files


def _entries(n: int, seed: int = 7) -> list[tuple[str, bytes]]:
    rnd = random.Random(seed)
    return [(f"key-{i:08d}-{'x' * (i % 5)}", rnd.randbytes(rnd.randrange(0, 60))) for i in range(n)]


@pytest.mark.parametrize("compression", ["GZ", "NONE"])
@pytest.mark.parametrize("block_size", [64, 4096, 65536, 1024 * 1024])
def test_round_trip(compression: str, block_size: int) -> None:
    entries = _entries(3000)
    data = write_hfile(entries, file_info={"schema": b'{"type":"record"}'},
                       meta_blocks={"bloomFilter": b"filter"}, block_size=block_size, compression=compression,
                       name="rt.hfile")
    r = HFileReader(data, verify_checksums=True)
    assert list(r.scan()) == entries
    assert r.entry_count == 3000 and r.compression == compression
    assert r.first_key == entries[0][0] and r.last_key == entries[-1][0]
    assert r.file_info["schema"] == b'{"type":"record"}'
    assert r.meta_block("bloomFilter") == b"filter"
    assert struct.unpack(">i", r.file_info[AVG_KEY_LEN])[0] == sum(len(k) + 12 for k, _ in entries) // 3000
    assert struct.unpack(">i", r.file_info[AVG_VALUE_LEN])[0] == sum(len(v) for _, v in entries) // 3000
    assert r.trailer.comparator_class_name == HUDI_COMPARATOR
    blocks = r.trailer.data_index_count
    assert (blocks == 1) == (block_size == 1024 * 1024) and (blocks > 100) == (block_size == 64)
    for i in (0, 1, 1500, 2999):
        assert r.get(entries[i][0]) == entries[i][1]
    assert r.get_many(k for k, _ in entries[::3]) == dict(entries[::3])
    assert read_hfile(data) == entries


@pytest.mark.parametrize(("chunk", "levels"), [(128 * 1024, 2), (4096, 3), (512, 4)])
def test_multi_level_index(chunk: int, levels: int) -> None:
    """Tens of thousands of cells in small blocks give a data index larger than the chunk size: leaf index
    blocks between the data blocks, intermediate levels under the root (HBase's ``BlockIndexWriter``)."""
    n = 60000
    entries = [(f"{i:08d}", i.to_bytes(3, "big")) for i in range(n)]
    w = HFileWriter(block_size=64, compression="GZ", max_index_chunk=chunk, name="deep.hfile")
    for k, v in entries:
        w.add(k, v)
    r = HFileReader(w.finish(), verify_checksums=True)
    assert r.index_levels == levels
    assert list(r.scan()) == entries
    rnd = random.Random(1)
    for i in [0, n - 1] + rnd.sample(range(n), 200):
        assert r.get(entries[i][0]) == entries[i][1]
        assert r.get(entries[i][0] + "5") is None
    assert r.get_many([k for k, _ in entries[::11]]) == dict(entries[::11])
    assert list(r.scan(entries[-5][0])) == entries[-5:]
    assert [k for k, _ in r.prefix_scan("0001234")] == [f"0001234{d}" for d in range(10)]


def test_binary_keys_and_values() -> None:
    rnd = random.Random(3)
    keys = sorted({rnd.randbytes(rnd.randrange(1, 20)) for _ in range(5000)} | {b"\x00", b"\xff" * 3})
    entries = [(k, rnd.randbytes(rnd.randrange(0, 300))) for k in keys]
    data = write_hfile(entries, block_size=2048, compression="GZ")
    r = HFileReader(data, str_keys=False)
    assert list(r.scan()) == entries
    assert r.get_many(keys[::7]) == dict(entries[::7])
    assert r.first_key == keys[0] and r.last_key == keys[-1]
    with pytest.raises(HFileError, match="not UTF-8"):
        list(HFileReader(data).scan())


def test_empty_file_round_trip() -> None:
    data = write_hfile([], file_info={"schema": b"{}"}, meta_blocks={"bloomFilter": b"b"})
    r = HFileReader(data, verify_checksums=True)
    assert r.entry_count == 0 and list(r.scan()) == [] and r.get("x") is None
    assert r.first_key is None and r.last_key is None and LAST_KEY not in r.file_info
    assert r.file_info["schema"] == b"{}" and r.meta_block("bloomFilter") == b"b"
    assert read_hfile(write_hfile([])) == []


def test_empty_value_and_long_key() -> None:
    entries = [("a", b""), ("b" * 30000, b"v"), ("c", b"")]
    r = HFileReader(write_hfile(entries, block_size=16))
    assert list(r.scan()) == entries and r.get("a") == b"" and r.get("c") == b""


# ---------------------------------------------------------------------------------------------------------------
# Errors


def test_unsorted_and_duplicate_keys_are_refused_naming_the_key() -> None:
    w = HFileWriter(name="x.hfile")
    w.add("b", b"1")
    with pytest.raises(HFileError, match=r"x\.hfile.*out of order: 'a' added after b'b'"):
        w.add("a", b"2")
    with pytest.raises(HFileError, match="duplicate key: 'b'"):
        w.add("b", b"2")
    with pytest.raises(EngineError):
        write_hfile([("k2", b""), ("k1", b"")])
    with pytest.raises(HFileError, match="longer than 32767"):
        w.add("c" * 40000, b"")


def test_writer_argument_errors() -> None:
    with pytest.raises(HFileError, match="unsupported compression 'SNAPPY'"):
        HFileWriter(compression="snappy")
    with pytest.raises(HFileError, match="reserved prefix"):
        HFileWriter().set_file_info("hfile.LASTKEY", b"x")
    w = HFileWriter()
    w.finish()
    with pytest.raises(HFileError, match="finish"):
        w.finish()
    with pytest.raises(HFileError, match="after finish"):
        w.add("a", b"")


def test_truncated_or_garbage_input() -> None:
    good = write_hfile(_entries(2000), block_size=1024, compression="GZ")
    with pytest.raises(HFileError, match=r"t\.hfile: truncated: 10 bytes"):
        HFileReader(b"\x00" * 10, name="t.hfile")
    with pytest.raises(HFileError, match="bad trailer magic"):
        HFileReader(b"BAAD" * 2000, name="t.hfile")
    with pytest.raises(HFileError, match="bad trailer magic"):
        HFileReader(good[:-100], name="t.hfile")
    # the front cut off: the trailer's offsets point at the wrong bytes
    with pytest.raises(HFileError, match="t.hfile"):
        HFileReader(good[5000:], name="t.hfile")
    # the data section cut short but the trailer kept: offsets past the end
    with pytest.raises(HFileError, match="outside the file|truncated|bad block magic"):
        HFileReader(good[:3000] + good[-TRAILER_SIZE:], name="t.hfile")


def test_corrupt_blocks() -> None:
    good = bytearray(write_hfile(_entries(2000), block_size=1024, compression="GZ"))
    bad = bytearray(good)
    bad[100] ^= 0xFF  # inside the first data block's compressed bytes
    r = HFileReader(bytes(bad), name="c.hfile")  # data blocks are read on demand
    with pytest.raises(HFileError, match=r"c\.hfile: (DATA block at offset 0|corrupt data block)"):
        list(r.scan())
    with pytest.raises(HFileError, match="checksum mismatch in the DATA block at offset 0"):
        list(HFileReader(bytes(bad), name="c.hfile", verify_checksums=True).scan())
    bad = bytearray(good)
    bad[0:8] = b"XXXXXXXX"
    with pytest.raises(HFileError, match="bad block magic"):
        HFileReader(bytes(bad)).get("key-00000000-")
    # a NONE block whose cell lengths lie
    plain = bytearray(write_hfile([("a", b"1"), ("b", b"2")], compression="NONE"))
    plain[33:37] = struct.pack(">i", 400)
    with pytest.raises(HFileError, match="corrupt data block at offset 0"):
        HFileReader(bytes(plain)).get("a")


def test_unsupported_version_and_compression() -> None:
    data = bytearray(write_hfile([("a", b"1")], compression="NONE"))
    v2 = data[:-4] + struct.pack(">i", 2)
    with pytest.raises(HFileError, match="v.hfile: unsupported HFile version 2.0"):
        HFileReader(bytes(v2), name="v.hfile")
    trailer = decode_trailer(bytes(data), "x")
    snappy = data[:-TRAILER_SIZE] + encode_trailer(dataclasses.replace(trailer, compression="SNAPPY"))
    with pytest.raises(HFileError, match="unsupported compression SNAPPY"):
        HFileReader(bytes(snappy), name="v.hfile")
    # an encryption key (field 13) in the trailer; an empty one, as Hudi 0.x's own writer stored, is fine
    body = encode_trailer(trailer)
    n = body[8]
    assert n + 18 < 128  # the length stays a one-byte varint
    for key, fails in ((b"k" * 16, True), (b"", False)):
        extra = bytes([13 << 3 | 2, len(key)]) + key
        patched = body[:8] + bytes([n + len(extra)]) + body[9:9 + n] + extra
        patched += bytes(TRAILER_SIZE - len(patched) - 4) + body[-4:]
        if fails:
            with pytest.raises(HFileError, match="encrypted"):
                HFileReader(bytes(data[:-TRAILER_SIZE]) + patched)
        else:
            assert HFileReader(bytes(data[:-TRAILER_SIZE]) + patched).get("a") == b"1"


# ---------------------------------------------------------------------------------------------------------------
# Encodings


def test_hadoop_vlong_round_trip() -> None:
    for v in (0, 1, -1, 127, -112, -113, 128, 255, 256, 40000, -40000, 2**31, -(2**40), 2**63 - 1, -(2**63)):
        data = write_vlong(v)
        assert read_vlong(data, 0) == (v, len(data))
    assert write_vlong(131) == b"\x8f\x83"  # what HBase writes before a 131-byte index key


def test_crc32c_known_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283


def test_midpoint_rows() -> None:
    assert midpoint_row(b"abc", b"abd") == b"abd"
    assert midpoint_row(b"abc", b"abz") == b"abd"
    assert midpoint_row(b"ab", b"abcd") == b"abc"
    assert midpoint_row(b"a\xff", b"b") == b"b"
    assert midpoint_row(b"hudi-key-000000099", b"hudi-key-000000100") == b"hudi-key-0000001"


def test_hbase_comparator_name_is_kept() -> None:
    assert _open(GZ_20000).trailer.comparator_class_name == HBASE_COMPARATOR


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_reader_takes_bytes_bytearray_or_memoryview(wrap: type) -> None:
    entries = _entries(500)
    for compression in ("GZ", "NONE"):
        data = wrap(write_hfile(entries, block_size=512, compression=compression))
        r = HFileReader(data, verify_checksums=True)
        assert list(r.scan()) == entries and r.get(entries[250][0]) == entries[250][1]
