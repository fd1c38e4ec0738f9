"""The rows a write receives, keyed on executors: the table's data schema as Arrow, and record keys and
partition paths added by the table's key generator (Hudi ``KeyGenerator`` run by ``HoodieSparkSqlWriter``), as
Spark expressions where they render the keys exactly, else in a Python ``mapInArrow`` pass."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from engine import errors
from engine.auto_keys import is_keyless
from engine.config import HoodieConfig, TableConfig, parse_list
from engine.formats.avro_schema import avro_to_arrow
from engine.keygen import KeyGenerator
from engine.spark import tasks
from engine.spark.key_columns import partition_path_column, record_key_column
from engine.spark.schema import arrow_to_spark
from engine.table import Table
from engine.write.prepare import PARTITION_PATH, RECORD_KEY


def table_arrow_schema(table: Table) -> pa.Schema:
    """Arrow schema of the table's data columns (no meta columns), from its latest Avro schema.

    Raises:
        SchemaMismatch: the table has no schema yet.
    """
    avro = table.latest_avro_schema(include_meta=False)
    if avro is None:
        raise errors.SchemaMismatch(f"table {table.base_path} has no schema (no commit and no create schema)")
    return avro_to_arrow(avro)


def stored_arrow_schema(table: Table, schema: pa.Schema) -> pa.Schema:
    """``schema`` without the partition columns data files leave out (``hoodie.datasource.write.drop.partition
    .columns``; :attr:`engine.table.Table.dropped_partition_columns`)."""
    dropped = {f.lower() for f in table.dropped_partition_columns}
    return pa.schema([f for f in schema if f.name.lower() not in dropped]) if dropped else schema


def key_schema(table: Table, data_schema: pa.Schema, conf: HoodieConfig) -> pa.Schema:
    """The fields of ``data_schema`` the key generator reads: the record key and partition fields' top-level
    columns (``hoodie.datasource.write.recordkey.field``, ``hoodie.datasource.write.partitionpath.field``)."""
    wanted = set()
    for prop in (TableConfig.RECORDKEY_FIELDS, TableConfig.PARTITION_FIELDS):
        for name in parse_list(conf.get(prop, "") or ""):
            wanted.add(name.split(".")[0].split(":")[0].lower())
    return pa.schema([f for f in data_schema if f.name.lower() in wanted])


def _spark_type_of_keys() -> list[StructField]:
    return [StructField(RECORD_KEY, StringType(), False), StructField(PARTITION_PATH, StringType(), False)]


def _spark_key_columns(
    schema: StructType, table: Table, conf: HoodieConfig, data_schema: pa.Schema, with_partition: bool
) -> list[Column] | None:
    keygen = KeyGenerator.from_config(conf)
    table_types = {f.name.lower(): f.dataType for f in arrow_to_spark(key_schema(table, data_schema, conf)).fields}
    key = record_key_column(keygen, schema, table_types)
    if key is None:
        return None
    if not with_partition:
        return [key.alias(RECORD_KEY)]
    partition = partition_path_column(keygen, schema, table_types)
    return None if partition is None else [key.alias(RECORD_KEY), partition.alias(PARTITION_PATH)]


def keys_computed_in_spark(
    df: DataFrame, table: Table, conf: HoodieConfig, data_schema: pa.Schema, *, with_partition: bool = True
) -> bool:
    """Whether :func:`add_keys` renders ``df``'s keys as Spark expressions (no Python pass), so
    recomputing them costs no more than the input does."""
    return _spark_key_columns(df.schema, table, conf, data_schema, with_partition) is not None


def add_keys(
    df: DataFrame, table: Table, conf: HoodieConfig, data_schema: pa.Schema, *, with_partition: bool = True,
    auto_key_instant: str | None = None,
) -> DataFrame:
    """``df`` with ``_hoodie_record_key`` (and ``_hoodie_partition_path`` unless ``with_partition`` is
    False) appended, computed on executors by the table's key generator: as Spark expressions where they
    render the keys exactly (:mod:`engine.spark.key_columns`), else in a Python ``mapInArrow`` pass.

    On a keyless table (:func:`engine.auto_keys.is_keyless`) only the partition path comes from the key
    generator; ``_hoodie_record_key`` is the auto-generated key of ``auto_key_instant``
    (:func:`auto_key_column`), or null when no instant is given (the writer fills it in).

    Raises:
        ConfigError: the key generator settings are invalid.
    """
    if is_keyless(conf):
        partitioned = _partition_only(df, table, conf, data_schema) if with_partition else df
        key = auto_key_column(auto_key_instant) if auto_key_instant else F.lit(None).cast(StringType())
        return partitioned.withColumn(RECORD_KEY, key)
    columns = _spark_key_columns(df.schema, table, conf, data_schema, with_partition)
    if columns is not None:
        return df.select("*", *columns)
    added = _spark_type_of_keys() if with_partition else _spark_type_of_keys()[:1]
    schema = StructType([*df.schema.fields, *added])
    fn = tasks.add_keys_fn(conf.as_dict(), key_schema(table, data_schema, conf), with_partition)
    return df.mapInArrow(fn, schema)


def _partition_only(df: DataFrame, table: Table, conf: HoodieConfig, data_schema: pa.Schema) -> DataFrame:
    """``df`` with ``_hoodie_partition_path`` from the key generator (a keyless table's partition path)."""
    keygen = KeyGenerator.from_config(conf)
    table_types = {f.name.lower(): f.dataType for f in arrow_to_spark(key_schema(table, data_schema, conf)).fields}
    partition = partition_path_column(keygen, df.schema, table_types)
    if partition is not None:
        return df.withColumn(PARTITION_PATH, partition)
    schema = StructType([*df.schema.fields, _spark_type_of_keys()[1]])
    fn = tasks.add_keys_fn(conf.as_dict(), key_schema(table, data_schema, conf), with_record_key=False)
    return df.mapInArrow(fn, schema)


def auto_key_column(instant: str) -> Column:
    """Hudi's auto-generated record key of each row, ``<instant>_<Spark partition id>_<row id in the
    partition>`` (:mod:`engine.auto_keys`). Evaluate it once: a recomputed partition numbers its rows
    again, so callers persist the keyed rows before using them twice."""
    pid = F.spark_partition_id().cast(LongType())
    row_id = F.monotonically_increasing_id() - F.shiftleft(pid, 33)
    return F.concat(F.lit(f"{instant}_"), pid.cast(StringType()), F.lit("_"), row_id.cast(StringType()))


def dedupe_in_spark(df: DataFrame, precombine: str | None) -> DataFrame:
    """One row per ``_hoodie_record_key``: the greatest ``precombine`` value (nulls last), any row without one
    (Hudi ``hoodie.combine.before.insert`` in a Spark window)."""
    top = {c.lower() for c in df.columns}
    order = (F.col(precombine).desc_nulls_last() if precombine and precombine.split(".")[0].lower() in top
             else F.lit(1))
    window = Window.partitionBy(RECORD_KEY).orderBy(order)
    return df.withColumn("_rn", F.row_number().over(window)).filter("_rn = 1").drop("_rn")
