"""Bad input (issue 15): seeded malformed and adversarial statements and damaged files; prints one JSON document.

One Python process, one Spark session (``sqlext.session.Session``, built as ``tests/conftest.py`` builds its
``session`` fixture, on ``local[1]``), four prepared tables (copy-on-write and merge-on-read, partitioned
hive-style by ``dt`` and not; merge-on-read ones carry a log file). Each case is one statement run with
``Session.sql`` (or, for damaged files, a read of a damaged COPY of a prepared table). Classes:

* ``malformed_sql``: valid Hudi statements (CREATE TABLE ... USING hudi, INSERT, MERGE INTO, UPDATE, DELETE,
  ALTER, CALL) mutated or truncated so that Spark's own parser refuses them (mutations Spark still parses are
  drawn again): the statement must fail naming a position (``line N, column|pos M``) or the problem;
* ``wrong_types_overflow``: a literal of another type or out of range for its column (INSERT, UPDATE, MERGE):
  either an error naming the column, the value or the types, or success storing exactly what Spark's own
  ``CAST(literal AS type)`` gives in this session (Hudi's INSERT casts with Spark's rules);
* ``null_empty_keys``: NULL and empty record keys and precombine values, NULL partition values: an error
  naming the key field, or success with the row as Hudi stores it (NULL partition values go to Hudi's
  ``__HIVE_DEFAULT_PARTITION__``);
* ``partition_values``: partition values holding ``/``, ``..``, ``=``, ``%``, NUL, newlines and 4-byte unicode
  (INSERT values and static ``PARTITION (dt = ...)`` specs): either an error naming the value or field, or the
  row reads back exactly (session and hudi-rs) and its file lies under the table's base path;
* ``paths_and_names``: ``LOCATION`` with ``..`` and relative paths, table names with ``/``, ``..``, backticks:
  an error naming the name or location, or a table created exactly where Spark puts it (then dropped);
* ``corrupted_files``: a copy of a prepared table with a base parquet file, a log file, the latest completed
  instant file or ``hoodie.properties`` (with and without ``hoodie.properties.backup``) truncated or bit-flipped
  (bits of the magic/footer for parquet): the read must fail naming the file (or the table for
  ``hoodie.properties``) or give the rows Hudi gives (the committed rows; for a damaged log block, also the rows
  without that log file, as Hudi's log reader skips a corrupt block).

Checked after every case: (a) the outcome above, with no bare Python error class (``KeyError``, ``IndexError``,
``struct.error``, ...) in what the user sees (``sqlext.error_report.summarize``); (b) the session answers
``SELECT 1``; (c) the case's prepared table reads the same rows through the session and through hudi-rs — the
rows from before the case when it failed — and its latest completed instant did not change on a failure;
(d) nothing was created outside the warehouse's tables: the work folder (with a sentinel folder beside the
warehouse and the session's working directory) and the work folder's parent are listed before and after, and
every payload that tries to leave carries the marker ``bi_esc`` that is looked for.

Usage: ``python bench/bench_bad_input.py [--cases 500] [--seed 15] [--classes a,b] [--work DIR]``. The CI test
(tests/integration/test_reliability_bad_input.py) runs a reduced set.
"""

from __future__ import annotations

import argparse
import collections
import decimal
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CLASSES = ("malformed_sql", "wrong_types_overflow", "null_empty_keys", "partition_values", "paths_and_names",
           "corrupted_files")
MARKER = "bi_esc"
COLUMNS = ("id", "name", "price", "qty", "small", "amount", "ts", "dt")
COLUMN_TYPES = {"id": "INT", "name": "STRING", "price": "DOUBLE", "qty": "BIGINT", "small": "TINYINT",
                "amount": "DECIMAL(10,2)", "ts": "BIGINT", "dt": "STRING"}
TABLES = {  # name -> (type, partitioned)
    "bi_cow_p": ("cow", True), "bi_mor_p": ("mor", True), "bi_cow": ("cow", False), "bi_mor": ("mor", False)}
LEAKED = re.compile(r"(?<![\w.])(KeyError|IndexError|struct\.error|TypeError|AttributeError|ValueError|"
                    r"AssertionError|UnicodeDecodeError|UnicodeEncodeError|ZeroDivisionError|OverflowError|"
                    r"RecursionError|UnboundLocalError|NameError|StopIteration|JSONDecodeError|"
                    r"ArrowInvalid|ArrowTypeError|OSError|FileNotFoundError|NotImplementedError)\b")
POSITION = re.compile(r"line \d+,? (column|pos(ition)?) \d+", re.IGNORECASE)


@dataclass
class Case:
    """One generated case: what to run, which prepared table it touches and what counts as right."""

    cls: str
    kind: str
    sql: str = ""
    table: str | None = None
    needles: list[str] = field(default_factory=list)
    expect: str = "error"  # error | error_or_cast | error_or_row | error_or_created | read
    data: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.cls, "kind": self.kind}
        if self.sql:
            out["sql"] = self.sql
        if self.table:
            out["table"] = self.table
        out.update({k: v for k, v in self.data.items() if isinstance(v, (str, int, float, bool)) or v is None})
        return out


