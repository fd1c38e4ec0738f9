"""Writer heartbeats (engine.write.heartbeat) and what writers do with them (engine.write.commit /
rollback, compaction start): a live pending instant is never rolled back, a second single-mode writer fails
at once with one line, dead writers are rolled back. JVM-free; fake clocks, no minute-long sleeps."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import engine.write.commit as commit
from engine.config import HoodieConfig
from engine.errors import ConcurrentWriteError, ConfigError, TimelineError, WriteError
from engine.services.compaction import start_compaction
from engine.table import Table
from engine.write.commit import finish_write, start_write
from engine.write.heartbeat import HeartbeatClient, HeartbeatOwner, heartbeat_path, running_heartbeats
from engine.write.operation import WriteOperation
from engine.write.rollback import rollback_instant

SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t",
          "fields": [{"name": "id", "type": ["null", "int"], "default": None},
                     {"name": "ts", "type": ["null", "long"], "default": None}]}


def make_table(tmp_path: Path, name: str = "trips", table_type: str = "COPY_ON_WRITE") -> Table:
    return Table.create(str(tmp_path / name), {
        "hoodie.table.name": name, "hoodie.table.type": table_type, "hoodie.database.name": "default",
        "hoodie.table.recordkey.fields": "id", "hoodie.table.precombine.field": "ts",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
        "hoodie.table.create.schema": json.dumps(SCHEMA)})


def heartbeat_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("hudi-heartbeat-")]


class FakeClock:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self) -> float:
        return self.seconds


def foreign_heartbeat(table: Table, instant_time: str, age_s: float, host: str = "another-host",
                      pid: int = 4242) -> str:
    """A heartbeat file as a writer on ``host`` leaves it, last refreshed ``age_s`` seconds ago."""
    path = heartbeat_path(table.storage, table.base_path, instant_time)
    table.storage.write_bytes(path, HeartbeatOwner(host, pid, "t0k3n").render(instant_time))
    stamp = time.time() - age_s
    os.utime(path, (stamp, stamp))
    return path


def pending_instant(table: Table, action: str = "commit") -> str:
    """A requested + inflight write instant nobody completes."""
    timeline = table.timeline
    instant_time = timeline.new_instant_time()
    timeline.transition_to_inflight(timeline.create_requested(instant_time, action))
    return instant_time


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture(autouse=True)
def no_leaked_threads() -> object:
    yield
    assert heartbeat_threads() == [], "a heartbeat thread was left running"
    assert running_heartbeats() == []


# ---------------------------------------------------------------------------- the heartbeat itself


def test_start_writes_the_file_with_its_owner_and_stop_deletes_it(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    client = HeartbeatClient(table.storage, table.base_path, 1000, 2)
    client.start("20261123101010123")
    path = Path(table.base_path) / ".hoodie" / ".heartbeat" / "20261123101010123"
    assert path.is_file()
    owner = json.loads(path.read_text())
    assert (owner["host"], owner["pid"], owner["instant"]) == (socket.gethostname(), os.getpid(),
                                                               "20261123101010123")
    assert heartbeat_threads() == ["hudi-heartbeat-20261123101010123"]
    assert client.status("20261123101010123").live
    client.start("20261123101010123")  # already running: a no-op, still one thread
    assert heartbeat_threads() == ["hudi-heartbeat-20261123101010123"]
    client.stop("20261123101010123")
    assert not path.exists()
    assert heartbeat_threads() == []
    client.stop("20261123101010123")  # idempotent


def test_the_thread_refreshes_the_modification_time(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    client = HeartbeatClient(table.storage, table.base_path, 1000, 2)
    client.start("20261123101010123")
    path = Path(client.path("20261123101010123"))
    first = path.stat().st_mtime_ns
    deadline = time.monotonic() + 5
    while path.stat().st_mtime_ns == first and time.monotonic() < deadline:
        time.sleep(0.05)
    refreshed = path.stat().st_mtime_ns
    client.stop("20261123101010123")
    assert refreshed > first


def test_expiry_is_judged_from_the_modification_time_as_hudi(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    path = foreign_heartbeat(table, "20261123101010123", age_s=0)
    mtime_ms = os.stat(path).st_mtime_ns // 1_000_000
    clock = FakeClock(mtime_ms / 1000)
    client = HeartbeatClient(table.storage, table.base_path, 1000, 3, clock=clock)
    assert client.max_allowable_ms == 3000
    clock.seconds = (mtime_ms + 3000) / 1000  # exactly interval x misses: still live (Hudi uses '>')
    status = client.status("20261123101010123")
    assert status.live and status.last_beat_ms == mtime_ms
    assert status.owner == HeartbeatOwner("another-host", 4242, "t0k3n")
    clock.seconds = (mtime_ms + 3001) / 1000
    assert client.is_expired("20261123101010123")
    missing = client.status("20261123000000000")  # no file: last beat 0, expired (Hudi EAGER instants)
    assert missing.expired and missing.last_beat_ms == 0 and missing.owner is None


def test_an_empty_hudi_heartbeat_file_is_judged_by_its_time_alone(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    path = heartbeat_path(table.storage, table.base_path, "20261123101010123")
    table.storage.write_bytes(path, b"")
    client = HeartbeatClient(table.storage, table.base_path)
    status = client.status("20261123101010123")
    assert status.live and status.owner is None


def test_a_dead_owner_on_this_host_expires_at_once(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    client = HeartbeatClient(table.storage, table.base_path)
    foreign_heartbeat(table, "20261123101010123", age_s=0, host=socket.gethostname(), pid=dead_pid())
    status = client.status("20261123101010123")
    assert status.expired and "no longer exists" in status.reason
    foreign_heartbeat(table, "20261123101010124", age_s=0, host=socket.gethostname(), pid=os.getppid())
    assert client.status("20261123101010124").live
    foreign_heartbeat(table, "20261123101010125", age_s=0, host="another-host", pid=dead_pid())
    assert client.status("20261123101010125").live  # another host's pids say nothing here


def test_a_heartbeat_this_process_stopped_is_dead_to_it(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    client = HeartbeatClient(table.storage, table.base_path)
    client.start("20261123101010123")
    other = HeartbeatClient(table.storage, table.base_path)  # another Table object of this process
    assert other.status("20261123101010123").live
    client.stop("20261123101010123", delete=False)
    assert other.status("20261123101010123").expired
    client.stop("20261123101010123")


def test_a_missed_interval_stops_the_beat_and_aborts_the_commit(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    clock = FakeClock(1_000_000.0)
    client = HeartbeatClient(table.storage, table.base_path, 1000, 2, clock=clock)
    client.start("20261123101010123")
    try:
        clock.seconds += 1.5
        assert client.beat("20261123101010123")
        client.abort_if_expired("20261123101010123")
        clock.seconds += 2.5  # the driver stalled past interval x misses
        assert not client.beat("20261123101010123")
        with pytest.raises(WriteError, match="20261123101010123.*expired.*run the write again"):
            client.abort_if_expired("20261123101010123")
    finally:
        client.stop("20261123101010123")


def test_heartbeat_settings_are_checked(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    with pytest.raises(ConfigError, match="hoodie.client.heartbeat.interval_in_ms=500.*1000 ms"):
        HeartbeatClient.from_config(table.storage, table.base_path,
                                    HoodieConfig({"hoodie.client.heartbeat.interval_in_ms": "500"}))
    with pytest.raises(ConfigError, match="hoodie.client.heartbeat.tolerable.misses=0"):
        HeartbeatClient.from_config(table.storage, table.base_path,
                                    HoodieConfig({"hoodie.client.heartbeat.tolerable.misses": "0"}))
    client = HeartbeatClient.from_config(table.storage, table.base_path, HoodieConfig())
    assert (client.interval_ms, client.tolerable_misses) == (60000, 2)


# ---------------------------------------------------------------------------- writers


def test_a_write_keeps_a_heartbeat_until_it_commits(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    instant = start_write(table, WriteOperation.UPSERT)
    path = Path(table.base_path) / ".hoodie" / ".heartbeat" / instant.timestamp
    assert path.is_file()
    assert heartbeat_threads() == [f"hudi-heartbeat-{instant.timestamp}"]
    finish_write(table, instant, WriteOperation.UPSERT, [], SCHEMA)
    assert not path.exists()
    assert [i.timestamp for i in table.timeline.reload().completed_commits()] == [instant.timestamp]


def test_a_second_writer_fails_at_once_with_one_line(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    first = start_write(table, WriteOperation.UPSERT)
    other = Table.load(table.base_path)  # another session on the same location
    before = sorted(p.name for p in (Path(table.base_path) / ".hoodie").iterdir())
    with pytest.raises(ConcurrentWriteError) as caught:
        start_write(other, WriteOperation.INSERT)
    message = str(caught.value)
    assert "\n" not in message
    assert f"table trips at {table.base_path}" in message
    assert f"commit instant {first.timestamp} (inflight)" in message
    assert f"pid {os.getpid()} on host {socket.gethostname()}" in message
    assert "hoodie.write.concurrency.mode=single_writer" in message
    assert "hoodie.write.concurrency.mode=optimistic_concurrency_control and a hoodie.write.lock.provider" in message
    assert sorted(p.name for p in (Path(table.base_path) / ".hoodie").iterdir()) == before  # nothing created
    finish_write(table, first, WriteOperation.UPSERT, [], SCHEMA)
    second = start_write(other, WriteOperation.INSERT)  # the first has finished: now it may write
    finish_write(other, second, WriteOperation.INSERT, [], SCHEMA)
    assert [i.timestamp for i in table.timeline.reload().completed_commits()] == [first.timestamp,
                                                                                  second.timestamp]


def test_a_live_writer_on_another_host_is_never_rolled_back(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    instant_time = pending_instant(table)
    foreign_heartbeat(table, instant_time, age_s=30)
    with pytest.raises(ConcurrentWriteError, match=f"{instant_time}.*pid 4242 on host another-host"):
        start_write(Table.load(table.base_path), WriteOperation.UPSERT)
    timeline = table.timeline.reload()
    assert [i.timestamp for i in timeline.pending()] == [instant_time]
    assert not timeline.rollbacks()


@pytest.mark.parametrize("heartbeat", ["expired", "none", "dead local pid"])
def test_a_dead_writer_is_rolled_back_by_the_next(tmp_path: Path, heartbeat: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    table = make_table(tmp_path)
    instant_time = pending_instant(table)
    path = Path(heartbeat_path(table.storage, table.base_path, instant_time))
    if heartbeat == "expired":
        foreign_heartbeat(table, instant_time, age_s=121)  # default 60 s x 2 misses
    elif heartbeat == "dead local pid":
        foreign_heartbeat(table, instant_time, age_s=0, host=socket.gethostname(), pid=dead_pid())
    instant = start_write(Table.load(table.base_path), WriteOperation.UPSERT)
    finish_write(table, instant, WriteOperation.UPSERT, [], SCHEMA)
    timeline = table.timeline.reload()
    assert not timeline.pending()
    assert len(timeline.rollbacks()) == 1
    # Another writer's failed write is worth a warning (its own clean-up is INFO, tests/unit/test_shell.py).
    assert [r.getMessage().split(":")[0] for r in caplog.records
            if r.name == "engine.write.rollback" and r.levelno == logging.WARNING] == [
        f"rolled back failed commit {instant_time} of {table.base_path} (its writer stopped without finishing it)"]
    assert not path.exists()


def test_an_unsupported_concurrency_mode_is_an_error(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    nbcc = HoodieConfig({"hoodie.write.concurrency.mode": "non_blocking_concurrency_control"})
    with pytest.raises(ConfigError, match="hoodie.write.concurrency.mode=non_blocking_concurrency_control is not "
                                          "supported"):
        start_write(table, WriteOperation.UPSERT, nbcc)
    with pytest.raises(ConfigError, match="hoodie.write.concurrency.mode=bogus is not a concurrency mode"):
        start_write(table, WriteOperation.UPSERT, HoodieConfig({"hoodie.write.concurrency.mode": "bogus"}))
    with pytest.raises(ConfigError, match="hoodie.cleaner.policy.failed.writes=never is not supported"):
        start_write(table, WriteOperation.UPSERT, HoodieConfig({"hoodie.cleaner.policy.failed.writes": "NEVER"}))
    single = HoodieConfig({"hoodie.write.concurrency.mode": "single_writer",
                           "hoodie.cleaner.policy.failed.writes": "eager"})
    finish_write(table, start_write(table, WriteOperation.UPSERT, single), WriteOperation.UPSERT, [], SCHEMA)
    assert not table.timeline.reload().pending()


def test_two_writers_that_start_together_do_not_both_go_on(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    table = make_table(tmp_path)
    arrived: list[str] = []
    original = commit.rollback_failed_writes

    def other_writer_arrives(*args: object, **kwargs: object) -> list[str]:
        # Between this writer's check and its instant, a writer on another host creates its own.
        done = original(*args, **kwargs)  # type: ignore[arg-type]
        instant_time = pending_instant(table)
        foreign_heartbeat(table, instant_time, age_s=0)
        arrived.append(instant_time)
        return done

    monkeypatch.setattr(commit, "rollback_failed_writes", other_writer_arrives)
    with pytest.raises(ConcurrentWriteError, match="another-host"):
        start_write(Table.load(table.base_path), WriteOperation.UPSERT)
    timeline = table.timeline.reload()
    assert [i.timestamp for i in timeline.pending()] == arrived  # ours was withdrawn, theirs untouched
    assert sorted(p.name for p in (Path(table.base_path) / ".hoodie" / ".heartbeat").iterdir()) == arrived


def test_a_failed_commit_stops_the_heartbeat_and_the_rollback_deletes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = make_table(tmp_path)
    instant = start_write(table, WriteOperation.UPSERT)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(table.timeline, "complete", broken)
    with pytest.raises(OSError):
        finish_write(table, instant, WriteOperation.UPSERT, [], SCHEMA)
    monkeypatch.undo()
    assert heartbeat_threads() == []
    assert HeartbeatClient(table.storage, table.base_path).status(instant.timestamp).expired
    rollback_instant(table, instant)
    assert not Path(heartbeat_path(table.storage, table.base_path, instant.timestamp)).exists()
    assert not table.timeline.reload().pending()


def test_a_completed_commit_is_never_rolled_back(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    instant = start_write(table, WriteOperation.UPSERT)
    finish_write(table, instant, WriteOperation.UPSERT, [], SCHEMA)
    with pytest.raises(TimelineError, match="has completed"):
        rollback_instant(table, instant)
    assert [i.timestamp for i in table.timeline.reload().completed_commits()] == [instant.timestamp]


# ---------------------------------------------------------------------------- compaction


def inflight_compaction(table: Table) -> str:
    instant_time = table.timeline.new_instant_time()
    table.timeline.transition_to_inflight(table.timeline.create_requested(instant_time, "compaction"))
    return instant_time


def test_a_live_compaction_is_not_rolled_back_by_another_run(tmp_path: Path) -> None:
    table = make_table(tmp_path, table_type="MERGE_ON_READ")
    instant_time = inflight_compaction(table)
    foreign_heartbeat(table, instant_time, age_s=10)
    with pytest.raises(ConcurrentWriteError, match=f"compaction {instant_time} of table trips .*another-host"):
        start_compaction(table, instant_time)
    assert [(i.timestamp, i.state.name) for i in table.timeline.reload().pending()] == [(instant_time, "INFLIGHT")]
    foreign_heartbeat(table, instant_time, age_s=200)  # that process died: the next run redoes it
    assert start_compaction(table, instant_time).is_inflight


def test_writers_leave_a_pending_compaction_alone(tmp_path: Path) -> None:
    table = make_table(tmp_path, table_type="MERGE_ON_READ")
    instant_time = inflight_compaction(table)
    instant = start_write(table, WriteOperation.UPSERT)
    finish_write(table, instant, WriteOperation.UPSERT, [], SCHEMA)
    assert [i.timestamp for i in table.timeline.reload().pending()] == [instant_time]
