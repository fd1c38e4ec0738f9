"""Hudi log files (log format version 1, table version 6): the data blocks and the reader; every log name is
importable from here. The framing and record-less blocks are in :mod:`engine.formats.log_block`, delete
blocks in :mod:`engine.formats.log_delete`, parquet blocks in :mod:`engine.formats.log_parquet`, the writer in
:mod:`engine.formats.log_writer`.

Mirrors ``org.apache.hudi.common.table.log``: ``HoodieLogFormatWriter``, ``HoodieLogFileReader`` and the
blocks ``HoodieAvroDataBlock``, ``HoodieParquetDataBlock``, ``HoodieDeleteBlock``, ``HoodieCommandBlock`` and
``HoodieCorruptBlock`` (docs/FORMAT.md §5).

**Framing** (all integers big-endian)::

    "#HUDI#" | int64 blockSize | int32 version(=1) | int32 blockType | header map | int64 contentLength
    | content | footer map | int64 reversePointer(= blockSize + 6)

``blockSize`` counts every byte after itself up to and including the reverse pointer. A map is ``int32
count`` then per entry ``int32 key ordinal, int32 value length, UTF-8 value``; entry order is kept as read
(Java iterates a HashMap, so any order occurs) and re-encoded as is.

**Corruption** (``HoodieLogFileReader.isBlockCorrupted`` / ``createCorruptBlock``): a block is corrupt when
its size is negative, runs past the end of the file, disagrees with the reverse pointer, or is not followed
by a magic or the end of the file. The reader then scans forward from just after that block's magic for
the next ``#HUDI#``, yields a :class:`CorruptBlock` holding the skipped bytes and resumes there. Unlike
Java, a block whose header/content does not parse, an unknown block type and a file not starting with a
magic also become corrupt blocks instead of exceptions: :func:`read_log_blocks` never raises on bad bytes.
Fewer than 6 trailing bytes are ignored (Java's ``readMagic`` hits EOF and stops).
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import struct
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
    _I64,
    DATA_BLOCK_CONTENT_VERSION,
    LOG_FORMAT_VERSION,
    MAGIC,
    ROLLBACK_COMMAND,
    BlockType,
    CommandBlock,
    CorruptBlock,
    HeaderKey,
    HFileDataBlock,
    LogBlock,
    _decode_metadata,
    _header,
    encode_metadata,
    header_schema,
)
from engine.formats.log_delete import DeleteBlock, DeleteRecord, ordering_wrapper_for
from engine.formats.log_parquet import ParquetDataBlock
from engine.formats.log_source import LogSource, corrupt_region
from engine.formats.log_writer import LogWriter
from engine.storage import Storage

logger = logging.getLogger(__name__)


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


_BLOCK_CLASSES: dict[int, type[LogBlock]] = {
    BlockType.COMMAND_BLOCK: CommandBlock,
    BlockType.DELETE_BLOCK: DeleteBlock,
    BlockType.AVRO_DATA_BLOCK: AvroDataBlock,
    BlockType.HFILE_DATA_BLOCK: HFileDataBlock,
    BlockType.PARQUET_DATA_BLOCK: ParquetDataBlock,
    BlockType.CDC_DATA_BLOCK: CdcDataBlock,
}


# --------------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------------


_LAZY_HEAD_READ = 256 * 1024
"""Bytes read to parse a block's header when its content is left on disk."""


def _parse_lazily(source: LogSource, name: str, magic_pos: int, body_start: int, body_length: int,
                  end: int, type_ordinal: int, head: bytes) -> LogBlock | None:
    """The block with its content left on disk, from the first bytes of its body (``head``); ``None``
    when the header does not fit in ``head`` (the caller then reads the whole body)."""
    try:
        header, pos = _decode_metadata(head, 8, len(head))
        if pos + 8 > len(head):
            return None
        (content_length,) = _I64.unpack_from(head, pos)
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    content_offset = body_start + pos + 8
    if content_length < 0 or content_offset + content_length > body_start + body_length:
        return None
    tail = source.read(content_offset + content_length, body_start + body_length - content_offset - content_length)
    try:
        footer, footer_end = _decode_metadata(tail, 0, len(tail))
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    if footer_end != len(tail):
        return None
    cls = _BLOCK_CLASSES[type_ordinal]
    return cls(header=header, footer=footer, file_path=name, offset=magic_pos, size=end - magic_pos,
               content_offset=content_offset, content_length=content_length)


