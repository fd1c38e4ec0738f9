"""Run a script through Hudi's Spark and through sqlext, and list where they differ.

Per statement: both succeed with the same columns and rows (as multisets; the volatile meta columns
``_hoodie_commit_time``, ``_hoodie_commit_seqno``, ``_hoodie_file_name`` are dropped unless the statement names them;
``CALL`` results are compared by columns and row count, their values being instants and file names), or both fail
(and with the statement's ``expect`` phrase in both messages). After the script, every Hudi table is read six ways
(each side's SQL, each side's data source on the other side's files, hudi-rs on both) and compared with Hudi's own
snapshot read.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tests.hudi_oracle.oracle import Answer, HudiRunner, hudi_rs_read, sqlext_read, sqlext_sql
from tests.hudi_oracle.scripts import Script
from tests.hudi_oracle.values import sort_key

VOLATILE = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
"""Meta columns whose values depend on the writer's clock and file ids."""


@dataclass
class Difference:
    """Where the two sides disagree: ``key`` is ``<script>#<statement index>:<kind>`` (or ``<script>:final:<t>:...``)."""

    key: str
    kind: str
    statement: str
    hudi: str
    ours: str


@dataclass
class Outcome:
    """A script's run: its differences and time spent on each side (seconds)."""

    script: str
    statements: int
    differences: list[Difference]
    hudi_seconds: float
    ours_seconds: float


def _bind(sql: str, names: dict[str, str]) -> str:
    for placeholder, name in names.items():
        sql = sql.replace("{" + placeholder + "}", name)
    return sql


def _project(answer: Answer, keep: set[str] | None, statement: str) -> tuple[list[str], list[list[Any]]]:
    named = {c for c in VOLATILE if c in statement}
    idx = [i for i, c in enumerate(answer.columns) if (c not in VOLATILE or c in named)
           and (keep is None or c in keep)]
    cols = [answer.columns[i] for i in idx]
    rows = sorted(([r[i] for i in idx] for r in answer.rows), key=sort_key)
    return cols, rows


def _show(cols: list[str], rows: list[list[Any]], limit: int = 8) -> str:
    more = f" ... ({len(rows)} rows)" if len(rows) > limit else ""
    return f"{cols} {rows[:limit]}{more}"


def compare_answers(hudi: Answer, ours: Answer, statement: str, expect: str | None) -> tuple[str, str, str] | None:
    """``(kind, hudi, ours)`` when the answers differ, else None."""
    if hudi.ok != ours.ok:
        kind = "only_sqlext_fails" if hudi.ok else "only_hudi_fails"
        return kind, hudi.headline(), ours.headline()
    if not hudi.ok:
        if expect and (expect.lower() not in hudi.message.lower() or expect.lower() not in ours.message.lower()):
            return "error_phrase", hudi.headline(), ours.headline()
        return None
    if statement.lstrip().lower().startswith("call"):
        if hudi.columns != ours.columns or len(hudi.rows) != len(ours.rows):
            return "call_result", f"{hudi.columns} {len(hudi.rows)} rows", f"{ours.columns} {len(ours.rows)} rows"
        return None
    hcols, hrows = _project(hudi, None, statement)
    ocols, orows = _project(ours, None, statement)
    if hcols != ocols:
        return "columns", _show(hcols, hrows), _show(ocols, orows)
    if hrows != orows:
        return "rows", _show(hcols, hrows), _show(ocols, orows)
    return None


def _describe(answer: Answer, name: str) -> str | None:
    """The ``name`` row (``Location``, ``Provider``) of ``DESCRIBE TABLE EXTENDED``."""
    for row in answer.rows:
        if row and row[0] == name:
            return re.sub(r"^file:/*", "/", str(row[1])) if name == "Location" else str(row[1])
    return None


