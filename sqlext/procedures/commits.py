"""Commit-inspection procedures, as Hudi 0.14/0.15 defines them (``ShowCommitsProcedure``,
``ShowCommitFilesProcedure``, ``ShowCommitPartitionsProcedure``, ``ShowCommitWriteStatsProcedure``,
``ShowCommitExtraMetadataProcedure``, ``CommitsCompareProcedure``; docs/SQL.md §2).

Every procedure reads the active timeline only: ``show_commits[_metadata]`` lists completed ``commit``,
``deltacommit`` and ``replacecommit`` instants newest first (a completed compaction is a ``commit``); the
``show_commit_*`` procedures open one completed commit by its instant time; ``commits_compare`` says how
far one table's commits are behind or ahead of another's.

Beyond 0.14, and as newer Hudi defines it, every ``show_*`` procedure here takes ``filter``: a Spark SQL
predicate over its output columns, checked before the table is read (an invalid one fails as Hudi's
``Invalid filter expression``) and applied to the rows left after ``limit``. ``show_commits`` also accepts
newer Hudi's ``showArchived`` (adds the commits of the archived timeline, ``.hoodie/archived``).

Rows keep the order Hudi gives them: partitions and extra-metadata keys in the order of the commit file
(Jackson reads them into ordered maps). ``state_transition_time`` is, as in Hudi 0.14, the modification
time of the completed instant file, formatted ``yyyyMMddHHmmssSSS`` in the table's timeline time zone
(``hoodie.table.timeline.timezone``: UTC, or the local zone).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame

from engine.errors import EngineError
from engine.services.archive import archived_commits
from engine.table import Table
from engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata
from engine.timeline.instant import (
    DELTA_COMMIT,
    REPLACE_COMMIT,
    Instant,
    State,
    instant_time_of_millis,
    sort_instants,
)
from sqlext.errors import ProcedureError
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

COMMITS_OUTPUT = ("commit_time string, state_transition_time string, action string, total_bytes_written long, "
                  "total_files_added long, total_files_updated long, total_partitions_written long, "
                  "total_records_written long, total_update_records_written long, total_errors long")
"""``show_commits`` (Hudi ``ShowCommitsProcedure.OUTPUT_TYPE``)."""

COMMITS_METADATA_OUTPUT = (
    "commit_time string, state_transition_time string, action string, partition string, file_id string, "
    "previous_commit string, num_writes long, num_inserts long, num_deletes long, num_update_writes long, "
    "total_errors long, total_log_blocks long, total_corrupt_log_blocks long, total_rollback_blocks long, "
    "total_log_records long, total_updated_records_compacted long, total_bytes_written long")
"""``show_commits_metadata`` (Hudi ``ShowCommitsProcedure.METADATA_OUTPUT_TYPE``)."""

COMMIT_FILES_OUTPUT = ("action string, partition_path string, file_id string, previous_commit string, "
                       "total_records_updated long, total_records_written long, total_bytes_written long, "
                       "total_errors long, file_size long")
"""``show_commit_files`` (Hudi ``ShowCommitFilesProcedure``)."""

COMMIT_PARTITIONS_OUTPUT = ("action string, partition_path string, total_files_added long, "
                            "total_files_updated long, total_records_inserted long, total_records_updated long, "
                            "total_bytes_written long, total_errors long")
"""``show_commit_partitions`` (Hudi ``ShowCommitPartitionsProcedure``)."""

COMMIT_WRITE_STATS_OUTPUT = "action string, total_bytes_written long, total_records_written long, " \
                            "avg_record_size long"
"""``show_commit_write_stats`` (Hudi ``ShowCommitWriteStatsProcedure``)."""

EXTRA_METADATA_OUTPUT = "instant_time string, action string, metadata_key string, metadata_value string"
"""``show_commit_extra_metadata`` (Hudi ``ShowCommitExtraMetadataProcedure``)."""

COMPARE_OUTPUT = "compare_detail string"
"""``commits_compare`` (Hudi ``CommitsCompareProcedure``)."""

JAVA_LONG_MAX = 2**63 - 1
"""What Java's ``(long) Math.ceil(x / 0.0)`` gives for positive ``x`` (``show_commit_write_stats``)."""


