"""What runs after a write commits, in Hudi's order (``BaseHoodieWriteClient.postCommit`` /
``runTableServicesInline`` / ``autoCleanOnCommit`` / ``autoArchiveOnCommit`` / ``commitCallback``):

1. inline compaction (merge-on-read, ``hoodie.compact.inline``) — run by the caller's ``compact`` function,
   since compaction executes on Spark and this package does not import it;
2. inline clustering (``hoodie.clustering.inline``: schedule every ``inline.max.commits`` commits and execute;
   ``hoodie.clustering.schedule.inline``: schedule only, when no clustering is pending) — run by the caller's
   ``cluster`` function, on Spark like compaction;
3. clean (``hoodie.clean.automatic``, :mod:`engine.services.clean`);
4. archive (``hoodie.archive.automatic``, :mod:`engine.services.archive`);
5. the commit callback (:mod:`engine.services.callback`), then the caller's hooks (sqlext passes none yet: its
   Hive sync runs when the write returns, so after all of these, as Hudi's ``metaSync`` does).

Each step returns a :class:`ServiceStep` (ran or not, why, metrics, milliseconds). The commit stands whatever
happens here: a failed clean is logged and left pending for the next run, a failed callback is logged; a
failed inline compaction raises (as in Hudi), after the write's commit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.config import (
    ArchiveConfig,
    CleanConfig,
    ClusteringConfig,
    CompactionConfig,
    HoodieConfig,
    TableConfig,
)
from engine.errors import ConfigError, EngineError
from engine.services.archive import archive, check_archive_config
from engine.services.callback import callback_message, check_callback_config, send_commit_callback
from engine.services.clean import run_clean
from engine.services.clustering import check_clustering_config, refuse_bucket_clustering
from engine.table import Table
from engine.timeline.commit_metadata import CommitMetadata

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceStep:
    """One step of the post-commit pipeline.

    Attributes:
        name: ``compaction``, ``clean``, ``archive``, ``callback`` or a hook's name.
        ran: whether it did something.
        detail: what it did, or why it did not run.
        elapsed_ms: wall-clock milliseconds.
        metrics: the step's numbers (files deleted, instants ...).
    """

    name: str
    ran: bool
    detail: str
    elapsed_ms: int = 0
    metrics: Mapping[str, Any] = field(default_factory=dict)


Hook = tuple[str, Callable[[Table, str, CommitMetadata], str | None]]
"""A caller's step: a name and a function of (table, instant, commit metadata) returning a detail or None."""


def check_services_supported(conf: HoodieConfig, table: str) -> None:
    """Refuse, before a write starts, service settings this engine cannot honour.

    Raises:
        ConfigError: clustering settings not implemented (another strategy class, rollback of pending
            clustering on conflict); a callback that cannot be sent; archival settings Hudi refuses.
    """
    if conf.get(CompactionConfig.INLINE) and conf.get(TableConfig.TYPE).upper() == "COPY_ON_WRITE":
        # Hudi HoodieSparkCopyOnWriteTable.scheduleCompaction (Hudi fails after the commit; here before the write).
        raise ConfigError(f"Compaction is not supported on a CopyOnWrite table ({CompactionConfig.INLINE.key}=true "
                          f"on table {table}); nothing was written")
    check_clustering_config(conf, f"table {table}")
    if conf.get(ClusteringConfig.INLINE) or conf.get(ClusteringConfig.SCHEDULE_INLINE):
        refuse_bucket_clustering(conf, f"table {table}")
    check_callback_config(conf, table)
    if conf.get(ArchiveConfig.AUTOMATIC):
        check_archive_config(conf, table)


def _timed(name: str, action: Callable[[], ServiceStep]) -> ServiceStep:
    start = time.monotonic()
    step = action()
    elapsed = int((time.monotonic() - start) * 1000)
    return ServiceStep(step.name or name, step.ran, step.detail, elapsed, step.metrics)


