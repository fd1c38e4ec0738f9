"""Hudi's ``TestInsertTable`` (hudi-spark, ``org.apache.spark.sql.hudi.dml``), first half, as oracle scripts.

One script per test case and per value of its loops (table type, overwrite mode, bulk insert on or off); loops over
data types become one script with a table per type. ``withRecordType()`` runs the default (AVRO) merger only;
``location`` clauses are dropped (managed tables); ``withSQLConf`` becomes ``set`` ... ``reset``
(:func:`~tests.hudi_oracle.scripts.with_conf`). Checks through the Scala API (``getLastCommitMetadata(...)
.getOperationType``, ``HoodieSqlCommonUtils.getTableSqlSchema``, ``metaClient.getTableConfig``) are left out: the
statements around them and their SELECTs are kept.
"""

from __future__ import annotations

from tests.hudi_oracle.scripts import Script, Statement, create, script, with_conf

_KINDS = ("cow", "mor")
_DT_COLS = "id int, dt string, name string, price double, ts long"
_DUP_POLICY = "hoodie.datasource.insert.dup.policy"
_INSERT_MODE = "hoodie.sql.insert.mode"
_BULK = "hoodie.sql.bulk.insert.enable"
_DUP_ON_INSERTS = "hoodie.merge.allow.duplicate.on.inserts"
_OPERATION = "hoodie.datasource.write.operation"
_INTO_OPERATION = "hoodie.spark.sql.insert.into.operation"
_DUPLICATE_KEY = "Duplicate key"
_BUCKET_COLS = "`id` string, `name` string, `dt` bigint, `day` STRING, `hour` INT"
_BUCKET_ROW = "select '1' as id, '{name}' as name, {dt} as dt, '2024-02-19' as `day`, 10 as `hour`"


def _table_type_case_insensitive() -> Script:
    # "Test table type name incase-sensitive test"
    return script("ins_table_type_upper_case", *with_conf(
        {"spark.sql.shuffle.partitions": "11"},
        create(_BUCKET_COLS, "'primaryKey' = 'id', 'type' = 'MOR', 'preCombineField'='dt', "
               "'hoodie.index.type' = 'BUCKET', 'hoodie.bucket.index.hash.field' = 'id', "
               "'hoodie.bucket.index.num.buckets'=512", "`day`,`hour`"),
        "insert into {t} " + _BUCKET_ROW.format(name="aa", dt=123),
        "merge into {t} as target using (select '2' as id, 'bb' as name, 456 as dt, '2024-02-19' as `day`, "
        "10 as `hour`) as source on target.id = source.id when matched then update set * "
        "when not matched then insert *",
        "select id, name, dt, day, hour from {t} limit 10"))


def _first_value_payload() -> Script:
    # "Test FirstValueAvroPayload test"
    return script("ins_first_value_avro_payload", *with_conf(
        {"hoodie.file.group.reader.enabled": "false"},
        create(_BUCKET_COLS, "'primaryKey' = 'id', 'type' = 'mor', 'preCombineField'='dt', "
               "'hoodie.index.type' = 'BUCKET', 'hoodie.bucket.index.hash.field' = 'id', "
               "'hoodie.bucket.index.num.buckets'=12, "
               "'hoodie.datasource.write.payload.class'='org.apache.hudi.common.model.FirstValueAvroPayload'",
               "`day`,`hour`"),
        "insert into {t} " + _BUCKET_ROW.format(name="aa", dt=123),
        "insert into {t} " + _BUCKET_ROW.format(name="bb", dt=123),
        "select id, name, dt, day, hour from {t} limit 10",
        "insert into {t} " + _BUCKET_ROW.format(name="cc", dt=124),
        "select id, name, dt, day, hour from {t} limit 10"))


_THREE_ROWS = ("insert into {t} values (1, 'a1', 10, 1000, \"2021-01-05\"), (2, 'a2', 20, 2000, \"2021-01-06\"), "
               "(3, 'a3', 30, 3000, \"2021-01-07\")")


def _with_values() -> Script:
    # "Test Insert Into with values"
    return script("ins_with_values",
                  create(_DT_COLS, "primaryKey = 'id'", "dt"),
                  _THREE_ROWS,
                  "select id, name, price, ts, dt from {t} where year(dt) > '2020' and lower(name) > 'a0'")


