"""Partition specs (``PARTITION (col = value, ...)``) against a Hudi table's partition paths."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from engine.formats.conform import conform_table
from engine.keygen import KeyGenerator
from engine.spark.record_keys import table_arrow_schema
from engine.table import Table
from sqlext.errors import SqlAnalysisError

_ESCAPED = {"0": "\x00", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a",
            "\\": "\\", "%": "\\%", "_": "\\_"}
"""Spark's one-character escapes in string literals (``ParserUtils.unescapeSQLString``)."""


def unescape_sql_string(body: str) -> str:
    """The value of a Spark SQL string literal's body (between its quotes), with Spark's escapes decoded:
    ``\\uXXXX``, three-digit octal ``\\ooo``, ``\\n``, ``\\t``, ``\\0``, ... (``\\%`` and ``\\_`` stay as written;
    any other escaped character stands for itself), as ``ParserUtils.unescapeSQLString`` decodes them."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        hex_digits = body[i + 2:i + 6]
        if nxt == "u" and len(hex_digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in hex_digits):
            out.append(chr(int(hex_digits, 16)))
            i += 6
        elif (i + 3 < n and body[i + 1] in "01" and body[i + 2] in "01234567" and body[i + 3] in "01234567"):
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(_ESCAPED.get(nxt, nxt))
            i += 2
    return "".join(out)


def literal_value(value_sql: str) -> str:
    """The value of a SQL literal: a quoted string's body with Spark's escapes decoded (so ``'a\\nb'`` holds a
    newline, as Spark reads it), any other literal's text as written."""
    text = value_sql.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return unescape_sql_string(text[1:-1])
    return text


def _check_columns(table: Table, spec: Mapping[str, str | None], display: str) -> dict[str, str | None]:
    fields = {f.lower(): f for f in table.partition_fields}
    if not fields:
        raise SqlAnalysisError(f"{display} is not partitioned; a PARTITION clause is not allowed")
    resolved = {}
    for column, value in spec.items():
        if column.lower() not in fields:
            raise SqlAnalysisError(
                f"{display}: {column} is not a partition column (partition columns: "
                f"{', '.join(table.partition_fields)})")
        resolved[fields[column.lower()]] = value
    return resolved


def partition_path_from_values(table: Table, values: Mapping[str, str] | pa.Table) -> str:
    """The partition path the table's key generator gives to a row with ``values`` in its partition
    columns: literal texts (cast to the column types here), or a one-row table of values already cast (as
    Spark casts a static partition value, e.g. ``'2021-05-20 00:00:00'`` to a DATE)."""
    schema = table_arrow_schema(table)
    names = values.column_names if isinstance(values, pa.Table) else list(values)
    wanted = pa.schema([f for f in schema if f.name in names])
    raw = values if isinstance(values, pa.Table) else pa.table(
        {name: pa.array([values[name]], pa.string()) for name in wanted.names})
    row = conform_table(raw, wanted)
    # the key generator of Spark SQL's writes (SqlKeyGenerator: TIMESTAMP partition values as timestamps)
    return str(KeyGenerator.from_config(table.config, sql_writer=True).partition_paths(row)[0].as_py())


def partition_paths_for_spec(table: Table, spec: Mapping[str, str | None], display: str) -> list[str]:
    """Existing partition paths matching ``spec`` (columns with a ``None`` value match anything).

    Raises:
        SqlAnalysisError: the table is not partitioned or a column is not a partition column.
    """
    resolved = _check_columns(table, spec, display)
    keygen = KeyGenerator.from_config(table.config)
    order = [f for f in table.partition_fields]
    matches = []
    for path in table.file_system_view().partition_paths():
        values = dict(zip(order, keygen.partition_values(path), strict=False))
        if all(v is None or values.get(c) == literal_value(v) for c, v in resolved.items()):
            matches.append(path)
    return matches
