"""What a user sees of a failed statement: one or two lines that keep the cause.

A failure reaches the shell in one of three shapes:

- one of our own errors (``SqlError``, ``EngineError``, ``HiveSyncError``): its message is written for the
  user and already names the table, column, key or file, so it is shown whole (folded onto one line);
- a Spark error (``PySparkException`` from py4j) that wraps one of ours: a Python data source or an
  executor task raised it, and Spark carries it as the text of a Python traceback inside its own message
  (``[PYTHON_DATA_SOURCE_ERROR] ... Traceback (most recent call last): ... engine.errors.ConfigError: ...``).
  The innermost error line of that traceback is what the user needs;
- anything else (a Spark analysis error, a Python error of ours we did not expect): Spark's first line with
  its error class, or the innermost ``Type: message`` line when the first line is only a traceback header.

Nothing here prints; the shell (and ``sqlext serve``) decide where the lines go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_LINE = 600
"""Characters of one summary line before its middle is elided (the start names what failed, the end
usually says what to do)."""

_OWN_MODULES = ("engine.errors", "sqlext.errors", "hive_sync.errors", "sqlext.commands.post_commit")
_TRACEBACK_HEADER = "Traceback (most recent call last):"
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
_ERROR_LINE = re.compile(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Failed|NotFound|Exists|Conflict|Mismatch|"
    r"Key|File|Table|Unavailable))(?::\s?(?P<message>.*))?$"
)


def own_error_types() -> tuple[type[BaseException], ...]:
    """The error roots of our three packages (imported lazily: the shell starts without pyspark)."""
    from engine.errors import EngineError
    from hive_sync.errors import HiveSyncError
    from sqlext.errors import SqlError

    return (SqlError, EngineError, HiveSyncError)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes/contexts, outermost first (each once)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` with its lines joined by single spaces (Spark's ``SQLSTATE: ...`` suffix lines dropped)
    and, past ``limit`` characters, its middle replaced by `` … ``."""
    parts = [ln.strip() for ln in text.splitlines() if ln.strip() and not _SQLSTATE.fullmatch(ln)]
    joined = " ".join(parts)
    joined = _SQLSTATE.sub("", joined)
    if len(joined) > limit:
        keep = (limit - 3) // 2
        joined = joined[:keep].rstrip() + " … " + joined[-keep:].lstrip()
    return joined


def _traceback_errors(text: str) -> list[tuple[str, str]]:
    """``(qualified type, message)`` of every ``Type: message`` line that ends a traceback inside
    ``text`` (innermost last). A message continues on the following lines up to a blank line, the next
    traceback, a ``SQLSTATE`` line or a JVM frame."""
    lines = text.splitlines()
    found: list[tuple[str, str]] = []
    in_traceback = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _TRACEBACK_HEADER in line:
            in_traceback = True
            i += 1
            continue
        stripped = line.strip()
        match = _ERROR_LINE.match(stripped) if in_traceback and not line.startswith((" ", "\t")) else None
        if match is None:
            i += 1
            continue
        message = [match.group("message") or ""]
        i += 1
        while i < len(lines):
            nxt = lines[i]
            if (not nxt.strip() or _TRACEBACK_HEADER in nxt or _SQLSTATE.fullmatch(nxt)
                    or nxt.lstrip().startswith("at ") or nxt.startswith("\tat ")):
                break
            message.append(nxt.strip())
            i += 1
        found.append((match.group("type"), " ".join(m for m in message if m)))
        in_traceback = False
    return found


def _is_own(type_name: str) -> bool:
    return type_name.startswith(_OWN_MODULES)


def summarize(exc: BaseException) -> str:
    """What to show for ``exc`` (without the ``Error in query:`` prefix): one line, or two when one of our
    own messages has more than one (its first line, then the rest folded onto a second line).

    Our own errors give their message; a Spark/py4j error that carries one of ours (as a Python
    traceback in its text) gives that message; otherwise Spark's headline, or the innermost
    ``Type: message`` of a traceback when the headline is only a traceback header. Types that are not
    ours and not Spark's user-facing errors are named (``ValueError: ...``).
    """
    own = own_error_types()
    inner = next((e for e in _chain(exc) if isinstance(e, own)), None)
    if inner is not None:
        return _own_message(inner)
    text = str(exc)
    embedded = _traceback_errors(text)
    ours = [e for e in embedded if _is_own(e[0])]
    if ours:
        return one_line(ours[-1][1]) or ours[-1][0].rsplit(".", 1)[-1]
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    java = _java_error(text)
    if java is not None:
        return java
    if (first.endswith(_TRACEBACK_HEADER) or first.endswith(":")) and embedded:
        # "...: Traceback (most recent call last):" or a headline ending in ":" with the traceback below it
        # (Spark's "An exception was thrown from the Python worker:").
        type_name, message = embedded[-1]
        head = first[: -len(_TRACEBACK_HEADER)] if first.endswith(_TRACEBACK_HEADER) else first
        head = head.rstrip().rstrip(":")
        cause = f"{type_name.rsplit('.', 1)[-1]}: {message}" if message else type_name
        return one_line(f"{head}: {cause}" if head else cause)
    first = _SQLSTATE.sub("", first)
    if _is_spark_error(exc):
        return one_line(first) or type(exc).__name__
    return f"{type(exc).__name__}: {one_line(first)}" if first else type(exc).__name__


_PY4J_HEADLINE = re.compile(r"^An error occurred while calling [\w.$]+\.?$")
_JAVA_ERROR = re.compile(r"^:?\s*(?:Caused by:\s*)?(?P<type>(?:[\w$]+\.)+[\w$]+):\s?(?P<message>.*)$")


def _java_error(text: str) -> str | None:
    """For a py4j error (``An error occurred while calling o123.collectToPython.`` then ``: <Java exception>:
    <message>``, frames, ``Caused by:`` lines): the Java exception's message, and its innermost cause when that
    says more (``[FAILED_READ_FILE.NO_HINT] Encountered error while reading file …parquet. (cause: IOException:
    can not read class …FileMetaData …)``); ``None`` for any other text."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not _PY4J_HEADLINE.match(lines[0].strip()):
        return None
    errors = [m for m in (_JAVA_ERROR.match(ln.strip()) for ln in lines[1:]
                          if ln.lstrip().startswith((":", "Caused by:"))) if m]
    if not errors:
        return None
    head = _SQLSTATE.sub("", errors[0].group("message")).strip() or errors[0].group("type")
    root = errors[-1]
    if len(errors) > 1 and root.group("message").strip() and root.group("message").strip() not in head:
        cause = f"{root.group('type').rsplit('.', 1)[-1]}: {_SQLSTATE.sub('', root.group('message')).strip()}"
        return one_line(f"{head} (cause: {cause})")
    return one_line(head)


def _own_message(exc: BaseException) -> str:
    """One of our messages in at most two lines: its first line, then the rest folded."""
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    head = one_line(lines[0])
    rest = one_line("\n".join(lines[1:]))
    return f"{head}\n{rest}" if rest else head


def _is_spark_error(exc: BaseException) -> bool:
    try:
        from pyspark.errors import PySparkException
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return False
    return isinstance(exc, PySparkException)
