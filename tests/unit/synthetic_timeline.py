"""Synthetic timelines for unit tests: instants written directly, files touched by name (no Spark)."""

from __future__ import annotations

from engine.table import Table
from engine.timeline import COMMIT, CommitMetadata


def commit(table: Table, ts: str, action: str = COMMIT, complete: bool = True,
           metadata: CommitMetadata | None = None, plan: bytes = b"") -> None:
    """Write ``ts`` as requested and inflight (with ``plan``) and, when ``complete``, completed with ``metadata``
    (an UPSERT without stats by default); the table is reloaded."""
    timeline = table.reload_timeline()
    inflight = timeline.transition_to_inflight(timeline.create_requested(ts, action, plan))
    if complete:
        timeline.complete(inflight, (metadata or CommitMetadata(operation_type="UPSERT")).to_json())
    table.reload()
