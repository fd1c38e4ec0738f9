"""Optimistic concurrency control on the timeline (engine.concurrency + engine.write.commit): which concurrent
instants conflict with a commit, as Hudi 0.14's SimpleConcurrentFileWritesConflictResolutionStrategy and
BucketIndexConcurrentFileWritesConflictResolutionStrategy decide; the loser commits nothing; table services
under the lock. JVM-free: writers are start_write/finish_write with the write stats their tasks would return."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.errors import CommitConflict, ConcurrentWriteError, ConfigError
from engine.table import Table
from engine.timeline.avro_serde import serialize
from engine.timeline.commit_metadata import WriteStat
from engine.write.commit import finish_write, start_write
from engine.write.operation import WriteOperation
from engine.write.rollback import rollback_instant

SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t",
          "fields": [{"name": "id", "type": ["null", "int"], "default": None},
                     {"name": "ts", "type": ["null", "long"], "default": None}]}

OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


def make_table(tmp_path: Path, table_type: str = "COPY_ON_WRITE") -> Table:
    return Table.create(str(tmp_path / "trips"), {
        "hoodie.table.name": "trips", "hoodie.table.type": table_type, "hoodie.database.name": "default",
        "hoodie.table.recordkey.fields": "id", "hoodie.table.precombine.field": "ts",
        "hoodie.table.partition.fields": "city",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.table.create.schema": json.dumps(SCHEMA)})


def occ(**more: str) -> HoodieConfig:
    return HoodieConfig({**OCC, **more})


def stat(partition: str, file_id: str, instant: str) -> WriteStat:
    return WriteStat(file_id=file_id, path=f"{partition}/{file_id}_0-1-0_{instant}.parquet", partition_path=partition,
                     num_writes=1, num_inserts=1, total_write_bytes=1)


def write(table: Table, conf: HoodieConfig, *file_ids: str, partition: str = "sf") -> str:
    """One whole write touching ``file_ids`` (start to finish); returns its instant time."""
    instant = start_write(table, WriteOperation.UPSERT, conf)
    finish_write(table, instant, WriteOperation.UPSERT, [stat(partition, f, instant.timestamp) for f in file_ids],
                 SCHEMA, conf=conf)
    return instant.timestamp


def commits(table: Table) -> list[str]:
    return [i.timestamp for i in table.timeline.reload().completed_commits()]


def test_two_writers_on_different_file_groups_both_commit(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    a = start_write(table, WriteOperation.UPSERT, occ())
    b = start_write(Table.load(table.base_path), WriteOperation.UPSERT, occ())  # no ConcurrentWriteError
    finish_write(table, b, WriteOperation.UPSERT, [stat("sf", "fg-2", b.timestamp)], SCHEMA, conf=occ())
    finish_write(table, a, WriteOperation.UPSERT, [stat("sf", "fg-1", a.timestamp)], SCHEMA, conf=occ())
    assert commits(table) == sorted([a.timestamp, b.timestamp])


@pytest.mark.parametrize("order", ["later instant commits first", "earlier instant commits first"])
def test_the_second_to_commit_on_the_same_file_group_loses(tmp_path: Path, order: str) -> None:
    table = make_table(tmp_path)
    first, second = start_write(table, WriteOperation.UPSERT, occ()), start_write(table, WriteOperation.UPSERT, occ())
    winner, loser = (second, first) if order == "later instant commits first" else (first, second)
    finish_write(table, winner, WriteOperation.UPSERT, [stat("sf", "fg-1", winner.timestamp)], SCHEMA, conf=occ())
    with pytest.raises(CommitConflict) as caught:
        finish_write(table, loser, WriteOperation.UPSERT,
                     [stat("sf", "fg-1", loser.timestamp), stat("sf", "fg-9", loser.timestamp)], SCHEMA, conf=occ())
    message = str(caught.value)
    assert "\n" not in message
    assert f"table trips at {table.base_path}" in message
    assert f"commit {loser.timestamp}" in message and f"commit {winner.timestamp}" in message
    assert "sf/fg-1" in message and "fg-9" not in message
    assert "run the statement again" in message
    assert caught.value.retryable
    rollback_instant(table, loser)
    assert commits(table) == [winner.timestamp]
    assert not table.timeline.reload().pending()
    write(table, occ(), "fg-1")  # the retry commits


def test_a_commit_before_the_writer_started_is_no_conflict(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    done = write(table, occ(), "fg-1")
    later = write(table, occ(), "fg-1")
    assert commits(table) == [done, later]


def test_same_file_id_in_another_partition_is_no_conflict(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    a, b = start_write(table, WriteOperation.UPSERT, occ()), start_write(table, WriteOperation.UPSERT, occ())
    finish_write(table, a, WriteOperation.UPSERT, [stat("sf", "fg-1", a.timestamp)], SCHEMA, conf=occ())
    finish_write(table, b, WriteOperation.UPSERT, [stat("la", "fg-1", b.timestamp)], SCHEMA, conf=occ())
    assert len(commits(table)) == 2


def test_a_write_pending_at_start_that_completes_later_is_checked(tmp_path: Path) -> None:
    """Hudi's getCompletedInstantsDuringCurrentWriteOperation: an older instant completing after this writer
    started is a candidate although its time is before the last completed one."""
    table = make_table(tmp_path)
    old = start_write(table, WriteOperation.UPSERT, occ())
    newer = write(table, occ(), "fg-5")  # completes while `old` is still pending
    mine = start_write(table, WriteOperation.UPSERT, occ())  # starts with `old` pending, `newer` completed
    finish_write(table, old, WriteOperation.UPSERT, [stat("sf", "fg-1", old.timestamp)], SCHEMA, conf=occ())
    with pytest.raises(CommitConflict, match=f"commit {old.timestamp}"):
        finish_write(table, mine, WriteOperation.UPSERT, [stat("sf", "fg-1", mine.timestamp)], SCHEMA, conf=occ())
    rollback_instant(table, mine)
    assert commits(table) == sorted([old.timestamp, newer])


def schedule_compaction_plan(table: Table, file_id: str) -> str:
    """A pending compaction of ``file_id`` as a table service writes it."""
    instant = table.timeline.reload().new_instant_time()
    plan = {"operations": [{"baseInstantTime": "20200101000000000", "deltaFilePaths": [], "dataFilePath": None,
                            "fileId": file_id, "partitionPath": "sf", "metrics": {}, "bootstrapFilePath": None}],
            "extraMetadata": {}, "version": 2, "strategy": None, "preserveHoodieMetadata": True}
    table.timeline.create_requested(instant, "compaction", serialize("HoodieCompactionPlan", plan))
    return instant


def test_a_compaction_scheduled_after_the_writer_started_wins(tmp_path: Path) -> None:
    table = make_table(tmp_path, "MERGE_ON_READ")
    writer = start_write(table, WriteOperation.UPSERT, occ())
    compaction = schedule_compaction_plan(table, "fg-1")
    with pytest.raises(CommitConflict, match=f"compaction {compaction} \\(compact, requested\\)"):
        finish_write(table, writer, WriteOperation.UPSERT, [stat("sf", "fg-1", writer.timestamp)], SCHEMA,
                     conf=occ())
    rollback_instant(table, writer)


def test_a_compaction_scheduled_before_the_writer_started_is_resolved(tmp_path: Path) -> None:
    """The writer appended to the compaction's new file slice: Hudi resolveConflict lets it commit."""
    table = make_table(tmp_path, "MERGE_ON_READ")
    schedule_compaction_plan(table, "fg-1")
    writer = write(table, occ(), "fg-1")
    assert writer in commits(table)


