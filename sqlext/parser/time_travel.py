"""Time travel: ``FROM t TIMESTAMP AS OF '<instant>'`` -> per-query option ``as.of.instant``.

Spark parses ``TIMESTAMP AS OF`` itself but hands a data source only its options, so the clause is
rewritten into Spark 4's per-relation options clause, which the ``hudi`` data source reads as
``as.of.instant`` (Hudi's ``HoodieSpark3Analysis`` time-travel resolution does the same)::

    SELECT * FROM t TIMESTAMP AS OF '20240101000000000' x
    SELECT * FROM t WITH ('as.of.instant' = '20240101000000000') x
"""

from __future__ import annotations

from sqlext.errors import SqlAnalysisError
from sqlext.parser.lexer import Token, TokenKind, tokenize

_TIME_WORDS = ("TIMESTAMP", "SYSTEM_TIME")
_VERSION_WORDS = ("VERSION", "SYSTEM_VERSION")
_NAME_KINDS = (TokenKind.WORD, TokenKind.QUOTED_IDENT)


def _follows_table_name(tokens: list[Token], k: int) -> bool:
    """True when ``tokens[k]`` ends a (possibly dotted) table name that follows FROM, JOIN or ','."""
    if k < 0 or tokens[k].kind not in _NAME_KINDS:
        return False
    while k >= 2 and tokens[k - 1].is_op(".") and tokens[k - 2].kind in _NAME_KINDS:
        k -= 2
    if k == 0:
        return False
    prev = tokens[k - 1]
    return prev.is_word("FROM", "JOIN") or prev.is_op(",")


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def time_travel_rewrite(sql: str) -> str | None:
    """Rewrite every ``<table> [AS] [FOR] TIMESTAMP|SYSTEM_TIME AS OF <literal>`` of ``sql`` into
    ``<table> WITH ('as.of.instant' = '<literal>')`` (merged into an options clause that follows).

    The instant is passed on as written (``'2024-01-01 00:00:00'``, ``'20240101000000000'``,
    ``20240101000000000``); the reader validates it.

    Returns:
        The rewritten text, or None when ``sql`` has no time-travel clause.

    Raises:
        SqlAnalysisError: ``VERSION AS OF`` (``Version expression is not supported for time
            travel``), or an instant that is not a string or integer literal.
        SqlParseError: unterminated literal or comment in ``sql``.
    """
    tokens = tokenize(sql)
    edits: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        j = i + 1 if tokens[i].is_word("FOR") else i
        if not (
            j + 2 < len(tokens)
            and tokens[j].is_word(*_TIME_WORDS, *_VERSION_WORDS)
            and tokens[j + 1].is_word("AS")
            and tokens[j + 2].is_word("OF")
        ):
            i += 1
            continue
        start = i
        if start > 0 and tokens[start - 1].is_word("AS") and _follows_table_name(tokens, start - 2):
            start -= 1
        elif not _follows_table_name(tokens, start - 1):
            i += 1
            continue
        if tokens[j].is_word(*_VERSION_WORDS):
            raise SqlAnalysisError("Version expression is not supported for time travel")
        value_tok = tokens[j + 3] if j + 3 < len(tokens) else None
        if value_tok is not None and value_tok.kind is TokenKind.STRING:
            instant = value_tok.value
        elif value_tok is not None and value_tok.kind is TokenKind.NUMBER and value_tok.text.isdigit():
            instant = value_tok.text
        else:
            found = value_tok.text if value_tok is not None else "the end of the statement"
            raise SqlAnalysisError(
                f"Time travel needs a string or integer literal instant after AS OF, found {found}"
            )
        option = f"'as.of.instant' = {_quote(instant)}"
        after = j + 4
        if after + 1 < len(tokens) and tokens[after].is_word("WITH") and tokens[after + 1].is_op("("):
            paren = tokens[after + 1]
            edits.append((tokens[start].start, value_tok.end, ""))
            edits.append((paren.end, paren.end, option + ", "))
        else:
            edits.append((tokens[start].start, value_tok.end, f"WITH ({option})"))
        i = after
    if not edits:
        return None
    out = sql
    for begin, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:begin] + text + out[end:]
    return out
