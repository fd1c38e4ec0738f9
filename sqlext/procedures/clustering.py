"""Clustering procedures (Hudi ``RunClusteringProcedure`` / ``ShowClusteringProcedure``) and the
``RUN|SCHEDULE|SHOW CLUSTERING ON t|'path'`` statements that wrap them (docs/SQL.md §2).

``run_clustering(table | path, predicate, order, show_involved_partition, op, order_strategy, options,
instants, selected_partitions, partition_regex_pattern, limit)``:

* ``predicate`` (a Spark SQL condition over the partition columns only) or ``selected_partitions``
  (comma-separated partition paths) restrict the plan to those partitions (filter mode SELECTED_PARTITIONS with
  ``hoodie.clustering.plan.strategy.partition.selected``, as Hudi); a predicate no partition matches returns
  no row;
* ``order`` sets ``hoodie.clustering.plan.strategy.sort.columns`` (each must be a table column: "Order column
  not exist"), ``order_strategy`` ``hoodie.layout.optimize.strategy`` (linear, z-order, hilbert);
* ``op``: ``schedule`` writes a plan, ``execute`` runs pending plans (``instants``, or the oldest ``limit``, or
  all), ``scheduleAndExecute`` (the default) schedules then executes the new plan, or the pending ones when
  nothing was scheduled.

Output ``timestamp, input_group_size, state, involved_partitions`` per clustering touched, newest first
(``involved_partitions`` is ``*`` unless ``show_involved_partition``). ``show_clustering(table | path, limit = 20,
show_involved_partition = false)``: the newest ``limit`` replacecommits that are clusterings.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engine.config import ClusteringConfig, LayoutConfig
from engine.config_layers import overlay_settings
from engine.errors import EngineError
from engine.read.planner import PartitionColumns
from engine.services.clustering import (
    ClusteringPlan,
    pending_clusterings,
    read_clustering_plan,
    schedule_clustering,
)
from engine.services.layout import layout_strategy
from engine.spark.clustering import execute_clustering
from engine.spark.schema import table_data_schema
from engine.table import Table
from engine.timeline.instant import REPLACE_COMMIT
from sqlext.error_report import summarize
from sqlext.errors import ProcedureError
from sqlext.parser.statements import Compaction, CompactionKind
from sqlext.procedures.compaction import parse_options, pending_targets, resolve_service_table, resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

OUTPUT = "timestamp string, input_group_size int, state string, involved_partitions string"
OPS = ("schedule", "execute", "scheduleAndExecute")


def _involved(plan: ClusteringPlan, show: bool) -> str:
    """Hudi ``HoodieCLIUtils.extractPartitions`` (partitions in plan order, each once) or ``*``."""
    if not show:
        return "*"
    seen: list[str] = []
    for group in plan.groups:
        for s in group.slices:
            if s.partition_path not in seen:
                seen.append(s.partition_path)
    return ",".join(seen)


def _flag(value: Any) -> bool:
    return str(value).strip().lower() == "true" if value is not None else False


def prune_partitions(ctx: CommandContext, display: str, table: Table, predicate: str) -> list[str]:
    """Partitions whose values satisfy ``predicate`` (Hudi ``RunClusteringProcedure.prunePartition``).

    Raises:
        ProcedureError: the predicate names a column that is not a partition column, or does not parse.
    """
    fields = table.partition_fields
    if not fields:
        raise ProcedureError(f"run_clustering on {display}: predicate given but the table is not partitioned")
    columns = PartitionColumns(tuple(fields), tuple(sorted(table.config.as_dict().items())))
    partitions = table.file_system_view().partition_paths()
    types = {f.name.lower(): f.dataType for f in table_data_schema(table).fields}
    rows = []
    for path in partitions:
        values = columns.values(path) or {}
        rows.append((path, *[values.get(name.lower()) for name in fields]))
    schema = "__partition_path string, " + ", ".join(f"`{name}` string" for name in fields)
    frame = ctx.spark.createDataFrame(rows, schema)
    frame = frame.select("__partition_path", *[
        F.col(f"`{name}`").cast(types[name.lower()]).alias(name) if name.lower() in types else F.col(f"`{name}`")
        for name in fields])
    try:
        kept = frame.filter(F.expr(predicate)).select("__partition_path").collect()
    except AnalysisException as exc:
        raise ProcedureError(f"run_clustering on {display}: Only partition predicates are allowed (partition "
                             f"columns: {', '.join(fields)}); cannot use {predicate!r}: "
                             f"{summarize(exc)}") from exc
    return sorted({r[0] for r in kept})


def run_clustering(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL run_clustering(...)`` as Hudi's ``RunClusteringProcedure`` (see the module doc)."""
    display, table, base_conf = resolve_service_table(ctx, args.get("table"), args.get("path"), "run_clustering",
                                                      {})
    confs: dict[str, str] = {}
    predicate, selected = args.get("predicate"), args.get("selected_partitions")
    chosen = prune_partitions(ctx, display, table, str(predicate)) if predicate else \
        (str(selected) if selected else None)
    if isinstance(chosen, list):
        if not chosen:
            logger.info("run_clustering on %s: no partition matched %s", display, predicate)
            return ctx.spark.createDataFrame([], OUTPUT)
        chosen = ",".join(chosen)
    if chosen is not None:
        confs[ClusteringConfig.PARTITION_FILTER_MODE.key] = "SELECTED_PARTITIONS"
        confs[ClusteringConfig.PARTITION_SELECTED.key] = chosen
    if args.get("partition_regex_pattern"):
        confs[ClusteringConfig.PARTITION_REGEX.key] = str(args["partition_regex_pattern"])
    if args.get("order"):
        confs[ClusteringConfig.SORT_COLUMNS.key] = str(args["order"])
    try:
        if args.get("order_strategy"):
            confs[LayoutConfig.STRATEGY.key] = layout_strategy(str(args["order_strategy"]))
        confs.update(parse_options(args.get("options")))
        conf = overlay_settings(base_conf, confs)
        pending = [i.timestamp for i in pending_clusterings(table)]
        op_arg = args.get("op")
        op = str(op_arg or "").strip().lower()
        targets, op = pending_targets("run_clustering", display, "clustering", pending, op, args.get("instants"),
                                      args.get("limit"))
        op = op or "scheduleandexecute"
        if op not in {o.lower() for o in OPS}:
            raise ProcedureError(f"run_clustering on {display}: unknown op {op_arg!r}; expected one of "
                                 f"{', '.join(OPS)}")
        if op in ("schedule", "scheduleandexecute"):
            scheduled, reason = schedule_clustering(table, conf)
            if scheduled is not None:
                targets = [scheduled]
            else:
                logger.info("run_clustering on %s: no clustering scheduled: %s", display, reason)
        if op in ("execute", "scheduleandexecute"):
            for target in targets:
                metrics = execute_clustering(ctx.spark, table, target, confs)
                logger.info("run_clustering on %s: clustering %s committed (%d groups, %d records, %d files written, "
                            "%d ms)", display, target, metrics.groups, metrics.records_written,
                            metrics.file_groups_written, metrics.elapsed_ms)
                table.reload()
    except EngineError as exc:
        raise ProcedureError(f"run_clustering on {display}: {exc}") from exc
    table.timeline.reload()
    show = _flag(args.get("show_involved_partition"))
    states = {i.timestamp: i.state for i in table.timeline.of_actions([REPLACE_COMMIT])}
    rows = []
    for target in sorted(set(targets), reverse=True):
        if target in states:
            plan = read_clustering_plan(table, target)
            rows.append((target, len(plan.groups), states[target].name, _involved(plan, show)))
    return ctx.spark.createDataFrame(rows, OUTPUT)


