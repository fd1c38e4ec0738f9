"""ALTER TABLE column changes on Hudi tables: ADD COLUMNS, RENAME COLUMN, DROP COLUMN(S), ALTER|CHANGE COLUMN;
REPLACE COLUMNS is refused as Hudi 0.15 refuses it.

Without schema on read (``hoodie.schema.on.read.enable`` unset or false), as Hudi 0.14's
``AlterHoodieTableAddColumnsCommand`` / ``AlterHoodieTableChangeColumnCommand``: ``ADD COLUMNS`` appends
nullable columns (an empty commit carries the wider schema); ``ALTER COLUMN ... COMMENT`` changes the
comment; changing a column's type is refused with Hudi's message; renaming, dropping, moving a column or
changing its nullability needs schema on read, and the error says so (Hudi fails these too).

With schema on read (the session conf or the table property), as Hudi's ``AlterTableCommand``: every change
is an ``ALTER_SCHEMA`` commit of a new internal schema (:mod:`engine.write.alter_schema`), files written
before are read by column id, and record key, precombine and partition columns cannot be renamed or dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import DataType, StructField, StructType, _parse_datatype_string

from engine.config import HoodieConfig, WriteConfig
from engine.errors import SchemaEvolutionError
from engine.formats.avro_schema import META_FIELDS, arrow_to_avro
from engine.schema import changes
from engine.schema.internal_schema import InternalSchema, InternalType
from engine.services.post_commit import run_post_commit
from engine.spark.schema import arrow_to_spark, spark_to_arrow, table_data_schema
from engine.table import Table
from engine.write.alter_schema import commit_schema_change
from engine.write.commit import finish_write, start_write
from engine.write.operation import WriteOperation
from sqlext.catalog import CatalogTable
from sqlext.commands.options import session_hoodie_confs
from sqlext.commands.results import empty_result
from sqlext.errors import SqlAnalysisError, UnsupportedStatement
from sqlext.parser.statements import (
    AddColumns,
    AlterColumn,
    AlterTable,
    ChangeColumn,
    DropColumns,
    RenameColumn,
    ReplaceColumns,
)

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

_KEY_COLUMNS_MESSAGE = "cannot support apply changes for primaryKey/CombineKey/partitionKey"


def schema_on_read(ctx: CommandContext, entry: CatalogTable) -> bool:
    """Whether schema on read is on for ``entry``: ``hoodie.schema.on.read.enable`` in the session (Hudi reads
    it there) or in the table's properties."""
    conf = HoodieConfig({**{k: v for k, v in entry.properties.items() if k.startswith("hoodie.")},
                         **session_hoodie_confs(ctx.spark)})
    return bool(conf.get(WriteConfig.SCHEMA_ON_READ_ENABLE))


def _spark_type(type_sql: str, entry: CatalogTable) -> DataType:
    try:
        return _parse_datatype_string(type_sql)
    except Exception as exc:  # noqa: BLE001 - Spark's parser raises several kinds
        raise SqlAnalysisError(f"ALTER TABLE {entry.display}: unknown type {type_sql}: {exc}") from exc


def _internal_type(dtype: DataType) -> InternalType:
    arrow = spark_to_arrow(StructType([StructField("c", dtype, True)]))
    return InternalSchema.from_arrow(arrow).fields[0].type


def _spark_type_name(dtype: DataType) -> str:
    """Scala's ``DataType.toString`` (``IntegerType``, ``DecimalType(10,2)``), as Hudi's messages print it."""
    text = repr(dtype)
    return text[:-2] if text.endswith("()") else text


