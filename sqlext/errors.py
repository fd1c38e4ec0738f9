"""Errors raised by the SQL front end (``sqlext``).

Every error raised by ``sqlext`` derives from :class:`SqlError`, so callers (the shell, the
session) can tell "the statement is wrong" apart from engine failures
(:class:`engine.errors.EngineError`) and Spark failures (``pyspark.errors.PySparkException``).
"""

from __future__ import annotations

from typing import Any


class SqlError(Exception):
    """Root of every error raised by ``sqlext``."""


class SqlParseError(SqlError):
    """A statement could not be parsed.

    Mirrors Spark's ``ParseException``: it carries where the problem is.

    Attributes:
        message: one line saying what is wrong, e.g. ``Expected ')' but found 'FROM'``.
        line: 1-based line of the offending text, counted in the text that was parsed.
        column: 1-based column (characters) of the offending text on that line.
        snippet: the whole offending source line (without its line break).

    ``target`` is the table the statement names when the parser could read it (else None): a statement on a
    table that is not Hudi's goes to Spark SQL as it is, whatever sqlext's parser thinks of it.

    ``str(error)`` is the message with its position on the first line, then the offending line and
    a caret under the offending column::

        Expected ')' but found 'FROM' (line 2, column 9)
        SELECT (a FROM t
                ^
    """

    target: Any = None

    def __init__(self, message: str, line: int, column: int, snippet: str) -> None:
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)
        self.snippet = snippet
        super().__init__(self._render())

    def _render(self) -> str:
        # Keep tabs of the snippet in the caret line so the caret lines up under the column.
        prefix = "".join(c if c == "\t" else " " for c in self.snippet[: self.column - 1])
        prefix += " " * max(0, self.column - 1 - len(prefix))
        return f"{self.message} (line {self.line}, column {self.column})\n{self.snippet}\n{prefix}^"

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.line, self.column, self.snippet))

    @property
    def headline(self) -> str:
        """The first line of ``str(self)``: message and position, without the snippet."""
        return f"{self.message} (line {self.line}, column {self.column})"

    def shifted(self, start_line: int, start_column: int) -> SqlParseError:
        """The same error with its position made relative to an enclosing text.

        Use when the parsed text was one statement taken out of a script: ``start_line`` and
        ``start_column`` (1-based) are where that statement starts in the script (see
        :class:`sqlext.parser.StatementText`). On the statement's first line the snippet is padded
        with blanks for the text before the statement, so the caret still lines up.
        """
        if self.line == 1:
            return SqlParseError(
                self.message,
                start_line,
                self.column + start_column - 1,
                " " * (start_column - 1) + self.snippet,
            )
        return SqlParseError(self.message, self.line + start_line - 1, self.column, self.snippet)


class SqlAnalysisError(SqlError):
    """A statement parsed but refers to something that does not exist or is not allowed there.

    Examples: an unknown table or column (the message names it), a clause that does not fit the
    table (a ``PARTITION`` spec on a non-partitioned table), ``VERSION AS OF`` time travel.
    Mirrors Spark's ``AnalysisException``.
    """


class NotHudiTable(SqlAnalysisError):
    """The table a statement names is not a Hudi table (another provider, a view) or is not in the catalog.

    :func:`sqlext.commands.dispatch` catches it for the statement's own target and hands the statement to
    Spark SQL unchanged, so Spark answers as it would without sqlext (its own error for an unknown table).

    Attributes:
        ident: the table name as written (a ``sqlext.parser.TableIdent``).
    """

    def __init__(self, message: str, ident: Any) -> None:
        super().__init__(message)
        self.ident = ident


class UnsupportedStatement(SqlError):
    """A valid statement (or clause) that this implementation does not support.

    The message names the construct, e.g. ``WHEN NOT MATCHED BY SOURCE is not supported``.
    """


class ProcedureError(SqlError):
    """A ``CALL`` failed: unknown procedure, bad or missing argument, or the procedure's own failure.

    Mirrors the errors of Hudi's ``CallProcedureHoodieCommand`` (e.g. ``procedure: X is not exists``).
    """
