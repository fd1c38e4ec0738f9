"""Partition procedures (Hudi ``DropPartitionProcedure``, ``TruncateTableProcedure``, ``RunTTLProcedure`` with
``KeepByTimeStrategy`` / ``KeepByCreationTimeStrategy``; Hudi 1.0 procedures, not in 0.14/0.15; docs/SQL.md §2).

* ``drop_partition(table, partition)`` → ``result`` (``Success``): a ``delete_partition`` write (one
  ``replacecommit`` replacing every file group of the partitions; the cleaner deletes the files later).
  ``partition`` is a comma list of partition paths, each possibly with ``*`` (or ``%2A``) wildcards matching
  any characters, ``/`` included (``year=2019/*``), as Hudi's ``resolvePartitionWildcards``.
* ``truncate_table(table, partitions)`` → ``result, time_cost``: without ``partitions`` the table is emptied
  as ``TRUNCATE TABLE`` does (its folder deleted and the table re-created with the same
  ``hoodie.properties``); with them, a ``delete_partition`` write of those partitions, as ``drop_partition``.
  ``SUCCESS`` and the milliseconds taken (Hudi 1.0's last version returns no row at all; its first returned
  this one).
* ``run_ttl(table, ttl_policy, retain_days, options)`` → ``deleted_partitions``: deletes the expired
  partitions in one ``delete_partition`` write and lists them, oldest first. A partition expires when a new
  instant time is more than ``hoodie.partition.ttl.strategy.days.retain`` days after its reference time:
  ``KEEP_BY_TIME``, the newest base instant of its latest file slices (a merge-on-read partition updated
  through log files only keeps its old base instant, as in Hudi); ``KEEP_BY_CREATION_TIME``, the
  ``commitTime`` of its partition metafile. Only partitions with live file groups are candidates (a dropped
  partition is not dropped again), those of ``...partition.selected`` when set, at most
  ``...max.delete.partitions`` of them. ``ttl_policy`` sets ``hoodie.partition.ttl.management.strategy.type``
  and ``retain_days`` the days; ``options`` (``k1=v1,k2=v2``) gives any ``hoodie.partition.ttl.*`` key or
  write option. Nothing expired: no row and no commit.

Writes take the session's ``SET hoodie.*`` options and the table's catalog properties (as ``INSERT``), refresh
the table and sync it to the metastore when configured (``sqlext.commands.post_commit``).

Different on purpose: a partition (or wildcard) that matches no partition of the table, a partition list on a
non-partitioned table and an empty list are errors naming them, nothing written (Hudi silently drops
unknown partitions and may commit an empty ``replacecommit``); ``run_ttl`` without a positive retention, on
a non-partitioned table, with an unknown ``hoodie.partition.ttl.*`` key, a strategy class other than
Hudi's two, or ``hoodie.partition.ttl.inline=true`` (TTL after every commit is not implemented) is an error.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import HoodieConfig, PartitionTTLConfig
from engine.errors import EngineError
from engine.filegroup.partition_metadata import read_partition_metadata
from engine.spark.schema import table_data_schema
from engine.spark.writer import write_dataframe
from engine.table import Table
from engine.timeline.instant import parse_instant_time
from engine.write.operation import WriteOperation
from sqlext.catalog import CatalogTable
from sqlext.commands.alter_table import truncate_table as truncate_statement
from sqlext.commands.options import write_options
from sqlext.commands.post_commit import after_write
from sqlext.errors import ProcedureError
from sqlext.parser.statements import TableIdent, TruncateTable
from sqlext.procedures.commits import text_arg
from sqlext.procedures.compaction import parse_options
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

KEEP_BY_TIME = "KEEP_BY_TIME"
KEEP_BY_CREATION_TIME = "KEEP_BY_CREATION_TIME"
_STRATEGY_PACKAGE = "org.apache.hudi.table.action.ttl.strategy."
STRATEGY_CLASSES = {_STRATEGY_PACKAGE + "KeepByTimeStrategy": KEEP_BY_TIME,
                    _STRATEGY_PACKAGE + "KeepByCreationTimeStrategy": KEEP_BY_CREATION_TIME}
"""Hudi's strategy classes (``PartitionTTLStrategyType``) and the strategy each one is."""

_TTL_KEYS = {p.key for p in (PartitionTTLConfig.INLINE, PartitionTTLConfig.STRATEGY_CLASS,
                             PartitionTTLConfig.STRATEGY_TYPE, PartitionTTLConfig.DAYS_RETAIN,
                             PartitionTTLConfig.PARTITION_SELECTED, PartitionTTLConfig.MAX_PARTITIONS_TO_DELETE)}
