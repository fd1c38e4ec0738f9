"""Bad input gets a clear error that names the table, column or key at fault, and loses nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.errors import InvalidRecordKey
from engine.filegroup.naming import parse_base_file_name, parse_log_file_name
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from sqlext import shell
from sqlext.errors import SqlAnalysisError, SqlParseError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


@pytest.fixture
def trips(session: Session, table_name: str) -> str:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, v DOUBLE, ts BIGINT, city STRING)
        USING hudi PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.0, 1, 'sf'), (2, 'b', 2.0, 1, 'la')")
    return table_name


def ids(session: Session, name: str) -> list[int]:
    return sorted(r[0] for r in session.sql(f"SELECT id FROM {name}").collect())


def test_unknown_table_is_named(session: Session) -> None:
    """An unknown table is Spark's to report (Hudi's rules match only Hudi tables): Spark's error class."""
    for sql in ("INSERT INTO no_such_table VALUES (1)", "UPDATE no_such_table SET a = 1",
                "DELETE FROM no_such_table", "MERGE INTO no_such_table t USING (SELECT 1 AS id) s ON t.id = s.id "
                "WHEN MATCHED THEN DELETE"):
        with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND.*no_such_table"):
            session.sql(sql)


def test_unknown_column_is_named(session: Session, trips: str) -> None:
    with pytest.raises(SqlAnalysisError, match="unknown column nope"):
        session.sql(f"UPDATE {trips} SET nope = 1")
    with pytest.raises(SqlAnalysisError, match="nope"):
        session.sql(f"INSERT INTO {trips} (id, nope) VALUES (3, 1)")
    with pytest.raises(SqlAnalysisError, match="nope"):
        session.sql(f"""MERGE INTO {trips} t USING (SELECT 3 AS id) s ON t.id = s.id
                       WHEN MATCHED THEN UPDATE SET nope = 1""")
    assert ids(session, trips) == [1, 2]


