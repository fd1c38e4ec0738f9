"""Variable substitution in statement text, as spark-sql does (``spark.sql.variable.substitute``):
``${key}`` and ``${hiveconf:key}`` / ``${hivevar:key}`` take the session conf value, ``${env:NAME}`` an
environment variable, ``${system:name}`` a JVM-style system property (unsupported ones are left as is)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

_VARIABLE = re.compile(r"\$\{(?:(hiveconf|hivevar|env|system):)?([^}\s]+)\}")


def substitute_variables(text: str, conf_lookup: Callable[[str], str | None]) -> str:
    """Replace ``${...}`` references in ``text``; unknown variables are left unchanged.

    Args:
        text: statement text.
        conf_lookup: returns the session conf value of a key, or ``None``.
    """

    def replace(match: re.Match[str]) -> str:
        scope, key = match.group(1), match.group(2)
        value = os.environ.get(key) if scope == "env" else conf_lookup(key)
        return value if value is not None else match.group(0)

    return _VARIABLE.sub(replace, text)
