"""``parse_statement``: one SQL statement -> a statement object of :mod:`sqlext.parser.statements`.

The statement is tokenized and parsed once by :class:`~sqlext.parser.dialect.HudiSpark` (sqlglot's Spark dialect
with Hudi's statements); the builders turn the tree into a statement that keeps the tree (``Statement.tree``).
Statements sqlext does not handle are a :class:`Passthrough` Spark runs unchanged, so any valid Spark SQL still
works, including what sqlglot cannot parse. Statements sqlext handles are parsed strictly: a malformed one raises
:class:`SqlParseError` with line and column.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sqlext.errors import SqlParseError, UnsupportedStatement
from sqlext.parser import build_call, build_ddl, build_dml
from sqlext.parser.dialect import HudiCall, HudiCompaction, HudiSpark, PositionedParseError
from sqlext.parser.dialect import ShowCreateTable as ShowCreateNode
from sqlext.parser.dialect import ShowPartitions as ShowPartitionsNode
from sqlext.parser.source import Source, error_at
from sqlext.parser.statements import Passthrough, Statement, TableIdent

logger = logging.getLogger(__name__)

DIALECT = HudiSpark()

_BUILDERS: dict[type, Callable[[Source, Any], Statement | None]] = {
    exp.Create: build_ddl.build_create,
    exp.Drop: build_ddl.build_drop,
    exp.TruncateTable: build_ddl.build_truncate,
    exp.Alter: build_ddl.build_alter,
    ShowPartitionsNode: build_ddl.build_show,
    ShowCreateNode: build_ddl.build_show,
    exp.Insert: build_dml.build_insert,
    exp.Merge: build_dml.build_merge,
    exp.Update: build_dml.build_update,
    exp.Delete: build_dml.build_delete,
    HudiCall: build_call.build_call,
    HudiCompaction: lambda src, tree: build_call.build_compaction(tree),
}


def tokenize(text: str) -> list[Token]:
    """sqlglot tokens of ``text`` with the Spark dialect's lexical rules.

    Raises:
        SqlParseError: an unterminated string literal, quoted identifier or comment (at its opening character).
    """
    tokenizer = DIALECT.tokenizer_class()
    try:
        return tokenizer.tokenize(text)
    except TokenError:
        core = getattr(tokenizer, "_core", None)
        start = getattr(core, "_start", len(text))
        opening = text[start: start + 2]
        what = ("Unclosed bracketed comment" if opening.startswith("/*")
                else "Unclosed quoted identifier" if opening.startswith("`") else "Unclosed string literal")
        raise error_at(text, start, what) from None


def parse_statement(text: str) -> Statement:
    """Parse one statement.

    ``text`` may have comments and blanks around it and trailing semicolons. Line and column numbers of errors
    count in ``text`` as given (use :meth:`SqlParseError.shifted` to make them relative to a script, see
    :func:`sqlext.parser.split_statements`).

    Returns:
        A :class:`CreateTable`, :class:`InsertInto`, :class:`MergeInto`, :class:`UpdateTable`, :class:`DeleteFrom`,
        :class:`DropTable`, :class:`TruncateTable`, :class:`ShowPartitions`, :class:`ShowCreateTable`,
        :class:`AlterTable` subclass, :class:`Call` or :class:`Compaction`; a :class:`Passthrough` for anything
        else. Every statement's ``sql`` is ``text`` without surrounding comments, blanks and semicolons, and its
        ``tree`` the parsed tree.

    Raises:
        SqlParseError: empty text, several statements, or a malformed statement of a handled kind (unterminated
            literals anywhere). Its ``target`` is the table the statement names when that could be read, so a
            caller can hand a statement on a non-Hudi table to Spark as it is.
        UnsupportedStatement: a handled kind using a construct Hudi tables do not support (e.g. ``CREATE OR
            REPLACE TABLE ... USING hudi``).
    """
    tokens = tokenize(text)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        raise error_at(text, 0, "Syntax error, unexpected empty statement")
    sql = text[tokens[0].start: tokens[-1].end + 1]
    lead = tokens[0].text.upper()
    if lead != "BEGIN":
        for tok in tokens:
            if tok.token_type == TokenType.SEMICOLON:
                raise error_at(text, tok.start, "Only one statement can be run at a time; split the script first")
    src = Source(text, tokens)
    strict = _strict(src)
    if strict is None:
        logger.debug("passing statement to Spark: %.80s", sql)
        return Passthrough(sql)
    try:
        trees = DIALECT.parser_class(dialect=DIALECT).parse(tokens, text)
    except ParseError as exc:
        if not strict:
            return Passthrough(sql)
        offset = exc.offset if isinstance(exc, PositionedParseError) else src.end
        message = exc.description if isinstance(exc, PositionedParseError) else str(exc).split(".")[0]
        error = error_at(text, offset, message)
        error.target = _target(src)
        raise error from None
    tree = trees[0] if trees else None
    builder = _BUILDERS.get(type(tree)) if tree is not None else None
    if tree is None or builder is None:
        if isinstance(tree, exp.Command) and strict and lead == "CREATE":
            raise UnsupportedStatement(f"This form of CREATE TABLE is not supported for hudi tables: {sql}")
        return Passthrough(sql)
    if isinstance(tree, (exp.Merge, exp.Update, exp.Delete)):
        build_dml.refuse_with_clause(tree)
    try:
        statement = builder(src, tree)
    except SqlParseError as exc:
        exc.target = _target(src)
        raise
    if statement is None:
        return Passthrough(sql)
    object.__setattr__(statement, "sql", sql)
    object.__setattr__(statement, "tree", tree)
    return statement


def _words(src: Source, count: int) -> list[str]:
    return [t.text.upper() for t in src.tokens[:count]]


def _strict(src: Source) -> bool | None:
    """Whether the statement is one sqlext handles: True (a malformed one is an error), False (parse it, but a
    statement sqlglot cannot parse goes to Spark: CREATE of another provider, WITH ..., ALTER forms), None (Spark's:
    do not parse)."""
    words = _words(src, 3)
    lead = words[0]
    if lead == "MERGE" and words[1:3] == ["WITH", "SCHEMA"]:
        raise UnsupportedStatement("MERGE WITH SCHEMA EVOLUTION is not supported")
    if lead == "INSERT" and "DIRECTORY" in _words(src, 4):
        return None
    if lead in ("INSERT", "MERGE", "UPDATE", "DELETE", "CALL", "TRUNCATE"):
        return True
    if lead in ("RUN", "SCHEDULE") and words[1:2] in (["COMPACTION"], ["CLUSTERING"]):
        return True
    if lead == "SHOW" and words[1:2] in (["COMPACTION"], ["CLUSTERING"], ["PARTITIONS"]):
        return True
    if lead == "SHOW" and words[1:3] == ["CREATE", "TABLE"]:
        return True
    if lead == "DROP" and words[1:2] == ["TABLE"]:
        return True
    if lead == "ALTER" and words[1:2] == ["TABLE"]:
        return True
    if lead in ("CREATE", "REPLACE"):
        return _hudi_provider(src) or _is_like(src)
    if lead == "WITH":
        return False
    return None


def _hudi_provider(src: Source) -> bool:
    """``USING hudi`` at depth 0 before a CTAS query."""
    for i, tok in src.depth0():
        if tok.token_type == TokenType.ALIAS or (i > 2 and src.is_query_start(i)):
            return False
        if tok.text.upper() == "USING" and i + 1 < len(src.tokens):
            return src.tokens[i + 1].text.upper() == "HUDI"
    return False


def _is_like(src: Source) -> bool:
    """``CREATE TABLE [IF NOT EXISTS] name LIKE ...`` without a USING clause of another provider."""
    words = [t.text.upper() for _, t in src.depth0()]
    return "TABLE" in words and "LIKE" in words and "USING" not in words


def _target(src: Source) -> TableIdent | None:
    """The table a statement of a handled kind names, read from its first tokens, or None."""
    toks = src.tokens
    skip = {"INSERT", "INTO", "OVERWRITE", "TABLE", "MERGE", "UPDATE", "DELETE", "FROM", "ALTER", "TRUNCATE",
            "DROP", "IF", "EXISTS", "SHOW", "PARTITIONS", "CREATE"}
    i = 0
    while i < len(toks) and toks[i].text.upper() in skip and toks[i].token_type not in (
            TokenType.IDENTIFIER, TokenType.STRING):
        i += 1
    parts: list[str] = []
    while i < len(toks) and toks[i].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
        parts.append(toks[i].text)
        if i + 1 < len(toks) and toks[i + 1].token_type == TokenType.DOT:
            i += 2
            continue
        break
    if not parts or len(parts) > 3:
        return None
    return TableIdent(parts[-2] if len(parts) > 1 else None, parts[-1], parts[-3] if len(parts) > 2 else None)
