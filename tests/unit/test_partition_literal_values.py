"""Static partition values are read as Spark reads string literals (``ParserUtils.unescapeSQLString``)."""

from __future__ import annotations

import pytest

from sqlext.commands.partitions import literal_value, unescape_sql_string


@pytest.mark.parametrize(("body", "value"), [
    ("plain", "plain"), ("a\\nb", "a\nb"), ("\\u000d", "\r"), ("a\\0b", "a\x00b"), ("it\\'s", "it's"),
    ("back\\\\slash", "back\\slash"), ("\\101", "A"), ("50\\%", "50\\%"), ("\\x", "x"), ("\\U0001", "U0001"),
    ("trailing\\", "trailing\\"), ("\U0001F600", "\U0001F600"),
])
def test_spark_escapes_are_decoded(body: str, value: str) -> None:
    assert unescape_sql_string(body) == value


def test_literal_value_strips_quotes_and_decodes() -> None:
    assert literal_value("'line\\nbreak'") == "line\nbreak"
    assert literal_value('"q\\"x"') == 'q"x'
    assert literal_value("12") == "12"
