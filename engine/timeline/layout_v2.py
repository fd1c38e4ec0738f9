"""Timeline layout 2 of Hudi 1.x tables (table versions 8 and 9): Hudi ``TimelineLayoutV2``,
``InstantFileNameGeneratorV2`` / ``InstantFileNameParserV2``, ``InstantComparatorV2``, ``CommitMetadataSerDeV2``.

Instant files live in ``.hoodie/<hoodie.timeline.path>`` (default ``timeline``). Requested and inflight files are
named as in layout 1 (``T.<action>.requested``, ``T.<action>.inflight``, a commit's inflight is ``T.inflight``);
a completed instant's file carries its completion time too::

    <requestedTime>_<completionTime>.<action>        e.g. 20251220210108078_20251220210109593.deltacommit

A completed ``compaction`` is a ``commit`` file, a completed ``logcompaction`` a ``deltacommit`` and a completed
``clustering`` (an action new in 1.x, pending as ``T.clustering.requested``/``.inflight``) a ``replacecommit``,
as in Hudi's ``getComparableAction``. Pending clustering is read here as a pending ``replacecommit`` (its plan is
a ``HoodieRequestedReplaceMetadata`` as before); the timeline keeps the real file name to read it.

Completed commit/deltacommit/replacecommit files hold Avro (``HoodieCommitMetadata`` /
``HoodieReplaceCommitMetadata``, an object container with the writer schema embedded) instead of JSON; table
service plans and metadata (clean, rollback, compaction, clustering, restore, savepoint, indexing) are Avro as in
layout 1. Writing layout-2 timelines is not implemented: the engine refuses to change Hudi 1.x tables
(:meth:`engine.table.Table.check_writable`).
"""

from __future__ import annotations

import re

from engine.errors import TimelineError
from engine.storage import Storage
from engine.timeline import avro_serde, lsm_archive
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import (
    COMMIT,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    SAVEPOINT,
    Instant,
    State,
)

CLUSTERING = "clustering"
"""Hudi 1.x action of a pending clustering (completes as ``replacecommit``)."""

_COMPLETED_AS = {COMPACTION: COMMIT, LOG_COMPACTION: "deltacommit", CLUSTERING: REPLACE_COMMIT}
_COMPLETED_RE = re.compile(r"^(\d+)_(\d+)\.(\w+)$")
_PENDING_CLUSTERING_RE = re.compile(r"^(\d+)\.clustering\.(requested|inflight)$")


def parse_file_name(file_name: str) -> Instant | None:
    """The instant a layout-2 timeline file name stands for, or ``None`` (Hudi ``InstantFileNameParserV2`` plus
    the active timeline's extension filter).

    * ``<T>_<C>.<action>``: COMPLETED, ``completion_time`` C (``compaction``/``logcompaction``/``clustering``
      never appear completed under their own name);
    * ``<T>.clustering.requested|inflight``: a pending ``replacecommit``;
    * anything else as layout 1 (:meth:`Instant.parse`), except that a completed name without a completion time
      is not an instant of this layout.

    Examples:
        ``20251220210129235_20251220210129883.commit`` → ``Instant("20251220210129235", "commit", COMPLETED,
        completion_time="20251220210129883")``.
    """
    match = _COMPLETED_RE.match(file_name)
    if match is not None:
        requested, completed, action = match.groups()
        parsed = Instant.parse(f"{requested}.{action}")
        if parsed is None or not parsed.is_completed:
            return None
        return Instant(requested, parsed.action, State.COMPLETED, completion_time=completed)
    clustering = _PENDING_CLUSTERING_RE.match(file_name)
    if clustering is not None:
        state = State.REQUESTED if clustering.group(2) == "requested" else State.INFLIGHT
        return Instant(clustering.group(1), REPLACE_COMMIT, state)
    parsed = Instant.parse(file_name)
    if parsed is None or parsed.is_completed:
        return None
    return parsed


