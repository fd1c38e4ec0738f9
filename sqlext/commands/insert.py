"""INSERT INTO / INSERT OVERWRITE (Hudi ``InsertIntoHoodieTableCommand``).

Columns are matched by position to the table's columns in the catalog's order (DESCRIBE's: data columns, then
partition columns; meta columns hidden), by name when the query's column names are exactly the table's (Hudi's
alignment), or by the given column list / BY NAME; static partition values fill their columns, cast to the
column types. Values are cast to the table types with Spark's store assignment; a count or type mismatch is an
error naming the table and columns (in the catalog's order).

Operation and duplicate rules: :mod:`sqlext.commands.insert_mode` (Hudi 0.15's deduction).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    StringType,
    StructField,
    StructType,
)
from pyspark.sql.utils import AnalysisException

from engine.config import WriteConfig
from engine.formats.avro_schema import META_FIELDS
from engine.spark.schema import table_data_schema
from engine.spark.writer import write_dataframe
from engine.write.operation import WriteOperation
from sqlext.catalog import CatalogTable, declared_narrow_types
from sqlext.commands.insert_mode import InsertTarget, deduce_insert
from sqlext.commands.options import write_options
from sqlext.commands.partitions import literal_value, partition_path_from_values, partition_paths_for_spec
from sqlext.commands.post_commit import after_write
from sqlext.commands.type_names import scala_field
from sqlext.error_report import summarize
from sqlext.errors import SqlAnalysisError
from sqlext.parser.statements import InsertInto

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

def _spark_name(entry: CatalogTable) -> str:
    """The table as Spark names it in its errors: `spark_catalog`.`db`.`t`."""
    database, _, name = entry.display.rpartition(".")
    return ".".join(f"`{part}`" for part in ("spark_catalog", database or "default", name))


def _arity_error(entry: CatalogTable, targets: list[str], data: list[str]) -> SqlAnalysisError:
    """Spark's ``INSERT_COLUMN_ARITY_MISMATCH`` (``TableOutputResolver``), naming the table and both column
    lists."""
    kind, reason = (("TOO_MANY_DATA_COLUMNS", "too many data columns") if len(data) > len(targets)
                    else ("NOT_ENOUGH_DATA_COLUMNS", "not enough data columns"))
    return SqlAnalysisError(
        f"[INSERT_COLUMN_ARITY_MISMATCH.{kind}] Cannot write to {_spark_name(entry)}, the reason is {reason}:\n"
        f"Table columns: {', '.join(f'`{c}`' for c in targets)}.\n"
        f"Data columns: {', '.join(f'`{c}`' for c in data)}.")


def _unresolved_error(entry: CatalogTable, name: str, table_columns: list[str]) -> SqlAnalysisError:
    """Spark's ``UNRESOLVED_COLUMN`` for a column list naming no column of the table."""
    suggestions = ", ".join(f"`{c}`" for c in table_columns)
    return SqlAnalysisError(
        f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `{name}` cannot "
        f"be resolved. Did you mean one of the following? [{suggestions}]. (INSERT INTO {entry.display})")


def catalog_ordered(entry: CatalogTable, schema: StructType) -> list[str]:
    """The table's data columns in the catalog's order: the order DESCRIBE, SHOW CREATE TABLE and ``SELECT *``
    show (Hudi's ``tableSchemaWithoutMetaFields``: data columns, then partition columns), which positional
    INSERT follows. Columns of the table schema the catalog lacks come after the catalog's data columns,
    before its partition columns."""
    by_lower = {f.name.lower(): f.name for f in schema.fields}
    ordered = [by_lower[f.name.lower()] for f in entry.schema.fields
               if f.name not in META_FIELDS and f.name.lower() in by_lower]
    partitions = {c.lower() for c in entry.partition_columns}
    listed = {c.lower() for c in ordered}
    extra = [f.name for f in schema.fields if f.name.lower() not in listed]
    if extra:
        cut = next((i for i, c in enumerate(ordered) if c.lower() in partitions), len(ordered))
        ordered[cut:cut] = extra
    return ordered


def _by_name_targets(data_names: list[str], expected: list[str]) -> list[str] | None:
    """Hudi ``InsertIntoHoodieTableCommand.coerceQueryOutputColumns``: the query's output is first resolved by
    name (Spark's ``resolveOutputColumns(byName = true)``), and only when that fails by position. By name
    succeeds when every expected column is named exactly once by the query (case-insensitively) and the query
    names nothing else; the result is the target column of each query column."""
    if len(data_names) != len(expected):
        return None
    lowered = {c.lower(): c for c in expected}
    names = [n.lower() for n in data_names]
    if len(set(names)) != len(names) or set(names) != set(lowered):
        return None
    return [lowered[n] for n in names]


