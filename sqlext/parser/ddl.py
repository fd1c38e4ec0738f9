"""DDL grammar: CREATE TABLE (+ CTAS, LIKE), DROP TABLE, TRUNCATE TABLE, SHOW PARTITIONS, the
ALTER TABLE forms Hudi handles, and Spark data types.

Follows Spark's ``SqlBaseParser.g4`` (``createTable``, ``createTableLike``, ``createTableClauses``,
``dataType``, ``dropTable``, ``truncateTable``, ``showPartitions``, ``renameTable``,
``addTableColumns``, ``setTableProperties``, ``unsetTableProperties``, ``dropTablePartitions``).
Each ``parse_*`` function receives a :class:`Cursor` positioned at the statement's first token and
returns a statement, or None when the statement is valid Spark SQL that ``sqlext`` leaves to Spark.
"""

from __future__ import annotations

from sqlext.errors import SqlParseError, UnsupportedStatement
from sqlext.parser.cursor import QUERY_START_WORDS, Cursor
from sqlext.parser.lexer import TokenKind
from sqlext.parser.statements import (
    AddColumns,
    AlterTable,
    ColumnDef,
    CreateTable,
    DropPartitions,
    DropTable,
    PartitionSpec,
    RenameTable,
    SetProperties,
    ShowCreateTable,
    ShowPartitions,
    Statement,
    TableIdent,
    TruncateTable,
    UnsetProperties,
    quote_ident,
)

# Spark type keywords -> the name Spark's DataType.sql prints.
_SIMPLE_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "BYTE": "TINYINT",
    "SMALLINT": "SMALLINT",
    "SHORT": "SMALLINT",
    "INT": "INT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "LONG": "BIGINT",
    "FLOAT": "FLOAT",
    "REAL": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_LTZ": "TIMESTAMP",
    "TIMESTAMP_NTZ": "TIMESTAMP_NTZ",
    "STRING": "STRING",
    "BINARY": "BINARY",
    "VOID": "VOID",
    "VARIANT": "VARIANT",
}
_DECIMAL_NAMES = frozenset({"DECIMAL", "DEC", "NUMERIC"})
_CHAR_NAMES = {"CHAR": "CHAR", "CHARACTER": "CHAR", "VARCHAR": "VARCHAR"}
_INTERVAL_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
# CREATE TABLE clauses Hudi tables do not take.
_UNSUPPORTED_CLAUSES = {
    "CLUSTERED": "CLUSTERED BY (bucketing)",
    "SKEWED": "SKEWED BY",
    "ROW": "ROW FORMAT",
    "STORED": "STORED AS",
    "CLUSTER": "CLUSTER BY",
}


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


