"""Spark ⇄ Arrow schema conversion, the one place that decides how Spark types map to what the engine
stores (timestamps with a time zone are UTC instants, as Hudi stores them)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from engine.formats.avro_schema import META_FIELDS, add_meta_fields, avro_to_arrow
from engine.schema.history import table_internal_schema
from engine.table import Table


def spark_to_arrow(schema: StructType, timezone: str = "UTC") -> pa.Schema:
    """Arrow schema of a Spark schema (``TIMESTAMP`` → ``timestamp[us, tz=<timezone>]``; Spark's Arrow bridge
    uses the session time zone)."""
    return to_arrow_schema(schema, timezone=timezone)


def arrow_to_spark(schema: pa.Schema) -> StructType:
    """Spark schema of an Arrow schema."""
    return from_arrow_schema(schema)


def table_data_schema(table: Table) -> StructType:
    """Spark schema of the table's data columns (no meta columns); empty when it has no schema yet."""
    avro = table.latest_avro_schema(include_meta=False)
    return arrow_to_spark(avro_to_arrow(avro)) if avro is not None else StructType([])


def table_spark_schema(table: Table, as_of: str | None = None) -> StructType:
    """Spark schema of the table as queries see it: the five meta columns, then the data columns.

    Args:
        table: the table.
        as_of: the schema as of this instant (time travel): the internal schema of that time when the
            table's schema evolved on read, else the schema of the newest commit at or before it.
    """
    if as_of is not None:
        internal = table_internal_schema(table, as_of)
        if internal is not None:
            data = [f for f in internal.to_arrow() if f.name not in META_FIELDS]
            meta = [pa.field(name, pa.string()) for name in META_FIELDS]
            return arrow_to_spark(pa.schema(meta + data))
    avro = table.latest_avro_schema(include_meta=False, as_of=as_of)
    if avro is None:
        return StructType([])
    return arrow_to_spark(avro_to_arrow(add_meta_fields(avro)))


def column(name: str) -> Column:
    """The column named exactly ``name`` (back-quoted: dots and backticks in the name are part of it)."""
    return F.col("`" + name.replace("`", "``") + "`")
