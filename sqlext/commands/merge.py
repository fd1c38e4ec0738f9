"""MERGE INTO a Hudi table (Hudi ``MergeIntoHoodieTableCommand`` + ``ExpressionPayload``).

Rules (SQL.md §1.4): the ON condition must equate every record-key column of the target with a source
expression (other conjuncts are tolerated; matching is by record key). Clauses are evaluated in order,
the first whose condition holds wins: ``WHEN MATCHED [AND c] THEN UPDATE SET *|col = expr, ...``,
``WHEN MATCHED [AND c] THEN DELETE``, ``WHEN NOT MATCHED [AND c] THEN INSERT *|(cols) VALUES (...)``.
Source rows with the same key are resolved by the precombine field. ``WHEN NOT MATCHED BY SOURCE`` is
not supported.

Data flow: the source gets its record key (a Spark expression, or executors' Python key generator) and is
LEFT-joined in Spark with the target's key index (record key → partition, file group), or with the target
rows when a clause reads target columns or an UPDATE assigns only some columns. Clause conditions and assignments are Spark SQL CASE
expressions over that join. The result is written as one *prepped* upsert: matched rows go to their
file group, deletes carry ``_hoodie_is_deleted``; unmatched rows are inserts.

Ordering: on copy-on-write tables a stored record whose precombine value is greater than the source's is
kept (Hudi's ``ExpressionPayload`` guard in the merge handle); on merge-on-read tables the update is a log
record and readers apply the table's payload class (``OverwriteWithLatestAvroPayload`` by default, so the
source wins), as in Hudi 0.14.

Deliberate difference from Hudi: a matched row keeps its stored partition even if an UPDATE changes a
partition column (Hudi with a non-global index would insert it into the new partition as a duplicate).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import sqlglot
from pyspark import StorageLevel
from pyspark.broadcast import Broadcast
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType
from sqlglot import exp

from engine.formats.avro_schema import META_FIELDS
from engine.spark.schema import table_data_schema
from engine.spark.writer import (
    add_keys,
    existing_key_locations,
    keys_computed_in_spark,
    table_arrow_schema,
    write_dataframe,
)
from engine.write.handles import EVENT_TIME_PAYLOADS
from engine.write.operation import WriteOperation
from engine.write.prepare import FILE_ID, IS_DELETED, PARTITION_PATH, RECORD_KEY
from sqlext.catalog import quote
from sqlext.commands.options import write_options
from sqlext.commands.post_commit import after_write
from sqlext.errors import SqlAnalysisError, UnsupportedStatement
from sqlext.parser.statements import MergeInto, WhenMatchedDelete, WhenMatchedUpdate, WhenNotMatchedInsert

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

TARGET_KEY = "__sqlext_target_key"
TARGET_PARTITION = "__sqlext_target_partition"
TARGET_FILE_ID = "__sqlext_target_file_id"
ACTION = "__sqlext_action"
# Sources whose distinct keys the optimizer estimates at up to this many bytes, or that count up to this
# many rows, have their keys collected and broadcast to the tasks reading the target's key index.
BROADCAST_SOURCE_KEY_BYTES = 64 * 2**20
BROADCAST_SOURCE_ROWS = 1_000_000


def _deterministic(df: DataFrame) -> bool:
    """Whether evaluating ``df`` twice gives the same rows (Spark's ``LogicalPlan.deterministic``: no
    ``rand()``, ``uuid()``, ``monotonically_increasing_id()``, non-deterministic UDF...)."""
    return bool(df._jdf.queryExecution().analyzed().deterministic())


def _estimated_bytes(df: DataFrame) -> int:
    """Spark's optimizer estimate of ``df``'s size in bytes (``LogicalPlan.stats.sizeInBytes``; file
    sources give their file sizes, scaled by the columns kept); ``spark.sql.defaultSizeInBytes`` (huge)
    when unknown, e.g. for local data."""
    return int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())


def _column_refs(sql: str) -> list[tuple[str | None, str]]:
    """``(qualifier, column)`` of every column reference in a Spark SQL expression."""
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.ParseError:
        return []
    return [(c.table or None, c.name) for c in tree.find_all(exp.Column)]


def _unqualified(name: str) -> str:
    return name.split(".")[-1].strip("`")


class _Scope:
    """Resolves which side (source or target) column references in clause expressions belong to."""

    def __init__(self, target_alias: str, target_name: str, source_alias: str,
                 target_columns: Sequence[str], source_columns: Sequence[str]) -> None:
        self.target_names = {target_alias.lower(), target_name.lower()}
        self.source_alias = source_alias.lower()
        self.target_columns = {c.lower() for c in target_columns}
        self.source_columns = {c.lower() for c in source_columns}

    def reads_target(self, sql: str | None) -> bool:
        if not sql:
            return False
        for qualifier, column in _column_refs(sql):
            if qualifier is not None and qualifier.lower() in self.target_names:
                return True
            if qualifier is None and column.lower() in self.target_columns and (
                    column.lower() not in self.source_columns):
                return True
        return False


def _validate_on(stmt: MergeInto, key_fields: list[str], display: str) -> dict[str, str]:
    """Map each record-key column to the source expression the ON condition equates it with.

    Raises:
        SqlAnalysisError: a record-key column is not equated with a source expression.
    """
    equated: dict[str, str] = {}
    for target_col, source_expr in stmt.on_equalities:
        equated[_unqualified(target_col).lower()] = source_expr
    missing = [k for k in key_fields if k.lower() not in equated]
    if missing:
        raise SqlAnalysisError(
            f"MERGE INTO {display}: the ON condition must equate every record-key column "
            f"({', '.join(key_fields)}) with a source column; missing: {', '.join(missing)}"
        )
    return {k: equated[k.lower()] for k in key_fields}


def merge_into(ctx: CommandContext, stmt: MergeInto) -> DataFrame:
    """Run MERGE INTO on a Hudi table; returns the DML metrics row."""
    spark, catalog = ctx.spark, ctx.catalog
    entry, table = catalog.require_hudi(stmt.target)
    key_fields = table.record_key_fields
    if not key_fields:
        raise UnsupportedStatement(f"MERGE INTO {entry.display}: tables without a primary key are not supported")
    key_sources = _validate_on(stmt, key_fields, entry.display)
    schema = table_data_schema(table)
    columns = [f.name for f in schema.fields]
    types = {f.name.lower(): f.dataType for f in schema.fields}
    target_alias = stmt.target_alias or entry.name
    source_alias = stmt.source_alias or "__sqlext_source"

    source = spark.sql(f"SELECT * FROM {stmt.source_sql}")
    source = source.drop(*[c for c in source.columns if c in META_FIELDS])
    scope = _Scope(target_alias, entry.name, source_alias, columns, source.columns)
    lowered_source = {c.lower(): c for c in source.columns}

    needs_target_rows = False
    for clause in stmt.clauses:
        condition = getattr(clause, "condition_sql", None)
        needs_target_rows |= scope.reads_target(condition)
        if isinstance(clause, WhenMatchedUpdate):
            if clause.assignments is None:
                missing = [c for c in columns if c.lower() not in lowered_source]
                if missing:
                    raise SqlAnalysisError(
                        f"MERGE INTO {entry.display}: UPDATE SET * needs source column(s) {', '.join(missing)}")
            else:
                assigned = {_unqualified(c).lower() for c, _ in clause.assignments}
                unknown = [c for c, _ in clause.assignments if _unqualified(c).lower() not in types]
                if unknown:
                    raise SqlAnalysisError(f"MERGE INTO {entry.display}: unknown column(s) {', '.join(unknown)}")
                needs_target_rows |= len(assigned) < len(columns)
                needs_target_rows |= any(scope.reads_target(v) for _, v in clause.assignments)
        if isinstance(clause, WhenNotMatchedInsert):
            if clause.columns is None:
                missing = [c for c in columns if c.lower() not in lowered_source]
                if missing:
                    raise SqlAnalysisError(
                        f"MERGE INTO {entry.display}: INSERT * needs source column(s) {', '.join(missing)}")
            else:
                cols = {c.lower() for c in clause.columns}
                absent = [k for k in key_fields if k.lower() not in cols]
                if absent:
                    raise SqlAnalysisError(
                        f"MERGE INTO {entry.display}: the INSERT clause must assign the record-key column(s) "
                        f"{', '.join(absent)}")
                unknown = [c for c in clause.columns if c.lower() not in types]
                if unknown:
                    raise SqlAnalysisError(f"MERGE INTO {entry.display}: unknown column(s) {', '.join(unknown)}")

    options = write_options(spark, entry, table)
    conf = table.config.overlay(options)
    data_schema = table_arrow_schema(table)

    # 1. source record keys, from the expressions ON equates with the key columns
    key_exprs = [F.expr(key_sources[k]).cast(types[k.lower()]).alias(k) for k in key_fields]
    aliased = source.alias(source_alias)
    probe = aliased.select(F.struct(*[F.col(quote(c)) for c in source.columns]).alias("__src"), *key_exprs)
    # With the key index as target side the source is evaluated twice (its keys, then the join) unless
    # cached: caching costs more than rereading a deterministic source whose keys Spark computes, but a
    # Python key pass or a non-deterministic source (whose two evaluations could disagree) is computed once.
    cache_source = not needs_target_rows and (
        not keys_computed_in_spark(probe, table, conf, data_schema, with_partition=False)
        or not _deterministic(probe))
    probe = add_keys(probe, table, conf, data_schema, with_partition=False)
    src = probe.select("__src.*", F.col(RECORD_KEY).alias("__sqlext_source_key"))
    if cache_source:
        src = src.persist(StorageLevel.MEMORY_AND_DISK)

    # 2. the target side: key index, or full rows when clauses read target columns
    wanted: Broadcast[pa.Array] | None = None
    if needs_target_rows:
        target = spark.read.format("hudi").load(table.base_path)
        target = target.withColumn(FILE_ID, F.split(F.col(META_FIELDS[4]), "_").getItem(0))
        target = target.withColumnRenamed(RECORD_KEY, TARGET_KEY).withColumnRenamed(
            PARTITION_PATH, TARGET_PARTITION).withColumnRenamed(FILE_ID, TARGET_FILE_ID)
    else:
        # Only stored keys that occur in the source matter. A source of moderate size has its keys
        # broadcast to the tasks reading the key index, which keep only those (no join over every stored
        # key); a larger one is semi-joined in Spark. The estimate is free; counting runs the source.
        source_keys = src.select(F.col("__sqlext_source_key").alias(RECORD_KEY)).distinct()
        if _estimated_bytes(source_keys) <= BROADCAST_SOURCE_KEY_BYTES or src.count() <= BROADCAST_SOURCE_ROWS:
            keys = source_keys.toArrow().column(0).combine_chunks().cast(pa.string())
            wanted = spark.sparkContext.broadcast(keys)
            stored = existing_key_locations(spark, table, None, conf, wanted=wanted)
        else:
            stored = existing_key_locations(spark, table, None, conf).join(
                source_keys, on=RECORD_KEY, how="left_semi")
        target = stored.select(
            F.col(RECORD_KEY).alias(TARGET_KEY), F.col(PARTITION_PATH).alias(TARGET_PARTITION),
            F.col(FILE_ID).alias(TARGET_FILE_ID))
    joined = src.alias(source_alias).join(
        target.alias(target_alias),
        F.col(f"{quote(source_alias)}.__sqlext_source_key") == F.col(f"{quote(target_alias)}.{TARGET_KEY}"),
        "left",
    )

    # 3. clause evaluation
    matched = f"{quote(target_alias)}.{TARGET_KEY} IS NOT NULL"
    action_cases = []
    delete_actions = []
    for i, clause in enumerate(stmt.clauses):
        is_matched = isinstance(clause, (WhenMatchedUpdate, WhenMatchedDelete))
        guard = matched if is_matched else f"NOT ({matched})"
        condition = getattr(clause, "condition_sql", None)
        if condition:
            guard = f"({guard}) AND ({condition})"
        action_cases.append(f"WHEN {guard} THEN {i}")
        if isinstance(clause, WhenMatchedDelete):
            delete_actions.append(i)
    action_expr = f"CASE {' '.join(action_cases)} ELSE -1 END"

    def value_for(column: str, clause: object) -> str:
        if isinstance(clause, WhenMatchedDelete) and column in key_sources:
            return key_sources[column]
        src_col = lowered_source.get(column.lower())
        source_ref = f"{quote(source_alias)}.{quote(src_col)}" if src_col else "NULL"
        target_ref = f"{quote(target_alias)}.{quote(column)}"
        if isinstance(clause, WhenMatchedUpdate):
            if clause.assignments is None:
                return source_ref
            for col, value in clause.assignments:
                if _unqualified(col).lower() == column.lower():
                    return value
            return target_ref
        if isinstance(clause, WhenNotMatchedInsert):
            if clause.columns is None:
                return source_ref
            for col, value in zip(clause.columns, clause.values_sql or (), strict=False):
                if col.lower() == column.lower():
                    return value
            return "NULL"
        return target_ref if needs_target_rows else source_ref

    joined = joined.withColumn(ACTION, F.expr(action_expr))
    projections = [ACTION]
    for column in columns:
        cases = " ".join(
            f"WHEN {ACTION} = {i} THEN CAST({value_for(column, clause)} AS {types[column.lower()].simpleString()})"
            for i, clause in enumerate(stmt.clauses)
        )
        projections.append(f"CASE {cases} END AS {quote(column)}")
    projections += [f"{quote(target_alias)}.{TARGET_KEY} AS {TARGET_KEY}",
                    f"{quote(target_alias)}.{TARGET_PARTITION} AS {TARGET_PARTITION}",
                    f"{quote(target_alias)}.{TARGET_FILE_ID} AS {TARGET_FILE_ID}"]
    staged = joined.selectExpr(*projections)
    staged = staged.filter(F.col(ACTION) >= 0)

    # 4. keys of the written rows, stored partition and file group for matched ones
    keyed = add_keys(staged, table, conf, data_schema)
    deleted = F.col(ACTION).isin(delete_actions) if delete_actions else F.lit(False)
    prepped = keyed.select(
        *[F.col(quote(c)) for c in columns],
        F.coalesce(F.col(TARGET_KEY), F.col(RECORD_KEY)).alias(RECORD_KEY),
        F.coalesce(F.col(TARGET_PARTITION), F.col(PARTITION_PATH)).alias(PARTITION_PATH),
        F.col(TARGET_FILE_ID).cast(StringType()).alias(FILE_ID),
        deleted.alias(IS_DELETED),
    )
    # Hudi's ExpressionPayload keeps a stored record whose ordering value is greater than the source's.
    options = {**options, "hoodie.datasource.write.payload.class": EVENT_TIME_PAYLOADS[0]}
    try:
        metrics = write_dataframe(spark, table, prepped, WriteOperation.UPSERT, options, prepped=True)
    finally:
        src.unpersist()
        if wanted is not None:
            wanted.destroy()
    return after_write(ctx, entry, table, options, metrics)
