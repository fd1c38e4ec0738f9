"""Which log blocks a merge applies and the settings it merges with (Hudi
``AbstractHoodieLogRecordReader``: instant filtering, rollback command blocks, spurious blocks of retried
tasks; ``HoodieMergedLogRecordScanner``'s payload and ordering settings)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from engine.config import HoodieConfig, MemoryConfig, TableConfig
from engine.errors import ConfigError, UnsupportedTable
from engine.formats.avro_schema import META_FIELDS, add_meta_fields, avro_to_arrow
from engine.formats.log_block import IS_PARTIAL_HEADER
from engine.formats.log_format import (
    AvroDataBlock,
    CdcDataBlock,
    CommandBlock,
    CorruptBlock,
    DeleteBlock,
    HFileDataBlock,
    LogBlock,
    ParquetDataBlock,
    read_log_blocks,
)
from engine.payloads import DEFAULT, EVENT_TIME, OVERWRITE_WITH_LATEST, PayloadRules, payload_rules
from engine.schema.history import SchemaEvolution
from engine.storage import Storage
from engine.table import Table

logger = logging.getLogger(__name__)

COMMIT_TIME = META_FIELDS[0]
RECORD_KEY = META_FIELDS[2]
IS_DELETED = "_hoodie_is_deleted"
"""Soft-delete column honoured by Hudi payloads (``HoodieRecordPayload.isDeleteRecord``)."""

OVERWRITE_WITH_LATEST_PAYLOAD = OVERWRITE_WITH_LATEST
DEFAULT_PAYLOAD = DEFAULT
EVENT_TIME_PAYLOAD = EVENT_TIME


@dataclass(frozen=True)
class MergeSettings:
    """Table-level settings of a merge (picklable; built once per query by the planner).

    Attributes:
        record_key_fields: ``hoodie.table.recordkey.fields``.
        precombine_field: ordering field (``hoodie.table.precombine.field``), a column or a dotted path into struct members, or None.
        payload_class: ``hoodie.compaction.payload.class`` (OverwriteWithLatestAvroPayload when unset).
        populate_meta_fields: False = virtual keys from ``record_key_fields``.
        table_schema: the table's Arrow schema with the meta columns (types of columns the merge needs but
            the query did not ask for), or None when the table has no schema yet.
        table_config: ``hoodie.properties`` entries (key generator for virtual keys).
        max_memory_bytes: ``hoodie.memory.merge.max.size`` (bytes).
        spill_path: ``hoodie.memory.spillable.map.path``: directory under which a merge whose log records
            exceed ``max_memory_bytes`` creates its temporary spill folder (None = the system temp dir).
        evolution: how to read blocks and base files written under older schemas of a table whose schema
            evolved on read (None: columns are matched by name).
        log_record_applies_once: a folded log record or delete applies to the first base row with its key only;
            further base rows with that key (duplicate keys, written by ``insert``) stay as stored, as Hudi
            0.15's Spark file group reader and hudi-rs read them. False: to every such row, as Hudi's compaction
            (``HoodieMergeHandle``) writes them.
    """

    record_key_fields: tuple[str, ...] = ()
    precombine_field: str | None = None
    payload_class: str = OVERWRITE_WITH_LATEST_PAYLOAD
    populate_meta_fields: bool = True
    table_schema: pa.Schema | None = None
    table_config: tuple[tuple[str, str], ...] = ()
    max_memory_bytes: int = 1073741824
    spill_path: str | None = None
    evolution: SchemaEvolution | None = None
    log_record_applies_once: bool = True

    @staticmethod
    def from_table(table: Table, options: HoodieConfig | None = None) -> MergeSettings:
        """Settings of ``table`` (hoodie.properties), memory keys from ``options``.

        Raises:
            ConfigError: a malformed memory option.
            CorruptFile: the table schema is not valid JSON.
        """
        opts = options or HoodieConfig({})
        avro = table.latest_avro_schema()
        schema = avro_to_arrow(add_meta_fields(avro)) if avro is not None else None
        payload = (opts.raw(TableConfig.PAYLOAD_CLASS) or table.config.raw(TableConfig.PAYLOAD_CLASS)
                   or OVERWRITE_WITH_LATEST_PAYLOAD)
        return MergeSettings(
            record_key_fields=tuple(table.record_key_fields),
            precombine_field=table.precombine_field or None,
            payload_class=payload.strip(),
            populate_meta_fields=table.populate_meta_fields,
            table_schema=schema,
            table_config=tuple(sorted(table.config.as_dict().items())),
            max_memory_bytes=opts.get(MemoryConfig.MAX_MEMORY_FOR_MERGE),
            spill_path=opts.get_optional(MemoryConfig.SPILLABLE_MAP_PATH),
            evolution=SchemaEvolution.of(table),
        )

    @property
    def event_time_ordering(self) -> bool:
        """Whether a base record with a greater ordering value survives a log update
        (``DefaultHoodieRecordPayload`` semantics; :mod:`engine.payloads`).

        Raises:
            UnsupportedTable: a payload class whose merge this engine does not implement (partial updates,
                custom payloads).
        """
        return self._rules.event_time

    @property
    def first_on_ties(self) -> bool:
        """Whether, of log records with equal ordering values, the first is kept (``FirstValueAvroPayload``)."""
        return self._rules.first_on_ties

    @property
    def fills_nulls_from_base(self) -> bool:
        """Whether a log record's null columns take the base record's values
        (``OverwriteNonDefaultsWithLatestAvroPayload``)."""
        return self._rules.fill_nulls_from_stored

    @property
    def _rules(self) -> PayloadRules:
        try:
            return payload_rules(self.payload_class)
        except ConfigError as exc:
            raise UnsupportedTable(f"merge-on-read read: {exc}") from exc


@dataclass(frozen=True)
class BlockFilter:
    """Which log blocks a scan keeps (docs/FORMAT.md §5.4).

    Attributes:
        latest_instant: query instant; blocks after it are skipped (None = no bound).
        completed: completed commit/deltacommit/replacecommit instants (≤ the query instant suffices).
        timeline_start: first completed commit instant on the active timeline, or None.
        pending: requested/inflight write instants on the active timeline.
        begin: incremental lower bound (exclusive), or None.
        valid_instants: when set, only blocks of these instants are kept (Java's ``ExplicitMatchRange``
            instant range; the metadata table reader passes ``getValidInstantTimestamps``).
        stop_after_latest: the first block later than ``latest_instant`` ends the scan of the slice's logs
            (Java's ``break`` in ``scanInternalV1``; the metadata table reader sets it) instead of being skipped.
    """

    latest_instant: str | None
    completed: frozenset[str]
    timeline_start: str | None = None
    pending: frozenset[str] = frozenset()
    begin: str | None = None
    valid_instants: frozenset[str] | None = None
    stop_after_latest: bool = False

    def is_committed(self, instant: str) -> bool:
        """Java ``containsOrBeforeTimelineStarts`` minus pending instants."""
        if instant in self.completed:
            return True
        if self.timeline_start is None or instant >= self.timeline_start:
            return False
        return instant not in self.pending

    def keeps_data(self, instant: str) -> bool:
        """Whether a data/delete block of ``instant`` is visible."""
        if self.latest_instant is not None and instant > self.latest_instant:
            return False
        if self.begin is not None and instant <= self.begin:
            return False
        if self.valid_instants is not None and instant not in self.valid_instants:
            return False
        return self.is_committed(instant)


def _reconcile_spurious_blocks(blocks: list[LogBlock]) -> list[LogBlock]:
    """Drop duplicate blocks of retried task attempts (Java ``reconcileSpuriousBlocksAndGetValidOnes``)."""
    attempts: dict[str, dict[str, int]] = {}
    for block in blocks:
        ident = block.block_identifier
        if ident and "," in ident and block.instant_time is not None:
            attempt = ident.split(",", 1)[0].strip()
            per = attempts.setdefault(block.instant_time, {})
            per[attempt] = per.get(attempt, 0) + 1
    chosen: dict[str, str] = {}
    for instant, per in attempts.items():
        if len(per) > 1:
            best = sorted(per.items(), key=lambda kv: (-kv[1], int(kv[0]) if kv[0].isdigit() else 0))[0][0]
            chosen[instant] = best
            logger.warning("log blocks of instant %s were written by %d task attempts; keeping attempt %s",
                           instant, len(per), best)
    if not chosen:
        return blocks
    out = []
    for block in blocks:
        ident = block.block_identifier
        instant = block.instant_time or ""
        if instant in chosen and ident and "," in ident and ident.split(",", 1)[0].strip() != chosen[instant]:
            continue
        out.append(block)
    return out


def scan_log_blocks(storage: Storage, log_paths: Sequence[str], block_filter: BlockFilter, *,
                    hfile_blocks: bool = False) -> list[LogBlock]:
    """The data and delete blocks of a slice's log files that a reader applies, in log order
    (``AbstractHoodieLogRecordReader.scanInternalV1``; rules in the module docstring).

    Args:
        storage: table storage.
        log_paths: the slice's log files in log order.
        block_filter: instant visibility.
        hfile_blocks: also keep :class:`HFileDataBlock` instances (the metadata table's data blocks, which
            :mod:`engine.metadata` decodes); otherwise they are skipped as not table data.

    Returns:
        :class:`AvroDataBlock`, :class:`ParquetDataBlock` and :class:`DeleteBlock` (and with ``hfile_blocks``
        :class:`HFileDataBlock`) instances (contents not
        yet decoded; contents over 256 KiB not yet read — :func:`merge_file_slice` reads each block when
        it folds it and drops it after, so a scan holds headers, not the log).

    Raises:
        StorageError: a log file cannot be opened.
        UnsupportedTable: an applied data block holds Hudi 1.x partial updates (``IS_PARTIAL`` header).
    """
    queued: list[LogBlock] = []
    stopped = False
    for path in log_paths:
        if stopped:
            break
        for block in read_log_blocks(storage, path, lazy=True):
            if isinstance(block, CorruptBlock):
                logger.warning("log file %s: skipping corrupt block at offset %d (%d bytes)",
                               path, block.offset, block.size)
                continue
            instant = block.instant_time
            if instant is None:
                logger.warning("log file %s: block at offset %d has no INSTANT_TIME header; skipped",
                               path, block.offset)
                continue
            if block_filter.latest_instant is not None and instant > block_filter.latest_instant:
                if block_filter.stop_after_latest:
                    logger.debug("log file %s: block of instant %s is after %s; the scan stops here", path,
                                 instant, block_filter.latest_instant)
                    stopped = True
                    break
                continue
            if isinstance(block, CommandBlock):
                if not block.is_rollback:
                    logger.warning("log file %s: unknown command block type at offset %d; skipped",
                                   path, block.offset)
                    continue
                target = block.target_instant_time
                before = len(queued)
                queued = [b for b in queued if b.instant_time != target]
                logger.debug("log file %s: rollback %s of instant %s removed %d block(s)",
                             path, instant, target, before - len(queued))
                continue
            if isinstance(block, CdcDataBlock) or \
                    not isinstance(block, (AvroDataBlock, ParquetDataBlock, DeleteBlock)) and \
                    not (hfile_blocks and isinstance(block, HFileDataBlock)):
                logger.warning("log file %s: skipping %s at offset %d (not readable as table data)",
                               path, type(block).__name__, block.offset)
                continue
            if not block_filter.keeps_data(instant):
                logger.debug("log file %s: skipping block of instant %s (uncommitted or out of range)",
                             path, instant)
                continue
            if block.header.get(IS_PARTIAL_HEADER, "").strip().lower() == "true":
                raise UnsupportedTable(f"log file {path}: the block of instant {instant} at offset {block.offset} "
                                       "holds partial updates (Hudi 1.x IS_PARTIAL header); this engine does not "
                                       "merge partial updates")
            queued.append(block)
    return _reconcile_spurious_blocks(queued)


def work_schema(requested: pa.Schema, settings: MergeSettings) -> pa.Schema:
    """``requested`` plus the columns the merge needs (record key or key fields, precombine field, commit
    time, ``_hoodie_is_deleted``), typed from the table schema; columns unknown to it are left out."""
    fields = list(requested)
    have = {f.name.lower() for f in requested}
    table_schema = settings.table_schema
    wanted: list[str] = [COMMIT_TIME]
    if settings.populate_meta_fields:
        wanted.append(RECORD_KEY)
    else:
        wanted.extend(settings.record_key_fields)
    if settings.precombine_field:
        wanted.append(settings.precombine_field.split(".")[0])  # a nested field comes with its top column
    wanted.append(IS_DELETED)
    for name in wanted:
        if name.lower() in have:
            continue
        found: pa.Field | None = None
        if table_schema is not None:
            for candidate in table_schema:
                if candidate.name.lower() == name.lower():
                    found = candidate
                    break
        if found is None and name in (COMMIT_TIME, RECORD_KEY):
            found = pa.field(name, pa.string())
        if found is not None:
            fields.append(found)
            have.add(name.lower())
    return pa.schema(fields)
