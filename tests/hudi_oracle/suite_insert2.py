"""Hudi's ``TestInsertTable`` (hudi-spark, ``org.apache.spark.sql.hudi.dml``), second half, as oracle scripts; ported
as :mod:`~tests.hudi_oracle.suite_insert` ports the first (one script per case and loop value, ``location`` dropped,
``withSQLConf`` as ``set`` ... ``reset``, Scala-API checks left out).

The suite's helpers are expanded per call: ``ingestAndValidateData`` (its ``tblproperties`` spell ``preCombine =
'name'``, kept as written), ``ingestAndValidateDataNoPrecombine``, ``ingestAndValidateDataDupPolicy``,
``ingestAndValidateDropDupPolicyBulkInsert``; each unsets the keys it set, so each script resets them.
"""

from __future__ import annotations

from tests.hudi_oracle.scripts import Script, Statement, create, script, with_conf

_KINDS = ("cow", "mor")
_COLS = "id int, name string, price double, ts long"
_DT_COLS = "id int, dt string, name string, price double, ts long"
_OPERATION = "hoodie.datasource.write.operation"
_INTO_OPERATION = "hoodie.spark.sql.insert.into.operation"
_DUP_POLICY = "hoodie.datasource.insert.dup.policy"
_INSERT_MODE = "hoodie.sql.insert.mode"
_BULK = "hoodie.sql.bulk.insert.enable"
_DUP_ON_INSERTS = "hoodie.merge.allow.duplicate.on.inserts"
_THREE_ROWS = ("insert into {t} values (1, 'a1', 10, 1000, \"2021-01-05\"), (2, 'a2', 20, 2000, \"2021-01-06\"), "
               "(3, 'a3', 30, 3000, \"2021-01-07\")")
_NINE_ROWS = ("insert into {t} values (5, 'a', 35, 1000, '2021-01-05'), (1, 'a', 31, 1000, '2021-01-05'), "
              "(3, 'a', 33, 1000, '2021-01-05'), (4, 'b', 16, 1000, '2021-01-05'), (2, 'b', 18, 1000, '2021-01-05'), "
              "(6, 'b', 17, 1000, '2021-01-05'), (8, 'a', 21, 1000, '2021-01-05'), (9, 'a', 22, 1000, '2021-01-05'), "
              "(7, 'a', 23, 1000, '2021-01-05')")
_SEL = "select id, name, price, ts, dt from {t}"
_BUCKET_PROPS = "hoodie.index.type = 'BUCKET', hoodie.bucket.index.hash.field = 'id,name'"


def _bucket_index() -> Script:
    # "Test Insert Into Bucket Index Table"
    return script("ins_bucket_index",
                  create(_DT_COLS, f"primaryKey = 'id,name', preCombineField = 'ts', {_BUCKET_PROPS}", "dt"),
                  _THREE_ROWS.replace("'a1'", "'a1,1'"),
                  _SEL,
                  *with_conf({_DUP_ON_INSERTS: "false"},
                             "insert into {t} values (1, 'a1,1', 10, 1000, \"2021-01-05\")",
                             _SEL))


