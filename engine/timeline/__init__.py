"""The Hudi timeline (``.hoodie/`` instants, table version 6, layout 1).

* :mod:`engine.timeline.instant` — :class:`Instant`, :class:`State`, action constants, instant times.
* :mod:`engine.timeline.active` — :class:`ActiveTimeline`: load, filter and write instants.
* :mod:`engine.timeline.commit_metadata` — commit JSON (:class:`CommitMetadata`, :class:`WriteStat`).
* :mod:`engine.timeline.avro_serde` — Avro container files of table-service plans and metadata.
"""

from engine.timeline.active import ActiveTimeline
from engine.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    INDEXING,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
    new_instant_time,
)

__all__ = [
    "ActiveTimeline",
    "CLEAN",
    "COMMIT",
    "COMPACTION",
    "CommitMetadata",
    "DELTA_COMMIT",
    "INDEXING",
    "Instant",
    "LOG_COMPACTION",
    "REPLACE_COMMIT",
    "RESTORE",
    "ROLLBACK",
    "RuntimeStats",
    "SAVEPOINT",
    "State",
    "WriteStat",
    "new_instant_time",
]
