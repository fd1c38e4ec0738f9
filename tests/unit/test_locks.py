"""Table locks (engine.concurrency.locks): the file system lock excludes threads and processes (a shared counter
ends exact), is Hudi's lock file, is taken over when expired or when its owner died (kill -9), is released only
by its holder; the in-process lock; the lock manager's retries and its error; provider selection by Hudi class
name. JVM-free; small waits (the whole file runs in a few seconds)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from engine.concurrency.locks import (
    FILE_SYSTEM_PROVIDER,
    HIVE_METASTORE_PROVIDER,
    IN_PROCESS_PROVIDER,
    FileSystemBasedLockProvider,
    InProcessLockProvider,
    LockManager,
    LockProvider,
    lock_provider_for,
)
from engine.config import HoodieConfig
from engine.errors import ConfigError, LockError
from engine.storage import Storage

REPO = Path(__file__).resolve().parents[2]
FAST = {"hoodie.write.lock.provider": FILE_SYSTEM_PROVIDER, "hoodie.write.lock.wait_time_ms": "5000",
        "hoodie.write.lock.wait_time_ms_between_retry": "20", "hoodie.write.lock.client.num_retries": "3",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "10"}
"""Options that make waits short: 5 s per attempt, polling at most 20 ms apart."""


def fs_provider(base: Path, **options: str) -> FileSystemBasedLockProvider:
    return FileSystemBasedLockProvider(Storage.for_uri(str(base)), str(base), HoodieConfig({**FAST, **options}),
                                       table_name="trips")


def lock_file(base: Path) -> Path:
    return base / ".hoodie" / "lock"


def write_lock_file(path: Path, *, age_s: float = 0.0, **owner: object) -> None:
    """A lock file as Java Hudi writes it (LockInfo), plus ``owner`` fields, modified ``age_s`` ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    info = {"lockCreateTime": "2024-01-02 10:00:00.000", "lockThreadName": "main",
            "lockStacksInfo": ["org.apache.hudi.client.transaction.TransactionManager.beginTransaction "
                               "(TransactionManager.java:58)"], **owner}
    path.write_text(json.dumps(info, indent=2))
    stamp = time.time() - age_s
    os.utime(path, (stamp, stamp))


def bump(counter: Path) -> None:
    """A read-modify-write that loses updates unless serialised."""
    value = int(counter.read_text()) if counter.exists() else 0
    time.sleep(0.0005)
    counter.write_text(str(value + 1))


def _increment_in_process(base: str, counter: str, times: int) -> None:
    """Worker of the multi-process test: ``times`` increments, each under the table lock."""
    manager = LockManager(Storage.for_uri(base), base, "trips", HoodieConfig(FAST))
    for _ in range(times):
        with manager:
            bump(Path(counter))


# ---------------------------------------------------------------------------------------- file system lock


def test_lock_file_is_hudis_lock_info_with_its_owner(tmp_path: Path) -> None:
    provider = fs_provider(tmp_path)
    assert provider.try_lock(0)
    content = json.loads(lock_file(tmp_path).read_text())
    assert time.strptime(content["lockCreateTime"], "%Y-%m-%d %H:%M:%S.%f")
    assert content["lockThreadName"] == threading.current_thread().name
    assert content["lockStacksInfo"] and all(" (" in line for line in content["lockStacksInfo"])
    assert (content["host"], content["pid"], content["table"]) == (socket.gethostname(), os.getpid(),
                                                                   str(tmp_path))
    assert "held by this provider" in provider.describe()
    assert "held by pid" in fs_provider(tmp_path).describe()
    provider.unlock()
    assert not lock_file(tmp_path).exists()
    assert fs_provider(tmp_path).describe().endswith(": free")


def test_threads_are_serialised_and_the_holder_cannot_take_it_twice(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    inside, most_inside = [0], [0]
    errors: list[BaseException] = []

    def worker() -> None:
        manager = LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), "trips", HoodieConfig(FAST))
        try:
            for _ in range(25):
                with manager:
                    inside[0] += 1
                    most_inside[0] = max(most_inside[0], inside[0])
                    bump(counter)
                    inside[0] -= 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert int(counter.read_text()) == 150 and most_inside[0] == 1
    assert not lock_file(tmp_path).exists()

    provider = fs_provider(tmp_path)
    assert provider.try_lock(0)
    with pytest.raises(LockError, match="already held by this provider"):
        provider.try_lock(0)
    other_thread: list[bool] = []  # another thread using the same provider waits like any writer
    waiter = threading.Thread(target=lambda: other_thread.append(provider.try_lock(50)))
    waiter.start()
    waiter.join()
    assert other_thread == [False]
    provider.unlock()


