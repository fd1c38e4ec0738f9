"""SQL scripts the oracle runs on both sides: a fixed corpus ported from Apache Hudi's SQL test suites and
seeded random scripts.

A script's statements name its tables ``{t}`` (and ``{t2}``); each run substitutes fresh names. A statement may
carry ``expect``, a key phrase both sides' errors must contain (from the Hudi test's ``checkExceptionContain``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Statement:
    """One statement of a script; ``expect`` is the key phrase of the error it must fail with, if any."""

    sql: str
    expect: str | None = None


@dataclass
class Script:
    """A named list of statements over tables ``tables`` (placeholders without braces)."""

    name: str
    statements: list[Statement]
    tables: list[str] = field(default_factory=lambda: ["t"])


def script(name: str, *sql: str | Statement, tables: tuple[str, ...] = ("t",)) -> Script:
    """A :class:`Script` named ``name`` of the statements ``sql`` (plain strings become statements without ``expect``)."""
    return Script(name, [s if isinstance(s, Statement) else Statement(s) for s in sql], list(tables))


_COLS = "id int, name string, price double, ts long"
OPTIMIZED = "hoodie.spark.sql.optimized.writes.enable"
"""The key Hudi's suites loop over (``SPARK_SQL_OPTIMIZED_WRITES``)."""


def create(cols: str, props: str, part: str = "", table: str = "{t}", using: str = "hudi",
           keyword: str = "tblproperties") -> str:
    """``create table`` of ``cols`` with ``props`` (``tblproperties`` or ``options``), partitioned by ``part``."""
    parted = f" partitioned by ({part})" if part else ""
    options = f" {keyword} ({props})" if props else ""
    return f"create table {table} ({cols}) using {using}{parted}{options}"



def with_conf(conf: dict[str, str], *sql: str | Statement) -> list[str | Statement]:
    """``sql`` between ``set k = v`` for each of ``conf`` and ``reset k`` (as Hudi's ``withSQLConf``)."""
    return [*(f"set {k} = {v}" for k, v in conf.items()), *sql, *(f"reset {k}" for k in conf)]


