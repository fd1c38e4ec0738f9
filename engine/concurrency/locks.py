"""Table locks for optimistic concurrency control (Hudi 0.14 ``LockProvider``, ``LockManager`` and the providers
``FileSystemBasedLockProvider``, ``InProcessLockProvider``; ``HiveMetastoreBasedLockProvider`` lives in
:mod:`hive_sync.lock_provider` and is loaded lazily).

Writers under optimistic concurrency control take the table lock only around their commit (conflict check +
completed instant): ``LockManager(storage, base_path, table_name, conf)``, then ``lock()`` / ``unlock()`` (or
``with manager:``). Which provider serves the lock is ``hoodie.write.lock.provider``, by Hudi's Java class name
(:func:`lock_provider_for`).

File system lock (``FileSystemBasedLockProvider``): the file ``<hoodie.write.lock.filesystem.path or
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
``unlock`` deletes the file only when it holds this provider's token.

Differences from Hudi 0.14, on purpose: the file system provider's ``try_lock`` waits up to its timeout, polling
(Hudi's checks once and ignores the timeout; its retries then come from the lock manager only); ``close`` removes
the lock file only when this provider holds it (Hudi's deletes it unconditionally). The lock manager does not
look at ``hoodie.write.concurrency.mode`` (Hudi's locks only under optimistic concurrency control): callers
create one only when they need the lock.
"""

from __future__ import annotations

import datetime
import importlib
import json
import logging
import os
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, runtime_checkable

from engine.config import HoodieConfig, LockConfig
from engine.errors import ConfigError, LockError, StorageError
from engine.storage import Storage
from engine.write.heartbeat import process_exists

logger = logging.getLogger(__name__)

FILE_SYSTEM_PROVIDER = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
"""Hudi's class name of the file system lock provider."""

IN_PROCESS_PROVIDER = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
"""Hudi's class name of the in-process lock provider."""

HIVE_METASTORE_PROVIDER = "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"
"""Hudi's class name of the Hive Metastore lock provider (served by :mod:`hive_sync.lock_provider`)."""

SUPPORTED_PROVIDERS = (FILE_SYSTEM_PROVIDER, IN_PROCESS_PROVIDER, HIVE_METASTORE_PROVIDER)
"""Values of ``hoodie.write.lock.provider`` this engine serves."""

_UNSUPPORTED_PROVIDERS = {
    "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider": "the ZooKeeper lock provider",
    "org.apache.hudi.client.transaction.lock.ZookeeperBasedImplicitBasePathLockProvider":
        "the ZooKeeper lock provider",
    "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider": "the DynamoDB lock provider",
    "org.apache.hudi.aws.transaction.lock.DynamoDBBasedImplicitPartitionKeyLockProvider":
        "the DynamoDB lock provider",
}
"""Hudi lock providers known but not implemented here (a ConfigError names them)."""

HIVE_LOCK_MODULE = "hive_sync.lock_provider"
"""Module imported (lazily: hive_sync depends on engine, never the reverse) for the Hive Metastore provider."""

LOCK_FILE_NAME = "lock"
"""Name of the file system lock file (Hudi ``FileSystemBasedLockProvider.LOCK_FILE_NAME``)."""

_MIN_POLL_S = 0.01
"""First wait between two looks at a held lock; doubles up to ``hoodie.write.lock.wait_time_ms_between_retry``."""


@runtime_checkable
class LockProvider(Protocol):
    """One table lock (Hudi ``org.apache.hudi.common.lock.LockProvider``).

    A provider is not re-entrant: the holder asking again gets a :class:`~engine.errors.LockError`.
    """

    def try_lock(self, timeout_ms: int) -> bool:
        """Take the lock, waiting at most ``timeout_ms`` milliseconds (0 = one attempt).

        Returns:
            Whether the lock is now held by this provider.

        Raises:
            LockError: the holder asked again, or the lock service failed.
        """
        ...

    def unlock(self) -> None:
        """Release the lock if this provider (or thread, for the in-process lock) holds it; otherwise nothing
        is released (logged).

        Raises:
            LockError: releasing failed, or the lock service took the lock away while it was held.
        """
        ...

    def close(self) -> None:
        """Release the lock if held and free the provider's resources (connections, threads)."""
        ...

    def describe(self) -> str:
        """What is locked and who holds it (for error messages and logs), e.g. ``lock file /t/.hoodie/lock:
        held by pid 12 on host h (thread MainThread, since 2024-01-02 10:00:00.000)``."""
        ...


