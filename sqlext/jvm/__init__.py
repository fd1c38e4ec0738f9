"""sqlext's one JVM piece: the session catalog that serves persistent Hudi tables to the Python reader.

Spark's default session catalog loses a Python data source table's location, options and properties
(``PythonDataSourceV2.getTable`` ignores them; docs/DESIGN.md §7.2), so sqlext installs its own
``spark_catalog``: ``io.sqlext.catalog.HudiSessionCatalog`` (Java, under ``java/`` beside this file), the
counterpart of Hudi's ``HoodieCatalog``. For a table whose provider is ``hudi`` it hands the ``hudi``
data source, on every scan and write, the options ``path`` (the table location), the table's
TBLPROPERTIES and its storage/serde properties (e.g. ``hoodie.query.as.ro.table``), with the per-query
options (``SELECT ... FROM t WITH ('k'='v')``) winning. ``VERSION AS OF 'v'`` and
``TIMESTAMP AS OF 'ts'`` reach the reader as option ``as.of.instant`` (``v`` itself, resp. ``ts`` as
``yyyyMMddHHmmssSSS`` in the session time zone). Every other table is left to Spark. Snapshot and
read-optimized reads of base files without log files then go to Spark's own parquet scan instead
(``io.sqlext.catalog.HudiParquetReads``, asking the engine through :mod:`sqlext.jvm.read_planner`).

Beside it, ``io.sqlext.catalog.HudiCatalogEntries`` writes a Hudi table's metastore entry as Hudi 0.14's
``CreateHoodieTableCommand`` does (Hive-compatible columns, Hudi's input formats, Spark's data source
properties; ``sqlext.catalog.Catalog.register``), and two placeholders named like Hudi's Hive input formats
(``org.apache.hudi.hadoop.HoodieParquetInputFormat`` and ``...realtime.HoodieParquetRealtimeInputFormat``)
let Spark's Hive client, which loads a table's input format class whenever it writes the entry, create and
alter such tables; they never read (the catalog above serves those tables).

The classes ship compiled in ``sqlext-catalog.jar`` beside this file (built by ``python -m sqlext.jvm.build``
with ``javac --release 17`` against pyspark's jars), so running needs only a Java 17 runtime. The jar records
the sources it was built from; when they differ from ``java/`` (the Java was edited and the jar not rebuilt)
the sources are compiled with ``javac`` into a cache instead (:mod:`engine.spark.java_jar`)::

    builder = SparkSession.builder
    for key, value in sqlext.jvm.spark_conf().items():
        builder = builder.config(key, value)

The confs must be set before the session's JVM starts (``spark.jars`` is read by ``spark-submit``).
"""

from __future__ import annotations

from pathlib import Path

from engine.spark import java_jar
from sqlext.errors import SqlError

__all__ = [
    "CATALOG_CLASS",
    "CATALOG_JAR",
    "JAR_NAME",
    "JvmBuildError",
    "catalog_jar",
    "spark_conf",
]

CATALOG_CLASS = "io.sqlext.catalog.HudiSessionCatalog"
"""Fully qualified name of the session catalog class (value of ``spark.sql.catalog.spark_catalog``)."""

EXTENSIONS_CLASS = "io.sqlext.catalog.SqlextExtensions"
"""``spark.sql.extensions``: refuses INSERT/UPDATE/DELETE/MERGE on Hudi tables run as plain Spark SQL, reads
Hudi's instant form of ``TIMESTAMP AS OF``, registers Hudi's table-valued functions ``hudi_query`` and
``hudi_table_changes``, and hands the base files of Hudi reads to Spark's parquet scan
(``io.sqlext.catalog.HudiParquetReads``, planned by :mod:`sqlext.jvm.read_planner`)."""

JAR_NAME = "sqlext-catalog.jar"
"""File name of the shipped jar (beside this module) and of a jar compiled into the cache."""

CATALOG_JAR = java_jar.JavaJar(
    sources=Path(__file__).resolve().parent / "java",
    jar=Path(__file__).resolve().parent / JAR_NAME,
    main_class=CATALOG_CLASS,
)
"""The catalog's jar: sources ``sqlext/jvm/java``, shipped as ``sqlext/jvm/sqlext-catalog.jar``."""


class JvmBuildError(SqlError):
    """The catalog jar is unusable and cannot be built: its sources changed and there is no ``javac``,
    pyspark's jars are missing, or compilation failed. The message names the jar and the build command (or
    carries javac's output)."""


def catalog_jar() -> Path:
    """Path of the jar holding :data:`CATALOG_CLASS`: the shipped one when it was built from the sources
    beside it (the normal case, no JDK needed), else one compiled from the sources into the cache
    (:meth:`engine.spark.java_jar.JavaJar.resolve`).

    Raises:
        JvmBuildError: the sources differ from the shipped jar and there is no ``javac`` (names the jar and
            ``python -m sqlext.jvm.build``), pyspark's jars are missing, or compilation fails.
    """
    try:
        return CATALOG_JAR.resolve()
    except java_jar.JavaBuildError as exc:
        raise JvmBuildError(str(exc)) from exc


def spark_conf() -> dict[str, str]:
    """Spark confs that install the catalog: ``spark.jars``, ``spark.sql.catalog.spark_catalog`` and
    ``spark.sql.extensions`` (the rule that refuses plain-Spark-SQL writes to Hudi tables with a message
    saying they go through sqlext).

    Set them on the session builder before the JVM starts. If the caller has its own ``spark.jars``,
    join the values with a comma.

    Raises:
        JvmBuildError: as :func:`catalog_jar`.
    """
    return {
        "spark.jars": str(catalog_jar()),
        "spark.sql.catalog.spark_catalog": CATALOG_CLASS,
        "spark.sql.extensions": EXTENSIONS_CLASS,
    }
