"""Timeline instants: actions, states and their file names (Hudi ``HoodieInstant``, timeline layout 1).

With layout 1 every state of an instant has its own file in ``.hoodie/`` (docs/FORMAT.md §2.2); state
transitions *create* the next file and never rename. A reader derives the state from the file name:

* ``commit``: ``T.commit.requested``, ``T.inflight``, ``T.commit``
* ``deltacommit``: ``T.deltacommit.requested``, ``T.deltacommit.inflight``, ``T.deltacommit``
* ``replacecommit``: ``T.replacecommit.requested``, ``T.replacecommit.inflight``, ``T.replacecommit``
* ``compaction``: ``T.compaction.requested``, ``T.compaction.inflight``, completed as ``T.commit``
* ``logcompaction``: ``T.logcompaction.requested``, ``T.logcompaction.inflight``, completed as
  ``T.deltacommit``
* ``clean`` / ``rollback`` / ``restore`` / ``indexing`` / ``schemacommit``: ``T.<a>.requested``,
  ``T.<a>.inflight``, ``T.<a>``
* ``savepoint``: no requested state; ``T.savepoint.inflight``, ``T.savepoint``

Instant times are ``yyyyMMddHHmmssSSS`` (17 digits) in the table's timeline time zone (this engine writes
UTC); legacy 14-digit times still parse (docs/FORMAT.md §2.1).
"""

from __future__ import annotations

import datetime as _dt
import enum
import functools
import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.errors import TimelineError

LOG = logging.getLogger(__name__)

COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"

ALL_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION, CLEAN, ROLLBACK,
                         SAVEPOINT, RESTORE, INDEXING, SCHEMA_COMMIT})
"""Every action this module can name a file for."""

#: Actions whose completed instant is written under another action (Hudi ``getComparableAction``).
COMPLETED_ACTION = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT}

#: Reserved instants (docs/FORMAT.md §2.1).
INIT_INSTANT_TS = "00000000000000"
METADATA_BOOTSTRAP_INSTANT_TS = "00000000000001"
FULL_BOOTSTRAP_INSTANT_TS = "00000000000002"

INSTANT_TIME_FORMAT = "%Y%m%d%H%M%S"
"""strftime pattern of the first 14 digits; the last 3 are milliseconds."""

# Hudi HoodieInstant.NAME_FORMAT: ^(\d+)(\.\w+)(\.\D+)?$
_NAME_RE = re.compile(r"^(\d+)(\.\w+)(\.\D+)?$")


@functools.total_ordering
class State(enum.Enum):
    """Instant state (Hudi ``HoodieInstant.State``), ordered REQUESTED < INFLIGHT < COMPLETED."""

    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"

    @property
    def rank(self) -> int:
        """0, 1, 2 for REQUESTED, INFLIGHT, COMPLETED (Java enum ordinal)."""
        return _STATE_RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.rank < other.rank


_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def comparable_action(action: str) -> str:
    """The action an instant sorts and de-duplicates under (``compaction`` → ``commit``,
    ``logcompaction`` → ``deltacommit``; Hudi ``HoodieInstant.getComparableAction``)."""
    return COMPLETED_ACTION.get(action, action)


@dataclass(frozen=True, order=True)
class Instant:
    """One instant of the active timeline (Hudi ``HoodieInstant``).

    Attributes:
        timestamp: instant time, ``yyyyMMddHHmmssSSS`` (or a legacy/reserved numeric time).
        action: one of the action constants (``commit``, ``deltacommit`` ...). A completed compaction is
            represented as action ``commit`` (its file is ``T.commit``), like Java does after loading.
        state: REQUESTED, INFLIGHT or COMPLETED.
        completion_time: when a completed instant of a Hudi 1.x table (timeline layout 2) completed
            (``yyyyMMddHHmmssSSS``, from its file name ``<timestamp>_<completion>.<action>``); ``None`` on
            layout 1 and for pending instants. Not part of equality, ordering or hashing.

    Ordering is by (timestamp, action, state); :func:`sort_instants` gives Java's exact order.
    """

    timestamp: str
    action: str
    state: State
    completion_time: str | None = field(default=None, compare=False, repr=False)

    # ------------------------------------------------------------------ predicates

    @property
    def is_requested(self) -> bool:
        """State is REQUESTED."""
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        """State is INFLIGHT."""
        return self.state is State.INFLIGHT

    @property
    def is_completed(self) -> bool:
        """State is COMPLETED."""
        return self.state is State.COMPLETED

    @property
    def is_pending(self) -> bool:
        """State is REQUESTED or INFLIGHT."""
        return self.state is not State.COMPLETED

    # ------------------------------------------------------------------ transitions

    def with_state(self, state: State) -> Instant:
        """The same instant in ``state``. Completing a compaction/logcompaction yields a
        ``commit``/``deltacommit`` instant (the action Java records for it)."""
        action = COMPLETED_ACTION.get(self.action, self.action) if state is State.COMPLETED else self.action
        return Instant(self.timestamp, action, state)

    # ------------------------------------------------------------------ file names

    @property
    def file_name(self) -> str:
        """The layout-1 file name of this instant in ``.hoodie/`` (Hudi ``HoodieInstant.getFileName``).

        Raises:
            TimelineError: unknown action, or a state the action has no file for (requested savepoint).
        """
        ts, action, state = self.timestamp, self.action, self.state
        if action not in ALL_ACTIONS:
            raise TimelineError(f"instant {ts}: unknown action '{action}'")
        if state is State.COMPLETED:
            return f"{ts}.{COMPLETED_ACTION.get(action, action)}"
        if state is State.INFLIGHT:
            return f"{ts}.inflight" if action == COMMIT else f"{ts}.{action}.inflight"
        if action == SAVEPOINT:
            raise TimelineError(f"instant {ts}: savepoints have no requested state")
        return f"{ts}.{action}.requested"

    @staticmethod
    def parse(file_name: str) -> Instant | None:
        """Parse a ``.hoodie/`` file name into an instant, or ``None`` if it is not one.

        Accepts exactly the names of the table above (Hudi's ``HoodieInstant`` regex plus the active
        timeline's valid-extension filter). ``T.compaction`` / ``T.logcompaction`` without a state are not
        valid (a completed compaction is ``T.commit``). Temporary files (leading ``.``), ``hoodie.properties``
        and directories return ``None``.
        """
        match = _NAME_RE.match(file_name)
        if match is None:
            return None
        ts = match.group(1)
        action = match.group(2)[1:]
        suffix = match.group(3)[1:] if match.group(3) else None
        if action == "inflight" and suffix is None:
            return Instant(ts, COMMIT, State.INFLIGHT)
        if action not in ALL_ACTIONS:
            return None
        if suffix is None:
            if action in COMPLETED_ACTION:
                return None
            return Instant(ts, action, State.COMPLETED)
        if suffix == "inflight":
            if action == COMMIT:  # commit inflight is the bare T.inflight
                return None
            return Instant(ts, action, State.INFLIGHT)
        if suffix == "requested":
            if action == SAVEPOINT:
                return None
            return Instant(ts, action, State.REQUESTED)
        return None

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.value}]"