def column_names(partitioned: bool) -> tuple[str, ...]:
    return COLUMNS if partitioned else COLUMNS[:-1]


def sql_literal(value: Any, sql_type: str | None = None) -> str:
    """A SQL literal for ``value`` (strings with every character escaped so NUL/newline survive the lexer)."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        escaped = "".join(
            "\\\\" if ch == "\\" else "\\'" if ch == "'" else f"\\u{ord(ch):04x}" if ord(ch) < 32 else ch
            for ch in value)
        return f"'{escaped}'"
    return str(value)


def row_values(partitioned: bool, **over: Any) -> list[str]:
    base: dict[str, str] = {"id": "1000", "name": "'x'", "price": "1.0D", "qty": "1L", "small": "CAST(1 AS TINYINT)",
                            "amount": "CAST(1.00 AS DECIMAL(10,2))", "ts": "1L", "dt": "'d1'"}
    base.update({k: v for k, v in over.items()})
    return [base[c] for c in column_names(partitioned)]


# ---------------------------------------------------------------- generators

VALID_TEMPLATES: list[tuple[str, str]] = [
    ("create", "CREATE TABLE {new} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) "
               "TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts')"),
    ("create", "CREATE TABLE {new} (id INT, v STRING, ts BIGINT) USING hudi TBLPROPERTIES (type = 'mor', "
               "primaryKey = 'id', preCombineField = 'ts')"),
    ("insert", "INSERT INTO {t} VALUES ({row})"),
    ("insert", "INSERT INTO {t} SELECT {row}"),
    ("merge", "MERGE INTO {t} AS t USING (SELECT {row_named}) AS s ON t.id = s.id "
              "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    ("merge", "MERGE INTO {t} t USING (SELECT 1 AS id, 'm' AS name, 9L AS ts) s ON t.id = s.id "
              "WHEN MATCHED AND s.ts > 0 THEN UPDATE SET t.name = s.name, t.ts = s.ts"),
    ("update", "UPDATE {t} SET name = 'u', ts = 5 WHERE id = 1 AND name IS NOT NULL"),
    ("delete", "DELETE FROM {t} WHERE id = 2 AND (price > 0 OR qty IN (1, 2, 3))"),
    ("alter", "ALTER TABLE {t} ADD COLUMNS (extra STRING COMMENT 'c')"),
    ("alter", "ALTER TABLE {t} SET TBLPROPERTIES ('hoodie.keep.max.commits' = '40')"),
    ("call", "CALL show_commits(table => '{t}', limit => 10)"),
    ("call", "CALL run_clean(table => '{t}', retain_commits => 2)"),
]


def tokenize(sql: str) -> list[str]:
    return re.findall(r"'(?:[^'\\]|\\.)*'|`[^`]*`|\w+|=>|[^\s\w]", sql)


def mutate(rng: random.Random, sql: str) -> tuple[str, str]:
    """A mutation of ``sql``: truncation, a dropped / doubled / swapped token, or an inserted stray token."""
    tokens = tokenize(sql)
    how = rng.choice(["truncate", "drop", "double", "swap", "stray", "unclosed"])
    i = rng.randrange(1, len(tokens))
    if how == "truncate":
        tokens = tokens[:i]
    elif how == "drop":
        del tokens[i]
    elif how == "double":
        tokens.insert(i, tokens[i])
    elif how == "swap":
        j = min(len(tokens) - 1, i + 1)
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif how == "stray":
        tokens.insert(i, rng.choice([")", "(", ",", "@", ";", "WHERE", "SET", "=>", "'", "`", "#", "\u00a7"]))
    else:
        tokens.insert(i, rng.choice(["'open", "`open", "(("]))
    return " ".join(tokens), how


def gen_malformed(rng: random.Random, h: Harness) -> Case:
    kind, template = rng.choice(VALID_TEMPLATES)
    table = rng.choice(sorted(h.tables))
    partitioned = TABLES[table][1]
    row = ", ".join(row_values(partitioned, id=str(rng.randint(5000, 5999))))
    named = ", ".join(f"{v} AS {c}" for v, c in zip(row_values(partitioned, id="1"), column_names(partitioned),
                                                     strict=True))
    sql = template.format(t=table, new=f"bi_new_{rng.randint(0, 10**6)}", row=row, row_named=named)
    for _ in range(50):
        text, how = mutate(rng, sql)
        if text.strip() and not h.spark_parses(text):
            break
    else:  # pragma: no cover - every template has a refusable mutation
        text, how = sql + " )", "stray"
    return Case("malformed_sql", f"{kind}:{how}", text, table if "{t}" in template else None, expect="error",
                needles=[])


WRONG_VALUES: dict[str, list[str]] = {
    "id": ["2147483648", "-2147483649", "'12abc'", "1.5E10", "'0x10'", "TRUE", "CAST('2024-01-01' AS DATE)",
           "ARRAY(1)", "X'01'", "9999999999999999999999"],
    "small": ["128", "-129", "300", "1000L", "'x'", "127.9", "1E3", "CAST(200 AS SMALLINT)"],
    "qty": ["9223372036854775808", "-9223372036854775809", "1E19", "'9223372036854775808'", "'NaN'", "MAP(1, 2)"],
    "amount": ["123456789012.345", "99999999.999", "'1e400'", "1E20", "-99999999.995", "'abc'", "CAST('Infinity' AS DOUBLE)"],
    "price": ["'abc'", "1E308 * 10", "CAST('NaN' AS DOUBLE)", "'Infinity'", "X'00'", "STRUCT(1)"],
    "name": ["ARRAY('a')", "X'41'", "MAP('a', 'b')", "1E400", "NAMED_STRUCT('a', 1)"],
    "ts": ["'not a number'", "9.9E30", "CAST('2024-01-01 00:00:00' AS TIMESTAMP)", "'1'"],
}


def gen_wrong_types(rng: random.Random, h: Harness) -> Case:
    table = rng.choice(sorted(h.tables))
    partitioned = TABLES[table][1]
    column = rng.choice(sorted(WRONG_VALUES))
    value = rng.choice(WRONG_VALUES[column])
    key = h.next_key()
    how = rng.choice(["insert", "insert", "update", "merge"])
    over = {"id": str(key), column: value}
    if how == "insert":
        sql = f"INSERT INTO {table} VALUES ({', '.join(row_values(partitioned, **over))})"
    elif how == "update":
        key = 1
        if column == "id":
            column, value = "small", rng.choice(WRONG_VALUES["small"])
        sql = f"UPDATE {table} SET {column} = {value} WHERE id = 1"
    else:
        named = ", ".join(f"{v} AS {c}" for v, c in zip(row_values(partitioned, **over), column_names(partitioned),
                                                         strict=True))
        sql = (f"MERGE INTO {table} t USING (SELECT {named}) s ON t.id = s.id "
               f"WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    needles = [column, value.strip("'"), COLUMN_TYPES[column], "CAST", "cast", "overflow", "type"]
    return Case("wrong_types_overflow", f"{how}:{column}", sql, table, needles, "error_or_cast",
                {"key": key, "column": column, "value": value})


def gen_null_keys(rng: random.Random, h: Harness) -> Case:
    table = rng.choice(sorted(h.tables))
    partitioned = TABLES[table][1]
    key = h.next_key()
    choice = rng.choice(["null_id", "null_id_select", "empty_id_cast", "null_ts", "null_dt", "empty_dt",
                         "merge_null_key", "update_key", "delete_null", "insert_null_col_list"])
    over: dict[str, str] = {"id": str(key)}
    needles = ["id", "record key", "recordkey", "primaryKey", "null"]
    expect = "error_or_row"
    if choice in ("null_id", "null_id_select"):
        over["id"] = "NULL"
    elif choice == "empty_id_cast":
        over["id"] = "CAST('' AS INT)"
    elif choice == "null_ts":
        over["ts"] = "NULL"
        needles += ["ts", "preCombine", "precombine", "ordering"]
    elif choice == "null_dt":
        over["dt"] = "NULL"
        needles += ["dt", "partition"]
    elif choice == "empty_dt":
        over["dt"] = "''"
        needles += ["dt", "partition"]
    values = ", ".join(row_values(partitioned, **over))
    if choice == "null_id_select":
        sql = f"INSERT INTO {table} SELECT {values}"
    elif choice == "merge_null_key":
        named = ", ".join(f"{v} AS {c}" for v, c in zip(row_values(partitioned, id="NULL"), column_names(partitioned),
                                                         strict=True))
        sql = (f"MERGE INTO {table} t USING (SELECT {named}) s ON t.id = s.id "
               f"WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    elif choice == "update_key":
        sql = f"UPDATE {table} SET id = NULL WHERE id = 1"
        expect = "error_or_same"
    elif choice == "delete_null":
        sql = f"DELETE FROM {table} WHERE id = NULL"
        expect = "error_or_same"
    elif choice == "insert_null_col_list":
        sql = f"INSERT INTO {table} (name, ts) VALUES ('nokey', 3)"
    else:
        sql = f"INSERT INTO {table} VALUES ({values})"
    return Case("null_empty_keys", choice, sql, table, needles, expect, {"key": key, **over})


PARTITION_VALUES = ["a/b", "../" + MARKER + "_p", "../../" + MARKER + "_pp", "..", ".", "x=y", "dt=z", "50%",
                    "%2F", "%", "a\x00b", "line\nbreak", "tab\tx", "\U0001F600", "\U00020000x", "/" + MARKER + "_abs",
                    "a//b", "trailing/", ".hidden", "a/../../" + MARKER + "_mid", "back\\slash", "sp ace", "q'uote",
                    "\r", "é/ü", "a/./b", "ä=ö/%41"]


def gen_partition_values(rng: random.Random, h: Harness) -> Case:
    table = rng.choice(sorted(t for t in h.tables if h.tables[t][1]))
    value = rng.choice(PARTITION_VALUES)
    key = h.next_key()
    how = rng.choice(["values", "static", "merge"])
    lit = sql_literal(value)
    if how == "values":
        sql = f"INSERT INTO {table} VALUES ({', '.join(row_values(True, id=str(key), dt=lit))})"
    elif how == "static":
        cols = ", ".join(row_values(False, id=str(key)))
        sql = f"INSERT INTO {table} PARTITION (dt = {lit}) VALUES ({cols})"
    else:
        named = ", ".join(f"{v} AS {c}" for v, c in zip(row_values(True, id=str(key), dt=lit), COLUMNS, strict=True))
        sql = (f"MERGE INTO {table} t USING (SELECT {named}) s ON t.id = s.id "
               f"WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    needles = ["dt", "partition", value, repr(value)[1:-1]]
    return Case("partition_values", f"{how}:{value!r}", sql, table, needles, "error_or_row",
                {"key": key, "dt": value})


def gen_paths(rng: random.Random, h: Harness) -> Case:
    n = h.next_key()
    choice = rng.choice(["loc_dotdot", "loc_relative", "loc_deep_dotdot", "loc_in_table", "name_slash",
                         "name_dotdot", "name_backtick", "name_dot_db", "ctas_loc_dotdot", "name_unicode",
                         "loc_empty", "loc_nul"])
    cols = "(id INT, ts BIGINT) USING hudi TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')"
    name = f"bi_tbl_{n}"
    location = None
    if choice == "loc_dotdot":
        location = f"../{MARKER}_loc_{n}"
    elif choice == "loc_relative":
        location = f"{MARKER}_rel_{n}"
    elif choice == "loc_deep_dotdot":
        location = f"{h.warehouse}/bi_cow/../../{MARKER}_deep_{n}"
    elif choice == "loc_in_table":
        location = f"{h.warehouse}/bi_cow_p/dt=d1/{MARKER}_nested_{n}"
    elif choice == "loc_empty":
        location = ""
    elif choice == "loc_nul":
        location = f"{MARKER}_\x00{n}"
    if location is not None:
        sql = f"CREATE TABLE {name} {cols} LOCATION {sql_literal(location)}"
        needles = [name, location, "LOCATION", "location", "path", "Path"]
    elif choice == "ctas_loc_dotdot":
        location = f"../../{MARKER}_ctas_{n}"
        sql = (f"CREATE TABLE {name} USING hudi TBLPROPERTIES (primaryKey = 'id') LOCATION {sql_literal(location)} "
               f"AS SELECT 1 AS id, 1L AS ts")
        needles = [name, location, "LOCATION", "location", "path"]
    else:
        name = {"name_slash": f"`{MARKER}/x{n}`", "name_dotdot": f"`../{MARKER}_{n}`",
                "name_backtick": f"`{MARKER}``{n}`", "name_dot_db": f"`..`.`{MARKER}_{n}`",
                "name_unicode": f"`{MARKER}_\U0001F600{n}`"}[choice]
        sql = f"CREATE TABLE {name} {cols}"
        needles = [name.strip("`"), name, name.replace("``", "`").strip("`"), "name", "database", "Database",
                   "schema", "identifier"]
    return Case("paths_and_names", choice, sql, None, needles, "error_or_created",
                {"name": name, "location": location})


def gen_corrupt(rng: random.Random, h: Harness) -> Case:
    what = rng.choice(["base", "log", "instant", "properties", "properties_with_backup"])
    how = rng.choice(["truncate", "bitflip", "empty"])
    table = rng.choice(sorted(t for t in h.tables if h.tables[t][0] == "mor") if what == "log" else sorted(h.tables))
    return Case("corrupted_files", f"{what}:{how}", "", table, [], "read",
                {"what": what, "how": how, "seed": rng.randint(0, 2**31)})


GENERATORS: dict[str, Callable[[random.Random, Harness], Case]] = {
    "malformed_sql": gen_malformed, "wrong_types_overflow": gen_wrong_types, "null_empty_keys": gen_null_keys,
    "partition_values": gen_partition_values, "paths_and_names": gen_paths, "corrupted_files": gen_corrupt}


# ---------------------------------------------------------------- the harness

def norm(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return value


class Harness:
    """The session, the prepared tables and the checks."""

    def __init__(self, work: Path, tables: list[str] | None = None) -> None:
        self.work = work
        self.tables = {t: TABLES[t] for t in (tables or sorted(TABLES))}
        self.warehouse = work / "warehouse"
        self.cwd = work / "cwd"
        self.copies = work / "copies"
        self.sentinel = work / "sentinel"
        for d in (self.warehouse, self.cwd, self.copies, self.sentinel):
            d.mkdir(parents=True, exist_ok=True)
        (self.sentinel / "keep").write_text("sentinel")
        os.chdir(self.cwd)
        self._key = 10_000
        self.session: Any = None
        self.rows: dict[str, list[tuple[Any, ...]]] = {}

    def next_key(self) -> int:
        self._key += 1
        return self._key

    def start(self) -> None:
        import sqlext

        # Spark's Python workers start in the session's working directory: they find the packages here.
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.session = sqlext.connect(warehouse=self.warehouse, conf={
            "spark.master": "local[1]", "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false", "spark.default.parallelism": "1"})

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def spark_parses(self, text: str) -> bool:
        """Whether Spark's own SQL parser accepts ``text``."""
        try:
            self.session.spark._jsparkSession.sessionState().sqlParser().parsePlan(text)
        except Exception:  # noqa: BLE001 - any refusal (ParseException through py4j) counts
            return False
        return True

    def prepare(self) -> None:
        for name, (kind, partitioned) in self.tables.items():
            cols = ", ".join(f"{c} {COLUMN_TYPES[c]}" for c in column_names(partitioned))
            part = " PARTITIONED BY (dt)" if partitioned else ""
            self.session.sql(f"CREATE TABLE {name} ({cols}) USING hudi{part} TBLPROPERTIES (type = '{kind}', "
                             f"primaryKey = 'id', preCombineField = 'ts', 'hoodie.clean.automatic' = 'false')")
            rows = [row_values(partitioned, id=str(i), name=f"'n{i}'", price=f"{i}.5D", qty=f"{i}L",
                               dt=f"'d{i % 2}'") for i in range(1, 5)]
            self.session.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"({', '.join(r)})" for r in rows))
            if kind == "mor":  # a log file to damage and to merge on read
                self.session.sql(f"UPDATE {name} SET name = 'upd', ts = 2 WHERE id = 2")
            self.rows[name] = self.hudi_rows(name)

    def base(self, table: str) -> Path:
        return self.warehouse / table

    def hudi_rows(self, table: str, base: Path | None = None) -> list[tuple[Any, ...]]:
        import pyarrow as pa
        from hudi import HudiReadOptions, HudiTableBuilder

        batches = HudiTableBuilder.from_base_uri(str(base or self.base(table))).build().read(HudiReadOptions())
        rows = pa.Table.from_batches(batches).to_pylist() if batches else []
        cols = [c for c in column_names(TABLES[table][1])]
        return sorted((tuple(norm(r.get(c)) for c in cols) for r in rows), key=repr)

    def session_rows(self, table: str) -> list[tuple[Any, ...]]:
        cols = column_names(TABLES[table][1])
        got = self.session.sql(f"SELECT {', '.join(cols)} FROM {table}").collect()
        return sorted((tuple(norm(r[c]) for c in cols) for r in got), key=repr)

    def last_completed(self, table: str) -> str | None:
        from engine.table import Table

        last = Table.load(str(self.base(table))).timeline.reload().last_completed_commit()
        return None if last is None else f"{last.timestamp}.{last.action}"

    def listing(self) -> set[str]:
        """Every path under the work folder outside the warehouse's prepared tables, plus the work folder's
        parent's entries carrying the marker."""
        found: set[str] = set()
        skip = {str(self.base(t)) for t in self.tables} | {str(self.copies)}
        for dirpath, dirnames, filenames in os.walk(self.work):
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
            for name in dirnames + filenames:
                found.add(os.path.join(dirpath, name))
        for name in os.listdir(self.work.parent):
            if MARKER in name:
                found.add(str(self.work.parent / name))
        return found

    def escaped_paths(self, before: set[str], allowed: list[str]) -> list[str]:
        """New paths outside ``allowed`` roots (ignoring the metastore's and Spark's own housekeeping)."""
        new = self.listing() - before
        housekeeping = (str(self.warehouse / "metastore_db"), str(self.cwd / "spark-warehouse"),
                        str(self.warehouse / "derby.log"), str(self.cwd / "derby.log"), str(self.cwd / "metastore_db"))
        bad = []
        for p in sorted(new):
            if p.startswith(housekeeping) or any(p == a or p.startswith(a.rstrip("/") + "/") for a in allowed):
                continue
            bad.append(p)
        marker_inside = [p for p in self._marker_paths_in_tables()]
        return bad + marker_inside

    def _marker_paths_in_tables(self) -> list[str]:
        """Folders carrying the marker that landed inside a prepared table's folder but outside its partitions
        (a ``..`` resolved inside the warehouse)."""
        out = []
        for entry in os.listdir(self.warehouse):
            if MARKER in entry:
                out.append(str(self.warehouse / entry))
        return out


