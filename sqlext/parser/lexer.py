"""Spark SQL lexer: the token stream shared by the statement splitter and the parsers.

Follows Spark's ``SqlBaseLexer`` closely enough for statement framing:

* ``'...'`` and ``"..."`` are string literals with backslash escapes (``\\'``, ``\\n``, ``\\u0041``,
  ...) and ``''`` inside single quotes as an escaped quote; ``r'...'`` / ``R"..."`` are raw strings;
* ```...``` is a quoted identifier (````` doubles a backtick);
* ``-- ...`` comments run to the end of the line, ``/* ... */`` comments nest (hints ``/*+ */``
  are comments here; they stay in the statement text the splitter returns);
* numbers keep their Spark suffixes (``10L``, ``2S``, ``1Y``, ``1.5D``, ``1.5F``, ``1.5BD``,
  ``1e3``); a run of digits followed by letters (``123abc``) is an identifier, as in Spark.

Comments produce no tokens; every token records its offsets, so callers slice the original text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from enum import Enum

from sqlext.errors import SqlParseError


class TokenKind(Enum):
    """Kinds of :class:`Token`."""

    WORD = "word"  # bare identifier or keyword
    QUOTED_IDENT = "quoted_ident"  # `...`
    STRING = "string"  # '...', "...", r'...'
    NUMBER = "number"  # 12, 1.5, 10L, 1.5BD, 1e3
    OP = "op"  # punctuation and operators


@dataclass(frozen=True, slots=True)
class Token:
    """One token of Spark SQL text.

    Attributes:
        kind: the :class:`TokenKind`.
        text: the token exactly as written in the source.
        value: ``text`` for words, numbers and operators; the unescaped content for strings and
            quoted identifiers.
        start, end: character offsets of the token in the lexed text (``text == source[start:end]``).
        line, column: 1-based position of the token's first character.
    """

    kind: TokenKind
    text: str
    value: str
    start: int
    end: int
    line: int
    column: int

    @property
    def upper(self) -> str:
        """The token text upper-cased (keyword comparisons); empty for strings."""
        return self.text.upper() if self.kind is not TokenKind.STRING else ""

    def is_word(self, *words: str) -> bool:
        """True when this is a bare word equal (case-insensitively) to one of ``words``."""
        return self.kind is TokenKind.WORD and self.text.upper() in words

    def is_op(self, *ops: str) -> bool:
        """True when this is an operator token equal to one of ``ops``."""
        return self.kind is TokenKind.OP and self.text in ops


@dataclass(frozen=True, slots=True)
class LexResult:
    """Everything the lexer found in a text.

    Attributes:
        tokens: the tokens, in order.
        comments: ``(start, end)`` offsets of every comment (complete or not).
        unterminated: the opener of an unterminated construct at the end of the text
            (``"'"``, ``'"'``, ``"`"`` or ``"/*"``), or None.
        unterminated_at: offset of that opener, or -1.
    """

    tokens: list[Token]
    comments: list[tuple[int, int]]
    unterminated: str | None
    unterminated_at: int


_MULTI_OPS = ("<=>", ">>>", "=>", "<=", ">=", "<>", "!=", "==", "||", "|>", "::", "->", "<<", ">>")
_NUMBER = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?:BD|bd|Bd|bD|[LlSsYyDdFf])?")
_WORD = re.compile(r"\w+", re.UNICODE)
_SIMPLE_ESCAPES = {
    "0": "\u0000",
    "'": "'",
    '"': '"',
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\u001a",
    "\\": "\\",
    "%": "\\%",
    "_": "\\_",
}


class LineIndex:
    """Maps character offsets of a text to 1-based (line, column) and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        """``(line, column)``, both 1-based, of ``offset`` (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        idx = bisect.bisect_right(self._starts, offset) - 1
        return idx + 1, offset - self._starts[idx] + 1

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based ``(line, column)`` (clamped to the text)."""
        line = max(1, min(line, len(self._starts)))
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return max(start, min(start + column - 1, end))

    def line_text(self, line: int) -> str:
        """The text of 1-based ``line`` without its line break."""
        line = max(1, min(line, len(self._starts)))
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def error(self, message: str, offset: int) -> SqlParseError:
        """A :class:`SqlParseError` pointing at ``offset`` of the text."""
        line, column = self.position(offset)
        return SqlParseError(message, line, column, self.line_text(line))