def sort_instants(instants: Iterable[Instant]) -> list[Instant]:
    """Sort like Java's ``HoodieInstant.COMPARATOR``: timestamp, comparable action, state."""
    return sorted(instants, key=lambda i: (i.timestamp, comparable_action(i.action), i.state.rank))


def format_instant_time(moment: _dt.datetime) -> str:
    """``yyyyMMddHHmmssSSS`` of ``moment`` converted to UTC (naive datetimes are taken as UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.UTC).replace(tzinfo=None)
    return moment.strftime(INSTANT_TIME_FORMAT) + f"{moment.microsecond // 1000:03d}"


def instant_time_of_millis(ms: int, utc: bool) -> str:
    """An epoch-millisecond time as an instant string ``yyyyMMddHHmmssSSS`` on the UTC or the local clock (the
    timeline time zone). Table version 6 keeps no completion times: Hudi takes an instant's state transition
    time from its file's modification time, formatted so."""
    seconds = ms / 1000.0
    moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC) if utc else _dt.datetime.fromtimestamp(seconds)
    return moment.strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}"


def parse_instant_time(ts: str) -> _dt.datetime:
    """UTC datetime of an instant time (17-digit ``yyyyMMddHHmmssSSS`` or 14-digit legacy form).

    Raises:
        TimelineError: ``ts`` is not a valid instant time.
    """
    try:
        if len(ts) == 17 and ts.isdigit():
            base = _dt.datetime.strptime(ts[:14], INSTANT_TIME_FORMAT)
            return base.replace(microsecond=int(ts[14:]) * 1000, tzinfo=_dt.UTC)
        if len(ts) == 14 and ts.isdigit():
            return _dt.datetime.strptime(ts, INSTANT_TIME_FORMAT).replace(tzinfo=_dt.UTC)
    except ValueError as exc:
        raise TimelineError(f"invalid instant time '{ts}': {exc}") from exc
    raise TimelineError(f"invalid instant time '{ts}': expected 17 digits yyyyMMddHHmmssSSS")


def _normalized(ts: str) -> str:
    """A 17-digit comparison key: legacy 14-digit times get ``000`` appended; others are unchanged."""
    return ts + "000" if len(ts) == 14 and ts.isdigit() else ts


def new_instant_time(after: Iterable[str] = (), now: _dt.datetime | None = None) -> str:
    """A new 17-digit UTC instant time strictly greater than every time in ``after``.

    Mirrors ``HoodieInstantTimeGenerator.createNewInstantTime`` (which guarantees monotonicity within a JVM)
    but is safe across processes when ``after`` holds every instant time in ``.hoodie`` (any state): if the
    clock is not ahead of the largest existing time, the result is that time plus one millisecond.

    Args:
        after: existing instant times (any length; 14-digit legacy times compare as ``T000``).
        now: the clock (defaults to the current UTC time); naive values are taken as UTC.

    Returns:
        e.g. ``"20240418172804498"``.
    """
    moment = now if now is not None else _dt.datetime.now(_dt.UTC)
    candidate = format_instant_time(moment)
    latest = max((_normalized(t) for t in after), default="")
    if now is None:
        # Monotonic within the process, as Hudi's generator is within a JVM: two threads of one process never
        # get the same time (their heartbeats would be one). The process series follows the clock only: a
        # table whose timeline is ahead of the clock bumps this result, never the times of other tables.
        with _ISSUED_GUARD:
            global _LAST_ISSUED
            candidate = _after(candidate, _LAST_ISSUED)
            _LAST_ISSUED = candidate
    return _after(candidate, latest)


_ISSUED_GUARD = threading.Lock()
_LAST_ISSUED = ""


def _after(candidate: str, latest: str) -> str:
    """``candidate``, or ``latest`` plus one millisecond when the clock is not ahead of it."""
    if latest and candidate <= latest:
        if len(latest) == 17 and latest.isdigit():
            bumped = parse_instant_time(latest) + _dt.timedelta(milliseconds=1)
            candidate = format_instant_time(bumped)
        else:
            raise TimelineError(f"cannot generate an instant time after non-standard instant '{latest}'")
        LOG.debug("clock behind the timeline; using %s after %s", candidate, latest)
    return candidate