# ---------------------------------------------------------------- running one case

def error_text(exc: BaseException) -> str:
    from sqlext.error_report import summarize

    try:
        return summarize(exc)
    except Exception as inner:  # noqa: BLE001 - a broken summary is itself reported
        return f"<summarize failed: {inner!r}> {exc!r}"


def own_or_spark(exc: BaseException) -> bool:
    from pyspark.errors import PySparkException

    from sqlext.error_report import own_error_types

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in chain:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    return isinstance(exc, (*own_error_types(), PySparkException)) or _spark_jvm_error(exc) or any(
        isinstance(e, own_error_types()) for e in chain)


def _spark_jvm_error(exc: BaseException) -> bool:
    """A py4j error carrying one of Spark's own exceptions (``org.apache.spark.SparkException`` from a failed
    job: what Hudi on Spark shows too)."""
    java = getattr(exc, "java_exception", None)
    try:
        return java is not None and str(java.getClass().getName()).startswith("org.apache.spark.")
    except Exception:  # noqa: BLE001 - a dead gateway: not Spark's answer
        return False


def names_something(message: str, needles: list[str]) -> bool:
    """Whether ``message`` names one of ``needles`` (case and spaces ignored: Spark writes ``Decimal(10, 2)``)."""
    low = "".join(message.lower().split())
    return any(n and "".join(n.lower().split()) in low for n in needles)


