"""The embedded default's catalog: a Derby metastore inside the warehouse folder, one process at a time.

Derby admits a single JVM per database; a second ``sqlext``, ``sqlext serve`` or ``spark-sql`` on the same
warehouse fails deep inside Hive's client with thousands of log lines. Before a session starts, sqlext asks
whether another process holds the database (Derby keeps an exclusive file lock on ``metastore_db/dbex.lck``
while a JVM has it booted, released when that JVM exits, even by ``kill -9``) and stops with one line that
names the warehouse, the process that holds it and how to share a warehouse between processes.

One holder is waited for instead: the Spark JVM of a session whose Python process died (``kill -9``, a crash).
PySpark's JVM exits when its Python parent's pipe closes, but it keeps the lock while it shuts down (seconds);
a writer restarted at once was refused in 2 of 8 rounds. Such an orphaned JVM — launched by PySpark
(``pyspark-shell`` on its command line) and re-parented (its parent is no longer a Python process) — is waited
for, up to :data:`ORPHAN_WAIT_S` seconds, with one log line saying so. A live holder is refused at once.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from sqlext.errors import SqlError

logger = logging.getLogger(__name__)

METASTORE_DIR = "metastore_db"
_LOCK_FILE = "dbex.lck"
HOLDER_UNKNOWN = -1
""":func:`derby_holder` when the database is held but the holder's pid cannot be read."""


ORPHAN_WAIT_S = 30.0
"""How long :func:`check_not_busy` waits for an orphaned Spark JVM to release the metastore, in seconds."""

_POLL_S = 0.2


class WarehouseBusy(SqlError):
    """Another process has the warehouse's embedded Derby metastore open."""


def metastore_dir(warehouse: Path) -> Path:
    """``<warehouse>/metastore_db``: where the embedded default keeps its Derby catalog."""
    return warehouse / METASTORE_DIR


def _lock_owner(path: Path) -> int:
    """The pid holding a POSIX lock on ``path`` (Linux ``/proc/locks``), else :data:`HOLDER_UNKNOWN`."""
    try:
        inode = path.stat().st_ino
        with open("/proc/locks", encoding="ascii") as locks:
            for line in locks:
                fields = line.split()
                # "1: POSIX  ADVISORY  WRITE 12484 fe:00:2154913 0 EOF"
                if len(fields) >= 6 and fields[5].rsplit(":", 1)[-1] == str(inode):
                    return int(fields[4])
    except (OSError, ValueError):
        pass
    return HOLDER_UNKNOWN


def derby_holder(database: Path) -> int | None:
    """Who has the Derby database at ``database`` open.

    Returns:
        ``None`` when no process holds it (or it does not exist yet); else the holder's pid, or
        :data:`HOLDER_UNKNOWN` when it is held but the pid cannot be read.
    """
    lock = database / _LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return _lock_owner(lock)
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [w.decode(errors="replace") for w in raw.split(b"\0") if w]


def _parent(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _describe(pid: int) -> str:
    """``another process``, or what holds the database: the sqlext command (``sqlext serve``) that
    started the JVM, the Java main class (a metastore service), or a Spark JVM."""
    if pid == HOLDER_UNKNOWN:
        return "another process"
    words = _cmdline(pid)
    main_class = next((w for w in words if w.startswith("org.apache.")), None)
    if main_class is not None and main_class != "org.apache.spark.deploy.SparkSubmit":
        return f"{main_class.rsplit('.', 1)[-1]} (pid {pid})"
    parent = _parent(pid)
    launcher = _cmdline(parent) if parent else []
    sqlext_at = next((i for i, w in enumerate(launcher) if Path(w).name == "sqlext" or w == "sqlext.shell"), None)
    if parent and sqlext_at is not None:
        command = " ".join(["sqlext", *launcher[sqlext_at + 1:sqlext_at + 2]]).strip()
        if command == "sqlext serve":
            return f"`sqlext serve` (pid {parent})"
        return f"another `sqlext` session (pid {parent})"
    return f"a Spark JVM (pid {pid})"


def busy_message(warehouse: Path, pid: int) -> str:
    """The one line that says the warehouse is busy, who holds it and how to share it."""
    return (
        f"the warehouse {warehouse} is in use by {_describe(pid)}: its embedded Derby metastore "
        f"({metastore_dir(warehouse)}) admits one process at a time. Stop that process, or share the warehouse "
        "through a metastore service: run `sqlext metastore start`, then start every session with "
        "`--hiveconf hive.metastore.uris=thrift://127.0.0.1:9083`"
    )


def _is_python(words: list[str]) -> bool:
    return bool(words) and Path(words[0]).name.startswith("python")


def is_orphaned_spark_jvm(pid: int, cmdline: Callable[[int], list[str]] = _cmdline,
                          parent: Callable[[int], int | None] = _parent) -> bool:
    """Whether ``pid`` is a Spark JVM that PySpark launched (``pyspark-shell`` on its command line, a java
    process) whose Python process is gone: the JVM was re-parented (to init or a subreaper), so its parent is
    no longer a Python process. Such a JVM is shutting down (PySpark's gateway exits when its parent's pipe
    closes). ``cmdline`` and ``parent`` read ``/proc`` (tests pass fakes).
    """
    if pid <= 0:
        return False
    words = cmdline(pid)
    if "pyspark-shell" not in words or not words or not Path(words[0]).name.startswith("java"):
        return False
    parent_pid = parent(pid)
    if parent_pid is None or parent_pid <= 1:
        return True
    return not _is_python(cmdline(parent_pid))


def check_not_busy(warehouse: Path, wait_s: float = ORPHAN_WAIT_S) -> None:
    """Raise before a session starts on ``warehouse`` when another process holds its Derby metastore.

    When the holder is an orphaned Spark JVM (:func:`is_orphaned_spark_jvm`: the Python process of a killed
    session is gone, its JVM still shutting down), wait up to ``wait_s`` seconds for it to let go, logging
    one line; a live holder is refused at once.

    Raises:
        WarehouseBusy: with :func:`busy_message` (after the wait, when the orphan still holds it).
    """
    database = metastore_dir(warehouse)
    pid = derby_holder(database)
    if pid is None:
        return
    if not is_orphaned_spark_jvm(pid):
        raise WarehouseBusy(busy_message(warehouse, pid))
    logger.warning("the warehouse %s is still held by the Spark JVM (pid %d) of a session whose Python process "
                   "is gone; waiting up to %.0f s for it to shut down", warehouse, pid, wait_s)
    started = time.monotonic()
    while time.monotonic() - started < wait_s:
        time.sleep(_POLL_S)
        pid = derby_holder(database)
        if pid is None:
            logger.info("the warehouse %s was released after %.1f s", warehouse, time.monotonic() - started)
            return
        if pid != HOLDER_UNKNOWN and _cmdline(pid) and not is_orphaned_spark_jvm(pid):
            raise WarehouseBusy(busy_message(warehouse, pid))  # a live process took it meanwhile
        # else the orphan still holds it, or it is exiting (a zombie has no command line)
    raise WarehouseBusy(busy_message(warehouse, pid) + f" (its Python process is gone; it was still shutting "
                        f"down after {wait_s:.0f} s)")


def is_derby_boot_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` (a Spark/py4j error) is Derby's "Another instance of Derby may have already booted
    the database" (``XSDB6``), or Hive's failure to open a metastore client that it causes."""
    text = str(exc)
    return "XSDB6" in text or "Another instance of Derby" in text or (
        "Unable to instantiate org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient" in text)
