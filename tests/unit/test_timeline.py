"""engine.timeline.instant / active: instant names, instant times, loading and writing the timeline."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.errors import TimelineError
from engine.storage import Storage
from engine.timeline import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    ActiveTimeline,
    Instant,
    State,
    new_instant_time,
)
from engine.timeline.instant import parse_instant_time, sort_instants
from tests.conftest import HUDI_FIXTURE_NAMES

T = "20240418172804498"
R, INF, C = State.REQUESTED, State.INFLIGHT, State.COMPLETED

NAMES = [
    (f"{T}.commit.requested", Instant(T, COMMIT, R)),
    (f"{T}.inflight", Instant(T, COMMIT, INF)),
    (f"{T}.commit", Instant(T, COMMIT, C)),
    (f"{T}.deltacommit.requested", Instant(T, DELTA_COMMIT, R)),
    (f"{T}.deltacommit.inflight", Instant(T, DELTA_COMMIT, INF)),
    (f"{T}.deltacommit", Instant(T, DELTA_COMMIT, C)),
    (f"{T}.replacecommit.requested", Instant(T, REPLACE_COMMIT, R)),
    (f"{T}.replacecommit.inflight", Instant(T, REPLACE_COMMIT, INF)),
    (f"{T}.replacecommit", Instant(T, REPLACE_COMMIT, C)),
    (f"{T}.compaction.requested", Instant(T, COMPACTION, R)),
    (f"{T}.compaction.inflight", Instant(T, COMPACTION, INF)),
    (f"{T}.logcompaction.requested", Instant(T, LOG_COMPACTION, R)),
    (f"{T}.logcompaction.inflight", Instant(T, LOG_COMPACTION, INF)),
    (f"{T}.clean.requested", Instant(T, CLEAN, R)),
    (f"{T}.clean.inflight", Instant(T, CLEAN, INF)),
    (f"{T}.clean", Instant(T, CLEAN, C)),
    (f"{T}.rollback.requested", Instant(T, ROLLBACK, R)),
    (f"{T}.rollback.inflight", Instant(T, ROLLBACK, INF)),
    (f"{T}.rollback", Instant(T, ROLLBACK, C)),
    (f"{T}.savepoint.inflight", Instant(T, SAVEPOINT, INF)),
    (f"{T}.savepoint", Instant(T, SAVEPOINT, C)),
    ("20240418172804.commit", Instant("20240418172804", COMMIT, C)),
]


@pytest.mark.parametrize(("name", "instant"), NAMES)
def test_parse_and_file_name(name: str, instant: Instant) -> None:
    assert Instant.parse(name) == instant
    assert instant.file_name == name


@pytest.mark.parametrize("name", [
    "hoodie.properties", "hoodie.properties.backup", ".20240418172804498.commit.abc.tmp",
    f"{T}.compaction", f"{T}.logcompaction", f"{T}.commit.inflight", f"{T}.savepoint.requested",
    f"{T}.unknownaction", "archived", ".aux", f"{T}.commit.requested.crc", f"x{T}.commit",
])
def test_parse_rejects_non_instants(name: str) -> None:
    assert Instant.parse(name) is None


def test_completed_compaction_is_a_commit() -> None:
    pending = Instant(T, COMPACTION, INF)
    assert pending.with_state(C) == Instant(T, COMMIT, C)
    assert Instant(T, COMPACTION, C).file_name == f"{T}.commit"
    assert Instant(T, LOG_COMPACTION, C).file_name == f"{T}.deltacommit"
    with pytest.raises(TimelineError, match="savepoint"):
        _ = Instant(T, SAVEPOINT, R).file_name


def test_java_sort_order() -> None:
    instants = [Instant("2", COMMIT, C), Instant("1", CLEAN, C), Instant("1", COMMIT, INF), Instant("1", COMMIT, R)]
    assert sort_instants(instants) == [Instant("1", CLEAN, C), Instant("1", COMMIT, R), Instant("1", COMMIT, INF),
                                       Instant("2", COMMIT, C)]
    assert sorted(instants)[0] == Instant("1", CLEAN, C)  # dataclass ordering works with State
    assert R < INF < C


def test_new_instant_time_format_and_monotonic() -> None:
    now = dt.datetime(2024, 4, 18, 17, 28, 4, 498_765, tzinfo=dt.UTC)
    assert new_instant_time(now=now) == "20240418172804498"
    assert len(new_instant_time()) == 17
    # strictly greater than everything already present, even instants "from the future"
    assert new_instant_time(["20240418172804498"], now=now) == "20240418172804499"
    assert new_instant_time(["20991231235959999"], now=now) == "21000101000000000"
    assert new_instant_time(["20240418172804"], now=now) == "20240418172804498"  # 14-digit legacy
    # a non-UTC clock is converted to UTC
    local = now.astimezone(dt.timezone(dt.timedelta(hours=-5)))
    assert new_instant_time(now=local) == "20240418172804498"
    assert parse_instant_time("20240418172804498") == dt.datetime(2024, 4, 18, 17, 28, 4, 498_000, tzinfo=dt.UTC)
    with pytest.raises(TimelineError):
        parse_instant_time("2024")


def test_a_timeline_ahead_of_the_clock_does_not_move_other_tables_instant_times() -> None:
    """Within a process times only go up (two threads never share one), but a table whose instants lie in the
    future bumps only its own next time: the next table's times follow the clock again."""
    future = new_instant_time(["21000101000000000"])
    assert future == "21000101000000001"
    ordinary = new_instant_time()
    assert ordinary < "21000101000000000"
    assert new_instant_time() > ordinary


