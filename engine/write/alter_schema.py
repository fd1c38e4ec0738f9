"""Committing a schema change (ALTER TABLE with schema on read): Hudi ``AlterTableCommand.commitWithSchema``.

The change is an ``ALTER_SCHEMA`` commit (``commit`` on copy-on-write, ``deltacommit`` on merge-on-read)
without data whose ``extraMetadata`` holds the new Avro ``schema`` and the new internal schema
(``latest_schema``, version = the instant), and whose instant has a history file
``.hoodie/.schema/<instant>.schemacommit``. The first change of a table also puts the schema it had before
into the history, as version 0, so files written before keep their column ids.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from engine.config import HoodieConfig
from engine.errors import SchemaEvolutionError
from engine.schema.history import LATEST_SCHEMA, SchemaHistory, avro_of, inherit, persist_history
from engine.schema.internal_schema import InternalSchema
from engine.table import Table
from engine.write.commit import finish_write, start_write
from engine.write.operation import WriteOperation
from engine.write.rollback import rollback_instant

logger = logging.getLogger(__name__)


def current_internal_schema(table: Table) -> tuple[InternalSchema, str]:
    """The table's internal schema and history text: the newest history entry, or (a table that never
    evolved on read) the schema derived from its Avro schema, meta fields included when the table
    populates them, and an empty history (Hudi ``AlterTableCommand.getInternalSchemaAndHistorySchemaStr``).

    Raises:
        SchemaEvolutionError: the table has no schema yet.
    """
    history = SchemaHistory.load(table)
    if history is not None:
        return history.latest, history.text
    avro = table.latest_avro_schema(include_meta=table.populate_meta_fields)
    if avro is None:
        raise SchemaEvolutionError(f"table {table.name} at {table.base_path} has no schema to change yet")
    return InternalSchema.from_avro(avro), ""


def commit_schema_change(table: Table, change: Callable[[InternalSchema], InternalSchema],
                         conf: HoodieConfig | None = None) -> InternalSchema:
    """Apply ``change`` to the table's internal schema and commit the result.

    ``change`` runs before anything is written, so a refused change (it raises) leaves the table as it was;
    a failure while committing rolls the instant back.

    Returns:
        The committed schema (its version is the commit's instant).

    Raises:
        SchemaEvolutionError: the table has no schema, or ``change`` refused the change.
        ConcurrentWriteError: another writer is live.
    """
    old, history_text = current_internal_schema(table)
    new = change(old)
    if not history_text:
        history_text = inherit(old, "")
    instant = start_write(table, WriteOperation.ALTER_SCHEMA, conf)
    try:
        latest = new.with_version(int(instant.timestamp))
        persist_history(table, instant.timestamp, inherit(latest, history_text))
        finish_write(table, instant, WriteOperation.ALTER_SCHEMA, [], avro_of(latest, table.name),
                     extra_metadata={LATEST_SCHEMA: latest.to_json()}, conf=conf)
    except BaseException:
        logger.info("schema change of %s failed; rolling back %s", table.base_path, instant.timestamp)
        rollback_instant(table, instant)
        raise
    return latest
