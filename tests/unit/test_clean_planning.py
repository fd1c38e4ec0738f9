"""The cleaner's rules (Hudi CleanPlanner, TestCleaner), on synthetic tables: which file versions each policy
removes, what it must never remove, and the clean instants it writes."""

from __future__ import annotations

import datetime
import logging
import os
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.filegroup.naming import base_file_name, log_file_name
from engine.filegroup.partition_metadata import write_partition_metadata
from engine.services.clean import (
    CleanPolicy,
    commits_since_last_clean,
    earliest_commit_to_retain,
    execute_clean,
    plan_clean,
    run_clean,
    schedule_clean,
)
from engine.table import Table
from engine.timeline import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, CommitMetadata, avro_serde
from engine.timeline.commit_metadata import WriteStat
from engine.timeline.instant import CLEAN, SAVEPOINT, State
from tests.unit.synthetic_timeline import commit

T = [f"2024010{i}000000000" for i in range(1, 10)]


def _table(tmp_path: Path, table_type: str = "COPY_ON_WRITE", **extra: str) -> Table:
    props = {"hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.recordkey.fields": "id",
             "hoodie.table.precombine.field": "ts", "hoodie.table.partition.fields": "p",
             "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator", **extra}
    table = Table.create(str(tmp_path / "t"), props)
    write_partition_metadata(table.storage, table.base_path, "p=1", T[0])
    return table


def _touch(table: Table, name: str, partition: str = "p=1") -> str:
    path = os.path.join(table.base_path, partition, name)
    with open(path, "wb") as handle:
        handle.write(b"x")
    return path


def _versions(table: Table, file_id: str, instants: list[str]) -> list[str]:
    """One base file of ``file_id`` per instant, each committed."""
    paths = []
    for ts in instants:
        paths.append(_touch(table, base_file_name(file_id, "0-0-0", ts)))
        commit(table, ts)
    return paths


def _conf(**settings: str) -> HoodieConfig:
    return HoodieConfig({f"hoodie.cleaner.{k.replace('_', '.')}": v for k, v in settings.items()})


def _planned(table: Table, conf: HoodieConfig, now: datetime.datetime | None = None) -> list[str]:
    return sorted(os.path.basename(p) for paths in plan_clean(table, conf, now).files.values() for p in paths)


def test_keep_latest_commits_keeps_the_version_serving_the_earliest_retainedcommit(tmp_path: Path) -> None:
    table = _table(tmp_path)
    paths = _versions(table, "a-0", T[:5])
    conf = _conf(commits_retained="2")
    earliest = earliest_commit_to_retain(table, CleanPolicy.KEEP_LATEST_COMMITS, conf)
    assert earliest is not None and earliest.timestamp == T[3]
    # T[4] is the latest, T[2] serves queries as of T[3]; T[3] is not older than the retained commit.
    assert _planned(table, conf) == sorted(os.path.basename(p) for p in paths[:2])
    # Not more completed commits than retained: nothing at all.
    assert _planned(table, _conf(commits_retained="5")) == []