def spark_cast(h: Harness, value: str, sql_type: str) -> tuple[bool, Any]:
    """What Spark gives for ``CAST(value AS sql_type)`` in this session: (ok, value)."""
    try:
        got = h.session.spark.sql(f"SELECT CAST({value} AS {sql_type}) AS v").collect()[0]["v"]
    except Exception:  # noqa: BLE001 - Spark refuses the cast
        return False, None
    return True, norm(got)


def check_statement(h: Harness, case: Case) -> tuple[str, list[str]]:
    """Run one statement case: (outcome, problems)."""
    problems: list[str] = []
    table = case.table
    before_rows = h.rows.get(table) if table else None
    before_instant = h.last_completed(table) if table else None
    error: BaseException | None = None
    try:
        result = h.session.sql(case.sql)
        if result is not None:
            result.collect()
    except Exception as exc:  # noqa: BLE001 - every failure is judged below
        error = exc
    outcome = "clear_error"
    created: list[str] = []
    if error is not None:
        message = error_text(error)
        case.data["error"] = message[:400]
        if not own_or_spark(error):
            problems.append(f"not an error of ours nor Spark's: {type(error).__name__}")
        if LEAKED.search(message):
            problems.append(f"a bare Python error reaches the user: {message[:300]}")
        if case.cls == "malformed_sql":
            if not (POSITION.search(message) or "Syntax error" in message or "syntax error" in message):
                problems.append(f"no position or problem named: {message[:300]}")
        elif not names_something(message, case.needles):
            problems.append(f"message names none of {case.needles[:4]}: {message[:300]}")
    else:
        outcome = "accepted_like_hudi"
        problems += judge_success(h, case, created)
    try:
        one = h.session.sql("SELECT 1 AS one").collect()
        if one[0]["one"] != 1:
            problems.append("SELECT 1 answered wrong")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"session broken: SELECT 1 failed: {error_text(exc)[:200]}")
    if table:
        try:
            rs = h.hudi_rows(table)
            ss = h.session_rows(table)
            if rs != ss:
                problems.append(f"session and hudi-rs disagree on {table}: {sorted(set(ss) ^ set(rs))[:4]}")
            if error is not None:
                if rs != before_rows:
                    problems.append(f"failed statement changed {table}: {sorted(set(rs) ^ set(before_rows or []))[:4]}")
                if h.last_completed(table) != before_instant:
                    problems.append(f"failed statement completed an instant on {table}")
            h.rows[table] = rs
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{table} does not read after the case: {error_text(exc)[:300]}")
    case.data["created"] = ",".join(created)
    return outcome, problems