CORPUS: list[Script] = [
    # TestCreateTable "Test Create Managed Hoodie Table" / "Test Create Hoodie Table With Options"
    script("create_managed_cow",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} values (1, 'a1', 10, 1000)",
            "select id, name, price, ts from {t}",
            "show tblproperties {t} ('primaryKey')"),
    script("create_bad_primary_key",
            Statement(f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id1')",
                      expect="id1")),
    script("create_bad_precombine",
            Statement(f"create table {{t}} ({_COLS}) using hudi "
                      "tblproperties (primaryKey = 'id', preCombineField = 'ts1')", expect="ts1")),
    # TestCreateTable "Test Create Table As Select" (partitioned and not)
    script("ctas_partitioned",
            "create table {t} using hudi partitioned by (dt) tblproperties (primaryKey = 'id') "
            "as select 1 as id, 'a1' as name, 10 as price, '2021-04-01' as dt",
            "select id, name, price, dt from {t}",
            "insert into {t} select 2 as id, 'a2' as name, 20 as price, '2021-04-02' as dt",
            "select * from {t}"),
    # TestInsertTable "Test Insert Into with values" / static partition / overwrite
    script("insert_static_partition",
            f"create table {{t}} ({_COLS}, dt string) using hudi partitioned by (dt) "
            "tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} partition (dt = '2021-01-05') select 1 as id, 'a1' as name, 10 as price, 1000 as ts",
            "insert into {t} select 2, 'a2', 10, 1000, '2021-01-06'",
            "select id, name, price, ts, dt from {t}",
            "insert overwrite table {t} partition (dt = '2021-01-05') select 1, 'a1x', 11, 1001",
            "select id, name, price, ts, dt from {t}",
            "insert overwrite table {t} select 3, 'a3', 12, 1002, '2021-01-07'",
            "select id, name, price, ts, dt from {t}"),
    # TestInsertTable "Test Insert Into with duplicate keys in one batch" (pk + preCombineField; 0.14+ insert mode)
    script("insert_duplicate_keys",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} values (1, 'a1', 10, 1000), (1, 'a2', 11, 1001), (2, 'b', 5, 1000)",
            "select id, name, price, ts from {t}",
            "insert into {t} values (1, 'a0', 9, 999)",
            "select id, name, price, ts from {t}"),
    # TestInsertTable "Test Insert Into MOR table" + upsert mode
    script("insert_mor_upsert_mode",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (type = 'mor', primaryKey = 'id', "
            "preCombineField = 'ts')",
            "set hoodie.spark.sql.insert.into.operation = upsert",
            "insert into {t} values (1, 'a1', 10, 1000), (2, 'a2', 20, 1000)",
            "insert into {t} values (1, 'a1b', 11, 999), (2, 'a2b', 21, 1001)",
            "select id, name, price, ts from {t}",
            "reset hoodie.spark.sql.insert.into.operation"),
    # TestInsertTable: too few columns
    script("insert_not_enough_columns",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id')",
            Statement("insert into {t} select 1, 'a1', 10", expect="")),
    # TestMergeIntoTable "Test MergeInto Basic"
    script("merge_basic",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "merge into {t} as t0 using (select 1 as id, 'a1' as name, 10 as price, 1000 as ts) as s0 "
            "on s0.id = t0.id when matched then update set * when not matched then insert *",
            "select id, name, price, ts from {t}",
            "merge into {t} as t0 using (select 1 as id, 'a1' as name, 11 as price, 1001 as ts) as s0 "
            "on s0.id = t0.id when matched then update set * when not matched then insert *",
            "select id, name, price, ts from {t}",
            "merge into {t} as t0 using (select 1 as id, 'a1' as name, 12 as price, 1003 as ts, 'delete' as flag) "
            "as s0 on s0.id = t0.id when matched and flag = 'delete' then delete",
            "select id, name, price, ts from {t}"),
    # TestMergeIntoTable "Test MergeInto with ignored record" (smaller ts does not win) and partial update set
    script("merge_precombine_and_partial_set",
            f"create table {{t}} ({_COLS}, dt string) using hudi partitioned by (dt) "
            "tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} values (1, 'a1', 10, 1000, '2021-03-21'), (2, 'a2', 20, 1000, '2021-03-21')",
            "merge into {t} t0 using (select 1 as id, 'x' as name, 99 as price, 999 as ts, '2021-03-21' as dt) s0 "
            "on t0.id = s0.id when matched then update set *",
            "select id, name, price, ts, dt from {t}",
            "merge into {t} t0 using (select 2 as id, 25 as price, 1001 as ts, '2021-03-21' as dt) s0 "
            "on t0.id = s0.id when matched then update set price = s0.price, ts = s0.ts",
            "select id, name, price, ts, dt from {t}",
            "merge into {t} t0 using (select 3 as id, 'a3' as name, 30 as price, 1000 as ts, '2021-03-22' as dt) s0 "
            "on t0.id = s0.id when not matched and s0.price > 10 then insert *",
            "select id, name, price, ts, dt from {t}"),
    # TestMergeIntoTable: source from another table, MOR
    script("merge_mor_from_table",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (type = 'mor', primaryKey = 'id', "
            "preCombineField = 'ts')",
            f"create table {{t2}} ({_COLS}) using parquet",
            "insert into {t2} values (1, 'a1', 10, 1000), (2, 'a2', 20, 1000)",
            "insert into {t} values (1, 'old', 1, 1)",
            "merge into {t} t using {t2} s on t.id = s.id "
            "when matched then update set * when not matched then insert *",
            "select id, name, price, ts from {t}",
            tables=("t", "t2")),
    # TestUpdateTable "Test Update Table" (cow and mor, with and without preCombineField)
    script("update_cow",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} select 1, 'a1', 10, 1000",
            "update {t} set price = 20 where id = 1",
            "select id, name, price, ts from {t}",
            "update {t} set price = price * 2, name = 'a2' where id = 1",
            "select id, name, price, ts from {t}"),
    script("update_mor_no_precombine",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (type = 'mor', primaryKey = 'id')",
            "insert into {t} select 1, 'a1', 10, 1000",
            "update {t} set price = 20 where id = 1",
            "update {t} set ts = 999 where id = 1",
            "select id, name, price, ts from {t}"),
    # TestUpdateTable: assigning the record key is refused
    script("update_record_key",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} select 1, 'a1', 10, 1000",
            Statement("update {t} set id = 2 where id = 1", expect=""),
            "select id, name, price, ts from {t}"),
    # TestDeleteTable "Test Delete Table" (cow, mor; partitioned)
    script("delete_cow_and_all",
            f"create table {{t}} ({_COLS}) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} values (1, 'a1', 10, 1000), (2, 'a2', 20, 1000)",
            "delete from {t} where id = 1",
            "select id, name, price, ts from {t}",
            "delete from {t}",
            "select count(1) from {t}"),
    script("delete_mor_partitioned",
            f"create table {{t}} ({_COLS}, dt string) using hudi partitioned by (dt) "
            "tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts')",
            "insert into {t} values (1, 'a1', 10, 1000, '2021-01-01'), (2, 'a2', 20, 1000, '2021-01-02')",
            "delete from {t} where dt = '2021-01-01'",
            "select id, name, price, ts, dt from {t}",
            "delete from {t} where price > 15",
            "select id, name, price, ts, dt from {t}"),
    # sqlext's own: a MERGE of whole rows into a bucket-index table is written as an upsert (no key lookup), one
    # with a condition looks the keys up; both against Hudi's (ordering, a key whose partition value changes)
    *[script(f"merge_bucket_plain_{kind}",
             f"create table {{t}} ({_COLS}, dt string) using hudi partitioned by (dt) "
             f"tblproperties (type = '{kind}', primaryKey = 'id', preCombineField = 'ts', "
             "'hoodie.index.type' = 'BUCKET', 'hoodie.bucket.index.num.buckets' = '2')",
             "insert into {t} values (1, 'a1', 10, 1000, 'x'), (2, 'a2', 20, 1000, 'x'), (3, 'a3', 30, 1000, 'y')",
             "merge into {t} t using (select 1 as id, 'u1' as name, 11 as price, 1001 as ts, 'x' as dt "
             "union all select 2, 'old2', 21, 999, 'x' union all select 3, 'moved3', 31, 1001, 'x' "
             "union all select 4, 'n4', 40, 1, 'y') s on t.id = s.id and t.dt = s.dt "
             "when matched then update set * when not matched then insert *",
             "select id, name, price, ts, dt from {t}",
             "merge into {t} t using (select 4 as id, 'u4' as name, 41 as price, 2 as ts, 'y' as dt "
             "union all select 5, 'n5', 50, 1, 'x') s on t.id = s.id and t.dt = s.dt "
             "when matched and s.ts > 0 then update set * when not matched then insert *",
             "select id, name, price, ts, dt from {t}")
      for kind in ("cow", "mor")],
]
"""A first handful of Hudi's own SQL tests (TestCreateTable, TestInsertTable, TestMergeIntoTable, TestUpdateTable,
TestDeleteTable), with Hudi's column names and values; an ``expect=""`` statement must fail on both sides."""


