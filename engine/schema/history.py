"""The schema history of a table with schema on read, and reading files written under older schemas.

Storage, as Hudi's ``FileBasedInternalSchemaStorageManager``: ``.hoodie/.schema/<instant>.schemacommit``
holds the whole history as ``{"schemas":[<newest>, ..., <oldest>]}`` (each an internal schema, Hudi
``SerDeHelper``), written through ``<instant>.schemacommit.requested`` and ``.inflight`` like a timeline
instant. Only files whose instant is a completed commit count; the newest such file is the history. Each
commit of such a table also carries its schema in ``extraMetadata.latest_schema``.

A file written at instant *t* was written with the newest schema whose version is ≤ *t* (Hudi
``InternalSchemaUtils.searchSchema``); :class:`SchemaEvolution` renames its columns, by column id, to the
names of the schema a query reads, and drops columns the query schema no longer has (a column dropped and
added again under the same name is a new column: old values do not come back).
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from engine.errors import CorruptFile
from engine.formats.avro_schema import META_FIELDS, add_meta_fields, arrow_to_avro
from engine.schema.changes import reconcile
from engine.schema.internal_schema import ArrayType, InternalSchema, InternalType, MapType, RecordType

if TYPE_CHECKING:
    from engine.table import Table

logger = logging.getLogger(__name__)

SCHEMA_FOLDER = ".schema"
"""Folder under ``.hoodie`` holding the history files (Hudi ``FileBasedInternalSchemaStorageManager.SCHEMA_NAME``)."""
SCHEMA_COMMIT = "schemacommit"
"""Action name of the history files (Hudi ``HoodieTimeline.SCHEMA_COMMIT_ACTION``)."""
LATEST_SCHEMA = "latest_schema"
"""``extraMetadata`` key of a commit's internal schema (Hudi ``SerDeHelper.LATEST_SCHEMA``)."""
_HISTORY_PREFIX = '{"schemas":['


def schema_folder(table: Table) -> str:
    """``<base>/.hoodie/.schema``."""
    return table.storage.join(table.meta_path, SCHEMA_FOLDER)


def _completed(table: Table) -> set[str]:
    return {i.timestamp for i in table.timeline.completed_commits()}


def read_history_text(table: Table) -> str:
    """The newest history file of a completed instant, as text, or ``""`` when there is none (Hudi
    ``getHistorySchemaStr``)."""
    folder = schema_folder(table)
    storage = table.storage
    candidates = [info.name for info in storage.list_dir(folder)
                  if not info.is_dir and info.name.endswith("." + SCHEMA_COMMIT)]
    if not candidates:
        return ""
    completed = _completed(table)
    names = sorted(name for name in candidates if name.split(".")[0] in completed)
    if not names:
        return ""
    return storage.read_bytes(storage.join(folder, names[-1])).decode("utf-8")


