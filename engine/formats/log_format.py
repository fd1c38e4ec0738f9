"""Hudi log files (log format version 1, table version 6): the data blocks and the reader; every log name is
importable from here. The framing and record-less blocks are in :mod:`engine.formats.log_block`, Avro data
blocks in :mod:`engine.formats.log_avro`, delete blocks in :mod:`engine.formats.log_delete`, parquet blocks in :mod:`engine.formats.log_parquet`, the writer in
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
import logging
import struct
from collections.abc import Iterator

from engine.errors import CorruptFile
from engine.formats.log_avro import AvroDataBlock, CdcDataBlock
from engine.formats.log_block import (
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
    encode_metadata,
)
from engine.formats.log_delete import DeleteBlock, DeleteRecord, ordering_wrapper_for
from engine.formats.log_parquet import ParquetDataBlock
from engine.formats.log_source import LogSource, corrupt_region
from engine.formats.log_writer import LogWriter
from engine.storage import Storage

logger = logging.getLogger(__name__)


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
