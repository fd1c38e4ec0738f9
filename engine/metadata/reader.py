"""Reading a data table's metadata table (Hudi 0.15 ``HoodieBackedTableMetadata`` / ``BaseTableMetadata``).

The MDT at ``<base>/.hoodie/metadata`` is a merge-on-read table of HFile base files and logs of HFile data
blocks. A lookup of keys in an MDT partition:

1. takes the partition's latest merged file slices as of the MDT's last completed-or-compaction instant,
   sorted by file id (``getPartitionLatestMergedFileSlices``; the engine's :class:`FileSystemView` of the MDT);
2. sends each key to file group :func:`~engine.metadata.keys.file_group_index` of them;
3. per slice, folds the log records of the keys in log order (blocks filtered by
   :func:`~engine.metadata.instants.metadata_block_filter`: MDT-committed, valid on the data timeline, rollback
   command blocks applied — the engine's :func:`~engine.read.log_scan.scan_log_blocks`), DELETE entries making
   tombstones, then merges them with the base file's records (:mod:`engine.metadata.payload`).

Reads never change either table. A reader is a snapshot of both timelines at construction; build a new one to
see later commits.

Differences from Java, on states Hudi's own writer does not leave behind: DELETE entries always apply (Java
keeps the older record only when the delete's ordering value is a non-zero value smaller than the record's;
MDT payloads and their deletes order at 0). Like Hudi 0.15, there is no time travel on the MDT. Not
implemented: the optimized log block scan (``hoodie.metadata.optimized.log.blocks.scan.enable``, off by
default) and MDT log compaction (``logcompaction`` instants, off by default).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from engine.errors import MetadataTableError, TableNotFound
from engine.filegroup.slices import FileSlice
from engine.filegroup.view import FileSystemView
from engine.formats.bloom import BloomFilter, deserialize_bloom_filter
from engine.formats.log_format import DeleteBlock, HFileDataBlock, LogBlock, load_block_content
from engine.metadata.hfile_records import BaseFileRecords, block_records
from engine.metadata.instants import metadata_block_filter
from engine.metadata.keys import bloom_filter_key, column_stats_key, file_group_index
from engine.metadata.payload import combine, merge_with_base
from engine.metadata.records import ColumnStats, MetadataRecord
from engine.metadata.schema import (
    PARTITION_LIST_KEY,
    MetadataPartition,
    partition_identifier,
    partition_of_identifier,
)
from engine.read.log_scan import BlockFilter, scan_log_blocks
from engine.table import Table

LOG = logging.getLogger(__name__)

METADATA_FOLDER = "metadata"


class RecordLocation(NamedTuple):
    """Where the record index places a key (Hudi ``HoodieRecordGlobalLocation``): relative partition path,
    file id, and the instant that wrote the record (``yyyyMMddHHmmssSSS``)."""

    partition: str
    file_id: str
    instant: str


class _Slice:
    """One MDT file slice opened for lookups: its base file (read once) and its applicable log blocks (contents
    loaded once)."""

    def __init__(self, table: Table, file_slice: FileSlice, block_filter: BlockFilter) -> None:
        self.file_slice = file_slice
        self._table = table
        self._filter = block_filter
        self._base: BaseFileRecords | None = None
        self._blocks: list[LogBlock] | None = None

    def base(self) -> BaseFileRecords | None:
        if self._base is None and self.file_slice.base_file is not None:
            self._base = BaseFileRecords(self._table.storage, self.file_slice.base_file.path)
        return self._base

    def blocks(self) -> list[LogBlock]:
        if self._blocks is None:
            paths = [log.path for log in self.file_slice.log_files]
            scanned = scan_log_blocks(self._table.storage, paths, self._filter, hfile_blocks=True)
            self._blocks = [load_block_content(self._table.storage, b) for b in scanned]
        return self._blocks

    def log_records(self, keys: Sequence[str] | None) -> dict[str, MetadataRecord]:
        """The log records of ``keys`` (all with ``None``) folded in log order
        (``HoodieMergedLogRecordScanner.processNextRecord`` / ``processNextDeletedRecord``)."""
        wanted = None if keys is None else set(keys)
        folded: dict[str, MetadataRecord] = {}
        for block in self.blocks():
            if isinstance(block, HFileDataBlock):
                for key, record in block_records(block, keys).items():
                    previous = folded.get(key)
                    folded[key] = record if previous is None else combine(previous, record)
            elif isinstance(block, DeleteBlock):
                for deleted in block.delete_records():
                    gone = deleted.record_key
                    if gone is not None and (wanted is None or gone in wanted):
                        folded[gone] = MetadataRecord.tombstone(gone)
            else:
                LOG.warning("metadata table log %s: skipping %s at offset %d (not an HFile or delete block)",
                            block.file_path, type(block).__name__, block.offset)
        return folded

    def records(self, keys: Sequence[str] | None) -> dict[str, MetadataRecord]:
        """Merged records of ``keys`` (all with ``None``); tombstones of log-only keys included."""
        logs = self.log_records(keys)
        base = self.base()
        out = dict(base.records(keys)) if base is not None else {}
        for key, log in logs.items():
            merged = merge_with_base(out.get(key), log)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        return out


class MetadataTableReader:
    """The metadata table of a data table (Hudi ``HoodieBackedTableMetadata``, table version 6).

    Args:
        table: the data table, or its base path.

    Raises:
        TableNotFound: no data table, or ``hoodie.table.metadata.partitions`` lists ``files`` but the MDT
            is missing.
        MetadataTableError: the data table has no metadata table in use (``files`` not listed as built).
        UnsupportedTable, CorruptFile: the MDT's ``hoodie.properties`` is not a readable v6 table.
    """

    def __init__(self, table: Table | str) -> None:
        self.table = table if isinstance(table, Table) else Table.load(table)
        if MetadataPartition.FILES.value not in self.table.metadata_partitions:
            raise MetadataTableError(f"table {self.table.name} at {self.table.base_path} has no metadata table "
                                     "in use (hoodie.table.metadata.partitions does not list 'files')")
        self.path = self.table.storage.join(self.table.meta_path, METADATA_FOLDER)
        try:
            self.mdt = Table.load(self.path)
        except TableNotFound as exc:
            raise TableNotFound(f"table {self.table.name}: hoodie.table.metadata.partitions lists "
                                f"{','.join(self.table.metadata_partitions)} but there is no metadata table at "
                                f"{self.path}") from exc
        self._filter = metadata_block_filter(self.table.timeline, self.mdt.timeline)
        view_instants = self.mdt.timeline.visible_commit_times()
        self._has_commits = bool(self.mdt.timeline.completed())
        self._view = FileSystemView(self.mdt, view_instants[-1] if view_instants else None)
        self._slices: dict[str, list[_Slice]] = {}
        self._utc = self.table.timeline_timezone == "UTC"

    # ------------------------------------------------------------------ partitions and slices

    @property
    def available_partitions(self) -> list[str]:
        """MDT partitions listed as built in ``hoodie.table.metadata.partitions`` (Hudi
        ``isMetadataPartitionAvailable``), in that order."""
        known = {p.value for p in MetadataPartition}
        return [p for p in self.table.metadata_partitions if p in known]

    def is_available(self, partition: MetadataPartition | str) -> bool:
        """Whether an MDT partition is built and readable."""
        return MetadataPartition(partition).value in self.available_partitions

    def file_slices(self, partition: MetadataPartition | str) -> list[FileSlice]:
        """The latest merged file slices of an MDT partition sorted by file id
        (``HoodieTableMetadataUtil.getPartitionLatestMergedFileSlices``; empty when the MDT has no completed
        instant).

        Raises:
            MetadataTableError: the partition is not available.
        """
        return [s.file_slice for s in self._open(partition)]

    def _open(self, partition: MetadataPartition | str) -> list[_Slice]:
        name = MetadataPartition(partition).value
        if name not in self._slices:
            if name not in self.available_partitions:
                raise MetadataTableError(f"metadata table partition {name} of table {self.table.name} is not "
                                         f"available (built: {','.join(self.available_partitions) or 'none'})")
            slices = self._view.latest_file_slices(name) if self._has_commits else []
            slices = sorted(slices, key=lambda s: s.file_id)
            self._slices[name] = [_Slice(self.mdt, s, self._filter) for s in slices]
        return self._slices[name]

    # ------------------------------------------------------------------ generic record access

    def read_records(self, partition: MetadataPartition | str, keys: Iterable[str]) -> dict[str, MetadataRecord]:
        """The merged records of ``keys`` in an MDT partition (``getRecordsByKeys``): each key is looked up in
        its file group only, by point lookups (work proportional to the keys asked). Tombstones and absent keys
        are left out.

        Raises:
            MetadataTableError: the partition is not available, or has no file slice.
            CorruptFile: undecodable HFiles or records, inconsistent records.
            StorageError: unreadable files.
        """
        slices = self._open(partition)
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        if not slices:
            raise MetadataTableError(f"metadata table partition {MetadataPartition(partition).value} of table "
                                     f"{self.table.name} has no file slice")
        by_group: dict[int, list[str]] = {}
        for key in wanted:
            by_group.setdefault(file_group_index(key, len(slices)), []).append(key)
        out: dict[str, MetadataRecord] = {}
        for index, group_keys in sorted(by_group.items()):
            for key, record in slices[index].records(group_keys).items():
                if not record.deleted:
                    out[key] = record
        return out

    def read_all(self, partition: MetadataPartition | str) -> dict[str, MetadataRecord]:
        """Every live record of an MDT partition (a full scan of every file slice), key → record.

        Raises:
            see :meth:`read_records`.
        """
        out: dict[str, MetadataRecord] = {}
        for opened in self._open(partition):
            out.update({k: r for k, r in opened.records(None).items() if not r.deleted})
        return out

    # ------------------------------------------------------------------ files partition

    def _files_record(self, key: str) -> MetadataRecord | None:
        record = self.read_records(MetadataPartition.FILES, [key]).get(key)
        if record is not None:
            deletions = sorted(n for n, i in (record.files or {}).items() if i.is_deleted)
            if deletions:  # BaseTableMetadata.checkForSpuriousDeletes (ignoreSpuriousDeletes defaults to true)
                LOG.warning("metadata table of %s: record %r still lists deleted entries %s; ignored",
                            self.table.name, key, deletions)
        return record

    def all_partition_paths(self) -> list[str]:
        """Relative partition paths of the data table, sorted (``[""]`` for a non-partitioned table, ``[]``
        when empty; ``BaseTableMetadata.fetchAllPartitionPaths``).

        Raises:
            see :meth:`read_records`.
        """
        record = self._files_record(PARTITION_LIST_KEY)
        names = sorted(n for n, i in ((record.files or {}) if record else {}).items() if not i.is_deleted)
        return [partition_of_identifier(n) for n in names]

    def files_in_partition(self, partition: str) -> dict[str, int]:
        """The data files of a partition (base and log files of committed writes): file name → size in bytes
        (``BaseTableMetadata.fetchAllFilesInPartition``; ``{}`` for an unknown partition).

        Args:
            partition: relative partition path (``""`` non-partitioned).

        Raises:
            see :meth:`read_records`.
        """
        record = self._files_record(partition_identifier(partition))
        return {n: i.size for n, i in sorted(((record.files or {}) if record else {}).items()) if not i.is_deleted}

    # ------------------------------------------------------------------ indexes

    def column_stats(self, partition: str, file_names: Iterable[str],
                     columns: Iterable[str]) -> dict[tuple[str, str], ColumnStats]:
        """Column statistics of files (``BaseTableMetadata.getColumnStats``), entries marked deleted left out.

        Args:
            partition: relative partition path of the files.
            file_names: data file names (no folder).
            columns: column names.

        Returns:
            ``(file name, column) → ColumnStats`` for the pairs the index holds.

        Raises:
            MetadataTableError: the column_stats partition is not available.
            CorruptFile, StorageError: see :meth:`read_records`.
        """
        wanted = {column_stats_key(partition, f, c): (f, c) for f in file_names for c in columns}
        records = self.read_records(MetadataPartition.COLUMN_STATS, wanted)
        out: dict[tuple[str, str], ColumnStats] = {}
        for key, record in records.items():
            stats = record.column_stats
            if stats is not None and not stats.is_deleted:
                out[wanted[key]] = stats
        return out

    def bloom_filter(self, partition: str, file_name: str) -> BloomFilter | None:
        """The bloom filter of a base file (``BaseTableMetadata.getBloomFilter``), or ``None`` when the index has
        no live entry for it.

        Raises:
            MetadataTableError: the bloom_filters partition is not available.
            CorruptFile: the stored filter does not deserialize; see also :meth:`read_records`.
        """
        key = bloom_filter_key(partition, file_name)
        record = self.read_records(MetadataPartition.BLOOM_FILTERS, [key]).get(key)
        info = record.bloom_filter if record is not None else None
        if info is None or info.is_deleted:
            return None
        return deserialize_bloom_filter(info.bloom_filter.decode("utf-8"), info.type)

    def record_locations(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Where the record index places record keys (``BaseTableMetadata.readRecordIndex``): keys hashed to the
        record_index file groups, looked up there only. Keys the index does not hold are absent from the result.

        The stored commit time (epoch milliseconds) is formatted in the data table's timeline time zone
        (``hoodie.table.timeline.timezone``; LOCAL = this process's zone, as Java's default).

        Raises:
            MetadataTableError: the record_index partition is not available.
            CorruptFile, StorageError: see :meth:`read_records`.
        """
        out: dict[str, RecordLocation] = {}
        for key, record in self.read_records(MetadataPartition.RECORD_INDEX, keys).items():
            info = record.record_index
            if info is not None:
                out[key] = RecordLocation(info.partition, info.file_id, info.instant_time(self._utc))
        return out


__all__ = ["METADATA_FOLDER", "MetadataTableReader", "RecordLocation"]
