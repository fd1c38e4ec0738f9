"""sqlext.jvm: the jar build, and the session catalog serving persistent ``hudi`` tables to a Python reader.

The reader is a toy ``hudi`` data source that echoes what it was given: one row per option it received
(``name`` = ``"<key>=<value>"``) plus a row ``__schema__=<the schema Spark asked it to produce>``. Every
integer column holds the row's index, so tables of any (int/string) shape can be read. With option
``echo.record`` = a file, it also appends ``read <schema>`` there when it reads (so the schema it was asked
for is visible whatever the columns); with ``echo.claim_filters`` its reader claims every pushed filter
(without applying it) and records ``pushed <filter>`` lines.

Derby (the embedded metastore) lets one process at a time open a warehouse, so the "survives a restart"
check runs its first session in a fresh Python subprocess (this file run as a script) before the
in-process session opens the same warehouse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import sqlext.jvm as jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEMA_KEY = "__schema__"
_CREATE_T = "CREATE TABLE t (id INT, name STRING) USING hudi LOCATION '{loc}' TBLPROPERTIES (primaryKey='id', type='cow')"
_CREATE_PERSISTED = (
    "CREATE TABLE persisted (id BIGINT, name STRING) USING hudi LOCATION '{loc}' "
    "OPTIONS ('hoodie.query.as.ro.table'='true') TBLPROPERTIES (primaryKey='uuid', type='mor')"
)


def echo_source() -> type:
    """The toy ``hudi`` data source class (defined in a function so cloudpickle ships it by value)."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        DataSourceWriter,
        Filter,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.types import StringType, StructType

    class EchoReader(DataSourceReader):
        def __init__(self, options: dict[str, str], schema: StructType) -> None:
            self.options = options
            self.schema = schema

        def record(self, line: str) -> None:
            if "echo.record" in self.options:
                with open(self.options["echo.record"], "a", encoding="utf-8") as out:
                    out.write(line + "\n")

        def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
            self.record(f"read {self.schema.simpleString()}")
            entries = sorted(self.options.items()) + [(SCHEMA_KEY, self.schema.simpleString())]
            for index, (key, value) in enumerate(entries):
                yield tuple(
                    f"{key}={value}" if isinstance(field.dataType, StringType) else index
                    for field in self.schema.fields
                )

    class ClaimingEchoReader(EchoReader):
        """Claims every filter without applying it: only Spark re-applying them keeps results right."""

        def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 - Spark's name
            for pushed in filters:
                self.record(f"pushed {pushed!r}")
            return iter(())

    class EchoWriter(DataSourceWriter):
        """Counts nothing; on commit, records its options in ``<path>/written.json``."""

        def __init__(self, options: dict[str, str], overwrite: bool) -> None:
            self.options = options
            self.overwrite = overwrite

        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

        def commit(self, messages: list[WriterCommitMessage | None]) -> None:
            target = Path(self.options["path"].removeprefix("file:"))
            target.mkdir(parents=True, exist_ok=True)
            (target / "written.json").write_text(json.dumps({"overwrite": self.overwrite, **self.options}))

    class EchoSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "hudi"

        def schema(self) -> str:
            # Asked when CREATE TABLE has no columns: proves `path` (the location) was passed.
            return "id int, name string" if "path" in self.options else "no_path_given string"

        def reader(self, schema: StructType) -> DataSourceReader:
            if "echo.claim_filters" in self.options:  # Spark refuses pushFilters unless pushdown is on
                return ClaimingEchoReader(dict(self.options), schema)
            return EchoReader(dict(self.options), schema)

        def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
            return EchoWriter(dict(self.options), overwrite)

    return EchoSource


