"""show_file_status, show_fs_path_detail, show_logfile_metadata/records, drop_partition, truncate_table and
run_ttl as a user calls them (Hudi's TestShowFileStatusProcedure, TestShowFsPathDetailProcedure,
TestHoodieLogFileProcedure, TestDropPartitionProcedure, TestTruncateTableProcedure, TestTTLProcedure)."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import engine.write.commit as commit_module
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.commit_metadata import CommitMetadata
from sqlext.procedures.files import size_with_unit
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


def call(session: Session, sql: str) -> list[Any]:
    return session.sql(f"CALL {sql}").collect()


def data_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".hoodie")}


def completed(path: Path, action: str) -> list[str]:
    timeline = Table.load(str(path)).timeline
    return sorted(i.timestamp for i in timeline.completed() if i.action == action)


def replaced_partitions(path: Path) -> list[str]:
    """Partitions of the latest completed replacecommit."""
    table = Table.load(str(path))
    latest = table.timeline.completed_replace_commits()[-1]
    metadata: CommitMetadata = table.commit_metadata(latest)
    assert metadata.operation_type == "DELETE_PARTITION"
    return sorted(metadata.replaced_file_ids())


# ---------------------------------------------------------------------------------------------- show_file_status


def test_show_file_status_tells_which_action_deleted_a_file(session: Session, table_name: str,
                                                            tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
                                          'hoodie.cleaner.commits.retained' = '1')
        LOCATION '{path}'""")
    d1 = path / "dt=d1"
    status = f"show_file_status(table => '{table_name}', partition => 'dt=d1', file => "
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'd1')")
        (first,) = data_files(d1)
        assert [tuple(r) for r in call(session, status + f"'{first}')")] == \
            [("exist", "", "", "active", str(d1 / first))]

        for version in range(2, 5):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        assert first not in data_files(d1)
        cleans = completed(path, "clean")
        rows = call(session, status + f"'{first}')")
        assert [tuple(r) for r in rows] == [("deleted", "clean", rows[0]["instant"], "active", "")]
        assert rows[0]["instant"] in cleans
        cleaned_by = [t for t in cleans if any(first in f for p in deserialize(
            (path / ".hoodie" / f"{t}.clean").read_bytes(), "HoodieCleanMetadata")["partitionMetadata"].values()
            for f in p["successDeleteFiles"])]
        assert rows[0]["instant"] == cleaned_by[-1]
        assert call(session, status + f"'{first}', filter => \"status = 'exist'\")") == []

        # A rolled-back commit's files.
        before = data_files(d1)
        session.sql(f"UPDATE {table_name} SET name = 'r', ts = 9 WHERE id = 1")
        (written,) = data_files(d1) - before
        latest = Table.load(str(path)).timeline.completed_commits()[-1].timestamp
        assert call(session, f"rollback_to_instant(table => '{table_name}', instant_time => '{latest}')")[0][0]
        rollback = call(session, status + f"'{written}')")[0]
        assert (rollback["status"], rollback["action"], rollback["instant"]) == \
            ("deleted", "rollback", completed(path, "rollback")[-1])

        # A restore's.
        session.sql(f"UPDATE {table_name} SET name = 'r', ts = 9 WHERE id = 1")
        saved = Table.load(str(path)).timeline.completed_commits()[-1].timestamp
        call(session, f"create_savepoint(table => '{table_name}', commit_time => '{saved}')")
        before = data_files(d1)
        session.sql(f"UPDATE {table_name} SET name = 's', ts = 10 WHERE id = 1")
        (after_savepoint,) = data_files(d1) - before
        call(session, f"rollback_to_savepoint(table => '{table_name}', instant_time => '{saved}')")
        restore = call(session, status + f"'{after_savepoint}')")[0]
        assert (restore["status"], restore["action"], restore["instant"], restore["timeline"]) == \
            ("deleted", "restore", completed(path, "restore")[-1], "active")

        assert [tuple(r) for r in call(session, status + "'unknown')")] == [("unknown", "", "", "", "")]
        by_path = call(session, f"show_file_status(path => '{path}', partition => 'dt=d1', file => '{first}')")
        assert by_path[0]["action"] == "clean"
        with pytest.raises(Exception, match="is a partitioned table. Please specify the partition"):
            call(session, f"show_file_status(table => '{table_name}', file => '{first}')")
        with pytest.raises(Exception, match="partition 'dt=nope' does not exist"):
            call(session, f"show_file_status(table => '{table_name}', partition => 'dt=nope', file => 'x.parquet')")
        assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(path)) == [(1, "r")]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_show_file_status_finds_cleans_in_the_archived_timeline(session: Session, table_name: str,
                                                                tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.cleaner.commits.retained' = '1',
                       'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
        (first,) = data_files(path)
        for version in range(2, 10):
            session.sql(f"UPDATE {table_name} SET name = 'a{version}', ts = {version} WHERE id = 1")
        active_cleans = completed(path, "clean")
        row = call(session, f"show_file_status(table => '{table_name}', file => '{first}')")[0]
        assert (row["status"], row["action"], row["timeline"]) == ("deleted", "clean", "archived")
        assert row["instant"] < active_cleans[0]
        latest = sorted(data_files(path))[-1]
        assert call(session, f"show_file_status(table => '{table_name}', file => '{latest}')")[0]["status"] == "exist"
    finally:
        session.sql(f"DROP TABLE {table_name}")


# ---------------------------------------------------------------------------------------------- show_fs_path_detail


def summary(root: Path) -> tuple[int, int, int]:
    dirs = files = size = 0
    for _, subdirs, names in os.walk(root):
        dirs += 1
        files += len(names)
        size += sum((Path(_) / n).stat().st_size for n in names)
        del subdirs
    return dirs, files, size


def test_show_fs_path_detail(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'd1'), (2, 'b', 1, 'd2'), (3, 'c', 1, 'd2')")
        rows = call(session, f"show_fs_path_detail(path => '{path}')")
        assert len(rows) == 1
        dirs, files, size = summary(path)
        row = rows[0]
        assert (row["path_num"], row["file_num"], row["storage_size"]) == (dirs, files, size)
        assert row["storage_path"] == f"file:{path}"
        assert (row["space_consumed"], row["quota"], row["space_quota"]) == (size, -1, -1)
        assert row["storage_size(unit)"] == size_with_unit(size) and row["storage_size(unit)"].endswith("KB")

        sub = call(session, f"show_fs_path_detail(path => '{path}', is_sub => true)")
        assert {r["storage_path"] for r in sub} == {f"file:{p}" for p in path.iterdir()}
        assert [r["storage_size"] for r in sub] == sorted((r["storage_size"] for r in sub), reverse=True)
        by_files = call(session, f"show_fs_path_detail(path => '{path}', is_sub => true, sort => false, limit => 2)")
        assert len(by_files) == 2 and by_files[0]["storage_path"] == f"file:{path / '.hoodie'}"
        assert by_files[0]["file_num"] >= by_files[1]["file_num"]
        partitions = call(session, f"show_fs_path_detail(path => '{path}/dt={{d1,d2}}')")
        assert sorted(r["storage_path"] for r in partitions) == [f"file:{path / 'dt=d1'}", f"file:{path / 'dt=d2'}"]
        assert [r["path_num"] for r in partitions] == [1, 1]
        assert call(session, f"show_fs_path_detail(path => '{path}/dt=x*')") == []
        with pytest.raises(Exception, match="does not exist"):
            call(session, f"show_fs_path_detail(path => '{path}/missing')")
    finally:
        session.sql(f"DROP TABLE {table_name}")


# ---------------------------------------------------------------------------------------------- log files


def test_logfile_metadata_and_records(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                                          'hoodie.compact.inline' = 'false')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.5, 1, 'd1'), (2, 'b', 2.0, 1, 'd1'), "
                    "(3, 'c', 3.0, 1, 'd2')")
        session.sql(f"UPDATE {table_name} SET name = 'a2', ts = 2 WHERE id = 1")
        session.sql(f"UPDATE {table_name} SET name = 'a/3', ts = 3 WHERE id = 1")
        session.sql(f"DELETE FROM {table_name} WHERE id = 2")
        deltas = completed(path, "deltacommit")
        pattern = f"{path}/dt=d1/.*.log.*"
        meta = call(session, f"show_logfile_metadata(table => '{table_name}', log_file_path_pattern => '{pattern}')")
        assert [r["instant_time"] for r in meta] == deltas[1:]
        assert [(r["block_type"], r["record_count"]) for r in meta] == \
            [("AVRO_DATA_BLOCK", 1), ("AVRO_DATA_BLOCK", 1), ("DELETE_BLOCK", 1)]
        for r in meta:
            header = json.loads(r["header_metadata"])
            assert header["INSTANT_TIME"] == r["instant_time"]
            assert json.loads(header["SCHEMA"])["type"] == "record"
            assert r["footer_metadata"] == "{}"
        relative = call(session, f"show_logfile_metadata(table => '{table_name}', "
                                 "log_file_path_pattern => 'dt=*/*', limit => 2)")
        assert [tuple(r) for r in relative] == [tuple(r) for r in meta[:2]]

        records = call(session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => "
                                f"'{pattern}')")
        assert len(records) == 2
        first = records[0]["records"]
        assert first.startswith('{"_hoodie_commit_time": "') and '"price": 1.5' in first
        assert '"name": "a\\/3"' in records[1]["records"]  # Avro escapes '/'
        assert [(json.loads(r["records"])["id"], json.loads(r["records"])["name"]) for r in records] == \
            [(1, "a2"), (1, "a/3")]
        merged = call(session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => "
                               f"'{pattern}', merge => true)")
        assert [(json.loads(r["records"])["id"], json.loads(r["records"])["name"]) for r in merged] == [(1, "a/3")]
        assert len(call(session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => "
                                 f"'{pattern}', limit => 1)")) == 1
        with pytest.raises(Exception, match="There is no log file"):
            call(session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => 'dt=d9/*')")
        assert call(session, f"show_logfile_metadata(table => '{table_name}', log_file_path_pattern => 'dt=d9/*')") == []
        assert sorted((r["id"], r["name"]) for r in hudi_rs_rows(path)) == [(1, "a/3"), (3, "c")]
    finally:
        session.sql(f"DROP TABLE {table_name}")