def parse_history(text: str, source: str = "") -> tuple[InternalSchema, ...]:
    """The schemas of a history text, oldest first (Hudi ``SerDeHelper.parseSchemas``).

    Raises:
        CorruptFile: not a schema history.
    """
    try:
        node = json.loads(text)
        schemas = [InternalSchema.from_json(s) for s in node["schemas"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFile(f"schema history {source or '?'} is not valid: {exc}") from exc
    return tuple(sorted(schemas, key=lambda s: s.version_id))


def inherit(new: InternalSchema, old_text: str) -> str:
    """The history text with ``new`` put first (Hudi ``SerDeHelper.inheritSchemas``, a string operation)."""
    if not old_text:
        return _HISTORY_PREFIX + new.to_json() + "]}"
    if not old_text.startswith(_HISTORY_PREFIX):
        raise CorruptFile("schema history does not start with {\"schemas\":[")
    return _HISTORY_PREFIX + new.to_json() + "," + old_text[len(_HISTORY_PREFIX):]


def persist_history(table: Table, instant: str, text: str) -> None:
    """Write ``.hoodie/.schema/<instant>.schemacommit`` (through ``.requested`` and ``.inflight``, Hudi
    ``persistHistorySchemaStr``), first deleting history files of instants that never completed."""
    storage = table.storage
    folder = schema_folder(table)
    completed = _completed(table)
    for info in storage.list_dir(folder):
        if not info.is_dir and info.name.split(".")[0] not in completed | {instant}:
            storage.delete(info.path)
    base = storage.join(folder, f"{instant}.{SCHEMA_COMMIT}")
    storage.write_bytes(base + ".requested", b"")
    storage.write_bytes(base + ".inflight", b"")
    storage.write_bytes(base, text.encode("utf-8"))


@dataclass(frozen=True)
class SchemaHistory:
    """The committed internal schemas of a table, oldest first, and the history text they came from."""

    schemas: tuple[InternalSchema, ...]
    text: str

    @staticmethod
    def load(table: Table) -> SchemaHistory | None:
        """The table's history, or None when it never evolved its schema on read.

        Raises:
            CorruptFile: an unreadable history file.
        """
        text = read_history_text(table)
        if not text:
            return None
        return SchemaHistory(parse_history(text, schema_folder(table)), text)

    def search(self, instant: str | int) -> InternalSchema | None:
        """The newest schema whose version is ≤ ``instant``, or None (Hudi ``InternalSchemaUtils.searchSchema``)."""
        versions = [s.version_id for s in self.schemas]
        index = bisect.bisect_right(versions, int(instant))
        return self.schemas[index - 1] if index else None

    @property
    def latest(self) -> InternalSchema:
        """The newest schema."""
        return self.schemas[-1]


def table_internal_schema(table: Table, as_of: str | None = None) -> InternalSchema | None:
    """The internal schema of ``table`` as of ``as_of`` (latest when None), or None when the table has no
    schema history (Hudi ``TableSchemaResolver.getTableInternalSchemaFromCommitMetadata``)."""
    history = SchemaHistory.load(table)
    if history is None:
        return None
    return history.search(as_of) if as_of is not None else history.latest


def record_write_schema(table: Table, instant: str, write_avro: Mapping[str, Any]) -> tuple[dict[str, Any], str] | None:
    """For a write committing at ``instant`` to a table with a schema history (Hudi
    ``BaseHoodieWriteClient.saveInternalSchema``): the table schema reconciled with the write's (new top-level
    columns added with new ids; a new version when it changed), persisted as the history file of ``instant``.

    Returns:
        ``(Avro schema without meta fields for extraMetadata.schema, latest_schema JSON)``, or None when the
        table has no schema history (nothing is written then).
    """
    history = SchemaHistory.load(table)
    if history is None:
        return None
    current = history.search(instant) or history.latest
    evolved = reconcile(current, InternalSchema.from_avro(add_meta_fields(dict(write_avro))))
    if evolved == current:
        latest, text = current, history.text
    else:
        latest = evolved.with_version(int(instant))
        text = inherit(latest, history.text)
    persist_history(table, instant, text)
    return avro_of(latest, table.name), latest.to_json()


def avro_of(schema: InternalSchema, table_name: str) -> dict[str, Any]:
    """The Avro schema (without meta fields, as ``extraMetadata.schema``) of an internal schema."""
    data = pa.schema([f for f in schema.to_arrow() if f.name not in META_FIELDS])
    return arrow_to_avro(data, table_name)


@dataclass(frozen=True)
class SchemaEvolution:
    """How to read files of a table whose schema evolved on read (picklable; built on the driver).

    Attributes:
        query: the schema the reader produces (names are the query's).
        schemas: every committed schema, oldest first.
    """

    query: InternalSchema
    schemas: tuple[InternalSchema, ...]

    @staticmethod
    def of(table: Table, as_of: str | None = None) -> SchemaEvolution | None:
        """The evolution of ``table`` read as of ``as_of`` (latest when None), or None when the table has
        no schema history."""
        history = SchemaHistory.load(table)
        if history is None:
            return None
        query = history.search(as_of) if as_of is not None else history.latest
        if query is None:
            return None
        return SchemaEvolution(query, history.schemas)

    def file_schema(self, instant: str | None) -> InternalSchema | None:
        """The schema a file written at ``instant`` was written with, or None (read by name then)."""
        if not instant or not instant.isdigit():
            return None
        versions = [s.version_id for s in self.schemas]
        index = bisect.bisect_right(versions, int(instant))
        return self.schemas[index - 1] if index else None

    def file_columns(self, available: list[str], requested: list[str], instant: str | None) -> list[str]:
        """Names of the file's columns that hold the query columns ``requested`` (by id), plus requested
        names the schemas do not know (meta columns of tables without them in the schema), read by name."""
        lowered = {n.lower(): n for n in available}
        file_schema = self.file_schema(instant)
        out: list[str] = []
        for name in requested:
            column = None
            query_field = self.query.record.field(name)
            if file_schema is not None and query_field is not None:
                by_id = next((f for f in file_schema.fields if f.id == query_field.id), None)
                column = lowered.get(by_id.name.lower()) if by_id is not None else None
            elif query_field is None or file_schema is None:
                column = lowered.get(name.lower())
            if column is not None and column not in out:
                out.append(column)
        return out

    def align(self, data: pa.Table, instant: str | None) -> pa.Table:
        """``data`` (columns of a file written at ``instant``) with its columns renamed by id to the query's
        names, columns the query schema lacks dropped, nested struct fields likewise. Types are left as
        written (the caller conforms them)."""
        file_schema = self.file_schema(instant)
        if file_schema is None or file_schema.version_id == self.query.version_id:
            return data
        query_ids = {f.id: f for f in self.query.fields}
        arrays, names = [], []
        for name, column in zip(data.column_names, data.columns, strict=True):
            file_field = file_schema.record.field(name)
            if file_field is None:
                if self.query.record.field(name) is None:  # unknown to both schemas: kept by name
                    arrays.append(column)
                    names.append(name)
                continue
            query_field = query_ids.get(file_field.id)
            if query_field is None:
                continue
            arrays.append(_rename(column, file_field.type, query_field.type))
            names.append(query_field.name)
        return pa.Table.from_arrays(arrays, names=names)


def _rename(column: pa.ChunkedArray | pa.Array, file_type: InternalType, query_type: InternalType) -> pa.Array:
    if isinstance(file_type, str) or isinstance(query_type, str):
        return column
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 0:
            return column
        column = column.combine_chunks() if column.num_chunks > 1 else column.chunk(0)
    if isinstance(file_type, RecordType) and isinstance(query_type, RecordType) and pa.types.is_struct(column.type):
        by_id = {f.id: f for f in query_type.fields}
        children, fields = [], []
        for i in range(column.type.num_fields):
            child_field = column.type.field(i)
            file_field = file_type.field(child_field.name)
            if file_field is None:
                children.append(column.field(i))
                fields.append(child_field)
                continue
            query_field = by_id.get(file_field.id)
            if query_field is None:
                continue
            child = _rename(column.field(i), file_field.type, query_field.type)
            children.append(child)
            fields.append(pa.field(query_field.name, child.type, nullable=child_field.nullable))
        if not fields:
            return pa.nulls(len(column), pa.struct([]))
        mask = column.is_null() if column.null_count else None
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if isinstance(file_type, ArrayType) and isinstance(query_type, ArrayType) and pa.types.is_list(column.type):
        values = _rename(column.values, file_type.element, query_type.element)
        mask = column.is_null() if column.null_count else None
        return pa.ListArray.from_arrays(column.offsets, values, mask=mask)
    if isinstance(file_type, MapType) and isinstance(query_type, MapType) and pa.types.is_map(column.type):
        items = _rename(column.items, file_type.value, query_type.value)
        mask = column.is_null() if column.null_count else None
        return pa.MapArray.from_arrays(column.offsets, column.keys, items, mask=mask)
    return column
