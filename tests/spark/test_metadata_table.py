"""Hudi-written tables that carry a metadata table (as Hudi 0.14's Spark writer leaves most tables): SQL reads
leave it alone; the first MERGE / UPDATE deletes it (folder and ``hoodie.table.metadata.partitions``), and so
does a table service (clean, compaction) on a table that has one again; ``hoodie.metadata.enable=true`` fails
the statement with nothing written. hudi-rs reads the expected rows after every step."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.errors import ConfigError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows
from tests.unit.metadata_table_fixture import add_metadata_table, assert_metadata_table_gone, properties_of

pytestmark = [pytest.mark.spark, pytest.mark.integration]

MDT_LOGGER = "engine.metadata.disable"


def _rows(base: str, **read: str) -> list[tuple[object, object]]:
    return sorted((r["id"], r["intField"]) for r in hudi_rs_rows(base, **read))


def _deleted_once(caplog: pytest.LogCaptureFixture, base: str) -> None:
    lines = [r.getMessage() for r in caplog.records if r.name == MDT_LOGGER]
    assert len(lines) == 1, lines
    assert base in lines[0] and "does not maintain" in lines[0]
    caplog.clear()


def _table_files(base: str) -> list[str]:
    return sorted(str(p.relative_to(base)) for p in Path(base).rglob("*") if ".heartbeat" not in p.parts)


def test_merge_and_clean_delete_the_metadata_table(session: Session, hudi_fixture: Callable[..., str],
                                                   table_name: str, caplog: pytest.LogCaptureFixture) -> None:
    base = hudi_fixture("sample_table/cow/v6_simplekeygen_nonhivestyle", fresh=True)
    add_metadata_table(base, inflight="column_stats")
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{base}'")
    try:
        caplog.set_level(logging.INFO, logger=MDT_LOGGER)
        files_before = _table_files(base)
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, intField FROM {table_name}").collect()) == \
            _rows(base) == [(1, 15000), (2, 25000), (3, 35000), (4, 45000)]
        assert _table_files(base) == files_before  # the read changed nothing
        assert properties_of(base)["hoodie.table.metadata.partitions"] == "files"

        columns = [f.name for f in session.spark.table(table_name).schema if not f.name.startswith("_hoodie_")]
        select = ", ".join({"id": "CASE WHEN id = 1 THEN 5 ELSE id END AS id", "intField": "intField + 1 AS intField",
                            "longField": "longField + 1 AS longField"}.get(c, c) for c in columns)
        session.sql(f"MERGE INTO {table_name} t USING (SELECT {select} FROM {table_name} WHERE id IN (1, 2)) s "
                    "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
        assert_metadata_table_gone(base)
        _deleted_once(caplog, base)
        expected = [(1, 15000), (2, 25001), (3, 35000), (4, 45000), (5, 15001)]
        assert _rows(base) == expected

        add_metadata_table(base)  # a Java writer built it again
        done = session.sql(f"CALL run_clean(table => '{table_name}', retain_commits => 1)").collect()
        assert done and done[0]["total_files_deleted"] > 0
        assert_metadata_table_gone(base)
        _deleted_once(caplog, base)
        assert _rows(base) == expected
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_update_and_compaction_delete_the_metadata_table(session: Session, hudi_fixture: Callable[..., str],
                                                         table_name: str, caplog: pytest.LogCaptureFixture) -> None:
    base = hudi_fixture("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle", fresh=True)
    add_metadata_table(base)
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{base}'")
    try:
        caplog.set_level(logging.INFO, logger=MDT_LOGGER)
        before = _rows(base)
        session.sql(f"UPDATE {table_name} SET intField = -1 WHERE id = 2")
        assert_metadata_table_gone(base)
        _deleted_once(caplog, base)
        expected = sorted((i, -1 if i == 2 else n) for i, n in before)
        assert _rows(base) == expected

        add_metadata_table(base, inflight="record_index")
        done = session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', "
                           "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
        assert done and done[0]["state"] == "COMPLETED"
        assert_metadata_table_gone(base)
        _deleted_once(caplog, base)
        assert _rows(base) == expected
        assert _rows(base, read_optimized="true") == expected
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_metadata_enable_true_is_refused_with_nothing_written(session: Session, hudi_fixture: Callable[..., str],
                                                              table_name: str) -> None:
    base = hudi_fixture("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle", fresh=True)
    add_metadata_table(base)
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{base}'")
    try:
        before, files = _rows(base), _table_files(base)
        session.sql("SET hoodie.metadata.enable=true")
        try:
            with pytest.raises(ConfigError, match=rf"hoodie\.metadata\.enable=true is not supported for table "
                                                  rf"{Path(base).name} at {base}: the metadata table .*not "
                                                  r"maintained by this engine; set hoodie\.metadata\.enable=false"):
                session.sql(f"UPDATE {table_name} SET intField = -1 WHERE id = 2")
        finally:
            session.sql("RESET hoodie.metadata.enable")
        with pytest.raises(Exception, match=r"hoodie\.metadata\.enable=true is not supported"):
            session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', "
                        "options => 'hoodie.compact.inline.max.delta.commits=1,hoodie.metadata.enable=true')")
        assert _table_files(base) == files
        assert properties_of(base)["hoodie.table.metadata.partitions"] == "files"
        assert _rows(base) == before
    finally:
        session.sql(f"DROP TABLE {table_name}")
