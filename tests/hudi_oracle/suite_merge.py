"""Hudi's ``TestMergeIntoTable`` (hudi-spark, ``org.apache.spark.sql.hudi.dml``) as oracle scripts.

One script per test case and per value of its table-type loop; loops over data types become one script with a
table per type. ``withRecordType()`` (AVRO and SPARK record mergers) runs the default merger only; ``location``
clauses are dropped; ``validateTableSchema`` (a Scala check of the catalog schema) is left out, the SELECTs after it
compare the columns anyway. Session keys a script sets are reset at its end.
"""

from __future__ import annotations

from tests.hudi_oracle.scripts import OPTIMIZED, Script, Statement, create, script

_COLS = "id int, name string, price double, ts long"
_VALIDATE = "hoodie.payload.combined.schema.validate"
_SMALL_FILES = "hoodie.merge.small.file.group.candidates.limit"
_SIMPLE_CONDITIONS = "Only simple conditions of the form `t.id = s.id` are allowed on the primary-key and partition"
_PRECOMBINE_UNRESOLVED = "Failed to resolve pre-combine field `v` w/in the source-table output"
"""0.15.0's spelling (the stored suite, newer, says "precombine")."""
_KINDS = ("cow", "mor")


def _flag(optimized: bool) -> str:
    return "optimized" if optimized else "plain"


