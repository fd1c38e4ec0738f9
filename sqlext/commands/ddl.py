"""CREATE TABLE [AS SELECT | LIKE] on Hudi tables (Hudi ``CreateHoodieTableCommand``,
``CreateHoodieTableAsSelectCommand``); DROP, TRUNCATE and ALTER TABLE are in :mod:`sqlext.commands.alter_table`.

CTAS needs an empty location, as Hudi's ``CreateHoodieTableAsSelectCommand`` asserts, except that onto the base
path of an existing Hudi table given by LOCATION it keeps that table's configuration and bulk-inserts the query's
rows, as Hudi 0.15 does (Hudi 0.14 refuses any non-empty path); a managed CTAS whose default location exists is
refused as Spark refuses it. A CTAS whose write fails leaves no catalog entry, and no files when it created the
table."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    ArrayType,
    ByteType,
    CharType,
    DataType,
    IntegerType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    VarcharType,
    _parse_datatype_string,
)
from pyspark.sql.utils import AnalysisException, ParseException

from engine.config import CompactionConfig, IndexConfig, KeyGenConfig, ReadConfig, TableConfig, WriteConfig
from engine.errors import ConfigError
from engine.formats.avro_schema import META_FIELDS, arrow_to_avro
from engine.payloads import check_payload_class
from engine.spark.schema import spark_to_arrow, table_data_schema
from engine.spark.writer import write_dataframe
from engine.storage import Storage
from engine.table import Table
from engine.write.operation import WriteOperation
from sqlext.catalog import HudiCatalogSpec, quote
from sqlext.commands.options import (
    SQL_OPTION_KEYS,
    SQL_OPTION_NAMES,
    canonical_option_names,
    sql_option_name,
    write_options,
)
from sqlext.commands.post_commit import after_write
from sqlext.commands.results import empty_result
from sqlext.errors import SqlAnalysisError
from sqlext.parser.statements import (
    ColumnDef,
    CreateTable,
)

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

KEYGEN_PACKAGE = "org.apache.hudi.keygen."
TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ",
               "copy_on_write": "COPY_ON_WRITE", "merge_on_read": "MERGE_ON_READ"}


def _table_options(properties: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split OPTIONS/TBLPROPERTIES into (hoodie keys incl. mapped SQL short names, catalog properties)."""
    hoodie: dict[str, str] = {}
    for key, value in properties.items():
        name = sql_option_name(key)
        mapped = SQL_OPTION_KEYS.get(name.lower()) if name else None
        if mapped:
            hoodie[mapped] = value
        elif key.lower().startswith("hoodie."):
            hoodie[key] = value
    return hoodie, canonical_option_names(properties)


def _spark_schema(stmt: CreateTable) -> StructType:
    """The declared columns as a Spark schema (column COMMENTs as field metadata ``comment``, as Spark)."""
    ddl = ", ".join(f"{quote(c.name)} {c.type_sql}" for c in stmt.columns)
    try:
        parsed = _parse_datatype_string(ddl)
    except (ParseException, AnalysisException, ValueError) as exc:
        raise SqlAnalysisError(f"CREATE TABLE {stmt.ident.name}: invalid column types: {exc}") from exc
    assert isinstance(parsed, StructType)
    comments = {c.name: c.comment for c in stmt.columns if c.comment}
    return StructType([StructField(f.name, avro_sql_type(f.dataType), f.nullable,
                                   {"comment": comments[f.name]} if f.name in comments else f.metadata)
                       for f in parsed.fields])


