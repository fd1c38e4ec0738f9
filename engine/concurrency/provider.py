"""The lock provider contract (Hudi 0.14 ``org.apache.hudi.common.lock.LockProvider``) and the Java class names
``hoodie.write.lock.provider`` takes; shared by :mod:`engine.concurrency.locks`, :mod:`engine.concurrency.fs_lock`
and :mod:`hive_sync.lock_provider`."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from engine.errors import ConfigError

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


def non_negative(value: int, key: str, table: str) -> int:
    """``value`` of ``key``; a negative one raises :class:`ConfigError` naming the key and the table."""
    if value < 0:
        raise ConfigError(f"{key}={value} for table {table}: must be 0 or more")
    return value