def alter_columns(ctx: CommandContext, stmt: AlterTable) -> DataFrame:
    """Run a column change on a Hudi table (module doc).

    Raises:
        NotHudiTable: the target is not a Hudi table (the statement then goes to Spark).
        SqlAnalysisError: the change is refused (unknown or key column, narrowing type, no schema on read).
    """
    entry, table = ctx.catalog.require_hudi(stmt.ident)
    table.check_writable()
    if isinstance(stmt, ChangeColumn):
        stmt = _as_alter_column(stmt, entry)
    evolve = schema_on_read(ctx, entry)
    if isinstance(stmt, ReplaceColumns):
        _refuse_replace_columns(entry, evolve)
    if isinstance(stmt, AddColumns) and not evolve:
        _add_columns_appended(ctx, entry, table, stmt)
    elif isinstance(stmt, AlterColumn) and not evolve:
        return _alter_column_without_evolution(ctx, entry, table, stmt)
    elif not evolve:
        form = "RENAME COLUMN" if isinstance(stmt, RenameColumn) else "DROP COLUMN"
        raise SqlAnalysisError(
            f"ALTER TABLE {entry.display} {form} needs Hudi's schema on read: SET "
            f"{WriteConfig.SCHEMA_ON_READ_ENABLE.key}=true first (without it Hudi refuses the change too)")
    else:
        _evolve(ctx, entry, table, _change_of(stmt, entry, table))
    ctx.catalog.refresh(entry)
    return empty_result(ctx.spark)


def _refuse_replace_columns(entry: CatalogTable, evolve: bool) -> None:
    """``ALTER TABLE t REPLACE COLUMNS (...)`` is refused as Hudi 0.15 on Spark 3.5 refuses it: without schema on
    read Hudi's catalog table does not support it (Spark's ``UNSUPPORTED_FEATURE.TABLE_OPERATION``); with it Hudi's
    ``AlterTableCommand`` replaces by deleting every column first, the ``_hoodie_*`` meta columns included, and
    refuses that (``cannot modify hudi meta col``). Nothing is changed.

    Raises:
        SqlAnalysisError: always, with Hudi's message and the table's name.
    """
    if evolve:
        raise SqlAnalysisError(f"cannot modify hudi meta col: {META_FIELDS[0]} (ALTER TABLE {entry.display} REPLACE "
                               "COLUMNS deletes every column, the meta columns included; use ADD COLUMNS, DROP "
                               "COLUMN and RENAME COLUMN)")
    raise SqlAnalysisError(
        f"[UNSUPPORTED_FEATURE.TABLE_OPERATION] The feature is not supported: Table `spark_catalog`."
        f"`{entry.database}`.`{entry.name}` does not support REPLACE COLUMNS. (Hudi tables change columns with ADD "
        "COLUMNS, and with hoodie.schema.on.read.enable=true DROP COLUMN and RENAME COLUMN)")


def _as_alter_column(stmt: ChangeColumn, entry: CatalogTable) -> AlterColumn:
    """Hive's ``CHANGE COLUMN a a type [COMMENT c] [FIRST|AFTER x]`` is Spark's ALTER COLUMN; a new name is
    refused as Spark refuses it."""
    if stmt.column.name.lower() != stmt.name.rpartition(".")[2].lower():
        raise SqlAnalysisError(f"ALTER TABLE {entry.display}: Renaming column is not supported in Hive-style "
                               "ALTER COLUMN, please run RENAME COLUMN instead.")
    return AlterColumn(stmt.ident, stmt.name, stmt.column.type_sql, stmt.column.comment, stmt.column.position,
                       None, sql=stmt.sql, tree=stmt.tree)


def _check_not_key(entry: CatalogTable, table: Table, names: list[str]) -> None:
    """Hudi ``AlterTableCommand.checkSchemaChange``: record key, precombine and partition columns stay."""
    protected = [*table.record_key_fields, *([table.precombine_field] if table.precombine_field else []),
                 *table.partition_fields]
    for name in names:
        if name in protected:
            raise SqlAnalysisError(f"ALTER TABLE {entry.display}: {_KEY_COLUMNS_MESSAGE} (column {name})")


