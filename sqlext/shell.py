"""The ``sqlext`` command: a ``spark-sql`` compatible console over a ``sqlext`` session.

Mirrors Spark's ``SparkSQLCLIDriver`` (flags, prompt, output) and ``HiveResult.toHiveString``
(how values print)::

    sqlext -e "SELECT * FROM t"           # run statements, exit 1 at the first error
    sqlext -f script.sql                  # same for a file
    sqlext -i init.sql                    # run silently first, then prompt (or -e/-f)
    sqlext --conf k=v --hiveconf k=v --master local[2] --database db --warehouse /tmp/wh -S -v

Results go to stdout, tab separated, ``NULL`` for nulls, a header line only when
``spark.sql.cli.print.header`` (or ``hive.cli.print.header``) is true; ``Time taken: X seconds,
Fetched N row(s)`` goes to stderr unless ``-S``. An error prints ``Error in query: <message>`` on one
line (plus the offending line and a caret for parse errors; full stack traces with ``-v``).

This module and the command entry points it dispatches to (``sqlext serve``, ``sqlext metastore``,
``sqlext report``) are the only parts of ``sqlext`` that write to stdout/stderr.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, Protocol, TextIO

from sqlext.cli_args import hiveconf_settings, key_value_arg, session_only, set_session_confs
from sqlext.error_report import one_line, own_error_types, summarize
from sqlext.errors import SqlParseError
from sqlext.hive_result import (  # noqa: F401 - re-exported: the shell's value formatting
    DataFrameLike,
    collectable,
    format_result,
    java_double_str,
    to_hive_string,
)
from sqlext.parser.split import StatementText, is_complete, split_statements

logger = logging.getLogger(__name__)

HISTORY_FILE = "~/.sqlext_history"
PROMPT_NAME = "spark-sql"
EXIT_PATH_NOT_FOUND = 3
EXIT_INTERRUPTED = 130
_HEADER_KEYS = ("spark.sql.cli.print.header", "hive.cli.print.header")
_SET_RE = re.compile(r"^\s*SET\s+([\w.\-]+)\s*=\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_USE_RE = re.compile(r"^\s*USE\s+(?:(?:DATABASE|SCHEMA|NAMESPACE)\s+)?([`\w.]+)\s*$", re.IGNORECASE)


class SessionLike(Protocol):
    """What the shell needs of a session (``sqlext.session.Session`` fits): run one statement."""

    def sql(self, text: str) -> DataFrameLike: ...


SessionFactory = Callable[..., SessionLike]
"""Called as ``factory(warehouse=..., conf=..., master=...)``, like ``sqlext.session.connect``."""


# ---------------------------------------------------------------------------- errors


def _error_lines(exc: BaseException) -> list[str]:
    """What to print for a failed statement: ``Error in query: <one line that keeps the cause>``
    (:func:`sqlext.error_report.summarize`), plus the offending line and a caret for parse errors."""
    if isinstance(exc, SqlParseError):
        return [f"Error in query: {exc.headline}", *str(exc).splitlines()[1:]]
    return [f"Error in query: {line}" if i == 0 else line for i, line in enumerate(summarize(exc).splitlines())]


# ---------------------------------------------------------------------------- the shell


class Shell:
    """Runs statements against a session and prints like spark-sql.

    Args:
        session: the session statements run on.
        out, err: output streams (results; timing, errors and messages).
        silent: ``-S``: no ``Time taken`` lines or messages.
        verbose: ``-v``: full stack traces (JVM and Python) on errors.
        print_header: initial value of ``spark.sql.cli.print.header``.
        database: the current database shown in the prompt.
    """

    def __init__(
        self,
        session: SessionLike,
        out: TextIO,
        err: TextIO,
        *,
        silent: bool = False,
        verbose: bool = False,
        print_header: bool = False,
        database: str = "default",
    ) -> None:
        self.session = session
        self.out = out
        self.err = err
        self.silent = silent
        self.verbose = verbose
        self.print_header = print_header
        self.database = database
        self.quit_requested = False
        self._history_loaded = False

    # ------------------------------------------------------------ statements

    def run_statement(self, stmt: StatementText) -> int:
        """Run one statement and print its result; 0 on success, 1 on error (already printed),
        130 when interrupted (Ctrl-C cancels the statement's Spark jobs; a second Ctrl-C stops waiting)."""
        text = stmt.text
        start = time.monotonic()
        interrupt = _Interrupt(self._cancel)
        try:
            with interrupt:
                df = collectable(self.session.sql(text))
                rows = list(df.collect())
            lines = format_result(df, rows)
            self._track_state(text)
        except KeyboardInterrupt:
            return self._interrupted()
        except Exception as exc:  # noqa: BLE001 - every failure of a statement is reported, not raised
            if interrupt.pressed:
                return self._interrupted()
            if isinstance(exc, SqlParseError):
                exc = exc.shifted(stmt.line, stmt.column)
            self._report(exc)
            return 1
        if interrupt.pressed:
            return self._interrupted()
        elapsed = time.monotonic() - start
        if self.print_header and df.columns:
            self.out.write("\t".join(df.columns) + "\n")
        for line in lines:
            self.out.write(line + "\n")
        self.out.flush()
        if not self.silent:
            message = f"Time taken: {java_double_str(round(elapsed, 3))} seconds"
            if lines:
                message += f", Fetched {len(lines)} row(s)"
            self.err.write(message + "\n")
            self.err.flush()
        return 0

    def run_script(self, text: str, *, first_line: int = 1) -> int:
        """Run every statement of ``text``, stopping at the first failure.

        ``quit``/``exit`` stop the shell; ``source <file>`` runs a file. ``first_line`` is the
        line of ``text``'s start in its source (for error positions). Returns 0 or the failing
        statement's code.
        """
        try:
            statements = split_statements(text)
        except SqlParseError as exc:
            self._report(exc.shifted(first_line, 1))
            return 1
        for stmt in statements:
            stmt = StatementText(stmt.text, stmt.line + first_line - 1, stmt.column)
            command = stmt.text.strip()
            lowered = command.lower()
            if lowered in ("quit", "exit"):
                self.quit_requested = True
                return 0
            if lowered.startswith("source ") or lowered.startswith("source\t"):
                rc = self.run_file(command[len("source") :].strip())
            else:
                rc = self.run_statement(stmt)
            if rc != 0 or self.quit_requested:
                return rc
        return 0

    def run_file(self, path: str) -> int:
        """Run a script file (``-f``, ``-i``, ``source``); 3 when it cannot be read."""
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            self.err.write(f"Could not open input file for reading. ({exc})\n")
            self.err.flush()
            return EXIT_PATH_NOT_FOUND
        return self.run_script(text)

    # ------------------------------------------------------------ interactive

    def prompt(self, continuation: bool) -> str:
        """``spark-sql (db)> ``, or blanks of the same width then ``> `` for a continuation line."""
        head = f"{PROMPT_NAME} ({self.database})"
        return (" " * len(head) if continuation else head) + "> "

    def interactive(self, read_line: Callable[[str], str] | None = None) -> int:
        """The prompt loop: accumulate lines until a statement ends with ``;``, run it, repeat.

        Ctrl-C discards the lines typed so far (or cancels the running statement); Ctrl-D, ``quit;``
        or ``exit;`` leave. Returns the code of the last statement (0 after ``quit``).
        """
        reader = read_line if read_line is not None else self._make_reader()
        buffer: list[str] = []
        ret = 0
        try:
            while not self.quit_requested:
                try:
                    line = reader(self.prompt(bool(buffer)))
                except EOFError:
                    if buffer:
                        self.out.write("\n")
                    break
                except KeyboardInterrupt:
                    self.out.write("\n")
                    self.out.flush()
                    buffer = []
                    continue
                if not buffer and (not line.strip() or line.lstrip().startswith("--")):
                    continue
                buffer.append(line)
                text = "\n".join(buffer)
                if is_complete(text):
                    buffer = []
                    ret = self.run_script(text)
            return 0 if self.quit_requested else ret
        finally:
            self._save_history()

    def _make_reader(self) -> Callable[[str], str]:
        stdin = sys.stdin
        if stdin.isatty():
            self._load_history()

            def read_tty(prompt: str) -> str:
                return input(prompt)

            return read_tty

        def read_pipe(prompt: str) -> str:
            del prompt  # no prompt when reading a pipe
            line = stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\n")

        return read_pipe

    def _load_history(self) -> None:
        try:
            import readline
        except ImportError:  # pragma: no cover - platform without readline
            return
        self._history_loaded = True
        try:
            readline.read_history_file(os.path.expanduser(HISTORY_FILE))
        except OSError:
            pass
        readline.set_history_length(10_000)

    def _save_history(self) -> None:
        if not self._history_loaded:
            return
        try:
            import readline

            readline.write_history_file(os.path.expanduser(HISTORY_FILE))
        except (ImportError, OSError) as exc:
            logger.warning("could not write the history file %s: %s", HISTORY_FILE, exc)

    # ------------------------------------------------------------ helpers

    def _report(self, exc: BaseException) -> None:
        for line in _error_lines(exc):
            self.err.write(line + "\n")
        if self.verbose:
            detail = str(exc)
            if detail and not isinstance(exc, SqlParseError):
                self.err.write(detail + "\n")
            jvm_trace = getattr(exc, "_stackTrace", None)
            if jvm_trace:
                self.err.write("JVM stacktrace:\n" + str(jvm_trace) + "\n")
            self.err.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        self.err.flush()

    def _track_state(self, text: str) -> None:
        """Follow ``SET <header key>=..`` and ``USE db`` so header printing and the prompt match."""
        set_match = _SET_RE.match(text)
        if set_match and set_match.group(1).lower() in _HEADER_KEYS:
            self.print_header = set_match.group(2).strip().strip("'\"").lower() == "true"
        use_match = _USE_RE.match(text)
        if use_match:
            self.database = use_match.group(1).split(".")[-1].strip("`")

    def _cancel(self) -> None:
        spark = getattr(self.session, "spark", None)
        context = getattr(spark, "sparkContext", None)
        if context is not None:
            try:
                context.cancelAllJobs()
            except Exception as exc:  # noqa: BLE001 - best effort while interrupting
                logger.debug("could not cancel running jobs: %s", exc)

    def _interrupted(self) -> int:
        self.err.write("Interrupted: the statement was cancelled.\n")
        self.err.flush()
        return EXIT_INTERRUPTED


class _Interrupt:
    """Ctrl-C while a statement runs (main thread only): the first press cancels the statement's Spark
    jobs from another thread, so the statement returns with a cancellation instead of the interrupt
    breaking the py4j call in flight (PySpark's own handler calls into the JVM on the blocked connection,
    which logs several py4j tracebacks); a second press raises ``KeyboardInterrupt``."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel = cancel
        self.pressed = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        del signum, frame
        if self.pressed:
            raise KeyboardInterrupt
        self.pressed = True
        threading.Thread(target=self.cancel, name="sqlext-cancel", daemon=True).start()


# ---------------------------------------------------------------------------- command line


SUBCOMMANDS_HELP = """sub-commands (each has its own --help):
  sqlext serve [--port 10000] [--host 127.0.0.1] [--warehouse DIR] ...
        Spark's Thrift JDBC/ODBC server (HiveServer2 protocol) over a sqlext session, for BI tools,
        beeline and PyHive
  sqlext metastore start|stop|status [--port 9083] [--dir ./metastore]
        a local Hive Metastore service (Thrift, on Derby) that several sqlext sessions, sqlext serve
        and Hive sync share: start sessions with --hiveconf hive.metastore.uris=thrift://127.0.0.1:9083
  sqlext hive-sync --base-path PATH --metastore-uris thrift://HOST:PORT [--database D --table T ...]
        register or refresh a Hudi table in a Hive Metastore (the flags of Hudi's run_sync_tool.sh)
  sqlext report TABLE|PATH [--out FILE.html]
        one self-contained HTML page about a table: timeline, file sizes against the small-file limit
        and target size, log files per file slice, pending and recent table services

the embedded default keeps tables and an embedded Derby catalog in ./warehouse ($SQLEXT_WAREHOUSE or
--warehouse); one process at a time can open it."""


def build_arg_parser() -> argparse.ArgumentParser:
    """The command-line flags (spark-sql's plus ``--warehouse``)."""
    parser = argparse.ArgumentParser(
        prog="sqlext",
        description="Spark SQL console with Apache Hudi tables (spark-sql compatible). Without -e or -f it "
        "opens a prompt.",
        epilog=SUBCOMMANDS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-e", dest="execute", metavar="<quoted-query-string>", help="SQL from command line")
    parser.add_argument("-f", dest="file", metavar="<filename>", help="SQL from a file")
    parser.add_argument(
        "-i",
        dest="init_files",
        metavar="<filename>",
        action="append",
        default=[],
        help="initialization SQL file (repeatable)",
    )
    parser.add_argument(
        "--conf",
        dest="conf",
        metavar="<key=value>",
        type=key_value_arg,
        action="append",
        default=[],
        help="Spark configuration (repeatable)",
    )
    parser.add_argument(
        "--hiveconf",
        dest="hiveconf",
        metavar="<property=value>",
        type=key_value_arg,
        action="append",
        default=[],
        help="value for a given property (repeatable)",
    )
    parser.add_argument(
        "-d",
        "--define",
        "--hivevar",
        dest="hivevar",
        metavar="<key=value>",
        type=key_value_arg,
        action="append",
        default=[],
        help="variable set as a session configuration",
    )
    parser.add_argument("--master", help="Spark master URL, e.g. local[2]")
    parser.add_argument("--database", help="database to use")
    parser.add_argument("--warehouse", metavar="<dir>", help="warehouse directory (sqlext)")
    parser.add_argument("-S", "--silent", action="store_true", help="silent mode in interactive shell")
    parser.add_argument("-v", "--verbose", action="store_true", help="full stack traces on errors")
    return parser


USER_MESSAGE_LOGGERS = ("sqlext.procedures", "engine.services", "engine.spark.clustering",
                        "engine.spark.compaction")
"""Loggers whose INFO records are messages for the user (what a procedure or table service did, or why it
did nothing): printed as plain lines on stderr unless ``-S``, like spark-sql's own informational lines."""


class _PlainInfo(logging.Filter):
    """Passes INFO records only (warnings and errors go through the root handler, with their level)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno == logging.INFO


_messages_handler: logging.Handler | None = None


def _configure_logging(verbose: bool, err: TextIO, silent: bool = False) -> None:
    global _messages_handler
    for name in USER_MESSAGE_LOGGERS:
        logger_ = logging.getLogger(name)
        if _messages_handler is not None:
            logger_.removeHandler(_messages_handler)
        logger_.setLevel(logging.INFO if not silent else logging.NOTSET)
    _messages_handler = None
    if not verbose and not silent:
        _messages_handler = logging.StreamHandler(err)
        _messages_handler.setFormatter(logging.Formatter("%(message)s"))
        _messages_handler.addFilter(_PlainInfo())
        for name in USER_MESSAGE_LOGGERS:
            logging.getLogger(name).addHandler(_messages_handler)
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(err)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.INFO if verbose else logging.WARNING)
        root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("sqlglot").setLevel(logging.DEBUG if verbose else logging.ERROR)
    if not verbose:
        # PySpark logs every SQL error as a JSON record on stderr; the shell prints its own line.
        try:
            from pyspark.logger import PySparkLogger

            for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
                PySparkLogger.getLogger(name).disabled = True
        except ImportError:  # pragma: no cover - pyspark always installed with sqlext
            pass


def _default_factory(**kwargs: Any) -> SessionLike:
    connect: SessionFactory = importlib.import_module("sqlext.session").connect
    return connect(**kwargs)


def main(argv: Sequence[str] | None = None, session_factory: SessionFactory | None = None) -> int:
    """Entry point of the ``sqlext`` command; returns the exit code.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).
        session_factory: creates the session, called as ``factory(warehouse=, conf=, master=)``;
            default ``sqlext.session.connect``. Tests pass a fake.

    Exit codes: 0 success; 1 a statement failed (``-e``/``-f``/``-i``) or bad options / session
    start failure; 2 bad command line; 3 the ``-f``/``-i`` file cannot be read; 130 interrupted.
    """
    out, err = sys.stdout, sys.stderr
    arguments = list(argv) if argv is not None else sys.argv[1:]
    if arguments[:1] in (["metastore"], ["hive-sync"]):
        # `sqlext metastore start|stop|status`, `sqlext hive-sync --base-path ...`
        from hive_sync.cli import main as hive_sync_main

        return hive_sync_main(arguments, prog="sqlext")
    if arguments[:1] == ["serve"]:
        from sqlext.serve import main as serve_main

        return serve_main(arguments[1:])
    if arguments[:1] == ["report"]:
        from sqlext.report import main as report_main

        return report_main(arguments[1:])
    parser = build_arg_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    if args.execute is not None and args.file is not None:
        err.write("The '-e' and '-f' options cannot be specified simultaneously\n")
        return 1
    _configure_logging(args.verbose, err, args.silent)

    # Only spark.* keys go to the session builder (PySpark hands them to spark-submit, which warns
    # "Ignoring non-Spark config property" for any other); --hiveconf keys as spark.hadoop.* (the Hive
    # client's Hadoop configuration), and --define / --hiveconf keys on the running session, as spark-sql.
    hiveconf = [(k, v) for k, v in args.hiveconf if k != "hive.metastore.warehouse.dir"]
    for key, value in args.hiveconf:
        if key == "hive.metastore.warehouse.dir" and args.warehouse is None:
            args.warehouse = value
    conf: dict[str, str] = dict(args.conf)
    conf.update({k: v for k, v in args.hivevar if k.startswith("spark.")})
    conf.update(hiveconf_settings(hiveconf))
    later = session_only([*args.hivevar, *hiveconf])
    print_header = any({**conf, **later}.get(k, "").lower() == "true" for k in _HEADER_KEYS)

    factory = session_factory if session_factory is not None else _default_factory
    try:
        session = factory(warehouse=args.warehouse, conf=conf or None, master=args.master)
    except Exception as exc:  # noqa: BLE001 - report a failed start and exit
        reason = summarize(exc) if isinstance(exc, own_error_types()) else one_line(str(exc))
        err.write(f"Error: could not start the session: {reason or type(exc).__name__}\n")
        if args.verbose:
            err.write(traceback.format_exc())
        return 1

    try:
        set_session_confs(session, later)
    except Exception as exc:  # noqa: BLE001 - a refused setting ends the start like a failed session
        err.write(f"Error: could not set the session configuration: {one_line(str(exc))}\n")
        return 1
    shell = Shell(session, out, err, silent=args.silent, verbose=args.verbose, print_header=print_header)
    try:
        if args.database:
            rc = shell.run_script(f"USE {args.database}")
            if rc != 0:
                return rc
        _print_master(shell)
        for init_file in args.init_files:
            silent, shell.silent = shell.silent, True
            rc = shell.run_file(init_file)
            shell.silent = silent
            if rc != 0 or shell.quit_requested:
                return rc
        if args.execute is not None:
            return shell.run_script(args.execute)
        if args.file is not None:
            return shell.run_file(args.file)
        return shell.interactive()
    except KeyboardInterrupt:
        err.write("\n")
        return EXIT_INTERRUPTED


def _print_master(shell: Shell) -> None:
    """``Spark master: ..., Application Id: ...`` (stderr) when the session exposes its Spark."""
    context = getattr(getattr(shell.session, "spark", None), "sparkContext", None)
    if context is None or shell.silent:
        return
    try:
        shell.err.write(f"Spark master: {context.master}, Application Id: {context.applicationId}\n")
    except Exception as exc:  # noqa: BLE001 - informational only
        logger.debug("no Spark context details: %s", exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
