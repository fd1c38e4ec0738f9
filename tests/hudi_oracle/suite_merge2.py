"""Hudi's ``TestMergeIntoTable2`` and ``TestMergeIntoTableWithNonRecordKeyField`` (hudi-spark,
``org.apache.spark.sql.hudi.dml``) as oracle scripts, ported as :mod:`~tests.hudi_oracle.suite_merge` ports
``TestMergeIntoTable`` (one script per case and table type, ``location`` dropped, settings reset at the end).

The stored suites are newer than 0.15.0: cases written for Hudi 1.x (``recordMergeMode`` table property,
``hoodie.spark.sql.merge.into.partial.updates``) are kept as statements; the oracle answers what 0.15.0 does with them.
"""

from __future__ import annotations

from tests.hudi_oracle.scripts import OPTIMIZED, Script, Statement, create, script

_COLS = "id int, name string, price double, ts long"
_VALIDATE = "hoodie.payload.combined.schema.validate"
_SMALL_FILES = "hoodie.merge.small.file.group.candidates.limit"
_DUP_ON_INSERTS = "hoodie.merge.allow.duplicate.on.inserts"
_PARTIAL = "hoodie.spark.sql.merge.into.partial.updates"
_KINDS = ("cow", "mor")
_NO_KEY_ASSIGNMENT = "No matching assignment found for target table record key field `id`"


