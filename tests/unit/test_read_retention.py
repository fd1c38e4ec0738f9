"""The readable window (engine.read.retention.readable_window): timeline and clean facts in, the earliest
readable instant out — Hudi TimelineUtils.validateTimestampAsOf plus the file-version, archive and savepoint
rules — without a table or Spark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.errors import TimeTravelError
from engine.read.planner import plan_query
from engine.read.retention import (
    CLEANER_MESSAGE,
    RETAINED_MESSAGE,
    Cause,
    CleanFacts,
    DeletedSlice,
    RetentionFacts,
    load_window,
    readable_window,
)
from engine.services.clean import run_clean, schedule_clean
from tests.unit.test_clean_planning import T, _conf, _table, _versions

C = [f"2024010100000{n}000" for n in range(1, 8)]  # seven completed commits, oldest first


def facts(**kwargs: object) -> RetentionFacts:
    kwargs.setdefault("completed_commits", tuple(C))
    return RetentionFacts("/t", **kwargs)  # type: ignore[arg-type]


def test_no_clean_no_archive_reads_everything() -> None:
    window = readable_window(facts())
    assert window.bound is None and window.earliest_readable is None
    window.check_as_of("000")
    window.check_changes("000", C[-1])


def test_earliest_commit_to_retain_of_the_last_clean() -> None:
    window = readable_window(facts(last_clean=CleanFacts("20240101000010000", C[3])))
    assert (window.bound, window.cause, window.earliest_readable) == (C[3], Cause.CLEANER, C[3])
    for ok in (C[3], C[4], "99991231000000000"):
        window.check_as_of(ok)
    with pytest.raises(TimeTravelError) as info:
        window.check_as_of(C[2])
    message = str(info.value)
    assert message.startswith(CLEANER_MESSAGE)
    assert f"the earliest instant that can still be read is {C[3]}" in message
    assert "/t" in message and "20240101000010000" in message
    # an instant between commits reads the commit before it: refused when that one is before the bound
    with pytest.raises(TimeTravelError):
        window.check_as_of(C[2][:-3] + "500")


def test_bound_between_commits_names_the_next_commit() -> None:
    window = readable_window(facts(last_clean=CleanFacts("20240101000010000", C[3][:-3] + "500")))
    assert window.earliest_readable == C[4]
    assert not window.readable_as_of(C[3])


def test_savepointed_instant_stays_readable() -> None:
    window = readable_window(facts(last_clean=CleanFacts("20240101000010000", C[4]), savepoints=frozenset({C[1]})))
    window.check_as_of(C[1])
    window.check_as_of(C[1][:-3] + "500")  # still reads the savepointed commit's slices
    with pytest.raises(TimeTravelError, match=f"savepointed instants stay readable: {C[1]}"):
        window.check_as_of(C[2])
    with pytest.raises(TimeTravelError):
        window.check_as_of(C[0])


def test_file_versions_clean_refuses_only_what_it_deleted() -> None:
    """KEEP_LATEST_FILE_VERSIONS records no earliest commit to retain: Hudi then only checks the active
    timeline's start; here the deleted slices also bound it, up to the next slice of their file group."""
    deleted = (DeletedSlice("p", "f1", C[0], C[5]), DeletedSlice("p", "f2", C[1], C[5]))
    remaining = {("p", "f1"): (C[2], C[4]), ("p", "f2"): (C[3],)}
    window = readable_window(facts(last_clean=CleanFacts("20240101000010000", ""), deleted_slices=deleted,
                                   remaining_slices=remaining))
    assert (window.bound, window.cause) == (C[3], Cause.FILE_VERSIONS)
    window.check_as_of(C[3])
    with pytest.raises(TimeTravelError) as info:
        window.check_as_of(C[2])
    assert str(info.value).startswith(RETAINED_MESSAGE.rstrip("."))
    assert f"the earliest instant that can still be read is {C[3]}" in str(info.value)
    # a file group with no slice left (replaced, then cleaned): bounded by the clean's last completed commit
    gone = readable_window(facts(last_clean=CleanFacts("20240101000010000", ""),
                                 deleted_slices=(DeletedSlice("p", "f3", C[0], C[4]),)))
    assert gone.bound == C[4]
    # nothing deleted: Hudi's rule alone, the first completed commit of the active timeline
    nothing = readable_window(facts(completed_commits=tuple(C[2:]), last_clean=CleanFacts("x", "")))
    assert (nothing.bound, nothing.cause) == (C[2], Cause.ARCHIVE)