def _read_difference(key: str, name: str, reference: Answer, answer: Answer) -> Difference | None:
    """How ``answer`` (one reader's rows of table ``name``) differs from ``reference`` (its writer's own read)."""
    if not answer.ok:
        return Difference(key, "read_fails", f"read {name}", reference.headline(), answer.headline())
    if not answer.rows and not reference.rows:
        return None  # an empty table: some readers then know no columns
    keep = set(reference.columns) - set(VOLATILE)
    rcols, rrows = _project(reference, keep, "")
    cols, rows = _project(answer, keep, "")
    order = [cols.index(c) for c in rcols if c in cols]
    rows = sorted(([r[i] for i in order] for r in rows), key=sort_key)
    if [cols[i] for i in order] != rcols:
        return Difference(key, "final_columns", f"read {name}", str(rcols), str(cols))
    if rows != rrows:
        return Difference(key, "final_rows", f"read {name}", _show(rcols, rrows), _show(rcols, rows))
    return None


def _final_reads(script: str, placeholder: str, name: str, hudi: HudiRunner, session: Any,
                 diverged: bool) -> list[Difference]:
    """The table each side wrote, read by every reader and compared with its writer's own read; and (while the
    script has not diverged) sqlext's table, with its record keys and partition paths, against Hudi's."""
    h_desc = hudi.sql(f"describe table extended {name}")
    o_desc = sqlext_sql(session, f"describe table extended {name}")
    h_path, o_path = _describe(h_desc, "Location"), _describe(o_desc, "Location")
    if not h_path or not o_path or _describe(h_desc, "Provider") != "hudi":
        return []  # the table was not created (both sides failed alike) or is not a Hudi table
    hudi_own, ours_own = hudi.sql(f"select * from {name}"), sqlext_sql(session, f"select * from {name}")
    checks: list[tuple[str, Answer, Answer]] = []
    if hudi_own.ok:
        checks += [("sqlext_reads_hudi", hudi_own, sqlext_read(session, h_path)),
                   ("hudi_rs_reads_hudi", hudi_own, hudi_rs_read(h_path))]
    if ours_own.ok:
        checks += [("hudi_reads_sqlext", ours_own, hudi.read(o_path)),
                   ("hudi_rs_reads_sqlext", ours_own, hudi_rs_read(o_path))]
    if hudi_own.ok and not diverged:
        checks.append(("sqlext_sql", hudi_own, ours_own))
    found = [_read_difference(f"{script}:final:{placeholder}:{reader}", name, reference, answer)
             for reader, reference, answer in checks]
    return [d for d in found if d is not None]


def run_script(script: Script, hudi: HudiRunner, session: Any, prefix: str) -> Outcome:
    """Run ``script`` on both sides with tables named ``<prefix>_<placeholder>``; compare statement by statement,
    then the final tables read cross-wise.

    Once a SELECT's rows differ or one side fails alone (the tables' states diverged), later SELECTs and CALL
    results are no longer compared (their differences would be consequences); statements still are, by success or failure."""
    names = {p: f"{prefix}_{p}" for p in script.tables}
    differences: list[Difference] = []
    hudi_s = ours_s = 0.0
    diverged = False
    for index, stmt in enumerate(script.statements):
        sql = _bind(stmt.sql, names)
        with ThreadPoolExecutor(1) as pool:  # Hudi's process works while sqlext's session does
            pending = pool.submit(hudi.sql, sql)
            o = sqlext_sql(session, sql)
            h = pending.result()
        hudi_s += h.seconds
        ours_s += o.seconds
        found = compare_answers(h, o, sql, stmt.expect)
        if found and found[0] in ("rows", "call_result") and diverged:
            continue
        if found:
            differences.append(Difference(f"{script.name}#{index}:{found[0]}", found[0], sql, found[1], found[2]))
            diverged = diverged or found[0] in ("rows", "only_hudi_fails", "only_sqlext_fails")
    for placeholder, name in names.items():
        differences += _final_reads(script.name, placeholder, name, hudi, session, diverged)
    for name in names.values():
        hudi.sql(f"drop table if exists {name}")
        sqlext_sql(session, f"drop table if exists {name}")
    return Outcome(script.name, len(script.statements), differences, hudi_s, ours_s)
