"""Timeline archival (Hudi HoodieTimelineArchiver, TestHoodieTimelineArchiver): how many instants go, what is
never archived, and the archive file Hudi's readers expect."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.filegroup.naming import base_file_name
from engine.filegroup.partition_metadata import write_partition_metadata
from engine.services.archive import (
    MERGE_PLAN_NAME,
    archive,
    instants_to_archive,
    read_archived,
    recover_archive_merge,
)
from engine.table import Table
from engine.timeline import COMMIT, REPLACE_COMMIT, CommitMetadata, WriteStat, avro_serde
from engine.timeline.instant import SAVEPOINT
from tests.unit.synthetic_timeline import commit

T = [f"202401{d:02d}{h:02d}0000000" for d in range(1, 4) for h in range(0, 24)][:60]


def _table(tmp_path: Path) -> Table:
    table = Table.create(str(tmp_path / "t"), {
        "hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "p",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"})
    write_partition_metadata(table.storage, table.base_path, "p=1", T[0])
    return table


def _commits(table: Table, instants: list[str]) -> None:
    for ts in instants:
        metadata = CommitMetadata(operation_type="UPSERT")
        metadata.add_write_stat("p=1", WriteStat(file_id="a-0", path=f"p=1/{base_file_name('a-0', '0-0-0', ts)}",
                                                 num_writes=1, num_inserts=1))
        commit(table, ts, metadata=metadata)


def _conf(low: int = 4, high: int = 6, **extra: str) -> HoodieConfig:
    return HoodieConfig({"hoodie.keep.min.commits": str(low), "hoodie.keep.max.commits": str(high),
                         "hoodie.cleaner.commits.retained": "2", **extra})


def test_archives_down_to_the_minimum_once_over_the_maximum(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _commits(table, T[:6])
    assert archive(table, _conf()).instants == ()  # 6 commits: not more than keep.max
    _commits(table, T[6:7])
    result = archive(table, _conf())
    assert [ts for ts, _ in result.instants] == T[:3]
    assert [i.timestamp for i in table.reload_timeline().completed_commits()] == T[3:7]
    assert os.path.basename(result.archive_file) == ".commits_.archive.1_1-0-1"
    entries = read_archived(table)
    assert [(e["commitTime"], e["actionType"], e["actionState"]) for e in entries] == [
        (ts, "commit", state) for ts in T[:3] for state in ("REQUESTED", "INFLIGHT", "COMPLETED")]
    completed = [e for e in entries if e["actionState"] == "COMPLETED"]
    stats = completed[0]["hoodieCommitMetadata"]["partitionToWriteStats"]["p=1"]
    assert stats[0]["fileId"] == "a-0" and stats[0]["numInserts"] == 1
    assert completed[0]["hoodieCommitMetadata"]["operationType"] == "UPSERT"
    # A second run writes the next archive version.
    _commits(table, T[7:10])
    assert os.path.basename(archive(table, _conf()).archive_file) == ".commits_.archive.2_1-0-1"


def test_never_past_a_pending_write_or_a_savepoint(tmp_path: Path) -> None:
    table = _table(tmp_path)
    _commits(table, T[:2])
    commit(table, T[2], complete=False)
    _commits(table, T[3:10])
    chosen, _ = instants_to_archive(table, _conf())
    assert [i.timestamp for i in chosen] == T[:2]
    table = _table(tmp_path / "sp")
    _commits(table, T[:10])
    saved = {"savepointedBy": "", "savepointedAt": 0, "comments": "", "partitionMetadata": {}, "version": 1}
    timeline = table.reload_timeline()
    timeline.complete(timeline.create_inflight(T[1], SAVEPOINT), avro_serde.serialize("HoodieSavepointMetadata", saved))
    assert [i.timestamp for i in instants_to_archive(table.reload(), _conf())[0]] == T[:1]
    beyond = instants_to_archive(table, _conf(**{"hoodie.archive.beyond.savepoint": "true"}))[0]
    assert [i.timestamp for i in beyond] == [T[0], T[2], T[3], T[4], T[5]]


def test_a_replacecommit_whose_replaced_files_remain_is_kept(tmp_path: Path) -> None:
    table = _table(tmp_path)
    old = os.path.join(table.base_path, "p=1", base_file_name("old-0", "0-0-0", T[0]))
    with open(old, "wb") as handle:
        handle.write(b"x")
    _commits(table, T[:1])
    commit(table, T[1], REPLACE_COMMIT, metadata=CommitMetadata(
        operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p=1": ["old-0"]}))
    _commits(table, T[2:10])
    assert [i.timestamp for i in instants_to_archive(table, _conf())[0]] == T[:1]
    os.remove(old)  # the cleaner removed the replaced file group
    assert [i.timestamp for i in instants_to_archive(table, _conf())[0]] == T[:6]


def test_settings_hudi_refuses(tmp_path: Path) -> None:
    table = _table(tmp_path)
    with pytest.raises(ConfigError, match="Increase hoodie.keep.min.commits=2 to be greater than "
                                          "hoodie.cleaner.commits.retained=2"):
        archive(table, _conf(low=2, high=6))
    with pytest.raises(ConfigError, match="hoodie.keep.max.commits=4"):
        archive(table, _conf(low=4, high=4))
    assert COMMIT == "commit"


def _archive_names(table: Table) -> list[str]:
    return sorted(n for n in os.listdir(table.archive_path) if n.startswith(".commits_"))


def test_small_archive_files_are_merged_in_order(tmp_path: Path) -> None:
    table = _table(tmp_path)
    merge = {"hoodie.archive.merge.enable": "true", "hoodie.archive.merge.files.batch.size": "3"}
    _commits(table, T[:7])
    archive(table, _conf(**merge))  # archive file 1
    _commits(table, T[7:10])
    archive(table, _conf(**merge))  # file 2: two small files, fewer than the batch size
    assert _archive_names(table) == [".commits_.archive.1_1-0-1", ".commits_.archive.2_1-0-1"]
    before = read_archived(table)
    _commits(table, T[10:13])
    archive(table, _conf(**merge))  # file 3, then 1-3 are merged into 4
    assert _archive_names(table) == [".commits_.archive.4_1-0-1"]
    merged = read_archived(table)
    assert merged[:len(before)] == before
    assert [e["commitTime"] for e in merged if e["actionState"] == "COMPLETED"] == T[:9]
    assert not os.path.exists(os.path.join(table.archive_path, MERGE_PLAN_NAME))
    # A file over the small-file limit stops the run of candidates: nothing older is merged.
    _commits(table, T[13:16])
    archive(table, _conf(**merge, **{"hoodie.archive.merge.small.file.limit.bytes": "1"}))
    assert _archive_names(table) == [".commits_.archive.4_1-0-1", ".commits_.archive.5_1-0-1"]


def test_an_interrupted_merge_is_undone_or_finished(tmp_path: Path) -> None:
    table = _table(tmp_path)
    merge = {"hoodie.archive.merge.enable": "true", "hoodie.archive.merge.files.batch.size": "100"}
    for start in (0, 7, 10):
        _commits(table, T[start:start + (7 if start == 0 else 3)])
        archive(table, _conf(**merge))
    files = _archive_names(table)
    assert len(files) == 3
    entries = read_archived(table)
    candidates = [os.path.join(table.archive_path, n) for n in files]

    def plan(merged: str) -> None:
        content = avro_serde.serialize("HoodieMergeArchiveFilePlan",
                                       {"version": 1, "candidate": candidates, "mergedArchiveFileName": merged})
        with open(os.path.join(table.archive_path, MERGE_PLAN_NAME), "wb") as handle:
            handle.write(content)

    # Stopped while writing the merged file: every candidate is there, the partial file goes.
    plan(".commits_.archive.4_1-0-1")
    with open(os.path.join(table.archive_path, ".commits_.archive.4_1-0-1"), "wb") as handle:
        handle.write(b"#HUDI#partial")
    recover_archive_merge(table)
    assert _archive_names(table) == files and read_archived(table) == entries
    assert not os.path.exists(os.path.join(table.archive_path, MERGE_PLAN_NAME))
    # Stopped while deleting the candidates: the merged file is complete, the rest of the candidates go.
    merged_path = os.path.join(table.archive_path, ".commits_.archive.4_1-0-1")
    shutil.copy(candidates[0], merged_path)  # stands for the merged file
    plan(".commits_.archive.4_1-0-1")
    os.remove(candidates[0])
    recover_archive_merge(table)
    assert _archive_names(table) == [".commits_.archive.4_1-0-1"]