class _TypeParser:
    """Spark ``dataType`` rule; renders the canonical type text (Spark's ``DataType.sql``)."""

    def __init__(self, cur: Cursor) -> None:
        self.cur = cur
        self.pending_gt = 0  # '>' still owed from a consumed '>>' / '>>>' token

    def parse(self) -> str:
        text = self._type()
        if self.pending_gt:
            raise self.cur.error("Unexpected '>' in data type", self.cur.tokens[self.cur.pos - 1])
        return text

    def _open_angle(self) -> None:
        self.cur.expect_op("<")

    def _close_angle(self) -> None:
        if self.pending_gt:
            self.pending_gt -= 1
            return
        tok = self.cur.peek()
        if tok is not None and tok.is_op(">", ">>", ">>>"):
            self.cur.pos += 1
            self.pending_gt = len(tok.text) - 1
            return
        raise self.cur.expected("'>'")

    def _at_close(self) -> bool:
        return self.pending_gt > 0 or self.cur.at_op(">", ">>", ">>>")

    def _type(self) -> str:
        cur = self.cur
        tok = cur.peek()
        if tok is None or tok.kind is not TokenKind.WORD:
            raise cur.expected("a data type")
        name = tok.upper
        cur.pos += 1
        if name == "ARRAY":
            self._open_angle()
            elem = self._type()
            self._close_angle()
            return f"ARRAY<{elem}>"
        if name == "MAP":
            self._open_angle()
            key = self._type()
            cur.expect_op(",")
            value = self._type()
            self._close_angle()
            return f"MAP<{key}, {value}>"
        if name == "STRUCT":
            if cur.accept_op("<>"):
                return "STRUCT<>"
            self._open_angle()
            fields: list[str] = []
            if not self._at_close():
                while True:
                    fields.append(self._struct_field())
                    # A '>>' that closed a nested type also closed this struct: no more fields.
                    if self.pending_gt or not cur.accept_op(","):
                        break
            self._close_angle()
            return "STRUCT<" + ", ".join(fields) + ">"
        if name == "INTERVAL":
            return self._interval()
        if name in _DECIMAL_NAMES:
            params = self._params(tok.text, max_count=2)
            precision = params[0] if params else 10
            scale = params[1] if len(params) > 1 else 0
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise cur.error(
                    f"Invalid DECIMAL({precision},{scale}): precision must be 1..38 and scale 0..precision",
                    tok,
                )
            return f"DECIMAL({precision},{scale})"
        if name in _CHAR_NAMES:
            params = self._params(tok.text, max_count=1)
            if not params:
                raise cur.error(f"Data type {tok.text} needs a length, e.g. {_CHAR_NAMES[name]}(10)", tok)
            return f"{_CHAR_NAMES[name]}({params[0]})"
        if name in _SIMPLE_TYPES:
            if name == "STRING" and cur.accept_word("COLLATE"):
                return f"STRING COLLATE {cur.identifier('a collation name')}"
            return _SIMPLE_TYPES[name]
        raise cur.error(f'Unsupported data type "{tok.text}"', tok)

    def _params(self, type_name: str, max_count: int) -> list[int]:
        cur = self.cur
        if not cur.at_op("("):
            return []
        open_tok = cur.advance()
        params = [cur.integer(f"an integer parameter of {type_name}")]
        while cur.accept_op(","):
            params.append(cur.integer(f"an integer parameter of {type_name}"))
        cur.expect_op(")")
        if len(params) > max_count:
            raise cur.error(f"{type_name} takes at most {max_count} parameter(s)", open_tok)
        return params

    def _interval(self) -> str:
        cur = self.cur
        start = cur.expect_word(*_INTERVAL_UNITS).upper
        if cur.accept_word("TO"):
            end = cur.expect_word(*_INTERVAL_UNITS).upper
            return f"INTERVAL {start} TO {end}"
        return f"INTERVAL {start}"

    def _struct_field(self) -> str:
        cur = self.cur
        name = cur.identifier("a struct field name")
        cur.accept_op(":")
        text = f"{quote_ident(name)}: {self._type()}"
        if cur.accept_words("NOT", "NULL"):
            text += " NOT NULL"
        if cur.accept_word("COMMENT"):
            text += f" COMMENT '{_escape(cur.string('a comment string'))}'"
        return text


def parse_data_type(cur: Cursor) -> str:
    """A Spark data type at the cursor, rendered as Spark's ``DataType.sql`` does (``LONG`` ->
    ``BIGINT``, ``DECIMAL`` -> ``DECIMAL(10,0)``, ``STRUCT<a: INT, b: ARRAY<STRING>>``).

    Raises:
        SqlParseError: malformed or unknown type.
    """
    return _TypeParser(cur).parse()