def run_post_commit(
    table: Table,
    conf: HoodieConfig,
    instant: str,
    action: str,
    metadata: CommitMetadata,
    *,
    compact: Callable[[Table], Mapping[str, Any] | None] | None = None,
    cluster: Callable[[Table], Mapping[str, Any] | None] | None = None,
    hooks: Sequence[Hook] = (),
) -> list[ServiceStep]:
    """Run the table services and notifications due after the commit ``instant``.

    Args:
        table: the table (reloaded between steps).
        conf: the write's effective config (table config overlaid with the write options).
        instant: the committed instant.
        action: its action (``commit``, ``deltacommit``, ``replacecommit``).
        metadata: its commit metadata.
        compact: runs an inline compaction on Spark and returns its metrics (or None when nothing ran).
        cluster: runs inline clustering (or schedules it) on Spark and returns its metrics (or None).
        hooks: further steps, run last, in order.

    Returns:
        One :class:`ServiceStep` per step, in order.

    Raises:
        EngineError: the inline compaction or clustering failed (the write's commit stands).
    """
    steps: list[ServiceStep] = []

    def compaction() -> ServiceStep:
        if not (table.is_mor and conf.get(CompactionConfig.INLINE)):
            return ServiceStep("compaction", False, f"{CompactionConfig.INLINE.key} is off or the table is not MOR")
        if compact is None:
            return ServiceStep("compaction", False, "no compaction runner given")
        result = compact(table.reload())
        return ServiceStep("compaction", result is not None, "compacted" if result else "nothing due",
                           metrics=dict(result or {}))
    steps.append(_timed("compaction", compaction))

    def clustering() -> ServiceStep:
        if not (conf.get(ClusteringConfig.INLINE) or conf.get(ClusteringConfig.SCHEDULE_INLINE)):
            return ServiceStep("clustering", False, f"{ClusteringConfig.INLINE.key} and "
                                                    f"{ClusteringConfig.SCHEDULE_INLINE.key} are off")
        if cluster is None:
            return ServiceStep("clustering", False, "no clustering runner given")
        result = cluster(table.reload())
        return ServiceStep("clustering", result is not None, str((result or {}).get("detail", "nothing due")),
                           metrics=dict(result or {}))
    steps.append(_timed("clustering", clustering))

    def clean() -> ServiceStep:
        if not conf.get(CleanConfig.AUTOMATIC):
            return ServiceStep("clean", False, f"{CleanConfig.AUTOMATIC.key}=false")
        try:
            results, reason = run_clean(table.reload(), conf)
        except EngineError as exc:
            logger.error("clean after %s on %s failed (the commit stands; a pending clean is redone by the "
                         "next run): %s", instant, table.base_path, exc)
            return ServiceStep("clean", False, f"failed: {exc}")
        deleted = sum(r.files_deleted for r in results)
        detail = (f"{len(results)} clean(s), {deleted} file(s) deleted" if results else reason)
        return ServiceStep("clean", bool(results), detail,
                           metrics={"cleans": [r.instant for r in results], "files_deleted": deleted})
    steps.append(_timed("clean", clean))

    def archive_step() -> ServiceStep:
        if not conf.get(ArchiveConfig.AUTOMATIC):
            return ServiceStep("archive", False, f"{ArchiveConfig.AUTOMATIC.key}=false")
        try:
            result = archive(table.reload(), conf)
        except EngineError as exc:
            logger.error("archival after %s on %s failed (the commit stands): %s", instant, table.base_path, exc)
            return ServiceStep("archive", False, f"failed: {exc}")
        if not result.instants:
            return ServiceStep("archive", False, result.reason)
        return ServiceStep("archive", True, f"{len(result.instants)} instant(s) archived",
                           metrics={"instants": len(result.instants), "file": result.archive_file})
    steps.append(_timed("archive", archive_step))

    def callback() -> ServiceStep:
        outcome = send_commit_callback(conf, callback_message(table.name, table.base_path, instant, action,
                                                              metadata))
        if outcome is None:
            return ServiceStep("callback", False, "hoodie.write.commit.callback.on=false")
        return ServiceStep("callback", not outcome.error, outcome.error or f"HTTP {outcome.status}",
                           metrics={"url": outcome.url, "status": outcome.status})
    steps.append(_timed("callback", callback))

    for name, hook in hooks:
        steps.append(_timed(name, lambda hook=hook, name=name: ServiceStep(  # type: ignore[misc]
            name, True, hook(table.reload(), instant, metadata) or "done")))
    for step in steps:
        logger.debug("%s after %s on %s: %s (%s, %d ms)", step.name, instant, table.base_path,
                     "ran" if step.ran else "skipped", step.detail, step.elapsed_ms)
    return steps


__all__ = ["Hook", "ServiceStep", "check_services_supported",
           "run_post_commit"]
