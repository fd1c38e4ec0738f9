"""Clean procedures (Hudi ``RunCleanProcedure``, ``ShowCleansProcedure``, ``ShowCleansPlanProcedure``; docs/SQL.md §2).

* ``run_clean(table, schedule_in_line, clean_policy, retain_commits, hours_retained, file_versions_retained,
  trigger_strategy, trigger_max_commits, options)``: finishes pending cleans, then (``schedule_in_line``,
  default true) schedules a clean when due and runs it. One row, of the last clean run (as Hudi, whose
  ``CleanActionExecutor`` returns the last of the pending cleans and the new one): ``start_clean_time,
  time_taken_in_millis, total_files_deleted, earliest_commit_to_retain, bootstrap_part_metadata, version``;
  no row when nothing was cleaned (the reason is logged). Arguments not given keep the table's settings
  (Hudi 0.14 passed its own defaults for every argument, overriding the table's); ``options`` win over the
  arguments; settings are layered as :func:`sqlext.procedures.compaction.resolve_service_table` says, the
  cleaner keys read under ``hoodie.cleaner.*`` (0.14/0.15) and ``hoodie.clean.*`` (later releases).
* ``show_cleans(table | path, limit, showArchived, filter)``: completed cleans, newest first.
* ``show_cleans_metadata(...)``: the same, one row per cleaned partition.
* ``show_clean_plans(table | path, limit, showArchived, filter)``: clean plans in every state.

``filter`` is a Spark SQL predicate over the output columns. ``showArchived`` adds nothing yet (archival is
not implemented, so no clean is ever archived).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import CleanConfig
from engine.errors import EngineError
from engine.services.clean import CleanPlan, execute_clean, pending_cleans, run_clean
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import CLEAN, Instant, State
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import file_mtimes, transition_time
from sqlext.procedures.compaction import parse_options, resolve_service_table, resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

RUN_OUTPUT = ("start_clean_time string, time_taken_in_millis long, total_files_deleted int, "
              "earliest_commit_to_retain string, bootstrap_part_metadata string, version int")
SHOW_OUTPUT = ("clean_time string, state_transition_time string, action string, start_clean_time string, "
               "time_taken_in_millis long, total_files_deleted int, earliest_commit_to_retain string, "
               "last_completed_commit_timestamp string, version int")
METADATA_OUTPUT = ("clean_time string, state_transition_time string, action string, start_clean_time string, "
                   "partition_path string, policy string, delete_path_patterns int, success_delete_files int, "
                   "failed_delete_files int, is_partition_deleted boolean, time_taken_in_millis long, "
                   "total_files_deleted int")
PLAN_OUTPUT = ("plan_time string, action string, earliest_instant_to_retain string, "
               "last_completed_commit_timestamp string, policy string, version int, total_partitions_to_clean int, "
               "total_partitions_to_delete int, extra_metadata string")

_ARGUMENT_KEYS = {
    "clean_policy": CleanConfig.POLICY.key,
    "retain_commits": CleanConfig.COMMITS_RETAINED.key,
    "hours_retained": CleanConfig.HOURS_RETAINED.key,
    "file_versions_retained": CleanConfig.FILE_VERSIONS_RETAINED.key,
    "trigger_strategy": CleanConfig.TRIGGER_STRATEGY.key,
    "trigger_max_commits": CleanConfig.MAX_COMMITS.key,
}


def run_clean_procedure(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL run_clean(...)`` (module docstring)."""
    options = {key: str(args[name]) for name, key in _ARGUMENT_KEYS.items() if args.get(name) is not None}
    options.update(parse_options(args.get("options")))  # Hudi: options over the named arguments
    display, table, conf = resolve_service_table(ctx, args.get("table"), None, "run_clean", options)
    schedule = args.get("schedule_in_line")
    schedule = True if schedule is None else str(schedule).strip().lower() not in ("false", "0")
    try:
        if schedule:
            results, reason = run_clean(table, conf)
        else:
            results, reason = [execute_clean(table, i) for i in pending_cleans(table)], "schedule_in_line=false"
    except EngineError as exc:
        raise ProcedureError(f"run_clean on {display}: {exc}") from exc
    if not results:
        logger.info("run_clean on %s: nothing cleaned: %s", display, reason)
    rows = [(r.instant, r.time_taken_ms, r.files_deleted, r.earliest_commit_to_retain,
             json.dumps(r.metadata.get("bootstrapPartitionMetadata") or {}), r.metadata.get("version"))
            for r in results[-1:]]  # Hudi: the metadata of the last clean CleanActionExecutor ran
    if len(results) > 1:
        logger.info("run_clean on %s: also finished pending cleans %s", display, [r.instant for r in results[:-1]])
    return ctx.spark.createDataFrame(rows, RUN_OUTPUT)


def _cleans(table: Table, completed: bool) -> list[Instant]:
    table.timeline.reload()
    return sorted((i for i in table.timeline.cleans() if not completed or i.state is State.COMPLETED),
                  key=lambda i: i.timestamp, reverse=True)


def _finish(ctx: CommandContext, rows: list[tuple[Any, ...]], output: str, args: dict[str, Any]) -> DataFrame:
    frame = ctx.spark.createDataFrame(rows, output)
    predicate = args.get("filter")
    if predicate and str(predicate).strip():
        try:
            frame = frame.filter(str(predicate))
        except Exception as exc:  # noqa: BLE001 - Spark's analysis error, re-raised with the argument named
            raise ProcedureError(f"Invalid filter expression: {predicate!r}: {exc}") from exc
    return frame