def _mor_table_2() -> Script:
    # "Test MergeInto for MOR table 2"
    src = "select 1 as id, 'a1' as name, {price} as price, 1000L as ts, '2021-03-21' as dt"
    return script("mit2_mor_table_2",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create(_COLS + ", dt string", "type = 'mor', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  f"merge into {{t}} as t0 using ({src.format(price=10)}) as s0 on t0.id = s0.id "
                  "when not matched and s0.id % 2 = 1 then insert *",
                  "select id,name,price,dt from {t}",
                  "merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 1000L as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *",
                  "select id,name,price,dt from {t}",
                  f"merge into {{t}} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
                  "when matched and s0.id % 2 = 0 then update set * when matched and s0.id % 3 = 2 then delete "
                  "when not matched then insert *",
                  "select id,name,price,dt from {t}",
                  f"merge into {{t}} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
                  "when matched and s0.id % 2 = 1 then update set id = s0.id, name = s0.name, "
                  "price = s0.price * 2, ts = s0.ts, dt = s0.dt "
                  "when not matched then insert (id,name,price,ts,dt) values(s0.id, s0.name, s0.price, s0.ts, s0.dt)",
                  "select id,name,price,dt from {t}",
                  f"merge into {{t}} as t0 using ({src.format(price=11)}) as s0 on t0.id = s0.id "
                  "when matched and s0.id % 2 = 0 then update set id = s0.id, name = s0.name, "
                  "price = s0.price * 2, ts = s0.ts, dt = s0.dt when matched and s0.id % 2 = 1 then delete "
                  "when not matched then insert (id,name,price,ts,dt) values(s0.id, s0.name, s0.price, s0.ts, s0.dt)",
                  "select count(1) from {t}",
                  Statement(f"merge into {{t}} as t0 using ({src.format(price=10)}) as s0 on t0.id = s0.id "
                            "when matched and s0.id % 2 = 1 then update set id = s0.id, name = s0.name, "
                            "price = s0.price + t0.price, ts = s0.ts, dt = s0.dt",
                            expect="Target table's field(price) cannot be the right-value of the update clause for "
                                   "MOR table"),
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _ctas_table() -> Script:
    # "Test Merge Into CTAS Table"; its hoodie.properties check (metaClient.getTableConfig) is Scala API: left out,
    # SHOW TBLPROPERTIES stands for it.
    return script("mit2_ctas_table",
                  f"set {_VALIDATE} = true",
                  "create table {t} using hudi tblproperties(primaryKey = 'id') as select 1 as id, 'a1' as name",
                  "show tblproperties {t} ('primaryKey')",
                  "merge into {t} h0 using (select 1 as id, 'a1_1' as name) s0 on h0.id = s0.id "
                  "when matched then update set *",
                  "select id, name from {t}",
                  f"reset {_VALIDATE}")


def _complex_types() -> Script:
    # "Test Merge With Complex Data Type"
    return script("mit2_complex_data_type",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id int, name string, s_value struct<f0: int, f1: string>, a_value array<string>, "
                         "m_value map<string, string>, ts long", "type = 'mor', primaryKey = 'id', preCombineField = 'ts'"),
                  "merge into {t} h0 using (select 1 as id, 'a1' as name, struct(1, '10') as s_value, "
                  "split('a0,a1', ',') as a_value, map('k0', 'v0') as m_value, 1000 as ts) s0 on h0.id = s0.id "
                  "when not matched then insert *",
                  "select id, name, s_value, a_value, m_value, ts from {t}",
                  "merge into {t} h0 using (select 1 as id, 'a1' as name, struct(1, '12') as s_value, "
                  "split('a0,a1,a2', ',') as a_value, map('k1', 'v1') as m_value, 1000 as ts) s0 on h0.id = s0.id "
                  "when matched then update set * when not matched then insert *",
                  "select id, name, s_value, a_value, m_value, ts from {t}",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _column_name_matching() -> Script:
    # "Test column name matching for insert * and update set *"
    return script("mit2_column_name_matching",
                  f"set {_VALIDATE} = true",
                  create(_COLS + ", dt string", "primaryKey ='id', preCombineField = 'ts'"),
                  "insert into {t} select 1, 'a1', 1, 10, '2021-03-21'",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 97 as price, 1002 as ts, "
                  "'2021-05-05' as dt union all select 1 as id, 'a2' as name, 98 as price, 1003 as ts, "
                  "'2021-05-05' as dt union all select 2 as id, 'a3' as name, 99 as price, 1001 as ts, "
                  "'2021-05-05' as dt) as s0 on t0.id = s0.id "
                  "when matched then update set * when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 1004 as ts, '2021-05-05' as dt, "
                  "100 as price union all select 2 as id, 'a5' as name, 1000 as ts, '2021-05-05' as dt, "
                  "101 as price union all select 3 as id, 'a3' as name, 1000 as ts, '2021-05-05' as dt, "
                  "102 as price) as s0 on t0.id = s0.id when matched then update set t0.name = s0.name, "
                  "t0.ts = s0.ts, t0.dt = s0.dt, t0.price = s0.price when not matched then insert "
                  "(id, name, ts, dt, price) values (s0.id, s0.name, s0.ts, s0.dt, s0.price)",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id, 'a6' as name, 106 as price, 1006 as ts, "
                  "'2021-05-05' as dt, '0' as flag union all select 4 as id, 'a4' as name, 100 as price, "
                  "1000 as ts, '2021-05-06' as dt, '1' as flag) as s0 on t0.id = s0.id "
                  "when matched and flag = '1' then update set * when not matched and flag = '1' then insert *",
                  "select id, name, price, ts, dt from {t}",
                  f"reset {_VALIDATE}")


def _column_aliases() -> Script:
    # "Test MergeInto For Source Table With Column Aliases" (Spark 3: refused)
    return script("mit2_source_column_aliases",
                  f"set {_VALIDATE} = true",
                  create(_COLS, "primaryKey ='id', preCombineField = 'ts'"),
                  Statement("merge into {t} using (select 1, 'a1', 10, 1000, '1') s0(id,name,price,ts,flag) "
                            "on s0.id = {t}.id when matched and flag = '1' then update set "
                            "id = s0.id, name = s0.name, price = s0.price, ts = s0.ts "
                            "when not matched and flag = '1' then insert *",
                            expect="Columns aliases are not allowed in MERGE"),
                  f"reset {_VALIDATE}")


def _history_insert() -> Script:
    # "Test only insert when source table contains history"
    return script("mit2_insert_source_with_history",
                  f"set {_VALIDATE} = true",
                  create(_COLS + ", dt string", "primaryKey ='id', preCombineField = 'ts'"),
                  "insert into {t} select 1, 'a1', 1, 10, '2022-08-18'",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 110 as ts, "
                  "'2022-08-19' as dt union all select 2 as id, 'a2' as name, 10 as price, 100 as ts, "
                  "'2022-08-18' as dt) as s0 on t0.id = s0.id when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  f"reset {_VALIDATE}")


def _history_insert_multi_key() -> Script:
    # "Test only insert when source table contains history and target table has multiple keys"
    return script("mit2_insert_source_with_history_multi_key",
                  f"set {_VALIDATE} = true",
                  create("id1 int, id2 int, name string, price double, ts long, dt string",
                         "primaryKey ='id1,id2', preCombineField = 'ts'"),
                  "insert into {t} select 1, 1, 'a1', 1, 10, '2022-08-18'",
                  "select id1, id2, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id1, 1 as id2, 'a1' as name, 11 as price, 110 as ts, "
                  "'2022-08-19' as dt union all select 1 as id1, 2 as id2, 'a2' as name, 10 as price, 100 as ts, "
                  "'2022-08-18' as dt) as s0 on t0.id1 = s0.id1 and t0.id2 = s0.id2 when not matched then insert *",
                  "select id1, id2, name, price, ts, dt from {t}",
                  f"reset {_VALIDATE}")


def _different_column_order() -> Script:
    # "Test Merge Into For Source Table With Different Column Order"
    return script("mit2_source_column_order",
                  f"set {_SMALL_FILES} = 0",
                  create(_COLS + ", dt string", "type = 'mor', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *",
                  "select id,name,price,dt from {t}",
                  f"reset {_SMALL_FILES}")


def _string_to_double() -> Script:
    # "Test Merge into with String cast to Double"
    return script("mit2_string_cast_to_double",
                  create(_COLS + ", dt string", "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  "insert into {t} select 1, 'a1', cast(10.0 as double), 999, '2021-03-21'",
                  "merge into {t} as t0 using (select 'a1' as name, 1 as id, '10.1' as price, 1000 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched then update set t0.price = s0.price, "
                  "t0.ts = s0.ts when not matched then insert *",
                  "select id,name,price,dt from {t}")


def _default_payload() -> Script:
    # "Test Merge into where manually set DefaultHoodieRecordPayload"
    return script("mit2_default_payload_class",
                  create("id int, name string, ts long", "type = 'cow', primaryKey = 'id', preCombineField = 'ts', "
                         "hoodie.datasource.write.payload.class = "
                         "'org.apache.hudi.common.model.DefaultHoodieRecordPayload'"),
                  "insert into {t} select 1, 'a1', 999",
                  "merge into {t} as t0 using (select 1 as id, 'a2' as name, 1000 as ts) as s0 on t0.id = s0.id "
                  "when matched then update set t0.name = s0.name, t0.ts = s0.ts when not matched then insert *",
                  "select id,name,ts from {t}")


def _dup_key_precombine(kind: str) -> Script:
    # "Test only insert for source table in dup key with preCombineField"
    return script(f"mit2_dup_source_keys_precombine_{kind}",
                  f"set {_SMALL_FILES} = 0",
                  create(_COLS + ", dt string", f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10.1 as price, 1000 as ts, "
                  "'2021-03-21' as dt union all select 1 as id, 'a2' as name, 10.2 as price, 1002 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 1 as id, 'a1_new' as name, 10.1 as price, 1003 as ts, "
                  "'2021-03-21' as dt union all select 3 as id, 'a3' as name, 10.3 as price, 1003 as ts, "
                  "'2021-03-21' as dt union all select 3 as id, 'a3' as name, 10.3 as price, 1003 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched then update set * "
                  "when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  f"reset {_SMALL_FILES}")


def _dup_key_no_precombine(kind: str) -> Script:
    # "Test only insert for source table in dup key without preCombineField" (the small-file limit at its default)
    return script(f"mit2_dup_source_keys_no_precombine_{kind}",
                  create(_COLS + ", dt string", f"type = '{kind}', primaryKey = 'id'", "dt"),
                  f"set {_DUP_ON_INSERTS} = true",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10.1 as price, 1000 as ts, "
                  "'2021-03-21' as dt union all select 1 as id, 'a2' as name, 10.2 as price, 1002 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  "merge into {t} as t0 using (select 3 as id, 'a3' as name, 10.3 as price, 1003 as ts, "
                  "'2021-03-21' as dt union all select 1 as id, 'a2' as name, 10.4 as price, 1004 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched then update set * "
                  "when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  f"reset {_DUP_ON_INSERTS}")


def _nvl() -> Script:
    # "Test Merge into with RuntimeReplaceable func such as nvl"
    return script("mit2_runtime_replaceable_nvl",
                  create(_COLS + ", dt string", "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  f"set {_DUP_ON_INSERTS} = false",
                  "insert into {t} values (1, 'a1', 10, 1000, '2021-03-21'), (3, 'a3', 10, 2000, '2021-03-21')",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10.1 as price, 1003 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched then update set t0.ts = s0.ts, "
                  "t0.price = if(nvl(s0.price,0) <> nvl(t0.price,0), s0.price, t0.price) "
                  "when not matched then insert *",
                  "select id, name, price, ts, dt from {t}",
                  f"reset {_DUP_ON_INSERTS}")


def _empty_partitions() -> Script:
    # "Test MOR Table with create empty partitions"
    props = "type = 'mor', primaryKey = 'id', preCombineField = 'ts'"
    return script("mit2_mor_no_empty_partitions",
                  create(_COLS + ", dt string", props, "dt", table="{s}"),
                  f"set {_DUP_ON_INSERTS} = false",
                  "insert into {s} values(1, 'a1', cast(3.01 as double), 11, '2022-09-26'),"
                  "(2, 'a2', cast(3.02 as double), 12, '2022-09-27'),(3, 'a3', cast(3.03 as double), 13, '2022-09-28'),"
                  "(4, 'a4', cast(3.04 as double), 14, '2022-09-29')",
                  "select id, name, price, ts, dt from {s} order by id",
                  create(_COLS + ", dt string", props, "dt"),
                  "insert into {t} values(1, 'd1', cast(3.01 as double), 11, '2022-09-26'),"
                  "(2, 'd2', cast(3.02 as double), 12, '2022-09-26'),(3, 'd3', cast(3.03 as double), 13, '2022-09-26')",
                  "select id, name, price, ts, dt from {t} order by id",
                  "merge into {t} h0 using (select id, name, price, ts, dt from {s}) s0 "
                  "on h0.id = s0.id and h0.dt = s0.dt when matched then update set *",
                  "select id, name, price, ts, dt from {t} order by id",
                  "show partitions {t}",
                  f"reset {_DUP_ON_INSERTS}",
                  tables=("t", "s"))


def _anti_patterns(kind: str, mode: str) -> Script:
    # "Test MergeInto Anti-Patterns of assignment clauses" (written for Hudi 1.x's recordMergeMode)
    missing_key_update = [
        Statement("merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 1001 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched and s0.id = 1 then update set "
                  "name = s0.name, price = s0.price, ts = s0.ts, dt = s0.dt when matched and s0.id = 2 then "
                  "update set *", expect=_NO_KEY_ASSIGNMENT),
        Statement("merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 1001 as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when matched then update set "
                  "name = s0.name, price = s0.price, ts = s0.ts, dt = s0.dt", expect=_NO_KEY_ASSIGNMENT),
    ] if kind == "mor" else []
    source = "select 2 as id, 'a2' as name, 12 as price, 1002 as ts, '2021-03-21' as dt"
    last = (f"merge into {{t}} as t0 using ({source}) as s0 on t0.id = s0.id when not matched and s0.id = 1 then "
            "insert (id, name, price, dt) values (s0.id, s0.name, s0.price, s0.dt) "
            "when not matched and s0.id = 2 then insert *")
    return script(f"mit2_assignment_anti_patterns_{kind}_{mode.split('_')[0].lower()}",
                  f"set {_PARTIAL} = false",
                  create("id int, name string, price double, ts int, dt string",
                         f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts', recordMergeMode = '{mode}'",
                         "dt"),
                  "insert into {t} values (1, 'a1', 10, 1000, '2021-03-21')",
                  *missing_key_update,
                  Statement(f"merge into {{t}} as t0 using ({source}) as s0 on t0.id = s0.id "
                            "when not matched and s0.id = 1 then insert (name, price, ts, dt) "
                            "values (s0.name, s0.price, s0.ts, s0.dt) when not matched and s0.id = 2 then insert *",
                            expect=_NO_KEY_ASSIGNMENT),
                  Statement(f"merge into {{t}} as t0 using ({source}) as s0 on t0.id = s0.id "
                            "when not matched then insert (name, price, ts, dt) "
                            "values (s0.name, s0.price, s0.ts, s0.dt)", expect=_NO_KEY_ASSIGNMENT),
                  last if mode == "COMMIT_TIME_ORDERING" else
                  Statement(last, expect="No matching assignment found for target table precombine field `ts`"),
                  "select id, name, price, ts, dt from {t} order by id",
                  f"reset {_PARTIAL}")


def _allowed_patterns(kind: str, mode: str) -> Script:
    # "Test merge into Allowed-patterns of assignment clauses"
    return script(f"mit2_assignment_allowed_patterns_{kind}_{mode.split('_')[0].lower()}",
                  f"set {_PARTIAL} = false",
                  create("id int, name string, value int, ts int",
                         f"type = '{kind}', primaryKey ='id', preCombineField = 'ts', recordMergeMode = '{mode}'",
                         "value"),
                  "insert into {t} select 1 as id, 'a1' as name, 10 as value, 1000 as ts",
                  "merge into {t} h0 using (select 1 as id, 1003 as ts) s0 on h0.id = s0.id "
                  "when matched then update set h0.id = s0.id",
                  "select id, name, value, ts from {t}",
                  f"reset {_PARTIAL}")


def _various_payloads(mode: str) -> Script:
    # "Test MergeInto with various payloads"
    cols = "id INT, name STRING, price INT, ts BIGINT"
    return script(f"mit2_various_payloads_{mode.split('_')[0].lower()}",
                  f"CREATE TABLE {{s}} ({cols}) USING hudi",
                  "INSERT INTO {s} VALUES (1, 'John Doe', 19, 1), (4, 'Alice Johnson', 49, 2)",
                  create(cols, f"type = 'cow', primaryKey = 'id', preCombineField = 'ts', recordMergeMode = '{mode}'"),
                  "INSERT INTO {t} SELECT id, name, price, ts FROM (SELECT 1 as id, 'John Doe' as name, 19 as price, "
                  "1598886001 as ts UNION ALL SELECT 2, 'Jane Doe', 24, 1598972400 UNION ALL "
                  "SELECT 3, 'Bob Smith', 14, 1599058800)",
                  "MERGE INTO {t} t USING {s} s ON t.price = s.price WHEN MATCHED THEN UPDATE SET t.id = s.id, "
                  "t.name = s.name, t.price = s.price, t.ts = s.ts WHEN NOT MATCHED THEN INSERT (id, name, price, ts) "
                  "VALUES (s.id, s.name, s.price, s.ts)",
                  "select id, name, price, ts from {t} ORDER BY id",
                  tables=("t", "s"))


# TestMergeIntoTableWithNonRecordKeyField

def _extra_cond(optimized: bool) -> Script:
    # "Test Merge into extra cond"
    merge3 = ("merge into {t3} as t0 using (select * from {t2}) as s0 on t0.id = s0.id when matched then update set "
              "id = t0.id, name = t0.name, price = t0.price, ts = s0.ts when not matched then insert "
              "(id,name,price,ts) values(s0.id, s0.name, s0.price, s0.ts)")
    # 0.15.0 spells it "... on all primary key colums. Column: 'name' not found"
    tail = [Statement(merge3, expect="Hudi tables with primary key are required to match on all primary key")] \
        if optimized else \
        [merge3, "select id, name, price, ts from {t3}"]
    return script(f"mitnrk_extra_cond_{'optimized' if optimized else 'plain'}",
                  create(_COLS, "primaryKey ='id', preCombineField = 'ts'"),
                  create(_COLS, "primaryKey ='id', preCombineField = 'ts'", table="{t2}"),
                  "insert into {t} values (1, 'a1', 10, 100), (2, 'a2', 20, 200), (3, 'a3', 20, 100)",
                  "insert into {t2} values (1, 'u1', 10, 999), (3, 'u3', 30, 9999), (4, 'u4', 40, 99999)",
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "merge into {t} as oldData using {t2} on oldData.id = {t2}.id "
                  "when matched and oldData.price = {t2}.price then update set oldData.name = {t2}.name",
                  "select id, name, price, ts from {t}",
                  "merge into {t} as oldData using {t2} on oldData.id = {t2}.id and oldData.price = {t2}.price "
                  "when matched then update set oldData.name = {t2}.name when not matched then insert *",
                  "select id, name, price, ts from {t}",
                  create(_COLS, "primaryKey ='id,name', preCombineField = 'ts'", table="{t3}"),
                  "insert into {t3} values (1, 'a1', 10, 100), (2, 'a2', 20, 200), (3, 'u3', 20, 100)",
                  *tail,
                  f"reset {OPTIMIZED}",
                  tables=("t", "t2", "t3"))


_PKLESS = "id int, name string, price double, ts int"


def _pkless_complex_cond() -> Script:
    # "Test pkless complex merge cond"
    return script("mitnrk_pkless_complex_cond",
                  f"set {_VALIDATE} = true",
                  f"set {OPTIMIZED}=true",
                  create(_PKLESS, "preCombineField = 'ts'"),
                  "insert into {t} values (1, 'a1', 10, 100), (2, 'a2', 20, 100), (3, 'a3', 30, 100), "
                  "(4, 'a4', 40, 100), (5, 'a5', 50, 100), (6, 'a6', 60, 100)",
                  "merge into {t} using (select 2 as id, 'a1' as name, 50 as price, 999 as ts) s0 "
                  "on {t}.price < s0.price and {t}.id >= s0.id when matched then update set ts = s0.ts "
                  "when not matched then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select 1 as id, 'a1' as name, 50 as price, 999 as ts) s0 "
                  "on {t}.id < s0.id when matched then update set ts = s0.ts when not matched then insert *",
                  "select id, name, price, ts from {t}",
                  f"reset {OPTIMIZED}",
                  f"reset {_VALIDATE}")


def _pkless_multiple_match(precombine: bool) -> Script:
    # "Test pkless multiple source match"
    return script(f"mitnrk_pkless_multiple_source_match{'_precombine' if precombine else ''}",
                  f"set {_VALIDATE} = true",
                  create(_PKLESS, "preCombineField = 'ts'" if precombine else ""),
                  "insert into {t} values (1, 'a1', 10, 100)",
                  "merge into {t} using (select 1 as id, 'a1' as name, 20 as price, 200 as ts union all "
                  "select 2 as id, 'a1' as name, 30 as price, 100 as ts) s0 on {t}.name = s0.name "
                  "when matched then update set price = s0.price when not matched then insert *",
                  "select id, name, price, ts from {t}",
                  f"reset {_VALIDATE}")


def _pkless_basic() -> Script:
    # "Test MergeInto Basic pkless"
    return script("mitnrk_basic_pkless",
                  f"set {_VALIDATE} = true",
                  f"set {OPTIMIZED}=true",
                  create(_PKLESS, "preCombineField = 'ts'"),
                  "merge into {t} using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts, '1' as flag) s0 "
                  "on s0.id = {t}.id when matched and flag = '1' then update set id = s0.id, name = s0.name, "
                  "price = s0.price, ts = s0.ts when not matched and flag = '1' then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select 1 as id, 'a1' as name, 10 as price, 1001 as ts) s0 "
                  "on s0.id = {t}.id when matched then update set id = s0.id, name = s0.name, "
                  "price = s0.price + {t}.price, ts = s0.ts when not matched then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select * from (select 1 as id, 'a1' as name, 10 as price, 1002 as ts "
                  "union all select 2 as id, 'a2' as name, 12 as price, 1001 as ts)) s0 on s0.id = {t}.id "
                  "when matched then update set id = s0.id, name = s0.name, price = s0.price + {t}.price, "
                  "ts = s0.ts when not matched and s0.id % 2 = 0 then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select 1 as id, 'a1' as name, 12 as price, 1003 as ts) s0 "
                  "on s0.id = {t}.id when matched and s0.id != 1 then update set id = s0.id, name = s0.name, "
                  "price = s0.price, ts = s0.ts when matched and s0.id = 1 then delete when not matched then insert *",
                  "select * from {t} where id = 1",
                  f"reset {OPTIMIZED}",
                  f"reset {_VALIDATE}")


_MODES = ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING")

SCRIPTS: list[Script] = [
    _mor_table_2(),
    _ctas_table(),
    _complex_types(),
    _column_name_matching(),
    _column_aliases(),
    _history_insert(),
    _history_insert_multi_key(),
    _different_column_order(),
    _string_to_double(),
    _default_payload(),
    *[_dup_key_precombine(k) for k in _KINDS],
    *[_dup_key_no_precombine(k) for k in _KINDS],
    _nvl(),
    _empty_partitions(),
    _extra_cond(True),
    _pkless_complex_cond(),
    *[_pkless_multiple_match(p) for p in (True, False)],
    _pkless_basic(),
]
"""TestMergeIntoTable2's and TestMergeIntoTableWithNonRecordKeyField's cases in the default run."""

EXTENDED: list[Script] = [
    *[_anti_patterns(k, m) for k in _KINDS for m in _MODES],
    *[_allowed_patterns(k, m) for k in _KINDS for m in _MODES],
    *[_various_payloads(m) for m in ("EVENT_TIME_ORDERING", "OVERWRITE_WITH_LATEST")],
    _extra_cond(False),
]
"""Hudi 1.x's merge-mode cases (``recordMergeMode``, unknown to 0.15.0) and the optimized-writes-off repetition."""
