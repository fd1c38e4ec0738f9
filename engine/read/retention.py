"""Which instants a read can still go back to after the cleaner and the archiver did their work (Hudi
``TimelineUtils.validateTimestampAsOf``, HUDI-6834).

A time-travel read (``TIMESTAMP AS OF`` / ``VERSION AS OF`` / ``as.of.instant``) reads the file slices that
were latest as of its instant. The cleaner deletes older slices, so such a read silently misses rows once its
instant falls out of what the cleaner kept. The rule, as Hudi applies it, with the last completed clean's
``HoodieCleanMetadata``:

* the clean recorded an ``earliestCommitToRetain`` E (``KEEP_LATEST_COMMITS``, ``KEEP_LATEST_BY_HOURS``): reads
  as of an instant before E are refused ("Cleaner cleaned up the timestamp of interest. ...");
* it recorded none (``KEEP_LATEST_FILE_VERSIONS``): Hudi refuses reads before the first completed write
  instant of the active timeline ("Please ensure sufficient commits are retained (uncleaned and un-archived)
  ..."). That alone lets a read whose slices the cleaner deleted return fewer rows, so here the deletes the
  cleans recorded (``successDeleteFiles``) also count: a deleted slice with base instant B of a file group
  whose next remaining slice starts at N makes reads in ``[B, N)`` unreadable, so the bound becomes the
  largest such N.

Where this differs from Hudi (deliberately): when the archived timeline holds instants, reads before the
first non-savepoint commit of the active timeline (Hudi ``getFirstNonSavepointCommit``) are refused even
without a clean — the file-system view cannot tell archived replacecommits or failed writes of that time
apart; a requested/inflight clean's plan counts like a completed clean (it may have deleted files already);
and a *savepointed* instant older than the bound stays readable (the cleaner keeps its files), where Hudi
0.15 refuses it too.

Incremental (``latest_state``) reads read the table as of their end instant: an end before the window is
refused (:meth:`ReadableWindow.check_incremental_end`; Hudi fails with ``HoodieIncrementalPathNotFoundException``
once the files are gone) unless ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` scans the latest
snapshot; an older begin with a retained end reads the latest state of the rows changed since, as Hudi does.
CDC reads rebuild every change of their range from the CDC logs and the slices before them, so a range with
a commit before the window is refused (:meth:`ReadableWindow.check_changes`).

:func:`readable_window` is pure (facts in, window out); :func:`load_window` gathers the facts from a table.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from engine.errors import CorruptFile, StorageError, TimeTravelError
from engine.filegroup.naming import parse_base_file_name, parse_log_file_name
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import CLEAN, Instant, State
from engine.timeline.lsm_archive import archived_range

__all__ = ["CleanFacts", "Cause", "DeletedSlice", "ReadableWindow", "RetentionFacts", "load_window",
           "readable_window"]

logger = logging.getLogger(__name__)

CLEANER_MESSAGE = ("Cleaner cleaned up the timestamp of interest. Please ensure sufficient commits are retained "
                   "with cleaner for Timestamp as of query to work")
"""Hudi's message when the time-travel instant is before the last clean's earliest commit to retain."""

RETAINED_MESSAGE = ("Please ensure sufficient commits are retained (uncleaned and un-archived) for timestamp as "
                    "of query to work.")
"""Hudi's message when the time-travel instant is before the active timeline (clean without a commit bound)."""


class Cause(Enum):
    """What set the earliest readable instant."""

    CLEANER = "the earliest commit to retain"
    FILE_VERSIONS = "the first instant after the file versions the cleaner deleted"
    ARCHIVE = "the start of the active timeline"


@dataclass(frozen=True)
class DeletedSlice:
    """A file slice (some of) whose files a clean deleted.

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        base_instant: the slice's base instant.
        clean_last_commit: the last completed commit when that clean was planned (the deleted slice was
            superseded by then; the bound used when the file group has no newer slice left).
    """

    partition_path: str
    file_id: str
    base_instant: str
    clean_last_commit: str


@dataclass(frozen=True)
class CleanFacts:
    """The last completed clean (Avro ``HoodieCleanMetadata``).

    Attributes:
        instant: the clean's instant time.
        earliest_commit_to_retain: its ``earliestCommitToRetain`` ("" when the policy sets none).
    """

    instant: str
    earliest_commit_to_retain: str


