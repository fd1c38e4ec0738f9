"""Keys of metadata table records and the key → file group hash (Hudi 0.15).

- files partition: the partition identifier (``"."`` for a non-partitioned table), plus the partition list
  record ``__all_partitions__``.
- column_stats: ``base64(ColumnIndexID) + base64(PartitionIndexID) + base64(FileIndexID)``
  (``HoodieMetadataPayload.getColumnStatsIndexKey``).
- bloom_filters: ``base64(PartitionIndexID) + base64(FileIndexID)`` (``getBloomFilterIndexKey``).
- record_index: the data table's record key.

The ids are Hudi's ``HashID`` (``org.apache.hudi.common.util.hash``): ``ColumnIndexID`` and ``PartitionIndexID``
are the 8 big-endian bytes of XXH64 of the UTF-8 name with seed ``0xdabadaba`` (an ``int``, sign-extended to
the ``long`` seed), ``FileIndexID`` the 16-byte MD5 of the file name; each is standard Base64 with padding
(``Base64CodecUtil.encode``). The partition name goes through ``getColumnStatsIndexPartitionIdentifier`` /
``getBloomFilterIndexPartitionIdentifier`` (``""`` → ``"."``).

A key's file group within an MDT partition is :func:`file_group_index` (``HoodieTableMetadataUtil
.mapRecordKeyToFileGroupIndex``).
"""

from __future__ import annotations

import base64
import hashlib
import struct

from engine.java_hash import java_int, java_string_hash
from engine.metadata.schema import partition_identifier

_MASK = (1 << 64) - 1
_P1 = 11400714785074694791
_P2 = 14029467366897019727
_P3 = 1609587929392839161
_P4 = 9650029242287828579
_P5 = 2870177450012600261

HASH_SEED = -625288518
"""``HashID.HASH_SEED`` (``0xdabadaba`` as a Java ``int``)."""


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _MASK
    return (_rotl(acc, 31) * _P1) & _MASK


def _merge(acc: int, value: int) -> int:
    acc ^= _round(0, value)
    return (acc * _P1 + _P4) & _MASK


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (unsigned 64-bit result); ``seed`` is taken modulo 2**64 (Java's sign extension of a
    negative ``long``). The algorithm of lz4-java's ``XXHash64`` that Hudi uses."""
    seed &= _MASK
    length = len(data)
    pos = 0
    if length >= 32:
        v1 = (seed + _P1 + _P2) & _MASK
        v2 = (seed + _P2) & _MASK
        v3 = seed
        v4 = (seed - _P1) & _MASK
        limit = length - 32
        while pos <= limit:
            a, b, c, d = struct.unpack_from("<4Q", data, pos)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            pos += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + _P5) & _MASK
    h = (h + length) & _MASK
    while pos + 8 <= length:
        (lane,) = struct.unpack_from("<Q", data, pos)
        h ^= _round(0, lane)
        h = (_rotl(h, 27) * _P1 + _P4) & _MASK
        pos += 8
    if pos + 4 <= length:
        (lane,) = struct.unpack_from("<I", data, pos)
        h ^= (lane * _P1) & _MASK
        h = (_rotl(h, 23) * _P2 + _P3) & _MASK
        pos += 4
    while pos < length:
        h ^= (data[pos] * _P5) & _MASK
        h = (_rotl(h, 11) * _P1) & _MASK
        pos += 1
    h ^= h >> 33
    h = (h * _P2) & _MASK
    h ^= h >> 29
    h = (h * _P3) & _MASK
    h ^= h >> 32
    return h


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def column_index_id(column: str) -> str:
    """``new ColumnIndexID(column).asBase64EncodedString()`` (12 characters)."""
    return _b64(struct.pack(">Q", xxh64(column.encode("utf-8"), HASH_SEED)))


def partition_index_id(partition: str) -> str:
    """``new PartitionIndexID(getPartitionIdentifier(partition)).asBase64EncodedString()`` for a relative data
    partition path (``""`` = non-partitioned; 12 characters)."""
    return _b64(struct.pack(">Q", xxh64(partition_identifier(partition).encode("utf-8"), HASH_SEED)))


def file_index_id(file_name: str) -> str:
    """``new FileIndexID(fileName).asBase64EncodedString()``: MD5 of the file name (24 characters)."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    """Key of a column_stats record (``HoodieMetadataPayload.getColumnStatsIndexKey``).

    Args:
        partition: relative data partition path (``""`` non-partitioned).
        file_name: the data file's name (no folder).
        column: the column name (top-level or dotted nested path, as Hudi names it).
    """
    return column_index_id(column) + partition_index_id(partition) + file_index_id(file_name)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """Key of a bloom_filters record (``HoodieMetadataPayload.getBloomFilterIndexKey``)."""
    return partition_index_id(partition) + file_index_id(file_name)


def _java_abs(value: int) -> int:
    """``Math.abs(int)``: ``Integer.MIN_VALUE`` stays negative."""
    return value if value == -(1 << 31) else abs(value)


def file_group_index(key: str, num_file_groups: int) -> int:
    """Index of the file group (0-based, file groups sorted by file id) holding ``key`` in an MDT partition of
    ``num_file_groups`` file groups (``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``, 0.15)::

        int h = 0;
        for (int i = 0; i < key.length(); ++i) { h = 31 * h + key.charAt(i); }
        return Math.abs(Math.abs(h) % numFileGroups);

    Raises:
        ValueError: ``num_file_groups`` is not positive.
    """
    if num_file_groups <= 0:
        raise ValueError(f"an MDT partition has at least one file group, not {num_file_groups}")
    h = _java_abs(java_int(java_string_hash(key)))
    remainder = -(-h % num_file_groups) if h < 0 else h % num_file_groups  # Java's % keeps the dividend's sign
    return abs(remainder)


__all__ = ["HASH_SEED", "bloom_filter_key", "column_index_id", "column_stats_key", "file_group_index",
           "file_index_id", "partition_index_id", "xxh64"]
