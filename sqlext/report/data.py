"""The data ``sqlext report`` draws: kinds of instants, timeline entries, file-size limits, base files, file
slices, table-service rows and the whole :class:`TableReport` (filled by :func:`sqlext.report.model.collect`)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    State,
)

CLUSTERING = "clustering"
"""Kind of a replacecommit that is a clustering (its requested file holds a clustering plan)."""
OVERWRITE = "overwrite"
"""Kind of any other replacecommit (INSERT OVERWRITE, INSERT OVERWRITE TABLE, DELETE PARTITION)."""

KIND_ORDER = (COMMIT, DELTA_COMMIT, COMPACTION, LOG_COMPACTION, CLUSTERING, OVERWRITE, CLEAN, ROLLBACK,
              SAVEPOINT, RESTORE, "indexing", "schemacommit")
"""Every kind of instant, in the order the timeline draws its rows."""

KIND_LABELS = {CLUSTERING: "replacecommit (clustering)", OVERWRITE: "replacecommit (overwrite)",
               COMPACTION: "compaction", LOG_COMPACTION: "logcompaction"}
"""Row labels that differ from the kind name."""

SERVICE_KINDS = frozenset({COMPACTION, LOG_COMPACTION, CLUSTERING, CLEAN, ROLLBACK, SAVEPOINT, RESTORE})
"""Kinds listed as table services."""

MAX_ARCHIVED = 1000
"""Most archived instants drawn (the newest ones)."""

@dataclass(frozen=True)
class TimelineEntry:
    """One instant as the timeline chart draws it.

    Attributes:
        timestamp: instant time (``yyyyMMddHHmmssSSS``).
        moment: the instant time as a naive datetime in the timeline time zone, or ``None`` when it is
            not a calendar time (reserved bootstrap instants).
        kind: one of :data:`KIND_ORDER` (a completed compaction is ``compaction``, not ``commit``).
        state: its latest state.
        archived: read from the archived timeline.
        completed_at: when its completed file was written (modification time, or the archive's state
            transition time), same zone as ``moment``; ``None`` if unknown or implausible.
        detail: one line on what it did (operation, counts), for tooltips.
    """

    timestamp: str
    moment: _dt.datetime | None
    kind: str
    state: State
    archived: bool = False
    completed_at: _dt.datetime | None = None
    detail: str = ""


@dataclass(frozen=True)
class Limit:
    """One file-size setting in effect.

    Attributes:
        key: the ``hoodie.*`` key.
        value: bytes.
        source: ``--conf``, ``hoodie.properties`` or ``default``.
    """

    key: str
    value: int
    source: str


@dataclass(frozen=True)
class BaseFileEntry:
    """One latest base file.

    Attributes:
        partition: relative partition path (``""`` non-partitioned).
        file_id: file group id.
        name: file name.
        size: bytes.
        commit_time: instant that wrote it.
        note: ``in pending compaction <t>`` / ``in pending clustering <t>`` or ``""``.
    """

    partition: str
    file_id: str
    name: str
    size: int
    commit_time: str
    note: str = ""


@dataclass(frozen=True)
class SliceEntry:
    """The latest file slice of one file group (as writers and compaction see it: a slice whose base
    instant is a pending compaction is not merged with the previous one).

    Attributes:
        partition: relative partition path.
        file_id: file group id.
        base_instant: the slice's base instant.
        base_size: bytes of its base file, or ``None`` (log-only slice, or pending compaction output).
        log_count: log files in the slice.
        log_bytes: their bytes.
        picked: a compaction scheduled now would take this slice.
        note: why it is not picked when it has log files (pending compaction/clustering), else ``""``.
    """

    partition: str
    file_id: str
    base_instant: str
    base_size: int | None
    log_count: int
    log_bytes: int
    picked: bool
    note: str = ""


@dataclass(frozen=True)
class ServiceEntry:
    """A pending instant or a completed table service, as a table row.

    Attributes:
        timestamp: instant time.
        kind: one of :data:`KIND_ORDER`.
        state: latest state.
        plan: plan size (pending) or ``""``.
        summary: what it does or did.
        duration: how long it took (``""`` when unknown or pending).
    """

    timestamp: str
    kind: str
    state: State
    plan: str
    summary: str
    duration: str = ""


@dataclass
class TableReport:
    """Everything the page shows about one table.

    Attributes:
        name / base_path / table_type / version / record_key_fields / precombine_field /
        partition_fields / keygen_class / base_file_format / timeline_timezone: from ``hoodie.properties``.
        partitions: relative partition paths, sorted.
        file_groups: non-replaced file groups.
        base_files: latest base files.
        log_files: log files of the latest (merged) file slices.
        latest_bytes: bytes of the latest (merged) file slices.
        stored_bytes: bytes of every committed file slice, older versions and replaced file groups included
            (what the cleaner has not removed yet).
        replaced_file_groups: file groups replaced by completed replacecommits, still on storage.
        timeline: active and archived instants, oldest first.
        archived_total: archived instants found (``archived_shown`` of them are in :attr:`timeline`).
        limits: small-file limit, clustering small-file limit, max file size.
        base_file_entries: latest base files per partition.
        slices: latest file slices (merge-on-read only; ``[]`` for copy-on-write).
        compaction_status: whether a compaction would be scheduled now, or why not (merge-on-read).
        pending: pending instants (services and writes), oldest first.
        recent: the last completed table services, newest first.
        warnings: things that could not be read.
    """

    name: str
    base_path: str
    table_type: str
    version: str
    record_key_fields: list[str]
    precombine_field: str | None
    partition_fields: list[str]
    keygen_class: str
    base_file_format: str
    timeline_timezone: str
    partitions: list[str] = field(default_factory=list)
    file_groups: int = 0
    base_files: int = 0
    log_files: int = 0
    latest_bytes: int = 0
    stored_bytes: int = 0
    replaced_file_groups: int = 0
    timeline: list[TimelineEntry] = field(default_factory=list)
    archived_total: int = 0
    archived_shown: int = 0
    limits: list[Limit] = field(default_factory=list)
    base_file_entries: dict[str, list[BaseFileEntry]] = field(default_factory=dict)
    slices: list[SliceEntry] = field(default_factory=list)
    compaction_status: str = ""
    pending: list[ServiceEntry] = field(default_factory=list)
    recent: list[ServiceEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_mor(self) -> bool:
        """Whether the table is merge-on-read."""
        return self.table_type == "MERGE_ON_READ"

    def limit(self, key: str) -> Limit | None:
        """The :class:`Limit` of ``key``, or ``None``."""
        return next((lim for lim in self.limits if lim.key == key), None)


def instant_moment(timestamp: str) -> _dt.datetime | None:
    """A 17-digit ``yyyyMMddHHmmssSSS`` (or 14-digit) instant time as a naive datetime, or ``None`` when it
    is not a calendar time (``00000000000001``, non-digits)."""
    if not timestamp.isdigit() or len(timestamp) not in (14, 17):
        return None
    try:
        moment = _dt.datetime.strptime(timestamp[:14], "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return moment.replace(microsecond=int(timestamp[14:] or 0) * 1000)