def test_merge_on_must_cover_every_record_key_column(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (a INT, b STRING, v INT) USING hudi
        TBLPROPERTIES (primaryKey = 'a,b')""")
    # Hudi 0.15 asks it only with hoodie.spark.sql.optimized.writes.enable=true set in the session
    session.sql("SET hoodie.spark.sql.optimized.writes.enable = true")
    try:
        with pytest.raises(SqlAnalysisError, match=r"required to match on all primary key colums. Column: 'b' not found"):
            session.sql(f"""MERGE INTO {table_name} t USING (SELECT 1 AS a, 'x' AS b, 2 AS v) s ON t.a = s.a
                           WHEN MATCHED THEN UPDATE SET *""")
    finally:
        session.spark.conf.unset("hoodie.spark.sql.optimized.writes.enable")


def test_null_record_key_fails_and_table_keeps_its_last_commit(session: Session, trips: str) -> None:
    entry = session.catalog.lookup_name(trips)
    assert entry is not None
    before = Table.load(entry.location).timeline.completed_commits()
    with pytest.raises(InvalidRecordKey, match="'id'"):
        session.sql(f"INSERT INTO {trips} VALUES (NULL, 'x', 0.0, 2, 'sf'), (3, 'c', 3.0, 2, 'sf')")
    table = Table.load(entry.location)
    assert table.timeline.completed_commits()[-len(before):] == before
    assert not [i for i in table.timeline.pending() if i.action == "commit"]
    assert ids(session, trips) == [1, 2]
    assert sorted(r["id"] for r in hudi_rs_rows(entry.location)) == [1, 2]


def test_insert_column_count_and_type_mismatch(session: Session, trips: str) -> None:
    with pytest.raises(SqlAnalysisError, match=rf"INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS.*`default`\.`{trips}`"):
        session.sql(f"INSERT INTO {trips} VALUES (3, 'c')")
    with pytest.raises(SqlAnalysisError, match="column v is double but the query gives array<int>"):
        session.sql(f"INSERT INTO {trips} VALUES (3, 'c', array(1), 2, 'sf')")
    assert ids(session, trips) == [1, 2]


def test_syntax_error_shows_line_and_column(session: Session, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SqlParseError) as caught:
        session.sql("MERGE INTO t USING s\nON t.id = s.id\nWHEN MATCHED THEN FROBNICATE")
    assert caught.value.line == 3
    assert caught.value.column > 1
    rc = shell.main(["-e", "SELECT 1;\nUPDATE t SET = 1"], session_factory=lambda **_: session)
    err = capsys.readouterr().err
    assert rc == 1
    assert "Error in query" in err and "line 2" in err


def test_what_sparks_parser_refuses_is_refused_even_if_sqlglot_reads_it(session: Session, trips: str) -> None:
    """Hudi leaves DML to Spark's parser: a list with a hole (``IN ( , 2)``), which sqlglot reads as ``IN (2)``,
    is Spark's syntax error and nothing is deleted."""
    from pyspark.errors import ParseException

    with pytest.raises(ParseException, match="PARSE_SYNTAX_ERROR"):
        session.sql(f"DELETE FROM {trips} WHERE id = 2 AND (v > 0 OR id IN ( , 2 , 3 ))")
    assert ids(session, trips) == [1, 2]
    with pytest.raises(ParseException, match="PARSE_SYNTAX_ERROR"):
        session.sql(f"CREATE TABLE {trips}_2 (id INT, , v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    assert session.catalog.lookup_name(f"{trips}_2") is None


def written_by(table: Table, instant: str) -> list[str]:
    """Data files an instant wrote: base files named with its time, and log files whose blocks carry it."""
    from engine.formats.log_format import HeaderKey, read_log_blocks

    names = []
    for info in table.storage.list_files_recursive(table.base_path):
        parsed = parse_base_file_name(info.name)
        if parsed is not None and parsed[2] == instant:
            names.append(info.name)
        elif parse_log_file_name(info.name) is not None:
            blocks = read_log_blocks(table.storage, info.path)
            if any(block.header.get(HeaderKey.INSTANT_TIME) == instant for block in blocks):
                names.append(info.name)
    return names


def rollback_targets(table: Table) -> set[str]:
    """TARGET_INSTANT_TIMEs of the ROLLBACK command blocks in the table's log files."""
    from engine.formats.log_format import CommandBlock, read_log_blocks

    targets = set()
    for info in table.storage.list_files_recursive(table.base_path):
        if parse_log_file_name(info.name) is not None:
            for block in read_log_blocks(table.storage, info.path):
                if isinstance(block, CommandBlock) and block.is_rollback and block.target_instant_time:
                    targets.add(block.target_instant_time)
    return targets


CRASHING_WRITER = textwrap.dedent("""
    import os, sys
    from pyspark.sql import SparkSession
    import engine.write.commit as commit
    from engine.spark.writer import write_dataframe
    from engine.table import Table
    from engine.write.operation import WriteOperation

    def die(*args, **kwargs):  # the process dies after its files are written, before the commit
        os._exit(17)

    commit_finish = commit.finish_write
    import engine.spark.writer as writer
    writer.finish_write = die
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    table = Table.load(sys.argv[1])
    df = spark.sql("SELECT * FROM VALUES (1, 'changed', 9.0, 5, 'sf'), (7, 'new', 7.0, 5, 'ny') "
                   "AS s(id, name, v, ts, city)")
    write_dataframe(spark, table, df, WriteOperation.UPSERT)
""")


@pytest.mark.slow
@pytest.mark.extended
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_killed_writer_is_rolled_back_by_the_next_writer(
        session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    trips = f"{table_name}_{table_type}"
    session.sql(f"""CREATE TABLE {trips} (id INT, name STRING, v DOUBLE, ts BIGINT, city STRING)
        USING hudi PARTITIONED BY (city)
        TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {trips} VALUES (1, 'a', 1.0, 1, 'sf'), (2, 'b', 2.0, 1, 'la')")
    entry = session.catalog.lookup_name(trips)
    assert entry is not None
    script = tmp_path / "crash.py"
    script.write_text(CRASHING_WRITER)
    result = subprocess.run([sys.executable, str(script), entry.location], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 17, result.stderr[-2000:]

    table = Table.load(entry.location)
    failed = [i for i in table.timeline.pending() if i.action in ("commit", "deltacommit")]
    assert len(failed) == 1
    failed_time = failed[0].timestamp
    leftovers = written_by(table, failed_time)
    assert leftovers, "the crashed writer should have left partial files behind"
    # Readers never see the uncommitted data.
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(entry.location)) == [(1, "a"), (2, "b")]
    assert ids(session, trips) == [1, 2]

    session.sql(f"INSERT INTO {trips} VALUES (3, 'c', 3.0, 6, 'sf')")
    table = Table.load(entry.location)
    assert not table.timeline.find(failed_time) or all(i.action == "rollback" for i in table.timeline.find(failed_time))
    rollbacks = [i for i in table.timeline.completed() if i.action == "rollback"]
    assert rollbacks, "the next writer must write a rollback instant"
    remaining = written_by(table, failed_time)
    if table_type == "cow":
        assert remaining == []
    else:
        # As Hudi 0.14: the failed log files stay, and a ROLLBACK command block in a new log version of
        # each file group tells every log reader to drop the failed instant's blocks.
        assert remaining and all(parse_log_file_name(n) is not None for n in remaining)
        assert rollback_targets(table) == {failed_time}
        metadata = deserialize(table.timeline.read_details(rollbacks[-1]) or b"")
        logged = [m for m in metadata["partitionMetadata"].values() if m["rollbackLogFiles"]]
        assert logged and all(m["logFilesFromFailedCommit"] for m in logged)
    expected = [(1, "a"), (2, "b"), (3, "c")]
    assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(entry.location)) == expected
    assert sorted(tuple(r) for r in session.sql(f"SELECT id, name FROM {trips}").collect()) == expected


def test_options_we_do_not_implement_fail_the_write_by_name(session: Session, trips: str) -> None:
    """An index type or CDC logging we do not implement is an error naming the key, before anything is written;
    the table keeps its last commit (nothing silently ignored)."""
    before = ids(session, trips)
    for key, value in (("hoodie.index.type", "HBASE"), ("hoodie.index.type", "BUCKET"),
                       ("hoodie.table.cdc.enabled", "true")):
        session.sql(f"SET {key}={value}")
        try:
            named = f"{key}={value if key.endswith('enabled') else value.upper()}"
            try:
                session.sql(f"INSERT INTO {trips} VALUES (9, 'z', 9.0, 9, 'sf')")
            except Exception as exc:  # noqa: BLE001 - any error, as long as it names the setting
                assert named in str(exc), (named, str(exc))
            else:
                pytest.fail(f"INSERT with {key}={value} was accepted; session hoodie confs: "
                            f"{ {k: v for k, v in session.spark.conf.getAll.items() if k.startswith('hoodie.')} }")
        finally:
            session.sql(f"RESET {key}")
        assert ids(session, trips) == before
    session.sql(f"INSERT INTO {trips} VALUES (9, 'z', 9.0, 9, 'sf')")
    assert ids(session, trips) == [*before, 9]
