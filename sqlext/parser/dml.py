"""DML grammar: INSERT INTO/OVERWRITE, MERGE INTO, UPDATE, DELETE FROM.

Follows Spark's ``SqlBaseParser.g4`` (``insertInto``, ``mergeIntoTable``, ``updateTable``,
``deleteFromTable``). Expressions are delimited by the cursor and syntax-checked with sqlglot; the
embedded queries (INSERT's query, MERGE's source query) are kept verbatim and left to Spark.
"""

from __future__ import annotations

from sqlglot import exp

from sqlext.errors import UnsupportedStatement
from sqlext.parser.cursor import QUERY_START_WORDS, Cursor
from sqlext.parser.statements import (
    Assignment,
    DeleteFrom,
    InsertInto,
    MergeClause,
    MergeInto,
    PartitionSpec,
    Statement,
    TableIdent,
    UpdateTable,
    WhenMatchedDelete,
    WhenMatchedUpdate,
    WhenNotMatchedInsert,
)

# Words that end a table reference instead of being its alias.
ALIAS_RESERVED = frozenset(
    {
        "USING",
        "ON",
        "WHEN",
        "SET",
        "WHERE",
        "PARTITION",
        "VALUES",
        "SELECT",
        "TABLESAMPLE",
        "JOIN",
        "INNER",
        "LEFT",
        "RIGHT",
        "FULL",
        "CROSS",
        "NATURAL",
        "UNION",
        "EXCEPT",
        "INTERSECT",
        "MINUS",
        "ANTI",
        "SEMI",
        "LATERAL",
        "WITH",
        "BY",
        "INSERT",
        "UPDATE",
        "DELETE",
        "MATCHED",
        "NOT",
        "THEN",
        "AND",
        "OR",
        "FROM",
        "TIMESTAMP",
        "VERSION",
        "FOR",
    }
)


def _qualifiers(table: TableIdent, alias: str | None) -> list[list[str]]:
    """Name prefixes that designate ``table`` in column references (lower-case parts)."""
    if alias is not None:
        return [[alias.lower()]]
    quals = [[table.name.lower()]]
    if table.db is not None:
        quals.append([table.db.lower(), table.name.lower()])
        if table.catalog is not None:
            quals.append([table.catalog.lower(), table.db.lower(), table.name.lower()])
    return quals


def _strip_qualifier(parts: list[str], qualifiers: list[list[str]]) -> list[str]:
    """``parts`` of a column reference without a leading qualifier of the table (longest first)."""
    lowered = [p.lower() for p in parts]
    for qual in sorted(qualifiers, key=len, reverse=True):
        if len(lowered) > len(qual) and lowered[: len(qual)] == qual:
            return parts[len(qual) :]
    return parts


def _query_position(cur: Cursor) -> tuple[int, int]:
    """1-based (line, column) of the current token relative to the statement's first token."""
    tok = cur.peek()
    first = cur.tokens[0]
    if tok is None:
        return 1, 1
    line0, col0 = first.line, first.column
    if tok.line == line0:
        return 1, tok.column - col0 + 1
    return tok.line - line0 + 1, tok.column


def _expect_query(cur: Cursor) -> None:
    first = cur.peek()
    if first is None or not (first.is_op("(") or first.is_word(*QUERY_START_WORDS)):
        raise cur.expected("a query (SELECT, VALUES, WITH, FROM or TABLE)")


def parse_insert(cur: Cursor, ctes: str | None = None) -> Statement | None:
    """``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] [IF NOT EXISTS] [(cols) | BY NAME] query``.

    Args:
        ctes: text of a ``WITH ...`` clause written before INSERT; prepended to the query.

    Returns:
        :class:`InsertInto`, or None for ``INSERT OVERWRITE [LOCAL] DIRECTORY`` and
        ``INSERT INTO t REPLACE WHERE`` (left to Spark).
    """
    cur.expect_word("INSERT")
    overwrite = cur.accept_word("OVERWRITE") is not None
    if overwrite and (cur.at_word("DIRECTORY") or cur.at_words("LOCAL", "DIRECTORY")):
        return None
    if not overwrite:
        cur.expect_word("INTO")
    cur.accept_word("TABLE")
    table = cur.table_ident()
    if cur.at_word("REPLACE"):
        return None
    spec: PartitionSpec = cur.partition_spec() if cur.at_word("PARTITION") else ()
    if_not_exists = cur.accept_words("IF", "NOT", "EXISTS")
    by_name = cur.accept_words("BY", "NAME")
    columns: tuple[str, ...] | None = None
    nxt = cur.peek(1)
    if (
        not by_name
        and cur.at_op("(")
        and not (nxt is not None and (nxt.is_word(*QUERY_START_WORDS) or nxt.is_op("(")))
    ):
        cur.advance()
        names = [_column_name(cur, table, None)]
        while cur.accept_op(","):
            names.append(_column_name(cur, table, None))
        cur.expect_op(")")
        columns = tuple(names)
    _expect_query(cur)
    query_line, query_column = _query_position(cur)
    query_sql = cur.raw_span(*cur.rest())
    if ctes:
        query_sql = f"{ctes} {query_sql}"
    return InsertInto(
        table,
        overwrite,
        spec,
        columns,
        query_sql,
        if_not_exists=if_not_exists,
        by_name=by_name,
        query_line=query_line,
        query_column=query_column,
    )


