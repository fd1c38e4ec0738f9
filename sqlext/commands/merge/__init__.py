"""MERGE INTO a Hudi table (Hudi ``MergeIntoHoodieTableCommand`` + ``ExpressionPayload``).

Three steps: :mod:`.validate` resolves the statement against the table and checks Hudi's rules;
:mod:`.changes` describes it to the engine (key values, join predicate, one projection per clause);
the engine's writer (:func:`engine.spark.merge.merge_dataframe`) tags the source rows through the index,
applies the clauses, routes every record to its file group and commits one upsert.

Semantics (Hudi 0.15; docs/SQL.md §1.4):

* On a table with a record key, the key (and, with a non-global index, the partition path) decides a match:
  a source row whose key is stored runs the MATCHED clauses whatever the other ON equalities say. ON must be
  a conjunction of equalities with a target column on one side; key and partition columns are equated with
  source columns (or casts of them). A keyless table (auto-generated keys) is joined on the whole condition.
* A matched row takes the first UPDATE clause whose condition holds, else the DELETE clause (Hudi's
  ``ExpressionPayload``); a row not matched takes the first INSERT clause whose condition holds.
* Without an ordering field and UPDATE clause the MERGE is an ``insert``: every source row the INSERT clauses
  take is written, duplicate keys included, and a DELETE clause deletes nothing (Hudi 0.15 tags no record).
* A key stored twice (inserts without combining) meets the source row once per stored copy: each copy gets
  its own result (Hudi's ``HoodieMergeHandle``), on copy-on-write tables and merge-on-read file groups that
  take the batch's inserts.
* ``WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET ... | DELETE`` (Spark 3.5 / Delta; beyond Hudi).
* Ordering on copy-on-write tables: a stored record whose precombine value is greater than the merged
  row's is kept (Hudi's ``ExpressionPayload``); a matched DELETE deletes whatever the ordering value. On
  merge-on-read tables updates and deletes are log records and the table's payload class decides at read
  and compaction time, as in Hudi.
* Partial updates keep the other columns (copy-on-write and merge-on-read alike: the stored row is read);
  assigned values are cast to the column types.
* A record whose partition columns change follows the index (see :mod:`engine.spark.merge`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType
from pyspark.sql.utils import AnalysisException

from engine.config import HoodieConfig, WriteConfig
from engine.spark.merge import merge_dataframe
from sqlext.commands.merge.changes import merge_spec
from sqlext.commands.merge.validate import MergeScope, UpCast, resolve
from sqlext.commands.options import session_hoodie_confs, write_options
from sqlext.commands.post_commit import after_write
from sqlext.error_report import summarize
from sqlext.errors import SqlAnalysisError
from sqlext.parser.statements import MergeInto

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

__all__ = ["MergeScope", "merge_into"]


def merge_into(ctx: CommandContext, stmt: MergeInto) -> DataFrame:
    """Run MERGE INTO on a Hudi table; returns the DML metrics row.

    Raises:
        SqlAnalysisError: the statement breaks one of Hudi's MERGE rules, names an unknown column, or a
            clause expression does not resolve (Spark's message, the table named).
        EngineError: the write failed (rolled back; the table reads its last commit).
    """
    spark, catalog = ctx.spark, ctx.catalog
    entry, table = catalog.require_hudi(stmt.target)
    options = write_options(spark, entry, table)
    try:
        source = spark.sql(f"SELECT * FROM {stmt.source_sql}")
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {entry.display}: {summarize(exc)}") from exc
    session = HoodieConfig(session_hoodie_confs(spark))
    scope = resolve(stmt, entry, table, source, can_up_cast=_can_up_cast(spark),
                    require_all_keys=session.get(WriteConfig.SQL_OPTIMIZED_WRITES))
    try:
        metrics = merge_dataframe(spark, table, merge_spec(scope), options)
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {entry.display}: {summarize(exc)}") from exc
    return after_write(ctx, entry, table, options, metrics)


def _can_up_cast(spark: SparkSession) -> UpCast:
    """Spark's ``Cast.canUpCast`` (a cast that loses nothing), asked of the session's JVM."""
    jvm = spark._jvm
    assert jvm is not None
    types = jvm.org.apache.spark.sql.types.DataType
    cast = jvm.org.apache.spark.sql.catalyst.expressions.Cast

    def can_up_cast(source: DataType, target: DataType) -> bool:
        return source == target or bool(cast.canUpCast(types.fromJson(source.json()), types.fromJson(target.json())))
    return can_up_cast
