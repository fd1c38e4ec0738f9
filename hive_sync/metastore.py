"""A real Hive Metastore Thrift server (``org.apache.hadoop.hive.metastore.HiveMetaStore``, Hive 2.3.10) on
an embedded Derby database, run from the jars shipped inside the installed pyspark wheel.

Layout of a metastore directory ``<dir>``::

    <dir>/conf/hive-site.xml   Derby URL, schema auto-creation, warehouse dir, init hook
    <dir>/metastore_db/        Derby database (created on first start)
    <dir>/warehouse/           hive.metastore.warehouse.dir
    <dir>/metastore.log        stdout+stderr of the JVM
    <dir>/metastore.pid        JSON {"pid": int, "port": int}
    <dir>/derby.log            Derby's own log

This is the server that Hudi's ``HiveSyncTool`` (mode ``hms``) talks to through ``IMetaStoreClient``; see
docs/DESIGN.md §7.4.

Locks: Hive's lock API (``lock``/``check_lock``/``heartbeat``/``unlock``, used by Hudi's
``HiveMetastoreBasedLockProvider`` and :mod:`hive_sync.lock_provider`) needs Hive's ACID tables (``HIVE_LOCKS``,
``NEXT_LOCK_ID``, ``TXNS``...), which DataNucleus does not create and whose schematool scripts are not in the
jars. A metastore init hook (``io.sqlext.hms.AcidTablesInitHook``, ``hive.metastore.init.hooks``, shipped
compiled in :data:`INIT_HOOK_JAR`, built by ``python -m sqlext.jvm.build``) creates them at start with Hive's own
``TxnDbUtil.prepDb`` when missing. The server otherwise runs in production mode (``hive.in.test``, which also
creates them, would make it refuse clients that do not send test capabilities and lock requests without an
operation type, as Java Hudi's). The transaction store's JDBC pool is HikariCP (Hive 2.3's default, BoneCP, is
not in the jars). If the hook's source was edited and the jar not rebuilt, it is compiled with ``javac`` into a
cache; without ``javac`` the metastore starts without the hook and the lock API fails (logged, naming the jar
and the build command).
No lock housekeeper runs (``hive.compactor.initiator.on`` is off): a lock whose client died stays until it is
released.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from xml.sax.saxutils import escape

from engine.spark import java_jar
from hive_sync.errors import MetastoreUnavailable

logger = logging.getLogger(__name__)

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
"""Java main class of the standalone Thrift metastore server."""

INIT_HOOK_CLASS = "io.sqlext.hms.AcidTablesInitHook"
"""Metastore init hook creating Hive's ACID transaction and lock tables (``hive_sync/java``)."""

INIT_HOOK_JAR = java_jar.JavaJar(
    sources=Path(__file__).resolve().parent / "java",
    jar=Path(__file__).resolve().parent / "sqlext-hms-hook.jar",
    # the pyspark jars the hook compiles against (the whole jars directory makes javac slow)
    classpath=("hive-metastore-*.jar", "hive-common-*.jar", "hadoop-client-api-*.jar", "libthrift-*.jar",
               "slf4j-api-*.jar"),
    main_class=INIT_HOOK_CLASS,
)
"""The init hook's jar: sources ``hive_sync/java``, shipped as ``hive_sync/sqlext-hms-hook.jar``."""

