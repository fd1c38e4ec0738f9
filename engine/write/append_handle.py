"""The append handle (Hudi ``HoodieAppendHandle``): updates and deletes of a merge-on-read file group
appended as new log files of its latest file slice.

Each write creates the next log version ``.<fileId>_<baseInstant>.log.<n>_<token>`` (Hudi 0.14 never
re-opens a log file; docs/FORMAT.md §5.5) holding an ``AVRO_DATA_BLOCK`` with the new record versions (meta
columns included, ``_hoodie_file_name`` = the file id) and/or a ``DELETE_BLOCK`` with the deleted keys,
rolling over to the following version when a file reaches ``hoodie.logfile.max.size``.
Deletes carry the deleted record's own ordering value typed like the precombine field, so they win by
commit order under both Java's and hudi-rs's delete rules.
"""

from __future__ import annotations

import datetime
import logging
import time
from dataclasses import dataclass

import pyarrow as pa

from engine.config import WriteConfig
from engine.errors import LogFileExists, WriteError
from engine.filegroup.naming import log_file_name, parse_log_file_name
from engine.formats.conform import conform_array, field_type, field_values
from engine.formats.log_format import (
    AvroDataBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    LogWriter,
    ordering_wrapper_for,
)
from engine.timeline.commit_metadata import RuntimeStats, WriteStat
from engine.write.handles import TaskIdentity, WriteContext, seqnos, with_meta_columns
from engine.write.markers import IOType, Marker, create_marker, delete_marker
from engine.write.prepare import PARTITION_PATH, RECORD_KEY, dedupe_by_key, deleted_mask

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LatestSlice:
    """The latest file slice of a merge-on-read file group, as the append handle needs it.

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_instant: the slice's base instant (log files carry it in their names).
        base_file_name: the slice's base file name, or ``""`` for a log-only slice.
        log_file_names: names of the slice's existing log files.
    """

    partition_path: str
    file_id: str
    base_instant: str
    base_file_name: str
    log_file_names: tuple[str, ...] = ()


class LogVersions:
    """The highest log version of each file slice in the partitions one task appends to during one write,
    each partition listed once (not once per file group: a 256-bucket MERGE listed its partition 256 times).

    Another writer's log files of a slice (a failed attempt's leftovers included) count, as listed; every file
    this task then writes is recorded with :meth:`record`. Only one task writes a given file group in a write,
    so the listing stays exact for the task's own file groups. Build one per task and write; never reuse it.
    """

    def __init__(self, ctx: WriteContext) -> None:
        self._ctx = ctx
        self._highest: dict[str, dict[tuple[str, str], int]] = {}

    def _partition(self, partition_path: str) -> dict[tuple[str, str], int]:
        if partition_path not in self._highest:
            highest: dict[tuple[str, str], int] = {}
            for info in self._ctx.storage.list_dir(self._ctx.partition_dir(partition_path)):
                parsed = parse_log_file_name(info.name)
                if parsed:
                    key = (parsed.file_id, parsed.base_instant)
                    highest[key] = max(highest.get(key, 0), parsed.version)
            self._highest[partition_path] = highest
        return self._highest[partition_path]

    def next(self, slice_: LatestSlice) -> int:
        """1 + the highest version of the slice's log files present in storage or written by this task.

        Raises:
            StorageError: the partition cannot be listed.
        """
        return self._partition(slice_.partition_path).get((slice_.file_id, slice_.base_instant), 0) + 1

    def record(self, slice_: LatestSlice, version: int) -> None:
        """Note that this task wrote log version ``version`` of the slice."""
        known = self._partition(slice_.partition_path)
        key = (slice_.file_id, slice_.base_instant)
        known[key] = max(known.get(key, 0), version)