def _column_name(cur: Cursor, table: TableIdent, alias: str | None) -> str:
    """A (possibly qualified) target column reference, returned without the table qualifier."""
    parts = _strip_qualifier(cur.multipart("a column name"), _qualifiers(table, alias))
    return ".".join(parts)


def _assignments(cur: Cursor, table: TableIdent, alias: str | None, stop_word: str) -> tuple[Assignment, ...]:
    """``col = expr, ...`` up to ``stop_word`` at depth 0 (or the end)."""
    result: list[Assignment] = []
    while True:
        column = _column_name(cur, table, alias)
        cur.expect_op("=")
        text, _ = cur.expression(f"the value assigned to {column}", stop_words={stop_word}, stop_ops={","})
        result.append((column, text))
        if not cur.accept_op(","):
            return tuple(result)


def _condition(cur: Cursor, what: str, stop_word: str) -> str:
    text, _ = cur.expression(what, stop_words={stop_word})
    return text


def parse_update(cur: Cursor) -> Statement:
    """``UPDATE t [[AS] alias] SET col = expr, ... [WHERE cond]``."""
    cur.expect_word("UPDATE")
    table = cur.table_ident()
    alias = cur.alias(ALIAS_RESERVED)
    cur.expect_word("SET")
    assignments = _assignments(cur, table, alias, "WHERE")
    where_sql = _condition(cur, "the WHERE condition", "") if cur.accept_word("WHERE") else None
    cur.expect_end()
    return UpdateTable(table, alias, assignments, where_sql)


def parse_delete(cur: Cursor) -> Statement:
    """``DELETE FROM t [[AS] alias] [WHERE cond]``."""
    cur.expect_words("DELETE", "FROM")
    table = cur.table_ident()
    alias = cur.alias(ALIAS_RESERVED)
    where_sql = _condition(cur, "the WHERE condition", "") if cur.accept_word("WHERE") else None
    cur.expect_end()
    return DeleteFrom(table, alias, where_sql)


def parse_merge(cur: Cursor) -> Statement:
    """``MERGE INTO target [[AS] t] USING (table | (query)) [[AS] s] ON cond WHEN ...``.

    Raises:
        SqlParseError: malformed statement; matched clauses after not-matched ones; a clause
            without condition that is not the last of its kind; INSERT column/value count mismatch.
        UnsupportedStatement: ``WHEN NOT MATCHED BY SOURCE``, ``MERGE WITH SCHEMA EVOLUTION``.
    """
    cur.expect_word("MERGE")
    if cur.accept_words("WITH", "SCHEMA", "EVOLUTION"):
        raise UnsupportedStatement("MERGE WITH SCHEMA EVOLUTION is not supported")
    cur.expect_word("INTO")
    target = cur.table_ident("the target table")
    target_alias = cur.alias(ALIAS_RESERVED)
    cur.expect_word("USING")
    source_table: TableIdent | None = None
    if cur.at_op("("):
        open_index = cur.pos
        cur.advance()
        _expect_query(cur)
        _, end = cur.scan()
        cur.pos = end
        cur.expect_op(")")
        source_sql = cur.raw_span(open_index, cur.pos)
    else:
        source_table = cur.table_ident("the source table or a parenthesized query")
        source_sql = source_table.sql
    source_alias = cur.alias(ALIAS_RESERVED)
    cur.expect_word("ON")
    on_sql, on_ast = cur.expression("the ON condition", stop_words={"WHEN"})
    source_quals = (
        _qualifiers(source_table, source_alias)
        if source_table
        else ([[source_alias.lower()]] if source_alias else [])
    )
    equalities, other = _split_on(on_ast, _qualifiers(target, target_alias), source_quals)

    clauses: list[MergeClause] = []
    seen_not_matched = False
    unconditioned: dict[str, bool] = {}
    while True:
        when_tok = cur.peek()
        if not cur.accept_word("WHEN"):
            break
        if cur.accept_word("MATCHED"):
            if seen_not_matched:
                raise cur.error("WHEN MATCHED clauses must come before WHEN NOT MATCHED clauses", when_tok)
            kind = "MATCHED"
        elif cur.accept_word("NOT"):
            cur.expect_word("MATCHED")
            if cur.accept_word("BY"):
                if cur.at_word("SOURCE"):
                    raise UnsupportedStatement(
                        "WHEN NOT MATCHED BY SOURCE is not supported: Hudi MERGE INTO handles only "
                        "WHEN MATCHED and WHEN NOT MATCHED [BY TARGET] clauses"
                    )
                cur.expect_word("TARGET")
            seen_not_matched = True
            kind = "NOT MATCHED"
        else:
            raise cur.expected("MATCHED or NOT MATCHED")
        if unconditioned.get(kind):
            raise cur.error(f"Only the last WHEN {kind} clause can omit the condition", when_tok)
        condition = _condition(cur, f"the WHEN {kind} condition", "THEN") if cur.accept_word("AND") else None
        unconditioned[kind] = condition is None
        cur.expect_word("THEN")
        if kind == "MATCHED":
            clauses.append(_matched_action(cur, target, target_alias, condition))
        else:
            clauses.append(_not_matched_action(cur, target, target_alias, condition))
    if not clauses:
        raise cur.expected("a WHEN MATCHED or WHEN NOT MATCHED clause")
    cur.expect_end()
    return MergeInto(
        target,
        target_alias,
        source_sql,
        source_alias,
        on_sql,
        tuple(equalities),
        tuple(other),
        tuple(clauses),
        source_table=source_table,
    )


