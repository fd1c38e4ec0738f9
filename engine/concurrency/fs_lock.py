"""File system lock (``FileSystemBasedLockProvider``): the file ``<hoodie.write.lock.filesystem.path or
<base>/.hoodie>/lock``, created with ``O_CREAT | O_EXCL`` (:meth:`engine.storage.Storage.create_if_absent`), so
only local file systems are supported (Hudi refuses schemes without atomic creation too). Its content is Hudi's
``LockInfo`` JSON (``lockCreateTime``, ``lockThreadName``, ``lockStacksInfo``) plus, beyond Hudi, the owner:
``host``, ``pid``, ``token`` (one random id per acquisition) and ``table``. A Java Hudi writer using the same
provider on the same table excludes this engine and vice versa (same file, same create-if-absent rule).
The file is taken over when

* it is older (modification time) than ``hoodie.write.lock.filesystem.expire`` minutes (0 = never), as Hudi
  does, or
* beyond Hudi, like :mod:`engine.write.heartbeat`: its owner is a process on this host that no longer exists,
  or this very process when it no longer holds that acquisition, so a writer killed with ``kill -9`` does not
  block the others forever when the expiry is 0. Takeovers are logged as warnings.

A takeover first renames the stale file aside and checks it is the very file judged stale (else puts it back),
so two writers taking over the same dead owner's lock at once do not delete each other's fresh lock; within one
process, takeovers and releases run one at a time (Hudi, too, serialises its file lock operations per JVM).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import socket
import threading
import time
import traceback
import uuid
from dataclasses import dataclass

from engine.concurrency.provider import (
    _MIN_POLL_S,
    FILE_SYSTEM_PROVIDER,
    LOCK_FILE_NAME,
    non_negative,
)
from engine.config import HoodieConfig, LockConfig
from engine.errors import ConfigError, LockError, StorageError
from engine.storage import Storage
from engine.write.heartbeat import process_exists

logger = logging.getLogger(__name__)


def _lock_create_time() -> str:
    """``yyyy-MM-dd HH:mm:ss.SSS`` local time, as Hudi's ``LockInfo.lockCreateTime``."""
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _stack_info() -> list[str]:
    """The caller's stack, innermost last, one ``function (file:line)`` per frame (Hudi ``lockStacksInfo``)."""
    frames = traceback.extract_stack()[:-2]
    return [f"{f.name} ({os.path.basename(f.filename)}:{f.lineno})" for f in frames]


@dataclass(frozen=True)
class LockFileOwner:
    """What a file system lock file says about its holder.

    Attributes:
        host: ``socket.gethostname()`` of the holder; ``""`` when the file was written by Java Hudi.
        pid: the holder's process id; 0 when unknown.
        token: random id of that one acquisition; ``""`` when unknown.
        thread: ``lockThreadName``.
        created: ``lockCreateTime`` (local time, ``yyyy-MM-dd HH:mm:ss.SSS``).
        table: base path of the locked table (when written by this engine).
    """

    host: str
    pid: int
    token: str
    thread: str
    created: str
    table: str = ""

    @staticmethod
    def parse(data: bytes) -> LockFileOwner | None:
        """The owner in a lock file's JSON, or ``None`` for an empty, partly written or unreadable file."""
        try:
            value = json.loads(data.decode()) if data.strip() else None
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(value, dict):
            return None
        try:
            return LockFileOwner(str(value.get("host") or ""), int(value.get("pid") or 0),
                                 str(value.get("token") or ""), str(value.get("lockThreadName") or ""),
                                 str(value.get("lockCreateTime") or ""), str(value.get("table") or ""))
        except (TypeError, ValueError):
            return None

    def describe(self) -> str:
        """``pid 12 on host h (thread T, since 2024-01-02 10:00:00.000)``, or the Hudi fields alone."""
        detail = ", ".join(part for part in (f"thread {self.thread}" if self.thread else "",
                                             f"since {self.created}" if self.created else "") if part)
        who = f"pid {self.pid} on host {self.host}" if self.host else "a writer that recorded no process"
        return f"{who} ({detail})" if detail else who


_REGISTRY_LOCK = threading.RLock()
"""Guards :data:`_LIVE_FILE_TOKENS`; also held while a lock file is judged and removed (takeover) or checked and
deleted (unlock), so threads of this process never act on a token another thread is releasing (Hudi likewise
runs its file lock operations one at a time per JVM)."""
_LIVE_FILE_TOKENS: set[str] = set()
"""Tokens of the file system locks this process holds or is creating right now."""


