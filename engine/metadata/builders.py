"""Building metadata records the way Hudi 0.15's writer does (``HoodieMetadataPayload.createPartitionListRecord``,
``createPartitionFilesRecord``, ``createBloomFilterMetadataRecord``, ``createColumnStatsRecords``,
``createRecordIndexUpdate`` / ``createRecordIndexDelete``; ``HoodieAvroUtils.wrapValueIntoAvro``).

Nothing in the engine writes a metadata table yet; these give the writer the records, keys and value wrapping
Hudi uses, so that :func:`~engine.metadata.records.encode_datum` turns them into the bytes Hudi writes.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import pyarrow as pa

from engine.errors import SchemaMismatch
from engine.formats.bloom import BloomFilter
from engine.metadata.keys import bloom_filter_key, column_stats_key
from engine.metadata.records import (
    UUID_ENCODING,
    BloomFilterInfo,
    ColumnStats,
    FileInfo,
    MetadataRecord,
    RecordIndexInfo,
    StatValue,
)
from engine.metadata.schema import DECIMAL_WRAPPER_SCALE, PARTITION_LIST_KEY, RecordType, partition_identifier

_EPOCH = _dt.date(1970, 1, 1)


def partition_list_record(added: Iterable[str], deleted: Iterable[str] = ()) -> MetadataRecord:
    """The ``__all_partitions__`` record listing partitions added (and deleted) by a commit
    (``createPartitionListRecord``); relative paths, ``""`` for a non-partitioned table."""
    files = {partition_identifier(p): FileInfo(0, False) for p in added}
    files.update({partition_identifier(p): FileInfo(0, True) for p in deleted})
    return MetadataRecord(PARTITION_LIST_KEY, RecordType.PARTITION_LIST, files=files)


def files_record(partition: str, added: Mapping[str, int], deleted: Iterable[str] = ()) -> MetadataRecord:
    """A partition's file listing update (``createPartitionFilesRecord``): file name → size of files added or
    grown, and deletion markers (size 0) for files removed.

    Raises:
        SchemaMismatch: an added file of size <= 0 (Hudi's ``checkState(fileSize > 0)``).
    """
    files: dict[str, FileInfo] = {}
    for name, size in added.items():
        if size <= 0:
            raise SchemaMismatch(f"metadata file listing of partition {partition!r}: file {name} has size {size}; "
                                 "files added must have size > 0")
        files[name] = FileInfo(size, False)
    files.update({name: FileInfo(0, True) for name in deleted})
    return MetadataRecord(partition_identifier(partition), RecordType.FILE_LIST, files=files)


def bloom_filter_record(partition: str, file_name: str, instant: str, bloom: BloomFilter | None,
                        deleted: bool = False) -> MetadataRecord:
    """The bloom_filters entry of a base file (``createBloomFilterMetadataRecord``): the filter serialized as in
    a parquet footer, UTF-8 bytes; ``deleted`` (with ``bloom=None``) marks a removed file (empty bytes, as
    Hudi's clean writes)."""
    raw = b"" if bloom is None else bloom.serialize().encode("utf-8")
    type_code = (bloom.type_code if bloom is not None else None) or "DYNAMIC_V0"
    info = BloomFilterInfo(type_code, instant, raw, deleted)
    return MetadataRecord(bloom_filter_key(partition, file_name), RecordType.BLOOM_FILTER, bloom_filter=info)


def _unscaled_bytes(value: Decimal) -> bytes:
    """``BigDecimal.unscaledValue().toByteArray()`` of ``value`` at scale 15: minimal big-endian two's
    complement."""
    unscaled = int(value.scaleb(DECIMAL_WRAPPER_SCALE).to_integral_value())
    length = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    return unscaled.to_bytes(length, "big", signed=True)


def wrap_stat(value: Any, dtype: pa.DataType, *, as_committed: bool = True) -> StatValue | None:
    """A statistic as Hudi 0.15 stores it for a column of Arrow type ``dtype`` (``HoodieAvroUtils
    .wrapValueIntoAvro`` of the Java value): booleans, 8-32-bit integers (Int), 64-bit integers (Long), floats,
    doubles, binary, strings; dates, decimals (rescaled to 15 places) and timestamps (epoch microseconds) in
    their own wrappers — as the MDT initialization writes them (``as_committed=False``). Records of later
    commits go through ``HoodieMetadataPayload``'s constructor from a generic record, whose
    ``unwrapAvroValueWrapper`` returns the bare inner value, so Hudi stores those re-wrapped: dates as
    ``IntWrapper`` (epoch days), decimals as ``BytesWrapper`` (unscaled bytes at scale 15), timestamps as
    ``LongWrapper`` (the default, ``as_committed=True``).

    Raises:
        SchemaMismatch: a type Hudi keeps no statistics of (nested types, time-of-day, ...).
    """
    if value is None:
        return None
    if pa.types.is_boolean(dtype):
        return StatValue("BooleanWrapper", bool(value))
    if pa.types.is_integer(dtype):
        return StatValue("LongWrapper" if dtype.bit_width == 64 else "IntWrapper", int(value))
    if pa.types.is_float32(dtype):
        return StatValue("FloatWrapper", float(value))
    if pa.types.is_float64(dtype):
        return StatValue("DoubleWrapper", float(value))
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_fixed_size_binary(dtype):
        return StatValue("BytesWrapper", bytes(value))
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return StatValue("StringWrapper", str(value))
    if pa.types.is_date(dtype):
        days = (value - _EPOCH).days if isinstance(value, _dt.date) else int(value)
        return StatValue("IntWrapper" if as_committed else "DateWrapper", days)
    if pa.types.is_decimal(dtype):
        rescaled = Decimal(value).quantize(Decimal(1).scaleb(-DECIMAL_WRAPPER_SCALE))
        return StatValue("BytesWrapper", _unscaled_bytes(rescaled)) if as_committed else \
            StatValue("DecimalWrapper", rescaled)
    if pa.types.is_timestamp(dtype):
        micros = int(pa.scalar(value, dtype).cast(pa.timestamp("us", dtype.tz)).value)
        return StatValue("LongWrapper" if as_committed else "TimestampMicrosWrapper", micros)
    raise SchemaMismatch(f"no column statistics for Arrow type {dtype}")


def column_stats_record(partition: str, file_name: str, column: str, dtype: pa.DataType, min_value: Any,
                        max_value: Any, *, value_count: int, null_count: int, total_size: int,
                        total_uncompressed_size: int, deleted: bool = False,
                        as_committed: bool = True) -> MetadataRecord:
    """A column_stats entry (``createColumnStatsRecords``): min/max wrapped by :func:`wrap_stat`; sizes are the
    file's column chunk sizes in bytes (compressed, uncompressed) summed over row groups.

    Raises:
        SchemaMismatch: see :func:`wrap_stat`.
    """
    stats = ColumnStats(file_name, column, wrap_stat(min_value, dtype, as_committed=as_committed),
                        wrap_stat(max_value, dtype, as_committed=as_committed), value_count, null_count, total_size,
                        total_uncompressed_size, deleted)
    return MetadataRecord(column_stats_key(partition, file_name, column), RecordType.COLUMN_STATS,
                          column_stats=stats)


def record_index_record(record_key: str, partition: str, file_id: str, instant: str, *, utc: bool,
                        encoding: int = UUID_ENCODING) -> MetadataRecord:
    """A record_index entry (``createRecordIndexUpdate``; ``utc``: the data table's timeline time zone).

    Raises:
        ValueError: encoding 0 and a file id that is not ``<uuid>[-<n>]``.
    """
    info = RecordIndexInfo.of(partition, file_id, instant, utc, encoding)
    return MetadataRecord(record_key, RecordType.RECORD_INDEX, record_index=info)


def record_index_delete(record_key: str) -> MetadataRecord:
    """The removal of a key from the record index (``createRecordIndexDelete``: an empty payload, written as a
    DELETE block entry)."""
    return MetadataRecord.tombstone(record_key)


__all__ = ["bloom_filter_record", "column_stats_record", "files_record", "partition_list_record",
           "record_index_delete", "record_index_record", "wrap_stat"]
