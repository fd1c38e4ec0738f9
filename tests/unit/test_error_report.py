"""What the shell shows of a failed statement: the innermost meaningful cause in one or two lines."""

from __future__ import annotations

from engine.errors import ConfigError, WriteError
from hive_sync.errors import SyncError
from sqlext.error_report import one_line, summarize
from sqlext.errors import ProcedureError

DATA_SOURCE_FAILURE = """[PYTHON_DATA_SOURCE_ERROR] Failed to generate Python data source read partitions: \
Traceback (most recent call last):
  File "/site/engine/spark/datasource.py", line 144, in partitions
    plan = self._plan()
           ^^^^^^^^^^^^
  File "/site/engine/read/planner.py", line 103, in normalize_instant
    raise ConfigError(
engine.errors.ConfigError: unsupported instant 'yesterday': expected yyyyMMddHHmmss[SSS]
 SQLSTATE: 38000"""

TASK_FAILURE = """An error occurred while calling o123.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most \
recent failure: Lost task 0.0 in stage 3.0 (TID 7) (192.0.2.2 executor driver): \
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/site/engine/read/file_group_reader.py", line 88, in read
    raise CorruptFile(
engine.errors.CorruptFile: base file 2020/a.parquet of table /wh/t is not a parquet file (magic bytes)

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:1)
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext(PythonRunner.scala:2)
"""


class FakeSparkError(Exception):
    """Stands for a py4j-converted Spark error: only its text matters here."""


def test_our_error_inside_a_spark_data_source_error_is_shown_alone() -> None:
    assert summarize(FakeSparkError(DATA_SOURCE_FAILURE)) == (
        "unsupported instant 'yesterday': expected yyyyMMddHHmmss[SSS]")


def test_our_error_raised_in_an_executor_task_is_found_under_the_jvm_frames() -> None:
    assert summarize(FakeSparkError(TASK_FAILURE)) == (
        "base file 2020/a.parquet of table /wh/t is not a parquet file (magic bytes)")


def test_a_foreign_error_in_a_traceback_keeps_spark_headline_and_the_cause() -> None:
    text = DATA_SOURCE_FAILURE.replace("engine.errors.ConfigError", "ZeroDivisionError")
    assert summarize(FakeSparkError(text)) == (
        "[PYTHON_DATA_SOURCE_ERROR] Failed to generate Python data source read partitions: "
        "ZeroDivisionError: unsupported instant 'yesterday': expected yyyyMMddHHmmss[SSS]")


def test_our_own_error_keeps_its_hint_on_a_second_line() -> None:
    exc = ProcedureError("the write to default.t committed, but Hive sync failed: columns (a int, b string) are "
                         "incompatible\nRe-run it with CALL hive_sync(table => 'default.t')")
    assert summarize(exc).splitlines() == [
        "the write to default.t committed, but Hive sync failed: columns (a int, b string) are incompatible",
        "Re-run it with CALL hive_sync(table => 'default.t')",
    ]


def test_the_cause_chain_is_searched_for_our_error() -> None:
    try:
        try:
            raise WriteError("insert into /wh/t failed at instant 20260101000000000 and was rolled back: boom")
        except WriteError as inner:
            raise RuntimeError("wrapper") from inner
    except RuntimeError as outer:
        assert summarize(outer) == "insert into /wh/t failed at instant 20260101000000000 and was rolled back: boom"
    assert summarize(SyncError("table default.t: no such partition field dt")) == (
        "table default.t: no such partition field dt")
    assert summarize(ConfigError("")) == "ConfigError"


def test_unexpected_errors_are_named_by_type_on_one_line() -> None:
    assert summarize(KeyError("k")) == "KeyError: 'k'"
    assert summarize(ValueError("first\nsecond")) == "ValueError: first"


def test_long_lines_keep_their_start_and_end() -> None:
    text = "start " + "x" * 2000 + " end"
    folded = one_line(text, limit=100)
    assert len(folded) <= 100
    assert folded.startswith("start ") and folded.endswith(" end") and " … " in folded


class Py4JJavaError(Exception):
    """Stands for py4j's error class: only its text matters to the summary."""


def test_a_jvm_failure_shows_the_java_message_and_its_root_cause() -> None:
    """A damaged parquet file read by Spark's own scan fails in the JVM; py4j's first line names only the
    gateway call, the user needs the file and why."""
    text = ("An error occurred while calling o572.collectToPython.\n"
            ": org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
            "file:/wh/t/p=1/f1.parquet.  SQLSTATE: KD001\n"
            "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:856)\n"
            "Caused by: java.io.IOException: can not read class org.apache.parquet.format.FileMetaData: bad type\n"
            "\t... 25 more\n"
            "Caused by: shaded.parquet.org.apache.thrift.protocol.TProtocolException: don't know what type: 15\n")
    assert summarize(Py4JJavaError(text)) == (
        "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:/wh/t/p=1/f1.parquet. "
        "(cause: TProtocolException: don't know what type: 15)")
    plain = "An error occurred while calling o1.sql.\n: java.lang.IllegalStateException: no active session\n"
    assert summarize(Py4JJavaError(plain)) == "no active session"


def test_a_python_worker_failure_shows_the_innermost_error() -> None:
    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
            '  File "x.py", line 1, in f\nOSError: cannot open /wh/t/f1.parquet\n')
    assert summarize(RuntimeError(text)) == (
        "An exception was thrown from the Python worker: OSError: cannot open /wh/t/f1.parquet")
