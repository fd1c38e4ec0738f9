"""CDC logs of a file-group rewrite (Hudi ``HoodieCDCLogger`` inside ``HoodieMergeHandleWithChangeLog``).

When ``hoodie.table.cdc.enabled`` is on, a merge that rewrites a file group's base file also records what
changed: one CDC record per updated, deleted or inserted key, written to
``.<fileId>_<instant>.log.1_<writeToken>.cdc`` in the partition as one ``CDC_DATA_BLOCK``. Its relative path
and size go to the write stat's ``cdcStats``. A CREATE marker names the file, so a rollback of the write
deletes it with the base file.

Differences from Hudi, on purpose: Hudi skips the CDC log when the rewrite kept no stored record (everything
deleted, or only inserts into an emptied file) and then cannot answer CDC queries for an ``upsert`` that
emptied a file group ("There should be a cdc log file"); here the log is written whenever a record changed.
A rewrite that changed nothing writes no CDC log (Hudi writes an empty block).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from engine.config import TableConfig
from engine.filegroup.naming import LogFileName
from engine.formats.avro_schema import META_FIELDS
from engine.formats.cdc import (
    CDC_AFTER_IMAGE,
    CDC_BEFORE_IMAGE,
    CDC_COMMIT_TIMESTAMP,
    CDC_OPERATION_TYPE,
    CDC_RECORD_KEY,
    DELETE,
    INSERT,
    UPDATE,
    SupplementalLoggingMode,
    cdc_avro_schema,
)
from engine.formats.log_format import CdcDataBlock, LogWriter
from engine.write.markers import IOType, Marker, create_marker

logger = logging.getLogger(__name__)


# A structural type for the write context (engine.write.handles.WriteContext), to keep this module free of
# an import cycle with the handles that call it.
class WriteContextLike(Protocol):
    """What :func:`write_cdc_log` reads from ``engine.write.handles.WriteContext``."""

    @property
    def storage(self) -> Any: ...
    @property
    def base_path(self) -> str: ...
    @property
    def instant_time(self) -> str: ...
    @property
    def avro_schema(self) -> dict[str, Any]: ...
    @property
    def props(self) -> dict[str, str]: ...


def cdc_enabled(props: dict[str, str]) -> bool:
    """Whether the table writes CDC logs (``hoodie.table.cdc.enabled``)."""
    return str(props.get(TableConfig.CDC_ENABLED.key, "false")).strip().lower() == "true"


def _image(table: pa.Table, indices: list[int | None]) -> pa.Array:
    """Rows ``indices`` of ``table``'s data columns as one struct column (``None`` → a null image)."""
    data = table.select([n for n in table.column_names if n not in META_FIELDS]).combine_chunks()
    struct = pa.StructArray.from_arrays(
        [c.chunk(0) if c.num_chunks else pa.array([], c.type) for c in data.columns],
        fields=list(data.schema))
    return struct.take(pa.array(indices, pa.int64()))


def write_cdc_log(
    ctx: WriteContextLike,
    partition: str,
    file_id: str,
    write_token: str,
    *,
    old: pa.Table,
    new: pa.Table,
    updated: np.ndarray,
    updated_from: np.ndarray,
    deleted: np.ndarray,
    inserted: np.ndarray,
    old_keys: pa.Array,
    new_keys: pa.Array,
) -> dict[str, int] | None:
    """Write the CDC log of one file-group rewrite.

    Args:
        ctx: the write context (storage, base path, instant, table Avro schema, props).
        partition: relative partition path.
        file_id: the file group.
        write_token: the task's write token (same as the new base file's).
        old: the stored rows (meta columns included) as read from the previous base file.
        new: the incoming rows as written (meta columns included).
        updated: indices into ``old`` of the updated records.
        updated_from: for each of ``updated``, the index into ``new`` of the row that replaced it.
        deleted: indices into ``old`` of the deleted records.
        inserted: indices into ``new`` of the inserted records.
        old_keys: record keys of ``old`` (aligned).
        new_keys: record keys of ``new`` (aligned).

    Returns:
        ``{"<partition>/<cdc log name>": size}`` for the write stat's ``cdcStats``, or ``None`` when nothing
        changed (no file written).

    Raises:
        ConfigError: an unknown ``hoodie.table.cdc.supplemental.logging.mode``.
        SchemaMismatch: an image that does not fit the table's Avro schema.
        StorageError: the log or its marker cannot be written.
    """
    total = len(updated) + len(deleted) + len(inserted)
    if total == 0:
        return None
    mode = SupplementalLoggingMode.parse(ctx.props.get(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key),
                                         ctx.base_path)
    ops = [UPDATE] * len(updated) + [DELETE] * len(deleted) + [INSERT] * len(inserted)
    keys = pa.concat_arrays([
        old_keys.take(pa.array(updated, pa.int64())).cast(pa.string()),
        old_keys.take(pa.array(deleted, pa.int64())).cast(pa.string()),
        new_keys.take(pa.array(inserted, pa.int64())).cast(pa.string()),
    ])
    columns: dict[str, pa.Array] = {CDC_OPERATION_TYPE: pa.array(ops, pa.string())}
    if mode is SupplementalLoggingMode.DATA_BEFORE_AFTER:
        columns[CDC_COMMIT_TIMESTAMP] = pa.array([ctx.instant_time] * total, pa.string())
    else:
        columns[CDC_RECORD_KEY] = keys
    if mode is not SupplementalLoggingMode.OP_KEY_ONLY:
        before: list[int | None] = [*updated.tolist(), *deleted.tolist(), *([None] * len(inserted))]
        columns[CDC_BEFORE_IMAGE] = _image(old, before)
    if mode is SupplementalLoggingMode.DATA_BEFORE_AFTER:
        after: list[int | None] = [*updated_from.tolist(), *([None] * len(deleted)), *inserted.tolist()]
        columns[CDC_AFTER_IMAGE] = _image(new, after)
    schema = cdc_avro_schema(mode, ctx.avro_schema)
    block = CdcDataBlock.from_table(pa.table(columns), schema, ctx.instant_time)
    name = LogFileName(file_id, ctx.instant_time, "log", 1, write_token, is_cdc=True).name
    create_marker(ctx.storage, ctx.base_path, ctx.instant_time, Marker(partition, name, IOType.CREATE))
    folder = ctx.storage.join(ctx.base_path, partition) if partition else ctx.base_path
    with LogWriter(ctx.storage, ctx.storage.join(folder, name)) as writer:
        writer.append_block(block)
    size = writer.size
    logger.debug("%s: CDC log %s with %d record(s) (%s)", ctx.base_path, name, total, mode.value)
    return {f"{partition}/{name}" if partition else name: size}


__all__ = ["WriteContextLike", "cdc_enabled", "write_cdc_log"]