def _static_partition(kind: str) -> Script:
    # "Test Insert Into with static partition" (its field-order check reads the schema through the Scala API)
    return script(f"ins_static_partition_{kind}",
                  create(_DT_COLS, f"primaryKey = 'id', type = '{kind}'", "dt"),
                  "insert into {t} partition(dt = '2021-01-05') select 1 as id, 'a1' as name, 10 as price, 1000 as ts",
                  "insert into {t} partition(dt = '2021-01-06') select 20 as price, 2000 as ts, 2 as id, 'a2' as name",
                  "insert into {t} select 3, 'a3', 30, 3000, '2021-01-07'",
                  "select id, name, price, ts, dt from {t}")


def _dynamic_partition(kind: str) -> Script:
    # "Test Insert Into with dynamic partition"
    return script(f"ins_dynamic_partition_{kind}",
                  create(_DT_COLS, f"primaryKey = 'id', type = '{kind}'", "dt"),
                  "insert into {t} partition(dt) select 1 as id, '2021-01-05' as dt, 'a1' as name, 10 as price, "
                  "1000 as ts",
                  "insert into {t} select 2 as id, 'a2' as name, 20 as price, 2000 as ts, '2021-01-06' as dt",
                  "insert into {t} select 3, 'a3', 30, 3000, '2021-01-07'",
                  "select id, name, price, ts, dt from {t}")


def _multi_partition(kind: str) -> Script:
    # "Test Insert Into with multi partition"
    return script(f"ins_multi_partition_{kind}",
                  create("id int, dt string, name string, price double, ht string, ts long",
                         f"primaryKey = 'id', type = '{kind}'", "dt, ht"),
                  "insert into {t} partition(dt, ht) select 1 as id, 'a1' as name, 10 as price,'20210101' as dt, "
                  "1000 as ts, '01' as ht",
                  "insert into {t} partition(dt = '20210102', ht) select 2 as id, 'a2' as name, 20 as price, "
                  "2000 as ts, '02' as ht",
                  "insert into {t} partition(dt, ht = '03') select 3 as id, 'a3' as name, 30 as price, 3000 as ts, "
                  "'20210103' as dt",
                  "insert into {t} select 4, 'a4', 40, 4000, '20210104', '04'",
                  "select id, name, price, ts, dt, ht from {t}")


_COLS = "id int, name string, price double, ts long"


def _non_partitioned() -> Script:
    # "Test Insert Into Non Partitioned Table"
    return script("ins_non_partitioned_dup_policies",
                  f"set {_DUP_POLICY}=fail",
                  create(_COLS, "type = 'cow', primaryKey = 'id', preCombineField = 'ts'"),
                  "insert into {t} values(1, 'a1', 10, 1000)",
                  "select id, name, price, ts from {t}",
                  "insert into {t} select 2, 'a2', 12, 1000",
                  "select id, name, price, ts from {t}",
                  Statement("insert into {t} select 1, 'a1', 10, 1000", expect=_DUPLICATE_KEY),
                  f"set {_DUP_POLICY}=drop",
                  create(_COLS, "type = 'mor', primaryKey = 'id', preCombineField = 'ts'", table="{t2}"),
                  "insert into {t2} select 1, 'a1', 10, 1000",
                  "insert into {t2} select 1, 'a1', 12, 1000",
                  "select id, name, price, ts from {t2}",
                  f"reset {_DUP_POLICY}",
                  tables=("t", "t2"))


def _strict_no_precombine() -> Script:
    # "Test Insert Into None Partitioned Table strict mode with no preCombineField"
    return script("ins_non_partitioned_no_precombine_dup_fail",
                  f"set {_DUP_POLICY}=fail",
                  create("id int, name string, price double", "type = 'cow', primaryKey = 'id'"),
                  "insert into {t} values(1, 'a1', 10)",
                  "select id, name, price from {t}",
                  "insert into {t} select 2, 'a2', 12",
                  "select id, name, price from {t}",
                  f"set {_DUP_ON_INSERTS} = false",
                  Statement("insert into {t} select 1, 'a1', 10", expect=_DUPLICATE_KEY),
                  f"reset {_DUP_ON_INSERTS}",
                  f"reset {_DUP_POLICY}")


_SEL = "select id, name, price, ts, dt from {t}"


