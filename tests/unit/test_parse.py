"""Statement parsing (sqlext.parser.parse_statement): every statement form sqlext handles, its errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from sqlext.errors import SqlError, SqlParseError, UnsupportedStatement
from sqlext.parser import (
    AddColumns,
    AlterColumn,
    Call,
    CallArg,
    ChangeColumn,
    ColumnDef,
    Compaction,
    CompactionKind,
    CreateTable,
    DeleteFrom,
    DropColumns,
    DropPartitions,
    DropTable,
    InsertInto,
    MergeInto,
    Passthrough,
    RenameColumn,
    RenameTable,
    SetLocation,
    SetProperties,
    ShowPartitions,
    Statement,
    TableIdent,
    TruncateTable,
    UnsetProperties,
    UpdateTable,
    WhenMatchedDelete,
    WhenMatchedUpdate,
    WhenNotMatchedBySourceDelete,
    WhenNotMatchedBySourceUpdate,
    WhenNotMatchedInsert,
    parse_statement,
    split_statements,
)
from tests.conftest import HUDI_FIXTURES as FIXTURES  # noqa: E402
from tests.conftest import METADATA_FIXTURE_SHAPE  # noqa: E402

T = TableIdent(None, "t")


# ---------------------------------------------------------------------------- every statement form

CASES: list[tuple[str, Statement]] = [
    # CREATE TABLE
    (
        "CREATE TABLE IF NOT EXISTS db.t (id INT COMMENT 'key', ts BIGINT NOT NULL, dt STRING DEFAULT 'x') "
        "USING HUDI PARTITIONED BY (dt) LOCATION '/data/t' "
        "OPTIONS (type = 'mor') TBLPROPERTIES (primaryKey = 'id', 'hoodie.index.type' = \"BLOOM\", "
        "hoodie.metadata.enable = false, n = 1.50) COMMENT 'the table'",
        CreateTable(
            TableIdent("db", "t"),
            columns=(
                ColumnDef("id", "INT", comment="key"),
                ColumnDef("ts", "BIGINT", nullable=False),
                ColumnDef("dt", "STRING", default_sql="'x'"),
            ),
            if_not_exists=True,
            provider="hudi",
            partitioned_by=("dt",),
            location="/data/t",
            properties={
                "type": "mor",
                "primaryKey": "id",
                "hoodie.index.type": "BLOOM",
                "hoodie.metadata.enable": "false",
                "n": "1.50",
            },
            comment="the table",
        ),
    ),
    (
        "create external table t using hudi tblproperties (primaryKey='id') as select 1 as id, 'a' as name",
        CreateTable(
            T,
            properties={"primaryKey": "id"},
            as_query="select 1 as id, 'a' as name",
            external=True,
        ),
    ),
    (
        "CREATE TABLE t USING hudi PARTITIONED BY (dt, hh) AS\nSELECT * -- comment kept\n  FROM src -- dropped\n",
        CreateTable(T, partitioned_by=("dt", "hh"), as_query="SELECT * -- comment kept\n  FROM src"),
    ),
    ("CREATE TABLE t USING hudi (SELECT 1 AS id)", CreateTable(T, as_query="(SELECT 1 AS id)")),
    (
        "CREATE TABLE t2 LIKE db.t1",
        CreateTable(TableIdent(None, "t2"), provider=None, like=TableIdent("db", "t1")),
    ),
    (
        "CREATE TABLE IF NOT EXISTS t2 LIKE t1 USING hudi LOCATION '/p' TBLPROPERTIES ('type' = 'cow')",
        CreateTable(
            TableIdent(None, "t2"),
            if_not_exists=True,
            provider="hudi",
            location="/p",
            properties={"type": "cow"},
            like=TableIdent(None, "t1"),
        ),
    ),
    ("CREATE TABLE t (a INT) USING parquet", Passthrough("CREATE TABLE t (a INT) USING parquet")),
    ("CREATE TABLE t (a INT) STORED AS ORC", Passthrough("CREATE TABLE t (a INT) STORED AS ORC")),
    ("CREATE TABLE t USING delta AS SELECT 1", Passthrough("CREATE TABLE t USING delta AS SELECT 1")),
    ("CREATE VIEW v AS SELECT * FROM t", Passthrough("CREATE VIEW v AS SELECT * FROM t")),
    ("CREATE DATABASE IF NOT EXISTS db", Passthrough("CREATE DATABASE IF NOT EXISTS db")),
    (
        "CREATE TEMPORARY VIEW v USING hudi OPTIONS (path '/p')",
        Passthrough("CREATE TEMPORARY VIEW v USING hudi OPTIONS (path '/p')"),
    ),
    # INSERT
    (
        "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
        InsertInto(T, False, (), None, "VALUES (1, 'a'), (2, 'b')"),
    ),
    (
        "INSERT INTO TABLE db.t (id, name) SELECT id, name FROM s",
        InsertInto(TableIdent("db", "t"), False, (), ("id", "name"), "SELECT id, name FROM s"),
    ),
    (
        "INSERT OVERWRITE TABLE t PARTITION (dt = '2021-01-01', hh) SELECT id, hh FROM s",
        InsertInto(T, True, (("dt", "'2021-01-01'"), ("hh", None)), None, "SELECT id, hh FROM s"),
    ),
    (
        "INSERT OVERWRITE t PARTITION (p = 10, d = DATE '2021-01-01') IF NOT EXISTS SELECT 1",
        InsertInto(T, True, (("p", "10"), ("d", "CAST('2021-01-01' AS DATE)")), None, "SELECT 1", if_not_exists=True),
    ),
    ("INSERT INTO t BY NAME SELECT 1 AS id", InsertInto(T, False, (), None, "SELECT 1 AS id", by_name=True)),
    ("INSERT INTO t (SELECT 1)", InsertInto(T, False, (), None, "(SELECT 1)")),
    ("INSERT INTO t TABLE s", InsertInto(T, False, (), None, "TABLE s")),
    (
        "INSERT INTO t SELECT /*+ REPARTITION(2) */ * FROM s",
        InsertInto(T, False, (), None, "SELECT /*+ REPARTITION(2) */ * FROM s"),
    ),
    (
        "WITH c AS (SELECT 1 AS id) INSERT INTO t SELECT * FROM c",
        InsertInto(T, False, (), None, "WITH c AS (SELECT 1 AS id) SELECT * FROM c"),
    ),
    (
        "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' SELECT 1",
        Passthrough("INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' SELECT 1"),
    ),
    # MERGE
    (
        """MERGE INTO db.target AS t
           USING (SELECT * FROM src WHERE op IS NOT NULL) AS s
           ON t.id = s.id AND s.dt = t.dt AND t.flag = true
           WHEN MATCHED AND s.op = 'D' THEN DELETE
           WHEN MATCHED AND s.op = 'U' THEN UPDATE SET *
           WHEN MATCHED THEN UPDATE SET t.name = upper(s.name), price = s.price * 2,
                                        note = CASE WHEN s.x > 1 THEN 'a' ELSE 'b' END
           WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *
           WHEN NOT MATCHED THEN INSERT (id, t.name) VALUES (s.id, concat(s.name, ','))""",
        MergeInto(
            TableIdent("db", "target"),
            "t",
            "(SELECT * FROM src WHERE op IS NOT NULL)",
            "s",
            "t.id = s.id AND s.dt = t.dt AND t.flag = TRUE",
            (("id", "s.id"), ("dt", "s.dt"), ("flag", "TRUE")),
            (),
            (
                WhenMatchedDelete("s.op = 'D'"),
                WhenMatchedUpdate("s.op = 'U'", None),
                WhenMatchedUpdate(
                    None,
                    (
                        ("name", "UPPER(s.name)"),
                        ("price", "s.price * 2"),
                        ("note", "CASE WHEN s.x > 1 THEN 'a' ELSE 'b' END"),
                    ),
                ),
                WhenNotMatchedInsert("s.op <> 'D'", None, None),
                WhenNotMatchedInsert(None, ("id", "name"), ("s.id", "CONCAT(s.name, ',')")),
            ),
        ),
    ),
    (
        "MERGE INTO t USING src ON (t.id = src.id) WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED BY TARGET "
        "THEN INSERT *",
        MergeInto(
            T,
            None,
            "src",
            None,
            "(t.id = src.id)",
            (("id", "src.id"),),
            (),
            (WhenMatchedUpdate(None, None), WhenNotMatchedInsert(None, None, None)),
            source_table=TableIdent(None, "src"),
        ),
    ),
    (
        "MERGE INTO t tgt USING db.s src ON src.id = tgt.id OR tgt.id IS NULL WHEN MATCHED THEN DELETE",
        MergeInto(
            T,
            "tgt",
            "db.s",
            "src",
            "src.id = tgt.id OR tgt.id IS NULL",
            (),
            ("src.id = tgt.id OR tgt.id IS NULL",),
            (WhenMatchedDelete(None),),
            source_table=TableIdent("db", "s"),
        ),
    ),
    (
        "MERGE INTO t USING s ON id = s.id AND s.k = t.k + 1 WHEN MATCHED THEN DELETE",
        MergeInto(
            T,
            None,
            "s",
            None,
            "id = s.id AND s.k = t.k + 1",
            (("id", "s.id"),),
            ("s.k = t.k + 1",),
            (WhenMatchedDelete(None),),
            source_table=TableIdent(None, "s"),
        ),
    ),
    (
        "MERGE INTO t USING (VALUES (5, 'e', 50.0, 1004L)) s0(id, name, price, ts) ON t.id = s0.id "
        "WHEN NOT MATCHED THEN INSERT *",
        MergeInto(
            T,
            None,
            "(VALUES (5, 'e', 50.0, 1004L))",
            "s0",
            "t.id = s0.id",
            (("id", "s0.id"),),
            (),
            (WhenNotMatchedInsert(None, None, None),),
            source_columns=("id", "name", "price", "ts"),
        ),
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED BY SOURCE AND t.flag THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET t.flag = false",
        MergeInto(
            T,
            None,
            "s",
            None,
            "t.id = s.id",
            (("id", "s.id"),),
            (),
            (
                WhenMatchedUpdate(None, None),
                WhenNotMatchedBySourceDelete("t.flag"),
                WhenNotMatchedBySourceUpdate(None, (("flag", "FALSE"),)),
            ),
            source_table=TableIdent(None, "s"),
        ),
    ),
    (
        "MERGE INTO t USING s TIMESTAMP AS OF '20240101000000000' src ON t.id = src.id WHEN MATCHED THEN DELETE",
        MergeInto(
            T,
            None,
            "s TIMESTAMP AS OF '20240101000000000'",
            "src",
            "t.id = src.id",
            (("id", "src.id"),),
            (),
            (WhenMatchedDelete(None),),
            source_table=TableIdent(None, "s"),
        ),
    ),
    # UPDATE / DELETE
    (
        "UPDATE t SET fare = 25.0 WHERE rider = 'rider-D'",
        UpdateTable(T, None, (("fare", "25.0"),), "rider = 'rider-D'"),
    ),
    (
        "UPDATE db.t AS x SET x.a = a + 1, b = to_date(c, 'dd/MM/yyyy'), s.f = 1",
        UpdateTable(
            TableIdent("db", "t"),
            "x",
            (("a", "a + 1"), ("b", "TO_DATE(c, 'dd/MM/yyyy')"), ("s.f", "1")),
            None,
        ),
    ),
    ("UPDATE t u SET a = 1", UpdateTable(T, "u", (("a", "1"),), None)),
    (
        "DELETE FROM t WHERE rider in ('rider-A', 'rider-C')",
        DeleteFrom(T, None, "rider IN ('rider-A', 'rider-C')"),
    ),
    (
        "DELETE FROM db.t AS x WHERE x.id IN (SELECT id FROM s)",
        DeleteFrom(TableIdent("db", "t"), "x", "x.id IN (SELECT id FROM s)"),
    ),
    ("DELETE FROM t", DeleteFrom(T, None, None)),
    # DROP / TRUNCATE / SHOW PARTITIONS
    ("DROP TABLE t", DropTable(T)),
    ("DROP TABLE IF EXISTS db.t PURGE", DropTable(TableIdent("db", "t"), if_exists=True, purge=True)),
    ("DROP VIEW IF EXISTS v", Passthrough("DROP VIEW IF EXISTS v")),
    ("TRUNCATE TABLE t", TruncateTable(T)),
    ("TRUNCATE TABLE t PARTITION (dt = '2021-01-01')", TruncateTable(T, (("dt", "'2021-01-01'"),))),
    ("SHOW PARTITIONS t", ShowPartitions(T)),
    (
        "SHOW PARTITIONS spark_catalog.db.t PARTITION (dt='x', hh=1)",
        ShowPartitions(TableIdent("db", "t", catalog="spark_catalog"), (("dt", "'x'"), ("hh", "1"))),
    ),
    # ALTER TABLE
    ("ALTER TABLE db.t RENAME TO db.t2", RenameTable(TableIdent("db", "t"), TableIdent("db", "t2"))),
    (
        "ALTER TABLE t ADD COLUMNS (c DECIMAL(10, 2) COMMENT 'price', d ARRAY<STRING> AFTER c)",
        AddColumns(
            T,
            (
                ColumnDef("c", "DECIMAL(10,2)", comment="price"),
                ColumnDef("d", "ARRAY<STRING>", position="AFTER c"),
            ),
        ),
    ),
    ("ALTER TABLE t ADD COLUMN s.c INT FIRST", AddColumns(T, (ColumnDef("s.c", "INT", position="FIRST"),))),
    (
        "ALTER TABLE t SET TBLPROPERTIES ('hoodie.cleaner.commits.retained' = '5', comment = 'x')",
        SetProperties(T, {"hoodie.cleaner.commits.retained": "5", "comment": "x"}),
    ),
    ("ALTER TABLE t UNSET TBLPROPERTIES ('a', b.c)", UnsetProperties(T, ("a", "b.c"))),
    ("ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a')", UnsetProperties(T, ("a",), if_exists=True)),
    ("ALTER TABLE t DROP PARTITION (dt='2021')", DropPartitions(T, ((("dt", "'2021'"),),))),
    (
        "ALTER TABLE t DROP IF EXISTS PARTITION (dt='1', hh='01'), PARTITION (dt='2', hh='02') PURGE",
        DropPartitions(T, ((("dt", "'1'"), ("hh", "'01'")), (("dt", "'2'"), ("hh", "'02'"))), True, True),
    ),
    ("ALTER TABLE t CHANGE COLUMN a a BIGINT", ChangeColumn(T, "a", ColumnDef("a", "BIGINT"))),
    (
        "ALTER TABLE t CHANGE price price_new DOUBLE COMMENT 'p' AFTER id",
        ChangeColumn(T, "price", ColumnDef("price_new", "DOUBLE", comment="p", position="AFTER id")),
    ),
    ("ALTER TABLE t ALTER COLUMN s.a TYPE BIGINT", AlterColumn(T, "s.a", type_sql="BIGINT")),
    ("ALTER TABLE t CHANGE COLUMN a COMMENT 'c'", AlterColumn(T, "a", comment="c")),
    ("ALTER TABLE t ALTER COLUMN a FIRST", AlterColumn(T, "a", position="FIRST")),
    ("ALTER TABLE t ALTER COLUMN a DROP NOT NULL", AlterColumn(T, "a", nullable=True)),
    ("ALTER TABLE t RENAME COLUMN s.a TO b", RenameColumn(T, "s.a", "b")),
    ("ALTER TABLE t DROP COLUMN a, s.b", DropColumns(T, ("a", "s.b"))),
    ("ALTER TABLE t DROP COLUMNS IF EXISTS (a)", DropColumns(T, ("a",), if_exists=True)),
    ("ALTER TABLE t SET LOCATION '/new/place'", SetLocation(T, "/new/place")),
    ("ALTER TABLE t ADD PARTITION (dt='x')", Passthrough("ALTER TABLE t ADD PARTITION (dt='x')")),
    ("ALTER VIEW v AS SELECT 1", Passthrough("ALTER VIEW v AS SELECT 1")),
    # CALL
    (
        "CALL show_commits(table => 'db.t', limit => 10)",
        Call("show_commits", (CallArg("table", "db.t"), CallArg("limit", 10))),
    ),
    ("call system.help()", Call("help", ())),
    ("CALL spark_catalog.system.show_timeline('t')", Call("show_timeline", (CallArg(None, "t"),))),
    (
        "CALL p(1, 2L, 3S, 4Y, -5, 1.5, 2.5D, 3.5F, 4.5BD, 1e3, true, FALSE, NULL, 'a' 'b', \"dq\", "
        "map('k1', 'v1', 'k2', 2), TIMESTAMP '2021-01-01 00:00:00')",
        Call(
            "p",
            tuple(
                CallArg(None, v)
                for v in (
                    1,
                    2,
                    3,
                    4,
                    -5,
                    Decimal("1.5"),
                    2.5,
                    3.5,
                    Decimal("4.5"),
                    1000.0,
                    True,
                    False,
                    None,
                    "ab",
                    "dq",
                    {"k1": "v1", "k2": "2"},
                    "2021-01-01 00:00:00",
                )
            ),
        ),
    ),
    (
        "CALL run_compaction(op => 'run', path => '/tmp/t', timestamp => 20210101000000000L)",
        Call(
            "run_compaction",
            (CallArg("op", "run"), CallArg("path", "/tmp/t"), CallArg("timestamp", 20210101000000000)),
        ),
    ),
    # Compaction
    ("RUN COMPACTION ON db.t", Compaction(CompactionKind.RUN, table=TableIdent("db", "t"))),
    (
        "run compaction on t at 20210101000000",
        Compaction(CompactionKind.RUN, table=T, instant="20210101000000"),
    ),
    ("SCHEDULE COMPACTION ON '/tmp/t'", Compaction(CompactionKind.SCHEDULE, path="/tmp/t")),
    ("SHOW COMPACTION ON t LIMIT 5", Compaction(CompactionKind.SHOW, table=T, limit=5)),
    ("SHOW COMPACTION ON '/tmp/t'", Compaction(CompactionKind.SHOW, path="/tmp/t")),
    # Passthrough
    ("SELECT * FROM t TIMESTAMP AS OF '2021'", Passthrough("SELECT * FROM t TIMESTAMP AS OF '2021'")),
    ("SET spark.sql.shuffle.partitions=4", Passthrough("SET spark.sql.shuffle.partitions=4")),
    (
        "SET hoodie.datasource.write.operation = upsert",
        Passthrough("SET hoodie.datasource.write.operation = upsert"),
    ),
    ("USE db", Passthrough("USE db")),
    ("SHOW TABLES IN db LIKE 'x*'", Passthrough("SHOW TABLES IN db LIKE 'x*'")),
    ("DESCRIBE EXTENDED t", Passthrough("DESCRIBE EXTENDED t")),
    ("EXPLAIN MERGE INTO t USING s ON x WHEN", Passthrough("EXPLAIN MERGE INTO t USING s ON x WHEN")),
    ("REFRESH TABLE t", Passthrough("REFRESH TABLE t")),
    ("MSCK REPAIR TABLE t SYNC PARTITIONS", Passthrough("MSCK REPAIR TABLE t SYNC PARTITIONS")),
    ("VALUES (1), (2)", Passthrough("VALUES (1), (2)")),
    ("WITH c AS (SELECT 1) SELECT * FROM c", Passthrough("WITH c AS (SELECT 1) SELECT * FROM c")),
    (
        "SELECT * FROM t WITH ('as.of.instant' = '1')",
        Passthrough("SELECT * FROM t WITH ('as.of.instant' = '1')"),
    ),
    (
        "FROM s INSERT INTO t SELECT a INSERT INTO u SELECT b",
        Passthrough("FROM s INSERT INTO t SELECT a INSERT INTO u SELECT b"),
    ),
    ("BEGIN SELECT 1; SELECT 2; END", Passthrough("BEGIN SELECT 1; SELECT 2; END")),
]


@pytest.mark.parametrize(("sql", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_parse_statement(sql: str, expected: Statement) -> None:
    result = parse_statement(sql)
    assert type(result) is type(expected)
    assert result == expected


def test_statement_sql_is_the_stripped_text() -> None:
    stmt = parse_statement("  /* lead */ DELETE FROM t WHERE a = 1 ; -- tail\n")
    assert stmt.sql == "DELETE FROM t WHERE a = 1"
    assert parse_statement("  select 1 ;").sql == "select 1"


def test_expression_text_drops_comments_and_collapses_blanks() -> None:
    stmt = parse_statement("UPDATE t SET a =  b   +  -- plus\n  1 /* one */ WHERE c\n  = 2")
    assert isinstance(stmt, UpdateTable)
    assert stmt.assignments == (("a", "b + 1"),)
    assert stmt.where_sql == "c = 2"


def test_insert_query_position_points_into_sql() -> None:
    stmt = parse_statement("INSERT INTO t\n  PARTITION (p = 1)\n    SELECT 1")
    assert isinstance(stmt, InsertInto)
    assert (stmt.query_line, stmt.query_column) == (3, 5)
    line = stmt.sql.splitlines()[stmt.query_line - 1]
    assert line[stmt.query_column - 1 :] == stmt.query_sql


@pytest.mark.parametrize(
    ("type_text", "canonical"),
    [
        ("INT", "INT"),
        ("integer", "INT"),
        ("LONG", "BIGINT"),
        ("bigint", "BIGINT"),
        ("BYTE", "TINYINT"),
        ("SHORT", "SMALLINT"),
        ("REAL", "FLOAT"),
        ("DOUBLE", "DOUBLE"),
        ("boolean", "BOOLEAN"),
        ("string", "STRING"),
        ("BINARY", "BINARY"),
        ("DATE", "DATE"),
        ("TIMESTAMP", "TIMESTAMP"),
        ("TIMESTAMP_LTZ", "TIMESTAMP"),
        ("TIMESTAMP_NTZ", "TIMESTAMP_NTZ"),
        ("DECIMAL", "DECIMAL(10,0)"),
        ("DECIMAL(12)", "DECIMAL(12,0)"),
        ("DEC( 10 , 5 )", "DECIMAL(10,5)"),
        ("NUMERIC(38,18)", "DECIMAL(38,18)"),
        ("VARCHAR(10)", "VARCHAR(10)"),
        ("CHARACTER(3)", "CHAR(3)"),
        ("ARRAY<INT>", "ARRAY<INT>"),
        ("array<array<long>>", "ARRAY<ARRAY<BIGINT>>"),
        ("MAP<STRING,ARRAY<STRUCT<a:INT>>>", "MAP<STRING, ARRAY<STRUCT<a: INT>>>"),
        (
            "STRUCT<a: STRING, b INT NOT NULL COMMENT 'it\\'s'>",
            "STRUCT<a: STRING, b: INT NOT NULL COMMENT 'it\\'s'>",
        ),
        ("STRUCT<`my field`: INT>", "STRUCT<`my field`: INT>"),
        ("INTERVAL DAY TO SECOND", "INTERVAL DAY TO SECOND"),
        ("INTERVAL YEAR", "INTERVAL YEAR"),
        (
            "STRUCT<\n  field1: STRING,\n  child: STRUCT<\n    c1: DOUBLE,\n    c2: BOOLEAN\n  >\n>",
            "STRUCT<field1: STRING, child: STRUCT<c1: DOUBLE, c2: BOOLEAN>>",
        ),
    ],
)
def test_column_types_are_canonical(type_text: str, canonical: str) -> None:
    stmt = parse_statement(f"CREATE TABLE t (c {type_text}) USING hudi")
    assert isinstance(stmt, CreateTable)
    assert stmt.columns[0].type_sql == canonical


# ---------------------------------------------------------------------------- errors


ERRORS: list[tuple[str, type[SqlError], int | None, int | None, str]] = [
    ("", SqlParseError, 1, 1, "empty statement"),
    ("-- nothing", SqlParseError, 1, 1, "empty statement"),
    ("SELECT 1; SELECT 2", SqlParseError, 1, 9, "Only one statement"),
    ("SELECT 'open", SqlParseError, 1, 8, "Unclosed string literal"),
    ("CREATE TABLE t (a INTT) USING hudi", SqlParseError, 1, 19, "Expected ')' but found 'INTT'"),
    ("CREATE TABLE t (a INT b INT) USING hudi", SqlParseError, 1, 23, "Expected ')' but found 'b'"),
    ("CREATE TABLE t (a ARRAY<INT) USING hudi", SqlParseError, 1, 28, "Expected '>' but found ')'"),
    ("CREATE TABLE t (a DECIMAL(40,2)) USING hudi", SqlParseError, 1, 17, "Invalid DECIMAL(40,2)"),
    (
        "CREATE TABLE t (a INT) USING hudi\nTBLPROPERTIES (type = 'mor', primaryKey)",
        SqlParseError,
        2,
        30,
        "Values must be specified for key(s): primaryKey",
    ),
    ("CREATE TABLE t (a INT) USING hudi TBLPROPERTIES (type = )", SqlParseError, 1, 50, "Values must be"),
    (
        "CREATE TABLE t (a INT) USING hudi LOCATION '/a' LOCATION '/b'",
        SqlParseError,
        1,
        49,
        "duplicate clauses: LOCATION",
    ),
    ("CREATE TABLE t (a INT) USING hudi FOO", UnsupportedStatement, None, None, "This form of CREATE TABLE"),
    ("CREATE TABLE t (a INT) USING hudi AS", SqlParseError, 1, 37, "Expected a query after AS"),
    (
        "CREATE OR REPLACE TABLE t (a INT) USING hudi",
        UnsupportedStatement,
        None,
        None,
        "CREATE OR REPLACE TABLE",
    ),
    (
        "CREATE TABLE t (a INT) USING hudi CLUSTERED BY (a) INTO 4 BUCKETS",
        UnsupportedStatement,
        None,
        None,
        "CLUSTERED BY",
    ),
    (
        "CREATE TABLE t (a INT) USING hudi PARTITIONED BY (bucket(4, a))",
        UnsupportedStatement,
        None,
        None,
        "Partition transform BUCKET(4, a)",
    ),
    ("INSERT INTO t", SqlParseError, 1, 14, "Expected a query"),
    ("INSERT t VALUES (1)", SqlParseError, 1, 8, "Expected INTO but found 't'"),
    ("INSERT INTO t PARTITION (dt=) SELECT 1", SqlParseError, 1, 29, "Syntax error at or near ')'"),
    ("INSERT INTO t PARTITION (dt='a', dt='b') SELECT 1", SqlParseError, 1, 34, "dt is given more than once"),
    ("INSERT INTO t (a, b SELECT 1", SqlParseError, 1, 21, "Expected ')' but found 'SELECT'"),
    ("UPDATE t SET", SqlParseError, 1, 13, "Expected a column name but reached the end"),
    ("UPDATE t SET a = 1 WHERE", SqlParseError, 1, 25, "Syntax error at or near the end of the statement"),
    ("UPDATE t SET a 1", SqlParseError, 1, 16, "Syntax error at or near '1'"),
    ("UPDATE t SET a = 1,", SqlParseError, 1, 20, "Expected a column name"),
    ("UPDATE t SET a = (1 + WHERE x", SqlParseError, 1, 23, "Syntax error at or near 'WHERE'"),
    ("DELETE t WHERE a = 1", SqlParseError, 1, 8, "Expected FROM but found 't'"),
    ("DELETE FROM t WHERE a = 1 extra", SqlParseError, 1, 27, "at or near 'extra'"),
    (
        "DELETE FROM t WHERE\n  a = = 1",
        SqlParseError,
        2,
        7,
        "Syntax error at or near '='",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id",
        SqlParseError,
        1,
        36,
        "Expected a WHEN MATCHED or WHEN NOT MATCHED",
    ),
    ("MERGE INTO t USING s WHEN MATCHED THEN DELETE", SqlParseError, 1, 22, "Expected ON but found 'WHEN'"),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPSERT",
        SqlParseError,
        1,
        55,
        "Expected UPDATE or DELETE",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN FOO THEN DELETE",
        SqlParseError,
        1,
        42,
        "Expected MATCHED or NOT MATCHED",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id\nWHEN NOT MATCHED THEN INSERT *\nWHEN MATCHED THEN DELETE",
        SqlParseError,
        3,
        1,
        "WHEN MATCHED clauses must come before WHEN NOT MATCHED clauses",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN MATCHED AND s.x THEN UPDATE SET *",
        SqlParseError,
        1,
        62,
        "Only the last WHEN MATCHED clause can omit the condition",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)",
        SqlParseError,
        1,
        37,
        "2 column(s) but 1 value(s)",
    ),
    (
        "MERGE INTO t USING (DELETE FROM x) s ON a WHEN MATCHED THEN DELETE",
        SqlParseError,
        1,
        28,
        "Expected ')' but found 'FROM'",
    ),
    (
        "MERGE INTO t USING s ON t.id == WHEN MATCHED THEN DELETE",
        SqlParseError,
        1,
        33,
        "Syntax error at or near 'WHEN'",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN MATCHED THEN DELETE",
        SqlParseError,
        1,
        76,
        "WHEN MATCHED clauses must come before WHEN NOT MATCHED BY SOURCE clauses",
    ),
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN INSERT *",
        SqlParseError,
        1,
        69,
        "Expected UPDATE or DELETE but found 'INSERT'",
    ),
    (
        "MERGE WITH SCHEMA EVOLUTION INTO t USING s ON a WHEN MATCHED THEN DELETE",
        UnsupportedStatement,
        None,
        None,
        "SCHEMA EVOLUTION",
    ),
    (
        "WITH c AS (SELECT 1) MERGE INTO t USING c ON a WHEN MATCHED THEN DELETE",
        UnsupportedStatement,
        None,
        None,
        "WITH clause",
    ),
    ("DROP TABLE", SqlParseError, 1, 11, "Expected a table name"),
    ("DROP TABLE t CASCADE", SqlParseError, 1, 14, "at or near 'CASCADE'"),
    ("TRUNCATE TABLE t PARTITION dt='x'", SqlParseError, 1, 28, "Expected '('"),
    (
        "SHOW PARTITIONS t PARTITION (dt='x'",
        SqlParseError,
        1,
        36,
        "Expected ')' but found the end of the statement",
    ),
    ("ALTER TABLE t RENAME TO", SqlParseError, 1, 24, "Expected a table name but found the end"),
    ("ALTER TABLE t ADD COLUMNS (c)", SqlParseError, 1, 28, "Expected a data type after column c"),
    ("ALTER TABLE t SET TBLPROPERTIES ()", SqlParseError, 1, 34, "Expected a property key"),
    ("ALTER TABLE t UNSET TBLPROPERTIES ('a' = 'b')", SqlParseError, 1, 36, "Values should not be specified"),
    ("CALL", SqlParseError, 1, 5, "Expected a procedure name"),
    ("CALL show_commits", SqlParseError, 1, 18, "Expected '('"),
    (
        "CALL show_commits(table => 'a', 10)",
        SqlParseError,
        1,
        33,
        "Named and positional arguments cannot be mixed",
    ),
    (
        "CALL show_commits(table => t)",
        SqlParseError,
        1,
        28,
        "Expected a literal argument value but found 't'",
    ),
    ("CALL p(a => 1, A => 2)", SqlParseError, 1, 21, "A is given more than once"),
    ("CALL p(map('k'))", SqlParseError, 1, 8, "even number of arguments"),
    ("CALL p(1 2)", SqlParseError, 1, 10, "Expected ',' or ')'"),
    ("RUN COMPACTION t", SqlParseError, 1, 16, "Expected ON but found 't'"),
    ("SHOW COMPACTION ON t LIMIT x", SqlParseError, 1, 28, "Expected a row limit"),
]


@pytest.mark.parametrize(
    ("sql", "error", "line", "column", "message"), ERRORS, ids=[e[0][:60] or "<empty>" for e in ERRORS]
)
def test_parse_errors(
    sql: str, error: type[SqlError], line: int | None, column: int | None, message: str
) -> None:
    with pytest.raises(error) as info:
        parse_statement(sql)
    err = info.value
    assert message in str(err)
    if isinstance(err, SqlParseError):
        assert line is not None and column is not None
        assert (err.line, err.column) == (line, column)
        rendered = str(err).split("\n")
        assert rendered[0] == f"{err.message} (line {line}, column {column})"
        assert rendered[1] == (sql.splitlines()[line - 1] if sql else "")
        assert rendered[2] == " " * (column - 1) + "^"


def test_parse_error_shifted_to_script_position() -> None:
    script = "SELECT 1;\n  UPDATE t SET a 1;"
    stmt = split_statements(script)[1]
    with pytest.raises(SqlParseError) as info:
        parse_statement(stmt.text)
    shifted = info.value.shifted(stmt.line, stmt.column)
    assert (shifted.line, shifted.column) == (2, 18)
    assert str(shifted).splitlines()[1:] == ["  UPDATE t SET a 1", " " * 17 + "^"]
    second_line = SqlParseError("bad", 2, 3, "xyz").shifted(5, 7)
    assert (second_line.line, second_line.column, second_line.snippet) == (6, 3, "xyz")


def test_sql_parse_error_pickles_and_keeps_tabs_in_caret_line() -> None:
    import pickle

    err = SqlParseError("Bad thing", 1, 3, "\tab")
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.message, copy.line, copy.column, copy.snippet) == ("Bad thing", 1, 3, "\tab")
    assert str(err).splitlines()[2] == "\t ^"
    assert err.headline == "Bad thing (line 1, column 3)"


# ---------------------------------------------------------------------------- the fixture scripts


FIXTURE_SCRIPTS = sorted(p for p in FIXTURES.rglob("v6_*.sql")  # the scripts of the tables this engine writes
                         if p.relative_to(FIXTURES).parts[0] != METADATA_FIXTURE_SHAPE)


@pytest.mark.parametrize("path", FIXTURE_SCRIPTS, ids=[str(p.relative_to(FIXTURES)) for p in FIXTURE_SCRIPTS])
def test_fixture_scripts_parse(path: Path) -> None:
    statements = [parse_statement(s.text) for s in split_statements(path.read_text())]
    create = statements[0]
    assert isinstance(create, CreateTable)
    assert create.provider == "hudi"
    assert create.ident == TableIdent(None, path.stem)
    assert create.properties["primaryKey"] in ("id", "uuid", "id,name")
    assert create.properties["type"] in ("cow", "mor")
    assert all(c.type_sql for c in create.columns)
    for stmt in statements[1:]:
        assert isinstance(stmt, (InsertInto, UpdateTable, DeleteFrom, Call))
        target = stmt.name if isinstance(stmt, Call) else stmt.table.name
        if isinstance(stmt, Call):
            assert dict((a.name, a.value) for a in stmt.args)["table"] == path.stem
        else:
            assert target == path.stem


def test_fixture_nonpartitioned_schema_and_properties() -> None:
    path = FIXTURES / "sample_table/cow/v6_timebasedkeygen_nonhivestyle.sql"
    create = parse_statement(split_statements(path.read_text())[0].text)
    assert isinstance(create, CreateTable)
    types = {c.name: c.type_sql for c in create.columns}
    assert types == {
        "id": "INT",
        "name": "STRING",
        "isActive": "BOOLEAN",
        "byteField": "TINYINT",
        "shortField": "SMALLINT",
        "intField": "INT",
        "longField": "BIGINT",
        "floatField": "FLOAT",
        "doubleField": "DOUBLE",
        "decimalField": "DECIMAL(10,5)",
        "dateField": "DATE",
        "timestampField": "TIMESTAMP",
        "binaryField": "BINARY",
        "arrayField": "ARRAY<STRUCT<arr_struct_f1: STRING, arr_struct_f2: INT>>",
        "mapField": "MAP<STRING, STRUCT<map_field_value_struct_f1: DOUBLE, map_field_value_struct_f2: BOOLEAN>>",
        "structField": "STRUCT<field1: STRING, field2: INT, child_struct: STRUCT<child_field1: DOUBLE, child_field2: BOOLEAN>>",
        "ts_str": "STRING",
    }
    assert create.partitioned_by == ("ts_str",)
    assert create.properties == {
        "type": "cow",
        "primaryKey": "id",
        "preCombineField": "longField",
        "hoodie.metadata.enable": "false",
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
    }


def test_fixture_update_delete_and_call() -> None:
    base = FIXTURES / "quickstart_trips_table/mor/avro"
    update = parse_statement(split_statements((base / "v6_trips_8i1u.sql").read_text())[2].text)
    assert update == UpdateTable(
        TableIdent(None, "v6_trips_8i1u"), None, (("fare", "25.0"),), "rider = 'rider-D'"
    )
    delete = parse_statement(split_statements((base / "v6_trips_8i3d.sql").read_text())[2].text)
    assert delete == DeleteFrom(
        TableIdent(None, "v6_trips_8i3d"), None, "rider IN ('rider-A', 'rider-C', 'rider-D')"
    )
    rollback = FIXTURES / "sample_table/mor/parquet/v6_nonpartitioned_rollback.sql"
    stmts = [parse_statement(s.text) for s in split_statements(rollback.read_text())]
    assert stmts[3] == Call(
        "rollback_to_instant",
        (CallArg("table", "v6_nonpartitioned_rollback"), CallArg("instant_time", "20250126035006837")),
    )
    create = stmts[0]
    assert isinstance(create, CreateTable)
    assert create.location == "/opt/data/external_tables/v6_nonpartitioned_rollback"
    overwrite = FIXTURES / "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable.sql"
    last = parse_statement(split_statements(overwrite.read_text())[-1].text)
    assert isinstance(last, InsertInto) and last.overwrite and last.query_sql.startswith("SELECT\n")


def test_nested_struct_closed_by_double_angle_is_followed_by_more_columns() -> None:
    stmt = parse_statement(
        "CREATE TABLE x (id INT, st STRUCT<a: STRING, c: STRUCT<e: DOUBLE>>, part SMALLINT) USING hudi"
    )
    assert [(c.name, c.type_sql) for c in stmt.columns] == [
        ("id", "INT"), ("st", "STRUCT<a: STRING, c: STRUCT<e: DOUBLE>>"), ("part", "SMALLINT")]
