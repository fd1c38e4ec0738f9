"""Executor-side work of a clustering (Hudi ``SparkSortAndSizeExecutionStrategy``): read a group's file slices
as a snapshot query reads them, order the rows, write them into new file groups. Plain pyarrow; the Spark
side (:mod:`engine.spark.clustering`) only decides which task does what.

Rows keep their meta columns (``preserveHoodieMetadata``, the default) except ``_hoodie_file_name``; with
``hoodie.clustering.preserve.commit.metadata=false`` they get the clustering instant as commit time and new
sequence numbers. A task rolls over to a new file group when its file reaches
``hoodie.clustering.plan.strategy.target.file.max.bytes``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import ClusteringConfig, HoodieConfig, LayoutConfig, WriteConfig
from engine.errors import TableServiceError
from engine.filegroup.naming import base_file_name, new_file_id
from engine.formats.avro_schema import META_FIELDS, avro_to_arrow
from engine.formats.base_file import BaseFileWriter
from engine.read.file_group_reader import read_split
from engine.read.log_scan import MergeSettings
from engine.read.planner import QueryPlan, QueryType, ReadSplit
from engine.services.clustering import ClusteringGroup, ClusteringPlan, ClusteringSlice, file_schemas
from engine.services.layout import LINEAR, curve_key, layout_strategy
from engine.table import Table
from engine.timeline.commit_metadata import WriteStat
from engine.write.handles import TaskIdentity, WriteContext, open_base_writer, seqnos, write_stat
from engine.write.markers import IOType

CURVE_KEY = "_hoodie_clustering_curve_key"
"""Column holding the space-filling-curve key while rows are ordered (never written)."""
_PER_KEY_NULL_PLACEMENT = int(pa.__version__.split(".")[0]) >= 25
"""pyarrow 25 takes the null placement per sort key (the option for all keys is deprecated)."""
ARROW_BYTES_PER_FILE_BYTE = 4
"""Estimate of in-memory Arrow bytes per byte of parquet/log input, for deciding where a group is sorted."""


@dataclass(frozen=True)
class ClusteringContext:
    """What a clustering task needs; picklable, built once on the driver.

    Attributes:
        write: the write context of the clustering instant (schemas, props, storage).
        read_plan: snapshot-read settings (committed instants, merge settings, schema evolution).
        sort_columns: the order columns (empty: read order).
        strategy: ``linear``, ``z-order`` or ``hilbert``.
        target_bytes: size at which a task starts a new file group.
        preserve_metadata: rows keep commit time and seqno.
    """

    write: WriteContext
    read_plan: QueryPlan
    sort_columns: tuple[str, ...]
    strategy: str
    target_bytes: int
    preserve_metadata: bool

    @property
    def instant_time(self) -> str:
        """The clustering instant."""
        return self.write.instant_time


def clustering_context(table: Table, instant_time: str, plan: ClusteringPlan, conf: HoodieConfig) -> ClusteringContext:
    """Build the task context on the driver.

    Raises:
        TableServiceError: the table has no schema.
        ConfigError: bad layout strategy.
    """
    avro, evolution = file_schemas(table, instant_time)
    file_schema = avro_to_arrow(avro)
    data_schema = pa.schema([f for f in file_schema if f.name not in META_FIELDS])
    target = conf.get(ClusteringConfig.TARGET_FILE_MAX_BYTES)
    props = conf.overlay({WriteConfig.PARQUET_MAX_FILE_SIZE.key: str(target)}).as_dict()
    write = WriteContext(table.storage, table.base_path, instant_time, data_schema, avro, props, evolution)
    timeline = table.timeline
    completed = [i.timestamp for i in timeline.completed_commits() if i.timestamp < instant_time]
    merge = replace(MergeSettings.from_table(table, conf), evolution=evolution) if table.is_mor else None
    pending = frozenset(i.timestamp for i in timeline.pending_commits())
    read_plan = QueryPlan((), QueryType.SNAPSHOT, None, None, None, frozenset(completed),
                          completed[0] if completed else None, pending, merge, evolution, None)
    strategy = layout_strategy(conf.get(LayoutConfig.STRATEGY))
    return ClusteringContext(write, read_plan, tuple(plan.sort_columns), strategy, target, plan.preserve_metadata)


def slice_split(ctx: ClusteringContext, s: ClusteringSlice) -> ReadSplit:
    """The read split of one input slice (paths under the table's base path)."""
    storage = ctx.write.storage
    folder = ctx.write.partition_dir(s.partition_path)
    base = storage.join(folder, s.base_file) if s.base_file else None
    return ReadSplit(s.partition_path, s.file_id, s.base_instant, base,
                     tuple(storage.join(folder, name) for name in s.log_files), 0)


def read_slices(ctx: ClusteringContext, slices: Iterable[ClusteringSlice]) -> Iterator[pa.Table]:
    """The current rows of ``slices`` (logs merged), with meta columns, in the file schema.

    Raises:
        TableServiceError: a file of a slice is missing or unreadable.
    """
    schema = ctx.write.file_schema
    for s in slices:
        try:
            for batch in read_split(ctx.write.storage, slice_split(ctx, s), schema, ctx.read_plan):
                if batch.num_rows:
                    yield pa.Table.from_batches([batch])
        except OSError as exc:
            raise TableServiceError(f"clustering {ctx.instant_time}: cannot read file group {s.file_id} in "
                                    f"'{s.partition_path}': {exc}") from exc


def with_curve_key(rows: pa.Table, ctx: ClusteringContext) -> pa.Table:
    """``rows`` plus the :data:`CURVE_KEY` column (z-order / hilbert)."""
    return rows.append_column(CURVE_KEY, curve_key(rows, ctx.sort_columns, ctx.strategy))


def order_rows(rows: pa.Table, ctx: ClusteringContext) -> pa.Table:
    """``rows`` in clustering order: by the sort columns (nulls first, as Spark sorts) or their curve key."""
    if not ctx.sort_columns or rows.num_rows < 2:
        return rows
    if ctx.strategy == LINEAR:
        names = {n.lower(): n for n in rows.column_names}
        if _PER_KEY_NULL_PLACEMENT:
            keys: list[tuple[str, ...]] = [(names[c.lower()], "ascending", "at_start") for c in ctx.sort_columns]
            return _take(rows, pc.sort_indices(rows, sort_keys=keys))
        keys = [(names[c.lower()], "ascending") for c in ctx.sort_columns]
        return _take(rows, pc.sort_indices(rows, sort_keys=keys, null_placement="at_start"))
    keyed = with_curve_key(rows, ctx)
    return _take(rows, pc.sort_indices(keyed, sort_keys=[(CURVE_KEY, "ascending")]))


def _take(rows: pa.Table, order: pa.Array) -> pa.Table:
    """``rows`` reordered by ``order``, columns gathered on two threads (a third faster than ``Table.take``)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        columns = list(pool.map(lambda column: pc.take(column, order), rows.columns))
    return pa.Table.from_arrays(columns, schema=rows.schema)


class ClusteredFileWriter:
    """Writes ordered rows of one partition into new file groups, rolling over at the target size.

    Args:
        ctx: the clustering context.
        partition: relative partition path.
        task: Spark task coordinates (write token, sequence numbers).
    """

    def __init__(self, ctx: ClusteringContext, partition: str, task: TaskIdentity) -> None:
        self._ctx = ctx
        self._partition = partition
        self._task = task
        self._open: tuple[str, str, BaseFileWriter, float] | None = None
        self._stats: list[WriteStat] = []
        self._seq = 0
        self._files = 0

    def start_new_file_group(self) -> None:
        """Close the open file (if any); the next rows go to a new file group."""
        if self._open is None:
            return
        file_id, file_name, writer, started = self._open
        self._open = None
        stats = writer.close()
        elapsed = int((time.monotonic() - started) * 1000)
        self._stats.append(write_stat(self._ctx.write, self._partition, file_id, file_name, "null",
                                      stats.file_size, writes=stats.num_rows, inserts=stats.num_rows,
                                      elapsed_ms=elapsed))

    def write(self, rows: pa.Table) -> None:
        """Append rows (file schema, meta columns set; extra columns such as the curve key are dropped)."""
        if rows.num_rows == 0:
            return
        schema = self._ctx.write.file_schema
        rows = rows.select(schema.names)
        if self._open is None:
            file_id = new_file_id(self._files)
            self._files += 1
            file_name = base_file_name(file_id, self._task.write_token, self._ctx.instant_time)
            writer = open_base_writer(self._ctx.write, self._partition, file_name, IOType.CREATE, self._task)
            self._open = (file_id, file_name, writer, time.monotonic())
        _, file_name, writer, _ = self._open
        n = rows.num_rows
        rows = rows.set_column(schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name",
                               pc.fill_null(pa.nulls(n, pa.string()), file_name))
        if not self._ctx.preserve_metadata:
            rows = rows.set_column(0, "_hoodie_commit_time",
                                   pc.fill_null(pa.nulls(n, pa.string()), self._ctx.instant_time))
            rows = rows.set_column(1, "_hoodie_commit_seqno",
                                   seqnos(self._ctx.instant_time, self._task, n, self._seq))
            self._seq += n
        writer.write(rows)
        if writer.bytes_written >= self._ctx.target_bytes:
            self.start_new_file_group()

    def close(self) -> list[WriteStat]:
        """Close the open file; the stats of every file written."""
        self.start_new_file_group()
        return self._stats


def write_ordered(ctx: ClusteringContext, partition: str, batches: Iterable[pa.Table], task: TaskIdentity) -> \
        list[WriteStat]:
    """Write already ordered rows of one partition into new file groups (one Spark range partition)."""
    writer = ClusteredFileWriter(ctx, partition, task)
    for rows in batches:
        writer.write(rows)
    return writer.close()


def estimated_memory(group: ClusteringGroup) -> int:
    """Bytes of Arrow memory a group takes when it is sorted in one task (input bytes ×
    :data:`ARROW_BYTES_PER_FILE_BYTE`)."""
    read_mb = group.metrics.get("TOTAL_IO_READ_MB", 0.0)
    return int((read_mb + 1) * 2**20 * ARROW_BYTES_PER_FILE_BYTE)


def cluster_group(ctx: ClusteringContext, group: ClusteringGroup, task: TaskIdentity) -> list[WriteStat]:
    """Cluster one group inside one task: read every slice, order the rows, write them as
    ``num_output_file_groups`` contiguous runs (each its own file group, rolling over at the target size).

    Raises:
        TableServiceError: a file of the group cannot be read.
    """
    parts = list(read_slices(ctx, group.slices))
    if not parts:
        return []
    rows = order_rows(pa.concat_tables(parts).combine_chunks(), ctx)
    del parts
    outputs = max(1, min(group.num_output_file_groups, rows.num_rows))
    per_output = -(-rows.num_rows // outputs)
    writer = ClusteredFileWriter(ctx, group.partition_path, task)
    for start in range(0, rows.num_rows, per_output):
        writer.write(rows.slice(start, per_output))
        writer.start_new_file_group()
    return writer.close()


def group_slices(groups: Sequence[ClusteringGroup]) -> list[tuple[int, ClusteringSlice]]:
    """``(group index, slice)`` for every slice of ``groups``."""
    return [(i, s) for i, g in enumerate(groups) for s in g.slices]