@dataclass(frozen=True)
class RetentionFacts:
    """What :func:`readable_window` decides from.

    Attributes:
        table: the table's base path (for messages).
        completed_commits: completed write instants of the active timeline, sorted.
        savepoints: completed savepoint instants.
        last_clean: the last completed clean, or None.
        pending_clean: the latest requested/inflight clean (its plan's ``earliestInstantToRetain``), or None: it
            may have deleted files already.
        archived: whether the archived timeline holds instants.
        deleted_slices: slices the active timeline's completed cleans deleted, and those a pending clean
            without an earliest commit to retain plans to delete (only looked at when that clean has none).
        remaining_slices: ``(partition, file id)`` → sorted base instants of the slices still on storage.
    """

    table: str
    completed_commits: tuple[str, ...]
    savepoints: frozenset[str] = frozenset()
    last_clean: CleanFacts | None = None
    pending_clean: CleanFacts | None = None
    archived: bool = False
    deleted_slices: tuple[DeletedSlice, ...] = ()
    remaining_slices: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadableWindow:
    """The instants a read may still go back to.

    Attributes:
        table: the table's base path.
        bound: reads as of an instant before it are refused (savepoints aside); None = no bound.
        cause: what set ``bound`` (None when there is none).
        clean_instant: the last completed clean, when it set the bound.
        completed_commits: completed write instants of the active timeline, sorted.
        savepoints: completed savepoint instants (readable even when older than ``bound``).
        archive_start: the first non-savepoint commit of the active timeline when older instants were archived
            (archival beyond a savepoint leaves holes before it), else None.
        archive_note: appended to refusals the archive causes (Hudi 1.x tables: the LSM archived timeline's
            folder and range, which this engine does not read), else ``""``.
    """

    table: str
    bound: str | None
    cause: Cause | None
    clean_instant: str | None
    completed_commits: tuple[str, ...]
    savepoints: frozenset[str]
    archive_start: str | None = None
    archive_note: str = ""

    @property
    def earliest_readable(self) -> str | None:
        """The earliest completed commit a read may go back to (the first at or after ``bound``), or None when
        nothing is refused."""
        if self.bound is None:
            return None
        at = bisect.bisect_left(self.completed_commits, self.bound)
        return self.completed_commits[at] if at < len(self.completed_commits) else self.bound

    def _governing_savepoint(self, as_of: str) -> str | None:
        """The savepoint whose files a read as of ``as_of`` reads (the latest commit at or before it is
        savepointed), or None."""
        at = bisect.bisect_right(self.completed_commits, as_of)
        latest = self.completed_commits[at - 1] if at else None
        if latest is None or latest not in self.savepoints:
            return None
        if self.archive_start is not None and latest < self.archive_start and as_of != latest:
            return None  # archived commits may lie between the savepoint and as_of
        return latest

    def readable_as_of(self, as_of: str) -> bool:
        """Whether a read as of ``as_of`` finds every file it needs."""
        if self.bound is None or self.bound <= as_of:
            return True
        return self._governing_savepoint(as_of) is not None

    def _detail(self, what: str) -> str:
        earliest = self.earliest_readable
        saved = sorted(s for s in self.savepoints if self.bound is not None and s < self.bound)
        where = f" of clean {self.clean_instant}" if self.clean_instant else ""
        text = (f"table {self.table}: {what} is before {self.bound} ({self.cause.value if self.cause else ''}"
                f"{where}); the earliest instant that can still be read is {earliest}")
        if saved:
            text += f" (savepointed instants stay readable: {', '.join(saved)})"
        if self.archive_note and self.cause is Cause.ARCHIVE:
            text += f"; {self.archive_note}"
        return text

    def check_as_of(self, as_of: str) -> None:
        """Refuse a time-travel read as of ``as_of`` whose files are gone.

        Raises:
            TimeTravelError: Hudi's message, then the table, the bound and the earliest readable instant.
        """
        if self.readable_as_of(as_of):
            return
        head = CLEANER_MESSAGE if self.cause is Cause.CLEANER else RETAINED_MESSAGE.rstrip(".")
        raise TimeTravelError(f"{head} ({self._detail(f'time travel as of {as_of}')})")

    def check_incremental_end(self, end: str, fallback_key: str) -> None:
        """Refuse an incremental (``latest_state``) read whose end instant is before the window: it reads the
        table as of ``end`` (Hudi fails with ``HoodieIncrementalPathNotFoundException`` once those files are
        deleted, unless ``fallback_key`` makes it scan the latest snapshot).

        Raises:
            TimeTravelError: naming the earliest readable instant and ``fallback_key``.
        """
        if self.readable_as_of(end):
            return
        raise TimeTravelError(
            f"Cleaner cleaned up the files of the incremental query's range: Path does not exist "
            f"({self._detail(f'end instant {end}')}); use a later range, or set {fallback_key}=true to read "
            "the latest snapshot's rows committed in the range")

    def earliest_changes(self) -> str | None:
        """The earliest completed commit whose changes a CDC read can still rebuild (its CDC log and the file
        slice before it kept), or None when nothing is refused."""
        earliest = self.earliest_readable
        if earliest is None or self.cause is not Cause.FILE_VERSIONS:
            return earliest
        # the slice before the bound instant may be the one deleted: its changes need the one after
        at = bisect.bisect_right(self.completed_commits, earliest)
        return self.completed_commits[at] if at < len(self.completed_commits) else earliest

    def check_changes(self, begin: str, end: str) -> None:
        """Refuse a CDC read of ``(begin, end]`` that needs changes of commits before the window.

        Raises:
            TimeTravelError: naming the earliest instant whose changes can still be read.
        """
        first = self.earliest_changes()
        if first is None or begin >= first:
            return
        needed = [c for c in self.completed_commits if begin < c <= end and c < first]
        if not needed and not (self.cause is Cause.ARCHIVE and self.completed_commits
                               and begin < self.completed_commits[0]):
            return
        lost = needed[0] if needed else f"archived instants after {begin}"
        raise TimeTravelError(
            f"Cleaner cleaned up the files of the CDC query's range (table {self.table}: the changes of {lost} "
            f"are before {self.bound} ({self.cause.value if self.cause else ''}); the earliest instant whose "
            f"changes can still be read is {first}: use it as the begin instant or later")