@pytest.mark.parametrize("name", HUDI_FIXTURE_NAMES)
def test_load_fixture_timelines(hudi_fixture: Callable[..., str], name: str) -> None:
    base = hudi_fixture(name)
    meta = os.path.join(base, ".hoodie")
    timeline = ActiveTimeline(Storage.for_uri(base), meta)
    files = [f for f in os.listdir(meta) if os.path.isfile(os.path.join(meta, f))]
    parsed = [Instant.parse(f) for f in files]
    assert all(p is not None for p in parsed if p is not None)
    expected_times = sorted({p.timestamp for p in parsed if p is not None})
    assert timeline.all_instant_times() == expected_times
    # one entry per (time, action), in its highest state; all fixture instants are completed
    assert [i.timestamp for i in timeline.instants] == expected_times
    assert all(i.is_completed for i in timeline.instants)
    assert timeline.pending() == []
    if "empty" in name:
        assert timeline.last_completed_commit() is None
        return
    last = timeline.last_completed_commit()
    assert last is not None and last.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
    assert timeline.read_details(last).lstrip().startswith(b"{")
    for instant in timeline.completed_commits():
        assert timeline.contains_or_before_start(instant.timestamp)
    assert not timeline.contains_or_before_start("99990101000000000")


def test_rollback_fixture_timeline(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned_rollback")
    timeline = ActiveTimeline(Storage.for_uri(base), os.path.join(base, ".hoodie"))
    assert [(i.timestamp, i.action) for i in timeline.instants] == [
        ("20250126040823628", DELTA_COMMIT), ("20250126040936578", ROLLBACK), ("20250126060846931", DELTA_COMMIT)]
    assert [i.timestamp for i in timeline.completed_commits()] == ["20250126040823628", "20250126060846931"]
    assert [i.timestamp for i in timeline.rollbacks()] == ["20250126040936578"]
    assert timeline.read_details(Instant("20250126040936578", ROLLBACK, INF)) == b""
    # the rolled-back deltacommit left no instant file: it is before nothing and not visible
    assert not timeline.contains_or_before_start("20250126040826878")
    assert timeline.contains_or_before_start("20250101000000000")  # older than the first commit: archived


@pytest.fixture()
def timeline(tmp_path: Path) -> ActiveTimeline:
    meta = tmp_path / ".hoodie"
    meta.mkdir()
    (meta / "hoodie.properties").write_text("hoodie.table.name=t\n")
    return ActiveTimeline(Storage.for_uri(str(tmp_path)), str(meta))


def test_write_protocol_commit(timeline: ActiveTimeline) -> None:
    ts = new_instant_time()
    requested = timeline.create_requested(ts, COMMIT)
    assert requested == Instant(ts, COMMIT, R)
    assert timeline.instants == [requested]
    assert timeline.pending_commits() == [requested]
    inflight = timeline.transition_to_inflight(requested, b'{"w": 1}')
    assert inflight.file_name == f"{ts}.inflight"
    assert timeline.instants == [inflight]
    done = timeline.complete(inflight, b'{"done": true}')
    assert done == Instant(ts, COMMIT, C)
    assert timeline.read_details(done) == b'{"done": true}'
    assert timeline.read_details(inflight) == b'{"w": 1}'
    assert timeline.read_details(requested) == b""
    assert timeline.last_completed_commit() == done
    assert sorted(os.listdir(timeline.meta_path)) == sorted(
        ["hoodie.properties", f"{ts}.commit.requested", f"{ts}.inflight", f"{ts}.commit"])
    # a second timeline object sees the same state
    assert ActiveTimeline(timeline.storage, timeline.meta_path).instants == [done]


def test_write_protocol_errors(timeline: ActiveTimeline) -> None:
    ts = new_instant_time()
    requested = timeline.create_requested(ts, DELTA_COMMIT)
    with pytest.raises(TimelineError, match=ts):
        timeline.create_requested(ts, COMMIT)
    with pytest.raises(TimelineError, match="not inflight"):
        timeline.complete(requested, b"{}")
    inflight = timeline.transition_to_inflight(requested)
    with pytest.raises(TimelineError, match="not requested"):
        timeline.transition_to_inflight(inflight)
    with pytest.raises(TimelineError, match="already exists"):
        timeline.transition_to_inflight(requested)
    timeline.complete(inflight, b"{}")
    with pytest.raises(TimelineError, match="already exists"):
        timeline.complete(inflight, b"{}")
    with pytest.raises(TimelineError, match="does not exist"):
        timeline.transition_to_inflight(Instant("20000101000000000", COMMIT, R))
    with pytest.raises(TimelineError, match="no file"):
        timeline.read_details(Instant("20000101000000000", COMMIT, C))


def test_compaction_collapses_into_commit(timeline: ActiveTimeline) -> None:
    ts = new_instant_time()
    requested = timeline.create_requested(ts, COMPACTION, b"plan")
    assert timeline.pending_compactions() == [requested]
    assert timeline.visible_commit_times() == [ts]  # pending compaction is "visible" for file slicing
    inflight = timeline.transition_to_inflight(requested)
    assert inflight.file_name == f"{ts}.compaction.inflight"
    done = timeline.complete(inflight, b"{}")
    assert done == Instant(ts, COMMIT, C)
    assert timeline.instants == [done]
    assert timeline.pending_compactions() == []
    assert [i.file_name for i in timeline.instant_files(ts)] == [
        f"{ts}.compaction.requested", f"{ts}.compaction.inflight", f"{ts}.commit"]


def test_delete_instant_files_and_revert(timeline: ActiveTimeline) -> None:
    first = new_instant_time()
    inflight = timeline.transition_to_inflight(timeline.create_requested(first, COMMIT), b"{}")
    timeline.complete(inflight, b"{}")
    second = new_instant_time(timeline.all_instant_times())
    pending = timeline.transition_to_inflight(timeline.create_requested(second, COMPACTION))
    assert timeline.revert_to_requested(pending) == Instant(second, COMPACTION, R)
    assert timeline.find(second) == [Instant(second, COMPACTION, R)]
    timeline.delete_instant_files(first, COMMIT)
    timeline.delete_instant_files(second, COMPACTION)
    timeline.delete_instant_files(second, COMPACTION)  # idempotent
    assert timeline.instants == []
    assert os.listdir(timeline.meta_path) == ["hoodie.properties"]


def test_savepoint_starts_inflight(timeline: ActiveTimeline) -> None:
    ts = new_instant_time()
    with pytest.raises(TimelineError):
        timeline.create_requested(ts, SAVEPOINT)
    inflight = timeline.create_inflight(ts, SAVEPOINT)
    assert timeline.complete(inflight, b"avro").file_name == f"{ts}.savepoint"
    assert timeline.savepoints() == [Instant(ts, SAVEPOINT, C)]


def test_instant_times_consider_every_state(timeline: ActiveTimeline) -> None:
    future = "20991231235959999"
    timeline.create_requested(future, CLEAN)
    assert new_instant_time(timeline.all_instant_times()) > future
    # another process added an instant since: the timeline's own generator re-lists first
    with open(os.path.join(timeline.meta_path, "21000101000000000.commit.requested"), "wb"):
        pass
    assert timeline.new_instant_time() == "21000101000000001"


def test_contains_or_before_start_ignores_failed_early_writes(timeline: ActiveTimeline) -> None:
    failed = "20240101000000000"
    timeline.create_requested(failed, COMMIT)
    ok = "20240102000000000"
    timeline.complete(timeline.transition_to_inflight(timeline.create_requested(ok, COMMIT)), b"{}")
    assert timeline.contains_or_before_start(ok)
    assert not timeline.contains_or_before_start(failed)  # pending, although older than the first commit
    assert timeline.contains_or_before_start("20231231000000000")  # archived
