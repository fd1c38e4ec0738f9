"""Hudi's own statements, which Spark's parser does not know: ``CALL`` and the compaction commands.

Grammar (Hudi ``HoodieSqlCommon.g4``)::

    CALL multipartIdentifier '(' (callArgument (',' callArgument)*)? ')'
    callArgument : identifier '=>' literal | literal
    literal      : NULL | TRUE | FALSE | [-]number | string+ | typeName string | MAP '(' literal, ... ')'
    number       : 12 | 12L | 12S | 12Y | 1.5 | 1.5D | 1.5F | 1.5BD | 1e3

    (RUN | SCHEDULE) COMPACTION ON (tableIdentifier | 'path') (AT instant)?
    SHOW COMPACTION ON (tableIdentifier | 'path') (LIMIT n)?
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlext.parser.cursor import Cursor
from sqlext.parser.lexer import TokenKind
from sqlext.parser.statements import Call, CallArg, Compaction, CompactionKind, TableIdent


def parse_call(cur: Cursor) -> Call:
    """``CALL [catalog.][system.]name(args)``; ``name`` is the last part of the written name.

    Raises:
        SqlParseError: malformed call, a non-literal argument, named and positional arguments
            mixed, or an argument named twice.
    """
    cur.expect_word("CALL")
    parts = cur.multipart("a procedure name")
    cur.expect_op("(")
    args: list[CallArg] = []
    names: set[str] = set()
    if not cur.accept_op(")"):
        while True:
            tok = cur.peek()
            name: str | None = None
            if cur.at_op("=>", ahead=1):
                name = cur.identifier("an argument name")
                cur.advance()
                if name.lower() in names:
                    raise cur.error(f"Argument {name} is given more than once", tok)
                names.add(name.lower())
            if args and (name is None) != (args[0].name is None):
                raise cur.error("Named and positional arguments cannot be mixed", tok)
            args.append(CallArg(name, _literal(cur)))
            if cur.accept_op(")"):
                break
            if not cur.accept_op(","):
                raise cur.expected("',' or ')' in the argument list")
    cur.expect_end()
    return Call(parts[-1], tuple(args))


def _number(text: str) -> Any:
    upper = text.upper()
    if upper.endswith("BD"):
        return Decimal(text[:-2])
    suffix = upper[-1]
    body = text[:-1] if suffix in "LSYDF" else text
    if suffix in "LSY":
        return int(body)
    if suffix in "DF" or "E" in upper:
        return float(body)
    if "." in body:
        return Decimal(body)
    return int(body)


def _literal(cur: Cursor) -> Any:
    """A CALL literal at the cursor, as a Python value (see :class:`CallArg`)."""
    tok = cur.peek()
    if tok is None:
        raise cur.expected("an argument value")
    if tok.kind is TokenKind.STRING:
        return cur.string()
    if tok.kind is TokenKind.NUMBER:
        cur.advance()
        return _number(tok.text)
    if tok.is_op("-", "+") and cur.peek(1) is not None and cur.peek(1).kind is TokenKind.NUMBER:  # type: ignore[union-attr]
        cur.advance()
        value = _number(cur.advance().text)
        return -value if tok.text == "-" else value
    if tok.is_word("NULL"):
        cur.advance()
        return None
    if tok.is_word("TRUE", "FALSE"):
        cur.advance()
        return tok.upper == "TRUE"
    if tok.is_word("MAP") and cur.at_op("(", ahead=1):
        cur.pos += 2
        items: list[Any] = []
        if not cur.accept_op(")"):
            while True:
                items.append(_literal(cur))
                if cur.accept_op(")"):
                    break
                if not cur.accept_op(","):
                    raise cur.expected("',' or ')' in map(...)")
        if len(items) % 2:
            raise cur.error("map(...) needs an even number of arguments (key, value, ...)", tok)
        return {_map_text(k): _map_text(v) for k, v in zip(items[::2], items[1::2], strict=True)}
    if tok.kind is TokenKind.WORD and cur.peek(1) is not None and cur.peek(1).kind is TokenKind.STRING:  # type: ignore[union-attr]
        cur.advance()  # typed literal such as TIMESTAMP '2021-01-01 00:00:00': its string
        return cur.string()
    raise cur.error(f"Expected a literal argument value but found '{tok.text}'", tok)


def _map_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_compaction(cur: Cursor) -> Compaction:
    """``RUN|SCHEDULE COMPACTION ON t|'path' [AT instant]`` or ``SHOW COMPACTION ON t|'path'
    [LIMIT n]``.

    Raises:
        SqlParseError: malformed statement.
    """
    kind = CompactionKind(cur.expect_word("RUN", "SCHEDULE", "SHOW").upper)
    cur.expect_words("COMPACTION", "ON")
    table: TableIdent | None = None
    path: str | None = None
    tok = cur.peek()
    if tok is not None and tok.kind is TokenKind.STRING:
        path = cur.string()
    else:
        table = cur.table_ident("a table name or a 'path'")
    instant: str | None = None
    limit: int | None = None
    if kind is not CompactionKind.SHOW and cur.accept_word("AT"):
        at = cur.peek()
        if at is not None and at.kind is TokenKind.STRING:
            instant = cur.string()
        else:
            instant = str(cur.integer("an instant time"))
    elif kind is CompactionKind.SHOW and cur.accept_word("LIMIT"):
        limit = cur.integer("a row limit")
    cur.expect_end()
    return Compaction(kind, table=table, path=path, instant=instant, limit=limit)
