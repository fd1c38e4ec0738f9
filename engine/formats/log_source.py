"""Reading a log file's bytes for the block reader (``HoodieLogFileReader``'s input handling): random access to
an in-memory buffer or a pyarrow file, the forward scan for the next magic, and the corrupt block that covers
a region the reader skips."""

from __future__ import annotations

import logging
from typing import Any

from engine.formats.log_block import MAGIC, CorruptBlock

# Corrupt-region warnings keep the reader's logger name (users filter on it).
logger = logging.getLogger("engine.formats.log_format")

_SCAN_CHUNK = 1 << 20
"""Bytes read at a time while scanning a file for the next magic."""


class LogSource:
    """Random access to the bytes of one log file (an in-memory buffer or a pyarrow file)."""

    def __init__(self, data: bytes | None = None, handle: Any = None) -> None:
        self._data = data
        self._handle = handle
        self.size = len(data) if data is not None else int(handle.size())

    def read(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer at the end of the file)."""
        if offset >= self.size or length <= 0:
            return b""
        if self._data is not None:
            return self._data[offset : offset + length]
        return bytes(self._handle.read_at(min(length, self.size - offset), offset))

    def find_magic(self, start: int) -> int:
        """Offset of the next magic at or after ``start``, or the file size
        (``HoodieLogFileReader.scanForNextAvailableBlockOffset``)."""
        if self._data is not None:
            found = self._data.find(MAGIC, start)
            return found if found >= 0 else self.size
        pos = start
        while pos < self.size:
            chunk = self.read(pos, _SCAN_CHUNK)
            found = chunk.find(MAGIC)
            if found >= 0:
                return pos + found
            if pos + len(chunk) >= self.size:
                break
            pos += len(chunk) - len(MAGIC) + 1
        return self.size


def corrupt_region(
    source: LogSource,
    name: str,
    start: int,
    reason: str,
    magic_pos: int | None = None,
) -> tuple[CorruptBlock, int]:
    """Corrupt block from ``start`` (just after the magic at ``magic_pos``, or a position without magic) to
    the next magic. ``content`` holds the bytes after the magic (Java's corrupt block content); ``offset``
    and ``size`` cover the magic too."""
    nxt = source.find_magic(start)
    first = start if magic_pos is None else magic_pos
    logger.warning(
        "log file %s: corrupt block at offset %d (%s); skipping to offset %d", name, first, reason, nxt
    )
    block = CorruptBlock(
        content=source.read(start, nxt - start), file_path=name, offset=first, size=nxt - first
    )
    return block, nxt


__all__ = ["LogSource", "corrupt_region"]
