"""Log block framing (docs/FORMAT.md §5): the block types, header keys and metadata maps, the :class:`LogBlock` base
and its on-disk encoding, the blocks without records (command, corrupt) and the HFile data block — Hudi
``HoodieLogBlock``, ``HoodieCommandBlock``, ``HoodieCorruptBlock``, ``HoodieHFileDataBlock``."""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

from engine.errors import CorruptFile, HFileError, SchemaMismatch
from engine.formats.avro_schema import avro_to_arrow, parse_avro_schema
from engine.formats.hfile_reader import HFileReader

logger = logging.getLogger(__name__)

MAGIC = b"#HUDI#"
"""Marker starting every block (``HoodieLogFormat.MAGIC``)."""
LOG_FORMAT_VERSION = 1
"""``HoodieLogFormat.CURRENT_VERSION``; the only version this module reads and writes."""
DATA_BLOCK_CONTENT_VERSION = 3
"""Content version of Avro data and delete blocks written by Hudi 0.11+ (``HoodieLogBlock.version``)."""
ROLLBACK_COMMAND = "0"
"""``HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK`` as stored in the COMMAND_BLOCK_TYPE header."""

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class BlockType(IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType``; serialized as the ordinal."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6


class HeaderKey(IntEnum):
    """``HoodieLogBlock.HeaderMetadataType`` ordinals valid in table version 6 (never write others)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6


IS_PARTIAL_HEADER = 7
"""Hudi 1.x ``HeaderMetadataType.IS_PARTIAL`` ordinal (``"true"``: the block holds partial updates, its schema only
some columns; read to refuse such blocks, never written). Ordinal 8, ``BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS``,
names the base file that ``RECORD_POSITIONS`` refer to; readers that merge by key ignore both."""


def encode_metadata(entries: Mapping[int, str]) -> bytes:
    """A header/footer map: int32 count, then per entry int32 ordinal, int32 length, UTF-8 value (in the
    mapping's order)."""
    out = bytearray(_I32.pack(len(entries)))
    for key, value in entries.items():
        raw = value.encode("utf-8")
        out += _I32.pack(int(key)) + _I32.pack(len(raw)) + raw
    return bytes(out)


def _decode_metadata(data: bytes, pos: int, end: int) -> tuple[dict[int, str], int]:
    """Parse a map at ``pos`` (not beyond ``end``). Raises ValueError on malformed bytes."""
    if pos + 4 > end:
        raise ValueError("metadata map runs past the block")
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    if count < 0 or count > 1024:
        raise ValueError(f"implausible metadata entry count {count}")
    entries: dict[int, str] = {}
    for _ in range(count):
        if pos + 8 > end:
            raise ValueError("metadata entry runs past the block")
        key, length = struct.unpack_from(">ii", data, pos)
        pos += 8
        if length < 0 or pos + length > end:
            raise ValueError(f"metadata value length {length} runs past the block")
        raw = bytes(data[pos : pos + length])
        pos += length
        entries[HeaderKey(key) if 0 <= key <= 6 else key] = raw.decode("utf-8")
    return entries, pos


@dataclass
class LogBlock:
    """One log block (``HoodieLogBlock``).

    Attributes:
        header: header map, ordinal (:class:`HeaderKey`) -> value, in on-disk order.
        content: the raw content bytes (block-type specific; empty for command blocks).
        footer: footer map (always empty in files Hudi writes).
        file_path: log file the block was read from ("" when built in memory).
        offset: byte offset of the block's magic in that file (-1 when built in memory).
        size: bytes the block occupies on disk, magic and reverse pointer included (0 when in memory).
        content_offset: file offset of the content when it was left on disk (lazy read), else -1.
        content_length: content bytes on disk when left there (lazy read), else -1.
    """

    header: dict[int, str] = field(default_factory=dict)
    content: bytes = b""
    footer: dict[int, str] = field(default_factory=dict)
    file_path: str = ""
    offset: int = -1
    size: int = 0
    content_offset: int = -1
    content_length: int = -1

    @property
    def is_content_loaded(self) -> bool:
        """Whether :attr:`content` holds the block's content (``False`` after a lazy read)."""
        return self.content_length < 0

    @property
    def encoded_size(self) -> int:
        """Content bytes, loaded or not."""
        return len(self.content) if self.is_content_loaded else self.content_length

    block_type: ClassVar[BlockType] = BlockType.CORRUPT_BLOCK

    @property
    def instant_time(self) -> str | None:
        """The INSTANT_TIME header (the deltacommit or rollback instant), or None."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        """The SCHEMA header (writer Avro schema JSON incl. meta fields), or None."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def block_identifier(self) -> str | None:
        """The BLOCK_IDENTIFIER header (``"<attemptNo>,<seqNo>"``, Hudi 0.14.1+), or None."""
        return self.header.get(HeaderKey.BLOCK_IDENTIFIER)

    def encode(self) -> bytes:
        """The complete on-disk bytes of this block (magic to reverse pointer).

        Raises:
            SchemaMismatch: a header key is outside the v6 ordinals 0-6 (0.14 readers would fail).
        """
        for key in (*self.header, *self.footer):
            if not 0 <= int(key) <= 6:
                raise SchemaMismatch(f"log block header ordinal {int(key)} is not valid in table version 6")
        body = (
            _I32.pack(LOG_FORMAT_VERSION)
            + _I32.pack(int(self.block_type))
            + encode_metadata(self.header)
            + _I64.pack(len(self.content))
            + self.content
            + encode_metadata(self.footer)
        )
        block_size = len(body) + 8
        return MAGIC + _I64.pack(block_size) + body + _I64.pack(block_size + len(MAGIC))


def _header(
    instant_time: str, schema: Mapping[str, Any] | str | None, extra: Mapping[int, str] | None
) -> dict[int, str]:
    header: dict[int, str] = {HeaderKey.INSTANT_TIME: instant_time}
    if schema is not None:
        header[HeaderKey.SCHEMA] = (
            schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))
        )
    header.update(extra or {})
    return header