def _bulk_bucket_index(kind: str, row_writer: str) -> Script:
    # "Test Bulk Insert Into Bucket Index Table"
    more = [
        "insert into {t} values (1, 'a1', 10, 1000, \"2021-01-05\"), (3, \"a3\", 30, 3000, \"2021-01-07\")",
        _SEL,
        "select count(distinct _hoodie_file_name) from {t} where dt = '2021-01-05'",
        "insert into {t} values (4, 'a1,1', 10, 1000, \"2021-01-05\"), (5, 'a1,1', 10, 1000, \"2021-01-05\"), "
        "(6, 'a1,1', 10, 1000, \"2021-01-05\"), (7, 'a1,1', 10, 1000, \"2021-01-05\"), "
        "(8, 'a1,1', 10, 1000, \"2021-01-05\"), (10, 'a3,3', 30, 3000, \"2021-01-05\")",
        "select count(distinct _hoodie_file_name) from {t} where dt = '2021-01-05'",
    ] if kind != "cow" and row_writer != "false" else []
    return script(f"ins_bulk_bucket_index_{kind}_row_writer_{row_writer}", *with_conf(
        {_OPERATION: "bulk_insert", "hoodie.bulkinsert.shuffle.parallelism": "1"},
        create(_DT_COLS, f"primaryKey = 'id,name', type = '{kind}', preCombineField = 'ts', {_BUCKET_PROPS}, "
               f"hoodie.datasource.write.row.writer.enable = '{row_writer}'", "dt"),
        "insert into {t} values (1, 'a1,1', 10, 1000, \"2021-01-05\"), (2, 'a2', 20, 2000, \"2021-01-06\"), "
        "(3, 'a3,3', 30, 3000, \"2021-01-07\")",
        _SEL,
        *more))


def _multiple_bulk_simple_bucket() -> Script:
    # "Test not supported multiple BULK INSERTs into COW with SIMPLE BUCKET and disabled Spark native row writer"
    refused = "Multiple bulk insert"
    return script("ins_multiple_bulk_cow_simple_bucket", *with_conf(
        {_OPERATION: "bulk_insert", "hoodie.bulkinsert.shuffle.parallelism": "1"},
        create("id long, name string, ts int, par string",
               "primaryKey = 'id,name', type = 'cow', preCombineField = 'ts', hoodie.index.type = 'BUCKET', "
               "hoodie.index.bucket.engine = 'SIMPLE', hoodie.bucket.index.num.buckets = '4', "
               "hoodie.bucket.index.hash.field = 'id,name', hoodie.datasource.write.row.writer.enable = 'false'",
               "par"),
        "insert into {t} values (5, 'a1,1', 1, 'main'), (6, 'a6,6', 1, 'main'), (9, 'a3,3', 1, 'side')",
        Statement("insert into {t} values (9, 'a3,3', 2, 'main'), (13, 'a13,13', 1, 'side')", expect=refused),
        "select id from {t} order by id",
        Statement("insert into {t} values (24, 'cd', 1, 'main')", expect=refused),
        "select id from {t} where par = 'main' order by id",
        "insert overwrite {t} values (9, 'a3,3', 3, 'main'), (13, 'a13,13', 2, 'side')",
        "select id from {t} order by id"))


_SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
               "PARTITION_PATH_REPARTITION_AND_SORT")


def _bulk_sort_modes() -> Script:
    # "Test Bulk Insert with all sort-modes" (BulkInsertSortMode.values() of 0.15.0): one table per mode
    statements: list[str | Statement] = [f"set {_BULK} = true", f"set {_INSERT_MODE} = non-strict"]
    for mode in _SORT_MODES:
        t = "{" + mode.lower() + "}"
        parallelism = "hoodie.bulkinsert.shuffle.parallelism = 3, " if mode == "GLOBAL_SORT" else ""
        statements += [
            create("id int, name string, price double, dt string",
                   f"primaryKey = 'id', preCombineField = 'name', type = 'cow', {parallelism}"
                   f"hoodie.bulkinsert.sort.mode = '{mode}'", "dt", table=t),
            f"insert into {t} values (5, 'a', 35, '2021-05-21'), (1, 'a', 31, '2021-01-21'), "
            "(3, 'a', 33, '2021-03-21'), (4, 'b', 16, '2021-05-21'), (2, 'b', 18, '2021-01-21'), "
            "(6, 'b', 17, '2021-03-21'), (8, 'a', 21, '2021-05-21'), (9, 'a', 22, '2021-01-21'), "
            "(7, 'a', 23, '2021-03-21')"]
    statements += [f"reset {_INSERT_MODE}", f"reset {_BULK}"]
    return script("ins_bulk_sort_modes", *statements, tables=tuple(m.lower() for m in _SORT_MODES))


