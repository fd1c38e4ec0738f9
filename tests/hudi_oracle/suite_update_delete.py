"""Hudi's ``TestUpdateTable`` and ``TestDeleteTable`` (hudi-spark, ``org.apache.spark.sql.hudi.dml``) as oracle scripts.

One script per test case and per value of its loops over table types (and over
``hoodie.spark.sql.optimized.writes.enable``, set as the test sets it); Hudi's ``withRecordType()`` loop (AVRO and
SPARK record mergers) runs the default (AVRO) merger only; ``location`` clauses are dropped (managed tables).
Scripts that ``set`` a session key ``reset`` it last, so the next script starts from the defaults.
"""

from __future__ import annotations

from tests.hudi_oracle.scripts import OPTIMIZED, Script, create, script

_COLS = "id int, name string, price double, ts long"


def _select(cols: str = "id, name, price, ts", table: str = "{t}") -> str:
    return f"select {cols} from {table}"


def _update_table(kind: str) -> Script:
    # "Test Update Table": only Seq("mor") x Seq(true) in Hudi's loops
    return script(f"upd_update_table_{kind}",
                  create(_COLS, f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts'"),
                  "insert into {t} select 1, 'a1', 10, 1000",
                  _select(),
                  f"set {OPTIMIZED}=true",
                  "update {t} set price = 20 where id = 1",
                  _select(),
                  "update {t} set price = price * 2 where id = 1",
                  _select(),
                  f"reset {OPTIMIZED}")


def _update_no_pk(kind: str, partitioned: bool) -> Script:
    # "Test Update Table Without Primary Key"; its MOR-only compaction check compares a String with an enum
    # (never true) and reads the timeline through the Scala API: left out.
    return script(f"upd_no_pk_{kind}{'_part' if partitioned else ''}",
                  create("id int, price double, ts long, name string", f"type = '{kind}', preCombineField = 'ts'",
                         "name" if partitioned else ""),
                  "insert into {t} select 1, 10, 1000, 'a1'",
                  _select(),
                  f"set {OPTIMIZED}=true",
                  "update {t} set price = 20 where id = 1",
                  _select(),
                  "update {t} set price = price * 2 where id = 1",
                  _select(),
                  f"reset {OPTIMIZED}")


def _non_pk(name: str, kind: str, rows: str, dml: str, pt_dml: tuple[str, str]) -> Script:
    # "Test Update Table On Non-PK Condition" / "Test Delete Table On Non-PK Condition": a table, then a partitioned one
    props = f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts'"
    select_pt = _select("id, name, price, ts, pt", "{pt}")
    return script(name,
                  create(_COLS, props),
                  f"insert into {{t}} values {rows}",
                  _select(),
                  dml,
                  _select(),
                  create(_COLS + ", pt string", props, "pt", table="{pt}"),
                  "insert into {pt} values (1, 'a1', 10.0, 1000, \"2021\"), (2, 'a2', 20.0, 1000, \"2021\"), "
                  "(3, 'a2', 30.0, 1000, \"2022\")",
                  select_pt,
                  pt_dml[0],
                  select_pt,
                  pt_dml[1],
                  select_pt,
                  tables=("t", "pt"))


def _update_non_pk(kind: str) -> Script:
    return _non_pk(f"upd_non_pk_condition_{kind}", kind, "(1, 'a1', 10.0, 1000), (2, 'a2', 20.0, 1000)",
                   "update {t} set price = 11.0, ts = 1001 where name = 'a1'",
                   ("update {pt} set price = price * 1.1, ts = ts + 1 where name = 'a2'",
                    "update {pt} set price = price + 5, ts = ts + 1 where pt = '2021'"))


def _update_ignoring_case(kind: str) -> Script:
    # "Test ignoring case for Update Table"
    return script(f"upd_ignoring_case_{kind}",
                  create("ID int, NAME string, PRICE double, TS long",
                         f"type = '{kind}', primaryKey = 'ID', preCombineField = 'TS'", keyword="options"),
                  "insert into {t} select 1, 'a1', 10, 1000",
                  _select(),
                  "update {t} set PRICE = 20 where ID = 1",
                  _select(),
                  "update {t} set PRICE = PRICE * 2 where ID = 1",
                  _select())


def _update_decimal(optimized: bool) -> Script:
    # "Test decimal type"
    return script(f"upd_decimal_{'optimized' if optimized else 'plain'}",
                  create(_COLS + ", ff decimal(38, 10)", "type = 'mor', primaryKey = 'id', preCombineField = 'ts'"),
                  "insert into {t} select 1, 'a1', 10, 1000, 10.0",
                  _select(),
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "update {t} set price = 22 where id = 1",
                  _select("id, name, price, ts, ff"),
                  f"reset {OPTIMIZED}")


def _update_clustering(kind: str) -> Script:
    # "Test Update Table with Clustering": the clustering plan is scheduled through the Scala write client
    # (HoodieCLIUtils.createHoodieWriteClient ... scheduleClusteringAtInstant) and checked against its instant: left out.
    return script(f"upd_with_clustering_keygen_{kind}",
                  create(_COLS + ", partition long",
                         f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts', "
                         "hoodie.clustering.keygen.class = \"org.apache.hudi.keygen.NonpartitionedKeyGenerator\"",
                         "partition"),
                  "insert into {t} values(1, 'a1', 10, 1000, 1000)",
                  "insert into {t} values(2, 'a2', 10, 1001, 1001)",
                  "insert into {t} values(3, 'a3', 10, 1002, 1002)",
                  "update {t} set price = 20 where id > 1",
                  _select() + " where id > 1",
                  "update {t} set price = price * 2 where id = 2",
                  _select() + " where id = 2")


def _delete_table(kind: str, optimized: bool) -> Script:
    # "Test Delete Table"
    return script(f"del_delete_table_{kind}_{'optimized' if optimized else 'plain'}",
                  create(_COLS, f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts'"),
                  f"set {OPTIMIZED}={str(optimized).lower()}",
                  "insert into {t} select 1, 'a1', 10, 1000",
                  _select(),
                  "delete from {t} where id = 1",
                  "select count(1) from {t}",
                  "insert into {t} select 2, 'a2', 10, 1000",
                  "delete from {t} where id = 1",
                  _select(),
                  "delete from {t}",
                  "select count(1) from {t}",
                  f"reset {OPTIMIZED}")


def _delete_no_pk(kind: str, partitioned: bool) -> Script:
    # "Test Delete Table Without Primary Key"
    return script(f"del_no_pk_{kind}{'_part' if partitioned else ''}",
                  create("id int, price double, ts long, name string", f"type = '{kind}', preCombineField = 'ts'",
                         "name" if partitioned else ""),
                  f"set {OPTIMIZED}=true",
                  "insert into {t} select 1, 10, 1000, 'a1'",
                  _select(),
                  "delete from {t} where id = 1",
                  "select count(1) from {t}",
                  "insert into {t} select 2, 10, 1000, 'a2'",
                  "delete from {t} where id = 1",
                  _select(),
                  "delete from {t}",
                  "select count(1) from {t}",
                  f"reset {OPTIMIZED}")


def _delete_partitioned_no_pk(kind: str) -> Script:
    # "Test Delete From Partitioned Table Without Primary Key"
    return script(f"del_partitioned_no_pk_{kind}",
                  create(_COLS, f"type = '{kind}', preCombineField = 'price'", "ts"),
                  f"set {OPTIMIZED}=true",
                  "insert into {t} values (1, 'a1', cast(10.0 as double), 1000), "
                  "(2, 'a2', cast(20.0 as double), 1000), (3, 'a2', cast(30.0 as double), 1000)",
                  _select(),
                  "delete from {t} where id = 1",
                  _select(),
                  f"reset {OPTIMIZED}")


def _delete_non_pk(kind: str) -> Script:
    return _non_pk(f"del_non_pk_condition_{kind}", kind,
                   "(1, 'a1', 10.0, 1000), (2, 'a2', 20.0, 1000), (3, 'a2', 30.0, 1000)",
                   "delete from {t} where name = 'a2'",
                   ("delete from {pt} where name = 'a2'", "delete from {pt} where pt = '2021'"))


def _delete_op_upsert(kind: str) -> Script:
    # "Test Delete Table with op upsert"
    return script(f"del_op_upsert_{kind}",
                  create(_COLS, f"type = '{kind}', primaryKey = 'id', preCombineField = 'ts', "
                                "hoodie.datasource.write.operation = 'upsert'"),
                  "insert into {t} select 1, 'a1', 10, 1000",
                  _select(),
                  "delete from {t} where id = 1",
                  "select count(1) from {t}",
                  "insert into {t} select 2, 'a2', 10, 1000",
                  "delete from {t} where id = 1",
                  _select(),
                  "delete from {t}",
                  "select count(1) from {t}")


# "Test Delete single-partition table' partitions, urlencode" writes its table through the DataFrame API
# (df.write.format("hudi") with URL_ENCODE_PARTITIONING) before any SQL: left out.

KINDS = ("cow", "mor")

SCRIPTS: list[Script] = [
    _update_table("mor"),
    *[_update_no_pk(k, p) for k in KINDS for p in (True, False)],
    *[_update_non_pk(k) for k in KINDS],
    *[_update_ignoring_case(k) for k in KINDS],
    _update_decimal(True),
    *[_update_clustering(k) for k in KINDS],
    *[_delete_table(k, True) for k in KINDS],
    *[_delete_no_pk(k, p) for k in KINDS for p in (True, False)],
    *[_delete_partitioned_no_pk(k) for k in KINDS],
    *[_delete_non_pk(k) for k in KINDS],
    *[_delete_op_upsert(k) for k in KINDS],
]
"""The default run's scripts of both suites."""

EXTENDED: list[Script] = [
    _update_decimal(False),
    *[_delete_table(k, False) for k in KINDS],
]
"""The ``hoodie.spark.sql.optimized.writes.enable=false`` repetitions (``-m extended``)."""
