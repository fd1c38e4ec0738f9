"""Copy-on-write behaviours beyond single statements: small-file handling, overwrite modes, DROP PURGE,
tables surviving a restart, and the TPC-H refresh example end to end (small scale)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.table import Table
from sqlext import shell
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def file_groups(location: str) -> dict[str, set[str]]:
    view = Table.load(location).file_system_view()
    return {p: {bf.file_id for bf in view.latest_base_files(p)} for p in view.partition_paths()}


def test_inserts_fill_small_files_before_creating_file_groups(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (primaryKey = 'id', 'hoodie.spark.sql.insert.into.operation' = 'insert')""")
    for batch in range(3):
        rows = ", ".join(f"({batch * 10 + i}, 'v', 'a')" for i in range(10))
        session.sql(f"INSERT INTO {table_name} VALUES {rows}")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    groups = file_groups(entry.location)
    assert len(groups["p=a"]) == 1, "small files take new inserts (hoodie.parquet.small.file.limit)"
    assert len(hudi_rs_rows(entry.location)) == 30
    # A tiny max file size forces new file groups sized by the estimated record size.
    session.sql("SET hoodie.parquet.max.file.size=1000")
    session.sql("SET hoodie.copyonwrite.record.size.estimate=100")
    try:
        rows = ", ".join(f"({100 + i}, 'w', 'b')" for i in range(50))
        session.sql(f"INSERT INTO {table_name} VALUES {rows}")
    finally:
        session.sql("RESET hoodie.parquet.max.file.size")
        session.sql("RESET hoodie.copyonwrite.record.size.estimate")
    groups = file_groups(entry.location)
    assert len(groups["p=b"]) > 1
    assert len(hudi_rs_rows(entry.location)) == 80


def test_dynamic_partition_overwrite_replaces_only_written_partitions(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (primaryKey = 'id')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("SET spark.sql.sources.partitionOverwriteMode=dynamic")
    try:
        session.sql(f"INSERT OVERWRITE TABLE {table_name} VALUES (4, 'a'), (5, 'b')")
    finally:
        session.sql("SET spark.sql.sources.partitionOverwriteMode=static")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    assert sorted((r["id"], r["p"]) for r in hudi_rs_rows(entry.location)) == [(3, "c"), (4, "a"), (5, "b")]
    latest = Table.load(entry.location).timeline.completed_commits()[-1]
    assert latest.action == "replacecommit"
    metadata = Table.load(entry.location).commit_metadata(latest)
    assert metadata.operation_type == "INSERT_OVERWRITE"
    assert set(metadata.partition_to_replace_file_ids or {}) == {"p=a", "p=b"}


def test_drop_table_purge_removes_data_and_plain_drop_of_external_keeps_it(
        session: Session, table_name: str, tmp_path: Path) -> None:
    external = tmp_path / "ext"
    session.sql(f"""CREATE TABLE {table_name} (id INT) USING hudi LOCATION '{external}'
        TBLPROPERTIES (primaryKey = 'id')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1)")
    session.sql(f"DROP TABLE {table_name}")
    assert session.catalog.lookup_name(table_name) is None
    assert Table.exists(str(external)), "DROP TABLE without PURGE keeps an external table's data"
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{external}'")
    assert session.sql(f"SELECT id FROM {table_name}").collect()[0][0] == 1
    session.sql(f"DROP TABLE {table_name} PURGE")
    assert not external.exists()
    session.sql(f"DROP TABLE IF EXISTS {table_name}")


@pytest.mark.slow
@pytest.mark.extended
def test_tables_survive_restarting_the_shell(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    base = [sys.executable, "-m", "sqlext.shell", "--master", "local[1]", "--warehouse", str(warehouse), "-S"]
    create = ("CREATE TABLE kept (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id');"
              "INSERT INTO kept VALUES (1, 'one'), (2, 'two');")
    first = subprocess.run([*base, "-e", create], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    second = subprocess.run([*base, "-e", "SELECT id, v FROM kept ORDER BY id"], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.stdout.splitlines() == ["1\tone", "2\ttwo"]


@pytest.mark.slow
@pytest.mark.extended
def test_tpch_refresh_example_runs_end_to_end(session: Session, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    gen = subprocess.run([sys.executable, str(REPO / "bench" / "tpch_gen.py"), "--sf", "0.01", "--out",
                          str(tmp_path / "tpch")], capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stderr
    session.spark.conf.set("tpch.dir", str(tmp_path / "tpch"))
    rc = shell.main(["-S", "-f", str(REPO / "examples" / "tpch_merge.sql")], session_factory=lambda **_: session)
    out = capsys.readouterr().out
    assert rc == 0
    lineitem = session.spark.read.parquet(str(tmp_path / "tpch" / "lineitem.parquet")).count()
    rf1 = session.spark.read.parquet(str(tmp_path / "tpch" / "rf1_lineitem.parquet")).count()
    deleted = session.spark.sql(f"""SELECT count(*) FROM parquet.`{tmp_path}/tpch/lineitem.parquet` l
        JOIN parquet.`{tmp_path}/tpch/rf2_orderkeys.parquet` d ON l.l_orderkey = d.l_orderkey""").collect()[0][0]
    updated = session.spark.read.parquet(str(tmp_path / "tpch" / "updates_lineitem.parquet"))
    still_there = updated.join(
        session.spark.read.parquet(str(tmp_path / "tpch" / "rf2_orderkeys.parquet")), "l_orderkey", "left_anti").count()
    entry = session.catalog.lookup_name("lineitem")
    assert entry is not None
    oracle = hudi_rs_rows(entry.location)
    assert len(oracle) == lineitem + rf1 - deleted
    assert sum(1 for r in oracle if r["l_comment"] == "updated") == still_there
    assert "l_returnflag" in out.splitlines()[0] or "line_items" in out
