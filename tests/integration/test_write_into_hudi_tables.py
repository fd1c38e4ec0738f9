"""Our writer on tables Apache Hudi wrote: register each fixture table by its location, update a row, and
(merge-on-read) compact; hudi-rs must still read exactly the expected rows afterwards."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine.table import Table
from sqlext.session import Session
from tests.conftest import HUDI_FIXTURES, hudi_rs_rows

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
