"""What every SQL write does after its commit: refresh Spark's cache of the table, sync it to the Hive
Metastore when configured (Hudi ``HoodieSparkSqlWriter.metaSync``), and return the DML metrics row.

Sync runs when ``hoodie.datasource.hive_sync.enable`` (or ``hoodie.datasource.meta.sync.enable``) is true,
or, as Hudi's Spark SQL path does, by default when the session uses a Hive Metastore: here that means a
remote one (``hive.metastore.uris`` set), since the embedded Derby catalog is the session catalog itself.
The sync uses the catalog's database and table name, the table location, ``mode=hms`` and
``support_timestamp=true`` (Hudi's Spark SQL defaults). A failed sync never touches the commit: the
statement fails with :class:`MetaSyncFailed`, which says how to re-run the sync; the next sync catches up.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from engine.table import Table
from engine.write.metrics import WriteMetrics
from sqlext.catalog import CatalogTable
from sqlext.commands.results import dml_result
from sqlext.error_report import one_line, summarize
from sqlext.errors import SqlError

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

ENABLE_KEYS = ("hoodie.datasource.hive_sync.enable", "hoodie.datasource.meta.sync.enable")
URIS_KEY = "hoodie.datasource.hive_sync.metastore.uris"


class MetaSyncFailed(SqlError):
    """The write committed, but syncing the table to the Hive Metastore failed."""


def session_metastore_uris(ctx: CommandContext) -> str | None:
    """The remote metastore the session uses (``hive.metastore.uris``), if any."""
    for key in ("spark.hadoop.hive.metastore.uris", "hive.metastore.uris", "spark.hive.metastore.uris"):
        value = ctx.spark.conf.get(key, None)
        if value:
            return str(value)
    return None


def sync_options(ctx: CommandContext, entry: CatalogTable, options: dict[str, str]) -> dict[str, str] | None:
    """The sync options for a write on ``entry``, or ``None`` when sync is off."""
    explicit = next((options[k] for k in ENABLE_KEYS if k in options), None)
    uris = options.get(URIS_KEY) or session_metastore_uris(ctx)
    enabled = explicit.lower() == "true" if explicit is not None else uris is not None
    if not enabled:
        return None
    synced = {k: v for k, v in options.items() if "sync" in k}
    synced.setdefault("hoodie.datasource.hive_sync.database", entry.database)
    synced.setdefault("hoodie.datasource.hive_sync.table", entry.name)
    synced.setdefault("hoodie.datasource.hive_sync.mode", "hms")
    synced.setdefault("hoodie.datasource.hive_sync.support_timestamp", "true")
    if uris:
        synced.setdefault(URIS_KEY, uris)
    return synced


def sync_after_commit(ctx: CommandContext, entry: CatalogTable, table: Table, options: dict[str, str]) -> None:
    """Sync ``table`` to the Hive Metastore if configured.

    Raises:
        MetaSyncFailed: the sync failed (the commit stays committed).
    """
    synced = sync_options(ctx, entry, options)
    if synced is None:
        return
    try:
        from hive_sync.sync_tool import sync_hudi_table

        result = sync_hudi_table(table.base_path, synced)
    except Exception as exc:  # noqa: BLE001 - any sync failure is reported the same way
        raise MetaSyncFailed(
            f"the write to {entry.display} committed, but Hive sync to "
            f"{synced.get(URIS_KEY, 'the metastore')} failed: {one_line(summarize(exc))}. Re-run it with "
            f"CALL hive_sync(table => '{entry.display}'); the next sync also catches up"
        ) from exc
    logger.info("hive sync of %s: %s", entry.display, result)


def after_write(ctx: CommandContext, entry: CatalogTable, table: Table, options: dict[str, str],
                metrics: WriteMetrics | None) -> DataFrame:
    """Refresh the catalog cache, sync to the metastore if configured, and return the DML metrics row.

    Raises:
        MetaSyncFailed: the commit succeeded but the sync failed.
    """
    ctx.catalog.refresh(entry)
    ctx.last_write.metrics = metrics
    sync_after_commit(ctx, entry, table, options)
    return dml_result(ctx.spark, metrics)
