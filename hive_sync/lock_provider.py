"""The table lock held in a Hive Metastore (Hudi 0.14 ``org.apache.hudi.hive.transaction.lock.
HiveMetastoreBasedLockProvider``), through Hive's ACID lock API over Thrift (hmsclient).

The lock is an ``EXCLUSIVE`` lock of level ``TABLE`` on ``hoodie.write.lock.hivemetastore.database`` /
``.table`` (the Hive table need not exist), requested by this user and host. The metastore answers
``ACQUIRED`` or ``WAITING`` at once; a waiting request is polled with ``check_lock`` (which also keeps it
alive), at most ``hoodie.write.lock.wait_time_ms_between_retry`` apart, until it is acquired or the attempt's
timeout passes, and then released (Hudi: "it is better to release WAITING lock, otherwise hive lock will hang
forever"). While held, a daemon thread heartbeats it every ``hoodie.write.lock.heartbeat_interval_ms`` (first
after half an interval, as Hudi), so the metastore does not time it out; if the metastore reports it gone,
the loss is logged and the next ``unlock`` raises :class:`~engine.errors.LockError` (as newer Hudi does): the
writer went on without exclusivity.

What the metastore does with a lock whose client died: it keeps it until its housekeeper
(``AcidHouseKeeperService``, only running when ``hive.compactor.initiator.on=true``) times it out, after
``hive.txn.timeout`` (300 s) without heartbeat. The local metastore of :mod:`hive_sync.metastore` runs no
housekeeper, so there such a lock would stay forever. Beyond Hudi, like the file system lock: every request
carries ``agentInfo = "hudi pid=<pid> req=<id>"``, and a waiting writer releases a blocking lock whose holder
is a process on this host that no longer exists (or this very process, which no longer owns that request),
logging a warning. Holders on other hosts are left to the metastore's timeout.

Beyond Hudi 0.14 too: its ``tryLock`` makes one ``lock`` call and gives up when the answer is ``WAITING``
(the lock manager's retries then do the waiting); this one polls until the timeout. A Thrift call of the
check, heartbeat or release kind that fails on a broken connection is retried on a new connection up to
``hoodie.write.lock.num_retries`` times, waiting ``wait_time_ms_between_retry`` doubling up to
``max_wait_time_ms_between_retry`` (the ZooKeeper provider's use of these keys); the ``lock`` call itself is
not repeated (a lost answer would leave an unknown request behind: the lock manager's retries cover it).

The metastore needs Hive's ACID tables (``HIVE_LOCKS``, ``NEXT_LOCK_ID``, ``TXNS``...); the metastore of
:mod:`hive_sync.metastore` creates them at start.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from hmsclient.genthrift.hive_metastore import ttypes

from engine.concurrency.provider import HIVE_METASTORE_PROVIDER
from engine.config import HoodieConfig, LockConfig
from engine.errors import ConfigError, LockError
from engine.write.heartbeat import process_exists
from hive_sync.client import HiveMetastoreClient, parse_thrift_uri
from hive_sync.errors import HiveSyncError, MetastoreUnavailable

logger = logging.getLogger(__name__)

T = TypeVar("T")

SESSION_METASTORE_KEYS = ("hive.metastore.uris", "spark.hadoop.hive.metastore.uris", "spark.hive.metastore.uris")
"""Where the session's Hive configuration names its metastore (read when the lock's own URI key is unset, as
Hudi then takes ``hive.metastore.uris`` from the Hadoop/Hive configuration)."""

_AGENT_INFO = re.compile(r"^hudi pid=(\d+) req=([0-9a-f]+)$")
"""``agentInfo`` of the requests this provider makes (HIVE_LOCKS.HL_AGENT_INFO is varchar(128))."""

_LOST_ERRORS = (ttypes.NoSuchLockException, ttypes.TxnAbortedException, ttypes.NoSuchTxnException)
"""What the metastore answers for a lock it no longer has (timed out, aborted, released)."""

_REQUESTS_GUARD = threading.Lock()
_LIVE_REQUESTS: set[str] = set()
"""Request ids (``req=``) this process has asked for and not yet released."""

_MIN_POLL_S = 0.05
_MAX_TAKEOVERS = 10


def _lock_state(state: int | None) -> str:
    return str(ttypes.LockState._VALUES_TO_NAMES.get(state, state))


class HiveMetastoreBasedLockProvider:
    """A table lock in a Hive Metastore; see the module docstring.

    Args:
        conf: the write's options: ``hoodie.write.lock.hivemetastore.database``, ``.table`` (both required),
            ``.uris`` (else the session's ``hive.metastore.uris``), ``hoodie.write.lock.heartbeat_interval_ms``,
            ``hoodie.write.lock.wait_time_ms_between_retry``, ``max_wait_time_ms_between_retry``,
            ``num_retries``.
        base_path: the Hudi table's base path (messages).
        table_name: the Hudi table's name (messages).
        client_factory: opens a client for a ``thrift://`` URI (default :class:`HiveMetastoreClient`).

    Raises:
        ConfigError: a required key is missing, no metastore URI is known, a URI is not ``thrift://host:port``,
            or a number is out of range; the message names the key and the table.

    Nothing is contacted before the first :meth:`try_lock`. One provider holds at most one lock: asking again
    while it holds one raises :class:`~engine.errors.LockError`, from any thread (Hudi: ``ALREADY_ACQUIRED``). Its
    Thrift connection is shared by the caller and the heartbeat thread (calls are serialised).
    """

    HUDI_CLASS = HIVE_METASTORE_PROVIDER

    def __init__(self, conf: HoodieConfig, *, base_path: str = "", table_name: str = "",
                 client_factory: Callable[[str], HiveMetastoreClient] = HiveMetastoreClient) -> None:
        self.table_name = table_name or base_path or "<unnamed table>"
        self.base_path = base_path
        database = (conf.get_optional(LockConfig.HIVE_DATABASE) or "").strip()
        table = (conf.get_optional(LockConfig.HIVE_TABLE) or "").strip()
        missing = [p.key for p, v in ((LockConfig.HIVE_DATABASE, database), (LockConfig.HIVE_TABLE, table)) if not v]
        if missing:
            raise ConfigError(f"{LockConfig.PROVIDER.key}={HIVE_METASTORE_PROVIDER} for table {self.table_name} "
                              f"needs {' and '.join(missing)} (the Hive database and table to lock)")
        self.database = database.lower()  # the metastore keeps lock names in lower case
        self.table = table.lower()
        uris = (conf.get_optional(LockConfig.HIVE_METASTORE_URIS) or "").strip()
        if not uris:
            uris = next((conf.raw_value(k) or "" for k in SESSION_METASTORE_KEYS if conf.raw_value(k)), "").strip()
        if not uris:
            raise ConfigError(f"{LockConfig.PROVIDER.key}={HIVE_METASTORE_PROVIDER} for table {self.table_name}: "
                              f"no metastore to lock in: set {LockConfig.HIVE_METASTORE_URIS.key} (or the "
                              f"session's hive.metastore.uris) to thrift://host:port")
        self.uris = [u.strip() for u in uris.split(",") if u.strip()]
        for uri in self.uris:
            try:
                parse_thrift_uri(uri)
            except MetastoreUnavailable as exc:
                raise ConfigError(f"{LockConfig.HIVE_METASTORE_URIS.key}={uris!r} for table {self.table_name}: "
                                  f"{exc}") from exc
        self.heartbeat_interval_ms = self._positive(conf, LockConfig.HEARTBEAT_INTERVAL_MS.key,
                                                    conf.get(LockConfig.HEARTBEAT_INTERVAL_MS))
        self.poll_cap_ms = self._positive(conf, LockConfig.WAIT_TIME_MS_BETWEEN_RETRY.key,
                                          conf.get(LockConfig.WAIT_TIME_MS_BETWEEN_RETRY), allow_zero=True)
        self.retry_max_wait_ms = self._positive(conf, LockConfig.MAX_WAIT_TIME_MS_BETWEEN_RETRY.key,
                                                conf.get(LockConfig.MAX_WAIT_TIME_MS_BETWEEN_RETRY), allow_zero=True)
        self.num_retries = self._positive(conf, LockConfig.NUM_RETRIES.key, conf.get(LockConfig.NUM_RETRIES),
                                          allow_zero=True)
        self._client_factory = client_factory
        self._client: HiveMetastoreClient | None = None
        self.uri = self.uris[0]
        self._calls = threading.Lock()   # one Thrift call at a time on the shared connection
        self._state = threading.Lock()   # lock id, request id, heartbeat thread
        self._lock_id: int | None = None
        self._request: str | None = None
        self._acquired_at = 0.0
        self._lost: str | None = None
        self._stop: threading.Event | None = None
        self._heartbeat: threading.Thread | None = None

    def _positive(self, conf: HoodieConfig, key: str, value: int, *, allow_zero: bool = False) -> int:
        if value < 0 or (value == 0 and not allow_zero):
            bound = "0 or more" if allow_zero else "more than 0"
            raise ConfigError(f"{key}={value} for table {self.table_name}: must be {bound}")
        return value

    def __repr__(self) -> str:
        return f"HiveMetastoreBasedLockProvider({self.database}.{self.table} at {self.uri})"

    def _what(self) -> str:
        return f"Hive Metastore lock on {self.database}.{self.table} at {self.uri} (table {self.table_name})"

    # ------------------------------------------------------------------ Thrift plumbing

    def _connect(self) -> HiveMetastoreClient:
        if self._client is not None:
            return self._client
        errors = []
        for uri in self.uris:
            try:
                self._client = self._client_factory(uri)
                self.uri = uri
                return self._client
            except HiveSyncError as exc:
                errors.append(str(exc))
        raise MetastoreUnavailable(f"{self._what()}: cannot connect to the metastore ({'; '.join(errors)})")

    def _drop_connection(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # noqa: BLE001 - a broken connection may fail to close
                logger.debug("closing the metastore connection %s failed: %s", self.uri, exc)

    def _rpc(self, what: str, call: Callable[[HiveMetastoreClient], T]) -> T:
        """One Thrift call on the shared connection (connecting first if needed). The lock API's own exceptions
        (no such lock...) propagate; an unreachable metastore or broken connection is dropped and raised as
        :class:`MetastoreUnavailable`; other failures as :class:`LockError`."""
        with self._calls:
            client = self._connect()
            try:
                return call(client)
            except _LOST_ERRORS:
                raise
            except MetastoreUnavailable:
                self._drop_connection()
                raise
            except HiveSyncError as exc:
                raise LockError(f"{self._what()}: {what} failed: {exc}{self._schema_hint(exc)}") from exc

    def _rpc_retrying(self, what: str, call: Callable[[HiveMetastoreClient], T],
                      stop: threading.Event | None = None) -> T:
        """:meth:`_rpc`, retried on a new connection after a broken one (``num_retries`` times, backoff from
        ``wait_time_ms_between_retry`` up to ``max_wait_time_ms_between_retry``); then :class:`LockError`."""
        delay_ms = max(1, self.poll_cap_ms)
        for attempt in range(self.num_retries + 1):
            try:
                return self._rpc(what, call)
            except MetastoreUnavailable as exc:
                if attempt >= self.num_retries:
                    raise LockError(f"{self._what()}: {what} failed after {attempt + 1} attempts "
                                    f"({LockConfig.NUM_RETRIES.key}={self.num_retries}): {exc}") from exc
                logger.warning("%s: %s failed (%s); retrying in %d ms", self._what(), what, exc, delay_ms)
                if stop is not None:
                    if stop.wait(delay_ms / 1000):
                        raise LockError(f"{self._what()}: {what} abandoned: {exc}") from exc
                else:
                    time.sleep(delay_ms / 1000)
                delay_ms = min(delay_ms * 2, max(delay_ms, self.retry_max_wait_ms))
        raise AssertionError("unreachable")

    @staticmethod
    def _schema_hint(exc: Exception) -> str:
        text = str(exc)
        if "HIVE_LOCKS" in text or "NEXT_LOCK_ID" in text or "does not exist" in text:
            return (" (the metastore lacks Hive's ACID lock tables: HIVE_LOCKS, NEXT_LOCK_ID, ...; the metastore "
                    "of hive_sync.metastore creates them at start)")
        return ""

    # ------------------------------------------------------------------ lock / unlock

    def try_lock(self, timeout_ms: int) -> bool:
        """Request the exclusive table lock and wait up to ``timeout_ms`` for it (see the module docstring).

        Returns:
            Whether the lock is now held (a heartbeat thread then keeps it).

        Raises:
            LockError: this provider already holds it, or the metastore failed or is unreachable (names the URI,
                database and table).
        """
        with self._state:
            if self._lock_id is not None:
                raise LockError(f"{self._what()}: already held by this provider (lock id {self._lock_id}); the "
                                f"lock is not re-entrant")
        request_id = uuid.uuid4().hex[:16]
        with _REQUESTS_GUARD:
            _LIVE_REQUESTS.add(request_id)
        deadline = time.monotonic() + max(0, timeout_ms) / 1000
        component = ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE,
                                         dbname=self.database, tablename=self.table)
        request = ttypes.LockRequest(component=[component], user=getpass.getuser(), hostname=socket.gethostname(),
                                     agentInfo=f"hudi pid={os.getpid()} req={request_id}")
        lock_id: int | None = None
        acquired = False
        try:
            try:
                response = self._rpc("lock", lambda c: c.lock(request))
            except (MetastoreUnavailable, *_LOST_ERRORS) as exc:
                raise LockError(f"{self._what()}: the lock request failed: {exc}") from exc
            lock_id = int(response.lockid)
            state = response.state
            logger.debug("%s: lock id %d is %s", self._what(), lock_id, _lock_state(state))
            delay = _MIN_POLL_S
            takeovers = 0
            while state == ttypes.LockState.WAITING:
                if takeovers < _MAX_TAKEOVERS and self._release_dead_holders(lock_id):
                    takeovers += 1
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    time.sleep(min(delay, remaining))
                    delay = min(delay * 2, max(_MIN_POLL_S, self.poll_cap_ms / 1000))
                try:
                    state = self._check_lock(lock_id)
                except _LOST_ERRORS as exc:
                    logger.info("%s: the waiting request %d is gone (%s)", self._what(), lock_id, exc)
                    lock_id = None
                    break
            acquired = state == ttypes.LockState.ACQUIRED and lock_id is not None
            if acquired:
                assert lock_id is not None
                self._start_holding(lock_id, request_id)
                logger.info("%s: acquired (lock id %d)", self._what(), lock_id)
                return True
            logger.info("%s: not acquired within %d ms (state %s)", self._what(), timeout_ms, _lock_state(state))
            return False
        finally:
            if not acquired:
                if lock_id is not None:
                    self._release_quietly(lock_id, "the waiting request")
                with _REQUESTS_GUARD:
                    _LIVE_REQUESTS.discard(request_id)

    def _check_lock(self, lock_id: int) -> int:
        """The state (``ttypes.LockState``) of ``lock_id``; the lock API's exceptions propagate."""
        response = self._rpc_retrying("check_lock", lambda c: c.check_lock(lock_id))
        return int(response.state)

    def _release_quietly(self, lock_id: int, what: str) -> None:
        try:
            self._rpc_retrying("unlock", lambda c: c.unlock(lock_id))
        except _LOST_ERRORS:
            pass
        except LockError as exc:
            logger.warning("%s: could not release %s %d: %s", self._what(), what, lock_id, exc)

    def _release_dead_holders(self, lock_id: int) -> bool:
        """Release the locks and waiting requests on this table (ahead of ours in Hive's queue) whose holder is a
        dead process on this host, or a request this process no longer owns; ``True`` when one was released."""
        try:
            locks = self._rpc("show_locks", lambda c: c.show_locks(self.database, self.table))
        except (MetastoreUnavailable, LockError, *_LOST_ERRORS) as exc:
            logger.debug("%s: cannot list the locks: %s", self._what(), exc)
            return False
        released = False
        host = socket.gethostname()
        for element in locks:
            if element.lockid == lock_id:
                continue
            if (element.dbname or "").lower() != self.database or (element.tablename or "").lower() != self.table:
                continue
            reason = self._dead_holder_reason(element, host)
            if reason is None:
                continue
            logger.warning("%s: releasing lock id %d of %s on host %s (%s): %s", self._what(), element.lockid,
                           element.user, element.hostname, element.agentInfo, reason)
            self._release_quietly(int(element.lockid), "the dead holder's lock")
            released = True
        return released

    @staticmethod
    def _dead_holder_reason(element: Any, host: str) -> str | None:
        match = _AGENT_INFO.match(element.agentInfo or "")
        if match is None or element.hostname != host:
            return None
        pid, request_id = int(match.group(1)), match.group(2)
        if pid == os.getpid():
            with _REQUESTS_GUARD:
                live = request_id in _LIVE_REQUESTS
            return None if live else "it was left by this process, which no longer holds it"
        if not process_exists(pid):
            return f"its holder, pid {pid} on this host, no longer exists"
        return None

    def _start_holding(self, lock_id: int, request_id: str) -> None:
        stop = threading.Event()
        thread = threading.Thread(target=self._heartbeat_loop, args=(lock_id, stop),
                                  name=f"hms-lock-heartbeat-{lock_id}", daemon=True)
        with self._state:
            self._lock_id = lock_id
            self._request = request_id
            self._acquired_at = time.time()
            self._lost = None
            self._stop = stop
            self._heartbeat = thread
        thread.start()

    def _heartbeat_loop(self, lock_id: int, stop: threading.Event) -> None:
        wait_s = self.heartbeat_interval_ms / 2000
        while not stop.wait(wait_s):
            wait_s = self.heartbeat_interval_ms / 1000
            try:
                self._rpc_retrying("heartbeat", lambda c: c.heartbeat(lock_id), stop)
                logger.debug("%s: heartbeat of lock id %d", self._what(), lock_id)
            except _LOST_ERRORS as exc:
                with self._state:
                    if stop.is_set() or self._lock_id != lock_id:
                        return  # released meanwhile: nothing was lost
                    self._lost = f"the metastore expired or aborted lock id {lock_id} ({exc})"
                logger.error("%s: %s; heartbeats stopped and exclusivity is lost", self._what(), self._lost)
                return
            except LockError as exc:
                if stop.is_set():
                    return
                logger.warning("%s: heartbeat of lock id %d failed, trying again in %.0f s: %s", self._what(),
                               lock_id, wait_s, exc)

    def _stop_heartbeat(self, stop: threading.Event | None, thread: threading.Thread | None) -> None:
        if stop is not None:
            stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    def unlock(self) -> None:
        """Stop the heartbeat and release the lock (nothing when this provider does not hold one).

        Raises:
            LockError: releasing failed, or the metastore had already expired or aborted the lock (the writer
                went on without exclusivity).
        """
        with self._state:
            lock_id, request_id, lost = self._lock_id, self._request, self._lost
            stop, thread = self._stop, self._heartbeat
            self._lock_id = self._request = self._lost = None
            self._stop = self._heartbeat = None
        if lock_id is None:
            logger.info("%s: unlock by a provider that does not hold it; nothing released", self._what())
            return
        self._stop_heartbeat(stop, thread)
        try:
            self._rpc_retrying("unlock", lambda c: c.unlock(lock_id))
            logger.info("%s: released (lock id %d, held %.1f s)", self._what(), lock_id,
                        time.time() - self._acquired_at)
        except _LOST_ERRORS as exc:
            lost = lost or f"the metastore no longer had lock id {lock_id} ({exc})"
        finally:
            with _REQUESTS_GUARD:
                _LIVE_REQUESTS.discard(request_id or "")
        if lost:
            raise LockError(f"{self._what()}: the lock was lost while held: {lost}; the commit ran without "
                            f"exclusivity")

    def close(self) -> None:
        """Release the lock if held and close the connection; errors are logged (Hudi's ``close`` logs them)."""
        try:
            self.unlock()
        except LockError as exc:
            logger.error("%s: %s", self._what(), exc)
        with self._calls:
            self._drop_connection()

    # ------------------------------------------------------------------ messages

    def describe(self) -> str:
        """``Hive Metastore lock on db.t at thrift://h:p: held by lock id 7 (user u, host h, agent 'hudi pid=..',
        acquired 3 s ago, last heartbeat 1 s ago)``, ``... free`` or ``... holder unknown (error)``."""
        head = f"Hive Metastore lock on {self.database}.{self.table} at {self.uri}"
        with self._state:
            lock_id = self._lock_id
        if lock_id is not None:
            return f"{head}: held by this provider (lock id {lock_id}, pid {os.getpid()})"
        try:
            locks = self._rpc("show_locks", lambda c: c.show_locks(self.database, self.table))
        except (MetastoreUnavailable, LockError, *_LOST_ERRORS) as exc:
            return f"{head}: holder unknown ({exc})"
        now_ms = time.time() * 1000
        held = [e for e in locks if e.state == ttypes.LockState.ACQUIRED
                and (e.dbname or "").lower() == self.database and (e.tablename or "").lower() == self.table]
        if not held:
            return f"{head}: free"
        parts = []
        for e in held:
            since = f", acquired {(now_ms - e.acquiredat) / 1000:.0f} s ago" if e.acquiredat else ""
            beat = f", last heartbeat {(now_ms - e.lastheartbeat) / 1000:.0f} s ago" if e.lastheartbeat else ""
            parts.append(f"lock id {e.lockid} (user {e.user}, host {e.hostname}, agent {e.agentInfo!r}{since}{beat})")
        return f"{head}: held by {'; '.join(parts)}"