def _delete_ordering(ctx: WriteContext, removed: pa.Table) -> tuple[list[object], str | None]:
    """Ordering values for the delete records: each deleted record's own precombine value, typed like the
    field (0 where it is null). Equal to the stored value, the delete then wins by commit order under both
    Java's rule (an ordering value other than Integer 0 loses only to a greater one) and hudi-rs's. A table
    without a precombine field gets ``IntWrapper(0)``, as Hudi's Spark SQL DELETE writes it: Hudi 0.15's log
    scanner fails on a delete record without an ordering value ("Ordering value is null for record")."""
    field = ctx.precombine_field
    field_kind = field_type(ctx.data_schema, field) if field else None
    if not field or field_kind is None:
        return [0] * removed.num_rows, "IntWrapper"
    wrapper = ordering_wrapper_for(field_kind)
    zero: object = {"StringWrapper": "0", "BooleanWrapper": False, "BytesWrapper": b""}.get(wrapper, 0)
    stored = field_values(removed, field)
    if stored is None:
        return [zero] * removed.num_rows, wrapper
    column = conform_array(stored, field_kind, field)
    values = [zero if v is None else v for v in column.to_pylist()]
    if wrapper in ("DateWrapper",):
        values = [(v - _EPOCH).days if isinstance(v, datetime.date) else v for v in values]
    elif wrapper in ("TimestampMicrosWrapper",):
        values = [int(v.timestamp() * 1_000_000) if isinstance(v, datetime.datetime) else v for v in values]
    return values, wrapper


_EPOCH = datetime.date(1970, 1, 1)


