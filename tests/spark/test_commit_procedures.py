"""Commit-inspection procedures as a Hudi 0.14 user calls them (Hudi's TestCommitsProcedure,
TestShowTablePropertiesProcedure, newer Hudi's show_timeline): tables written with INSERT, UPDATE, DELETE
and compaction, then ``CALL show_commits``, ``show_commits_metadata``, ``show_commit_files``,
``show_commit_partitions``, ``show_commit_write_stats``, ``show_commit_extra_metadata``, ``commits_compare``,
``show_timeline`` and ``show_table_properties``; every value checked against the table's own timeline and
files, and a table written by Apache Hudi checked against its commit JSON."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row

from engine.table import Table
from engine.timeline.avro_serde import serialize
from engine.write.rollback import rollback_instant
from sqlext.errors import ProcedureError
from sqlext.session import Session

pytestmark = pytest.mark.spark


def call(session: Session, text: str) -> list[Row]:
    return session.sql(f"CALL {text}").collect()


def columns(session: Session, text: str) -> list[str]:
    return session.sql(f"CALL {text}").columns


def completed_commit_times(path: Path) -> list[str]:
    """The table's completed commit/deltacommit/replacecommit times, oldest first."""
    return [i.timestamp for i in Table.load(str(path)).timeline.completed_commits()]


def mtime_instant(path: Path, utc: bool = True) -> str:
    """A file's modification time as ``yyyyMMddHHmmssSSS`` (UTC, or the local zone)."""
    ms = os.stat(path).st_mtime_ns // 1_000_000
    moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC) if utc else dt.datetime.fromtimestamp(ms / 1000)
    return moment.strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}"


def files_by_partition(session: Session, name: str) -> dict[str, str]:
    """Partition → the base file its rows are in now (each partition has one file group here)."""
    rows = session.sql(f"SELECT DISTINCT _hoodie_partition_path, _hoodie_file_name FROM {name}").collect()
    return {r[0]: r[1] for r in rows}


@pytest.fixture
def cow(session: Session, table_name: str, tmp_path: Path) -> tuple[str, Path, list[str]]:
    """A partitioned copy-on-write table: INSERT 3 rows in 2 partitions, UPDATE one row, DELETE one row;
    returns (name, path, [insert, update, delete] commit times)."""
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING)
        USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
        LOCATION '{path}'""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000, '2024-01-01'), "
                f"(2, 'a2', 20, 1000, '2024-01-01'), (3, 'a3', 30, 1000, '2024-01-02')")
    session.sql(f"UPDATE {table_name} SET price = 11 WHERE id = 1")
    session.sql(f"DELETE FROM {table_name} WHERE id = 2")
    times = completed_commit_times(path)
    assert len(times) == 3
    return table_name, path, times


def test_show_commits_totals_of_each_statement(session: Session, cow: tuple[str, Path, list[str]]) -> None:
    name, path, (insert, update, delete) = cow
    assert columns(session, f"show_commits(table => '{name}')") == [
        "commit_time", "state_transition_time", "action", "total_bytes_written", "total_files_added",
        "total_files_updated", "total_partitions_written", "total_records_written",
        "total_update_records_written", "total_errors"]
    rows = call(session, f"show_commits(table => '{name}', limit => 10)")
    assert [r["commit_time"] for r in rows] == [delete, update, insert]  # newest first
    assert all(r["action"] == "commit" and r["total_errors"] == 0 for r in rows)
    by_time = {r["commit_time"]: r for r in rows}
    got = {t: (r["total_files_added"], r["total_files_updated"], r["total_partitions_written"],
               r["total_records_written"], r["total_update_records_written"]) for t, r in by_time.items()}
    assert got == {insert: (2, 0, 2, 3, 0),   # two new file groups holding 3 records
                   update: (0, 1, 1, 2, 1),   # the dt=2024-01-01 file rewritten, 1 record updated
                   delete: (0, 1, 1, 1, 0)}   # rewritten again without id 2
    for t, r in by_time.items():
        assert r["state_transition_time"] == mtime_instant(path / ".hoodie" / f"{t}.commit")
    # The delete wrote the file that holds the partition's rows now: its bytes are that file's size.
    current = files_by_partition(session, name)
    assert by_time[delete]["total_bytes_written"] == os.path.getsize(path / "dt=2024-01-01" / current["dt=2024-01-01"])

    assert [r["commit_time"] for r in call(session, f"show_commits('{name}', 2)")] == [delete, update]
    added = call(session, f"show_commits(table => '{name}', filter => \"total_files_added > 0\")")
    assert [r["commit_time"] for r in added] == [insert]
    # Archival is not implemented: the archived timeline adds nothing.
    assert call(session, f"show_commits(table => '{name}', showArchived => true)") == rows


