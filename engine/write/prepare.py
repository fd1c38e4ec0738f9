"""Preparing incoming records: precombine de-duplication by record key (Hudi
``HoodieWriteHelper.deduplicateRecords`` with ``OverwriteWithLatestAvroPayload.preCombine``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.formats.conform import field_values

RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_ID = "_hoodie_file_id"
IS_DELETED = "_hoodie_is_deleted"
BUCKET = "_hoodie_bucket"
KEY_HASH = "_hoodie_key_hash"
SLOT = "_hoodie_write_slot"
BUCKET_ID = "_hoodie_bucket_id"
"""Column of a record's bucket number (bucket index) while it is tagged or bulk inserted."""
STORED_SEQNO = "_hoodie_stored_commit_seqno"
"""Optional column of prepped records: the ``_hoodie_commit_seqno`` of the stored record a row was computed from
(a MERGE whose clauses read the target row). A key stored twice in a file group (inserts without combining) then
gets each copy's own result, as Hudi's ``HoodieMergeHandle`` evaluates ``ExpressionPayload`` against each stored
record; null: the row replaces every stored record of its key."""

# Columns the write pipeline adds to incoming rows; never stored as data columns.
PIPELINE_COLUMNS = (RECORD_KEY, PARTITION_PATH, FILE_ID, IS_DELETED, BUCKET, KEY_HASH, SLOT, STORED_SEQNO, BUCKET_ID)


def dedupe_by_key(records: pa.Table, precombine_field: str | None, first_on_ties: bool = False,
                  per_stored_copy: bool = False) -> pa.Table:
    """Keep one record per ``_hoodie_record_key``: the one with the greatest precombine value; on ties
    (or without a precombine field) the one that arrived last, or first with ``first_on_ties``.

    Args:
        records: rows with a ``_hoodie_record_key`` column (and the precombine column when given).
        precombine_field: ordering column name (a dotted path for a nested field), or ``None``.
        first_on_ties: ``FirstValueAvroPayload.preCombine`` (:mod:`engine.payloads`).
        per_stored_copy: keep one record per key and :data:`STORED_SEQNO` (a merge handle rewriting each stored
            copy of a key with its own result).

    Returns:
        The surviving rows, in key order.
    """
    n = records.num_rows
    if n <= 1:
        return records
    arrival = pa.array(np.arange(n, dtype=np.int64))
    work = records.append_column("__arrival", arrival)
    group = RECORD_KEY
    if per_stored_copy and STORED_SEQNO in records.column_names and records.column(STORED_SEQNO).null_count < n:
        group = "__group"
        copies = pc.fill_null(records.column(STORED_SEQNO).cast(pa.string()), "")
        work = work.append_column(group, pc.binary_join_element_wise(
            records.column(RECORD_KEY).cast(pa.string()), copies, "\x00"))
    sort_keys: list[tuple[str, str, str]] = [(group, "ascending", "at_start")]
    ordering = field_values(records, precombine_field) if precombine_field else None
    if ordering is not None:
        work = work.append_column("__ordering", ordering)
        sort_keys.append(("__ordering", "ascending", "at_start"))
    sort_keys.append(("__arrival", "descending" if first_on_ties else "ascending", "at_start"))
    order = pc.sort_indices(work, sort_keys=sort_keys)
    keys = pc.take(work.column(group), order)
    keys_np = keys.to_numpy(zero_copy_only=False)
    last_in_run = np.empty(n, dtype=bool)
    last_in_run[:-1] = keys_np[:-1] != keys_np[1:]
    last_in_run[-1] = True
    if last_in_run.all():
        return records.take(order)
    return records.take(pc.filter(order, pa.array(last_in_run)))


def deleted_mask(records: pa.Table) -> np.ndarray:
    """Boolean numpy mask of rows flagged ``_hoodie_is_deleted = true`` (all False when absent)."""
    if IS_DELETED not in records.column_names:
        return np.zeros(records.num_rows, dtype=bool)
    flags = pc.fill_null(records.column(IS_DELETED), False)
    return np.asarray(flags.to_numpy(zero_copy_only=False), dtype=bool)