_TTL_KEYS |= {alt for p in (PartitionTTLConfig.INLINE,) for alt in p.alternatives}
_DAY_MS = 86_400_000


def _table(ctx: CommandContext, args: dict[str, Any], procedure: str) -> tuple[CatalogTable, Table]:
    """The catalog entry and table of the ``table`` argument of a procedure that deletes partitions.

    Raises:
        ProcedureError: ``table`` not given.
        NotHudiTable, SqlAnalysisError: unknown or not a Hudi table.
        UnsupportedTable: a Hudi 1.x table (read only).
    """
    name = text_arg(args, "table")
    if not name:
        raise ProcedureError(f"Argument: table is required (procedure {procedure}: table => '[db.]name')")
    database, _, table = name.rpartition(".")
    entry, loaded = ctx.catalog.require_hudi(TableIdent(database or None, table))
    loaded.check_writable()
    return entry, loaded


def resolve_partitions(table: Table, text: str, display: str, procedure: str) -> list[str]:
    """The partition paths of ``table`` a comma list names: each item a path, or a pattern whose ``*`` (or
    ``%2A``) matches any characters (Hudi ``HoodieSparkSqlWriter.resolvePartitionWildcards``); in the list's
    order, without repeats.

    Raises:
        ProcedureError: the table is not partitioned, the list is empty, or an item matches no partition.
    """
    if not table.is_partitioned:
        raise ProcedureError(f"{procedure}: {display} is not partitioned; it has no partition to delete")
    wanted = [item.strip().strip("/") for item in text.split(",") if item.strip()]
    if not wanted:
        raise ProcedureError(f"{procedure} on {display}: give the partitions, e.g. 'dt=2024-01-01,dt=2024-01-02' "
                             "or 'year=2019/*'")
    existing = table.file_system_view().partition_paths()
    found: list[str] = []
    missing: list[str] = []
    for item in wanted:
        token = "*" if "*" in item else "%2A" if "%2A" in item else None
        if token is None:
            matches = [item] if item in existing else []
        else:
            regex = re.compile(".*".join(re.escape(piece) for piece in item.split(token)), re.DOTALL)
            matches = [p for p in existing if regex.fullmatch(p)]
        if not matches:
            missing.append(item)
        found.extend(p for p in matches if p not in found)
    if missing:
        raise ProcedureError(f"{procedure} on {display}: no partition matches {', '.join(missing)} (partitions: "
                             f"{', '.join(existing[:20]) or 'none'}{' ...' if len(existing) > 20 else ''})")
    return found


def delete_partitions(ctx: CommandContext, entry: CatalogTable, table: Table, paths: list[str],
                      extra: dict[str, str] | None = None) -> str:
    """A ``delete_partition`` write of ``paths`` (the write ``ALTER TABLE ... DROP PARTITION`` and ``TRUNCATE
    TABLE ... PARTITION`` make), with the statement's write options, then the post-write refresh and sync.
    Returns the replacecommit's instant time.

    Raises:
        EngineError: the write failed (it was rolled back).
        MetaSyncFailed: committed, but the metastore sync failed.
    """
    options = write_options(ctx.spark, entry, table)
    options.update(extra or {})
    empty = ctx.spark.createDataFrame([], table_data_schema(table))
    metrics = write_dataframe(ctx.spark, table, empty, WriteOperation.DELETE_PARTITION, options,
                              overwrite_partitions=paths)
    after_write(ctx, entry, table, options, metrics)
    logger.info("delete_partition %s on %s: %s", metrics.instant, entry.display, ", ".join(paths))
    return metrics.instant or ""