def test_commits_metadata_and_one_commit(session: Session, cow: tuple[str, Path, list[str]]) -> None:
    name, path, (insert, update, delete) = cow
    stats = call(session, f"show_commits_metadata(table => '{name}')")
    assert columns(session, f"show_commits_metadata(table => '{name}', limit => 1)")[3:7] == \
        ["partition", "file_id", "previous_commit", "num_writes"]
    assert [(r["commit_time"], r["partition"], r["previous_commit"], r["num_inserts"], r["num_update_writes"],
             r["num_deletes"]) for r in stats] == [
        (delete, "dt=2024-01-01", update, 0, 0, 1),
        (update, "dt=2024-01-01", insert, 0, 1, 0),
        (insert, "dt=2024-01-01", "null", 2, 0, 0),
        (insert, "dt=2024-01-02", "null", 1, 0, 0)]
    assert len(call(session, f"show_commits_metadata(table => '{name}', limit => 3)")) == 3  # rows, not commits

    current = files_by_partition(session, name)
    files = call(session, f"show_commit_files(table => '{name}', instant_time => '{delete}')")
    assert [(r["action"], r["partition_path"], r["previous_commit"], r["total_records_updated"],
             r["total_records_written"], r["total_errors"]) for r in files] == \
        [("commit", "dt=2024-01-01", update, 0, 1, 0)]
    assert current["dt=2024-01-01"].startswith(files[0]["file_id"])
    assert files[0]["file_size"] == os.path.getsize(path / "dt=2024-01-01" / current["dt=2024-01-01"])
    assert files[0]["file_size"] == files[0]["total_bytes_written"]

    partitions = call(session, f"show_commit_partitions(table => '{name}', instant_time => '{insert}')")
    assert [(r["partition_path"], r["total_files_added"], r["total_files_updated"], r["total_records_inserted"],
             r["total_records_updated"]) for r in partitions] == [("dt=2024-01-01", 1, 0, 2, 0),
                                                                  ("dt=2024-01-02", 1, 0, 1, 0)]
    updated = call(session, f"show_commit_partitions(table => '{name}', instant_time => '{update}')")
    assert [(r["total_files_added"], r["total_files_updated"], r["total_records_updated"]) for r in updated] == \
        [(0, 1, 1)]
    limited = call(session, f"show_commit_partitions(table => '{name}', instant_time => '{insert}', limit => 1, "
                            f"filter => \"partition_path = 'dt=2024-01-02'\")")
    assert limited == []  # newer Hudi filters the rows left after the limit

    (write_stats,) = call(session, f"show_commit_write_stats(table => '{name}', instant_time => '{insert}')")
    written = sum(r["total_bytes_written"] for r in partitions)
    assert (write_stats["action"], write_stats["total_bytes_written"], write_stats["total_records_written"],
            write_stats["avg_record_size"]) == ("commit", written, 3, math.ceil(written / 3))

    extra = call(session, f"show_commit_extra_metadata(table => '{name}')")  # the latest commit
    assert [(r["instant_time"], r["action"], r["metadata_key"]) for r in extra] == [(delete, "commit", "schema")]
    schema = json.loads(call(session, f"show_commit_extra_metadata(table => '{name}', instant_time => '{insert}', "
                                      "metadata_key => 'schema')")[0]["metadata_value"])
    assert [f["name"] for f in schema["fields"]] == ["id", "name", "price", "ts", "dt"]
    assert call(session, f"show_commit_extra_metadata(table => '{name}', metadata_key => 'nope')") == []

    with pytest.raises(ProcedureError, match=f"Commit 20200101000000000 not found in Commits.*{insert}"):
        call(session, f"show_commit_files(table => '{name}', instant_time => '20200101000000000')")
    with pytest.raises(ProcedureError, match="Argument: instant_time is required"):
        call(session, f"show_commit_write_stats(table => '{name}')")
    with pytest.raises(ProcedureError, match="Invalid filter expression.*no_such_column"):
        call(session, f"show_commit_files(table => '{name}', instant_time => '{insert}', filter => 'no_such_column = 1')")
    with pytest.raises(ProcedureError, match="Argument: table is required"):
        call(session, "show_commits(limit => 10)")