def _column_def(cur: Cursor, *, multipart: bool = False, with_position: bool = False) -> ColumnDef:
    """``name type [NOT NULL] [DEFAULT expr] [COMMENT c] [FIRST | AFTER col]`` in any option order."""
    name = ".".join(cur.multipart("a column name")) if multipart else cur.identifier("a column name")
    type_sql = parse_data_type(cur)
    comment: str | None = None
    nullable = True
    default_sql: str | None = None
    position: str | None = None
    while True:
        if cur.accept_words("NOT", "NULL"):
            nullable = False
        elif cur.accept_word("COMMENT"):
            comment = cur.string("a comment string")
        elif cur.accept_word("DEFAULT"):
            default_sql, _ = cur.expression(
                "the DEFAULT expression",
                stop_words={"COMMENT", "GENERATED", "FIRST", "AFTER"},
                stop_ops={","},
                stop_at=lambda c, i: (
                    c.tokens[i].is_word("NOT")
                    and i + 1 < len(c.tokens)
                    and c.tokens[i + 1].is_word("NULL")
                    and not c.tokens[i - 1].is_word("IS")
                ),
            )
        elif cur.at_word("GENERATED"):
            raise UnsupportedStatement(f"Generated column {name} is not supported")
        elif with_position and cur.accept_word("FIRST"):
            position = "FIRST"
        elif with_position and cur.accept_word("AFTER"):
            position = f"AFTER {'.'.join(cur.multipart('a column name'))}"
        else:
            break
    return ColumnDef(name, type_sql, comment, nullable, default_sql, position)


def _column_list(cur: Cursor, *, multipart: bool = False, with_position: bool = False) -> list[ColumnDef]:
    columns = [_column_def(cur, multipart=multipart, with_position=with_position)]
    while cur.accept_op(","):
        columns.append(_column_def(cur, multipart=multipart, with_position=with_position))
    return columns


def _find_provider(cur: Cursor, start: int) -> str | None:
    """Scan (without consuming) for ``USING <provider>`` at nesting depth 0 before the query of a
    CTAS; the provider upper-cased, or None."""
    depth = 0
    toks = cur.tokens
    for i in range(start, len(toks)):
        tok = toks[i]
        if tok.is_op("("):
            depth += 1
        elif tok.is_op(")"):
            depth -= 1
        elif depth == 0 and tok.is_word("AS", "SELECT", "WITH", "VALUES", "FROM"):
            return None
        elif depth == 0 and tok.is_word("USING") and i + 1 < len(toks):
            return toks[i + 1].value.upper()
    return None


