"""The sqlext console (sqlext.shell) with a fake session: flags, output format, errors, exit codes."""

from __future__ import annotations

import datetime as dt
import io
import logging
import re
import struct
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.sql import types as T

from sqlext.errors import SqlAnalysisError, SqlParseError
from sqlext.shell import Shell, format_result, java_double_str, main, to_hive_string

TIME_RE = re.compile(r"^Time taken: \d+\.\d+ seconds(, Fetched \d+ row\(s\))?$")


class FakeDataFrame:
    """Just what the shell uses of a DataFrame."""

    def __init__(
        self, columns: list[str] | None = None, rows: list[Any] | None = None, schema: Any = None
    ) -> None:
        self._columns = columns or []
        self._rows = rows or []
        if schema is not None:
            self.schema = schema

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def collect(self) -> list[Any]:
        return list(self._rows)


Handler = Callable[[str], Any]


class FakeSession:
    """Records statements; ``handler(text)`` returns a FakeDataFrame or an exception to raise."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.calls: list[str] = []
        self.handler = handler or (lambda text: FakeDataFrame())

    def sql(self, text: str) -> FakeDataFrame:
        self.calls.append(text)
        result = self.handler(text)
        if isinstance(result, BaseException):
            raise result
        return result


class Factory:
    def __init__(self, session: FakeSession) -> None:
        self.session = session
        self.kwargs: dict[str, Any] | None = None

    def __call__(self, **kwargs: Any) -> FakeSession:
        self.kwargs = kwargs
        return self.session


def select_handler(text: str) -> Any:
    """``SELECT <n>`` returns one row with n; ``FAIL ...`` raises; anything else: no result."""
    match = re.fullmatch(r"SELECT\s+(\d+)", text.strip(), re.IGNORECASE)
    if match:
        return FakeDataFrame(["n"], [(int(match.group(1)),)])
    if text.startswith("FAIL"):
        return SqlAnalysisError(f"Table or view not found: {text[5:]}\nsecond line of the message")
    return FakeDataFrame()


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    sqlglot_level = logging.getLogger("sqlglot").level
    yield
    root.setLevel(level)
    root.handlers[:] = handlers
    logging.getLogger("sqlglot").setLevel(sqlglot_level)


def run(
    argv: list[str], session: FakeSession, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, list[str]]:
    code = main(argv, session_factory=Factory(session))
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


# ---------------------------------------------------------------------------- -e / -f / -i


def test_execute_prints_rows_and_timing(capsys: pytest.CaptureFixture[str]) -> None:
    session = FakeSession(select_handler)
    code, out, err = run(["-e", "SELECT 1; SELECT 22 ;CREATE TABLE x (a INT)"], session, capsys)
    assert code == 0
    assert session.calls == ["SELECT 1", "SELECT 22", "CREATE TABLE x (a INT)"]
    assert out == "1\n22\n"
    assert len(err) == 3 and all(TIME_RE.match(line) for line in err)
    assert err[0].endswith(", Fetched 1 row(s)")
    assert "Fetched" not in err[2]


def test_silent_suppresses_timing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["-S", "-e", "SELECT 1"], FakeSession(select_handler), capsys)
    assert (code, out, err) == (0, "1\n", [])


def test_rows_are_tab_separated_with_null(capsys: pytest.CaptureFixture[str]) -> None:
    df = FakeDataFrame(["a", "b", "c"], [(1, None, "x y"), (None, True, "")])
    code, out, _ = run(["-S", "-e", "SELECT * FROM t"], FakeSession(lambda text: df), capsys)
    assert code == 0
    assert out == "1\tNULL\tx y\nNULL\ttrue\t\n"


@pytest.mark.parametrize(
    "flags",
    [
        ["--conf", "spark.sql.cli.print.header=true"],
        ["--hiveconf", "hive.cli.print.header=true"],
    ],
)
def test_header_from_flags(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    df = FakeDataFrame(["id", "name"], [(1, "a")])
    code, out, _ = run([*flags, "-S", "-e", "SELECT id, name FROM t"], FakeSession(lambda text: df), capsys)
    assert code == 0
    assert out == "id\tname\n1\ta\n"


def test_header_switched_on_by_set_statement(capsys: pytest.CaptureFixture[str]) -> None:
    def handler(text: str) -> Any:
        if text.upper().startswith("SET"):
            return FakeDataFrame(["key", "value"], [("spark.sql.cli.print.header", "true")])
        return FakeDataFrame(["n"], [(1,)])

    script = "SELECT 1; SET spark.sql.cli.print.header=true; SELECT 1; SET spark.sql.cli.print.header = false; SELECT 1"
    code, out, _ = run(["-S", "-e", script], FakeSession(handler), capsys)
    assert code == 0
    assert out.splitlines() == [
        "1",
        "key\tvalue",
        "spark.sql.cli.print.header\ttrue",
        "n",
        "1",
        "spark.sql.cli.print.header\ttrue",
        "1",
    ]


def test_file_stops_at_first_error_and_keeps_the_whole_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.sql"
    script.write_text("SELECT 1;\nFAIL db.missing;\nSELECT 2;\n")
    session = FakeSession(select_handler)
    code, out, err = run(["-f", str(script)], session, capsys)
    assert code == 1
    assert session.calls == ["SELECT 1", "FAIL db.missing"]
    assert out == "1\n"
    # our own error's message is shown whole: its first line, then the rest folded onto a second line
    assert err[1:] == ["Error in query: Table or view not found: db.missing", "second line of the message"]


def test_verbose_prints_the_stack_trace(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-v", "-e", "FAIL x"], FakeSession(select_handler), capsys)
    assert code == 1
    assert err[0] == "Error in query: Table or view not found: x"
    assert "second line of the message" in err
    assert any(line.startswith("Traceback") for line in err)
    assert any(line.startswith("sqlext.errors.SqlAnalysisError: Table or view not found: x") for line in err)


def test_parse_error_is_shown_with_caret_at_script_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.sql"
    script.write_text("SELECT 1;\n\n  UPDATE t SET a 1;\nSELECT 2;")

    def handler(text: str) -> Any:
        if text.startswith("UPDATE"):
            from sqlext.parser import parse_statement

            parse_statement(text)
        return select_handler(text)

    code, out, err = run(["-S", "-f", str(script)], FakeSession(handler), capsys)
    assert code == 1
    assert out == "1\n"
    assert err == [
        "Error in query: Syntax error at or near '1' (line 3, column 18)",
        "  UPDATE t SET a 1",
        " " * 17 + "^",
    ]


def test_unterminated_string_in_script_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    session = FakeSession(select_handler)
    code, _, err = run(["-e", "SELECT 1;\nSELECT 'oops"], session, capsys)
    assert code == 1
    assert session.calls == []
    assert err[0] == "Error in query: Unclosed string literal (line 2, column 8)"


def test_missing_file_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-f", str(tmp_path / "nope.sql")], FakeSession(), capsys)
    assert code == 3
    assert err[0].startswith("Could not open input file for reading.")


def test_init_files_run_silently_before_execute(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init1, init2 = tmp_path / "a.sql", tmp_path / "b.sql"
    init1.write_text("SET x=1;\nSELECT 7;")
    init2.write_text("SELECT 8;")
    session = FakeSession(select_handler)
    code, out, err = run(["-i", str(init1), "-i", str(init2), "-e", "SELECT 9"], session, capsys)
    assert code == 0
    assert session.calls == ["SET x=1", "SELECT 7", "SELECT 8", "SELECT 9"]
    assert out == "7\n8\n9\n"
    assert len(err) == 1 and TIME_RE.match(err[0])


def test_failing_init_file_exits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init = tmp_path / "init.sql"
    init.write_text("FAIL t;")
    session = FakeSession(select_handler)
    code, _, err = run(["-i", str(init), "-e", "SELECT 1"], session, capsys)
    assert code == 1
    assert session.calls == ["FAIL t"]
    assert err == ["Error in query: Table or view not found: t", "second line of the message"]


def test_quit_stops_execution(capsys: pytest.CaptureFixture[str]) -> None:
    session = FakeSession(select_handler)
    code, out, _ = run(["-S", "-e", "SELECT 1; quit; SELECT 2"], session, capsys)
    assert (code, out, session.calls) == (0, "1\n", ["SELECT 1"])


def test_source_command_runs_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inner = tmp_path / "inner.sql"
    inner.write_text("SELECT 5;")
    session = FakeSession(select_handler)
    code, out, _ = run(["-S", "-e", f"source {inner}; SELECT 6"], session, capsys)
    assert (code, out) == (0, "5\n6\n")


def test_e_and_f_together_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-e", "SELECT 1", "-f", "x.sql"], FakeSession(), capsys)
    assert code == 1
    assert "cannot be specified simultaneously" in err[0]


def test_bad_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(["--no-such-flag"], FakeSession(), capsys)
    assert code == 2
    code, _, _ = run(["--conf", "novalue"], FakeSession(), capsys)
    assert code == 2


def test_factory_receives_warehouse_conf_and_master(capsys: pytest.CaptureFixture[str]) -> None:
    factory = Factory(FakeSession(select_handler))
    argv = [
        "--warehouse", "/tmp/wh", "--master", "local[2]",
        "--conf", "spark.a=1", "--conf", "hoodie.x = y", "--hiveconf", "hive.k=v", "-d", "var=3",
        "-e", "SELECT 1",
    ]  # fmt: skip
    assert main(argv, session_factory=factory) == 0
    # --hiveconf keys start the session as spark.hadoop.* (no spark-submit warning); --define and the plain
    # --hiveconf keys are set on the running session (a session with `spark`, below).
    assert factory.kwargs == {
        "warehouse": "/tmp/wh",
        "conf": {"spark.a": "1", "hoodie.x": "y", "spark.hadoop.hive.k": "v"},
        "master": "local[2]",
    }
    factory = Factory(FakeSession(select_handler))
    assert (
        main(["--hiveconf", "hive.metastore.warehouse.dir=/wh2", "-e", "SELECT 1"], session_factory=factory)
        == 0
    )
    assert factory.kwargs == {"warehouse": "/wh2", "conf": None, "master": None}
    capsys.readouterr()


def test_session_start_failure_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(**kwargs: Any) -> FakeSession:
        raise RuntimeError("no java")

    assert main(["-e", "SELECT 1"], session_factory=broken) == 1
    assert capsys.readouterr().err.startswith("Error: could not start the session: no java")


def test_database_flag_runs_use_first(capsys: pytest.CaptureFixture[str]) -> None:
    session = FakeSession(select_handler)
    code, _, _ = run(["-S", "--database", "sales", "-e", "SELECT 1"], session, capsys)
    assert code == 0
    assert session.calls == ["USE sales", "SELECT 1"]


def test_other_exceptions_name_their_type(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-e", "SELECT 1"], FakeSession(lambda text: ValueError("bad value")), capsys)
    assert code == 1
    assert err == ["Error in query: ValueError: bad value"]


def test_pyspark_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from pyspark.errors import AnalysisException

    error = AnalysisException(
        message="\n[TABLE_OR_VIEW_NOT_FOUND] The table `x` cannot be found.\n== SQL ==\nSELECT"
    )
    code, _, err = run(["-e", "SELECT * FROM x"], FakeSession(lambda text: error), capsys)
    assert code == 1
    assert err == ["Error in query: [TABLE_OR_VIEW_NOT_FOUND] The table `x` cannot be found."]


def test_interrupt_during_statement(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["-e", "SELECT 1; SELECT 2"], FakeSession(lambda text: KeyboardInterrupt()), capsys)
    assert code == 130
    assert err == ["Interrupted: the statement was cancelled."]


# ---------------------------------------------------------------------------- interactive


def scripted_reader(lines: list[Any], prompts: list[str]) -> Callable[[str], str]:
    def read(prompt: str) -> str:
        prompts.append(prompt)
        if not lines:
            raise EOFError
        item = lines.pop(0)
        if isinstance(item, BaseException):
            raise item
        return str(item)

    return read


def test_interactive_prompts_continuation_use_and_quit() -> None:
    session = FakeSession(select_handler)
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(session, out, err)
    prompts: list[str] = []
    lines = [
        "-- a comment line",
        "SELECT",
        "  1;",
        "",
        "USE db2;",
        "SELECT 2; SELECT",
        "3;",
        "quit;",
        "SELECT 4;",
    ]
    assert shell.interactive(scripted_reader(lines, prompts)) == 0
    assert session.calls == ["SELECT\n  1", "USE db2", "SELECT 2", "SELECT\n3"]
    assert out.getvalue() == "1\n2\n3\n"
    assert prompts == [
        "spark-sql (default)> ",
        "spark-sql (default)> ",
        "                   > ",
        "spark-sql (default)> ",
        "spark-sql (default)> ",
        "spark-sql (db2)> ",
        "               > ",
        "spark-sql (db2)> ",
    ]


def test_interactive_errors_do_not_exit_and_ctrl_c_clears_the_buffer() -> None:
    session = FakeSession(select_handler)
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(session, out, err, silent=True)
    lines: list[Any] = [
        "FAIL t; SELECT 5;",
        "SELECT 6;",
        "SELECT",
        KeyboardInterrupt(),
        "SELECT 7;",
        "FAIL u;",
    ]
    code = shell.interactive(scripted_reader(lines, []))
    assert session.calls == ["FAIL t", "SELECT 6", "SELECT 7", "FAIL u"]
    assert out.getvalue() == "6\n\n7\n"
    assert err.getvalue().splitlines() == [
        "Error in query: Table or view not found: t",
        "second line of the message",
        "Error in query: Table or view not found: u",
        "second line of the message",
    ]
    assert code == 1  # Ctrl-D after a failed statement: the last statement's code


def test_main_interactive_reads_piped_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT 1;\nSELECT\n2;\n"))
    session = FakeSession(select_handler)
    code, out, _ = run(["-S"], session, capsys)
    assert (code, out, session.calls) == (0, "1\n2\n", ["SELECT 1", "SELECT\n2"])


def test_tty_session_uses_history_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("readline")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    lines = ["SELECT 1;"]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", Tty())

    def fake_input(prompt: str) -> str:
        if not lines:
            raise EOFError
        return lines.pop(0)

    monkeypatch.setattr("builtins.input", fake_input)
    code, out, _ = run(["-S"], FakeSession(select_handler), capsys)
    assert (code, out) == (0, "1\n")
    assert (tmp_path / ".sqlext_history").exists()


# ---------------------------------------------------------------------------- value formatting


def f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


@pytest.mark.parametrize(
    ("value", "single", "expected"),
    [
        (1.0, False, "1.0"),
        (1.5, False, "1.5"),
        (-0.5, False, "-0.5"),
        (100.0, False, "100.0"),
        (1234567.0, False, "1234567.0"),
        (1.0e7, False, "1.0E7"),
        (12345678.9, False, "1.23456789E7"),
        (0.001, False, "0.001"),
        (0.00123, False, "0.00123"),
        (1.0e-4, False, "1.0E-4"),
        (-1.5e-10, False, "-1.5E-10"),
        (1e21, False, "1.0E21"),
        (0.1 + 0.2, False, "0.30000000000000004"),
        (0.0, False, "0.0"),
        (-0.0, False, "-0.0"),
        (float("nan"), False, "NaN"),
        (float("inf"), False, "Infinity"),
        (float("-inf"), False, "-Infinity"),
        (f32(1.1), True, "1.1"),
        (f32(3.14159), True, "3.14159"),
        (f32(2.718281828), True, "2.7182817"),
        (f32(3.4028235e38), True, "3.4028235E38"),
    ],
)
def test_java_double_str(value: float, single: bool, expected: str) -> None:
    assert java_double_str(value, single=single) == expected


STRUCT_TYPE = T.StructType(
    [
        T.StructField("name", T.StringType()),
        T.StructField("age", T.IntegerType()),
        T.StructField(
            "child", T.StructType([T.StructField("x", T.DoubleType()), T.StructField("ok", T.BooleanType())])
        ),
        T.StructField("tags", T.ArrayType(T.StringType())),
    ]
)


@pytest.mark.parametrize(
    ("value", "data_type", "expected"),
    [
        (None, None, "NULL"),
        (True, T.BooleanType(), "true"),
        (False, None, "false"),
        (42, T.IntegerType(), "42"),
        (9876543210, T.LongType(), "9876543210"),
        (1.5, T.DoubleType(), "1.5"),
        (f32(1.1), T.FloatType(), "1.1"),
        (Decimal("12345.67890"), T.DecimalType(10, 5), "12345.67890"),
        (Decimal("1E+2"), None, "100"),
        ("plain text", T.StringType(), "plain text"),
        (dt.date(2023, 4, 1), T.DateType(), "2023-04-01"),
        (dt.date(99, 1, 2), T.DateType(), "0099-01-02"),
        (dt.datetime(2023, 4, 1, 12, 1), T.TimestampType(), "2023-04-01 12:01:00"),
        (dt.datetime(2023, 4, 1, 12, 1, 0, 500000), T.TimestampType(), "2023-04-01 12:01:00.5"),
        (dt.datetime(2021, 1, 1, 0, 0, 0, 123456), T.TimestampNTZType(), "2021-01-01 00:00:00.123456"),
        (bytearray(b"binary data"), T.BinaryType(), "binary data"),
        (
            dt.timedelta(days=1, hours=2, minutes=3, seconds=4),
            T.DayTimeIntervalType(),
            "1 02:03:04.000000000",
        ),
        (14, T.YearMonthIntervalType(), "1-2"),
        ([1, None, 3], T.ArrayType(T.IntegerType()), "[1,null,3]"),
        (["a", None], None, '["a",null]'),
        ([], None, "[]"),
        ({"key2": 1.5, "key1": None}, T.MapType(T.StringType(), T.DoubleType()), '{"key1":null,"key2":1.5}'),
        ({}, None, "{}"),
        (
            Row(name="Alice", age=30, child=Row(x=123.456, ok=True), tags=["x", None]),
            STRUCT_TYPE,
            '{"name":"Alice","age":30,"child":{"x":123.456,"ok":true},"tags":["x",null]}',
        ),
        (("Bob", None, None, []), STRUCT_TYPE, '{"name":"Bob","age":null,"child":null,"tags":[]}'),
        (Row(col1="red", col2=100), None, '{"col1":"red","col2":100}'),
        (
            {"k": Row(col1=123.456, col2=True)},
            None,
            '{"k":{"col1":123.456,"col2":true}}',
        ),
        ([{"a": [dt.date(2020, 1, 1)]}], None, '[{"a":[2020-01-01]}]'),
    ],
)
def test_to_hive_string(value: Any, data_type: Any, expected: str) -> None:
    assert to_hive_string(value, data_type) == expected


def test_format_result_uses_schema_types() -> None:
    schema = T.StructType([T.StructField("f", T.FloatType()), T.StructField("s", STRUCT_TYPE)])
    df = FakeDataFrame(["f", "s"], [(f32(0.1), ("x", 1, None, ["t"]))], schema=schema)
    assert format_result(df, df.collect()) == ['0.1\t{"name":"x","age":1,"child":null,"tags":["t"]}']


def test_format_result_show_tables_and_describe_like_spark_sql() -> None:
    tables = FakeDataFrame(
        ["namespace", "tableName", "isTemporary"], [("default", "t1", False), ("", "v", True)]
    )
    assert format_result(tables, tables.collect()) == ["t1", "v"]
    described = FakeDataFrame(
        ["col_name", "data_type", "comment"], [("id", "int", None), ("name", "string", "the name")]
    )
    assert format_result(described, described.collect()) == [
        "id                  \tint                 \t                    ",
        "name                \tstring              \tthe name            ",
    ]


def test_shell_error_for_parse_error_from_session_is_relocated() -> None:
    err_stream = io.StringIO()
    shell = Shell(FakeSession(lambda text: SqlParseError("Bad", 1, 3, text)), io.StringIO(), err_stream)
    assert shell.run_script("\n\n   SELECT x") == 1
    assert err_stream.getvalue().splitlines() == [
        "Error in query: Bad (line 3, column 6)",
        "   SELECT x",
        "     ^",
    ]


def test_metastore_subcommand_reaches_the_hive_sync_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hive_sync.metastore import free_port
    from sqlext import shell as shell_module

    rc = shell_module.main(["metastore", "status", "--port", str(free_port()), "--dir", str(tmp_path)])
    assert rc == 3  # stopped
    assert "metastore stopped" in capsys.readouterr().out


def test_procedure_messages_are_shown_as_plain_lines_unless_silent(capsys: pytest.CaptureFixture[str]) -> None:
    def handler(text: str) -> Any:
        logging.getLogger("sqlext.procedures.compaction").info("run_compaction on t: no compaction scheduled")
        logging.getLogger("engine.services.compaction").debug("internal detail")
        return FakeDataFrame()

    code, _, err = run(["-e", "CALL run_compaction(op => 'run', table => 't')"], FakeSession(handler), capsys)
    assert code == 0
    assert err[0] == "run_compaction on t: no compaction scheduled"
    assert not any("internal detail" in line for line in err)
    code, _, err = run(["-S", "-e", "CALL run_compaction(op => 'run', table => 't')"], FakeSession(handler), capsys)
    assert code == 0 and err == []


def test_help_lists_the_subcommands_and_each_has_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    from sqlext import shell as shell_module

    assert shell_module.main(["--help"]) == 0
    text = capsys.readouterr().out
    for usage in ("sqlext serve", "sqlext metastore start|stop|status", "sqlext hive-sync --base-path"):
        assert usage in text
    assert shell_module.main(["metastore", "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: sqlext metastore" in text and "(default: 9083)" in text and "(default: ./metastore)" in text
    assert shell_module.main(["hive-sync", "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: sqlext hive-sync" in text and "run_sync_tool.sh" in text
    assert "sets hoodie.datasource.hive_sync.database" in text and "(default: default)" in text
    from sqlext import serve

    assert serve.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "10000" in text and "127.0.0.1" in text


def test_restore_failed_write_and_clean_lines_tell_the_truth(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """What the shell shows around a savepoint restore, a failed INSERT and the cleans after them (real engine
    calls on a table without Spark): the restore is one plain INFO line, never "rolled back failed"; a failed
    statement shows its error alone (the clean-up of its instant is INFO, shown with -v only); no backwards
    incremental-clean range."""
    from engine.config import HoodieConfig
    from engine.filegroup.naming import base_file_name
    from engine.services.clean import run_clean
    from engine.services.savepoint import create_savepoint, restore_to_savepoint
    from engine.table import Table
    from engine.timeline import CommitMetadata
    from engine.timeline.commit_metadata import WriteStat
    from engine.write.commit import start_write
    from engine.write.operation import WriteOperation
    from engine.write.rollback import rollback_instant
    from tests.unit.synthetic_timeline import commit

    table = Table.create(str(tmp_path / "t"), {
        "hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.recordkey.fields": "id",
        "hoodie.table.precombine.field": "ts",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"})

    def write() -> str:
        ts = table.reload_timeline().new_instant_time()
        name = base_file_name("a-0", "0-0-0", ts)
        (tmp_path / "t" / name).write_bytes(b"x")
        metadata = CommitMetadata(operation_type="UPSERT")
        metadata.add_write_stat("", WriteStat(file_id="a-0", path=name, num_writes=1))
        commit(table, ts, metadata=metadata)
        return ts

    times = [write() for _ in range(5)]
    create_savepoint(table.reload(), times[2])
    conf = HoodieConfig({"hoodie.cleaner.commits.retained": "2"})
    run_clean(table.reload(), conf)

    def handler(text: str) -> Any:
        if text.startswith("CALL rollback_to_savepoint"):
            restore_to_savepoint(table.reload(), times[2])
        elif text.startswith("INSERT"):
            instant = start_write(table.reload(), WriteOperation.INSERT)
            rollback_instant(table, instant)  # as the writer does when a statement fails
            return SqlAnalysisError("[CAST_INVALID_INPUT] The value 'x' cannot be cast to INT")
        elif text.startswith("CALL run_clean"):
            write()  # a write after the restore: the earliest commit to retain is before the last clean's
            run_clean(table.reload(), conf)
        return FakeDataFrame()

    # Under pytest the root handler is pytest's: records at WARNING and above (what the shell prints with
    # their level) are read from caplog; engine.write is opened to INFO to see the clean-up records.
    caplog.set_level(logging.INFO, logger="engine.write")
    script = "CALL rollback_to_savepoint(table => 't', instant_time => 'x'); CALL run_clean(table => 't')"
    code, _, err = run(["-e", script], FakeSession(handler), capsys)
    assert code == 0
    assert any(line.endswith(f"restored to savepoint {times[2]}: 2 instant(s) rolled back "
                             f"(restore {line.rsplit(' ', 1)[-1][:-1]})") for line in err), err
    assert not any("incremental clean" in line for line in err), err
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    restore = [r for r in caplog.records if r.name == "engine.write.rollback"]
    assert len(restore) == 2 and all(r.levelno == logging.INFO for r in restore)
    assert all(r.getMessage().startswith("rolled back completed commit") for r in restore)
    caplog.clear()
    code, _, err = run(["-e", "INSERT INTO t VALUES ('x')"], FakeSession(handler), capsys)
    assert code == 1
    assert err[0] == "Error in query: [CAST_INVALID_INPUT] The value 'x' cannot be cast to INT", err
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    cleanup = [r for r in caplog.records if r.name == "engine.write.rollback"]
    assert [r.levelno for r in cleanup] == [logging.INFO]  # shown with -v only
    assert cleanup[0].getMessage().startswith("rolled back failed commit")


class _FakeSparkConf:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def set(self, key: str, value: str) -> None:
        self.values[key] = value


class _FakeSpark:
    def __init__(self) -> None:
        self.conf = _FakeSparkConf()


def test_hiveconf_never_reaches_spark_submit_as_a_non_spark_key(capsys: pytest.CaptureFixture[str]) -> None:
    """`sqlext --hiveconf hive.metastore.uris=...` printed spark-submit's "Warning: Ignoring non-Spark config
    property: hive.metastore.uris": PySpark hands every builder conf to spark-submit, which warns for each key
    not starting with "spark.". The builder now gets spark.hadoop.<key> (the Hive client's Hadoop
    configuration: the setting takes effect), the running session the key itself (SET, ${hiveconf:k})."""
    session = FakeSession(select_handler)
    session.spark = _FakeSpark()  # type: ignore[attr-defined]
    factory = Factory(session)
    argv = ["--hiveconf", "hive.metastore.uris=thrift://h:9083", "--hiveconf", "hive.cli.print.header=true",
            "--hiveconf", "spark.sql.x=1", "-d", "var=3", "-e", "SELECT 1"]
    code = main(argv, session_factory=factory)
    out = capsys.readouterr().out
    assert code == 0 and out == "n\n1\n"  # hive.cli.print.header still honoured
    assert factory.kwargs is not None
    launch = factory.kwargs["conf"]
    assert all(key.startswith("spark.") for key in launch), launch
    assert launch == {"spark.hadoop.hive.metastore.uris": "thrift://h:9083",
                      "spark.hadoop.hive.cli.print.header": "true", "spark.sql.x": "1"}
    assert session.spark.conf.values == {  # type: ignore[attr-defined]
        "hive.metastore.uris": "thrift://h:9083", "hive.cli.print.header": "true", "var": "3"}
