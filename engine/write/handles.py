"""Write handles: the per-file-group work that executors run (pure pyarrow, no Spark).

* :func:`create_file_group` — Hudi ``HoodieCreateHandle``: new records into a new base file.
* the merge handle (Hudi ``HoodieMergeHandle``) is :func:`engine.write.merge_handle.merge_file_group`.
* :class:`BulkInsertWriter` — Hudi bulk insert: rows streamed into new file groups per partition, rolling
  over to a new file group at ``hoodie.parquet.max.file.size``.

Each writes a marker before its data file and returns :class:`WriteStat` s for the commit.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, TableConfig, WriteConfig
from engine.errors import WriteError
from engine.filegroup.naming import base_file_name, new_file_id
from engine.filegroup.partition_metadata import write_partition_metadata
from engine.formats.avro_schema import META_FIELDS
from engine.formats.base_file import (
    BaseFileWriter,
)
from engine.formats.conform import conform_table
from engine.index.bucket import bucket_file_id
from engine.payloads import EXPRESSION, PayloadRules, configured_payload, payload_rules
from engine.schema.history import SchemaEvolution
from engine.storage import Storage
from engine.timeline.commit_metadata import RuntimeStats, WriteStat
from engine.write.markers import IOType, Marker, create_marker
from engine.write.prepare import BUCKET_ID, PARTITION_PATH, RECORD_KEY, dedupe_by_key, deleted_mask

logger = logging.getLogger(__name__)

COMMIT_TIME, COMMIT_SEQNO, META_RECORD_KEY, META_PARTITION_PATH, FILE_NAME = META_FIELDS

EXPRESSION_PAYLOAD = EXPRESSION
"""The payload class Hudi's MERGE INTO writes with: the merged row is computed by the command; a stored
record whose ordering value is greater than the merged row's is kept; a matched DELETE always deletes."""


@dataclass(frozen=True)
class WriteContext:
    """What every write task needs; picklable, built once on the driver.

    Attributes:
        storage: table storage.
        base_path: table base path.
        instant_time: the write's instant.
        data_schema: Arrow schema of the table's data columns (no meta columns), as stored.
        avro_schema: the table's Avro schema with the meta fields (footer ``parquet.avro.schema``).
        props: the effective ``hoodie.*`` config (table config overlaid with write options).
        evolution: how to read base files written under older schemas when the table's schema evolved on
            read (their columns are matched by id), else None (matched by name).
    """

    storage: Storage
    base_path: str
    instant_time: str
    data_schema: pa.Schema
    avro_schema: dict[str, Any]
    props: dict[str, str] = field(default_factory=dict)
    evolution: SchemaEvolution | None = None

    @cached_property
    def conf(self) -> HoodieConfig:
        """``props`` as a typed config."""
        return HoodieConfig(self.props)

    @cached_property
    def file_schema(self) -> pa.Schema:
        """Meta columns (nullable strings) followed by the data columns."""
        meta = [pa.field(name, pa.string(), nullable=True) for name in META_FIELDS]
        return pa.schema(meta + list(self.data_schema))

    @property
    def precombine_field(self) -> str | None:
        """The ordering field, if the table has one."""
        return (self.conf.get_optional(TableConfig.PRECOMBINE_FIELD)
                or self.conf.get_optional(WriteConfig.PRECOMBINE_FIELD) or None)

    @property
    def populate_meta_fields(self) -> bool:
        """Whether meta columns other than the file name are filled."""
        return (self.conf.raw(TableConfig.POPULATE_META_FIELDS) or "true").strip().lower() != "false"

    @cached_property
    def payload(self) -> PayloadRules:
        """The rules of the write's payload class (:mod:`engine.payloads`).

        Raises:
            ConfigError: a payload class this engine does not implement.
        """
        return payload_rules(configured_payload(self.conf))

    @property
    def event_time_ordering(self) -> bool:
        """Stored records with a greater ordering value win over incoming ones
        (``DefaultHoodieRecordPayload`` and its subclasses)."""
        return self.payload.event_time

    @property
    def deletes_ignore_ordering(self) -> bool:
        """Deletes remove the stored record whatever its ordering value: a ``delete`` operation (Hudi
        ``EmptyHoodieRecordPayload``) or a MERGE's matched DELETE (``ExpressionPayload``). Deletes flagged
        ``_hoodie_is_deleted`` in an upsert with ``DefaultHoodieRecordPayload`` lose to a greater stored
        ordering value, as Hudi's ``combineAndGetUpdateValue`` compares before it looks at the flag."""
        operation = self.conf.get(WriteConfig.OPERATION).strip().lower()
        payload = (self.conf.raw(WriteConfig.PAYLOAD_CLASS) or "").strip()
        return operation == "delete" or payload == EXPRESSION_PAYLOAD

    @property
    def concat_inserts(self) -> bool:
        """An ``insert`` into a small file keeps the stored records and appends the new ones as they come,
        duplicate keys included (Hudi ``HoodieMergeHandleFactory``: ``HoodieConcatHandle`` when the operation
        does not change records and ``hoodie.merge.allow.duplicate.on.inserts`` is on)."""
        operation = self.conf.get(WriteConfig.OPERATION).strip().lower()
        return operation == "insert" and self.conf.get(WriteConfig.MERGE_ALLOW_DUPLICATE_ON_INSERTS)

    def partition_dir(self, partition_path: str) -> str:
        """Absolute folder of a partition (the base path for non-partitioned tables)."""
        return self.storage.join(self.base_path, partition_path) if partition_path else self.base_path