def test_processes_are_serialised(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    # fork is fast (nothing to re-import); spawn when other threads run (forking them is unsafe)
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")
    workers = [context.Process(target=_increment_in_process, args=(str(tmp_path), str(counter), 50))
               for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert int(counter.read_text()) == 200
    assert not lock_file(tmp_path).exists()


def test_an_expired_lock_file_is_taken_over(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A Java Hudi writer's lock file (no owner process recorded), on another host: only its age counts.
    write_lock_file(lock_file(tmp_path), age_s=90)
    assert not fs_provider(tmp_path).try_lock(30)  # expire = 0: never expires
    assert not fs_provider(tmp_path, **{"hoodie.write.lock.filesystem.expire": "2"}).try_lock(0)
    provider = fs_provider(tmp_path, **{"hoodie.write.lock.filesystem.expire": "1"})
    with caplog.at_level(logging.WARNING, logger="engine.concurrency.locks"):
        assert provider.try_lock(0)
    assert json.loads(lock_file(tmp_path).read_text())["pid"] == os.getpid()
    assert any("took over" in r.getMessage() and "expired" in r.getMessage() for r in caplog.records)
    provider.unlock()


def test_a_lock_of_a_killed_writer_is_taken_over_at_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    code = ("import sys, time\n"
            "from tests.unit.test_locks import fs_provider\n"
            "from pathlib import Path\n"
            "assert fs_provider(Path(sys.argv[1])).try_lock(0)\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        waiter = fs_provider(tmp_path)
        assert not waiter.try_lock(100)  # a live holder keeps it (expire = 0)
        assert f"pid {holder.pid}" in waiter.describe()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert lock_file(tmp_path).exists()  # kill -9 left it behind
    with caplog.at_level(logging.WARNING, logger="engine.concurrency.locks"):
        assert waiter.try_lock(0)
    assert any(f"pid {holder.pid} on this host, no longer exists" in r.getMessage() for r in caplog.records)
    waiter.unlock()


def test_owners_judged_by_process_only_on_this_host(tmp_path: Path) -> None:
    # Left by this very process (a provider that vanished without unlocking): taken over.
    write_lock_file(lock_file(tmp_path), host=socket.gethostname(), pid=os.getpid(), token="gone")
    provider = fs_provider(tmp_path)
    assert provider.try_lock(0)
    provider.unlock()
    # A pid that does not exist here, on another host: not judged by pid, only by expiry.
    write_lock_file(lock_file(tmp_path), host="another-host", pid=2 ** 22 + 7, token="t")
    assert not fs_provider(tmp_path).try_lock(20)


def test_only_the_holder_releases_the_lock(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    holder, other = fs_provider(tmp_path), fs_provider(tmp_path)
    assert holder.try_lock(0)
    other.unlock()  # harmless
    other.close()
    assert lock_file(tmp_path).exists() and not other.try_lock(0)
    holder.unlock()
    assert other.try_lock(0)
    # The holder's file was taken over (its expiry passed) by another writer: unlock leaves the new one alone.
    stale = fs_provider(tmp_path)
    lock_file(tmp_path).unlink()
    assert stale.try_lock(0)
    write_lock_file(lock_file(tmp_path), host="another-host", pid=1, token="new-holder")
    with caplog.at_level(logging.WARNING, logger="engine.concurrency.locks"):
        stale.unlock()
    assert json.loads(lock_file(tmp_path).read_text())["token"] == "new-holder"
    assert any("left in place" in r.getMessage() for r in caplog.records)


def test_custom_lock_directory(tmp_path: Path) -> None:
    locks = tmp_path / "shared" / "locks"
    provider = fs_provider(tmp_path / "t", **{"hoodie.write.lock.filesystem.path": str(locks)})
    assert provider.try_lock(0)
    assert (locks / "lock").exists() and not lock_file(tmp_path / "t").exists()
    assert not fs_provider(tmp_path / "other", **{"hoodie.write.lock.filesystem.path": str(locks)}).try_lock(0)
    provider.close()
    assert not (locks / "lock").exists()


def test_file_system_lock_needs_a_local_file_system(tmp_path: Path) -> None:
    remote = Storage("s3://bucket/trips", pafs.LocalFileSystem())
    with pytest.raises(ConfigError, match="s3://bucket/trips/.hoodie is not on a local file system"):
        FileSystemBasedLockProvider(remote, "s3://bucket/trips", HoodieConfig(FAST), table_name="trips")
    with pytest.raises(ConfigError, match="hoodie.write.lock.filesystem.expire=-1 for table trips"):
        fs_provider(tmp_path, **{"hoodie.write.lock.filesystem.expire": "-1"})


# ---------------------------------------------------------------------------------------- in-process lock


def test_in_process_lock_is_shared_by_threads_per_base_path(tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    base = str(tmp_path / "t")
    counter = tmp_path / "counter"
    conf = HoodieConfig({**FAST, "hoodie.write.lock.provider": IN_PROCESS_PROVIDER})

    def worker() -> None:
        manager = LockManager(Storage.for_uri(base), base, "trips", conf)
        for _ in range(40):
            with manager:
                bump(counter)

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(counter.read_text()) == 200

    mine, theirs = InProcessLockProvider(base), InProcessLockProvider(base + "/")
    assert mine.try_lock(0)
    with pytest.raises(LockError, match="already held by this thread"):
        theirs.try_lock(0)  # same lock (trailing slash ignored), same thread: not re-entrant
    assert InProcessLockProvider(str(tmp_path / "other")).try_lock(0)  # another table: another lock
    result: list[bool] = []
    with caplog.at_level(logging.WARNING, logger="engine.concurrency.locks"):
        other = threading.Thread(target=lambda: (theirs.unlock(), result.append(theirs.try_lock(30))))
        other.start()
        other.join()
    assert result == [False]  # the other thread's unlock released nothing
    assert any("does not hold it" in r.getMessage() for r in caplog.records)
    assert "held by thread MainThread" in theirs.describe()
    mine.unlock()
    other = threading.Thread(target=lambda: (result.append(theirs.try_lock(0)), theirs.unlock()))
    other.start()
    other.join()
    assert result == [False, True]


# ---------------------------------------------------------------------------------------- lock manager


class ScriptedProvider:
    """A provider answering try_lock from a script (True, False, or an exception), recording the timeouts."""

    HUDI_CLASS = "com.example.ScriptedLockProvider"

    def __init__(self, script: list[object]) -> None:
        self.script = script
        self.timeouts: list[int] = []
        self.unlocked = 0
        self.closed = 0

    def try_lock(self, timeout_ms: int) -> bool:
        self.timeouts.append(timeout_ms)
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return bool(step)

    def unlock(self) -> None:
        self.unlocked += 1

    def close(self) -> None:
        self.closed += 1

    def describe(self) -> str:
        return "scripted lock: held by nobody in particular"


def test_lock_manager_retries_as_configured(tmp_path: Path) -> None:
    conf = HoodieConfig({"hoodie.write.lock.wait_time_ms": "70", "hoodie.write.lock.client.num_retries": "3",
                         "hoodie.write.lock.client.wait_time_ms_between_retry": "250"})
    slept: list[float] = []
    provider = ScriptedProvider([False, LockError("service hiccup"), False, True])
    assert isinstance(provider, LockProvider)
    manager = LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), "trips", conf, provider=provider,
                          sleep=slept.append)
    manager.lock()
    assert provider.timeouts == [70, 70, 70, 70] and slept == [0.25, 0.25, 0.25]
    manager.unlock()
    manager.close()
    assert (provider.unlocked, provider.closed) == (1, 1)

    failing = ScriptedProvider([False, LockError("metastore down")])
    manager = LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), "trips",
                          conf.overlay({"hoodie.write.lock.client.num_retries": "1"}), provider=failing,
                          sleep=slept.append)
    with pytest.raises(LockError, match="after 2 attempts.*last error: metastore down") as info:
        manager.lock()
    assert isinstance(info.value.__cause__, LockError)


def test_lock_manager_error_names_table_provider_and_holder(tmp_path: Path) -> None:
    holder = fs_provider(tmp_path)
    assert holder.try_lock(0)
    conf = HoodieConfig({**FAST, "hoodie.write.lock.wait_time_ms": "30", "hoodie.write.lock.client.num_retries": "2",
                         "hoodie.write.lock.client.wait_time_ms_between_retry": "40"})
    manager = LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), "trips", conf)
    started = time.monotonic()
    with pytest.raises(LockError) as info:
        manager.lock()
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert f"cannot lock table trips ({tmp_path}) with {FILE_SYSTEM_PROVIDER} after 3 attempts" in message
    assert f"lock file {lock_file(tmp_path)}: held by pid {os.getpid()} on host {socket.gethostname()}" in message
    assert "hoodie.write.lock.client.num_retries" in message
    assert 0.16 <= elapsed < 5
    holder.unlock()
    with manager:  # free now: the context manager holds it inside the block, releases it after
        assert lock_file(tmp_path).exists()
    assert not lock_file(tmp_path).exists()
    with pytest.raises(ConfigError, match="hoodie.write.lock.client.num_retries=-1 for table trips"):
        LockManager(Storage.for_uri(str(tmp_path)), str(tmp_path), "trips",
                    HoodieConfig({"hoodie.write.lock.client.num_retries": "-1"}))