def test_show_timeline_compaction_and_rollbacks(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
    session.sql(f"UPDATE {table_name} SET v = 'b2', ts = 2 WHERE id = 2")
    first, second = completed_commit_times(path)
    (log_write,) = call(session, f"show_commits_metadata(table => '{table_name}', limit => 1)")
    assert (log_write["action"], log_write["num_update_writes"], log_write["total_log_blocks"]) == ("deltacommit", 1, 1)
    compaction = call(session, f"run_compaction(op => 'schedule', table => '{table_name}', "
                               "options => 'hoodie.compact.inline.max.delta.commits=1')")[0]["timestamp"]

    assert columns(session, f"show_timeline(table => '{table_name}')") == [
        "instant_time", "action", "state", "requested_time", "inflight_time", "completed_time", "timeline_type",
        "rollback_info"]
    timeline = call(session, f"show_timeline(path => '{path}')")
    assert [(r["instant_time"], r["action"], r["state"]) for r in timeline] == [
        (compaction, "compaction", "REQUESTED"), (second, "deltacommit", "COMPLETED"),
        (first, "deltacommit", "COMPLETED")]
    pending = timeline[0]
    assert pending["requested_time"] is not None and pending["inflight_time"] is None
    assert pending["completed_time"] is None and pending["timeline_type"] == "ACTIVE"
    mtime = os.stat(path / ".hoodie" / f"{first}.deltacommit").st_mtime
    assert timeline[2]["completed_time"] == dt.datetime.fromtimestamp(mtime).strftime("%m-%d %H:%M:%S")

    call(session, f"run_compaction(op => 'execute', table => '{table_name}')")
    commits = call(session, f"show_commits(table => '{table_name}')")
    assert [(r["commit_time"], r["action"]) for r in commits] == \
        [(compaction, "commit"), (second, "deltacommit"), (first, "deltacommit")]
    assert commits[0]["total_records_written"] == 2 and commits[0]["total_files_updated"] == 1

    # A writer that died mid-way, rolled back; then one whose rollback is still only planned.
    table = Table.load(str(path))
    failed = table.timeline.transition_to_inflight(
        table.timeline.create_requested(table.timeline.new_instant_time(), "deltacommit"))
    rollback = rollback_instant(table, failed)
    dead = table.timeline.create_requested(table.timeline.new_instant_time(), "deltacommit")
    planned = table.timeline.new_instant_time()
    table.timeline.create_requested(planned, "rollback", serialize("HoodieRollbackPlan", {
        "instantToRollback": {"commitTime": dead.timestamp, "action": "deltacommit"}, "RollbackRequests": [],
        "version": 1}))
    timeline = call(session, f"show_timeline(table => '{table_name}', limit => 3)")
    assert [(r["instant_time"], r["action"], r["state"], r["rollback_info"]) for r in timeline] == [
        (planned, "rollback", "REQUESTED", f"Rolls back {dead.timestamp}"),
        (dead.timestamp, "deltacommit", "REQUESTED", f"Rolled back by: {planned}"),
        (rollback, "rollback", "COMPLETED", f"Rolled back: {failed.timestamp}")]

    everything = call(session, f"show_timeline(table => '{table_name}', limit => 1, startTime => '{first}', "
                               f"endTime => '{compaction}')")
    assert [r["instant_time"] for r in everything] == [compaction, second, first]  # both bounds: no limit
    after = call(session, f"show_timeline(table => '{table_name}', startTime => '{second}', "
                          "filter => \"state = 'COMPLETED' AND action <> 'rollback'\")")
    assert [(r["instant_time"], r["action"]) for r in after] == [(compaction, "commit"), (second, "deltacommit")]
    assert len(call(session, f"show_timeline(table => '{table_name}', showArchived => true)")) == 6
    with pytest.raises(ProcedureError, match="Table name or table path must be given one"):
        call(session, "show_timeline(limit => 5)")
    with pytest.raises(ProcedureError, match="Invalid filter expression"):
        call(session, f"show_timeline(table => '{table_name}', filter => 'state + 1')")


def test_table_properties_and_compare(session: Session, table_name: str, tmp_path: Path) -> None:
    source, target = f"{table_name}_src", f"{table_name}_dst"
    for name in (source, target):
        session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT) USING hudi
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{tmp_path / name}'""")
    session.sql(f"INSERT INTO {source} VALUES (1, 'a', 1)")
    session.sql(f"INSERT INTO {target} VALUES (1, 'a', 1)")
    (target_commit,) = completed_commit_times(tmp_path / target)
    (detail,) = call(session, f"commits_compare(table => '{source}', path => '{tmp_path / target}')")
    assert detail["compare_detail"] == f"Source {source} is behind by 1 commits. Commits to catch up - [{target_commit}]"
    session.sql(f"INSERT INTO {source} VALUES (2, 'b', 1)")
    latest = completed_commit_times(tmp_path / source)[-1]
    (detail,) = call(session, f"commits_compare(table => '{source}', path => '{tmp_path / target}')")
    assert detail["compare_detail"] == f"Source {source} is ahead by 1 commits. Commits to catch up - [{latest}]"
    with pytest.raises(ProcedureError, match="Argument: path is required"):
        call(session, f"commits_compare(table => '{source}')")

    on_disk = Table.load(str(tmp_path / source)).config
    props = call(session, f"show_table_properties(table => '{source}', limit => 100)")
    assert [(r["key"], r["value"]) for r in props] == list(on_disk.items())
    assert len(call(session, f"show_table_properties(path => '{tmp_path / source}')")) == 10
    named = call(session, f"show_table_properties(table => '{source}', limit => 100, "
                          "filter => \"key = 'hoodie.table.name'\")")
    assert [(r["key"], r["value"]) for r in named] == [("hoodie.table.name", source)]


