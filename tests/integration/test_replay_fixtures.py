"""Replay: each ``.sql`` script that made a Hudi-written fixture table, run through ``sqlext -f``, gives a
table whose rows (ignoring commit times, sequence numbers and file names) equal the rows hudi-rs reads
from the Hudi-written table. Our table is read by hudi-rs too, so both sides go through the same
independent reader; the record keys and partition paths must match exactly."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.table import Table
from sqlext import shell
from sqlext.session import Session
from tests.conftest import HUDI_FIXTURES, METADATA_FIXTURE_SHAPE, hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

IGNORED = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
# Every fixture script. A script calling rollback_to_instant names an instant of the original run: the replay
# runs up to that call, then calls it with the replayed table's latest commit (the one the original rolled back).
SCRIPTS = sorted(p for p in HUDI_FIXTURES.glob("**/v6_*.sql")  # metadata-table scripts: see METADATA_FIXTURE_SHAPE
                 if p.relative_to(HUDI_FIXTURES).parts[0] != METADATA_FIXTURE_SHAPE)
ROLLBACK_CALL = re.compile(r"call\s+rollback_to_instant\s*\((?P<args>[^;]*?)instant_time\s*=>\s*'(?P<instant>\d+)'\s*\)",
                           re.IGNORECASE)
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


LOCATION = re.compile(r"(?i)(\blocation\s+)'([^']+)'")
"""A ``LOCATION '<path>'`` clause: the fixture scripts name the paths of the machine that wrote them."""


def _replay(session: Session, script: Path, workdir: Path) -> int:
    """Run ``script`` through the shell; a rollback_to_instant call gets the replayed table's latest commit.
    A ``LOCATION`` the script gives (``/opt/data/external_tables/...`` on the machine that wrote the fixture) is
    moved under ``workdir``: at its own path, the table of an earlier run was still there (DROP TABLE of an
    external table keeps its files), and the replay then added its commits to that table's."""
    text = LOCATION.sub(lambda m: f"{m.group(1)}'{workdir / Path(m.group(2)).name}'",
                        script.read_text(encoding="utf-8"))
    match = ROLLBACK_CALL.search(text)
    if match is None:
        return shell.main(["-S", "-f", str(script)], session_factory=lambda **_: session)
    before = workdir / "before.sql"
    before.write_text(text[:match.start()], encoding="utf-8")
    rc = shell.main(["-S", "-f", str(before)], session_factory=lambda **_: session)
    if rc != 0:
        return rc
    entry = session.catalog.lookup_name(script.stem)
    assert entry is not None
    latest = Table.load(entry.location).timeline.last_completed_commit()
    assert latest is not None
    after = workdir / "after.sql"
    call = text[match.start():match.end()].replace(match.group("instant"), latest.timestamp)
    after.write_text(call + text[match.end():], encoding="utf-8")
    return shell.main(["-S", "-f", str(after)], session_factory=lambda **_: session)


# A second fixture of the same key generator and table type only under -m extended (README "Tests").
EXTENDED_SCRIPTS = {"sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable", "sample_table/cow/v6_nonpartitioned",
                    "sample_table/cow/v6_simplekeygen_nonhivestyle", "sample_table/cow/v6_complexkeygen_hivestyle",
                    "quickstart_trips_table/mor/avro/v6_trips_8i3d"}


def _script_id(path: Path) -> str:
    return str(path.relative_to(HUDI_FIXTURES).with_suffix(""))


@pytest.mark.parametrize("script", [
    pytest.param(p, id=_script_id(p), marks=[pytest.mark.extended] if _script_id(p) in EXTENDED_SCRIPTS else [])
    for p in SCRIPTS])
def test_replayed_script_equals_hudi_written_table(
    session: Session, hudi_fixture: Callable[..., str], script: Path, tmp_path: Path
) -> None:
    fixture = str(script.relative_to(HUDI_FIXTURES).with_suffix(""))
    original = hudi_fixture(fixture)
    session.sql(f"DROP TABLE IF EXISTS {script.stem} PURGE")  # COW and MOR scripts share table names
    previous = session.spark.conf.get("spark.sql.session.timeZone")
    session.spark.conf.set("spark.sql.session.timeZone", writer_time_zone(original))
    try:
        rc = _replay(session, script, tmp_path)
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
