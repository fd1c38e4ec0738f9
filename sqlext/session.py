"""``sqlext.connect(...) -> Session``: a SparkSession set up for Hudi tables, and ``Session.sql``.

The embedded default is local Spark with a warehouse folder holding an embedded Derby metastore
(``<warehouse>/metastore_db``), so tables survive restarts, as with ``spark-sql``. The session installs
the custom session catalog (:mod:`sqlext.jvm`), registers the ``hudi`` Python data source, so plain
``spark.sql`` and ``spark.read.format("hudi")`` read Hudi tables, and registers the engine's read planner with
the JVM (:mod:`sqlext.jvm.read_planner`), so the base files of those reads go to Spark's own parquet scan.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from engine.spark.datasource import HudiDataSource
from engine.write.metrics import WriteMetrics
from sqlext import jvm
from sqlext.catalog import Catalog
from sqlext.commands import dispatch
from sqlext.commands.context import CommandContext
from sqlext.embedded_metastore import (
    HOLDER_UNKNOWN,
    WarehouseBusy,
    busy_message,
    check_not_busy,
    derby_holder,
    is_derby_boot_conflict,
    metastore_dir,
)
from sqlext.errors import SqlParseError
from sqlext.jvm import read_planner
from sqlext.parser import parse_statement
from sqlext.parser.statements import CreateTable, DeleteFrom, InsertInto, MergeInto, UpdateTable
from sqlext.variables import substitute_variables

logger = logging.getLogger(__name__)

DEFAULT_WAREHOUSE_ENV = "SQLEXT_WAREHOUSE"


def default_warehouse() -> Path:
    """``$SQLEXT_WAREHOUSE`` or ``./warehouse``."""
    return Path(os.environ.get(DEFAULT_WAREHOUSE_ENV, "warehouse")).resolve()


def session_conf(warehouse: Path, master: str | None = None) -> dict[str, str]:
    """Spark confs of the embedded default: local master, Hive catalog on Derby inside ``warehouse``,
    the sqlext session catalog and Python data source filter pushdown."""
    cores = os.cpu_count() or 2
    conf = {
        "spark.master": master or "local[*]",
        "spark.app.name": "sqlext",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={warehouse / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse}",
        "spark.sql.python.filterPushdown.enabled": "true",
        # ALTER TABLE with Hudi's schema on read drops, renames and retypes columns; Hive refuses a column list
        # whose types differ position by position unless this is off (Hudi's schema evolution docs say so).
        "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
        "spark.sql.shuffle.partitions": str(max(4, cores * 2)),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.sources.partitionOverwriteMode": "static",
        # Larger Arrow batches between the JVM and the write/read tasks: fewer per-batch overheads.
        "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
        # Python workers allocate Arrow buffers with the system allocator: it hands freed pages back, where
        # jemalloc keeps ~70 MB of them per compaction task (engine.services.compaction.returning_memory_pool).
        "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL": "system",
    }
    conf.update(jvm.spark_conf())
    return conf


QUIET_JVM_LOGGERS = (
    # Logs "ERROR HiveAlterHandler: Failed to alter table" each time Spark's HiveExternalCatalog tries a
    # Hive-compatible schema change first and then, as designed, stores it in Spark's own format.
    "org.apache.hadoop.hive.metastore.HiveAlterHandler",
)
"""JVM loggers whose ERROR lines are part of normal operation; set to FATAL (the failure, if real, reaches
the statement as an exception)."""


def quiet_jvm_loggers(spark: SparkSession) -> None:
    """Silence :data:`QUIET_JVM_LOGGERS` in the session's JVM (log4j2)."""
    jvm = spark._jvm
    assert jvm is not None
    level = jvm.org.apache.logging.log4j.Level.FATAL
    for name in QUIET_JVM_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, level)


REMOTE_METASTORE_KEYS = ("hive.metastore.uris", "spark.hadoop.hive.metastore.uris", "spark.hive.metastore.uris")
"""Where a session's settings name a remote Hive Metastore (``--hiveconf hive.metastore.uris=...``)."""

