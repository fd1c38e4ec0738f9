"""Replay: each ``.sql`` script that made a Hudi-written fixture table, run through ``sqlext -f``, gives a
table whose rows (ignoring commit times, sequence numbers and file names) equal the rows hudi-rs reads
from the Hudi-written table. Our table is read by hudi-rs too, so both sides go through the same
independent reader; the record keys and partition paths must match exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqlext import shell
from sqlext.session import Session
from tests.conftest import HUDI_FIXTURES, hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

IGNORED = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
# Every fixture script except the rollback one, which calls rollback_to_instant with an instant time of the
# original run (its table is covered by the merge-on-read read tests instead).
SCRIPTS = sorted(p for p in HUDI_FIXTURES.glob("**/v6_*.sql") if not p.stem.endswith("_rollback"))
# TIMESTAMP literals in the scripts denote instants in the writer's session zone, which each fixture's
# hoodie.properties header records (Java Date.toString(), e.g. "#Sun Jul 07 00:13:01 CDT 2024").
ZONES = {"CDT": "America/Chicago", "CST": "America/Chicago", "UTC": "UTC", "GMT": "UTC",
         "PDT": "America/Los_Angeles", "PST": "America/Los_Angeles", "EDT": "America/New_York",
         "EST": "America/New_York"}


def writer_time_zone(base_path: str) -> str:
    """The session time zone of the Spark that wrote a fixture, from its hoodie.properties header."""
    header = (Path(base_path) / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1").splitlines()[1]
    return ZONES[header.split()[-2]]


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cleaned = [{k: v for k, v in row.items() if k not in IGNORED} for row in rows]
    return sorted(cleaned, key=lambda r: (str(r.get("_hoodie_record_key")), str(r.get("id"))))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(HUDI_FIXTURES).with_suffix("")))
def test_replayed_script_equals_hudi_written_table(
    session: Session, hudi_fixture: Callable[..., str], script: Path
) -> None:
    fixture = str(script.relative_to(HUDI_FIXTURES).with_suffix(""))
    original = hudi_fixture(fixture)
    session.sql(f"DROP TABLE IF EXISTS {script.stem} PURGE")  # COW and MOR scripts share table names
    previous = session.spark.conf.get("spark.sql.session.timeZone")
    session.spark.conf.set("spark.sql.session.timeZone", writer_time_zone(original))
    try:
        rc = shell.main(["-S", "-f", str(script)], session_factory=lambda **_: session)
    finally:
        session.spark.conf.set("spark.sql.session.timeZone", previous)
    assert rc == 0
    name = script.stem
    entry = session.catalog.lookup_name(name)
    assert entry is not None and entry.is_hudi
    expected = comparable(hudi_rs_rows(original))
    replayed = comparable(hudi_rs_rows(entry.location))
    assert replayed == expected
    ours = session.sql(f"SELECT * FROM {name}").count()
    assert ours == len(expected)
