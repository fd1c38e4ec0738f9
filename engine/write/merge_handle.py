"""The copy-on-write merge handle (Hudi ``HoodieMergeHandle``): the latest base file of a file group rewritten
with updates applied in place, deletes dropped and inserts appended; unchanged records keep their commit time and
sequence number and get the new file name. With ``hoodie.table.cdc.enabled`` the changes also go to a CDC log
(``HoodieMergeHandleWithChangeLog``, :mod:`engine.write.cdc_logger`).

A stored file of several row groups is not decoded whole: the key (and ordering) columns decide each record's
fate (:mod:`engine.write.merge_decision`), the row groups without changed records are copied as bytes with a new
``_hoodie_file_name`` chunk (:mod:`engine.formats.parquet_splice`), and only the touched row groups and the
inserts are encoded (:func:`merge_copying_row_groups`).
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.config import WriteConfig
from engine.errors import EngineError, WriteError
from engine.filegroup.naming import base_file_name
from engine.formats.avro_schema import META_FIELDS
from engine.formats.base_file import (
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    BaseFileWriter,
    dictionary_columns,
    footer_bloom_filter,
    open_parquet_writer,
    read_base_file_with_footer,
)
from engine.formats.bloom import BloomFilter, DynamicBloomFilter, bloom_filter_from_config
from engine.formats.conform import conform_table
from engine.formats.parquet_splice import ColumnChunk, GroupSource, ParquetFooter, assemble
from engine.payloads import fill_nulls
from engine.read.base_reader import base_file_instant
from engine.timeline.commit_metadata import WriteStat
from engine.write.cdc_logger import cdc_enabled, write_cdc_log
from engine.write.handles import (
    TaskIdentity,
    WriteContext,
    constant_column,
    open_base_writer,
    seqnos,
    start_base_file,
    with_meta_columns,
    write_stat,
)
from engine.write.markers import IOType
from engine.write.merge_decision import MergeDecision, decide, stored_columns_needed
from engine.write.planner import ExistingFileGroup
from engine.write.prepare import dedupe_by_key

logger = logging.getLogger(__name__)

COMMIT_TIME, COMMIT_SEQNO, FILE_NAME = META_FIELDS[0], META_FIELDS[1], META_FIELDS[4]


def merge_file_group(
    ctx: WriteContext, existing: ExistingFileGroup, records: pa.Table, task: TaskIdentity
) -> list[WriteStat]:
    """Rewrite ``existing`` with ``records`` merged in (a new file slice of the same file group).

    Incoming records whose key is stored replace the stored record in place (unless
    ``DefaultHoodieRecordPayload`` ordering keeps the stored one), deletes drop it, and the other incoming
    records are appended as inserts. An ``insert`` with ``hoodie.merge.allow.duplicate.on.inserts`` keeps every
    stored record and appends every incoming one (:attr:`WriteContext.concat_inserts`).

    Args:
        ctx: write context.
        existing: the file group's latest base file.
        records: incoming rows (data columns, ``_hoodie_record_key``, ``_hoodie_partition_path``, optional
            ``_hoodie_is_deleted``).
        task: Spark task coordinates.

    Returns:
        One write stat for the new base file.

    Raises:
        WriteError: the existing base file cannot be read.
    """
    start = time.monotonic()
    if ctx.conf.get(WriteConfig.COMBINE_BEFORE_UPSERT):
        records = dedupe_by_key(records, ctx.precombine_field, ctx.payload.first_on_ties, per_stored_copy=True)
    decided: MergeDecision | None = None
    if _copies_row_groups(ctx):
        copied, decided = merge_copying_row_groups(ctx, existing, records, task, start)
        if copied is not None:
            return copied
    try:
        old, footer = read_base_file_with_footer(ctx.storage, existing.base_file_path)
    except Exception as exc:  # noqa: BLE001 - any read failure aborts this file group's write
        raise WriteError(
            f"cannot read base file {existing.base_file_path} of file group {existing.file_id} "
            f"for instant {ctx.instant_time}: {exc}"
        ) from exc
    if ctx.evolution is not None:
        old = ctx.evolution.align(old, base_file_instant(existing.base_file_path))
    old = conform_table(old, ctx.file_schema, context=existing.base_file_path)
    n_old, n_inc = old.num_rows, records.num_rows
    decision = decided if decided is not None and decided.n_old == n_old else decide(ctx, records, old)
    incoming_keys, stored_keys = decision.incoming_keys, decision.stored_keys
    is_update_for_old, is_delete_for_old = decision.is_update_for_old, decision.is_delete_for_old
    inc_for_old, inserts = decision.inc_for_old, decision.inserts

    file_name = base_file_name(existing.file_id, task.write_token, ctx.instant_time)
    incoming = with_meta_columns(ctx, records, file_name, pa.nulls(n_inc, pa.string()))
    if ctx.payload.fill_nulls_from_stored and is_update_for_old.any():
        stored_of = np.zeros(n_inc, dtype=np.int64)
        stored_of[inc_for_old[is_update_for_old]] = np.nonzero(is_update_for_old)[0]
        incoming = fill_nulls(incoming, old.take(pa.array(stored_of)), skip=META_FIELDS)
    output, new_positions = _merged_rows(old, incoming, decision, file_name)
    output = _with_fresh_seqnos(ctx, task, output, new_positions)
    # A merge that keeps every stored record extends the stored file's bloom filter and key range with the
    # inserted keys rather than hashing every key again (the filter then holds the same keys).
    carried = (stored_key_index(ctx, footer, existing.base_file_path)
               if ctx.populate_meta_fields and not is_delete_for_old.any() else None)
    writer = open_base_writer(ctx, existing.partition_path, file_name, IOType.MERGE, task)
    try:
        if carried is not None:
            writer.continue_keys(*carried)
            writer.write(output, new_keys=incoming_keys.take(pa.array(inserts, pa.int64())))
        else:
            writer.write(output)
    finally:
        stats = writer.close()
    cdc_stats = None
    if cdc_enabled(ctx.props):
        updated = np.nonzero(is_update_for_old)[0]
        cdc_stats = write_cdc_log(
            ctx, existing.partition_path, existing.file_id, task.write_token, old=old, new=incoming,
            updated=updated, updated_from=inc_for_old[updated], deleted=np.nonzero(is_delete_for_old)[0],
            inserted=inserts, old_keys=stored_keys, new_keys=incoming_keys)
    elapsed = int((time.monotonic() - start) * 1000)
    stat = write_stat(ctx, existing.partition_path, existing.file_id, file_name, existing.base_instant,
                 stats.file_size, writes=stats.num_rows, inserts=len(inserts),
                 updates=int(is_update_for_old.sum()), deletes=int(is_delete_for_old.sum()),
                 elapsed_ms=elapsed)
    stat.cdc_stats = cdc_stats
    return [stat]


def _merged_rows(old: pa.Table, incoming: pa.Table, decision: MergeDecision, file_name: str
                 ) -> tuple[pa.Table, np.ndarray]:
    """The rows of the new base file in Hudi's order (stored order, updates in place, deletes dropped, inserts
    last; ``_hoodie_file_name`` set to ``file_name``) and which of them this instant writes (bool per row).

    Without deletes the stored rows keep their places: a column whose updated values equal the stored ones (an
    update that does not change it) is the stored column itself, the others get the updated values by mask;
    only with deletes is every column gathered anew."""
    n_old = old.num_rows
    names = old.column_names
    if decision.is_delete_for_old.any():
        out_idx = decision.output_positions()
        combined = pa.concat_tables([old.set_column(names.index(FILE_NAME), FILE_NAME,
                                                    constant_column(file_name, n_old)), incoming])
        return combined.take(pa.array(out_idx)), out_idx >= n_old
    updated = np.nonzero(decision.is_update_for_old)[0]
    sources = pa.array(decision.inc_for_old[updated], pa.int64())
    mask = pa.array(decision.is_update_for_old)
    columns = []
    for name, stored in zip(names, old.columns, strict=True):
        if name == FILE_NAME:
            columns.append(constant_column(file_name, n_old))
            continue
        if not len(updated):
            columns.append(stored)
            continue
        values = incoming.column(name).take(sources)
        if name not in (COMMIT_TIME, COMMIT_SEQNO) and stored.take(pa.array(updated)).equals(values):
            columns.append(stored)  # the update leaves this column as it is
        else:
            columns.append(pc.replace_with_mask(stored, mask, values.combine_chunks()))
    kept = pa.Table.from_arrays(columns, schema=old.schema)
    output = pa.concat_tables([kept, incoming.take(pa.array(decision.inserts, pa.int64()))])
    return output, np.concatenate([decision.is_update_for_old, np.ones(len(decision.inserts), dtype=bool)])


def _with_fresh_seqnos(ctx: WriteContext, task: TaskIdentity, output: pa.Table, new_positions: np.ndarray) -> pa.Table:
    """``output`` with sequence numbers for the rows this instant writes (``new_positions``), in output order. A
    key stored twice (inserts with hoodie.merge.allow.duplicate.on.inserts) is updated in both copies, as
    HoodieMergeHandle does; the other rows keep theirs."""
    written = int(new_positions.sum())
    if not ctx.populate_meta_fields or not written:
        return output
    rank = np.cumsum(new_positions) - 1
    fresh = pc.take(seqnos(ctx.instant_time, task, written), pa.array(np.where(new_positions, rank, 0)))
    at = output.schema.get_field_index(COMMIT_SEQNO)
    return output.set_column(at, COMMIT_SEQNO, pc.if_else(pa.array(new_positions), fresh, output.column(at)))


def _copies_row_groups(ctx: WriteContext) -> bool:
    """Whether a merge may copy untouched row groups (:func:`merge_copying_row_groups`): meta fields populated,
    no schema evolution on read, no CDC log (it reads every stored row), no payload that reads stored values
    into incoming ones, no concatenating insert."""
    return (ctx.populate_meta_fields and ctx.evolution is None and not cdc_enabled(ctx.props)
            and not ctx.payload.fill_nulls_from_stored and not ctx.concat_inserts)


def merge_copying_row_groups(ctx: WriteContext, existing: ExistingFileGroup, records: pa.Table, task: TaskIdentity,
                             start: float) -> tuple[list[WriteStat] | None, MergeDecision | None]:
    """:func:`merge_file_group` encoding only what changes: the stored file's key (and ordering) columns decide
    each record's fate (:func:`engine.write.merge_decision.decide`); the row groups holding no updated or deleted
    record are copied as bytes, ``_hoodie_file_name`` re-encoded for the new file
    (:mod:`engine.formats.parquet_splice`). When no stored record is deleted, a touched row group keeps its
    place and copies the column chunks the updates leave as they are too: only the changed columns (the commit
    time and sequence number among them) are encoded again, and the inserts follow as row groups of their own,
    so the rows keep Hudi's order. With deletes, the touched row groups (updates in place, deletes dropped) and
    the inserts are encoded as one part after the copied ones.

    Returns:
        The write stat, or None when the file does not allow it (one row group, every row group touched by a
        merge that deletes, or a layout the encoder would not reproduce, e.g. a file another writer made): the
        caller rewrites it whole, reusing the decision (second item) when one was made.

    Raises:
        WriteError: the stored base file cannot be read.
    """
    path = existing.base_file_path
    try:
        source = ctx.storage.open_input(path)
    except Exception as exc:  # noqa: BLE001 - the whole-file path reports it
        raise WriteError(f"cannot read base file {path} of file group {existing.file_id} "
                         f"for instant {ctx.instant_time}: {exc}") from exc
    with source:
        parquet = pq.ParquetFile(source)
        metadata = parquet.metadata
        groups = metadata.num_row_groups
        if groups < 1 or FILE_NAME not in metadata.schema.names:
            return None, None
        names = stored_columns_needed(ctx, records) or []
        wanted = pa.schema([ctx.file_schema.field(n) for n in names])
        stored = conform_table(parquet.read(columns=[n for n in names if n in metadata.schema.names]),
                               wanted, context=path)
        decision = decide(ctx, records, stored)
        bounds = np.cumsum([0] + [metadata.row_group(g).num_rows for g in range(groups)])
        touched = decision.touched
        changed = [g for g in range(groups) if touched[bounds[g]:bounds[g + 1]].any()]
        in_place = not decision.is_delete_for_old.any()
        if not in_place and len(changed) == groups:
            return None, decision  # deletes touch every row group: nothing to copy
        # Some chunk is copied: only now is the footer decoded field by field.
        stored_footer = ParquetFooter.read(source, source.size(), path)
        kept = [g for g in range(groups) if g not in set(changed)]
        spliced = list(range(groups)) if in_place else kept  # the stored row groups placed in the new file
        file_name = base_file_name(existing.file_id, task.write_token, ctx.instant_time)
        rows = (np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in changed]) if changed
                else np.zeros(0, dtype=np.int64))
        if in_place and changed and not stored_footer.is_flat:
            return None, decision  # nested columns: their chunks are not spliced one by one
        incoming = with_meta_columns(ctx, records, file_name, pa.nulls(records.num_rows, pa.string()))
        if in_place:
            updated, changed_columns, rest = _updated_columns(ctx, source, stored_footer, changed,
                                                              incoming, decision.restricted(rows), task, path)
        else:
            part = (conform_table(parquet.read_row_groups(changed), ctx.file_schema, context=path) if changed
                    else ctx.file_schema.empty_table())
            output, new_positions = _merged_rows(part, incoming, decision.restricted(rows), file_name)
            rest = _with_fresh_seqnos(ctx, task, output, new_positions)
            changed_columns = []  # the touched row groups are encoded whole with the inserts
        footer = {k.decode("utf-8"): v.decode("utf-8") for k, v in (parquet.metadata.metadata or {}).items()}
        carried = None if not in_place else stored_key_index(ctx, footer, path)
        sink = io.BytesIO()
        writer = BaseFileWriter(ctx.storage, file_name, ctx.file_schema, ctx.avro_schema, ctx.conf, sink=sink)
        if carried is not None:
            writer.continue_keys(*carried)
            writer.write(rest, new_keys=decision.incoming_keys.take(pa.array(decision.inserts, pa.int64())))
        else:
            copied_rows = np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in spliced])
            writer.track_keys(decision.stored_keys.take(pa.array(copied_rows, pa.int64())))
            writer.write(rest)
        writer.close()
        part_footer = ParquetFooter.read(sink, sink.tell(), f"{file_name} (rewritten rows)")
        if not part_footer.same_layout(stored_footer):
            return None, decision
        column = stored_footer.column_names.index(FILE_NAME)
        name_chunks: dict[int, tuple[io.BytesIO, ColumnChunk]] = {}
        for g in spliced:
            count = stored_footer.num_rows(g)
            if count not in name_chunks:
                name_chunks[count] = _file_name_chunk(ctx, file_name, count)
        replaced: dict[int, list[tuple[int, io.BytesIO, ColumnChunk]]] = {}
        if in_place and changed:
            chunks = _changed_chunks(ctx, updated, changed_columns,
                                     [stored_footer.num_rows(g) for g in changed], stored_footer, changed)
            if chunks is None:
                return None, decision
            replaced = chunks
        parts = [GroupSource(source, stored_footer, g,
                             ((column, *name_chunks[stored_footer.num_rows(g)]), *replaced.get(g, ())))
                 for g in spliced]
        parts += [GroupSource(sink, part_footer, g) for g in range(len(part_footer.row_groups))]
        target = start_base_file(ctx, existing.partition_path, file_name, IOType.MERGE, task)
        with ctx.storage.open_output(target) as out:
            size = assemble(out, parts, part_footer)
    elapsed = int((time.monotonic() - start) * 1000)
    total = int(bounds[-1]) - int(decision.is_delete_for_old.sum()) + len(decision.inserts)
    logger.debug("merged %s: %d of %d row groups copied whole, %d with %d changed column(s) re-encoded",
                 target, len(kept), groups, len(changed) if in_place else 0, len(changed_columns))
    return [write_stat(ctx, existing.partition_path, existing.file_id, file_name, existing.base_instant, size,
                       writes=total, inserts=len(decision.inserts), updates=int(decision.is_update_for_old.sum()),
                       deletes=int(decision.is_delete_for_old.sum()), elapsed_ms=elapsed)], decision


def _updated_columns(ctx: WriteContext, source: pa.NativeFile, footer: ParquetFooter, groups: list[int],
                     incoming: pa.Table, decision: MergeDecision, task: TaskIdentity, path: str
                     ) -> tuple[pa.Table, list[str], pa.Table]:
    """For a merge that deletes no stored record: the columns of the touched row groups ``groups`` that the
    updates change, as they are to be written (their rows in stored order; ``decision`` restricted to them), the
    names of those columns, and the inserts (with meta columns) to append.

    Only what can change is decoded: the record key, partition path and file name columns are not read (an update
    keeps its key and partition; the file name chunk is written anew), string columns whose stored pages are all
    dictionary-encoded are read as dictionaries, and a column whose updated values equal the stored ones is left
    to be copied as bytes. The commit time gets this instant at the updated rows, the sequence number a fresh one
    (updated rows first, in stored order, then the inserts: :func:`_with_fresh_seqnos`'s numbering)."""
    schema = ctx.file_schema
    skip = {META_FIELDS[2], META_FIELDS[3], FILE_NAME}
    names = [n for n in schema.names if n not in skip]
    stored_names = footer.column_names
    as_dictionary = [n for n in names if schema.field(n).type == pa.string() and n in stored_names
                     and all(footer.dictionary_only(g, stored_names.index(n)) for g in groups)]
    raw = pq.ParquetFile(source, read_dictionary=as_dictionary).read_row_groups(
        groups, columns=[n for n in names if n in stored_names])
    plain = [n for n in names if n not in as_dictionary]
    part = conform_table(raw.select([n for n in plain if n in raw.column_names]),
                         pa.schema([schema.field(n) for n in plain]), context=path)
    updated = np.nonzero(decision.is_update_for_old)[0]
    sources = pa.array(decision.inc_for_old[updated], pa.int64())
    mask = pa.array(decision.is_update_for_old)
    fresh = seqnos(ctx.instant_time, task, len(updated) + len(decision.inserts))
    columns: list[pa.ChunkedArray | pa.Array] = []
    changed: list[str] = []
    for name in names:
        stored = raw.column(name) if name in as_dictionary else part.column(name)
        if name == COMMIT_TIME and name in as_dictionary:
            column = _commit_times(stored, updated, ctx.instant_time)
        elif name == COMMIT_SEQNO:
            column = pc.replace_with_mask(_dense(stored), mask, fresh.slice(0, len(updated)))
        else:
            values = incoming.column(name).take(sources)
            if _dense(stored.take(pa.array(updated, pa.int64()))).equals(values):
                continue  # the updates leave this column as it is: its chunks are copied
            column = pc.replace_with_mask(_dense(stored), mask, values.combine_chunks())
        columns.append(column)
        changed.append(name)
    out = pa.Table.from_arrays(columns, schema=pa.schema([schema.field(n).with_type(c.type)
                                                         for n, c in zip(changed, columns, strict=True)]))
    inserts = incoming.take(pa.array(decision.inserts, pa.int64()))
    at = inserts.schema.get_field_index(COMMIT_SEQNO)
    inserts = inserts.set_column(at, COMMIT_SEQNO, fresh.slice(len(updated)))
    return out, changed, inserts


def _dense(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """``values`` with dictionary-encoded strings decoded."""
    return values.cast(pa.string()) if pa.types.is_dictionary(values.type) else values


def _commit_times(stored: pa.ChunkedArray, updated: np.ndarray, instant: str) -> pa.Array:
    """The dictionary-encoded commit time column with ``instant`` at the rows ``updated``: the indices change,
    no string is copied (the writer then takes the dictionary as it is)."""
    combined = stored.unify_dictionaries().combine_chunks() if stored.num_chunks else stored.combine_chunks()
    if combined.null_count:
        return pc.replace_with_mask(combined.cast(pa.string()), _mask(len(combined), updated),
                                    constant_column(instant, len(updated)))
    dictionary = pa.concat_arrays([combined.dictionary, pa.array([instant], pa.string())])
    indices = combined.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    indices[updated] = len(dictionary) - 1
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), dictionary)


