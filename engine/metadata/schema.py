"""The metadata table's record schema and record kinds (Hudi 0.15 ``HoodieMetadata.avsc``, class
``org.apache.hudi.avro.model.HoodieMetadataRecord``; table version 6).

Every metadata table record, in every MDT partition, is one ``HoodieMetadataRecord``: ``key`` (the HFile cell
key too), ``type`` (:class:`RecordType`), and one payload field per kind — ``filesystemMetadata`` (partition
list and file listings), ``BloomFilterMetadata``, ``ColumnStatsMetadata``, ``recordIndexMetadata``.

:data:`METADATA_RECORD_SCHEMA` is the schema exactly as Hudi 0.15's generated class renders it
(``HoodieMetadataRecord.SCHEMA$.toString()``; :func:`metadata_schema_json` gives those bytes). Hudi writes MDT
records under it with the meta fields added (:func:`writer_schema_json`: the SCHEMA header of the MDT's HFile
log blocks and the ``schema`` file-info entry of its HFile base files). It differs from the 1.x file (no
``basePathForPartition``, no secondary index, no ``LocalDateWrapper`` / ``ArrayWrapper`` branches).
"""

from __future__ import annotations

import json
from enum import IntEnum, StrEnum
from functools import cache
from typing import Any

from engine.formats.avro_schema import add_meta_fields

NAMESPACE = "org.apache.hudi.avro.model"

_STRING: dict[str, Any] = {"type": "string", "avro.java.string": "String"}
_WRAPPER_DOC = "A record wrapping {} to be able to be used it w/in Avro's Union"


def _optional(type_: Any, doc: str, name: str) -> dict[str, Any]:
    return {"name": name, "type": ["null", type_], "doc": doc, "default": None}


def _wrapper(name: str, what: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "doc": _WRAPPER_DOC.format(what),
            "fields": [{"name": "value", "type": value_type}]}