@dataclass
class CommandBlock(LogBlock):
    """``HoodieCommandBlock``: no content; COMMAND_BLOCK_TYPE ``"0"`` = rollback of TARGET_INSTANT_TIME."""

    block_type: ClassVar[BlockType] = BlockType.COMMAND_BLOCK

    @classmethod
    def rollback(cls, instant_time: str, target_instant_time: str) -> CommandBlock:
        """A rollback command block, header order as Hudi writes it (INSTANT_TIME, COMMAND_BLOCK_TYPE,
        TARGET_INSTANT_TIME; docs/FORMAT.md §5.1)."""
        return cls(
            header={
                HeaderKey.INSTANT_TIME: instant_time,
                HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
                HeaderKey.TARGET_INSTANT_TIME: target_instant_time,
            }
        )

    @property
    def target_instant_time(self) -> str | None:
        """The instant whose blocks this command rolls back."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def is_rollback(self) -> bool:
        """Whether this is a rollback command (the only command type)."""
        return self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND


@dataclass
class CorruptBlock(LogBlock):
    """``HoodieCorruptBlock``: bytes the reader skipped (``content``); never written. Readers ignore it
    (Java queues it and drops it unless a rollback removes it)."""

    block_type: ClassVar[BlockType] = BlockType.CORRUPT_BLOCK


@dataclass
class HFileDataBlock(LogBlock):
    """``HoodieHFileDataBlock`` (metadata table logs): the content is a whole HFile whose cells map a record key
    to the record's Avro datum (written under the SCHEMA header; the datum's key field is stored empty). The
    HFile is parsed when first asked for; decoding the datums is the metadata table's business
    (:mod:`engine.metadata.hfile_records`).
    """

    block_type: ClassVar[BlockType] = BlockType.HFILE_DATA_BLOCK

    def hfile(self) -> HFileReader:
        """The content as an :class:`~engine.formats.hfile_reader.HFileReader` (string keys), parsed once.

        Raises:
            CorruptFile: the content is not a readable HFile, or it was left on disk by a lazy read (load it
                with ``load_block_content`` first); names the log file and block offset.
        """
        cached: HFileReader | None = self.__dict__.get("_hfile")
        if cached is not None:
            return cached
        where = f"log file {self.file_path or '<memory>'} block at offset {self.offset}"
        if not self.is_content_loaded:
            raise CorruptFile(f"{where}: HFile content not loaded (lazy read)")
        try:
            reader = HFileReader(self.content, name=f"{where} (HFile data block)")
        except HFileError as exc:
            raise CorruptFile(f"{where}: the HFile data block does not parse: {exc}") from exc
        self.__dict__["_hfile"] = reader
        return reader

    def cells(self) -> list[tuple[str, bytes]]:
        """Every ``(key, value)`` cell in key order (``HoodieHFileDataBlock.deserializeRecords``).

        Raises:
            CorruptFile: see :meth:`hfile`.
        """
        return [(str(key), value) for key, value in self.hfile().scan()]

    def lookup(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The cells of ``keys`` present in the block (``lookupRecords``: point lookups, work proportional to
        the keys asked).

        Raises:
            CorruptFile: see :meth:`hfile`.
        """
        return {str(key): value for key, value in self.hfile().get_many(keys).items()}


def header_schema(schema_json: str, file_path: str | None) -> Any:
    """The parsed Avro SCHEMA header of a block of ``file_path``.

    Raises:
        CorruptFile: the header is not a readable Avro schema (damaged bytes); names the log file.
    """
    try:
        parsed = parse_avro_schema(schema_json)
        avro_to_arrow(parsed)  # an unknown type name shows here
        return parsed
    except SchemaMismatch as exc:
        raise CorruptFile(f"log file {file_path or '<memory>'}: a block's SCHEMA header is unreadable ({exc})") \
            from exc