def _file_version_bound(facts: RetentionFacts) -> str | None:
    """The largest instant from which no deleted slice is needed any more (see the module docstring)."""
    bound: str | None = None
    for deleted in facts.deleted_slices:
        remaining = facts.remaining_slices.get((deleted.partition_path, deleted.file_id), ())
        at = bisect.bisect_right(remaining, deleted.base_instant)
        needed_until = remaining[at] if at < len(remaining) else deleted.clean_last_commit
        if needed_until and (bound is None or needed_until > bound):
            bound = needed_until
    return bound


def readable_window(facts: RetentionFacts) -> ReadableWindow:
    """The readable window of a table from its retention facts (pure; rules in the module docstring)."""
    bound: str | None = None
    cause: Cause | None = None
    clean_instant: str | None = None

    def raise_to(candidate: str | None, why: Cause, clean: str | None = None) -> None:
        nonlocal bound, cause, clean_instant
        if candidate and (bound is None or candidate > bound):
            bound, cause, clean_instant = candidate, why, clean

    active = facts.completed_commits
    first_non_savepoint = next((c for c in active if c not in facts.savepoints), None)
    cleans = [c for c in (facts.last_clean, facts.pending_clean) if c is not None]
    for clean in cleans:
        raise_to(clean.earliest_commit_to_retain, Cause.CLEANER, clean.instant)
    if any(not c.earliest_commit_to_retain for c in cleans):
        if facts.last_clean is not None and not facts.last_clean.earliest_commit_to_retain:
            raise_to(active[0] if active else None, Cause.ARCHIVE)  # Hudi's rule for such a clean
        raise_to(_file_version_bound(facts), Cause.FILE_VERSIONS)
    if facts.archived:
        raise_to(first_non_savepoint, Cause.ARCHIVE)
    return ReadableWindow(facts.table, bound, cause, clean_instant, active,
                          facts.savepoints, first_non_savepoint if facts.archived else None)


def _slice_of(partition: str, file_name: str, last_commit: str) -> DeletedSlice | None:
    name = file_name.rsplit("/", 1)[-1]
    base = parse_base_file_name(name)
    if base is not None:
        return DeletedSlice(partition, base[0], base[2], last_commit)
    log = parse_log_file_name(name)
    return None if log is None else DeletedSlice(partition, log.file_id, log.base_instant, last_commit)


