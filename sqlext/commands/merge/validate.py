"""MERGE INTO, step 1: resolve the statement against the target table and check Hudi's rules.

The checks and their messages are those of Hudi's ``MergeIntoHoodieTableCommand`` (``validate``,
``checkUpdatingActions``, ``checkInsertingActions``, ``checkDeletingActions``, the record-key resolution of
the ON condition) and ``HoodieAnalysis`` (``UPDATE SET *`` / ``INSERT *`` expanded by name over the source).
Hudi 0.15's rules for the ON condition of a table with a record key: a conjunction of equalities, each with a
target column (possibly cast) on one side, the other side up-castable to its type; the record-key and partition
columns equated with a source column (or a cast of one). Beyond Hudi we accept target columns on the right of a
MOR update (the stored row is read, as on copy-on-write).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql.types import DataType, StructType
from pyspark.sql.utils import AnalysisException
from sqlglot import exp

from engine.auto_keys import is_keyless
from engine.formats.avro_schema import META_FIELDS
from engine.spark.schema import table_data_schema
from engine.table import Table
from sqlext.catalog import CatalogTable, declared_narrow_types, quote
from sqlext.commands.type_names import scala_type_name
from sqlext.error_report import summarize
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

UpCast = Callable[[DataType, DataType], bool]
"""Spark's ``Cast.canUpCast(from, to)``: a cast that loses nothing."""


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
        key_sources: record-key column -> the source expression giving its value (keyed tables): the one ON
            equates it with, else the source column of its name.
        partition_sources: partition column -> the source expression ON equates it with (the others are read
            from the source column of their name, when there is one).
        target_schema: the target's data columns as a Spark schema.
        ordering: the source expression of the ordering field (:func:`ordering_source`), or None.
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
    target_schema: StructType | None = None
    key_sources: dict[str, str] = field(default_factory=dict)
    partition_sources: dict[str, str] = field(default_factory=dict)
    ordering: str | None = None
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

    def is_source_column(self, sql: str, *, allow_cast: bool = False) -> bool:
        """Whether ``sql`` is a plain source column, or (``allow_cast``) a cast of one (Hudi
        ``resolvesToSourceAttribute``)."""
        refs, tree = column_refs(sql), expression_tree(sql)
        while isinstance(tree, exp.Paren):
            tree = tree.this
        if allow_cast and isinstance(tree, exp.Cast):
            tree = tree.this
        if not isinstance(tree, exp.Column) or len(refs) != 1:
            return False
        qualifier, column = refs[0]
        if qualifier is not None:
            return qualifier.lower() == self.source_alias.lower() and column.lower() in self.source_columns
        return column.lower() in self.source_columns and column.lower() not in self.types

    def target_frame(self) -> DataFrame:
        """An empty frame of the target's data columns under the target alias (for analysis only)."""
        spark = self.source.sparkSession
        return spark.createDataFrame([], self.target_schema or StructType()).alias(self.target_alias)

    def both_sides(self) -> DataFrame:
        """The source under its alias beside an empty target frame: expressions of the statement resolve
        against it as in the statement (for analysis only: nothing runs)."""
        return self.source.alias(self.source_alias).crossJoin(self.target_frame())

    def unresolved(self, column: str) -> SqlAnalysisError:
        """Spark's ``UNRESOLVED_COLUMN`` error for a target column that does not exist."""
        try:
            self.target_frame().selectExpr(quote(unqualified(column))).schema  # noqa: B018 - raises
        except AnalysisException as exc:
            return SqlAnalysisError(f"MERGE INTO {self.display}: {summarize(exc)}")
        raise AssertionError(f"{column} resolves in {self.display}")


def _source_alias(stmt: MergeInto) -> str:
    if stmt.source_alias:
        return stmt.source_alias
    if stmt.source_table is not None:
        return stmt.source_table.name
    return SOURCE_ALIAS


def _load_source(spark_sql: DataFrame, stmt: MergeInto, display: str) -> DataFrame:
    if stmt.source_columns:
        # Spark's parser refuses them (``AstBuilder.visitMergeIntoTable``), so Hudi never sees them: Spark 3.5's
        # error class and words, as Hudi 0.15 (Spark 3.5) answers.
        raise SqlAnalysisError(f"MERGE INTO {display}: [COLUMN_ALIASES_IS_NOT_ALLOWED] Columns aliases are not "
                               f"allowed in MERGE. ({', '.join(stmt.source_columns)})")
    return spark_sql.drop(*[c for c in spark_sql.columns if c in META_FIELDS])


