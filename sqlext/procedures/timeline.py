"""Timeline and table-config procedures: ``show_timeline`` as newer Hudi defines it
(``ShowTimelineProcedure``, not in 0.14/0.15) and ``show_table_properties``
(``ShowTablePropertiesProcedure``; docs/SQL.md §2).

``show_timeline`` lists every instant of the active timeline (any action, its latest state), newest first,
with the times its requested, inflight and completed files were written (``MM-dd HH:mm:ss``, local time, as
Hudi formats the files' modification times) and, for rollbacks, what they roll back (``Rolls back <t>``
while pending, ``Rolled back: <t>, ...`` once completed) or, for an instant a rollback targets,
``Rolled back by: <r>, ...``. ``startTime``/``endTime`` bound the instant times (both inclusive; with both
given, ``limit`` is ignored). ``showArchived`` adds the archived instants with ``timeline_type`` ``ARCHIVED``.

``show_table_properties`` returns ``hoodie.properties`` as ``key, value`` rows in the file's order.
Both take newer Hudi's ``filter`` (see :mod:`sqlext.procedures.commits`).
"""

from __future__ import annotations

import datetime as _dt
import logging
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.services.archive import read_archived
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import ROLLBACK, Instant, State
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import bool_arg, check_filter, int_arg, rows_frame, text_arg
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

TIMELINE_OUTPUT = ("instant_time string, action string, state string, requested_time string, "
                   "inflight_time string, completed_time string, timeline_type string, rollback_info string")
"""``show_timeline`` (Hudi ``ShowTimelineProcedure.OUTPUT_TYPE``)."""

PROPERTIES_OUTPUT = "key string, value string"
"""``show_table_properties`` (Hudi ``ShowTablePropertiesProcedure``)."""


def _table_or_path(ctx: CommandContext, args: dict[str, Any], procedure: str) -> tuple[str, Table]:
    """Hudi ``BaseProcedure.getBasePath``: ``table`` wins, else ``path``.

    Raises:
        ProcedureError: neither given (Hudi's words), unknown table, no Hudi table at ``path``.
    """
    if not args.get("table") and not args.get("path"):
        raise ProcedureError(f"procedure {procedure}: Table name or table path must be given one "
                             "(table => '[db.]name' or path => '/base/path')")
    return resolve_table(ctx, args.get("table"), args.get("path"), procedure)


# ---------------------------------------------------------------------------------------------- show_timeline


def _state_files(table: Table) -> dict[tuple[str, State], int]:
    """(instant time, state) → modification time (ms) of that state's file in ``.hoodie`` (Hudi
    ``buildInstantInfoFromTimeline``; a completed compaction's ``T.commit`` is its COMPLETED file)."""
    return {(timestamp, state): ms for (timestamp, _, state), ms in table.timeline.state_file_times().items()}


def _formatted(files: dict[tuple[str, State], int], timestamp: str, state: State) -> str | None:
    """Hudi ``getFormattedDateForState``: the state file's modification time as ``MM-dd HH:mm:ss`` in the
    local time zone; the instant time when the store reports no time; ``None`` without such a file."""
    ms = files.get((timestamp, state))
    if ms is None:
        return None
    if ms <= 0:
        return timestamp
    return _dt.datetime.fromtimestamp(ms / 1000.0).strftime("%m-%d %H:%M:%S")


def _rollback_target(table: Table, instant: Instant) -> list[str]:
    """Instant times a rollback rolls back: its plan's ``instantToRollback`` while pending, its metadata's
    ``commitsRollback`` once completed. Unreadable files give ``[]`` (Hudi skips them)."""
    try:
        if instant.is_completed:
            metadata = deserialize(table.timeline.read_details(instant), "HoodieRollbackMetadata")
            return [str(t) for t in metadata.get("commitsRollback") or []]
        requested = Instant(instant.timestamp, ROLLBACK, State.REQUESTED)
        plan = deserialize(table.timeline.read_details(requested), "HoodieRollbackPlan")
        target = (plan.get("instantToRollback") or {}).get("commitTime")
        return [str(target)] if target else []
    except EngineError as exc:
        logger.debug("show_timeline: skipping unreadable rollback %s: %s", instant, exc)
        return []


def _rollback_info(instant: Instant, targets: dict[str, list[str]], rolled_back_by: dict[str, list[str]]
                   ) -> str | None:
    """Hudi ``getRollbackInfo``."""
    if instant.action == ROLLBACK:
        if instant.timestamp not in targets:
            return None
        if instant.is_completed:
            return f"Rolled back: {', '.join(targets[instant.timestamp])}"
        return f"Rolls back {targets[instant.timestamp][0]}" if targets[instant.timestamp] else None
    by = rolled_back_by.get(instant.timestamp)
    return f"Rolled back by: {', '.join(by)}" if by else None