# ---------------------------------------------------------------------------------------------- arguments


def int_arg(args: dict[str, Any], name: str, procedure: str) -> int:
    """The integer argument ``name`` (a non-negative count such as ``limit``).

    Raises:
        ProcedureError: not an integer, or negative (Java's ``Stream.limit`` refuses a negative size).
    """
    value = args.get(name)
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        number = int(value.strip())
    if number is None:
        raise ProcedureError(f"procedure {procedure}: {name} must be an integer; got {value!r}")
    if number < 0:
        raise ProcedureError(f"procedure {procedure}: {name} must not be negative; got {number}")
    return number


def bool_arg(args: dict[str, Any], name: str, procedure: str) -> bool:
    """The boolean argument ``name`` (``true``/``false``, or their strings).

    Raises:
        ProcedureError: neither.
    """
    value = args.get(name)
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if str(value).strip().lower() in ("true", "false"):
        return str(value).strip().lower() == "true"
    raise ProcedureError(f"procedure {procedure}: {name} must be true or false; got {value!r}")


def text_arg(args: dict[str, Any], name: str) -> str:
    """The string argument ``name`` trimmed, ``""`` when not given (Hudi's ``""`` defaults)."""
    value = args.get(name)
    return "" if value is None else str(value).strip()


# ---------------------------------------------------------------------------------------------- filter


def check_filter(ctx: CommandContext, procedure: str, output: str, text: str) -> None:
    """Hudi ``BaseProcedure.validateFilter``: ``text`` must be a boolean Spark SQL expression over the
    output columns. Runs before the table is read, as in Hudi.

    Raises:
        ProcedureError: ``Invalid filter expression`` with Spark's reason and the available columns.
    """
    if text:
        apply_filter(ctx, procedure, ctx.spark.createDataFrame([], output), text)


def apply_filter(ctx: CommandContext, procedure: str, frame: DataFrame, text: str) -> DataFrame:
    """``frame`` filtered by ``text`` (Hudi ``BaseProcedure.applyFilter``), or ``frame`` when ``text`` is
    empty. Spark analyses the predicate against the output schema, so any column, operator or function of
    Spark SQL is allowed.

    Raises:
        ProcedureError: the predicate does not parse, names an unknown column, or is not boolean.
    """
    if not text:
        return frame
    try:
        return frame.filter(text)
    except AnalysisException as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ProcedureError(f"procedure {procedure}: Invalid filter expression: {text!r}: {reason} "
                             f"(available columns: {', '.join(frame.columns)})") from exc


def rows_frame(ctx: CommandContext, procedure: str, rows: list[tuple[Any, ...]], output: str,
               limit: int, text: str = "") -> DataFrame:
    """The first ``limit`` of ``rows`` as a DataFrame with the ``output`` schema, filtered by ``text``."""
    return apply_filter(ctx, procedure, ctx.spark.createDataFrame(rows[:limit], output), text)


# ---------------------------------------------------------------------------------------------- timeline


def file_mtimes(table: Table) -> dict[tuple[str, str, State], int]:
    """Modification time (ms since the epoch) of every instant file of the timeline, by instant time, action and
    state (:meth:`engine.timeline.active.ActiveTimeline.state_file_times`)."""
    return table.timeline.state_file_times()


def transition_time(table: Table, instant: Instant, mtimes: dict[tuple[str, str, State], int]) -> str | None:
    """Hudi 0.14 ``HoodieInstant.getStateTransitionTime``: the modification time of the instant's file as
    ``yyyyMMddHHmmssSSS`` in the timeline time zone (``None`` when the file is gone); for a completed instant of a
    Hudi 1.x table, its completion time (the instant's file name records it)."""
    if instant.completion_time:
        return instant.completion_time
    ms = mtimes.get((instant.timestamp, instant.action, instant.state))
    if ms is None:
        return None
    return instant_time_of_millis(ms, table.timeline_timezone == "UTC")


