"""File-system views and statistics (Hudi ``ShowFileSystemViewProcedure``, ``StatsWriteAmplificationProcedure``,
``StatsFileSizeProcedure``, ``ShowInvalidParquetProcedure``; docs/SQL.md §2).

* ``show_fsview_all(table, max_instant, include_max, include_in_flight, exclude_compaction, limit, path_regex)``:
  every file slice → ``partition, file_id, base_instant, data_file, data_file_size, num_delta_files,
  total_delta_file_size, delta_files``.
* ``show_fsview_latest(..., partition_path, merge)``: the latest slice per file group (merged with a pending
  compaction's when ``merge``), with the log sizes Hudi 0.14 splits by whether a log's base instant is the
  slice's (``delta_size_compaction_scheduled``) or a newer one (``..._unscheduled``) and their ratios to the
  base file (-1 without one).
* ``stats_wa(table, limit)``: ``commit_time, total_upserted, total_written, write_amplification_factor`` per
  completed commit, then a ``Total`` row (factor printed as Java's ``DecimalFormat("#.##")``, ``0`` when nothing
  was upserted).
* ``stats_file_sizes(table, partition_path, limit)``: base file size distribution per commit and ``ALL``:
  ``commit_time, min, 10th, 50th, avg, 95th, max, num_files, std_dev`` (Codahale's uniform-snapshot quantiles).
* ``show_invalid_parquet(path, parallelism, needDelete)``: base files whose parquet footer does not read.

Not supported (an error naming the argument): ``include_in_flight => true`` (views here are built from completed
instants only) and ``exclude_compaction => true``.
"""

from __future__ import annotations

import fnmatch
import math
import re
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.filegroup.naming import parse_base_file_name
from engine.filegroup.slices import FileSlice, LogFile
from engine.table import Table
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import commit_totals
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

ALL_PARTITIONS = "ALL_PARTITIONS"
ALL_OUTPUT = ("partition string, file_id string, base_instant string, data_file string, data_file_size long, "
              "num_delta_files long, total_delta_file_size long, delta_files string")
LATEST_OUTPUT = ("partition string, file_id string, base_instant string, data_file string, data_file_size long, "
                 "num_delta_files long, total_delta_file_size long, delta_size_compaction_scheduled long, "
                 "delta_size_compaction_unscheduled long, delta_to_base_radio_compaction_scheduled double, "
                 "delta_to_base_radio_compaction_unscheduled double, delta_files_compaction_scheduled string, "
                 "delta_files_compaction_unscheduled string")


def _log_text(log: LogFile) -> str:
    """Java ``HoodieLogFile.toString``."""
    return f"HoodieLogFile{{pathStr='{log.path}', fileLen={log.size}}}"


def _flag(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    return value is not None and str(value).strip().lower() == "true"


def _view_slices(ctx: CommandContext, args: dict[str, Any], procedure: str, latest: bool
                 ) -> tuple[Table, list[FileSlice]]:
    display, table = resolve_table(ctx, args.get("table"), None, procedure)
    for name in ("include_in_flight", "exclude_compaction"):
        if _flag(args, name):
            raise ProcedureError(f"{procedure} on {display}: {name} => true is not supported here (views are built "
                                 "from completed instants, compactions included)")
    regex = str(args.get("path_regex") or ALL_PARTITIONS)
    if latest and args.get("partition_path") not in (None, "", ALL_PARTITIONS):
        if regex != ALL_PARTITIONS:
            raise ProcedureError(f"{procedure} on {display}: path_regex and partition_path cannot be used together")
        regex = str(args["partition_path"])
    max_instant = str(args.get("max_instant") or "")
    as_of = None
    if max_instant:
        completed = [i.timestamp for i in table.timeline.reload().completed() if
                     (i.timestamp <= max_instant if _flag(args, "include_max") else i.timestamp < max_instant)]
        if not completed:
            return table, []
        as_of = completed[-1]
    view = table.file_system_view(as_of)
    slices: list[FileSlice] = []
    for partition in view.partition_paths():
        if regex != ALL_PARTITIONS and not fnmatch.fnmatch(partition, regex):
            continue
        if latest:
            merge = args.get("merge") is None or _flag(args, "merge")
            slices += view.latest_file_slices(partition, merge_pending_compaction=merge)
        else:
            for group in view.file_groups(partition):
                slices += list(group.slices)
    return table, slices


def show_fsview_all(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_fsview_all(...)``: every file slice."""
    _, slices = _view_slices(ctx, args, "show_fsview_all", latest=False)
    rows = [(s.partition_path, s.file_id, s.base_instant, s.base_file.path if s.base_file else "",
             s.base_file.size if s.base_file else 0, len(s.log_files), sum(lf.size for lf in s.log_files),
             "[" + ", ".join(_log_text(lf) for lf in s.log_files) + "]") for s in slices]
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)], ALL_OUTPUT)


def show_fsview_latest(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_fsview_latest(...)``: the latest slice of every file group."""
    _, slices = _view_slices(ctx, args, "show_fsview_latest", latest=True)
    rows = []
    for s in slices:
        base = s.base_file.size if s.base_file else 0
        scheduled = [lf for lf in s.log_files if lf.base_instant == s.base_instant]
        unscheduled = [lf for lf in s.log_files if lf.base_instant != s.base_instant]
        size_s, size_u = sum(lf.size for lf in scheduled), sum(lf.size for lf in unscheduled)
        rows.append((s.partition_path, s.file_id, s.base_instant, s.base_file.path if s.base_file else "", base,
                     len(s.log_files), size_s + size_u, size_s, size_u,
                     size_s / base if base > 0 else -1.0, size_u / base if base > 0 else -1.0,
                     "[" + ",".join(_log_text(lf) for lf in scheduled) + "]",
                     "[" + ",".join(_log_text(lf) for lf in unscheduled) + "]"))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)], LATEST_OUTPUT)


