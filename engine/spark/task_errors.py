"""Errors raised inside Spark tasks, as the driver sees them: the engine error a task raised (rebuilt from the
exception text Spark carries back) and a one-line summary of any task failure."""

from __future__ import annotations

import re

from engine import errors
from engine.errors import EngineError

_TASK_ERROR = re.compile(r"(?:engine\.errors\.)?(" + "|".join(
    name for name in dir(errors) if isinstance(getattr(errors, name), type)
    and issubclass(getattr(errors, name), EngineError)
) + r"): (.+)")


_SQL_STATE_SUFFIX = re.compile(r"\s*SQLSTATE: \w+\s*$")


def unwrap_task_error(exc: BaseException) -> EngineError | None:
    """The engine error raised inside a Spark task, rebuilt from the driver-side exception text."""
    for match in _TASK_ERROR.finditer(str(exc)):
        cls = getattr(errors, match.group(1))
        # Spark's raise_error() appends the SQL state to the message.
        return cls(_SQL_STATE_SUFFIX.sub("", match.group(2)).strip())
    return None


_PY_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)): (.+)$", re.MULTILINE)


def failure_summary(exc: BaseException) -> str:
    """One line saying what failed: the innermost Python error raised in a task, else the first line."""
    text = str(exc)
    found = [m for m in _PY_ERROR_LINE.finditer(text) if not m.group(1).startswith(("pyspark.", "py4j."))]
    if found:
        return f"{found[-1].group(1)}: {found[-1].group(2).strip()}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first


__all__ = ["failure_summary", "unwrap_task_error"]
