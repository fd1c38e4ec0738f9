"""SHOW statements on Hudi tables: SHOW PARTITIONS (relative partition paths from Hudi's file listing, not
the metastore, filtered by an optional partition spec; Hudi ``ShowHoodieTablePartitionsCommand``) and SHOW
CREATE TABLE (Hudi ``ShowHoodieCreateTableCommand``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType

from engine.formats.avro_schema import META_FIELDS
from sqlext.catalog import CatalogTable, quote, sql_string
from sqlext.commands.partitions import partition_paths_for_spec
from sqlext.parser.statements import ShowCreateTable, ShowPartitions

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext


def show_partitions(ctx: CommandContext, stmt: ShowPartitions) -> DataFrame:
    """One row per partition path, column ``partition``, sorted."""
    entry, table = ctx.catalog.require_hudi(stmt.ident)
    spec = dict(stmt.partition_spec or ())
    if spec:
        paths = partition_paths_for_spec(table, spec, entry.display)
    else:
        paths = [p for p in table.file_system_view().partition_paths() if p]
    return ctx.spark.createDataFrame([(p,) for p in sorted(paths)], "partition string")


INTERNAL_TABLE_PROPERTIES = frozenset({
    # Hive sync's bookkeeping (Hudi HoodieSyncClient) and Hudi's serde flag for _ro/_rt tables.
    "last_commit_time_sync", "last_commit_completion_time_sync", "hoodie.query.as.ro.table",
    # Hive's own parameters.
    "EXTERNAL", "transient_lastDdlTime", "numFiles", "numFilesErasureCoded", "numRows", "rawDataSize",
    "totalSize", "COLUMN_STATS_ACCURATE", "spark.sql.statistics.totalSize", "comment",
})
"""Table parameters that describe the catalog entry rather than what the user declared; not printed by
SHOW CREATE TABLE (nor are ``spark.sql.*`` keys, which Spark hides itself)."""


def user_table_properties(properties: dict[str, str]) -> dict[str, str]:
    """``properties`` without :data:`INTERNAL_TABLE_PROPERTIES` and ``spark.sql.*`` keys."""
    return {k: v for k, v in properties.items()
            if k not in INTERNAL_TABLE_PROPERTIES and not k.startswith("spark.sql.")}


def _sql_type(dtype: DataType) -> str:
    """Spark SQL DDL text of ``dtype`` (``BIGINT``, ``DECIMAL(10,2)``, ``STRUCT<`a`: STRING>``, ...)."""
    if isinstance(dtype, StructType):
        inner = ", ".join(f"{quote(f.name)}: {_sql_type(f.dataType)}{_comment(f)}" for f in dtype.fields)
        return f"STRUCT<{inner}>"
    if isinstance(dtype, ArrayType):
        return f"ARRAY<{_sql_type(dtype.elementType)}>"
    if isinstance(dtype, MapType):
        return f"MAP<{_sql_type(dtype.keyType)}, {_sql_type(dtype.valueType)}>"
    return dtype.simpleString().upper()


def _comment(column: StructField) -> str:
    text = (column.metadata or {}).get("comment")
    return f" COMMENT {sql_string(str(text))}" if text else ""


def create_table_statement(entry: CatalogTable) -> str:
    """The CREATE TABLE statement that re-creates a Hudi table's catalog entry (Hudi
    ``ShowHoodieCreateTableCommand``): the columns without the ``_hoodie_*`` meta columns (partition
    columns last, as the catalog holds them), ``USING hudi``, COMMENT, ``PARTITIONED BY``, ``LOCATION``
    for an EXTERNAL table, and the user's TBLPROPERTIES (:func:`user_table_properties`)."""
    columns = [f for f in entry.schema.fields if f.name not in META_FIELDS]
    lines = [f"CREATE TABLE {entry.qualified} ("]
    lines.append(",\n".join(f"  {quote(f.name)} {_sql_type(f.dataType)}"
                            f"{'' if f.nullable else ' NOT NULL'}{_comment(f)}" for f in columns) + ")")
    lines.append("USING hudi")
    if entry.comment:
        lines.append(f"COMMENT {sql_string(entry.comment)}")
    if entry.partition_columns:
        lines.append(f"PARTITIONED BY ({', '.join(quote(c) for c in entry.partition_columns)})")
    if entry.external:
        lines.append(f"LOCATION {sql_string(entry.location)}")
    props = user_table_properties(entry.table_properties)
    if props:
        rendered = ",\n".join(f"  {sql_string(k)} = {sql_string(v)}" for k, v in sorted(props.items()))
        lines.append(f"TBLPROPERTIES (\n{rendered})")
    return "\n".join(lines) + "\n"


def show_create_table(ctx: CommandContext, stmt: ShowCreateTable) -> DataFrame:
    """SHOW CREATE TABLE: :func:`create_table_statement` for a Hudi table (column ``createtab_stmt``, as
    Spark); any other table goes to Spark unchanged."""
    entry = ctx.catalog.lookup(stmt.ident)
    if entry is None or not entry.is_hudi:
        return ctx.spark.sql(stmt.sql)
    return ctx.spark.createDataFrame([(create_table_statement(entry),)], "createtab_stmt string")