def _schema_mismatch(entry: CatalogTable, schema: StructType, order: list[str], source: list[StructField],
                     static: dict[str, str], column: str, given: DataType) -> SqlAnalysisError:
    """Hudi ``InsertIntoHoodieTableCommand.validate``'s refusal of a query whose output cannot be cast to the
    table's columns: both schemas in full, the table's in the catalog's order, the query's followed by its
    static partition columns."""
    declared = {f.name.lower(): f for f in entry.schema.fields}
    by_name = {f.name: f for f in schema.fields}
    table_fields = [declared.get(name.lower(), by_name[name]) for name in order]
    query_fields = [*source, *(StructField(name, StringType(), True) for name in static)]
    return SqlAnalysisError(
        f"Expected table's schema: [{', '.join(scala_field(f) for f in table_fields)}], query's output (including "
        f"static partition values): [{', '.join(scala_field(f) for f in query_fields)}] (INSERT INTO "
        f"{entry.display}: column {column} is {by_name[column].dataType.simpleString()} but the query gives "
        f"{given.simpleString()})")


def aligned_frame(
    entry: CatalogTable, schema: StructType, query: DataFrame, columns: list[str] | None,
    static: dict[str, str], by_name: bool = False,
) -> DataFrame:
    """``query`` with its columns renamed and cast to the table's columns (static partition values filled),
    in the table schema's order.

    Columns are matched by the column list ``INSERT INTO t (c1, c2) ...``, by name with ``BY NAME``, by name
    when the query's column names are exactly the expected columns in another order (Hudi aligns such a query
    by name), else by position in the catalog's column order (:func:`catalog_ordered`). Query columns may share
    a name (``SELECT 1, 1``).

    Raises:
        SqlAnalysisError: column count mismatch (Spark's ``INSERT_COLUMN_ARITY_MISMATCH``), unknown column
            (``UNRESOLVED_COLUMN``), or a value whose type cannot be stored in its column.
    """
    order = catalog_ordered(entry, schema)
    lowered = {c.lower(): c for c in order}
    data_names = list(query.columns)
    positional = [f"__sqlext_c{i}" for i in range(len(data_names))]
    source_fields = list(query.schema.fields)
    source_types = [f.dataType for f in source_fields]
    query = query.toDF(*positional)  # unaliased literals may repeat a name: address columns by position
    if by_name and columns is None:
        columns = data_names
    if columns is not None:
        for c in columns:
            if c.lower() not in lowered:
                raise _unresolved_error(entry, c, order)
        targets = [lowered[c.lower()] for c in columns]
    else:
        targets = [c for c in order if c not in static]
        targets = _by_name_targets(data_names, targets) or targets
    if len(data_names) != len(targets):
        raise _arity_error(entry, [c for c in order if c not in static] if columns is None else targets,
                           data_names)
    by_target = dict(zip(targets, range(len(targets)), strict=True))
    types = {f.name: f.dataType for f in schema.fields}
    for target in order:
        if target not in by_target:
            continue
        index = by_target[target]
        if not _assignable(source_types[index], types[target]):
            raise _schema_mismatch(entry, schema, order, source_fields, static, target, source_types[index])
    narrow = declared_narrow_types(entry, schema)
    projected: list[Column] = []
    for f in schema.fields:
        name = f.name
        if name in static:
            expr = F.lit(static[name])
        elif name in by_target:
            expr = F.col(positional[by_target[name]])
        else:
            expr = F.lit(None)
        if name.lower() in narrow:  # the catalog's TINYINT/SMALLINT bounds the value (stored as Avro int)
            expr = expr.cast(narrow[name.lower()])
        projected.append(expr.cast(types[name]).alias(name))
    try:
        result = query.select(*projected)
        result.schema  # noqa: B018 - forces analysis so cast errors surface here
    except AnalysisException as exc:
        raise SqlAnalysisError(f"Cannot write to {entry.display}: {summarize(exc)}") from exc
    return result