def judge_success(h: Harness, case: Case, created: list[str]) -> list[str]:
    """A statement that succeeded: did it do what Apache Hudi (with Spark's rules) does?"""
    problems: list[str] = []
    if case.expect == "error":
        return [f"accepted a statement Spark's parser refuses ({case.kind})"]
    table = case.table
    if case.expect in ("error_or_cast", "error_or_row") and table:
        key = case.data["key"]
        if case.expect == "error_or_cast" and case.data["column"] == "id":  # the key is the cast value itself
            ok, key = spark_cast(h, case.data["value"], "INT")
            key = key if ok and key is not None else -1
        cols = column_names(TABLES[table][1])
        got = h.session.sql(f"SELECT {', '.join(cols)}, _hoodie_partition_path AS pp, _hoodie_file_name AS fn "
                            f"FROM {table} WHERE id = {key}").collect()
        if case.expect == "error_or_cast":
            column, value = case.data["column"], case.data["value"]
            ok, want = spark_cast(h, value, COLUMN_TYPES[column])
            if not ok:
                problems.append(f"stored {value} into {column} {COLUMN_TYPES[column]}, but Spark's CAST refuses it")
            elif len(got) != 1:
                problems.append(f"expected one row with id {key}, got {len(got)}")
            elif norm(got[0][column]) != want:
                problems.append(f"{column} holds {norm(got[0][column])!r}, Spark's CAST gives {want!r}")
        else:
            want_dt = case.data.get("dt")
            if "id" in case.data and case.data["id"] in ("NULL", "CAST('' AS INT)"):
                problems.append("a row with a NULL record key was accepted (Hudi refuses a null key)")
            elif case.kind == "insert_null_col_list":
                problems.append("a row without its record key was accepted")
            elif case.kind != "merge_null_key":
                if len(got) != 1:
                    problems.append(f"expected one row with id {key}, got {len(got)}")
                else:
                    row = got[0]
                    if case.cls == "partition_values" and row["dt"] != want_dt:
                        problems.append(f"dt reads back as {row['dt']!r}, inserted {want_dt!r}")
                    base = os.path.realpath(h.base(table))
                    path = os.path.realpath(os.path.join(base, row["pp"] or "", row["fn"] or ""))
                    if not path.startswith(base + os.sep) or not os.path.exists(path):
                        problems.append(f"the row's file {path} is not a file under {base}")
    if case.expect == "error_or_created":
        location = case.data.get("location")
        name = case.data["name"]
        try:
            entry = h.session.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            loc = next((r["data_type"] for r in entry if r["col_name"] == "Location"), "")
            created.append(loc)
            loc_path = loc[len("file:"):] if loc.startswith("file:") else loc
            if location:
                want = location if os.path.isabs(location) else os.path.join(str(h.cwd), location)
                if os.path.normpath(loc_path) != os.path.normpath(want):
                    problems.append(f"table created at {loc_path}, Spark puts LOCATION {location!r} at {want}")
            elif not os.path.normpath(loc_path).startswith(str(h.warehouse) + os.sep):
                problems.append(f"managed table {name} created at {loc_path}, outside the warehouse")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"CREATE succeeded but the table does not describe: {error_text(exc)[:200]}")
    return problems


