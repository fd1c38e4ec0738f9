"""MERGE INTO a Hudi table (Hudi ``MergeIntoHoodieTableCommand`` + ``ExpressionPayload``).

Three steps: :mod:`.validate` resolves the statement against the table and checks Hudi's rules;
:mod:`.changes` builds the change set in Spark (one prepped row per record written: update, insert or
delete, with the file group it goes to); the change set is written as one prepped upsert here.

Semantics (issue 12; SQL.md §1.4):

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
* A record whose partition columns change follows the index (see :mod:`.changes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql.utils import AnalysisException

from engine.config import IndexConfig, WriteConfig
from engine.spark.writer import table_arrow_schema, write_dataframe
from engine.write.handles import EXPRESSION_PAYLOAD
from engine.write.operation import WriteOperation
from sqlext.commands.merge.changes import build_changes
from sqlext.commands.merge.validate import GLOBAL_INDEX_MOVE_KEYS, MergeScope, resolve
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
    conf = table.config.overlay(options)
    index_type = conf.get(IndexConfig.TYPE).strip().upper()
    move_key = GLOBAL_INDEX_MOVE_KEYS.get(index_type)
    move = bool(conf.get(move_key)) if move_key is not None else False
    try:
        source = spark.sql(f"SELECT * FROM {stmt.source_sql}")
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {entry.display}: {summarize(exc)}") from exc
    scope = resolve(stmt, entry, table, source, index_type, move)
    data_schema = table_arrow_schema(table)
    # Hudi's MERGE writes with ExpressionPayload: ordering decides updates, a matched DELETE always deletes.
    options = {**options, WriteConfig.PAYLOAD_CLASS.key: EXPRESSION_PAYLOAD}
    conf = table.config.overlay(options)
    try:
        changes = build_changes(spark, scope, conf, data_schema)
        changes.rows.schema  # noqa: B018 - analysis errors (unknown column) surface before the write
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {entry.display}: {summarize(exc)}") from exc
    try:
        metrics = write_dataframe(spark, table, changes.rows, WriteOperation.UPSERT, options, prepped=True)
    finally:
        changes.close()
    return after_write(ctx, entry, table, options, metrics)
