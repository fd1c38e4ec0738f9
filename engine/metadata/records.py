"""Metadata table records as Python values, decoded from and encoded to Avro ``HoodieMetadataRecord`` datums
(Hudi 0.15 ``HoodieMetadataPayload`` and the generated ``HoodieMetadataFileInfo``, ``HoodieMetadataBloomFilter``,
``HoodieMetadataColumnStats``, ``HoodieRecordIndexInfo``).

A :class:`MetadataRecord` is one payload: its key, its :class:`RecordType` and the one payload part of that
type, or a *tombstone* (``deleted=True``: Hudi's ``HoodieMetadataPayload(Option.empty())``, what a DELETE block
entry or an empty payload becomes; it removes the key when merged).

Datums are read with :func:`decode_datum` under the writer schema of their block or file (resolved to
:data:`~engine.metadata.schema.METADATA_RECORD_SCHEMA`) and written by :func:`encode_datum` under the 0.15 schema;
the ``key`` field is stored empty in HFile cells (the cell key carries it: ``HoodieHFileDataBlock.serializeRecord``
truncates it) and filled from the cell key on read.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

import fastavro

from engine.errors import CorruptFile
from engine.formats.avro_schema import META_FIELDS
from engine.metadata.schema import (
    NAMESPACE,
    WRAPPER_NAMES,
    RecordType,
    metadata_schema_json,
    writer_schema_json,
)
from engine.timeline.instant import instant_time_of_millis, parse_instant_time

UUID_ENCODING = 0
"""``fileIdEncoding`` of a file id ``<uuid>-<index>`` stored as two longs and an int."""
RAW_STRING_ENCODING = 1
"""``fileIdEncoding`` of a file id stored as a string."""
MISSING_FILE_INDEX = -1
"""``RECORD_INDEX_MISSING_FILEINDEX_FALLBACK``: the file id is a bare 36-character UUID."""


@dataclass(frozen=True)
class FileInfo:
    """``HoodieMetadataFileInfo``: a file's size in bytes, or a deletion marker (size 0)."""

    size: int
    is_deleted: bool = False


@dataclass(frozen=True)
class BloomFilterInfo:
    """``HoodieMetadataBloomFilter`` of one base file.

    Attributes:
        type: bloom filter type code (``DYNAMIC_V0`` / ``SIMPLE``).
        timestamp: instant of the write that produced the entry.
        bloom_filter: the serialized filter: UTF-8 bytes of the same string Hudi keeps in a parquet footer.
        is_deleted: True when the base file was removed (a tombstone entry).
    """

    type: str
    timestamp: str
    bloom_filter: bytes
    is_deleted: bool = False


@dataclass(frozen=True)
class StatValue:
    """A column statistic as stored: the wrapper record of the ``minValue``/``maxValue`` union (short name, e.g.
    ``IntWrapper``) and its value — ``bool``, ``int`` (Int/Long/Date as epoch days/TimestampMicros as
    micros), ``float``, ``bytes``, ``str``, :class:`~decimal.Decimal` (scale 15) or :class:`datetime.time`.
    Hudi 0.15 stores the statistics of commits after the MDT's initialization re-wrapped: dates as
    ``IntWrapper``, decimals as ``BytesWrapper`` (unscaled bytes at scale 15), timestamps as ``LongWrapper``
    (:func:`engine.metadata.builders.wrap_stat`); the reader returns what is stored."""

    wrapper: str
    value: Any

    def sort_key(self) -> Any:
        """The value ordered as Java compares the unwrapped values (``ByteBuffer`` compares signed bytes;
        ``String`` compares UTF-16 code units)."""
        if isinstance(self.value, (bytes, bytearray)):
            return tuple(b - 256 if b > 127 else b for b in self.value)
        if isinstance(self.value, str):
            return self.value.encode("utf-16-be")
        return self.value


@dataclass(frozen=True)
class ColumnStats:
    """``HoodieMetadataColumnStats`` of one column of one data file (base or log file)."""

    file_name: str | None
    column_name: str | None
    min_value: StatValue | None
    max_value: StatValue | None
    value_count: int | None
    null_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool = False


