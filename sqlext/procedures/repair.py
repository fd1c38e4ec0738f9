"""Repair procedures (Hudi ``RepairAddpartitionmetaProcedure``, ``RepairOverwriteHoodiePropsProcedure``).

* ``repair_add_partition_meta(table, dry_run = true)`` → ``partition_path, metadata_is_present, action``: every
  partition folder; a missing ``.hoodie_partition_metadata`` is written (unless ``dry_run``) with the latest
  commit as its commit time (``action`` = ``Repaired``, else ``None``).
* ``repair_overwrite_hoodie_props(table, new_props_file_path)`` → ``property, old_value, new_value``: replaces
  ``hoodie.properties`` with the given file's properties (the checksum recomputed), one row per key of either,
  sorted. This can make a table unreadable, as in Hudi: it is a repair tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from engine.config import TableConfig
from engine.filegroup.partition_metadata import has_partition_metadata, write_partition_metadata
from engine.table_properties import TableProperties
from sqlext.errors import ProcedureError
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext


def repair_add_partition_meta(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL repair_add_partition_meta(table, dry_run)``."""
    _, table = resolve_table(ctx, args.get("table"), None, "repair_add_partition_meta")
    dry_run = str(args.get("dry_run") if args.get("dry_run") is not None else "true").lower() != "false"
    if not dry_run:
        table.check_writable()
    latest = table.timeline.reload().last_completed_commit()
    rows = []
    for partition in table.file_system_view().partition_paths():
        if not partition:
            continue
        present, action = "Yes", "None"
        if not has_partition_metadata(table.storage, table.base_path, partition):
            present = "No"
            if not dry_run and latest is not None:
                write_partition_metadata(table.storage, table.base_path, partition, latest.timestamp, 0,
                                         use_base_format=table.config.get(TableConfig.PARTITION_METAFILE_USE_BASE_FORMAT))
                action = "Repaired"
        rows.append((partition, present, action))
    return ctx.spark.createDataFrame(rows, "partition_path string, metadata_is_present string, action string")


def repair_overwrite_hoodie_props(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL repair_overwrite_hoodie_props(table, new_props_file_path)``."""
    display, table = resolve_table(ctx, args.get("table"), None, "repair_overwrite_hoodie_props")
    table.check_writable()
    source = Path(str(args.get("new_props_file_path") or ""))
    try:
        new = TableProperties.parse(source.read_bytes().decode("latin-1"))
    except OSError as exc:
        raise ProcedureError(f"repair_overwrite_hoodie_props on {display}: cannot read {source}: {exc}") from exc
    old = dict(table.config.items())
    new.pop(TableConfig.CHECKSUM.key, None)
    new[TableConfig.CHECKSUM.key] = str(TableProperties.checksum_of(new))
    table.storage.write_atomic(table.properties_path, TableProperties.render(new))
    rows = [(key, old.get(key, "null"), new.get(key, "null")) for key in sorted(set(old) | set(new))]
    return ctx.spark.createDataFrame(rows, "property string, old_value string, new_value string")


register(Procedure("repair_add_partition_meta", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("dry_run", "boolean", True, doc="only report partitions without metadata"),
), "partition_path string, metadata_is_present string, action string", repair_add_partition_meta,
    "write missing partition metadata files"))
register(Procedure("repair_overwrite_hoodie_props", (
    Param("table", "string", required=True, doc="the table ([db.]name)"),
    Param("new_props_file_path", "string", required=True, doc="a properties file to replace hoodie.properties"),
), "property string, old_value string, new_value string", repair_overwrite_hoodie_props,
    "replace hoodie.properties (a repair tool)"))