def _overwrite_bucket(kind: str) -> Script:
    # "Test Insert Overwrite Into Bucket Index Table"
    return script(f"ins_overwrite_bucket_index_{kind}", *with_conf(
        {_BULK: "false"},
        create(_COLS + ", dt string", f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts', "
               "hoodie.index.type = 'BUCKET', hoodie.bucket.index.num.buckets = '4'", "dt"),
        _NINE_ROWS,
        "insert overwrite table {t} partition(dt = '2021-01-05') select * from (select 13 , 'a2', 12, 1000) limit 10",
        _SEL + " order by dt"))


def _overwrite_consistent_bucket() -> Script:
    # "Test Insert Overwrite Into Consistent Bucket Index Table"
    return script("ins_overwrite_consistent_bucket_index", *with_conf(
        {_BULK: "false"},
        create(_COLS + ", dt string", "type = 'mor', primaryKey = 'id', preCombineField = 'ts', "
               "hoodie.index.type = 'BUCKET', hoodie.index.bucket.engine = \"CONSISTENT_HASHING\", "
               "hoodie.bucket.index.num.buckets = '4'", "dt"),
        _NINE_ROWS,
        "insert overwrite table {t} partition(dt = '2021-01-05') select * from (select 13 , 'a2', 12, 1000) limit 10",
        "insert overwrite table {t} partition(dt = '2021-01-05') select * from (select 13 , 'a3', 12, 1000) limit 10",
        _SEL + " order by dt"))


def _no_empty_precombine() -> Script:
    # "Test Hudi should not record empty preCombineKey in hoodie.properties"
    return script("ins_operation_insert_no_precombine", *with_conf(
        {_OPERATION: "insert"},
        create("id int, name string, price double", "primaryKey = 'id'"),
        "insert into {t} select 1, 'name1', 11",
        "select id, name, price from {t}",
        "insert overwrite table {t} select 2, 'name2', 12",
        "select id, name, price from {t}",
        "insert into {t} select 3, 'name3', 13",
        "select id, name, price from {t}"))


def _auto_keys() -> Script:
    # "Test Insert Into with auto generate record keys"
    return script("ins_auto_record_keys",
                  create(_DT_COLS, "", "dt"),
                  _THREE_ROWS,
                  _SEL,
                  "select count(_hoodie_record_key) from {t}")


def _auto_keys_precombine(kind: str) -> Script:
    # "Test Insert Into with auto generate record keys with precombine "
    return script(f"ins_auto_record_keys_precombine_{kind}",
                  create(_DT_COLS, f"type = '{kind}', preCombineField = 'price'", "dt"),
                  _THREE_ROWS,
                  _SEL)


def _bulk_consistent_hashing(row_writer: str) -> Script:
    # "Test Bulk Insert Into Consistent Hashing Bucket Index Table"; its bucket-merge clustering runs through the
    # Scala write client (scheduleClusteringAtInstant, cluster): left out
    again = ("insert into {t} values (1, 'a1,1', 11, 1000, \"2021-01-05\"), (2, 'a1,2', 11, 1000, \"2021-01-05\"), "
             "(3, 'a2,1', 21, 2000, \"2021-01-05\"), (4, 'a2,2', 21, 2000, \"2021-01-05\"), "
             "(5, 'a3,1', 31, 3000, \"2021-01-05\"), (6, 'a3,2', 31, 3000, \"2021-01-05\")")
    return script(f"ins_bulk_consistent_hashing_row_writer_{row_writer}",
                  f"set {_OPERATION} = bulk_insert",
                  create(_COLS + ", dt string", "primaryKey = 'id,name', type = 'mor', preCombineField = 'ts', "
                         "hoodie.index.type = 'BUCKET', hoodie.index.bucket.engine = 'CONSISTENT_HASHING', "
                         "hoodie.bucket.index.hash.field = 'id,name', "
                         f"hoodie.datasource.write.row.writer.enable = '{row_writer}'", "dt"),
                  "insert into {t} values (1, 'a1,1', 10, 1000, \"2021-01-05\"), (2, 'a1,2', 10, 1000, \"2021-01-05\"), "
                  "(1, 'a2,1', 20, 2000, \"2021-01-06\"), (2, 'a2,2', 20, 2000, \"2021-01-06\"), "
                  "(1, 'a3,1', 30, 3000, \"2021-01-07\"), (2, 'a3,2', 30, 3000, \"2021-01-07\")",
                  _SEL,
                  "select count(distinct _hoodie_file_name) from {t}",
                  Statement(again, expect="Consistent Hashing bulk_insert only support write to new file group"),
                  f"set {_OPERATION} = upsert",
                  again,
                  _SEL + " where dt = '2021-01-05'",
                  f"reset {_OPERATION}")


