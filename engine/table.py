"""A Hudi table on storage (Hudi ``HoodieTableMetaClient`` + ``HoodieTableConfig``), table version 6; tables of
versions 8 and 9 (Hudi 1.x) are read, never changed.

``.hoodie/hoodie.properties`` (docs/FORMAT.md §1) holds the table config as Java properties text; it carries a
CRC32 checksum of ``"<database>.<table>"``. :class:`Table` creates tables (the directory layout of docs/FORMAT.md
§10.1), loads them, exposes the typed config, the active timeline, the latest schema and file-system views,
and updates the properties with Java's backup protocol (docs/FORMAT.md §8).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from engine.config import HoodieConfig, TableConfig
from engine.errors import ConfigError, CorruptFile, StorageError, TableExists, TableNotFound, UnsupportedTable
from engine.filegroup.view import FileSystemView
from engine.formats.avro_schema import add_meta_fields, strip_meta_fields
from engine.formats.cdc import SupplementalLoggingMode
from engine.metadata.disable import drop_metadata_table, metadata_partitions_in_use
from engine.storage import Storage
from engine.table_properties import PROPERTIES_FILE, TableProperties
from engine.table_v1x import check_readable, effective_properties, write_refusal
from engine.timeline.active import ActiveTimeline
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import Instant
from engine.timeline.layout import LAYOUT_V1, READABLE_TABLE_VERSIONS, TimelineLayout, layout_for
from engine.timeline.layout_v2 import TimelineLayoutV2

LOG = logging.getLogger(__name__)

METAFOLDER_NAME = ".hoodie"
PROPERTIES_BACKUP_FILE = "hoodie.properties.backup"
TEMP_FOLDER_NAME = ".temp"
AUX_FOLDER_NAME = ".aux"

TABLE_VERSION = "6"
TIMELINE_LAYOUT_VERSION = "1"
COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
DEFAULT_PAYLOAD_CLASS = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
NONPARTITIONED_KEYGEN_SUFFIX = "NonpartitionedKeyGenerator"
_SCHEMA_PRESERVING_OPERATIONS = frozenset({"CLUSTER", "COMPACT", "INDEX", "LOG_COMPACT"})


def _meta_path(storage: Storage, base_path: str) -> str:
    return storage.join(base_path, METAFOLDER_NAME)


class Table:
    """A Hudi table (Hudi ``HoodieTableMetaClient``): version 6, or a read-only Hudi 1.x table (versions 8, 9).

    Attributes:
        base_path: table root as given (trailing ``/`` removed).
        storage: storage reaching the table.
        config: ``hoodie.properties`` content as a :class:`HoodieConfig`.

    Build with :meth:`create` or :meth:`load`; the constructor does no I/O beyond what it is given.
    """

    def __init__(self, base_path: str, storage: Storage, config: HoodieConfig,
                 layout: TimelineLayout = LAYOUT_V1) -> None:
        self.base_path = base_path.rstrip("/") if len(base_path) > 1 else base_path
        self.storage = storage
        self.config = config
        self.timeline_layout = layout
        self._timeline: ActiveTimeline | None = None
        self._metadata_folder_checked = False

    def __repr__(self) -> str:
        return f"Table({self.base_path!r}, {self.name!r}, {self.table_type})"

    # ------------------------------------------------------------------ create / load

    @staticmethod
    def exists(base_path: str) -> bool:
        """Whether ``<base>/.hoodie/hoodie.properties`` (or its backup) exists."""
        storage = Storage.for_uri(base_path)
        meta = _meta_path(storage, base_path)
        return storage.exists(storage.join(meta, PROPERTIES_FILE)) or \
            storage.exists(storage.join(meta, PROPERTIES_BACKUP_FILE))

    @staticmethod
    def create(base_path: str, props: Mapping[str, str]) -> Table:
        """Create a new, empty v6 table (Hudi ``HoodieTableMetaClient.initTable``).

        Args:
            base_path: table root (local path or URI).
            props: table-level keys: ``hoodie.table.name`` (required), ``hoodie.table.type``,
                ``hoodie.table.recordkey.fields``, ``hoodie.table.precombine.field``,
                ``hoodie.table.partition.fields``, ``hoodie.table.keygenerator.class``, hive style,
                urlencode, ``hoodie.table.create.schema`` (Avro JSON without meta fields),
                ``hoodie.database.name`` ... Defaults are filled: version 6, layout 1,
                ``hoodie.archivelog.folder=archived``, timeline timezone UTC, drop partition columns false,
                populate meta fields true, and for MOR the payload class and merger strategy. The checksum
                is computed.

        Returns:
            the loaded table.

        Raises:
            TableExists: a table (``hoodie.properties``) already exists at ``base_path``.
            ConfigError: missing name, bad table type/version, unsupported settings, or an unknown
                ``hoodie.table.cdc.supplemental.logging.mode`` (stored upper-case, as Hudi does).
        """
        storage = Storage.for_uri(base_path)
        meta = _meta_path(storage, base_path)
        if Table.exists(base_path):
            raise TableExists(f"a Hudi table already exists at {base_path}")
        values = {str(k): str(v) for k, v in props.items() if v is not None}
        if not values.get(TableConfig.NAME.key):
            raise ConfigError(f"creating a table at {base_path} needs '{TableConfig.NAME.key}'")
        table_type = values.get(TableConfig.TYPE.key, COPY_ON_WRITE).upper()
        if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise ConfigError(f"invalid '{TableConfig.TYPE.key}' {table_type!r} for {base_path}: expected "
                              f"{COPY_ON_WRITE} or {MERGE_ON_READ}")
        values[TableConfig.TYPE.key] = table_type
        if values.get(TableConfig.VERSION.key, TABLE_VERSION) != TABLE_VERSION:
            raise ConfigError(f"this engine creates table version {TABLE_VERSION} only, got "
                              f"{values[TableConfig.VERSION.key]} for {base_path}")
        if values.get(TableConfig.TIMELINE_LAYOUT_VERSION.key, TIMELINE_LAYOUT_VERSION) != TIMELINE_LAYOUT_VERSION:
            raise ConfigError(f"table version 6 needs timeline layout 1 ({base_path})")
        if values.get(TableConfig.METADATA_PARTITIONS.key, "").strip():
            raise ConfigError(f"'{TableConfig.METADATA_PARTITIONS.key}' must be empty for {base_path}: this "
                              "engine maintains no metadata table (docs/FORMAT.md §8)")
        if values.get(TableConfig.CDC_ENABLED.key, "").strip().lower() == "true" and \
                TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key in values:
            mode = values[TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key]
            values[TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key] = \
                SupplementalLoggingMode.parse(mode, base_path).value
        defaults: dict[str, str] = {
            TableConfig.VERSION.key: TABLE_VERSION,
            TableConfig.TIMELINE_LAYOUT_VERSION.key: TIMELINE_LAYOUT_VERSION,
            TableConfig.ARCHIVELOG_FOLDER.key: "archived",
            TableConfig.TIMELINE_TIMEZONE.key: "UTC",
            TableConfig.DROP_PARTITION_COLUMNS.key: "false",
            TableConfig.POPULATE_META_FIELDS.key: "true",
        }
        if table_type == MERGE_ON_READ:
            defaults[TableConfig.PAYLOAD_CLASS.key] = DEFAULT_PAYLOAD_CLASS
            defaults[TableConfig.RECORD_MERGER_STRATEGY.key] = DEFAULT_MERGER_STRATEGY
        for key, value in defaults.items():
            values.setdefault(key, value)
        values.pop(TableConfig.CHECKSUM.key, None)
        for key, value in values.items():
            if any(c in value for c in "\\\n\r") or any(ord(c) > 0x7E for c in value):
                LOG.warning("table property %s of %s contains characters hudi-rs reads differently from "
                            "Java (backslash, newline or non-ASCII)", key, base_path)
        values[TableConfig.CHECKSUM.key] = str(TableProperties.checksum_of(values))

        for folder in (meta, storage.join(meta, "archived"), storage.join(meta, TEMP_FOLDER_NAME),
                       storage.join(meta, AUX_FOLDER_NAME, ".bootstrap", ".partitions"),
                       storage.join(meta, AUX_FOLDER_NAME, ".bootstrap", ".fileids")):
            storage.makedirs(folder)
        archive = values[TableConfig.ARCHIVELOG_FOLDER.key]
        if archive and archive != "archived":
            storage.makedirs(storage.join(meta, archive))
        props_path = storage.join(meta, PROPERTIES_FILE)
        if not storage.create_if_absent(props_path, TableProperties.render(values)):
            raise TableExists(f"a Hudi table already exists at {base_path} (created concurrently)")
        LOG.info("created %s table %s at %s", table_type, values[TableConfig.NAME.key], base_path)
        return Table.load(base_path)

    @staticmethod
    def _read_properties(storage: Storage, meta: str, base_path: str) -> dict[str, str]:
        """Java ``fetchConfigs``: ``hoodie.properties`` if present and valid, else the backup."""
        main = storage.join(meta, PROPERTIES_FILE)
        backup = storage.join(meta, PROPERTIES_BACKUP_FILE)
        problem = ""
        for path in (main, backup):
            try:
                if not storage.exists(path):
                    continue
                props = TableProperties.parse(storage.read_bytes(path).decode("latin-1"))
            except (StorageError, CorruptFile) as exc:
                problem = f"{path}: {exc}"
                LOG.warning("cannot read %s: %s", path, exc)
                continue
            if TableProperties.is_valid(props):
                if path == backup:
                    LOG.warning("reading table config of %s from %s (update in progress or interrupted)",
                                base_path, PROPERTIES_BACKUP_FILE)
                return props
            problem = f"{path} has checksum {props.get(TableConfig.CHECKSUM.key)} which does not match " \
                      f"'{props.get(TableConfig.DATABASE_NAME.key, '')}.{props.get(TableConfig.NAME.key)}'"
            LOG.warning("invalid %s", problem)
        if problem:
            raise CorruptFile(f"no valid table config for {base_path}: {problem}")
        raise TableNotFound(f"no Hudi table at {base_path} ({main} does not exist)")

    @staticmethod
    def load(base_path: str) -> Table:
        """Open an existing table.

        Raises:
            TableNotFound: no ``.hoodie/hoodie.properties`` (nor backup) under ``base_path``.
            CorruptFile: the properties exist but none is valid (checksum mismatch).
            UnsupportedTable: a table version other than 6, 8 or 9, a timeline layout that does not belong to the
                version (1 for 6, 2 for 8 and 9), or a Hudi 1.x table this engine cannot read (base files not
                parquet, several ordering fields, unknown merge mode or key generator type:
                :mod:`engine.table_v1x`).
        """
        storage = Storage.for_uri(base_path)
        meta = _meta_path(storage, base_path)
        props = Table._read_properties(storage, meta, base_path)
        version = props.get(TableConfig.VERSION.key, "0")
        if version != TABLE_VERSION:
            if not version.isdigit() or int(version) not in READABLE_TABLE_VERSIONS:
                raise UnsupportedTable(f"table {base_path} has version {version}; this engine reads table versions "
                                       f"{', '.join(str(v) for v in sorted(READABLE_TABLE_VERSIONS))}")
            v2 = Table._v1x_layout(props, base_path)
            check_readable(props, base_path, int(version))
            table = Table(base_path, storage, HoodieConfig(effective_properties(props, base_path)), v2)
            if table.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
                raise UnsupportedTable(f"table {base_path} has unknown type {table.table_type!r}")
            return table
        layout = props.get(TableConfig.TIMELINE_LAYOUT_VERSION.key)
        if layout != TIMELINE_LAYOUT_VERSION:
            raise UnsupportedTable(f"table {base_path} has timeline layout {layout}; version 6 tables need "
                                   f"layout {TIMELINE_LAYOUT_VERSION}")
        table = Table(base_path, storage, HoodieConfig(props))
        if table.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise UnsupportedTable(f"table {base_path} has unknown type {table.table_type!r}")
        return table

    @staticmethod
    def _v1x_layout(props: Mapping[str, str], base_path: str) -> TimelineLayout:
        """The timeline layout of a Hudi 1.x table (layout 2, folders from ``hoodie.timeline.path`` and
        ``hoodie.timeline.history.path``)."""
        config = HoodieConfig(dict(props))
        return layout_for(int(props[TableConfig.VERSION.key]), props.get(TableConfig.TIMELINE_LAYOUT_VERSION.key),
                          base_path, timeline_folder=config.get(TableConfig.TIMELINE_PATH),
                          history_folder=config.get(TableConfig.TIMELINE_HISTORY_PATH))

    def reload(self) -> Table:
        """Re-read ``hoodie.properties`` and drop the cached timeline; returns ``self``."""
        props = Table._read_properties(self.storage, self.meta_path, self.base_path)
        if self.timeline_layout.version != 1:
            props = effective_properties(props, self.base_path)
        self.config = HoodieConfig(props)
        self._timeline = None
        return self

    @property
    def table_version(self) -> int:
        """``hoodie.table.version`` (6, 8 or 9)."""
        return int(self.config.get(TableConfig.VERSION))

    @property
    def is_hudi_1x(self) -> bool:
        """Whether Hudi 1.x wrote the table (version 8 or 9, timeline layout 2): this engine only reads it."""
        return self.timeline_layout.version != 1

    def check_writable(self) -> None:
        """Refuse any change to a table this engine does not write (Hudi 1.x tables): writes, table services,
        ALTER TABLE and procedures that write call it (through :meth:`before_change` and
        :meth:`update_properties`).

        Raises:
            UnsupportedTable: the table is a Hudi 1.x table; the message names the table and its version.
        """
        if self.is_hudi_1x:
            raise write_refusal(self.base_path, self.table_version)

    # ------------------------------------------------------------------ config accessors

    @property
    def name(self) -> str:
        """``hoodie.table.name``."""
        return self.config.get(TableConfig.NAME)

    @property
    def database(self) -> str | None:
        """``hoodie.database.name`` or ``None``."""
        return self.config.get_optional(TableConfig.DATABASE_NAME)

    @property
    def table_type(self) -> str:
        """``COPY_ON_WRITE`` or ``MERGE_ON_READ``."""
        return self.config.get(TableConfig.TYPE).upper()

    @property
    def is_mor(self) -> bool:
        """Whether the table is merge-on-read."""
        return self.table_type == MERGE_ON_READ

    @property
    def record_key_fields(self) -> list[str]:
        """``hoodie.table.recordkey.fields`` split at commas (``[]`` when unset)."""
        return [f.strip() for f in (self.config.get_optional(TableConfig.RECORDKEY_FIELDS) or "").split(",")
                if f.strip()]

    @property
    def partition_fields(self) -> list[str]:
        """Partition source fields; ``[]`` when non-partitioned (no fields, or the non-partitioned keygen).
        CustomKeyGenerator ``field:type`` suffixes are stripped."""
        if self.keygen_class.endswith(NONPARTITIONED_KEYGEN_SUFFIX):
            return []
        raw = self.config.get_optional(TableConfig.PARTITION_FIELDS) or ""
        return [f.split(":", 1)[0].strip() for f in raw.split(",") if f.strip()]

    @property
    def dropped_partition_columns(self) -> list[str]:
        """The partition fields data files leave out when ``hoodie.datasource.write.drop.partition.columns`` is
        true (Hudi ``HoodieTableConfig.DROP_PARTITION_COLUMNS``), else ``[]``. Readers take their values from the
        partition path; commit schemas and files do not hold them."""
        if not self.config.get(TableConfig.DROP_PARTITION_COLUMNS):
            return []
        return self.partition_fields

    def without_dropped_partition_columns(self, avro: dict[str, Any]) -> dict[str, Any]:
        """``avro`` without :attr:`dropped_partition_columns`: the schema data files and commits hold."""
        dropped = {f.lower() for f in self.dropped_partition_columns}
        if not dropped:
            return avro
        return {**avro, "fields": [f for f in avro["fields"] if f["name"].lower() not in dropped]}

    def _with_partition_columns(self, avro: dict[str, Any]) -> dict[str, Any]:
        """``avro`` with the dropped partition columns appended as Hudi's ``TableSchemaResolver`` appends them
        (nullable, default null), typed as ``hoodie.table.create.schema`` declares them, else strings."""
        have = {f["name"].lower() for f in avro["fields"]}
        missing = [f for f in self.dropped_partition_columns if f.lower() not in have]
        if not missing:
            return avro
        declared: dict[str, Any] = {}
        create_text = self.config.get_optional(TableConfig.CREATE_SCHEMA)
        if create_text:
            try:
                declared = {f["name"].lower(): f for f in json.loads(create_text).get("fields", [])}
            except (json.JSONDecodeError, AttributeError):
                declared = {}
        appended = []
        for name in missing:
            field = declared.get(name.lower())
            kind = field["type"] if field is not None else ["null", "string"]
            if not (isinstance(kind, list) and "null" in kind):
                kind = ["null", kind]
            elif kind[0] != "null":
                kind = ["null", *[k for k in kind if k != "null"]]
            appended.append({"name": field["name"] if field is not None else name, "type": kind, "default": None})
        return {**avro, "fields": [*avro["fields"], *appended]}

    @property
    def is_partitioned(self) -> bool:
        """Whether the table has partition fields."""
        return bool(self.partition_fields)

    @property
    def precombine_field(self) -> str | None:
        """``hoodie.table.precombine.field`` or ``None``."""
        return self.config.get_optional(TableConfig.PRECOMBINE_FIELD) or None

    @property
    def keygen_class(self) -> str:
        """``hoodie.table.keygenerator.class`` (``""`` when unset)."""
        return self.config.get_optional(TableConfig.KEYGEN_CLASS) or ""

    @property
    def hive_style(self) -> bool:
        """``hoodie.datasource.write.hive_style_partitioning``."""
        return bool(self.config.get(TableConfig.HIVE_STYLE_PARTITIONING))

    @property
    def url_encode(self) -> bool:
        """``hoodie.datasource.write.partitionpath.urlencode``."""
        return bool(self.config.get(TableConfig.URL_ENCODE_PARTITIONING))

    @property
    def populate_meta_fields(self) -> bool:
        """``hoodie.populate.meta.fields`` (default true)."""
        return bool(self.config.get(TableConfig.POPULATE_META_FIELDS))

    @property
    def metadata_partitions(self) -> list[str]:
        """``hoodie.table.metadata.partitions`` split at commas (``[]`` = no metadata table in use). When it
        contains ``files``, Java readers list files through the metadata table, which this engine does not
        maintain (docs/FORMAT.md §8)."""
        raw = self.config.get_optional(TableConfig.METADATA_PARTITIONS) or ""
        return [p.strip() for p in raw.split(",") if p.strip()]

    @property
    def base_file_format(self) -> str:
        """``hoodie.table.base.file.format`` (default ``PARQUET``)."""
        return self.config.get(TableConfig.BASE_FILE_FORMAT).upper()

    @property
    def timeline_timezone(self) -> str:
        """``hoodie.table.timeline.timezone`` (``LOCAL`` when unset, as in Java)."""
        return self.config.get(TableConfig.TIMELINE_TIMEZONE).upper()

    @property
    def meta_path(self) -> str:
        """``<base>/.hoodie``."""
        return self.storage.join(self.base_path, METAFOLDER_NAME)

    @property
    def temp_path(self) -> str:
        """``<base>/.hoodie/.temp`` (marker root)."""
        return self.storage.join(self.meta_path, TEMP_FOLDER_NAME)

    @property
    def archive_path(self) -> str:
        """``<base>/.hoodie/<hoodie.archivelog.folder>``; for Hudi 1.x tables the LSM archived timeline
        ``<base>/.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>``."""
        if isinstance(self.timeline_layout, TimelineLayoutV2):
            return self.timeline_layout.history_path(self.storage, self.meta_path)
        return self.storage.join(self.meta_path, self.config.get(TableConfig.ARCHIVELOG_FOLDER))

    def has_archived_instants(self) -> bool:
        """Whether the archived timeline holds instants (layout 1: an ``.archive.`` file; layout 2: an LSM data
        file).

        Raises:
            StorageError: listing failed.
            CorruptFile: a malformed LSM version file or manifest.
        """
        return self.timeline_layout.has_archived_instants(self.storage, self.archive_path)

    @property
    def properties_path(self) -> str:
        """``<base>/.hoodie/hoodie.properties``."""
        return self.storage.join(self.meta_path, PROPERTIES_FILE)

    # ------------------------------------------------------------------ timeline / views

    @property
    def timeline(self) -> ActiveTimeline:
        """The active timeline (loaded on first use, cached until :meth:`reload`)."""
        if self._timeline is None:
            self._timeline = ActiveTimeline(self.storage, self.meta_path, before_change=self.before_change,
                                            layout=self.timeline_layout)
        return self._timeline

    def before_change(self) -> None:
        """Make the table safe for this engine to change; runs before every change of the timeline (the
        timeline's write methods call it) and before archival.

        A metadata table is deleted first (:func:`engine.metadata.disable.drop_metadata_table`, as Hudi's writer
        with ``hoodie.metadata.enable=false``): ``.hoodie/metadata`` is looked for once per :class:`Table`
        object, the properties each time (no I/O). Reads never call it.

        Raises:
            UnsupportedTable: a Hudi 1.x table (:meth:`check_writable`; its metadata table is left alone).
            ConfigError: ``hoodie.properties`` sets ``hoodie.metadata.enable=true``.
            StorageError: the metadata table could not be deleted.
        """
        self.check_writable()
        if self._metadata_folder_checked and not metadata_partitions_in_use(self):
            return
        drop_metadata_table(self)
        self._metadata_folder_checked = True

    def reload_timeline(self) -> ActiveTimeline:
        """Re-list the timeline and return it."""
        return self.timeline.reload()

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Parsed metadata of a ``commit``/``deltacommit``/``replacecommit`` instant (any state): JSON on timeline
        layout 1, Avro on layout 2 (:meth:`TimelineLayout.commit_metadata`).

        Raises:
            TimelineError: the instant file is missing.
            CorruptFile: it is not valid commit metadata.
        """
        content = self.timeline.read_details(instant)
        if self.timeline_layout.version == 1:
            return CommitMetadata.from_json(content, source=f"{self.meta_path}/{instant.file_name}")
        return self.timeline_layout.commit_metadata(content, f"{self.timeline.timeline_path} {instant}")

    def file_system_view(self, as_of: str | None = None) -> FileSystemView:
        """A :class:`FileSystemView` of the table (latest, or as of ``as_of``)."""
        return FileSystemView(self, as_of)

    def latest_avro_schema(self, include_meta: bool = False, as_of: str | None = None) -> dict[str, Any] | None:
        """The table's Avro schema (Hudi ``TableSchemaResolver.getTableAvroSchema``).

        Taken from ``extraMetadata.schema`` of the latest completed commit/deltacommit/replacecommit that has
        one and whose operation may change the schema (not ``COMPACT``, ``LOG_COMPACT``, ``CLUSTER`` or
        ``INDEX``; Java ``WriteOperationType.canUpdateSchema``); else ``hoodie.table.create.schema``; else
        ``None``. Partition columns that data files leave out (:attr:`dropped_partition_columns`) are appended,
        as Hudi's resolver appends them; :meth:`without_dropped_partition_columns` gives the stored schema.

        Args:
            include_meta: prepend the five ``_hoodie_*`` meta fields (``["null","string"]``, doc ``""``,
                default null; :func:`engine.formats.avro_schema.add_meta_fields`). Parquet files of tables
                with ``hoodie.populate.meta.fields=false`` still carry the (null) columns.
            as_of: only commits at or before this instant count (the schema a time-travel query reads;
                Hudi ``TableSchemaResolver.getTableAvroSchema(timestamp)``).

        Raises:
            CorruptFile: the schema text is not valid JSON.
        """
        text: str | None = None
        for instant in reversed(self.timeline.completed_commits()):
            if as_of is not None and instant.timestamp > as_of:
                continue
            metadata = self.commit_metadata(instant)
            if metadata.schema and metadata.operation_type not in _SCHEMA_PRESERVING_OPERATIONS:
                text = metadata.schema
                break
        if text is None:
            text = self.config.get_optional(TableConfig.CREATE_SCHEMA) or None
        if text is None:
            return None
        try:
            schema: dict[str, Any] = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptFile(f"table schema of {self.base_path} is not valid JSON: {exc}") from exc
        if self.dropped_partition_columns:
            schema = self._with_partition_columns(schema)
        return add_meta_fields(schema) if include_meta else strip_meta_fields(schema)

    # ------------------------------------------------------------------ properties update

    def update_properties(self, updates: Mapping[str, str | None]) -> None:
        """Upsert (value) or delete (``None``) table properties with Java's backup protocol
        (``HoodieTableConfig.modify``, docs/FORMAT.md §8):

        0. recover: if ``hoodie.properties`` is missing, restore it from the backup; delete the backup;
        1. read the current config; 2. write it to ``hoodie.properties.backup``;
        3. delete ``hoodie.properties`` (readers fall back to the backup);
        4. write the updated config with a fresh checksum; verify it reads back; 5. delete the backup.

        Raises:
            UnsupportedTable: a Hudi 1.x table (:meth:`check_writable`).
            ConfigError: the update removes ``hoodie.table.name`` or changes the table version.
            StorageError: a write failed (the backup keeps the table readable).
        """
        self.check_writable()
        storage, meta = self.storage, self.meta_path
        main = storage.join(meta, PROPERTIES_FILE)
        backup = storage.join(meta, PROPERTIES_BACKUP_FILE)
        # 0. recovery from an interrupted update
        if not storage.exists(main) and storage.exists(backup):
            storage.write_bytes(main, storage.read_bytes(backup))
            LOG.warning("recovered %s from %s", main, backup)
        storage.delete(backup)
        # 1. current config
        current = Table._read_properties(storage, meta, self.base_path)
        updated = dict(current)
        for key, value in updates.items():
            if value is None:
                updated.pop(key, None)
            else:
                updated[key] = str(value)
        if not updated.get(TableConfig.NAME.key):
            raise ConfigError(f"cannot remove '{TableConfig.NAME.key}' from {self.base_path}")
        if updated.get(TableConfig.VERSION.key) != current.get(TableConfig.VERSION.key):
            raise ConfigError(f"cannot change the table version of {self.base_path} via update_properties")
        updated.pop(TableConfig.CHECKSUM.key, None)
        updated[TableConfig.CHECKSUM.key] = str(TableProperties.checksum_of(updated))
        # 2. backup
        if not storage.create_if_absent(backup, TableProperties.render(current, comment="Updated at")):
            raise StorageError(f"cannot create {backup}: it exists (concurrent table config update?)")
        # 3. delete, 4. rewrite + verify
        storage.delete(main)
        storage.write_bytes(main, TableProperties.render(updated, comment="Updated at"))
        check = TableProperties.parse(storage.read_bytes(main).decode("latin-1"))
        if check.get(TableConfig.CHECKSUM.key) != updated[TableConfig.CHECKSUM.key]:
            storage.delete(main)
            raise StorageError(f"verification of rewritten {main} failed: checksum missing or different")
        # 5. drop backup
        storage.delete(backup)
        LOG.info("updated table properties of %s: %s", self.base_path, sorted(updates))
        self.config = HoodieConfig(updated)
