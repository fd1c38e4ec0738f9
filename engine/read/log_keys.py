"""The record keys a file slice's log files name (the keys whose base rows a merge-on-read read replaces or
drops), read without decoding whole records.

A merge-on-read snapshot read whose slices have log files is split (:mod:`engine.read.parquet_slices`): Spark's
own parquet scan reads each base file less the rows whose keys the slice's logs name, and the Python reader
returns the log records that win, without the base file. This module gives the first half its keys: the keys
of every data and delete block the log scan applies (:func:`engine.read.log_scan.scan_log_blocks`: the same
instant, rollback and retried-block rules as the merge), which are exactly the keys a merge folds
(``MergedLogRecords.all_keys``). Data blocks are decoded only up to ``_hoodie_record_key``
(:meth:`engine.formats.log_format.AvroDataBlock.column_values`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import CorruptFile
from engine.formats.avro_schema import META_FIELDS
from engine.formats.log_format import AvroDataBlock, DeleteBlock, ParquetDataBlock, load_block_content
from engine.read.log_scan import BlockFilter, scan_log_blocks
from engine.storage import Storage

__all__ = ["log_record_count", "slice_log_keys"]

RECORD_KEY = META_FIELDS[2]


def slice_log_keys(storage: Storage, log_files: Sequence[str], block_filter: BlockFilter) -> pa.Array:
    """The distinct record keys named by the log blocks of one file slice that a read applies.

    Args:
        storage: table storage.
        log_files: the slice's log files, in log order.
        block_filter: the read's instant visibility (:meth:`engine.read.planner.QueryPlan.block_filter`).

    Returns:
        A string array of distinct keys (records and deletes alike), in no particular order.

    Raises:
        CorruptFile: a null record key, or undecodable block content (names the log file).
        StorageError: a log file cannot be read.
    """
    pieces: list[pa.Array] = []
    for lazy in scan_log_blocks(storage, log_files, block_filter):
        where = lazy.file_path or "<memory>"
        if isinstance(lazy, AvroDataBlock):
            keys = lazy.column_values(RECORD_KEY, storage)
        else:
            block = load_block_content(storage, lazy)
            if isinstance(block, DeleteBlock):
                keys = pa.array([r.record_key for r in block.delete_records()], pa.string())
            elif isinstance(block, ParquetDataBlock):
                table = block.to_table()
                keys = (table.column(RECORD_KEY).combine_chunks() if RECORD_KEY in table.column_names
                        else pa.nulls(table.num_rows, pa.string()))
            else:
                continue
        if keys.null_count:
            raise CorruptFile(f"log file {where}: {keys.null_count} record(s) of a block of instant "
                              f"{lazy.instant_time} have no {RECORD_KEY}")
        pieces.append(keys.cast(pa.string()))
    if not pieces:
        return pa.array([], pa.string())
    return pc.unique(pa.concat_arrays(pieces))


def log_record_count(storage: Storage, log_files: Sequence[str], block_filter: BlockFilter) -> int:
    """How many records and deletes the log blocks of one file slice that a read applies hold (an upper bound of
    :func:`slice_log_keys`' size), from the blocks' headers: data block contents are not decoded.

    Raises:
        CorruptFile: undecodable block content.
        StorageError: a log file cannot be read.
    """
    total = 0
    for lazy in scan_log_blocks(storage, log_files, block_filter):
        if isinstance(lazy, AvroDataBlock):
            total += lazy.record_count_from(storage)
            continue
        block = load_block_content(storage, lazy)
        if isinstance(block, DeleteBlock):
            total += len(block.delete_records())
        elif isinstance(block, ParquetDataBlock):
            total += block.record_count
    return total
