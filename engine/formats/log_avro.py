"""Avro data blocks of Hudi log files (``HoodieAvroDataBlock``, ``HoodieCDCDataBlock``; docs/FORMAT.md §5.2):
records encoded (from Arrow, columnar where :mod:`engine.formats.avro_encode` covers the schema) and decoded
(columnar through :mod:`engine.formats.avro_decode`, else fastavro), whole, in chunks, streamed from disk, or one
column only. The framing and the reader are in :mod:`engine.formats.log_format`, which re-exports these names.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import fastavro
import numpy as np
import pyarrow as pa

from engine.errors import CorruptFile, SchemaMismatch, StorageError
from engine.formats.avro_decode import covers, decode_leading_field, decode_spans
from engine.formats.avro_encode import encode_rows, frame_records
from engine.formats.avro_schema import avro_to_arrow
from engine.formats.log_block import (
    _I32,
    DATA_BLOCK_CONTENT_VERSION,
    BlockType,
    HeaderKey,
    LogBlock,
    _header,
    header_schema,
)
from engine.storage import Storage

CONTENT_WINDOW_BYTES = 4 * 1024 * 1024
"""Bytes of a block's content read from disk at a time when streaming it (:meth:`AvroDataBlock.iter_tables`)."""


class _ContentReader:
    """Windowed access to a block's content: in memory, or a byte range of a log file read
    ``CONTENT_WINDOW_BYTES`` at a time (a view stays valid only until the next :meth:`view`)."""

    def __init__(self, total: int, data: bytes | None = None, handle: pa.NativeFile | None = None,
                 offset: int = 0, where: str = "") -> None:
        self.total = total
        self._handle = handle
        self._offset = offset
        self._where = where
        self._buffer = memoryview(data if data is not None else b"")
        self._start = 0

    @classmethod
    def of_bytes(cls, data: bytes) -> _ContentReader:
        return cls(len(data), data=data)

    @classmethod
    def of_file(cls, storage: Storage, path: str, offset: int, length: int) -> _ContentReader:
        return cls(length, handle=storage.open_input(path), offset=offset, where=path)

    def view(self, pos: int, length: int) -> memoryview:
        """``length`` content bytes at content offset ``pos``.

        Raises:
            CorruptFile: the file ends before them.
            StorageError: the file cannot be read.
        """
        rel = pos - self._start
        if 0 <= rel and rel + length <= len(self._buffer):
            return self._buffer[rel:rel + length]
        if self._handle is None:
            raise CorruptFile(f"block content of {self.total} bytes has no bytes {pos}..{pos + length}")
        want = min(max(length, CONTENT_WINDOW_BYTES), self.total - pos)
        try:
            chunk = self._handle.read_at(want, self._offset + pos)
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot read log file {self._where}: {exc}") from exc
        if len(chunk) < length:
            raise CorruptFile(f"log file {self._where}: block content ends at {pos + len(chunk)} of "
                              f"{self.total} bytes (the file shrank since it was scanned)")
        self._buffer = memoryview(chunk)
        self._start = pos
        return self._buffer[:length]

    def window(self, pos: int, min_length: int) -> memoryview:
        """The content bytes buffered from content offset ``pos`` on, at least ``min_length`` of them (read
        from the file when fewer are buffered); valid until the next :meth:`view` or :meth:`window`.

        Raises:
            CorruptFile: the content ends before ``pos + min_length``.
            StorageError: the file cannot be read.
        """
        rel = pos - self._start
        if not (0 <= rel and rel + min_length <= len(self._buffer)):
            self.view(pos, min_length)
            rel = 0
        return self._buffer[rel:]

    def __enter__(self) -> _ContentReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()


def _record_views(data: memoryview, starts: np.ndarray, lengths: np.ndarray) -> list[memoryview]:
    """One view per record of a chunk from :meth:`AvroDataBlock._record_spans`."""
    return [data[start:start + length] for start, length in zip(starts.tolist(), lengths.tolist(), strict=True)]