def parse_create(cur: Cursor) -> Statement | None:
    """``CREATE ... TABLE``: a :class:`CreateTable` for a Hudi table (``USING hudi``, or ``LIKE``
    without ``USING``); None for any other CREATE (left to Spark).

    Raises:
        SqlParseError: malformed Hudi CREATE TABLE.
        UnsupportedStatement: CREATE OR REPLACE / REPLACE / TEMPORARY tables, bucketing, skew,
            row formats, CLUSTER BY, partition transforms or generated columns on a Hudi table.
    """
    replace = cur.accept_words("CREATE", "OR", "REPLACE") or cur.accept_word("REPLACE") is not None
    if not replace:
        cur.expect_word("CREATE")
    temporary = cur.accept_word("TEMPORARY") is not None
    external = cur.accept_word("EXTERNAL") is not None
    if not cur.accept_word("TABLE"):
        return None
    provider = _find_provider(cur, cur.pos)
    save = cur.pos
    try:
        cur.accept_words("IF", "NOT", "EXISTS")
        cur.table_ident()
        is_like = cur.at_word("LIKE")
    except SqlParseError:
        is_like = False
    cur.pos = save
    if provider != "HUDI" and not (is_like and provider is None):
        return None
    if replace or temporary:
        kind = "CREATE OR REPLACE TABLE" if replace else "CREATE TEMPORARY TABLE"
        raise UnsupportedStatement(f"{kind} is not supported for hudi tables")
    if_not_exists = cur.accept_words("IF", "NOT", "EXISTS")
    ident = cur.table_ident()
    if cur.accept_word("LIKE"):
        return _create_like(cur, ident, if_not_exists)

    columns: list[ColumnDef] = []
    if cur.at_op("(") and not (cur.peek(1) is not None and cur.peek(1).is_word(*QUERY_START_WORDS)):  # type: ignore[union-attr]
        cur.advance()
        columns = _column_list(cur)
        cur.expect_op(")")
    cur.expect_word("USING")
    cur.identifier("a provider")
    partitioned_by: list[str] = []
    location: str | None = None
    comment: str | None = None
    properties: dict[str, str] = {}
    seen: set[str] = set()
    while not cur.at_end():
        tok = cur.peek()
        assert tok is not None
        word = tok.upper if tok.kind is TokenKind.WORD else ""
        if word in ("AS",) or word in QUERY_START_WORDS or tok.is_op("("):
            break
        clause = word
        if clause in seen and clause in ("PARTITIONED", "LOCATION", "COMMENT", "OPTIONS", "TBLPROPERTIES"):
            raise cur.error(f"Found duplicate clauses: {clause}", tok)
        seen.add(clause)
        if cur.accept_words("PARTITIONED", "BY"):
            partitioned_by.extend(_partition_columns(cur, columns))
        elif cur.accept_word("LOCATION"):
            location = cur.string("a location string")
        elif cur.accept_word("COMMENT"):
            comment = cur.string("a comment string")
        elif cur.accept_word("OPTIONS", "TBLPROPERTIES"):
            for key, value in cur.property_list():
                if value is not None:
                    properties[key] = value
        elif clause in _UNSUPPORTED_CLAUSES:
            raise UnsupportedStatement(f"{_UNSUPPORTED_CLAUSES[clause]} is not supported for hudi tables")
        else:
            raise cur.expected(
                "a CREATE TABLE clause (PARTITIONED BY, LOCATION, COMMENT, OPTIONS, TBLPROPERTIES) or AS"
            )
    as_query: str | None = None
    if not cur.at_end():
        cur.accept_word("AS")
        if cur.at_end():
            raise cur.expected("a query after AS")
        first = cur.peek()
        assert first is not None
        if not (first.is_op("(") or first.is_word(*QUERY_START_WORDS)):
            raise cur.expected("a query (SELECT, WITH, VALUES, FROM, TABLE)")
        as_query = cur.raw_span(*cur.rest())
    return CreateTable(
        ident,
        columns=tuple(columns),
        if_not_exists=if_not_exists,
        provider="hudi",
        partitioned_by=tuple(partitioned_by),
        location=location,
        properties=properties,
        comment=comment,
        as_query=as_query,
        like=None,
        external=external,
    )


def _partition_columns(cur: Cursor, columns: list[ColumnDef]) -> list[str]:
    """``( col | col type | transform(args) , ... )`` of PARTITIONED BY; a typed column is appended
    to ``columns`` (Hive style)."""
    cur.expect_op("(")
    names: list[str] = []
    while True:
        tok = cur.peek()
        if cur.at_op("(", ahead=1):
            raise UnsupportedStatement(
                f"Partition transform {tok.text if tok else ''}(...) is not supported for hudi tables"
            )
        name = cur.identifier("a partition column")
        after = cur.peek()
        if after is not None and after.kind is TokenKind.WORD:
            columns.append(ColumnDef(name, parse_data_type(cur)))
            if cur.accept_word("COMMENT"):
                cur.string("a comment string")
        names.append(name)
        if cur.accept_op(")"):
            return names
        if not cur.accept_op(","):
            raise cur.expected("',' or ')' in PARTITIONED BY")


def _create_like(cur: Cursor, ident: TableIdent, if_not_exists: bool) -> CreateTable:
    source = cur.table_ident("the source table of LIKE")
    provider: str | None = None
    location: str | None = None
    properties: dict[str, str] = {}
    while not cur.at_end():
        if cur.accept_word("USING"):
            provider = cur.identifier("a provider").lower()
        elif cur.accept_word("LOCATION"):
            location = cur.string("a location string")
        elif cur.accept_word("TBLPROPERTIES"):
            for key, value in cur.property_list():
                if value is not None:
                    properties[key] = value
        elif cur.at_word("ROW", "STORED"):
            raise UnsupportedStatement(
                f"{cur.advance().upper} clause of CREATE TABLE LIKE is not supported for hudi tables"
            )
        else:
            raise cur.expected("USING, LOCATION or TBLPROPERTIES")
    return CreateTable(
        ident,
        if_not_exists=if_not_exists,
        provider=provider,
        location=location,
        properties=properties,
        like=source,
    )


