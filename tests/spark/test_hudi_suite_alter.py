"""Apache Hudi 0.15's ``TestAlterTable`` (``hudi-spark-datasource/hudi-spark``, package ``ddl``), ported as the SQL a
user types: each statement gives Hudi's rows or Hudi's error (checked against Hudi 0.15.0 itself), plus
``ALTER TABLE ... REPLACE COLUMNS``, which Hudi 0.15 refuses.

Hudi's checks through ``HoodieTableMetaClient`` / ``TableSchemaResolver`` are rewritten as what a user sees:
DESCRIBE [FORMATTED], ``.hoodie/hoodie.properties`` and the commit files in the table folder. Schema-on-read
changes (rename, drop, retype, positions) are in tests/spark/test_schema_evolution.py; INSERT after ADD COLUMNS
in tests/spark/test_insert_alignment.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import javaprops
from sqlext.errors import SqlAnalysisError
from sqlext.session import Session

pytestmark = pytest.mark.spark

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
SCHEMA_ON_READ = "hoodie.schema.on.read.enable"


def answer(session: Session, sql: str) -> list[tuple[object, ...]]:
    """Rows of a query, sorted (Hudi's ``checkAnswer`` compares without order)."""
    return sorted(tuple(r) for r in session.sql(sql).collect())


def columns(session: Session, table: str) -> list[tuple[str, str, str | None]]:
    """DESCRIBE's data columns (name, type, comment), without the meta columns and the partition section."""
    out = []
    for r in session.sql(f"DESCRIBE {table}").collect():
        if r[0].startswith("#") or not r[0]:
            break
        if r[0] not in META:
            out.append((r[0], r[1], r[2] or None))
    return out


def formatted(session: Session, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in session.sql(f"DESCRIBE FORMATTED {table}").collect() if r[0]}


def commit_schemas(base: Path) -> list[list[str]]:
    """Field names of each completed commit's Avro ``schema`` (what Hudi's TableSchemaResolver reads)."""
    out = []
    for path in sorted(p for p in (base / ".hoodie").iterdir() if p.suffix in (".commit", ".deltacommit")):
        schema = json.loads(path.read_text())["extraMetadata"].get("schema")
        if schema:
            out.append([f["name"] for f in json.loads(schema)["fields"]])
    return out


def completed_instants(base: Path) -> list[str]:
    """The completed instants of the active timeline (Hudi ``getActiveTimeline.countInstants`` counts these)."""
    kinds = (".commit", ".deltacommit", ".clean", ".replacecommit", ".rollback")
    return sorted(p.name for p in (base / ".hoodie").iterdir() if p.suffix in kinds)


READ = "select id, name, price, ts, ext0 from {}"


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_alter_table(session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    """Test Alter Table (its first table): column comments by CHANGE COLUMN, RENAME TO (``hoodie.table.name``
    follows), ADD COLUMNS, a type change refused, then INSERT, MERGE, UPDATE and DELETE over the new column. Commit
    schemas never hold the meta columns (Hudi's ``validateTableSchema``)."""
    base = tmp_path / table_name
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{base}' tblproperties (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"alter table {table_name} change column id id int comment 'primary id'")
    session.sql(f"alter table {table_name} change column name name string comment 'name column'")
    assert columns(session, table_name)[:2] == [("id", "int", "primary id"), ("name", "string", "name column")]

    new = f"{table_name}_1"
    session.sql(f"alter table {table_name} rename to {new}")
    tables = [r[1] for r in session.sql("show tables").collect()]
    assert new in tables and table_name not in tables
    assert javaprops.parse((base / ".hoodie" / "hoodie.properties").read_text())["hoodie.table.name"] == new

    session.sql(f"insert into {new} values (1, 'a1', 10, 1000)")
    session.sql(f"alter table {new} add columns(ext0 string)")
    assert [c for c, _, _ in columns(session, new)] == ["id", "name", "price", "ts", "ext0"]
    assert answer(session, READ.format(new)) == [(1, "a1", 10.0, 1000, None)]
    assert all(not set(META) & set(fields) for fields in commit_schemas(base))
    with pytest.raises(SqlAnalysisError, match="ALTER TABLE CHANGE COLUMN is not supported for changing column 'id' "
                                               "with type 'IntegerType' to 'id' with type 'LongType'"):
        session.sql(f"alter table {new} change column id id bigint")

    session.sql(f"insert into {new} values (2, 'a2', 12, 1000, 'e0')")
    assert answer(session, READ.format(new)) == [(1, "a1", 10.0, 1000, None), (2, "a2", 12.0, 1000, "e0")]
    session.sql(f"""merge into {new} t0
        using (select 1 as id, 'a1' as name, 12 as price, 1001 as ts, 'e0' as ext0) s0
        on t0.id = s0.id when matched then update set * when not matched then insert *""")
    assert answer(session, READ.format(new)) == [(1, "a1", 12.0, 1001, "e0"), (2, "a2", 12.0, 1000, "e0")]
    session.sql(f"update {new} set price = 10, ext0 = null where id = 1")
    session.sql(f"update {new} set price = 10, ext0 = null where id = 2")
    assert answer(session, READ.format(new)) == [(1, "a1", 10.0, 1001, None), (2, "a2", 10.0, 1000, None)]
    session.sql(f"delete from {new} where id = 1")
    assert answer(session, READ.format(new)) == [(2, "a2", 10.0, 1000, None)]


def test_add_columns_to_partitioned_table(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Alter Table (its partitioned table): the new column goes before the partition column, and a
    positional INSERT follows that order."""
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long, dt string) using hudi
        location '{tmp_path / table_name}' tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts')
        partitioned by (dt)""")
    session.sql(f"insert into {table_name} values (1, 'a1', 10, 1000, '2021-07-25')")
    session.sql(f"alter table {table_name} add columns(ext0 double)")
    assert [c for c, _, _ in columns(session, table_name)] == ["id", "name", "price", "ts", "ext0", "dt"]
    select = f"select id, name, price, ts, dt, ext0 from {table_name}"
    assert answer(session, select) == [(1, "a1", 10.0, 1000, "2021-07-25", None)]
    session.sql(f"insert into {table_name} values (2, 'a2', 10, 1000, 1, '2021-07-25')")
    assert answer(session, select) == [(1, "a1", 10.0, 1000, "2021-07-25", None),
                                       (2, "a2", 10.0, 1000, "2021-07-25", 1.0)]


def test_add_columns_to_bucket_index_table(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Alter Table (its bucket-index table): ADD COLUMNS with a comment, then again with schema on read;
    both comments are kept (Hudi writes a comment as the Avro field's doc)."""
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{tmp_path / table_name}'
        tblproperties (type = 'mor', primaryKey = 'id', preCombineField = 'ts', `hoodie.index.type` = 'BUCKET',
          `hoodie.index.bucket.engine` = 'SIMPLE', `hoodie.bucket.index.num.buckets` = '2',
          `hoodie.bucket.index.hash.field` = 'id', `hoodie.storage.layout.type` = 'BUCKET',
          `hoodie.storage.layout.partitioner.class` = 'org.apache.hudi.table.action.commit.SparkBucketIndexPartitioner')
        """)
    session.sql(f"insert into {table_name} values (1, 'a1', 10, 1000)")
    session.sql(f"alter table {table_name} add columns(dt string comment 'data time')")
    assert answer(session, f"select id, name, price, ts, dt from {table_name}") == [(1, "a1", 10.0, 1000, None)]
    session.sql(f"set {SCHEMA_ON_READ}=true")
    try:
        session.sql(f"alter table {table_name} add columns(hh string comment 'hour time')")
    finally:
        session.sql(f"reset {SCHEMA_ON_READ}")
    assert answer(session, f"select id, name, price, ts, dt, hh from {table_name}") == [
        (1, "a1", 10.0, 1000, None, None)]
    assert columns(session, table_name)[-2:] == [("dt", "string", "data time"), ("hh", "string", "hour time")]


def test_rename_table_moves_a_managed_location_only(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Alter Rename Table: a managed table's folder follows its new name; an external table stays at its
    LOCATION."""
    props = "tblproperties (type = 'cow', primaryKey = 'id', preCombineField = 'ts')"
    session.sql(f"create table {table_name} (id int, name string, price double, ts long) using hudi {props}")
    old = Path(formatted(session, table_name)["Location"].removeprefix("file:"))
    session.sql(f"alter table {table_name} rename to {table_name}_1")
    moved = Path(formatted(session, f"{table_name}_1")["Location"].removeprefix("file:"))
    assert moved != old and moved.name == f"{table_name}_1"

    session.sql(f"create table {table_name}_loc (id int, name string, price double, ts long) using hudi "
                f"location '{tmp_path / 'loc'}' {props}")
    session.sql(f"alter table {table_name}_loc rename to {table_name}_loc_1")
    kept = Path(formatted(session, f"{table_name}_loc_1")["Location"].removeprefix("file:"))
    assert kept == tmp_path / "loc"


def test_alter_table_with_occ(session: Session, table_name: str, tmp_path: Path) -> None:
    """Test Alter Table With OCC (copy-on-write; the merge-on-read half repeats :func:`test_alter_table`):
    optimistic concurrency control with the file-system lock provider, as table properties."""
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{tmp_path / table_name}'
        tblproperties (type = 'cow', primaryKey = 'id', preCombineField = 'ts',
          hoodie.write.concurrency.mode = 'optimistic_concurrency_control', hoodie.clean.failed.writes.policy = 'LAZY',
          hoodie.write.lock.provider = 'org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider')""")
    session.sql(f"alter table {table_name} change column id id int comment 'primary id'")
    new = f"{table_name}_1"
    session.sql(f"alter table {table_name} rename to {new}")
    session.sql(f"insert into {new} values (1, 'a1', 10, 1000)")
    session.sql(f"alter table {new} add columns(ext0 string)")
    assert columns(session, new)[0] == ("id", "int", "primary id")
    with pytest.raises(SqlAnalysisError, match="ALTER TABLE CHANGE COLUMN is not supported for changing column 'id'"):
        session.sql(f"alter table {new} change column id id bigint")
    session.sql(f"insert into {new} values (2, 'a2', 12, 1000, 'e0')")
    assert answer(session, READ.format(new)) == [(1, "a1", 10.0, 1000, None), (2, "a2", 12.0, 1000, "e0")]


@pytest.mark.parametrize("clean", ["true", "false"])
def test_alter_table_with_spark_sql_conf(session: Session, table_name: str, tmp_path: Path, clean: str) -> None:
    """Test Alter Table With Spark Sql Conf: ADD COLUMNS commits through the write client, whose post-commit clean
    follows ``SET hoodie.clean.automatic``: 5 commits, plus a clean when it is on. The retention is given as Hudi
    0.15 reads it, ``hoodie.cleaner.commits.retained`` (the suite's ``hoodie.clean.commits.retained`` is the later
    releases' name, which Hudi 0.15 ignores)."""
    base = tmp_path / table_name
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{base}' tblproperties (type = 'cow', primaryKey = 'id', preCombineField = 'ts',
          hoodie.clean.trigger.strategy = 'NUM_COMMITS', hoodie.cleaner.commits.retained = '3')""")
    session.sql(f"insert into {table_name} values (1, 'a1', 10, 1000)")
    for name in ("a2", "a3", "a4"):
        session.sql(f"update {table_name} set name = '{name}' where id = 1")
    session.sql(f"set hoodie.clean.automatic={clean}")
    try:
        session.sql(f"alter table {table_name} add columns(ext0 string)")
    finally:
        session.sql("reset hoodie.clean.automatic")
    actions = [i.split(".")[1] for i in completed_instants(base)]
    assert actions == ["commit"] * 5 + (["clean"] if clean == "true" else [])
    assert answer(session, READ.format(table_name)) == [(1, "a4", 10.0, 1000, None)]


@pytest.mark.parametrize("schema_on_read", [False, True])
def test_replace_columns_is_refused(session: Session, table_name: str, tmp_path: Path, schema_on_read: bool) -> None:
    """``ALTER TABLE t REPLACE COLUMNS``: Hudi 0.15 refuses it, without schema on read as Spark's
    UNSUPPORTED_FEATURE.TABLE_OPERATION, with it because replacing deletes the meta columns first. Nothing
    changes."""
    base = tmp_path / table_name
    session.sql(f"""create table {table_name} (id int, name string, price double, ts long) using hudi
        location '{base}' tblproperties (primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"insert into {table_name} values (1, 'a', 1.0, 1)")
    before = completed_instants(base)
    message = ("cannot modify hudi meta col: _hoodie_commit_time" if schema_on_read else
               "does not support REPLACE COLUMNS")
    if schema_on_read:
        session.sql(f"set {SCHEMA_ON_READ}=true")
    try:
        for replacement in ("id int, name string, price double, ts long, ext string", "id int, name string"):
            with pytest.raises(SqlAnalysisError, match=message):
                session.sql(f"alter table {table_name} replace columns ({replacement})")
    finally:
        session.sql(f"reset {SCHEMA_ON_READ}")
    assert completed_instants(base) == before
    assert [c for c, _, _ in columns(session, table_name)] == ["id", "name", "price", "ts"]
    assert answer(session, f"select * from {table_name}")[0][5:] == (1, "a", 1.0, 1)
