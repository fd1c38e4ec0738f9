"""Merging metadata records of the same key (Hudi 0.15 ``HoodieMetadataPayload.preCombine`` and the merges
around it).

``combine(older, newer)`` is ``newer.preCombine(older)``:

- a tombstone ``newer`` wins (the key is deleted); a tombstone ``older`` is replaced by ``newer``;
- otherwise type and key must agree (``checkArgument``; :class:`~engine.errors.CorruptFile` here), then per type:

  - PARTITION_LIST / FILE_LIST (``combineFileSystemMetadata``): start from the older map; for each entry of the
    newer one: a name absent from the older map is added as is (a deletion marker too, so it survives the
    log-then-base two-stage merge); a name present is removed when the newer entry is a deletion, else kept
    with the larger of the two sizes (file sizes only grow). A FILE_LIST entry that is not deleted must have
    size > 0 (``validatePayload``).
  - BLOOM_FILTER: the newer entry replaces the older (``combineBloomFilterMetadata``).
  - COLUMN_STATS (``mergeColumnStatsRecords``): file and column must agree; if either side is deleted, the newer
    wins; else min of mins, max of maxes (nulls ignored), value/null counts and sizes summed, ``isDeleted`` of
    the newer.
  - RECORD_INDEX: the newer mapping replaces the older (a key moved or was deleted and re-inserted).

How merged records are read (``HoodieBackedTableMetadata``): log records are folded in log order with
``combine(previous, next)``, a DELETE block entry turning the key into a tombstone
(``HoodieMergedLogRecordScanner.processNextDeletedRecord``: MDT payloads order at 0, so the delete always
applies); then each log record is merged into the base file's record of its key with :func:`merge_with_base`,
which drops the key when the result is a tombstone. A key found only in the log stays a tombstone; lookups
treat it as absent.
"""

from __future__ import annotations

from engine.errors import CorruptFile
from engine.metadata.records import ColumnStats, FileInfo, MetadataRecord, StatValue
from engine.metadata.schema import RecordType


def combine(older: MetadataRecord, newer: MetadataRecord) -> MetadataRecord:
    """``newer.preCombine(older)`` (rules in the module docstring).

    Raises:
        CorruptFile: the two records have different types or keys, a file listing holds a live file of size
            <= 0, column stats of different files/columns, or min/max values of incomparable types.
    """
    if newer.deleted or older.deleted:
        return newer
    if older.type != newer.type:
        raise CorruptFile(f"cannot combine metadata record {older.key!r} of type {older.type} with one of type "
                          f"{newer.type}")
    if older.key != newer.key:
        raise CorruptFile(f"cannot combine metadata record {older.key!r} with {newer.key!r}: the keys differ")
    if newer.type in (RecordType.PARTITION_LIST, RecordType.FILE_LIST):
        return MetadataRecord(newer.key, newer.type, files=combine_file_listings(older, newer))
    if newer.type == RecordType.BLOOM_FILTER:
        return MetadataRecord(newer.key, newer.type, bloom_filter=newer.bloom_filter)
    if newer.type == RecordType.COLUMN_STATS:
        if older.column_stats is None or newer.column_stats is None:
            raise CorruptFile(f"column stats record {newer.key!r} has no ColumnStatsMetadata")
        return MetadataRecord(newer.key, newer.type,
                              column_stats=merge_column_stats(older.column_stats, newer.column_stats))
    if newer.type == RecordType.RECORD_INDEX:
        return newer
    raise CorruptFile(f"unknown type {newer.type} of metadata record {newer.key!r}")


def combine_file_listings(older: MetadataRecord, newer: MetadataRecord) -> dict[str, FileInfo]:
    """``combineFileSystemMetadata``: the older listing updated by the newer one (see the module docstring).

    Raises:
        CorruptFile: the newer FILE_LIST record lists a live file with size <= 0.
    """
    combined: dict[str, FileInfo] = dict(older.files or {})
    for name, info in (newer.files or {}).items():
        if newer.type == RecordType.FILE_LIST and not info.is_deleted and info.size <= 0:
            raise CorruptFile(f"metadata file listing {newer.key!r}: existing file {name} has size {info.size}; "
                              "existing files should have size > 0")
        previous = combined.get(name)
        if previous is None:
            combined[name] = info
        elif info.is_deleted:
            del combined[name]
        else:
            combined[name] = FileInfo(max(info.size, previous.size), False)
    return combined


def _extreme(a: StatValue | None, b: StatValue | None, pick_max: bool, what: str) -> StatValue | None:
    present = [v for v in (a, b) if v is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    first, second = present
    try:
        second_wins = second.sort_key() > first.sort_key() if pick_max else second.sort_key() < first.sort_key()
    except TypeError as exc:
        raise CorruptFile(f"{what}: cannot compare {first.wrapper} with {second.wrapper}") from exc
    return second if second_wins else first


def merge_column_stats(older: ColumnStats, newer: ColumnStats) -> ColumnStats:
    """``HoodieMetadataPayload.mergeColumnStatsRecords`` (see the module docstring).

    Raises:
        CorruptFile: different file or column names, or incomparable min/max values.
    """
    what = f"column stats of {newer.column_name} in {newer.file_name}"
    if older.file_name != newer.file_name or older.column_name != newer.column_name:
        raise CorruptFile(f"cannot merge column stats of {older.column_name} in {older.file_name} with {what}")
    if newer.is_deleted or older.is_deleted:
        return newer

    def total(a: int | None, b: int | None) -> int | None:
        if a is None or b is None:  # Java unboxes and fails on null; keep what there is
            return b if a is None else a
        return a + b

    return ColumnStats(
        newer.file_name, newer.column_name,
        _extreme(older.min_value, newer.min_value, False, what), _extreme(older.max_value, newer.max_value, True, what),
        total(older.value_count, newer.value_count), total(older.null_count, newer.null_count),
        total(older.total_size, newer.total_size), total(older.total_uncompressed_size, newer.total_uncompressed_size),
        newer.is_deleted)


def merge_with_base(base: MetadataRecord | None, log: MetadataRecord | None) -> MetadataRecord | None:
    """The record a reader sees for a key: the base file's record merged with the folded log record
    (``HoodieBackedTableMetadata.readFromBaseAndMergeWithLogRecords``); ``None`` = no record. A merge that yields a
    tombstone drops the key; a tombstone only in the log is kept (callers treat it as absent).

    Raises:
        CorruptFile: see :func:`combine`.
    """
    if log is None:
        return base
    if base is None:
        return log
    merged = combine(base, log)
    return None if merged.deleted else merged


__all__ = ["combine", "combine_file_listings", "merge_column_stats", "merge_with_base"]
