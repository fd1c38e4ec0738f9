"""Statement splitting and the interactive "complete statement" test (sqlext.parser.split)."""

from __future__ import annotations

import pytest

from sqlext.errors import SqlParseError
from sqlext.parser import StatementText, is_complete, split_statements
from tests.conftest import HUDI_FIXTURES as FIXTURES  # noqa: E402
from tests.conftest import METADATA_FIXTURE_SHAPE


def texts(script: str) -> list[str]:
    return [s.text for s in split_statements(script)]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("SELECT 1; SELECT 2", ["SELECT 1", "SELECT 2"]),
        ("SELECT 1;", ["SELECT 1"]),
        ("  SELECT 1  ;  ;;  SELECT 2 ;  ", ["SELECT 1", "SELECT 2"]),
        ("", []),
        (" ;; ; ", []),
        ("-- only a comment\n/* and another */", []),
        ("SELECT 'a;b'; SELECT 2", ["SELECT 'a;b'", "SELECT 2"]),
        ('SELECT "a;b"; SELECT 2', ['SELECT "a;b"', "SELECT 2"]),
        ("SELECT `a;b` FROM t; SELECT 2", ["SELECT `a;b` FROM t", "SELECT 2"]),
        ("SELECT 'it\\'s;'; SELECT 2", ["SELECT 'it\\'s;'", "SELECT 2"]),
        ("SELECT 'it''s;'; SELECT 2", ["SELECT 'it''s;'", "SELECT 2"]),
        ('SELECT "say \\";"; SELECT 2', ['SELECT "say \\";"', "SELECT 2"]),
        ("SELECT `a``;b`; SELECT 2", ["SELECT `a``;b`", "SELECT 2"]),
        ("SELECT 1 -- c;omment\n; SELECT 2", ["SELECT 1", "SELECT 2"]),
        ("SELECT 1 /* c;omment */ + 1; SELECT 2", ["SELECT 1 /* c;omment */ + 1", "SELECT 2"]),
        (
            "SELECT /* a /* nested; */ still; */ 1; SELECT 2",
            ["SELECT /* a /* nested; */ still; */ 1", "SELECT 2"],
        ),
        ("SELECT '--not a comment;' ; SELECT 2", ["SELECT '--not a comment;'", "SELECT 2"]),
        ('SELECT "/* not; a comment"; SELECT 2', ['SELECT "/* not; a comment"', "SELECT 2"]),
        ("/* lead */ SELECT 1 /* tail */ ;", ["SELECT 1"]),
        ("SELECT r'raw\\'; SELECT 2", ["SELECT r'raw\\'", "SELECT 2"]),
    ],
)
def test_split_statements(script: str, expected: list[str]) -> None:
    assert texts(script) == expected


def test_positions_are_one_based_line_and_column() -> None:
    script = "-- header\nSELECT 1;\n  SELECT\n  2 ;   UPDATE t SET a = 1"
    assert split_statements(script) == [
        StatementText("SELECT 1", 2, 1),
        StatementText("SELECT\n  2", 3, 3),
        StatementText("UPDATE t SET a = 1", 4, 9),
    ]


def test_statement_keeps_inner_comments_and_hints() -> None:
    script = "INSERT INTO t SELECT /*+ REPARTITION(2) */ a -- trailing\nFROM s;"
    assert texts(script) == ["INSERT INTO t SELECT /*+ REPARTITION(2) */ a -- trailing\nFROM s"]


@pytest.mark.parametrize(
    ("script", "line", "column", "message"),
    [
        ("SELECT 1;\nSELECT 'abc", 2, 8, "Unclosed string literal"),
        ('SELECT "abc', 1, 8, "Unclosed string literal"),
        ("SELECT `abc", 1, 8, "Unclosed quoted identifier"),
        ("SELECT 1 /* open /* nested */", 1, 10, "Unclosed bracketed comment"),
    ],
)
def test_unterminated_constructs_raise_with_position(
    script: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(SqlParseError) as info:
        split_statements(script)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert err.message == message
    assert str(err).splitlines()[2].index("^") == column - 1


@pytest.mark.parametrize(
    ("buffer", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1;   ", True),
        ("SELECT 1; -- done", True),
        ("SELECT 1; /* done */", True),
        ("SELECT ';", False),
        ("SELECT ';'", False),
        ("SELECT ';';", True),
        ("SELECT 1 -- ;", False),
        ("SELECT 1 /* ; */", False),
        ("SELECT 1 /* ; ", False),
        ("SELECT `;", False),
        ("SELECT 1;\nSELECT 2", False),
        ("", False),
        ("-- just a comment;", False),
        ("CREATE TABLE t (\n  a INT\n);", True),
    ],
)
def test_is_complete(buffer: str, complete: bool) -> None:
    assert is_complete(buffer) is complete


FIXTURE_COUNTS = {
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.sql": 3,
    "quickstart_trips_table/mor/avro/v6_trips_8i3d.sql": 3,
    "sample_table/cow/v6_complexkeygen_hivestyle.sql": 3,
    "sample_table/cow/v6_empty.sql": 1,
    "sample_table/cow/v6_nonpartitioned.sql": 3,
    "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields.sql": 2,
    "sample_table/cow/v6_simplekeygen_nonhivestyle.sql": 3,
    "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable.sql": 4,
    "sample_table/cow/v6_timebasedkeygen_nonhivestyle.sql": 3,
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle.sql": 3,
    "sample_table/mor/parquet/v6_empty.sql": 1,
    "sample_table/mor/parquet/v6_nonpartitioned.sql": 3,
    "sample_table/mor/parquet/v6_nonpartitioned_rollback.sql": 5,
    "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields.sql": 2,
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.sql": 3,
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable.sql": 4,
}


@pytest.mark.parametrize("relative", sorted(FIXTURE_COUNTS))
def test_fixture_scripts_split(relative: str) -> None:
    script = (FIXTURES / relative).read_text()
    statements = split_statements(script)
    assert len(statements) == FIXTURE_COUNTS[relative]
    lines = script.splitlines()
    for stmt in statements:
        # The license header comment is not part of any statement; each starts where it says.
        assert not stmt.text.startswith(("/*", "--"))
        assert lines[stmt.line - 1][stmt.column - 1 :].startswith(stmt.text.splitlines()[0])
        assert not stmt.text.endswith(";")


def test_every_fixture_script_is_listed() -> None:
    found = {str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("v6_*.sql")
             if p.relative_to(FIXTURES).parts[0] != METADATA_FIXTURE_SHAPE}
    assert found == set(FIXTURE_COUNTS)