def _insert_overwrite(kind: str) -> Script:
    # "Test Insert Overwrite"
    return script(f"ins_overwrite_modes_{kind}",
                  create(_COLS + ", dt string", f"type = '{kind}', primaryKey = 'id'", "dt"),
                  "insert into {t} values (1,'a1',10,1000,'2021-01-05'), (2,'a2',10,1000,'2021-01-06')",
                  _SEL,
                  "insert overwrite table {t} values (3,'a3',10,1000,'2021-01-06'), (4,'a4',10,1000,'2021-01-07')",
                  _SEL + " order by id",
                  "set spark.sql.sources.partitionOverwriteMode=dynamic",
                  "insert overwrite table {t} values (5,'a5',10,1000,'2021-01-07')",
                  _SEL + " order by id",
                  "insert overwrite table {t} partition(dt = '2021-01-06') select * from (select 6 , 'a6', 10, 1000) "
                  "limit 10",
                  _SEL + " order by dt",
                  "set spark.sql.sources.partitionOverwriteMode=static",
                  "set hoodie.datasource.overwrite.mode=dynamic",
                  "insert overwrite table {t} values (7,'a7',10,1000,'2021-01-07')",
                  _SEL + " order by dt",
                  "set hoodie.datasource.overwrite.mode=static",
                  "insert overwrite table {t} values (8,'a8',10,1000,'2021-01-07'), (9,'a9',10,1000,'2021-01-08')",
                  _SEL + " order by dt",
                  f"set {_OPERATION} = insert_overwrite",
                  "insert overwrite table {t} values (10,'a10',10,1000,'2021-01-08')",
                  _SEL + " order by id",
                  f"set {_OPERATION} = insert_overwrite_table",
                  "insert overwrite table {t} values (11,'a11',10,1000,'2021-01-08'), (12,'a12',10,1000,'2021-01-09')",
                  _SEL + " order by id",
                  f"reset {_OPERATION}",
                  "reset hoodie.datasource.overwrite.mode",
                  "reset spark.sql.sources.partitionOverwriteMode",
                  create(_COLS, "primaryKey = 'id'", table="{np}"),
                  "insert into {np} select 1, 'a1', 10, 1000",
                  "insert overwrite table {np} select 2, 'a2', 10, 1000",
                  "select id, name, price, ts from {np}",
                  tables=("t", "np"))


def _overwrite_multi_partitioned(kind: str, mode: str) -> Script:
    # "Test insert overwrite for multi partitioned table"
    sel = "select id, name, price, ts, dt, hh from {t}"
    return script(f"ins_overwrite_multi_partitioned_{kind}_{mode}",
                  create(_COLS + ", dt string, hh string", f"type = '{kind}', primaryKey = 'id'", "dt, hh"),
                  "insert into table {t} values (0, 'a0', 10, 1000, '2023-12-05', '00'), "
                  "(1, 'a1', 10, 1000, '2023-12-06', '00'), (2, 'a2', 10, 1000, '2023-12-06', '01')",
                  sel,
                  *with_conf({"hoodie.datasource.overwrite.mode": mode},
                             "insert overwrite table {t} partition (dt='2023-12-06', hh) values "
                             "(3, 'a3', 10, 1000, '00'), (4, 'a4', 10, 1000, '02')",
                             sel,
                             "insert overwrite table {t} values (5, 'a5', 10, 1000, '2023-12-06', '02')",
                             sel,
                             *with_conf({_OPERATION: "insert_overwrite_table"},
                                        "insert overwrite table {t} partition (dt='2023-12-06', hh) values "
                                        "(6, 'a6', 10, 1000, '00')",
                                        sel)))


_PARTITION_TYPES = (("string", "'1000'"), ("int", "1000"), ("bigint", "10000"),
                    ("timestamp", "TIMESTAMP'2021-05-20 00:00:00'"), ("date", "DATE'2021-05-20'"))


def _partition_types(name: str, cases: tuple[tuple[str, str], ...], conf: dict[str, str]) -> Script:
    # "Test Different Type of Partition Column" / "... With Consistent Logical Timestamp Enabled": one table per
    # type, as the suite's validateDifferentTypesOfPartitionColumn (the static value without its type-literal prefix)
    statements: list[str | Statement] = []
    for partition_type, value in cases:
        t = "{" + partition_type + "}"
        bare = value[value.index("'"):] if "'" in value else value
        statements += [create(f"id int, name string, price double, dt {partition_type}", "primaryKey = 'id'", "dt",
                              table=t),
                       f"insert into {t} partition(dt = {bare}) select 1, 'a1', 10",
                       f"insert overwrite {t} partition(dt = {bare}) select 1, 'a1', 10",
                       f"insert into {t} select 2, 'a2', 10, {value}",
                       f"select id, name, price, cast(dt as string) from {t} order by id"]
    return script(name, *with_conf(conf, *statements), tables=tuple(t for t, _ in cases))


