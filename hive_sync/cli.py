"""Command line for the local Hive Metastore: ``python -m hive_sync.cli metastore start|stop|status
--port 9083 --dir ./metastore`` (to be wired into ``sqlext metastore ...``), and ``hive-sync`` (Hudi
``run_sync_tool.sh`` / ``HiveSyncTool`` main): ``python -m hive_sync.cli hive-sync --base-path P
--metastore-uris thrift://h:p [--database D --table T ...]``. Writes results to stdout; exit code 0 on
success, 1 on :class:`~hive_sync.errors.HiveSyncError`, 3 for ``status`` when stopped."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from engine.config import ConfigProperty
from hive_sync.config import HiveSyncKeys as K
from hive_sync.errors import HiveSyncError
from hive_sync.metastore import Metastore

logger = logging.getLogger(__name__)


def build_parser(prog: str = "hive_sync") -> argparse.ArgumentParser:
    """Argument parser: ``metastore {start,stop,status} [--port N] [--dir PATH] [--timeout S]`` and
    ``hive-sync --base-path P ...``; ``prog`` is the command name shown in usage lines (``sqlext``)."""
    parser = argparse.ArgumentParser(prog=prog, description="Hive Metastore tools: a local metastore service "
                                     "and Hudi's Hive sync")
    sub = parser.add_subparsers(dest="group", required=True)
    ms = sub.add_parser(
        "metastore", help="start/stop/status of a local Hive Metastore Thrift server",
        description="A local Hive Metastore service (Thrift, on an embedded Derby database in --dir), started "
        "from the jars of the pyspark package, so several sqlext sessions, sqlext serve and Hive sync share "
        "one catalog. Point sessions at it with --hiveconf hive.metastore.uris=thrift://127.0.0.1:PORT. "
        "'start' returns once it answers; 'status' exits 3 when it is stopped.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ms.add_argument("action", choices=["start", "stop", "status"], help="what to do")
    ms.add_argument("--port", type=int, default=9083, help="Thrift port")
    ms.add_argument("--dir", default="./metastore", help="metastore directory (Derby db, conf, log, pid)")
    ms.add_argument("--timeout", type=float, default=120.0, help="start: seconds to wait until ready")
    hs = sub.add_parser(
        "hive-sync", help="register/refresh a Hudi table in the Hive Metastore",
        description="Sync a Hudi table's schema and partitions to a Hive Metastore as external tables (one "
        "table for copy-on-write; <table>_ro and <table>_rt for merge-on-read), as Hudi's run_sync_tool.sh "
        "does. Defaults not shown come from the table (database default, table name from "
        "hoodie.properties, partition fields and extractor inferred).",
    )
    hs.add_argument("--base-path", required=True, help="Hudi table base path")
    for flag, prop in _VALUE_FLAGS.items():
        hs.add_argument(flag, dest=prop.key, default=None, metavar="VALUE", help=_flag_help(prop))
    for flag, prop in _BOOL_FLAGS.items():
        # --flag sets true (run_sync_tool.sh's switch), --no-flag false: an option that is on by default
        # (e.g. --auto-create-database) can be switched off from the command line too.
        hs.add_argument(flag, dest=prop.key, action=argparse.BooleanOptionalAction, default=None,
                        help=_flag_help(prop, switch="--no-" + flag[2:]))
    hs.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="any other hoodie.datasource.hive_sync.* option (repeatable)")
    return parser


_VALUE_FLAGS: dict[str, ConfigProperty[Any]] = {
    "--database": K.DATABASE, "--table": K.TABLE, "--partitioned-by": K.PARTITION_FIELDS,
    "--partition-value-extractor": K.PARTITION_EXTRACTOR_CLASS, "--metastore-uris": K.METASTORE_URIS,
    "--sync-mode": K.MODE, "--base-file-format": K.BASE_FILE_FORMAT,
    "--batch-sync-num": K.BATCH_NUM, "--spark-version": K.SPARK_VERSION,
    "--table-properties": K.TABLE_PROPERTIES, "--serde-properties": K.SERDE_PROPERTIES,
    "--sync-strategy": K.TABLE_STRATEGY, "--spark-schema-length-threshold": K.SCHEMA_STRING_LENGTH_THRESH,
    "--sync-as-datasource": K.SYNC_AS_DATASOURCE, "--jdbc-url": K.JDBC_URL, "--user": K.USERNAME,
    "--pass": K.PASSWORD,
}
"""``run_sync_tool.sh`` flags taking a value → config property (``--sync-as-datasource`` takes true/false)."""

_BOOL_FLAGS: dict[str, ConfigProperty[Any]] = {
    "--use-pre-apache-input-format": K.USE_PRE_APACHE_INPUT_FORMAT,
    "--support-timestamp": K.SUPPORT_TIMESTAMP, "--skip-ro-suffix": K.SKIP_RO_SUFFIX,
    "--auto-create-database": K.AUTO_CREATE_DATABASE, "--ignore-exceptions": K.IGNORE_EXCEPTIONS,
    "--decode-partition": K.DECODE_PARTITION, "--create-managed-table": K.CREATE_MANAGED_TABLE,
    "--omit-metafields": K.OMIT_METADATA_FIELDS, "--sync-comment": K.SYNC_COMMENT,
    "--conditional-sync": K.CONDITION_SYNC, "--use-jdbc": K.USE_JDBC,
}
"""``run_sync_tool.sh`` switch flags → config property set to ``true`` (``--no-<flag>``: ``false``)."""


def _flag_help(prop: ConfigProperty[Any], switch: str = "") -> str:
    """``sets <key>: <doc> (default: <Hudi's default>)`` for a ``hive-sync`` flag; for a switch (``switch``: its
    ``--no-`` form) ``sets <key>=true (--no-<flag>: false): ...``."""
    text = f"sets {prop.key}{f'=true ({switch}: false)' if switch else ''}: {prop.doc}".replace("%", "%%")
    return text + (f" (default: {str(prop.default).lower() if isinstance(prop.default, bool) else prop.default})"
                   if prop.default not in (None, "") else "")


def sync_options(args: argparse.Namespace) -> dict[str, str]:
    """Config map of a parsed ``hive-sync`` command line (flags and ``--conf k=v``); ``--sync-mode``
    defaults to ``hms``. Raises :class:`SyncConfigError` for a malformed ``--conf``."""
    from hive_sync.errors import SyncConfigError

    opts: dict[str, str] = {}
    for prop in list(_VALUE_FLAGS.values()) + list(_BOOL_FLAGS.values()):
        key = prop.key
        value = getattr(args, key, None)
        if isinstance(value, bool):
            opts[key] = "true" if value else "false"
        elif value is not None:
            opts[key] = str(value)
    opts.setdefault(K.MODE.key, "hms")
    for item in args.conf:
        if "=" not in item:
            raise SyncConfigError(f"--conf {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        opts[k.strip()] = v
    return opts


def _run_sync(args: argparse.Namespace) -> int:
    from hive_sync.sync_tool import sync_hudi_table

    result = sync_hudi_table(args.base_path, sync_options(args))
    for t in result.tables:
        state = "created" if t.created or t.recreated else "skipped" if t.skipped else "synced"
        sys.stdout.write(f"{result.database}.{t.table} ({t.kind}) {state}: +{len(t.partitions_added)} "
                         f"~{len(t.partitions_updated)} -{len(t.partitions_dropped)} partitions, "
                         f"last_commit_time_sync={t.last_commit_time_sync}\n")
    sys.stdout.write(f"{result.metastore_calls} metastore calls\n")
    for err in result.errors:
        sys.stderr.write(f"error: {err}\n")
    return 1 if result.errors else 0


def main(argv: Sequence[str] | None = None, prog: str = "hive_sync") -> int:
    """Run the CLI (``prog`` names the command in usage lines); returns the process exit code."""
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exc:  # --help, or a bad command line (argparse printed why)
        return int(exc.code) if isinstance(exc.code, int) else 2
    if args.group == "hive-sync":
        try:
            return _run_sync(args)
        except HiveSyncError as e:
            sys.stderr.write(f"error: {e}\n")
            return 1
    ms = Metastore(args.dir, args.port)
    out = sys.stdout
    try:
        if args.action == "start":
            uri = ms.start(timeout_s=args.timeout)
            st = ms.status()
            out.write(f"metastore running: {uri} pid={st.pid} dir={ms.directory} log={ms.log_file}\n")
            return 0
        if args.action == "stop":
            stopped = ms.stop()
            out.write("metastore stopped\n" if stopped else f"metastore not running ({ms.directory})\n")
            return 0
        st = ms.status()
        if st.running:
            out.write(f"metastore running: {st.uri} pid={st.pid} ready={st.ready} log={st.log_file}\n")
            return 0
        out.write(f"metastore stopped (dir={ms.directory}, port={st.port})\n")
        return 3
    except HiveSyncError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sys.exit(main())
