"""Writing back rows read from the table itself (Hudi's *prepped* writes, ``hoodie.datasource.write.prepped``, which
Hudi 0.14's ``UpdateHoodieTableCommand`` and ``DeleteHoodieTableCommand`` use).

The rows come from a read of the table with its meta columns, so each already names its record key, partition
path and file group (``_hoodie_record_key``, ``_hoodie_partition_path``, the file id of ``_hoodie_file_name``):
no index lookup, and tables without a primary key (auto-generated keys) work the same way. Tables with
``hoodie.populate.meta.fields=false`` get their keys from the key generator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from engine.formats.avro_schema import META_FIELDS
from engine.spark.record_keys import add_keys, table_arrow_schema
from engine.spark.schema import column
from engine.spark.writer import write_dataframe
from engine.table import Table
from engine.write.metrics import WriteMetrics
from engine.write.operation import WriteOperation
from engine.write.prepare import FILE_ID, IS_DELETED, PARTITION_PATH, RECORD_KEY


def _located(stored: DataFrame, table: Table, options: Mapping[str, str]) -> DataFrame:
    """``stored`` with ``_hoodie_file_id`` from ``_hoodie_file_name`` (and keys recomputed for tables without meta
    fields)."""
    located = stored.withColumn(FILE_ID, F.split(F.col(META_FIELDS[4]), "_").getItem(0))
    if table.populate_meta_fields:
        return located
    conf = table.config.overlay(options)
    return add_keys(located.drop(RECORD_KEY, PARTITION_PATH), table, conf, table_arrow_schema(table))


def update_stored_rows(spark: SparkSession, table: Table, stored: DataFrame, columns: Sequence[Column],
                       options: Mapping[str, str] | None = None) -> WriteMetrics:
    """Upsert ``stored`` (a read of ``table`` with its meta columns, e.g. the rows an UPDATE's WHERE keeps) with
    its data columns replaced by ``columns`` (one Column over ``stored`` per table data column, named as it).

    Raises:
        AnalysisException: a column does not resolve (before anything is written).
        EngineError: the write failed (rolled back; the table reads its last commit).
    """
    options = dict(options or {})
    located = _located(stored, table, options)
    rows = located.select(*columns, F.col(RECORD_KEY), F.col(PARTITION_PATH), F.col(FILE_ID))
    rows.schema  # noqa: B018 - analysis errors surface before the instant starts
    return write_dataframe(spark, table, rows, WriteOperation.UPSERT, options, prepped=True)


def delete_stored_rows(spark: SparkSession, table: Table, stored: DataFrame, data_columns: Sequence[str],
                       options: Mapping[str, str] | None = None) -> WriteMetrics:
    """Delete the records of ``stored`` (a read of ``table`` with its meta columns) whatever their ordering value
    (a ``delete`` operation); ``data_columns`` are the table's data columns, carried into the delete records.

    Raises:
        EngineError: the write failed (rolled back; the table reads its last commit).
    """
    options = dict(options or {})
    located = _located(stored, table, options)
    doomed = located.select(*[column(c) for c in data_columns], F.col(RECORD_KEY), F.col(PARTITION_PATH),
                            F.col(FILE_ID), F.lit(True).alias(IS_DELETED))
    return write_dataframe(spark, table, doomed, WriteOperation.DELETE, options, prepped=True)
