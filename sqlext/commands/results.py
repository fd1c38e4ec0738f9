"""Result rows of statements: the DML metrics row and empty results."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from engine.write.metrics import WriteMetrics

DML_SCHEMA = StructType([
    StructField("num_affected_rows", LongType(), False),
    StructField("num_updated_rows", LongType(), False),
    StructField("num_deleted_rows", LongType(), False),
    StructField("num_inserted_rows", LongType(), False),
])


def dml_result(spark: SparkSession, metrics: WriteMetrics | None) -> DataFrame:
    """One row ``num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows``."""
    if metrics is None:
        return spark.createDataFrame([(0, 0, 0, 0)], DML_SCHEMA)
    row = (metrics.rows_affected, metrics.rows_updated, metrics.rows_deleted, metrics.rows_inserted)
    return spark.createDataFrame([row], DML_SCHEMA)


def empty_result(spark: SparkSession) -> DataFrame:
    """The empty result of DDL statements (no columns, no rows), as ``spark.sql`` returns for DDL."""
    return spark.createDataFrame([], StructType([]))
