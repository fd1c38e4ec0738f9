"""Compaction procedures (Hudi ``RunCompactionProcedure`` / ``ShowCompactionProcedure``) and the
``SCHEDULE|RUN|SHOW COMPACTION ON t|'path'`` statements that wrap them (SQL.md §1.11, §2).

``run_compaction(op => 'schedule' | 'execute' | 'scheduleAndExecute' | 'run', table | path, timestamp,
options)``: *schedule* writes a plan when the trigger strategy asks for one (as Hudi; pass e.g.
``options => 'hoodie.compact.inline.max.delta.commits=1'``); *execute* runs the pending compaction at
``timestamp``, or all pending ones; *scheduleAndExecute* / *run* does both. Output: ``timestamp,
operation_size, state`` per compaction touched. ``show_compaction(table | path, limit = 20)``: every
compaction, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.services.compaction import pending_compactions, read_plan, schedule_compaction
from engine.spark.compaction import execute_compaction
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import Instant, State
from sqlext.errors import ProcedureError
from sqlext.parser.statements import Compaction, CompactionKind, TableIdent
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.session import Session

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


def resolve_table(session: Session, table: Any, path: Any, procedure: str) -> tuple[str, Table]:
    """The table named by ``table`` (wins) or ``path``; returns (display name, table).

    Raises:
        ProcedureError: neither given, or no Hudi table there.
    """
    if table:
        database, _, name = str(table).rpartition(".")
        entry, loaded = session.catalog.require_hudi(TableIdent(database or None, name))
        return entry.display, loaded
    if path:
        try:
            return str(path), Table.load(str(path))
        except EngineError as exc:
            raise ProcedureError(f"{procedure}: {exc}") from exc
    raise ProcedureError(f"{procedure}: give table => 'db.t' or path => '/base/path'")


def _require_mor(display: str, table: Table, procedure: str) -> None:
    if not table.is_mor:
        raise ProcedureError(f"{procedure} needs a merge-on-read table; {display} is copy-on-write")


def _plan_size(table: Table, instant: str) -> int:
    try:
        data = table.timeline.read_details(Instant(instant, "compaction", State.REQUESTED))
        return len(deserialize(data).get("operations") or [])
    except EngineError:
        return 0


def run_compaction(session: Session, args: dict[str, Any]) -> DataFrame:
    """``CALL run_compaction(...)``; see the module doc."""
    op = str(args.get("op") or "").strip().lower()
    if op not in ("schedule", "execute", "scheduleandexecute", "run"):
        raise ProcedureError(f"run_compaction: op must be schedule, execute, scheduleAndExecute or run, not {op!r}")
    display, table = resolve_table(session, args.get("table"), args.get("path"), "run_compaction")
    _require_mor(display, table, "run_compaction")
    options = parse_options(args.get("options"))
    conf = table.config.overlay(options)
    rows: list[tuple[str, int, str]] = []
    try:
        scheduled = None
        if op in ("schedule", "scheduleandexecute", "run"):
            scheduled = schedule_compaction(table, conf)
            if scheduled is not None and op == "schedule":
                rows.append((scheduled, _plan_size(table, scheduled), "REQUESTED"))
        if op in ("execute", "scheduleandexecute", "run"):
            timestamp = args.get("timestamp")
            if timestamp is not None:
                targets = [str(timestamp)]
            elif scheduled is not None and op != "execute":
                targets = [scheduled]
            else:
                targets = [i.timestamp for i in pending_compactions(table)]
            if not targets:
                raise ProcedureError(
                    f"run_compaction: there is no pending compaction on {display} to execute "
                    "(schedule one first: op => 'schedule' or 'run'; scheduling follows "
                    "hoodie.compact.inline.trigger.strategy)")
            for target in targets:
                size = len(read_plan(table, target))
                execute_compaction(session.spark, table, target, options)
                rows.append((target, size, "COMPLETED"))
                table.reload()
    except EngineError as exc:
        raise ProcedureError(f"run_compaction on {display}: {exc}") from exc
    return session.spark.createDataFrame(rows, OUTPUT)


def show_compaction(session: Session, args: dict[str, Any]) -> DataFrame:
    """``CALL show_compaction(table | path, limit)``: compactions newest first."""
    display, table = resolve_table(session, args.get("table"), args.get("path"), "show_compaction")
    _require_mor(display, table, "show_compaction")
    table.timeline.reload()
    rows = []
    for instant in table.timeline.instants:
        if instant.action == "compaction":
            rows.append((instant.timestamp, _plan_size(table, instant.timestamp), instant.state.name))
        elif instant.action == "commit" and instant.state is State.COMPLETED \
                and table.commit_metadata(instant).compacted:
            rows.append((instant.timestamp, _plan_size(table, instant.timestamp), "COMPLETED"))
    rows.sort(key=lambda r: r[0], reverse=True)
    limit = int(args.get("limit") or 20)
    return session.spark.createDataFrame(rows[:limit], OUTPUT)


register(Procedure("run_compaction", (
    Param("op", "string", required=True), Param("table", "string"), Param("path", "string"),
    Param("timestamp", "string"), Param("options", "string"),
), OUTPUT, run_compaction, "schedule and/or execute merge-on-read compaction"))
register(Procedure("show_compaction", (
    Param("table", "string"), Param("path", "string"), Param("limit", "int", 20),
), OUTPUT, show_compaction, "compactions of a merge-on-read table, newest first"))


def compaction_statement(session: Session, stmt: Compaction) -> DataFrame:
    """``SCHEDULE|RUN COMPACTION ON t|'path' [AT instant]`` / ``SHOW COMPACTION ON t|'path' [LIMIT n]``."""
    table = None
    if stmt.table is not None:
        table = f"{stmt.table.db}.{stmt.table.name}" if stmt.table.db else stmt.table.name
    if stmt.kind is CompactionKind.SHOW:
        return show_compaction(session, {"table": table, "path": stmt.path, "limit": stmt.limit})
    op = "schedule" if stmt.kind is CompactionKind.SCHEDULE else ("execute" if stmt.instant else "run")
    return run_compaction(session, {"op": op, "table": table, "path": stmt.path, "timestamp": stmt.instant,
                                    "options": None})