def _deleted_slices(partitions: Mapping[str, Any], last_commit: str) -> Iterator[DeletedSlice]:
    """Slices of the files a ``HoodieCleanMetadata`` records as deleted."""
    for partition, meta in partitions.items():
        if isinstance(meta, Mapping):
            for name in meta.get("successDeleteFiles") or []:
                found = _slice_of(str(meta.get("partitionPath") or partition), str(name), last_commit)
                if found is not None:
                    yield found


def _planned_slices(plan: Mapping[str, Any], last_commit: str) -> Iterator[DeletedSlice]:
    """Slices of the files a ``HoodieCleanerPlan`` deletes."""
    for partition, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
        for info in infos or []:
            found = _slice_of(str(partition), str(info.get("filePath") or ""), last_commit)
            if found is not None:
                yield found
    for partition, paths in (plan.get("filesToBeDeletedPerPartition") or {}).items():
        for path in paths or []:
            found = _slice_of(str(partition), str(path), last_commit)
            if found is not None:
                yield found


def _archived(table: Table) -> bool:
    try:
        return table.has_archived_instants()
    except (StorageError, CorruptFile) as exc:
        logger.warning("cannot list the archived timeline of %s: %s", table.base_path, exc)
        return True  # unknown: assume instants were archived (the safe side)


def load_window(table: Table) -> ReadableWindow:
    """The readable window of ``table``: reads the completed cleans' metadata (all of them only when the last
    one recorded no earliest commit to retain, plus a listing of the table then), lists the archived timeline.

    Raises:
        CorruptFile: the last completed clean's metadata cannot be read.
    """
    timeline = table.timeline
    completed = tuple(i.timestamp for i in timeline.completed_commits())
    savepoints = frozenset(i.timestamp for i in timeline.savepoints())
    cleans = [i for i in timeline.cleans() if i.state is State.COMPLETED]
    last_clean: CleanFacts | None = None
    deleted: list[DeletedSlice] = []
    remaining: dict[tuple[str, str], tuple[str, ...]] = {}
    pending = [i for i in timeline.cleans() if i.state is not State.COMPLETED]
    pending_clean: CleanFacts | None = None
    if pending:
        requested = Instant(pending[-1].timestamp, CLEAN, State.REQUESTED)
        plan = deserialize(timeline.read_details(requested), "HoodieCleanerPlan", source=requested.file_name)
        retain = plan.get("earliestInstantToRetain") or {}
        pending_clean = CleanFacts(pending[-1].timestamp, str(retain.get("timestamp") or ""))
        if not pending_clean.earliest_commit_to_retain:
            deleted.extend(_planned_slices(plan, str(plan.get("lastCompletedCommitTimestamp") or "")))
    if cleans:
        metadata = [deserialize(timeline.read_details(cleans[-1]), "HoodieCleanMetadata",
                                source=cleans[-1].file_name)]
        last_clean = CleanFacts(cleans[-1].timestamp, str(metadata[0].get("earliestCommitToRetain") or ""))
        if not last_clean.earliest_commit_to_retain:
            for instant in cleans[:-1]:
                try:
                    metadata.append(deserialize(timeline.read_details(instant), "HoodieCleanMetadata",
                                                source=instant.file_name))
                except (CorruptFile, StorageError) as exc:
                    raise CorruptFile(f"cannot read clean {instant.file_name} of {table.base_path} to tell "
                                      f"which file versions it deleted: {exc}") from exc
            for record in metadata:
                deleted.extend(_deleted_slices(record.get("partitionMetadata") or {},
                                               str(record.get("lastCompletedCommitTimestamp") or "")))
    if deleted:
        for group in table.file_system_view().all_file_groups(include_replaced=True):
            remaining[(group.partition_path, group.file_id)] = tuple(s.base_instant for s in group.slices)
    archived = _archived(table)
    facts = RetentionFacts(table.base_path, completed, savepoints, last_clean, pending_clean, archived,
                           tuple(deleted), remaining)
    window = readable_window(facts)
    if archived and table.is_hudi_1x:
        window = replace(window, archive_note=_lsm_note(table))
    return window


def _lsm_note(table: Table) -> str:
    """What a refusal says about the LSM archived timeline of a Hudi 1.x table."""
    try:
        span = archived_range(table.storage, table.archive_path)
    except (StorageError, CorruptFile) as exc:
        return f"the archived timeline {table.archive_path} cannot be read ({exc})"
    held = f" holds instants {span}" if span is not None else ""
    return (f"the LSM archived timeline {table.archive_path}{held}; this engine does not read archived instants "
            "of Hudi 1.x tables")
