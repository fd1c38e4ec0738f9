"""``CALL archive_commits(table | path, min_commits, max_commits, retain_commits, enable_metadata)`` (Hudi
``ArchiveCommitsProcedure``): archive the active timeline down to ``min_commits`` once it holds more than
``max_commits`` completed commits (:mod:`engine.services.archive`). Output ``result int``: 0 when the call
went through (whether or not anything was archived; the log says what and why), as Hudi."""

from __future__ import annotations

import datetime
import logging
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import ArchiveConfig, CleanConfig
from engine.errors import EngineError
from engine.services.archive import archive, archived_commits
from engine.timeline.commit_metadata import CommitMetadata
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import commit_totals
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)


def archive_commits(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL archive_commits(...)`` (module docstring)."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "archive_commits")
    if str(args.get("enable_metadata") or "false").lower() == "true":
        raise ProcedureError(f"archive_commits on {display}: enable_metadata => true needs a metadata table, "
                             "which this engine does not maintain")
    conf = table.config.overlay({
        ArchiveConfig.MIN_COMMITS.key: str(args.get("min_commits") or 20),
        ArchiveConfig.MAX_COMMITS.key: str(args.get("max_commits") or 30),
        CleanConfig.COMMITS_RETAINED.key: str(args.get("retain_commits") or 10),
    })
    try:
        result = archive(table, conf)
    except EngineError as exc:
        raise ProcedureError(f"archive_commits on {display}: {exc}") from exc
    if result.instants:
        logger.info("archive_commits on %s: %d instant(s) archived into %s", display, len(result.instants),
                    result.archive_file)
    else:
        logger.info("archive_commits on %s: nothing archived: %s", display, result.reason)
    return ctx.spark.createDataFrame([(0,)], "result int")


register(Procedure("archive_commits", (
    Param("table", "string", doc="the table ([db.]name); or give path"),
    Param("path", "string", doc="the table's base path; or give table"),
    Param("min_commits", "int", 20, doc="hoodie.keep.min.commits"),
    Param("max_commits", "int", 30, doc="hoodie.keep.max.commits"),
    Param("retain_commits", "int", 10, doc="hoodie.cleaner.commits.retained (must stay below min_commits)"),
    Param("enable_metadata", "boolean", False, doc="metadata table (not maintained here: true is refused)"),
), "result int", archive_commits, "move old instants from the active timeline into the archive"))


ARCHIVED_OUTPUT = ("commit_time string, state_transition_time string, total_bytes_written long, total_files_added long, total_files_updated long, "
                   "total_partitions_written long, total_records_written long, total_update_records_written long, "
                   "total_errors long")
ARCHIVED_METADATA_OUTPUT = (
    "commit_time string, state_transition_time string, action string, partition string, file_id string, "
    "previous_commit string, num_writes long, num_inserts long, num_deletes long, num_update_writes long, "
    "total_errors long, total_log_blocks long, total_corrupt_log_blocks long, total_rollback_blocks long, total_log_records long, "
    "total_updated_records_compacted long, total_bytes_written long")


def _days_ago(days: int) -> str:
    moment = datetime.datetime.now() - datetime.timedelta(days=days)
    return moment.strftime("%Y%m%d%H%M%S%f")[:17]


def _archived_in_range(ctx: CommandContext, args: dict[str, Any], procedure: str
                       ) -> list[tuple[str, str, CommitMetadata, str | None]]:
    """Archived completed commits with ``startTs < time <= endTs`` (defaults, as Hudi: 10 and 1 days ago),
    newest first."""
    display, table = resolve_table(ctx, args.get("table"), None, procedure)
    start = str(args.get("startTs") or "") or _days_ago(10)
    end = str(args.get("endTs") or "") or _days_ago(1)
    try:
        commits = archived_commits(table)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: cannot read the archived timeline: {exc}") from exc
    return sorted((c for c in commits if start < c[0] <= end), key=lambda c: c[0], reverse=True)


def show_archived_commits(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_archived_commits(table, limit, startTs, endTs)`` (Hudi ``ShowArchivedCommitsProcedure``)."""
    rows = [(ts, moved, *commit_totals(meta))
            for ts, _, meta, moved in _archived_in_range(ctx, args, "show_archived_commits")]
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)], ARCHIVED_OUTPUT)


def show_archived_commits_metadata(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_archived_commits_metadata(table, limit, startTs, endTs)``: one row per write stat."""
    rows = []
    for ts, action, meta, moved in _archived_in_range(ctx, args, "show_archived_commits_metadata"):
        for _, s in meta.iter_write_stats():
            rows.append((ts, moved, action, s.partition_path, s.file_id, s.prev_commit, s.num_writes, s.num_inserts,
                         s.num_deletes, s.num_update_writes, s.total_write_errors, s.total_log_blocks,
                         s.total_corrupt_log_block, s.total_rollback_blocks, s.total_log_records,
                         s.total_updated_records_compacted, s.total_write_bytes))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)], ARCHIVED_METADATA_OUTPUT)


_ARCHIVED_PARAMS = (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("limit", "int", 10, doc="at most this many rows, newest first"),
    Param("startTs", "string", "", doc="after this instant (default: 10 days ago, as Hudi)"),
    Param("endTs", "string", "", doc="up to this instant (default: 1 day ago, as Hudi)"),
)
register(Procedure("show_archived_commits", _ARCHIVED_PARAMS, ARCHIVED_OUTPUT, show_archived_commits,
                   "commits of the archived timeline in a time range"))
register(Procedure("show_archived_commits_metadata", _ARCHIVED_PARAMS, ARCHIVED_METADATA_OUTPUT,
                   show_archived_commits_metadata, "write stats of archived commits in a time range"))