def corrupt_bytes(data: bytes, how: str, rng: random.Random, parquet: bool) -> bytes:
    if how == "empty" or not data:
        return b""
    if how == "truncate":
        return data[: rng.randint(0, max(0, len(data) - 1))]
    out = bytearray(data)
    if parquet:  # flip a bit of the head or tail magic or of the footer length: a damage parquet detects
        index = rng.choice([0, 1, 2, 3, len(out) - 1, len(out) - 2, len(out) - 5, len(out) - 8])
    else:
        index = rng.randrange(len(out))
    out[index] ^= 1 << rng.randrange(8)
    return bytes(out)


def check_corrupt(h: Harness, case: Case) -> tuple[str, list[str]]:
    """Damage one file of a copy of a prepared table and read the copy."""
    rng = random.Random(case.data["seed"])
    table = case.table or sorted(h.tables)[0]
    copy = h.copies / f"{table}_{case.data['seed']}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(h.base(table), copy)
    meta = copy / ".hoodie"
    what, how = case.data["what"], case.data["how"]
    latest_files = {r for r in _file_names(h, table)}
    if what == "base":
        candidates = sorted(p for p in copy.rglob("*.parquet") if p.name in latest_files)
    elif what == "log":
        candidates = sorted(p for p in copy.rglob(".*.log.*") if ".hoodie" not in p.parts)
    elif what == "instant":
        done = sorted(p for p in meta.iterdir() if re.fullmatch(r"\d{17}\.(commit|deltacommit|replacecommit)",
                                                                 p.name))
        candidates = done[-1:]
    else:
        candidates = [meta / "hoodie.properties"]
        if what == "properties_with_backup":
            shutil.copy(meta / "hoodie.properties", meta / "hoodie.properties.backup")
    if not candidates:
        return "skipped", []
    target = rng.choice(candidates)
    alternatives = [h.rows[table]]
    if what == "log":  # Hudi's log reader skips a corrupt block: the rows without that log file also count
        without = h.copies / f"{copy.name}_nolog"
        shutil.rmtree(without, ignore_errors=True)
        shutil.copytree(copy, without)
        (without / target.relative_to(copy)).unlink()
        alternatives.append(h.hudi_rows(table, without))
        shutil.rmtree(without, ignore_errors=True)
    target.write_bytes(corrupt_bytes(target.read_bytes(), how, rng, target.suffix == ".parquet"))
    case.data["file"] = str(target.relative_to(copy))
    problems: list[str] = []
    outcome = "accepted_like_hudi"
    cols = column_names(TABLES[table][1])
    try:
        got = h.session.spark.read.format("hudi").load(str(copy)).select(*cols).collect()
        rows = sorted((tuple(norm(r[c]) for c in cols) for r in got), key=repr)
        if rows not in alternatives:
            problems.append(f"read {len(rows)} rows that are neither the committed rows nor what Hudi recovers: "
                            f"{sorted(set(rows) ^ set(alternatives[0]))[:4]}")
    except Exception as exc:  # noqa: BLE001
        outcome = "clear_error"
        message = error_text(exc)
        case.data["error"] = message[:400]
        needles = [target.name, str(copy)] if what.startswith("properties") else [target.name]
        if what == "base":
            needles.append(target.name.split("_")[0])  # the file id
        if not names_something(message, needles):
            problems.append(f"message does not name {target.name}: {message[:300]}")
        if LEAKED.search(message):
            problems.append(f"a bare Python error reaches the user: {message[:300]}")
        if not own_or_spark(exc):
            problems.append(f"not an error of ours nor Spark's: {type(exc).__name__}")
    try:
        h.session.sql("SELECT 1").collect()
        if h.session_rows(table) != h.rows[table]:
            problems.append(f"the prepared {table} reads differently after its copy was damaged")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"session broken after the damaged read: {error_text(exc)[:200]}")
    shutil.rmtree(copy, ignore_errors=True)
    return outcome, problems


