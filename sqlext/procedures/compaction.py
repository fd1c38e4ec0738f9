"""Compaction procedures (Hudi ``RunCompactionProcedure`` / ``ShowCompactionProcedure``) and the
``SCHEDULE|RUN|SHOW COMPACTION ON t|'path'`` statements that wrap them (docs/SQL.md §1.11, §2).

``run_compaction(op => 'schedule' | 'execute' | 'scheduleAndExecute' | 'run', table | path, timestamp,
options)``: *schedule* writes a plan when the trigger strategy asks for one (as Hudi; pass e.g.
``options => 'hoodie.compact.inline.max.delta.commits=1'``); *execute* runs the pending compaction at
``timestamp``, or all pending ones; *scheduleAndExecute* / *run* does both. Output: ``timestamp,
operation_size, state`` per compaction touched. ``show_compaction(table | path, limit = 20)``: every
compaction, newest first.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import HoodieConfig
from engine.config_layers import overlay_settings
from engine.errors import EngineError
from engine.services.compaction import (
    compaction_history,
    pending_compactions,
    schedule_compaction,
    why_nothing_to_schedule,
)
from engine.spark.compaction import execute_compaction
from engine.table import Table
from sqlext.commands.options import session_hoodie_confs
from sqlext.errors import ProcedureError
from sqlext.parser.statements import Compaction, CompactionKind, TableIdent
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

OUTPUT = "timestamp string, operation_size int, state string"


def parse_options(text: Any) -> dict[str, str]:
    """``k1=v1,k2=v2`` (or a map literal) as a dict."""
    if not text:
        return {}
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    pairs = [item.split("=", 1) for item in str(text).split(",") if item.strip()]
    bad = [p[0] for p in pairs if len(p) != 2]
    if bad:
        raise ProcedureError(f"options must be 'k1=v1,k2=v2'; cannot read {', '.join(bad)}")
    return {k.strip(): v.strip() for k, v in pairs}


def resolve_table(ctx: CommandContext, table: Any, path: Any, procedure: str) -> tuple[str, Table]:
    """The table named by ``table`` (wins) or ``path``; returns (display name, table).

    Raises:
        ProcedureError: neither given, or no Hudi table there.
    """
    display, loaded, _ = _locate(ctx, table, path, procedure)
    return display, loaded


def _locate(ctx: CommandContext, table: Any, path: Any, procedure: str) -> tuple[str, Table, dict[str, str]]:
    """(display name, table, the catalog's ``hoodie.*`` properties) of ``table`` (wins) or ``path``."""
    if table:
        database, _, name = str(table).rpartition(".")
        entry, loaded = ctx.catalog.require_hudi(TableIdent(database or None, name))
        return entry.display, loaded, {k: v for k, v in entry.properties.items() if k.startswith("hoodie.")}
    if path:
        try:
            return str(path), Table.load(str(path)), {}
        except EngineError as exc:
            raise ProcedureError(f"{procedure}: {exc}") from exc
    raise ProcedureError(f"Table name or table path must be given one ({procedure}: table => 'db.t' or "
                         "path => '/base/path')")


def resolve_service_table(ctx: CommandContext, table: Any, path: Any, procedure: str,
                          options: dict[str, str]) -> tuple[str, Table, HoodieConfig]:
    """(display name, table, config) of a table service procedure, the config layered as Hudi's
    ``HoodieCLIUtils.createHoodieWriteClient``: the catalog's ``hoodie.*`` properties (when named by
    ``table``) < ``hoodie.properties`` < the session's ``SET hoodie.*`` < ``options``; a key given under
    either of its spellings (``hoodie.cleaner.*`` / ``hoodie.clean.*``) in an upper layer wins.

    Raises:
        ProcedureError: neither table nor path given, or no Hudi table there.
        UnsupportedTable: a Hudi 1.x table (read only).
    """
    display, loaded, catalog = _locate(ctx, table, path, procedure)
    loaded.check_writable()  # every table service writes: none runs on a Hudi 1.x table
    conf = HoodieConfig(catalog)
    for layer in (loaded.config.as_dict(), session_hoodie_confs(ctx.spark), options):
        conf = overlay_settings(conf, layer)
    return display, loaded, conf


def _require_mor(display: str, table: Table, procedure: str) -> None:
    """Refuse a copy-on-write table in Hudi's words (``HoodieNotSupportedException`` of run_compaction,
    ``ShowCompactionProcedure``'s assertion)."""
    if not table.is_mor:
        hudi = ("Cannot show compaction on a Non Merge On Read table." if procedure == "show_compaction"
                else "Compaction is not supported on a CopyOnWrite table.")
        raise ProcedureError(f"{hudi} {procedure} needs a merge-on-read table; {display} is copy-on-write")


OPS = ("schedule", "execute", "scheduleAndExecute", "run")
"""``run_compaction``'s operations (Hudi ``HoodieProcedureUtils.Operation``; ``run`` is the old name of
``scheduleAndExecute``)."""


def pending_targets(procedure: str, display: str, service: str, pending: list[str], op: str, instants: Any,
                    limit: Any) -> tuple[list[str], str]:
    """(pending instants a ``run_compaction`` / ``run_clustering`` call works on, operation), as Hudi's
    ``HoodieProcedureUtils.filterPendingInstantsAndGetOperation``: ``instants`` only with ``execute`` (or no op),
    each of them pending; else the oldest ``limit`` pending ones, or all.

    Raises:
        ProcedureError: instants with another op, or an instant that is not pending.
    """
    if instants:
        if op not in ("execute", ""):
            raise ProcedureError(f"{procedure} on {display}: specific instants only can be used in 'execute' op "
                                 f"or not specific op, not {op!r}")
        wanted = sorted(i.strip() for i in str(instants).split(",") if i.strip())
        missing = [i for i in wanted if i not in pending]
        if missing:
            raise ProcedureError(f"{procedure} on {display}: specific {','.join(missing)} instants is not exist "
                                 f"(pending {service}s: {', '.join(pending) or 'none'})")
        return wanted, "execute"
    return (pending[: int(limit)] if limit is not None else pending), op


def run_compaction(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL run_compaction(op, table | path, timestamp, options, instants, limit)`` as Hudi's
    ``RunCompactionProcedure``: *schedule* writes a plan when the trigger strategy asks for one (with the
    ``options`` given) and returns the new plan, or the pending ones when none was written; *execute* runs
    the pending compactions (those in ``instants``, or the one at ``timestamp``, or the oldest ``limit``, or
    all); *scheduleAndExecute* (``run``) schedules, then executes the new plan, or the pending ones when
    none was written. Returns ``timestamp, operation_size, state`` per compaction, newest first; an empty
    result when there was nothing to do, with the reason logged (trigger strategy and counts)."""
    op = str(args.get("op") or "").strip().lower()
    if op == "run":
        op = "scheduleandexecute"
    options = parse_options(args.get("options"))
    display, table, conf = resolve_service_table(ctx, args.get("table"), args.get("path"), "run_compaction",
                                                 options)
    _require_mor(display, table, "run_compaction")
    instants = args.get("instants")
    if args.get("timestamp") is not None and not instants:
        instants, op = str(args["timestamp"]), "execute"
    try:
        pending = [i.timestamp for i in pending_compactions(table)]
        targets, op = pending_targets("run_compaction", display, "compaction", pending, op, instants,
                                      args.get("limit"))
        if op in ("schedule", "scheduleandexecute"):
            scheduled = schedule_compaction(table, conf)
            if scheduled is not None:
                targets = [scheduled]
            else:
                logger.info("run_compaction on %s: no compaction scheduled: %s", display,
                            why_nothing_to_schedule(table, conf))
        if op in ("execute", "scheduleandexecute"):
            if not targets:
                logger.info("run_compaction on %s: no pending compaction to execute", display)
            for target in targets:
                execute_compaction(ctx.spark, table, target, options)
                table.reload()
    except EngineError as exc:
        raise ProcedureError(f"run_compaction on {display}: {exc}") from exc
    wanted = set(targets)
    rows = [(t, size, state.name) for t, size, state in compaction_history(table) if t in wanted]
    return ctx.spark.createDataFrame(rows, OUTPUT)


def show_compaction(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_compaction(table | path, limit)``: compactions newest first."""
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), "show_compaction")
    _require_mor(display, table, "show_compaction")
    rows = [(t, size, state.name) for t, size, state in compaction_history(table)]
    limit = int(args.get("limit") or 20)
    return ctx.spark.createDataFrame(rows[:limit], OUTPUT)