def _ingest(name: str, kind: str, conf: dict[str, str], props: str, fail_second: bool = False) -> Script:
    # ingestAndValidateData / ingestAndValidateDataNoPrecombine / ingestAndValidateDataDupPolicy
    second = ("insert into {t} values (1, 'a1_1', 10, \"2021-07-18\"), (2, 'a2', 20, \"2021-07-18\"), "
              "(2, 'a2_2', 30, \"2021-07-18\")")
    tail: list[str | Statement] = [Statement(second, expect="Duplicate key")] if fail_second else \
        [second, "select id, name, price, dt from {t} order by id"]
    return script(f"{name}_{kind}", *with_conf(
        conf,
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'{props}", "dt"),
        "insert into {t} values(1, 'a1', 10, '2021-07-18')",
        "select id, name, price, dt from {t}",
        *tail))


_PRECOMBINE_NAME = ", preCombine = 'name'"
_OPERATIONS = ("insert", "bulk_insert", "upsert")


def _drop_dup_bulk(kind: str) -> Script:
    # "Test DROP insert dup policy with INSERT_INTO explicit new configs BULK INSERT operation"
    return script(f"ins_drop_dup_policy_bulk_insert_{kind}", *with_conf(
        {_INTO_OPERATION: "bulk_insert", _DUP_POLICY: "drop"},
        create("id int, name string, price double, dt string", f"type = '{kind}', primaryKey = 'id'", "dt"),
        Statement("insert into {t} values(1, 'a1', 10, '2021-07-18')", expect="")))


def _partition_field_types() -> Script:
    # "Test various data types as partition fields"
    return script("ins_partition_field_data_types", *with_conf(
        {"hoodie.datasource.write.insert.drop.duplicates": "false", _DUP_POLICY: "none"},
        "CREATE TABLE {t} (id INT, boolean_field BOOLEAN, float_field FLOAT, byte_field BYTE, short_field SHORT, "
        "decimal_field DECIMAL(10, 5), date_field DATE, string_field STRING, timestamp_field TIMESTAMP) USING hudi "
        "PARTITIONED BY (boolean_field, float_field, byte_field, short_field, decimal_field, date_field, "
        "string_field, timestamp_field) TBLPROPERTIES (primaryKey = 'id')",
        "INSERT INTO {t} VALUES (1, TRUE, CAST(1.0 as FLOAT), 1, 1, 1234.56789, DATE '2021-01-05', 'partition1', "
        "TIMESTAMP '2021-01-05 10:00:00'), (2, FALSE,CAST(2.0 as FLOAT), 2, 2, 6789.12345, DATE '2021-01-06', "
        "'partition2', TIMESTAMP '2021-01-06 11:00:00')",
        "SELECT id, boolean_field FROM {t} ORDER BY id"))


