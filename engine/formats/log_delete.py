"""``HoodieDeleteBlock``: the deleted record keys of a log block, with their partition paths and ordering values
(docs/FORMAT.md §5)."""

from __future__ import annotations

import io
import json
import logging
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any, ClassVar

import fastavro
import pyarrow as pa

from engine.errors import CorruptFile, SchemaMismatch, UnsupportedTable
from engine.formats.log_block import (
    _I32,
    DATA_BLOCK_CONTENT_VERSION,
    BlockType,
    HeaderKey,
    LogBlock,
)

logger = logging.getLogger(__name__)

_DELETE_RECORD_LIST = "HoodieDeleteRecordList"
_WRAPPER_NAMESPACE = "org.apache.hudi.avro.model."

@dataclass(frozen=True)
class DeleteRecord:
    """One entry of a delete block (``DeleteRecord`` / Avro ``HoodieDeleteRecord``).

    Attributes:
        record_key: the key, or None.
        partition_path: the partition path, or None.
        ordering_value: the ordering value (Python value of the wrapper's ``value``), or None.
        ordering_type: wrapper record of the value: ``BooleanWrapper``, ``IntWrapper``, ``LongWrapper``,
            ``FloatWrapper``, ``DoubleWrapper``, ``BytesWrapper``, ``StringWrapper``, ``DateWrapper`` (epoch
            days), ``DecimalWrapper`` (decimal(30,15)), ``TimeMicrosWrapper``, ``TimestampMicrosWrapper``
            (epoch micros); None when ``ordering_value`` is None. Hudi picks it from the Java class of the
            ordering value (``HoodieAvroUtils.wrapValueIntoAvro``); Spark SQL DELETE writes ``IntWrapper(0)``.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = None
    ordering_type: str | None = None


_WRAPPERS = (
    "BooleanWrapper",
    "IntWrapper",
    "LongWrapper",
    "FloatWrapper",
    "DoubleWrapper",
    "BytesWrapper",
    "StringWrapper",
    "DateWrapper",
    "DecimalWrapper",
    "TimeMicrosWrapper",
    "TimestampMicrosWrapper",
)


def ordering_wrapper_for(arrow_type: pa.DataType) -> str:
    """The wrapper Hudi uses for an ordering field of this Arrow type when the value comes from an Avro
    record (int8/16/32 and date -> ``IntWrapper``... as Avro ints; int64 and timestamps -> ``LongWrapper``;
    float32 -> ``FloatWrapper``; float64 -> ``DoubleWrapper``; string -> ``StringWrapper``; binary ->
    ``BytesWrapper``; bool -> ``BooleanWrapper``; decimal -> ``DecimalWrapper``).

    Raises:
        SchemaMismatch: no wrapper for the type.
    """
    t = arrow_type
    if pa.types.is_boolean(t):
        return "BooleanWrapper"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_date32(t):
        return "IntWrapper"
    if pa.types.is_integer(t) or pa.types.is_timestamp(t):
        return "LongWrapper"
    if pa.types.is_float32(t):
        return "FloatWrapper"
    if pa.types.is_float64(t):
        return "DoubleWrapper"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "StringWrapper"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BytesWrapper"
    if pa.types.is_decimal(t):
        return "DecimalWrapper"
    raise SchemaMismatch(f"no delete-block ordering wrapper for type {t}")


@cache
def _delete_list_schema() -> Any:
    # Imported lazily: the timeline package loads every bundled .avsc on first use.
    from engine.timeline import avro_serde

    return fastavro.parse_schema(avro_serde.schema(_DELETE_RECORD_LIST))


@dataclass
class DeleteBlock(LogBlock):
    """``HoodieDeleteBlock``: content = int32 version 3, int32 length, then bare Avro binary of
    ``HoodieDeleteRecordList`` (versions 1/2 were Kryo and are not supported)."""

    block_type: ClassVar[BlockType] = BlockType.DELETE_BLOCK

    @classmethod
    def from_records(
        cls,
        deletes: Sequence[DeleteRecord],
        instant_time: str,
        schema: Mapping[str, Any] | str | None = None,
        extra_header: Mapping[int, str] | None = None,
    ) -> DeleteBlock:
        """Build a delete block. Java puts the SCHEMA header first, then INSTANT_TIME; so do we when
        ``schema`` is given.

        Raises:
            SchemaMismatch: an unknown wrapper name or a value that does not fit it.
        """
        header: dict[int, str] = {}
        if schema is not None:
            header[HeaderKey.SCHEMA] = (
                schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))
            )
        header[HeaderKey.INSTANT_TIME] = instant_time
        header.update(extra_header or {})
        items = []
        for d in deletes:
            ordering: Any = None
            if d.ordering_value is not None:
                if d.ordering_type not in _WRAPPERS:
                    raise SchemaMismatch(
                        f"delete record {d.record_key!r}: unknown ordering wrapper "
                        f"{d.ordering_type!r} (one of {', '.join(_WRAPPERS)})"
                    )
                value = d.ordering_value
                if d.ordering_type == "DecimalWrapper" and not isinstance(value, Decimal):
                    value = Decimal(value)
                ordering = (_WRAPPER_NAMESPACE + d.ordering_type, {"value": value})
            items.append(
                {"recordKey": d.record_key, "partitionPath": d.partition_path, "orderingVal": ordering}
            )
        buf = io.BytesIO()
        try:
            fastavro.schemaless_writer(buf, _delete_list_schema(), {"deleteRecordList": items})
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SchemaMismatch(f"delete records do not fit HoodieDeleteRecordList: {exc}") from exc
        payload = buf.getvalue()
        content = _I32.pack(DATA_BLOCK_CONTENT_VERSION) + _I32.pack(len(payload)) + payload
        return cls(header=header, content=content)

    def delete_records(self) -> list[DeleteRecord]:
        """Decode the deleted keys.

        Raises:
            UnsupportedTable: content version 1/2 (Kryo, pre-0.11).
            CorruptFile: undecodable content.
        """
        where = self.file_path or "<memory>"
        if len(self.content) < 8:
            raise CorruptFile(f"delete block in {where} is too short ({len(self.content)} bytes)")
        version, length = struct.unpack_from(">ii", self.content, 0)
        if version < 3:
            raise UnsupportedTable(
                f"delete block in {where} has content version {version} (Kryo, Hudi < 0.11)"
            )
        if length < 0 or 8 + length > len(self.content):
            raise CorruptFile(f"delete block in {where}: payload length {length} runs past the content")
        try:
            data = fastavro.schemaless_reader(
                io.BytesIO(self.content[8 : 8 + length]), _delete_list_schema(), None, return_record_name=True
            )
        except Exception as exc:  # fastavro raises assorted types on bad bytes
            raise CorruptFile(f"cannot decode delete block in {where}: {exc}") from exc
        out = []
        assert isinstance(data, dict)
        for item in data["deleteRecordList"]:
            ordering = item.get("orderingVal")
            if ordering is None:
                out.append(DeleteRecord(item.get("recordKey"), item.get("partitionPath")))
            else:
                name, value = ordering
                out.append(
                    DeleteRecord(
                        item.get("recordKey"),
                        item.get("partitionPath"),
                        value["value"],
                        name.rsplit(".", 1)[-1],
                    )
                )
        return out