def file_name(instant: Instant) -> str:
    """The layout-2 file name of ``instant`` (Hudi ``InstantFileNameGeneratorV2.getFileName``).

    Raises:
        TimelineError: a completed instant without ``completion_time``, or a state the action has no file for.
    """
    if instant.is_completed:
        if not instant.completion_time:
            raise TimelineError(f"completed instant {instant} of a layout-2 timeline has no completion time")
        action = _COMPLETED_AS.get(instant.action, instant.action)
        return f"{instant.timestamp}_{instant.completion_time}.{action}"
    if instant.action == CLUSTERING:
        return f"{instant.timestamp}.{CLUSTERING}.{'requested' if instant.is_requested else 'inflight'}"
    if instant.action == SAVEPOINT and instant.is_requested:
        raise TimelineError(f"instant {instant.timestamp}: savepoints have no requested state")
    return instant.file_name


def decode_commit_metadata(content: bytes, source: str = "") -> CommitMetadata:
    """Commit metadata of a layout-2 commit/deltacommit/replacecommit file (Hudi ``CommitMetadataSerDeV2``).

    Avro object container (``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``, writer schema embedded) →
    :class:`CommitMetadata` (a ``partitionToReplaceFileIds`` field makes replace metadata). 0 bytes give empty
    metadata; JSON content (instants a table upgrade left unconverted) is read as layout 1 reads it.

    Raises:
        CorruptFile: neither Avro commit metadata nor JSON.
    """
    if not content.strip():
        return CommitMetadata()
    if not content.startswith(avro_serde.MAGIC):
        return CommitMetadata.from_json(content, source=source)
    record = avro_serde.deserialize(content, source=source)
    stats = record.get("partitionToWriteStats") or {}
    data = {**record, "partitionToWriteStats": {p: list(v or []) for p, v in stats.items()}}
    if "partitionToReplaceFileIds" in record:  # HoodieReplaceCommitMetadata
        data["partitionToReplaceFileIds"] = record["partitionToReplaceFileIds"] or {}
    data.pop("version", None)
    return CommitMetadata.from_dict(data)


class TimelineLayoutV2:
    """Layout 2 (see the module doc): a :class:`engine.timeline.layout.TimelineLayout`.

    Args:
        timeline_folder: ``hoodie.timeline.path`` (folder under ``.hoodie``).
        history_folder: ``hoodie.timeline.history.path`` (LSM archive folder under the timeline folder).
    """

    version = 2

    def __init__(self, timeline_folder: str = "timeline", history_folder: str = "history") -> None:
        self.timeline_folder = timeline_folder
        self.history_folder = history_folder

    def __repr__(self) -> str:
        return f"TimelineLayoutV2({self.timeline_folder!r}, {self.history_folder!r})"

    def timeline_path(self, storage: Storage, meta_path: str) -> str:
        """``.hoodie/<timeline folder>``."""
        return storage.join(meta_path, self.timeline_folder)

    def history_path(self, storage: Storage, meta_path: str) -> str:
        """``.hoodie/<timeline folder>/<history folder>``: the LSM archived timeline."""
        return storage.join(self.timeline_path(storage, meta_path), self.history_folder)

    def parse(self, file_name: str) -> Instant | None:
        """:func:`parse_file_name`."""
        return parse_file_name(file_name)

    def file_name(self, instant: Instant) -> str:
        """:func:`file_name`."""
        return file_name(instant)

    def commit_metadata(self, content: bytes, source: str) -> CommitMetadata:
        """:func:`decode_commit_metadata`."""
        return decode_commit_metadata(content, source)

    def archived_completion_times(self, storage: Storage, meta_path: str) -> dict[str, str]:
        """:func:`engine.timeline.lsm_archive.completion_times` of the history folder."""
        return lsm_archive.completion_times(storage, self.history_path(storage, meta_path))

    def has_archived_instants(self, storage: Storage, archive_path: str) -> bool:
        """Whether the LSM archive holds a data file (:func:`engine.timeline.lsm_archive.archived_range`)."""
        return lsm_archive.archived_range(storage, archive_path) is not None
