"""Thin typed wrapper over hmsclient 0.1.1 (Hive Metastore Thrift API), the Python counterpart of the
``IMetaStoreClient`` calls Hudi's ``HoodieHiveSyncClient`` / ``HMSDDLExecutor`` make.

Every Thrift round trip goes through :meth:`HiveMetastoreClient._call`, which counts it in ``calls`` (total)
and ``call_counts`` (per Thrift method), so callers can check that incremental sync costs a number of
metastore calls that grows with the changed partitions, not with the table size.
"""

from __future__ import annotations

import copy
import getpass
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlparse

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes
from hmsclient.genthrift.hive_metastore.ttypes import (
    FieldSchema,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from thrift.Thrift import TException
from thrift.transport.TTransport import TTransportException

from hive_sync.errors import MetastoreUnavailable, SyncError

logger = logging.getLogger(__name__)

T = TypeVar("T")


# Hudi HoodieInputFormatUtils (PARQUET base files), docs/SQL.md §3.1.
HUDI_PARQUET_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
HUDI_PARQUET_REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
PARQUET_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"

DEFAULT_BATCH_SIZE = 1000
"""``hoodie.datasource.hive_sync.batch_num`` default: partitions per add/alter call."""


def parse_thrift_uri(uri: str) -> tuple[str, int]:
    """``thrift://host:port`` (first of a comma-separated list) → ``(host, port)``; port defaults to 9083.

    Raises :class:`MetastoreUnavailable` for a URI that is not ``thrift://``.
    """
    first = uri.split(",")[0].strip()
    parsed = urlparse(first)
    if parsed.scheme != "thrift" or not parsed.hostname:
        raise MetastoreUnavailable(f"not a metastore thrift URI: {uri!r} (expected thrift://host:port)")
    return parsed.hostname, parsed.port or 9083


def make_table(database: str, table: str, location: str, columns: Sequence[tuple[str, str]],
               partition_columns: Sequence[tuple[str, str]] = (), *,
               input_format: str = HUDI_PARQUET_INPUT_FORMAT, output_format: str = PARQUET_OUTPUT_FORMAT,
               serde: str = PARQUET_SERDE, serde_params: Mapping[str, str] | None = None,
               table_params: Mapping[str, str] | None = None, external: bool = True,
               owner: str | None = None) -> Table:
    """Build the Thrift ``Table`` Hudi's ``HMSDDLExecutor.createTable`` registers.

    ``columns``/``partition_columns``: ``(name, hive type)`` pairs (data columns exclude partition
    columns). ``serde_params`` get ``serialization.format=1`` added; ``table_params`` get ``EXTERNAL=TRUE``
    when ``external``; table type ``EXTERNAL_TABLE`` or ``MANAGED_TABLE``; owner = current user.
    """
    params = dict(table_params or {})
    if external:
        params["EXTERNAL"] = "TRUE"
    sparams = {"serialization.format": "1", **(serde_params or {})}
    sd = StorageDescriptor(
        cols=[FieldSchema(name=n, type=t, comment="") for n, t in columns],
        location=location, inputFormat=input_format, outputFormat=output_format, compressed=False,
        numBuckets=-1, serdeInfo=SerDeInfo(name=table, serializationLib=serde, parameters=sparams),
        bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
    now = int(time.time())
    return Table(tableName=table, dbName=database, owner=owner or getpass.getuser(), createTime=now,
                 lastAccessTime=now, retention=0, sd=sd,
                 partitionKeys=[FieldSchema(name=n, type=t, comment="") for n, t in partition_columns],
                 parameters=params, tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


class HiveMetastoreClient:
    """Typed Hive Metastore client over one Thrift connection (Hudi ``IMetaStoreClient`` usage).

    ``HiveMetastoreClient("thrift://127.0.0.1:9083")``; open on construction, ``close()`` or use as a
    context manager. ``calls``: total Thrift calls made; ``call_counts``: per Thrift method name.
    Errors: :class:`MetastoreUnavailable` (cannot connect / transport broken), :class:`SyncError` (a call
    failed; the message names database/table/partition).
    """

    def __init__(self, uri: str, timeout_s: float = 60.0) -> None:
        self.uri = uri
        host, port = parse_thrift_uri(uri)
        self._client = hmsclient.HMSClient(host=host, port=port)
        self._client._oprot.trans._TBufferedTransport__trans.setTimeout(int(timeout_s * 1000))
        self.calls = 0
        self.call_counts: Counter[str] = Counter()
        try:
            self._client.open()
        except TTransportException as e:
            raise MetastoreUnavailable(f"cannot connect to the Hive Metastore at {uri}: {e}") from e

    def close(self) -> None:
        """Close the Thrift connection (idempotent)."""
        self._client.close()

    def __enter__(self) -> HiveMetastoreClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _call(self, method: str, target: str, *args: Any) -> Any:
        """Invoke Thrift ``method(*args)``, counting it; map transport/Thrift errors (``target`` names
        the object for messages). ``NoSuchObjectException``/``AlreadyExistsException`` and the lock API's
        ``NoSuchLockException``/``TxnAbortedException``/``NoSuchTxnException`` propagate."""
        self.calls += 1
        self.call_counts[method] += 1
        fn: Callable[..., Any] = getattr(self._client, method)
        try:
            return fn(*args)
        except (ttypes.NoSuchObjectException, ttypes.AlreadyExistsException, ttypes.NoSuchLockException,
                ttypes.TxnAbortedException, ttypes.NoSuchTxnException):
            raise
        except TTransportException as e:
            raise MetastoreUnavailable(f"metastore {self.uri} unreachable during {method} on {target}: {e}") from e
        except TException as e:
            msg = getattr(e, "message", None) or repr(e)
            raise SyncError(f"metastore {method} failed for {target}: {msg}") from e

    # ---- databases -------------------------------------------------------------------------------
    def all_databases(self) -> list[str]:
        """Names of all databases."""
        return list(self._call("get_all_databases", "<all databases>"))

    def database_exists(self, database: str) -> bool:
        """True when ``database`` exists (one ``get_database`` call)."""
        try:
            self._call("get_database", database, database)
            return True
        except ttypes.NoSuchObjectException:
            return False

    def create_database(self, database: str, location: str | None = None, description: str = "",
                        if_not_exists: bool = True) -> None:
        """Create ``database`` (location defaults to the warehouse). Raises SyncError if it exists and
        not ``if_not_exists``."""
        db = ttypes.Database(name=database, description=description, locationUri=location, parameters={})
        try:
            self._call("create_database", database, db)
        except ttypes.AlreadyExistsException as e:
            if not if_not_exists:
                raise SyncError(f"database {database} already exists") from e

    # ---- tables ----------------------------------------------------------------------------------
    def get_table(self, database: str, table: str) -> Table:
        """The Thrift table ``database.table``. Raises SyncError when it does not exist."""
        try:
            result: Table = self._call("get_table", f"{database}.{table}", database, table)
            return result
        except ttypes.NoSuchObjectException as e:
            raise SyncError(f"table {database}.{table} does not exist") from e

    def table_exists(self, database: str, table: str) -> bool:
        """True when ``database.table`` exists (one ``get_table`` call)."""
        try:
            self._call("get_table", f"{database}.{table}", database, table)
            return True
        except ttypes.NoSuchObjectException:
            return False

    def create_table(self, table: Table) -> None:
        """Register ``table`` (see :func:`make_table`). Raises SyncError if it exists or is invalid."""
        target = f"{table.dbName}.{table.tableName}"
        try:
            self._call("create_table", target, table)
        except (ttypes.AlreadyExistsException, ttypes.NoSuchObjectException) as e:
            raise SyncError(f"cannot create table {target}: {e.message}") from e

    def alter_table(self, database: str, table: str, new_table: Table, cascade: bool = False) -> None:
        """Replace the definition of ``database.table`` (``alter_table_with_environment_context``); with
        ``cascade`` the column change is propagated to every partition (Hudi sets ``CASCADE=true`` when the
        table is partitioned)."""
        ctx = ttypes.EnvironmentContext(properties={"CASCADE": "true"} if cascade else {})
        try:
            self._call("alter_table_with_environment_context", f"{database}.{table}", database, table,
                       new_table, ctx)
        except ttypes.NoSuchObjectException as e:
            raise SyncError(f"cannot alter table {database}.{table}: {e.message}") from e

    def drop_table(self, database: str, table: str, delete_data: bool = False) -> bool:
        """Drop ``database.table``; False when it did not exist. Data is kept unless ``delete_data``."""
        try:
            self._call("drop_table", f"{database}.{table}", database, table, delete_data)
            return True
        except ttypes.NoSuchObjectException:
            return False

    def table_names(self, database: str, pattern: str = "*") -> list[str]:
        """Table names in ``database`` matching the Hive ``pattern``."""
        return list(self._call("get_tables", database, database, pattern))

    # ---- partitions ------------------------------------------------------------------------------
    def partition_names(self, database: str, table: str) -> list[str]:
        """Hive partition names (``k1=v1/k2=v2``, values escaped as Hive ``FileUtils.escapePathName``)."""
        return list(self._call("get_partition_names", f"{database}.{table}", database, table, -1))

    def list_partitions(self, database: str, table: str) -> list[Partition]:
        """All partitions of ``database.table`` with their storage descriptors (one call)."""
        return list(self._call("get_partitions", f"{database}.{table}", database, table, -1))

    def partition_locations(self, database: str, table: str) -> dict[tuple[str, ...], str]:
        """``{partition values: location}`` of every partition (Hudi ``getAllPartitions``)."""
        return {tuple(p.values): p.sd.location for p in self.list_partitions(database, table)}

    @staticmethod
    def _partition(table: Table, values: Sequence[str], location: str) -> Partition:
        sd = copy.deepcopy(table.sd)
        sd.location = location
        return Partition(values=list(values), dbName=table.dbName, tableName=table.tableName,
                         createTime=0, lastAccessTime=0, sd=sd, parameters={})

    def add_partitions(self, table: Table, partitions: Iterable[tuple[Sequence[str], str]],
                       batch_size: int = DEFAULT_BATCH_SIZE) -> int:
        """Add ``(values, location)`` partitions to ``table`` with ``ifNotExists`` (Hudi
        ``HMSDDLExecutor.addPartitionsToTable``), ``batch_size`` per ``add_partitions_req`` call; the SD is
        copied from the table. Returns the number of Thrift calls made."""
        return self._batched("add_partitions_req", table, partitions, batch_size, lambda parts: (
            ttypes.AddPartitionsRequest(dbName=table.dbName, tblName=table.tableName, parts=parts,
                                        ifNotExists=True, needResult=False),))

    def alter_partitions(self, table: Table, partitions: Iterable[tuple[Sequence[str], str]],
                         batch_size: int = DEFAULT_BATCH_SIZE) -> int:
        """Point existing ``(values, location)`` partitions at new locations (Hudi
        ``updatePartitionsToTable``; SD copied from the table), batched. Returns the Thrift call count."""
        return self._batched("alter_partitions", table, partitions, batch_size,
                             lambda parts: (table.dbName, table.tableName, parts))

    def _batched(self, method: str, table: Table, partitions: Iterable[tuple[Sequence[str], str]],
                 batch_size: int, args: Callable[[list[Partition]], tuple[Any, ...]]) -> int:
        parts = [self._partition(table, values, loc) for values, loc in partitions]
        target = f"{table.dbName}.{table.tableName}"
        n = 0
        for i in range(0, len(parts), max(1, batch_size)):
            batch = parts[i:i + max(1, batch_size)]
            try:
                self._call(method, target, *args(batch))
            except (ttypes.NoSuchObjectException, ttypes.AlreadyExistsException) as e:
                raise SyncError(f"{method} failed for {target} partitions "
                                f"{[p.values for p in batch][:5]}...: {e.message}") from e
            n += 1
        logger.debug("%s: %d partitions of %s in %d calls", method, len(parts), target, n)
        return n

    def drop_partition(self, database: str, table: str, name: str) -> bool:
        """Drop partition ``name`` (``k1=v1/k2=v2``, Hive-escaped) without deleting data; False when absent
        (Hudi ``dropPartitionsToTable`` with ``deleteData=false``)."""
        try:
            return bool(self._call("drop_partition_by_name", f"{database}.{table}/{name}", database, table,
                                   name, False))
        except ttypes.NoSuchObjectException:
            return False

    def partitions_by_names(self, database: str, table: str, names: Sequence[str]) -> list[Partition]:
        """Partitions named ``names`` (``k1=v1/k2=v2``, Hive-escaped) in one ``get_partitions_by_names`` call
        (Hudi's filter push-down path fetches only the touched partitions); missing names are skipped."""
        if not names:
            return []
        return list(self._call("get_partitions_by_names", f"{database}.{table}", database, table, list(names)))

    # ---- locks (Hive's ACID lock API, Hudi HiveMetastoreBasedLockProvider) -----------------------------------
    def lock(self, request: ttypes.LockRequest) -> ttypes.LockResponse:
        """Enqueue ``request`` (Thrift ``lock``); the response holds the lock id and ``ACQUIRED`` or ``WAITING``
        (the metastore does not wait: poll :meth:`check_lock`). Needs the metastore's ACID tables
        (``HIVE_LOCKS``...). Raises SyncError / MetastoreUnavailable, or the lock API's Thrift exceptions."""
        target = ",".join(f"{c.dbname}.{c.tablename}" for c in request.component or [])
        response: ttypes.LockResponse = self._call("lock", target, request)
        return response

    def check_lock(self, lock_id: int) -> ttypes.LockResponse:
        """The state of lock ``lock_id`` (Thrift ``check_lock``; also heartbeats it). Raises
        ``NoSuchLockException`` when the metastore no longer knows it."""
        response: ttypes.LockResponse = self._call("check_lock", f"lock {lock_id}",
                                                   ttypes.CheckLockRequest(lockid=lock_id))
        return response

    def unlock(self, lock_id: int) -> None:
        """Release lock ``lock_id``, acquired or waiting (Thrift ``unlock``)."""
        self._call("unlock", f"lock {lock_id}", ttypes.UnlockRequest(lockid=lock_id))

    def heartbeat(self, lock_id: int) -> None:
        """Tell the metastore lock ``lock_id`` is still in use (Thrift ``heartbeat``), so it is not timed out
        after ``hive.txn.timeout``. Raises ``NoSuchLockException`` when it already was."""
        self._call("heartbeat", f"lock {lock_id}", ttypes.HeartbeatRequest(lockid=lock_id))

    def show_locks(self, database: str | None = None, table: str | None = None) -> list[Any]:
        """The metastore's locks (``ShowLocksResponseElement``: lockid, state, type, user, hostname,
        agentInfo, lastheartbeat, acquiredat ms, blockedByExtId), of ``database[.table]`` when given."""
        response = self._call("show_locks", f"{database}.{table}",
                              ttypes.ShowLocksRequest(dbname=database, tablename=table))
        return list(response.locks or [])