def _change_of(stmt: AlterTable, entry: CatalogTable, table: Table) -> Callable[[InternalSchema], InternalSchema]:
    """The schema change a statement makes (applied to the current internal schema)."""
    if isinstance(stmt, AddColumns):
        columns = [(c.name, _internal_type(_spark_type(c.type_sql, entry)), c.comment, c.position)
                   for c in stmt.columns]

        def add(schema: InternalSchema) -> InternalSchema:
            for name, column_type, comment, position in columns:
                schema = changes.add_column(schema, name, column_type, comment, position)
            return schema
        return add
    if isinstance(stmt, RenameColumn):
        _check_not_key(entry, table, [stmt.old])
        return lambda schema: changes.rename_column(schema, stmt.old, stmt.new)
    if isinstance(stmt, DropColumns):
        _check_not_key(entry, table, list(stmt.names))

        def drop(schema: InternalSchema) -> InternalSchema:
            for name in stmt.names:
                if stmt.if_exists and schema.find(name) is None:
                    continue
                schema = changes.delete_column(schema, name)
            return schema
        return drop
    if isinstance(stmt, AlterColumn):
        new_type = _internal_type(_spark_type(stmt.type_sql, entry)) if stmt.type_sql else None

        def alter(schema: InternalSchema) -> InternalSchema:
            if new_type is not None:
                schema = changes.update_column_type(schema, stmt.name, new_type)
            if stmt.comment is not None:
                schema = changes.update_column_comment(schema, stmt.name, stmt.comment)
            if stmt.nullable is not None:
                schema = changes.update_column_nullability(schema, stmt.name, stmt.nullable)
            if stmt.position is not None:
                schema = changes.move_column(schema, stmt.name, stmt.position)
            return schema
        return alter
    raise UnsupportedStatement(f"ALTER TABLE form {type(stmt).__name__} is not supported on Hudi tables")


def _evolve(ctx: CommandContext, entry: CatalogTable, table: Table,
            change: Callable[[InternalSchema], InternalSchema]) -> None:
    before: list[InternalSchema] = []

    def recorded(schema: InternalSchema) -> InternalSchema:
        before.append(schema)
        return change(schema)

    try:
        latest = commit_schema_change(table, recorded, HoodieConfig(session_hoodie_confs(ctx.spark)))
    except SchemaEvolutionError as exc:
        raise SqlAnalysisError(f"ALTER TABLE {entry.display}: {exc}") from exc
    _update_catalog(ctx, entry, table, before[0], latest)


def _update_catalog(ctx: CommandContext, entry: CatalogTable, table: Table, old: InternalSchema,
                    new: InternalSchema) -> None:
    """Give the catalog entry (and Hive sync's ``_ro``/``_rt`` entries, as Hudi does) the new columns: a
    column whose id and type did not change keeps its catalog field (declared type), renamed and with the new
    comment."""
    declared = {f.name.lower(): f for f in entry.schema.fields}
    old_by_id = {f.id: f for f in old.fields}
    converted = arrow_to_spark(new.to_arrow())
    fields = []
    for internal, spark_field in zip(new.fields, converted.fields, strict=True):
        if internal.name in META_FIELDS:
            continue
        previous = old_by_id.get(internal.id)
        kept = declared.get(previous.name.lower()) if previous is not None else None
        dtype = kept.dataType if kept is not None and previous is not None and previous.type == internal.type \
            else spark_field.dataType
        metadata = {"comment": internal.doc} if internal.doc else {}
        fields.append(StructField(internal.name, dtype, internal.optional, metadata))
    data_schema = StructType(fields)
    partitions = tuple(entry.partition_columns)
    ctx.catalog.replace_columns(entry, data_schema, partitions)
    for suffix in ("_ro", "_rt"):
        synced = ctx.catalog.lookup_name(f"{entry.database}.{entry.name}{suffix}")
        if synced is not None and synced.is_hudi:
            ctx.catalog.replace_columns(synced, data_schema, partitions)
    logger.info("%s: columns now %s", entry.display, [f.name for f in fields])


# ---------------------------------------------------------------------------------------------------------
# without schema on read


