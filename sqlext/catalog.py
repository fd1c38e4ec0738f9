"""Table identifiers → Hudi tables, through Spark's session catalog (embedded Derby metastore or a remote
Hive Metastore). Each Hudi table is a catalog entry with provider ``hudi``, its location and its
properties (``type``, ``primaryKey``, ``preCombineField``, ``hoodie.*``); the table's own truth is
``<location>/.hoodie/hoodie.properties``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException

from engine.errors import TableNotFound
from engine.table import Table
from sqlext.errors import SqlAnalysisError
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
        properties: table properties.
    """

    database: str
    name: str
    provider: str
    location: str
    properties: dict[str, str] = field(default_factory=dict)

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
        table_ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier(name, jvm.scala.Option.apply(database))
        catalog = self.spark._jsparkSession.sessionState().catalog()
        if not catalog.tableExists(table_ident):
            return None
        meta = catalog.getTableMetadata(table_ident)
        converters = jvm.scala.jdk.javaapi.CollectionConverters
        properties = {str(k): str(v) for k, v in converters.asJava(meta.properties()).items()}
        storage = {str(k): str(v) for k, v in converters.asJava(meta.storage().properties()).items()}
        provider = meta.provider().getOrElse(None) if meta.provider().isDefined() else None
        location_uri = meta.storage().locationUri()
        location = str(location_uri.get().toString()) if location_uri.isDefined() else storage.get("path", "")
        return CatalogTable(database, name, str(provider or ""), location.removeprefix("file:"),
                            {**storage, **properties})

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
            SqlAnalysisError: unknown table, not a Hudi table, or no Hudi table at its location.
        """
        entry = self.require(ident)
        if not entry.is_hudi:
            raise SqlAnalysisError(f"{entry.display} is not a Hudi table (provider {entry.provider or 'hive'})")
        try:
            return entry, Table.load(entry.location)
        except TableNotFound as exc:
            raise SqlAnalysisError(
                f"{entry.display}: no Hudi table at its location {entry.location} ({exc})"
            ) from exc

    def register(self, database: str, name: str, columns_ddl: str, location: str | None,
                 properties: dict[str, str], comment: str | None = None) -> None:
        """Create the catalog entry ``CREATE TABLE db.name (cols) USING hudi [LOCATION] TBLPROPERTIES``."""
        parts = [f"CREATE TABLE {quote(database)}.{quote(name)} ({columns_ddl}) USING hudi"]
        if location is not None:
            parts.append(f"LOCATION {sql_string(location)}")
        if comment:
            parts.append(f"COMMENT {sql_string(comment)}")
        if properties:
            rendered = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in properties.items())
            parts.append(f"TBLPROPERTIES ({rendered})")
        self.spark.sql(" ".join(parts))
        logger.info("registered %s.%s at %s", database, name, location or "(managed)")

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