@dataclass(frozen=True)
class RecordIndexInfo:
    """``HoodieRecordIndexInfo``: where a record key lives.

    Attributes:
        partition: relative data partition path.
        file_id_high_bits, file_id_low_bits: the file id's UUID (encoding 0), else -1.
        file_index: the ``-<n>`` suffix of the file id (encoding 0), :data:`MISSING_FILE_INDEX` for a bare UUID.
        file_id_raw: the file id as a string (encoding 1), ``""`` otherwise.
        instant_time_ms: the record's commit time as epoch milliseconds (in the table's timeline time zone).
        file_id_encoding: :data:`UUID_ENCODING` or :data:`RAW_STRING_ENCODING`.
    """

    partition: str
    file_id_high_bits: int
    file_id_low_bits: int
    file_index: int
    file_id_raw: str
    instant_time_ms: int
    file_id_encoding: int = UUID_ENCODING

    @property
    def file_id(self) -> str:
        """The file id (``HoodieTableMetadataUtil.getLocationFromRecordIndexInfo``)."""
        if self.file_id_encoding != UUID_ENCODING:
            return self.file_id_raw
        text = str(uuid.UUID(int=((self.file_id_high_bits & (2**64 - 1)) << 64)
                             | (self.file_id_low_bits & (2**64 - 1))))
        return text if self.file_index == MISSING_FILE_INDEX else f"{text}-{self.file_index}"

    def instant_time(self, utc: bool) -> str:
        """The commit time as an instant (``HoodieActiveTimeline.formatDate``): ``utc`` for a table whose
        ``hoodie.table.timeline.timezone`` is UTC, else this process's local time zone (as Java's LOCAL)."""
        return instant_time_of_millis(self.instant_time_ms, utc)

    @staticmethod
    def of(partition: str, file_id: str, instant_time: str, utc: bool,
           encoding: int = UUID_ENCODING) -> RecordIndexInfo:
        """The entry Hudi writes for a record in ``file_id`` written at ``instant_time``
        (``HoodieMetadataPayload.createRecordIndexUpdate``).

        Raises:
            ValueError: encoding 0 and ``file_id`` is neither ``<uuid>`` nor ``<uuid>-<int>``.
        """
        moment = parse_instant_time(instant_time)
        if len(instant_time) == 14:  # HoodieInstantTimeGenerator.parseDateFromInstantTime: millis "999"
            moment = moment.replace(microsecond=999_000)
        wall = moment if utc else moment.replace(tzinfo=None)  # naive = this process's local time zone
        millis = round(wall.timestamp() * 1000)
        if encoding != UUID_ENCODING:
            return RecordIndexInfo(partition, -1, -1, -1, file_id, millis, encoding)
        if len(file_id) == 36:
            parsed, index = uuid.UUID(file_id), MISSING_FILE_INDEX
        else:
            head, _, tail = file_id.rpartition("-")
            parsed, index = uuid.UUID(head), int(tail)
        high, low = parsed.int >> 64, parsed.int & (2**64 - 1)
        return RecordIndexInfo(partition, _signed64(high), _signed64(low), index, "", millis, encoding)


def _signed64(value: int) -> int:
    return value - 2**64 if value >= 2**63 else value


