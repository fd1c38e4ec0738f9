"""Writer heartbeats (Hudi 0.14 ``HoodieHeartbeatClient``, ``HeartbeatUtils``, ``HoodieHeartbeatUtils``).

A writer that starts an instant keeps the file ``<base>/.hoodie/.heartbeat/<instant time>`` fresh: it is
written once, synchronously, before the instant's requested file is created, then rewritten every
``hoodie.client.heartbeat.interval_in_ms`` by a daemon thread of the driver, and deleted when the instant
completes or is rolled back. Liveness is judged, as Hudi does, from the file's **modification time**: the
heartbeat of an instant is expired when ``now - mtime > interval_in_ms * tolerable.misses``; an instant
without a heartbeat file has its last heartbeat at 0, so it is expired too (a write by Apache Hudi with the
EAGER failed-writes policy, by an older version of this engine, or one that crashed before its first beat).

Beyond Hudi (Hudi writes an empty file and reads only its modification time, so Hudi readers are
unaffected): the file holds a small JSON object naming its owner, ``{"host", "pid", "token", "instant"}``.
A heartbeat whose owner is a process *on this host* that no longer exists, or this very process when it no
longer runs that heartbeat (``token``), counts as expired at once. A writer killed with ``kill -9`` (or a
Python write that died without cleaning up) therefore does not block the next writer on the same host for
``interval * misses`` (two minutes by default); owners on other hosts are judged by the modification time
alone, as in Hudi.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.config import HoodieConfig, WriteConfig
from engine.errors import ConfigError, StorageError, WriteError
from engine.storage import Storage

logger = logging.getLogger(__name__)

HEARTBEAT_FOLDER = ".heartbeat"
"""Folder under ``.hoodie`` holding one heartbeat file per running instant (Hudi ``HEARTBEAT_FOLDER_NAME``)."""

MIN_INTERVAL_MS = 1000
"""Hudi refuses heartbeat intervals below one second ("Cannot set heartbeat lower than 1 second")."""


def heartbeat_folder(storage: Storage, base_path: str) -> str:
    """``<base>/.hoodie/.heartbeat`` (Hudi ``HoodieTableMetaClient.getHeartbeatFolderPath``)."""
    return storage.join(base_path, ".hoodie", HEARTBEAT_FOLDER)


def heartbeat_path(storage: Storage, base_path: str, instant_time: str) -> str:
    """``<base>/.hoodie/.heartbeat/<instant_time>``."""
    return storage.join(heartbeat_folder(storage, base_path), instant_time)


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (signal 0 probes without signalling); a zombie (exited, not
    yet reaped by its parent, seen in ``/proc/<pid>/stat`` where there is one) does not count."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    except OSError as exc:
        if exc.errno == errno.ESRCH:
            return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


@dataclass(frozen=True)
class HeartbeatOwner:
    """Who writes a heartbeat (not in Hudi: its files are empty).

    Attributes:
        host: ``socket.gethostname()`` of the writer's driver.
        pid: the driver's process id.
        token: random id of this one heartbeat run, so the owning process can tell its own stopped
            heartbeats from running ones.
    """

    host: str
    pid: int
    token: str

    def render(self, instant_time: str) -> bytes:
        """The heartbeat file content (one line of JSON)."""
        return json.dumps({"host": self.host, "pid": self.pid, "token": self.token,
                           "instant": instant_time}, separators=(",", ":")).encode()

    @staticmethod
    def parse(data: bytes) -> HeartbeatOwner | None:
        """The owner written by :meth:`render`, or ``None`` for an empty (Hudi) or unreadable file."""
        try:
            value = json.loads(data.decode()) if data.strip() else None
            if not isinstance(value, dict):
                return None
            return HeartbeatOwner(str(value["host"]), int(value["pid"]), str(value.get("token") or ""))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None

    def describe(self) -> str:
        """``pid 123 on host h``."""
        return f"pid {self.pid} on host {self.host}"


@dataclass(frozen=True)
class HeartbeatStatus:
    """What the heartbeat of one instant says, as read by another writer.

    Attributes:
        instant_time: the instant.
        last_beat_ms: modification time of the heartbeat file (ms since the epoch); 0 when there is no
            file (Hudi ``getLastHeartbeatTime``).
        owner: the writer named in the file, when it names one.
        expired: whether the writer is taken to be dead (see the module docstring).
        reason: why it is expired (empty when live).
    """

    instant_time: str
    last_beat_ms: int
    owner: HeartbeatOwner | None
    expired: bool
    reason: str = ""

    @property
    def live(self) -> bool:
        """Not expired."""
        return not self.expired

    def describe(self, now_ms: int) -> str:
        """``pid 123 on host h, last heartbeat 3 s ago`` (or without owner)."""
        ago = f"last heartbeat {max(0, now_ms - self.last_beat_ms) / 1000:.0f} s ago"
        return f"{self.owner.describe()}, {ago}" if self.owner else ago


class _Beat:
    """One running heartbeat: its thread, stop event and last beat time."""

    def __init__(self, path: str, instant_time: str, owner: HeartbeatOwner) -> None:
        self.path = path
        self.instant_time = instant_time
        self.owner = owner
        self.stop_event = threading.Event()
        self.last_beat_ms: int | None = None
        self.missed = False
        self.thread: threading.Thread | None = None


_LOCK = threading.Lock()
_RUNNING: dict[str, _Beat] = {}
"""Heartbeats running in this process, by heartbeat file path."""
_RUNNING_TOKENS: set[str] = set()


def running_heartbeats() -> list[str]:
    """Heartbeat file paths this process currently refreshes (for diagnostics and tests)."""
    with _LOCK:
        return sorted(_RUNNING)


class HeartbeatClient:
    """Starts, refreshes, stops and judges heartbeats of one table (Hudi ``HoodieHeartbeatClient``).

    Args:
        storage: the table's storage.
        base_path: the table's base path.
        interval_ms: refresh interval (``hoodie.client.heartbeat.interval_in_ms``, at least 1000).
        tolerable_misses: missed beats before a heartbeat expires
            (``hoodie.client.heartbeat.tolerable.misses``, at least 1).
        clock: seconds since the epoch (``time.time``); tests pass a fake one.

    Raises:
        ConfigError: an interval below one second or fewer than one tolerable miss.

    Running heartbeats are held process-wide, so another client of the same table (another ``Table``
    object in this process) can stop them and sees them as running.
    """

    def __init__(self, storage: Storage, base_path: str, interval_ms: int = 60000, tolerable_misses: int = 2,
                 *, clock: Callable[[], float] = time.time) -> None:
        if interval_ms < MIN_INTERVAL_MS:
            raise ConfigError(f"{WriteConfig.HEARTBEAT_INTERVAL_MS.key}={interval_ms} for table {base_path}: "
                              f"cannot set heartbeat lower than {MIN_INTERVAL_MS} ms")
        if tolerable_misses < 1:
            raise ConfigError(f"{WriteConfig.HEARTBEAT_TOLERABLE_MISSES.key}={tolerable_misses} for table "
                              f"{base_path}: must be at least 1")
        self.storage = storage
        self.base_path = base_path
        self.interval_ms = interval_ms
        self.tolerable_misses = tolerable_misses
        self.clock = clock

    @staticmethod
    def from_config(storage: Storage, base_path: str, conf: HoodieConfig) -> HeartbeatClient:
        """A client with the interval and tolerable misses of ``conf``.

        Raises:
            ConfigError: malformed or out-of-range values.
        """
        return HeartbeatClient(storage, base_path, conf.get(WriteConfig.HEARTBEAT_INTERVAL_MS),
                               conf.get(WriteConfig.HEARTBEAT_TOLERABLE_MISSES))

    @property
    def max_allowable_ms(self) -> int:
        """``interval_ms * tolerable_misses`` (Hudi ``maxAllowableHeartbeatIntervalInMs``)."""
        return self.interval_ms * self.tolerable_misses

    def now_ms(self) -> int:
        """The clock in milliseconds since the epoch."""
        return int(self.clock() * 1000)

    def path(self, instant_time: str) -> str:
        """The heartbeat file of ``instant_time``."""
        return heartbeat_path(self.storage, self.base_path, instant_time)

    # ------------------------------------------------------------------ the writer's side

    def start(self, instant_time: str) -> None:
        """Write the first beat now (blocking) and start the daemon thread refreshing it; a no-op when this
        process already runs the heartbeat of ``instant_time``.

        Raises:
            StorageError: the first beat could not be written (nothing is left running).
        """
        path = self.path(instant_time)
        with _LOCK:
            if path in _RUNNING:
                return
            beat = _Beat(path, instant_time, HeartbeatOwner(socket.gethostname(), os.getpid(), uuid.uuid4().hex))
            _RUNNING[path] = beat
            _RUNNING_TOKENS.add(beat.owner.token)
        try:
            self._write_beat(beat)
        except BaseException:
            self._forget(beat)
            raise
        thread = threading.Thread(target=self._run, args=(beat,), name=f"hudi-heartbeat-{instant_time}",
                                  daemon=True)
        beat.thread = thread
        thread.start()
        logger.info("started heartbeat %s (every %d ms)", path, self.interval_ms)

    def _write_beat(self, beat: _Beat) -> None:
        now = self.now_ms()
        # Atomic: a writer killed mid-beat leaves the previous beat or none, never an empty file (an empty one
        # reads as an owner-less Hudi heartbeat, live for interval x misses although its writer is dead).
        self.storage.write_atomic(beat.path, beat.owner.render(beat.instant_time))
        beat.last_beat_ms = now

    def beat(self, instant_time: str) -> bool:
        """Refresh the heartbeat of ``instant_time`` once (what the thread does every interval; Hudi
        ``updateHeartbeat``). When the previous beat is already older than :attr:`max_allowable_ms`, other
        writers may have rolled the instant back: the heartbeat is not refreshed any more and the write
        aborts at commit (:meth:`abort_if_expired`).

        Returns:
            Whether the heartbeat was refreshed.
        """
        with _LOCK:
            beat = _RUNNING.get(self.path(instant_time))
        if beat is None or beat.missed or beat.stop_event.is_set():
            return False
        if beat.last_beat_ms is not None and self.now_ms() - beat.last_beat_ms > self.max_allowable_ms:
            beat.missed = True
            logger.error("heartbeat %s missed its interval (last beat %d ms ago, allowed %d ms); no longer "
                         "refreshing it", beat.path, self.now_ms() - beat.last_beat_ms, self.max_allowable_ms)
            return False
        self._write_beat(beat)
        return True

    def _run(self, beat: _Beat) -> None:
        while not beat.stop_event.wait(self.interval_ms / 1000):
            try:
                if not self.beat(beat.instant_time):
                    return
            except StorageError as exc:
                logger.warning("could not refresh heartbeat %s: %s", beat.path, exc)

    def _forget(self, beat: _Beat) -> None:
        with _LOCK:
            if _RUNNING.get(beat.path) is beat:
                del _RUNNING[beat.path]
            _RUNNING_TOKENS.discard(beat.owner.token)

    def is_running(self, instant_time: str) -> bool:
        """Whether this process refreshes the heartbeat of ``instant_time``."""
        with _LOCK:
            return self.path(instant_time) in _RUNNING

    def stop(self, instant_time: str, *, delete: bool = True) -> None:
        """Stop refreshing the heartbeat of ``instant_time`` (joining its thread) and, with ``delete``,
        delete its file (Hudi ``stop`` + ``HeartbeatUtils.deleteHeartbeatFile``). Idempotent; deleting
        works for a heartbeat started elsewhere too. A file that cannot be deleted is logged, not raised
        (it expires by itself).
        """
        path = self.path(instant_time)
        with _LOCK:
            beat = _RUNNING.get(path)
        if beat is not None:
            beat.stop_event.set()
            if beat.thread is not None and beat.thread is not threading.current_thread():
                beat.thread.join(timeout=max(10.0, self.interval_ms / 1000))
                if beat.thread.is_alive():
                    logger.warning("heartbeat thread of %s did not stop in time", path)
            self._forget(beat)
            logger.info("stopped heartbeat %s", path)
        if delete:
            try:
                self.storage.delete(path)
            except StorageError as exc:
                logger.error("could not delete heartbeat %s (it expires by itself): %s", path, exc)

    def abort_if_expired(self, instant_time: str) -> None:
        """Before committing: fail when this process's own heartbeat of ``instant_time`` missed its
        interval, since another writer may have rolled the instant back (Hudi
        ``HeartbeatUtils.abortIfHeartbeatExpired``).

        Raises:
            WriteError: the heartbeat expired.
        """
        with _LOCK:
            beat = _RUNNING.get(self.path(instant_time))
        if beat is None or beat.last_beat_ms is None:
            return
        late = self.now_ms() - beat.last_beat_ms
        if beat.missed or late > self.max_allowable_ms:
            raise WriteError(
                f"heartbeat of instant {instant_time} on {self.base_path} expired (last beat {late} ms ago, "
                f"allowed {self.max_allowable_ms} ms = {WriteConfig.HEARTBEAT_INTERVAL_MS.key} x "
                f"{WriteConfig.HEARTBEAT_TOLERABLE_MISSES.key}); another writer may have rolled it back, so it "
                f"is not committed: run the write again")

    # ------------------------------------------------------------------ other writers' side

    def statuses(self, instant_times: Iterable[str]) -> dict[str, HeartbeatStatus]:
        """The heartbeat of each instant, from one listing of the heartbeat folder.

        Raises:
            StorageError: the folder could not be listed.
        """
        wanted = list(instant_times)
        if not wanted:
            return {}
        listed = {info.name: info for info in self.storage.list_dir(heartbeat_folder(self.storage, self.base_path))
                  if not info.is_dir}
        now = self.now_ms()
        result = {}
        for instant_time in wanted:
            info = listed.get(instant_time)
            if info is None:
                result[instant_time] = HeartbeatStatus(instant_time, 0, None, True, "no heartbeat file")
                continue
            try:
                owner = HeartbeatOwner.parse(self.storage.read_bytes(info.path))
            except StorageError:
                if not self.storage.exists(info.path):  # deleted meanwhile: its instant completed or was
                    result[instant_time] = HeartbeatStatus(  # rolled back (callers re-read the timeline)
                        instant_time, 0, None, True, "no heartbeat file")
                    continue
                owner = None  # unreadable: judge by the modification time
            result[instant_time] = self._judge(instant_time, info.mtime_ms, owner, now)
        return result

    def status(self, instant_time: str) -> HeartbeatStatus:
        """The heartbeat of one instant (see :meth:`statuses`)."""
        return self.statuses([instant_time])[instant_time]

    def is_expired(self, instant_time: str) -> bool:
        """Whether the writer of ``instant_time`` is taken to be dead (Hudi ``isHeartbeatExpired``)."""
        return self.status(instant_time).expired

    def _judge(self, instant_time: str, last_ms: int, owner: HeartbeatOwner | None, now: int) -> HeartbeatStatus:
        if now - last_ms > self.max_allowable_ms:
            return HeartbeatStatus(instant_time, last_ms, owner, True,
                                   f"last heartbeat {now - last_ms} ms ago > {self.max_allowable_ms} ms")
        if owner is not None and owner.host == socket.gethostname():
            if owner.pid == os.getpid():
                with _LOCK:
                    running = owner.token in _RUNNING_TOKENS
                if not running:
                    return HeartbeatStatus(instant_time, last_ms, owner, True,
                                           "its writer (this process) stopped it")
            elif not process_exists(owner.pid):
                return HeartbeatStatus(instant_time, last_ms, owner, True,
                                       f"its writer {owner.describe()} no longer exists")
        return HeartbeatStatus(instant_time, last_ms, owner, False)
