"""``sqlext serve``: Spark's Thrift JDBC/ODBC server (HiveServer2 protocol) over a sqlext session.

BI tools, ``beeline`` and PyHive connect to ``jdbc:hive2://<host>:<port>/default`` and read Hudi tables
through the same session catalog and ``hudi`` Python data source as ``sqlext`` itself::

    sqlext serve --port 10000 --host 127.0.0.1 --warehouse /data/wh
    sqlext serve --hiveconf hive.metastore.uris=thrift://hms:9083 --conf spark.driver.memory=4g

The session is started with :func:`sqlext.session.connect` and
``spark.sql.hive.thriftServer.singleSession=true``, so every JDBC connection shares it (and with it the
``hudi`` data source registration that Python-side ``spark.dataSource.register`` makes). The server is
``org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext`` from the pyspark jars.
It runs until SIGTERM or SIGINT, then stops the server and the session.

``--hiveconf k=v`` values start the session as ``spark.hadoop.k``, so Hive client settings such as
``hive.metastore.uris`` (point the session at a remote metastore) reach the Hadoop configuration the Hive
catalog is built from, and are set as ``k`` on the running session
(:func:`sqlext.cli_args.hiveconf_settings`): spark-submit sees ``spark.*`` keys only and prints no
"Ignoring non-Spark config property" warning.

Library code logs only; :func:`main` (the ``sqlext serve`` command) prints the one ready line with the
JDBC URL, the process id and the seconds from the command's start to the first accepted connection, to
stdout: ``JDBC server ready: jdbc:hive2://127.0.0.1:10000/default (pid 4242, started in 21.3 s)``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from sqlext.cli_args import HADOOP_PREFIX, hiveconf_settings, key_value_arg, session_only, set_session_confs
from sqlext.errors import SqlError
from sqlext.jvm import catalog_jar

if TYPE_CHECKING:
    from sqlext.session import Session

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "THRIFT_SERVER_CLASS",
    "ServeError",
    "ThriftServer",
    "build_arg_parser",
    "hiveconf_settings",
    "jdbc_url",
    "main",
    "ready_line",
    "serve",
    "server_conf",
    "wait_for_port",
]

logger = logging.getLogger(__name__)

DEFAULT_PORT = 10000
"""HiveServer2's default Thrift port."""

DEFAULT_HOST = "127.0.0.1"
"""Bind address by default: local connections only."""

DEFAULT_READY_TIMEOUT_S = 120.0
"""How long :meth:`ThriftServer.start` waits for the port to accept connections, in seconds."""

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
"""The JVM class whose ``startWithContext(SQLContext)`` starts the server."""

SINGLE_SESSION_KEY = "spark.sql.hive.thriftServer.singleSession"
PORT_KEY = "hive.server2.thrift.port"
HOST_KEY = "hive.server2.thrift.bind.host"


def _preload_catalog_classes(jvm: Any, catalog: Any) -> None:
    """Define every class of the catalog jar now, through the loader that loaded the session catalog.

    A JDBC session that closes (Hive's ``SessionState.close``) closes the URL class loaders on its thread's
    chain, which can be the one holding ``spark.jars``: a class of the jar not loaded by then could never be
    loaded again (``NoClassDefFoundError: io/sqlext/catalog/HudiTableOptions`` on a later query, seen when the
    first JDBC client was PyHive). Loading them all up front makes the order of clients irrelevant."""
    loader = catalog.getClass().getClassLoader()
    with zipfile.ZipFile(catalog_jar()) as jar:
        names = [n[:-len(".class")].replace("/", ".") for n in jar.namelist() if n.endswith(".class")]
    for name in names:
        jvm.java.lang.Class.forName(name, False, loader)
    logger.debug("preloaded %d catalog classes", len(names))


class ServeError(SqlError):
    """The JDBC server could not start or stop: the port is busy, the Thrift server classes are missing
    from the pyspark jars, the server did not accept connections in time, or bad options. The message
    says which (and the JDBC URL concerned)."""


