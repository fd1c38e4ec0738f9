"""MERGE INTO, step 2: the statement as the writer's :class:`engine.spark.merge.MergeSpec`.

The SQL layer says what the statement means; the engine's writer tags and routes the records
(:mod:`engine.spark.merge`):

1. the record-key values ON equates with the key columns (and, when the source gives them, the partition
   columns' values: a non-global index looks a key up in that partition only); only these decide a match, as
   in Hudi (the other ON equalities play no part); a keyless table is joined on the whole ON condition;
2. the clauses, in Hudi 0.15's order (``ExpressionPayload``): a matched row takes the first UPDATE clause
   whose condition holds, else the DELETE clause if its condition holds; a row not matched takes the first
   INSERT clause whose condition holds. Each becomes a projection of the joined row (values cast to the column
   types) and an operation (upsert or delete). ``WHEN NOT MATCHED BY SOURCE`` clauses (beyond Hudi) are
   projections of the stored rows no source row matched, tried in the order written;
3. the write operation: ``insert`` when the table has no ordering field and no clause is an UPDATE (Hudi 0.15's
   rule: no tagging, every source row is new, duplicate keys kept, a DELETE clause deletes nothing), else
   ``upsert``;
4. for a keyless table with an ordering field, the source expression of that field: of several source rows
   matching one stored row, the greatest ordering value wins (Hudi combines the incoming records by it).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engine.spark.merge import MATCHED, STORED_LOCATION, MergeSpec
from engine.write.prepare import IS_DELETED
from sqlext.catalog import quote
from sqlext.commands.merge.validate import MergeScope, unqualified
from sqlext.parser.statements import (
    MergeClause,
    WhenMatchedDelete,
    WhenMatchedUpdate,
    WhenNotMatchedBySourceDelete,
    WhenNotMatchedBySourceUpdate,
    WhenNotMatchedInsert,
)

ACTION = "__sqlext_action"
"""Index of the clause that writes a row (-1: none)."""

BY_SOURCE = (WhenNotMatchedBySourceUpdate, WhenNotMatchedBySourceDelete)
DELETES = (WhenMatchedDelete, WhenNotMatchedBySourceDelete)


def merge_spec(scope: MergeScope) -> MergeSpec:
    """The writer's description of the statement (module docstring)."""
    by_source = any(isinstance(c, BY_SOURCE) for c in scope.stmt.clauses)
    key_columns = [F.expr(scope.key_sources[k]).cast(scope.types[k.lower()]).alias(k) for k in scope.key_fields]
    part_sources = _source_partition_exprs(scope)
    part_columns = None if part_sources is None else [
        F.expr(e).cast(scope.types[n.lower()]).alias(n) for n, e in part_sources.items()]
    # Hudi 0.15 (MergeIntoHoodieTableCommand.executeUpsert): no ordering field and no UPDATE clause make the write
    # an insert: nothing is tagged, so a DELETE clause meets no stored row and deletes nothing.
    insert_only = (not scope.keyless and not scope.precombine and not by_source
                   and not any(isinstance(c, WhenMatchedUpdate) for c in scope.stmt.clauses))
    return MergeSpec(
        plain_upsert=not by_source and not scope.keyless and _plain_upsert(scope),
        source=scope.source, source_alias=scope.source_alias, stored_alias=scope.target_alias,
        key_columns=[] if scope.keyless else key_columns, partition_columns=part_columns,
        condition=scope.stmt.on_sql if scope.keyless else None,
        needs_stored_rows=scope.needs_target_rows, insert_only=insert_only,
        ordering=scope.ordering if scope.keyless else None,
        stage=lambda joined: _stage(scope, joined),
        stage_unmatched=(lambda unmatched: _stage_by_source(scope, unmatched)) if by_source else None,
    )


def _plain_upsert(scope: MergeScope) -> bool:
    """Whether the clauses are exactly ``WHEN MATCHED THEN UPDATE SET *`` and ``WHEN NOT MATCHED THEN INSERT *``
    (no conditions) and ON equates every record-key and partition column with the source column of its name: then
    every source row is written as it is, matched or not (:attr:`engine.spark.merge.MergeSpec.plain_upsert`)."""
    clauses = scope.stmt.clauses
    updates = [c for c in clauses if isinstance(c, WhenMatchedUpdate)]
    inserts = [c for c in clauses if isinstance(c, WhenNotMatchedInsert)]
    if (len(clauses) != 2 or len(updates) != 1 or len(inserts) != 1 or scope.needs_target_rows
            or updates[0].assignments is not None or updates[0].condition_sql is not None
            or inserts[0].columns is not None or inserts[0].condition_sql is not None):
        return False
    named = {**scope.key_sources, **scope.partition_sources}
    return all(unqualified(expr).lower() == field.lower() and field.lower() in scope.source_columns
               for field, expr in named.items())


def _source_partition_exprs(scope: MergeScope) -> dict[str, str] | None:
    """Source expressions of the partition columns (None when the source does not give them all, or the table
    is not partitioned)."""
    fields = scope.table.partition_fields
    if not fields:
        return None
    sources = scope.source_columns
    exprs: dict[str, str] = {}
    for name in fields:
        if name in scope.key_sources:
            continue
        if name in scope.partition_sources:
            exprs[name] = scope.partition_sources[name]
        elif name.lower() in sources:
            exprs[name] = f"{quote(scope.source_alias)}.{quote(sources[name.lower()])}"
        else:
            return None
    return exprs


