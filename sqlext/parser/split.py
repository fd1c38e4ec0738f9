"""Splitting a SQL script into statements, and the interactive prompt's "is it complete" test.

Semicolons split statements unless they are inside a string literal (``'..'`` / ``".."`` with
backslash escapes), a quoted identifier (```..```) or a comment (``--`` to end of line, nested
``/* */``), as Spark's ``SparkSQLCLIDriver.splitSemiColon`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlext.parser.lexer import LineIndex, Token, TokenKind, lex, tokenize


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
    tokens = tokenize(text)
    index = LineIndex(text)
    statements: list[StatementText] = []
    current: list[Token] = []
    for tok in tokens + [None]:
        if tok is None or (tok.kind is TokenKind.OP and tok.text == ";"):
            if current:
                start, end = current[0].start, current[-1].end
                line, column = index.position(start)
                statements.append(StatementText(text[start:end], line, column))
            current = []
            continue
        current.append(tok)
    return statements


def is_complete(buffer: str) -> bool:
    """True when ``buffer`` (what was typed at an interactive prompt so far) ends a statement:
    its last character outside comments and whitespace is a semicolon that is not inside a
    string literal, quoted identifier or comment."""
    result = lex(buffer)
    if result.unterminated is not None or not result.tokens:
        return False
    last = result.tokens[-1]
    return last.kind is TokenKind.OP and last.text == ";"
