"""A cursor over the tokens of one statement, with the grammar pieces every statement shares:
identifiers, table names, aliases, literals, ``PARTITION (...)`` specs, property lists, and
expressions (delimited here, syntax-checked with sqlglot's Spark dialect).

Errors are :class:`~sqlext.errors.SqlParseError` with the line and column (1-based) of the
offending token in the text given to :class:`Cursor`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from sqlext.errors import SqlParseError
from sqlext.parser.lexer import LineIndex, Token, TokenKind, blank_comments, lex, tokenize
from sqlext.parser.statements import PartitionSpec, TableIdent

logger = logging.getLogger(__name__)

QUERY_START_WORDS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE", "MAP", "REDUCE"})
"""Words a query can start with (besides an opening parenthesis)."""

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


class Cursor:
    """Tokens of one statement and a read position.

    Args:
        text: the statement text (leading/trailing comments allowed).
        tokens: the tokens of ``text`` when already lexed; lexed here otherwise.

    Raises:
        SqlParseError: on an unterminated string, quoted identifier or comment.
    """

    def __init__(self, text: str, tokens: list[Token] | None = None) -> None:
        self.text = text
        self.tokens = tokens if tokens is not None else tokenize(text)
        self.lines = LineIndex(text)
        self._blanked: str | None = None
        self.pos = 0

    # ------------------------------------------------------------------ navigation

    @property
    def blanked(self) -> str:
        """``text`` with comments blanked out (same offsets)."""
        if self._blanked is None:
            self._blanked = blank_comments(self.text, lex(self.text).comments)
        return self._blanked

    def peek(self, ahead: int = 0) -> Token | None:
        """The token ``ahead`` positions after the current one, or None past the end."""
        i = self.pos + ahead
        return self.tokens[i] if 0 <= i < len(self.tokens) else None

    def at_end(self) -> bool:
        """True when every token was consumed."""
        return self.pos >= len(self.tokens)

    def advance(self) -> Token:
        """Consume and return the current token.

        Raises:
            SqlParseError: at the end of the statement.
        """
        tok = self.peek()
        if tok is None:
            raise self.error("Unexpected end of statement")
        self.pos += 1
        return tok

    def at_word(self, *words: str, ahead: int = 0) -> bool:
        """True when the token ``ahead`` is one of the (upper-case) ``words``."""
        tok = self.peek(ahead)
        return tok is not None and tok.is_word(*words)

    def at_words(self, *sequence: str) -> bool:
        """True when the next tokens are the words of ``sequence``, in order."""
        return all(self.at_word(w, ahead=k) for k, w in enumerate(sequence))

    def at_op(self, *ops: str, ahead: int = 0) -> bool:
        """True when the token ``ahead`` is one of the operators ``ops``."""
        tok = self.peek(ahead)
        return tok is not None and tok.is_op(*ops)

    def accept_word(self, *words: str) -> Token | None:
        """Consume the current token if it is one of ``words``; return it (or None)."""
        if self.at_word(*words):
            return self.advance()
        return None

    def accept_words(self, *sequence: str) -> bool:
        """Consume the words of ``sequence`` if they all come next (else consume nothing)."""
        if self.at_words(*sequence):
            self.pos += len(sequence)
            return True
        return False

    def expect_word(self, *words: str) -> Token:
        """Consume one of ``words`` or fail naming them."""
        tok = self.accept_word(*words)
        if tok is None:
            raise self.expected(" or ".join(words))
        return tok

    def expect_words(self, *sequence: str) -> None:
        """Consume the words of ``sequence`` one by one, failing at the first mismatch."""
        for word in sequence:
            self.expect_word(word)

    def accept_op(self, *ops: str) -> Token | None:
        """Consume the current token if it is one of ``ops``; return it (or None)."""
        if self.at_op(*ops):
            return self.advance()
        return None

    def expect_op(self, op: str) -> Token:
        """Consume operator ``op`` or fail."""
        tok = self.accept_op(op)
        if tok is None:
            raise self.expected(f"'{op}'")
        return tok

    def expect_end(self) -> None:
        """Fail unless every token was consumed (trailing garbage)."""
        tok = self.peek()
        if tok is not None:
            raise self.error(
                f"Syntax error at or near '{tok.text}': unexpected text after the statement", tok
            )

    # ------------------------------------------------------------------ errors

    def error(self, message: str, tok: Token | None = None, offset: int | None = None) -> SqlParseError:
        """A :class:`SqlParseError` at ``tok`` (default: the current token, or the end)."""
        if offset is None:
            if tok is None:
                tok = self.peek()
            if tok is None:
                offset = self.tokens[-1].end if self.tokens else len(self.text)
            else:
                offset = tok.start
        return self.lines.error(message, offset)

    def expected(self, what: str) -> SqlParseError:
        """``Expected <what> but found '<token>'`` (or ``... but reached the end``)."""
        tok = self.peek()
        if tok is None:
            return self.error(f"Expected {what} but reached the end of the statement")
        return self.error(f"Expected {what} but found '{tok.text}'", tok)

    # ------------------------------------------------------------------ names

    def identifier(self, what: str = "an identifier") -> str:
        """An identifier (bare word or backquoted), unquoted."""
        tok = self.peek()
        if tok is None or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENT):
            raise self.expected(what)
        self.pos += 1
        return tok.value

    def multipart(self, what: str = "a name") -> list[str]:
        """``ident (. ident)*`` as its parts."""
        parts = [self.identifier(what)]
        while self.at_op(".") and self._name_at(1):
            self.pos += 1
            parts.append(self.identifier(what))
        return parts

    def _name_at(self, ahead: int) -> bool:
        tok = self.peek(ahead)
        return tok is not None and tok.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENT)

    def table_ident(self, what: str = "a table name") -> TableIdent:
        """A table name: ``t``, ``db.t``, ``catalog.db.t`` or ``IDENTIFIER('db.t')``."""
        start = self.peek()
        if self.at_word("IDENTIFIER") and self.at_op("(", ahead=1):
            self.pos += 2
            string_tok = self.peek()
            name = self.string("a string with the table name")
            self.expect_op(")")
            parts = _split_dotted(name)
            if parts is None:
                raise self.error(f"Invalid table name '{name}'", string_tok)
        else:
            parts = self.multipart(what)
        if len(parts) > 3:
            raise self.error(f"Table name {'.'.join(parts)} has more than three parts", start)
        if len(parts) == 3:
            return TableIdent(parts[1], parts[2], catalog=parts[0])
        if len(parts) == 2:
            return TableIdent(parts[0], parts[1])
        return TableIdent(None, parts[0])

    def alias(self, reserved: Collection[str]) -> str | None:
        """An optional ``[AS] alias``; a bare word in ``reserved`` (upper-case) is not an alias."""
        if self.accept_word("AS"):
            return self.identifier("an alias")
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind is TokenKind.QUOTED_IDENT or (tok.kind is TokenKind.WORD and tok.upper not in reserved):
            self.pos += 1
            return tok.value
        return None

    # ------------------------------------------------------------------ literals

    def string(self, what: str = "a string literal") -> str:
        """One string literal or several adjacent ones (concatenated, as Spark does)."""
        tok = self.peek()
        if tok is None or tok.kind is not TokenKind.STRING:
            raise self.expected(what)
        parts = []
        while self.peek() is not None and self.peek().kind is TokenKind.STRING:  # type: ignore[union-attr]
            parts.append(self.advance().value)
        return "".join(parts)

    def integer(self, what: str = "an integer") -> int:
        """An unsigned integer literal without suffix."""
        tok = self.peek()
        if tok is None or tok.kind is not TokenKind.NUMBER or not tok.text.isdigit():
            raise self.expected(what)
        self.pos += 1
        return int(tok.text)

    # ------------------------------------------------------------------ spans and expressions

    def span_text(self, start: int, end: int) -> str:
        """Text of tokens ``[start, end)`` with comments dropped and whitespace collapsed: tokens
        that touch stay together, tokens separated by blanks or comments get one blank."""
        out: list[str] = []
        prev: Token | None = None
        for tok in self.tokens[start:end]:
            if prev is not None and tok.start > prev.end:
                out.append(" ")
            out.append(self.text[tok.start : tok.end])
            prev = tok
        return "".join(out)

    def raw_span(self, start: int, end: int) -> str:
        """Source text of tokens ``[start, end)`` exactly as written (comments included)."""
        if start >= end:
            return ""
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]

    def scan(
        self,
        stop_words: Collection[str] = (),
        stop_ops: Collection[str] = (),
        stop_at: Callable[[Cursor, int], bool] | None = None,
    ) -> tuple[int, int]:
        """Find the extent of an expression from the current token, without consuming it.

        The expression ends before the first token at nesting depth 0 that is a bare word in
        ``stop_words`` (upper-case), an operator in ``stop_ops``, a closing bracket without its
        opener, or for which ``stop_at(cursor, token_index)`` is true. Parentheses, brackets,
        braces and ``CASE ... END`` nest.

        Returns:
            ``(start, end)`` token indexes, ``end`` exclusive.
        """
        depth = 0
        case_depth = 0
        i = self.pos
        while i < len(self.tokens):
            tok = self.tokens[i]
            if tok.kind is TokenKind.OP:
                if tok.text in _OPENERS:
                    depth += 1
                elif tok.text in _CLOSERS:
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and case_depth == 0 and tok.text in stop_ops:
                    break
            elif tok.kind is TokenKind.WORD:
                word = tok.upper
                if word == "CASE":
                    case_depth += 1
                elif word == "END" and case_depth:
                    case_depth -= 1
                elif depth == 0 and case_depth == 0 and word in stop_words:
                    break
            if depth == 0 and case_depth == 0 and stop_at is not None and stop_at(self, i):
                break
            i += 1
        return self.pos, i

    def expression(
        self,
        what: str,
        stop_words: Collection[str] = (),
        stop_ops: Collection[str] = (),
        stop_at: Callable[[Cursor, int], bool] | None = None,
    ) -> tuple[str, exp.Expr]:
        """Consume an expression (extent as in :meth:`scan`), check its syntax with sqlglot and
        return ``(text, sqlglot AST)``; ``text`` is :meth:`span_text` of the tokens.

        Raises:
            SqlParseError: empty expression, or a syntax error (at the offending token).
        """
        start, end = self.scan(stop_words, stop_ops, stop_at)
        if start == end:
            raise self.expected(what)
        ast = self.check_syntax(start, end, what)
        self.pos = end
        return self.span_text(start, end), ast

    def check_syntax(self, start: int, end: int, what: str) -> exp.Expr:
        """Parse tokens ``[start, end)`` as one Spark SQL expression with sqlglot.

        Raises:
            SqlParseError: positioned in this cursor's text.
        """
        base = self.tokens[start].start
        source = self.blanked[base : self.tokens[end - 1].end]
        try:
            return sqlglot.parse_one(source, read="spark", into=exp.Condition)
        except ParseError as err:
            info = err.errors[0] if err.errors else {}
            highlight = str(info.get("highlight") or "")
            line, col = info.get("line"), info.get("col")
            offset = base
            if isinstance(line, int) and isinstance(col, int):
                local = LineIndex(source).offset(line, col)
                if highlight and "\n" not in highlight and local - len(highlight) + 1 >= 0:
                    local = local - len(highlight) + 1
                offset = base + local
            description = str(info.get("description") or err).splitlines()[0]
            near = f" at or near '{highlight}'" if highlight else ""
            detail = "" if "<class" in description else f": {description}"
            raise self.error(f"Syntax error in {what}{near}{detail}", offset=offset) from None
        except SqlglotError as err:
            raise self.error(
                f"Syntax error in {what}: {str(err).splitlines()[0]}", self.tokens[start]
            ) from None

    def rest(self) -> tuple[int, int]:
        """Token range from the current position to the end, consumed."""
        start, self.pos = self.pos, len(self.tokens)
        return start, len(self.tokens)

    # ------------------------------------------------------------------ shared clauses

    def constant(self, what: str = "a constant") -> str:
        """A Spark ``constant`` (NULL, number with optional sign, boolean, strings, typed literal
        such as ``DATE '2021-01-01'`` or ``X'0A'``, INTERVAL ...) up to ``,`` or ``)``; returns its
        text."""
        start, end = self.scan(stop_ops={","})
        if start == end:
            raise self.expected(what)
        toks = self.tokens[start:end]
        first = toks[0]
        ok = (
            (
                len(toks) == 1
                and (
                    first.kind in (TokenKind.NUMBER, TokenKind.STRING)
                    or first.is_word("NULL", "TRUE", "FALSE")
                )
            )
            or (len(toks) == 2 and first.is_op("-", "+") and toks[1].kind is TokenKind.NUMBER)
            or all(t.kind is TokenKind.STRING for t in toks)
            or (len(toks) == 2 and first.kind is TokenKind.WORD and toks[1].kind is TokenKind.STRING)
            or first.is_word("INTERVAL")
        )
        if not ok:
            raise self.error(f"Expected {what} but found '{self.span_text(start, end)}'", first)
        self.pos = end
        return self.span_text(start, end)

    def partition_spec(self) -> PartitionSpec:
        """``PARTITION ( col [= constant] [, ...] )``; the PARTITION keyword is consumed here."""
        self.expect_word("PARTITION")
        self.expect_op("(")
        spec: list[tuple[str, str | None]] = []
        seen: set[str] = set()
        while True:
            name_tok = self.peek()
            name = self.identifier("a partition column")
            if name.lower() in seen:
                raise self.error(f"Partition column {name} is given more than once", name_tok)
            seen.add(name.lower())
            value: str | None = None
            if self.accept_op("="):
                value = "DEFAULT" if self.accept_word("DEFAULT") else self.constant("a partition value")
            spec.append((name, value))
            if self.accept_op(")"):
                return tuple(spec)
            if not self.accept_op(","):
                raise self.expected("',' or ')' in the PARTITION spec")

    def property_list(self, *, values: str = "required") -> list[tuple[str, str | None]]:
        """``( key [=] value, ... )`` as in TBLPROPERTIES / OPTIONS.

        Keys are dotted identifiers or strings (kept as written, unquoted). Values are literals:
        strings (unescaped), numbers (as written), booleans (lower-cased); in ``OPTIONS`` also a
        signed number or NULL.

        Args:
            values: ``"required"`` (every key needs a value), ``"forbidden"`` (keys only, as in
                UNSET TBLPROPERTIES) or ``"optional"``.

        Raises:
            SqlParseError: malformed list, a missing value (``Values must be specified for
                key(s): k``) or an unexpected one.
        """
        self.expect_op("(")
        props: list[tuple[str, str | None]] = []
        while True:
            key_tok = self.peek()
            if key_tok is not None and key_tok.kind is TokenKind.STRING:
                key = self.string("a property key")
            else:
                key = ".".join(self.multipart("a property key"))
            self.accept_op("=")
            value: str | None = None
            tok = self.peek()
            if tok is not None and not tok.is_op(",", ")"):
                value = self._property_value()
                if values == "forbidden":
                    raise self.error(f"Values should not be specified for key(s): {key}", key_tok)
            elif values == "required":
                raise self.error(f"Values must be specified for key(s): {key}", key_tok)
            props.append((key, value))
            if self.accept_op(")"):
                return props
            if not self.accept_op(","):
                raise self.expected("',' or ')' in the property list")

    def _property_value(self) -> str | None:
        tok = self.peek()
        assert tok is not None
        if tok.kind is TokenKind.STRING:
            return self.string()
        if tok.is_word("TRUE", "FALSE"):
            self.pos += 1
            return tok.text.lower()
        if tok.is_word("NULL"):
            self.pos += 1
            return None
        sign = ""
        if tok.is_op("-", "+") and self.peek(1) is not None and self.peek(1).kind is TokenKind.NUMBER:  # type: ignore[union-attr]
            sign = "-" if tok.text == "-" else ""
            self.pos += 1
            tok = self.peek()
            assert tok is not None
        if tok.kind is TokenKind.NUMBER:
            self.pos += 1
            return sign + tok.text
        raise self.expected("a property value (string, number or boolean)")


def _split_dotted(name: str) -> list[str] | None:
    """Split ``db.`my t``` style text into its parts (None when malformed)."""
    result = lex(name)
    if result.unterminated is not None or not result.tokens:
        return None
    parts: list[str] = []
    expect_name = True
    for tok in result.tokens:
        if expect_name and tok.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENT):
            parts.append(tok.value)
            expect_name = False
        elif not expect_name and tok.is_op("."):
            expect_name = True
        else:
            return None
    return None if expect_name else parts
