"""Table locks for optimistic concurrency control (Hudi 0.14 ``LockProvider``, ``LockManager`` and the providers
``FileSystemBasedLockProvider``, ``InProcessLockProvider``; ``HiveMetastoreBasedLockProvider`` lives in
:mod:`hive_sync.lock_provider` and is loaded lazily).

Writers under optimistic concurrency control take the table lock only around their commit (conflict check +
completed instant): ``LockManager(storage, base_path, table_name, conf)``, then ``lock()`` / ``unlock()`` (or
``with manager:``). Which provider serves the lock is ``hoodie.write.lock.provider``, by Hudi's Java class name
(:func:`lock_provider_for`).

``unlock`` deletes the file only when it holds this provider's token.

Differences from Hudi 0.14, on purpose: the file system provider's ``try_lock`` waits up to its timeout, polling
(Hudi's checks once and ignores the timeout; its retries then come from the lock manager only); ``close`` removes
the lock file only when this provider holds it (Hudi's deletes it unconditionally). The lock manager does not
look at ``hoodie.write.concurrency.mode`` (Hudi's locks only under optimistic concurrency control): callers
create one only when they need the lock.
"""
from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

from engine.concurrency.fs_lock import FileSystemBasedLockProvider
from engine.concurrency.provider import (
    _UNSUPPORTED_PROVIDERS,
    FILE_SYSTEM_PROVIDER,
    HIVE_LOCK_MODULE,
    HIVE_METASTORE_PROVIDER,
    IN_PROCESS_PROVIDER,
    SUPPORTED_PROVIDERS,
    LockProvider,
    hudi_class_name,
    non_negative,
)
from engine.config import HoodieConfig, LockConfig
from engine.errors import ConfigError, LockError
from engine.storage import Storage

logger = logging.getLogger(__name__)


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
        self.wait_time_ms = non_negative(conf.get(LockConfig.WAIT_TIME_MS), LockConfig.WAIT_TIME_MS.key,
                                          self.table_name)
        self.max_retries = non_negative(conf.get(LockConfig.CLIENT_NUM_RETRIES),
                                         LockConfig.CLIENT_NUM_RETRIES.key, self.table_name)
        self.retry_wait_ms = non_negative(conf.get(LockConfig.CLIENT_WAIT_TIME_MS_BETWEEN_RETRY),
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
