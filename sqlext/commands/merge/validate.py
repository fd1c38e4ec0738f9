"""MERGE INTO, step 1: resolve the statement against the target table and check Hudi's rules.

The checks and their messages are those of Hudi's ``MergeIntoHoodieTableCommand`` (``validate``,
``checkUpdatingActions``, ``checkInsertingActions``, ``checkDeletingActions``, the record-key resolution of
the ON condition) and ``HoodieAnalysis`` (``UPDATE SET *`` / ``INSERT *`` expanded by name over the source).
Where Hudi refuses something that has one clear meaning we accept it (an expression on the source side of
the key equality, non-equality conjuncts in ON, target columns on the right of a MOR update).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql.types import DataType
from sqlglot import exp

from engine.auto_keys import is_keyless
from engine.formats.avro_schema import META_FIELDS
from engine.spark.schema import table_data_schema
from engine.table import Table
from sqlext.catalog import CatalogTable, declared_narrow_types
from sqlext.errors import SqlAnalysisError
from sqlext.parser.source import expr_sql
from sqlext.parser.statements import (
    MergeClause,
    MergeInto,
    WhenMatchedDelete,
    WhenMatchedUpdate,
    WhenNotMatchedBySourceDelete,
    WhenNotMatchedBySourceUpdate,
    WhenNotMatchedInsert,
)

SOURCE_ALIAS = "__sqlext_source"
"""Alias of a source subquery written without one."""


def unqualified(name: str) -> str:
    """``t.col`` / ```col``` -> ``col``."""
    return name.split(".")[-1].strip("`")


def expression_tree(sql: str) -> exp.Expr:
    """The parse tree an expression's text was generated from (the statement builders' :class:`SqlText`).

    Raises:
        SqlAnalysisError: ``sql`` is plain text (a builder that lost the tree: a bug, never user input).
    """
    tree = getattr(sql, "tree", None)
    if not isinstance(tree, exp.Expr):
        raise SqlAnalysisError(f"internal error: the MERGE expression {sql!r} carries no parse tree")
    return tree


def column_refs(sql: str) -> list[tuple[str | None, str]]:
    """``(qualifier, column)`` of every column reference in an expression of the statement."""
    return [(c.table or None, c.name) for c in expression_tree(sql).find_all(exp.Column)]


@dataclass
class MergeScope:
    """A MERGE statement resolved against its target table and source.

    Attributes:
        stmt: the statement.
        entry, table: the target's catalog entry and Hudi table.
        display: the target's name for messages.
        columns: target data columns in table order; ``types`` their Spark types by lower-cased name.
        key_fields: record-key columns (empty for a keyless table); ``precombine``: ordering field or None.
        keyless: the table has auto-generated keys (matched by the join on the whole ON condition).
        target_alias / source_alias: the names clause expressions use for the two sides.
        source: the source rows (meta columns dropped, column aliases applied).
        key_sources: record-key column -> source expression ON equates it with (keyed tables).
        extra_on: the ON conjuncts beyond the key equalities, as one Spark SQL predicate, or None.
        declared: columns the catalog declares TINYINT/SMALLINT but stored as Avro int (their values are cast
            to the declared type first, as Hudi casts to the catalog schema).
        needs_target_rows: some clause or predicate reads target columns (the target rows are joined
            rather than the key index alone).
    """

    stmt: MergeInto
    entry: CatalogTable
    table: Table
    display: str
    columns: list[str]
    types: dict[str, DataType]
    key_fields: list[str]
    precombine: str | None
    keyless: bool
    target_alias: str
    source_alias: str
    source: DataFrame
    key_sources: dict[str, str] = field(default_factory=dict)
    extra_on: str | None = None
    declared: dict[str, DataType] = field(default_factory=dict)
    needs_target_rows: bool = False

    @property
    def target_names(self) -> set[str]:
        """Lower-cased names that qualify target columns (alias and table name)."""
        return {self.target_alias.lower(), self.entry.name.lower()}

    @property
    def source_columns(self) -> dict[str, str]:
        """Source column names by lower-cased name."""
        return {c.lower(): c for c in self.source.columns}

    def reads_target(self, sql: str | None) -> bool:
        """Whether a clause expression references a target column (qualified by the target's alias or
        name, or unqualified and not a source column)."""
        if not sql:
            return False
        sources = self.source_columns
        for qualifier, column in column_refs(sql):
            if qualifier is not None and qualifier.lower() in self.target_names:
                return True
            if qualifier is None and column.lower() in self.types and column.lower() not in sources:
                return True
        return False

    def is_source_column(self, sql: str) -> bool:
        """Whether ``sql`` is a plain source column (Hudi ``resolvesToSourceAttribute``)."""
        refs = column_refs(sql)
        if not isinstance(expression_tree(sql), exp.Column) or len(refs) != 1:
            return False
        qualifier, column = refs[0]
        if qualifier is not None:
            return qualifier.lower() == self.source_alias.lower() and column.lower() in self.source_columns
        return column.lower() in self.source_columns and column.lower() not in self.types


def _source_alias(stmt: MergeInto) -> str:
    if stmt.source_alias:
        return stmt.source_alias
    if stmt.source_table is not None:
        return stmt.source_table.name
    return SOURCE_ALIAS


def _load_source(spark_sql: DataFrame, stmt: MergeInto, display: str) -> DataFrame:
    source = spark_sql
    if stmt.source_columns:
        if len(stmt.source_columns) != len(source.columns):
            raise SqlAnalysisError(
                f"MERGE INTO {display}: the source has {len(source.columns)} column(s) but its alias names "
                f"{len(stmt.source_columns)} ({', '.join(stmt.source_columns)})")
        source = source.toDF(*stmt.source_columns)
    return source.drop(*[c for c in source.columns if c in META_FIELDS])


def resolve(stmt: MergeInto, entry: CatalogTable, table: Table, source_df: DataFrame) -> MergeScope:
    """Resolve and validate a MERGE statement.

    Args:
        stmt: the statement.
        entry, table: the target (a Hudi table).
        source_df: ``SELECT * FROM <source>`` as Spark reads it.

    Returns:
        The resolved scope.

    Raises:
        SqlAnalysisError: a rule Hudi enforces is broken (message as Hudi's), an unknown column, a source
            without the columns ``UPDATE SET *`` / ``INSERT *`` need.
    """
    display = entry.display
    schema = table_data_schema(table)
    columns = [f.name for f in schema.fields]
    types = {f.name.lower(): f.dataType for f in schema.fields}
    scope = MergeScope(
        stmt=stmt, entry=entry, table=table, display=display, columns=columns, types=types,
        key_fields=list(table.record_key_fields), precombine=table.precombine_field or None,
        keyless=is_keyless(table.config), target_alias=stmt.target_alias or entry.name,
        source_alias=_source_alias(stmt), source=_load_source(source_df, stmt, display),
        declared=declared_narrow_types(entry, schema),
    )
    _check_clauses(scope, stmt.clauses)
    if not scope.keyless:
        _resolve_on(scope)
    _check_precombine(scope)
    scope.needs_target_rows = _needs_target_rows(scope)
    return scope


def _resolve_on(scope: MergeScope) -> None:
    """Key equalities of ON (each record-key column equated with a source expression) and the rest."""
    stmt = scope.stmt
    equated: dict[str, str] = {}
    extra: list[exp.Expr] = []
    for target_col, source_expr in stmt.on_equalities:
        name = unqualified(target_col).lower()
        if name in {k.lower() for k in scope.key_fields} and name not in equated:
            equated[name] = source_expr
        else:
            target = exp.column(unqualified(target_col), table=scope.target_alias, quoted=True)
            extra.append(exp.EQ(this=target, expression=exp.Paren(this=expression_tree(source_expr))))
    extra.extend(exp.Paren(this=expression_tree(c)) for c in stmt.on_other)
    for key in scope.key_fields:
        if key.lower() not in equated:
            raise SqlAnalysisError(
                f"MERGE INTO {scope.display}: Hudi tables with primary key are required to match on all "
                f"primary key colums. Column: '{key}' not found (ON {stmt.on_sql})")
    scope.key_sources = {k: equated[k.lower()] for k in scope.key_fields}
    for key, expr in scope.key_sources.items():
        if scope.reads_target(expr):
            raise SqlAnalysisError(
                f"MERGE INTO {scope.display}: Invalid MERGE INTO matching condition: `{key} = {expr}`: expected "
                "condition should be 'target.id = <source-column-expr>', e.g. `t.id = s.id` or "
                "`t.id = cast(s.id, ...)`")
    scope.extra_on = expr_sql(exp.and_(*extra)) if extra else None


def _assigned(assignments: Sequence[tuple[str, str]]) -> set[str]:
    return {unqualified(c).lower() for c, _ in assignments}


def _check_clauses(scope: MergeScope, clauses: Sequence[MergeClause]) -> None:
    display, types, sources = scope.display, scope.types, scope.source_columns
    n_columns = len(scope.columns)
    deletes = sum(isinstance(c, WhenMatchedDelete) for c in clauses)
    if deletes > 1:
        raise SqlAnalysisError(f"MERGE INTO {display}: Only one deleting action is supported in MERGE INTO "
                               f"statement (provided {deletes})")
    for clause in clauses:
        if isinstance(clause, (WhenMatchedUpdate, WhenNotMatchedBySourceUpdate)) and clause.assignments:
            unknown = [c for c, _ in clause.assignments if unqualified(c).lower() not in types]
            if unknown:
                raise SqlAnalysisError(f"MERGE INTO {display}: unknown column(s) {', '.join(unknown)} "
                                       f"(columns: {', '.join(scope.columns)})")
            if len(clause.assignments) > n_columns:
                raise SqlAnalysisError(
                    f"MERGE INTO {display}: The number of update assignments[{len(clause.assignments)}] must be "
                    f"less than or equal to the targetTable field size[{n_columns}]")
        if isinstance(clause, WhenMatchedUpdate) and clause.assignments is None:
            missing = [c for c in scope.columns if c.lower() not in sources]
            if missing:
                raise SqlAnalysisError(
                    f"MERGE INTO {display}: UPDATE SET * needs source column(s) {', '.join(missing)}")
        if isinstance(clause, WhenNotMatchedInsert):
            if clause.columns is None:
                missing = [c for c in scope.columns if c.lower() not in sources]
                if missing:
                    raise SqlAnalysisError(
                        f"MERGE INTO {display}: INSERT * needs source column(s) {', '.join(missing)}")
                continue
            unknown = [c for c in clause.columns if unqualified(c).lower() not in types]
            if unknown:
                raise SqlAnalysisError(f"MERGE INTO {display}: unknown column(s) {', '.join(unknown)} "
                                       f"(columns: {', '.join(scope.columns)})")
            if len(clause.columns) > n_columns:
                raise SqlAnalysisError(
                    f"MERGE INTO {display}: The number of insert assignments[{len(clause.columns)}] must be "
                    f"less than or equal to the targetTable field size[{n_columns}]")
            cols = {unqualified(c).lower() for c in clause.columns}
            for key in scope.key_fields:
                if key.lower() not in cols:
                    raise SqlAnalysisError(
                        f"MERGE INTO {display}: MERGE INTO field resolution error: No matching assignment found "
                        f"for target table record key field `{key}`")
            for value in clause.values_sql or ():
                if scope.reads_target(value):
                    raise SqlAnalysisError(
                        f"MERGE INTO {display}: Expressions in insert clause of the MERGE INTO statement can only "
                        f"reference source table attributes (found `{value}`)")


def _check_precombine(scope: MergeScope) -> None:
    """Hudi resolves the ordering field of matched updates in the source: a source column of that name, or
    an UPDATE assignment of it from a plain source column (``preCombineAttributeAssociatedExpression``)."""
    field_name = scope.precombine
    updates = [c for c in scope.stmt.clauses if isinstance(c, WhenMatchedUpdate)]
    if not field_name or not updates or field_name.lower() in scope.source_columns:
        return
    for clause in updates:
        for column, value in clause.assignments or ():
            if unqualified(column).lower() == field_name.lower() and scope.is_source_column(value):
                return
    raise SqlAnalysisError(
        f"MERGE INTO {scope.display}: Failed to resolve pre-combine field `{field_name}` w/in the source-table "
        f"output (assign it from a source column: UPDATE SET {field_name} = <source column>)")


def _needs_target_rows(scope: MergeScope) -> bool:
    if scope.keyless or scope.reads_target(scope.extra_on):
        return True
    n_columns = len(scope.columns)
    for clause in scope.stmt.clauses:
        if isinstance(clause, (WhenNotMatchedBySourceUpdate, WhenNotMatchedBySourceDelete)):
            return True
        if scope.reads_target(getattr(clause, "condition_sql", None)):
            return True
        if isinstance(clause, WhenMatchedUpdate) and clause.assignments is not None:
            if len(_assigned(clause.assignments)) < n_columns:
                return True
            if any(scope.reads_target(v) for _, v in clause.assignments):
                return True
    return False