def _basic(optimized: bool) -> Script:
    # "Test MergeInto Basic"
    return script(f"mit_basic_{_flag(optimized)}",
                  f"set {_VALIDATE} = false",
                  create(_COLS, "primaryKey ='id', preCombineField = 'ts'"),
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "merge into {t} using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts, '1' as flag) s0 "
                  "on s0.id = {t}.id when matched and flag = '1' then update set "
                  "id = s0.id, name = s0.name, price = s0.price, ts = s0.ts when not matched and flag = '1' then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select 1 as _id, 'a1' as name, 10 as _price, 1001 as _ts) s0 "
                  "on s0._id = {t}.id when matched then update set "
                  "id = s0._id, name = s0.name, price = s0._price + {t}.price, ts = s0._ts",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select * from (select 1 as id, 'a1' as name, 10 as price, 1002 as ts "
                  "union all select 2 as id, 'a2' as name, 12 as price, 1001 as ts)) s0 "
                  "on s0.id = {t}.id when matched then update set "
                  "id = s0.id, name = s0.name, price = s0.price + {t}.price, ts = s0.ts "
                  "when not matched and s0.id % 2 = 0 then insert *",
                  "select id, name, price, ts from {t}",
                  "merge into {t} using (select 1 as id, 'a1' as name, 12 as price, 1003 as ts) s0 "
                  "on s0.id = {t}.id when matched and s0.id != 1 then update set "
                  "id = s0.id, name = s0.name, price = s0.price, ts = s0.ts "
                  "when matched and s0.id = 1 then delete when not matched then insert *",
                  "select * from {t} where id = 1",
                  f"reset {OPTIMIZED}",
                  f"reset {_VALIDATE}")


def _more_than_once_update() -> Script:
    # "Test MergeInto with more than once update actions"
    return script("mit_more_than_once_update",
                  create("id int, name string, data int, country string, ts bigint",
                         "type = 'cow', primaryKey = 'id', preCombineField = 'ts'", "country"),
                  "merge into {t} as target using (select 1 as id, 'lb' as name, 6 as data, 'shu' as country, "
                  "1646643193 as ts) source on source.id = target.id "
                  "when matched then update set * when not matched then insert *",
                  "merge into {t} as target using (select 1 as id, 'lb' as name, 5 as data, 'shu' as country, "
                  "1646643196 as ts) source on source.id = target.id "
                  "when matched and source.data > target.data then update set target.data = source.data, "
                  "target.ts = source.ts "
                  "when matched and source.data = 5 then update set target.data = source.data, target.ts = source.ts "
                  "when not matched then insert *",
                  "select id, name, data, country, ts from {t}")


def _global_index_merge(source: str) -> str:
    return (f"merge into {{t}} as target using ({source}) source on source.id = target.id "
            "when matched then update set * when not matched then insert *")


def _global_index() -> Script:
    # "Test Merge Into with Global Index" (HUDI-7131)
    return script("mit_global_bloom_index",
                  "set hoodie.index.type = GLOBAL_BLOOM",
                  create("id int, version int, name string, inc_day string", "type = 'cow', primaryKey = 'id'",
                         "inc_day"),
                  _global_index_merge("select 1 as id, 1 as version, 'str_1' as name, '2023-10-01' as inc_day"),
                  _global_index_merge("select 1 as id, 2 as version, 'str_2' as name, '2023-10-01' as inc_day"),
                  "select id, version, name, inc_day from {t}",
                  _global_index_merge("select 1 as id, 2 as version, 'str_2' as name, '2023-10-02' as inc_day"),
                  "select id, version, name, inc_day from {t}",
                  "reset hoodie.index.type")


def _ignored_record() -> Script:
    # "Test MergeInto with ignored record"
    return script("mit_ignored_record",
                  f"set {_VALIDATE} = true",
                  create(_COLS, "", table="{s}", using="parquet"),
                  create(_COLS, "primaryKey ='id', preCombineField = 'ts'"),
                  "insert into {s} values(1, 'a1', 10, 1000)",
                  "insert into {s} values(2, 'a2', 11, 1000)",
                  "merge into {t} as t0 using (select * from {s}) as s0 on t0.id = s0.id "
                  "when matched then update set * when not matched and s0.name = 'a1' then insert *",
                  "select id, name, price, ts from {t}",
                  "insert into {t} select 3, 'a3', 12, 1000",
                  "select id, name, price, ts from {t}",
                  "merge into {t} as t0 using (select * from (select 1 as s_id, 'a1' as name, 20 as price, 1001 as ts "
                  "union all select 3 as s_id, 'a3' as name, 20 as price, 1003 as ts "
                  "union all select 4 as s_id, 'a4' as name, 10 as price, 1004 as ts)) s0 on s0.s_id = t0.id "
                  "when matched and s0.ts = 1001 then update set id = s0.s_id, name = t0.name, price = s0.price, "
                  "ts = s0.ts",
                  "select id, name, price, ts from {t}",
                  f"reset {_VALIDATE}",
                  tables=("t", "s"))


def _changing_partition(kind: str, update_partition_path: bool) -> Script:
    # "Test MergeInto with changing partition and global index"
    flag = str(update_partition_path).lower()
    return script(f"mit_changing_partition_global_simple_{kind}_{'move' if update_partition_path else 'stay'}",
                  "set hoodie.index.type = GLOBAL_SIMPLE",
                  f"set hoodie.simple.index.update.partition.path = {flag}",
                  create("id int, version int, mergeCond string, partition string",
                         f"'primaryKey' = 'id', 'type' = '{kind}', "
                         "'payloadClass' = 'org.apache.hudi.common.model.DefaultHoodieRecordPayload', "
                         "'payloadType' = 'CUSTOM', preCombineField = 'version'", "partition"),
                  *[f"insert into {{t}} values({i}, 1, 'insert', '2023-10-01')" for i in range(1, 7)],
                  create("id int, version int, mergeCond string, partition string", "", "partition", table="{s}",
                         using="parquet"),
                  "insert into {s} values(1, 2, 'yes', '2023-10-02')",
                  "insert into {s} values(2, 2, 'no', '2023-10-02')",
                  "insert into {s} values(3, 2, 'yes', '2023-10-01')",
                  "insert into {s} values(4, 2, 'no', '2023-10-01')",
                  "insert into {s} values(5, 2, 'delete', '2023-10-02')",
                  "insert into {s} values(6, 2, 'delete', '2023-10-01')",
                  "insert into {s} values(7, 1, 'insert', '2023-10-01')",
                  "merge into {t} t using (select * from {s}) as s on t.id=s.id "
                  "when matched and s.mergeCond = 'yes' then update set * "
                  "when matched and s.mergeCond = 'delete' then delete when not matched then insert *",
                  "select id,version,_hoodie_partition_path from {t} order by id",
                  "reset hoodie.simple.index.update.partition.path",
                  "reset hoodie.index.type",
                  tables=("t", "s"))


def _mor_table() -> Script:
    # "Test MergeInto for MOR table"
    return script("mit_mor_table",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create(_COLS + ", dt string", "type = 'mor', primaryKey = 'id', preCombineField = 'ts'", "dt"),
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10 as price, 1000L as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 1 then insert *",
                  "select id,name,price,dt from {t}",
                  "merge into {t} as t0 using (select 1 as _id, 'a1' as name, 12 as _price, 1001L as _ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0._id when matched and s0._id % 2 = 0 then update set "
                  "id = s0._id, name = s0.name, price = s0._price, ts = s0._ts, dt = s0.dt",
                  "select id,name,price,dt from {t}",
                  "merge into {t} as t0 using (select 1 as _id, 'a1' as name, 12 as _price, 1001L as _ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0._id when matched and s0._id % 2 = 1 then update set "
                  "id = s0._id, name = s0.name, price = s0._price, ts = s0._ts, dt = s0.dt",
                  "select id,name,price,dt from {t}",
                  "merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 1000L as ts, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id when not matched and s0.id % 2 = 0 then insert *",
                  "select id,name,price,dt from {t} order by id",
                  "merge into {t} t0 using (select 2 as s_id, 'a2' as s_name, 15 as s_price, 1001L as s_ts, "
                  "'2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s_ts = 1001 "
                  "then update set id = s_id, name = s_name, price = s_price, ts = s_ts, t0.dt = s0.dt",
                  "select id,name,price,dt from {t} order by id",
                  Statement("merge into {t} t0 using (select 1 as s_id, 'a2' as s_name, 15 as s_price, 1001L as s_ts, "
                            "'2021-03-21' as dt) s0 on t0.id = s0.s_id + 1 when matched and s_ts = 1001 then delete",
                            expect=_SIMPLE_CONDITIONS),
                  "merge into {t} t0 using (select 2 as s_id, 'a2' as s_name, 15 as s_price, 1001L as ts, "
                  "'2021-03-21' as dt) s0 on t0.id = s0.s_id when matched and s0.ts = 1001 then delete",
                  "select id,name,price,dt from {t} order by id",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _insert_only() -> Script:
    # "Test MergeInto with insert only"
    return script("mit_insert_only",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id bigint, name string, price double, dt string", "type = 'mor', primaryKey = 'id'", "dt"),
                  "insert into {t} select 1, 'a1', 10, '2021-03-21'",
                  "merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 1000 as ts, "
                  "'2021-03-20' as dt) s0 on s0.id = t0.id when not matched and s0.id % 2 = 0 then "
                  "insert (id,name,price,dt) values(s0.id,s0.name,s0.price,s0.dt)",
                  "select id,name,price,dt from {t} order by id",
                  "merge into {t} as t0 using (select 3 as id, 'a3' as name, 10 as price, 1000 as ts, "
                  "'2021-03-20' as dt) s0 on s0.id = t0.id when not matched and s0.id % 2 = 0 then "
                  "insert (id,name,price,dt) values(s0.id,s0.name,s0.price,s0.dt)",
                  "select id,name,price,dt from {t} order by id",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _precombine_merge(price: int, v: int, clause: str) -> str:
    return (f"merge into {{t}} as t0 using (select 1 as id, 'a1' as name, {price} as price, {v} as v, "
            f"'2021-03-21' as dt) as s0 on t0.id = s0.id {clause}")


def _precombine_field(kind: str) -> Script:
    # "Test MergeInto For PreCombineField"
    return script(f"mit_precombine_field_{kind}",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id int, name string, price double, v long, dt string",
                         f"type = '{kind}', primaryKey = 'id', preCombineField = 'v', "
                         "hoodie.compaction.payload.class = 'org.apache.hudi.common.model.DefaultHoodieRecordPayload'",
                         "dt"),
                  _precombine_merge(10, 1001, "when not matched and s0.id % 2 = 1 then insert *"),
                  "select id,name,price,dt,v from {t}",
                  _precombine_merge(11, 1000, "when matched and s0.id % 2 = 1 then update set *"),
                  "select id,name,price,dt,v from {t}",
                  _precombine_merge(12, 1002, "when matched and s0.id % 2 = 1 then update set *"),
                  "select id,name,price,dt,v from {t}",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _precombine_expression(kind: str) -> Script:
    # "Test MergeInto with preCombine field expression"
    return script(f"mit_precombine_expression_{kind}",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id int, name string, price double, v long, dt string",
                         f"type = '{kind}', primaryKey = 'id', preCombineField = 'v'", "dt"),
                  "insert into {t} values(1, 'a1', 10, 1000, '2021-03-21')",
                  "merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 999 as v, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.id "
                  "when matched then update set id=s0.id, name=s0.name, price=s0.price*2, v=s0.v+2, dt=s0.dt",
                  "select id,name,price,dt,v from {t}",
                  Statement("merge into {t} as t0 using (select 1 as s_id, 'a1' as s_name, 12 as s_price, "
                            "1000 as s_v, '2021-03-21' as dt) as s0 on t0.id = s0.s_id when matched then update set "
                            "id=s0.s_id, name=s0.s_name, price=s0.s_price*2, v=s0.s_v+2, dt=s0.dt",
                            expect=_PRECOMBINE_UNRESOLVED),
                  "merge into {t} as t0 using (select 1 as s_id, 'a1' as s_name, 12 as s_price, 1000 as v, "
                  "'2021-03-21' as dt) as s0 on t0.id = s0.s_id when matched then update set "
                  "id=s0.s_id, name=s0.s_name, price=s0.s_price*2, v=s0.v+2, dt=s0.dt",
                  "select id,name,price,dt,v from {t}",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _primary_key_expression() -> Script:
    # "Test MergeInto with primaryKey expression"
    return script("mit_primary_key_expression",
                  f"set {_VALIDATE} = true",
                  create("id int, name string, price double, v long, dt string",
                         "type = 'cow', primaryKey = 'id', preCombineField = 'v'", "dt"),
                  "insert into {t} values(3, 'a3', 30, 3000, '2021-03-21')",
                  "insert into {t} values(2, 'a2', 20, 2000, '2021-03-21')",
                  "insert into {t} values(1, 'a1', 10, 1000, '2021-03-21')",
                  Statement("merge into {t} t0 using (select 1 as id, 'a1' as name, 15 as price, 1001 as v, "
                            "'2021-03-21' as dt) s0 on t0.id = s0.id + 1 when matched then delete",
                            expect=_SIMPLE_CONDITIONS),
                  "merge into {t} t0 using (select 2 as id, 'a2' as name, 20 as price, 2000 as v, "
                  "'2021-03-21' as dt) s0 on t0.id = s0.id when matched then delete",
                  "select id,name,price,v,dt from {t} order by id",
                  Statement("merge into {t} t0 using (select 3 as s_id, 'a3' as s_name, 30 as s_price, 3000 as s_v, "
                            "'2021-03-21' as dt) s0 on t0.id = s0.s_id when matched then delete",
                            expect=_PRECOMBINE_UNRESOLVED),
                  "merge into {t} t0 using (select 3 as s_id, 'a3' as s_name, 30 as s_price, 3000 as v, "
                  "'2021-03-21' as dt) s0 on t0.id = s0.s_id when matched then delete",
                  "select id,name,price,v,dt from {t} order by id",
                  f"reset {_VALIDATE}")


def _delete_update_insert() -> Script:
    # "Test MergeInto with combination of delete update insert"
    return script("mit_delete_update_insert",
                  f"set {_VALIDATE} = true",
                  create(_COLS + ", dt string", "", table="{s}", using="parquet"),
                  *[f"insert into {{s}} values({i}, 's{i}', {i * 10}, {2000 + i}, '2021-03-21')" for i in range(8, 13)],
                  create(_COLS + ", dt string", "primaryKey ='id', preCombineField = 'ts'", "dt"),
                  *[f"insert into {{t}} values({i}, 'a{i}', {i * 10}, {1000 + i}, '2021-03-21')" for i in range(7, 11)],
                  "merge into {t} as t0 using {s} as s0 on t0.id = s0.id "
                  "when matched and s0.id = 10 then delete "
                  "when matched and s0.id < 10 then update set id=s0.id, name='sxx', price=s0.price*2, "
                  "ts=s0.ts+10000, dt=s0.dt when not matched and s0.id > 10 then insert *",
                  "select id,name,price,ts,dt from {t} order by id",
                  f"reset {_VALIDATE}",
                  tables=("t", "s"))


def _hudi_to_hudi(kind: str) -> Script:
    # "Merge Hudi to Hudi"; its incremental reads (spark.read ... QUERY_TYPE_INCREMENTAL with the commit completion
    # times read from the file system) are Scala API calls: left out.
    cols = "id int, name string, price double, _ts long"
    props = f"type ='{kind}', primaryKey = 'id', preCombineField = '_ts'"
    return script(f"mit_hudi_to_hudi_{kind}",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create(cols, props, table="{s}"),
                  create(cols, props),
                  "insert into {s} values(1, 'a1', 10, 1000)",
                  "merge into {t} t0 using {s} s0 on t0.id = s0.id when not matched then insert *",
                  "select id, name, price, _ts from {t}",
                  "update {s} set price = 12, _ts = 1001 where id = 1",
                  "merge into {t} t0 using {s} s0 on t0.id = s0.id "
                  "when matched and cast(s0._ts as string) > '1000' then update set *",
                  "select id, name, price, _ts from {t}",
                  "insert into {s} values(2, 'a2', 10, 1001)",
                  "merge into {t} t0 using {s} s0 on t0.id = s0.id when matched then update set * "
                  "when not matched and s0.name = 'a2' then insert *",
                  "select id, name, price, _ts from {t} order by id",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}",
                  tables=("t", "s"))


_PRECOMBINE_TYPES = (("string", "'1000'"), ("int", "1000"), ("bigint", "10000"),
                     ("timestamp", "'2021-05-20 00:00:00'"), ("date", "'2021-05-20'"))


def _precombine_types() -> Script:
    # "Test Different Type of PreCombineField": one table per type
    statements: list[str] = [f"set {_VALIDATE} = true"]
    for data_type, value in _PRECOMBINE_TYPES:
        t = "{" + data_type + "}"
        statements += [
            create(f"id int, name string, price double, c {data_type}", "primaryKey ='id', preCombineField = 'c'",
                   table=t),
            f"merge into {t} using (select 1 as id, 'a1' as name, 10 as price, {value} as c, '1' as flag) s0 "
            f"on s0.id = {t}.id when matched and flag = '1' then update set * "
            "when not matched and flag = '1' then insert *",
            f"select id, name, price from {t}",
            f"merge into {t} using (select 1 as id, 'a1' as name, 10 as price, {value} as c) s0 on s0.id = {t}.id "
            f"when matched then update set id = s0.id, name = s0.name, price = s0.price + {t}.price, c = s0.c "
            "when not matched then insert *",
            f"select id, name, price from {t}"]
    statements.append(f"reset {_VALIDATE}")
    return script("mit_precombine_types", *statements, tables=tuple(t for t, _ in _PRECOMBINE_TYPES))


def _compaction_on() -> Script:
    # "Test MergeInto For MOR With Compaction On"
    return script("mit_mor_compaction_inline",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create(_COLS, "primaryKey ='id', type = 'mor', preCombineField = 'ts', hoodie.compact.inline = 'true'"),
                  *[f"insert into {{t}} values({i}, 'a{i}', 10, 1000)" for i in range(1, 5)],
                  "select id, name, price, ts from {t} order by id",
                  "merge into {t} h0 using (select 4 as _id, 'a4' as name, 11 as _price, 1000 as ts) s0 "
                  "on h0.id = s0._id when matched then update set id = s0._id, name = s0.name, price = s0._price, "
                  "ts = s0.ts",
                  "select id, name, price, ts from {t} order by id",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


_NULL_TYPES = ("string", "int", "bigint", "double", "float", "timestamp", "date", "decimal")
_VALUE_TYPES = (("string", "'a1'"), ("int", "10"), ("bigint", "10"), ("double", "10.0"), ("float", "10.0"),
                ("decimal(5,2)", "10.11"), ("decimal(5,0)", "10"), ("timestamp", "'2021-05-20 00:00:00'"),
                ("date", "'2021-05-20'"))


def _typed_inserts(name: str, cases: list[tuple[str, str]], column: str) -> Script:
    # "Test MereInto With Null Fields" / "Test MergeInto With All Kinds Of DataType": one table per type
    statements: list[str] = [f"set {_VALIDATE} = true"]
    tables = []
    for i, (data_type, value) in enumerate(cases):
        t = "{" + f"t{i}" + "}"
        tables.append(f"t{i}")
        statements += [
            create(f"id int, name string, value {data_type}, ts long", "primaryKey ='id', preCombineField = 'ts'",
                   table=t),
            f"merge into {t} h0 using (select 1 as id, 'a1' as name, cast({value} as {data_type}) as value, "
            "1000 as ts) s0 on h0.id = s0.id when not matched then insert *",
            f"select id, name, {column}, ts from {t}"]
    statements.append(f"reset {_VALIDATE}")
    return script(name, *statements, tables=tuple(tables))


def _no_full_fields() -> Script:
    # "Test MergeInto with no-full fields source"
    return script("mit_no_full_fields_source",
                  create("id int, name string, value int, ts long", "primaryKey ='id', preCombineField = 'ts'"),
                  "insert into {t} values(1, 'a1', 10, 1000)",
                  "merge into {t} h0 using (select 1 as id, 1001 as ts) s0 on h0.id = s0.id "
                  "when matched then update set h0.ts = s0.ts",
                  "select id, name, value, ts from {t}")


def _matched_columns_cast() -> Script:
    # "Test Merge Into with target matched columns cast-ed"
    cant_cast = "Invalid MERGE INTO matching condition: s0.id: can't cast s0.id (of LongType) to IntegerType"
    return script("mit_matched_columns_cast",
                  create("id int, name string, value int, ts long", "primaryKey ='id', preCombineField = 'ts'"),
                  "insert into {t} values(1, 'a1', 10, 1000)",
                  Statement("merge into {t} h0 using (select cast(1 as long) as id, 1001 as ts) s0 "
                            "on cast(h0.id as long) = s0.id when matched then update set h0.ts = s0.ts",
                            expect=cant_cast),
                  Statement("merge into {t} h0 using (select cast(1 as long) as id, 1002 as ts) s0 "
                            "on h0.id = s0.id when matched then update set h0.ts = s0.ts", expect=cant_cast),
                  "merge into {t} h0 using (select cast(1 as short) as id, 1003 as ts) s0 "
                  "on h0.id = s0.id when matched then update set h0.ts = s0.ts",
                  "select id, name, value, ts from {t}",
                  "merge into {t} h0 using (select cast(1 as int) as id, 1004 as ts) s0 "
                  "on cast(h0.id as string) = cast(s0.id as string) when matched then update set h0.ts = s0.ts",
                  "select id, name, value, ts from {t}")


def _partial_insert(optimized: bool) -> Script:
    # "Test MergeInto with partial insert"
    return script(f"mit_partial_insert_{_flag(optimized)}",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id bigint, name string, price double, dt string", "type = 'mor', primaryKey = 'id'", "dt"),
                  "insert into {t} select 1, 'a1', 10, '2021-03-21'",
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, '2021-03-20' as dt) s0 "
                  "on s0.id = t0.id when not matched and s0.id % 2 = 0 then insert (id, name, dt) "
                  "values(s0.id, s0.name, s0.dt)",
                  "select id, name, price, dt from {t} order by id",
                  f"reset {OPTIMIZED}",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


def _partial_update_insert(optimized: bool) -> Script:
    # "Test MergeInto with partial update and insert" (cow only: its mor cases wait for HUDI-8835)
    return script(f"mit_partial_update_insert_cow_{_flag(optimized)}",
                  f"set {_SMALL_FILES} = 0",
                  f"set {_VALIDATE} = true",
                  create("id bigint, name string, price double, ts bigint, dt string",
                         "type = 'cow', primaryKey = 'id'", "dt"),
                  "insert into {t} select 1, 'a1', 10, 1L, '2021-03-21'",
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "merge into {t} as t0 using (select 2 as id, 'a2' as name, 10 as price, 2L as ts, '2021-03-20' as dt "
                  "union select 1 as id, 'a1_updated' as name, 11 as price, 3L as ts, '2021-03-21' as dt) s0 "
                  "on s0.id = t0.id when matched then update set t0.id = s0.id, t0.name = s0.name "
                  "when not matched and s0.id % 2 = 0 then insert (id, name, dt) values(s0.id, s0.name, s0.dt)",
                  "select id, name, price, dt from {t} order by id",
                  f"reset {OPTIMIZED}",
                  f"reset {_VALIDATE}",
                  f"reset {_SMALL_FILES}")


_TWO_ROWS = ("insert into {t} partition(dt = '2024-01-14') select 1 as id, 'a1' as name, 10 as price, 1000 as ts "
             "union select 2 as id, 'a2' as name, 20 as price, 1002 as ts")


def _unresolved_columns(kind: str) -> Script:
    # "Test unresolved columns in Merge Into statement": Hudi checks Spark's message built from the tables' fields
    # (getExpectedUnresolvedColumnExceptionMessage); the column's name is the phrase both sides must carry.
    source = ("select 2 as _id, '2024-01-14' as dt, 'a2_new' as name, 25 as _price, 1005 as _ts union "
              "select 3 as _id, '2024-01-14' as dt, 'a3' as name, 30 as _price, 1003 as _ts")
    return script(f"mit_unresolved_columns_{kind}",
                  create("id int, dt string, name string, price double, ts long",
                         f"primaryKey = 'id', type = '{kind}'", "dt"),
                  _TWO_ROWS,
                  "select id, name, price, ts, dt from {t}",
                  Statement(f"merge into {{t}} using ({source}) s0 on s0._id = {{t}}.id when matched then update set "
                            "id = s0._id, dt = s0.dt, new_col = s0.name, price = s0._price + {t}.price, ts = s0._ts",
                            expect="new_col"),
                  Statement(f"merge into {{t}} using ({source}) s0 on s0._id = {{t}}.id when matched then update set "
                            "id = s0._id, dt = s0.dt, name = s0.new_col, price = s0._price + {t}.price, ts = s0._ts",
                            expect="new_col"))


def _no_schema_evolution(kind: str) -> Script:
    # "Test no schema evolution in MERGE INTO"
    return script(f"mit_no_schema_evolution_{kind}",
                  create("id int, dt string, name string, price double, ts long",
                         f"primaryKey = 'id', type = '{kind}'", "dt"),
                  _TWO_ROWS,
                  "select id, name, price, ts, dt from {t}",
                  Statement("merge into {t} using (select 2 as _id, '2024-01-14' as dt, 'a2_new' as name, "
                            "25 as _price, 1005 as _ts, 'x' as new_col union select 3 as _id, '2024-01-14' as dt, "
                            "'a3' as name, 30 as _price, 1003 as _ts, 'y' as new_col) s0 on s0._id = {t}.id "
                            "when matched then update set id = s0._id, dt = s0.dt, name = s0.name, "
                            "price = s0._price + {t}.price, ts = s0._ts, new_col = s0.new_col", expect="new_col"),
                  "merge into {t} using (select 3 as id, '2024-01-14' as dt, 'a3' as name, 30 as price, 1003 as ts, "
                  "'y' as new_col) s0 on s0.id = {t}.id when not matched then insert *",
                  "select id, name, price, ts, dt from {t}")


SCRIPTS: list[Script] = [
    _basic(True),
    _more_than_once_update(),
    _global_index(),
    _ignored_record(),
    _changing_partition("cow", True),
    _mor_table(),
    _insert_only(),
    *[_precombine_field(k) for k in _KINDS],
    *[_precombine_expression(k) for k in _KINDS],
    _primary_key_expression(),
    _delete_update_insert(),
    *[_hudi_to_hudi(k) for k in _KINDS],
    _precombine_types(),
    _compaction_on(),
    _typed_inserts("mit_null_fields", [(t, "null") for t in _NULL_TYPES], "value"),
    _typed_inserts("mit_all_data_types", list(_VALUE_TYPES), "cast(value as string)"),
    _no_full_fields(),
    _matched_columns_cast(),
    _partial_insert(True),
    _partial_update_insert(True),
    *[_unresolved_columns(k) for k in _KINDS],
    *[_no_schema_evolution(k) for k in _KINDS],
]
"""TestMergeIntoTable's cases in the default run."""

EXTENDED: list[Script] = [
    _basic(False),
    _changing_partition("cow", False),
    *[_changing_partition("mor", move) for move in (True, False)],
    _partial_insert(False),
    _partial_update_insert(False),
]
"""Their repetitions under other settings (``hoodie.spark.sql.optimized.writes.enable=false``, the other index
settings and table type of "changing partition and global index")."""