def jdbc_url(host: str, port: int, database: str = "default") -> str:
    """The JDBC URL clients use, ``jdbc:hive2://<host>:<port>/<database>``."""
    return f"jdbc:hive2://{host}:{port}/{database}"


def server_conf(host: str, port: int, conf: Mapping[str, str] | None = None,
                hiveconf: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """The extra session confs for serving: no console progress bars unless ``conf`` says so, ``conf``, then the ``--hiveconf`` settings
    (:func:`hiveconf_settings`), then the server's own keys, which always win:
    ``spark.sql.hive.thriftServer.singleSession=true``, ``hive.server2.thrift.port`` and
    ``hive.server2.thrift.bind.host``.

    Args:
        host: bind address (e.g. ``127.0.0.1``, ``0.0.0.0``).
        port: TCP port, 1..65535.

    Raises:
        ServeError: the port is out of range.
    """
    if not 0 < port < 65536:
        raise ServeError(f"port must be between 1 and 65535, got {port}")
    settings = {"spark.ui.showConsoleProgress": "false"}  # no progress bars on a server's stderr
    settings.update({str(k): str(v) for k, v in (conf or {}).items()})
    settings.update(hiveconf_settings(hiveconf))
    settings[SINGLE_SESSION_KEY] = "true"
    for key, value in ((PORT_KEY, str(port)), (HOST_KEY, host)):
        settings.pop(key, None)  # ThriftServer.start sets the plain keys on the running session
        settings[HADOOP_PREFIX + key] = value
    return settings


def _connect_host(host: str) -> str:
    """Where to connect to reach a server bound to ``host`` (wildcard binds are reached locally)."""
    return "127.0.0.1" if host in ("", "0.0.0.0") else ("::1" if host == "::" else host)


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((_connect_host(host), port), timeout=1.0):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout_s: float,
                  failed: Callable[[], str | None] | None = None) -> float:
    """Wait until ``host:port`` accepts TCP connections.

    Args:
        timeout_s: give up after this many seconds.
        failed: polled between attempts; returns a reason when waiting is pointless (the server died).

    Returns:
        The seconds waited.

    Raises:
        ServeError: not accepting within ``timeout_s``, or ``failed`` gave a reason.
    """
    started = time.monotonic()
    while True:
        if _accepts(host, port):
            return time.monotonic() - started
        reason = failed() if failed is not None else None
        if reason:
            raise ServeError(f"the JDBC server on {host}:{port} failed to start: {reason}")
        if time.monotonic() - started > timeout_s:
            raise ServeError(f"the JDBC server on {host}:{port} did not accept connections within "
                             f"{timeout_s:.0f} s (see the Spark log on stderr)")
        time.sleep(0.25)