_NAMES = ["a", "b", "c", "d"]
_PARTS = ["p1", "p2"]


class _Table:
    """What the generator knows of the table it writes: columns in insert order, key and shape."""

    def __init__(self, rng: random.Random) -> None:
        self.mor = rng.random() < 0.5
        self.partitioned = rng.random() < 0.5
        self.precombine = rng.random() < 0.6
        self.extra: list[str] = []

    def create(self) -> str:
        props = [f"type = '{'mor' if self.mor else 'cow'}'", "primaryKey = 'id'"]
        if self.precombine:
            props.append("preCombineField = 'ts'")
        cols = _COLS + (", p string" if self.partitioned else "")
        part = " partitioned by (p)" if self.partitioned else ""
        return f"create table {{t}} ({cols}) using hudi{part} tblproperties ({', '.join(props)})"

    def columns(self) -> list[str]:
        return ["id", "name", "price", "ts", *self.extra, *(["p"] if self.partitioned else [])]

    def row(self, rng: random.Random, id_: int | None = None) -> list[str]:
        values = [str(rng.randint(1, 6) if id_ is None else id_), f"'{rng.choice(_NAMES)}'",
                  f"{rng.randint(0, 99)}.{rng.randint(0, 9)}", str(rng.randint(1, 9))]
        values += [f"'{c}{rng.randint(0, 9)}'" for c in self.extra]
        if self.partitioned:
            values.append(f"'{rng.choice(_PARTS)}'")
        return values

    def source(self, rng: random.Random, n: int) -> str:
        """A MERGE source: ``n`` rows as a SELECT ... UNION ALL with the table's column names."""
        names = self.columns()
        selects = [", ".join(f"{v} as {c}" for v, c in zip(self.row(rng), names, strict=True))
                   for _ in range(n)]
        return " union all ".join(f"select {s}" for s in selects)