def _parse_block(source: LogSource, name: str, magic_pos: int, lazy: bool = False) -> tuple[LogBlock, int]:
    """Parse the block whose magic is at ``magic_pos``; returns it and the offset after it. ``lazy``
    leaves large contents on disk (:func:`load_block_content` reads them)."""
    start = magic_pos + len(MAGIC)  # Java's blockStartPos

    def corrupt(reason: str) -> tuple[LogBlock, int]:
        return corrupt_region(source, name, start, reason, magic_pos)

    raw_size = source.read(start, 8)
    if len(raw_size) < 8:
        return corrupt("truncated block size")
    block_size = int(_I64.unpack(raw_size)[0])
    body_start = start + 8
    if block_size < 0 or block_size > 2**31 - 1:
        return corrupt(f"block size {block_size} is invalid")
    if body_start + block_size > source.size:
        return corrupt(f"block size {block_size} runs past the end of the file")
    if block_size < 8 + 8:
        return corrupt(f"block size {block_size} is too small")
    end = body_start + block_size
    (reverse,) = _I64.unpack(source.read(end - 8, 8))
    if reverse - len(MAGIC) != block_size:
        return corrupt(f"block size {block_size} does not match reverse pointer {reverse}")
    following = source.read(end, len(MAGIC))
    if len(following) == len(MAGIC) and following != MAGIC:
        return corrupt("no magic after the block")
    body_length = block_size - 8
    if lazy and body_length > _LAZY_HEAD_READ:
        head = source.read(body_start, _LAZY_HEAD_READ)
        version, type_ordinal = struct.unpack_from(">ii", head, 0)
        if version == LOG_FORMAT_VERSION and 0 <= type_ordinal <= 6 and type_ordinal != BlockType.CORRUPT_BLOCK:
            lazy_block = _parse_lazily(source, name, magic_pos, body_start, body_length, end, type_ordinal, head)
            if lazy_block is not None:
                return lazy_block, end
    body = source.read(body_start, body_length)
    try:
        version, type_ordinal = struct.unpack_from(">ii", body, 0)
        if version != LOG_FORMAT_VERSION:
            raise ValueError(f"log format version {version} is not supported")
        if not 0 <= type_ordinal <= 6 or type_ordinal == BlockType.CORRUPT_BLOCK:
            raise ValueError(f"unknown block type {type_ordinal}")
        header, pos = _decode_metadata(body, 8, len(body))
        if pos + 8 > len(body):
            raise ValueError("content length runs past the block")
        (content_length,) = _I64.unpack_from(body, pos)
        pos += 8
        if content_length < 0 or pos + content_length > len(body):
            raise ValueError(f"content length {content_length} runs past the block")
        content = bytes(body[pos : pos + content_length])
        pos += content_length
        footer, pos = _decode_metadata(body, pos, len(body))
        if pos != len(body):
            raise ValueError(f"{len(body) - pos} unexpected bytes before the reverse pointer")
    except (ValueError, struct.error, UnicodeDecodeError) as exc:
        return corrupt(str(exc))
    cls = _BLOCK_CLASSES[type_ordinal]
    block = cls(
        header=header, content=content, footer=footer, file_path=name, offset=magic_pos, size=end - magic_pos
    )
    return block, end


def _iter_blocks(source: LogSource, name: str, lazy: bool = False) -> Iterator[LogBlock]:
    pos = 0
    block: LogBlock
    while pos + len(MAGIC) <= source.size:
        if source.read(pos, len(MAGIC)) != MAGIC:
            block, pos = corrupt_region(source, name, pos, "no magic at the start of a block")
            yield block
            continue
        block, pos = _parse_block(source, name, pos, lazy)
        yield block
    if pos < source.size:
        logger.warning("log file %s: %d trailing bytes after the last block ignored", name, source.size - pos)


def iter_log_blocks(data: bytes, name: str = "<memory>") -> Iterator[LogBlock]:
    """Blocks of a log file given as bytes (see :func:`read_log_blocks`)."""
    return _iter_blocks(LogSource(data=data), name)


def read_log_blocks(storage: Storage, path: str, *, lazy: bool = False) -> Iterator[LogBlock]:
    """Blocks of the log file at ``path``, in file order (``HoodieLogFileReader``), read lazily with
    random access. Corrupt regions come out as :class:`CorruptBlock` (with a warning naming the file);
    block contents are decoded only when asked (``records()``, ``to_table()``, ``delete_records()``).

    ``lazy=True`` (Hudi ``hoodie.compaction.lazy.block.read``) leaves contents over 256 KiB on disk: the
    block then has ``is_content_loaded == False`` and :func:`load_block_content` reads it when it is
    processed, so a scan of a large log holds headers only.

    Raises:
        StorageError: the file cannot be opened (never for bad bytes).
    """
    handle = storage.open_input(path)
    try:
        yield from _iter_blocks(LogSource(handle=handle), path, lazy)
    finally:
        handle.close()


def load_block_content(storage: Storage, block: LogBlock) -> LogBlock:
    """``block`` with its content read from its log file when a lazy read left it there (else ``block``).

    Raises:
        StorageError: the file cannot be read.
        CorruptFile: the file no longer holds the content (it shrank since the scan).
    """
    if block.is_content_loaded:
        return block
    with storage.open_input(block.file_path) as handle:
        data = bytes(handle.read_at(block.content_length, block.content_offset))
    if len(data) != block.content_length:
        raise CorruptFile(f"log file {block.file_path}: block at offset {block.offset} lost its content "
                          f"({len(data)} of {block.content_length} bytes)")
    return dataclasses.replace(block, content=data, content_offset=-1, content_length=-1)


__all__ = [
    "DATA_BLOCK_CONTENT_VERSION",
    "LOG_FORMAT_VERSION",
    "MAGIC",
    "ROLLBACK_COMMAND",
    "AvroDataBlock",
    "BlockType",
    "CdcDataBlock",
    "CommandBlock",
    "CorruptBlock",
    "DeleteBlock",
    "DeleteRecord",
    "HFileDataBlock",
    "HeaderKey",
    "LogBlock",
    "LogWriter",
    "ParquetDataBlock",
    "encode_metadata",
    "iter_log_blocks",
    "ordering_wrapper_for",
    "read_log_blocks",
]
