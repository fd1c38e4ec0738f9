"""``sqlext report <table-or-path> [--out FILE] [--warehouse DIR] [--conf k=v ...]``: write the HTML report of
one Hudi table and print its path.

The table is read from storage with the engine; no Spark session is started, so a table *name* is resolved
by directory the way sqlext lays out managed tables (``<warehouse>/<name>`` in ``default``,
``<warehouse>/<db>.db/<name>`` otherwise), not through the catalog.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.errors import EngineError
from engine.table import Table
from sqlext.cli_args import key_value_arg
from sqlext.report.model import collect
from sqlext.report.page import render

logger = logging.getLogger(__name__)

WAREHOUSE_ENV = "SQLEXT_WAREHOUSE"
"""The environment variable naming the default warehouse (as :mod:`sqlext.session` reads it)."""


class ReportError(Exception):
    """A table or path the report cannot be made for; the message names it."""


def build_arg_parser() -> argparse.ArgumentParser:
    """The flags of ``sqlext report``."""
    parser = argparse.ArgumentParser(
        prog="sqlext report",
        description="Write one self-contained HTML page (inline SVG charts, no network) about a Hudi table: "
        "its timeline, base file sizes against the small-file limits, log files per file slice, and pending "
        "and recent table services. The table is read from storage without starting Spark.",
        epilog="TABLE is a base path (anything with a '/', or a directory holding .hoodie) or a table name "
        "[db.]name. A name is resolved by directory, not through the catalog: <warehouse>/<name> for the "
        "default database, <warehouse>/<db>.db/<name> otherwise (a plain name is also looked for in every "
        "<db>.db). Tables created with LOCATION elsewhere need their base path. Writer settings kept in the "
        "catalog's TBLPROPERTIES (e.g. hoodie.parquet.small.file.limit) are not visible without Spark: pass "
        "them with --conf.")
    parser.add_argument("table", metavar="TABLE", help="base path, or [db.]name in the warehouse")
    parser.add_argument("--out", metavar="FILE", help="output file (default: ./<table name>-report.html)")
    parser.add_argument("--warehouse", metavar="DIR",
                        help=f"warehouse folder for table names (default ${WAREHOUSE_ENV} or ./warehouse)")
    parser.add_argument("--conf", metavar="KEY=VALUE", action="append", type=key_value_arg, default=[],
                        help="hoodie.* setting on top of hoodie.properties, e.g. "
                        "hoodie.parquet.small.file.limit=104857600 (repeatable)")
    parser.add_argument("--recent", metavar="N", type=int, default=10,
                        help="completed table services to list (default 10)")
    parser.add_argument("--no-archived", dest="archived", action="store_false",
                        help="do not read the archived timeline")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what is read (stderr)")
    return parser


def _is_table(path: str) -> bool:
    try:
        return Table.exists(path)
    except (EngineError, OSError, ValueError):
        return False


def resolve_base_path(argument: str, warehouse: str | None = None) -> str:
    """The base path ``argument`` names.

    Args:
        argument: a base path (contains ``/`` or is a directory holding ``.hoodie``) or ``[db.]name``.
        warehouse: the warehouse folder (default ``$SQLEXT_WAREHOUSE`` or ``./warehouse``).

    Returns:
        the base path (local paths made absolute; URIs as given).

    Raises:
        ReportError: a name that matches no table folder, or several (naming the folders looked at).
    """
    if "://" in argument:
        return argument
    if "/" in argument or os.sep in argument or (Path(argument) / ".hoodie").is_dir():
        return os.path.abspath(argument)
    root = Path(warehouse or os.environ.get(WAREHOUSE_ENV, "warehouse")).resolve()
    database, _, name = argument.lower().rpartition(".")
    if not name:
        raise ReportError(f"'{argument}' is not a table name ([db.]name) or a base path")
    if database:
        candidates = [root / name] if database == "default" else [root / f"{database}.db" / name]
    else:
        candidates = [root / name, *sorted(root.glob(f"*.db/{name}"))]
    found = [c for c in candidates if _is_table(str(c))]
    if len(found) > 1 and not database and found[0] == root / name:
        found = found[:1]  # the default database wins, as for an unqualified name in a new session
    if not found:
        looked = ", ".join(str(c) for c in candidates[:1]) + (f" and {root}/*.db/{name}" if not database else "")
        raise ReportError(f"no Hudi table '{argument}' in the warehouse {root} (looked for {looked}); give the "
                          "table's base path if it was created with LOCATION, or --warehouse")
    if len(found) > 1:
        raise ReportError(f"table name '{argument}' is ambiguous in the warehouse {root}: "
                          f"{', '.join(str(f) for f in found)}; qualify it as db.name")
    return str(found[0])


def default_output(table_name: str) -> Path:
    """``./<table name>-report.html`` with characters other than letters, digits, ``.``, ``_``, ``-``
    replaced by ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", table_name).strip(".") or "table"
    return Path.cwd() / f"{safe}-report.html"


def write_report(base_path: str, out: str | os.PathLike[str] | None = None,
                 overrides: dict[str, str] | None = None, *, recent: int = 10, archived: bool = True) -> Path:
    """Read the table at ``base_path`` and write its report.

    Returns:
        the written file.

    Raises:
        TableNotFound, CorruptFile, UnsupportedTable: no readable v6 table there.
        ConfigError: a malformed size setting.
        StorageError: the table cannot be listed.
        OSError: the output cannot be written.
    """
    table = Table.load(base_path)
    report = collect(table, overrides, recent=recent, archived=archived)
    target = Path(out) if out is not None else default_output(table.name)
    target.write_text(render(report, generated_at=_dt.datetime.now().astimezone()), encoding="utf-8")
    logger.info("wrote the report of %s to %s", base_path, target)
    return target.resolve()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sqlext report``; returns the exit code.

    Prints the written file's path to stdout. Exit codes: 0 written; 1 the table cannot be found or read,
    or the file cannot be written (one line on stderr naming the table); 2 bad command line.
    """
    parser = build_arg_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    root = logging.getLogger()
    if not root.handlers:  # the command's own process: what could not be read is listed in the page itself
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.INFO if args.verbose else logging.ERROR)
        root.addHandler(handler)
        if args.verbose:
            root.setLevel(logging.INFO)
    if args.recent < 0:
        sys.stderr.write(f"Error: sqlext report {args.table}: --recent must be 0 or more, got {args.recent}\n")
        return 2
    try:
        base_path = resolve_base_path(args.table, args.warehouse)
        written = write_report(base_path, args.out, dict(args.conf), recent=args.recent, archived=args.archived)
    except (ReportError, EngineError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"Error: sqlext report {args.table}: {message}\n")
        return 1
    sys.stdout.write(f"{written}\n")
    return 0