@cache
def _parsed_avro(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


def _to_avro_value(value: Any, node: Any, named: dict[str, Any]) -> Any:
    """Convert one ``pa.Table.to_pylist`` value to what fastavro writes for schema ``node`` (maps come out
    of Arrow as ``[(key, value), ...]``; fastavro wants a dict)."""
    if value is None:
        return None
    if isinstance(node, str):
        return _to_avro_value(value, named[node], named) if node in named else value
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        return _to_avro_value(value, branches[0], named) if len(branches) == 1 else value
    kind = node.get("type")
    if isinstance(kind, (dict, list)):
        return _to_avro_value(value, kind, named)
    if kind == "record":
        named[node["name"]] = node
        if "namespace" in node:
            named[f"{node['namespace']}.{node['name']}"] = node
        return {f["name"]: _to_avro_value(value.get(f["name"]), f["type"], named) for f in node["fields"]}
    if kind == "array":
        return [_to_avro_value(v, node["items"], named) for v in value]
    if kind == "map":
        items = value.items() if isinstance(value, dict) else value
        return {k: _to_avro_value(v, node["values"], named) for k, v in items}
    return value


@dataclass
class AvroDataBlock(LogBlock):
    """``HoodieAvroDataBlock``: content = int32 version 3, int32 record count, then per record int32 length
    + schemaless Avro binary with the SCHEMA header as writer schema (no compression)."""

    block_type: ClassVar[BlockType] = BlockType.AVRO_DATA_BLOCK

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        schema: Mapping[str, Any] | str,
        instant_time: str,
        extra_header: Mapping[int, str] | None = None,
    ) -> AvroDataBlock:
        """Encode records (dicts in fastavro's representation) with ``schema`` (incl. meta fields).

        Raises:
            SchemaMismatch: a record does not fit the schema.
        """
        header = _header(instant_time, schema, extra_header)
        parsed = _parsed_avro(header[HeaderKey.SCHEMA])
        out = io.BytesIO()
        buf = io.BytesIO()
        count = 0
        for record in records:
            buf.seek(0)
            buf.truncate()
            try:
                fastavro.schemaless_writer(buf, parsed, record)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise SchemaMismatch(f"record {count} does not match the log block schema: {exc}") from exc
            payload = buf.getvalue()
            out.write(_I32.pack(len(payload)))
            out.write(payload)
            count += 1
        content = _I32.pack(DATA_BLOCK_CONTENT_VERSION) + _I32.pack(count) + out.getvalue()
        return cls(header=header, content=content)

    @classmethod
    def from_table(
        cls,
        table: pa.Table,
        schema: Mapping[str, Any] | str,
        instant_time: str,
        extra_header: Mapping[int, str] | None = None,
    ) -> AvroDataBlock:
        """Encode an Arrow table (columns named as the Avro fields; the meta columns included).

        Raises:
            SchemaMismatch: a value does not fit the schema.
        """
        avro = json.loads(schema) if isinstance(schema, str) else dict(schema)
        encoded = encode_rows(table, avro)
        if encoded is not None:
            header = _header(instant_time, avro, extra_header)
            content = (_I32.pack(DATA_BLOCK_CONTENT_VERSION) + _I32.pack(len(encoded)) + frame_records(encoded))
            return cls(header=header, content=content)
        named: dict[str, Any] = {}
        records = (_to_avro_value(row, avro, named) for row in table.to_pylist())
        return cls.from_records(records, avro, instant_time, extra_header)

    def _content(self, storage: Storage | None) -> _ContentReader:
        if self.is_content_loaded:
            return _ContentReader.of_bytes(self.content)
        if storage is None:
            raise CorruptFile(f"Avro data block at offset {self.offset} of {self.file_path}: content was left "
                              "on disk by a lazy read and no storage was given to read it")
        return _ContentReader.of_file(storage, self.file_path, self.content_offset, self.content_length)

    def _record_spans(self, chunk_rows: int, storage: Storage | None = None
                      ) -> Iterator[tuple[memoryview, np.ndarray, np.ndarray]]:
        """The records of the content (version 3: a record count, then per record a big-endian int32 length
        and the record's bytes) in chunks of at most ``chunk_rows``: ``(data, starts, lengths)``, the bytes
        holding the chunk's records and each record's offset in them and length (int64 arrays). ``data``
        is valid until the next chunk is taken.

        Raises:
            CorruptFile: no content version; a record length that is negative or runs past the content; fewer
                records than the count says.
            StorageError: the log file cannot be read.
        """
        where = self.file_path or "<memory>"
        unpack = _I32.unpack_from
        with self._content(storage) as data:
            total = data.total
            if total < 4:
                raise CorruptFile(f"Avro data block in {where} has no content version")
            (version,) = _I32.unpack(data.view(0, 4))
            pos = 4
            count = -1
            if version >= 2:
                (count,) = _I32.unpack(data.view(pos, 4))
                pos += 4
            seen = 0
            chunk_bytes = 4  # bytes a whole chunk is expected to take (from the records read so far)
            while pos + 4 <= total and (count < 0 or seen < count):
                window = data.window(pos, min(chunk_bytes, total - pos))
                (length,) = unpack(window, 0)
                if length < 0 or pos + 4 + length > total:
                    raise CorruptFile(f"Avro data block in {where}: record {seen} runs past the content")
                if 4 + length > len(window):
                    window = data.window(pos, 4 + length)
                wanted = chunk_rows if count < 0 else min(chunk_rows, count - seen)
                limit = len(window)
                starts: list[int] = []
                lengths: list[int] = []
                offset = 0
                while len(starts) < wanted and offset + 4 <= limit:
                    (length,) = unpack(window, offset)
                    if length < 0 or pos + offset + 4 + length > total:
                        raise CorruptFile(f"Avro data block in {where}: record {seen + len(starts)} runs past "
                                          "the content")
                    if offset + 4 + length > limit:
                        break
                    starts.append(offset + 4)
                    lengths.append(length)
                    offset += 4 + length
                yield (window[:offset], np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64))
                # A window that would cut the next chunk short is read afresh from the chunk's start, so
                # chunks stay whole (up to the window size).
                chunk_bytes = min(CONTENT_WINDOW_BYTES, offset * chunk_rows // len(starts) + offset // 8 + 4)
                seen += len(starts)
                pos += offset
            if count >= 0 and seen != count:
                raise CorruptFile(f"Avro data block in {where}: {seen} of {count} records")

    def _payloads(self, storage: Storage | None = None) -> Iterator[memoryview]:
        for chunk in self._payload_chunks(1 << 16, storage):
            yield from chunk

    def record_count_from(self, storage: Storage | None = None) -> int:
        """Number of records from the content header, reading just that header when a lazy read left the
        content on disk (``storage`` is then required).

        Raises:
            CorruptFile: the content is too short, or left on disk and ``storage`` is None.
        """
        with self._content(storage) as data:
            if data.total >= 8 and _I32.unpack(data.view(0, 4))[0] >= 2:
                return int(_I32.unpack(data.view(4, 4))[0])
        return sum(1 for _ in self._payloads(storage))

    @property
    def record_count(self) -> int:
        """Number of records (from the content header)."""
        return self.record_count_from(None)

    def _payload_chunks(self, chunk_rows: int, storage: Storage | None = None) -> Iterator[list[memoryview]]:
        for data, starts, lengths in self._record_spans(chunk_rows, storage):
            yield _record_views(data, starts, lengths)

    def _fastavro_records(self, payloads: list[memoryview], writer: Any, reader: Any) -> list[dict[str, Any]]:
        where = self.file_path or "<memory>"
        out: list[dict[str, Any]] = []
        try:
            for payload in payloads:
                record = fastavro.schemaless_reader(io.BytesIO(payload), writer, reader)
                if not isinstance(record, dict):
                    raise CorruptFile(f"Avro data block in {where}: schema is not a record")
                out.append(record)
        except CorruptFile:
            raise
        except Exception as exc:  # fastavro raises assorted types on bad bytes
            raise CorruptFile(f"cannot decode Avro data block in {where}: {exc}") from exc
        return out

    def _record_chunks(self, reader_schema: Mapping[str, Any] | None, chunk_rows: int,
                       storage: Storage | None = None) -> Iterator[list[dict[str, Any]]]:
        if not self.schema_json:
            raise CorruptFile(f"Avro data block in {self.file_path or '<memory>'} has no SCHEMA header")
        writer = _parsed_avro(self.schema_json)
        reader = fastavro.parse_schema(dict(reader_schema)) if reader_schema is not None else None
        for payloads in self._payload_chunks(chunk_rows, storage):
            yield self._fastavro_records(payloads, writer, reader)

    def records(self, reader_schema: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Decode every record with the SCHEMA header (optionally resolved to ``reader_schema``).

        Raises:
            CorruptFile: missing schema header or undecodable bytes.
        """
        return [r for chunk in self._record_chunks(reader_schema, 1 << 62) for r in chunk]

    def iter_tables(self, chunk_rows: int = 16384, storage: Storage | None = None) -> Iterator[pa.Table]:
        """The records as Arrow tables of at most ``chunk_rows`` rows each (typed by ``avro_to_arrow`` of
        the SCHEMA header): decoding a large block this way holds one chunk of Python records at a time.

        When a lazy read left the content on disk, pass ``storage``: the content is then streamed from the
        log file in windows of :data:`CONTENT_WINDOW_BYTES` instead of being loaded whole (Hudi loads
        the whole block; a 200 MB block would otherwise sit in memory for the whole decode).

        Raises:
            CorruptFile: undecodable content; content left on disk without ``storage``.
            StorageError: the log file cannot be read.
        """
        if not self.schema_json:
            raise CorruptFile(f"Avro data block in {self.file_path or '<memory>'} has no SCHEMA header")
        writer_schema = header_schema(self.schema_json, self.file_path)
        schema = avro_to_arrow(writer_schema)
        columnar = covers(writer_schema)
        writer = _parsed_avro(self.schema_json)
        for data, starts, lengths in self._record_spans(chunk_rows, storage):
            table = decode_spans(data, starts, lengths, writer_schema, schema) if columnar else None
            if table is not None:
                yield table
                continue
            chunk = self._fastavro_records(_record_views(data, starts, lengths), writer, None)
            try:
                yield pa.Table.from_pylist(chunk, schema=schema)
            except (pa.ArrowException, TypeError, ValueError) as exc:
                raise CorruptFile(
                    f"Avro data block in {self.file_path or '<memory>'} does not convert to Arrow: {exc}"
                ) from exc

    def column_values(self, name: str, storage: Storage | None = None, chunk_rows: int = 65536) -> pa.Array:
        """One column of every record, e.g. the record keys (``_hoodie_record_key``), decoding each record only
        up to that field when its leading fields are of types :mod:`engine.formats.avro_decode` covers (Hudi's
        meta fields come first), else decoding whole records.

        Args:
            name: the field (Avro name, as written).
            storage: needed when a lazy read left the content on disk.
            chunk_rows: records decoded at a time.

        Returns:
            A string or other Arrow array (``avro_to_arrow`` of the field), one value per record; all nulls
            when the writer schema has no such field.

        Raises:
            CorruptFile: no SCHEMA header; undecodable content.
            StorageError: the log file cannot be read.
        """
        if not self.schema_json:
            raise CorruptFile(f"Avro data block in {self.file_path or '<memory>'} has no SCHEMA header")
        writer_schema = header_schema(self.schema_json, self.file_path)
        arrow = avro_to_arrow(writer_schema)
        index = arrow.get_field_index(name)
        if index < 0:
            return pa.nulls(self.record_count_from(storage), pa.string())
        typ = arrow.field(index).type
        pieces: list[pa.Array] = []
        for data, starts, lengths in self._record_spans(chunk_rows, storage):
            values = decode_leading_field(data, starts, lengths, writer_schema, name, typ)
            if values is None:
                return pa.concat_arrays([t.column(name).combine_chunks()
                                         for t in self.iter_tables(chunk_rows, storage)] or [pa.array([], typ)])
            pieces.append(values)
        return pa.concat_arrays(pieces) if pieces else pa.array([], typ)

    def to_table(self) -> pa.Table:
        """The records as one Arrow table typed by ``avro_to_arrow`` of the SCHEMA header.

        Raises:
            CorruptFile: undecodable content.
        """
        if not self.schema_json:
            raise CorruptFile(f"Avro data block in {self.file_path or '<memory>'} has no SCHEMA header")
        schema = avro_to_arrow(header_schema(self.schema_json, self.file_path))
        return pa.concat_tables([schema.empty_table(), *self.iter_tables()])


@dataclass
class CdcDataBlock(AvroDataBlock):
    """``HoodieCDCDataBlock`` (CDC logs, :mod:`engine.formats.cdc`): an Avro data block of CDC records (the
    SCHEMA header is the CDC record schema); only CDC readers decode it, file-slice merges skip it."""

    block_type: ClassVar[BlockType] = BlockType.CDC_DATA_BLOCK


__all__ = ["CONTENT_WINDOW_BYTES", "AvroDataBlock", "CdcDataBlock"]