def drop_partition(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL drop_partition(table, partition)``: one ``Success`` row after the ``delete_partition`` write.

    Raises:
        ProcedureError: no table; a partition that matches nothing; the write failed.
    """
    procedure = "drop_partition"
    entry, table = _table(ctx, args, procedure)
    paths = resolve_partitions(table, text_arg(args, "partition"), entry.display, procedure)
    try:
        delete_partitions(ctx, entry, table, paths)
    except EngineError as exc:
        raise ProcedureError(f"Failed to drop partition {text_arg(args, 'partition')} for table "
                             f"{entry.display}: {exc}") from exc
    return ctx.spark.createDataFrame([("Success",)], "result string")


def truncate_table(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL truncate_table(table, partitions)``: the whole table or the listed partitions (module docstring).

    Raises:
        ProcedureError: no table; partitions given for a non-partitioned table or matching nothing; the write
            failed.
    """
    procedure = "truncate_table"
    entry, table = _table(ctx, args, procedure)
    partitions = text_arg(args, "partitions")
    start = time.monotonic()
    if partitions:
        if not table.is_partitioned:
            raise ProcedureError(f"Operation not allowed: TRUNCATE TABLE ... PARTITION is not supported for tables "
                                 f"that are not partitioned: {entry.display} (procedure {procedure})")
        paths = resolve_partitions(table, partitions, entry.display, procedure)
        try:
            delete_partitions(ctx, entry, table, paths)
        except EngineError as exc:
            raise ProcedureError(f"Truncate Hoodie Table procedure failed on {entry.display}: {exc}") from exc
    else:
        truncate_statement(ctx, TruncateTable(TableIdent(entry.database, entry.name)))
    elapsed = int((time.monotonic() - start) * 1000)
    logger.info("truncate_table %s%s: %d ms", entry.display, f" ({partitions})" if partitions else "", elapsed)
    return ctx.spark.createDataFrame([("SUCCESS", elapsed)], "result string, time_cost long")


# ---------------------------------------------------------------------------------------------- run_ttl


def _ttl_conf(ctx: CommandContext, entry: CatalogTable, table: Table, args: dict[str, Any]
              ) -> tuple[dict[str, str], HoodieConfig]:
    """(write options, the table config with them): session and catalog options, then ``options``, then the
    ``ttl_policy`` / ``retain_days`` arguments.

    Raises:
        ProcedureError: a malformed ``options`` or an unknown ``hoodie.partition.ttl.*`` key.
    """
    options = write_options(ctx.spark, entry, table)
    try:
        given = parse_options(args.get("options"))
    except ProcedureError as exc:
        raise ProcedureError(f"run_ttl on {entry.display}: {exc}") from exc
    unknown = [k for k in given if k.startswith("hoodie.partition.ttl.") and k not in _TTL_KEYS]
    if unknown:
        raise ProcedureError(f"run_ttl on {entry.display}: unknown option(s) {', '.join(unknown)} (partition TTL "
                             f"keys: {', '.join(sorted(_TTL_KEYS))})")
    options.update(given)
    if args.get("ttl_policy") is not None:
        options[PartitionTTLConfig.STRATEGY_TYPE.key] = str(args["ttl_policy"]).strip().upper()
    if args.get("retain_days") is not None:
        options[PartitionTTLConfig.DAYS_RETAIN.key] = str(args["retain_days"]).strip()
    return options, table.config.overlay(options)


def _strategy(display: str, conf: HoodieConfig) -> str:
    """KEEP_BY_TIME or KEEP_BY_CREATION_TIME (the strategy class wins over the type, as in Hudi).

    Raises:
        ProcedureError: an unsupported class or type.
    """
    klass = conf.get_optional(PartitionTTLConfig.STRATEGY_CLASS)
    if klass:
        if klass.strip() not in STRATEGY_CLASSES:
            raise ProcedureError(f"run_ttl on {display}: {PartitionTTLConfig.STRATEGY_CLASS.key}={klass} is not "
                                 f"supported (custom strategies are not; use one of {', '.join(STRATEGY_CLASSES)})")
        return STRATEGY_CLASSES[klass.strip()]
    kind = str(conf.get(PartitionTTLConfig.STRATEGY_TYPE)).strip().upper()
    if kind not in (KEEP_BY_TIME, KEEP_BY_CREATION_TIME):
        raise ProcedureError(f"run_ttl on {display}: ttl_policy ({PartitionTTLConfig.STRATEGY_TYPE.key}) must be "
                             f"{KEEP_BY_TIME} or {KEEP_BY_CREATION_TIME}; got {kind!r}")
    return kind


def _reference_times(table: Table, strategy: str, candidates: list[str], now: str) -> dict[str, str]:
    """Partition → the time its age counts from (partitions without live file slices left out)."""
    view = table.file_system_view()
    out: dict[str, str] = {}
    for partition in candidates:
        bases = [s.base_instant for s in view.latest_file_slices(partition, merge_pending_compaction=False)
                 if s.base_instant <= now]
        if not bases:
            continue
        if strategy == KEEP_BY_TIME:
            out[partition] = max(bases)
            continue
        try:
            out[partition] = read_partition_metadata(table.storage, table.base_path, partition).commit_time
        except EngineError as exc:
            logger.warning("run_ttl on %s: partition %s has no readable partition metafile (%s); not expired",
                           table.base_path, partition, exc)
    return out


def expired_partitions(table: Table, strategy: str, days: int, selected: list[str] | None, limit: int,
                       now: str) -> list[str]:
    """Hudi ``KeepByTimeStrategy`` / ``KeepByCreationTimeStrategy.getExpiredPartitionPaths``: the candidate
    partitions (``selected``, else all) whose reference time plus ``days`` is before ``now`` (an instant
    time), oldest first, at most ``limit``. Nothing when the table has no completed instant or ``days`` <= 0.
    """
    if days <= 0 or not table.timeline.reload().completed():
        return []
    candidates = selected if selected else table.file_system_view().partition_paths()
    now_ms = int(parse_instant_time(now).timestamp() * 1000)
    expired = []
    for partition, reference in _reference_times(table, strategy, candidates, now).items():
        try:
            reference_ms = int(parse_instant_time(reference).timestamp() * 1000)
        except EngineError as exc:
            logger.warning("run_ttl on %s: partition %s: %s; not expired", table.base_path, partition, exc)
            continue
        if now_ms > reference_ms + days * _DAY_MS:
            expired.append((reference, partition))
    logger.info("run_ttl on %s: %d expired partition(s), limit %d", table.base_path, len(expired), limit)
    return [partition for _, partition in sorted(expired)][:max(0, limit)]


def run_ttl(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL run_ttl(table, ttl_policy, retain_days, options)``: delete the expired partitions (module
    docstring); one row per deleted partition.

    Raises:
        ProcedureError: no table; not partitioned; no positive retention; unsupported strategy or option;
            the write failed.
    """
    procedure = "run_ttl"
    entry, table = _table(ctx, args, procedure)
    display = entry.display
    options, conf = _ttl_conf(ctx, entry, table, args)
    try:
        inline = conf.get(PartitionTTLConfig.INLINE)
        days = conf.get(PartitionTTLConfig.DAYS_RETAIN)
        limit = conf.get(PartitionTTLConfig.MAX_PARTITIONS_TO_DELETE)
        selected_text = conf.get_optional(PartitionTTLConfig.PARTITION_SELECTED) or ""
    except EngineError as exc:
        raise ProcedureError(f"run_ttl on {display}: {exc}") from exc
    if inline:
        raise ProcedureError(f"run_ttl on {display}: {PartitionTTLConfig.INLINE.key}=true (partition TTL after "
                             "every commit) is not implemented; run CALL run_ttl instead")
    strategy = _strategy(display, conf)
    if not table.is_partitioned:
        raise ProcedureError(f"run_ttl: {display} is not partitioned; partition TTL needs a partitioned table")
    if days <= 0:
        raise ProcedureError(f"run_ttl on {display}: give retain_days (or {PartitionTTLConfig.DAYS_RETAIN.key}) "
                             f"greater than 0; got {days}")
    selected = [p.strip().strip("/") for p in selected_text.split(",") if p.strip()]
    now = table.timeline.new_instant_time()
    expired = expired_partitions(table, strategy, days, selected, limit, now)
    if not expired:
        logger.info("run_ttl on %s: no partition older than %d day(s) (%s)", display, days, strategy)
        return ctx.spark.createDataFrame([], "deleted_partitions string")
    write_opts = {k: v for k, v in options.items() if k not in _TTL_KEYS}
    try:
        delete_partitions(ctx, entry, table, expired, write_opts)
    except EngineError as exc:
        raise ProcedureError(f"run_ttl on {display}: deleting {', '.join(expired)} failed: {exc}") from exc
    return ctx.spark.createDataFrame([(p,) for p in expired], "deleted_partitions string")


register(Procedure("drop_partition", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("partition", "string", required=True, doc="comma list of partition paths; '*' matches any characters"),
), "result string", drop_partition, "delete partitions (a delete_partition replacecommit)"))
register(Procedure("truncate_table", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("partitions", "string", doc="comma list of partition paths ('*' wildcards); none: the whole table"),
), "result string, time_cost long", truncate_table, "empty the table, or delete some of its partitions"))
register(Procedure("run_ttl", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("ttl_policy", "string", choices=(KEEP_BY_TIME, KEEP_BY_CREATION_TIME),
          doc="hoodie.partition.ttl.management.strategy.type"),
    Param("retain_days", "int", doc="hoodie.partition.ttl.strategy.days.retain"),
    Param("options", "string", doc="hoodie.partition.ttl.* keys and write options, 'k1=v1,k2=v2'"),
), "deleted_partitions string", run_ttl, "delete partitions older than the retention (partition TTL)"))
