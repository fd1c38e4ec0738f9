"""Log file procedures (Hudi ``ShowHoodieLogFileMetadataProcedure``, ``ShowHoodieLogFileRecordsProcedure``;
docs/SQL.md §2).

``log_file_path_pattern`` is a Hadoop glob (``*``, ``?``, ``[...]``, ``{a,b}``) of log files; paths under
``.hoodie`` (the metadata table, the archived timeline) and partition metafiles are left out, as Hudi's
``getGlobStatusExcludingMetaFolder`` leaves them out. Beyond Hudi: a relative pattern is taken below the
table's base path (Hudi resolves it against the working directory), and matched files that are not log
files by name (base files of a ``dt=*/*`` glob) are skipped.

* ``show_logfile_metadata(table, log_file_path_pattern, limit = 10)`` → ``instant_time, record_count,
  block_type, header_metadata, footer_metadata``: one row per block of the matched logs, grouped by the
  block's ``INSTANT_TIME`` header (``corrupt_block_<n>`` for a corrupt region, ``dummy_instant_time_<n>`` for a
  block without one), the type as Hudi names it (``AVRO_DATA_BLOCK``, ``DELETE_BLOCK``, ``COMMAND_BLOCK``,
  ...), and the header and footer maps as Jackson prints them (``{"INSTANT_TIME":"...","SCHEMA":"..."}``).
* ``show_logfile_records(table, log_file_path_pattern, merge = false, limit = 10)`` → ``records``: each record
  of the data blocks as Avro's ``GenericData.toString`` prints it (``{"_hoodie_commit_time": "...", "id":
  1}``; see :mod:`engine.read.cdc_json`). ``merge`` merges the logs as Hudi's ``HoodieMergedLogRecordScanner``
  does (one record per key, committed blocks only, rollbacks applied, deletes dropped) with the schema of
  the last matched log's last data block. No log file is ``There is no log file`` (Hudi's words).

Different on purpose: groups come in the order their instant is first met (Hudi's hash map gives them in no
set order) and header entries in file order; ``record_count`` of a delete block is its deleted keys and of a
command block 0 (Hudi fails on both with a ``MatchError``); merged records are those of blocks up to the
latest completed commit, deltacommit or replacecommit (Hudi takes the latest commit or replacecommit, so on
a merge-on-read table without a compaction it fails, and after one it leaves out later deltacommits);
records that a merge deletes are left out (Hudi fails on them); blocks of HFile data (metadata table logs)
are refused with an error.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.filegroup.naming import parse_log_file_name
from engine.filegroup.partition_metadata import is_partition_metafile
from engine.formats.avro_schema import avro_to_arrow, parse_avro_schema
from engine.formats.log_format import (
    AvroDataBlock,
    CommandBlock,
    CorruptBlock,
    DeleteBlock,
    HeaderKey,
    HFileDataBlock,
    LogBlock,
    ParquetDataBlock,
    read_log_blocks,
)
from engine.read.cdc_json import avro_json
from engine.read.log_merger import merge_file_slice
from engine.read.log_scan import BlockFilter, MergeSettings, scan_log_blocks, work_schema
from engine.table import Table
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import bool_arg, int_arg, text_arg
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.files import glob_paths
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

METADATA_OUTPUT = ("instant_time string, record_count int, block_type string, header_metadata string, "
                   "footer_metadata string")
"""``show_logfile_metadata`` (Hudi ``ShowHoodieLogFileMetadataProcedure.outputType``)."""

RECORDS_OUTPUT = "records string"
"""``show_logfile_records`` (Hudi ``ShowHoodieLogFileRecordsProcedure.outputType``)."""


def _log_files(ctx: CommandContext, args: dict[str, Any], procedure: str) -> tuple[str, Table, list[str]]:
    """(display name, table, the log files the pattern matches, sorted).

    Raises:
        ProcedureError: no table or pattern; the storage cannot be listed.
    """
    display, table = resolve_table(ctx, args.get("table"), None, procedure)
    pattern = text_arg(args, "log_file_path_pattern")
    if not pattern:
        raise ProcedureError(f"procedure {procedure}: log_file_path_pattern is required (a glob of log files, "
                             f"e.g. '{table.base_path}/*/.*.log.*')")
    if not (pattern.startswith("/") or "://" in pattern or pattern.startswith("file:")):
        pattern = table.storage.join(table.base_path, pattern)
    try:
        matched = glob_paths(table.storage, pattern)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: cannot list {pattern}: {exc}") from exc
    logs = []
    for path in matched:
        parts = path.replace("\\", "/").split("/")
        if ".hoodie" in parts or is_partition_metafile(parts[-1]):
            continue
        if parse_log_file_name(parts[-1]) is None or table.storage.is_dir(path):
            logger.debug("%s: %s is not a log file; skipped", procedure, path)
            continue
        logs.append(path)
    return display, table, logs


def _header_json(entries: dict[int, str]) -> str:
    """A header/footer map as Jackson prints ``Map<HeaderMetadataType, String>``: enum names as keys."""
    named = {(HeaderKey(k).name if 0 <= int(k) <= 6 else str(int(k))): v for k, v in entries.items()}
    return json.dumps(named, ensure_ascii=False, separators=(",", ":"))


def _record_count(display: str, block: LogBlock) -> int:
    if isinstance(block, (AvroDataBlock, ParquetDataBlock)):
        return int(block.record_count)
    if isinstance(block, DeleteBlock):
        return len(block.delete_records())
    if isinstance(block, HFileDataBlock):
        raise ProcedureError(f"show_logfile_metadata on {display}: {block.file_path} has an HFile data block "
                             "(a metadata table log); those are not decoded here")
    return 0


def show_logfile_metadata(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_logfile_metadata(table, log_file_path_pattern, limit)``: one row per log block (module
    docstring).

    Raises:
        ProcedureError: no table or pattern, a bad limit, an undecodable block, an HFile block.
    """
    procedure = "show_logfile_metadata"
    limit = int_arg(args, "limit", procedure)
    display, table, logs = _log_files(ctx, args, procedure)
    groups: dict[str, list[tuple[Any, ...]]] = {}
    corrupt = dummy = 0
    try:
        for path in logs:
            for block in read_log_blocks(table.storage, path):
                instant = block.instant_time
                if isinstance(block, CorruptBlock) and instant is None:
                    corrupt += 1
                    instant = f"corrupt_block_{corrupt}"
                elif instant is None:
                    dummy += 1
                    instant = f"dummy_instant_time_{dummy}"
                count = 0 if isinstance(block, (CorruptBlock, CommandBlock)) else _record_count(display, block)
                groups.setdefault(instant, []).append(
                    (instant, count, block.block_type.name, _header_json(block.header), _header_json(block.footer)))
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: {exc}") from exc
    rows = [row for group in groups.values() for row in group]
    return ctx.spark.createDataFrame(rows[:limit], METADATA_OUTPUT)


