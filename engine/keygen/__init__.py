"""Record keys and partition paths, vectorized, exactly as Hudi 0.14 (table version 6) writes them.

Mirrors ``org.apache.hudi.keygen``: ``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``,
``NonpartitionedAvroKeyGenerator``, ``TimestampBasedAvroKeyGenerator``, ``CustomAvroKeyGenerator``,
``GlobalAvroDeleteKeyGenerator``, the helpers ``KeyGenUtils`` / ``PartitionPathEncodeUtils`` and Spark SQL's
``org.apache.spark.sql.hudi.command.SqlKeyGenerator`` wrapper (docs/FORMAT.md §6).

Everything works on whole Arrow columns (``pyarrow.compute``); Python-level work is only done once per
*distinct* value for the rare types that need Java-specific formatting (floating point, decimals, binary,
non-ASCII escaping, Joda date parsing).

**How values become strings.** Hudi 0.14's Spark writer (SQL ``INSERT``/``MERGE``/``UPDATE`` and DataFrame
upserts) converts each Spark row to an Avro record and calls the Avro key generator, which stringifies a
field with ``HoodieAvroUtils.getNestedFieldValAsString`` (``convertValueForAvroLogicalTypes`` +
``StringUtils.objToString``). The Arrow equivalents are:

=====================================  ============================================================
Arrow type (Spark type)                string
=====================================  ============================================================
string / large_string / dictionary     the value
int8/16/32/64 (Byte/Short/Int/Long)    decimal digits (``10``; byte and short become Avro int)
bool                                   ``true`` / ``false``
float32 / float64                      Java ``Float.toString`` / ``Double.toString`` (``1.0``,
                                       ``1.0E10``, ``1.0E-5``, ``NaN``, ``Infinity``)
decimal128/256                         Java ``BigDecimal.toString`` with the column scale
                                       (``12345.67890``, ``1.000E-7``)
date32/date64 (DateType)               ``LocalDate.toString``: ``2023-04-01``
timestamp with tz (TimestampType)      epoch **microseconds** as digits (``1680350460000000``), or,
                                       with ``hoodie.datasource.write.keygenerator.consistent.logical.
                                       timestamp.enabled=true``, ``java.sql.Timestamp.toString`` in the
                                       JVM zone (``2023-04-01 12:01:00.0``)
timestamp without tz (TimestampNTZ)    epoch microseconds of the wall clock as digits (Avro
                                       ``local-timestamp-micros`` is never converted)
binary / fixed_size_binary (Binary)    lower-case hex of the bytes (``objToString`` of a ByteBuffer)
struct member (``a.b`` dotted name)    as above for the leaf; a null parent gives null
list / map / struct leaf               unsupported: :class:`InvalidRecordKey`
=====================================  ============================================================

**Spark SQL partition columns of type TIMESTAMP.** When the writer runs through Spark SQL, Hudi wraps the
key generator in ``SqlKeyGenerator``. After the normal partition path is built, it splits the path on ``/``
and, if the number of fragments equals the number of partition columns, rewrites every fragment belonging
to a ``TimestampType`` column: the micros value is turned into milliseconds (truncated), printed with
Joda pattern ``yyyy-MM-dd HH:mm:ss`` in the JVM default zone and *always* escaped with
``escapePathName`` (``2023-04-01 12%3A01%3A00``), whatever ``urlencode`` says. Enable this by setting
``hoodie.datasource.write.keygenerator.class=org.apache.spark.sql.hudi.command.SqlKeyGenerator`` with
``hoodie.sql.origin.keygen.class=<real class>`` (as Hudi's ``ProvidesHoodieConfig`` does) or by passing
``sql_writer=True`` to :meth:`KeyGenerator.from_config`. Which partition columns are TIMESTAMP comes from
``hoodie.sql.partition.schema`` (Spark DDL) if set, else from the Arrow type (timestamp *with* a time
zone). DATE partition values are never rewritten (``2023-04-01``). Deviation: Hudi fails with
``NumberFormatException`` on a null TIMESTAMP partition value in this path; we keep
``__HIVE_DEFAULT_PARTITION__``.

"JVM default zone" (Joda ``DateTimeZone.getDefault()`` and ``java.sql.Timestamp``) is the engine-only
setting ``hoodie.keygen.engine.jvm.timezone`` (default ``UTC``).

**Complex keys with one field.** 0.14.0 writes ``id:1``; 0.14.1, 0.15.0 and 1.0.0-1.0.2 write ``1``
(HUDI-7001), and 0.14.2/0.15.1/1.0.3+ went back to ``id:1`` behind
``hoodie.write.complex.keygen.encode.single.record.key.field.name`` (default true). We follow that key.

**TimestampBasedKeyGenerator** patterns are Joda-Time ``DateTimeFormat`` patterns (Hudi uses Joda, not
``SimpleDateFormat``); see :class:`JodaDateFormat` for the supported letters.

The package holds one concept per module: :mod:`.escaping` (partition path escaping and constants),
:mod:`.values` (column access and stringification), :mod:`.spec` (configuration), :mod:`.timestamps`
(timestamp partition segments), :mod:`.generators` (the key generators) and :mod:`.record_keys`
(record keys back into field values).
"""

from engine.java_format import (
    java_decimal_to_string,
    java_double_to_string,
    java_float_to_string,
    java_local_date_to_string,
)
from engine.joda import JodaDateFormat, resolve_java_zone
from engine.keygen.escaping import (
    COLUMN_VALUE_SEPARATOR,
    COMPLEX_KEYGEN,
    CUSTOM_KEYGEN,
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    GLOBAL_DELETE_KEYGEN,
    NONPARTITIONED_KEYGEN,
    NULL_RECORDKEY_PLACEHOLDER,
    PARTITION_PATH_SEPARATOR,
    RECORD_KEY_PARTS_SEPARATOR,
    SIMPLE_KEYGEN,
    SQL_KEYGEN,
    TIMESTAMP_KEYGEN,
    escape_path_name,
    escape_path_names,
    unescape_path_name,
)
from engine.keygen.generators import (
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    KeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
)
from engine.keygen.record_keys import extract_record_keys
from engine.keygen.spec import KeyGenType, TimestampKeyGenSpec

__all__ = [
    "COLUMN_VALUE_SEPARATOR",
    "COMPLEX_KEYGEN",
    "CUSTOM_KEYGEN",
    "DEFAULT_PARTITION_PATH",
    "EMPTY_RECORDKEY_PLACEHOLDER",
    "GLOBAL_DELETE_KEYGEN",
    "NONPARTITIONED_KEYGEN",
    "NULL_RECORDKEY_PLACEHOLDER",
    "PARTITION_PATH_SEPARATOR",
    "RECORD_KEY_PARTS_SEPARATOR",
    "SIMPLE_KEYGEN",
    "SQL_KEYGEN",
    "TIMESTAMP_KEYGEN",
    "ComplexKeyGenerator",
    "CustomKeyGenerator",
    "GlobalDeleteKeyGenerator",
    "JodaDateFormat",
    "KeyGenType",
    "KeyGenerator",
    "NonpartitionedKeyGenerator",
    "SimpleKeyGenerator",
    "TimestampBasedKeyGenerator",
    "TimestampKeyGenSpec",
    "escape_path_name",
    "escape_path_names",
    "extract_record_keys",
    "java_decimal_to_string",
    "java_double_to_string",
    "java_float_to_string",
    "java_local_date_to_string",
    "resolve_java_zone",
    "unescape_path_name",
]
