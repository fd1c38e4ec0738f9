"""Time travel past the cleaner (Hudi TimelineUtils.validateTimestampAsOf, HUDI-6834), as a user types it: a
read as of an instant whose files the automatic clean removed fails with Hudi's message and names the earliest
instant that can still be read — ``TIMESTAMP AS OF``, ``VERSION AS OF``, ``as.of.instant``, incremental and
CDC reads — while reads within the retention (and of a savepointed instant) return the rows hudi-rs reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sqlext.session import Session
from tests.conftest import hudi_rs_rows

CLEANED = "Cleaner cleaned up the timestamp of interest"


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def commits(session: Session, name: str) -> list[str]:
    return [r["commit_time"] for r in session.sql(f"CALL show_commits(table => '{name}', limit => 100)").collect()][::-1]


def last_clean_retained(session: Session, name: str) -> str:
    cleans = session.sql(f"CALL show_cleans(table => '{name}')").collect()
    return str(max(cleans, key=lambda r: r["clean_time"])["earliest_commit_to_retain"])


@pytest.fixture(scope="module", params=["cow", "mor"])
def cleaned(request: pytest.FixtureRequest, session: Session,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """The issue's repro: 20 rows inserted (I1), then three updates of the even ids (the issue has five), cleaner keeping 2 commits
    (merge-on-read compacts every 2 delta commits, so old base files exist to clean)."""
    kind = request.param
    name = f"ttr_{kind}"
    path = tmp_path_factory.mktemp("ttr") / name
    compaction = (", 'hoodie.compact.inline' = 'true', 'hoodie.compact.inline.max.delta.commits' = '2'"
                  if kind == "mor" else "")
    session.sql(f"""CREATE TABLE {name} (id INT, v INT, ts BIGINT) USING hudi
        TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.cleaner.commits.retained' = '2'{compaction})
        LOCATION '{path}'""")
    session.sql(f"INSERT INTO {name} SELECT id, 0, 0 FROM range(0, 20) AS r(id)")
    first = session.sql(f"SELECT max(_hoodie_commit_time) FROM {name}").collect()[0][0]
    for n in range(1, 4):
        session.sql(f"UPDATE {name} SET v = {n}, ts = {n} WHERE id % 2 = 0")
    yield name, path, first
    session.sql(f"DROP TABLE {name}")


def oracle(path: Path, **read: str) -> list[tuple[object, ...]]:
    return sorted((r["id"], r["v"]) for r in hudi_rs_rows(path, **read))


def test_time_travel_past_the_cleaner_fails_naming_the_earliest_readable_instant(
        session: Session, cleaned: tuple[str, Path, str]) -> None:
    name, path, first = cleaned
    earliest = last_clean_retained(session, name)
    assert earliest > first
    named = f"the earliest instant that can still be read is {earliest}"
    for clause in (f"TIMESTAMP AS OF '{first}'", f"VERSION AS OF {first}"):
        with pytest.raises(Exception, match=CLEANED) as info:
            session.sql(f"SELECT count(*) FROM {name} {clause}").collect()
        assert named in str(info.value)
    with pytest.raises(Exception, match=CLEANED):
        session.spark.read.format("hudi").option("as.of.instant", first).load(str(path)).count()
    # within the retention: the rows hudi-rs reads as of that commit
    travelled = rows(session, f"SELECT id, v FROM {name} TIMESTAMP AS OF '{earliest}'")
    assert len(travelled) == 20 and travelled == oracle(path, as_of=earliest)
    assert rows(session, f"SELECT id, v FROM {name}") == oracle(path)


def test_incremental_reads_past_the_cleaner(session: Session, cleaned: tuple[str, Path, str]) -> None:
    """Hudi IncrementalRelation: a range whose end is cleaned cannot be read (its files are gone) unless
    hoodie.datasource.read.incr.fallback.fulltablescan.enable scans the latest snapshot; a begin older than
    the retention with a retained end reads the latest state of the rows changed since."""
    name, path, first = cleaned
    earliest = last_clean_retained(session, name)
    with pytest.raises(Exception, match="Cleaner cleaned up the files of the incremental query's range") as info:
        session.sql(f"SELECT id FROM hudi_table_changes('{name}', 'latest_state', 'earliest', '{first}')").collect()
    assert f"the earliest instant that can still be read is {earliest}" in str(info.value)
    assert "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in str(info.value)
    scanned = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", "000") \
        .option("hoodie.datasource.read.end.instanttime", first) \
        .option("hoodie.datasource.read.incr.fallback.fulltablescan.enable", "true").load(str(path))
    assert sorted(tuple(r) for r in scanned.select("id", "v").collect()) == [(i, 0) for i in range(1, 20, 2)]
    latest = max(r[0] for r in session.sql(f"SELECT _hoodie_commit_time FROM {name}").collect())
    changed = rows(session, f"SELECT id, v FROM hudi_table_changes('{name}', 'latest_state', '{first}')")
    assert changed == [(i, 3) for i in range(0, 20, 2)] == oracle(path, begin=first, end=latest)
    assert rows(session, f"SELECT id, v FROM hudi_query('{name}', 'incremental', '{first}')") == changed


def test_savepointed_instant_stays_readable(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, v INT, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '1')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} SELECT id, 0, 0 FROM range(0, 6) AS r(id)")
        saved = commits(session, table_name)[-1]
        session.sql(f"CALL create_savepoint(table => '{table_name}', commit_time => '{saved}')").collect()
        for n in range(1, 4):
            session.sql(f"UPDATE {table_name} SET v = {n}, ts = {n} WHERE id < 3")
        written = commits(session, table_name)
        earliest = last_clean_retained(session, table_name)
        assert saved < written[1] < earliest
        assert rows(session, f"SELECT id, v FROM {table_name} TIMESTAMP AS OF '{saved}'") == \
            [(i, 0) for i in range(6)] == oracle(path, as_of=saved)
        with pytest.raises(Exception, match=CLEANED) as info:
            session.sql(f"SELECT id FROM {table_name} TIMESTAMP AS OF '{written[1]}'").collect()
        assert f"the earliest instant that can still be read is {earliest}" in str(info.value)
        assert f"savepointed instants stay readable: {saved}" in str(info.value)
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_cdc_past_the_cleaner(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v INT, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                       'hoodie.cleaner.commits.retained' = '2')""")
    try:
        session.sql(f"INSERT INTO {table_name} SELECT id, 0, 0 FROM range(0, 4) AS r(id)")
        for n in range(1, 4):
            session.sql(f"UPDATE {table_name} SET v = {n}, ts = {n} WHERE id < 2")
        written = commits(session, table_name)
        earliest = last_clean_retained(session, table_name)
        assert written[0] < earliest < written[-1]
        with pytest.raises(Exception, match="Cleaner cleaned up the files of the CDC query's range") as info:
            session.sql(f"SELECT * FROM hudi_table_changes('{table_name}', 'cdc', 'earliest')").collect()
        assert f"the earliest instant whose changes can still be read is {earliest}" in str(info.value)
        changes = session.sql(f"SELECT op, ts_ms FROM hudi_table_changes('{table_name}', 'cdc', '{earliest}')")
        after = [c for c in written if c > earliest]
        assert sorted(tuple(r) for r in changes.collect()) == sorted(("u", c) for c in after for _ in range(2))
    finally:
        session.sql(f"DROP TABLE {table_name}")