def _mask(length: int, positions: np.ndarray) -> pa.Array:
    mask = np.zeros(length, dtype=bool)
    mask[positions] = True
    return pa.array(mask)


def _changed_chunks(ctx: WriteContext, rows: pa.Table, columns: list[str], counts: list[int],
                    stored_footer: ParquetFooter, groups: list[int]
                    ) -> dict[int, list[tuple[int, io.BytesIO, ColumnChunk]]] | None:
    """The chunks standing in for ``columns`` in the touched row groups ``groups`` (``counts`` rows each, their
    merged values in ``rows``, in order): one row group per touched group, encoded as the base file writer
    encodes (compression, page size, dictionary choice, statistics). None when the encoded columns are not
    declared as the stored file declares them."""
    names = [n for n in columns if n != FILE_NAME]
    if not names:
        return {}
    schema = pa.schema([ctx.file_schema.field(n).with_type(rows.column(n).type) for n in names])
    stored_names = stored_footer.column_names
    indexes = [stored_names.index(n) if n in stored_names else -1 for n in names]
    if -1 in indexes or not stored_footer.is_flat:
        return None
    # A column whose stored chunks gave up their dictionary (unique values: prices, comments) is encoded plain
    # straight away instead of filling a dictionary page first and falling back again.
    dictionary = [n for n, i in zip(names, indexes, strict=True) if n in dictionary_columns(ctx.file_schema)
                  and all(stored_footer.dictionary_only(g, i) for g in groups)]
    sink = io.BytesIO()
    with open_parquet_writer(sink, schema, ctx.conf, dictionary=dictionary) as writer:
        offset = 0
        for count in counts:
            writer.write_table(rows.slice(offset, count).select(names), row_group_size=max(1, count))
            offset += count
    footer = ParquetFooter.read(sink, sink.tell(), "re-encoded columns")
    if not all(stored_footer.same_leaf(i, footer, j) for j, i in enumerate(indexes)):
        return None
    return {g: [(indexes[j], sink, chunk) for j, chunk in enumerate(footer.chunks(k))]
            for k, g in enumerate(groups)}


