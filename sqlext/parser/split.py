"""Splitting a SQL script into statements, and the interactive prompt's "is it complete" test.

Semicolons split statements unless they are inside a string literal (``'..'`` / ``".."`` with backslash escapes),
a quoted identifier (```..```) or a comment (``--`` to end of line, nested ``/* */``), as Spark's
``SparkSQLCLIDriver.splitSemiColon`` does; the tokens are those of the ``HudiSpark`` dialect's tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from sqlext.errors import SqlParseError
from sqlext.parser.parse import tokenize


@dataclass(frozen=True)
class StatementText:
    """One statement of a script.

    Attributes:
        text: the statement from its first token to its last, without the terminating semicolon
            and without comments before its first token (comments inside it are kept).
        line: 1-based line in the script where ``text`` starts.
        column: 1-based column in the script where ``text`` starts.
    """

    text: str
    line: int
    column: int


def split_statements(text: str) -> list[StatementText]:
    """Split a script into statements.

    Empty statements (``;;``, a script of only comments) are dropped; the last statement does not
    need a terminating semicolon.

    Raises:
        SqlParseError: when the script ends inside a string literal, quoted identifier or
            bracketed comment (position of its opening character, counted in ``text``).
    """
    statements: list[StatementText] = []
    first: int | None = None
    last = 0
    for tok in [*tokenize(text), None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if first is not None:
                line = text.count("\n", 0, first) + 1
                column = first - (text.rfind("\n", 0, first) + 1) + 1
                statements.append(StatementText(text[first:last], line, column))
            first = None
            continue
        if first is None:
            first = tok.start
        last = tok.end + 1
    return statements


def is_complete(buffer: str) -> bool:
    """True when ``buffer`` (what was typed at an interactive prompt so far) ends a statement:
    its last character outside comments and whitespace is a semicolon that is not inside a
    string literal, quoted identifier or comment."""
    try:
        tokens = tokenize(buffer)
    except SqlParseError:
        return False
    return bool(tokens) and tokens[-1].token_type == TokenType.SEMICOLON