def show_cleans(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_cleans(table | path, limit, showArchived, filter)``."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_cleans")
    rows = []
    mtimes = file_mtimes(table)
    for instant in _cleans(table, completed=True)[: int(args.get("limit") or 10)]:
        metadata = deserialize(table.timeline.read_details(instant), "HoodieCleanMetadata", source=instant.file_name)
        rows.append((instant.timestamp, transition_time(table, instant, mtimes), CLEAN, metadata.get("startCleanTime"),
                     metadata.get("timeTakenInMillis"), metadata.get("totalFilesDeleted"),
                     metadata.get("earliestCommitToRetain"), metadata.get("lastCompletedCommitTimestamp"),
                     metadata.get("version")))
    return _finish(ctx, rows, SHOW_OUTPUT, args)


def show_cleans_metadata(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_cleans_metadata(table | path, limit, showArchived, filter)``: one row per cleaned partition."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_cleans_metadata")
    limit = int(args.get("limit") or 10)
    rows: list[tuple[Any, ...]] = []
    mtimes = file_mtimes(table)
    for instant in _cleans(table, completed=True):
        metadata = deserialize(table.timeline.read_details(instant), "HoodieCleanMetadata", source=instant.file_name)
        for partition, detail in (metadata.get("partitionMetadata") or {}).items():
            if len(rows) >= limit:
                break
            rows.append((instant.timestamp, transition_time(table, instant, mtimes), CLEAN,
                         metadata.get("startCleanTime"), partition, detail.get("policy"),
                         len(detail.get("deletePathPatterns") or []), len(detail.get("successDeleteFiles") or []),
                         len(detail.get("failedDeleteFiles") or []), detail.get("isPartitionDeleted"),
                         metadata.get("timeTakenInMillis"), metadata.get("totalFilesDeleted")))
    return _finish(ctx, rows, METADATA_OUTPUT, args)


def show_clean_plans(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_clean_plans(table | path, limit, showArchived, filter)``: plans of cleans in every state."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_clean_plans")
    rows: list[tuple[Any, ...]] = []
    for instant in _cleans(table, completed=False)[: int(args.get("limit") or 10)]:
        requested = Instant(instant.timestamp, CLEAN, State.REQUESTED)
        try:
            record = deserialize(table.timeline.read_details(requested), "HoodieCleanerPlan",
                                 source=requested.file_name)
        except EngineError as exc:
            logger.warning("cannot read clean plan %s: %s", requested.file_name, exc)
            rows.append((instant.timestamp, CLEAN, None, None, None, None, None, None, None))
            continue
        plan = CleanPlan.from_avro(record)
        extra = record.get("extraMetadata") or {}
        rows.append((instant.timestamp, CLEAN,
                     plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else None,
                     plan.last_completed_commit, plan.policy.value, record.get("version"),
                     len(record.get("filePathsToBeDeletedPerPartition") or {}),
                     len(record.get("partitionsToBeDeleted") or []),
                     ", ".join(f"{k}={v}" for k, v in extra.items()) or None))
    return _finish(ctx, rows, PLAN_OUTPUT, args)


_SHOW_PARAMS = (
    Param("table", "string", doc="the table ([db.]name); or give path"),
    Param("path", "string", doc="the table's base path; or give table"),
    Param("limit", "int", 10, doc="at most this many rows, newest first"),
    Param("showArchived", "boolean", False, doc="also archived cleans (none exist: archival is not implemented)"),
    Param("filter", "string", "", doc="a Spark SQL predicate over the output columns"),
)
register(Procedure("run_clean", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("skip_locking", "boolean", False, doc="accepted for Hudi compatibility (single-writer: no lock)"),
    Param("schedule_in_line", "boolean", True, doc="schedule a clean when due (false: only finish pending ones)"),
    Param("clean_policy", "string", choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS",
                                             "KEEP_LATEST_BY_HOURS"), doc="hoodie.cleaner.policy"),
    Param("retain_commits", "int", doc="hoodie.cleaner.commits.retained"),
    Param("hours_retained", "int", doc="hoodie.cleaner.hours.retained"),
    Param("file_versions_retained", "int", doc="hoodie.cleaner.fileversions.retained"),
    Param("trigger_strategy", "string", choices=("NUM_COMMITS",), doc="hoodie.clean.trigger.strategy"),
    Param("trigger_max_commits", "int", doc="hoodie.clean.max.commits"),
    Param("options", "string", doc="hoodie.* settings for this call, 'k1=v1,k2=v2'"),
), RUN_OUTPUT, run_clean_procedure, "remove file versions older than the retention (the cleaner)"))
register(Procedure("show_cleans", _SHOW_PARAMS, SHOW_OUTPUT, show_cleans, "completed cleans, newest first"))
register(Procedure("show_cleans_metadata", _SHOW_PARAMS, METADATA_OUTPUT, show_cleans_metadata,
                   "completed cleans per partition, newest first"))
register(Procedure("show_clean_plans", _SHOW_PARAMS, PLAN_OUTPUT, show_clean_plans,
                   "clean plans in every state, newest first"))