def test_the_earliest_retained_commit_never_passes_a_pending_write(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _versions(table, "a-0", T[:3])
    commit(table, "20240103500000000", complete=False)  # a write still running
    _versions(table, "a-0", T[3:5])
    earliest = earliest_commit_to_retain(table, CleanPolicy.KEEP_LATEST_COMMITS, _conf(commits_retained="2"))
    assert earliest is not None and earliest.timestamp == T[2]
    assert _planned(table, _conf(commits_retained="2")) == [base_file_name("a-0", "0-0-0", T[0])]


def test_keep_latest_file_versions(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _versions(table, "a-0", T[:4])
    _versions(table, "b-0", T[4:5])
    assert _planned(table, _conf(policy="KEEP_LATEST_FILE_VERSIONS", fileversions_retained="2")) == \
        [base_file_name("a-0", "0-0-0", T[0]), base_file_name("a-0", "0-0-0", T[1])]


def test_keep_latest_by_hours(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _versions(table, "a-0", T[:4])
    now = datetime.datetime(2024, 1, 4, 12, 0, 0)  # 13 hours retained reach back to T[3] (Jan 4, 00:00)
    conf = _conf(policy="KEEP_LATEST_BY_HOURS", hours_retained="13")
    # By hours only the group's latest version is spared among those before the retained commit.
    assert _planned(table, conf, now) == [base_file_name("a-0", "0-0-0", t) for t in T[:3]]


def test_savepointed_files_are_never_removed(tmp_path: Path) -> None:
    table = _table(tmp_path)
    a = _versions(table, "a-0", T[:4])
    saved = {"savepointedBy": "me", "savepointedAt": 0, "comments": "", "version": 1,
             "partitionMetadata": {"p=1": {"partitionPath": "p=1", "savepointDataFile": [os.path.basename(a[0])]}}}
    timeline = table.reload_timeline()
    inflight = timeline.create_inflight(T[4], SAVEPOINT)
    timeline.complete(inflight, avro_serde.serialize("HoodieSavepointMetadata", saved))
    table.reload()
    assert _planned(table, _conf(commits_retained="1")) == [os.path.basename(a[1])]


def test_replaced_file_groups_go_once_the_replace_is_before_the_retainedcommit(tmp_path: Path) -> None:
    table = _table(tmp_path)
    old = _versions(table, "old-0", T[:1])
    _touch(table, base_file_name("new-0", "0-0-0", T[1]))
    commit(table, T[1], REPLACE_COMMIT, metadata=CommitMetadata(
        operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p=1": ["old-0"]}))
    _versions(table, "new-0", T[2:4])
    assert os.path.basename(old[0]) in _planned(table, _conf(commits_retained="2"))  # replaced at T[1] < T[2]
    assert os.path.basename(old[0]) not in _planned(table, _conf(commits_retained="3"))  # T[1] is retained
    assert os.path.basename(old[0]) in _planned(table, _conf(policy="KEEP_LATEST_FILE_VERSIONS"))


def test_merge_on_read_slices_go_with_their_logs_but_not_what_a_compaction_reads(tmp_path: Path) -> None:
    table = _table(tmp_path, "MERGE_ON_READ")
    _touch(table, base_file_name("f-0", "0-0-0", T[0]))
    commit(table, T[0], DELTA_COMMIT)
    first_log = _touch(table, log_file_name("f-0", T[0], 1, "0-0-0"))
    commit(table, T[1], DELTA_COMMIT)
    _touch(table, base_file_name("f-0", "0-0-0", T[2]))  # a compaction's output
    commit(table, T[2], COMMIT, metadata=CommitMetadata(compacted=True, operation_type="COMPACT"))
    _touch(table, log_file_name("f-0", T[2], 1, "0-0-0"))
    commit(table, T[3], DELTA_COMMIT)
    _touch(table, log_file_name("f-0", T[2], 2, "0-0-0"))
    commit(table, T[4], DELTA_COMMIT)
    planned = _planned(table, _conf(commits_retained="2"))
    assert planned == sorted([base_file_name("f-0", "0-0-0", T[0]), os.path.basename(first_log)])
    # A compaction scheduled on the slice of T[2] keeps that slice whatever the policy says.
    plan = avro_serde.serialize("HoodieCompactionPlan", {"operations": [
        {"baseInstantTime": T[2], "deltaFilePaths": [], "dataFilePath": base_file_name("f-0", "0-0-0", T[2]),
         "fileId": "f-0", "partitionPath": "p=1"}]})
    timeline = table.reload_timeline()
    timeline.create_requested(T[5], COMPACTION, plan)
    _touch(table, log_file_name("f-0", T[5], 1, "0-0-0"))
    commit(table, T[6], DELTA_COMMIT)
    kept = _planned(table, _conf(policy="KEEP_LATEST_FILE_VERSIONS", fileversions_retained="1"))
    assert base_file_name("f-0", "0-0-0", T[2]) not in kept


def test_cdc_logs_go_with_their_slice(tmp_path: Path) -> None:
    table = _table(tmp_path, **{"hoodie.table.cdc.enabled": "true"})
    _versions(table, "a-0", T[:1])
    cdc = _touch(table, f".a-0_{T[1]}.log.1_0-0-0.cdc")
    _versions(table, "a-0", T[1:4])
    planned = _planned(table, _conf(commits_retained="1"))
    assert os.path.basename(cdc) in planned and base_file_name("a-0", "0-0-0", T[1]) in planned


def test_clean_instants_as_hudi_writes_them(tmp_path: Path) -> None:
    table = _table(tmp_path)
    paths = _versions(table, "a-0", T[:4])
    conf = _conf(commits_retained="2")
    requested, reason = schedule_clean(table, conf)
    assert requested is not None and reason == "" and requested.state is State.REQUESTED
    plan = avro_serde.deserialize(table.timeline.reload().read_details(requested), "HoodieCleanerPlan")
    assert plan["policy"] == "KEEP_LATEST_COMMITS" and plan["version"] == 2
    assert plan["earliestInstantToRetain"] == {"timestamp": T[2], "action": COMMIT, "state": "COMPLETED"}
    assert plan["lastCompletedCommitTimestamp"] == T[3]
    assert plan["filePathsToBeDeletedPerPartition"] == {"p=1": [{"filePath": paths[0], "isBootstrapBaseFile": False}]}
    result = execute_clean(table.reload(), requested)
    assert result.files_deleted == 1 and not os.path.exists(paths[0]) and os.path.exists(paths[1])
    done = [i for i in table.reload_timeline().cleans() if i.state is State.COMPLETED]
    assert [i.timestamp for i in done] == [requested.timestamp]
    metadata = avro_serde.deserialize(table.timeline.read_details(done[0]), "HoodieCleanMetadata")
    assert metadata["partitionMetadata"]["p=1"]["successDeleteFiles"] == [os.path.basename(paths[0])]
    assert metadata["earliestCommitToRetain"] == T[2] and metadata["version"] == 2
    assert metadata["lastCompletedCommitTimestamp"] == T[3]
    # Nothing new since: the next run schedules nothing and says why.
    assert commits_since_last_clean(table.reload()) == 0
    results, reason = run_clean(table, conf)
    assert results == [] and "since the last clean" in reason


def test_a_clean_left_pending_is_finished_by_the_next_run(tmp_path: Path) -> None:
    table = _table(tmp_path)
    paths = _versions(table, "a-0", T[:4])
    requested, _ = schedule_clean(table, _conf(commits_retained="2"))
    assert requested is not None
    table.reload_timeline().transition_to_inflight(requested, table.timeline.read_details(requested))
    os.remove(paths[0])  # the crashed run had deleted it already
    results, _ = run_clean(table.reload(), _conf(commits_retained="2"))
    assert [r.instant for r in results] == [requested.timestamp] and results[0].failed == 1
    assert all(i.state is State.COMPLETED for i in table.reload_timeline().of_actions([CLEAN]))


def test_bad_settings_are_refused_by_name(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _versions(table, "a-0", T[:2])
    with pytest.raises(ConfigError, match="hoodie.cleaner.policy='KEEP_ALL'"):
        plan_clean(table, _conf(policy="KEEP_ALL"))
    with pytest.raises(ConfigError, match="hoodie.cleaner.commits.retained=0"):
        plan_clean(table, _conf(commits_retained="0"))


def test_after_a_restore_the_incremental_clean_logs_no_backwards_range_and_restore_logs_no_failed_write(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from engine.services.savepoint import create_savepoint, restore_to_savepoint

    table = _table(tmp_path)

    def written(instants: list[str]) -> list[str]:  # versions of a-0 whose commits name their file
        out = []
        for ts in instants:
            name = base_file_name("a-0", "0-0-0", ts)
            out.append(_touch(table, name))
            metadata = CommitMetadata(operation_type="UPSERT")
            metadata.add_write_stat("p=1", WriteStat(file_id="a-0", path=f"p=1/{name}", num_writes=1))
            commit(table, ts, metadata=metadata)
        return out

    paths = written(T[:5])
    create_savepoint(table.reload(), T[2])
    conf = _conf(commits_retained="2")
    results, _ = run_clean(table.reload(), conf)  # retains from T[3]; T[0], T[1] go (T[2] is savepointed)
    assert [r.earliest_commit_to_retain for r in results] == [T[3]]
    assert not os.path.exists(paths[0]) and os.path.exists(paths[2])
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="engine"):
        restore_to_savepoint(table.reload(), T[2])
    rollback_lines = [r for r in caplog.records if r.name == "engine.write.rollback"]
    assert not os.path.exists(paths[3]) and not os.path.exists(paths[4])
    assert len(rollback_lines) == 2 and all(r.levelno == logging.INFO for r in rollback_lines)
    assert all("rolled back completed commit" in r.getMessage() and f"to savepoint {T[2]}" in r.getMessage()
               for r in rollback_lines)
    # the message of a failed write's rollback ("rolled back failed <action> ...") is not a restore's
    assert not any("rolled back failed" in r.getMessage() for r in rollback_lines), [
        r.getMessage() for r in rollback_lines]
    # Now only T[0..2] remain: the earliest commit to retain (T[1]) is before the last clean's (T[3]).
    caplog.clear()
    # The clean module's own logger: the shell sets "engine.services" to INFO when a shell test ran in this process.
    with caplog.at_level(logging.DEBUG, logger="engine.services.clean"):
        plan = plan_clean(table.reload(), conf)
    assert plan.earliest_instant_to_retain is not None and plan.earliest_instant_to_retain.timestamp == T[1]
    assert plan.file_count == 0
    messages = [r.getMessage() for r in caplog.records if r.name == "engine.services.clean"]
    assert not any(f"[{T[3]}, {T[1]})" in m for m in messages), messages
    assert all(r.levelno < logging.INFO for r in caplog.records if r.name == "engine.services.clean")
    # New writes after the restore: once the earliest commit to retain passes the last clean's, the new
    # commits' versions are cleaned again (the range runs forwards).
    new_paths: list[str] = []
    for _ in range(4):
        new_paths += written([table.reload_timeline().new_instant_time()])
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="engine.services.clean"):
        planned = _planned(table.reload(), conf)
    # retains from new[2]: new[1] serves it, new[0] goes; the savepointed T[2] stays
    assert planned == [os.path.basename(new_paths[0])]
    assert any("incremental clean looks at 1 partition(s)" in r.getMessage() for r in caplog.records)