def completed_commits_newest_first(table: Table) -> list[Instant]:
    """Completed ``commit``/``deltacommit``/``replacecommit`` instants, newest first (Hudi
    ``getCommitsTimeline.filterCompletedInstants`` sorted by ``HoodieInstant.COMPARATOR.reversed``)."""
    table.timeline.reload()
    return list(reversed(sort_instants(table.timeline.completed_commits())))


def read_commit(display: str, table: Table, instant: Instant, procedure: str) -> CommitMetadata:
    """The commit metadata of ``instant``.

    Raises:
        ProcedureError: the file is gone or is not commit JSON (names the table and the instant).
    """
    try:
        return table.commit_metadata(instant)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: cannot read commit {instant.timestamp}: {exc}") from exc


def find_commit(display: str, table: Table, instant_time: str, procedure: str) -> Instant:
    """The completed ``commit``, ``replacecommit`` or ``deltacommit`` at ``instant_time`` (Hudi
    ``getCommitForInstant``, in that order).

    Raises:
        ProcedureError: Hudi's ``Commit <t> not found in Commits <timeline>``, naming the table.
    """
    commits = completed_commits_newest_first(table)
    for action in ("commit", REPLACE_COMMIT, DELTA_COMMIT):
        for instant in commits:
            if instant.timestamp == instant_time and instant.action == action:
                return instant
    listed = ", ".join(str(i) for i in reversed(commits)) or "none"
    raise ProcedureError(f"{procedure} on {display}: Commit {instant_time} not found in Commits {listed}")


def _table(ctx: CommandContext, args: dict[str, Any], procedure: str) -> tuple[str, Table]:
    """The table named by the required ``table`` argument (Hudi 0.14 ``HoodieCLIUtils.getHoodieCatalogTable``)."""
    return resolve_table(ctx, args.get("table"), None, procedure)


def _is_new_file(prev_commit: str | None) -> bool:
    """Whether a write stat made a new file group (Java: ``prevCommit`` equals ``"null"``, ignoring case)."""
    return prev_commit is not None and prev_commit.lower() == NULL_COMMIT


# ---------------------------------------------------------------------------------------------- show_commits


def commit_totals(meta: CommitMetadata) -> tuple[int, ...]:
    """Hudi ``HoodieCommitMetadata.fetchTotal*``: bytes written, files inserted, files updated, partitions
    written, records written, update records written, write errors."""
    stats = meta.all_write_stats()
    return (sum(s.total_write_bytes for s in stats),
            sum(1 for s in stats if _is_new_file(s.prev_commit)),
            sum(1 for s in stats if s.prev_commit is not None and not _is_new_file(s.prev_commit)),
            len(meta.partition_to_write_stats),
            sum(s.num_writes for s in stats),
            sum(s.num_update_writes for s in stats),
            sum(s.total_write_errors for s in stats))


def _archived(display: str, table: Table, procedure: str) -> list[tuple[str, str, CommitMetadata, str | None]]:
    """Completed commits of the archived timeline (``showArchived => true``)."""
    try:
        return archived_commits(table)
    except EngineError as exc:
        raise ProcedureError(f"{procedure} on {display}: cannot read the archived timeline: {exc}") from exc


