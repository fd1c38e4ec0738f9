"""Keys generated as Spark expressions equal the Python key generator's, value for value; the cases Spark
cannot render exactly fall back; a null key fails with the field named."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import DataType, LongType, StringType, StructType

from engine.config import HoodieConfig
from engine.errors import InvalidRecordKey
from engine.keygen import KeyGenerator
from engine.spark.key_columns import partition_path_column, record_key_column
from engine.spark.schema import spark_to_arrow
from engine.spark.task_errors import unwrap_task_error
from sqlext.session import Session

pytestmark = pytest.mark.spark

SCHEMA = "id BIGINT, code STRING, small SMALLINT, tiny TINYINT, region STRING, year INT, day DATE"
ROWS = [
    (1, "a", 1, -1, "us/east", 2024, None),
    (-9_223_372_036_854_775_808, "", 0, 127, "", -7, None),
    (9_223_372_036_854_775_807, None, -32768, -128, None, 0, None),
    (42, "ünï cødé:,=", 7, 0, "Straße #1?", 1999, None),
]


def _types(schema: StructType) -> dict[str, DataType]:
    return {f.name.lower(): f.dataType for f in schema.fields}


def _native(spark: SparkSession, props: dict[str, str]) -> tuple[list[str], list[str]]:
    df = spark.createDataFrame(ROWS, SCHEMA)
    keygen = KeyGenerator.from_config(HoodieConfig(props))
    key = record_key_column(keygen, df.schema, _types(df.schema))
    partition = partition_path_column(keygen, df.schema, _types(df.schema))
    assert key is not None and partition is not None, props
    out = df.select(key.alias("k"), partition.alias("p")).collect()
    return [r["k"] for r in out], [r["p"] for r in out]


def _python(spark: SparkSession, props: dict[str, str]) -> tuple[list[str], list[str]]:
    schema = spark.createDataFrame([], SCHEMA).schema
    data = pa.Table.from_pylist(
        [dict(zip(schema.fieldNames(), r, strict=True)) for r in ROWS],
        schema=spark_to_arrow(schema))
    keygen = KeyGenerator.from_config(HoodieConfig(props))
    return keygen.record_keys(data).to_pylist(), keygen.partition_paths(data).to_pylist()


CONFIGS = [
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region"},
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region",
     "hoodie.datasource.write.hive_style_partitioning": "true"},
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "year",
     "hoodie.datasource.write.partitionpath.urlencode": "true"},
    {"hoodie.table.recordkey.fields": "id,code", "hoodie.table.partition.fields": "region,year",
     "hoodie.datasource.write.hive_style_partitioning": "true"},
    {"hoodie.table.recordkey.fields": "code,small,tiny", "hoodie.table.partition.fields": "tiny,small",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
    {"hoodie.table.recordkey.fields": "small", "hoodie.table.partition.fields": "year",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
    {"hoodie.table.recordkey.fields": "small", "hoodie.table.partition.fields": "year",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
     "hoodie.write.complex.keygen.encode.single.record.key.field.name": "false"},
    {"hoodie.table.recordkey.fields": "ID", "hoodie.table.partition.fields": ""},
    {"hoodie.table.recordkey.fields": "id,code",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"},
    {"hoodie.table.recordkey.fields": "id",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.GlobalDeleteKeyGenerator"},
]


@pytest.mark.parametrize("props", CONFIGS, ids=range(len(CONFIGS)))
def test_spark_keys_equal_python_keys(session: Session, props: dict[str, str]) -> None:
    native = _native(session.spark, props)
    assert native == _python(session.spark, props)
    assert len(set(native[0])) == len(ROWS)


def test_keys_cast_to_the_table_type_first(session: Session) -> None:
    spark = session.spark
    df = spark.createDataFrame([(7,)], "id INT")
    keygen = KeyGenerator.from_config(HoodieConfig({"hoodie.table.recordkey.fields": "id"}))
    key = record_key_column(keygen, df.schema, {"id": LongType()})
    assert key is not None
    assert df.select(key.alias("k")).collect()[0]["k"] == "7"
    # A string column stored as an integer is conformed by the Python path, not rendered here.
    assert record_key_column(keygen, spark.createDataFrame([("7",)], "id STRING").schema,
                             {"id": LongType()}) is None
    assert record_key_column(keygen, df.schema, {"id": StringType()}) is None


@pytest.mark.parametrize("props", [
    {"hoodie.table.recordkey.fields": "day"},
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "day"},
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "region",
     "hoodie.datasource.write.partitionpath.urlencode": "true"},
    {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "year",
     "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
     "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
     "hoodie.keygen.timebased.output.dateformat": "yyyy"},
    {"hoodie.table.recordkey.fields": "nested.id"},
], ids=["date-key", "date-partition", "urlencoded-string", "timestamp-keygen", "nested"])
def test_cases_spark_cannot_render_fall_back(session: Session, props: dict[str, str]) -> None:
    df = session.spark.createDataFrame([], SCHEMA)
    keygen = KeyGenerator.from_config(HoodieConfig(props))
    key = record_key_column(keygen, df.schema, _types(df.schema))
    partition = partition_path_column(keygen, df.schema, _types(df.schema))
    assert key is None or partition is None


@pytest.mark.parametrize("fields", ["id", "code,region"])
def test_null_key_fails_naming_the_field(session: Session, fields: str) -> None:
    spark = session.spark
    df = spark.createDataFrame([(1, "a", 1, 1, "r", 1, None), (None, None, 1, 1, "", 1, None)], SCHEMA)
    props = {"hoodie.table.recordkey.fields": fields}
    keygen = KeyGenerator.from_config(HoodieConfig(props))
    key = record_key_column(keygen, df.schema, _types(df.schema))
    assert key is not None
    with pytest.raises(Exception) as caught:
        df.select(key).collect()
    error = unwrap_task_error(caught.value)
    assert isinstance(error, InvalidRecordKey)
    assert fields.split(",")[0] in str(error) and "null or empty" in str(error)
    assert "SQLSTATE" not in str(error)