def _json_rows(table: pa.Table) -> list[str]:
    """Each row of ``table`` as Avro's ``GenericData.toString`` prints the record."""
    columns = [c.combine_chunks() if c.num_chunks else pa.array([], c.type) for c in table.columns]
    struct = pa.StructArray.from_arrays(columns, fields=list(table.schema))
    return [text or "{}" for text in avro_json(struct)]


def _unmerged(display: str, table: Table, logs: list[str], limit: int) -> list[str]:
    out: list[str] = []
    for path in logs:
        for block in read_log_blocks(table.storage, path):
            if len(out) >= limit:
                return out
            if isinstance(block, HFileDataBlock):
                raise ProcedureError(f"show_logfile_records on {display}: {path} has an HFile data block (a "
                                     "metadata table log); those are not decoded here")
            if isinstance(block, (AvroDataBlock, ParquetDataBlock)):
                for chunk in block.iter_tables():
                    out.extend(_json_rows(chunk.slice(0, limit - len(out))))
                    if len(out) >= limit:
                        break
    return out


def _reader_schema(table: Table, logs: list[str]) -> pa.Schema:
    """Hudi ``TableSchemaResolver.readSchemaFromLogFile`` of the last log: its last data block's schema (the
    last data block of any matched log when that one has none)."""
    for path in reversed(logs):
        schemas = [b.schema_json for b in read_log_blocks(table.storage, path, lazy=True)
                   if isinstance(b, (AvroDataBlock, ParquetDataBlock)) and b.schema_json]
        if schemas:
            return avro_to_arrow(parse_avro_schema(schemas[-1]))
    raise ProcedureError(f"show_logfile_records on {table.base_path}: no data block in {', '.join(logs)}; there "
                         "is no schema to merge with")