def _add_columns_appended(ctx: CommandContext, entry: CatalogTable, table: Table, stmt: AddColumns) -> None:
    """ADD COLUMNS: commit the widened schema (an empty commit carrying it, as Hudi's
    ``AlterHoodieTableAddColumnsCommand``) and update the catalog."""
    current = table_data_schema(table)
    existing = {f.name.lower() for f in current.fields}
    added = []
    for column in stmt.columns:
        if column.position is not None:
            raise SqlAnalysisError(
                f"ALTER TABLE {entry.display} ADD COLUMNS {column.name} {column.position}: placing a column needs "
                f"Hudi's schema on read (SET {WriteConfig.SCHEMA_ON_READ_ENABLE.key}=true); without it columns "
                "are appended")
        if "." in column.name:
            raise SqlAnalysisError(f"ALTER TABLE {entry.display} ADD COLUMNS {column.name}: adding a nested field "
                                   f"needs Hudi's schema on read (SET {WriteConfig.SCHEMA_ON_READ_ENABLE.key}=true)")
        if column.name.lower() in existing:
            raise SqlAnalysisError(f"ALTER TABLE {entry.display} ADD COLUMNS: column {column.name} already exists")
        metadata = {"comment": column.comment} if column.comment else {}
        added.append(StructField(column.name, _spark_type(column.type_sql, entry), True, metadata))
    # Hudi AlterHoodieTableAddColumnsCommand: dataSchema ++ colsToAdd ++ partitionSchema, so the committed schema
    # keeps the partition columns last, as the catalog does.
    partitions = {c.lower() for c in entry.partition_columns}
    data_fields = [f for f in current.fields if f.name.lower() not in partitions]
    partition_fields = [f for f in current.fields if f.name.lower() in partitions]
    new_schema = StructType([*data_fields, *added, *partition_fields])
    declared = {f.name.lower(): f for f in entry.schema.fields}
    # Hudi converts the catalog's columns (their COMMENTs too) with its own Avro converter, which keeps a comment
    # as the field's doc; pyspark's Arrow conversion drops field metadata, so the comments are put back here.
    comments = {f.name.lower(): (f.metadata or {}).get("comment") for f in [*declared.values(), *added]}
    arrow = spark_to_arrow(new_schema)
    arrow = pa.schema([f.with_metadata({b"comment": str(comments[f.name.lower()]).encode()})
                       if comments.get(f.name.lower()) else f for f in arrow])
    avro = arrow_to_avro(arrow, table.name)
    conf = table.config.overlay({**{k: v for k, v in entry.properties.items() if k.startswith("hoodie.")},
                                 **session_hoodie_confs(ctx.spark)})
    instant = start_write(table, WriteOperation.ALTER_SCHEMA, conf)
    committed = finish_write(table, instant, WriteOperation.ALTER_SCHEMA, [], avro, conf=conf)
    # Hudi commits the wider schema through its write client, whose postCommit cleans and archives as after any
    # write (hoodie.clean.automatic, hoodie.archive.automatic).
    run_post_commit(table.reload(), conf, instant.timestamp, instant.action, committed)
    kept = StructType([declared.get(f.name.lower(), f) for f in new_schema.fields[:len(data_fields)]] + added
                      + [declared.get(f.name.lower(), f) for f in partition_fields])
    ctx.catalog.replace_columns(entry, kept, tuple(entry.partition_columns))


def _alter_column_without_evolution(ctx: CommandContext, entry: CatalogTable, table: Table,
                                    stmt: AlterColumn) -> DataFrame:
    """Hudi ``AlterHoodieTableChangeColumnCommand``: only the comment may change."""
    data_columns = [f for f in entry.schema.fields if f.name not in META_FIELDS]
    origin = next((f for f in data_columns if f.name.lower() == stmt.name.lower()), None)
    if origin is None:
        names = ", ".join(f"`{f.name}`" for f in data_columns)
        raise SqlAnalysisError(f"Can't find column `{stmt.name}` given table data columns [{names}] "
                               f"(table {entry.display})")
    if stmt.type_sql is not None:
        new_type = _spark_type(stmt.type_sql, entry)
        if new_type != origin.dataType:
            raise SqlAnalysisError(
                f"ALTER TABLE CHANGE COLUMN is not supported for changing column '{origin.name}' with type "
                f"'{_spark_type_name(origin.dataType)}' to '{origin.name}' with type '{_spark_type_name(new_type)}' "
                f"(table {entry.display}; SET {WriteConfig.SCHEMA_ON_READ_ENABLE.key}=true allows widening types)")
    if stmt.position is not None or stmt.nullable is not None:
        raise SqlAnalysisError(
            f"ALTER TABLE {entry.display} ALTER COLUMN {stmt.name}: moving a column or changing its nullability "
            f"needs Hudi's schema on read (SET {WriteConfig.SCHEMA_ON_READ_ENABLE.key}=true)")
    if stmt.comment is not None:
        escaped = stmt.comment.replace("\\", "\\\\").replace("'", "\\'")
        ctx.spark.sql(f"ALTER TABLE {entry.qualified} ALTER COLUMN `{origin.name}` COMMENT '{escaped}'")
    ctx.catalog.refresh(entry)
    return empty_result(ctx.spark)


__all__ = ["alter_columns", "schema_on_read"]
