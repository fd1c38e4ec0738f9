"""JVM-free parts of a Hudi table's catalog entry: the column order and Hive types, the TBLPROPERTIES Hudi
adds from ``hoodie.properties``, the SHOW CREATE TABLE text, and SHOW CREATE TABLE routing."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    ByteType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from sqlext.catalog import CatalogTable, HudiCatalogSpec, catalog_schema, hive_compatible
from sqlext.commands.ddl import catalog_properties, sql_options
from sqlext.commands.show import create_table_statement, user_table_properties
from sqlext.parser import Passthrough, ShowCreateTable, TableIdent, parse_statement

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
DATA = StructType([StructField("id", IntegerType()), StructField("p", StringType()),
                   StructField("fare", DecimalType(10, 2)), StructField("q", LongType())])


def test_catalog_schema_puts_meta_columns_first_and_partition_columns_last() -> None:
    schema = catalog_schema(DATA, ("q", "p"))
    assert [f.name for f in schema.fields] == [*META, "id", "fare", "q", "p"]
    spec = HudiCatalogSpec("db", "t", DATA, ("p",), "/w/t", external=False, merge_on_read=True)
    assert [f.name for f in spec.catalog_schema().fields][-1] == "p"
    assert spec.input_format == "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
    cow = HudiCatalogSpec("db", "t", DATA, (), "/w/t", external=True, merge_on_read=False)
    assert cow.input_format == "org.apache.hudi.hadoop.HoodieParquetInputFormat"


def test_hive_compatible_types_follow_hive_sync() -> None:
    nested = StructType([StructField("b", ByteType()), StructField("a", ArrayType(ShortType())),
                         StructField("m", MapType(StringType(), TimestampNTZType())),
                         StructField("d", DecimalType(10, 2))])
    assert hive_compatible(nested).simpleString() == \
        "struct<b:int,a:array<int>,m:map<string,timestamp>,d:decimal(10,2)>"


def test_tblproperties_add_hudis_sql_options_without_overriding_the_users() -> None:
    config = {"hoodie.table.type": "MERGE_ON_READ", "hoodie.table.recordkey.fields": "id",
              "hoodie.table.precombine.field": "ts", "hoodie.table.name": "t"}
    assert sql_options(config) == {"type": "mor", "primaryKey": "id", "preCombineField": "ts"}
    assert catalog_properties({"primarykey": "id", "hoodie.index.type": "SIMPLE"}, config) == {
        "primarykey": "id", "hoodie.index.type": "SIMPLE", "type": "mor", "preCombineField": "ts"}
    assert sql_options({"hoodie.table.type": "COPY_ON_WRITE"}) == {"type": "cow"}


def test_user_table_properties_hide_sync_and_hive_bookkeeping() -> None:
    props = {"type": "cow", "primaryKey": "id", "hoodie.index.type": "SIMPLE", "last_commit_time_sync": "1",
             "last_commit_completion_time_sync": "2", "transient_lastDdlTime": "3", "EXTERNAL": "TRUE",
             "spark.sql.sources.provider": "hudi", "numFiles": "4"}
    assert user_table_properties(props) == {"type": "cow", "primaryKey": "id", "hoodie.index.type": "SIMPLE"}


def test_create_table_statement() -> None:
    schema = catalog_schema(StructType([
        StructField("id", LongType(), False), StructField("name", StringType(), True, {"comment": "it's"}),
        StructField("st", StructType([StructField("a b", IntegerType())])), StructField("p", StringType())]),
        ("p",))
    entry = CatalogTable("db", "t", "hudi", "/data/t", {}, {"type": "cow", "primaryKey": "id",
                                                            "last_commit_time_sync": "1"},
                         schema, ("p",), "a 'table'", external=True)
    assert create_table_statement(entry) == (
        "CREATE TABLE `db`.`t` (\n"
        "  `id` BIGINT NOT NULL,\n"
        "  `name` STRING COMMENT 'it\\'s',\n"
        "  `st` STRUCT<`a b`: INT>,\n"
        "  `p` STRING)\n"
        "USING hudi\n"
        "COMMENT 'a \\'table\\''\n"
        "PARTITIONED BY (`p`)\n"
        "LOCATION '/data/t'\n"
        "TBLPROPERTIES (\n"
        "  'primaryKey' = 'id',\n"
        "  'type' = 'cow')\n")
    managed = CatalogTable("db", "t", "hudi", "/data/t", {}, {}, schema, ("p",))
    assert "LOCATION" not in create_table_statement(managed)
    assert "TBLPROPERTIES" not in create_table_statement(managed)


def test_show_create_table_routing() -> None:
    assert parse_statement("SHOW CREATE TABLE db.t") == ShowCreateTable(TableIdent("db", "t"))
    assert parse_statement("show create table `t`;") == ShowCreateTable(TableIdent(None, "t"))
    assert parse_statement("SHOW CREATE TABLE t AS SERDE") == Passthrough("SHOW CREATE TABLE t AS SERDE")