def _file_name_chunk(ctx: WriteContext, file_name: str, rows: int) -> tuple[io.BytesIO, ColumnChunk]:
    """A ``_hoodie_file_name`` column chunk of ``rows`` values ``file_name``, encoded as the base file writer
    encodes that column (its compression, dictionary encoding)."""
    sink = io.BytesIO()
    # One dictionary entry and all-zero indices: the writer takes the dictionary as it is instead of hashing
    # ``rows`` copies of the name (the same pages and statistics as for the plain string column).
    schema = pa.schema([ctx.file_schema.field(FILE_NAME).with_type(pa.dictionary(pa.int32(), pa.string()))])
    names = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array([file_name], pa.string()))
    with open_parquet_writer(sink, schema, ctx.conf, dictionary=[FILE_NAME]) as writer:
        writer.write_table(pa.table([names], schema=schema), row_group_size=rows)
    footer = ParquetFooter.read(sink, sink.tell(), f"{file_name} (file name column)")
    return sink, footer.chunks(0)[0]


def stored_key_index(ctx: WriteContext, footer: Mapping[str, str], path: str) -> tuple[BloomFilter, str, str] | None:
    """The bloom filter and min/max record keys of a stored base file's ``footer``, when the filter is the kind
    the write config makes (type, size, hashes; a dynamic filter then grows to
    ``hoodie.bloom.index.filter.dynamic.max.entries`` as a new one would); else None (the writer builds them
    afresh)."""
    low, high = footer.get(MIN_RECORD_KEY), footer.get(MAX_RECORD_KEY)
    try:
        stored = footer_bloom_filter(footer, path)
    except EngineError:
        return None  # the writer hashes every key, as for any other file
    if stored is None or low is None or high is None:
        return None
    fresh = bloom_filter_from_config(ctx.conf)
    if (stored.type_code, stored.vector_size, stored.nb_hash) != (fresh.type_code, fresh.vector_size, fresh.nb_hash):
        return None
    if isinstance(stored, DynamicBloomFilter) and isinstance(fresh, DynamicBloomFilter):
        if stored.num_entries != fresh.num_entries:
            return None
        stored.max_entries = fresh.max_entries
    return stored, low, high