def _upsert_partitioned_by_ts(kind: str) -> Script:
    # "Test INSERT INTO with upsert operation type"
    return script(f"ins_partitioned_by_precombine_{kind}",
                  create("id int, name string, ts long, price int",
                         f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts'", "ts"),
                  "insert into {t} values (1, 'a1', 1000, 10), (2, 'a2', 2000, 20), (3, 'a3', 3000, 30), "
                  "(4, 'a4', 2000, 10), (5, 'a5', 3000, 20), (6, 'a6', 4000, 30)",
                  "select id, name, price, ts from {t} where price > 3000",
                  "update {t} set price = price + 1 where id = 6",
                  "select id, name, price, ts from {t} where price > 3000")


def _extra_metadata() -> Script:
    # "Test Insert Into with extraMetadata" (the commit's extra metadata is read through the Scala API)
    return script("ins_commit_extra_metadata", *with_conf(
        {"hoodie.datasource.write.commitmeta.key.prefix": "commit_extra_meta_",
         "commit_extra_meta_a": "valA", "commit_extra_meta_b": "valB"},
        create(_DT_COLS, "primaryKey = 'id'", "dt"),
        "insert into {t} values (1, 'a1', 10, 1000, '2024-06-14')",
        "select id, name, price, dt from {t}",
        "set commit_extra_meta_a=new_valA",
        "set commit_extra_meta_b=new_valB",
        "insert into {t} values (2, 'a2', 20, 2000, '2024-06-14')",
        "select id, name, price, dt from {t}"))


_SPECIAL_A = "id bigint, name string, price double"
_SPECIAL_PROPS = "primaryKey = 'id', type = 'mor', preCombineField = 'name'"


def _special_columns(verb: str) -> Script:
    # "Test insert into with special cols" / "Test insert overwrite with special cols" (their Spark 3.4 branch,
    # spark.sql.defaultColumn.enabled, does not apply to Spark 3.5)
    overwrite = verb == "insert overwrite"
    check_b = "select id, price, name, day, hour from {b}"
    return script(f"ins_{verb.replace(' ', '_')}_column_list",
                  create(_SPECIAL_A, _SPECIAL_PROPS, table="{a}").replace("create table", "create table if not exists"),
                  f"{verb} {{a}} (id, price, name) values (1, 12.1, 'aaa')",
                  "select id, price, name from {a}",
                  create(_SPECIAL_A + ", day string, hour string", _SPECIAL_PROPS, "day, hour", table="{b}")
                  .replace("create table", "create table if not exists"),
                  f"{verb} {{b}} (id, day, price, name, hour) values (2, '01', 12.2, 'bbb', '02')",
                  *([check_b] if overwrite else []),
                  f"{verb} {{b}} (id, day, price, name, hour) select id, '01' as dt, price, name, '03' as hour from {{a}}",
                  f"{verb} {{b}} partition(day='02', hour) (id, hour, price, name) values (3, '01', 12.3, 'ccc')",
                  f"{verb} {{b}} partition(day='02', hour='02') (id, price, name) values (4, 12.4, 'ddd')",
                  check_b,
                  tables=("a", "b"))


def _keygen_bulk() -> Script:
    # "Test SparkKeyGenerator When Bulk Insert"
    return script("ins_bulk_complex_avro_keygen", *with_conf(
        {_BULK: "true", _INSERT_MODE: "non-strict"},
        create(_COLS + ", dt string, pt string",
               "type = 'mor', primaryKey = 'id', preCombineField = 'ts', "
               "hoodie.table.keygenerator.class = 'org.apache.hudi.keygen.ComplexAvroKeyGenerator', "
               "hoodie.datasource.write.keygenerator.class = 'org.apache.hudi.keygen.ComplexAvroKeyGenerator'",
               "dt, pt"),
        "insert into {t} values (1, 'a', 31, 1000, '2021-01-05', 'A'), (2, 'b', 18, 1000, '2021-01-05', 'A')",
        "select id, name, price, ts, dt, pt from {t} order by dt"))


def _table_dup_policy(policy: str) -> Script:
    # "Test table with insert dup policy"
    second = "insert into {t} select '1' as id, 'aa' as name, 1234 as dt, '2024-02-19' as `day`, 10 as `hour`"
    tail: list[str | Statement] = [Statement(second, expect="Duplicate key found for insert statement, key is: 1")] \
        if policy == "fail" else [f"set {_OPERATION}=insert", second,
                                  "select id, name, dt, day, hour from {t} limit 10", f"reset {_OPERATION}"]
    return script(f"ins_table_dup_policy_{policy}", *with_conf(
        {_DUP_POLICY: policy, "spark.sql.shuffle.partitions": "11"},
        create("`id` string, `name` string, `dt` bigint, `day` STRING, `hour` INT",
               "'primaryKey' = 'id', 'type' = 'MOR', 'preCombineField'= 'dt', 'hoodie.bucket.index.hash.field' = 'id', "
               "'hoodie.bucket.index.num.buckets'= 512", "`day`,`hour`"),
        "insert into {t} select '1' as id, 'aa' as name, 123 as dt, '2024-02-19' as `day`, 10 as `hour`",
        *tail))


def _schema_evolution_refused(kind: str) -> Script:
    # "Test throwing error on schema evolution in Insert Into"
    return script(f"ins_no_schema_evolution_{kind}",
                  create(_DT_COLS, f"primaryKey = 'id', type = '{kind}'", "dt"),
                  "insert into {t} partition(dt = '2024-01-14') select 1 as id, 'a1' as name, 10 as price, 1000 as ts "
                  "union select 2 as id, 'a2' as name, 20 as price, 1002 as ts",
                  "select id, name, price, ts, dt from {t}",
                  Statement("insert into {t} partition(dt = '2024-01-14') select 3 as id, 'a3' as name, 30 as price, "
                            "1003 as ts, 'x' as new_col union select 2 as id, 'a2_updated' as name, 25 as price, "
                            "1005 as ts, 'y' as new_col", expect="too many data columns"))


_BUCKET_512 = ("'primaryKey' = 'id', 'type' = 'mor', 'preCombineField'='dt', 'hoodie.index.type' = 'BUCKET', "
               "'hoodie.bucket.index.hash.field' = 'id', 'hoodie.bucket.index.num.buckets'=512, "
               "'hoodie.metadata.enable'='false'")


def _pruning(partitions: str) -> Script:
    # "Test multiple partition fields pruning" / "Test single partiton field pruning": the RDD partition counts and
    # the stage listener are Scala API; the pruned SELECT is compared
    cols = "`id` string, `name` string, `dt` bigint, `day` STRING, `hour` INT"
    return script(f"ins_partition_pruning_{'multiple' if ',' in partitions else 'single'}",
                  create(cols, _BUCKET_512, partitions),
                  "insert into {t} select '1' as id, 'aa' as name, 123 as dt, '2023-10-12' as `day`, 10 as `hour` "
                  "union select '1' as id, 'aa' as name, 123 as dt, '2023-10-12' as `day`, 11 as `hour` "
                  "union select '1' as id, 'aa' as name, 123 as dt, '2023-10-12' as `day`, 12 as `hour`",
                  "select * from {t} where day='2023-10-12' and hour=11")


def _bad_index_type() -> Script:
    # "Test inaccurate index type" (IllegalArgumentException)
    return script("ins_bad_index_type",
                  Statement("create table {t} (`id` string, `name` string, `dt` bigint, `day` STRING, `hour` INT) "
                            "using hudi OPTIONS ('hoodie.datasource.write.hive_style_partitioning' 'false', "
                            "'hoodie.datasource.meta.sync.enable' 'false', 'hoodie.datasource.hive_sync.enable' "
                            "'false') tblproperties ('primaryKey' = 'id', 'type' = 'mor', 'preCombineField'='dt', "
                            "'hoodie.index.type' = 'BUCKET_aa', 'hoodie.bucket.index.hash.field' = 'id', "
                            "'hoodie.bucket.index.num.buckets'=512) partitioned by (`day`,`hour`)", expect="BUCKET_aa"))


def _nested_vectorized() -> Script:
    # "Test vectorized read nested columns for LegacyHoodieParquetFileFormat"
    return script("ins_map_column_vectorized_read", *with_conf(
        {"hoodie.datasource.read.use.new.parquet.file.format": "false", "hoodie.file.group.reader.enabled": "false",
         "spark.sql.parquet.enableNestedColumnVectorizedReader": "true",
         "spark.sql.parquet.enableVectorizedReader": "true"},
        create("id int, name string, attributes map<string, string>, price double, ts long, dt string",
               "primaryKey = 'id'", "dt"),
        "insert into {t} values (1, 'a1', map('color', 'red', 'size', 'M'), 10, 1000, '2021-01-05'), "
        "(2, 'a2', map('color', 'blue', 'size', 'L'), 20, 2000, '2021-01-06'), "
        "(3, 'a3', map('color', 'green', 'size', 'S'), 30, 3000, '2021-01-07')",
        "select id, name, price, ts, dt from {t} where attributes.color = 'red'"))


SCRIPTS: list[Script] = [
    _bucket_index(),
    *[_bulk_bucket_index(k, w) for k in ("mor", "cow") for w in ("true", "false")],
    _multiple_bulk_simple_bucket(),
    _bulk_sort_modes(),
    *[_overwrite_bucket(k) for k in ("mor", "cow")],
    _overwrite_consistent_bucket(),
    _no_empty_precombine(),
    _auto_keys(),
    *[_auto_keys_precombine(k) for k in _KINDS],
    *[_bulk_consistent_hashing(w) for w in ("false", "true")],
    # "Test sql write operation with INSERT_INTO No explicit configs"
    *[_ingest("ins_sql_operation_default", k, {}, _PRECOMBINE_NAME) for k in _KINDS],
    # "... override both strict mode and sql write operation"
    *[_ingest(f"ins_sql_operation_{op}_and_upsert_mode", k, {_INTO_OPERATION: op, _INSERT_MODE: "upsert"},
              _PRECOMBINE_NAME) for k in _KINDS for op in _OPERATIONS],
    # "... override only sql write operation"
    *[_ingest(f"ins_sql_operation_{op}", k, {_INTO_OPERATION: op}, _PRECOMBINE_NAME)
      for k in _KINDS for op in _OPERATIONS],
    # "... override only strict mode"
    *[_ingest("ins_sql_operation_upsert_mode", k, {_INSERT_MODE: "upsert"}, _PRECOMBINE_NAME) for k in _KINDS],
    # "... No explicit configs No Precombine"
    *[_ingest("ins_sql_operation_default_no_precombine", k, {}, "") for k in _KINDS],
    _pruning("`day`,`hour`"),
    _pruning("`day`"),
    _bad_index_type(),
    _nested_vectorized(),
    # "Test insert dup policy with INSERT_INTO explicit new configs INSERT operation"
    *[_ingest(f"ins_dup_policy_{p}_insert", k, {_INTO_OPERATION: "insert", _DUP_POLICY: p}, _PRECOMBINE_NAME)
      for k in _KINDS for p in ("none", "drop")],
    # "... BULK_INSERT operation"
    _ingest("ins_dup_policy_none_bulk_insert", "cow", {_INTO_OPERATION: "bulk_insert", _DUP_POLICY: "none"},
            _PRECOMBINE_NAME),
    *[_drop_dup_bulk(k) for k in _KINDS],
    # "Test FAIL insert dup policy with INSERT_INTO explicit new configs"
    *[_ingest("ins_dup_policy_fail_insert", k, {_INTO_OPERATION: "insert", _DUP_POLICY: "fail"}, _PRECOMBINE_NAME,
              fail_second=True) for k in _KINDS],
    _partition_field_types(),
    *[_upsert_partitioned_by_ts(k) for k in _KINDS],
    _extra_metadata(),
    _special_columns("insert into"),
    _special_columns("insert overwrite"),
    _keygen_bulk(),
    *[_table_dup_policy(p) for p in ("none", "fail", "drop")],
    *[_schema_evolution_refused(k) for k in _KINDS],
]
"""The second half of TestInsertTable's cases, every loop value."""