class FileSystemBasedLockProvider:
    """The table lock as a file (Hudi ``FileSystemBasedLockProvider``); see the module docstring.

    Args:
        storage: the table's storage (used for the lock file unless ``hoodie.write.lock.filesystem.path`` names
            another directory, which then gets its own storage).
        base_path: the table's base path.
        conf: options; reads ``hoodie.write.lock.filesystem.path``, ``hoodie.write.lock.filesystem.expire``
            (minutes, 0 = never) and ``hoodie.write.lock.wait_time_ms_between_retry`` (longest wait between two
            looks at a held lock, ms).
        table_name: for messages.

    Raises:
        ConfigError: a negative expiry or wait, or a lock directory on a storage without atomic
            create-if-absent (anything but a local file system).

    Ownership is per provider object: any thread using this object may release the lock it took; another
    thread asking for it while it is held waits like any other writer; the acquiring thread asking again gets
    a :class:`~engine.errors.LockError`.
    """

    HUDI_CLASS = FILE_SYSTEM_PROVIDER

    def __init__(self, storage: Storage, base_path: str, conf: HoodieConfig, *, table_name: str = "") -> None:
        self.base_path = base_path
        self.table_name = table_name or base_path
        custom = (conf.get_optional(LockConfig.FILESYSTEM_PATH) or "").strip()
        lock_dir = custom or storage.join(base_path, ".hoodie")
        self._storage = Storage.for_uri(custom) if custom else storage
        if not self._storage.is_local:
            raise ConfigError(
                f"{LockConfig.PROVIDER.key}={FILE_SYSTEM_PROVIDER} for table {self.table_name}: the lock file "
                f"directory {lock_dir} is not on a local file system, and only local files are created atomically "
                f"here (set {LockConfig.FILESYSTEM_PATH.key} to a shared local or mounted path, or use another "
                f"provider)")
        self.path = self._storage.join(lock_dir, LOCK_FILE_NAME)
        self.expire_minutes = non_negative(conf.get(LockConfig.FILESYSTEM_EXPIRE),
                                            LockConfig.FILESYSTEM_EXPIRE.key, self.table_name)
        self._poll_cap_s = max(_MIN_POLL_S, non_negative(
            conf.get(LockConfig.WAIT_TIME_MS_BETWEEN_RETRY), LockConfig.WAIT_TIME_MS_BETWEEN_RETRY.key,
            self.table_name) / 1000)
        self._state = threading.Lock()
        self._token: str | None = None
        self._holder_thread: int | None = None
        self._holder_name = ""

    def __repr__(self) -> str:
        return f"FileSystemBasedLockProvider({self.path!r})"

    # ------------------------------------------------------------------ lock / unlock

    def try_lock(self, timeout_ms: int) -> bool:
        """Create the lock file, polling up to ``timeout_ms`` while another holder has it (expired or dead
        holders' files are taken over, see the module docstring).

        Returns:
            Whether this provider now holds the lock.

        Raises:
            LockError: the calling thread already holds it through this provider, or the lock file could not be
                read, created or removed (names the file and the table).
        """
        me = threading.get_ident()
        with self._state:
            if self._token is not None and self._holder_thread == me:
                raise LockError(f"{self._what()}: already held by this provider (thread {self._holder_name}); "
                                f"the lock is not re-entrant")
        deadline = time.monotonic() + max(0, timeout_ms) / 1000
        delay = _MIN_POLL_S
        while True:
            if self._attempt():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                logger.info("%s: not acquired within %d ms; %s", self._what(), timeout_ms, self.describe())
                return False
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, self._poll_cap_s)

    def _render(self, token: str) -> bytes:
        info = {
            "lockCreateTime": _lock_create_time(),
            "lockThreadName": threading.current_thread().name,
            "lockStacksInfo": _stack_info(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "token": token,
            "table": self.base_path,
        }
        return json.dumps(info, indent=2).encode()

    def _attempt(self) -> bool:
        """One try: create the file; else take it over when stale (then create again). Never waits."""
        for _ in range(3):  # a takeover is followed by one more create; a bounded loop against pathological races
            token = uuid.uuid4().hex
            with _REGISTRY_LOCK:  # registered before the file exists: a reader in this process must see it live
                _LIVE_FILE_TOKENS.add(token)
            try:
                created = self._storage.create_if_absent(self.path, self._render(token))
            except StorageError as exc:
                self._forget(token)
                raise LockError(f"{self._what()}: cannot create the lock file: {exc}") from exc
            if created:
                with self._state:
                    self._token = token
                    self._holder_thread = threading.get_ident()
                    self._holder_name = threading.current_thread().name
                logger.info("%s: acquired (token %s)", self._what(), token)
                return True
            self._forget(token)
            current = self._read()
            if current is None:
                continue  # released meanwhile: try again at once
            data, mtime_ms = current
            owner = LockFileOwner.parse(data)
            reason = self._stale_reason(owner, mtime_ms)
            if reason is None or not self._remove_stale(data, owner, reason):
                return False
        return False

    def _read(self) -> tuple[bytes, int] | None:
        """The lock file's bytes and modification time (ms), or ``None`` when there is none."""
        error: StorageError | None = None
        for _ in range(3):  # the file may be released and created again between the stat and the read
            try:
                info = self._storage.file_info(self.path)
                if info is None:
                    return None
                return self._storage.read_bytes(self.path), info.mtime_ms
            except StorageError as exc:
                error = exc
        raise LockError(f"{self._what()}: cannot read the lock file: {error}") from error

    def _stale_reason(self, owner: LockFileOwner | None, mtime_ms: int) -> str | None:
        """Why the lock file may be taken over, or ``None`` while its holder counts as live."""
        age_ms = int(time.time() * 1000) - mtime_ms
        if self.expire_minutes > 0 and age_ms > self.expire_minutes * 60_000:
            return (f"it expired: last modified {age_ms / 1000:.0f} s ago, more than "
                    f"{LockConfig.FILESYSTEM_EXPIRE.key}={self.expire_minutes} min")
        if owner is not None and owner.host and owner.host == socket.gethostname():
            if owner.pid == os.getpid():
                with _REGISTRY_LOCK:
                    live = owner.token in _LIVE_FILE_TOKENS
                if not live:
                    return "it was left by this process, which no longer holds it"
            elif not process_exists(owner.pid):
                return f"its owner, pid {owner.pid} on this host, no longer exists"
        return None

    def _remove_stale(self, judged: bytes, owner: LockFileOwner | None, reason: str) -> bool:
        """Remove the stale lock file whose content is ``judged``; ``False`` when the file changed meanwhile
        (then it is left, or put back, in place)."""
        with _REGISTRY_LOCK:
            current = self._read()
            if current is None:
                return True  # released meanwhile: create again
            if current[0] != judged:
                return False  # another holder now: judge it again
            return self._move_aside_and_delete(judged, owner, reason)

    def _move_aside_and_delete(self, judged: bytes, owner: LockFileOwner | None, reason: str) -> bool:
        parent, _, name = self.path.rpartition("/")
        aside = f"{parent}/.{name}.{uuid.uuid4().hex}.stale.tmp"
        try:
            try:
                self._storage.rename(self.path, aside)
            except StorageError:
                if not self._storage.exists(self.path):
                    return True  # someone else removed it: create again
                raise
            moved = self._storage.read_bytes(aside)
            if moved == judged:
                self._storage.delete(aside)
                logger.warning("%s: took over the lock file held by %s: %s", self._what(),
                               owner.describe() if owner else "an unknown writer", reason)
                return True
            # Another writer replaced the stale file since it was judged: put its fresh lock back.
            if not self._storage.create_if_absent(self.path, moved):
                logger.error("%s: a fresh lock file was moved aside during a takeover and a third writer created "
                             "one before it was put back (%s)", self._what(), self.path)
            self._storage.delete(aside)
            return False
        except StorageError as exc:
            raise LockError(f"{self._what()}: cannot take over the stale lock file ({reason}): {exc}") from exc

    @staticmethod
    def _forget(token: str) -> None:
        with _REGISTRY_LOCK:
            _LIVE_FILE_TOKENS.discard(token)

    def unlock(self) -> None:
        """Delete the lock file if this provider holds it (its token is in the file); otherwise nothing is
        deleted and a warning is logged (a file naming another holder was taken over after expiry).

        Raises:
            LockError: the lock file could not be read or deleted.
        """
        with self._state:
            token = self._token
        if token is None:
            logger.info("%s: unlock by a provider that does not hold it; nothing released", self._what())
            return
        try:
            with _REGISTRY_LOCK:
                try:
                    self._release_file(token)
                finally:
                    self._forget(token)
        except StorageError as exc:
            raise LockError(f"{self._what()}: cannot delete the lock file: {exc}") from exc
        finally:
            with self._state:
                if self._token == token:
                    self._token = None
                    self._holder_thread = None
                    self._holder_name = ""

    def _release_file(self, token: str) -> None:
        """Delete the lock file if it holds ``token`` (called under the registry lock)."""
        current = self._read()
        if current is None:
            logger.warning("%s: the lock file was already gone at unlock (taken over after expiry?)", self._what())
            return
        owner = LockFileOwner.parse(current[0])
        if owner is None or owner.token != token:
            logger.warning("%s: the lock file now belongs to %s (taken over after expiry?); left in place",
                           self._what(), owner.describe() if owner else "another writer")
            return
        self._storage.delete(self.path)
        logger.info("%s: released (token %s)", self._what(), token)

    def close(self) -> None:
        """Release the lock if this provider holds it (Hudi's ``close`` deletes the file whoever holds it)."""
        with self._state:
            held = self._token is not None
        if held:
            self.unlock()

    # ------------------------------------------------------------------ messages

    def _what(self) -> str:
        return f"file system lock of table {self.table_name} ({self.path})"

    def describe(self) -> str:
        """``lock file <path>: free`` / ``held by this provider ...`` / ``held by pid N on host H (...)``."""
        with self._state:
            token, holder = self._token, self._holder_name
        if token is not None:
            return f"lock file {self.path}: held by this provider (pid {os.getpid()}, thread {holder})"
        try:
            current = self._read()
        except LockError as exc:
            return f"lock file {self.path}: holder unknown ({exc})"
        if current is None:
            return f"lock file {self.path}: free"
        owner = LockFileOwner.parse(current[0])
        age = (int(time.time() * 1000) - current[1]) / 1000
        holder_text = owner.describe() if owner else "a writer whose lock file is empty or unreadable"
        return f"lock file {self.path}: held by {holder_text}, written {age:.0f} s ago"


