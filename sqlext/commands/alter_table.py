"""DROP TABLE, TRUNCATE TABLE and ALTER TABLE (rename, properties, partitions, location) on Hudi tables
(Hudi ``DropHoodieTableCommand``, ``TruncateHoodieTableCommand``, ``AlterHoodieTable*Command``); column
changes are in :mod:`sqlext.commands.alter_columns`, CREATE TABLE in :mod:`sqlext.commands.ddl`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from engine.config import TableConfig
from engine.spark.schema import table_data_schema
from engine.spark.writer import write_dataframe
from engine.storage import Storage
from engine.table import Table
from engine.write.operation import WriteOperation
from sqlext.catalog import CatalogTable, quote
from sqlext.commands.ddl import absolute_location
from sqlext.commands.partitions import partition_paths_for_spec
from sqlext.commands.results import empty_result
from sqlext.errors import SqlAnalysisError, UnsupportedStatement
from sqlext.parser.statements import (
    AlterTable,
    DropPartitions,
    DropTable,
    RenameTable,
    SetLocation,
    SetProperties,
    TruncateTable,
    UnsetProperties,
)

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)


def drop_table(ctx: CommandContext, stmt: DropTable) -> DataFrame:
    """DROP TABLE [IF EXISTS] t [PURGE]: drop the catalog entry; PURGE also deletes the base path."""
    entry = ctx.catalog.lookup(stmt.ident)
    if entry is None or not entry.is_hudi:
        return ctx.spark.sql(stmt.sql)  # views, other providers and unknown names are Spark's
    ctx.catalog.drop(entry, purge=stmt.purge)
    if stmt.purge and entry.is_hudi and entry.location:
        Storage.for_uri(entry.location).delete_dir(entry.location)
    return empty_result(ctx.spark)


def truncate_table(ctx: CommandContext, stmt: TruncateTable) -> DataFrame:
    """TRUNCATE TABLE t [PARTITION (...)]: re-initialise the table, or delete the named partitions
    (a ``delete_partition`` replacecommit)."""
    entry, table = ctx.catalog.require_hudi(stmt.ident)
    table.check_writable()
    if stmt.partition_spec:
        paths = partition_paths_for_spec(table, dict(stmt.partition_spec), entry.display)
        _delete_partitions(ctx, table, paths)
    else:
        props = {k: v for k, v in table.config.items()}
        table.storage.delete_dir(table.base_path)
        Table.create(table.base_path, props)
    ctx.catalog.refresh(entry)
    return empty_result(ctx.spark)


def _delete_partitions(ctx: CommandContext, table: Table, paths: list[str]) -> None:
    spark = ctx.spark
    empty = spark.createDataFrame([], table_data_schema(table))
    write_dataframe(spark, table, empty, WriteOperation.DELETE_PARTITION, {}, overwrite_partitions=paths)


def alter_table(ctx: CommandContext, stmt: AlterTable) -> DataFrame:
    """ALTER TABLE on a Hudi table: RENAME TO, SET/UNSET TBLPROPERTIES, DROP PARTITION, SET LOCATION (column
    changes are :mod:`sqlext.commands.alter_columns`).

    Raises:
        UnsupportedTable: a Hudi 1.x table (read only).
        SqlAnalysisError: no partition matches a DROP PARTITION spec; SET LOCATION to a path without a Hudi
            table, or of a partition.
    """
    spark, catalog = ctx.spark, ctx.catalog
    entry, table = catalog.require_hudi(stmt.ident)
    table.check_writable()  # a Hudi 1.x table is read only, its catalog entry included
    if isinstance(stmt, RenameTable):
        # Hudi AlterHoodieTableRenameCommand: hoodie.table.name first (a managed table's folder moves with the
        # catalog rename), then the catalog; a refused rename puts the old name back.
        new_db, new_name = catalog.qualify(stmt.new_ident)
        old_name = table.config.raw_value(TableConfig.NAME.key) or entry.name
        table.update_properties({TableConfig.NAME.key: new_name})
        try:
            spark.sql(f"ALTER TABLE {entry.qualified} RENAME TO {quote(new_db)}.{quote(new_name)}")
        except Exception:
            table.update_properties({TableConfig.NAME.key: old_name})
            raise
    elif isinstance(stmt, SetLocation):
        _set_location(ctx, entry, stmt)
    elif isinstance(stmt, SetProperties):
        rendered = ", ".join(f"'{k}' = '{v}'" for k, v in stmt.properties.items())
        spark.sql(f"ALTER TABLE {entry.qualified} SET TBLPROPERTIES ({rendered})")
    elif isinstance(stmt, UnsetProperties):
        keys = ", ".join(f"'{k}'" for k in stmt.keys)
        spark.sql(f"ALTER TABLE {entry.qualified} UNSET TBLPROPERTIES {'IF EXISTS ' if stmt.if_exists else ''}({keys})")
    elif isinstance(stmt, DropPartitions):
        paths: list[str] = []
        for spec in stmt.specs:
            paths.extend(partition_paths_for_spec(table, dict(spec), entry.display))
        if not paths and not stmt.if_exists:
            raise SqlAnalysisError(f"{entry.display}: no partition matches {stmt.specs}")
        if paths:
            _delete_partitions(ctx, table, paths)
    else:
        raise UnsupportedStatement(f"ALTER TABLE form {type(stmt).__name__} is not supported on Hudi tables")
    catalog.refresh(entry)
    return empty_result(spark)


def _set_location(ctx: CommandContext, entry: CatalogTable, stmt: SetLocation) -> None:
    """``ALTER TABLE t SET LOCATION 'path'``: point the entry at another copy of the table (Spark's
    ``AlterTableSetLocationCommand``, which Hudi leaves in place); the path must hold a Hudi table. Hudi's
    partitions live under the base path, so a partition has no location of its own."""
    if stmt.partition_spec:
        raise SqlAnalysisError(f"ALTER TABLE {entry.display} PARTITION (...) SET LOCATION: a Hudi table's partitions "
                               "are folders under its base path and cannot be moved one by one")
    location = absolute_location(stmt.location)
    if not Table.exists(location):
        raise SqlAnalysisError(f"ALTER TABLE {entry.display} SET LOCATION '{stmt.location}': no Hudi table there "
                               "(no .hoodie/hoodie.properties)")
    escaped = location.replace("\\", "\\\\").replace("'", "\\'")
    ctx.spark.sql(f"ALTER TABLE {entry.qualified} SET LOCATION '{escaped}'")
