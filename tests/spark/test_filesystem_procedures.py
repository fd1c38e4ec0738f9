"""File-system view and statistics procedures as Hudi's TestFsViewProcedure, TestStatsProcedure and
TestShowInvalidParquetProcedure call them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.table import Table
from sqlext.session import Session


def test_fsview_and_stats(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'd1'), (2, 'b', 1, 'd2'), (3, 'c', 1, 'd2')")
        session.sql(f"UPDATE {table_name} SET name = 'b2', ts = 2 WHERE id = 2")
        table = Table.load(str(path))
        view = table.file_system_view()
        expected = {(s.partition_path, s.file_id): s for p in view.partition_paths() for s in view.latest_file_slices(p)}
        rows = session.sql(f"CALL show_fsview_all(table => '{table_name}')").collect()
        assert {(r["partition"], r["file_id"]) for r in rows} == set(expected)
        for r in rows:
            s = expected[(r["partition"], r["file_id"])]
            assert r["data_file"] == s.base_file.path and r["data_file_size"] == Path(s.base_file.path).stat().st_size
            assert r["num_delta_files"] == len(s.log_files)
            assert r["total_delta_file_size"] == sum(Path(lf.path).stat().st_size for lf in s.log_files)
        d2 = session.sql(f"CALL show_fsview_latest(table => '{table_name}', partition_path => 'dt=d2')").collect()
        assert len(d2) == 1 and d2[0]["num_delta_files"] == 1
        assert d2[0]["delta_size_compaction_scheduled"] == d2[0]["total_delta_file_size"] > 0
        assert d2[0]["delta_to_base_radio_compaction_scheduled"] == pytest.approx(
            d2[0]["total_delta_file_size"] / d2[0]["data_file_size"])
        first = table.timeline.completed_commits()[0].timestamp
        assert session.sql(f"CALL show_fsview_all(table => '{table_name}', max_instant => '{first}', "
                           "include_max => true)").collect()[0]["num_delta_files"] == 0
        with pytest.raises(Exception, match="include_in_flight => true is not supported"):
            session.sql(f"CALL show_fsview_all(table => '{table_name}', include_in_flight => true)").collect()

        wa = session.sql(f"CALL stats_wa(table => '{table_name}')").collect()
        assert [r["commit_time"] for r in wa] == [i.timestamp for i in table.timeline.completed_commits()] + ["Total"]
        assert wa[-1]["total_written"] == sum(r["total_written"] for r in wa[:-1])

        sizes = session.sql(f"CALL stats_file_sizes(table => '{table_name}')").collect()
        on_disk = sorted(p.stat().st_size for p in path.rglob("*.parquet"))
        assert sizes[-1]["commit_time"] == "ALL" and sizes[-1]["num_files"] == len(on_disk)
        assert (sizes[-1]["min"], sizes[-1]["max"]) == (on_disk[0], on_disk[-1])

        bad = path / "dt=d1" / "broken_0-0-0_20240101000000000.parquet"
        bad.write_bytes(b"not parquet")
        found = session.sql(f"CALL show_invalid_parquet(path => '{path}')").collect()
        assert [r["path"] for r in found] == [str(bad)]
        session.sql(f"CALL show_invalid_parquet(path => '{path}', needDelete => true)").collect()
        assert not bad.exists()
    finally:
        session.sql(f"DROP TABLE {table_name}")