def build_session(warehouse: Path, extra_jars: Sequence[Path] = ()) -> SparkSession:
    """A local Hive-catalog session on ``warehouse`` (embedded Derby) with sqlext's catalog installed."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sqlext-jvm-catalog-test")
        .config("spark.sql.catalogImplementation", "hive")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true",
        )
        .config("spark.sql.warehouse.dir", str(warehouse / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.stream.error.file={warehouse}/derby.log")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    conf = jvm.spark_conf()
    conf["spark.jars"] = ",".join([conf["spark.jars"], *(str(jar) for jar in extra_jars)])
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(echo_source())
    return spark


_STUBS = {
    "org/apache/hudi/hadoop/HoodieParquetInputFormat.java": (
        "package org.apache.hudi.hadoop;\n"
        "public class HoodieParquetInputFormat\n"
        "    extends org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat {}\n"
    ),
    "org/apache/hudi/hadoop/realtime/HoodieParquetRealtimeInputFormat.java": (
        "package org.apache.hudi.hadoop.realtime;\n"
        "public class HoodieParquetRealtimeInputFormat\n"
        "    extends org.apache.hudi.hadoop.HoodieParquetInputFormat {}\n"
    ),
}


def input_format_stub_jar(work: Path) -> Path:
    """A jar with empty stand-ins for Hudi's Hive input formats (Hive refuses unknown input formats)."""
    import pyspark

    sources = work / "stub-src"
    for relative, text in _STUBS.items():
        (sources / relative).parent.mkdir(parents=True, exist_ok=True)
        (sources / relative).write_text(text)
    classes = work / "stub-classes"
    jars = Path(pyspark.__file__).parent / "jars"
    command = [
        "javac",
        "-nowarn",
        "-d",
        str(classes),
        "-cp",
        f"{jars}/*",
        *(str(sources / r) for r in _STUBS),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    jar = work / "hudi-input-format-stubs.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for class_file in sorted(classes.rglob("*.class")):
            archive.write(class_file, class_file.relative_to(classes).as_posix())
    return jar


def read_options(spark: SparkSession, sql: str) -> dict[str, str]:
    """Run ``sql`` on an echo table and return what its reader received (keys lower-cased by PySpark)."""
    received: dict[str, str] = {}
    for row in spark.sql(sql).collect():
        key, _, value = row["name"].partition("=")
        received[key] = value
    return received


@pytest.fixture(scope="module")
def warehouse() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sqlext-jvm-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="module")
def first_process_output(warehouse: Path) -> dict[str, str]:
    """Create table ``persisted`` from a fresh Python process (its own JVM) and return what it read."""
    from pyspark import SparkContext

    if SparkContext._gateway is not None:
        # One JVM per process: its classpath and Hive metastore were fixed by whoever started it.
        pytest.skip(
            "a Spark JVM already runs in this process; run tests/spark/test_jvm_catalog.py on its own"
        )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
    result = subprocess.run(
        [sys.executable, __file__, str(warehouse)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    last_line = result.stdout.strip().splitlines()[-1]
    return dict(json.loads(last_line))


@pytest.fixture(scope="module")
def spark(warehouse: Path, first_process_output: dict[str, str]) -> Iterator[SparkSession]:
    session = build_session(warehouse, [input_format_stub_jar(warehouse)])
    session.sql(_CREATE_T.format(loc=warehouse / "t"))
    yield session
    session.stop()


# ---------------------------------------------------------------------------------------- jar build


def test_the_shipped_jar_holds_the_catalog() -> None:
    """The session uses the jar shipped in the package (its record and rebuilds: tests/unit/test_jar_record.py)."""
    jar = jvm.catalog_jar()
    assert jar == jvm.CATALOG_JAR.jar and jar.name == jvm.JAR_NAME
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
    assert names[0] == "META-INF/MANIFEST.MF"
    assert "io/sqlext/catalog/HudiSessionCatalog.class" in names
    assert jvm.spark_conf() == {
        "spark.jars": str(jar),
        "spark.sql.catalog.spark_catalog": "io.sqlext.catalog.HudiSessionCatalog",
        "spark.sql.extensions": "io.sqlext.catalog.SqlextExtensions",
    }


# ------------------------------------------------------------------------------------ catalog


@pytest.mark.spark
@pytest.mark.parametrize("name", ["t", "default.t", "spark_catalog.default.t"])
def test_select_reaches_reader_with_catalog_options(spark: SparkSession, warehouse: Path, name: str) -> None:
    received = read_options(spark, f"SELECT * FROM {name}")
    assert received["path"] == f"file:{warehouse}/t"
    assert received["primarykey"] == "id"
    assert received["type"] == "cow"
    # Spark's reserved V2 properties are catalog bookkeeping, not data source options.
    assert not {"provider", "location", "owner", "external"} & received.keys()


@pytest.mark.spark
def test_query_options_win(spark: SparkSession) -> None:
    received = read_options(spark, "SELECT * FROM t WITH ('type'='mor', 'as.of.instant'='20240101000000000')")
    assert received["type"] == "mor"
    assert received["as.of.instant"] == "20240101000000000"
    assert received["primarykey"] == "id"


@pytest.mark.spark
def test_two_scans_of_one_table_keep_their_own_options(spark: SparkSession) -> None:
    rows = spark.sql(
        "SELECT 'a' AS side, name FROM t WITH ('side'='a') UNION ALL SELECT 'b', name FROM t WITH ('side'='b')"
    ).collect()
    sides = {(row["side"], row["name"]) for row in rows}
    assert ("a", "side=a") in sides and ("b", "side=b") in sides
    assert ("a", "side=b") not in sides and ("b", "side=a") not in sides


def scan(spark: SparkSession, sql: str, record: Path) -> tuple[list[Any], list[str]]:
    """Rows of ``sql`` (which passes ``'echo.record'='<record>'``) and the lines its readers recorded."""
    record.unlink(missing_ok=True)
    rows = spark.sql(sql.format(record=record)).collect()
    return rows, record.read_text().splitlines() if record.exists() else []


@pytest.fixture(scope="module")
def wide(spark: SparkSession, warehouse: Path) -> str:
    """A table with Hudi's commit time meta column among others (the toy reader fills it with text)."""
    spark.sql(
        "CREATE TABLE wide (id INT, _hoodie_commit_time STRING, name STRING, note STRING, n INT) "
        f"USING hudi LOCATION '{warehouse}/wide' TBLPROPERTIES (primaryKey='id')"
    )
    return "wide WITH ('echo.record'='{record}')"


@pytest.mark.spark
def test_reader_produces_only_the_selected_columns(spark: SparkSession, wide: str, warehouse: Path) -> None:
    record = warehouse / "record-select.txt"
    everything, lines = scan(spark, f"SELECT * FROM {wide}", record)
    assert lines == ["read struct<id:int,_hoodie_commit_time:string,name:string,note:string,n:int>"]
    rows, lines = scan(spark, f"SELECT id FROM {wide}", record)
    assert lines == ["read struct<id:int>"]
    assert [row["id"] for row in rows] == list(range(len(everything)))
    # Catalog order and types, whatever the order of the SELECT list.
    rows, lines = scan(spark, f"SELECT n, name FROM {wide}", record)
    assert lines == ["read struct<name:string,n:int>"]
    assert rows[-1]["name"] == "__schema__=struct<name:string,n:int>" and rows[-1]["n"] == len(rows) - 1
    # Per-query options and time travel still reach the pruned reader.
    received = read_options(spark, "SELECT name FROM t VERSION AS OF '20240101000000000' WITH ('k'='v')")
    assert received[SCHEMA_KEY] == "struct<name:string>"
    assert received["as.of.instant"] == "20240101000000000" and received["k"] == "v"
    assert received["primarykey"] == "id"


@pytest.mark.spark
def test_count_star_reads_one_cheap_column(spark: SparkSession, wide: str, warehouse: Path) -> None:
    record = warehouse / "record-count.txt"
    everything, _ = scan(spark, f"SELECT * FROM {wide}", record)
    rows, lines = scan(spark, f"SELECT count(*) AS c FROM {wide}", record)
    assert rows[0]["c"] == len(everything)
    assert lines == ["read struct<_hoodie_commit_time:string>"]
    # Without Hudi's commit time column, the first column.
    t_with_record = "t WITH ('echo.record'='{record}')"
    everything, _ = scan(spark, f"SELECT * FROM {t_with_record}", record)
    rows, lines = scan(spark, f"SELECT count(*) AS c FROM {t_with_record}", record)
    assert lines == ["read struct<id:int>"] and rows[0]["c"] == len(everything)


@pytest.mark.spark
def test_filter_columns_are_read_and_filters_still_apply(
    spark: SparkSession, wide: str, warehouse: Path
) -> None:
    record = warehouse / "record-filter.txt"
    rows, lines = scan(spark, f"SELECT name FROM {wide} WHERE n = 0", record)
    assert lines == ["read struct<name:string,n:int>"]
    assert [row["name"] for row in rows] == [f"echo.record={record}"]  # options sort first
    # With Python filter pushdown on, filters reach the pruned reader; one that claims them all (and
    # applies none) still gives right results, since the wrapper leaves every filter to Spark too.
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        claiming = (
            "SELECT name FROM wide WITH ('echo.record'='{record}', 'echo.claim_filters'='1') WHERE n = 0"
        )
        rows, lines = scan(spark, claiming, record)
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    assert "pushed EqualTo(attribute=('n',), value=0)" in lines
    assert lines[-1] == "read struct<name:string,n:int>"
    assert [row["name"] for row in rows] == ["echo.claim_filters=1"]


@pytest.mark.spark
def test_self_join_scans_keep_their_own_columns_and_options(spark: SparkSession, wide: str) -> None:
    rows = spark.sql(
        "SELECT a.name, b.note FROM wide WITH ('side'='a') a JOIN wide WITH ('side'='b') b ON a.n = b.n"
    ).collect()
    pairs = {(row["name"], row["note"]) for row in rows}
    assert ("side=a", "side=b") in pairs
    assert ("__schema__=struct<name:string,n:int>", "__schema__=struct<note:string,n:int>") in pairs


@pytest.mark.spark
def test_describe_extended_shows_location_and_provider(spark: SparkSession, warehouse: Path) -> None:
    info = {row["col_name"]: row["data_type"] for row in spark.sql("DESCRIBE EXTENDED t").collect()}
    assert info["Location"] == f"file:{warehouse}/t"
    assert info["Provider"] == "hudi"
    assert info["id"] == "int" and info["name"] == "string"


@pytest.mark.spark
def test_show_tblproperties(spark: SparkSession) -> None:
    props = {row["key"]: row["value"] for row in spark.sql("SHOW TBLPROPERTIES t").collect()}
    assert props == {"primaryKey": "id", "type": "cow"}


@pytest.mark.spark
def test_declared_schema_is_what_the_reader_produces(spark: SparkSession, warehouse: Path) -> None:
    spark.sql(
        f"CREATE TABLE small (id TINYINT, name STRING, note STRING) USING hudi LOCATION '{warehouse}/s'"
    )
    df = spark.table("small")
    assert df.schema.simpleString() == "struct<id:tinyint,name:string,note:string>"
    received = read_options(spark, "SELECT * FROM small")
    assert received[SCHEMA_KEY] == "struct<id:tinyint,name:string,note:string>"
    assert received["path"] == f"file:{warehouse}/s"


@pytest.mark.spark
def test_create_without_columns_asks_the_source_with_path(spark: SparkSession, warehouse: Path) -> None:
    spark.sql(
        f"CREATE TABLE inferred USING hudi LOCATION '{warehouse}/i' OPTIONS (k 'v') TBLPROPERTIES (p='q')"
    )
    assert spark.table("inferred").schema.simpleString() == "struct<id:int,name:string>"
    received = read_options(spark, "SELECT * FROM inferred")
    assert received["path"] == f"file:{warehouse}/i"
    assert received["k"] == "v" and received["p"] == "q"
    assert "option.k" not in received


@pytest.mark.spark
def test_plain_sql_writes_are_refused_and_alter_gets_catalog_options(spark: SparkSession, warehouse: Path) -> None:
    """sqlext writes Hudi tables itself: INSERT, INSERT OVERWRITE and CTAS run as plain Spark SQL on a
    `hudi` table fail with one message saying where writes go, and reach no data source writer."""
    spark.sql(
        f"CREATE TABLE w (id INT, name STRING) USING hudi LOCATION '{warehouse}/w' TBLPROPERTIES (type='cow')"
    )
    for statement in ("INSERT INTO w WITH ('extra'='1') VALUES (1, 'a')", "INSERT OVERWRITE w VALUES (2, 'b')"):
        with pytest.raises(Exception, match="INSERT on Hudi table spark_catalog.default.w is not run by plain "
                                            "Spark SQL|INSERT on Hudi table default.w is not run by plain Spark SQL"):
            spark.sql(statement).collect()
    assert not (warehouse / "w" / "written.json").exists()
    spark.sql("ALTER TABLE w SET TBLPROPERTIES ('preCombineField'='ts')")
    assert read_options(spark, "SELECT * FROM w")["precombinefield"] == "ts"
    with pytest.raises(Exception, match="is not run by plain Spark SQL"):
        spark.sql(f"CREATE TABLE ctas USING hudi LOCATION '{warehouse}/c' TBLPROPERTIES (k='v') AS SELECT 1 AS id")
    assert not (warehouse / "c" / "written.json").exists()


@pytest.mark.spark
@pytest.mark.parametrize(
    ("suffix", "input_format", "serde_props", "read_optimized"),
    [
        ("ro", "org.apache.hudi.hadoop.HoodieParquetInputFormat", "", "true"),
        ("rt", "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat", "", "false"),
        (
            "x",
            "org.apache.hudi.hadoop.HoodieParquetInputFormat",
            ", 'hoodie.query.as.ro.table'='false'",
            "false",
        ),
    ],
)
def test_hive_synced_tables_by_input_format(
    spark: SparkSession,
    warehouse: Path,
    suffix: str,
    input_format: str,
    serde_props: str,
    read_optimized: str,
) -> None:
    """Hive tables as Hudi's Hive sync registers them without a Spark provider are Hudi tables too."""
    spark.sql(
        f"CREATE EXTERNAL TABLE hs_{suffix} (id INT, name STRING) "
        "ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' "
        f"WITH SERDEPROPERTIES ('primaryKey'='id'{serde_props}) "
        f"STORED AS INPUTFORMAT '{input_format}' "
        "OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat' "
        f"LOCATION '{warehouse}/hs'"
    )
    received = read_options(spark, f"SELECT * FROM hs_{suffix}")
    assert received["path"] == f"file:{warehouse}/hs"
    assert received["primarykey"] == "id"
    assert received["hoodie.query.as.ro.table"] == read_optimized


@pytest.mark.spark
def test_time_travel_reaches_reader_as_instant(spark: SparkSession) -> None:
    by_version = read_options(spark, "SELECT * FROM t VERSION AS OF '20240101000000000'")
    assert by_version["as.of.instant"] == "20240101000000000"
    assert by_version["primarykey"] == "id"
    assert read_options(spark, "SELECT * FROM t VERSION AS OF 20240101000000123")["as.of.instant"] == (
        "20240101000000123"
    )
    # A Spark timestamp expression arrives as the instant of its wall-clock time in the session time zone.
    stamp = "SELECT * FROM t TIMESTAMP AS OF TIMESTAMP '2024-01-02 03:04:05.678'"
    assert read_options(spark, stamp)["as.of.instant"] == "20240102030405678"
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
    try:  # the wall-clock time written is what arrives, whatever the session time zone
        assert read_options(spark, stamp)["as.of.instant"] == "20240102030405678"
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert read_options(spark, "SELECT * FROM t TIMESTAMP AS OF CAST('2024-01-02' AS DATE)")["as.of.instant"] == (
        "20240102000000000"
    )
    reader = spark.read.option("versionAsOf", "20240103000000000").table("t")
    assert any(row["name"] == "as.of.instant=20240103000000000" for row in reader.collect())


@pytest.mark.spark
def test_time_travel_timestamp_takes_hudi_instants(spark: SparkSession) -> None:
    """A TIMESTAMP AS OF literal reaches the reader as written, which reads it as Hudi does (an instant, quoted
    or not, or a 'yyyy-MM-dd[ HH:mm:ss[.SSS]]' wall-clock time) and names what it cannot read."""
    for clause in ("TIMESTAMP AS OF '20240102030405678'", "TIMESTAMP AS OF 20240102030405678",
                   "FOR SYSTEM_TIME AS OF '20240102030405678'", "timestamp  as\nof '20240102030405678'"):
        assert read_options(spark, f"SELECT * FROM t {clause}")["as.of.instant"] == "20240102030405678", clause
    for literal in ("20240102030405", "2024-01-02 03:04:05.678", "2024-01-02", "yesterday"):
        assert read_options(spark, f"SELECT * FROM t TIMESTAMP AS OF '{literal}'")["as.of.instant"] == literal


@pytest.mark.spark
def test_other_tables_are_untouched(spark: SparkSession) -> None:
    spark.sql("CREATE TABLE plain (id INT) USING parquet")
    spark.sql("INSERT INTO plain VALUES (7)")
    assert [row["id"] for row in spark.sql("SELECT * FROM plain").collect()] == [7]
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("spark_catalog")
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    namespace = gateway.new_array(gateway.jvm.java.lang.String, 1)
    namespace[0] = "default"
    identifier = gateway.jvm.org.apache.spark.sql.connector.catalog.Identifier

    def table_class(name: str) -> str:
        return str(catalog.loadTable(identifier.of(namespace, name)).getClass().getName())

    assert table_class("plain") == "org.apache.spark.sql.connector.catalog.V1Table"
    assert table_class("t") == "io.sqlext.catalog.HudiTable"


@pytest.mark.spark
def test_table_survives_a_restart(
    spark: SparkSession, warehouse: Path, first_process_output: dict[str, str]
) -> None:
    expected = {
        "path": f"file:{warehouse}/p",
        "primarykey": "uuid",
        "type": "mor",
        "hoodie.query.as.ro.table": "true",
    }
    assert expected.items() <= first_process_output.items()
    assert expected.items() <= read_options(spark, "SELECT * FROM persisted").items()
    assert spark.table("persisted").schema.simpleString() == "struct<id:bigint,name:string>"


def _first_process(warehouse: Path) -> None:
    """Body of the subprocess: create ``persisted``, print what its reader received as one JSON line."""
    spark = build_session(warehouse)
    try:
        spark.sql(_CREATE_PERSISTED.format(loc=warehouse / "p"))
        received = read_options(spark, "SELECT * FROM persisted")
    finally:
        spark.stop()
    sys.stdout.write(json.dumps(received) + "\n")


if __name__ == "__main__":
    _first_process(Path(sys.argv[1]))
