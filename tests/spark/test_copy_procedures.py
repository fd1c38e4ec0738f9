"""copy_to_temp_view, copy_to_table and delete_marker as a Hudi user calls them (Hudi's
TestCopyToTempViewProcedure, TestCopyToTableProcedure, TestDeleteMarkerProcedure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.table import Table
from sqlext.session import Session


def test_copy_procedures(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000), (2, 'a2', 20, 1000)")
        first = Table.load(str(path)).timeline.completed_commits()[-1].timestamp
        session.sql(f"UPDATE {table_name} SET price = 15 WHERE id = 1")
        second = Table.load(str(path)).timeline.completed_commits()[-1].timestamp
        view = f"{table_name}_view"
        assert session.sql(f"CALL copy_to_temp_view(table => '{table_name}', view_name => '{view}')"
                           ).collect()[0]["status"] == 0
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, price FROM {view}").collect()) == [(1, 15.0), (2, 20.0)]
        session.sql(f"CALL copy_to_temp_view(table => '{table_name}', view_name => '{view}', as_of_instant => "
                    f"'{first}', replace => true)")
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, price FROM {view}").collect()) == [(1, 10.0), (2, 20.0)]
        session.sql(f"CALL copy_to_temp_view(table => '{table_name}', query_type => 'incremental', view_name => "
                    f"'{view}', begin_instance_time => '{first}', end_instance_time => '{second}', replace => true)")
        assert [tuple(r) for r in session.sql(f"SELECT id, price FROM {view}").collect()] == [(1, 15.0)]
        with pytest.raises(Exception, match="begin_instance_time and end_instance_time can not be null"):
            session.sql(f"CALL copy_to_temp_view(table => '{table_name}', query_type => 'incremental', "
                        f"view_name => 'v2')").collect()
        session.sql(f"CALL copy_to_temp_view(table => '{table_name}', view_name => '{view}_g', global => true)")
        assert session.sql(f"SELECT count(*) FROM global_temp.{view}_g").collect()[0][0] == 2

        copied = f"{table_name}_copy"
        assert session.sql(f"CALL copy_to_table(table => '{table_name}', new_table => '{copied}', columns => "
                           "'id,name,price')").collect()[0]["status"] == 0
        assert sorted(tuple(r) for r in session.sql(f"SELECT * FROM {copied}").collect()) == \
            [(1, "a1", 15.0), (2, "a2", 20.0)]
        session.sql(f"CALL copy_to_table(table => '{table_name}', new_table => '{copied}', save_mode => 'append', "
                    f"as_of_instant => '{first}')")
        assert session.sql(f"SELECT count(*) FROM {copied}").collect()[0][0] == 4
        session.sql(f"DROP TABLE {copied}")

        markers = path / ".hoodie" / ".temp" / "20990101000000000"
        markers.mkdir(parents=True)
        (markers / "x.parquet.marker.CREATE").write_text("")
        assert session.sql(f"CALL delete_marker(table => '{table_name}', instant_time => '20990101000000000')"
                           ).collect()[0][0] is True
        assert not markers.exists()
    finally:
        session.sql(f"DROP TABLE {table_name}")