def show_commits(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commits(table, limit = 10, showArchived, filter)`` as Hudi's ``ShowCommitsProcedure``:
    one row per completed commit, newest first, with the totals of its write stats
    (:data:`COMMITS_OUTPUT`).

    Raises:
        ProcedureError: unknown table, bad argument or filter, unreadable commit file.
    """
    procedure = "show_commits"
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    check_filter(ctx, procedure, COMMITS_OUTPUT, text)
    display, table = _table(ctx, args, procedure)
    commits = completed_commits_newest_first(table)[:limit]
    mtimes = file_mtimes(table)
    rows = [(i.timestamp, transition_time(table, i, mtimes), i.action,
             *commit_totals(read_commit(display, table, i, procedure))) for i in commits]
    if bool_arg(args, "showArchived", procedure):
        rows += [(ts, state_time, action, *commit_totals(meta))
                 for ts, action, meta, state_time in _archived(display, table, procedure)]
        rows.sort(key=lambda r: str(r[0]), reverse=True)
    return rows_frame(ctx, procedure, rows, COMMITS_OUTPUT, limit, text)


def show_commits_metadata(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commits_metadata(table, limit = 10, showArchived, filter)`` as Hudi's
    ``ShowCommitsProcedure(includeExtraMetadata = true)``: one row per write stat of every completed commit,
    newest commit first; ``limit`` counts rows, not commits (:data:`COMMITS_METADATA_OUTPUT`).

    Raises:
        ProcedureError: unknown table, bad argument or filter, unreadable commit file.
    """
    procedure = "show_commits_metadata"
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    check_filter(ctx, procedure, COMMITS_METADATA_OUTPUT, text)
    display, table = _table(ctx, args, procedure)
    mtimes = file_mtimes(table)
    commits: list[tuple[str, str, str | None, CommitMetadata | Instant]] = [
        (i.timestamp, i.action, transition_time(table, i, mtimes), i) for i in completed_commits_newest_first(table)]
    if bool_arg(args, "showArchived", procedure):
        commits += [(ts, action, state_time, meta) for ts, action, meta, state_time in
                    _archived(display, table, procedure)]
        commits.sort(key=lambda c: c[0], reverse=True)
    rows: list[tuple[Any, ...]] = []
    for timestamp, action, state_time, source in commits:
        if len(rows) >= limit:
            break
        meta = source if isinstance(source, CommitMetadata) else read_commit(display, table, source, procedure)
        for _, s in meta.iter_write_stats():
            rows.append((timestamp, state_time, action, s.partition_path, s.file_id,
                         s.prev_commit, s.num_writes, s.num_inserts, s.num_deletes, s.num_update_writes,
                         s.total_write_errors, s.total_log_blocks, s.total_corrupt_log_block,
                         s.total_rollback_blocks, s.total_log_records, s.total_updated_records_compacted,
                         s.total_write_bytes))
    return rows_frame(ctx, procedure, rows, COMMITS_METADATA_OUTPUT, limit, text)


# ---------------------------------------------------------------------------------------------- one commit


def _one_commit(ctx: CommandContext, args: dict[str, Any], procedure: str, output: str
                ) -> tuple[Instant, CommitMetadata, int, str]:
    """(instant, metadata, limit, filter) of the commit ``instant_time`` of ``table``; the filter is
    checked first."""
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    check_filter(ctx, procedure, output, text)
    display, table = _table(ctx, args, procedure)
    instant = find_commit(display, table, str(args.get("instant_time") or "").strip(), procedure)
    return instant, read_commit(display, table, instant, procedure), limit, text


def show_commit_files(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commit_files(table, limit = 10, instant_time, filter)`` as Hudi's
    ``ShowCommitFilesProcedure``: one row per file the commit wrote (:data:`COMMIT_FILES_OUTPUT`).

    Raises:
        ProcedureError: unknown table, no completed commit at ``instant_time``, bad argument or filter.
    """
    procedure = "show_commit_files"
    instant, meta, limit, text = _one_commit(ctx, args, procedure, COMMIT_FILES_OUTPUT)
    rows = [(instant.action, partition, s.file_id, s.prev_commit, s.num_update_writes, s.num_writes,
             s.total_write_bytes, s.total_write_errors, s.file_size_in_bytes)
            for partition, s in meta.iter_write_stats()]
    return rows_frame(ctx, procedure, rows, COMMIT_FILES_OUTPUT, limit, text)


def show_commit_partitions(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commit_partitions(table, limit = 10, instant_time, filter)`` as Hudi's
    ``ShowCommitPartitionsProcedure``: one row per partition the commit wrote. A file is *added* when its
    previous commit is ``null``, else *updated*; records updated count only updated files' update writes,
    records inserted every file's inserts (:data:`COMMIT_PARTITIONS_OUTPUT`).

    Raises:
        ProcedureError: unknown table, no completed commit at ``instant_time``, bad argument or filter.
    """
    procedure = "show_commit_partitions"
    instant, meta, limit, text = _one_commit(ctx, args, procedure, COMMIT_PARTITIONS_OUTPUT)
    rows = []
    for partition, stats in meta.partition_to_write_stats.items():
        added = [s for s in stats if _is_new_file(s.prev_commit)]
        updated = [s for s in stats if not _is_new_file(s.prev_commit)]
        rows.append((instant.action, partition, len(added), len(updated), sum(s.num_inserts for s in stats),
                     sum(s.num_update_writes for s in updated), sum(s.total_write_bytes for s in stats),
                     sum(s.total_write_errors for s in stats)))
    return rows_frame(ctx, procedure, rows, COMMIT_PARTITIONS_OUTPUT, limit, text)


def show_commit_write_stats(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commit_write_stats(table, limit = 10, instant_time, filter)`` as Hudi's
    ``ShowCommitWriteStatsProcedure``: one row with the commit's bytes and records written and
    ``ceil(bytes / records)``. As Java computes it in doubles, a commit that wrote no records shows 0, or
    ``Long.MAX_VALUE`` when it still wrote bytes (:data:`COMMIT_WRITE_STATS_OUTPUT`).

    Raises:
        ProcedureError: unknown table, no completed commit at ``instant_time``, bad argument or filter.
    """
    procedure = "show_commit_write_stats"
    instant, meta, limit, text = _one_commit(ctx, args, procedure, COMMIT_WRITE_STATS_OUTPUT)
    stats = meta.all_write_stats()
    records = sum(s.num_writes for s in stats)
    written = sum(s.total_write_bytes for s in stats)
    if records:
        average = -(-written // records)
    else:
        average = JAVA_LONG_MAX if written > 0 else (-JAVA_LONG_MAX - 1 if written < 0 else 0)
    return rows_frame(ctx, procedure, [(instant.action, written, records, average)],
                      COMMIT_WRITE_STATS_OUTPUT, limit, text)


def show_commit_extra_metadata(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_commit_extra_metadata(table, limit = 100, instant_time, metadata_key, filter)`` as Hudi's
    ``ShowCommitExtraMetadataProcedure``: the ``extraMetadata`` entries (``schema``, checkpoints, ...) of
    the commit at ``instant_time``, or of the latest completed commit; only ``metadata_key`` when given
    (:data:`EXTRA_METADATA_OUTPUT`).

    Raises:
        ProcedureError: unknown table, no such commit (or none at all), bad argument or filter.
    """
    procedure = "show_commit_extra_metadata"
    limit, text = int_arg(args, "limit", procedure), text_arg(args, "filter")
    check_filter(ctx, procedure, EXTRA_METADATA_OUTPUT, text)
    display, table = _table(ctx, args, procedure)
    wanted = text_arg(args, "instant_time")
    if wanted:
        instant = find_commit(display, table, wanted, procedure)
    else:
        commits = completed_commits_newest_first(table)
        if not commits:
            raise ProcedureError(f"{procedure} on {display}: Commit None not found in Commits none "
                                 "(the table has no completed commit)")
        instant = commits[0]
    key = args.get("metadata_key")
    entries = read_commit(display, table, instant, procedure).extra_metadata.items()
    rows = [(instant.timestamp, instant.action, k, None if v is None else str(v)) for k, v in entries
            if key is None or k == str(key).strip()]
    return rows_frame(ctx, procedure, rows, EXTRA_METADATA_OUTPUT, limit, text)


# ---------------------------------------------------------------------------------------------- compare


def commits_compare(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL commits_compare(table, path)`` as Hudi's ``CommitsCompareProcedure``: compares the latest
    completed commits of ``table`` (the source) and of the table at ``path`` (the target) and returns one
    ``compare_detail`` row: ``Source <name> is behind by N commits. Commits to catch up - [t1, t2]`` (the
    target's commits after the source's latest) or ``... is ahead by N commits ...`` (the source's commits
    after the target's latest).

    Raises:
        ProcedureError: unknown table, or no Hudi table at ``path``.
    """
    procedure = "commits_compare"
    _, source = _table(ctx, args, procedure)
    _, target = resolve_table(ctx, None, args.get("path"), procedure)
    source_times = [i.timestamp for i in reversed(completed_commits_newest_first(source))]
    target_times = [i.timestamp for i in reversed(completed_commits_newest_first(target))]
    source_latest = source_times[-1] if source_times else "0"
    target_latest = target_times[-1] if target_times else "0"
    if target_latest > source_latest:
        catch_up = [t for t in target_times if t > source_latest]
        word = "behind"
    else:
        catch_up = [t for t in source_times if t > target_latest]
        word = "ahead"
    detail = (f"Source {source.name} is {word} by {len(catch_up)} commits. "
              f"Commits to catch up - [{', '.join(catch_up)}]")
    return ctx.spark.createDataFrame([(detail,)], COMPARE_OUTPUT)


# ---------------------------------------------------------------------------------------------- registry

_TABLE = Param("table", "string", required=True, doc="the table ([db.]name)")
_FILTER = Param("filter", "string", "", doc="Spark SQL predicate over the output columns, applied after "
                                            "limit (newer Hudi), e.g. \"action = 'commit'\"")
_ARCHIVED = Param("showArchived", "boolean", False,
                  doc="also list the commits of the archived timeline (.hoodie/archived)")


def _one_commit_params(limit: int = 10) -> tuple[Param, ...]:
    return (_TABLE, Param("limit", "int", limit, doc="at most this many rows"),
            Param("instant_time", "string", required=True, doc="the completed commit's instant time"), _FILTER)


register(Procedure("show_commits", (
    _TABLE, Param("limit", "int", 10, doc="at most this many commits, newest first"), _ARCHIVED, _FILTER,
), COMMITS_OUTPUT, show_commits, "completed commits, newest first, with their write totals"))
register(Procedure("show_commits_metadata", (
    _TABLE, Param("limit", "int", 10, doc="at most this many rows (write stats), newest commit first"),
    _ARCHIVED, _FILTER,
), COMMITS_METADATA_OUTPUT, show_commits_metadata, "the write stats of every completed commit, newest first"))
register(Procedure("show_commit_files", _one_commit_params(), COMMIT_FILES_OUTPUT, show_commit_files,
                   "the files one commit wrote"))
register(Procedure("show_commit_partitions", _one_commit_params(), COMMIT_PARTITIONS_OUTPUT,
                   show_commit_partitions, "the partitions one commit wrote, with files and records per partition"))
register(Procedure("show_commit_write_stats", _one_commit_params(), COMMIT_WRITE_STATS_OUTPUT,
                   show_commit_write_stats, "bytes, records and average record size of one commit"))
register(Procedure("show_commit_extra_metadata", (
    _TABLE, Param("limit", "int", 100, doc="at most this many entries"),
    Param("instant_time", "string", doc="the completed commit's instant time (default: the latest commit)"),
    Param("metadata_key", "string", doc="only this extraMetadata key (e.g. schema)"), _FILTER,
), EXTRA_METADATA_OUTPUT, show_commit_extra_metadata, "the extraMetadata (schema, checkpoints...) of a commit"))
register(Procedure("commits_compare", (
    _TABLE, Param("path", "string", required=True, doc="base path of the table to compare with"),
), COMPARE_OUTPUT, commits_compare, "how many commits a table is behind or ahead of another one"))
