"""The text and tokens of one statement, for positions and verbatim slices.

The builders (:mod:`.build`) turn a parsed tree into a statement; where they need the text as the user wrote it
(a query Spark parses again, error positions), they ask the :class:`Source`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from sqlext.errors import SqlParseError
from sqlext.parser.statements import TableIdent

OPEN = (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE)
CLOSE = (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE)
QUERY_START = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE", "MAP", "REDUCE"})


def error_at(text: str, offset: int, message: str) -> SqlParseError:
    """A :class:`SqlParseError` at character ``offset`` (0-based) of ``text``: 1-based line and column, the line
    as snippet."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    snippet = text[line_start: len(text) if line_end < 0 else line_end].rstrip("\r")
    return SqlParseError(message, line, offset - line_start + 1, snippet)


@dataclass
class Source:
    """One statement: ``text`` as given to the parser and its ``tokens`` (sqlglot tokens, offsets in ``text``)."""

    text: str
    tokens: list[Token]

    @property
    def end(self) -> int:
        """Offset just after the last token."""
        return self.tokens[-1].end + 1 if self.tokens else 0

    def error(self, message: str, offset: int | None = None) -> SqlParseError:
        """An error at ``offset`` (default: the end of the statement)."""
        return error_at(self.text, self.end if offset is None else offset, message)

    def error_at_node(self, node: exp.Expr | None, message: str) -> SqlParseError:
        """An error at the first token of ``node`` as far as the tree knows it, else at the statement start."""
        offset = node_offset(node) if node is not None else None
        return error_at(self.text, offset if offset is not None else self.tokens[0].start, message)

    def error_at_word(self, word: str, message: str, nth: int = 0) -> SqlParseError:
        """An error at the ``nth`` (0-based) depth-0 token spelled ``word`` (any case), else at the end."""
        found = [tok for _, tok in self.depth0() if tok.text.upper() == word.upper()]
        return self.error(message, found[nth].start if len(found) > nth else None)

    def slice(self, first: int, last: int) -> str:
        """The text from token ``first`` to token ``last`` (indexes, inclusive), comments inside kept."""
        return self.text[self.tokens[first].start: self.tokens[last].end + 1]

    def depth0(self, start: int = 0) -> Iterator[tuple[int, Token]]:
        """``(index, token)`` of the tokens from ``start`` on that are outside any parentheses/brackets opened
        after ``start`` (the opening token of a group is yielded, its contents are not)."""
        depth = 0
        for i in range(start, len(self.tokens)):
            tok = self.tokens[i]
            if depth == 0:
                yield i, tok
            if tok.token_type in OPEN:
                depth += 1
            elif tok.token_type in CLOSE:
                depth -= 1

    def group_end(self, index: int) -> int:
        """Index of the token closing the group opened at ``index``."""
        depth = 0
        for i in range(index, len(self.tokens)):
            kind = self.tokens[i].token_type
            if kind in OPEN:
                depth += 1
            elif kind in CLOSE:
                depth -= 1
                if depth == 0:
                    return i
        return len(self.tokens) - 1

    def is_query_start(self, index: int) -> bool:
        """Whether token ``index`` starts a query: a query keyword, or ``(`` opening a query."""
        tok = self.tokens[index]
        if tok.text.upper() in QUERY_START and tok.token_type != TokenType.STRING:
            return True
        if tok.token_type == TokenType.L_PAREN and index + 1 < len(self.tokens):
            return self.is_query_start(index + 1)
        return False

    def query_from(self, start: int) -> int | None:
        """Index of the first depth-0 token from ``start`` on that starts a query, or None."""
        for i, _ in self.depth0(start):
            if self.is_query_start(i):
                return i
        return None

    def position_in_statement(self, index: int) -> tuple[int, int]:
        """1-based (line, column) of token ``index`` relative to the statement's first token."""
        first = self.tokens[0].start
        offset = self.tokens[index].start
        line = self.text.count("\n", first, offset) + 1
        if line == 1:
            return 1, offset - first + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1


def node_offset(node: exp.Expr) -> int | None:
    """Smallest token offset recorded in ``node`` or its descendants (sqlglot records it on identifiers, literals,
    functions and the nodes this package marks), or None."""
    best: int | None = None
    for sub in node.walk():
        start = sub.meta.get("start") if sub.meta else None
        if isinstance(start, int) and (best is None or start < best):
            best = start
    return best


def table_ident(table: exp.Expr) -> TableIdent:
    """The :class:`TableIdent` of an ``exp.Table`` (or ``Schema``/``Dot`` naming one)."""
    if isinstance(table, exp.Schema):
        table = table.this
    if isinstance(table, (exp.Dot, exp.Identifier)):
        parts = [p.name for p in table.flatten()] if isinstance(table, exp.Dot) else [table.name]
        return TableIdent(parts[-2] if len(parts) > 1 else None, parts[-1], parts[-3] if len(parts) > 2 else None)
    assert isinstance(table, exp.Table), type(table)
    return TableIdent(table.db or None, table.name, table.catalog or None)


class SqlText(str):
    """Spark SQL text of an expression that keeps the parse tree it was generated from (:attr:`tree`), so a
    command can inspect the expression (its column references, its shape) without parsing the text again.
    Compares, hashes and formats as the text; pickles as a plain ``str``.

    Attributes:
        tree: the sqlglot expression.
    """

    tree: exp.Expr

    def __new__(cls, text: str, tree: exp.Expr) -> SqlText:
        value = super().__new__(cls, text)
        value.tree = tree
        return value

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (str(self),)


def expr_sql(node: exp.Expr) -> SqlText:
    """Spark SQL text of an expression, regenerated from the tree by sqlglot's Spark generator (comments dropped,
    one blank between tokens: ``b + 1``, ``UPPER(s.name)``), carrying the tree (:class:`SqlText`)."""
    return SqlText(node.sql(dialect="spark", comments=False), node)


def name_parts(node: exp.Expr) -> list[str]:
    """Name parts of a column reference or dotted name (``a.b.c`` -> ``["a", "b", "c"]``)."""
    if isinstance(node, exp.Column):
        return [p.name for p in node.parts]
    if isinstance(node, exp.Dot):
        # sqlglot may nest a Column in a Dot (``hoodie.datasource.write.keygenerator.class``): keep all its parts
        return [part for p in node.flatten() for part in name_parts(p)]
    return [node.name]