def _uppercase_name() -> Script:
    # "Test insert for uppercase table name" (Spark 3.5: spark.sql.caseSensitive=true); its table-name check in
    # hoodie.properties is Scala API
    return script("ins_uppercase_table_name", *with_conf(
        {"spark.sql.caseSensitive": "true"},
        create("id int, name string, price double", "primaryKey = 'id'", table="{H}"),
        "insert into {H} values(1, 'a1', 10)",
        "select id, name, price from {H}"), tables=("H",))


def _insert_exception() -> Script:
    # "Test Insert Exception"
    return script("ins_exceptions",
                  create("id int, name string, price double, dt string", "primaryKey = 'id'", "dt"),
                  Statement("insert into {t} partition(dt = '2021-06-20') select 1, 'a1', 10, '2021-06-20'",
                            expect="too many data columns"),
                  Statement("insert into {t} select 1, 'a1', 10", expect="not enough data columns"),
                  *with_conf({_BULK: "true", _INSERT_MODE: "strict"},
                             create(_COLS, "primaryKey = 'id', preCombineField = 'ts'", table="{t2}"),
                             Statement("insert into {t2} values(1, 'a1', 10, 1000)",
                                       expect="Table with primaryKey can not use bulk insert in strict mode.")),
                  tables=("t", "t2"))


def _java8_timestamp() -> Script:
    # "Test Insert timestamp when 'spark.sql.datetime.java8API.enabled' enabled"
    return script("ins_java8_api_timestamp", *with_conf(
        {"spark.sql.datetime.java8API.enabled": "true"},
        "create table {t} (id int, name string, price double, dt timestamp) using hudi partitioned by(dt) "
        "options(type = 'cow', primaryKey = 'id')",
        "insert into {t} values (1, 'a1', 10, cast('2021-05-07 00:00:00' as timestamp))",
        "select id, name, price, cast(dt as string) from {t}"))


def _bulk_single_partition(kind: str) -> Script:
    # "Test bulk insert with insert into for single partitioned table"
    return script(f"ins_bulk_single_partition_{kind}", *with_conf(
        {_INSERT_MODE: "non-strict"},
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'", "dt"),
        "set hoodie.datasource.write.insert.drop.duplicates = false",
        f"set {_BULK} = true",
        "insert into {t} values(1, 'a1', 10, '2021-07-18')",
        "select id, name, price, dt from {t}",
        f"set {_BULK} = false",
        "insert into {t} values(2, 'a2', 10, '2021-07-18')",
        "select id, name, price, dt from {t} order by id",
        f"reset {_BULK}",
        "reset hoodie.datasource.write.insert.drop.duplicates"))


def _bulk_multi_partition(kind: str) -> Script:
    # "Test bulk insert with insert into for multi partitioned table"
    return script(f"ins_bulk_multi_partition_{kind}", *with_conf(
        {_INSERT_MODE: "non-strict"},
        create("id int, name string, price double, dt string, hh string", f"type = '{kind}', primaryKey = 'id'",
               "dt, hh"),
        f"set {_BULK} = true",
        "insert into {t} values(1, 'a1', 10, '2021-07-18', '12')",
        "select id, name, price, dt, hh from {t}",
        f"set {_BULK} = false",
        "insert into {t} values(2, 'a2', 10, '2021-07-18','12')",
        "select id, name, price, dt, hh from {t} order by id",
        f"reset {_BULK}"))


def _bulk_non_partitioned(kind: str) -> Script:
    # "Test bulk insert with insert into for non partitioned table"
    return script(f"ins_bulk_non_partitioned_{kind}", *with_conf(
        {_INSERT_MODE: "non-strict", _BULK: "true"},
        create("id int, name string, price double", f"type = '{kind}', primaryKey = 'id'"),
        "insert into {t} values(1, 'a1', 10)",
        "select id, name, price from {t}"))


def _bulk_ctas(kind: str) -> Script:
    # "Test bulk insert with CTAS"
    return script(f"ins_bulk_ctas_{kind}", *with_conf(
        {_INSERT_MODE: "non-strict", _BULK: "true"},
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'", "dt",
               table="{src}"),
        "insert into {src} values(1, 'a1', 10, '2021-07-18')",
        f"create table {{t}} using hudi tblproperties( type = '{kind}', primaryKey = 'id') as select * from {{src}}",
        "select id, name, price, dt from {t} order by id"), tables=("t", "src"))


