"""The active timeline in ``<base>/.hoodie`` (Hudi ``HoodieActiveTimeline``, timeline layout 1).

Loading lists ``.hoodie`` once, parses every instant file name (:meth:`Instant.parse`) and keeps, per
(timestamp, comparable action), the instant in its highest state — exactly what Java's
``TimelineLayoutV1.filterHoodieInstants`` does. A pending compaction ``T.compaction.requested`` and its
completion ``T.commit`` therefore collapse into one completed ``commit`` instant.

Writes follow the layout-1 protocol: each state transition *creates* the next state's file (requested →
inflight → completed) and never renames an existing one. The completed file is written atomically
(temporary file + rename, :meth:`Storage.write_atomic`) so readers never see a half-written commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

from engine.errors import StorageError, TimelineError, UnsupportedTable
from engine.storage import Storage
from engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    COMPLETED_ACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
    comparable_action,
    new_instant_time,
    sort_instants,
)
from engine.timeline.layout import LAYOUT_V1, TimelineLayout

LOG = logging.getLogger(__name__)

#: Actions of the commits timeline (Hudi ``getWriteTimeline``: data-changing instants).
COMMIT_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION})


class ActiveTimeline:
    """Instants of ``<base>/.hoodie`` (Hudi ``HoodieActiveTimeline`` + ``HoodieDefaultTimeline`` filters).

    Args:
        storage: storage that can reach ``meta_path``.
        meta_path: the table's ``.hoodie`` directory.
        before_change: called before every write method changes the timeline (may raise to prevent the
            change); :class:`engine.table.Table` uses it to delete a metadata table first
            (:mod:`engine.metadata.disable`) and to refuse changes to Hudi 1.x tables.
        layout: the timeline layout (:mod:`engine.timeline.layout`): layout 1 (default, table version 6) lists
            ``.hoodie``; layout 2 (Hudi 1.x) lists ``.hoodie/timeline`` and gives completed instants their
            completion times (:attr:`Instant.completion_time`).

    Attributes:
        instants: sorted list of the latest state per (timestamp, comparable action) — the timeline as
            Hudi sees it. Filters below return new sorted lists and never touch storage.

    The object is a snapshot: call :meth:`reload` to see changes made by other writers. Write methods
    reload it themselves.
    """

    def __init__(self, storage: Storage, meta_path: str, before_change: Callable[[], None] | None = None,
                 layout: TimelineLayout = LAYOUT_V1) -> None:
        self.storage = storage
        self.meta_path = meta_path
        self.layout = layout
        self.timeline_path = layout.timeline_path(storage, meta_path)
        self._before_change = before_change
        self.instants: list[Instant] = []
        self._all_files: list[Instant] = []
        self._listed_names: dict[tuple[str, str, State], str] = {}
        self._archived_completions: dict[str, str] | None = None
        self.reload()

    # ------------------------------------------------------------------ loading

    def reload(self) -> ActiveTimeline:
        """Re-list ``.hoodie`` and rebuild :attr:`instants`; returns ``self``.

        Raises:
            StorageError: listing failed.
        """
        parsed: list[Instant] = []
        listed: dict[tuple[str, str, State], str] = {}
        for info in self.storage.list_dir(self.timeline_path):
            if info.is_dir:
                continue
            instant = self.layout.parse(info.name)
            if instant is not None and self.layout.version != 1:
                listed[(instant.timestamp, comparable_action(instant.action), instant.state)] = info.name
            if instant is None:
                if not info.name.startswith(".") and info.name not in ("hoodie.properties",
                                                                        "hoodie.properties.backup"):
                    LOG.debug("ignoring non-instant file %s in %s", info.name, self.meta_path)
                continue
            parsed.append(instant)
        self._listed_names = listed
        self._all_files = sort_instants(parsed)
        latest: dict[tuple[str, str], Instant] = {}
        for instant in self._all_files:
            key = (instant.timestamp, comparable_action(instant.action))
            current = latest.get(key)
            if current is None or instant.state.rank >= current.state.rank:
                latest[key] = instant
        self.instants = sort_instants(latest.values())
        return self

    def state_file_times(self) -> dict[tuple[str, str, State], int]:
        """``(instant time, action, state)`` → modification time (ms since the epoch) of that state's file in the
        timeline folder (``.hoodie``, or ``.hoodie/timeline`` for layout 2): Hudi's state transition times
        (``HoodieInstant.getStateTransitionTime``). A completed compaction is keyed by its ``commit`` file.

        Raises:
            StorageError: listing failed.
        """
        out: dict[tuple[str, str, State], int] = {}
        for info in self.storage.list_dir(self.timeline_path):
            instant = None if info.is_dir else self.layout.parse(info.name)
            if instant is not None:
                out[(instant.timestamp, instant.action, instant.state)] = info.mtime_ms
        return out

    def __repr__(self) -> str:
        return f"ActiveTimeline({self.meta_path!r}, {len(self.instants)} instants)"

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    # ------------------------------------------------------------------ filters (no I/O)

    def completed(self) -> list[Instant]:
        """Completed instants of every action (Hudi ``filterCompletedInstants``)."""
        return [i for i in self.instants if i.is_completed]

    def pending(self) -> list[Instant]:
        """Requested or inflight instants of every action (Hudi ``filterInflightsAndRequested``)."""
        return [i for i in self.instants if i.is_pending]

    def commits_timeline(self) -> list[Instant]:
        """Data-changing instants in any state: ``commit``, ``deltacommit``, ``replacecommit`` and
        pending ``compaction``/``logcompaction`` (a completed compaction appears as ``commit``).
        Mirrors Hudi ``getWriteTimeline``/``getCommitsAndCompactionTimeline``."""
        return [i for i in self.instants if i.action in COMMIT_ACTIONS]

    def completed_commits(self) -> list[Instant]:
        """Completed ``commit``/``deltacommit``/``replacecommit`` instants
        (Hudi ``getCommitsTimeline().filterCompletedInstants()``)."""
        return [i for i in self.commits_timeline() if i.is_completed]

    def pending_commits(self) -> list[Instant]:
        """Requested/inflight writes (``commit``, ``deltacommit``, ``replacecommit``), excluding table
        services' pending compactions (Hudi ``filterPendingExcludingCompaction`` on the commits timeline)."""
        return [i for i in self.commits_timeline()
                if i.is_pending and i.action not in (COMPACTION, LOG_COMPACTION)]

    def pending_compactions(self) -> list[Instant]:
        """Requested/inflight ``compaction`` instants (Hudi ``filterPendingCompactionTimeline``)."""
        return [i for i in self.instants if i.action == COMPACTION and i.is_pending]

    def pending_log_compactions(self) -> list[Instant]:
        """Requested/inflight ``logcompaction`` instants."""
        return [i for i in self.instants if i.action == LOG_COMPACTION and i.is_pending]

    def completed_replace_commits(self) -> list[Instant]:
        """Completed ``replacecommit`` instants (Hudi ``getCompletedReplaceTimeline``)."""
        return [i for i in self.instants if i.action == REPLACE_COMMIT and i.is_completed]

    def of_actions(self, actions: Iterable[str]) -> list[Instant]:
        """Instants whose action is one of ``actions`` (Hudi ``getTimelineOfActions``)."""
        wanted = set(actions)
        return [i for i in self.instants if i.action in wanted]

    def cleans(self) -> list[Instant]:
        """``clean`` instants, any state."""
        return self.of_actions([CLEAN])

    def rollbacks(self) -> list[Instant]:
        """``rollback`` instants, any state."""
        return self.of_actions([ROLLBACK])

    def savepoints(self) -> list[Instant]:
        """Completed ``savepoint`` instants."""
        return [i for i in self.of_actions([SAVEPOINT]) if i.is_completed]

    def last_completed_commit(self) -> Instant | None:
        """The latest completed commit/deltacommit/replacecommit, or ``None`` for an empty table."""
        commits = self.completed_commits()
        return commits[-1] if commits else None

    def find(self, timestamp: str) -> list[Instant]:
        """Instants (latest state each) with this timestamp; usually zero or one."""
        return [i for i in self.instants if i.timestamp == timestamp]

    def visible_commit_times(self) -> list[str]:
        """Sorted timestamps of completed commits plus pending compactions (Hudi
        ``getCommitsAndCompactionTimeline().filterCompletedAndCompactionInstants()``): the instants whose
        files a reader may see."""
        return sorted({i.timestamp for i in self.commits_timeline()
                       if i.is_completed or i.action == COMPACTION})

    def contains_or_before_start(self, ts: str) -> bool:
        """Whether files written at ``ts`` are committed (Hudi ``containsOrBeforeTimelineStarts`` on the
        completed-commits-and-compaction timeline).

        True if ``ts`` is a completed commit-type instant or a pending compaction, or if ``ts`` is older
        than the first such instant (its commit was archived) — *unless* ``ts`` is still present in
        ``.hoodie`` as a pending write, which Java would also treat as "before start" (a deliberate,
        safer deviation: leftovers of a failed first write stay invisible).
        """
        visible = self.visible_commit_times()
        if ts in visible:
            return True
        if not visible or ts >= visible[0]:
            return False
        return not any(i.timestamp == ts and i.is_pending for i in self.commits_timeline())

    def all_instant_times(self) -> list[str]:
        """Sorted distinct timestamps of every instant file in ``.hoodie`` (any action, any state)."""
        return sorted({i.timestamp for i in self._all_files})

    def new_instant_time(self) -> str:
        """A fresh 17-digit UTC instant time strictly greater than every instant file in ``.hoodie`` (any
        action or state), after re-listing the timeline (docs/FORMAT.md §2.1)."""
        self.reload()
        return new_instant_time(self.all_instant_times())

    def instant_files(self, timestamp: str) -> list[Instant]:
        """Every instant file (all states, not de-duplicated) with this timestamp, sorted."""
        return [i for i in self._all_files if i.timestamp == timestamp]

    # ------------------------------------------------------------------ reads

    def _path(self, instant: Instant) -> str:
        if self.layout.version == 1:
            return self.storage.join(self.meta_path, instant.file_name)
        key = (instant.timestamp, comparable_action(instant.action), instant.state)
        name = self._listed_names.get(key) or self.layout.file_name(instant)
        return self.storage.join(self.timeline_path, name)

    def archived_completion_times(self) -> dict[str, str]:
        """Requested → completion time of the archived instants (timeline layout 2: read from the LSM archive on
        first use, then cached; ``{}`` on layout 1).

        Raises:
            CorruptFile: the archived timeline cannot be read.
        """
        if self._archived_completions is None:
            self._archived_completions = self.layout.archived_completion_times(self.storage, self.meta_path)
        return self._archived_completions

    def completion_times(self) -> dict[str, str]:
        """Requested time → completion time of every completed instant that has one (timeline layout 2; ``{}``
        on layout 1, whose file names keep no completion time). Hudi ``CompletionTimeQueryView`` over the
        active timeline."""
        return {i.timestamp: i.completion_time for i in self.instants
                if i.is_completed and i.completion_time is not None}

    def read_details(self, instant: Instant) -> bytes:
        """The content of the instant's file (JSON for commits, Avro for table-service plans/metadata;
        possibly 0 bytes).

        Raises:
            TimelineError: the file does not exist.
        """
        path = self._path(instant)
        try:
            return self.storage.read_bytes(path)
        except StorageError as exc:
            if not self.storage.exists(path):
                raise TimelineError(f"instant {instant} has no file {path}") from exc
            raise

    # ------------------------------------------------------------------ writes

    def _changing(self) -> None:
        if self._before_change is not None:
            self._before_change()
        if self.layout.version != 1:
            raise UnsupportedTable(f"cannot change the timeline {self.timeline_path}: writing timeline layout "
                                   f"{self.layout.version} (Hudi 1.x) is not implemented")

    def create_requested(self, instant_time: str, action: str, content: bytes = b"") -> Instant:
        """Start an instant: create ``T.<action>.requested`` (Hudi ``createNewInstant`` /
        ``saveToCompactionRequested`` / ``saveToCleanRequested`` ...).

        Args:
            instant_time: the new instant's time (see :func:`engine.timeline.instant.new_instant_time`).
            action: one of the action constants except ``savepoint`` (use :meth:`create_inflight`).
            content: file content (0 bytes for commit/deltacommit; Avro plans for table services).

        Returns:
            the requested instant.

        Raises:
            TimelineError: an instant file with this timestamp already exists, or the action has no
                requested state.
        """
        self._changing()
        instant = Instant(instant_time, action, State.REQUESTED)
        self._ensure_new_time(instant_time)
        if not self.storage.create_if_absent(self._path(instant), content):
            raise TimelineError(f"instant {instant} already exists in {self.meta_path}")
        LOG.info("created %s in %s", instant.file_name, self.meta_path)
        self.reload()
        return instant

    def create_requested_now(self, action: str, content: bytes = b"", attempts: int = 5) -> Instant:
        """Start an instant at a new time (:meth:`new_instant_time`), taking the next time when another writer
        created one at the same time first (several writers under optimistic concurrency control).

        Raises:
            TimelineError: every attempt found its time taken.
        """
        for attempt in range(attempts):
            instant_time = self.reload().new_instant_time()
            try:
                return self.create_requested(instant_time, action, content)
            except TimelineError:
                if attempt + 1 == attempts or not self.storage_instant_files(instant_time):
                    raise
                LOG.info("instant time %s was taken by another writer; taking the next one", instant_time)
        raise TimelineError(f"no free instant time for a {action} in {self.meta_path}")

    def create_inflight(self, instant_time: str, action: str, content: bytes = b"") -> Instant:
        """Start an instant directly in the inflight state (savepoints, which have no requested state).

        A savepoint takes the time of the commit it marks (Hudi names it so): only another savepoint of that
        time is a conflict.

        Raises:
            TimelineError: an instant file with this timestamp already exists (for a savepoint: a savepoint).
        """
        self._changing()
        instant = Instant(instant_time, action, State.INFLIGHT)
        if action == SAVEPOINT:
            if any(i.action == SAVEPOINT for i in self.storage_instant_files(instant_time)):
                raise TimelineError(f"savepoint {instant_time} already exists in {self.meta_path}")
        else:
            self._ensure_new_time(instant_time)
        if not self.storage.create_if_absent(self._path(instant), content):
            raise TimelineError(f"instant {instant} already exists in {self.meta_path}")
        LOG.info("created %s in %s", instant.file_name, self.meta_path)
        self.reload()
        return instant

    def _ensure_new_time(self, instant_time: str) -> None:
        existing = [i.file_name for i in self.storage_instant_files(instant_time)]
        if existing:
            raise TimelineError(
                f"instant time {instant_time} is already used in {self.meta_path}: {', '.join(existing)}")

    def storage_instant_files(self, timestamp: str) -> list[Instant]:
        """Instant files with ``timestamp`` as currently on storage (re-lists ``.hoodie``)."""
        self.reload()
        return self.instant_files(timestamp)

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        """Requested → inflight: create the inflight file next to the requested one
        (Hudi ``transitionRequestedToInflight``).

        Args:
            instant: a REQUESTED instant.
            content: inflight content (commit workload JSON; empty for compaction/clean/rollback).

        Raises:
            TimelineError: ``instant`` is not requested, its file is missing, or the inflight file exists.
        """
        self._changing()
        if not instant.is_requested:
            raise TimelineError(f"cannot move {instant} to inflight: it is not requested")
        if not self.storage.exists(self._path(instant)):
            raise TimelineError(f"cannot move {instant} to inflight: {self._path(instant)} does not exist")
        inflight = instant.with_state(State.INFLIGHT)
        if not self.storage.create_if_absent(self._path(inflight), content):
            raise TimelineError(f"cannot move {instant} to inflight: {inflight.file_name} already exists")
        LOG.info("created %s in %s", inflight.file_name, self.meta_path)
        self.reload()
        return inflight

    def complete(self, instant: Instant, content: bytes) -> Instant:
        """Inflight → completed: make the completed file appear atomically (Hudi ``saveAsComplete``).

        A ``compaction`` completes as ``T.commit`` and a ``logcompaction`` as ``T.deltacommit``.

        Args:
            instant: an INFLIGHT instant.
            content: completed metadata (commit JSON, or Avro for clean/rollback/...).

        Returns:
            the completed instant (action ``commit`` for a compaction).

        Raises:
            TimelineError: ``instant`` is not inflight, its file is missing, or it is already completed.
        """
        self._changing()
        if not instant.is_inflight:
            raise TimelineError(f"cannot complete {instant}: it is not inflight")
        if not self.storage.exists(self._path(instant)):
            raise TimelineError(f"cannot complete {instant}: {self._path(instant)} does not exist")
        completed = instant.with_state(State.COMPLETED)
        try:
            self.storage.write_atomic(self._path(completed), content, overwrite=False)
        except StorageError as exc:
            if self.storage.exists(self._path(completed)):
                raise TimelineError(f"cannot complete {instant}: {completed.file_name} already exists") from exc
            raise
        LOG.info("completed %s in %s", completed.file_name, self.meta_path)
        self.reload()
        return completed

    def revert_to_inflight(self, instant: Instant) -> Instant:
        """Completed → inflight ("unpublish", Hudi ``HoodieActiveTimeline.revertToInflight``, which a rollback of a
        completed instant does before it deletes a file): the completed file is deleted, so no reader sees the
        instant's files from then on, whatever happens to them. An inflight file is written first when missing.

        Args:
            instant: a COMPLETED instant.

        Returns:
            the pending instant left on the timeline.

        Raises:
            TimelineError: ``instant`` is not completed.
        """
        self._changing()
        if not instant.is_completed:
            raise TimelineError(f"cannot revert {instant} to inflight: it is not completed")
        inflight = next((i for i in self.reload().find(instant.timestamp) if i.is_inflight), None)
        if inflight is None:
            inflight = instant.with_state(State.INFLIGHT)
            if not self.storage.exists(self._path(inflight)):
                self.storage.write_atomic(self._path(inflight), b"", overwrite=True)
        self.storage.delete(self._path(instant))
        LOG.info("reverted %s to inflight in %s", instant.file_name, self.meta_path)
        self.reload()
        return inflight

    def revert_to_requested(self, instant: Instant) -> Instant:
        """Inflight → requested by deleting the inflight file (Hudi ``revertInstantFromInflightToRequested``;
        used to re-attempt a compaction).

        Raises:
            TimelineError: ``instant`` is not inflight.
        """
        self._changing()
        if not instant.is_inflight:
            raise TimelineError(f"cannot revert {instant}: it is not inflight")
        self.storage.delete(self._path(instant))
        self.reload()
        return instant.with_state(State.REQUESTED)

    def delete_instant_files(self, timestamp: str, action: str) -> None:
        """Delete every state file of (``timestamp``, ``action``): completed first, then inflight, then
        requested, so a crash midway leaves a pending (invisible) instant, never a dangling completion.

        For ``compaction``/``logcompaction`` the completed file is ``T.commit``/``T.deltacommit``; a
        ``commit``/``deltacommit`` also removes pending compaction/logcompaction files with that time.
        Missing files are ignored.
        """
        self._changing()
        actions = {action, COMPLETED_ACTION.get(action, action)}
        for pending_action, completed_action in COMPLETED_ACTION.items():
            if action == completed_action:
                actions.add(pending_action)
        doomed: list[Instant] = []
        for act in actions:
            for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
                if act == SAVEPOINT and state is State.REQUESTED:
                    continue
                if act in COMPLETED_ACTION and state is State.COMPLETED:
                    continue
                doomed.append(Instant(timestamp, act, state))
        doomed.sort(key=lambda i: -i.state.rank)
        seen: set[str] = set()
        for instant in doomed:
            name = instant.file_name
            if name in seen:
                continue
            seen.add(name)
            path = self.storage.join(self.meta_path, name)
            if self.storage.exists(path):
                self.storage.delete(path)
                LOG.info("deleted %s from %s", name, self.meta_path)
        self.reload()