def test_help_describes_every_commit_procedure(session: Session) -> None:
    listed = call(session, "help()")[0][0]
    for name in ("show_commits", "show_commits_metadata", "show_commit_files", "show_commit_partitions",
                 "show_commit_write_stats", "show_commit_extra_metadata", "commits_compare", "show_timeline",
                 "show_table_properties"):
        assert f"\t{name}\t" in listed
        assert "outputType:" in call(session, f"help(cmd => '{name}')")[0][0]
    text = call(session, "help(cmd => 'show_commit_files')")[0][0]
    params = [line.split()[0] for line in text.split("outputType:")[0].splitlines()[2:]]
    assert params == ["table", "limit", "instant_time", "filter"]  # Hudi 0.14's order, then newer Hudi's filter
    assert "archived timeline" in call(session, "help(cmd => 'show_commits')")[0][0]


def test_a_table_written_by_hudi(session: Session, table_name: str, hudi_fixture: Callable[..., str]) -> None:
    """Hudi 0.14 wrote this merge-on-read table (8 inserts, then 3 deletes): the totals are those of its
    commit files, and the state transition times those of its files (the table's clock is local)."""
    base = Path(hudi_fixture("quickstart_trips_table/mor/avro/v6_trips_8i3d", fresh=True))
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{base}'")
    commits = sorted(base.glob(".hoodie/*.deltacommit"), reverse=True)
    metadata = [json.loads(p.read_text()) for p in commits]
    rows = call(session, f"show_commits(table => '{table_name}')")
    assert [r["commit_time"] for r in rows] == [p.name.split(".")[0] for p in commits]
    for row, meta, file in zip(rows, metadata, commits, strict=True):
        stats: list[dict[str, Any]] = [s for lst in meta["partitionToWriteStats"].values() for s in lst]
        assert (row["action"], row["total_records_written"], row["total_bytes_written"],
                row["total_partitions_written"], row["total_files_added"], row["total_files_updated"]) == \
            ("deltacommit", sum(s["numWrites"] for s in stats), sum(s["totalWriteBytes"] for s in stats),
             len(meta["partitionToWriteStats"]), sum(s["prevCommit"] == "null" for s in stats),
             sum(s["prevCommit"] != "null" for s in stats))
        assert row["state_transition_time"] == mtime_instant(file, utc=False)
    deletes = call(session, f"show_commit_partitions(table => '{table_name}', instant_time => '{rows[0][0]}')")
    assert [r["partition_path"] for r in deletes] == list(metadata[0]["partitionToWriteStats"])
    keys = call(session, f"show_commit_extra_metadata(table => '{table_name}', instant_time => '{rows[1][0]}')")
    assert [r["metadata_key"] for r in keys] == list(metadata[1]["extraMetadata"])
    timeline = call(session, f"show_timeline(path => '{base}', filter => \"state = 'COMPLETED'\")")
    assert [r["instant_time"] for r in timeline] == [r["commit_time"] for r in rows]
