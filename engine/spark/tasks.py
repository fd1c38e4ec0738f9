"""Executor-side functions handed to Spark (``mapInArrow`` / ``applyInArrow``).

Each factory returns a closure over picklable, driver-built state; the closure only calls pure pyarrow
code from :mod:`engine.write`, :mod:`engine.index` and :mod:`engine.keygen`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.broadcast import Broadcast
from pyspark.sql import DataFrame

from engine.config import HoodieConfig
from engine.formats.conform import conform_table
from engine.formats.parquet_source import read_split
from engine.index.bloom import lookup_files
from engine.index.simple import KeyedFile, read_key_locations
from engine.keygen import KeyGenerator
from engine.spark.source_scan import DirectSource
from engine.storage import Storage
from engine.timeline.commit_metadata import WriteStat
from engine.write.append_handle import LatestSlice, LogVersions, append_to_file_group
from engine.write.handles import (
    BucketBulkInsertWriter,
    BulkInsertWriter,
    TaskIdentity,
    WriteContext,
    create_file_group,
)
from engine.write.merge_handle import merge_file_group
from engine.write.planner import BucketKind, WritePlan
from engine.write.prepare import BUCKET, FILE_ID, KEY_HASH, PARTITION_PATH, RECORD_KEY

STATS_COLUMN = "stat"
STATS_SCHEMA_DDL = f"{STATS_COLUMN} string"

ArrowBatchFn = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def current_task() -> TaskIdentity:
    """Coordinates of the running Spark task (zeros outside a task)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return TaskIdentity()
    return TaskIdentity(ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId())


def stats_batch(stats: list[WriteStat]) -> pa.RecordBatch:
    """Write stats as a one-column record batch of JSON strings (what tasks return to the driver)."""
    return pa.RecordBatch.from_arrays(
        [pa.array([json.dumps(s.to_dict()) for s in stats], pa.string())], names=[STATS_COLUMN]
    )


def collect_stats(written: DataFrame) -> list[WriteStat]:
    """Run the write job ``written`` (a frame of :data:`STATS_SCHEMA_DDL` rows, from functions yielding
    :func:`stats_batch`) and decode the stats its tasks returned."""
    return [WriteStat.from_dict(json.loads(row[0])) for row in written.collect()]