class ThriftServer:
    """Spark's Thrift JDBC/ODBC server running inside a sqlext session's JVM.

    ``ThriftServer(session, host, port)``; :meth:`start` returns the JDBC URL once the port accepts
    connections; :meth:`stop` stops the server (not the session). The session must have been started
    with :func:`server_conf`'s confs (single session mode, port, bind host), since the server reads them
    from the session's configuration.
    """

    def __init__(self, session: Session, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        self.session = session
        self.host = host
        self.port = port
        self._server: Any = None

    @property
    def url(self) -> str:
        """``jdbc:hive2://<host>:<port>/default``."""
        return jdbc_url(self.host, self.port)

    @property
    def running(self) -> bool:
        """True between a successful :meth:`start` and :meth:`stop`."""
        return self._server is not None

    def start(self, timeout_s: float = DEFAULT_READY_TIMEOUT_S) -> str:
        """Start the server and wait (up to ``timeout_s`` seconds) until its port accepts connections.

        Returns:
            The JDBC URL.

        Raises:
            ServeError: already started, the port is taken, the Thrift server classes are missing, the
                JVM call failed, or the port did not open in time (the server is then stopped).
        """
        if self._server is not None:
            raise ServeError(f"the JDBC server at {self.url} is already running")
        if _accepts(self.host, self.port):
            raise ServeError(f"port {self.port} on {self.host} is already in use; choose another with --port")
        spark = self.session.spark
        # The server reads its port and bind host from the session's Hadoop configuration.
        spark.conf.set(PORT_KEY, str(self.port))
        spark.conf.set(HOST_KEY, self.host)
        jvm: Any = getattr(spark, "_jvm", None) or spark.sparkContext._jvm
        try:
            # Instantiate the session catalog (sqlext's HudiSessionCatalog from `spark.jars`) now, on a
            # thread whose context class loader holds `spark.jars`. The server's connection threads may not
            # have it: without this, opening a JDBC session (its `USE default`) was seen to fail with
            # ClassNotFoundException io.sqlext.catalog.HudiSessionCatalog. The loaded plugin is cached by
            # the session's CatalogManager, which every JDBC connection shares (single session mode).
            catalog = spark._jsparkSession.sessionState().catalogManager().currentCatalog()
            _preload_catalog_classes(jvm, catalog)
        except Exception as exc:
            raise ServeError(f"could not load the session catalog before serving: {exc}") from exc
        try:
            server_class = getattr(jvm, THRIFT_SERVER_CLASS)
            self._server = server_class.startWithContext(spark._jsparkSession.sqlContext())
        except Exception as exc:  # py4j errors: missing class, the server's init failed
            self._server = None
            raise ServeError(f"could not start {THRIFT_SERVER_CLASS} on {self.host}:{self.port}: {exc}") from exc
        try:
            waited = wait_for_port(self.host, self.port, timeout_s)
        except ServeError:
            self.stop()
            raise
        logger.debug("the JDBC server's port %d accepted connections %.1f s after the server was started",
                     self.port, waited)
        return self.url

    def stop(self) -> None:
        """Stop the server if it runs (idempotent). Errors while stopping are logged, not raised."""
        server, self._server = self._server, None
        if server is None:
            return
        try:
            server.stop()
            logger.info("JDBC server at %s stopped", self.url)
        except Exception as exc:  # noqa: BLE001 - best effort on shutdown
            logger.warning("stopping the JDBC server at %s failed: %s", self.url, exc)


def _install_stop_handlers(stop: threading.Event) -> Callable[[], None]:
    """SIGTERM/SIGINT set ``stop`` (main thread only); returns a function restoring the old handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, _frame: FrameType | None) -> None:
        logger.info("received %s; stopping", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def serve(
    warehouse: str | None = None,
    conf: Mapping[str, str] | None = None,
    hiveconf: Iterable[tuple[str, str]] = (),
    master: str | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    timeout_s: float = DEFAULT_READY_TIMEOUT_S,
) -> None:
    """Start a sqlext session and a JDBC server on it, block until stopped, then stop both.

    Args:
        warehouse: warehouse folder (default as :func:`sqlext.session.connect`).
        conf: extra Spark confs.
        hiveconf: ``(key, value)`` Hive settings (see :func:`hiveconf_settings`).
        master: Spark master (default ``local[*]``).
        host, port: where the server listens.
        ready: called with the JDBC URL once the port accepts connections.
        stop: set it to stop serving; default a new event. SIGTERM and SIGINT set it when ``serve`` runs
            in the main thread (the previous handlers are restored afterwards).
        timeout_s: seconds to wait for the port to open.

    Raises:
        ServeError: bad port, the port is taken, or the server did not start.
        SqlError: the session could not start (e.g. the JVM catalog could not be built).
    """
    started = time.monotonic()
    hiveconf = list(hiveconf)
    settings = server_conf(host, port, conf, hiveconf)
    stop_event = stop if stop is not None else threading.Event()
    restore = _install_stop_handlers(stop_event)
    try:
        if _accepts(host, port):
            raise ServeError(f"port {port} on {host} is already in use; choose another with --port")
        from sqlext.session import connect

        session = connect(warehouse=warehouse, conf=settings, master=master)
        session_started = time.monotonic()
        set_session_confs(session, session_only(hiveconf))
        # PySpark's SparkContext replaced the SIGINT handler (it cancels jobs and raises KeyboardInterrupt).
        restore_pyspark = _install_stop_handlers(stop_event)
        try:
            if stop_event.is_set():
                logger.info("stop requested while the session was starting; not serving")
                return
            server = ThriftServer(session, host, port)
            server.start(timeout_s)
            now = time.monotonic()
            logger.info("JDBC server ready at %s (pid %d) after %.1f s: session %.1f s, server %.1f s", server.url,
                        os.getpid(), now - started, session_started - started, now - session_started)
            try:
                if ready is not None:
                    ready(server.url)
                while not stop_event.wait(0.5):
                    pass
            finally:
                server.stop()
        finally:
            _stop_session(session)
            restore_pyspark()
    finally:
        restore()


def _stop_session(session: Session) -> None:
    """Stop the session; when the JVM is already gone (it got the signal too) just log it."""
    try:
        session.stop()
        logger.info("session stopped")
    except Exception as exc:  # noqa: BLE001 - best effort on shutdown
        logger.warning("stopping the session failed (the JVM may have exited already): %s", exc)


def build_arg_parser() -> argparse.ArgumentParser:
    """The ``sqlext serve`` flags."""
    parser = argparse.ArgumentParser(
        prog="sqlext serve",
        description="Spark Thrift JDBC/ODBC server (HiveServer2 protocol) over a sqlext session: BI tools, "
        "beeline and PyHive query Hudi tables (and the _ro/_rt tables Hive sync registers) at "
        "jdbc:hive2://HOST:PORT/default. Statements run as plain Spark SQL; create and change Hudi tables "
        "with the sqlext shell or Session.sql. SIGTERM or Ctrl-C stops it.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"bind address (default {DEFAULT_HOST})")
    parser.add_argument("--warehouse", metavar="<dir>", help="warehouse directory")
    parser.add_argument("--conf", dest="conf", metavar="<key=value>", type=key_value_arg, action="append",
                        default=[], help="Spark configuration (repeatable)")
    parser.add_argument("--hiveconf", dest="hiveconf", metavar="<property=value>", type=key_value_arg,
                        action="append", default=[],
                        help="Hive setting, e.g. hive.metastore.uris=thrift://host:9083 (repeatable)")
    parser.add_argument("--master", help="Spark master URL, e.g. local[2]")
    parser.add_argument("--timeout", type=float, default=DEFAULT_READY_TIMEOUT_S, metavar="<seconds>",
                        help=f"wait this long for the server to start (default {DEFAULT_READY_TIMEOUT_S:.0f})")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def ready_line(url: str, pid: int, seconds: float) -> str:
    """The line ``sqlext serve`` prints once clients can connect (newline included)."""
    return f"JDBC server ready: {url} (pid {pid}, started in {seconds:.1f} s)\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sqlext serve``; returns the exit code.

    Prints ``JDBC server ready: jdbc:hive2://<host>:<port>/default (pid <pid>, started in <s> s)`` to stdout
    once clients can connect (seconds since this function was called), then serves until SIGTERM/SIGINT.

    Exit codes: 0 stopped by a signal; 1 the session or the server could not start; 2 bad command line.
    """
    started = time.monotonic()
    parser = build_arg_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.INFO if args.verbose else logging.WARNING)
    logger.setLevel(logging.INFO)

    def announce(url: str) -> None:
        sys.stdout.write(ready_line(url, os.getpid(), time.monotonic() - started))
        sys.stdout.flush()

    try:
        serve(warehouse=args.warehouse, conf=dict(args.conf), hiveconf=args.hiveconf, master=args.master,
              host=args.host, port=args.port, ready=announce, timeout_s=args.timeout)
    except SqlError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    except Exception as exc:  # noqa: BLE001 - report a failed start (py4j / Spark errors) and exit
        sys.stderr.write(f"Error: could not start the JDBC server: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