_CATALOG_START_LOGGERS = ("DataNucleus", "org.apache.hadoop.hive.metastore.RetryingHMSHandler",
                          "org.apache.hadoop.hive.metastore.HiveMetaStore", "org.apache.hadoop.hive.ql.metadata.Hive")
"""JVM loggers that print every retry of a failed metastore start with a stack trace (thousands of lines
when the warehouse is busy); quiet while the catalog opens, the failure reaches the caller as one error."""


def remote_metastore_uris(settings: Mapping[str, str]) -> str | None:
    """The remote metastore named by ``settings`` (:data:`REMOTE_METASTORE_KEYS`), if any."""
    return next((settings[k] for k in REMOTE_METASTORE_KEYS if settings.get(k)), None)


def open_catalog(spark: SparkSession, embedded_warehouse: Path | None) -> None:
    """Open the session catalog now, as ``spark-sql`` does at start, so a metastore that cannot be opened
    fails the start in one line instead of the first statement in thousands.

    Args:
        spark: the new session.
        embedded_warehouse: the warehouse whose embedded Derby metastore the session uses; ``None`` with
            a remote metastore.

    Raises:
        WarehouseBusy: another process took the embedded metastore meanwhile (the session is stopped).
    """
    jvm = spark._jvm
    assert jvm is not None
    configurator = jvm.org.apache.logging.log4j.core.config.Configurator
    levels = jvm.org.apache.logging.log4j.Level
    for name in _CATALOG_START_LOGGERS:
        configurator.setLevel(name, levels.OFF)
    try:
        spark._jsparkSession.sessionState().catalog().databaseExists("default")
    except Exception as exc:
        if embedded_warehouse is not None and is_derby_boot_conflict(exc):
            pid = derby_holder(metastore_dir(embedded_warehouse))
            spark.stop()
            raise WarehouseBusy(busy_message(embedded_warehouse, HOLDER_UNKNOWN if pid is None else pid)) from exc
        raise
    finally:
        for name in _CATALOG_START_LOGGERS:
            configurator.setLevel(name, levels.ERROR)


class Session:
    """A SQL session over Hudi tables.

    Args:
        spark: the SparkSession (with the sqlext catalog installed).
        warehouse: warehouse folder (managed tables live under it).
    """

    def __init__(self, spark: SparkSession, warehouse: Path) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.catalog = Catalog(spark, warehouse)
        self.context = CommandContext(spark, self.catalog)

    @property
    def last_write_metrics(self) -> WriteMetrics | None:
        """The metrics of this session's last INSERT, MERGE, UPDATE or DELETE (rows and files written,
        milliseconds per phase: ``tag``, ``plan``, ``write``, ``commit``, post-commit services), or None."""
        return self.context.last_write.metrics

    def sql(self, text: str) -> DataFrame:
        """Run ONE statement and return its result.

        Hudi statements (CREATE TABLE ... USING hudi, INSERT, MERGE INTO, UPDATE, DELETE, ALTER, DROP,
        TRUNCATE, SHOW PARTITIONS, CALL, compaction commands, time travel) are executed by sqlext; every
        other statement goes to ``spark.sql`` unchanged.

        Raises:
            SqlError: the statement is malformed or names an unknown table/column (the message says which).
            EngineError: the table operation failed (the table stays readable at its last commit).
        """
        if self.spark.conf.get("spark.sql.variable.substitute", "true") == "true":
            text = substitute_variables(text, self._conf_value)
        try:
            statement = parse_statement(text)
        except SqlParseError as exc:
            # Spark SQL sqlext's grammar does not know, on a table that is not Hudi's: Spark's to run or refuse.
            entry = self.catalog.lookup(exc.target) if exc.target is not None else None
            if entry is not None and not entry.is_hudi:
                return self.spark.sql(text)
            raise
        if isinstance(statement, _SPARK_GRAMMAR_STATEMENTS):
            check_spark_grammar(self.spark, text)
        return dispatch(self.context, statement)

    def _conf_value(self, key: str) -> str | None:
        value = self.spark.conf.get(key, None)
        return None if value is None else str(value)

    def stop(self) -> None:
        """Stop the SparkSession."""
        self.spark.stop()