def _write(rng: random.Random, table: _Table, step: int) -> str:
    kind = rng.choices(["insert", "merge", "update", "delete", "alter", "service"],
                       weights=[30, 25, 18, 12, 5, 10])[0]
    if kind == "insert":
        rows = [f"({', '.join(table.row(rng))})" for _ in range(rng.randint(1, 3))]
        return f"insert into {{t}} values {', '.join(rows)}"
    if kind == "merge":
        clauses = []
        if rng.random() < 0.3:
            clauses.append("when matched and s.price > 80 then delete")
        clauses.append(rng.choice(["when matched then update set *",
                                   "when matched then update set price = s.price, ts = s.ts"]))
        if rng.random() < 0.8:
            clauses.append("when not matched then insert *")
        return (f"merge into {{t}} t using ({table.source(rng, rng.randint(1, 3))}) s on t.id = s.id "
                + " ".join(clauses))
    if kind == "update":
        where = rng.choice([f"id = {rng.randint(1, 6)}", f"price > {rng.randint(20, 80)}",
                            *(["p = 'p1'"] if table.partitioned else [])])
        sets = rng.choice(["price = price + 1", f"name = '{rng.choice(_NAMES)}x'",
                           f"price = price * 2, ts = {rng.randint(1, 9)}"])
        return f"update {{t}} set {sets} where {where}"
    if kind == "delete":
        where = rng.choice([f"id = {rng.randint(1, 6)}", f"price < {rng.randint(10, 60)}",
                            *(["p = 'p2'"] if table.partitioned else [])])
        return f"delete from {{t}} where {where}"
    if kind == "alter" and len(table.extra) < 2:
        column = f"c{step}"
        table.extra.append(column)
        return f"alter table {{t}} add columns ({column} string)"
    if table.mor and rng.random() < 0.6:
        return "call run_compaction(op => 'scheduleAndExecute', table => '{t}')"
    return "call run_clean(table => '{t}', retain_commits => 1)"


def random_script(seed: int) -> Script:
    """A seeded random script: one table (COW or MOR, partitioned or not, with or without preCombineField),
    a first INSERT of 2 to 4 keys, then 4 to 7 writes (INSERT, MERGE, UPDATE, DELETE, ALTER ADD COLUMNS, run_compaction, run_clean) on keys 1..6,
    each followed by a SELECT of the data columns."""
    rng = random.Random(seed)
    table = _Table(rng)
    first = [f"({', '.join(table.row(rng, id_))})" for id_ in rng.sample(range(1, 7), rng.randint(2, 4))]
    statements = [Statement(table.create()), Statement(f"insert into {{t}} values {', '.join(first)}")]
    for step in range(rng.randint(4, 7)):
        statements.append(Statement(_write(rng, table, step)))
        statements.append(Statement(f"select {', '.join(table.columns())} from {{t}}"))
    return Script(f"seed{seed}", statements)
