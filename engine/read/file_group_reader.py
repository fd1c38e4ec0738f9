"""The file-group reader (Hudi ``HoodieFileGroupReader``): the rows of one file slice, conformed to the
schema a query asked for, with incremental commit-time filtering.

Copy-on-write slices are base files only. Merge-on-read slices with log files need the log merger,
which this module does not implement yet (it raises :class:`UnsupportedTable` naming the slice).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.errors import UnsupportedTable
from engine.formats.avro_schema import META_FIELDS
from engine.formats.conform import conform_table
from engine.read.planner import QueryPlan, ReadSplit
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
        plan: the query plan (incremental range).
        batch_rows: rows per batch read from parquet.

    Raises:
        UnsupportedTable: the slice has log files (merge-on-read merging is not implemented yet).
    """
    if split.log_files:
        raise UnsupportedTable(
            f"file slice {split.file_id} in partition '{split.partition_path}' has log files; "
            "merge-on-read snapshot reads are not implemented yet (use hoodie.datasource.query.type="
            "read_optimized)"
        )
    if split.base_file is None:
        return
    with storage.open_input(split.base_file) as handle:
        parquet = pq.ParquetFile(handle)
        available = set(parquet.schema_arrow.names)
        lowered = {n.lower(): n for n in available}
        columns = [lowered[f.name.lower()] for f in schema if f.name.lower() in lowered]
        if plan.begin is not None and COMMIT_TIME in available and COMMIT_TIME not in columns:
            columns.append(COMMIT_TIME)
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
            table = pa.Table.from_batches([batch])
            if plan.begin is not None and COMMIT_TIME in available:
                times = table.column(COMMIT_TIME)
                keep = pc.and_(pc.greater(times, plan.begin), pc.less_equal(times, plan.end))
                table = table.filter(keep)
                if table.num_rows == 0:
                    continue
            yield from conform_table(table, schema, context=split.base_file).to_batches()