def hudi_class_name(provider: LockProvider) -> str:
    """The Hudi Java class name a provider stands for (``HUDI_CLASS``), else its Python class name."""
    return str(getattr(provider, "HUDI_CLASS", type(provider).__name__))


def _non_negative(value: int, key: str, table: str) -> int:
    """``value`` of ``key``; a negative one raises :class:`ConfigError` naming the key and the table."""
    if value < 0:
        raise ConfigError(f"{key}={value} for table {table}: must be 0 or more")
    return value


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
        self.expire_minutes = _non_negative(conf.get(LockConfig.FILESYSTEM_EXPIRE),
                                            LockConfig.FILESYSTEM_EXPIRE.key, self.table_name)
        self._poll_cap_s = max(_MIN_POLL_S, _non_negative(
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


class _ProcessLock:
    """The in-process lock of one base path: a mutex and its holder thread."""

    def __init__(self) -> None:
        self.mutex = threading.Lock()
        self.owner: int | None = None
        self.owner_name = ""
        self.since = 0.0


_PROCESS_LOCKS: dict[str, _ProcessLock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


class InProcessLockProvider:
    """A lock shared by every thread of this process, one per table base path (Hudi ``InProcessLockProvider``,
    a static map of ``ReentrantReadWriteLock`` by base path; the write lock is what it takes).

    Args:
        base_path: the table's base path (the key; a trailing ``/`` is ignored).
        table_name: for messages.

    As in Hudi: not re-entrant (the holding thread asking again gets a :class:`~engine.errors.LockError`);
    ``unlock`` by a thread that does not hold the lock releases nothing and logs a warning (Hudi logs "Cannot
    unlock because the current thread does not hold the lock"); ``close`` releases it when the calling thread
    holds it. It excludes nothing outside this process.
    """

    HUDI_CLASS = IN_PROCESS_PROVIDER

    def __init__(self, base_path: str, *, table_name: str = "") -> None:
        self.base_path = base_path.rstrip("/") or base_path
        self.table_name = table_name or base_path
        with _PROCESS_LOCKS_GUARD:
            self._lock = _PROCESS_LOCKS.setdefault(self.base_path, _ProcessLock())

    def __repr__(self) -> str:
        return f"InProcessLockProvider({self.base_path!r})"

    def try_lock(self, timeout_ms: int) -> bool:
        """Take the lock, waiting up to ``timeout_ms`` for the holding thread to release it.

        Raises:
            LockError: the calling thread already holds it.
        """
        if self._lock.owner == threading.get_ident():
            raise LockError(f"{self._what()}: already held by this thread ({self._lock.owner_name}); the lock is "
                            f"not re-entrant")
        acquired = (self._lock.mutex.acquire(timeout=timeout_ms / 1000) if timeout_ms > 0
                    else self._lock.mutex.acquire(blocking=False))
        if acquired:
            self._lock.owner = threading.get_ident()
            self._lock.owner_name = threading.current_thread().name
            self._lock.since = time.time()
            logger.info("%s: acquired by thread %s", self._what(), self._lock.owner_name)
        else:
            logger.info("%s: not acquired within %d ms; %s", self._what(), timeout_ms, self.describe())
        return acquired

    def unlock(self) -> None:
        """Release the lock if the calling thread holds it; otherwise release nothing and log a warning."""
        if self._lock.owner != threading.get_ident():
            logger.warning("%s: thread %s does not hold it; nothing released", self._what(),
                           threading.current_thread().name)
            return
        self._lock.owner = None
        self._lock.owner_name = ""
        self._lock.mutex.release()
        logger.info("%s: released by thread %s", self._what(), threading.current_thread().name)

    def close(self) -> None:
        """Release the lock if the calling thread holds it."""
        if self._lock.owner == threading.get_ident():
            self.unlock()

    def _what(self) -> str:
        return f"in-process lock of table {self.table_name} ({self.base_path})"

    def describe(self) -> str:
        """``in-process lock of <base path>: free`` or ``held by thread T for 3 s``."""
        owner, name, since = self._lock.owner, self._lock.owner_name, self._lock.since
        if owner is None:
            return f"in-process lock of {self.base_path}: free"
        return (f"in-process lock of {self.base_path}: held by thread {name} of pid {os.getpid()} for "
                f"{time.time() - since:.0f} s")


def lock_provider_for(conf: HoodieConfig, storage: Storage, base_path: str, table_name: str) -> LockProvider:
    """The provider ``hoodie.write.lock.provider`` names, by Hudi's Java class name.

    Args:
        conf: the write's options (provider class and its keys).
        storage: the table's storage.
        base_path: the table's base path.
        table_name: for messages.

    Returns:
        A :class:`FileSystemBasedLockProvider`, :class:`InProcessLockProvider` or
        ``hive_sync.lock_provider.HiveMetastoreBasedLockProvider`` (imported only then).

    Raises:
        ConfigError: the key is unset (Hudi 0.14's default is the ZooKeeper provider, which this engine does not
            have), names a provider not implemented here (ZooKeeper, DynamoDB, anything else), the provider's own
            keys are missing or invalid, or ``hive_sync`` cannot be imported; the message names the key, the
            value and the supported classes.
    """
    key = LockConfig.PROVIDER.key
    name = conf.get(LockConfig.PROVIDER).strip()
    supported = ", ".join(SUPPORTED_PROVIDERS)
    if name == FILE_SYSTEM_PROVIDER:
        return FileSystemBasedLockProvider(storage, base_path, conf, table_name=table_name)
    if name == IN_PROCESS_PROVIDER:
        return InProcessLockProvider(base_path, table_name=table_name)
    if name == HIVE_METASTORE_PROVIDER:
        try:
            module = importlib.import_module(HIVE_LOCK_MODULE)
        except ImportError as exc:
            raise ConfigError(f"{key}={name} for table {table_name}: cannot import {HIVE_LOCK_MODULE} "
                              f"(the hive_sync package and hmsclient): {exc}") from exc
        provider: LockProvider = module.HiveMetastoreBasedLockProvider(conf, base_path=base_path,
                                                                       table_name=table_name)
        return provider
    if not conf.contains(LockConfig.PROVIDER):
        raise ConfigError(f"{key} is not set for table {table_name}: Hudi 0.14's default, {name}, needs ZooKeeper, "
                          f"which this engine does not support; set {key} to one of {supported}")
    what = _UNSUPPORTED_PROVIDERS.get(name)
    if what is not None:
        raise ConfigError(f"{key}={name} for table {table_name}: {what} is not supported by this engine; "
                          f"use one of {supported}")
    raise ConfigError(f"{key}={name!r} for table {table_name}: unknown lock provider; use one of {supported}")


class LockManager:
    """Takes and releases a table's lock with retries (Hudi 0.14 ``LockManager``).

    Args:
        storage: the table's storage.
        base_path: the table's base path.
        table_name: for messages.
        conf: the write's options: ``hoodie.write.lock.provider`` and its keys, ``hoodie.write.lock.wait_time_ms``
            (timeout of one attempt), ``hoodie.write.lock.client.num_retries`` (attempts after the first) and
            ``hoodie.write.lock.client.wait_time_ms_between_retry`` (sleep between attempts). The provider-level
            ``hoodie.write.lock.num_retries`` / ``wait_time_ms_between_retry`` belong to the providers, as in Hudi.
        provider: a provider to use instead of the configured one (tests, callers sharing one).
        sleep: ``time.sleep`` (tests pass another).

    Raises:
        ConfigError: a negative timeout, retry count or wait.

    The provider is created on first use (:func:`lock_provider_for`) and dropped by :meth:`close`, so a closed
    manager can lock again. Used as a context manager, the lock is held inside the block::

        with LockManager(storage, base, "trips", conf):
            ...  # conflict check, commit

    """

    def __init__(self, storage: Storage, base_path: str, table_name: str, conf: HoodieConfig, *,
                 provider: LockProvider | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.storage = storage
        self.base_path = base_path
        self.table_name = table_name or base_path
        self.conf = conf
        self.wait_time_ms = _non_negative(conf.get(LockConfig.WAIT_TIME_MS), LockConfig.WAIT_TIME_MS.key,
                                          self.table_name)
        self.max_retries = _non_negative(conf.get(LockConfig.CLIENT_NUM_RETRIES),
                                         LockConfig.CLIENT_NUM_RETRIES.key, self.table_name)
        self.retry_wait_ms = _non_negative(conf.get(LockConfig.CLIENT_WAIT_TIME_MS_BETWEEN_RETRY),
                                           LockConfig.CLIENT_WAIT_TIME_MS_BETWEEN_RETRY.key, self.table_name)
        self._provider = provider
        self._provider_guard = threading.Lock()
        self._sleep = sleep

    @property
    def provider(self) -> LockProvider:
        """The lock provider, created on first use (Hudi ``getLockProvider``).

        Raises:
            ConfigError: as :func:`lock_provider_for`.
        """
        with self._provider_guard:
            if self._provider is None:
                self._provider = lock_provider_for(self.conf, self.storage, self.base_path, self.table_name)
                logger.info("lock provider of table %s: %s", self.table_name, hudi_class_name(self._provider))
            return self._provider

    def lock(self) -> None:
        """Take the lock: up to ``1 + client.num_retries`` attempts of ``try_lock(wait_time_ms)``, sleeping
        ``client.wait_time_ms_between_retry`` between them; a :class:`~engine.errors.LockError` of an attempt
        counts as a failed attempt (Hudi retries ``HoodieLockException`` too).

        Raises:
            LockError: not acquired after the last attempt; names the table, the provider, the current holder
                and the settings, and chains the last attempt's error.
            ConfigError: the provider cannot be built.
        """
        provider = self.provider
        attempts = self.max_retries + 1
        last_error: LockError | None = None
        for attempt in range(1, attempts + 1):
            try:
                if provider.try_lock(self.wait_time_ms):
                    if attempt > 1:
                        logger.info("table %s locked at attempt %d of %d", self.table_name, attempt, attempts)
                    return
                last_error = None
            except LockError as exc:
                last_error = exc
                logger.warning("table %s: lock attempt %d of %d failed: %s", self.table_name, attempt, attempts,
                               exc)
            if attempt < attempts:
                logger.info("table %s: lock held elsewhere, retrying in %d ms (attempt %d of %d)", self.table_name,
                            self.retry_wait_ms, attempt, attempts)
                self._sleep(self.retry_wait_ms / 1000)
        cause = f"; last error: {last_error}" if last_error is not None else ""
        raise LockError(
            f"cannot lock table {self.table_name} ({self.base_path}) with {hudi_class_name(provider)} after "
            f"{attempts} attempts of {self.wait_time_ms} ms, {self.retry_wait_ms} ms apart "
            f"({LockConfig.WAIT_TIME_MS.key}, {LockConfig.CLIENT_NUM_RETRIES.key}, "
            f"{LockConfig.CLIENT_WAIT_TIME_MS_BETWEEN_RETRY.key}); {provider.describe()}{cause}") from last_error

    def unlock(self) -> None:
        """Release the lock through the provider (nothing when it is not held by this caller).

        Raises:
            LockError: as the provider's ``unlock``.
        """
        with self._provider_guard:
            provider = self._provider
        if provider is not None:
            provider.unlock()

    def close(self) -> None:
        """Close the provider (releasing a held lock) and drop it; errors are logged, not raised (Hudi
        ``closeQuietly``)."""
        with self._provider_guard:
            provider, self._provider = self._provider, None
        if provider is None:
            return
        try:
            provider.close()
        except Exception as exc:  # noqa: BLE001 - closing must not mask the caller's outcome
            logger.error("table %s: could not close lock provider %s: %s", self.table_name,
                         hudi_class_name(provider), exc)

    def __enter__(self) -> LockManager:
        self.lock()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.unlock()
        finally:
            self.close()
