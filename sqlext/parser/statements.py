"""The statements ``sqlext`` handles itself, as frozen dataclasses (what ``parse_statement`` returns).

Conventions:

* Expressions and queries are Spark SQL text, executed later by Spark: ``*_sql`` fields hold the
  text as written, with comments removed and runs of whitespace collapsed to one blank
  (e.g. ``"s.fare * 2"``, ``"SELECT * FROM src WHERE id > 1"``). They were checked for syntax.
* Identifiers are unquoted (```my col``` -> ``my col``) with their case as written.
* Every statement keeps the statement text it was parsed from in ``sql`` (not part of equality);
  the session passes that text to Spark unchanged when the target turns out not to be a Hudi
  table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

PartitionSpec = tuple[tuple[str, str | None], ...]
"""A ``PARTITION (...)`` spec: ``(column, value_sql)`` pairs in written order; ``value_sql`` is the
Spark SQL text of the constant (e.g. ``"'2021-01-01'"``, ``"10"``) or None for a dynamic column."""

Assignment = tuple[str, str]
"""``(column, expr_sql)`` of a ``SET col = expr``; ``column`` has the table alias removed and keeps
nested field paths dotted (``"address.city"``)."""


@dataclass(frozen=True)
class TableIdent:
    """A table name: ``db`` is None when unqualified.

    ``catalog`` is set only for three-part names (``spark_catalog.db.t``).
    """

    db: str | None
    name: str
    catalog: str | None = None

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.db, self.name) if p is not None)

    @property
    def sql(self) -> str:
        """The name as Spark SQL text, each part backquoted when needed (``db.`my t```)."""
        return ".".join(quote_ident(p) for p in (self.catalog, self.db, self.name) if p is not None)


def quote_ident(name: str) -> str:
    """Backquote ``name`` unless it is a plain identifier (letters, digits, ``_``, not only digits),
    as Spark's ``QuotingUtils.quoteIfNeeded``."""
    if name and all(c.isalnum() or c == "_" for c in name) and name.isascii() and not name.isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Statement:
    """Base of all parsed statements."""

    sql: str = field(default="", compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class ColumnDef:
    """A column of CREATE TABLE / ALTER TABLE ADD COLUMNS.

    Attributes:
        name: column name (dotted path for a nested field in ADD COLUMNS).
        type_sql: canonical Spark SQL type text as Spark's ``DataType.sql`` prints it, e.g.
            ``"BIGINT"`` for ``LONG``, ``"DECIMAL(10,5)"``, ``"ARRAY<STRUCT<a: STRING, b: INT>>"``.
        comment: the COMMENT, or None.
        nullable: False for ``NOT NULL``.
        default_sql: the DEFAULT expression text, or None.
        position: ``"FIRST"`` or ``"AFTER <col>"`` (ADD COLUMNS only), or None.
    """

    name: str
    type_sql: str
    comment: str | None = None
    nullable: bool = True
    default_sql: str | None = None
    position: str | None = None


@dataclass(frozen=True)
class CreateTable(Statement):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] t [(cols)] USING hudi ... [AS query]`` and
    ``CREATE TABLE [IF NOT EXISTS] t LIKE src [USING hudi] ...`` (Hudi ``CreateHoodieTableCommand``,
    ``CreateHoodieTableAsSelectCommand``, ``CreateHoodieTableLikeCommand``).

    Attributes:
        ident: the new table.
        columns: declared columns (empty for CTAS without a column list and for LIKE).
        if_not_exists: IF NOT EXISTS given.
        provider: ``"hudi"`` (lower-cased); None only for ``LIKE`` without ``USING`` (the session
            decides from the source table).
        partitioned_by: PARTITIONED BY column names, in written order.
        location: LOCATION, or None.
        properties: OPTIONS and TBLPROPERTIES merged (later wins), keys as written, values as
            strings (``TRUE`` -> ``"true"``, ``1.50`` -> ``"1.50"``).
        comment: table COMMENT, or None.
        as_query: Spark SQL text of the AS query (CTAS), or None.
        like: the source table of CREATE TABLE LIKE, or None.
        external: EXTERNAL given.
    """

    ident: TableIdent
    columns: tuple[ColumnDef, ...] = ()
    if_not_exists: bool = False
    provider: str | None = "hudi"
    partitioned_by: tuple[str, ...] = ()
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    as_query: str | None = None
    like: TableIdent | None = None
    external: bool = False

    def __hash__(self) -> int:
        return hash((self.ident, self.columns, self.as_query, self.like))


@dataclass(frozen=True)
class InsertInto(Statement):
    """``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] [IF NOT EXISTS] [(cols) | BY NAME] query``
    (Hudi ``InsertIntoHoodieTableCommand``).

    Attributes:
        table: the target.
        overwrite: INSERT OVERWRITE.
        partition_spec: the PARTITION spec (static values and dynamic columns), empty when none.
        columns: the target column list, or None.
        query_sql: Spark SQL text of the query (``SELECT ...``, ``VALUES (...), (...)``, ``WITH ...``,
            ``TABLE t``, ``FROM t SELECT ...``); a WITH clause written before INSERT is prepended.
        if_not_exists: IF NOT EXISTS given (static partition overwrite only).
        by_name: BY NAME given.
        query_line, query_column: 1-based position of the query in ``sql`` (to relocate Spark's
            parse errors on ``query_sql``).
    """

    table: TableIdent
    overwrite: bool
    partition_spec: PartitionSpec
    columns: tuple[str, ...] | None
    query_sql: str
    if_not_exists: bool = False
    by_name: bool = False
    query_line: int = field(default=1, compare=False)
    query_column: int = field(default=1, compare=False)


@dataclass(frozen=True)
class WhenMatchedUpdate:
    """``WHEN MATCHED [AND cond] THEN UPDATE SET ...``; ``assignments`` is None for ``SET *``."""

    condition_sql: str | None
    assignments: tuple[Assignment, ...] | None


@dataclass(frozen=True)
class WhenMatchedDelete:
    """``WHEN MATCHED [AND cond] THEN DELETE``."""

    condition_sql: str | None


@dataclass(frozen=True)
class WhenNotMatchedInsert:
    """``WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT ...``; ``columns`` and ``values_sql``
    are both None for ``INSERT *``, else equally long (columns without the target alias)."""

    condition_sql: str | None
    columns: tuple[str, ...] | None
    values_sql: tuple[str, ...] | None


MergeClause = WhenMatchedUpdate | WhenMatchedDelete | WhenNotMatchedInsert


@dataclass(frozen=True)
class MergeInto(Statement):
    """``MERGE INTO target [[AS] t] USING source [[AS] s] ON cond WHEN ...`` (Hudi
    ``MergeIntoHoodieTableCommand``).

    Attributes:
        target: the target table; ``target_alias`` its alias or None.
        source_sql: the source as Spark SQL text: a table name (``"db.src"``) or a parenthesized
            query (``"(SELECT ...)"``), usable as ``SELECT * FROM {source_sql} AS {alias}``.
        source_alias: the source alias or None.
        on_sql: the ON condition text.
        on_equalities: from the top-level AND-conjunction of ON, each ``target_col = expr``
            (either side order) whose one side is a target column: ``(target_col, source_expr_sql)``.
        on_other: the remaining conjuncts as text (non-equalities, equalities without a target
            column); the whole condition when it is not a conjunction (e.g. has a top-level OR).
        clauses: WHEN clauses in written order.
        source_table: the source table when the source is a table name, else None.
    """

    target: TableIdent
    target_alias: str | None
    source_sql: str
    source_alias: str | None
    on_sql: str
    on_equalities: tuple[tuple[str, str], ...]
    on_other: tuple[str, ...]
    clauses: tuple[MergeClause, ...]
    source_table: TableIdent | None = None


@dataclass(frozen=True)
class UpdateTable(Statement):
    """``UPDATE t [[AS] alias] SET col = expr, ... [WHERE cond]`` (Hudi ``UpdateHoodieTableCommand``)."""

    table: TableIdent
    alias: str | None
    assignments: tuple[Assignment, ...]
    where_sql: str | None


@dataclass(frozen=True)
class DeleteFrom(Statement):
    """``DELETE FROM t [[AS] alias] [WHERE cond]`` (Hudi ``DeleteHoodieTableCommand``)."""

    table: TableIdent
    alias: str | None
    where_sql: str | None


@dataclass(frozen=True)
class DropTable(Statement):
    """``DROP TABLE [IF EXISTS] t [PURGE]`` (Hudi ``DropHoodieTableCommand``)."""

    ident: TableIdent
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class TruncateTable(Statement):
    """``TRUNCATE TABLE t [PARTITION (...)]`` (Hudi ``TruncateHoodieTableCommand``)."""

    ident: TableIdent
    partition_spec: PartitionSpec = ()


@dataclass(frozen=True)
class ShowPartitions(Statement):
    """``SHOW PARTITIONS t [PARTITION (...)]`` (Hudi ``ShowHoodieTablePartitionsCommand``)."""

    ident: TableIdent
    partition_spec: PartitionSpec = ()


@dataclass(frozen=True)
class AlterTable(Statement):
    """Base of the ``ALTER TABLE t ...`` statements handled here."""

    ident: TableIdent


@dataclass(frozen=True)
class RenameTable(AlterTable):
    """``ALTER TABLE t RENAME TO t2`` (Hudi ``AlterHoodieTableRenameCommand``)."""

    new_ident: TableIdent


@dataclass(frozen=True)
class AddColumns(AlterTable):
    """``ALTER TABLE t ADD COLUMN[S] [(]col type [COMMENT c] [FIRST|AFTER x], ...[)]``
    (Hudi ``AlterHoodieTableAddColumnsCommand``)."""

    columns: tuple[ColumnDef, ...]


@dataclass(frozen=True)
class SetProperties(AlterTable):
    """``ALTER TABLE t SET TBLPROPERTIES (k = v, ...)``."""

    properties: dict[str, str]

    def __hash__(self) -> int:
        return hash((self.ident, tuple(sorted(self.properties.items()))))


@dataclass(frozen=True)
class UnsetProperties(AlterTable):
    """``ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] (k, ...)``."""

    keys: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class DropPartitions(AlterTable):
    """``ALTER TABLE t DROP [IF EXISTS] PARTITION (...)[, PARTITION (...)] [PURGE]``
    (Hudi ``AlterHoodieTableDropPartitionCommand``)."""

    specs: tuple[PartitionSpec, ...]
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class CallArg:
    """One CALL argument: ``name`` is None for a positional argument.

    ``value`` is the literal as a Python value: ``str``, ``int`` (plain, ``L``, ``S``, ``Y``),
    ``float`` (``D``, ``F``, exponent), ``decimal.Decimal`` (``1.5``, ``BD``), ``bool``, None (NULL),
    or ``dict[str, str | None]`` for ``map('k', 'v', ...)``.
    """

    name: str | None
    value: Any


@dataclass(frozen=True)
class Call(Statement):
    """``CALL [catalog.][system.]name(arg => literal, ...)`` or positional arguments (Hudi
    ``CallProcedureHoodieCommand``). ``name`` is the last part of the written name, as written
    (procedure names are case-insensitive)."""

    name: str
    args: tuple[CallArg, ...] = ()


class CompactionKind(Enum):
    """What a compaction statement does."""

    RUN = "RUN"
    SCHEDULE = "SCHEDULE"
    SHOW = "SHOW"


@dataclass(frozen=True)
class Compaction(Statement):
    """``RUN|SCHEDULE COMPACTION ON t|'path' [AT instant]`` and ``SHOW COMPACTION ON t|'path'
    [LIMIT n]`` (Hudi ``CompactionHoodieTableCommand`` / ``CompactionShowHoodieTableCommand``).
    Exactly one of ``table`` and ``path`` is set."""

    kind: CompactionKind
    table: TableIdent | None = None
    path: str | None = None
    instant: str | None = None
    limit: int | None = None


@dataclass(frozen=True)
class Passthrough(Statement):
    """Anything else (SELECT, SET, USE, SHOW TABLES, DESCRIBE, non-Hudi CREATE TABLE, ...): run by
    Spark unchanged. ``sql`` is the statement text."""

    def __init__(self, sql: str) -> None:
        object.__setattr__(self, "sql", sql)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Passthrough) and other.sql == self.sql

    def __hash__(self) -> int:
        return hash(self.sql)

    def __repr__(self) -> str:
        return f"Passthrough(sql={self.sql!r})"
