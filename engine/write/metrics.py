"""The metrics record every write returns (rows and files touched, bytes, time per phase)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from engine.timeline.commit_metadata import WriteStat


@dataclass
class WriteMetrics:
    """Outcome of one write.

    Attributes:
        instant: the instant time the write committed (``""`` when nothing was written).
        operation: the write operation's config name (``upsert``, ``insert`` ...).
        rows_inserted / rows_updated / rows_deleted: records inserted, updated or deleted.
        rows_copied: unchanged records rewritten because their file group was rewritten.
        files_added: new base/log files created (new file groups).
        files_updated: file groups that got a new file slice (merge).
        files_replaced: file groups replaced by an overwrite.
        bytes_written: total bytes of the files written.
        phase_ms: wall-clock milliseconds per phase (``tag``, ``plan``, ``write``, ``commit`` ...).
    """

    instant: str = ""
    operation: str = ""
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    rows_copied: int = 0
    files_added: int = 0
    files_updated: int = 0
    files_replaced: int = 0
    bytes_written: int = 0
    phase_ms: dict[str, int] = field(default_factory=dict)

    @property
    def rows_affected(self) -> int:
        """Inserted + updated + deleted rows (Spark's ``num_affected_rows``)."""
        return self.rows_inserted + self.rows_updated + self.rows_deleted

    def add_stats(self, stats: Iterable[WriteStat]) -> None:
        """Accumulate counts from the write stats of a commit."""
        for stat in stats:
            self.rows_inserted += stat.num_inserts
            self.rows_updated += stat.num_update_writes
            self.rows_deleted += stat.num_deletes
            self.rows_copied += max(0, stat.num_writes - stat.num_inserts - stat.num_update_writes)
            self.bytes_written += stat.total_write_bytes
            if stat.prev_commit in ("null", "", None):
                self.files_added += 1
            else:
                self.files_updated += 1

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a block and add its milliseconds to ``phase_ms[name]``."""
        start = time.monotonic()
        try:
            yield
        finally:
            elapsed = int((time.monotonic() - start) * 1000)
            self.phase_ms[name] = self.phase_ms.get(name, 0) + elapsed
