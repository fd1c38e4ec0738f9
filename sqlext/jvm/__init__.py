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

The Java source is compiled on first use with the JDK's ``javac`` against PySpark's own jars and cached
as a jar, keyed by the sources and the PySpark version::

    builder = SparkSession.builder
    for key, value in sqlext.jvm.spark_conf().items():
        builder = builder.config(key, value)

The confs must be set before the session's JVM starts (``spark.jars`` is read by ``spark-submit``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from sqlext.errors import SqlError

__all__ = [
    "CATALOG_CLASS",
    "JAR_NAME",
    "JvmBuildError",
    "cache_dir",
    "catalog_jar",
    "java_sources",
    "spark_conf",
]

logger = logging.getLogger(__name__)

CATALOG_CLASS = "io.sqlext.catalog.HudiSessionCatalog"
"""Fully qualified name of the session catalog class (value of ``spark.sql.catalog.spark_catalog``)."""

EXTENSIONS_CLASS = "io.sqlext.catalog.SqlextExtensions"
"""``spark.sql.extensions``: refuses INSERT/UPDATE/DELETE/MERGE on Hudi tables run as plain Spark SQL, reads
Hudi's instant form of ``TIMESTAMP AS OF``, registers Hudi's table-valued functions ``hudi_query`` and
``hudi_table_changes``, and hands the base files of Hudi reads to Spark's parquet scan
(``io.sqlext.catalog.HudiParquetReads``, planned by :mod:`sqlext.jvm.read_planner`)."""

JAR_NAME = "sqlext-catalog.jar"
"""File name of the built jar inside its cache directory."""

JAVA_RELEASE = "17"
"""``javac --release``: Spark 4 runs on Java 17+, so the classes load on any JVM PySpark supports."""

_BUILD_FORMAT = "sqlext-jvm-build/1"
"""Changes whenever the way the jar is built changes, so old cached jars are not reused."""

_JAVAC_TIMEOUT_S = 600.0
_SOURCE_ROOT = Path(__file__).resolve().parent / "java"
_MANIFEST = "Manifest-Version: 1.0\r\nCreated-By: sqlext.jvm\r\n\r\n"


class JvmBuildError(SqlError):
    """The catalog jar could not be built: no ``javac``, no PySpark jars, or compilation failed.

    The message carries javac's output (or what was missing) so the user can act on it.
    """


def java_sources() -> list[Path]:
    """The catalog's Java source files (``sqlext/jvm/java/**/*.java``), sorted by path.

    Raises:
        JvmBuildError: if the package was installed without its Java sources.
    """
    sources = sorted(_SOURCE_ROOT.rglob("*.java"))
    if not sources:
        raise JvmBuildError(f"no Java sources under {_SOURCE_ROOT} (package data missing from the install?)")
    return sources


def _pyspark() -> tuple[Path, str]:
    """The Spark installation holding ``jars/`` and PySpark's version: the pyspark package folder (a pip
    install), else ``$SPARK_HOME`` (under ``spark-submit`` pyspark is imported from
    ``$SPARK_HOME/python/lib/pyspark.zip``, which holds no jars).

    Raises:
        JvmBuildError: pyspark is not importable, or neither place has a ``jars/`` folder.
    """
    try:
        import pyspark
    except ImportError as exc:  # pragma: no cover - pyspark is a hard dependency
        raise JvmBuildError(f"pyspark is not importable: {exc}") from exc
    package = Path(pyspark.__file__).resolve().parent
    candidates = [package]
    if os.environ.get("SPARK_HOME"):
        candidates.append(Path(os.environ["SPARK_HOME"]).resolve())
    for home in candidates:
        if (home / "jars").is_dir():
            return home, str(pyspark.__version__)
    raise JvmBuildError(f"no jars/ directory to compile the catalog against in {' or '.join(map(str, candidates))} "
                        "(the pyspark package, $SPARK_HOME)")