_SPARK_GRAMMAR_STATEMENTS = (CreateTable, InsertInto, MergeInto, UpdateTable, DeleteFrom)
"""Statements Hudi 0.14 leaves to Spark's own parser (its extended parser only takes CALL, index and
compaction commands): what Spark's grammar refuses, Hudi refuses."""

_NOT_HUDI_RULES = frozenset({"COLUMN_ALIASES_NOT_ALLOWED"})
"""Spark parse errors of statements Hudi's commands accept: ``MERGE INTO t USING (...) s(a, b)``."""


def check_spark_grammar(spark: SparkSession, text: str) -> None:
    """Parse ``text`` with the session's Spark SQL parser (no analysis, no execution).

    sqlglot reads some malformed statements leniently (``x IN ( , 2)`` as ``x IN (2)``); Hudi never sees them,
    because Spark's parser refuses them first.

    Every parse error counts (syntax, numeric literals out of range, ...) except the rules Spark's AST builder
    adds for its own MERGE that Hudi's command does not have (:data:`_NOT_HUDI_RULES`).

    Raises:
        pyspark.errors.ParseException: Spark's own error (error class, line, position, the statement with a
            caret), exactly what Hudi on Spark shows.
    """
    from pyspark.errors import ParseException

    try:
        spark._jsparkSession.sessionState().sqlParser().parsePlan(text)
    except ParseException as exc:
        condition = exc.getCondition() if hasattr(exc, "getCondition") else exc.getErrorClass()
        if condition not in _NOT_HUDI_RULES:
            raise
        logger.debug("Spark's parser refuses %r with %s; Hudi's command takes it", text[:200], condition)


def connect(
    warehouse: str | os.PathLike[str] | None = None,
    conf: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
    master: str | None = None,
) -> Session:
    """Start (or attach to) a SparkSession set up for Hudi tables.

    Args:
        warehouse: warehouse folder (default ``$SQLEXT_WAREHOUSE`` or ``./warehouse``); ignored when
            ``spark`` is given.
        conf: extra Spark confs (override the defaults; ``hoodie.*`` keys become session write options).
        spark: an existing session; it must have been built with :func:`session_conf`'s catalog confs
            (``spark.sql.catalog.spark_catalog`` and ``spark.jars``) for plain SQL reads of Hudi tables.
        master: Spark master (default ``local[*]``).

    Returns:
        The session; the ``hudi`` data source and the read planner are registered on it.

    Raises:
        SqlError: the JVM catalog could not be built.
        WarehouseBusy: another process has the warehouse's embedded Derby metastore open (the message
            names the warehouse and the process, and says how to share it).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if spark is None:
        wh = Path(warehouse).resolve() if warehouse is not None else default_warehouse()
        wh.mkdir(parents=True, exist_ok=True)
        settings = session_conf(wh, master)
        settings.update({str(k): str(v) for k, v in (conf or {}).items()})
        embedded = remote_metastore_uris(settings) is None
        if embedded:
            check_not_busy(wh)
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.enableHiveSupport().getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        quiet_jvm_loggers(spark)
        # Registering a Python data source costs the JVM about 1.5 s; it overlaps with opening the catalog.
        with ThreadPoolExecutor(1, thread_name_prefix="sqlext-register") as pool:
            registered = pool.submit(spark.dataSource.register, HudiDataSource)
            try:
                open_catalog(spark, wh if embedded else None)
            except BaseException:
                wait([registered])  # its own failure, if any, says less than the catalog's
                raise
            registered.result()
        read_planner.install(spark)
        return Session(spark, wh)
    configured = spark.conf.get("spark.sql.warehouse.dir", None) or str(default_warehouse())
    wh = Path(configured.removeprefix("file:"))
    for key, value in (conf or {}).items():
        spark.conf.set(str(key), str(value))
    spark.dataSource.register(HudiDataSource)
    read_planner.install(spark)
    return Session(spark, wh)