def parse_drop(cur: Cursor) -> Statement | None:
    """``DROP TABLE [IF EXISTS] t [PURGE]``; None for other DROP statements."""
    cur.expect_word("DROP")
    if not cur.accept_word("TABLE"):
        return None
    if_exists = cur.accept_words("IF", "EXISTS")
    ident = cur.table_ident()
    purge = cur.accept_word("PURGE") is not None
    cur.expect_end()
    return DropTable(ident, if_exists=if_exists, purge=purge)


def parse_truncate(cur: Cursor) -> Statement:
    """``TRUNCATE TABLE t [PARTITION (...)]``."""
    cur.expect_words("TRUNCATE", "TABLE")
    ident = cur.table_ident()
    spec: PartitionSpec = cur.partition_spec() if cur.at_word("PARTITION") else ()
    cur.expect_end()
    return TruncateTable(ident, spec)


def parse_show_partitions(cur: Cursor) -> Statement:
    """``SHOW PARTITIONS t [PARTITION (...)]``."""
    cur.expect_words("SHOW", "PARTITIONS")
    ident = cur.table_ident()
    spec: PartitionSpec = cur.partition_spec() if cur.at_word("PARTITION") else ()
    cur.expect_end()
    return ShowPartitions(ident, spec)


def parse_show_create(cur: Cursor) -> Statement | None:
    """``SHOW CREATE TABLE t``; None (Spark runs it) for ``... AS SERDE``."""
    cur.expect_words("SHOW", "CREATE", "TABLE")
    ident = cur.table_ident()
    if cur.at_word("AS"):
        return None
    cur.expect_end()
    return ShowCreateTable(ident)


def parse_alter(cur: Cursor) -> AlterTable | None:
    """The ALTER TABLE forms Hudi implements; None for the others (left to Spark).

    Handled: ``RENAME TO``, ``ADD COLUMN[S]``, ``SET TBLPROPERTIES``, ``UNSET TBLPROPERTIES
    [IF EXISTS]``, ``DROP [IF EXISTS] PARTITION (...)[, ...] [PURGE]``.
    """
    cur.expect_word("ALTER")
    if not cur.accept_word("TABLE"):
        return None
    ident = cur.table_ident()
    if cur.accept_words("RENAME", "TO"):
        new_ident = cur.table_ident("the new table name")
        cur.expect_end()
        return RenameTable(ident, new_ident)
    if cur.at_word("ADD") and cur.at_word("COLUMN", "COLUMNS", ahead=1):
        cur.pos += 2
        parenthesized = cur.accept_op("(") is not None
        columns = _column_list(cur, multipart=True, with_position=True)
        if parenthesized:
            cur.expect_op(")")
        cur.expect_end()
        return AddColumns(ident, tuple(columns))
    if cur.accept_words("SET", "TBLPROPERTIES"):
        props = {k: v for k, v in cur.property_list() if v is not None}
        cur.expect_end()
        return SetProperties(ident, props)
    if cur.accept_words("UNSET", "TBLPROPERTIES"):
        if_exists = cur.accept_words("IF", "EXISTS")
        keys = tuple(k for k, _ in cur.property_list(values="forbidden"))
        cur.expect_end()
        return UnsetProperties(ident, keys, if_exists)
    if cur.at_word("DROP") and (
        cur.at_word("PARTITION", ahead=1) or cur.at_words("DROP", "IF", "EXISTS", "PARTITION")
    ):
        cur.advance()
        if_exists = cur.accept_words("IF", "EXISTS")
        specs = [cur.partition_spec()]
        while cur.accept_op(","):
            specs.append(cur.partition_spec())
        purge = cur.accept_word("PURGE") is not None
        cur.expect_end()
        return DropPartitions(ident, tuple(specs), if_exists, purge)
    return None