def _file_names(h: Harness, table: str) -> set[str]:
    got = h.session.sql(f"SELECT DISTINCT _hoodie_file_name AS f FROM {table}").collect()
    return {r["f"] for r in got}


def cleanup_created(h: Harness, case: Case) -> None:
    """Drop what a CREATE case made (catalog entry and folder)."""
    name = case.data.get("name")
    if name and case.cls in ("paths_and_names",):
        try:
            h.session.spark.sql(f"DROP TABLE IF EXISTS {name} PURGE")
        except Exception:  # noqa: BLE001, S110 - the name may be refused by Spark itself
            pass
    for loc in filter(None, str(case.data.get("created") or "").split(",")):
        path = loc[len("file:"):] if loc.startswith("file:") else loc
        if MARKER in path and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
    if case.cls == "malformed_sql":
        for entry in h.session.spark.sql("SHOW TABLES").collect():
            if entry["tableName"].startswith("bi_new_"):
                h.session.spark.sql(f"DROP TABLE IF EXISTS {entry['tableName']} PURGE")


def run_case(h: Harness, case: Case) -> dict[str, Any]:
    started = time.monotonic()
    before = h.listing()
    if case.kind and case.cls == "corrupted_files":
        outcome, problems = check_corrupt(h, case)
    else:
        outcome, problems = check_statement(h, case)
    created = [c[len("file:"):] if c.startswith("file:") else c for c in str(case.data.get("created") or "").split(",")
               if c]
    escaped = h.escaped_paths(before, created)
    if escaped:
        problems.append(f"paths created outside the table's base path: {escaped[:5]}")
    cleanup_created(h, case)
    for p in escaped:  # leave the next case a clean slate
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else Path(p).unlink(missing_ok=True)
    return {**case.describe(), "outcome": outcome, "problems": problems,
            "seconds": round(time.monotonic() - started, 2)}