_WRAPPERS: list[dict[str, Any]] = [
    _wrapper("BooleanWrapper", "boolean type", "boolean"),
    _wrapper("IntWrapper", "int type", "int"),
    _wrapper("LongWrapper", "long type", "long"),
    _wrapper("FloatWrapper", "float type", "float"),
    _wrapper("DoubleWrapper", "double type", "double"),
    _wrapper("BytesWrapper", "bytes type", "bytes"),
    _wrapper("StringWrapper", "string type", _STRING),
    _wrapper("DateWrapper", "Date logical type", "int"),
    _wrapper("DecimalWrapper", "Decimal logical type",
             {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    _wrapper("TimeMicrosWrapper", "Time-micros logical type", {"type": "long", "logicalType": "time-micros"}),
    _wrapper("TimestampMicrosWrapper", "Timestamp-micros logical type", "long"),
]
WRAPPER_NAMES: tuple[str, ...] = tuple(w["name"] for w in _WRAPPERS)
"""Branches 1.. of the ``minValue``/``maxValue`` unions (branch 0 is null), in schema order."""

DECIMAL_WRAPPER_SCALE = 15
"""Scale of ``DecimalWrapper.value`` (precision 30): column stats of decimals are stored rescaled to it."""

_UUID_DOC = ("A UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). \n"
             "FileID format is {UUID}-{fileIndex}.")

METADATA_RECORD_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieMetadataRecord", "namespace": NAMESPACE,
    "doc": "A record saved within the Metadata Table",
    "fields": [
        {"name": "key", "type": _STRING},
        {"name": "type", "type": "int", "doc": "Type of the metadata record"},
        {"name": "filesystemMetadata", "type": ["null", {
            "type": "map",
            "values": {"type": "record", "name": "HoodieMetadataFileInfo", "fields": [
                {"name": "size", "type": "long", "doc": "Size of the file"},
                {"name": "isDeleted", "type": "boolean", "doc": "True if this file has been deleted"}]},
            "avro.java.string": "String"}],
         "doc": "Contains information about partitions and files within the dataset"},
        {"name": "BloomFilterMetadata", "type": ["null", {
            "type": "record", "name": "HoodieMetadataBloomFilter", "doc": "Data file bloom filter details",
            "fields": [
                {"name": "type", "type": _STRING, "doc": "Bloom filter type code"},
                {"name": "timestamp", "type": _STRING,
                 "doc": "Instant timestamp when this metadata was created/updated"},
                {"name": "bloomFilter", "type": "bytes", "doc": "Bloom filter binary byte array"},
                {"name": "isDeleted", "type": "boolean", "doc": "Bloom filter entry valid/deleted flag"}]}],
         "doc": "Metadata Index of bloom filters for all data files in the user table", "default": None},
        {"name": "ColumnStatsMetadata", "type": ["null", {
            "type": "record", "name": "HoodieMetadataColumnStats", "doc": "Data file column statistics",
            "fields": [
                _optional(_STRING, "File name for which this column statistics applies", "fileName"),
                _optional(_STRING, "Column name for which this column statistics applies", "columnName"),
                {"name": "minValue", "type": ["null", *_WRAPPERS],
                 "doc": "Minimum value in the range. Based on user data table schema, we can convert this to "
                        "appropriate type", "default": None},
                {"name": "maxValue", "type": ["null", *WRAPPER_NAMES],
                 "doc": "Maximum value in the range. Based on user data table schema, we can convert it to "
                        "appropriate type", "default": None},
                _optional("long", "Total count of values", "valueCount"),
                _optional("long", "Total count of null values", "nullCount"),
                _optional("long", "Total storage size on disk", "totalSize"),
                _optional("long", "Total uncompressed storage size on disk", "totalUncompressedSize"),
                {"name": "isDeleted", "type": "boolean", "doc": "Column range entry valid/deleted flag"}]}],
         "doc": "Metadata Index of column statistics for all data files in the user table", "default": None},
        {"name": "recordIndexMetadata", "type": ["null", {
            "type": "record", "name": "HoodieRecordIndexInfo",
            "fields": [
                _optional(_STRING, "Refers to the partition name the record belongs to", "partitionName"),
                _optional("long", "Refers to high 64 bits if the fileId is based on UUID format. \n" + _UUID_DOC,
                          "fileIdHighBits"),
                _optional("long", "Refers to low 64 bits if the fileId is based on UUID format. \n" + _UUID_DOC,
                          "fileIdLowBits"),
                _optional("int", "Index representing file index which is used to re-construct UUID based fileID. "
                                 "Applicable when the fileId is based on UUID format. \n" + _UUID_DOC, "fileIndex"),
                _optional(_STRING, "Represents fileId of the location where record belongs to. When the encoding "
                                   "is 1, fileID is stored in raw string format.", "fileId"),
                _optional("long", "Epoch time in millisecond representing the commit time at which record was "
                                  "added", "instantTime"),
                {"name": "fileIdEncoding", "type": "int",
                 "doc": "Represents fileId encoding. Possible values are 0 and 1. O represents UUID based fileID, "
                        "and 1 represents raw string format of the fileId. \nWhen the encoding is 0, reader can "
                        "deduce fileID from fileIdLowBits, fileIdLowBits and fileIndex.", "default": 0}]}],
         "doc": "Metadata Index that contains information about record keys and their location in the dataset",
         "default": None},
    ],
}


@cache
def metadata_schema_json() -> str:
    """:data:`METADATA_RECORD_SCHEMA` as Java's ``Schema.toString()`` renders it (compact JSON, the bytes Hudi
    0.15 writes into block headers and HFile file info)."""
    return json.dumps(METADATA_RECORD_SCHEMA, separators=(",", ":"))


@cache
def writer_schema_json() -> str:
    """The schema Hudi 0.15 writes MDT records under: :data:`METADATA_RECORD_SCHEMA` with the five meta fields in
    front (``HoodieAvroUtils.addMetadataFields``), compact JSON — the SCHEMA header of the MDT's HFile log blocks
    and the ``schema`` file-info entry of its base files. The meta fields are stored null, except
    ``_hoodie_file_name`` in base files (the base file's own name)."""
    return json.dumps(add_meta_fields(METADATA_RECORD_SCHEMA), separators=(",", ":"))


class RecordType(IntEnum):
    """``HoodieMetadataPayload.METADATA_TYPE_*``: the ``type`` field of a record."""

    PARTITION_LIST = 1
    FILE_LIST = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5


class MetadataPartition(StrEnum):
    """The MDT partitions of table version 6 (Hudi ``MetadataPartitionType``): folder name (also the name listed
    in ``hoodie.table.metadata.partitions``), file id prefix of its file groups, record type."""

    FILES = "files"
    COLUMN_STATS = "column_stats"
    BLOOM_FILTERS = "bloom_filters"
    RECORD_INDEX = "record_index"

    @property
    def file_id_prefix(self) -> str:
        """Prefix of the partition's file ids (``files-``, ``col-stats-``, ``bloom-filters-``,
        ``record-index-``); a file group is ``<prefix><index:04d>-0`` (``getFileIDForFileGroup``)."""
        return _FILE_ID_PREFIX[self]

    @property
    def record_type(self) -> RecordType:
        """Type of the partition's records (the files partition also holds the one PARTITION_LIST record)."""
        return _RECORD_TYPE[self]

    def file_group_id(self, index: int) -> str:
        """File id of file group ``index`` (``HoodieTableMetadataUtil.getFileIDForFileGroup``)."""
        return f"{self.file_id_prefix}{index:04d}-0"


_FILE_ID_PREFIX = {MetadataPartition.FILES: "files-", MetadataPartition.COLUMN_STATS: "col-stats-",
                   MetadataPartition.BLOOM_FILTERS: "bloom-filters-", MetadataPartition.RECORD_INDEX: "record-index-"}
_RECORD_TYPE = {MetadataPartition.FILES: RecordType.FILE_LIST, MetadataPartition.COLUMN_STATS: RecordType.COLUMN_STATS,
                MetadataPartition.BLOOM_FILTERS: RecordType.BLOOM_FILTER,
                MetadataPartition.RECORD_INDEX: RecordType.RECORD_INDEX}

PARTITION_LIST_KEY = "__all_partitions__"
"""Key of the files partition's partition-list record (``HoodieTableMetadata.RECORDKEY_PARTITION_LIST``)."""
NON_PARTITIONED_NAME = "."
"""Partition identifier of a non-partitioned table's single partition ``""`` in MDT keys
(``HoodieTableMetadata.NON_PARTITIONED_NAME``)."""
KEY_FIELD = "key"
"""The record field holding the key (``HoodieAvroHFileReader.KEY_FIELD_NAME``); stored empty in HFile values,
filled from the cell key on read."""
SCHEMA_FILE_INFO_KEY = "schema"
"""HFile file-info entry holding the writer schema of an MDT base file (``HoodieAvroHFileReader.SCHEMA_KEY``)."""


def partition_identifier(partition: str) -> str:
    """The key of a data partition in MDT records: ``"."`` for the non-partitioned ``""``, else the relative
    path (``HoodieTableMetadataUtil.getPartitionIdentifier``)."""
    return NON_PARTITIONED_NAME if partition == "" else partition


def partition_of_identifier(identifier: str) -> str:
    """Inverse of :func:`partition_identifier`."""
    return "" if identifier == NON_PARTITIONED_NAME else identifier


__all__ = ["DECIMAL_WRAPPER_SCALE", "KEY_FIELD", "METADATA_RECORD_SCHEMA", "NAMESPACE", "NON_PARTITIONED_NAME",
           "PARTITION_LIST_KEY", "SCHEMA_FILE_INFO_KEY", "WRAPPER_NAMES", "MetadataPartition", "RecordType",
           "metadata_schema_json", "partition_identifier", "partition_of_identifier", "writer_schema_json"]
