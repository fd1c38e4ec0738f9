"""Savepoint, restore and rollback procedures (Hudi ``CreateSavepointProcedure``, ``ShowSavepointsProcedure``,
``DeleteSavepointProcedure``, ``RollbackToSavepointProcedure``, ``RollbackToInstantTimeProcedure``,
``ShowRollbacksProcedure``; docs/SQL.md §2).

* ``create_savepoint(table, commit_time, user, comments)`` → ``create_savepoint_result`` (false, with the
  reason logged, when the commit cannot be savepointed — as Hudi; an unknown commit is an error).
* ``show_savepoints(table)`` → ``savepoint_time``, newest first.
* ``delete_savepoint(table, instant_time)`` → ``delete_savepoint_result`` (no instant: the latest savepoint).
* ``rollback_to_savepoint(table, instant_time)`` → ``rollback_savepoint_result``: restores the table (no
  instant: to the latest savepoint).
* ``rollback_to_instant(table, instant_time)`` → ``rollback_result``: rolls back the latest commit.
* ``show_rollbacks(table, limit)`` → ``instant, rollback_instant, total_files_deleted, time_taken_in_millis,
  total_partitions``; ``show_rollback_detail(table, limit, instant_time)`` → ``instant, rollback_instant,
  partition, deleted_file, succeeded`` (Hudi's names: ``instant`` is the rollback, ``rollback_instant`` what
  it rolled back).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.services.savepoint import (
    SavepointError,
    create_savepoint,
    delete_savepoint,
    restore_to_savepoint,
    rollback_to_instant,
    savepoint_times,
)
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import ROLLBACK, Instant, State
from engine.write.rollback import is_pending_clustering, revert_table_service
from sqlext.errors import ProcedureError
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)


def _boolean(ctx: CommandContext, column: str, value: bool) -> DataFrame:
    return ctx.spark.createDataFrame([(value,)], f"{column} boolean")


def _completed_commit(display: str, table: Any, instant_time: str) -> None:
    completed = [i.timestamp for i in table.timeline.reload().completed_commits()]
    if instant_time not in completed:
        raise ProcedureError(f"Commit {instant_time} not found in Commits of {display} (completed commits: "
                             f"{', '.join(completed[-10:]) or 'none'})")


def _require_savepoint(display: str, table: Any, args: dict[str, Any], action: str) -> str:
    """The savepoint ``instant_time`` names, or the latest when none is named (Hudi 0.15).

    Raises:
        ProcedureError: no savepoint at all, or none at ``instant_time``.
    """
    instant_time = str(args.get("instant_time") or "")
    if not savepoint_times(table):
        raise ProcedureError(f"There are no completed savepoint to run {action} ({display})")
    if not instant_time:
        instant_time = max(savepoint_times(table))
    if instant_time not in savepoint_times(table):
        raise ProcedureError(f"Commit {instant_time} not found in Commits of {display}: no such savepoint "
                             f"(savepoints: {', '.join(savepoint_times(table)) or 'none'})")
    return instant_time


def create_savepoint_procedure(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL create_savepoint(table, commit_time, user, comments)``."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "create_savepoint")
    commit_time = str(args.get("commit_time") or "")
    _completed_commit(display, table, commit_time)
    if commit_time in savepoint_times(table):
        # Hudi's HoodieIOException (not a HoodieSavepointException, so not a false result): the savepoint's
        # inflight file is there already
        raise ProcedureError(f"Failed to create file {table.base_path}/.hoodie/{commit_time}.savepoint.inflight: "
                             f"File already exists (commit {commit_time} of {display} is already savepointed)")
    try:
        create_savepoint(table, commit_time, str(args.get("user") or ""), str(args.get("comments") or ""))
    except SavepointError as exc:
        logger.warning("Failed: Could not create savepoint %s on %s: %s", commit_time, display, exc)
        return _boolean(ctx, "create_savepoint_result", False)
    return _boolean(ctx, "create_savepoint_result", True)


def show_savepoints(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_savepoints(table)``."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_savepoints")
    rows = [(t,) for t in sorted(savepoint_times(table), reverse=True)]
    return ctx.spark.createDataFrame(rows, "savepoint_time string")


def delete_savepoint_procedure(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL delete_savepoint(table, instant_time)``."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "delete_savepoint")
    instant_time = _require_savepoint(display, table, args, "delete")
    try:
        delete_savepoint(table, instant_time)
    except EngineError as exc:
        logger.warning("Failed: Could not delete savepoint %s on %s: %s", instant_time, display, exc)
        return _boolean(ctx, "delete_savepoint_result", False)
    return _boolean(ctx, "delete_savepoint_result", True)


def rollback_to_savepoint_procedure(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL rollback_to_savepoint(table, instant_time)``: restore the table to the savepoint."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "rollback_to_savepoint")
    instant_time = _require_savepoint(display, table, args, "delete")  # sic: Hudi 0.15's words
    try:
        restore_to_savepoint(table, instant_time)
    except EngineError as exc:
        raise ProcedureError(f"rollback_to_savepoint on {display}: {exc}") from exc
    ctx.spark.catalog.clearCache()
    return _boolean(ctx, "rollback_savepoint_result", True)


def rollback_to_instant_procedure(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL rollback_to_instant(table, instant_time)``."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "rollback_to_instant")
    instant_time = str(args.get("instant_time") or "")
    _completed_commit(display, table, instant_time)
    try:
        rollback_to_instant(table, instant_time)
    except SavepointError as exc:
        raise ProcedureError(f"rollback_to_instant on {display}: {exc}") from exc
    ctx.spark.catalog.clearCache()
    return _boolean(ctx, "rollback_result", True)


def _rollbacks(table: Any) -> list[tuple[Instant, dict[str, Any]]]:
    out = []
    for instant in table.timeline.reload().rollbacks():
        if instant.state is State.COMPLETED:
            out.append((instant, deserialize(table.timeline.read_details(instant), "HoodieRollbackMetadata",
                                             source=instant.file_name)))
    return out


def show_rollbacks(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_rollbacks(table, limit)``."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_rollbacks")
    rows = []
    for _, metadata in _rollbacks(table):
        for commit in metadata.get("commitsRollback") or []:
            rows.append((metadata.get("startRollbackTime"), commit, metadata.get("totalFilesDeleted"),
                         metadata.get("timeTakenInMillis"), len(metadata.get("partitionMetadata") or {})))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)],
                                     "instant string, rollback_instant string, total_files_deleted int, "
                                     "time_taken_in_millis long, total_partitions int")


def show_rollback_detail(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_rollback_detail(table, limit, instant_time)``: files of one rollback."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_rollback_detail")
    instant_time = str(args.get("instant_time") or "")
    found = [m for i, m in _rollbacks(table) if i.timestamp == instant_time]
    if not found:
        raise ProcedureError(f"show_rollback_detail on {display}: no completed {ROLLBACK} {instant_time}")
    metadata = found[0]
    # Hudi: HoodieRollbackMetadata.getCommitsRollback.toString, a java.util.List: "[t1, t2]"
    rolled_back = "[" + ", ".join(str(c) for c in metadata.get("commitsRollback") or []) + "]"
    rows = []
    for partition, detail in (metadata.get("partitionMetadata") or {}).items():
        for name, ok in [(f, True) for f in detail.get("successDeleteFiles") or []] + \
                [(f, False) for f in detail.get("failedDeleteFiles") or []]:
            rows.append((metadata.get("startRollbackTime"), rolled_back, partition, name, ok))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)],
                                     "instant string, rollback_instant string, partition string, "
                                     "deleted_file string, succeeded boolean")


_TABLE = Param("table", "string", doc="the table ([db.]name); or give path")
_PATH = Param("path", "string", doc="the table's base path; or give table")
register(Procedure("create_savepoint", (
    _TABLE, Param("commit_time", "string", required=True, doc="the completed commit to savepoint"),
    Param("user", "string", "", doc="who savepoints"), Param("comments", "string", "", doc="why", aliases=("comment",)), _PATH,
), "create_savepoint_result boolean", create_savepoint_procedure,
    "keep a commit's files from the cleaner, to restore it later"))
register(Procedure("show_savepoints", (_TABLE, _PATH), "savepoint_time string", show_savepoints,
                   "savepoints, newest first"))
register(Procedure("delete_savepoint", (
    _TABLE, Param("instant_time", "string", doc="the savepoint to delete (default: the latest)"), _PATH,
), "delete_savepoint_result boolean", delete_savepoint_procedure, "remove a savepoint"))
register(Procedure("rollback_to_savepoint", (
    _TABLE, Param("instant_time", "string", doc="the savepoint to restore (default: the latest)"), _PATH,
), "rollback_savepoint_result boolean", rollback_to_savepoint_procedure,
    "restore the table to a savepoint (every later instant rolled back)"))
register(Procedure("rollback_to_instant", (
    _TABLE, Param("instant_time", "string", required=True, doc="the latest completed commit"), _PATH,
), "rollback_result boolean", rollback_to_instant_procedure, "roll back the latest commit"))
register(Procedure("show_rollbacks", (_TABLE, Param("limit", "int", 10, doc="at most this many rows"), _PATH),
                   "instant string, rollback_instant string, total_files_deleted int, time_taken_in_millis long, "
                   "total_partitions int", show_rollbacks, "completed rollbacks"))
register(Procedure("show_rollback_detail", (
    _TABLE, Param("limit", "int", 10, doc="at most this many rows"),
    Param("instant_time", "string", required=True, doc="the rollback instant"), _PATH,
), "instant string, rollback_instant string, partition string, deleted_file string, succeeded boolean",
    show_rollback_detail, "the files one rollback deleted"))


def run_rollback_inflight_tableservice(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL run_rollback_inflight_tableservice(table | path, pending_instant, delete_request_instant_file)``
    (Hudi ``RunRollbackInflightTableServiceProcedure``) → ``instant, time_cost`` (ms)."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "run_rollback_inflight_tableservice")
    wanted = str(args.get("pending_instant") or "")
    timeline = table.timeline.reload()
    pending = [i for i in timeline.pending_compactions() + [
        i for i in timeline.of_actions(["replacecommit"]) if i.is_pending and is_pending_clustering(table, i)]
        if i.timestamp == wanted]
    if not pending:
        raise ProcedureError(f"run_rollback_inflight_tableservice on {display}: {wanted} is not a pending compaction "
                             "or clustering instant")
    start = time.monotonic()
    delete = str(args.get("delete_request_instant_file") or "false").lower() == "true"
    try:
        revert_table_service(table, pending[0], delete)
    except EngineError as exc:
        raise ProcedureError(f"run_rollback_inflight_tableservice on {display}: {exc}") from exc
    return ctx.spark.createDataFrame([(wanted, int((time.monotonic() - start) * 1000))], "instant string, time_cost long")


register(Procedure("run_rollback_inflight_tableservice", (
    _TABLE, _PATH, Param("pending_instant", "string", required=True, doc="the pending compaction or clustering"),
    Param("delete_request_instant_file", "boolean", False, doc="also delete the plan (requested file)"),
), "instant string, time_cost long", run_rollback_inflight_tableservice,
    "undo a pending compaction or clustering (its files deleted, back to requested)"))