def show_clustering(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_clustering(table | path, limit, show_involved_partition)``: the newest ``limit``
    replacecommits that are clusterings (Hudi takes ``limit`` replacecommits, then keeps the clusterings)."""
    _, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_clustering")
    table.timeline.reload()
    limit = int(str(args.get("limit"))) if args.get("limit") is not None else 20
    show = _flag(args.get("show_involved_partition"))
    rows = []
    replaces = sorted(table.timeline.of_actions([REPLACE_COMMIT]), key=lambda i: i.timestamp, reverse=True)
    for instant in replaces[:limit]:
        try:
            plan = read_clustering_plan(table, instant.timestamp)
        except EngineError:
            continue  # an overwrite, or a clustering whose requested file is gone
        rows.append((instant.timestamp, len(plan.groups), instant.state.name, _involved(plan, show)))
    return ctx.spark.createDataFrame(rows, OUTPUT)


def clustering_statement(ctx: CommandContext, stmt: Compaction) -> DataFrame:
    """``SCHEDULE|RUN CLUSTERING ON t|'path' [AT instant]`` / ``SHOW CLUSTERING ON t|'path' [LIMIT n]``."""
    table = None
    if stmt.table is not None:
        table = f"{stmt.table.db}.{stmt.table.name}" if stmt.table.db else stmt.table.name
    if stmt.kind is CompactionKind.SHOW:
        return show_clustering(ctx, {"table": table, "path": stmt.path, "limit": stmt.limit})
    if stmt.kind is CompactionKind.SCHEDULE:
        return run_clustering(ctx, {"table": table, "path": stmt.path, "op": "schedule"})
    if stmt.instant:
        return run_clustering(ctx, {"table": table, "path": stmt.path, "instants": stmt.instant})
    return run_clustering(ctx, {"table": table, "path": stmt.path, "op": "scheduleAndExecute"})


_TABLE = Param("table", "string", doc="the table ([db.]name); or give path")
_PATH = Param("path", "string", doc="the table's base path; or give table")
_SHOW = Param("show_involved_partition", "boolean", False, doc="list the plan's partitions instead of '*'")
register(Procedure("run_clustering", (
    _TABLE, _PATH,
    Param("predicate", "string", doc="Spark SQL condition over partition columns: cluster matching partitions"),
    Param("order", "string", doc="sort columns, comma-separated (hoodie.clustering.plan.strategy.sort.columns)"),
    _SHOW,
    Param("op", "string", choices=OPS, doc="schedule a plan, execute pending plans, or both (default)"),
    Param("order_strategy", "string", doc="linear, z-order or hilbert (hoodie.layout.optimize.strategy)"),
    Param("options", "string", doc="hoodie.* settings for this call, 'k1=v1,k2=v2'"),
    Param("instants", "string", doc="execute these pending clusterings (comma-separated instants)"),
    Param("selected_partitions", "string", doc="cluster these partitions (comma-separated paths)"),
    Param("partition_regex_pattern", "string", doc="cluster partitions whose path matches this regex"),
    Param("limit", "int", doc="execute at most this many pending clusterings, oldest first"),
), OUTPUT, run_clustering, "schedule and/or execute clustering (small files rewritten sorted and sized)"))
register(Procedure("show_clustering", (
    _TABLE, _PATH,
    Param("limit", "int", 20, doc="look at this many newest replacecommits"),
    _SHOW,
), OUTPUT, show_clustering, "clustering plans and their states, newest first"))
