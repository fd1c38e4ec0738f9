"""Copying a table's rows out, and marker cleanup (Hudi ``CopyToTempViewProcedure``, ``CopyToTableProcedure``,
``DeleteMarkerProcedure``; docs/SQL.md §2).

* ``copy_to_temp_view(table, query_type, view_name, begin_instance_time, end_instance_time, as_of_instant,
  replace, global)`` → ``status`` 0: the table read as a snapshot (optionally as of an instant), incrementally
  (both bounds required) or read-optimized, registered as a (global) temporary view.
* ``copy_to_table(table, query_type, new_table, begin_instance_time, end_instance_time, as_of_instant,
  save_mode, columns)`` → ``status`` 0: the same read saved with Spark's ``saveAsTable`` (``overwrite`` or
  ``append``); the columns are the existing target's, else ``columns`` (comma-separated), else the table's.
* ``delete_marker(table, instant_time)`` → ``delete_marker_result``: removes the marker folders of the given
  instants (comma-separated) under ``.hoodie/.temp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.write.markers import delete_marker_dir
from sqlext.errors import ProcedureError
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

QUERY_TYPES = ("snapshot", "incremental", "read_optimized")


def _read(ctx: CommandContext, args: dict[str, Any], procedure: str) -> DataFrame:
    display, table = resolve_table(ctx, args.get("table"), None, procedure)
    query_type = str(args.get("query_type") or "snapshot").strip().lower()
    reader = ctx.spark.read.format("hudi").option("hoodie.datasource.query.type", query_type)
    begin, end = str(args.get("begin_instance_time") or ""), str(args.get("end_instance_time") or "")
    as_of = str(args.get("as_of_instant") or "")
    if query_type == "snapshot" and as_of:
        reader = reader.option("as.of.instant", as_of)
    elif query_type == "incremental":
        if not (begin and end):
            raise ProcedureError(f"{procedure} on {display}: when the query_type is incremental, "
                                 "begin_instance_time and end_instance_time can not be null.")
        reader = reader.option("hoodie.datasource.read.begin.instanttime", begin).option(
            "hoodie.datasource.read.end.instanttime", end)
    return reader.load(table.base_path)


def _flag(value: Any) -> bool:
    return str(value).strip().lower() == "true" if value is not None else False


def copy_to_temp_view(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL copy_to_temp_view(...)`` (module docstring)."""
    frame = _read(ctx, args, "copy_to_temp_view")
    view = str(args.get("view_name"))
    if _flag(args.get("global")):
        (frame.createOrReplaceGlobalTempView if _flag(args.get("replace")) else frame.createGlobalTempView)(view)
    else:
        (frame.createOrReplaceTempView if _flag(args.get("replace")) else frame.createTempView)(view)
    return ctx.spark.createDataFrame([(0,)], "status int")


def copy_to_table(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL copy_to_table(...)`` (module docstring)."""
    mode = str(args.get("save_mode") or "").strip().lower()
    if mode not in ("overwrite", "append"):
        raise ProcedureError(f"copy_to_table: save_mode not support {args.get('save_mode')!r} (append, overwrite)")
    frame = _read(ctx, args, "copy_to_table")
    target = str(args.get("new_table"))
    if ctx.spark.catalog.tableExists(target):
        columns = [f.name for f in ctx.spark.read.table(target).schema.fields]
    elif args.get("columns"):
        columns = [c.strip() for c in str(args["columns"]).split(",") if c.strip()]
    else:
        columns = [f.name for f in ctx.spark.read.table(str(args.get("table"))).schema.fields]
    frame.selectExpr(*columns).write.mode(mode).saveAsTable(target)
    return ctx.spark.createDataFrame([(0,)], "status int")


def delete_marker(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL delete_marker(table, instant_time)``."""
    _, table = resolve_table(ctx, args.get("table"), None, "delete_marker")
    for instant in str(args.get("instant_time") or "").split(","):
        if instant.strip():
            delete_marker_dir(table.storage, table.base_path, instant.strip())
    return ctx.spark.createDataFrame([(True,)], "delete_marker_result boolean")


_COPY = (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("query_type", "string", "snapshot", choices=QUERY_TYPES, doc="how the table is read"),
)
_RANGE = (
    Param("begin_instance_time", "string", "", doc="incremental: after this instant"),
    Param("end_instance_time", "string", "", doc="incremental: up to this instant"),
    Param("as_of_instant", "string", "", doc="snapshot as of this instant (time travel)"),
)
register(Procedure("copy_to_temp_view", (
    *_COPY, Param("view_name", "string", required=True, doc="the view to create"), *_RANGE,
    Param("replace", "boolean", False, doc="replace an existing view"),
    Param("global", "boolean", False, doc="a global temporary view (global_temp.<name>)"),
), "status int", copy_to_temp_view, "register a read of the table as a temporary view"))
register(Procedure("copy_to_table", (
    *_COPY, Param("new_table", "string", required=True, doc="the table to write (Spark's default format)"),
    *_RANGE, Param("save_mode", "string", "overwrite", choices=("overwrite", "append"), doc="how to write"),
    Param("columns", "string", "", doc="comma-separated columns for a new target (default: the table's)"),
), "status int", copy_to_table, "copy a read of the table into another table"))
register(Procedure("delete_marker", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("instant_time", "string", required=True, doc="instant(s), comma-separated"),
), "delete_marker_result boolean", delete_marker, "remove the markers of instants"))