def resolve(stmt: MergeInto, entry: CatalogTable, table: Table, source_df: DataFrame, *,
            can_up_cast: UpCast, require_all_keys: bool = False) -> MergeScope:
    """Resolve and validate a MERGE statement.

    Args:
        stmt: the statement.
        entry, table: the target (a Hudi table).
        source_df: ``SELECT * FROM <source>`` as Spark reads it.
        can_up_cast: Spark's ``Cast.canUpCast`` (the ON equalities' types).
        require_all_keys: the session sets ``hoodie.spark.sql.optimized.writes.enable=true`` (see
            :func:`_resolve_on`).

    Returns:
        The resolved scope.

    Raises:
        SqlAnalysisError: a rule Hudi enforces is broken (message as Hudi's), an unknown column (Spark's
            ``UNRESOLVED_COLUMN``), a source without the columns ``UPDATE SET *`` / ``INSERT *`` need, source
            column aliases (Spark's parser refuses them).
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
        declared=declared_narrow_types(entry, schema), target_schema=schema,
    )
    _check_clauses(scope, stmt.clauses)
    if not scope.keyless:
        _resolve_on(scope, can_up_cast, require_all_keys)
    scope.ordering = ordering_source(scope)
    scope.needs_target_rows = _needs_target_rows(scope)
    return scope


def _target_column(scope: MergeScope, node: exp.Expr) -> str | None:
    """The target column ``node`` is, possibly under a cast (Hudi ``CoercedAttributeReference``), or None."""
    if isinstance(node, exp.Cast):
        node = node.this
    while isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.Column):
        return None
    qualifier, name = node.table or None, node.name
    if qualifier is not None:
        return name if qualifier.lower() in scope.target_names and name.lower() in scope.types else None
    return name if name.lower() in scope.types and name.lower() not in scope.source_columns else None


def _on_equalities(scope: MergeScope) -> list[tuple[str, str]]:
    """``(target column, source expression)`` of every ON conjunct, in Hudi's rules for a table with a record
    key (``MergeIntoHoodieTableCommand.recordKeyAttributeToConditionExpression`` and ``doCasting``): every
    conjunct an equality with a target column (possibly cast) on one side.

    Raises:
        SqlAnalysisError: a conjunct is not an equality, or an equality has no target column on either side.
    """
    stmt, display = scope.stmt, scope.display
    others = [expression_tree(c) for c in stmt.on_other]
    if any(not isinstance(t, exp.EQ) for t in others):
        raise SqlAnalysisError(
            f"MERGE INTO {display}: Currently only equality predicates are supported in MERGE INTO statement on "
            f"primary key table(provided {stmt.on_sql}")
    pairs = [(unqualified(t), s) for t, s in stmt.on_equalities]
    for tree in others:
        assert isinstance(tree, exp.EQ)
        left, right = tree.left, tree.right
        if isinstance(left, exp.Cast) and isinstance(right, exp.Cast) and left.to == right.to:
            left, right = left.this, right.this  # Hudi stripCasting: both sides cast to one type
        for target_side, other_side in ((left, right), (right, left)):
            name = _target_column(scope, target_side)
            if name is not None:
                pairs.append((name, expr_sql(other_side)))
                break
        else:
            raise SqlAnalysisError(
                f"MERGE INTO {display}: Invalid MERGE INTO matching condition: `{expr_sql(tree)}`: expected "
                "condition should be 'target.id = <source-column-expr>', e.g. `t.id = s.id` or "
                "`t.id = cast(s.id, ...)")
    return pairs


def _resolve_on(scope: MergeScope, can_up_cast: UpCast, require_all_keys: bool) -> None:
    """The source expressions of the record-key columns (and the partition columns ON equates), Hudi's way:
    only the record key (and, with a non-global index, the partition path) decides a match; the other ON
    equalities are checked, then play no part.

    Args:
        can_up_cast: Spark's ``Cast.canUpCast`` (from type, to type).
        require_all_keys: ``hoodie.spark.sql.optimized.writes.enable`` is set to true in the session: every
            record-key column must be equated in ON; otherwise a key column ON does not name is read from the
            source column of that name (Hudi 0.15).

    Raises:
        SqlAnalysisError: Hudi's ON rules (see :func:`_on_equalities`); a source expression that cannot be
            up-cast to its target column's type; a key or partition column equated with anything but a source
            column (or a cast of one); a record-key column neither in ON nor in the source.
    """
    display = scope.display
    pairs = _on_equalities(scope)
    for (target, source_expr), (source_type, target_cast) in zip(pairs, _coercions(scope, pairs), strict=True):
        # Spark casts one side of the equality to the other's type (or both to a common one); Hudi then needs
        # the source side, without the cast Spark put on the target column, to up-cast to the column's type.
        target_type = scope.types[target.lower()]
        if target_cast and not can_up_cast(source_type, target_type):
            raise SqlAnalysisError(
                f"MERGE INTO {display}: Invalid MERGE INTO matching condition: {source_expr}: can't cast "
                f"{source_expr} (of {scala_type_name(source_type)}) to {scala_type_name(target_type)}")
    equated: dict[str, str] = {}
    fields = [*scope.key_fields, *scope.table.partition_fields]
    for name in fields:
        found = next(((t, s) for t, s in pairs if t.lower() == name.lower()), None)
        if found is None:
            continue
        if not scope.is_source_column(found[1], allow_cast=True):
            raise SqlAnalysisError(
                f"MERGE INTO {display}: Only simple conditions of the form `t.id = s.id` are allowed on the "
                f"primary-key and partition path column. Found `{scope.target_alias}.{found[0]} = {found[1]}`")
        equated.setdefault(name.lower(), found[1])
    sources = scope.source_columns
    for key in scope.key_fields:
        if key.lower() in equated:
            scope.key_sources[key] = equated[key.lower()]
        elif require_all_keys:
            raise SqlAnalysisError(
                f"MERGE INTO {display}: Hudi tables with primary key are required to match on all primary key "
                f"colums. Column: '{key}' not found")
        elif key.lower() in sources:
            scope.key_sources[key] = f"{quote(scope.source_alias)}.{quote(sources[key.lower()])}"
        else:
            raise SqlAnalysisError(
                f"MERGE INTO {display}: record key field `{key}` is neither equated in the ON condition nor a "
                f"source column (source columns: {', '.join(scope.source.columns)})")
    scope.partition_sources = {n: equated[n.lower()] for n in scope.table.partition_fields
                               if n.lower() in equated and n not in scope.key_sources}


def _coercions(scope: MergeScope, pairs: Sequence[tuple[str, str]]) -> list[tuple[DataType, bool]]:
    """For each ``(target column, source expression)`` equality: the source expression's Spark type, and
    whether Spark's analysis of ``target = source`` casts the target side (type coercion). By analysis alone:
    nothing runs.

    Raises:
        SqlAnalysisError: an expression does not resolve (Spark's message: ``UNRESOLVED_COLUMN`` ...).
    """
    if not pairs:
        return []
    target = quote(scope.target_alias)
    exprs = [f"({e}) AS __s{i}" for i, (_, e) in enumerate(pairs)]
    exprs += [f"{target}.{quote(t)} = ({e}) AS __eq{i}" for i, (t, e) in enumerate(pairs)]
    try:
        frame = scope.both_sides().selectExpr(*exprs)
        schema = frame.schema
    except AnalysisException as exc:
        raise SqlAnalysisError(f"MERGE INTO {scope.display}: {summarize(exc)}") from exc
    projections = frame._jdf.queryExecution().analyzed().projectList()
    result = []
    for i in range(len(pairs)):
        equality = projections.apply(len(pairs) + i).child()
        target_cast = equality.left().getClass().getSimpleName() in ("Cast", "AnsiCast")
        result.append((schema.fields[i].dataType, bool(target_cast)))
    return result


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
                raise scope.unresolved(unknown[0])
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
                raise scope.unresolved(unknown[0])
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


def ordering_source(scope: MergeScope) -> str | None:
    """The source expression of the ordering field (Hudi ``preCombineAttributeAssociatedExpression``): the
    source column of that name, else the first UPDATE assignment of it from a source column (or a cast of
    one); None when the table has no ordering field.

    Raises:
        SqlAnalysisError: the table has an ordering field and the source gives it neither way (Hudi resolves
            it for every MERGE, whatever its clauses).
    """
    field_name = scope.precombine
    if not field_name:
        return None
    sources = scope.source_columns
    if field_name.lower() in sources:
        return f"{quote(scope.source_alias)}.{quote(sources[field_name.lower()])}"
    updates = [c for c in scope.stmt.clauses if isinstance(c, WhenMatchedUpdate)]
    for clause in updates:
        for column, value in clause.assignments or ():
            if unqualified(column).lower() == field_name.lower() and scope.is_source_column(value, allow_cast=True):
                return value
    raise SqlAnalysisError(
        f"MERGE INTO {scope.display}: Failed to resolve pre-combine field `{field_name}` w/in the source-table "
        f"output (assign it from a source column: UPDATE SET {field_name} = <source column>)")


def _needs_target_rows(scope: MergeScope) -> bool:
    if scope.keyless:
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