def _decimal_format(value: float) -> str:
    """Java ``new DecimalFormat("#.##").format`` (half-even, no trailing zeros)."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return text or "0"


def stats_wa(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL stats_wa(table, limit)``."""
    _, table = resolve_table(ctx, args.get("table"), None, "stats_wa")
    rows = []
    upserted_total = written_total = 0
    for instant in table.timeline.reload().completed_commits():
        totals = commit_totals(table.commit_metadata(instant))
        written, upserted = totals[4], totals[5]
        factor = _decimal_format(written / upserted) if upserted > 0 else "0"
        upserted_total += upserted
        written_total += written
        rows.append((instant.timestamp, upserted, written, factor))
    rows.append(("Total", upserted_total, written_total,
                 _decimal_format(written_total / upserted_total) if upserted_total > 0 else "0"))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)],
                                     "commit_time string, total_upserted long, total_written long, "
                                     "write_amplification_factor string")


def _quantile(values: list[int], q: float) -> float:
    """Codahale ``UniformSnapshot.getValue``."""
    if not values:
        return 0.0
    pos = q * (len(values) + 1)
    index = int(pos)
    if index < 1:
        return float(values[0])
    if index >= len(values):
        return float(values[-1])
    lower, upper = values[index - 1], values[index]
    return lower + (pos - math.floor(pos)) * (upper - lower)


def _size_row(label: str, sizes: list[int]) -> tuple[Any, ...]:
    values = sorted(sizes)
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return (label, values[0], _quantile(values, 0.1), _quantile(values, 0.5), mean, _quantile(values, 0.95),
            values[-1], len(values), std)


def stats_file_sizes(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL stats_file_sizes(table, partition_path, limit)``."""
    _, table = resolve_table(ctx, args.get("table"), None, "stats_file_sizes")
    pattern = str(args.get("partition_path") or "")
    by_commit: dict[str, list[int]] = {}
    for info in table.storage.list_files_recursive(table.base_path):
        relative = info.path[len(table.base_path):].lstrip("/")
        if relative.startswith(".hoodie"):
            continue
        parsed = parse_base_file_name(info.name)
        if parsed is None:
            continue
        partition = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if pattern and not fnmatch.fnmatch(partition, pattern):
            continue
        by_commit.setdefault(parsed[2], []).append(info.size)
    rows = [_size_row(commit, sizes) for commit, sizes in sorted(by_commit.items())]
    everything = [s for sizes in by_commit.values() for s in sizes]
    if everything:
        rows.append(_size_row("ALL", everything))
    return ctx.spark.createDataFrame(rows[: int(args.get("limit") or 10)],
                                     "commit_time string, min long, `10th` double, `50th` double, avg double, "
                                     "`95th` double, max long, num_files int, std_dev double")


def show_invalid_parquet(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_invalid_parquet(path, parallelism, needDelete)``: parquet files whose footer does not read
    (deleted when ``needDelete``)."""
    path = str(args.get("path") or "")
    try:
        table = Table.load(path)
    except EngineError as exc:
        raise ProcedureError(f"show_invalid_parquet: {exc}") from exc
    bad = []
    for info in table.storage.list_files_recursive(table.base_path):
        if "/.hoodie" in info.path or not re.search(r"\.parquet$", info.name):
            continue
        try:
            with table.storage.open_input(info.path) as handle:
                pq.read_metadata(handle)
        except Exception:  # noqa: BLE001 - any unreadable footer is what this reports
            bad.append(info.path)
            if _flag(args, "needDelete"):
                table.storage.delete(info.path)
    return ctx.spark.createDataFrame([(p,) for p in sorted(bad)], "path string")


_VIEW = (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("max_instant", "string", "", doc="the view as of the last completed instant before this one"),
    Param("include_max", "boolean", False, doc="count max_instant itself"),
    Param("include_in_flight", "boolean", False, doc="not supported (true is refused)"),
    Param("exclude_compaction", "boolean", False, doc="not supported (true is refused)"),
    Param("limit", "int", 10, doc="at most this many rows"),
    Param("path_regex", "string", ALL_PARTITIONS, doc="partition glob, e.g. 'dt=2024*'"),
)
register(Procedure("show_fsview_all", _VIEW, ALL_OUTPUT, show_fsview_all, "every file slice of every file group"))
register(Procedure("show_fsview_latest", (
    *_VIEW, Param("partition_path", "string", ALL_PARTITIONS, doc="one partition (older name of path_regex)"),
    Param("merge", "boolean", True, doc="merge a slice with a pending compaction's"),
), LATEST_OUTPUT, show_fsview_latest, "the latest file slice of every file group"))
register(Procedure("stats_wa", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("limit", "int", 10, doc="at most this many rows"),
), "commit_time string, total_upserted long, total_written long, write_amplification_factor string", stats_wa,
    "records written per record upserted, per commit"))
register(Procedure("stats_file_sizes", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("partition_path", "string", "", doc="partition glob"),
    Param("limit", "int", 10, doc="at most this many rows"),
), "commit_time string, min long, `10th` double, `50th` double, avg double, `95th` double, max long, "
   "num_files int, std_dev double", stats_file_sizes, "base file sizes per commit"))
register(Procedure("show_invalid_parquet", (
    Param("path", "string", required=True, doc="the table's base path"),
    Param("parallelism", "int", 100, doc="accepted for Hudi compatibility (files are checked by the driver)"),
    Param("needDelete", "boolean", False, doc="delete the invalid files"),
), "path string", show_invalid_parquet, "parquet files whose footer does not read"))