def generate(h: Harness, count: int, seed: int, classes: list[str]) -> list[Case]:
    """``count`` cases, the classes in turn, each drawn from ``seed``."""
    rng = random.Random(seed)
    return [GENERATORS[classes[i % len(classes)]](rng, h) for i in range(count)]


def run(work: Path, count: int, seed: int, classes: list[str], tables: list[str] | None = None) -> dict[str, Any]:
    h = Harness(work, tables)
    started = time.monotonic()
    h.start()
    try:
        h.prepare()
        prepared = round(time.monotonic() - started, 1)
        cases = generate(h, count, seed, classes)
        results = []
        for case in cases:
            results.append(run_case(h, case))
            print(json.dumps(results[-1], ensure_ascii=True), file=sys.stderr, flush=True)
    finally:
        h.stop()
    by_class: dict[str, dict[str, Any]] = {}
    failures = []
    for r in results:
        entry = by_class.setdefault(r["class"], collections.Counter())
        entry["cases"] += 1
        entry[r["outcome"]] += 1
        if r["problems"]:
            entry["failures"] += 1
            failures.append(r)
    totals: collections.Counter[str] = collections.Counter()
    for entry in by_class.values():
        totals.update(entry)
    return {"seed": seed, "cases": len(results), "clear_error": totals["clear_error"],
            "accepted_like_hudi": totals["accepted_like_hudi"], "skipped": totals["skipped"],
            "failures": len(failures), "all_checks_passed": not failures,
            "by_class": {k: {"cases": 0, "clear_error": 0, "accepted_like_hudi": 0, "failures": 0, **dict(v)}
                         for k, v in sorted(by_class.items())},
            "prepare_seconds": prepared, "seconds": round(time.monotonic() - started, 1),
            "failure_details": failures}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--tables", default=",".join(sorted(TABLES)),
                        help="prepared tables to use (the CI form takes one copy-on-write and one merge-on-read)")
    args = parser.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    if set(tables) - set(TABLES) or not any(TABLES[t][0] == "mor" for t in tables) or \
            not any(TABLES[t][1] for t in tables):
        parser.error(f"--tables takes some of {', '.join(sorted(TABLES))}, at least one merge-on-read and one "
                     "partitioned")
    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    unknown = sorted(set(classes) - set(CLASSES))
    if unknown or not classes:
        parser.error(f"unknown classes {unknown}; known: {', '.join(CLASSES)}")
    scratch = args.work is None
    work = (Path(tempfile.mkdtemp(prefix="bench_bad_input_")) if scratch else args.work / "bench_bad_input").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        report = run(work, args.cases, args.seed, classes, tables)
    finally:
        if scratch:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(report, sys.stdout, indent=2, ensure_ascii=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