# ---------------------------------------------------------------------------------------- provider selection


def test_provider_is_chosen_by_hudi_class_name(tmp_path: Path) -> None:
    storage, base = Storage.for_uri(str(tmp_path)), str(tmp_path)

    def provider(**options: str) -> LockProvider:
        return lock_provider_for(HoodieConfig(options), storage, base, "trips")

    assert isinstance(provider(**{"hoodie.write.lock.provider": FILE_SYSTEM_PROVIDER}), FileSystemBasedLockProvider)
    assert isinstance(provider(**{"hoodie.write.lock.provider": IN_PROCESS_PROVIDER}), InProcessLockProvider)
    supported = f"{FILE_SYSTEM_PROVIDER}, {IN_PROCESS_PROVIDER}, {HIVE_METASTORE_PROVIDER}"
    with pytest.raises(ConfigError) as unset:
        provider()
    assert "hoodie.write.lock.provider is not set for table trips" in str(unset.value)
    assert "ZookeeperBasedLockProvider" in str(unset.value) and supported in str(unset.value)
    for name in ("org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
                 "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"):
        with pytest.raises(ConfigError, match=f"hoodie.write.lock.provider={name} for table trips: .* not "
                                              f"supported .* {supported}"):
            provider(**{"hoodie.write.lock.provider": name})
    with pytest.raises(ConfigError, match="hoodie.write.lock.provider='com.acme.Lock' for table trips: unknown"):
        provider(**{"hoodie.write.lock.provider": "com.acme.Lock"})


