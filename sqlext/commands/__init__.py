"""One module per statement family; :func:`dispatch` routes a parsed statement to its command.

Statements sqlext does not handle (``Passthrough``) go to ``spark.sql`` unchanged; Spark's parser, with
sqlext's extension (``io.sqlext.catalog.HudiTimeTravelParser``), reads time travel in them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from sqlext.errors import NotHudiTable, UnsupportedStatement
from sqlext.parser import statements as st

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext


def _passthrough(ctx: CommandContext, stmt: st.Passthrough) -> DataFrame:
    return ctx.spark.sql(stmt.sql)


def _create(ctx: CommandContext, stmt: st.CreateTable) -> DataFrame:
    from sqlext.commands.ddl import create_table

    if (stmt.provider or "").lower() != "hudi" and stmt.like is None:
        return ctx.spark.sql(stmt.sql)
    return create_table(ctx, stmt)  # LIKE without USING: the source's provider decides


def _unsupported(ctx: CommandContext, stmt: Any) -> DataFrame:
    raise UnsupportedStatement(f"{type(stmt).__name__} is not implemented yet")


def _handlers() -> dict[type, Callable[[CommandContext, Any], DataFrame]]:
    from sqlext.commands import alter_columns, alter_table, insert, merge, show, update_delete

    table: dict[type, Callable[[CommandContext, Any], DataFrame]] = {
        st.Passthrough: _passthrough,
        st.CreateTable: _create,
        st.DropTable: alter_table.drop_table,
        st.TruncateTable: alter_table.truncate_table,
        st.InsertInto: insert.insert_into,
        st.MergeInto: merge.merge_into,
        st.UpdateTable: update_delete.update_table,
        st.DeleteFrom: update_delete.delete_from,
        st.ShowPartitions: show.show_partitions,
        st.ShowCreateTable: show.show_create_table,
    }
    from sqlext.procedures import call
    from sqlext.procedures.clustering import clustering_statement
    from sqlext.procedures.compaction import compaction_statement

    def service_statement(ctx: Any, stmt: st.Compaction) -> Any:
        return (clustering_statement if stmt.service == "CLUSTERING" else compaction_statement)(ctx, stmt)

    table[st.Call] = call
    table[st.Compaction] = service_statement
    for name in ("RenameTable", "SetProperties", "UnsetProperties", "DropPartitions", "SetLocation"):
        table[getattr(st, name)] = alter_table.alter_table
    for name in ("AddColumns", "RenameColumn", "DropColumns", "AlterColumn", "ChangeColumn", "ReplaceColumns"):
        table[getattr(st, name)] = alter_columns.alter_columns
    return table


def target_of(statement: Any) -> st.TableIdent | None:
    """The table a statement acts on (its ``ident``, ``table`` or ``target``), or None (CALL, SELECT, ...)."""
    if isinstance(statement, (st.Call, st.Compaction)):
        return None
    for attribute in ("ident", "table", "target"):
        value = getattr(statement, attribute, None)
        if isinstance(value, st.TableIdent):
            return value
    return None


def dispatch(ctx: CommandContext, statement: Any) -> DataFrame:
    """Run ``statement`` in ``ctx``.

    A statement whose own target is not a Hudi table (parquet, csv, Hive tables, views) or is not in the
    catalog goes to Spark SQL unchanged, as without sqlext (Hudi's analysis rules match only Hudi tables).
    Commands resolve their target before they change anything, so nothing was done when that happens.

    Raises:
        UnsupportedStatement: a parsed statement sqlext does not implement yet (named in the message).
    """
    handler = _handlers().get(type(statement), _unsupported)
    try:
        return handler(ctx, statement)
    except NotHudiTable as exc:
        if exc.ident is None or exc.ident != target_of(statement):
            raise
        return _passthrough(ctx, st.Passthrough(statement.sql))