LOG_TAIL_LINES = 20
"""How many trailing log lines an error message quotes."""


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now (bind to port 0, read it back, release).

    Racy by nature (another process may take it before use); good enough for tests.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already listens on ``host:port`` (a TCP connect succeeds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def pyspark_jars_dir() -> Path:
    """The ``jars`` directory of the installed pyspark wheel (holds hive-metastore 2.3.10, Derby, Thrift).

    Raises :class:`MetastoreUnavailable` when pyspark is not installed or has no jars.
    """
    try:
        import pyspark
    except ImportError as e:  # pragma: no cover - pyspark is a hard dependency
        raise MetastoreUnavailable("pyspark is not installed; its jars run the Hive Metastore") from e
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise MetastoreUnavailable(f"no hive-metastore jar under {jars}")
    return jars


def find_java() -> str:
    """Path of the ``java`` executable (``$JAVA_HOME/bin/java`` first, then ``PATH``).

    Raises :class:`MetastoreUnavailable` when none is found.
    """
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise MetastoreUnavailable("java not found (set JAVA_HOME or put java on PATH) to run the metastore")
    return found


def _pid_alive(pid: int) -> bool:
    """True when ``pid`` is a live (non-zombie) process running the metastore main class."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path(f"/proc/{pid}")
    if proc.exists():
        try:
            stat = (proc / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                return False
            return MAIN_CLASS in (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class MetastoreStatus:
    """What :meth:`Metastore.status` reports.

    ``running``: a metastore JVM recorded in the pid file is alive; ``ready``: it answers a Thrift
    ``get_all_databases`` call; ``pid``/``port`` from the pid file (``port`` falls back to the configured
    one); ``uri``: ``thrift://host:port``; ``log_file``: the JVM's log.
    """

    running: bool
    ready: bool
    port: int
    pid: int | None
    uri: str
    log_file: str


class Metastore:
    """Start, stop and inspect a local Hive Metastore Thrift server on Derby.

    ``Metastore(directory, port)``; ``start(timeout_s) -> "thrift://127.0.0.1:<port>"``; ``stop()``;
    ``status() -> MetastoreStatus``; usable as a context manager (start on enter, stop on exit).
    The JVM is detached (own session), so it outlives the Python process that started it (the CLI relies
    on that); ``stop`` finds it again through ``<dir>/metastore.pid``.
    """

    def __init__(self, directory: str | os.PathLike[str], port: int = 9083, host: str = "127.0.0.1") -> None:
        self.directory = Path(directory).resolve()
        self.port = port
        self.host = host
        self._proc: subprocess.Popen[bytes] | None = None
        self._hook_jar: Path | None = None

    # ---- paths -----------------------------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        """``<dir>/conf`` (holds ``hive-site.xml``; first on the JVM class path)."""
        return self.directory / "conf"

    @property
    def log_file(self) -> Path:
        """``<dir>/metastore.log`` (JVM stdout and stderr, appended across starts)."""
        return self.directory / "metastore.log"

    @property
    def pid_file(self) -> Path:
        """``<dir>/metastore.pid``: JSON ``{"pid": int, "port": int}`` of the running server."""
        return self.directory / "metastore.pid"

    @property
    def uri(self) -> str:
        """Thrift URI clients connect to, e.g. ``thrift://127.0.0.1:9083``."""
        return f"thrift://{self.host}:{self.port}"

    # ---- configuration ---------------------------------------------------------------------------
    def hive_site_properties(self) -> dict[str, str]:
        """The ``hive-site.xml`` properties written before each start (Derby under ``<dir>``; the ACID tables'
        init hook once it is built, see the module docstring)."""
        hook = {"hive.metastore.init.hooks": INIT_HOOK_CLASS} if self._hook_jar is not None else {}
        return {
            "javax.jdo.option.ConnectionURL":
                f"jdbc:derby:;databaseName={self.directory / 'metastore_db'};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            # Hudi's schema on read drops, renames and retypes columns (Hudi's schema evolution docs).
            "hive.metastore.disallow.incompatible.col.type.changes": "false",
            "hive.metastore.warehouse.dir": (self.directory / "warehouse").as_uri(),
            "hive.metastore.port": str(self.port),
            # The lock API's transaction store pools its JDBC connections; BoneCP (the default) is not in the jars.
            "datanucleus.connectionPoolingType": "HikariCP",
            **hook,
        }

    def write_hive_site(self) -> Path:
        """Write ``<dir>/conf/hive-site.xml`` and return its path."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"  <property>\n    <name>{escape(k)}</name>\n    <value>{escape(v)}</value>\n  </property>\n"
            for k, v in self.hive_site_properties().items())
        path = self.conf_dir / "hive-site.xml"
        path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n')
        return path

    def command(self) -> list[str]:
        """The ``java ... HiveMetaStore -p <port>`` command line. Raises MetastoreUnavailable (no java)."""
        extra = f"{self._hook_jar}{os.pathsep}" if self._hook_jar is not None else ""
        classpath = f"{self.conf_dir}{os.pathsep}{extra}{pyspark_jars_dir()}/*"
        return [
            find_java(),
            "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.selector.ClassLoaderContextSelector",
            f"-Dderby.stream.error.file={self.directory / 'derby.log'}",
            "-cp", classpath, MAIN_CLASS, "-p", str(self.port),
        ]

    def build_init_hook(self) -> Path | None:
        """The jar holding :data:`INIT_HOOK_CLASS` (:meth:`engine.spark.java_jar.JavaJar.resolve`: the shipped
        one, or one compiled from edited sources); ``None``, with a warning, when it is unusable and cannot be
        built (the metastore then runs without the lock API's tables)."""
        try:
            return INIT_HOOK_JAR.resolve()
        except java_jar.JavaBuildError as exc:
            logger.warning("metastore init hook %s not loaded: the metastore's lock API will fail for want of "
                           "Hive's ACID tables: %s", INIT_HOOK_CLASS, exc)
            return None

    # ---- pid file --------------------------------------------------------------------------------
    def _read_pid_file(self) -> tuple[int, int] | None:
        try:
            data = json.loads(self.pid_file.read_text())
            return int(data["pid"]), int(data["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def _unavailable(self, what: str) -> MetastoreUnavailable:
        return MetastoreUnavailable(
            f"Hive Metastore on port {self.port}: {what}; log {self.log_file}, last lines:\n{self._log_tail()}")

    # ---- lifecycle -------------------------------------------------------------------------------
    def ping(self, timeout_s: float = 5.0) -> bool:
        """True when a Thrift ``get_all_databases`` call on ``host:port`` succeeds within ``timeout_s``."""
        from hive_sync.client import HiveMetastoreClient

        try:
            with HiveMetastoreClient(self.uri, timeout_s=timeout_s) as client:
                client.all_databases()
            return True
        except Exception:  # noqa: BLE001 - any failure means "not ready"
            return False

    def start(self, timeout_s: float = 120.0) -> str:
        """Launch the server (detached) and wait until it answers Thrift calls; return its URI.

        Idempotent: when the pid file names a live server on the same port, returns its URI.
        Raises :class:`MetastoreUnavailable` when java/jars are missing, the port is busy, the JVM exits
        early or is not ready within ``timeout_s`` seconds (the JVM is then killed); the message names the
        port and the log file with its last lines.
        """
        recorded = self._read_pid_file()
        if recorded and _pid_alive(recorded[0]):
            if recorded[1] == self.port:
                logger.info("metastore already running (pid %d, port %d)", recorded[0], self.port)
                if not self._wait_ready(timeout_s, None):
                    raise self._unavailable(f"pid {recorded[0]} is running but not answering")
                return self.uri
            raise self._unavailable(
                f"a metastore for {self.directory} already runs on port {recorded[1]} (pid {recorded[0]})")
        if port_in_use(self.port, self.host):
            raise self._unavailable(f"port {self.port} is already in use by another process")
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "warehouse").mkdir(exist_ok=True)
        self._hook_jar = self.build_init_hook()
        self.write_hive_site()
        cmd = self.command()
        started = time.monotonic()
        with open(self.log_file, "ab") as log:
            log.write(f"\n=== starting {' '.join(cmd)}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(cmd, cwd=self.directory, stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        self.pid_file.write_text(json.dumps({"pid": self._proc.pid, "port": self.port}))
        logger.info("started metastore pid %d on port %d (log %s)", self._proc.pid, self.port, self.log_file)
        if not self._wait_ready(timeout_s, self._proc):
            code = self._proc.poll()
            self._kill(self._proc.pid)
            with contextlib.suppress(OSError):
                self.pid_file.unlink()
            what = (f"the JVM exited with code {code}" if code is not None
                    else f"not ready after {timeout_s:.0f} s")
            raise self._unavailable(what)
        logger.info("metastore ready on %s after %.1f s", self.uri, time.monotonic() - started)
        return self.uri

    def _wait_ready(self, timeout_s: float, proc: subprocess.Popen[bytes] | None) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                return False
            if port_in_use(self.port, self.host) and self.ping(timeout_s=min(10.0, timeout_s)):
                return True
            time.sleep(0.5)
        return False

    def _kill(self, pid: int, timeout_s: float = 30.0) -> None:
        """SIGTERM the server, wait up to ``timeout_s``, then SIGKILL; reaps it when we are its parent."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.pid == pid:
                if self._proc.poll() is not None:
                    return
            elif not _pid_alive(pid):
                return
            time.sleep(0.2)
        logger.warning("metastore pid %d ignored SIGTERM for %.0f s; sending SIGKILL", pid, timeout_s)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if self._proc is not None and self._proc.pid == pid:
            self._proc.wait(timeout=10)

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop the server recorded in the pid file and wait for it to exit.

        Returns True when a live server was stopped, False when none was running. Removes the pid file.
        """
        recorded = self._read_pid_file()
        pid = recorded[0] if recorded else (self._proc.pid if self._proc else None)
        stopped = False
        if pid is not None and (_pid_alive(pid) or (self._proc is not None and self._proc.poll() is None)):
            self._kill(pid, timeout_s)
            logger.info("stopped metastore pid %d (port %d)", pid, self.port)
            stopped = True
        if self._proc is not None:
            self._proc.poll()
            self._proc = None
        with contextlib.suppress(OSError):
            self.pid_file.unlink()
        return stopped

    def status(self) -> MetastoreStatus:
        """Running/ready state, pid and port of the server recorded under this directory."""
        recorded = self._read_pid_file()
        pid, port = recorded if recorded else (None, self.port)
        running = pid is not None and _pid_alive(pid)
        ready = running and Metastore(self.directory, port, self.host).ping(timeout_s=5.0)
        return MetastoreStatus(running=running, ready=ready, port=port, pid=pid if running else None,
                               uri=f"thrift://{self.host}:{port}", log_file=str(self.log_file))

    def __enter__(self) -> Metastore:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