@dataclass(frozen=True)
class MetadataRecord:
    """One ``HoodieMetadataPayload``.

    Attributes:
        key: the record key (HFile cell key).
        type: what the record holds (0 for a tombstone read from a DELETE block).
        files: PARTITION_LIST / FILE_LIST: name → :class:`FileInfo` (partition identifiers for the list).
        bloom_filter, column_stats, record_index: the part of the other types.
        deleted: a tombstone: the key is deleted (``isDeletedRecord``).
    """

    key: str
    type: int
    files: dict[str, FileInfo] | None = None
    bloom_filter: BloomFilterInfo | None = None
    column_stats: ColumnStats | None = None
    record_index: RecordIndexInfo | None = None
    deleted: bool = False

    @staticmethod
    def tombstone(key: str) -> MetadataRecord:
        """The deleted payload of ``key`` (``HoodieMetadataPayload(Option.empty())``)."""
        return MetadataRecord(key, 0, deleted=True)

    # ------------------------------------------------------------------ Avro

    def to_avro(self) -> dict[str, Any]:
        """The ``HoodieMetadataRecord`` datum (``getInsertValue``).

        Raises:
            ValueError: a tombstone (Hudi writes those as DELETE block entries, never as datums).
        """
        if self.deleted:
            raise ValueError(f"metadata record {self.key!r} is a tombstone; it has no Avro datum")
        return {
            "key": self.key,
            "type": int(self.type),
            "filesystemMetadata": None if self.files is None else {
                name: {"size": info.size, "isDeleted": info.is_deleted} for name, info in self.files.items()},
            "BloomFilterMetadata": None if self.bloom_filter is None else {
                "type": self.bloom_filter.type, "timestamp": self.bloom_filter.timestamp,
                "bloomFilter": bytes(self.bloom_filter.bloom_filter), "isDeleted": self.bloom_filter.is_deleted},
            "ColumnStatsMetadata": None if self.column_stats is None else _column_stats_datum(self.column_stats),
            "recordIndexMetadata": None if self.record_index is None else _record_index_datum(self.record_index),
        }

    @staticmethod
    def from_avro(datum: dict[str, Any], key: str | None = None) -> MetadataRecord:
        """A record from a decoded datum (:func:`decode_datum`); ``key`` (the cell key) replaces the stored key.

        Raises:
            CorruptFile: a record-index record without its ``recordIndexMetadata``.
        """
        record_key = key if key is not None else str(datum.get("key") or "")
        type_ = int(datum.get("type") or 0)
        files_raw = datum.get("filesystemMetadata")
        files = None if files_raw is None else {
            name: FileInfo(int(v["size"]), bool(v["isDeleted"])) for name, v in files_raw.items()}
        bloom_raw = datum.get("BloomFilterMetadata") if type_ == RecordType.BLOOM_FILTER else None
        bloom = None if bloom_raw is None else BloomFilterInfo(
            bloom_raw["type"], bloom_raw["timestamp"], bytes(bloom_raw["bloomFilter"]), bool(bloom_raw["isDeleted"]))
        stats_raw = datum.get("ColumnStatsMetadata") if type_ == RecordType.COLUMN_STATS else None
        stats = None if stats_raw is None else ColumnStats(
            stats_raw.get("fileName"), stats_raw.get("columnName"), _unwrap(stats_raw.get("minValue")),
            _unwrap(stats_raw.get("maxValue")), stats_raw.get("valueCount"), stats_raw.get("nullCount"),
            stats_raw.get("totalSize"), stats_raw.get("totalUncompressedSize"), bool(stats_raw.get("isDeleted")))
        index = None
        if type_ == RecordType.RECORD_INDEX:
            raw = datum.get("recordIndexMetadata")
            if raw is None:
                raise CorruptFile(f"record index entry {record_key!r} has no recordIndexMetadata")
            index = RecordIndexInfo(
                raw.get("partitionName") or "", _int(raw.get("fileIdHighBits")), _int(raw.get("fileIdLowBits")),
                _int(raw.get("fileIndex")), raw.get("fileId") or "", _int(raw.get("instantTime")),
                int(raw.get("fileIdEncoding") or 0))
        return MetadataRecord(record_key, type_, files, bloom, stats, index)


def _int(value: Any) -> int:
    return -1 if value is None else int(value)


def _unwrap(value: Any) -> StatValue | None:
    if value is None:
        return None
    if isinstance(value, tuple):
        name, inner = value
        return StatValue(name.rsplit(".", 1)[-1], inner["value"])
    return StatValue("", value["value"] if isinstance(value, dict) else value)


def _wrap(value: StatValue | None) -> Any:
    if value is None:
        return None
    if value.wrapper not in WRAPPER_NAMES:
        raise ValueError(f"unknown column stats wrapper {value.wrapper!r}; expected one of {WRAPPER_NAMES}")
    inner = value.value
    if value.wrapper == "DecimalWrapper" and not isinstance(inner, Decimal):
        inner = Decimal(inner)
    return (f"{NAMESPACE}.{value.wrapper}", {"value": inner})