def unescape_string(body: str) -> str:
    """Unescape the content of a Spark string literal (quotes removed), as Spark's
    ``SparkParserUtils.unescapeSQLString`` does: ``\\n``, ``\\t``, ``\\'``, ``\\uXXXX``,
    ``\\UXXXXXXXX``, octal ``\\ddd``; ``\\%`` and ``\\_`` stay escaped (LIKE patterns); any other
    escaped character stands for itself."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif nxt == "U" and re.fullmatch(r"[0-9a-fA-F]{8}", body[i + 2 : i + 10]):
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        elif re.fullmatch(r"[01][0-7]{2}", body[i + 1 : i + 4]):
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


def _scan_quoted(text: str, i: int, quote: str, raw: bool) -> tuple[int, str] | None:
    """Scan a string starting at the opening quote ``text[i]``; return (end offset, raw body) or None
    when unterminated. Backslash escapes the next character unless ``raw``; a doubled single quote
    inside single quotes is an escaped quote."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\" and not raw:
            j += 2
            continue
        if c == quote:
            if quote == "'" and j + 1 < n and text[j + 1] == "'":
                j += 2
                continue
            return j + 1, text[i + 1 : j]
        j += 1
    return None


def _string_value(body: str, quote: str, raw: bool) -> str:
    if raw:
        return body
    if quote == "'":
        body = re.sub(r"(?<!\\)''", "\\'", body)
    return unescape_string(body)


def lex(text: str) -> LexResult:
    """Tokenize ``text`` without failing: an unterminated string, quoted identifier or comment
    ends the scan and is reported in :attr:`LexResult.unterminated`."""
    tokens: list[Token] = []
    comments: list[tuple[int, int]] = []
    index = LineIndex(text)
    i, n = 0, len(text)

    def add(kind: TokenKind, start: int, end: int, value: str | None = None) -> None:
        line, column = index.position(start)
        raw = text[start:end]
        tokens.append(Token(kind, raw, raw if value is None else value, start, end, line, column))

    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((i, j))
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            comments.append((i, j))
            if depth:
                return LexResult(tokens, comments, "/*", i)
            i = j
            continue
        raw_prefix = c in "rR" and i + 1 < n and text[i + 1] in "'\""
        if c in "'\"" or raw_prefix:
            q = i + 1 if raw_prefix else i
            scanned = _scan_quoted(text, q, text[q], raw_prefix)
            if scanned is None:
                return LexResult(tokens, comments, text[q], q)
            end, body = scanned
            add(TokenKind.STRING, i, end, _string_value(body, text[q], raw_prefix))
            i = end
            continue
        if c == "`":
            j = i + 1
            while True:
                k = text.find("`", j)
                if k < 0:
                    return LexResult(tokens, comments, "`", i)
                if k + 1 < n and text[k + 1] == "`":
                    j = k + 2
                    continue
                add(TokenKind.QUOTED_IDENT, i, k + 1, text[i + 1 : k].replace("``", "`"))
                i = k + 1
                break
            continue
        prev_glues = (
            bool(tokens)
            and tokens[-1].end == i
            and (tokens[-1].kind in (TokenKind.WORD, TokenKind.QUOTED_IDENT) or tokens[-1].is_op(")", "]"))
        )
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit() and not prev_glues):
            m = _NUMBER.match(text, i)
            assert m is not None
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] == "_") and c != ".":
                w = _WORD.match(text, i)
                assert w is not None
                add(TokenKind.WORD, i, w.end())
                i = w.end()
            else:
                add(TokenKind.NUMBER, i, end)
                i = end
            continue
        w = _WORD.match(text, i)
        if w:
            add(TokenKind.WORD, i, w.end())
            i = w.end()
            continue
        for op in _MULTI_OPS:
            if text.startswith(op, i):
                add(TokenKind.OP, i, i + len(op))
                i += len(op)
                break
        else:
            add(TokenKind.OP, i, i + 1)
            i += 1
    return LexResult(tokens, comments, None, -1)


def tokenize(text: str) -> list[Token]:
    """Tokenize ``text``.

    Raises:
        SqlParseError: on an unterminated string literal, quoted identifier or comment, pointing
            at its opening character.
    """
    result = lex(text)
    if result.unterminated is not None:
        what = {
            "/*": "Unclosed bracketed comment",
            "`": "Unclosed quoted identifier",
        }.get(result.unterminated, "Unclosed string literal")
        raise LineIndex(text).error(what, result.unterminated_at)
    return result.tokens


def blank_comments(text: str, comments: list[tuple[int, int]]) -> str:
    """``text`` with every comment replaced by blanks (line breaks kept), so offsets, lines and
    columns stay the same while the comments can no longer swallow following text."""
    chars = list(text)
    for start, end in comments:
        for k in range(start, min(end, len(chars))):
            if chars[k] not in "\r\n":
                chars[k] = " "
    return "".join(chars)
