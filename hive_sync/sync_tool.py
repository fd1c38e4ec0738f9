"""Register a Hudi table in the Hive Metastore and keep it in step with the timeline.

Mirrors Hudi ``org.apache.hudi.hive.HiveSyncTool.syncHoodieTable`` in HMS mode (``HMSDDLExecutor``), with the
table layout of docs/SQL.md §3.1 (copy-on-write: one table; merge-on-read: ``_ro``/``_rt`` plus the bare name per
``table.strategy``, ``skip_ro_suffix`` and ``sync_snapshot_with_table_name``), the table/serde parameters of
§3.2 and the full/incremental partition sync of §3.3. The Hudi table is only read (``engine.table.Table``);
a failed sync never writes to it.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema
from pyspark.sql.pandas.types import from_arrow_schema

from engine.errors import EngineError
from engine.formats.avro_schema import avro_to_arrow
from engine.table import Table
from engine.timeline.instant import REPLACE_COMMIT, Instant
from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    HUDI_PARQUET_REALTIME_INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
    HiveMetastoreClient,
    make_table,
)
from hive_sync.config import HiveSyncConfig
from hive_sync.errors import HiveSyncError, SyncError
from hive_sync.partitions import (
    PartitionEvent,
    PartitionEventType,
    check_partition_path,
    extractor_for,
    full_sync_events,
    hive_partition_name,
    incremental_sync_events,
    partition_values,
    path_without_scheme,
)
from hive_sync.schema import SchemaDifference, hive_field_schemas, schema_difference

logger = logging.getLogger(__name__)

LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
LAST_COMMIT_COMPLETION_TIME_SYNC = "last_commit_completion_time_sync"
SPARK_PROVIDER = "spark.sql.sources.provider"
RO_PARAM = "hoodie.query.as.ro.table"
_NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")

# (base file format, realtime, pre-apache) → (input format, output format, serde); HoodieInputFormatUtils.
_ORC = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde")


def storage_formats(base_file_format: str, realtime: bool, pre_apache: bool = False) -> tuple[str, str, str]:
    """``(input format, output format, serde)`` class names for a Hive table over ``base_file_format``
    (PARQUET, HFILE, ORC) as Hudi ``HoodieInputFormatUtils.getInputFormatClassName`` & co. pick them.
    Raises :class:`SyncError` for an unknown format."""
    fmt = base_file_format.upper()
    if fmt == "PARQUET":
        if pre_apache:
            inp = ("com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat" if realtime
                   else "com.uber.hoodie.hadoop.HoodieInputFormat")
        else:
            inp = HUDI_PARQUET_REALTIME_INPUT_FORMAT if realtime else HUDI_PARQUET_INPUT_FORMAT
        return inp, PARQUET_OUTPUT_FORMAT, PARQUET_SERDE
    if fmt == "HFILE":
        inp = ("org.apache.hudi.hadoop.realtime.HoodieHFileRealtimeInputFormat" if realtime
               else "org.apache.hudi.hadoop.HoodieHFileInputFormat")
        return inp, PARQUET_OUTPUT_FORMAT, PARQUET_SERDE
    if fmt == "ORC":
        return _ORC
    raise SyncError(f"unsupported base file format {base_file_format!r} for hive sync")


# ---- Spark datasource table properties (SparkDataSourceTableUtils.getSparkTableProperties) -------------


def spark_table_properties(avro_schema: Mapping[str, Any], partition_fields: Sequence[str], threshold: int,
                           spark_version: str = "") -> dict[str, str]:
    """Spark datasource table parameters (Hudi ``SparkDataSourceTableUtils.getSparkTableProperties``):
    ``spark.sql.sources.provider=hudi``, the Spark JSON schema (partition columns moved last) split in
    ``threshold``-character chunks as ``spark.sql.sources.schema.numParts``/``part.N``, and
    ``numPartCols``/``partCol.N``; ``spark.sql.create.version`` when ``spark_version`` is known."""
    arrow = avro_to_arrow(dict(avro_schema))
    lower_parts = [p.lower() for p in partition_fields]
    data = [f for f in arrow if f.name.lower() not in lower_parts]
    parts = [f for p in lower_parts for f in arrow if f.name.lower() == p]
    try:
        spark_schema = from_arrow_schema(pa.schema(data + parts))
    except (TypeError, ValueError) as exc:
        raise SyncError(f"cannot express the table schema as a Spark schema: {exc}") from exc
    # Key order as Spark's Scala side writes it ({"type":"struct","fields":[...]}), unlike StructType.json().
    text = json.dumps(spark_schema.jsonValue(), separators=(",", ":"))
    chunk = max(1, threshold)
    chunks = [text[i:i + chunk] for i in range(0, len(text), chunk)]
    props = {SPARK_PROVIDER: "hudi", "spark.sql.sources.schema.numParts": str(len(chunks))}
    for i, c in enumerate(chunks):
        props[f"spark.sql.sources.schema.part.{i}"] = c
    if partition_fields:
        props["spark.sql.sources.schema.numPartCols"] = str(len(partition_fields))
        for i, p in enumerate(partition_fields):
            props[f"spark.sql.sources.schema.partCol.{i}"] = p
    if spark_version:
        props["spark.sql.create.version"] = spark_version
    return props


# ---- results ----------------------------------------------------------------------------------------


@dataclass
class TableSyncResult:
    """Outcome for one Hive table. ``kind``: ``COW``, ``RO`` or ``RT``; partition lists hold metastore
    partition values; ``schema_change`` is the applied :class:`SchemaDifference` (None when none)."""

    table: str
    kind: str
    created: bool = False
    recreated: bool = False
    skipped: bool = False
    properties_updated: bool = False
    schema_change: SchemaDifference | None = None
    full_partition_sync: bool = False
    partitions_added: list[tuple[str, ...]] = field(default_factory=list)
    partitions_updated: list[tuple[str, ...]] = field(default_factory=list)
    partitions_dropped: list[tuple[str, ...]] = field(default_factory=list)
    last_commit_time_sync: str | None = None


@dataclass
class SyncResult:
    """Outcome of :meth:`HiveSyncTool.sync`: per-table results, the metastore calls this sync made (total
    and per Thrift method) and errors swallowed under ``ignore_exceptions``."""

    database: str
    base_path: str
    tables: list[TableSyncResult] = field(default_factory=list)
    metastore_calls: int = 0
    call_counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def tables_created(self) -> list[str]:
        """Hive tables created (or recreated) by this sync."""
        return [t.table for t in self.tables if t.created or t.recreated]

    @property
    def tables_updated(self) -> list[str]:
        """Existing Hive tables whose schema or parameters changed."""
        return [t.table for t in self.tables if not t.created and (t.schema_change or t.properties_updated)]

    @property
    def tables_skipped(self) -> list[str]:
        """Tables already in sync with the latest commit."""
        return [t.table for t in self.tables if t.skipped]

    @property
    def partitions_added(self) -> dict[str, list[tuple[str, ...]]]:
        """``{table: added partition values}`` (tables with additions only)."""
        return {t.table: t.partitions_added for t in self.tables if t.partitions_added}

    @property
    def partitions_updated(self) -> dict[str, list[tuple[str, ...]]]:
        """``{table: re-located partition values}``."""
        return {t.table: t.partitions_updated for t in self.tables if t.partitions_updated}

    @property
    def partitions_dropped(self) -> dict[str, list[tuple[str, ...]]]:
        """``{table: dropped partition values}``."""
        return {t.table: t.partitions_dropped for t in self.tables if t.partitions_dropped}

    @property
    def schema_changes(self) -> dict[str, SchemaDifference]:
        """``{table: applied schema difference}``."""
        return {t.table: t.schema_change for t in self.tables if t.schema_change is not None}


# ---- the tool ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    name: str
    kind: str  # COW, RO, RT

    @property
    def read_optimized(self) -> bool:
        return self.kind != "RT"


def instant_time_of(ms: int) -> str:
    """Epoch milliseconds → UTC instant string ``yyyyMMddHHmmssSSS``."""
    t = _dt.datetime.fromtimestamp(ms / 1000.0, tz=_dt.UTC)
    return t.strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}"


def check_hive_name(name: str, what: str) -> str:
    """Return ``name`` when it is a plain Hive identifier (letters, digits, ``_``); else raise
    :class:`SyncError` — names with ``/``, ``..`` or blanks could address objects outside the database."""
    if not _NAME_RE.match(name or ""):
        raise SyncError(f"invalid {what} name {name!r}: only letters, digits and '_' are allowed")
    return name


class HiveSyncTool:
    """Hudi ``HiveSyncTool`` (HMS mode) for one table.

    ``HiveSyncTool(base_path, config, client=None)``: ``config`` is a :class:`HiveSyncConfig` or a raw
    option map (resolved with inference from the table). Without ``client`` a :class:`HiveMetastoreClient`
    is opened on ``config.metastore_uris`` for each :meth:`sync` and closed afterwards.
    """

    def __init__(self, table_base_path: str, config: HiveSyncConfig | Mapping[str, str],
                 client: HiveMetastoreClient | None = None) -> None:
        self.base_path = table_base_path.rstrip("/") or "/"
        try:
            self.hudi = Table.load(self.base_path)
        except EngineError as e:
            raise SyncError(f"cannot sync {self.base_path}: not a readable Hudi table: {e}") from e
        if isinstance(config, HiveSyncConfig):
            self.config = config.with_table(self.hudi)
        else:
            self.config = HiveSyncConfig.from_options(config, self.hudi, self.base_path)
        self.client = client
        self.database = check_hive_name(self.config.database, "database")
        check_hive_name(self.config.table, "table")
        self.extractor = extractor_for(self.config.partition_extractor_class)

    # ---- which tables ---------------------------------------------------------------------------
    def targets(self) -> list[_Target]:
        """Hive tables to register (docs/SQL.md §3.1), in sync order."""
        c, t = self.config, self.config.table
        if not self.hudi.is_mor:
            return [_Target(t, "COW")]
        if c.table_strategy == "RO":
            return [_Target(t, "RO")]
        if c.table_strategy == "RT":
            return [_Target(t, "RT")]
        out = [_Target(t if c.skip_ro_suffix else f"{t}_ro", "RO"), _Target(f"{t}_rt", "RT")]
        if c.sync_snapshot_with_table_name and not c.skip_ro_suffix:
            out.append(_Target(t, "RT"))
        return out

    # ---- entry point ----------------------------------------------------------------------------
    def sync(self) -> SyncResult:
        """Sync every target table (Hudi ``syncHoodieTable``). Returns a :class:`SyncResult`.

        Raises :class:`SyncError` naming ``db.table`` and the cause (unless ``ignore_exceptions``, which
        records it in ``SyncResult.errors``); :class:`MetastoreUnavailable` when the metastore is down.
        """
        own = self.client is None
        client = self.client or HiveMetastoreClient(self.config.metastore_uris)
        calls0, counts0 = client.calls, dict(client.call_counts)
        result = SyncResult(self.database, self.base_path)
        try:
            self._ensure_database(client)
            timeline = self.hudi.reload_timeline()
            commits = timeline.completed_commits()
            schema = self.hudi.latest_avro_schema(include_meta=not self.config.omit_metadata_fields)
            for target in self.targets():
                try:
                    result.tables.append(self._sync_table(client, target, commits, schema))
                except (HiveSyncError, EngineError) as e:
                    err = SyncError(f"failed to sync {self.database}.{target.name} from {self.base_path}: {e}")
                    if not self.config.ignore_exceptions:
                        raise err from e
                    logger.error("%s", err)
                    result.errors.append(str(err))
        finally:
            result.metastore_calls = client.calls - calls0
            result.call_counts = {k: v - counts0.get(k, 0) for k, v in client.call_counts.items()
                                  if v - counts0.get(k, 0)}
            if own:
                client.close()
        logger.info("hive sync of %s into %s: created %s, updated %s, skipped %s, %d metastore calls",
                    self.base_path, self.database, result.tables_created, result.tables_updated,
                    result.tables_skipped, result.metastore_calls)
        return result

    def _ensure_database(self, client: HiveMetastoreClient) -> None:
        if client.database_exists(self.database):
            return
        if not self.config.auto_create_database:
            raise SyncError(f"database {self.database} does not exist and auto_create_database is false "
                            f"(syncing {self.base_path})")
        logger.info("creating database %s", self.database)
        client.create_database(self.database)

    # ---- desired table shape --------------------------------------------------------------------
    def _desired_params(self, target: _Target, schema: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
        c = self.config
        params = dict(c.table_properties)
        serde = {"serialization.format": "1", **c.serde_properties}
        if c.sync_as_datasource:
            params.update(spark_table_properties(schema, c.partition_fields, c.schema_string_length_thresh,
                                                 c.spark_version))
            serde["path"] = self.base_path
            serde[RO_PARAM] = "true" if target.kind == "RO" else "false"
        return params, serde

    def _columns(self, schema: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return hive_field_schemas(dict(schema), self.config.partition_fields, self.config.support_timestamp,
                                  self.config.omit_metadata_fields)

    # ---- one table ------------------------------------------------------------------------------
    def _sync_table(self, client: HiveMetastoreClient, target: _Target, commits: list[Instant],
                    schema: Mapping[str, Any] | None) -> TableSyncResult:
        db, name, c = self.database, target.name, self.config
        res = TableSyncResult(name, target.kind)
        latest = commits[-1] if commits else None
        latest_completion = self._completion_time(latest) if latest else None
        existing = client.get_table(db, name) if client.table_exists(db, name) else None
        if existing is not None and path_without_scheme(existing.sd.location or "") != \
                path_without_scheme(self.base_path):
            logger.warning("table %s.%s points at %s, not %s: recreating it", db, name, existing.sd.location,
                           self.base_path)
            client.drop_table(db, name, delete_data=False)
            existing, res.recreated = None, True
        last_sync = (existing.parameters or {}).get(LAST_COMMIT_TIME_SYNC) if existing is not None else None
        last_completion = ((existing.parameters or {}).get(LAST_COMMIT_COMPLETION_TIME_SYNC)
                           if existing is not None else None)
        if (existing is not None and c.incremental and latest is not None and last_sync == latest.timestamp
                and (last_completion is None or last_completion == latest_completion)):
            logger.info("%s.%s is already synced up to %s; skipping", db, name, last_sync)
            res.skipped, res.last_commit_time_sync = True, last_sync
            return res
        if schema is None:
            raise SyncError(f"no table schema found in {self.base_path} (no commit with a schema and no "
                            "hoodie.table.create.schema)")
        cols, pcols = self._columns(schema)
        params, serde = self._desired_params(target, schema)
        inp, out, lib = storage_formats(c.base_file_format, target.kind == "RT", c.use_pre_apache_input_format)
        if existing is None:
            hive_table = make_table(db, name, self.base_path, cols, pcols, input_format=inp, output_format=out,
                                    serde=lib, serde_params=serde, table_params=params,
                                    external=not c.create_managed_table)
            logger.info("creating %s.%s (%s) at %s", db, name, target.kind, self.base_path)
            client.create_table(hive_table)
            hive_table = client.get_table(db, name)  # the metastore lower-cases names; alter needs its form
            res.created = True
        else:
            hive_table = self._update_table(client, existing, cols, pcols, params, serde, (inp, out, lib), res,
                                            schema)
        if c.partition_fields and not c.no_partition_metadata and latest is not None:
            self._sync_partitions(client, hive_table, commits, last_sync, last_completion, res)
        changed = res.created or res.recreated or res.schema_change is not None or res.properties_updated or \
            bool(res.partitions_added or res.partitions_updated or res.partitions_dropped)
        if latest is not None and (changed or not c.condition_sync):
            final = copy.deepcopy(hive_table)
            final.parameters = dict(final.parameters or {})
            final.parameters[LAST_COMMIT_TIME_SYNC] = latest.timestamp
            if latest_completion:
                final.parameters[LAST_COMMIT_COMPLETION_TIME_SYNC] = latest_completion
            final.sd.location = self.base_path
            client.alter_table(db, name, final)
            res.last_commit_time_sync = latest.timestamp
        return res

    def _update_table(self, client: HiveMetastoreClient, existing: Any, cols: list[tuple[str, str]],
                      pcols: list[tuple[str, str]], params: dict[str, str], serde: dict[str, str],
                      formats: tuple[str, str, str], res: TableSyncResult, schema: Mapping[str, Any]) -> Any:
        """Schema diff + parameter/serde/format check; one ``alter_table`` (CASCADE when partitioned and the
        columns change) when anything differs. Returns the table definition now in the metastore."""
        c = self.config
        new = copy.deepcopy(existing)
        hive_cols = [(f.name, f.type) for f in list(existing.sd.cols) + list(existing.partitionKeys or [])]
        diff = schema_difference(dict(schema), hive_cols, c.partition_fields, c.support_timestamp,
                                 strict_type_changes=True)
        if c.omit_metadata_fields:
            diff.added = {k: v for k, v in diff.added.items() if not k.startswith("_hoodie_")}
        if not diff.is_empty:
            new.sd.cols = [FieldSchema(name=n, type=t, comment="") for n, t in cols]
            res.schema_change = diff
            logger.info("schema change on %s.%s: %s", self.database, existing.tableName, diff)
        cur_params = dict(existing.parameters or {})
        cur_serde = dict(existing.sd.serdeInfo.parameters or {})
        inp, out, lib = formats
        props_changed = (any(cur_params.get(k) != v for k, v in params.items())
                         or any(cur_serde.get(k) != v for k, v in serde.items())
                         or (existing.sd.inputFormat, existing.sd.outputFormat,
                             existing.sd.serdeInfo.serializationLib) != (inp, out, lib))
        if props_changed:
            new.parameters = {**cur_params, **params}
            new.sd.serdeInfo.parameters = {**cur_serde, **serde}
            new.sd.inputFormat, new.sd.outputFormat, new.sd.serdeInfo.serializationLib = inp, out, lib
            res.properties_updated = True
        if res.schema_change is not None or props_changed:
            client.alter_table(self.database, existing.tableName, new,
                               cascade=bool(pcols) and res.schema_change is not None)
        return new

    # ---- partitions -----------------------------------------------------------------------------
    def _completion_time(self, instant: Instant) -> str | None:
        """Completion time of ``instant``: the completed instant file's modification time as a UTC instant
        string (v6 timelines record no completion time)."""
        for info in self.hudi.storage.list_dir(self.hudi.meta_path):
            if info.name == instant.file_name:
                return instant_time_of(info.mtime_ms)
        return None

    def _changes_since(self, commits: list[Instant], last_sync: str,
                       last_completion: str | None) -> tuple[list[str], list[str]]:
        """``(written, dropped)`` partition paths of the commits after ``last_sync`` (or completed after
        ``last_completion``) — Hudi ``getWrittenPartitionsSince``/``getDroppedPartitionsSince``."""
        mtimes = {i.name: instant_time_of(i.mtime_ms) for i in self.hudi.storage.list_dir(self.hudi.meta_path)}
        written: dict[str, None] = {}
        dropped: dict[str, None] = {}
        for instant in commits:
            completion = mtimes.get(instant.file_name)
            if not (instant.timestamp > last_sync
                    or (last_completion is not None and completion is not None and completion > last_completion)):
                continue
            meta = self.hudi.commit_metadata(instant)
            replaced = meta.partition_to_replace_file_ids or {}
            if instant.action == REPLACE_COMMIT and (meta.operation_type or "").upper() == "DELETE_PARTITION":
                dropped.update(dict.fromkeys(replaced))
                continue
            written.update(dict.fromkeys(meta.partition_to_write_stats))
            written.update(dict.fromkeys(replaced))
        for path in list(written):
            check_partition_path(path)
            folder = self.hudi.storage.join(self.base_path, path) if path else self.base_path
            if not self.hudi.storage.exists(folder):
                del written[path]
                dropped[path] = None
        return list(written), [p for p in dropped if p not in written]

    def _sync_partitions(self, client: HiveMetastoreClient, hive_table: Any, commits: list[Instant],
                         last_sync: str | None, last_completion: str | None, res: TableSyncResult) -> None:
        c, db, name = self.config, self.database, hive_table.tableName
        fields = list(c.partition_fields)
        full = (res.created or res.recreated or last_sync is None or not c.incremental
                or (bool(commits) and last_sync < commits[0].timestamp))
        res.full_partition_sync = full
        if full:
            storage = [p for p in self.hudi.file_system_view().partition_paths() if p != ""]
            in_hms = {} if res.created else client.partition_locations(db, name)
            events = full_sync_events(storage, in_hms, self.base_path, self.extractor, fields, c.decode_partition)
        else:
            assert last_sync is not None
            written, dropped = self._changes_since(commits, last_sync, last_completion)
            touched = written + dropped
            if not touched:
                return
            in_hms = self._touched_in_metastore(client, hive_table, touched)
            events = incremental_sync_events(written, dropped, in_hms, self.base_path, self.extractor, fields,
                                             c.decode_partition)
        self._apply(client, hive_table, events, res)

    def _touched_in_metastore(self, client: HiveMetastoreClient, hive_table: Any,
                              touched: Sequence[str]) -> dict[tuple[str, ...], str]:
        """``{values: location}`` of the metastore partitions among the ``touched`` storage paths.

        Up to ``filter_pushdown_max_size`` touched partitions are fetched by name in one
        ``get_partitions_by_names`` call (names built from the metastore's own, lower-cased, partition keys,
        as Hive's ``Warehouse.makePartName``), so an incremental sync costs the same whatever the table
        size; above that, every partition is listed (Hudi ``getAllPartitions``; ``filter_pushdown_max_size=0``
        forces it). Hudi fetches all partitions unless ``filter_pushdown_enabled``, because its push-down is
        a filter expression some metastores evaluate badly; an exact-name lookup has no such caveat, so it
        is always used. The incremental events only look at the touched partitions, so both answers give
        the same events.
        """
        c, db, name = self.config, self.database, hive_table.tableName
        if len(touched) > c.filter_pushdown_max_size:
            return client.partition_locations(db, name)
        keys = [k.name for k in hive_table.partitionKeys]
        names: dict[str, None] = {}
        for path in touched:
            values = partition_values(path, self.extractor, list(c.partition_fields), c.decode_partition)
            if len(values) == len(keys):  # any other path can have no metastore partition
                names[hive_partition_name(keys, values)] = None
        return {tuple(p.values): p.sd.location for p in client.partitions_by_names(db, name, list(names))}

    def _apply(self, client: HiveMetastoreClient, hive_table: Any, events: list[PartitionEvent],
               res: TableSyncResult) -> None:
        adds = [(e.values, e.location) for e in events if e.type is PartitionEventType.ADD and e.location]
        updates = [(e.values, e.location) for e in events if e.type is PartitionEventType.UPDATE and e.location]
        drops = [e.values for e in events if e.type is PartitionEventType.DROP]
        if adds:
            client.add_partitions(hive_table, adds, self.config.batch_num)
            res.partitions_added = [v for v, _ in adds]
        if updates:
            client.alter_partitions(hive_table, updates, self.config.batch_num)
            res.partitions_updated = [v for v, _ in updates]
        keys = [k.name for k in hive_table.partitionKeys]
        for values in drops:
            if client.drop_partition(self.database, hive_table.tableName, hive_partition_name(keys, values)):
                res.partitions_dropped.append(values)
        logger.info("%s.%s partitions: +%d ~%d -%d", self.database, hive_table.tableName, len(adds),
                    len(updates), len(res.partitions_dropped))


def sync_hudi_table(base_path: str, options: Mapping[str, str],
                    client: HiveMetastoreClient | None = None) -> SyncResult:
    """Sync the Hudi table at ``base_path`` with ``options`` (``hoodie.datasource.hive_sync.*`` etc.);
    convenience over :class:`HiveSyncTool`. Raises :class:`SyncError` / :class:`SyncConfigError`."""
    return HiveSyncTool(base_path, options, client).sync()