# "Test combine before bulk insert" writes through the DataFrame API (df.write.format("hudi") with
# COMBINE_BEFORE_INSERT and POPULATE_META_FIELDS) only: left out.

def _bulk_empty(kind: str) -> Script:
    # "Test bulk insert with empty dataset"
    return script(f"ins_bulk_ctas_empty_{kind}", *with_conf(
        {_INTO_OPERATION: "bulk_insert"},
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'", "dt",
               table="{src}"),
        f"create table {{t}} using hudi tblproperties( type = '{kind}', primaryKey = 'id') as "
        "select * from {src} where id = 2",
        "select id, name, price, dt from {t} order by id"), tables=("t", "src"))


def _overwrite_empty(kind: str, bulk: bool) -> Script:
    # "Test insert overwrite partitions with empty dataset"
    cols = "id int, name string, price double, dt string"
    body = [create(cols, f"type = '{kind}', primaryKey = 'id'", "dt", table="{src}"),
            create(cols, f"type = '{kind}', primaryKey = 'id'", "dt"),
            "insert into {t} values(3, 'c1', 13, '2021-07-17')",
            "insert into {t} values(1, 'a1', 10, '2021-07-18')",
            "insert overwrite table {t} partition(dt='2021-07-17') select id, name, price from {src}",
            "select id, name, price, dt from {t} where dt='2021-07-17'",
            "select id, name, price, dt from {t}"]
    return script(f"ins_overwrite_empty_{kind}{'_bulk' if bulk else ''}",
                  *with_conf({_INTO_OPERATION: "bulk_insert"} if bulk else {}, *body), tables=("t", "src"))


def _bulk_overwrite_table(kind: str) -> Script:
    # "Test bulk insert with insert overwrite table"
    return script(f"ins_bulk_overwrite_table_{kind}", *with_conf(
        {_INTO_OPERATION: "bulk_insert"},
        create("id int, name string, price double", f"type = '{kind}', primaryKey = 'id'"),
        "insert into {t} values(1, 'a1', 10)",
        "insert overwrite table {t} values(2, 'b1', 11)",
        "select id, name, price from {t} order by id"))


def _bulk_overwrite_partition(kind: str) -> Script:
    # "Test bulk insert with insert overwrite partition"
    return script(f"ins_bulk_overwrite_partition_{kind}", *with_conf(
        {_INTO_OPERATION: "bulk_insert"},
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'", "dt"),
        "insert into {t} values(3, 'c1', 13, '2021-07-17')",
        "insert into {t} values(1, 'a1', 10, '2021-07-18')",
        "insert overwrite table {t} partition(dt='2021-07-17') values(2, 'b1', 11)",
        "select id, name, price, dt from {t} order by id",
        "insert overwrite table {t} values(4, 'd1', 14, '2021-07-19')",
        "select id, name, price, dt from {t} order by id"))


def _combine_before_insert(kind: str) -> Script:
    # "Test combine before insert"
    return script(f"ins_combine_before_insert_{kind}", *with_conf(
        {_BULK: "false", _DUP_ON_INSERTS: "false"},
        create(_COLS, f"primaryKey = 'id', type = '{kind}', preCombineField = 'ts'"),
        "insert overwrite table {t} select * from (select 1 as id, 'a1' as name, 10 as price, 1000 as ts "
        "union all select 1 as id, 'a1' as name, 11 as price, 1001 as ts)",
        "select id, name, price, ts from {t}"))


def _pk_table(kind: str) -> Script:
    # "Test insert pk-table"
    return script(f"ins_pk_table_{kind}", *with_conf(
        {_BULK: "false"},
        create(_COLS, f"primaryKey = 'id', type = '{kind}', preCombineField = 'ts'"),
        "insert into {t} values(1, 'a1', 10, 1000)",
        "insert into {t} values(1, 'a1', 11, 1000)",
        "select id, name, price, ts from {t}"))


# "Test For read operation's field" writes its table through the DataFrame API (ALLOW_OPERATION_METADATA_FIELD)
# and checks the schema through TableSchemaResolver: left out.

def _drop_partition_columns(kind: str) -> Script:
    # "Test enable hoodie.datasource.write.drop.partition.columns when write"
    return script(f"ins_drop_partition_columns_{kind}", *with_conf(
        {_BULK: "false"},
        create(_COLS + ", dt string", f"primaryKey = 'id', preCombineField = 'ts', type = '{kind}', "
               "hoodie.datasource.write.drop.partition.columns = 'true'", "dt"),
        "insert into {t} partition(dt='2021-12-25') values (1, 'a1', 10, 1000)",
        "insert into {t} partition(dt='2021-12-25') values (2, 'a2', 20, 1000)",
        "select id, name, price, ts, dt from {t}"))