register(Procedure("run_compaction", (
    Param("op", "string", required=True, choices=OPS,
          doc="schedule a plan, execute pending plans, or both (run = scheduleAndExecute)"),
    Param("table", "string", doc="the table ([db.]name); or give path"),
    Param("path", "string", doc="the table's base path; or give table"),
    Param("timestamp", "long", doc="execute the pending compaction at this instant"),
    Param("options", "string", doc="hoodie.* settings for this call, 'k1=v1,k2=v2' (e.g. "
                                   "hoodie.compact.inline.max.delta.commits=1)"),
    Param("instants", "string", doc="execute these pending compactions (comma-separated instants)"),
    Param("limit", "int", doc="execute at most this many pending compactions, oldest first"),
), OUTPUT, run_compaction, "schedule and/or execute merge-on-read compaction"))
register(Procedure("show_compaction", (
    Param("table", "string", doc="the table ([db.]name); or give path"),
    Param("path", "string", doc="the table's base path; or give table"),
    Param("limit", "int", 20, doc="at most this many compactions, newest first"),
), OUTPUT, show_compaction, "compactions of a merge-on-read table, newest first"))


def compaction_statement(ctx: CommandContext, stmt: Compaction) -> DataFrame:
    """``SCHEDULE|RUN COMPACTION ON t|'path' [AT instant]`` / ``SHOW COMPACTION ON t|'path' [LIMIT n]``."""
    table = None
    if stmt.table is not None:
        table = f"{stmt.table.db}.{stmt.table.name}" if stmt.table.db else stmt.table.name
    if stmt.kind is CompactionKind.SHOW:
        return show_compaction(ctx, {"table": table, "path": stmt.path, "limit": stmt.limit})
    op = "schedule" if stmt.kind is CompactionKind.SCHEDULE else ("execute" if stmt.instant else "run")
    return run_compaction(ctx, {"op": op, "table": table, "path": stmt.path, "timestamp": stmt.instant,
                                    "options": None})