def test_hive_metastore_provider_is_loaded_lazily_and_checks_its_keys(tmp_path: Path) -> None:
    probe = ("import sys, engine.concurrency.locks, engine.table\n"
             "assert 'hive_sync' not in sys.modules, sorted(m for m in sys.modules if 'hive' in m)\n")
    subprocess.run([sys.executable, "-c", probe], cwd=REPO, check=True,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    storage, base = Storage.for_uri(str(tmp_path)), str(tmp_path)
    hms = {"hoodie.write.lock.provider": HIVE_METASTORE_PROVIDER}
    with pytest.raises(ConfigError, match="needs hoodie.write.lock.hivemetastore.database and "
                                          "hoodie.write.lock.hivemetastore.table"):
        lock_provider_for(HoodieConfig(hms), storage, base, "trips")
    named = {**hms, "hoodie.write.lock.hivemetastore.database": "DB", "hoodie.write.lock.hivemetastore.table": "T"}
    with pytest.raises(ConfigError, match="no metastore to lock in: set hoodie.write.lock.hivemetastore.uris"):
        lock_provider_for(HoodieConfig(named), storage, base, "trips")
    with pytest.raises(ConfigError, match="hoodie.write.lock.hivemetastore.uris='http://h:1'"):
        lock_provider_for(HoodieConfig({**named, "hoodie.write.lock.hivemetastore.uris": "http://h:1"}), storage,
                          base, "trips")
    provider = lock_provider_for(HoodieConfig({**named, "hive.metastore.uris": "thrift://127.0.0.1:1"}), storage,
                                 base, "trips")  # the session's metastore; nothing is contacted yet
    assert type(provider).__module__ == "hive_sync.lock_provider"
    assert "db.t at thrift://127.0.0.1:1" in repr(provider)


def test_an_unreachable_metastore_is_a_lock_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conf = HoodieConfig({"hoodie.write.lock.provider": HIVE_METASTORE_PROVIDER,
                         "hoodie.write.lock.hivemetastore.database": "db", "hoodie.write.lock.hivemetastore.table": "t",
                         "hoodie.write.lock.hivemetastore.uris": f"thrift://127.0.0.1:{port}"})
    provider = lock_provider_for(conf, Storage.for_uri(str(tmp_path)), str(tmp_path), "trips")
    with pytest.raises(LockError, match=f"lock on db.t at thrift://127.0.0.1:{port} \\(table trips\\): "
                                        "the lock request failed: .*cannot connect"):
        provider.try_lock(100)
    assert "holder unknown" in provider.describe()
    provider.close()