def _nested_key(kind: str) -> Script:
    # "Test nested field as primaryKey and preCombineField"
    return script(f"ins_nested_key_and_precombine_{kind}",
                  create("name string, price double, ts long, "
                         "nestedcol struct<a1:string, a2:struct<b1:string, b2:struct<c1:string, c2:int>>>",
                         f"type = '{kind}', primaryKey = 'nestedcol.a1', preCombineField = 'nestedcol.a2.b2.c2'",
                         keyword="options"),
                  "insert into {t} values ('name_1', 10, 1000, struct('a', struct('b', struct('c', 999)))), "
                  "('name_2', 20, 2000, struct('a', struct('b', struct('c', 333))))",
                  "select name, price, ts, nestedcol.a1, nestedcol.a2.b2.c2 from {t}")


def _catalog_identifier(fmt: str) -> Script:
    # "Test Insert Into With Catalog Identifier"
    t = "spark_catalog.default.{t}"
    return script(f"ins_catalog_identifier_{fmt}",
                  create(_COLS + ", dt string", "primaryKey = 'id'", "dt", table=t, using=fmt),
                  f"insert into {t} select 1 as id, 'a1' as name, 10 as price, 1000 as ts, '2021-01-05' as dt",
                  f"select id, name, price, ts, dt from {t}",
                  f"insert into {t} partition(dt = '2021-01-05') select 2 as id, 'a2' as name, 10 as price, 1000 as ts",
                  f"select id, name, price, ts, dt from {t}")


def _allow_duplicates(kind: str) -> Script:
    # "Test enable hoodie.merge.allow.duplicate.on.inserts when write"
    return script(f"ins_allow_duplicate_on_inserts_{kind}", *with_conf(
        {_OPERATION: "insert"},
        create(_COLS + ", dt string", f"primaryKey = 'id', preCombineField = 'ts', type = '{kind}'", "dt"),
        "insert into {t} partition(dt='2021-12-25') values (1, 'a1', 10, 1000)",
        _SEL,
        f"set {_DUP_ON_INSERTS} = false",
        "insert into {t} partition(dt='2021-12-25') values (1, 'a2', 20, 1001)",
        _SEL,
        f"set {_DUP_ON_INSERTS} = true",
        "insert into {t} partition(dt='2021-12-25') values (1, 'a3', 30, 1002)",
        _SEL,
        f"reset {_DUP_ON_INSERTS}"))


KINDS = _KINDS

SCRIPTS: list[Script] = [
    _table_type_case_insensitive(),
    _first_value_payload(),
    _with_values(),
    *[_static_partition(k) for k in _KINDS],
    *[_dynamic_partition(k) for k in _KINDS],
    *[_multi_partition(k) for k in _KINDS],
    _non_partitioned(),
    _strict_no_precombine(),
    *[_insert_overwrite(k) for k in _KINDS],
    *[_overwrite_multi_partitioned(k, m) for k in _KINDS for m in ("dynamic", "static")],
    _partition_types("ins_partition_column_types", _PARTITION_TYPES, {}),
    _partition_types("ins_partition_column_types_logical_timestamp", _PARTITION_TYPES[3:],
                     {"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"}),
    _uppercase_name(),
    _insert_exception(),
    _java8_timestamp(),
    *[_bulk_single_partition(k) for k in _KINDS],
    *[_bulk_multi_partition(k) for k in _KINDS],
    *[_bulk_non_partitioned(k) for k in _KINDS],
    *[_bulk_ctas(k) for k in _KINDS],
    *[_bulk_empty(k) for k in _KINDS],
    *[_overwrite_empty(k, b) for b in (True, False) for k in _KINDS],
    *[_bulk_overwrite_table(k) for k in _KINDS],
    *[_bulk_overwrite_partition(k) for k in _KINDS],
    *[_combine_before_insert(k) for k in _KINDS],
    *[_pk_table(k) for k in _KINDS],
    *[_drop_partition_columns(k) for k in ("mor", "cow")],
    *[_nested_key(k) for k in _KINDS],
    *[_catalog_identifier(f) for f in ("hudi", "parquet")],
    *[_allow_duplicates(k) for k in ("mor", "cow")],
]
"""The first half of TestInsertTable's cases, every loop value."""
