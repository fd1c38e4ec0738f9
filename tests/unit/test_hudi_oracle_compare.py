"""The Hudi oracle's comparison rules (tests/hudi_oracle/compare.py), without a JVM: which answers count as the
same, which differences the known-differences list explains, and the value encoding both sides share."""

from __future__ import annotations

import datetime
import decimal
import math

from tests.hudi_oracle import known_differences
from tests.hudi_oracle.compare import Difference, compare_answers
from tests.hudi_oracle.oracle import Answer
from tests.hudi_oracle.scripts import CORPUS, random_script
from tests.hudi_oracle.values import jsonable

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def test_rows_compare_as_multisets_without_volatile_meta_columns() -> None:
    hudi = Answer(True, [*META, "id"], [["1", "1_0", "1", "", "f1", 1], ["2", "2_0", "2", "", "f2", 2]])
    ours = Answer(True, [*META, "id"], [["9", "9_0", "2", "", "g", 2], ["8", "8_0", "1", "", "h", 1]])
    assert compare_answers(hudi, ours, "select * from t", None) is None
    ours.rows[0][2] = "3"  # another record key is a difference
    assert compare_answers(hudi, ours, "select * from t", None)[0] == "rows"
    # a volatile column the statement names is compared
    assert compare_answers(Answer(True, ["_hoodie_commit_time"], [["1"]]),
                           Answer(True, ["_hoodie_commit_time"], [["2"]]),
                           "select _hoodie_commit_time from t", None)[0] == "rows"


def test_failures_compare_by_side_and_expected_phrase() -> None:
    ok, fails = Answer(True), Answer(False, error_class="AnalysisException", message="Can't find primaryKey `id1`")
    assert compare_answers(ok, fails, "create table t", None)[0] == "only_sqlext_fails"
    assert compare_answers(fails, ok, "create table t", None)[0] == "only_hudi_fails"
    assert compare_answers(fails, fails, "create table t", "id1") is None
    other = Answer(False, error_class="SqlError", message="bad key")
    assert compare_answers(fails, other, "create table t", "id1")[0] == "error_phrase"


def test_call_results_compare_by_columns_and_count() -> None:
    hudi = Answer(True, ["timestamp", "state"], [["20260101000000000", "COMPLETED"]])
    ours = Answer(True, ["timestamp", "state"], [["20270101000000000", "COMPLETED"]])
    assert compare_answers(hudi, ours, "call run_compaction(table => 't')", None) is None
    ours.rows.append(["x", "y"])
    assert compare_answers(hudi, ours, "call run_compaction(table => 't')", None)[0] == "call_result"


def test_known_differences_explain_dml_counts_only() -> None:
    counts = Difference("s#1:columns", "columns", "insert into t values (1)", "[] []",
                        "['num_affected_rows', 'num_updated_rows', 'num_deleted_rows', 'num_inserted_rows'] [[1]]")
    assert known_differences.reason(counts)
    rows = Difference("s#2:rows", "rows", "select * from t", "['id'] [[1]]", "['id'] [[2]]")
    assert known_differences.reason(rows) is None


def test_values_encode_alike_across_pyspark_versions() -> None:
    assert jsonable(decimal.Decimal("10.50")) == "dec:10.5"
    assert jsonable(decimal.Decimal("100")) == "dec:100"
    assert jsonable(datetime.date(2021, 1, 5)) == "date:2021-01-05"
    assert jsonable(0.1 + 0.2) == 0.3
    assert jsonable(math.nan) == "float:nan"
    assert jsonable({"b": 1, "a": [b"\x01"]}) == [["a", ["bin:01"]], ["b", 1]]


def test_scripts_are_seeded_and_name_their_tables() -> None:
    assert [s.sql for s in random_script(7).statements] == [s.sql for s in random_script(7).statements]
    assert [s.sql for s in random_script(7).statements] != [s.sql for s in random_script(8).statements]
    for script in [*CORPUS, random_script(1)]:
        assert script.statements[0].sql.startswith("create table {t}")
        assert all("{" not in s.sql.replace("{t}", "").replace("{t2}", "") for s in script.statements)
    assert len({s.name for s in CORPUS}) == len(CORPUS)
