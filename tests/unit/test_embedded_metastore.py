"""Who holds a warehouse's embedded Derby metastore: found through the database's lock file, without a JVM."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqlext.embedded_metastore import (
    HOLDER_UNKNOWN,
    WarehouseBusy,
    check_not_busy,
    derby_holder,
    is_orphaned_spark_jvm,
    metastore_dir,
)

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
time.sleep(60)
"""


def test_a_free_or_missing_metastore_is_not_busy(tmp_path: Path) -> None:
    assert derby_holder(metastore_dir(tmp_path)) is None
    metastore_dir(tmp_path).mkdir()
    (metastore_dir(tmp_path) / "dbex.lck").write_text("x")
    assert derby_holder(metastore_dir(tmp_path)) is None
    check_not_busy(tmp_path)


def test_a_held_metastore_names_the_holder_and_how_to_share(tmp_path: Path) -> None:
    metastore_dir(tmp_path).mkdir()
    lock = metastore_dir(tmp_path) / "dbex.lck"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert derby_holder(metastore_dir(tmp_path)) == holder.pid
        with pytest.raises(WarehouseBusy) as caught:
            check_not_busy(tmp_path)
        message = str(caught.value)
        assert "\n" not in message
        assert f"the warehouse {tmp_path} is in use by" in message and f"(pid {holder.pid})" in message
        assert "sqlext metastore start" in message and "hive.metastore.uris" in message
    finally:
        holder.kill()
        holder.wait()
    assert derby_holder(metastore_dir(tmp_path)) is None  # released when the holder dies, even by kill -9


# ------------------------------------------------------------------ a holder whose Python process is gone

def test_only_a_pyspark_jvm_without_its_python_parent_is_orphaned() -> None:
    java = ["/usr/lib/jvm/java-17/bin/java", "-cp", "x", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"]
    procs = {10: java, 20: ["/usr/bin/python3", "-m", "sqlext.shell"], 30: ["/sbin/tini", "--"],
             11: java, 12: java, 13: ["/usr/bin/java", "org.apache.hadoop.hive.metastore.HiveMetaStore"],
             14: ["/usr/bin/python3", "hold.py", "pyspark-shell"]}
    parents = {10: 20, 11: 1, 12: 30, 13: 1, 14: 1}

    def orphaned(pid: int) -> bool:
        return is_orphaned_spark_jvm(pid, lambda p: procs.get(p, []), parents.get)

    assert not orphaned(10)  # its Python process is alive: a live session, refused at once
    assert orphaned(11)  # re-parented to init
    assert orphaned(12)  # re-parented to a subreaper
    assert not orphaned(13)  # a metastore service, not a session's JVM
    assert not orphaned(14)  # not a JVM
    assert not orphaned(99) and not orphaned(HOLDER_UNKNOWN)  # gone or unknown


ORPHAN = """
import os, subprocess, sys, time
# The "JVM": argv[0] named java, "pyspark-shell" on its command line; it holds the lock until its parent is
# gone, then "shuts down" for a while (as PySpark's gateway does when its Python parent dies), then exits.
script = '''
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
parent = os.getppid()
while os.getppid() == parent:
    time.sleep(0.05)
time.sleep(float(sys.argv[2]))
'''
child = subprocess.Popen(["java", "-c", script, sys.argv[1], sys.argv[2], "pyspark-shell"],
                         executable=sys.executable, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONHOME": sys.base_prefix})  # argv[0] no longer finds it
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(120)
"""


def _orphan_holder(lock: Path, shutdown_s: float) -> tuple[subprocess.Popen[str], int]:
    """A fake session: a Python parent and its 'JVM' child holding ``lock``; returns (parent, child pid)."""
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN, str(lock), str(shutdown_s)], stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    pid, state = parent.stdout.readline().split()
    assert state == "locked"
    return parent, int(pid)


def _gone(pid: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        try:  # reap it if it is ours (it is not: re-parented), else wait for it to exit
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_sessions_jvm_is_waited_for_a_live_one_refused_at_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    metastore_dir(tmp_path).mkdir()
    lock = metastore_dir(tmp_path) / "dbex.lck"
    parent, jvm = _orphan_holder(lock, shutdown_s=1.5)
    try:
        started = time.monotonic()
        with pytest.raises(WarehouseBusy, match=rf"is in use by .*pid {parent.pid}|pid {jvm}"):
            check_not_busy(tmp_path)  # its Python parent is alive: refused at once
        assert time.monotonic() - started < 2.0
        assert not is_orphaned_spark_jvm(jvm)
        parent.kill()  # kill -9 of the session's Python process
        parent.wait()
        deadline = time.monotonic() + 10
        while not is_orphaned_spark_jvm(jvm) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert is_orphaned_spark_jvm(jvm)
        caplog.set_level(logging.INFO, logger="sqlext.embedded_metastore")
        started = time.monotonic()
        check_not_busy(tmp_path)  # waits for the orphan to let go, then the start goes on
        assert 0.5 < time.monotonic() - started < 15
        waits = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(waits) == 1 and f"Spark JVM (pid {jvm})" in waits[0].getMessage()
        assert "Python process is gone; waiting up to 30 s" in waits[0].getMessage()
        assert derby_holder(metastore_dir(tmp_path)) is None
    finally:
        parent.kill()
        parent.wait()
        _gone(jvm)


@pytest.mark.slow
def test_an_orphan_that_does_not_let_go_is_refused_after_the_wait(tmp_path: Path) -> None:
    metastore_dir(tmp_path).mkdir()
    parent, jvm = _orphan_holder(metastore_dir(tmp_path) / "dbex.lck", shutdown_s=30)
    try:
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while not is_orphaned_spark_jvm(jvm) and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(WarehouseBusy, match=r"still shutting down after 1 s"):
            check_not_busy(tmp_path, wait_s=1.0)
    finally:
        os.kill(jvm, signal.SIGKILL)
        _gone(jvm)
