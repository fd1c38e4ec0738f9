"""Who holds a warehouse's embedded Derby metastore: found through the database's lock file, without a JVM."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sqlext.embedded_metastore import WarehouseBusy, check_not_busy, derby_holder, metastore_dir

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
