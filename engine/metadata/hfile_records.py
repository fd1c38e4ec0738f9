"""Metadata records stored in HFiles: the metadata table's base files (``*.hfile``, Hudi
``HoodieAvroHFileReader``) and the HFile data blocks of its log files (``HoodieHFileDataBlock``).

Both hold cells ``record key → Avro HoodieMetadataRecord datum`` sorted by key, the datum's ``key`` field empty
(the reader fills it from the cell key). The writer schema comes from the block's SCHEMA header or the base
file's ``schema`` file-info entry (Hudi 0.15: :func:`~engine.metadata.schema.writer_schema_json`, the record
schema with meta fields); a missing schema means the bare 0.15 schema.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.errors import CorruptFile, HFileError
from engine.formats.hfile_reader import HFileReader
from engine.formats.log_block import HFileDataBlock
from engine.metadata.records import MetadataRecord, decode_datum
from engine.metadata.schema import SCHEMA_FILE_INFO_KEY
from engine.storage import Storage


def block_records(block: HFileDataBlock, keys: Iterable[str] | None = None) -> dict[str, MetadataRecord]:
    """The records of an HFile data block: all of them (``keys=None``) or those of ``keys`` present.

    Returns:
        key → record, in key order.

    Raises:
        CorruptFile: the content is not an HFile or a datum does not decode (names the log file and offset).
    """
    cells = block.cells() if keys is None else sorted(block.lookup(keys).items())
    where = f"log file {block.file_path or '<memory>'} block at offset {block.offset}"
    schema = block.schema_json
    return {key: decode_datum(value, schema, key=key, where=where) for key, value in cells}


class BaseFileRecords:
    """A metadata table base file (an HFile) read into memory (Hudi ``HoodieAvroHFileReader``).

    Args:
        storage: the table's storage.
        path: the ``*.hfile`` path.

    Raises:
        StorageError: the file cannot be read.
        CorruptFile: it is not a readable HFile (names ``path``).
    """

    def __init__(self, storage: Storage, path: str) -> None:
        self.path = path
        try:
            self.hfile = HFileReader(storage.read_bytes(path), name=path)
        except HFileError as exc:
            raise CorruptFile(f"metadata table base file {path} does not parse: {exc}") from exc
        raw = self.hfile.file_info.get(SCHEMA_FILE_INFO_KEY)
        self.schema_json: str | None = raw.decode("utf-8") if raw else None

    def records(self, keys: Iterable[str] | None = None) -> dict[str, MetadataRecord]:
        """All records (``keys=None``, a full scan) or those of ``keys`` present (point lookups through the
        HFile index: work proportional to the keys asked).

        Raises:
            CorruptFile: a datum does not decode (names the file and the key).
        """
        cells = self.hfile.scan() if keys is None else sorted(self.hfile.get_many(keys).items())
        return {str(key): decode_datum(value, self.schema_json, key=str(key), where=self.path)
                for key, value in cells}


__all__ = ["BaseFileRecords", "block_records"]
