"""``parse_statement``: one SQL statement -> a statement object of :mod:`sqlext.parser.statements`.

The statement's leading words choose the grammar (DDL in :mod:`.ddl`, DML in :mod:`.dml`, CALL and
compaction in :mod:`.call`); everything else is a :class:`Passthrough` that Spark runs unchanged,
so any valid Spark SQL still works. Statements we handle are parsed strictly: a malformed one
raises :class:`SqlParseError` with line and column.
"""

from __future__ import annotations

import logging

from sqlext.errors import UnsupportedStatement
from sqlext.parser.call import parse_call, parse_compaction
from sqlext.parser.cursor import Cursor
from sqlext.parser.ddl import (
    parse_alter,
    parse_create,
    parse_drop,
    parse_show_create,
    parse_show_partitions,
    parse_truncate,
)
from sqlext.parser.dml import parse_delete, parse_insert, parse_merge, parse_update
from sqlext.parser.lexer import Token, TokenKind, tokenize
from sqlext.parser.statements import Passthrough, Statement

logger = logging.getLogger(__name__)


def parse_statement(text: str) -> Statement:
    """Parse one statement.

    ``text`` may have comments and blanks around it and one trailing semicolon. Line and column
    numbers of errors count in ``text`` as given (use :meth:`SqlParseError.shifted` to make them
    relative to a script, see :func:`sqlext.parser.split_statements`).

    Returns:
        A :class:`CreateTable`, :class:`InsertInto`, :class:`MergeInto`, :class:`UpdateTable`,
        :class:`DeleteFrom`, :class:`DropTable`, :class:`TruncateTable`, :class:`ShowPartitions`,
        :class:`AlterTable` subclass, :class:`Call` or :class:`Compaction`; a :class:`Passthrough`
        for anything else. Every statement's ``sql`` is ``text`` without surrounding comments,
        blanks and semicolon.

    Raises:
        sqlext.errors.SqlParseError: empty text, several statements, or a malformed statement of a handled kind
            (unterminated literals anywhere).
        UnsupportedStatement: a handled kind using a construct Hudi does not support (e.g.
            ``WHEN NOT MATCHED BY SOURCE``).
    """
    tokens = tokenize(text)
    while tokens and tokens[-1].is_op(";"):
        tokens.pop()
    cur = Cursor(text, tokens)
    if not tokens:
        raise cur.error("Syntax error, unexpected empty statement", offset=0)
    sql = text[tokens[0].start : tokens[-1].end]
    if not tokens[0].is_word("BEGIN"):
        for tok in tokens:
            if tok.is_op(";"):
                raise cur.error("Only one statement can be run at a time; split the script first", tok)
    statement = _dispatch(cur)
    if statement is None:
        logger.debug("passing statement to Spark: %.80s", sql)
        return Passthrough(sql)
    object.__setattr__(statement, "sql", sql)
    return statement


def _dispatch(cur: Cursor) -> Statement | None:
    first = cur.tokens[0]
    word = first.upper if first.kind is TokenKind.WORD else ""
    if word in ("CREATE", "REPLACE"):
        return parse_create(cur)
    if word == "INSERT":
        return parse_insert(cur)
    if word == "MERGE":
        return parse_merge(cur)
    if word == "UPDATE":
        return parse_update(cur)
    if word == "DELETE":
        return parse_delete(cur)
    if word == "DROP":
        return parse_drop(cur)
    if word == "TRUNCATE":
        return parse_truncate(cur)
    if word == "ALTER":
        return parse_alter(cur)
    if word == "CALL":
        return parse_call(cur)
    if word in ("RUN", "SCHEDULE") and cur.at_word("COMPACTION", ahead=1):
        return parse_compaction(cur)
    if word == "SHOW" and cur.at_word("COMPACTION", ahead=1):
        return parse_compaction(cur)
    if word == "SHOW" and cur.at_word("PARTITIONS", ahead=1):
        return parse_show_partitions(cur)
    if word == "SHOW" and cur.at_word("CREATE", ahead=1):
        return parse_show_create(cur)
    if word == "WITH":
        return _with_statement(cur)
    return None


def _skip_ctes(tokens: list[Token]) -> int | None:
    """Index of the first token after ``WITH [RECURSIVE] name [(cols)] [AS] (query), ...``, or None
    when the WITH clause does not have that shape."""
    i = 1
    if i < len(tokens) and tokens[i].is_word("RECURSIVE"):
        i += 1
    while True:
        if i >= len(tokens) or tokens[i].kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENT):
            return None
        i += 1
        if (
            i < len(tokens)
            and tokens[i].is_op("(")
            and not (i + 1 < len(tokens) and tokens[i + 1].is_word("SELECT"))
        ):
            i = _after_parens(tokens, i)
            if i < 0:
                return None
        if i < len(tokens) and tokens[i].is_word("AS"):
            i += 1
        if i >= len(tokens) or not tokens[i].is_op("("):
            return None
        i = _after_parens(tokens, i)
        if i < 0:
            return None
        if i < len(tokens) and tokens[i].is_op(","):
            i += 1
            continue
        return i


def _after_parens(tokens: list[Token], i: int) -> int:
    """Index after the parenthesis group opening at ``tokens[i]``; -1 when unbalanced."""
    depth = 0
    for k in range(i, len(tokens)):
        if tokens[k].is_op("(", "[", "{"):
            depth += 1
        elif tokens[k].is_op(")", "]", "}"):
            depth -= 1
            if depth == 0:
                return k + 1
    return -1


def _with_statement(cur: Cursor) -> Statement | None:
    """``WITH ctes INSERT ...`` -> InsertInto with the CTEs in its query; ``WITH ... SELECT`` is left
    to Spark."""
    after = _skip_ctes(cur.tokens)
    if after is None or after >= len(cur.tokens):
        return None
    head = cur.tokens[after]
    if head.is_word("INSERT"):
        ctes = cur.raw_span(0, after)
        cur.pos = after
        return parse_insert(cur, ctes=ctes)
    if head.is_word("MERGE", "UPDATE", "DELETE"):
        raise UnsupportedStatement(f"A WITH clause before {head.upper} is not supported")
    return None
