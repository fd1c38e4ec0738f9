"""Record keys and partition paths as Spark SQL expressions, so common writes generate keys in the JVM
instead of a Python ``mapInArrow`` pass.

Only where Spark's own ``CAST(... AS STRING)`` prints a value exactly as Hudi's key generators do
(:mod:`engine.keygen`): the Simple, Complex, Nonpartitioned and GlobalDelete generators over top-level
fields of integer (``TINYINT`` .. ``BIGINT``) and string types. Everything else (timestamp-based and custom
generators, dates, decimals, floating point, binary, nested fields, URL-encoded string partitions, the
Spark SQL TIMESTAMP partition rewrite) returns ``None`` and the caller falls back to the Python key
generator, which covers every case.

A null or empty record key fails the query with ``InvalidRecordKey: ...`` naming the field and the row's
key values (Spark's ``raise_error``); :func:`engine.spark.task_errors.unwrap_task_error` turns it back into
:class:`engine.errors.InvalidRecordKey` on the driver. Likewise a string partition value whose folder would
leave the table or is not a valid folder name fails with ``UnsafePartitionPath: ...``
(:mod:`engine.partition_path`, the same regex the Python key generator applies).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from engine.keygen import (
    COLUMN_VALUE_SEPARATOR,
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    PARTITION_PATH_SEPARATOR,
    RECORD_KEY_PARTS_SEPARATOR,
    KeyGenerator,
    KeyGenType,
)
from engine.partition_path import UNSAFE_SEGMENT_REGEX, URL_ENCODE_KEY

_NATIVE_KINDS = (KeyGenType.SIMPLE, KeyGenType.COMPLEX, KeyGenType.NON_PARTITION, KeyGenType.GLOBAL_DELETE)
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)


def _column_name(schema: StructType, field: str) -> str | None:
    """The input column a key field names (exact, then case-insensitive match, as the key generator
    resolves it); ``None`` for dotted (nested) names and absent fields."""
    names = schema.fieldNames()
    if field in names:
        return field
    lowered = [n for n in names if n.lower() == field.lower()]
    return lowered[0] if len(lowered) == 1 else None


def _rendered(schema: StructType, field: str, table_types: Mapping[str, DataType]) -> tuple[Column, bool] | None:
    """``(value as Hudi's string, is_string_typed)`` of one key field, or ``None`` when Spark cannot render
    it exactly. The value is first cast to the table's type, as the Python path conforms it."""
    name = _column_name(schema, field)
    if name is None:
        return None
    given = schema[name].dataType
    stored = table_types.get(field.lower(), given)
    if isinstance(stored, _INTEGRAL) and isinstance(given, _INTEGRAL):
        return F.col(f"`{name}`").cast(stored).cast(StringType()), False
    if isinstance(stored, StringType) and isinstance(given, StringType):
        return F.col(f"`{name}`"), True
    return None


def _key_values_json(schema: StructType, fields: list[str]) -> Column:
    names = [n for n in (_column_name(schema, f) for f in fields) if n is not None]
    return F.to_json(F.struct(*[F.col(f"`{n}`") for n in names]), {"ignoreNullFields": "false"})


def _empty_or_null(value: Column) -> Column:
    return value.isNull() | (F.length(value) == 0)


def record_key_column(keygen: KeyGenerator, schema: StructType, table_types: Mapping[str, DataType]
                      ) -> Column | None:
    """``_hoodie_record_key`` of each row of a DataFrame with ``schema`` as a Spark expression, or ``None``
    when only the Python key generator renders these fields exactly.

    Args:
        keygen: the table's key generator (:meth:`KeyGenerator.from_config`).
        schema: the input DataFrame's schema.
        table_types: the table's column types, by lower-cased name (values are cast to them first).
    """
    if keygen.kind not in _NATIVE_KINDS or not keygen.record_key_fields:
        return None
    rendered = [_rendered(schema, f, table_types) for f in keygen.record_key_fields]
    if any(r is None for r in rendered):
        return None
    values = [r[0] for r in rendered if r is not None]
    fields = keygen.record_key_fields
    row = _key_values_json(schema, fields)
    if keygen.single_value_record_key:
        message = F.concat(F.lit(f"InvalidRecordKey: record key field '{fields[0]}' is null or empty (key "
                                 "values: "), row,
                           F.lit("); Hudi requires a non-null, non-empty key (KeyGenUtils.getRecordKey)"))
        return F.when(_empty_or_null(values[0]), F.raise_error(message).cast(StringType())).otherwise(values[0])
    parts: list[Column] = []
    all_bad: Column | None = None
    for i, (field, value) in enumerate(zip(fields, values, strict=True)):
        bad = _empty_or_null(value)
        all_bad = bad if all_bad is None else all_bad & bad
        prefix = ("" if i == 0 else RECORD_KEY_PARTS_SEPARATOR) + field + COLUMN_VALUE_SEPARATOR
        filled = F.when(value.isNull(), F.lit(NULL_RECORDKEY_PLACEHOLDER)).when(
            F.length(value) == 0, F.lit(EMPTY_RECORDKEY_PLACEHOLDER)).otherwise(value)
        parts += [F.lit(prefix), filled]
    assert all_bad is not None
    message = F.concat(F.lit(f"InvalidRecordKey: record key fields {fields} are all null or empty (key "
                             "values: "), row,
                       F.lit("); Hudi requires at least one non-empty value (KeyGenUtils.getRecordKey)"))
    return F.when(all_bad, F.raise_error(message).cast(StringType())).otherwise(F.concat(*parts))


def _refuse_unsafe(keygen: KeyGenerator, schema: StructType, field: str, segment: Column) -> Column:
    """``segment``, or a query failure ``UnsafePartitionPath: ...`` when it matches
    :data:`engine.partition_path.UNSAFE_SEGMENT_REGEX` (the same check and message shape as the Python
    key generator; the value is shown JSON-escaped so control characters stay on one line)."""
    name = _column_name(schema, field)
    value = (F.regexp_extract(F.to_json(F.array(F.col(f"`{name}`"))), r"^\[(.*)\]$", 1)
             if name is not None else F.lit("?"))
    message = F.concat(
        F.lit(f"UnsafePartitionPath: table {keygen.table_name or '<unnamed>'}: partition field '{field}' "
              "value "), value,
        F.lit(" makes a partition path that is not a plain folder under the table's base path (it has a "
              "'..' or '.' folder, a hidden folder starting with '.', an empty folder name or a leading '/', "
              "or a control character); no data file was written"
              f" ({URL_ENCODE_KEY}=false). To store it, change the value, or create the table with "
              f"'{URL_ENCODE_KEY}' = 'true' (TBLPROPERTIES) so partition values are stored escaped and "
              "read back unchanged"))
    return F.when(segment.rlike(UNSAFE_SEGMENT_REGEX), F.raise_error(message).cast(StringType())
                  ).otherwise(segment)


def partition_path_column(keygen: KeyGenerator, schema: StructType, table_types: Mapping[str, DataType]
                          ) -> Column | None:
    """``_hoodie_partition_path`` of each row as a Spark expression (``''`` when non-partitioned), or
    ``None`` when only the Python key generator renders it exactly. Same arguments as
    :func:`record_key_column`."""
    if keygen.kind not in _NATIVE_KINDS:
        return None
    if not keygen.partition_fields:
        return F.lit("")
    if keygen.sql_writer and any(
            t.upper() == "TIMESTAMP" for t in keygen.sql_partition_types.values()):
        return None
    segments: list[Column] = []
    for field in keygen.partition_fields:
        rendered = _rendered(schema, field, table_types)
        if rendered is None:
            return None
        value, is_string = rendered
        if is_string and keygen.url_encode:
            return None  # escapePathName: the Python path does it
        segment = F.when(_empty_or_null(value), F.lit(DEFAULT_PARTITION_PATH)).otherwise(value)
        if keygen.hive_style:
            segment = F.concat(F.lit(f"{field}="), segment)
        segments.append(_refuse_unsafe(keygen, schema, field, segment) if is_string else segment)
    return segments[0] if len(segments) == 1 else F.concat_ws(PARTITION_PATH_SEPARATOR, *segments)
