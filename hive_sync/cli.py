"""Command line for the local Hive Metastore: ``python -m hive_sync.cli metastore start|stop|status
--port 9083 --dir ./metastore`` (to be wired into ``sqlext metastore ...``). Writes results to stdout;
exit code 0 on success, 1 on :class:`~hive_sync.errors.HiveSyncError`, 3 for ``status`` when stopped."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
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