def _matched_action(cur: Cursor, target: TableIdent, alias: str | None, condition: str | None) -> MergeClause:
    if cur.accept_word("DELETE"):
        return WhenMatchedDelete(condition)
    if cur.accept_word("UPDATE"):
        cur.expect_word("SET")
        if cur.accept_op("*"):
            return WhenMatchedUpdate(condition, None)
        return WhenMatchedUpdate(condition, _assignments(cur, target, alias, "WHEN"))
    raise cur.expected("UPDATE or DELETE")


def _not_matched_action(
    cur: Cursor, target: TableIdent, alias: str | None, condition: str | None
) -> MergeClause:
    cur.expect_word("INSERT")
    if cur.accept_op("*"):
        return WhenNotMatchedInsert(condition, None, None)
    open_tok = cur.expect_op("(")
    columns = [_column_name(cur, target, alias)]
    while cur.accept_op(","):
        columns.append(_column_name(cur, target, alias))
    cur.expect_op(")")
    cur.expect_word("VALUES")
    cur.expect_op("(")
    values: list[str] = []
    while True:
        text, _ = cur.expression("an INSERT value", stop_ops={","})
        values.append(text)
        if cur.accept_op(")"):
            break
        cur.expect_op(",")
    if len(values) != len(columns):
        raise cur.error(f"INSERT clause has {len(columns)} column(s) but {len(values)} value(s)", open_tok)
    return WhenNotMatchedInsert(condition, tuple(columns), tuple(values))


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _column_parts(node: exp.Expr) -> list[str] | None:
    """Name parts of a plain column reference (``s.id`` -> ``["s", "id"]``), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return [part.name for part in node.parts]
    return None


def _split_on(
    on_ast: exp.Expr, target_quals: list[list[str]], source_quals: list[list[str]]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Split ON into ``(target_col, source_expr_sql)`` equalities and the other conjuncts.

    A side is a target column when it is a column qualified by the target (alias, or name when
    there is no alias); an unqualified column counts as the target side when the other side is
    not itself a target column (left side first when both are unqualified).
    """
    equalities: list[tuple[str, str]] = []
    other: list[str] = []

    def role(parts: list[str] | None) -> str:
        if parts is None:
            return "expr"
        if len(parts) == 1:
            return "bare"
        if _strip_qualifier(parts, target_quals) != parts:
            return "target"
        if _strip_qualifier(parts, source_quals) != parts:
            return "source"
        return "other"

    for node in _conjuncts(on_ast):
        if isinstance(node, exp.EQ):
            left, right = node.left, node.right
            lparts, rparts = _column_parts(left), _column_parts(right)
            lrole, rrole = role(lparts), role(rparts)
            pick: tuple[list[str], exp.Expr] | None = None
            if lrole == "target" and lparts is not None:
                pick = (_strip_qualifier(lparts, target_quals), right)
            elif rrole == "target" and rparts is not None:
                pick = (_strip_qualifier(rparts, target_quals), left)
            elif lrole == "bare" and lparts is not None:
                pick = (lparts, right)
            elif rrole == "bare" and rparts is not None:
                pick = (rparts, left)
            if pick is not None:
                equalities.append((".".join(pick[0]), pick[1].sql(dialect="spark")))
                continue
        other.append(node.sql(dialect="spark"))
    return equalities, other
