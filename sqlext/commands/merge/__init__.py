"""MERGE INTO a Hudi table (Hudi ``MergeIntoHoodieTableCommand`` + ``ExpressionPayload``).

Three steps: :mod:`.validate` resolves the statement against the table and checks Hudi's rules;
:mod:`.changes` describes it to the engine (key values, join predicate, one projection per clause);
the engine's writer (:func:`engine.spark.merge.merge_dataframe`) tags the source rows through the index,
applies the clauses, routes every record to its file group and commits one upsert.

Semantics (issue 12; docs/SQL.md §1.4):

* The whole ON condition decides a match: the record key equalities locate the stored record (through
  the index), the other conjuncts must hold too. A keyless table (auto-generated keys) is joined on the
  whole condition.
* Clauses are tried in the order written and the first whose condition holds wins, as SQL, Spark, Delta
  and Iceberg define MERGE (Hudi 0.14 tries every UPDATE clause before its DELETE clause).
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

from pyspark.sql import DataFrame
from pyspark.sql.utils import AnalysisException

from engine.spark.merge import merge_dataframe
from sqlext.commands.merge.changes import merge_spec
from sqlext.commands.merge.validate import MergeScope, resolve
from sqlext.commands.options import write_options
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
    scope = resolve(stmt, entry, table, source)
    try:
        metrics = merge_dataframe(spark, table, merge_spec(scope), options)
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {entry.display}: {summarize(exc)}") from exc
    return after_write(ctx, entry, table, options, metrics)