def test_archived_timeline_bounds_reads_even_without_a_clean() -> None:
    window = readable_window(facts(completed_commits=tuple(C[3:]), archived=True))
    assert (window.bound, window.cause) == (C[3], Cause.ARCHIVE)
    with pytest.raises(TimeTravelError, match=re.escape(RETAINED_MESSAGE.rstrip("."))):
        window.check_as_of(C[1])
    # a savepoint kept at the start of the active timeline does not mark its start (getFirstNonSavepointCommit)
    saved = readable_window(facts(completed_commits=(C[0], *C[3:]), archived=True, savepoints=frozenset({C[0]})))
    assert saved.bound == C[3]
    saved.check_as_of(C[0])
    with pytest.raises(TimeTravelError):
        saved.check_as_of(C[1])
    # the clean's bound wins when it is later
    both = readable_window(facts(completed_commits=tuple(C[2:]), archived=True,
                                 last_clean=CleanFacts("x", C[4])))
    assert (both.bound, both.cause) == (C[4], Cause.CLEANER)


def test_incremental_end() -> None:
    window = readable_window(facts(last_clean=CleanFacts("x", C[3])))
    window.check_incremental_end(C[3], "fallback.key")
    with pytest.raises(TimeTravelError, match="fallback.key=true") as info:
        window.check_incremental_end(C[1], "fallback.key")
    assert f"the earliest instant that can still be read is {C[3]}" in str(info.value)


def test_changes() -> None:
    window = readable_window(facts(last_clean=CleanFacts("x", C[3])))
    window.check_changes(C[3], C[6])
    window.check_changes(C[2], C[6])  # the first change read is C[3]'s: retained
    with pytest.raises(TimeTravelError, match=f"changes of {C[2]} .*can still be read is {C[3]}"):
        window.check_changes(C[1], C[6])
    # file versions: the slice before the bound commit may be gone, so its own change is not rebuilt
    versions = readable_window(facts(last_clean=CleanFacts("x", ""), deleted_slices=(DeletedSlice("p", "f", C[1], C[6]),),
                                     remaining_slices={("p", "f"): (C[3],)}))
    assert versions.earliest_changes() == C[4]
    versions.check_changes(C[4], C[6])
    with pytest.raises(TimeTravelError):
        versions.check_changes(C[2], C[6])
    # archived instants after begin: their changes are gone
    archived = readable_window(facts(completed_commits=tuple(C[3:]), archived=True))
    archived.check_changes(C[3], C[6])
    with pytest.raises(TimeTravelError, match="archived instants after 000"):
        archived.check_changes("000", C[6])


def test_load_window_from_a_cleaned_and_archived_table(tmp_path: Path) -> None:
    """load_window reads what the cleans recorded: a KEEP_LATEST_FILE_VERSIONS clean (no earliest commit to
    retain) bounds time travel by the versions it deleted, where Hudi would read the emptied instant; files
    in the archived folder bound it by the active timeline's start."""
    table = _table(tmp_path)
    _versions(table, "a-0", T[:3])  # file group a-0: versions at T0, T1, T2
    b_paths = _versions(table, "b-0", [T[3]])
    results, _ = run_clean(table, _conf(policy="KEEP_LATEST_FILE_VERSIONS", fileversions_retained="1"), force=True)
    assert results and results[0].files_deleted == 2
    window = load_window(table.reload())
    assert (window.bound, window.cause) == (T[2], Cause.FILE_VERSIONS)
    options = HoodieConfig({"as.of.instant": T[1]})
    with pytest.raises(TimeTravelError, match=f"the earliest instant that can still be read is {T[2]}"):
        plan_query(table, options)
    planned = plan_query(table, HoodieConfig({"as.of.instant": T[2]}))
    assert [s.base_instant for s in planned.splits] == [T[2]]
    assert b_paths and load_window(table).earliest_changes() == T[3]
    archive = Path(table.archive_path)
    archive.mkdir(parents=True, exist_ok=True)
    (archive / ".commits_.archive.1_1-0-1").write_bytes(b"")
    assert load_window(table).archive_start == T[0]


def test_a_pending_clean_counts(tmp_path: Path) -> None:
    """A requested or inflight clean may have deleted files already: its plan's earliest instant to retain
    bounds reads before it completes (Hudi looks at completed cleans only)."""
    window = readable_window(facts(last_clean=CleanFacts("20240102000000000", C[2]),
                                   pending_clean=CleanFacts("20240103000000000", C[4])))
    assert (window.bound, window.clean_instant) == (C[4], "20240103000000000")
    table = _table(tmp_path)
    _versions(table, "a-0", T[:4])
    requested, _ = schedule_clean(table, _conf(commits_retained="2"))
    assert requested is not None
    loaded = load_window(table.reload())
    assert (loaded.bound, loaded.cause, loaded.clean_instant) == (T[2], Cause.CLEANER, requested.timestamp)
