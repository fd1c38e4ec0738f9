"""``CALL archive_commits(table | path, min_commits, max_commits, retain_commits, enable_metadata)`` (Hudi
``ArchiveCommitsProcedure``): archive the active timeline down to ``min_commits`` once it holds more than
``max_commits`` completed commits (:mod:`engine.services.archive`). Output ``result int``: 0 when the call
went through (whether or not anything was archived; the log says what and why), as Hudi."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import ArchiveConfig, CleanConfig
from engine.errors import EngineError
from engine.services.archive import archive
from sqlext.errors import ProcedureError
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
