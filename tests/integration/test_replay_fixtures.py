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
COW_SCRIPTS = sorted((HUDI_FIXTURES / "sample_table" / "cow").glob("v6_*.sql"))
# The fixtures were written by a Spark session in US Central time (their hoodie.properties say CDT), so
# TIMESTAMP literals in the scripts denote instants in that zone.
WRITER_TIME_ZONE = "America/Chicago"


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cleaned = [{k: v for k, v in row.items() if k not in IGNORED} for row in rows]
    return sorted(cleaned, key=lambda r: (str(r.get("_hoodie_record_key")), str(r.get("id"))))


@pytest.mark.parametrize("script", COW_SCRIPTS, ids=lambda p: p.stem)
def test_replayed_script_equals_hudi_written_table(
    session: Session, hudi_fixture: Callable[..., str], script: Path
) -> None:
    previous = session.spark.conf.get("spark.sql.session.timeZone")
    session.spark.conf.set("spark.sql.session.timeZone", WRITER_TIME_ZONE)
    try:
        rc = shell.main(["-S", "-f", str(script)], session_factory=lambda **_: session)
    finally:
        session.spark.conf.set("spark.sql.session.timeZone", previous)
    assert rc == 0
    name = script.stem
    entry = session.catalog.lookup_name(name)
    assert entry is not None and entry.is_hudi
    expected = comparable(hudi_rs_rows(hudi_fixture(f"sample_table/cow/{name}")))
    replayed = comparable(hudi_rs_rows(entry.location))
    assert replayed == expected
    ours = session.sql(f"SELECT * FROM {name}").count()
    assert ours == len(expected)