def _assignable(source: object, target: object) -> bool:
    """Spark's ANSI store-assignment rule in short: same type family, or numeric to numeric, or
    anything from a NULL / string literal; nested types must match in shape."""
    from pyspark.sql import types as T

    if type(source) is T.NullType or source == target:
        return True
    numeric = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)
    if isinstance(source, numeric) and isinstance(target, numeric):
        return True
    if isinstance(target, T.StringType):
        return not isinstance(source, (T.ArrayType, T.MapType, T.StructType, T.BinaryType))
    if isinstance(source, T.StringType):
        return isinstance(target, (T.DateType, T.TimestampType, T.TimestampNTZType, *numeric, T.BooleanType))
    if isinstance(source, (T.DateType, T.TimestampType, T.TimestampNTZType)) and isinstance(
            target, (T.DateType, T.TimestampType, T.TimestampNTZType)):
        return True
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType):
        return _assignable(source.elementType, target.elementType)
    if isinstance(source, T.MapType) and isinstance(target, T.MapType):
        return _assignable(source.keyType, target.keyType) and _assignable(source.valueType, target.valueType)
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        return len(source.fields) == len(target.fields) and all(
            _assignable(s.dataType, t.dataType) for s, t in zip(source.fields, target.fields, strict=True))
    return False


def insert_into(ctx: CommandContext, stmt: InsertInto) -> DataFrame:
    """Run INSERT INTO / INSERT OVERWRITE into a Hudi table."""
    spark = ctx.spark
    entry, table = ctx.catalog.require_hudi(stmt.table)
    schema = table_data_schema(table)
    spec = {c: v for c, v in stmt.partition_spec}
    if spec:
        fields = {f.lower(): f for f in table.partition_fields}
        bad = [c for c in spec if c.lower() not in fields]
        if bad or not fields:
            raise SqlAnalysisError(
                f"INSERT INTO {entry.display}: {', '.join(bad) or 'PARTITION'} is not a partition column"
                + (f" (partition columns: {', '.join(table.partition_fields)})" if fields else
                   " (the table is not partitioned)"))
        spec = {fields[c.lower()]: v for c, v in spec.items()}
    static = {c: literal_value(v) for c, v in spec.items() if v is not None}
    query = spark.sql(stmt.query_sql)
    meta = [c for c in query.columns if c in META_FIELDS]
    if meta:  # Hudi hides meta columns of the source (e.g. INSERT ... SELECT * FROM another Hudi table)
        query = query.drop(*meta)
    df = aligned_frame(entry, schema, query, list(stmt.columns) if stmt.columns else None, static,
                       by_name=stmt.by_name)

    options = write_options(spark, entry, table)
    mode = (options.get(WriteConfig.OVERWRITE_MODE.key)
            or spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static") or "static").upper()
    all_static = bool(table.partition_fields) and len(static) == len(table.partition_fields)
    whole_table = not table.partition_fields or (mode == "STATIC" and not static)
    target = InsertTarget(
        table=entry.display, has_primary_key=bool(table.record_key_fields),
        precombine_field=table.precombine_field or "", partitioned=bool(table.partition_fields),
        copy_on_write=table.table_type.upper() == "COPY_ON_WRITE",
        overwrite_table=stmt.overwrite and whole_table, overwrite_partition=stmt.overwrite and not whole_table)
    explicit = (options.get(WriteConfig.OPERATION.key) or "").strip().lower()
    decision = deduce_insert(options, target)
    decision.apply(options)
    operation = WriteOperation.parse(decision.operation)
    logger.info("INSERT into %s: operation %s, %s", entry.display, operation.value,
                {k: options[k] for k in (*decision.overrides, *decision.defaults)})
    overwrite_partitions = None
    if operation is WriteOperation.INSERT_OVERWRITE and all_static:
        # the static values as Spark casts them to the partition columns' types
        typed = {f.name: f.dataType for f in schema.fields}
        static_row = spark.range(1).select(*[F.lit(v).cast(typed[c]).alias(c) for c, v in static.items()])
        overwrite_partitions = [partition_path_from_values(table, static_row.toArrow())]
    elif (operation is WriteOperation.INSERT_OVERWRITE and static and mode == "STATIC"
          and explicit not in ("insert_overwrite", "insert_overwrite_table")):
        # Hudi deduceOverwriteConfig: a static overwrite with some partition values replaces every stored
        # partition those values match (PARTITION (dt = 'x', hh) drops dt=x/hh=* the query does not write);
        # none stored: the partitions written (STATIC_OVERWRITE_PARTITION_PATHS empty).
        matched = partition_paths_for_spec(table, dict(spec), entry.display)
        overwrite_partitions = matched or None
    metrics = write_dataframe(spark, table, df, operation, options, overwrite_partitions=overwrite_partitions)
    return after_write(ctx, entry, table, options, metrics)