# ---------------------------------------------------------------------------------------------- drop / truncate


def three_level_table(session: Session, name: str, path: Path) -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT, year STRING, month STRING, day STRING)
        USING hudi PARTITIONED BY (year, month, day) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
        LOCATION '{path}'""")
    session.sql(f"INSERT INTO {name} VALUES (1, 'n1', 1, '2019', '08', '31')")
    session.sql(f"INSERT INTO {name} VALUES (2, 'n2', 2, '2019', '08', '30')")
    session.sql(f"INSERT INTO {name} VALUES (3, 'n3', 3, '2019', '08', '29')")
    session.sql(f"INSERT INTO {name} VALUES (4, 'n4', 4, '2019', '07', '31')")


def ids(session: Session, name: str, path: Path) -> list[int]:
    ours = sorted(r[0] for r in session.sql(f"SELECT id FROM {name}").collect())
    assert ours == sorted(r["id"] for r in hudi_rs_rows(path))
    return ours


def test_drop_partition(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    three_level_table(session, table_name, path)
    try:
        assert [tuple(r) for r in call(session, f"drop_partition(table => '{table_name}', "
                                                "partition => 'year=2019/month=08/*')")] == [("Success",)]
        assert replaced_partitions(path) == [f"year=2019/month=08/day={d}" for d in ("29", "30", "31")]
        assert ids(session, table_name, path) == [4]
        with pytest.raises(Exception, match="no partition matches year=2020/month=01/day=01"):
            call(session, f"drop_partition(table => '{table_name}', partition => 'year=2020/month=01/day=01')")
        call(session, f"drop_partition(table => '{table_name}', partition => 'year=2019/month=07/day=31')")
        assert replaced_partitions(path) == ["year=2019/month=07/day=31"]
        assert ids(session, table_name, path) == []
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_truncate_table(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    three_level_table(session, table_name, path)
    try:
        rows = call(session, f"truncate_table(table => '{table_name}', "
                             "partitions => 'year=2019/month=08/day=31,year=2019/month=08/day=30')")
        assert rows[0]["result"] == "SUCCESS" and rows[0]["time_cost"] >= 0
        assert replaced_partitions(path) == ["year=2019/month=08/day=30", "year=2019/month=08/day=31"]
        assert ids(session, table_name, path) == [3, 4]
        assert call(session, f"truncate_table(table => '{table_name}')")[0]["result"] == "SUCCESS"
        assert ids(session, table_name, path) == []
        assert len(Table.load(str(path)).timeline) == 0
        session.sql(f"INSERT INTO {table_name} VALUES (5, 'n5', 5, '2020', '01', '01')")
        assert ids(session, table_name, path) == [5]
    finally:
        session.sql(f"DROP TABLE {table_name}")
    other = table_name + "_flat"
    session.sql(f"""CREATE TABLE {other} (id INT, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{tmp_path / other}'""")
    try:
        with pytest.raises(Exception, match="TRUNCATE TABLE ... PARTITION is not supported for tables that are "
                                            "not partitioned"):
            call(session, f"truncate_table(table => '{other}', partitions => 'dt=1')")
    finally:
        session.sql(f"DROP TABLE {other}")


# ---------------------------------------------------------------------------------------------- run_ttl


@contextmanager
def clock_at(monkeypatch: pytest.MonkeyPatch, moment: dt.datetime) -> Iterator[None]:
    """New write instants as if the clock read ``moment``."""
    real = commit_module.new_instant_time
    monkeypatch.setattr(commit_module, "new_instant_time", lambda after=(), now=None: real(after, moment))
    try:
        yield
    finally:
        monkeypatch.setattr(commit_module, "new_instant_time", real)


def test_run_ttl(session: Session, table_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    try:
        with clock_at(monkeypatch, dt.datetime(2020, 1, 1, tzinfo=dt.UTC)):
            session.sql(f"INSERT INTO {table_name} VALUES (0, 'old', 1, 'd0'), (1, 'old', 1, 'd1')")
        assert Table.load(str(path)).timeline.completed_commits()[0].timestamp.startswith("20200101")
        session.sql(f"UPDATE {table_name} SET name = 'new', ts = 2 WHERE id = 1")
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'new', 1, 'd2')")

        assert call(session, f"run_ttl(table => '{table_name}', retain_days => 1, options => "
                             "'hoodie.partition.ttl.strategy.partition.selected=dt=d1,dt=d2')") == []
        commits = len(Table.load(str(path)).timeline.completed_commits())
        assert [r[0] for r in call(session, f"run_ttl(table => '{table_name}', retain_days => 1)")] == ["dt=d0"]
        assert replaced_partitions(path) == ["dt=d0"]
        assert len(Table.load(str(path)).timeline.completed_commits()) == commits + 1
        assert ids(session, table_name, path) == [1, 2]
        # d1 was updated today but created in 2020.
        assert [r[0] for r in call(session, f"run_ttl(table => '{table_name}', ttl_policy => 'KEEP_BY_CREATION_TIME',"
                                            " retain_days => 1)")] == ["dt=d1"]
        assert ids(session, table_name, path) == [2]
        assert call(session, f"run_ttl(table => '{table_name}', retain_days => 1)") == []

        with pytest.raises(Exception, match="give retain_days"):
            call(session, f"run_ttl(table => '{table_name}')")
        with pytest.raises(Exception, match="unknown option.*hoodie.partition.ttl.strategy.days"):
            call(session, f"run_ttl(table => '{table_name}', options => 'hoodie.partition.ttl.strategy.days=1')")
        with pytest.raises(Exception, match="custom strategies are not"):
            call(session, f"run_ttl(table => '{table_name}', retain_days => 1, options => "
                          "'hoodie.partition.ttl.strategy.class=com.example.Mine')")
        with pytest.raises(Exception, match="hoodie.partition.ttl.inline=true .* is not implemented"):
            call(session, f"run_ttl(table => '{table_name}', retain_days => 1, options => "
                          "'hoodie.partition.ttl.inline=true')")
        with pytest.raises(Exception, match="ttl_policy must be one of"):
            call(session, f"run_ttl(table => '{table_name}', ttl_policy => 'KEEP_ALL', retain_days => 1)")
    finally:
        session.sql(f"DROP TABLE {table_name}")


# ---------------------------------------------------------------------------------------------- Hudi-written tables


def test_on_tables_written_by_hudi(session: Session, table_name: str, hudi_fixture: Callable[..., str]) -> None:
    """Hudi 0.14/0.15 wrote these merge-on-read tables: parquet log blocks and a rollback command block
    (v6_nonpartitioned_rollback: the update of id 1 went to a log and was rolled back, then id 2 was updated),
    a delete block (v6_trips_8i3d, 8 inserts then 3 deletes)."""
    rolled = Path(hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned_rollback", fresh=True))
    trips = Path(hudi_fixture("quickstart_trips_table/mor/avro/v6_trips_8i3d", fresh=True))
    other = table_name + "_trips"
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{rolled}'")
    session.sql(f"CREATE TABLE {other} USING hudi LOCATION '{trips}'")
    try:
        meta = call(session, f"show_logfile_metadata(table => '{table_name}', log_file_path_pattern => '.*.log.*')")
        assert [(r["instant_time"], r["block_type"], r["record_count"]) for r in meta] == [
            ("20250126040826878", "PARQUET_DATA_BLOCK", 1), ("20250126040936578", "COMMAND_BLOCK", 0),
            ("20250126060846931", "PARQUET_DATA_BLOCK", 1)]
        assert json.loads(meta[1]["header_metadata"]) == {
            "INSTANT_TIME": "20250126040936578", "COMMAND_BLOCK_TYPE": "0", "TARGET_INSTANT_TIME": "20250126040826878"}
        pattern = f"{rolled}/.*.log.*"
        written = [json.loads(r["records"]) for r in call(
            session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => '{pattern}')")]
        assert [(r["id"], r["name"], r["isActive"]) for r in written] == \
            [(1, "Alice", False), (2, "Bob", True)]
        merged = [json.loads(r["records"]) for r in call(
            session, f"show_logfile_records(table => '{table_name}', log_file_path_pattern => '{pattern}', "
                     "merge => true)")]
        assert [(r["id"], r["name"], r["isActive"]) for r in merged] == [(2, "Bob", True)]  # the rest rolled back

        deletes = call(session, f"show_logfile_metadata(table => '{other}', log_file_path_pattern => '*/.*.log.*')")
        assert [(r["block_type"], r["record_count"]) for r in deletes] == [("DELETE_BLOCK", 3)]
        assert call(session, f"show_logfile_records(table => '{other}', log_file_path_pattern => '*/.*.log.*')") == []

        before = hudi_rs_rows(trips)
        # Its partitions were written in June 2025: a day's retention expires them, the oldest path first.
        assert [r[0] for r in call(session, f"run_ttl(table => '{other}', retain_days => 1, options => "
                                            "'hoodie.partition.ttl.strategy.max.delete.partitions=1')")] == \
            ["city=chennai"]
        after = hudi_rs_rows(trips)
        assert sorted(r["uuid"] for r in after) == sorted(r["uuid"] for r in before if r["city"] != "chennai")
        assert call(session, f"run_ttl(table => '{other}', retain_days => 100000)") == []
        status = call(session, f"show_file_status(table => '{other}', partition => 'city=chennai', file => "
                               f"'{next((trips / 'city=chennai').glob('*.parquet')).name}')")[0]
        assert (status["status"], status["timeline"]) == ("exist", "active")  # replaced, not yet cleaned
    finally:
        session.sql(f"DROP TABLE {table_name}")
        session.sql(f"DROP TABLE {other}")
