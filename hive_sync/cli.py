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

from hive_sync.config import HiveSyncKeys as K
from hive_sync.errors import HiveSyncError
from hive_sync.metastore import Metastore

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """Argument parser: ``metastore {start,stop,status} [--port N] [--dir PATH] [--timeout S]``."""
    parser = argparse.ArgumentParser(prog="hive_sync", description="Local Hive Metastore (Thrift, Derby)")
    sub = parser.add_subparsers(dest="group", required=True)
    ms = sub.add_parser("metastore", help="start/stop/status of a local Hive Metastore Thrift server")
    ms.add_argument("action", choices=["start", "stop", "status"])
    ms.add_argument("--port", type=int, default=9083, help="Thrift port (default 9083)")
    ms.add_argument("--dir", default="./metastore", help="metastore directory (Derby db, conf, log, pid)")
    ms.add_argument("--timeout", type=float, default=120.0, help="start: seconds to wait until ready")
    hs = sub.add_parser("hive-sync", help="register/refresh a Hudi table in the Hive Metastore")
    hs.add_argument("--base-path", required=True, help="Hudi table base path")
    for flag, key in _VALUE_FLAGS.items():
        hs.add_argument(flag, dest=key, default=None, help=f"sets {key}")
    for flag, key in _BOOL_FLAGS.items():
        hs.add_argument(flag, dest=key, action="store_const", const="true", default=None, help=f"sets {key}=true")
    hs.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="any other option")
    return parser


_VALUE_FLAGS = {
    "--database": K.DATABASE.key, "--table": K.TABLE.key, "--partitioned-by": K.PARTITION_FIELDS.key,
    "--partition-value-extractor": K.PARTITION_EXTRACTOR_CLASS.key, "--metastore-uris": K.METASTORE_URIS.key,
    "--sync-mode": K.MODE.key, "--base-file-format": K.BASE_FILE_FORMAT.key,
    "--batch-sync-num": K.BATCH_NUM.key, "--spark-version": K.SPARK_VERSION.key,
    "--table-properties": K.TABLE_PROPERTIES.key, "--serde-properties": K.SERDE_PROPERTIES.key,
    "--sync-strategy": K.TABLE_STRATEGY.key, "--spark-schema-length-threshold": K.SCHEMA_STRING_LENGTH_THRESH.key,
    "--sync-as-datasource": K.SYNC_AS_DATASOURCE.key, "--jdbc-url": K.JDBC_URL.key, "--user": K.USERNAME.key,
    "--pass": K.PASSWORD.key,
}
"""``run_sync_tool.sh`` flags taking a value → config key (``--sync-as-datasource`` takes true/false)."""

_BOOL_FLAGS = {
    "--use-pre-apache-input-format": K.USE_PRE_APACHE_INPUT_FORMAT.key,
    "--support-timestamp": K.SUPPORT_TIMESTAMP.key, "--skip-ro-suffix": K.SKIP_RO_SUFFIX.key,
    "--auto-create-database": K.AUTO_CREATE_DATABASE.key, "--ignore-exceptions": K.IGNORE_EXCEPTIONS.key,
    "--decode-partition": K.DECODE_PARTITION.key, "--create-managed-table": K.CREATE_MANAGED_TABLE.key,
    "--omit-metafields": K.OMIT_METADATA_FIELDS.key, "--sync-comment": K.SYNC_COMMENT.key,
    "--conditional-sync": K.CONDITION_SYNC.key, "--use-jdbc": K.USE_JDBC.key,
}
"""``run_sync_tool.sh`` switch flags → config key set to ``true``."""


def sync_options(args: argparse.Namespace) -> dict[str, str]:
    """Config map of a parsed ``hive-sync`` command line (flags and ``--conf k=v``); ``--sync-mode``
    defaults to ``hms``. Raises :class:`SyncConfigError` for a malformed ``--conf``."""
    from hive_sync.errors import SyncConfigError

    opts: dict[str, str] = {}
    for key in list(_VALUE_FLAGS.values()) + list(_BOOL_FLAGS.values()):
        value = getattr(args, key, None)
        if value is not None:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
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