def cache_dir() -> Path:
    """Root of the jar cache: ``$SQLEXT_CACHE_DIR/jvm``, else ``~/.cache/sqlext/jvm``."""
    root = os.environ.get("SQLEXT_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "sqlext"
    return base / "jvm"


def _build_key(sources: list[Path], pyspark_version: str) -> str:
    """sha256 (hex) of the build format, ``--release``, the PySpark version and every source file."""
    digest = hashlib.sha256()
    for part in (_BUILD_FORMAT, JAVA_RELEASE, pyspark_version):
        digest.update(part.encode() + b"\0")
    for source in sources:
        digest.update(source.relative_to(_SOURCE_ROOT).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()


def _find_javac() -> str:
    """``$JAVA_HOME/bin/javac`` if present, else ``javac`` on ``PATH``.

    Raises:
        JvmBuildError: if neither exists (a JRE without the JDK is not enough).
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "javac"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("javac")
    if found is None:
        raise JvmBuildError(
            "javac not found (checked $JAVA_HOME/bin and PATH): sqlext compiles its session catalog "
            f"{CATALOG_CLASS} on first use and needs a JDK {JAVA_RELEASE}+, e.g. `apt-get install "
            "openjdk-17-jdk-headless`"
        )
    return found


def _compile(javac: str, sources: list[Path], jars_dir: Path, classes: Path) -> None:
    """Run javac over ``sources`` into ``classes``; raise :class:`JvmBuildError` with its output on failure."""
    command = [
        javac,
        "--release",
        JAVA_RELEASE,
        "-encoding",
        "UTF-8",
        "-Xlint:all,-path",
        "-d",
        str(classes),
        "-cp",
        str(jars_dir / "*"),
        *(str(source) for source in sources),
    ]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=_JAVAC_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JvmBuildError(f"could not run {javac} to compile {CATALOG_CLASS}: {exc}") from exc
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise JvmBuildError(
            f"javac failed (exit {result.returncode}) compiling {CATALOG_CLASS} from {_SOURCE_ROOT} "
            f"against {jars_dir}:\n{output}"
        )
    if output:
        logger.debug("javac output for %s:\n%s", CATALOG_CLASS, output)


def _write_jar(classes: Path, jar: Path) -> None:
    """Zip ``classes`` (manifest first, as the jar format wants) into ``jar``."""
    with zipfile.ZipFile(jar, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("META-INF/MANIFEST.MF", _MANIFEST)
        for class_file in sorted(classes.rglob("*.class")):
            archive.write(class_file, class_file.relative_to(classes).as_posix())


def catalog_jar() -> Path:
    """Path of the jar holding :data:`CATALOG_CLASS`, building it on first use.

    The jar is ``<cache_dir()>/<sha256 of sources + PySpark version>/sqlext-catalog.jar``. It is
    compiled (``javac --release 17 -cp "<pyspark>/jars/*"``, about 2 s) in a private temporary
    directory under :func:`cache_dir` and moved into place with an atomic rename, so concurrent
    processes never see a half-written jar (the last of two racing builds wins; both are identical).

    Returns:
        Absolute path of an existing jar file.

    Raises:
        JvmBuildError: javac is missing, PySpark's jars are missing, or compilation fails (the message
            holds javac's output); also when the cache directory cannot be written.
    """
    sources = java_sources()
    pyspark_home, pyspark_version = _pyspark()
    key = _build_key(sources, pyspark_version)
    root = cache_dir()
    jar = root / key / JAR_NAME
    if jar.is_file():
        return jar
    javac = _find_javac()
    started = time.monotonic()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".build-", dir=root) as work:
            classes = Path(work) / "classes"
            classes.mkdir()
            _compile(javac, sources, pyspark_home / "jars", classes)
            built = Path(work) / JAR_NAME
            _write_jar(classes, built)
            jar.parent.mkdir(parents=True, exist_ok=True)
            os.replace(built, jar)
    except OSError as exc:
        raise JvmBuildError(f"could not build {JAR_NAME} under {root}: {exc}") from exc
    logger.info(
        "built %s (PySpark %s) in %.1f s: %s", CATALOG_CLASS, pyspark_version, time.monotonic() - started, jar
    )
    return jar


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