def test_a_clustering_scheduled_after_the_writer_started_wins(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    writer = start_write(table, WriteOperation.UPSERT, occ())
    instant = table.timeline.reload().new_instant_time()
    plan = {"inputGroups": [{"slices": [{"dataFilePath": "sf/x.parquet", "deltaFilePaths": [], "fileId": "fg-1",
                                         "partitionPath": "sf", "bootstrapFilePath": "", "version": 1}],
                             "metrics": {}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}],
            "strategy": {"strategyClassName": "x", "strategyParams": {}, "version": 1},
            "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True}
    table.timeline.create_requested(instant, "replacecommit", serialize(
        "HoodieRequestedReplaceMetadata",
        {"operationType": "CLUSTER", "clusteringPlan": plan, "extraMetadata": {}, "version": 1}))
    with pytest.raises(CommitConflict, match=f"replacecommit {instant} \\(cluster, requested\\)"):
        finish_write(table, writer, WriteOperation.UPSERT, [stat("sf", "fg-1", writer.timestamp)], SCHEMA,
                     conf=occ())
    rollback_instant(table, writer)


def test_a_completed_replace_conflicts_through_its_replaced_file_groups(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    writer = start_write(table, WriteOperation.UPSERT, occ())
    overwrite = start_write(table, WriteOperation.INSERT_OVERWRITE, occ())
    finish_write(table, overwrite, WriteOperation.INSERT_OVERWRITE, [stat("sf", "fg-new", overwrite.timestamp)],
                 SCHEMA, replaced_file_ids={"sf": ["fg-1"]}, conf=occ())
    with pytest.raises(CommitConflict, match=f"replacecommit {overwrite.timestamp}"):
        finish_write(table, writer, WriteOperation.UPSERT, [stat("sf", "fg-1", writer.timestamp)], SCHEMA,
                     conf=occ())
    rollback_instant(table, writer)


def test_bucket_index_conflicts_on_the_bucket_not_the_file_id(tmp_path: Path) -> None:
    """Two writers each creating a new file group for bucket 3: different file ids, one bucket."""
    table = make_table(tmp_path)
    conf = occ(**{"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"})
    a, b = start_write(table, WriteOperation.UPSERT, conf), start_write(table, WriteOperation.UPSERT, conf)
    finish_write(table, a, WriteOperation.UPSERT, [stat("sf", "00000003-aaaa-0", a.timestamp)], SCHEMA, conf=conf)
    with pytest.raises(CommitConflict, match="same buckets .*sf/00000003"):
        finish_write(table, b, WriteOperation.UPSERT, [stat("sf", "00000003-bbbb-0", b.timestamp)], SCHEMA,
                     conf=conf)
    rollback_instant(table, b)
    simple = occ(**{"hoodie.write.lock.conflict.resolution.strategy":
                    "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy"})
    c, d = start_write(table, WriteOperation.UPSERT, simple), start_write(table, WriteOperation.UPSERT, simple)
    finish_write(table, c, WriteOperation.UPSERT, [stat("sf", "00000001-cccc-0", c.timestamp)], SCHEMA, conf=simple)
    finish_write(table, d, WriteOperation.UPSERT, [stat("sf", "00000001-dddd-0", d.timestamp)], SCHEMA, conf=simple)


def test_bad_occ_settings_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    with pytest.raises(ConfigError, match="hoodie.write.lock.conflict.resolution.strategy=com.acme.Mine"):
        start_write(table, WriteOperation.UPSERT, occ(**{"hoodie.write.lock.conflict.resolution.strategy":
                                                         "com.acme.Mine"}))
    with pytest.raises(ConfigError, match="hoodie.write.lock.provider"):
        start_write(table, WriteOperation.UPSERT, occ(**{"hoodie.write.lock.provider": "com.acme.Lock"}))
    with pytest.raises(ConfigError, match="non_blocking_concurrency_control is not supported"):
        start_write(table, WriteOperation.UPSERT,
                    HoodieConfig({"hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"}))
    with pytest.raises(ConfigError, match="hoodie.cleaner.policy.failed.writes=never is not supported"):
        start_write(table, WriteOperation.UPSERT, HoodieConfig({"hoodie.cleaner.policy.failed.writes": "NEVER"}))
    assert not list(table.timeline.reload())


def test_single_writer_mode_still_refuses_a_live_writer(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    occ_writer = start_write(table, WriteOperation.UPSERT, occ())
    with pytest.raises(ConcurrentWriteError, match="optimistic_concurrency_control"):
        start_write(table, WriteOperation.UPSERT)
    finish_write(table, occ_writer, WriteOperation.UPSERT, [], SCHEMA, conf=occ())


def test_occ_writers_do_not_roll_back_failed_writes_the_cleaner_does(tmp_path: Path) -> None:
    """LAZY failed-writes policy (forced by OCC, as Hudi): a writer leaves a dead instant; clean rolls it back."""
    from engine.services.clean import run_clean
    from engine.write.heartbeat import heartbeat_path
    table = make_table(tmp_path)
    dead = start_write(table, WriteOperation.UPSERT, occ())
    Path(heartbeat_path(table.storage, table.base_path, dead.timestamp)).unlink()  # its writer is gone
    write(table, occ(), "fg-1")
    assert dead.timestamp in [i.timestamp for i in table.timeline.reload().pending()]  # not rolled back
    run_clean(table.reload(), occ())
    timeline = table.timeline.reload()
    assert dead.timestamp not in [i.timestamp for i in timeline.pending()]
    assert [r for r in timeline.rollbacks() if r.is_completed]


def test_many_threads_commit_exactly_once_or_conflict(tmp_path: Path) -> None:
    """8 threads x 5 writes, each touching one of 3 file groups: every write commits or raises CommitConflict,
    nothing else; the timeline ends with exactly the committed ones and nothing pending."""
    table = make_table(tmp_path)
    outcomes: list[tuple[str, str]] = []
    guard = threading.Lock()

    def writer(n: int) -> None:
        for k in range(5):
            own = Table.load(table.base_path)
            try:
                instant = start_write(own, WriteOperation.UPSERT, occ())
                try:
                    finish_write(own, instant, WriteOperation.UPSERT,
                                 [stat("sf", f"fg-{(n + k) % 3}", instant.timestamp)], SCHEMA, conf=occ())
                    result = "committed"
                except CommitConflict:
                    rollback_instant(own, instant)
                    result = "conflict"
                outcome = (instant.timestamp, result)
            except Exception as exc:  # noqa: BLE001 - any other failure is what this test must not see
                outcome = (f"{n}-{k}", f"error: {exc!r}")
            with guard:
                outcomes.append(outcome)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    committed = sorted(ts for ts, r in outcomes if r == "committed")
    assert [o for o in outcomes if o[1].startswith("error")] == []
    assert len(outcomes) == 40
    assert committed == commits(table)
    assert len(set(ts for ts, _ in outcomes)) == 40  # every write had its own instant
    assert 1 <= len(committed) <= 40
    assert not [i for i in table.timeline.reload().pending() if i.action == "commit"]


def test_a_lock_that_cannot_be_released_after_the_commit_is_logged_and_the_commit_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The lock service gone between the completed instant and the release: raising would make the user retry a
    statement that committed (duplicate rows for an INSERT); the failure is logged, the commit stands."""
    import logging

    from engine.concurrency.locks import InProcessLockProvider
    from engine.errors import LockError

    table = make_table(tmp_path)
    real_unlock = InProcessLockProvider.unlock

    def unlock_then_fail(self: InProcessLockProvider) -> None:
        real_unlock(self)
        raise LockError("lock service unreachable while releasing")

    monkeypatch.setattr(InProcessLockProvider, "unlock", unlock_then_fail)
    with caplog.at_level(logging.ERROR):
        done = write(table, occ(), "fg-1")
    assert commits(table) == [done]
    assert any("could not be released cleanly" in r.getMessage() and done in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(InProcessLockProvider, "unlock", real_unlock)
    assert write(Table.load(table.base_path), occ(), "fg-2") > done  # the lock is usable again