def add_keys_fn(props: dict[str, str], key_schema: pa.Schema, with_partition: bool = True,
                with_record_key: bool = True) -> ArrowBatchFn:
    """``mapInArrow`` function appending ``_hoodie_record_key`` (unless ``with_record_key`` is False: a
    keyless table's partition path alone) and (``with_partition``) ``_hoodie_partition_path``.

    Args:
        props: table config overlaid with write options (key generator settings).
        key_schema: table types of the record-key and partition columns (values are conformed to these
            before key generation, so keys are rendered from the stored types).
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keygen = KeyGenerator.from_config(HoodieConfig(props))
        for batch in batches:
            fields = conform_table(batch, key_schema)
            columns = [*batch.columns, keygen.record_keys(fields)] if with_record_key else list(batch.columns)
            names = [*batch.schema.names, RECORD_KEY] if with_record_key else list(batch.schema.names)
            if with_partition:
                columns.append(keygen.partition_paths(fields))
                names.append(PARTITION_PATH)
            yield pa.RecordBatch.from_arrays(columns, names=names)

    return run


def read_keys_fn(storage: Storage, props: dict[str, str], groups: list[list[KeyedFile]],
                 wanted: Broadcast[pa.Array] | None = None,
                 by_partition: Broadcast[dict[str, pa.Array]] | None = None, bloom: bool = False) -> ArrowBatchFn:
    """``mapInArrow`` function over ``spark.range(len(groups))``: for each id, the
    ``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of every file of that group (base
    files, or log files); with ``wanted`` (a broadcast ``pa.string()`` array), only the rows whose key is in
    it, or with ``by_partition`` (partition → keys) only those of the file's partition. With ``bloom`` (and
    keys to look for) each base file is first pruned by its key range and bloom filter
    (:func:`engine.index.bloom.lookup_file`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        conf = HoodieConfig(props)
        keep = wanted.value if wanted is not None else None
        per_partition = by_partition.value if by_partition is not None else None
        for batch in batches:
            for group in batch.column(0).to_pylist():
                if bloom and (keep is not None or per_partition is not None):
                    yield from lookup_files(storage, groups[group], per_partition, keep, conf).to_batches()
                    continue
                for file in groups[group]:
                    among = per_partition.get(file.partition_path, pa.array([], pa.string())) \
                        if per_partition is not None else keep
                    yield from read_key_locations(storage, file, conf, among).to_batches()

    return run


def assign_buckets_fn(plan: WritePlan) -> ArrowBatchFn:
    """``mapInArrow`` function appending ``_hoodie_bucket``: the update bucket of the record's file group,
    or the insert bucket chosen by the key hash against the partition's cumulative weights."""
    update_ids = pa.array(list(plan.update_buckets), pa.string())
    update_buckets = np.array(list(plan.update_buckets.values()) or [0], dtype=np.int32)
    weights = {
        p: (np.array([w for w, _ in ws]), np.array([b for _, b in ws], dtype=np.int32))
        for p, ws in plan.insert_weights.items()
    }

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            n = batch.num_rows
            buckets = np.full(n, -1, dtype=np.int32)
            file_ids = batch.column(batch.schema.get_field_index(FILE_ID))
            idx = pc.index_in(file_ids, value_set=update_ids)
            known = np.asarray(idx.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            if known.any():
                pos = np.asarray(pc.fill_null(idx, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
                buckets[known] = update_buckets[pos[known]]
            if not known.all():
                partitions = np.asarray(
                    batch.column(batch.schema.get_field_index(PARTITION_PATH)).to_numpy(zero_copy_only=False),
                    dtype=object,
                )
                hashes = np.asarray(
                    batch.column(batch.schema.get_field_index(KEY_HASH)).to_numpy(zero_copy_only=False),
                    dtype=np.int64,
                )
                fraction = np.mod(hashes, 10_000) / 10_000.0
                for partition in set(partitions[~known].tolist()):
                    rows = (~known) & (partitions == partition)
                    cumulative, ids = weights[partition]
                    slot = np.minimum(np.searchsorted(cumulative, fraction[rows], side="right"), len(ids) - 1)
                    buckets[rows] = ids[slot]
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, pa.array(buckets, pa.int32())], names=[*batch.schema.names, BUCKET]
            )

    return run


def write_bucket_fn(
    ctx: WriteContext, plan: WritePlan, append_slices: dict[str, LatestSlice] | None = None
) -> Callable[[Any, pa.Table], pa.Table]:
    """``applyInArrow`` function writing one bucket (file group) and returning its write stats.

    Args:
        ctx: write context.
        plan: the buckets.
        append_slices: merge-on-read file groups (by file id) whose updates and deletes are appended to
            a log file of this latest slice instead of rewriting the base file.
    """
    appends = append_slices or {}
    per_task: dict[TaskIdentity, LogVersions] = {}  # one listing per partition and task, never across tasks

    def run(key: Any, table: pa.Table) -> pa.Table:
        bucket = plan.buckets[int(key[-1].as_py())]  # grouped by (slot, bucket): the bucket is the last key
        task = current_task()
        if bucket.kind is BucketKind.UPDATE and bucket.file_id in appends:
            if task not in per_task:
                per_task.clear()
                per_task[task] = LogVersions(ctx)
            stats = append_to_file_group(ctx, appends[bucket.file_id], table, task, per_task[task])
        elif bucket.kind is BucketKind.UPDATE and bucket.existing is not None:
            stats = merge_file_group(ctx, bucket.existing, table, task)
        else:
            stats = create_file_group(ctx, bucket.partition_path, bucket.file_id, table, task)
        return pa.Table.from_batches([stats_batch(stats)])

    return run


def bulk_insert_fn(
    ctx: WriteContext, key_props: dict[str, str] | None = None, key_schema: pa.Schema | None = None,
    source: DirectSource | None = None,
) -> ArrowBatchFn:
    """``mapInArrow`` function streaming a task's rows into new file groups (bulk insert).

    With ``key_props`` the rows carry no keys yet and the task computes them (one pass over the data);
    otherwise they already have ``_hoodie_record_key`` / ``_hoodie_partition_path``. With ``source`` the
    function runs over ``spark.range(len(source.splits))``: each input row is a split ordinal, and the task reads
    that split's parquet row groups itself (:func:`engine.formats.parquet_source.read_split`).
    """
    add_keys = add_keys_fn(key_props, key_schema) if key_props is not None and key_schema is not None else None

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        writer = BulkInsertWriter(ctx, current_task())
        rows = batches if source is None else _read_splits(source, batches)
        keyed = add_keys(rows) if add_keys is not None else rows
        for batch in keyed:
            writer.write(pa.Table.from_batches([batch]))
        yield stats_batch(writer.close())

    return run


def _read_splits(source: DirectSource, ordinals: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in ordinals:
        for ordinal in batch.column(0).to_pylist():
            yield from read_split(source.storage, source.splits[ordinal], source.program)


def bucket_bulk_insert_fn(ctx: WriteContext) -> ArrowBatchFn:
    """``mapInArrow`` function writing a task's rows, keyed, with their ``_hoodie_bucket_id`` and sorted by
    partition and bucket, into one new file group per bucket (:class:`engine.write.handles.BucketBulkInsertWriter`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        writer = BucketBulkInsertWriter(ctx, current_task())
        for batch in batches:
            writer.write(pa.Table.from_batches([batch]))
        yield stats_batch(writer.close())

    return run
