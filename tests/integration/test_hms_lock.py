"""The Hive Metastore table lock (hive_sync.lock_provider, Hudi HiveMetastoreBasedLockProvider) against the
session's real metastore (hive_sync.metastore: Hive 2.3 on Derby, whose ACID lock tables its init hook creates):
a second client waits while the first holds the lock and gets it once released; heartbeats keep it and a lock the
metastore took away is reported at unlock; a lock left by a killed writer (which this metastore never times out:
no housekeeper runs) is released by the next writer on the same host."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from engine.concurrency.locks import HIVE_METASTORE_PROVIDER, LockManager, lock_provider_for
from engine.config import HoodieConfig
from engine.errors import LockError
from engine.storage import Storage
from hive_sync.client import HiveMetastoreClient
from hive_sync.lock_provider import HiveMetastoreBasedLockProvider

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def lock_options(uri: str, table: str, **more: str) -> dict[str, str]:
    return {"hoodie.write.lock.provider": HIVE_METASTORE_PROVIDER, "hoodie.write.lock.hivemetastore.uris": uri,
            "hoodie.write.lock.hivemetastore.database": "hudi_locks", "hoodie.write.lock.hivemetastore.table": table,
            "hoodie.write.lock.wait_time_ms_between_retry": "100", **more}


def provider(uri: str, table: str, **more: str) -> HiveMetastoreBasedLockProvider:
    return HiveMetastoreBasedLockProvider(HoodieConfig(lock_options(uri, table, **more)), table_name=table)


def table_locks(uri: str, table: str) -> list[ttypes.ShowLocksResponseElement]:
    with HiveMetastoreClient(uri) as client:
        return client.show_locks("hudi_locks", table)


def test_second_writer_waits_until_the_first_releases(metastore: str, tmp_path: Path) -> None:
    table = f"t_{uuid.uuid4().hex[:8]}"
    first, second = provider(metastore, table), provider(metastore, table)
    try:
        assert first.try_lock(2000)
        [held] = table_locks(metastore, table)
        assert (held.state, held.type) == (ttypes.LockState.ACQUIRED, ttypes.LockType.EXCLUSIVE)
        assert held.agentInfo.startswith(f"hudi pid={os.getpid()} ")
        with pytest.raises(LockError, match="already held by this provider"):
            first.try_lock(0)

        started = time.monotonic()
        assert not second.try_lock(1200)
        assert time.monotonic() - started >= 1.2
        assert [e.lockid for e in table_locks(metastore, table)] == [held.lockid]  # its waiting request was released
        assert f"held by lock id {held.lockid}" in second.describe()

        # The lock manager on the same table (a third connection) waits in try_lock until the holder releases.
        conf = HoodieConfig(lock_options(metastore, table, **{"hoodie.write.lock.wait_time_ms": "20000"}))
        manager = LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), table, conf)
        got_it: list[float] = []
        waiter = threading.Thread(target=lambda: (manager.lock(), got_it.append(time.monotonic())))
        waiter.start()
        time.sleep(1.0)
        assert not got_it
        released = time.monotonic()
        first.unlock()
        waiter.join(timeout=20)
        assert got_it and got_it[0] - released < 3.0
        assert not second.try_lock(300)
        manager.unlock()
        assert second.try_lock(2000)
        second.unlock()
        manager.close()
        assert table_locks(metastore, table) == []
    finally:
        first.close()
        second.close()


def test_heartbeats_keep_the_lock_and_a_lost_lock_is_reported(metastore: str) -> None:
    table = f"t_{uuid.uuid4().hex[:8]}"
    holder = provider(metastore, table, **{"hoodie.write.lock.heartbeat_interval_ms": "600"})
    try:
        assert holder.try_lock(2000)
        [before] = table_locks(metastore, table)
        time.sleep(2.2)  # first beat after 300 ms, then every 600 ms
        [after] = table_locks(metastore, table)
        assert after.lockid == before.lockid and after.state == ttypes.LockState.ACQUIRED
        assert after.lastheartbeat > before.lastheartbeat
        assert holder._client is not None and holder._client.call_counts["heartbeat"] >= 3
        holder.unlock()
        assert table_locks(metastore, table) == []

        # The metastore drops the held lock (as its housekeeper does after hive.txn.timeout): the next
        # heartbeat finds it gone and unlock says exclusivity was lost.
        assert holder.try_lock(2000)
        [held] = table_locks(metastore, table)
        with HiveMetastoreClient(metastore) as admin:
            admin.unlock(held.lockid)
        time.sleep(1.0)
        with pytest.raises(LockError, match=f"the lock was lost while held: .*lock id {held.lockid}"):
            holder.unlock()
    finally:
        holder.close()


def test_a_lock_left_by_a_killed_writer(metastore: str, caplog: pytest.LogCaptureFixture) -> None:
    table = f"t_{uuid.uuid4().hex[:8]}"
    code = ("import sys, time\n"
            "from tests.integration.test_hms_lock import provider\n"
            "assert provider(sys.argv[1], sys.argv[2]).try_lock(5000)\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    writer = subprocess.Popen([sys.executable, "-c", code, metastore, table], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "held"
        assert not provider(metastore, table).try_lock(300)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    # What the metastore does by itself: nothing here. The lock stays ACQUIRED (Hive times such locks out only
    # in its housekeeper, after hive.txn.timeout, and this metastore runs none).
    time.sleep(0.5)
    [left] = table_locks(metastore, table)
    assert left.state == ttypes.LockState.ACQUIRED and f"pid={writer.pid} " in left.agentInfo
    # The next writer on this host sees its holder is dead and releases it.
    nxt = lock_provider_for(HoodieConfig(lock_options(metastore, table)), Storage.for_uri("/tmp"), "/tmp/t", table)
    try:
        with caplog.at_level(logging.WARNING, logger="hive_sync.lock_provider"):
            started = time.monotonic()
            assert nxt.try_lock(5000)
            assert time.monotonic() - started < 4
        assert any(f"pid {writer.pid} on this host, no longer exists" in r.getMessage() for r in caplog.records)
        assert [e.lockid for e in table_locks(metastore, table)] != [left.lockid]
    finally:
        nxt.close()
    assert table_locks(metastore, table) == []


def test_optimistic_writers_commit_under_the_metastore_lock(metastore: str, tmp_path: Path) -> None:
    """The write path end to end with Hudi's HiveMetastoreBasedLockProvider: two writers on one table, the one
    that touched the file group first wins, the other gets a retryable conflict; the lock is free afterwards."""
    import json as _json

    from engine.errors import CommitConflict
    from engine.table import Table
    from engine.timeline.commit_metadata import WriteStat
    from engine.write.commit import finish_write, start_write
    from engine.write.operation import WriteOperation
    from engine.write.rollback import rollback_instant

    schema = {"type": "record", "name": "t_record", "fields": [{"name": "id", "type": ["null", "int"],
                                                                 "default": None}]}
    table = Table.create(str(tmp_path / "t"), {
        "hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.recordkey.fields": "id",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
        "hoodie.table.create.schema": _json.dumps(schema)})
    name = f"t_{uuid.uuid4().hex[:8]}"
    conf = HoodieConfig({"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                         **lock_options(metastore, name)})

    def stat(instant: str) -> WriteStat:
        return WriteStat(file_id="fg-1", path=f"fg-1_0-1-0_{instant}.parquet", partition_path="", num_writes=1)

    first = start_write(table, WriteOperation.UPSERT, conf)
    second = start_write(Table.load(table.base_path), WriteOperation.UPSERT, conf)
    finish_write(table, second, WriteOperation.UPSERT, [stat(second.timestamp)], schema, conf=conf)
    with pytest.raises(CommitConflict, match=f"commit {second.timestamp}"):
        finish_write(table, first, WriteOperation.UPSERT, [stat(first.timestamp)], schema, conf=conf)
    rollback_instant(table, first)
    assert [i.timestamp for i in table.timeline.reload().completed_commits()] == [second.timestamp]
    assert not [lock for lock in table_locks(metastore, name) if lock.state == ttypes.LockState.ACQUIRED]