def _column_stats_datum(stats: ColumnStats) -> dict[str, Any]:
    return {"fileName": stats.file_name, "columnName": stats.column_name, "minValue": _wrap(stats.min_value),
            "maxValue": _wrap(stats.max_value), "valueCount": stats.value_count, "nullCount": stats.null_count,
            "totalSize": stats.total_size, "totalUncompressedSize": stats.total_uncompressed_size,
            "isDeleted": stats.is_deleted}


def _record_index_datum(info: RecordIndexInfo) -> dict[str, Any]:
    return {"partitionName": info.partition, "fileIdHighBits": info.file_id_high_bits,
            "fileIdLowBits": info.file_id_low_bits, "fileIndex": info.file_index, "fileId": info.file_id_raw,
            "instantTime": info.instant_time_ms, "fileIdEncoding": info.file_id_encoding}


# ---------------------------------------------------------------------- datum codec


@cache
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


def decode_datum(data: bytes | memoryview, schema_json: str | None = None, *, key: str | None = None,
                 where: str = "<memory>") -> MetadataRecord:
    """Decode one ``HoodieMetadataRecord`` datum.

    Args:
        data: the Avro binary datum (an HFile cell value).
        schema_json: the schema it was written with (block SCHEMA header / HFile ``schema`` file info: Hudi's
            :func:`~engine.metadata.schema.writer_schema_json`); ``None`` = the bare 0.15 schema. Resolved to the
            0.15 schema (fields it does not know, the meta fields among them, are dropped; missing ones take
            their defaults).
        key: the HFile cell key (replaces the key stored in the datum, which Hudi writes empty).
        where: file (and block) named in errors.

    Raises:
        CorruptFile: the bytes do not decode under the writer schema (names ``where`` and the key).
    """
    ours = metadata_schema_json()
    writer = _parsed(schema_json or ours)
    reader = None if schema_json in (None, ours) else _parsed(ours)
    try:
        datum = fastavro.schemaless_reader(io.BytesIO(bytes(data)), writer, reader, return_record_name=True,
                                          return_record_name_override=True)
    except Exception as exc:  # fastavro raises assorted error types
        raise CorruptFile(f"{where}: metadata record {key!r} does not decode as HoodieMetadataRecord: {exc}") \
            from exc
    if not isinstance(datum, dict):
        raise CorruptFile(f"{where}: metadata record {key!r} did not decode to a record")
    return MetadataRecord.from_avro(datum, key)


def encode_datum(record: MetadataRecord, *, truncate_key: bool = True, meta_fields: bool = True,
                 base_file_name: str | None = None) -> bytes:
    """The Avro binary of ``record`` as Hudi 0.15 writes it into HFile cells: under
    :func:`~engine.metadata.schema.writer_schema_json` with the meta fields null (``meta_fields=False``: under the
    bare 0.15 schema), ``_hoodie_file_name`` set to ``base_file_name`` in a base file's cells, and an empty
    ``key`` when ``truncate_key`` (``HoodieHFileDataBlock.serializeRecord`` / ``HoodieAvroHFileWriter``: the
    cell key carries it).

    Raises:
        ValueError: a tombstone, or a value that does not fit the schema.
    """
    datum = record.to_avro()
    if truncate_key:
        datum["key"] = ""
    schema = metadata_schema_json()
    if meta_fields:
        datum = {**dict.fromkeys(META_FIELDS), "_hoodie_file_name": base_file_name, **datum}
        schema = writer_schema_json()
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, _parsed(schema), datum)
    return buffer.getvalue()

__all__ = ["MISSING_FILE_INDEX", "RAW_STRING_ENCODING", "UUID_ENCODING", "BloomFilterInfo", "ColumnStats",
           "FileInfo", "MetadataRecord", "RecordIndexInfo", "StatValue", "decode_datum", "encode_datum"]
