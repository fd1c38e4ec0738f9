"""The shell over a real session, as a user meets it: errors keep their cause in one line, Ctrl-C cancels a
statement with one line, a second process on a busy warehouse is told so at once, and log lines that are
part of normal operation are not shown as errors."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

from sqlext.parser.split import StatementText
from sqlext.shell import EXIT_INTERRUPTED, Shell

if TYPE_CHECKING:
    from sqlext.session import Session


def run(session: Session, sql: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(session, out, err, silent=True)
    code = shell.run_statement(StatementText(sql, 1, 1))
    return code, out.getvalue(), err.getvalue()


def test_time_travel_to_a_bad_instant_shows_our_message_not_a_traceback(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id BIGINT, v STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
    code, out, err = run(session, f"SELECT * FROM {table_name} TIMESTAMP AS OF 'yesterday'")
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("Error in query: unsupported instant 'yesterday': expected yyyyMMddHHmmss")
    assert "Traceback" not in err and "SQLSTATE" not in err


def test_a_spark_analysis_error_keeps_its_error_class(session: Session) -> None:
    code, _, err = run(session, "SELECT no_such_column FROM range(1)")
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error in query: [UNRESOLVED_COLUMN"), err


def test_ctrl_c_cancels_the_running_statement_in_one_line(session: Session) -> None:
    timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        code, out, err = run(session, "SELECT count(*) FROM range(200000) a CROSS JOIN range(2000000) b "
                                      "WHERE (a.id * b.id) % 7 = 3")
    finally:
        timer.cancel()
    assert code == EXIT_INTERRUPTED
    assert out == ""
    assert err == "Interrupted: the statement was cancelled.\n"
    assert time.monotonic() - started < 60
    # the session is still usable, and Ctrl-C is PySpark's again outside statements
    assert run(session, "SELECT 1")[:2] == (0, "1\n")
    assert signal.getsignal(signal.SIGINT) is not None


def test_a_second_process_on_a_busy_warehouse_gets_one_line_at_once(session: Session) -> None:
    """The test session holds its warehouse's embedded Derby metastore; a second `sqlext` on it stops
    before starting a JVM, naming the warehouse, the holder and how to share it."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "sqlext.shell", "--warehouse", str(session.warehouse), "-e", "SELECT 1"],
        capture_output=True, text=True, timeout=120,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert f"the warehouse {session.warehouse} is in use by" in line
    assert "a Spark JVM (pid " in line  # the test session's JVM (pytest, not a sqlext command, started it)
    assert "sqlext metastore start" in line and "hive.metastore.uris" in line
    assert result.stdout == ""
    assert elapsed < 30  # no JVM was started


def test_normal_metastore_chatter_is_not_shown_as_an_error(session: Session) -> None:
    """HiveAlterHandler logs ERROR each time Spark alters a table in its own format (ADD COLUMNS)."""
    jvm = session.spark._jvm
    logger = jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.hadoop.hive.metastore.HiveAlterHandler")
    assert str(logger.getLevel().toString()) == "FATAL"


def test_plain_spark_sql_writes_to_a_hudi_table_say_where_writes_go(session: Session, table_name: str) -> None:
    """What `sqlext serve` (and `spark.sql`) users get for a write: one line, not Spark's meta-column errors."""
    import pytest
    from pyspark.errors import PySparkException

    from sqlext.error_report import summarize

    session.sql(f"CREATE TABLE {table_name} (id BIGINT, v STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
    statements = {
        "INSERT": f"INSERT INTO {table_name} VALUES (2, 'b', 1)",
        "UPDATE": f"UPDATE {table_name} SET v = 'x' WHERE id = 1",
        "DELETE": f"DELETE FROM {table_name} WHERE id = 1",
        "MERGE": f"MERGE INTO {table_name} t USING (SELECT 1 AS id, 'z' AS v, 5L AS ts) s ON t.id = s.id "
                 "WHEN MATCHED THEN UPDATE SET *",
    }
    for what, sql in statements.items():
        with pytest.raises(PySparkException) as caught:
            session.spark.sql(sql).collect()
        message = summarize(caught.value)
        assert message.startswith(f"{what} on Hudi table default.{table_name} is not run by plain Spark SQL"), message
        assert "sqlext shell" in message
    assert [tuple(r) for r in session.spark.sql(f"SELECT id, v FROM {table_name}").collect()] == [(1, "a")]
    # the same statements through sqlext write the table
    session.sql(statements["INSERT"])
    assert sorted(r[0] for r in session.spark.sql(f"SELECT id FROM {table_name}").collect()) == [1, 2]