@dataclass(frozen=True)
class TaskIdentity:
    """Spark task coordinates used in write tokens and sequence numbers."""

    partition_id: int = 0
    stage_id: int = 0
    attempt_id: int = 0

    @property
    def write_token(self) -> str:
        """``<taskPartitionId>-<stageId>-<taskAttemptId>``."""
        return f"{self.partition_id}-{self.stage_id}-{self.attempt_id}"


def with_meta_columns(
    ctx: WriteContext,
    data: pa.Table,
    file_name: str,
    seqnos: pa.Array,
) -> pa.Table:
    """``data`` (with key/partition columns) conformed to the file schema with meta columns set for
    records written by this instant.

    Args:
        ctx: write context.
        data: rows with the data columns, ``_hoodie_record_key`` and ``_hoodie_partition_path``.
        file_name: value of ``_hoodie_file_name`` (the base file name; the file id for log records).
        seqnos: ``_hoodie_commit_seqno`` values, one per row.
    """
    n = data.num_rows
    body = conform_table(data, ctx.data_schema, context=ctx.base_path)
    if ctx.populate_meta_fields:
        meta = [
            constant_column(ctx.instant_time, n),
            seqnos,
            data.column(RECORD_KEY).cast(pa.string()),
            data.column(PARTITION_PATH).cast(pa.string()),
        ]
    else:
        meta = [pa.nulls(n, pa.string()) for _ in range(4)]
    meta.append(constant_column(file_name, n))
    return pa.Table.from_arrays(meta + list(body.columns), schema=ctx.file_schema)