def _value(scope: MergeScope, column: str, clause: MergeClause) -> str:
    """The Spark SQL expression a clause writes to ``column``."""
    S, T = scope.source_alias, scope.target_alias
    src_col = scope.source_columns.get(column.lower())
    source_ref = f"{quote(S)}.{quote(src_col)}" if src_col else "NULL"
    target_ref = f"{quote(T)}.{quote(column)}"
    if isinstance(clause, (WhenMatchedUpdate, WhenNotMatchedBySourceUpdate)):
        if clause.assignments is None:
            return source_ref
        for col, value in clause.assignments:
            if unqualified(col).lower() == column.lower():
                return value
        return target_ref
    if isinstance(clause, WhenNotMatchedInsert):
        if clause.columns is None:
            return source_ref
        for col, value in zip(clause.columns, clause.values_sql or (), strict=False):
            if unqualified(col).lower() == column.lower():
                return value
        return "NULL"
    if isinstance(clause, WhenNotMatchedBySourceDelete) or scope.needs_target_rows:
        return target_ref
    if column in scope.key_sources:
        return scope.key_sources[column]
    return source_ref


def _projection(scope: MergeScope, clauses: Sequence[tuple[int, MergeClause]], matched_sql: str) -> list[str]:
    T = scope.target_alias
    cases = []
    for i, clause in clauses:
        if isinstance(clause, BY_SOURCE):
            guard = "TRUE"
        elif isinstance(clause, WhenNotMatchedInsert):
            guard = f"NOT {matched_sql}"
        else:
            guard = matched_sql
        condition = getattr(clause, "condition_sql", None)
        if condition:
            guard = f"({guard}) AND coalesce(({condition}), false)"
        cases.append(f"WHEN {guard} THEN {i}")
    projections = [f"CASE {' '.join(cases)} ELSE -1 END AS {ACTION}"]
    deletes = [str(i) for i, c in clauses if isinstance(c, DELETES)]
    deleting = f"{ACTION} IN ({', '.join(deletes)})" if deletes else "false"
    for column in scope.columns:
        narrow = scope.declared.get(column.lower())
        values = " ".join(
            f"WHEN {ACTION} = {i} THEN CAST("
            + (f"CAST({_value(scope, column, clause)} AS {narrow.simpleString()})" if narrow is not None
               else _value(scope, column, clause))
            + f" AS {scope.types[column.lower()].simpleString()})"
            for i, clause in clauses)
        if column.lower() == IS_DELETED:
            # Hudi's soft-delete column: the record is a delete when a DELETE clause wrote it or it says so.
            projections.append(f"({deleting}) OR coalesce(CASE {values} END, false) AS {IS_DELETED}")
        else:
            projections.append(f"CASE {values} END AS {quote(column)}")
    if not _has_delete_column(scope):
        projections.append(f"{deleting} AS {IS_DELETED}")
    projections += [f"{quote(T)}.{c} AS {c}" for c in STORED_LOCATION]
    return projections


def _has_delete_column(scope: MergeScope) -> bool:
    """Whether the table has Hudi's ``_hoodie_is_deleted`` data column (soft deletes)."""
    return IS_DELETED in (c.lower() for c in scope.columns)


def _stage(scope: MergeScope, joined: DataFrame) -> DataFrame:
    """Rows the MATCHED / NOT MATCHED clauses write: data columns, ``_hoodie_is_deleted``, stored location."""
    clauses: list[tuple[int, MergeClause]] = [
        (i, c) for i, c in enumerate(scope.stmt.clauses) if not isinstance(c, (*BY_SOURCE, WhenMatchedDelete))]
    # Hudi's ExpressionPayload tries the (one) matched DELETE clause only when no UPDATE clause took the row.
    clauses += [(i, c) for i, c in enumerate(scope.stmt.clauses) if isinstance(c, WhenMatchedDelete)]
    if not clauses:
        return _empty_stage(scope, joined)
    return _apply(joined, _projection(scope, clauses, MATCHED))


def _apply(rows: DataFrame, projections: list[str]) -> DataFrame:
    """The action is computed first (one CASE), then each column's CASE refers to it; rows no clause takes
    are dropped."""
    with_action = rows.withColumn(ACTION, F.expr(projections[0].rsplit(" AS ", 1)[0]))
    return with_action.filter(F.col(ACTION) >= 0).selectExpr(*projections[1:])


def _empty_stage(scope: MergeScope, joined: DataFrame) -> DataFrame:
    T = scope.target_alias
    cols = [F.lit(None).cast(scope.types[c.lower()]).alias(c) for c in scope.columns if c.lower() != IS_DELETED]
    cols.append(F.lit(False).alias(IS_DELETED))
    cols += [F.col(f"{quote(T)}.{c}").alias(c) for c in STORED_LOCATION]
    return joined.select(*cols).filter(F.lit(False))


def _stage_by_source(scope: MergeScope, unmatched: DataFrame) -> DataFrame:
    """Rows ``WHEN NOT MATCHED BY SOURCE`` clauses write from the stored rows no source row matched."""
    clauses = [(i, c) for i, c in enumerate(scope.stmt.clauses) if isinstance(c, BY_SOURCE)]
    return _apply(unmatched, _projection(scope, clauses, "TRUE"))
