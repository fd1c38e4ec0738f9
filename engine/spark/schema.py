"""Spark ⇄ Arrow schema conversion, the one place that decides how Spark types map to what the engine
stores (timestamps with a time zone are UTC instants, as Hudi stores them)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from engine.formats.avro_schema import add_meta_fields, avro_to_arrow
from engine.table import Table


def spark_to_arrow(schema: StructType) -> pa.Schema:
    """Arrow schema of a Spark schema (``TIMESTAMP`` → ``timestamp[us, tz=UTC]``)."""
    return to_arrow_schema(schema, timezone="UTC")


def arrow_to_spark(schema: pa.Schema) -> StructType:
    """Spark schema of an Arrow schema."""
    return from_arrow_schema(schema)


def table_data_schema(table: Table) -> StructType:
    """Spark schema of the table's data columns (no meta columns); empty when it has no schema yet."""
    avro = table.latest_avro_schema(include_meta=False)
    return arrow_to_spark(avro_to_arrow(avro)) if avro is not None else StructType([])


def table_spark_schema(table: Table) -> StructType:
    """Spark schema of the table as queries see it: the five meta columns, then the data columns."""
    avro = table.latest_avro_schema(include_meta=False)
    if avro is None:
        return StructType([])
    return arrow_to_spark(avro_to_arrow(add_meta_fields(avro)))