def avro_sql_type(dtype: DataType) -> DataType:
    """``dtype`` as it comes back from Hudi's Avro schema: TINYINT and SMALLINT as INT, CHAR(n) and VARCHAR(n) as
    STRING, inside structs, arrays and maps too. Hudi's ``HoodieCatalogTable`` gives a new table the columns of
    the Avro schema it stored (``getTableSqlSchema``), so ``(id tinyint, name varchar(10))`` is ``id int, name
    string`` in the catalog, in ``hoodie.table.create.schema`` and in ``DESCRIBE``."""
    if isinstance(dtype, (ByteType, ShortType)):
        return IntegerType()
    if isinstance(dtype, (CharType, VarcharType)):
        return StringType()
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, avro_sql_type(f.dataType), f.nullable, f.metadata)
                           for f in dtype.fields])
    if isinstance(dtype, ArrayType):
        return ArrayType(avro_sql_type(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, MapType):
        return MapType(avro_sql_type(dtype.keyType), avro_sql_type(dtype.valueType), dtype.valueContainsNull)
    return dtype


def _require_typed_columns(name: str, schema: StructType) -> None:
    """A CTAS query column of type NULL (``SELECT null AS id``) has no Avro type: Hudi's
    ``HoodieNullSchemaTypeException`` and its message, before anything is created.

    Raises:
        SqlAnalysisError: naming the first such column as Hudi's Avro record spells it.
    """
    def walk(fields: list[StructField], record: str) -> None:
        for f in fields:
            if isinstance(f.dataType, NullType):
                raise SqlAnalysisError(f"Field '{record}.{f.name}' has type null (CREATE TABLE {name} AS SELECT: "
                                       f"give the column a type, e.g. CAST(NULL AS STRING) AS {f.name})")
            if isinstance(f.dataType, StructType):
                walk(list(f.dataType.fields), f"{record}.{f.name}")

    walk(list(schema.fields), f"hoodie.{name}.{name}_record")


def _require_columns(table: str, names: list[str], columns: list[str], role: str) -> None:
    lowered = {c.lower() for c in columns}
    missing = [n for n in names if n.split(".")[0].lower() not in lowered]
    if missing:
        raise SqlAnalysisError(
            f"CREATE TABLE {table}: {role} {', '.join(missing)} not found among the columns "
            f"({', '.join(columns)})"
        )


def _require_key_columns(table: str, schema: StructType, record_keys: list[str], precombine: str | None) -> None:
    """Hudi's ``HoodieOptionConfig.validateTable``: every primaryKey / preCombineField names a top-level column
    (case-insensitively; ``a.b`` by its root ``a``), with Hudi's message and the schema tree."""
    lowered = {f.name.lower() for f in schema.fields}
    tree = schema.treeString() if hasattr(schema, "treeString") else schema.simpleString()
    for key in record_keys:
        if key.split(".")[0].lower() not in lowered:
            raise SqlAnalysisError(f"CREATE TABLE {table}: Can't find primaryKey `{key}` in {tree}.")
    if precombine and precombine.split(".")[0].lower() not in lowered:
        raise SqlAnalysisError(f"CREATE TABLE {table}: Can't find preCombineKey `{precombine}` in {tree}.")


def infer_keygen(record_keys: list[str], partitions: list[str]) -> str:
    """Key generator Hudi's SQL path picks: non-partitioned, complex for several key or partition
    fields, else simple."""
    if not partitions:
        return KEYGEN_PACKAGE + "NonpartitionedKeyGenerator"
    if len(record_keys) > 1 or len(partitions) > 1:
        return KEYGEN_PACKAGE + "ComplexKeyGenerator"
    return KEYGEN_PACKAGE + "SimpleKeyGenerator"


def hudi_table_properties(database: str, name: str, schema: StructType, partitioned_by: list[str],
                          hoodie: dict[str, str]) -> dict[str, str]:
    """``hoodie.properties`` content of a new SQL table (table-level keys only)."""
    columns = [f.name for f in schema.fields]
    record_keys = _record_key_fields(hoodie)
    precombine = hoodie.get(TableConfig.PRECOMBINE_FIELD.key) or hoodie.get(
        WriteConfig.PRECOMBINE_FIELD.key)
    _require_key_columns(name, schema, record_keys, precombine)
    _require_columns(name, partitioned_by, columns, "partition column")
    table_type = TABLE_TYPES[hoodie.get(TableConfig.TYPE.key, "cow").lower()]  # validate_table_options checked it
    arrow_schema = spark_to_arrow(schema)
    avro = arrow_to_avro(arrow_schema, name, with_defaults=False)
    props = {
        TableConfig.NAME.key: name,
        TableConfig.DATABASE_NAME.key: database,
        TableConfig.TYPE.key: table_type,
        # Hudi 0.15's SQL infers the key generator; hoodie.datasource.write.keygenerator.class is not taken (a
        # write then refuses the conflict: sqlext.commands.options.require_table_keygen).
        TableConfig.KEYGEN_CLASS.key: hoodie.get(TableConfig.KEYGEN_CLASS.key, infer_keygen(record_keys, partitioned_by)),
        TableConfig.HIVE_STYLE_PARTITIONING.key: hoodie.get(TableConfig.HIVE_STYLE_PARTITIONING.key, "true"),
        TableConfig.URL_ENCODE_PARTITIONING.key: hoodie.get(TableConfig.URL_ENCODE_PARTITIONING.key, "false"),
        TableConfig.CREATE_SCHEMA.key: json.dumps(avro, separators=(",", ":")),
    }
    if record_keys:
        props[TableConfig.RECORDKEY_FIELDS.key] = ",".join(record_keys)
    if precombine:
        props[TableConfig.PRECOMBINE_FIELD.key] = precombine
    if partitioned_by:
        props[TableConfig.PARTITION_FIELDS.key] = ",".join(partitioned_by)
    table_level = {p.key for group in (TableConfig,) for p in vars(group).values() if hasattr(p, "key")}
    for key, value in hoodie.items():
        if (key in table_level and key not in props) or key.startswith("hoodie.keygen.timebased."):
            props[key] = value
    if "hoodie.datasource.write.payload.class" in hoodie:
        props[TableConfig.PAYLOAD_CLASS.key] = hoodie["hoodie.datasource.write.payload.class"]
    return props


HUDI_INDEX_TYPES = ("HBASE", "INMEMORY", "BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET", "FLINK_STATE",
                    "RECORD_INDEX")
"""The valid values of ``hoodie.index.type`` in Hudi 0.15 (``HoodieIndexConfig.INDEX_TYPE``)."""


def validate_table_options(table: str, hoodie: dict[str, str]) -> None:
    """Refuse CREATE TABLE options as Hudi does, with Hudi's words (``HoodieOptionConfig.validateTable``,
    ``ConfigProperty.checkValues``, ``HoodieSparkCopyOnWriteTable.scheduleCompaction``), before anything is
    created:

    * ``type`` other than ``cow`` / ``mor``: ``'type' must be 'cow' or 'mor'``;
    * an unknown ``hoodie.index.type``: ``The value of hoodie.index.type should be one of ..., but was X``
      (matched case-insensitively here);
    * a copy-on-write table with ``hoodie.compact.inline=true``: ``Compaction is not supported on a
      CopyOnWrite table`` (Hudi fails the CTAS, and a plain CREATE's first write, after writing);
    * a payload class whose merge this engine does not implement (:func:`engine.payloads.check_payload_class`);
    * a ``hoodie.table.base.file.format`` other than PARQUET (Hudi also writes ORC and HFILE base files; this
      engine does not).

    Raises:
        SqlAnalysisError: naming the table and the option at fault.
    """
    raw_type = hoodie.get(TableConfig.TYPE.key, "cow")
    if raw_type.lower() not in TABLE_TYPES:
        raise SqlAnalysisError(f"'type' must be 'cow' or 'mor' (CREATE TABLE {table}: type = '{raw_type}')")
    index = hoodie.get(IndexConfig.TYPE.key)
    if index is not None and index.strip().upper() not in HUDI_INDEX_TYPES:
        raise SqlAnalysisError(f"The value of {IndexConfig.TYPE.key} should be one of {','.join(HUDI_INDEX_TYPES)}, "
                               f"but was {index} (CREATE TABLE {table})")
    if TABLE_TYPES[raw_type.lower()] == "COPY_ON_WRITE" \
            and str(hoodie.get(CompactionConfig.INLINE.key, "false")).strip().lower() == "true":
        raise SqlAnalysisError(f"Compaction is not supported on a CopyOnWrite table (CREATE TABLE {table} with "
                               f"{CompactionConfig.INLINE.key}=true)")
    for key in (WriteConfig.PAYLOAD_CLASS.key, TableConfig.PAYLOAD_CLASS.key):
        try:
            check_payload_class(hoodie.get(key), f"table {table} ({key})")
        except ConfigError as exc:
            raise SqlAnalysisError(str(exc).replace("; nothing was written", "")) from exc
    base_format = hoodie.get(TableConfig.BASE_FILE_FORMAT.key)
    if base_format is not None and base_format.strip().upper() != "PARQUET":
        raise SqlAnalysisError(f"{TableConfig.BASE_FILE_FORMAT.key}={base_format} is not supported (CREATE TABLE "
                               f"{table}): this engine writes and reads PARQUET base files only")


def _mapped_type(hoodie: dict[str, str]) -> dict[str, str]:
    """The statement's hoodie keys with ``type`` spelled as the table config does."""
    mapped = dict(hoodie)
    raw = mapped.get(TableConfig.TYPE.key)
    if raw is not None:
        mapped[TableConfig.TYPE.key] = TABLE_TYPES.get(raw.lower(), raw)
    return mapped


def _validate_existing(table: Table, props: dict[str, str]) -> None:
    """The statement's table configs must equal those in the existing table's ``hoodie.properties`` (Hudi
    ``CreateHoodieTableCommand.validateTblProperties``, its message; the table type too)."""
    for key in (TableConfig.PRECOMBINE_FIELD.key, TableConfig.PARTITION_FIELDS.key,
                TableConfig.RECORDKEY_FIELDS.key, TableConfig.KEYGEN_CLASS.key,
                TableConfig.URL_ENCODE_PARTITIONING.key, TableConfig.HIVE_STYLE_PARTITIONING.key):
        wanted, stored = props.get(key), table.config.raw_value(key)
        if wanted is not None and stored is not None and wanted != stored:
            raise SqlAnalysisError(
                f"assertion failed: Table config: {key} in the create table is: {wanted}, is not the same with "
                f"the value in hoodie.properties, which is:  {stored}. Please keep the same. "
                f"(table at {table.base_path})")
    # The table type is not among validateTblProperties' keys: Hudi's HoodieWriterUtils.validateTableConfig
    # refuses it when the table is initialised over the existing one.
    key = TableConfig.TYPE.key
    wanted, stored = props.get(key), table.config.raw_value(key)
    if wanted is not None and stored is not None and wanted != stored:
        raise SqlAnalysisError(f"Config conflict(key\tcurrent value\texisting value):\n{key}:\t{wanted}\t{stored}\n"
                               f"(table at {table.base_path})")


def _require_same_database(table: Table, database: str) -> None:
    """An existing table whose ``hoodie.properties`` names another database cannot be registered in this one
    (Hudi ``HoodieCatalogTable``, its message)."""
    stored = table.config.raw_value(TableConfig.DATABASE_NAME.key)
    if stored and stored != database:
        raise SqlAnalysisError(f"The database names from this hoodie path and this catalog table is not same. "
                               f"(hoodie.properties of {table.base_path} has {TableConfig.DATABASE_NAME.key}="
                               f"{stored}; the table is created in {database})")


def _complete_existing(table: Table, database: str, name: str, schema: StructType) -> Table:
    """An existing table registered by CREATE TABLE gets what Hudi's SQL needs in its ``hoodie.properties`` when
    the writer left it out (a DataFrame writer writes neither): ``hoodie.database.name`` (the catalog's database)
    and ``hoodie.table.create.schema`` (Hudi ``HoodieCatalogTable.initHoodieTable``). Values already there are
    kept (the table name too)."""
    missing: dict[str, str | None] = {}
    if not table.config.raw_value(TableConfig.DATABASE_NAME.key):
        missing[TableConfig.DATABASE_NAME.key] = database
    if not table.config.raw_value(TableConfig.CREATE_SCHEMA.key) and schema.fields:
        avro = arrow_to_avro(spark_to_arrow(schema), name, with_defaults=False)
        missing[TableConfig.CREATE_SCHEMA.key] = json.dumps(avro, separators=(",", ":"))
    if not missing:
        return table
    if table.is_hudi_1x:  # read only: registered as it is (its schema comes from its commits)
        logger.info("CREATE TABLE %s.%s over Hudi 1.x table %s: hoodie.properties left as it is (no %s)", database,
                    name, table.base_path, sorted(missing))
        return table
    logger.info("CREATE TABLE %s.%s over %s: adding %s to hoodie.properties", database, name, table.base_path,
                sorted(missing))
    table.update_properties(missing)
    return Table.load(table.base_path)


def _partition_columns(table: Table, schema: StructType) -> list[str]:
    """The table's partition fields (``hoodie.table.partition.fields``, ``field[:type]``) that are columns
    of ``schema``, as the schema spells them: the catalog's partition columns."""
    columns = {f.name.lower(): f.name for f in schema.fields}
    raw = table.config.raw_value(TableConfig.PARTITION_FIELDS.key) or ""
    fields = [p.split(":")[0].strip() for p in raw.split(",") if p.strip()]
    return [columns[p.lower()] for p in fields if p.lower() in columns]


def _record_key_fields(hoodie: dict[str, str]) -> list[str]:
    """Record key fields of a CREATE statement's options: ``primaryKey`` (mapped to the table config key)
    or ``hoodie.datasource.write.recordkey.field``."""
    raw = hoodie.get(TableConfig.RECORDKEY_FIELDS.key) or hoodie.get(KeyGenConfig.RECORDKEY_FIELD.key) or ""
    return [k.strip() for k in raw.split(",") if k.strip()]


def _require_record_key(database: str, name: str, existing: Table | None, hoodie: dict[str, str]) -> None:
    """A table without a record key gets Hudi 0.14's auto-generated keys (:mod:`engine.auto_keys`), which
    need the meta fields: refuse ``hoodie.populate.meta.fields=false`` without a primaryKey."""
    if _record_key_fields(hoodie):
        return
    if existing is not None and existing.config.raw_value(TableConfig.RECORDKEY_FIELDS.key):
        return
    if hoodie.get(TableConfig.POPULATE_META_FIELDS.key, "true").strip().lower() == "false":
        raise SqlAnalysisError(
            f"CREATE TABLE {database}.{name}: Disabling {TableConfig.POPULATE_META_FIELDS.key} is not supported "
            "with auto generation of record keys (no primaryKey given; name one with TBLPROPERTIES "
            f"(primaryKey = '<column>') or '{KeyGenConfig.RECORDKEY_FIELD.key}')")


def sql_options(table_config: dict[str, str]) -> dict[str, str]:
    """``type``, ``primaryKey`` and ``preCombineField`` from ``hoodie.properties`` (Hudi
    ``HoodieOptionConfig.extractSqlOptions``; ``type`` as ``cow``/``mor``)."""
    out = {"type": "mor" if table_config.get(TableConfig.TYPE.key) == "MERGE_ON_READ" else "cow"}
    if table_config.get(TableConfig.RECORDKEY_FIELDS.key):
        out["primaryKey"] = table_config[TableConfig.RECORDKEY_FIELDS.key]
    if table_config.get(TableConfig.PRECOMBINE_FIELD.key):
        out["preCombineField"] = table_config[TableConfig.PRECOMBINE_FIELD.key]
    return out


_FILTERED_CATALOG_PROPS = frozenset({TableConfig.DATABASE_NAME.key, TableConfig.NAME.key, WriteConfig.OPERATION.key})


def catalog_properties(user: dict[str, str], table_config: dict[str, str]) -> dict[str, str]:
    """The TBLPROPERTIES of the catalog entry (Hudi ``catalogProperties ++ extractSqlOptions``): the
    statement's OPTIONS/TBLPROPERTIES as written, plus :func:`sql_options` for the keys it did not give
    (compared ignoring case). ``hoodie.database.name``, ``hoodie.table.name`` and
    ``hoodie.datasource.write.operation`` are left out (Hudi ``CreateHoodieTableCommand.needFilterProps``): the
    table's own name and database decide, and a CTAS bulk-inserts whatever operation is given."""
    props = {k: v for k, v in user.items() if k.lower() not in _FILTERED_CATALOG_PROPS}
    given = {k.lower() for k in props}
    for key, value in sql_options(table_config).items():
        if key.lower() not in given:
            props[key] = value
    return props


def absolute_location(location: str) -> str:
    """A LOCATION without a scheme as an absolute local path (Spark qualifies it the same way).

    Raises:
        SqlAnalysisError: the location is empty (Spark's ``INVALID_EMPTY_LOCATION``) or holds a NUL or another
            control character, which no file system takes in a path; the message names the location.
    """
    if not location.strip():
        raise SqlAnalysisError(f"[INVALID_EMPTY_LOCATION] The location name cannot be empty string, but "
                               f"`{location}` was given.")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        raise SqlAnalysisError(f"LOCATION {location!r} holds a control character (NUL, newline, ...), which "
                               "cannot be part of a path")
    if "://" in location or location.startswith("file:"):
        return location
    return os.path.abspath(location)


def _create_schema(spark: SparkSession, stmt: CreateTable) -> tuple[StructType, DataFrame | None]:
    """The new table's data schema and, for CTAS, the query (meta columns dropped)."""
    if stmt.as_query is None:
        return _spark_schema(stmt), None
    query_df = spark.sql(stmt.as_query)
    fields = [f for f in query_df.schema.fields if f.name not in META_FIELDS]
    schema = StructType([StructField(f.name, f.dataType, True) for f in fields])
    _require_typed_columns(stmt.ident.name, schema)
    return schema, query_df.select(*[quote(f.name) for f in fields])


def partition_columns_last(schema: StructType, partitioned_by: list[str]) -> StructType:
    """``schema`` with the partition columns moved to the end in PARTITIONED BY order, as Spark's
    ``PreprocessTableCreation`` and Hudi's ``HoodieCatalogTable`` order a new table's columns (so
    ``(id, dt, name) PARTITIONED BY (dt)`` has columns ``id, name, dt`` in the catalog, ``hoodie.properties``,
    the Avro schema and ``SELECT *``). Names match case-insensitively; unknown names are left to the caller's
    validation."""
    by_name = {f.name.lower(): f for f in schema.fields}
    moved = [by_name[p.lower()] for p in partitioned_by if p.lower() in by_name]
    if not moved:
        return schema
    keep = [f for f in schema.fields if f not in moved]
    return StructType(keep + moved)


def create_table(ctx: CommandContext, stmt: CreateTable) -> DataFrame:
    """CREATE TABLE ... USING hudi [AS SELECT] (Hudi ``CreateHoodieTableCommand``): initialise the table on
    disk (or validate the existing Hudi table at LOCATION), then register it in the catalog as Hudi does
    (:meth:`sqlext.catalog.Catalog.register`). A managed table goes to ``<warehouse>/[<db>.db/]<name>``
    (the session's warehouse, also with a remote metastore).

    Raises:
        SqlAnalysisError: the table exists, no primaryKey, unknown columns, a mismatch with the existing
            Hudi table at LOCATION, or the metastore refused the entry (nothing is left on disk then).
    """
    spark, catalog = ctx.spark, ctx.catalog
    database, name = catalog.qualify(stmt.ident)
    if catalog.lookup(stmt.ident) is not None:
        if stmt.if_not_exists:
            return empty_result(spark)
        raise SqlAnalysisError(f"Table {database}.{name} already exists")
    if stmt.like is not None:
        return _create_like(ctx, stmt)
    query_as_ro = _query_as_ro(stmt.properties)
    if query_as_ro is not None and stmt.as_query is not None:
        raise SqlAnalysisError(f"CREATE TABLE {database}.{name}: Not support CTAS for the ro/rt table")
    if stmt.partitioned_by and not stmt.columns and stmt.as_query is None:
        raise SqlAnalysisError(
            f"CREATE TABLE {database}.{name}: It is not allowed to specify partition columns when the table schema "
            "is not defined. When the table schema is not provided, schema and partition columns will be inferred.")
    hoodie, user_props = _table_options(dict(stmt.properties))
    validate_table_options(f"{database}.{name}", hoodie)
    schema, query_df = _create_schema(spark, stmt)
    external = stmt.location is not None
    location = absolute_location(stmt.location) if stmt.location is not None else catalog.default_location(database, name)
    partitioned = list(stmt.partitioned_by)
    existing = Table.load(location) if Table.exists(location) else None
    if query_df is not None:
        _require_ctas_location(database, name, location, external, existing)
    if query_as_ro is not None:
        _require_mor_base_table(database, name, existing)
    _require_record_key(database, name, existing, hoodie)
    created = False
    if existing is not None:
        # An existing Hudi table: its hoodie.properties decide; only what the statement states is checked.
        _validate_existing(existing, _mapped_type(hoodie))
        _require_same_database(existing, database)
        stored_schema = StructType(list(table_data_schema(existing).fields))
        if query_df is None and (stored_schema.fields or not stmt.columns):
            # Hudi HoodieCatalogTable: the existing table's schema wins over the columns the statement declares.
            schema = stored_schema
        existing = _complete_existing(existing, database, name, schema)
        props = dict(existing.config.items())
        partitioned = _partition_columns(existing, schema)
    else:
        schema = partition_columns_last(schema, partitioned)
        props = hudi_table_properties(database, name, schema, partitioned, hoodie)
        Table.create(location, props)
        created = True
    storage_props = {QUERY_AS_RO_KEY: query_as_ro} if query_as_ro is not None else {}
    spec = HudiCatalogSpec(database, name, schema, tuple(partitioned), location, external,
                           props[TableConfig.TYPE.key] == "MERGE_ON_READ", catalog_properties(user_props, props),
                           stmt.comment, storage_props)
    try:
        catalog.register(spec)
    except Exception:
        if created:
            Storage.for_uri(location).delete_dir(location)
        raise
    if query_df is None:
        return empty_result(spark)
    try:
        entry, table = catalog.require_hudi(stmt.ident)
        options = write_options(spark, entry, table)
        metrics = write_dataframe(spark, table, query_df, WriteOperation.BULK_INSERT, options)
    except Exception:
        # Hudi CreateHoodieTableAsSelectCommand: no table is left behind by a failed CTAS.
        logger.info("CTAS %s.%s failed: dropping its catalog entry%s", database, name,
                    " and its files" if created else "")
        spark.sql(f"DROP TABLE IF EXISTS {quote(database)}.{quote(name)}")
        if created:
            Storage.for_uri(location).delete_dir(location)
        raise
    return after_write(ctx, entry, table, options, metrics)


QUERY_AS_RO_KEY = ReadConfig.QUERY_AS_RO_TABLE.key
"""``hoodie.query.as.ro.table``: a catalog entry reading the table read-optimized (true) or real-time (false)."""


def _query_as_ro(properties: dict[str, str]) -> str | None:
    """The statement's ``hoodie.query.as.ro.table`` (any case), lower-cased, or None."""
    for key, value in properties.items():
        if key.lower() == QUERY_AS_RO_KEY:
            return value.strip().lower()
    return None


def _require_mor_base_table(database: str, name: str, existing: Table | None) -> None:
    """A hand-made ``_ro``/``_rt`` entry needs a merge-on-read table at its location (Hudi
    ``CreateHoodieTableCommand``)."""
    if existing is None:
        raise SqlAnalysisError(
            f"CREATE TABLE {database}.{name}: Creating ro/rt table need the existence of the base table.")
    if existing.config.raw_value(TableConfig.TYPE.key) != "MERGE_ON_READ":
        raise SqlAnalysisError(
            f"CREATE TABLE {database}.{name}: Creating ro/rt table should only apply to a mor table.")


def _require_ctas_location(database: str, name: str, location: str, external: bool, existing: Table | None) -> None:
    """A CTAS writes into an empty location (Hudi ``CreateHoodieTableAsSelectCommand``) or, with LOCATION, into
    the Hudi table already there; a managed CTAS never takes over an existing directory (Spark
    ``SessionCatalog.validateTableLocation``)."""
    if not _non_empty_dir(location):
        return
    if not external:
        raise SqlAnalysisError(
            f"Can not create the managed table('`{database}`.`{name}`'). The associated location('{location}') "
            "already exists.")
    if existing is None:
        raise SqlAnalysisError(f"assertion failed: Path '{location}' should be empty for CTAS "
                               f"(CREATE TABLE {database}.{name} AS SELECT)")


def _non_empty_dir(location: str) -> bool:
    storage = Storage.for_uri(location)
    return storage.exists(location) and bool(storage.list_dir(location))


def _create_like(ctx: CommandContext, stmt: CreateTable) -> DataFrame:
    """``CREATE TABLE t LIKE src [USING hudi] [LOCATION ...] [TBLPROPERTIES (...)]`` (Hudi
    ``CreateHoodieTableLikeCommand``): the new table takes the source's columns and partition columns and, from a Hudi
    source, its ``type``, ``primaryKey``, ``preCombineField`` and ``hoodie.*`` properties; the statement's
    TBLPROPERTIES win. A source of another provider without ``USING hudi`` makes a table of that provider (Spark's).

    Raises:
        SqlAnalysisError: the source table does not exist.
    """
    assert stmt.like is not None
    source = ctx.catalog.lookup(stmt.like)
    if source is None:
        raise SqlAnalysisError(f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {stmt.like} cannot be found "
                               f"(source of CREATE TABLE {stmt.ident} LIKE)")
    if (stmt.provider or source.provider).lower() != "hudi":
        return ctx.spark.sql(stmt.sql)
    columns = tuple(ColumnDef(f.name, f.dataType.simpleString(), comment=(f.metadata or {}).get("comment"))
                    for f in source.schema.fields if f.name not in META_FIELDS)
    properties: dict[str, str] = {}
    if source.is_hudi:
        hidden = {TableConfig.NAME.key, TableConfig.DATABASE_NAME.key}
        properties = {k: v for k, v in canonical_option_names(source.table_properties).items()
                      if (k in SQL_OPTION_NAMES.values() or k.startswith("hoodie.")) and k not in hidden}
    properties.update(stmt.properties)
    return create_table(ctx, replace(stmt, columns=columns, partitioned_by=source.partition_columns,
                                     properties=properties, provider="hudi", like=None))
