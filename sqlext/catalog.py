"""Table identifiers → Hudi tables, through Spark's session catalog (embedded Derby metastore or a remote
Hive Metastore). Each Hudi table is a catalog entry with provider ``hudi``, its location and its
properties (``type``, ``primaryKey``, ``preCombineField``, ``hoodie.*``); the table's own truth is
``<location>/.hoodie/hoodie.properties``."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    ByteType,
    DataType,
    IntegerType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from pyspark.sql.utils import AnalysisException

from engine.errors import TableNotFound
from engine.formats.avro_schema import META_FIELDS
from engine.table import Table
from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    HUDI_PARQUET_REALTIME_INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
)
from sqlext.errors import NotHudiTable, SqlAnalysisError
from sqlext.parser.statements import TableIdent

logger = logging.getLogger(__name__)


def quote(name: str) -> str:
    """Back-quote an identifier for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str) -> str:
    """A single-quoted Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class CatalogTable:
    """A catalog entry.

    Attributes:
        database: database name.
        name: table name.
        provider: data source provider (``hudi`` for ours).
        location: base path (local paths without ``file:``).
        properties: storage (serde) properties overlaid with the table properties, as the ``hudi`` data
            source receives them.
        table_properties: the table properties alone (what ``SHOW TBLPROPERTIES`` lists; Spark hides
            its ``spark.sql.*`` keys).
        schema: the catalog schema (meta columns first, partition columns last for Hudi tables).
        partition_columns: partition column names.
        comment: table comment.
        external: EXTERNAL (created with LOCATION) rather than MANAGED.
    """

    database: str
    name: str
    provider: str
    location: str
    properties: dict[str, str] = field(default_factory=dict)
    table_properties: dict[str, str] = field(default_factory=dict)
    schema: StructType = field(default_factory=StructType)
    partition_columns: tuple[str, ...] = ()
    comment: str | None = None
    external: bool = False

    @property
    def qualified(self) -> str:
        """```db`.`name``` for SQL."""
        return f"{quote(self.database)}.{quote(self.name)}"

    @property
    def display(self) -> str:
        """``db.name`` for messages."""
        return f"{self.database}.{self.name}"

    @property
    def is_hudi(self) -> bool:
        """Whether the provider is ``hudi``."""
        return self.provider.lower() == "hudi"


def catalog_schema(data_schema: StructType, partition_columns: tuple[str, ...] | list[str]) -> StructType:
    """A Hudi table's catalog schema: meta columns (strings), data columns, then partition columns in
    PARTITIONED BY order (Spark's ``PreprocessTableCreation`` order; Hudi ``HoodieCatalogTable.tableSchema``).

    Raises:
        KeyError: a partition column is not in ``data_schema`` (callers check the columns first).
    """
    by_name = {f.name.lower(): f for f in data_schema.fields}
    parts = [by_name[c.lower()] for c in partition_columns]
    lowered = {c.lower() for c in partition_columns}
    data = [f for f in data_schema.fields if f.name.lower() not in lowered]
    meta = [StructField(m, StringType(), True) for m in META_FIELDS if m not in by_name]
    return StructType([*meta, *data, *parts])


def declared_narrow_types(entry: CatalogTable, data_schema: StructType) -> dict[str, DataType]:
    """Columns the catalog declares ``TINYINT`` / ``SMALLINT`` that the table's Avro schema stores as ``int``:
    ``{lower-case name: ByteType() | ShortType()}``. A value written to such a column is cast to the declared
    type first (Hudi's ``InsertIntoHoodieTableCommand`` casts to the catalog schema), so ``300`` into a
    ``TINYINT`` fails with Spark's ``CAST_OVERFLOW`` under ANSI mode instead of being stored out of range."""
    declared = {f.name.lower(): f.dataType for f in entry.schema.fields}
    return {f.name.lower(): declared[f.name.lower()] for f in data_schema.fields
            if isinstance(declared.get(f.name.lower()), ByteType | ShortType)
            and not isinstance(f.dataType, ByteType | ShortType)}


def hive_compatible(dtype: DataType) -> DataType:
    """``dtype`` as the Hive column type Hive sync derives from the table's Avro schema (Hudi
    ``HiveSchemaUtil``, timestamps supported): Avro has no 8/16-bit integers, so TINYINT and SMALLINT are
    ``int``; TIMESTAMP_NTZ is ``timestamp``. Nested types are mapped inside. The catalog's Hive columns
    use these, so the first sync finds nothing to convert; Spark's own schema keeps the declared types."""
    if isinstance(dtype, ByteType | ShortType):
        return IntegerType()
    if isinstance(dtype, TimestampNTZType):
        return TimestampType()
    if isinstance(dtype, ArrayType):
        return ArrayType(hive_compatible(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, MapType):
        return MapType(hive_compatible(dtype.keyType), hive_compatible(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, hive_compatible(f.dataType), f.nullable, f.metadata)
                           for f in dtype.fields])
    return dtype


@dataclass(frozen=True)
class HudiCatalogSpec:
    """What a Hudi table's metastore entry holds (Hudi ``HoodieCatalogTable``).

    Attributes:
        database: database name.
        name: table name.
        data_schema: the table's columns without meta columns, in declared order (partition columns
            anywhere; :meth:`catalog_schema` moves them last).
        partition_columns: partition column names, in PARTITIONED BY order.
        location: base path.
        external: created with LOCATION (Spark and Hudi: EXTERNAL), else MANAGED.
        merge_on_read: MOR (Hive input format ``HoodieParquetRealtimeInputFormat``) or COW
            (``HoodieParquetInputFormat``).
        properties: TBLPROPERTIES: the statement's options plus ``type``/``primaryKey``/``preCombineField``
            from ``hoodie.properties`` (Hudi ``HoodieOptionConfig.extractSqlOptions``).
        comment: table comment.
        storage_properties: storage (serde) properties besides ``path``; Hudi puts
            ``hoodie.query.as.ro.table`` there for a hand-made ``_ro``/``_rt`` table.
    """

    database: str
    name: str
    data_schema: StructType
    partition_columns: tuple[str, ...]
    location: str
    external: bool
    merge_on_read: bool
    properties: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    storage_properties: dict[str, str] = field(default_factory=dict)

    def catalog_schema(self) -> StructType:
        """:func:`catalog_schema` of this table."""
        return catalog_schema(self.data_schema, self.partition_columns)

    @property
    def input_format(self) -> str:
        """Hive input format class (Hudi ``CreateHoodieTableCommand``: by table type)."""
        return HUDI_PARQUET_REALTIME_INPUT_FORMAT if self.merge_on_read else HUDI_PARQUET_INPUT_FORMAT


class Catalog:
    """Looks up, registers and drops table entries in the session catalog.

    Args:
        spark: the session.
        warehouse: warehouse folder, for managed tables' default locations.
    """

    def __init__(self, spark: SparkSession, warehouse: Path) -> None:
        self.spark = spark
        self.warehouse = warehouse

    def qualify(self, ident: TableIdent) -> tuple[str, str]:
        """``(database, table)`` with the current database filled in (names as written, lower-cased like
        Spark's case-insensitive catalog)."""
        database = ident.db or self.spark.catalog.currentDatabase()
        return database.lower(), ident.name.lower()

    def default_location(self, database: str, name: str) -> str:
        """Where Spark puts a managed table: ``<warehouse>/<name>`` in ``default``, else
        ``<warehouse>/<db>.db/<name>``.

        Raises:
            SqlAnalysisError: the database or table name is empty, ``.``/``..``, or holds a ``/``, ``\\`` or
                a control character, so the location would not be one folder of its own in the warehouse
                (``CREATE TABLE `../evil` ...``); nothing is created then.
        """
        for what, value in (("database", database), ("table", name)):
            if (value in ("", ".", "..") or any(c in value for c in "/\\")
                    or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)):
                raise SqlAnalysisError(
                    f"{what} name {value!r} cannot be a folder in the warehouse {self.warehouse} (empty, "
                    "'.', '..', a '/' or '\\', or a control character); rename it, or give the table a "
                    "LOCATION")
        if database == "default":
            return str(self.warehouse / name)
        return str(self.warehouse / f"{database}.db" / name)

    def lookup(self, ident: TableIdent) -> CatalogTable | None:
        """The catalog entry of ``ident``, or ``None`` when there is none.

        Read through the JVM session catalog (``SessionCatalog.getTableMetadata``): ``SHOW TBLPROPERTIES``
        redacts values whose key matches ``spark.sql.redaction.options.regex`` (e.g. ``...urlencode``).
        """
        database, name = self.qualify(ident)
        jvm = self.spark._jvm
        assert jvm is not None
        text = jvm.io.sqlext.catalog.HudiSessionInfo.tableMetadata(self.spark._jsparkSession, database, name)
        if text is None:
            return None
        meta = json.loads(text)
        properties = {str(k): str(v) for k, v in (meta["properties"] or {}).items()}
        storage = {str(k): str(v) for k, v in (meta["storage"] or {}).items()}
        location = meta["location"] if meta["location"] is not None else storage.get("path", "")
        return CatalogTable(database, name, str(meta["provider"] or ""), location.removeprefix("file:"),
                            {**storage, **properties}, properties,
                            cast(StructType, StructType.fromJson(json.loads(meta["schema"]))),
                            tuple(str(c) for c in meta["partitionColumns"]),
                            meta["comment"], meta["tableType"] == "EXTERNAL")

    def lookup_name(self, name: str) -> CatalogTable | None:
        """:meth:`lookup` by a ``[db.]table`` string."""
        database, _, table = name.rpartition(".")
        return self.lookup(TableIdent(database or None, table))

    def require(self, ident: TableIdent) -> CatalogTable:
        """Like :meth:`lookup` but raises.

        Raises:
            SqlAnalysisError: ``Table or view not found: db.t``.
        """
        entry = self.lookup(ident)
        if entry is None:
            database, name = self.qualify(ident)
            raise SqlAnalysisError(f"Table or view not found: {database}.{name}")
        return entry

    def require_hudi(self, ident: TableIdent) -> tuple[CatalogTable, Table]:
        """The catalog entry and the loaded Hudi table of ``ident``.

        Raises:
            NotHudiTable: unknown table or view, or not a Hudi table.
            SqlAnalysisError: no Hudi table at its location.
        """
        entry = self.lookup(ident)
        if entry is None:
            database, name = self.qualify(ident)
            raise NotHudiTable(f"Table or view not found: {database}.{name}", ident)
        if not entry.is_hudi:
            raise NotHudiTable(f"{entry.display} is not a Hudi table (provider {entry.provider or 'hive'})", ident)
        try:
            return entry, Table.load(entry.location)
        except TableNotFound as exc:
            raise SqlAnalysisError(
                f"{entry.display}: no Hudi table at its location {entry.location} ({exc})"
            ) from exc

    def register(self, spec: HudiCatalogSpec) -> None:
        """Create the metastore entry of a Hudi table as Apache Hudi 0.14 registers it
        (``CreateHoodieTableCommand.createTableInCatalog`` / ``createHiveDataSourceTable``): a Hive-compatible
        table (meta + data columns, partition columns as Hive partition keys, Hudi's input format, the
        Parquet serde and output format, storage property ``path``) carrying Spark's data source properties
        (``spark.sql.sources.provider=hudi``, the schema), written through Spark's own Hive client, so that
        Hive sync, Hive and BI readers and Spark all see the same table. Without a Hive catalog
        (``spark.sql.catalogImplementation=in-memory``) Spark's ``CREATE TABLE ... USING hudi`` is used.

        Raises:
            SqlAnalysisError: the metastore refused the entry (the message names the table and the cause).
        """
        jvm = self.spark._jvm
        assert jvm is not None
        entries = jvm.io.sqlext.catalog.HudiCatalogEntries
        if not entries.isHiveCatalog(self.spark._jsparkSession):
            self._register_with_spark_sql(spec)
            return
        try:
            schema = spec.catalog_schema()
            entries.createTable(
                self.spark._jsparkSession, spec.database, spec.name, schema.json(), hive_compatible(schema).json(),
                list(spec.partition_columns), spec.location, spec.external, dict(spec.properties),
                dict(spec.storage_properties), spec.input_format, PARQUET_OUTPUT_FORMAT, PARQUET_SERDE, spec.comment)
        except Py4JJavaError as exc:
            cause = str(exc.java_exception.toString())
            raise SqlAnalysisError(
                f"CREATE TABLE {spec.database}.{spec.name}: the metastore refused the table entry: {cause}"
            ) from exc
        logger.info("registered %s.%s (%s) at %s", spec.database, spec.name,
                    "EXTERNAL" if spec.external else "MANAGED", spec.location)

    def _register_with_spark_sql(self, spec: HudiCatalogSpec) -> None:
        """``CREATE TABLE db.name (cols) USING hudi LOCATION ... TBLPROPERTIES (...)`` through Spark SQL
        (Hudi's non-Hive branch, ``catalog.createTable``)."""
        columns = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in spec.catalog_schema().fields)
        parts = [f"CREATE TABLE {quote(spec.database)}.{quote(spec.name)} ({columns}) USING hudi"]
        if spec.partition_columns:
            parts.append(f"PARTITIONED BY ({', '.join(quote(c) for c in spec.partition_columns)})")
        parts.append(f"LOCATION {sql_string(spec.location)}")
        if spec.storage_properties:
            rendered = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in spec.storage_properties.items())
            parts.append(f"OPTIONS ({rendered})")
        if spec.comment:
            parts.append(f"COMMENT {sql_string(spec.comment)}")
        if spec.properties:
            rendered = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in spec.properties.items())
            parts.append(f"TBLPROPERTIES ({rendered})")
        self.spark.sql(" ".join(parts))

    def replace_columns(self, entry: CatalogTable, data_schema: StructType,
                        partition_columns: tuple[str, ...]) -> None:
        """Set the columns of a Hudi table's entry to ``data_schema`` (without meta columns; columns may be
        added, renamed, dropped or retyped) in both its Hive columns and Spark's schema properties (CASCADE to
        Hive partitions), as Spark's ``HiveExternalCatalog.alterTableDataSchema`` does for a Hive-compatible
        table; without a Hive catalog, through the external catalog's ``alterTableDataSchema`` (the session
        catalog's own check refuses dropped columns).

        Raises:
            SqlAnalysisError: the metastore refused the change.
        """
        jvm = self.spark._jvm
        assert jvm is not None
        entries = jvm.io.sqlext.catalog.HudiCatalogEntries
        schema = catalog_schema(data_schema, partition_columns)
        try:
            if entries.isHiveCatalog(self.spark._jsparkSession):
                entries.alterSchema(self.spark._jsparkSession, entry.database, entry.name, schema.json(),
                                    hive_compatible(schema).json(), list(partition_columns))
            else:
                lowered = {c.lower() for c in partition_columns}
                data = StructType([f for f in schema.fields if f.name.lower() not in lowered])
                external = self.spark._jsparkSession.sharedState().externalCatalog()
                external.alterTableDataSchema(entry.database, entry.name,
                                              jvm.org.apache.spark.sql.types.DataType.fromJson(data.json()))
        except Py4JJavaError as exc:
            raise SqlAnalysisError(f"ALTER TABLE {entry.display}: the metastore refused the new columns: "
                                   f"{exc.java_exception.toString()}") from exc
        self.spark.catalog.refreshTable(f"{entry.database}.{entry.name}")

    def drop(self, entry: CatalogTable, purge: bool = False) -> None:
        """Drop the catalog entry (``PURGE`` passed through)."""
        self.spark.sql(f"DROP TABLE {entry.qualified}{' PURGE' if purge else ''}")
        self.spark.catalog.clearCache()

    def refresh(self, entry: CatalogTable) -> None:
        """Invalidate cached data of the table after a write."""
        try:
            self.spark.catalog.refreshTable(f"{entry.database}.{entry.name}")
        except AnalysisException:
            logger.debug("refresh of %s skipped", entry.display)
