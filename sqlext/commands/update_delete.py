"""UPDATE and DELETE on Hudi tables (Hudi ``UpdateHoodieTableCommand`` / ``DeleteHoodieTableCommand``).

Both read the matching rows of the latest snapshot with their meta columns and hand them to the engine's
prepped write (:mod:`engine.spark.prepped`): record keys, partition paths and file groups come from the
``_hoodie_*`` columns, so no index lookup is needed, and tables without a primary key (auto-generated keys)
work the same way.
UPDATE replaces the assigned columns (others are carried over, assigned values cast to the column types);
as Hudi it refuses assignments to record key and partition columns. DELETE flags the rows
``_hoodie_is_deleted`` and removes them whatever their ordering value (a ``delete`` operation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.utils import AnalysisException

from engine.spark.prepped import delete_stored_rows, update_stored_rows
from engine.spark.schema import table_data_schema
from engine.table import Table
from sqlext.catalog import CatalogTable, declared_narrow_types, quote
from sqlext.commands.options import write_options
from sqlext.commands.post_commit import after_write
from sqlext.error_report import summarize
from sqlext.errors import SqlAnalysisError
from sqlext.parser.statements import DeleteFrom, UpdateTable

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext


def _matching_rows(ctx: CommandContext, entry: CatalogTable, table: Table, alias: str | None,
                   where_sql: str | None, verb: str) -> DataFrame:
    df = ctx.spark.read.format("hudi").load(table.base_path).alias(alias or entry.name)
    if where_sql:
        try:
            df = df.filter(F.expr(where_sql))
            df.schema  # noqa: B018 - analysis errors (unknown column) surface here
        except AnalysisException as exc:
            raise SqlAnalysisError(f"{verb} {entry.display}: {summarize(exc)}") from exc
    return df


def update_table(ctx: CommandContext, stmt: UpdateTable) -> DataFrame:
    """UPDATE t SET col = expr, ... [WHERE cond]."""
    spark = ctx.spark
    entry, table = ctx.catalog.require_hudi(stmt.table)
    schema = table_data_schema(table)
    types = {f.name.lower(): f for f in schema.fields}
    assignments: dict[str, str] = {}
    for column, value in stmt.assignments:
        name = column.split(".")[-1].strip("`").lower()
        if name not in types:
            raise SqlAnalysisError(f"UPDATE {entry.display}: unknown column {column} "
                                   f"(columns: {', '.join(f.name for f in schema.fields)})")
        for kind, fields in (("record key field", table.record_key_fields),
                             ("partition field", table.partition_fields)):
            if name in (f.lower() for f in fields):
                # Hudi UpdateHoodieTableCommand.validateNoAssignmentsToTargetTableAttr
                raise SqlAnalysisError(
                    f"Detected disallowed assignment clause in UPDATE statement for {kind} `{types[name].name}` "
                    f"for table `{entry.display}`. Please remove the assignment clause to avoid the error.")
        assignments[name] = value
    rows = _matching_rows(ctx, entry, table, stmt.alias, stmt.where_sql, "UPDATE")
    narrow = declared_narrow_types(entry, schema)
    projected: list[Column] = []
    for field in schema.fields:
        assigned = assignments.get(field.name.lower())
        if assigned is None:
            expr = F.col(quote(field.name))
        else:
            assigned_value = F.expr(assigned)
            if field.name.lower() in narrow:  # the catalog's TINYINT/SMALLINT bounds the value
                assigned_value = assigned_value.cast(narrow[field.name.lower()])
            expr = assigned_value.cast(field.dataType)
        projected.append(expr.alias(field.name))
    options = write_options(spark, entry, table)
    try:
        metrics = update_stored_rows(spark, table, rows, projected, options)
    except AnalysisException as exc:
        raise SqlAnalysisError(f"UPDATE {entry.display}: {summarize(exc)}") from exc
    return after_write(ctx, entry, table, options, metrics)


def delete_from(ctx: CommandContext, stmt: DeleteFrom) -> DataFrame:
    """DELETE FROM t [WHERE cond] (no WHERE deletes every record)."""
    spark = ctx.spark
    entry, table = ctx.catalog.require_hudi(stmt.table)
    rows = _matching_rows(ctx, entry, table, stmt.alias, stmt.where_sql, "DELETE FROM")
    options = write_options(spark, entry, table)
    metrics = delete_stored_rows(spark, table, rows, [f.name for f in table_data_schema(table).fields], options)
    return after_write(ctx, entry, table, options, metrics)