def _merged(display: str, table: Table, logs: list[str], limit: int) -> list[str]:
    timeline = table.timeline.reload()
    completed = timeline.completed_commits()
    if not completed:
        raise ProcedureError(f"show_logfile_records on {display}: merge => true needs a completed commit; the "
                             "table has none")
    block_filter = BlockFilter(latest_instant=completed[-1].timestamp,
                               completed=frozenset(i.timestamp for i in completed),
                               timeline_start=completed[0].timestamp,
                               pending=frozenset(i.timestamp for i in timeline.pending_commits()))
    requested = _reader_schema(table, logs)
    settings = MergeSettings.from_table(table)
    blocks = scan_log_blocks(table.storage, logs, block_filter)
    out: list[str] = []
    merged = merge_file_slice(table.storage, None, blocks, work_schema(requested, settings), settings,
                              context=f"show_logfile_records on {display}")
    try:
        for chunk in merged:
            out.extend(_json_rows(chunk.select(requested.names).slice(0, limit - len(out))))
            if len(out) >= limit:
                break
    finally:
        close = getattr(merged, "close", None)  # a generator: its spill folder goes when it is closed
        if close is not None:
            close()
    return out


def show_logfile_records(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_logfile_records(table, log_file_path_pattern, merge, limit)``: the records of the matched
    logs, merged or as written (module docstring).

    Raises:
        ProcedureError: no table or pattern, ``There is no log file``, bad ``merge``/``limit``, undecodable
            blocks, HFile blocks, ``merge => true`` without a completed commit.
    """
    procedure = "show_logfile_records"
    merge = bool_arg(args, "merge", procedure)
    limit = int_arg(args, "limit", procedure)
    display, table, logs = _log_files(ctx, args, procedure)
    if not logs:
        raise ProcedureError(f"{procedure} on {display}: There is no log file matching "
                             f"{text_arg(args, 'log_file_path_pattern')!r}")
    try:
        records = _merged(display, table, logs, limit) if merge else _unmerged(display, table, logs, limit)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: {exc}") from exc
    return ctx.spark.createDataFrame([(r,) for r in records[:limit]], RECORDS_OUTPUT)


_TABLE = Param("table", "string", required=True, doc="the table ([db.]name)")
_PATTERN = Param("log_file_path_pattern", "string", required=True,
                 doc="glob of log files, absolute or below the base path ('dt=*/.*.log.*')")
register(Procedure("show_logfile_metadata", (
    _TABLE, _PATTERN, Param("limit", "int", 10, doc="at most this many rows"),
), METADATA_OUTPUT, show_logfile_metadata, "the blocks of log files: instant, record count, type, header"))
register(Procedure("show_logfile_records", (
    _TABLE, _PATTERN, Param("merge", "boolean", False, doc="merge the records by key as a reader does"),
    Param("limit", "int", 10, doc="at most this many records"),
), RECORDS_OUTPUT, show_logfile_records, "the records of log files, as written or merged"))
