"""Transactions around commits and table services (Hudi 0.14 ``TransactionManager``, ``TransactionUtils``,
``WriteConcurrencyMode``, ``HoodieFailedWritesCleaningPolicy``).

``hoodie.write.concurrency.mode``:

* ``single_writer`` (default): one writer at a time. A writer that finds another live pending write fails at
  once (:class:`engine.errors.ConcurrentWriteError`); no lock is taken.
* ``optimistic_concurrency_control``: any number of writers. Each takes the table lock
  (``hoodie.write.lock.provider``, :mod:`engine.concurrency.locks`) only to commit: under the lock it reloads the
  timeline, checks that no instant completed (or scheduled) since it started touched the file groups it wrote
  (:mod:`engine.concurrency.conflicts`), and writes its completed instant. A writer that loses is rolled back
  and raises :class:`engine.errors.CommitConflict` (retryable). Table services (scheduling and completing
  compaction and clustering, clean, archive) run under the same lock.

``hoodie.cleaner.policy.failed.writes``: ``EAGER`` (single writer default) rolls back failed writes when the
next writer starts; ``LAZY`` leaves them to the cleaner. As Hudi 0.14's ``HoodieWriteConfig`` does, optimistic
concurrency control always uses ``LAZY`` (a failed write is rolled back by a clean once its heartbeat has
expired, never by a writer that cannot tell it from a live one on another machine).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from engine.concurrency.conflicts import (
    WriteStart,
    conflict_error,
    find_conflicts,
    operation_of_metadata,
    strategy_name,
)
from engine.concurrency.locks import LockManager, lock_provider_for
from engine.config import HoodieConfig, WriteConfig
from engine.errors import ConfigError, LockError
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import Instant

if TYPE_CHECKING:
    from engine.table import Table

logger = logging.getLogger(__name__)

SINGLE_WRITER = "SINGLE_WRITER"
OPTIMISTIC = "OPTIMISTIC_CONCURRENCY_CONTROL"
_MODES = (SINGLE_WRITER, OPTIMISTIC)


def concurrency_mode(conf: HoodieConfig, where: str = "") -> str:
    """``SINGLE_WRITER`` or ``OPTIMISTIC_CONCURRENCY_CONTROL`` (Hudi ``WriteConcurrencyMode``, case-insensitive).

    Args:
        conf: the write's effective config.
        where: ``table <name> at <path>`` for the error.

    Raises:
        ConfigError: another mode (``non_blocking_concurrency_control`` is Hudi 1.x, for table version 8).
    """
    key = WriteConfig.WRITE_CONCURRENCY_MODE.key
    mode = conf.get(WriteConfig.WRITE_CONCURRENCY_MODE).strip().upper()
    if mode == "NON_BLOCKING_CONCURRENCY_CONTROL":
        raise ConfigError(f"{key}={mode.lower()} is not supported ({where}): it is Apache Hudi 1.x's mode for "
                          f"table version 8; this table is version 6 — use optimistic_concurrency_control")
    if mode not in _MODES:
        raise ConfigError(f"{key}={mode.lower()} is not a concurrency mode ({where}); use "
                          f"{' or '.join(m.lower() for m in _MODES)}")
    return mode


def is_optimistic(conf: HoodieConfig, where: str = "") -> bool:
    """Whether ``conf`` turns on optimistic concurrency control.

    Raises:
        ConfigError: an unknown mode.
    """
    return concurrency_mode(conf, where) == OPTIMISTIC


def failed_writes_lazy(conf: HoodieConfig, where: str = "") -> bool:
    """Whether failed writes are rolled back lazily, by the cleaner (Hudi ``HoodieFailedWritesCleaningPolicy``);
    always under optimistic concurrency control, as Hudi 0.14 adjusts the policy.

    Raises:
        ConfigError: a policy other than ``EAGER``/``LAZY`` (``NEVER`` leaves failed writes for ever: refused).
    """
    key = WriteConfig.FAILED_WRITES_CLEANER_POLICY.key
    policy = conf.get(WriteConfig.FAILED_WRITES_CLEANER_POLICY).strip().upper()
    if policy not in ("EAGER", "LAZY"):
        raise ConfigError(f"{key}={policy.lower()} is not supported ({where}): use eager (the next writer rolls "
                          f"back failed writes) or lazy (the cleaner does)")
    if is_optimistic(conf, where):
        if policy == "EAGER" and conf.contains(WriteConfig.FAILED_WRITES_CLEANER_POLICY):
            logger.info("%s=eager is taken as lazy under optimistic concurrency control (%s), as Apache Hudi does",
                        key, where)
        return True
    return policy == "LAZY"


_STARTS: dict[tuple[str, str], WriteStart] = {}
_STARTS_GUARD = threading.Lock()


def remember_start(base_path: str, instant_time: str, start: WriteStart) -> None:
    """Keep what a writer saw when it started ``instant_time`` until it commits or rolls back."""
    with _STARTS_GUARD:
        _STARTS[(base_path, instant_time)] = start


def forget_start(base_path: str, instant_time: str) -> WriteStart | None:
    """Drop (and return) the start state of ``instant_time``."""
    with _STARTS_GUARD:
        return _STARTS.pop((base_path, instant_time), None)


def _start_of(table: Table, instant_time: str) -> WriteStart:
    with _STARTS_GUARD:
        start = _STARTS.get((table.base_path, instant_time))
    if start is None:
        logger.info("no start state of %s in this process: checking it against every earlier write", instant_time)
        start = WriteStart.assumed(table.timeline, instant_time)
    return start


class TransactionManager:
    """The table lock around commits and table services (Hudi ``TransactionManager``); a no-op without
    optimistic concurrency control.

    Args:
        table: the table.
        conf: the effective config (table config overlaid with the write's options): concurrency mode and the
            ``hoodie.write.lock.*`` settings.

    Raises:
        ConfigError: an unknown concurrency mode, an unsupported lock provider or conflict strategy.
    """

    def __init__(self, table: Table, conf: HoodieConfig) -> None:
        self.table = table
        self.conf = conf
        where = f"table {table.name} at {table.base_path}"
        self.optimistic = is_optimistic(conf, where)
        self.strategy = strategy_name(conf) if self.optimistic else ""
        if self.optimistic:
            # Built once up front so a bad provider setting fails before anything is written.
            lock_provider_for(conf, table.storage, table.base_path, table.name).close()

    @contextmanager
    def transaction(self, what: str) -> Iterator[None]:
        """Hold the table lock for ``what`` (e.g. ``commit 20240101000000000``) when optimistic concurrency
        control is on.

        A lock that cannot be released afterwards (the lock service unreachable, or a lock the service expired
        while held) is logged as an error, never raised: what ran under it (a completed instant) stands, and an
        error would make the user retry a statement that already committed. Beyond Hudi 0.14, whose
        ``endTransaction`` throws then.

        Raises:
            LockError: the lock could not be had within the configured waits and retries (nothing ran).
        """
        if not self.optimistic:
            yield
            return
        manager = LockManager(self.table.storage, self.table.base_path, self.table.name, self.conf)
        manager.lock()
        logger.debug("lock taken on %s for %s", self.table.base_path, what)
        try:
            yield
        finally:
            try:
                manager.unlock()
                logger.debug("lock released on %s after %s", self.table.base_path, what)
            except LockError as exc:
                logger.error("%s on %s: the table lock could not be released cleanly: %s (what ran under it "
                             "stands; the lock service times the lock out)", what, self.table.base_path, exc)
            finally:
                manager.close()

    def check_conflicts(self, instant: Instant, metadata: CommitMetadata) -> None:
        """Under the lock, before the completed instant is written: raise if a concurrent instant touched the
        same file groups (Hudi ``TransactionUtils.resolveWriteConflictIfAny``). Reloads the timeline.

        Raises:
            CommitConflict: naming the table, this instant, the other instants and the file groups.
        """
        if not self.optimistic:
            return
        timeline = self.table.timeline.reload()
        this = operation_of_metadata(instant, metadata)
        conflicts = find_conflicts(timeline, this, _start_of(self.table, instant.timestamp), self.strategy)
        if conflicts:
            raise conflict_error(self.table.name, self.table.base_path, this, conflicts, self.strategy)
