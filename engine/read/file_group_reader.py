"""The file-group reader (Hudi ``HoodieFileGroupReader``): the rows of one file slice, conformed to the
schema a query asked for, with incremental commit-time filtering.

Copy-on-write slices (and read-optimized queries) are base files only. Merge-on-read slices with log files
are merged by :mod:`engine.read.log_merger` (Hudi ``HoodieMergedLogRecordScanner`` + payload combine).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import UnsupportedTable
from engine.formats.avro_schema import META_FIELDS
from engine.formats.conform import conform_table
from engine.formats.log_format import LogBlock
from engine.read.base_reader import read_base_batches
from engine.read.log_merger import filter_commit_range, merge_file_slice, scan_log_blocks, work_schema
from engine.read.planner import QueryPlan, ReadSplit, takes_path_value
from engine.storage import Storage

COMMIT_TIME = META_FIELDS[0]


def read_split(
    storage: Storage, split: ReadSplit, schema: pa.Schema, plan: QueryPlan, batch_rows: int = 131072
) -> Iterator[pa.RecordBatch]:
    """Yield the rows of ``split`` as record batches of exactly ``schema``.

    Args:
        storage: table storage.
        split: the file slice.
        schema: requested Arrow schema (columns matched by name, case-insensitive; missing ones null).
        plan: the query plan (incremental range, visible instants, merge settings).
        batch_rows: rows per batch read from parquet.

    Raises:
        UnsupportedTable: the slice has log files but the plan has no merge settings, or the table's
            payload class is not supported.
        CorruptFile: undecodable log block content or null record keys (corrupt log regions are skipped
            with a warning, never raised).
        SchemaMismatch: data that cannot be conformed to ``schema``.
    """
    batches = _read_slice(storage, split, schema, plan, batch_rows)
    columns = plan.partition_columns
    if columns is None:
        yield from batches
        return
    values = columns.values(split.partition_path)
    if values is None:
        if columns.in_files:  # a path that does not parse: the stored values stand
            yield from batches
            return
        values = dict.fromkeys((name.lower() for name in columns.names), None)
    for batch in batches:
        yield fill_partition_columns(batch, values, keep_stored=columns.in_files)


def fill_partition_columns(batch: pa.RecordBatch, values: dict[str, str | None], *,
                           keep_stored: bool = False) -> pa.RecordBatch:
    """``batch`` with the columns named in ``values`` (lower-cased) set to that value, cast to the column's
    type (Spark's partition value parsing).

    Args:
        batch: the rows.
        values: lower-cased column name → the partition path's text for it (None for null).
        keep_stored: the batch holds the stored values (the files keep the partition columns): a column whose
            type does not take a path value (:func:`engine.read.planner.takes_path_value`), or whose value does
            not cast, keeps them. Otherwise such a value is null.
    """
    columns = []
    for field, column in zip(batch.schema, batch.columns, strict=True):
        name = field.name.lower()
        if name in values and not (keep_stored and not takes_path_value(field.type)):
            raw = pa.array([values[name]] * batch.num_rows, pa.string())
            try:
                column = pc.cast(raw, field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                if not keep_stored:
                    column = pa.nulls(batch.num_rows, field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _read_slice(
    storage: Storage, split: ReadSplit, schema: pa.Schema, plan: QueryPlan, batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """The slice's rows (partition columns that files leave out are null here)."""
    if split.log_files:
        blocks = scan_log_blocks(storage, split.log_files, plan.block_filter())
        if blocks:
            yield from _read_merged(storage, split, schema, plan, blocks, batch_rows)
            return
    if split.base_file is None:
        return
    names = [f.name for f in schema]
    if plan.begin is not None and COMMIT_TIME not in names:
        names.append(COMMIT_TIME)
    for table in read_base_batches(storage, split.base_file, names, batch_rows, plan.evolution):
        if plan.begin is not None and COMMIT_TIME in table.column_names:
            times = table.column(COMMIT_TIME)
            keep = pc.and_(pc.greater(times, plan.begin), pc.less_equal(times, plan.end))
            table = table.filter(keep)
            if table.num_rows == 0:
                continue
        yield from conform_table(table, schema, context=split.base_file).to_batches()


def _read_merged(
    storage: Storage, split: ReadSplit, schema: pa.Schema, plan: QueryPlan, blocks: list[LogBlock],
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """Merge-on-read path of :func:`read_split`."""
    where = (f"file slice {split.file_id} (base instant {split.base_instant}) in partition "
             f"'{split.partition_path}'")
    if plan.merge is None:
        raise UnsupportedTable(f"{where} has log files but the query plan carries no merge settings")
    work = work_schema(schema, plan.merge)
    for table in merge_file_slice(storage, split.base_file, blocks, work, plan.merge, batch_rows=batch_rows,
                                  context=where):
        if plan.begin is not None:
            table = filter_commit_range(table, plan.begin, plan.end)
        if table.num_rows:
            yield from conform_table(table, schema, context=where).to_batches()