def show_timeline(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_timeline(table | path, limit = 20, showArchived, filter, startTime, endTime)`` as newer
    Hudi's ``ShowTimelineProcedure``: every instant of the active timeline, newest first
    (:data:`TIMELINE_OUTPUT`).

    Raises:
        ProcedureError: neither table nor path, unknown table, bad argument or filter.
    """
    procedure = "show_timeline"
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    start, end = text_arg(args, "startTime"), text_arg(args, "endTime")
    check_filter(ctx, procedure, TIMELINE_OUTPUT, text)
    display, table = _table_or_path(ctx, args, procedure)
    show_archived = bool_arg(args, "showArchived", procedure)
    table.timeline.reload()
    instants = [i for i in table.timeline.instants
                if (not start or i.timestamp >= start) and (not end or i.timestamp <= end)]
    instants = sorted(instants, key=lambda i: i.timestamp, reverse=True)
    if not (start and end):
        instants = instants[:limit]
    targets = {i.timestamp: _rollback_target(table, i) for i in table.timeline.rollbacks()}
    rolled_back_by: dict[str, list[str]] = {}
    for rollback_time, rolled in targets.items():
        for target in rolled:
            rolled_back_by.setdefault(target, []).append(rollback_time)
    files = _state_files(table)
    rows = [(i.timestamp, i.action, i.state.name, _formatted(files, i.timestamp, State.REQUESTED),
             _formatted(files, i.timestamp, State.INFLIGHT), _formatted(files, i.timestamp, State.COMPLETED),
             "ACTIVE", _rollback_info(i, targets, rolled_back_by)) for i in instants]
    if show_archived:
        rows += _archived_rows(display, table, start, end, procedure)
        rows.sort(key=lambda r: str(r[0]), reverse=True)
        if not (start and end):
            rows = rows[:limit]
    return rows_frame(ctx, procedure, rows, TIMELINE_OUTPUT, len(rows), text)


def _archived_rows(display: str, table: Table, start: str, end: str, procedure: str) -> list[tuple[Any, ...]]:
    """One ``ARCHIVED`` row per archived instant: its last state, and each state's transition time (the
    archive records the instant time formatted as ``MM-dd HH:mm:ss`` when it has one)."""
    try:
        entries = read_archived(table)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: cannot read the archived timeline: {exc}") from exc
    states: dict[tuple[str, str], dict[str, str | None]] = {}
    for entry in entries:
        timestamp, action = str(entry.get("commitTime")), str(entry.get("actionType"))
        if (start and timestamp < start) or (end and timestamp > end):
            continue
        moment = entry.get("stateTransitionTime")
        text = (f"{moment[4:6]}-{moment[6:8]} {moment[8:10]}:{moment[10:12]}:{moment[12:14]}"
                if moment and len(moment) >= 14 else timestamp)
        states.setdefault((timestamp, action), {})[str(entry.get("actionState"))] = text
    rank = {State.REQUESTED.name: 0, State.INFLIGHT.name: 1, State.COMPLETED.name: 2}
    return [(ts, action, max(seen, key=lambda name: rank.get(name, -1)), seen.get(State.REQUESTED.name),
             seen.get(State.INFLIGHT.name), seen.get(State.COMPLETED.name), "ARCHIVED", None)
            for (ts, action), seen in states.items()]


# ---------------------------------------------------------------------------------------------- properties


def show_table_properties(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_table_properties(table | path, limit = 10, filter)`` as Hudi's
    ``ShowTablePropertiesProcedure``: the first ``limit`` entries of ``hoodie.properties``, in the file's
    order (:data:`PROPERTIES_OUTPUT`).

    Raises:
        ProcedureError: neither table nor path, unknown table, bad argument or filter.
    """
    procedure = "show_table_properties"
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    check_filter(ctx, procedure, PROPERTIES_OUTPUT, text)
    _, table = _table_or_path(ctx, args, procedure)
    return rows_frame(ctx, procedure, list(table.config.items()), PROPERTIES_OUTPUT, limit, text)


_TABLE = Param("table", "string", doc="the table ([db.]name); or give path")
_PATH = Param("path", "string", doc="the table's base path; or give table")
_FILTER = Param("filter", "string", "", doc="Spark SQL predicate over the output columns, applied after limit "
                                            "(newer Hudi), e.g. \"action = 'commit' AND state = 'COMPLETED'\"")

register(Procedure("show_timeline", (
    _TABLE, _PATH, Param("limit", "int", 20, doc="at most this many instants, newest first (ignored when "
                                                 "both startTime and endTime are given)"),
    Param("showArchived", "boolean", False,
          doc="also list the instants of the archived timeline (.hoodie/archived) as ARCHIVED rows"),
    _FILTER,
    Param("startTime", "string", "", doc="only instants at or after this instant time"),
    Param("endTime", "string", "", doc="only instants at or before this instant time"),
), TIMELINE_OUTPUT, show_timeline, "every instant of the timeline with its state times and rollback links"))
register(Procedure("show_table_properties", (
    _TABLE, _PATH, Param("limit", "int", 10, doc="at most this many properties"), _FILTER,
), PROPERTIES_OUTPUT, show_table_properties, "the table's hoodie.properties"))