def _data_block_tables(table: pa.Table, max_block_bytes: int) -> list[pa.Table]:
    """``table`` cut into consecutive slices whose in-memory (Arrow) size stays under ``max_block_bytes``
    (at least one row each), as Hudi's append handle flushes a block once its buffered records reach
    ``hoodie.logfile.data.block.max.size``."""
    if table.num_rows == 0:
        return []
    per_row = max(1, table.nbytes // table.num_rows)
    rows = max(1, max_block_bytes // per_row)
    return [table.slice(offset, rows) for offset in range(0, table.num_rows, rows)]


@dataclass
class _OpenLogFile:
    """The log file an append is writing, with what went into it (one write stat per file)."""

    version: int
    name: str
    writer: LogWriter
    upserts: int = 0
    deletes: int = 0
    blocks: int = 0


_LOG_NAME_ATTEMPTS = 100
"""Log versions tried when other writers keep taking the next name first."""


def _open_log_file(ctx: WriteContext, slice_: LatestSlice, version: int, task: TaskIdentity,
                   folder: str) -> _OpenLogFile:
    """Create the log file of ``version`` (or, when another writer created that name first, of the next free
    version), its marker first."""
    for _ in range(_LOG_NAME_ATTEMPTS):
        name = log_file_name(slice_.file_id, slice_.base_instant, version, task.write_token)
        marker = Marker(slice_.partition_path, name, IOType.APPEND)
        create_marker(ctx.storage, ctx.base_path, ctx.instant_time, marker)
        try:
            return _OpenLogFile(version, name, LogWriter(ctx.storage, ctx.storage.join(folder, name)))
        except LogFileExists:
            delete_marker(ctx.storage, ctx.base_path, ctx.instant_time, marker)
            logger.info("log file %s was created by another writer; rolling over to version %d", name, version + 1)
            version += 1
    raise WriteError(f"no free log file name for file group {slice_.file_id} in partition "
                     f"'{slice_.partition_path}' of {ctx.base_path} after {_LOG_NAME_ATTEMPTS} versions")


def append_to_file_group(
    ctx: WriteContext, slice_: LatestSlice, records: pa.Table, task: TaskIdentity,
    versions: LogVersions | None = None,
) -> list[WriteStat]:
    """Append ``records`` (upserts, and deletes flagged ``_hoodie_is_deleted``) to new log files of the
    file group's latest slice (Hudi ``HoodieAppendHandle``).

    Upserts go into ``AVRO_DATA_BLOCK``s of at most ``hoodie.logfile.data.block.max.size`` bytes each, the
    deletes into one ``DELETE_BLOCK`` after them. Once a log file reaches ``hoodie.logfile.max.size`` bytes,
    the next block rolls over to the next log version (Hudi ``HoodieLogFormatWriter.rolloverIfNeeded``).

    Args:
        versions: the task's log versions (:class:`LogVersions`), shared by its file groups; without it the
            partition is listed for this file group alone.

    Returns:
        One delta write stat per log file written (``logVersion``, ``baseFile``, ``logFiles``), or none
        when nothing survives.

    Raises:
        StorageError: a log file exists already or cannot be written.
    """
    start = time.monotonic()
    if ctx.conf.get(WriteConfig.COMBINE_BEFORE_UPSERT):
        records = dedupe_by_key(records, ctx.precombine_field, ctx.payload.first_on_ties)
    deletes = deleted_mask(records)
    upserts = records.filter(pa.array(~deletes)) if deletes.any() else records
    removed = records.filter(pa.array(deletes)) if deletes.any() else records.slice(0, 0)
    if upserts.num_rows == 0 and removed.num_rows == 0:
        return []
    blocks: list[tuple[LogBlock, int, int]] = []  # (block, upserts in it, deletes in it)
    if upserts.num_rows:
        with_meta = with_meta_columns(ctx, upserts, slice_.file_id, seqnos(ctx.instant_time, task, upserts.num_rows))
        for part in _data_block_tables(with_meta, ctx.conf.get(WriteConfig.LOGFILE_DATA_BLOCK_MAX_SIZE)):
            blocks.append((AvroDataBlock.from_table(part, ctx.avro_schema, ctx.instant_time), part.num_rows, 0))
    if removed.num_rows:
        orderings, wrapper = _delete_ordering(ctx, removed)
        keys = removed.column(RECORD_KEY).to_pylist()
        partitions = removed.column(PARTITION_PATH).to_pylist()
        entries = [DeleteRecord(k, p, o, wrapper if o is not None else None)
                   for k, p, o in zip(keys, partitions, orderings, strict=True)]
        blocks.append((DeleteBlock.from_records(entries, ctx.instant_time, ctx.avro_schema), 0, removed.num_rows))

    max_file_size = ctx.conf.get(WriteConfig.LOGFILE_MAX_SIZE)
    folder = ctx.partition_dir(slice_.partition_path)
    written: list[tuple[_OpenLogFile, int]] = []
    current: _OpenLogFile | None = None
    versions = versions if versions is not None else LogVersions(ctx)
    version = versions.next(slice_)
    try:
        for block, n_upserts, n_deletes in blocks:
            if current is not None and current.writer.size >= max_file_size:
                written.append((current, current.writer.close()))
                current = None
                version += 1
            if current is None:
                current = _open_log_file(ctx, slice_, version, task, folder)
                version = current.version
            current.writer.append_block(block)
            current.upserts += n_upserts
            current.deletes += n_deletes
            current.blocks += 1
    finally:
        if current is not None:
            written.append((current, current.writer.close()))
        for log_file, _ in written:
            versions.record(slice_, log_file.version)
    elapsed = int((time.monotonic() - start) * 1000)
    stats = []
    log_files = list(slice_.log_file_names)
    for log_file, size in written:
        log_files.append(log_file.name)
        path = f"{slice_.partition_path}/{log_file.name}" if slice_.partition_path else log_file.name
        stats.append(WriteStat(
            file_id=slice_.file_id, path=path, prev_commit=slice_.base_instant,
            num_writes=log_file.upserts, num_deletes=log_file.deletes, num_update_writes=log_file.upserts,
            num_inserts=0, total_write_bytes=size, total_write_errors=0, partition_path=slice_.partition_path,
            file_size_in_bytes=size, total_log_blocks=log_file.blocks,
            runtime_stats=RuntimeStats(total_scan_time=0, total_upsert_time=elapsed, total_create_time=0),
            log_version=log_file.version, log_offset=0, base_file=slice_.base_file_name,
            log_files=list(log_files),
        ))
    return stats
