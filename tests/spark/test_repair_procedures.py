"""repair_add_partition_meta and repair_overwrite_hoodie_props as Hudi's TestRepairsProcedure calls them."""

from __future__ import annotations

from pathlib import Path

from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def test_repairs(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'd1'), (2, 'b', 1, 'd2')")
        metafile = path / "dt=d2" / ".hoodie_partition_metadata"
        metafile.unlink()
        dry = session.sql(f"CALL repair_add_partition_meta(table => '{table_name}')").collect()
        assert sorted(tuple(r) for r in dry) == [("dt=d1", "Yes", "None"), ("dt=d2", "No", "None")]
        assert not metafile.exists()
        done = session.sql(f"CALL repair_add_partition_meta(table => '{table_name}', dry_run => false)").collect()
        assert sorted(tuple(r) for r in done) == [("dt=d1", "Yes", "None"), ("dt=d2", "No", "Repaired")]
        assert metafile.exists()

        props = (path / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1")
        new_file = tmp_path / "new.properties"
        new_file.write_text(props + "hoodie.repair.note=checked\n", encoding="latin-1")
        rows = {r["property"]: (r["old_value"], r["new_value"]) for r in session.sql(
            f"CALL repair_overwrite_hoodie_props(table => '{table_name}', new_props_file_path => '{new_file}')"
        ).collect()}
        assert rows["hoodie.repair.note"] == ("null", "checked")
        assert rows["hoodie.table.name"][0] == rows["hoodie.table.name"][1]
        assert "hoodie.repair.note=checked" in (path / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1")
        assert sorted(r["id"] for r in hudi_rs_rows(path)) == [1, 2]
    finally:
        session.sql(f"DROP TABLE {table_name}")
