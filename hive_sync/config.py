"""Hive sync configuration: every ``hoodie.datasource.hive_sync.*`` and meta-sync key of docs/SQL.md §3.5 with
Hudi's defaults, typed, plus the inference Hudi performs from the table (database/table name, partition
fields, partition value extractor, ``decode_partition``).

Mirrors Hudi ``HiveSyncConfig`` / ``HiveSyncConfigHolder`` and ``HoodieSyncConfig``. Build with
:meth:`HiveSyncConfig.from_options` (a flat ``{key: value}`` map as passed to the datasource / ``CALL
hive_sync`` / ``run_sync_tool.sh``); values not given are inferred from ``hoodie.properties`` when a
:class:`engine.table.Table` is supplied, else take Hudi's defaults.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.config import ConfigProperty, HoodieConfig, bool_property, int_property, str_property
from engine.errors import ConfigError
from hive_sync.errors import SyncConfigError
from hive_sync.partitions import extractor_for, infer_extractor_class

if TYPE_CHECKING:
    from engine.table import Table

logger = logging.getLogger(__name__)

HIVE = "hoodie.datasource.hive_sync."


class HiveSyncKeys:
    """The configuration keys (Hudi ``HiveSyncConfigHolder`` + ``HoodieSyncConfig``), defaults as in Hudi."""

    ENABLE = bool_property(HIVE + "enable", False, "Sync to Hive after each commit.")
    MODE = str_property(HIVE + "mode", None, "hms | hiveql | jdbc; unset → jdbc if use_jdbc else hiveql (Hudi).")
    METASTORE_URIS = str_property(HIVE + "metastore.uris", "thrift://localhost:9083", "Hive Metastore Thrift URI(s).")
    JDBC_URL = str_property(HIVE + "jdbcurl", "jdbc:hive2://localhost:10000", "HiveServer2 URL (jdbc mode).")
    USERNAME = str_property(HIVE + "username", "hive", "HiveServer2 user (jdbc mode).")
    PASSWORD = str_property(HIVE + "password", "hive", "HiveServer2 password (jdbc mode).")
    USE_JDBC = bool_property(HIVE + "use_jdbc", True, "Deprecated: jdbc mode when mode is unset.")
    DATABASE = str_property(HIVE + "database", "default", "Target database (inferred from hoodie.database.name).",
                  "hoodie.datasource.meta.sync.database")
    TABLE = str_property(HIVE + "table", "unknown", "Target table (inferred from hoodie.table.name).",
               "hoodie.datasource.meta.sync.table")
    BASE_FILE_FORMAT = str_property(HIVE + "base_file_format", "PARQUET", "Base file format: PARQUET, ORC, HFILE.")
    PARTITION_FIELDS = str_property(HIVE + "partition_fields", "", "Comma list of partition columns (inferred).")
    PARTITION_EXTRACTOR_CLASS = str_property(HIVE + "partition_extractor_class",
                                   "org.apache.hudi.hive.MultiPartKeysValueExtractor",
                                   "Partition value extractor class (inferred).")
    AUTO_CREATE_DATABASE = bool_property(HIVE + "auto_create_database", True, "Create the database when missing.")
    IGNORE_EXCEPTIONS = bool_property(HIVE + "ignore_exceptions", False, "Log sync failures instead of raising.")
    SKIP_RO_SUFFIX = bool_property(HIVE + "skip_ro_suffix", False, "MOR: register the read-optimized table bare.",
                        "hoodie.datasource.hive_sync.skip_ro_suffix_for_read_optimized_table")
    SUPPORT_TIMESTAMP = bool_property(HIVE + "support_timestamp", False,
                           "Avro timestamps as Hive timestamp (else bigint); true on Spark SQL paths.")
    TABLE_PROPERTIES = str_property(HIVE + "table_properties", None, "Extra table parameters, newline-separated k=v.")
    SERDE_PROPERTIES = str_property(HIVE + "serde_properties", None, "Extra serde parameters, newline-separated k=v.")
    SYNC_AS_DATASOURCE = bool_property(HIVE + "sync_as_datasource", True, "Add Spark datasource table parameters.")
    SCHEMA_STRING_LENGTH_THRESH = int_property(HIVE + "schema_string_length_thresh", 4000,
                                     "Characters per spark.sql.sources.schema.part.N chunk.")
    CREATE_MANAGED_TABLE = bool_property(HIVE + "create_managed_table", False, "MANAGED_TABLE instead of EXTERNAL.")
    OMIT_METADATA_FIELDS = bool_property(HIVE + "omit_metadata_fields", False, "Leave _hoodie_* out of the columns.")
    BATCH_NUM = int_property(HIVE + "batch_num", 1000, "Partitions per add/alter partition call.")
    BATCHING_ENABLED = bool_property(HIVE + "batching.enabled", False, "Parallel partition batches (1.3).")
    BATCHING_THREADS = int_property(HIVE + "batching.threads", 4, "Threads for parallel batches (1.3).")
    BUCKET_SYNC = bool_property(HIVE + "bucket_sync", False, "Sync the bucket spec of bucket-index tables.")
    BUCKET_SYNC_SPEC = str_property(HIVE + "bucket_sync_spec", "", "Bucket spec string.")
    SYNC_COMMENT = bool_property(HIVE + "sync_comment", False, "Sync column comments.")
    TABLE_STRATEGY = str_property(HIVE + "table.strategy", "ALL", "MOR tables to register: ALL, RO or RT.")
    FILTER_PUSHDOWN_ENABLED = bool_property(HIVE + "filter_pushdown_enabled", False,
                                 "Accepted for Hudi compatibility: incremental sync always fetches only the "
                                 "touched partitions (by exact name) from the metastore.")
    FILTER_PUSHDOWN_MAX_SIZE = int_property(HIVE + "filter_pushdown_max_size", 1000,
                                  "Above this many touched partitions, incremental sync fetches all instead "
                                  "(0: always).")
    USE_PRE_APACHE_INPUT_FORMAT = bool_property(HIVE + "use_pre_apache_input_format", False,
                                     "Use com.uber.hoodie input formats.")
    USE_SPARK_CATALOG = bool_property(HIVE + "use_spark_catalog", False, "Route through a Spark catalog client.")
    RECREATE_TABLE_ON_ERROR = bool_property(HIVE + "recreate_table_on_error", False,
                                 "Recreate the table when the schema/props sync fails (1.2).")
    # hoodie.meta.sync.* / hoodie.datasource.meta.sync.* (HoodieSyncConfig)
    META_SYNC_ENABLE = bool_property("hoodie.datasource.meta.sync.enable", False, "Run meta sync after each commit.")
    META_SYNC_BASE_PATH = str_property("hoodie.datasource.meta.sync.base.path", "", "Table base path to sync.")
    CONDITION_SYNC = bool_property("hoodie.datasource.meta_sync.condition.sync", False,
                        "Only update last_commit_time_sync when something changed.")
    DECODE_PARTITION = bool_property("hoodie.meta.sync.decode_partition", False,
                          "Unescape %XX in partition values (inferred from url-encode).")
    METADATA_FILE_LISTING = bool_property("hoodie.meta.sync.metadata_file_listing", False,
                               "List partitions through the metadata table.")
    INCREMENTAL = bool_property("hoodie.meta.sync.incremental", True, "Incremental partition sync.")
    SYNC_SNAPSHOT_WITH_TABLE_NAME = bool_property("hoodie.meta.sync.sync_snapshot_with_table_name", True,
                                       "MOR: also register the bare name as the snapshot (RT) table.")
    NO_PARTITION_METADATA = bool_property("hoodie.meta.sync.no_partition_metadata", False,
                               "Skip partition sync entirely.")
    SPARK_VERSION = str_property("hoodie.meta_sync.spark.version", "", "Spark version for spark.sql.create.version.")
    CLIENT_TOOL_CLASS = str_property("hoodie.meta.sync.client.tool.class", "org.apache.hudi.hive.HiveSyncTool",
                           "Comma list of sync tool classes.")

    @classmethod
    def all(cls) -> list[ConfigProperty[Any]]:
        """Every key, in declaration order."""
        return [v for v in vars(cls).values() if isinstance(v, ConfigProperty)]


TABLE_STRATEGIES = ("ALL", "RO", "RT")
SUPPORTED_MODES = ("hms",)


def parse_kv_lines(text: str | None) -> dict[str, str]:
    """``table_properties``/``serde_properties`` text (newline-separated ``k=v``) → dict; blank lines skipped.
    Raises :class:`SyncConfigError` for a line without ``=``."""
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        if "=" not in line:
            raise SyncConfigError(f"malformed property line {line!r}: expected key=value")
        k, v = line.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@dataclass(frozen=True)
class HiveSyncConfig:
    """Resolved, typed hive-sync settings (Hudi ``HiveSyncConfig``). Field names follow the key suffixes;
    ``partition_fields`` is a list, ``table_properties``/``serde_properties`` are dicts, ``mode`` is the
    effective mode (lower case). ``explicit`` holds the raw options the user gave."""

    base_path: str = ""
    enable: bool = False
    mode: str = "hms"
    metastore_uris: str = "thrift://localhost:9083"
    jdbc_url: str = "jdbc:hive2://localhost:10000"
    username: str = "hive"
    password: str = "hive"
    use_jdbc: bool = True
    database: str = "default"
    table: str = "unknown"
    base_file_format: str = "PARQUET"
    partition_fields: tuple[str, ...] = ()
    partition_extractor_class: str = "org.apache.hudi.hive.MultiPartKeysValueExtractor"
    auto_create_database: bool = True
    ignore_exceptions: bool = False
    skip_ro_suffix: bool = False
    support_timestamp: bool = False
    table_properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    serde_properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    sync_as_datasource: bool = True
    schema_string_length_thresh: int = 4000
    create_managed_table: bool = False
    omit_metadata_fields: bool = False
    batch_num: int = 1000
    batching_enabled: bool = False
    batching_threads: int = 4
    bucket_sync: bool = False
    bucket_sync_spec: str = ""
    sync_comment: bool = False
    table_strategy: str = "ALL"
    filter_pushdown_enabled: bool = False
    filter_pushdown_max_size: int = 1000
    use_pre_apache_input_format: bool = False
    use_spark_catalog: bool = False
    recreate_table_on_error: bool = False
    meta_sync_enable: bool = False
    condition_sync: bool = False
    decode_partition: bool = False
    metadata_file_listing: bool = False
    incremental: bool = True
    sync_snapshot_with_table_name: bool = True
    no_partition_metadata: bool = False
    spark_version: str = ""
    client_tool_class: str = "org.apache.hudi.hive.HiveSyncTool"
    explicit: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @staticmethod
    def from_options(options: Mapping[str, str], table: Table | None = None,
                     base_path: str | None = None) -> HiveSyncConfig:
        """Resolve ``options`` (``{hoodie key: string value}``) with Hudi's inference from ``table``:

        * database ← ``hoodie.database.name``, table ← ``hoodie.table.name``;
        * partition fields ← the table's partition fields;
        * extractor ← inferred (0 fields NonPartitioned, 1 field HiveStyle/SinglePart, more MultiPartKeys);
        * ``decode_partition`` ← ``hoodie.datasource.write.partitionpath.urlencode``;
        * ``metadata_file_listing`` ← whether the table has a ``files`` metadata partition;
        * base file format ← ``hoodie.table.base.file.format``.

        Effective mode: ``mode`` if set; else ``jdbc`` when ``use_jdbc`` is *explicitly* true; else ``hms``
        (deviation: Hudi defaults to jdbc, this implementation only speaks HMS).

        Raises :class:`SyncConfigError` for malformed values, an unknown extractor, a bad
        ``table.strategy`` or a mode other than ``hms``.
        """
        cfg = HoodieConfig({k: str(v) for k, v in options.items()})
        k = HiveSyncKeys

        def get(prop: ConfigProperty[Any]) -> Any:
            try:
                return cfg.get_optional(prop)
            except ConfigError as e:
                raise SyncConfigError(str(e)) from e

        def given(prop: ConfigProperty[Any]) -> bool:
            return cfg.contains(prop)

        database = get(k.DATABASE)
        if not given(k.DATABASE) and table is not None and table.database:
            database = table.database
        name = get(k.TABLE)
        if not given(k.TABLE) and table is not None:
            name = table.name
        if given(k.PARTITION_FIELDS):
            fields = tuple(f.strip() for f in str(get(k.PARTITION_FIELDS)).split(",") if f.strip())
        else:
            fields = tuple(table.partition_fields) if table is not None else ()
        if given(k.PARTITION_EXTRACTOR_CLASS):
            extractor = str(get(k.PARTITION_EXTRACTOR_CLASS))
        elif table is not None or given(k.PARTITION_FIELDS):
            hive_style = table.hive_style if table is not None else False
            extractor = infer_extractor_class(fields, hive_style)
        else:
            extractor = str(k.PARTITION_EXTRACTOR_CLASS.default)
        extractor_for(extractor)  # validate early
        decode = get(k.DECODE_PARTITION)
        if not given(k.DECODE_PARTITION) and table is not None:
            decode = table.url_encode
        listing = get(k.METADATA_FILE_LISTING)
        if not given(k.METADATA_FILE_LISTING) and table is not None:
            listing = "files" in table.metadata_partitions
        fmt = get(k.BASE_FILE_FORMAT)
        if not given(k.BASE_FILE_FORMAT) and table is not None:
            fmt = table.base_file_format
        strategy = str(get(k.TABLE_STRATEGY)).upper()
        if strategy not in TABLE_STRATEGIES:
            raise SyncConfigError(f"{k.TABLE_STRATEGY.key}={strategy!r}; expected one of {TABLE_STRATEGIES}")
        if given(k.MODE) and str(get(k.MODE)).strip():
            mode = str(get(k.MODE)).strip().lower()
        elif given(k.USE_JDBC) and get(k.USE_JDBC):
            mode = "jdbc"
        else:
            mode = "hms"
        if mode not in SUPPORTED_MODES:
            raise SyncConfigError(f"{k.MODE.key}={mode!r} is not supported; only 'hms' (Thrift metastore) is")
        path = base_path or get(k.META_SYNC_BASE_PATH) or (table.base_path if table is not None else "")
        return HiveSyncConfig(
            base_path=str(path), enable=get(k.ENABLE), mode=mode, metastore_uris=get(k.METASTORE_URIS),
            jdbc_url=get(k.JDBC_URL), username=get(k.USERNAME), password=get(k.PASSWORD),
            use_jdbc=get(k.USE_JDBC), database=str(database), table=str(name), base_file_format=str(fmt).upper(),
            partition_fields=fields, partition_extractor_class=extractor,
            auto_create_database=get(k.AUTO_CREATE_DATABASE), ignore_exceptions=get(k.IGNORE_EXCEPTIONS),
            skip_ro_suffix=get(k.SKIP_RO_SUFFIX), support_timestamp=get(k.SUPPORT_TIMESTAMP),
            table_properties=parse_kv_lines(get(k.TABLE_PROPERTIES)),
            serde_properties=parse_kv_lines(get(k.SERDE_PROPERTIES)),
            sync_as_datasource=get(k.SYNC_AS_DATASOURCE),
            schema_string_length_thresh=get(k.SCHEMA_STRING_LENGTH_THRESH),
            create_managed_table=get(k.CREATE_MANAGED_TABLE), omit_metadata_fields=get(k.OMIT_METADATA_FIELDS),
            batch_num=get(k.BATCH_NUM), batching_enabled=get(k.BATCHING_ENABLED),
            batching_threads=get(k.BATCHING_THREADS), bucket_sync=get(k.BUCKET_SYNC),
            bucket_sync_spec=get(k.BUCKET_SYNC_SPEC), sync_comment=get(k.SYNC_COMMENT), table_strategy=strategy,
            filter_pushdown_enabled=get(k.FILTER_PUSHDOWN_ENABLED),
            filter_pushdown_max_size=get(k.FILTER_PUSHDOWN_MAX_SIZE),
            use_pre_apache_input_format=get(k.USE_PRE_APACHE_INPUT_FORMAT),
            use_spark_catalog=get(k.USE_SPARK_CATALOG), recreate_table_on_error=get(k.RECREATE_TABLE_ON_ERROR),
            meta_sync_enable=get(k.META_SYNC_ENABLE), condition_sync=get(k.CONDITION_SYNC),
            decode_partition=bool(decode), metadata_file_listing=bool(listing), incremental=get(k.INCREMENTAL),
            sync_snapshot_with_table_name=get(k.SYNC_SNAPSHOT_WITH_TABLE_NAME),
            no_partition_metadata=get(k.NO_PARTITION_METADATA), spark_version=get(k.SPARK_VERSION),
            client_tool_class=get(k.CLIENT_TOOL_CLASS), explicit=dict(options))

    def with_table(self, table: Table) -> HiveSyncConfig:
        """Re-resolve the explicit options against ``table`` (fills in inferred values)."""
        return HiveSyncConfig.from_options(self.explicit, table, self.base_path or table.base_path)