def seqnos(instant: str, task: TaskIdentity, count: int, start: int = 0) -> pa.Array:
    """``<instant>_<taskPartitionId>_<n>`` for n in [start, start + count), built in Arrow."""
    numbers = pc.cast(pa.array(np.arange(start, start + count, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(f"{instant}_{task.partition_id}_", numbers, "")


def constant_column(value: str, count: int) -> pa.Array:
    """A string column holding ``value`` ``count`` times (built from its buffers: one copy of the bytes)."""
    data = value.encode("utf-8")
    if not data or count * len(data) >= 2**31:
        return pc.fill_null(pa.nulls(count, pa.string()), value)
    offsets = np.arange(0, (count + 1) * len(data), len(data), dtype=np.int32)
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data * count))


def start_base_file(ctx: WriteContext, partition: str, file_name: str, io_type: IOType, task: TaskIdentity) -> str:
    """Write the marker of the base file ``file_name`` in ``partition`` and the partition's metafile (Hudi
    ``HoodieWriteHandle.createMarkerFile`` + ``HoodiePartitionMetadata``); returns the file's full path.

    Raises:
        StorageError: the marker cannot be created.
    """
    create_marker(ctx.storage, ctx.base_path, ctx.instant_time, Marker(partition, file_name, io_type))
    write_partition_metadata(ctx.storage, ctx.base_path, partition, ctx.instant_time, task.partition_id)
    return ctx.storage.join(ctx.partition_dir(partition), file_name)


def open_base_writer(
    ctx: WriteContext, partition: str, file_name: str, io_type: IOType, task: TaskIdentity
) -> BaseFileWriter:
    """A writer of the base file ``file_name`` in ``partition``, after its marker and the partition's metafile
    (Hudi ``HoodieWriteHandle.createMarkerFile`` + ``HoodiePartitionMetadata``).

    Raises:
        StorageError: the marker or the file cannot be created.
    """
    return BaseFileWriter(
        ctx.storage,
        start_base_file(ctx, partition, file_name, io_type, task),
        ctx.file_schema,
        ctx.avro_schema,
        ctx.conf,
        populate_meta_fields=ctx.populate_meta_fields,
    )


def write_stat(
    ctx: WriteContext, partition: str, file_id: str, file_name: str, prev_commit: str, size: int,
    *, writes: int, inserts: int, updates: int = 0, deletes: int = 0, elapsed_ms: int = 0,
) -> WriteStat:
    """The write stat of one written base file (sizes in bytes, ``elapsed_ms`` as create or upsert time)."""
    path = f"{partition}/{file_name}" if partition else file_name
    return WriteStat(
        file_id=file_id,
        path=path,
        prev_commit=prev_commit,
        num_writes=writes,
        num_deletes=deletes,
        num_update_writes=updates,
        num_inserts=inserts,
        total_write_bytes=size,
        total_write_errors=0,
        partition_path=partition,
        file_size_in_bytes=size,
        runtime_stats=RuntimeStats(total_scan_time=0, total_upsert_time=elapsed_ms if updates else 0,
                                   total_create_time=0 if updates else elapsed_ms),
    )


def create_file_group(
    ctx: WriteContext, partition: str, file_id: str, records: pa.Table, task: TaskIdentity
) -> list[WriteStat]:
    """Write new records (after precombine de-duplication) into a new file group.

    Args:
        ctx: write context.
        partition: relative partition path.
        file_id: the new file group id.
        records: incoming rows with data columns and ``_hoodie_record_key`` / ``_hoodie_partition_path``;
            rows flagged ``_hoodie_is_deleted`` are dropped.
        task: Spark task coordinates.

    Returns:
        One write stat (none when no record survives).
    """
    start = time.monotonic()
    combine = ctx.conf.get(WriteConfig.COMBINE_BEFORE_UPSERT)
    if combine and ctx.populate_meta_fields:
        records = dedupe_by_key(records, ctx.precombine_field, ctx.payload.first_on_ties)
    mask = deleted_mask(records)
    if mask.any():
        records = records.filter(pa.array(~mask))
    if records.num_rows == 0:
        return []
    file_name = base_file_name(file_id, task.write_token, ctx.instant_time)
    writer = open_base_writer(ctx, partition, file_name, IOType.CREATE, task)
    try:
        writer.write(with_meta_columns(ctx, records, file_name, seqnos(ctx.instant_time, task, records.num_rows)))
    finally:
        stats = writer.close()
    elapsed = int((time.monotonic() - start) * 1000)
    return [write_stat(ctx, partition, file_id, file_name, "null", stats.file_size,
                  writes=stats.num_rows, inserts=stats.num_rows, elapsed_ms=elapsed)]


BULK_INSERT_BATCH_ROWS = 100_000
"""Rows a bulk-insert task gathers before splitting them by partition and writing (Spark hands Python tasks
Arrow batches of ``spark.sql.execution.arrow.maxRecordsPerBatch``, 10,000 rows by default). Each batch costs the
same fixed work (a partition split, meta columns, key bounds, bloom hashing per file): on TPC-H ``lineitem``
(7 partitions) 1M rows took 6.3 s in 10,000-row batches and 3.6 s in 100,000-row ones, one core."""

ROLLOVER_CHECK_ROWS = 20_000
"""At most this many rows go into a base file between two checks of ``hoodie.parquet.max.file.size``."""


class _GatheringWriter(ABC):
    """What both bulk-insert writers share: rows gathered up to ``batch_rows`` before :meth:`_write_rows` takes
    them, sequence numbers counted across the task's files, and each closed file's write stat."""

    def __init__(self, ctx: WriteContext, task: TaskIdentity, batch_rows: int) -> None:
        self._ctx = ctx
        self._task = task
        self._seq = 0
        self._stats: list[WriteStat] = []
        self._batch_rows = max(1, batch_rows)
        self._gathered: list[pa.Table] = []
        self._gathered_rows = 0

    def write(self, records: pa.Table) -> None:
        """Append rows (data columns + ``_hoodie_record_key`` / ``_hoodie_partition_path``)."""
        if records.num_rows == 0:
            return
        self._gathered.append(records)
        self._gathered_rows += records.num_rows
        if self._gathered_rows >= self._batch_rows:
            self._write_gathered()

    def _write_gathered(self) -> None:
        if not self._gathered:
            return
        records = pa.concat_tables(self._gathered) if len(self._gathered) > 1 else self._gathered[0]
        self._gathered, self._gathered_rows = [], 0
        self._write_rows(records)

    @abstractmethod
    def _write_rows(self, records: pa.Table) -> None:
        """Write gathered rows into the writer's files."""

    def _append(self, writer: BaseFileWriter, file_name: str, rows: pa.Table) -> None:
        seq = seqnos(self._ctx.instant_time, self._task, rows.num_rows, self._seq)
        self._seq += rows.num_rows
        writer.write(with_meta_columns(self._ctx, rows, file_name, seq))

    def _finish(self, partition: str, file_id: str, file_name: str, writer: BaseFileWriter, started: float) -> None:
        stats = writer.close()
        elapsed = int((time.monotonic() - started) * 1000)
        self._stats.append(write_stat(self._ctx, partition, file_id, file_name, "null", stats.file_size,
                                      writes=stats.num_rows, inserts=stats.num_rows, elapsed_ms=elapsed))


class BulkInsertWriter(_GatheringWriter):
    """Streams rows of one task into new file groups, one open base file per partition path, rolling over
    at ``hoodie.parquet.max.file.size`` (Hudi ``BulkInsertDataInternalWriterHelper``).

    Rows are gathered up to :data:`BULK_INSERT_BATCH_ROWS` before they are split by partition and written
    (:meth:`close` writes the rest); a file's rows keep the order they came in.

    Args:
        ctx: write context.
        task: Spark task coordinates.
        batch_rows: rows gathered before a write (tests use small values).
    """

    def __init__(self, ctx: WriteContext, task: TaskIdentity, batch_rows: int = BULK_INSERT_BATCH_ROWS) -> None:
        super().__init__(ctx, task, batch_rows)
        self._max_size = ctx.conf.get(WriteConfig.PARQUET_MAX_FILE_SIZE)
        self._open: dict[str, tuple[str, str, BaseFileWriter, float]] = {}

    def _write_rows(self, records: pa.Table) -> None:
        partitions = records.column(PARTITION_PATH).combine_chunks()
        if partitions.null_count:
            raise WriteError(f"bulk insert into {self._ctx.base_path}: {partitions.null_count} row(s) have no "
                             f"{PARTITION_PATH}")
        if pc.all(pc.equal(partitions, partitions[0])).as_py():
            self._write_partition(str(partitions[0].as_py()), records)
            return
        # One stable sort by partition, then a slice per partition (one pass over the rows, not one per partition).
        encoded = partitions.dictionary_encode()
        order = pc.sort_indices(encoded.indices)
        grouped = records.take(order)
        codes = encoded.indices.take(order).to_numpy(zero_copy_only=False)
        starts = [0, *(np.flatnonzero(np.diff(codes)) + 1).tolist()]
        ends = [*starts[1:], len(codes)]
        names = encoded.dictionary.to_pylist()
        for start, end in zip(starts, ends, strict=True):
            self._write_partition(str(names[int(codes[start])]), grouped.slice(start, end - start))

    def _write_partition(self, partition: str, rows: pa.Table) -> None:
        for start in range(0, rows.num_rows, ROLLOVER_CHECK_ROWS):
            self._write_to_open_file(partition, rows.slice(start, ROLLOVER_CHECK_ROWS))

    def _write_to_open_file(self, partition: str, rows: pa.Table) -> None:
        if partition not in self._open:
            file_id = new_file_id()
            file_name = base_file_name(file_id, self._task.write_token, self._ctx.instant_time)
            writer = open_base_writer(self._ctx, partition, file_name, IOType.CREATE, self._task)
            self._open[partition] = (file_id, file_name, writer, time.monotonic())
        file_id, file_name, writer, _ = self._open[partition]
        self._append(writer, file_name, rows)
        if writer.bytes_written >= self._max_size:
            self._close(partition)

    def _close(self, partition: str) -> None:
        self._finish(partition, *self._open.pop(partition))

    def close(self) -> list[WriteStat]:
        """Write the gathered rows, close every open file; the stats of all files written."""
        self._write_gathered()
        for partition in list(self._open):
            self._close(partition)
        return self._stats


class BucketBulkInsertWriter(_GatheringWriter):
    """Streams one task's rows into new bucket file groups, exactly one base file per ``(partition, bucket)``
    (Hudi ``BucketBulkInsertDataInternalWriterHelper`` after ``BucketIndexBulkInsertPartitionerWithRows``).

    The rows carry ``_hoodie_record_key``, ``_hoodie_partition_path`` and ``_hoodie_bucket_id`` and arrive
    sorted by partition and bucket, every row of a bucket in this task (the caller repartitions and sorts
    by both): one file is open at a time, closed when the next bucket begins. A file never rolls over at
    ``hoodie.parquet.max.file.size`` (a bucket is one file group). The file id is a new bucket file id
    (:func:`engine.index.bucket.bucket_file_id`). Rows are gathered up to ``batch_rows`` before they are split
    by bucket and written, as :class:`BulkInsertWriter` gathers them.

    Raises:
        WriteError: a row has no partition path or bucket, or a bucket's rows come after another bucket's
            (the input was not grouped by bucket).
    """

    def __init__(self, ctx: WriteContext, task: TaskIdentity, batch_rows: int = BULK_INSERT_BATCH_ROWS) -> None:
        super().__init__(ctx, task, batch_rows)
        self._current: tuple[str, int] | None = None
        self._open: tuple[str, str, BaseFileWriter, float] | None = None
        self._done: set[tuple[str, int]] = set()

    def _write_rows(self, records: pa.Table) -> None:
        partitions = records.column(PARTITION_PATH).combine_chunks()
        buckets = records.column(BUCKET_ID).combine_chunks()
        if partitions.null_count or buckets.null_count:
            raise WriteError(f"bulk insert into {self._ctx.base_path}: rows without {PARTITION_PATH} or "
                             f"{BUCKET_ID}")
        data = records.drop_columns([BUCKET_ID])
        part_codes = partitions.dictionary_encode()
        codes = part_codes.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        bucket_values = buckets.to_numpy(zero_copy_only=False).astype(np.int64)
        change = np.flatnonzero((np.diff(codes) != 0) | (np.diff(bucket_values) != 0)) + 1
        starts = [0, *change.tolist()]
        ends = [*starts[1:], records.num_rows]
        names = part_codes.dictionary.to_pylist()
        for start, end in zip(starts, ends, strict=True):
            key = (str(names[int(codes[start])]), int(bucket_values[start]))
            self._write_bucket(key, data.slice(start, end - start))

    def _write_bucket(self, key: tuple[str, int], rows: pa.Table) -> None:
        if key != self._current:
            if key in self._done:
                raise WriteError(f"bulk insert into {self._ctx.base_path}: rows of bucket {key[1]} of partition "
                                 f"'{key[0]}' came after other buckets' rows; a bucket must be written as one file")
            self._close()
            partition, bucket = key
            file_id = bucket_file_id(bucket)
            file_name = base_file_name(file_id, self._task.write_token, self._ctx.instant_time)
            writer = open_base_writer(self._ctx, partition, file_name, IOType.CREATE, self._task)
            self._current, self._open = key, (file_id, file_name, writer, time.monotonic())
        assert self._open is not None
        _, file_name, writer, _ = self._open
        self._append(writer, file_name, rows)

    def _close(self) -> None:
        if self._current is None or self._open is None:
            return
        self._finish(self._current[0], *self._open)
        self._done.add(self._current)
        self._current, self._open = None, None

    def close(self) -> list[WriteStat]:
        """Write the gathered rows and close the open file; the stats of every file written."""
        self._write_gathered()
        self._close()
        return self._stats
