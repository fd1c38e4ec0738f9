"""Java ``.properties`` text (``java.util.Properties.load`` / ``store``), as Hudi uses for
``.hoodie/hoodie.properties`` and ``.hoodie_partition_metadata`` (docs/FORMAT.md §1.1, §3.2).

Reading implements the full ``Properties.load`` grammar (comments, continuation lines, ``\\:``/``\\=``/
``\\uXXXX`` escapes, ``=``/``:``/whitespace separators). Writing follows the project rule of docs/FORMAT.md §1.1:
values are written *unescaped* except backslash, newline/CR and a leading blank (so Java and hudi-rs, which
does no unescaping, read identical values); characters above ``~`` become ``\\uXXXX`` like Java does.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping

from engine.errors import CorruptFile

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _odd_trailing_backslashes(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _logical_lines(text: str) -> list[str]:
    """Split into logical lines: drop comments/blank lines, join ``\\``-continued lines (leading blanks of
    the continuation are skipped), as ``Properties.LineReader`` does."""
    out: list[str] = []
    physical = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(physical):
        line = physical[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while _odd_trailing_backslashes(line):
            line = line[:-1]
            if i >= len(physical):
                break
            line += physical[i].lstrip(" \t\f")
            i += 1
        out.append(line)
    return out


def _unescape(raw: str, where: str) -> str:
    chars: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch != "\\":
            chars.append(ch)
            i += 1
            continue
        i += 1
        if i >= len(raw):
            break
        nxt = raw[i]
        if nxt == "u":
            digits = raw[i + 1:i + 5]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise CorruptFile(f"malformed \\uXXXX escape in {where}: {raw!r}")
            chars.append(chr(int(digits, 16)))
            i += 5
            continue
        chars.append(_SIMPLE_ESCAPES.get(nxt, nxt))
        i += 1
    text = "".join(chars)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        # Java writes a character above U+FFFF as its UTF-16 surrogate pair, two \uXXXX escapes.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def parse(text: str, source: str = "properties") -> dict[str, str]:
    """Parse Java properties text into an insertion-ordered dict (later duplicates win).

    Args:
        text: file content decoded as ISO-8859-1 (what ``Properties.load(InputStream)`` assumes).
        source: file name used in error messages.

    Raises:
        CorruptFile: a malformed ``\\u`` escape.
    """
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        # key ends at the first unescaped '=', ':' or blank
        i, n = 0, len(line)
        key_end = n
        while i < n:
            ch = line[i]
            if ch == "\\":
                i += 2
                continue
            if ch in "=: \t\f":
                key_end = i
                break
            i += 1
        j = key_end
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        key = _unescape(line[:key_end], source)
        props[key] = _unescape(line[j:], source)
    return props


def _escape(text: str, *, is_key: bool) -> str:
    out: list[str] = []
    for idx, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\f":
            out.append("\\f")
        elif ch == " " and (is_key or idx == 0):
            out.append("\\ ")
        elif is_key and ch in "=:#!":
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(_u_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def _u_escape(ch: str) -> str:
    """``\\uXXXX`` as Java's ``Properties.store`` writes ``ch``: a character above U+FFFF as the two escapes of
    its UTF-16 surrogate pair."""
    units = ch.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04X}" for i in range(0, len(units), 2))


def java_date_string(moment: _dt.datetime) -> str:
    """``java.util.Date.toString()`` of ``moment`` in UTC: ``Mon Mar 31 03:06:44 UTC 2025``."""
    utc = moment.astimezone(_dt.UTC) if moment.tzinfo else moment
    return (f"{_DAYS[utc.weekday()]} {_MONTHS[utc.month - 1]} {utc.day:02d} "
            f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d} UTC {utc.year}")


def java_instant_string(moment: _dt.datetime) -> str:
    """``java.time.Instant.toString()`` with millisecond precision: ``2024-07-07T05:13:01.401Z``."""
    utc = moment.astimezone(_dt.UTC) if moment.tzinfo else moment
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{utc.microsecond // 1000:03d}Z"


def render(props: Mapping[str, str], comment: str | None = None, now: _dt.datetime | None = None) -> bytes:
    """Java ``Properties.store`` output: ``#<comment>``, ``#<date>``, then ``key=value`` lines (``\\n``).

    Args:
        props: key → value, written in iteration order.
        comment: first comment line without ``#`` (omitted when ``None``).
        now: timestamp of the date comment (defaults to the current time).

    Returns:
        ISO-8859-1 bytes (all non-ASCII is ``\\uXXXX``-escaped, so they are also ASCII).
    """
    moment = now or _dt.datetime.now(_dt.UTC)
    lines: list[str] = []
    if comment is not None:
        lines.append("#" + "".join(c if 0x20 <= ord(c) <= 0x7E else _u_escape(c) for c in comment))
    lines.append("#" + java_date_string(moment))
    for key, value in props.items():
        lines.append(f"{_escape(str(key), is_key=True)}={_escape(str(value), is_key=False)}")
    return ("\n".join(lines) + "\n").encode("latin-1")
