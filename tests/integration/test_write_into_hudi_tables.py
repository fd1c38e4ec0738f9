"""Our writer on tables Apache Hudi wrote: register each fixture table by its location, update a row, and
(merge-on-read) compact; hudi-rs must still read exactly the expected rows afterwards."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import HUDI_1X_ALL_FIXTURE_NAMES, HUDI_FIXTURES, HUDI_LANCE_FIXTURE_NAMES, hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

TABLES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                for p in (HUDI_FIXTURES / "sample_table").glob("*/**/v6_*.zip") if "empty" not in p.name)


def names(rows: list[dict[str, object]]) -> list[tuple[object, object]]:
    return sorted((r["id"], r["intField"]) for r in rows)


@pytest.mark.parametrize("fixture", TABLES)
def test_update_then_compact_a_hudi_written_table(
        session: Session, hudi_fixture: Callable[..., str], table_name: str, fixture: str) -> None:
    location = hudi_fixture(fixture, fresh=True)
    before = names(hudi_rs_rows(location))
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{location}'")
    target = before[0][0]
    session.sql(f"UPDATE {table_name} SET intField = -1 WHERE id = {target}")
    expected = sorted((i, -1 if i == target else n) for i, n in before)
    assert names(hudi_rs_rows(location)) == expected
    assert sorted(tuple(r) for r in session.sql(f"SELECT id, intField FROM {table_name}").collect()) == expected
    if Table.load(location).is_mor:
        done = session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', "
                           "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
        assert done and done[0]["state"] == "COMPLETED"
        assert names(hudi_rs_rows(location)) == expected
        ro = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized") \
            .load(location).select("id", "intField").collect()
        assert sorted(tuple(r) for r in ro) == expected
    session.sql(f"DROP TABLE {table_name}")


V1X_REFUSED = [
    "UPDATE {t} SET txn_type = 'x' WHERE txn_id = 'TXN-001'",
    "DELETE FROM {t} WHERE txn_id = 'TXN-001'",
    "INSERT INTO {t} SELECT * FROM {t} WHERE txn_id = 'TXN-001'",
    "MERGE INTO {t} USING (SELECT * FROM {t} WHERE txn_id = 'TXN-001') s ON {t}.txn_id = s.txn_id "
    "WHEN MATCHED THEN UPDATE SET *",
    "ALTER TABLE {t} SET TBLPROPERTIES ('comment' = 'x')",
    "ALTER TABLE {t} ADD COLUMNS (extra STRING)",
    "ALTER TABLE {t} RENAME TO {t}_renamed",
    "TRUNCATE TABLE {t}",
    "CALL run_compaction(op => 'schedule', table => '{t}')",
    "CALL run_clean(table => '{t}')",
    "CALL run_clustering(table => '{t}')",
    "CALL archive_commits(table => '{t}')",
    "CALL run_ttl(table => '{t}', retain_days => 1)",
    "CALL repair_overwrite_hoodie_props(table => '{t}', new_props_file_path => '/nonexistent')",
]


@pytest.mark.parametrize("statement", V1X_REFUSED)
def test_writes_to_a_hudi_1x_table_are_refused(
        session: Session, hudi_fixture: Callable[..., str], table_name: str, statement: str) -> None:
    """A Hudi 1.x table registers and reads; every statement that would change it is refused, naming the table
    and its version, and leaves its files as they were."""
    location = hudi_fixture("sample_table/mor/avro/v9_txns_simple_meta", fresh=True)
    before = sorted((str(p.relative_to(location)), p.stat().st_size) for p in Path(location).rglob("*"))
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{location}'")
    rows = session.sql(f"SELECT txn_id FROM {table_name}").collect()
    assert sorted(r[0] for r in rows) == sorted(str(r["txn_id"]) for r in hudi_rs_rows(location))
    with pytest.raises(Exception, match=r"written by Hudi 1\.x \(table version 9\); this engine writes table "
                                        r"version 6 only") as caught:
        session.sql(statement.format(t=table_name)).collect()
    assert location in str(caught.value)
    assert sorted((str(p.relative_to(location)), p.stat().st_size) for p in Path(location).rglob("*")) == before
    session.sql(f"DROP TABLE {table_name}")


@pytest.mark.parametrize("fixture", HUDI_1X_ALL_FIXTURE_NAMES)
def test_every_hudi_1x_fixture_refuses_an_insert(
        session: Session, hudi_fixture: Callable[..., str], table_name: str, fixture: str) -> None:
    """Each Hudi 1.x fixture registers (Lance ones are refused then) and refuses an INSERT, naming its version."""
    location = hudi_fixture(fixture, fresh=True)
    create = f"CREATE TABLE {table_name} USING hudi LOCATION '{location}'"
    if fixture in HUDI_LANCE_FIXTURE_NAMES:
        with pytest.raises(Exception, match=r"\(table version 9\) stores its base files as LANCE"):
            session.sql(create)
        return
    session.sql(create)
    version = fixture.rsplit("/v", 1)[1][0]
    with pytest.raises(Exception, match=rf"written by Hudi 1\.x \(table version {version}\); this engine writes "
                                        "table version 6 only"):
        session.sql(f"INSERT INTO {table_name} SELECT * FROM {table_name}").collect()
    session.sql(f"DROP TABLE {table_name}")

