"""Writing log files (``HoodieLogFormatWriter``): blocks appended to one log file."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import pyarrow as pa

from engine.errors import LogFileExists, StorageError
from engine.formats.log_block import (
    CorruptBlock,
    LogBlock,
)
from engine.storage import Storage

logger = logging.getLogger(__name__)


class LogWriter:
    """Appends blocks to one log file (``HoodieLogFormatWriter``), flushing after each block.

    Hudi never appends to an existing file on object stores: a writer that finds its file rolls over to
    the next version (docs/FORMAT.md §5.5); choosing the name is the caller's job (``engine.filegroup.naming``).
    So by default the file must not exist. ``append_existing=True`` keeps the current bytes (rewritten
    through the new stream, since :class:`Storage` has no append) and adds blocks after them.

    Args:
        storage: where the file lives.
        path: full path of the log file.
        append_existing: allow an existing file and keep its content.

    Raises:
        LogFileExists: the file exists (without ``append_existing``).
        StorageError: the file cannot be created.
    """

    def __init__(self, storage: Storage, path: str, *, append_existing: bool = False) -> None:
        self.path = path
        existing = b""
        if not append_existing:
            # Atomic on local file systems: two writers picking the same name cannot both open it.
            if not storage.create_if_absent(path, b""):
                raise LogFileExists(f"log file '{path}' already exists; roll over to the next version")
        elif storage.exists(path):
            existing = storage.read_bytes(path)
        self._stream = storage.open_output(path)
        self._size = 0
        self._closed = False
        if existing:
            self._write(existing)
        logger.debug("opened log file %s at %d bytes", path, self._size)

    def _write(self, data: bytes) -> None:
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot write log file '{self.path}': {exc}") from exc
        self._size += len(data)

    @property
    def size(self) -> int:
        """Bytes in the file so far (the next block's offset)."""
        return self._size

    def append_block(self, block: LogBlock) -> tuple[int, int]:
        """Write one block.

        Returns:
            (offset of the block's magic, bytes written).

        Raises:
            StorageError: the writer is closed or the write failed.
            SchemaMismatch: the block has an invalid header ordinal.
        """
        if self._closed:
            raise StorageError(f"log writer for '{self.path}' is closed")
        if isinstance(block, CorruptBlock):
            raise StorageError(f"refusing to write a corrupt block to '{self.path}'")
        data = block.encode()
        offset = self._size
        self._write(data)
        return offset, len(data)

    def append_blocks(self, blocks: Iterable[LogBlock]) -> list[tuple[int, int]]:
        """Write several blocks; returns (offset, size) of each."""
        return [self.append_block(b) for b in blocks]

    def close(self) -> int:
        """Close the file; returns its size in bytes (idempotent)."""
        if not self._closed:
            self._closed = True
            try:
                self._stream.close()
            except (OSError, pa.ArrowException) as exc:
                raise StorageError(f"cannot close log file '{self.path}': {exc}") from exc
        return self._size

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
