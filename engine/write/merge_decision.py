"""What a copy-on-write merge does with each stored and each incoming record of one file group (Hudi
``HoodieMergeHandle``: every stored record meets the incoming record of its key, the payload decides), as arrays
over row positions. Pure pyarrow and numpy; the handles write the files (:mod:`engine.write.handles`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.formats.avro_schema import META_FIELDS
from engine.formats.conform import field_values
from engine.keygen import KeyGenerator
from engine.write.prepare import RECORD_KEY, STORED_SEQNO, deleted_mask

if TYPE_CHECKING:
    from engine.write.handles import WriteContext

COMMIT_SEQNO, META_RECORD_KEY = META_FIELDS[1], META_FIELDS[2]


@dataclass(frozen=True)
class MergeDecision:
    """The fate of every row of a merge of ``n_inc`` incoming records into ``n_old`` stored ones.

    Attributes:
        incoming_keys: record keys of the incoming records (``pa.string()``, ``n_inc``).
        stored_keys: record keys of the stored records (``n_old``).
        inc_for_old: per stored row, the incoming record meeting it (0 where none; int64, ``n_old``).
        is_update_for_old: per stored row, replaced by its incoming record (bool, ``n_old``).
        is_delete_for_old: per stored row, deleted (bool, ``n_old``).
        inserts: incoming records written as new rows, in order (int64 positions).
    """

    incoming_keys: pa.Array
    stored_keys: pa.Array
    inc_for_old: np.ndarray
    is_update_for_old: np.ndarray
    is_delete_for_old: np.ndarray
    inserts: np.ndarray

    @property
    def n_old(self) -> int:
        """Stored rows."""
        return len(self.stored_keys)

    @property
    def touched(self) -> np.ndarray:
        """Per stored row: updated or deleted (bool)."""
        return self.is_update_for_old | self.is_delete_for_old

    def restricted(self, rows: np.ndarray) -> MergeDecision:
        """This decision over the stored rows ``rows`` only (int64 positions, in order), the incoming records
        unchanged: the decision for a part of the stored file (its touched row groups)."""
        if len(rows) == self.n_old and (not len(rows) or (rows[0] == 0 and rows[-1] == self.n_old - 1)):
            return self  # every row, in order (positions are increasing): nothing to gather
        return MergeDecision(self.incoming_keys, self.stored_keys.take(pa.array(rows, pa.int64())),
                             self.inc_for_old[rows], self.is_update_for_old[rows], self.is_delete_for_old[rows],
                             self.inserts)

    def output_positions(self) -> np.ndarray:
        """The written rows, in Hudi's order (stored order, updates in place, then inserts), as positions in
        the stored rows followed by the incoming ones (``n_old + i`` is incoming record ``i``; int64)."""
        n_old = self.n_old
        kept = np.where(self.is_update_for_old, n_old + self.inc_for_old, np.arange(n_old))[~self.is_delete_for_old]
        return np.concatenate([kept, n_old + self.inserts]).astype(np.int64)


def stored_columns_needed(ctx: WriteContext, records: pa.Table) -> list[str] | None:
    """The stored columns :func:`decide` reads (None: the whole rows, for tables without meta fields, whose keys
    the key generator computes from the data)."""
    if not ctx.populate_meta_fields:
        return None
    names = [META_RECORD_KEY]
    if STORED_SEQNO in records.column_names and records.column(STORED_SEQNO).null_count < records.num_rows:
        names.append(COMMIT_SEQNO)
    if ctx.event_time_ordering and ctx.precombine_field:
        names.append(ctx.precombine_field)
    return names


def decide(ctx: WriteContext, records: pa.Table, stored: pa.Table) -> MergeDecision:
    """The fate of each row when ``records`` (deduplicated incoming rows with ``_hoodie_record_key``, optional
    ``_hoodie_is_deleted`` and :data:`~engine.write.prepare.STORED_SEQNO`) meet the stored rows ``stored`` (at
    least :func:`stored_columns_needed`'s columns, conformed to the file schema).

    An incoming record replaces the stored record of its key (the copy it names, when it names one), unless
    event-time ordering (``DefaultHoodieRecordPayload``, ``EventTimeAvroPayload``, Hudi's MERGE on copy-on-write)
    keeps a stored record with a greater ordering value (or an equal one for ``FirstValueAvroPayload``); a delete
    drops it (whatever the ordering, when the payload says so); the other incoming records are inserts. With
    ``hoodie.merge.allow.duplicate.on.inserts`` (an insert) no stored record is met.
    """
    n_old, n_inc = stored.num_rows, records.num_rows
    deletes = deleted_mask(records)
    incoming_keys = records.column(RECORD_KEY).cast(pa.string()).combine_chunks()
    stored_keys = (stored.column(META_RECORD_KEY).combine_chunks() if ctx.populate_meta_fields
                   else KeyGenerator.from_config(ctx.conf).record_keys(stored))
    position = _incoming_of_stored(records, incoming_keys, stored, stored_keys)
    matched = np.asarray(position.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if ctx.concat_inserts:
        matched = np.zeros(n_old, dtype=bool)
    pos = np.asarray(pc.fill_null(position, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    inc_for_old = np.where(matched, pos, 0)

    keep_stored = np.zeros(n_old, dtype=bool)
    field = ctx.precombine_field
    if ctx.event_time_ordering and field and n_inc:
        stored_order = field_values(stored, field)
        incoming_order = pc.take(field_values(records, field), pa.array(inc_for_old))
        if ctx.payload.first_on_ties:  # FirstValueAvroPayload: the stored record stays on equal values
            greater = pc.fill_null(pc.greater_equal(stored_order, incoming_order), False)
        else:
            greater = pc.fill_null(pc.greater(stored_order, incoming_order), False)
        keep_stored = matched & np.asarray(greater.to_numpy(zero_copy_only=False), dtype=bool)
        if ctx.deletes_ignore_ordering:
            keep_stored &= ~deletes[inc_for_old]

    is_delete_for_old = matched & ~keep_stored & deletes[inc_for_old] if n_inc else np.zeros(n_old, dtype=bool)
    is_update_for_old = matched & ~keep_stored & ~deletes[inc_for_old] if n_inc else np.zeros(n_old, dtype=bool)
    met = np.zeros(n_inc, dtype=bool)
    met[pos[matched]] = True
    inserts = np.nonzero(~met & ~deletes)[0].astype(np.int64)
    return MergeDecision(incoming_keys, stored_keys, inc_for_old, is_update_for_old, is_delete_for_old, inserts)


def _incoming_of_stored(records: pa.Table, incoming_keys: pa.Array, old: pa.Table,
                        stored_keys: pa.Array) -> pa.Array:
    """For each stored row, the index of the incoming record that replaces it (null: none).

    An incoming record naming a stored copy (:data:`STORED_SEQNO`) replaces that copy only; one without replaces
    every stored record of its key (``HoodieMergeHandle``: each stored record of a key meets the incoming one)."""
    copies = records.column(STORED_SEQNO).cast(pa.string()).combine_chunks() \
        if STORED_SEQNO in records.column_names else None
    if copies is None or copies.null_count == len(copies) or COMMIT_SEQNO not in old.column_names:
        return pc.index_in(stored_keys, value_set=incoming_keys)
    stored_seqnos = old.column(COMMIT_SEQNO).cast(pa.string()).combine_chunks()
    stored_copies = pc.binary_join_element_wise(stored_keys, stored_seqnos, "\x00")
    incoming_copies = pc.binary_join_element_wise(incoming_keys, copies, "\x00")  # null where no copy is named
    exact = pc.index_in(stored_copies, options=pc.SetLookupOptions(incoming_copies, skip_nulls=True))
    unnamed = pc.if_else(pc.is_null(copies), incoming_keys, pa.nulls(len(copies), pa.string()))
    loose = pc.index_in(stored_keys, options=pc.SetLookupOptions(unnamed, skip_nulls=True))
    return pc.coalesce(exact, loose)
