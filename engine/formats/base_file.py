"""Parquet base files (docs/FORMAT.md §4): writing with the Hudi footer, reading back.

:class:`BaseFileWriter` mirrors Hudi ``HoodieAvroParquetWriter`` + ``HoodieAvroWriteSupport``: rows (the five
meta columns first) go to a parquet file written by pyarrow; every ``_hoodie_record_key`` goes into the bloom
filter and the min/max key range; closing writes the footer key/value metadata

=================================  ============================================================
``parquet.avro.schema``            Avro schema JSON with meta fields (as parquet-avro writes it)
``writer.model.name``              ``avro``
``org.apache.hudi.bloomfilter``    base64 bloom filter (:mod:`engine.formats.bloom`)
``hoodie_bloom_filter_type_code``  ``DYNAMIC_V0`` (dynamic filters only)
``hoodie_min_record_key``          least key by Java ``String.compareTo`` (UTF-16 code units)
``hoodie_max_record_key``          greatest key, same order
=================================  ============================================================

With ``hoodie.populate.meta.fields=false`` only the first two are written.

The parquet column types follow the Avro schema (``avro_to_arrow``), as parquet-avro derives them:
``int`` → INT32 (so Spark byte/short columns are plain INT32), ``long`` → INT64, decimals →
FIXED_LEN_BYTE_ARRAY of ``minBytesForPrecision`` bytes, ``timestamp-micros`` → INT64
TIMESTAMP(MICROS, isAdjustedToUTC=true), ``date`` → INT32 DATE, strings → BINARY (STRING).

Deliberate differences from the files Spark + parquet-mr 1.12 write. Checked: pyarrow, hudi-rs 0.5 (tables
whose base files were rewritten by this writer read back identically) and Spark 4's built-in parquet reader
read these files like Java's; parquet-avro (Hudi's Java ``HoodieAvroParquetReader``) was not run here — it
accepts 3-level lists through the parquet spec's list rules, but that is unverified:

* Lists are written in the standard 3-level form (``repeated group list { optional <T> element }``);
  parquet-avro's default is the legacy 2-level form (``repeated group array``). pyarrow cannot write 2-level
  lists. This also makes list elements nullable, as the Avro schema (``items: ["null", T]``) says.
* The parquet schema root is named ``schema`` instead of the Avro record's full name, ``created_by`` names
  parquet-cpp-arrow, and data pages may be dictionary-encoded differently. None of these are read by Hudi.
* No ``ARROW:schema`` key is written (``store_schema=False``), so the footer keys are exactly Hudi's.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.config import HoodieConfig, WriteConfig
from engine.errors import ConfigError, CorruptFile, InvalidRecordKey, SchemaMismatch, StorageError
from engine.formats.avro_schema import META_FIELDS, avro_schema_json, avro_to_arrow, parse_avro_schema
from engine.formats.bloom import BloomFilter, bloom_filter_from_config, deserialize_bloom_filter
from engine.formats.conform import conform_table
from engine.storage import Storage

logger = logging.getLogger(__name__)

PARQUET_AVRO_SCHEMA = "parquet.avro.schema"
WRITER_MODEL_NAME = "writer.model.name"
BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
OLD_BLOOM_FILTER_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_FILTER_TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY = "hoodie_max_record_key"
RECORD_KEY_FIELD = META_FIELDS[2]

_CODECS = {
    "gzip": "gzip",
    "snappy": "snappy",
    "zstd": "zstd",
    "lz4": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}
_SUPPLEMENTARY = "[\\x{10000}-\\x{10FFFF}]"  # RE2: code points that need a UTF-16 surrogate pair


@dataclass(frozen=True)
class BaseFileStats:
    """Outcome of one written base file.

    Attributes:
        path: full path of the file.
        num_rows: records written.
        file_size: bytes on storage (``fileSizeInBytes`` / ``totalWriteBytes`` of the write stat).
        min_record_key: least record key (Java order), ``None`` if no rows or meta fields not populated.
        max_record_key: greatest record key, likewise.
    """

    path: str
    num_rows: int
    file_size: int
    min_record_key: str | None
    max_record_key: str | None


def _java_order(key: str) -> bytes:
    """Sort key equal to Java ``String.compareTo``: big-endian UTF-16 code units compare like the units."""
    return key.encode("utf-16-be", "surrogatepass")


def may_have_supplementary(strings: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any string of ``strings`` (``string`` / ``large_string``) may hold a character above U+FFFF
    (a UTF-16 surrogate pair in Java): a UTF-8 lead byte 0xF0-0xF4 anywhere in the value buffers. A sliced
    array's whole buffer is checked, so ``True`` can be a false alarm; ``False`` is certain. About 30x cheaper
    than a regular-expression match over every value."""
    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        data = chunk.buffers()[2]
        if data is not None and data.size and int(np.frombuffer(data, dtype=np.uint8).max()) >= 0xF0:
            return True
    return False


def java_min_max(keys: pa.Array | pa.ChunkedArray) -> tuple[str, str] | None:
    """Least and greatest string by Java ``String.compareTo`` (UTF-16 code unit order), nulls ignored.

    UTF-8 byte order (Arrow's) equals UTF-16 order unless a key has a character above U+FFFF (a surrogate
    pair sorts below U+E000..U+FFFF in UTF-16); only then are the keys compared in Python. This is the order
    of ``HoodieAvroWriteSupport`` (Java ``String``); Hudi's Spark row writer (``UTF8String``) uses UTF-8 byte
    order instead, which differs only for such keys.

    Returns:
        ``(min, max)``, or ``None`` when there is no non-null key.
    """
    if len(keys) == 0 or keys.null_count == len(keys):
        return None
    if not may_have_supplementary(keys) or not pc.any(pc.match_substring_regex(keys, _SUPPLEMENTARY)).as_py():
        result = pc.min_max(keys)
        low, high = result["min"].as_py(), result["max"].as_py()
        return str(low), str(high)
    values = [k for k in keys.to_pylist() if k is not None]
    return min(values, key=_java_order), max(values, key=_java_order)


def base_file_compression(conf: HoodieConfig) -> str:
    codec = conf.get(WriteConfig.PARQUET_COMPRESSION).strip().lower()
    if codec not in _CODECS:
        raise ConfigError(f"{WriteConfig.PARQUET_COMPRESSION.key}={codec!r} is not supported "
                          f"(one of {', '.join(sorted(_CODECS))})")
    return _CODECS[codec]


# Unique in every row of every base file: a dictionary attempt there is pure cost (parquet-mr gives it up after
# the first page; pyarrow would fill a dictionary page first too).
_NO_DICTIONARY = (META_FIELDS[1], RECORD_KEY_FIELD)


@functools.lru_cache(maxsize=64)
def dictionary_columns(file_schema: pa.Schema) -> list[str]:
    """Leaf column paths of ``file_schema`` (as parquet names them, ``s.a``, ``l.list.element``) written with
    dictionary encoding: all but the sequence number and record key meta columns."""
    sink = pa.BufferOutputStream()
    pq.write_table(file_schema.empty_table(), sink)
    schema = pq.ParquetFile(pa.BufferReader(sink.getvalue())).schema
    return [schema.column(i).path for i in range(len(schema))
            if schema.column(i).path not in _NO_DICTIONARY]


def open_parquet_writer(sink: Any, file_schema: pa.Schema, conf: HoodieConfig,
                        dictionary: list[str] | None = None) -> pq.ParquetWriter:
    """A pyarrow writer of ``file_schema`` encoding as every base file is encoded: the codec of
    ``hoodie.parquet.compression.codec``, pages of ``hoodie.parquet.page.size``, dictionaries as
    :func:`dictionary_columns` chooses (or for the leaf paths ``dictionary`` names), statistics, no Arrow schema in
    the footer. Column chunks written by it can stand in for a base file's own (:mod:`engine.formats.parquet_splice`).

    Raises:
        ConfigError: an unknown codec.
        pyarrow.ArrowException, OSError: the sink cannot be written.
    """
    return pq.ParquetWriter(sink, file_schema, compression=base_file_compression(conf),
                            data_page_size=conf.get(WriteConfig.PARQUET_PAGE_SIZE),
                            use_dictionary=dictionary_columns(file_schema) if dictionary is None else dictionary,
                            store_schema=False,
                            write_statistics=True)


class BaseFileWriter:
    """Writes one parquet base file (Hudi ``HoodieAvroParquetWriter``).

    Rows are buffered until ``hoodie.parquet.block.size`` bytes (Arrow in-memory size) are pending, then
    written as row groups of about that size; ``close`` writes the rest and the footer.

    Args:
        storage: where the file goes.
        path: full path of the new file (overwritten if present).
        arrow_schema_with_meta: schema of the batches passed to :meth:`write`: the five meta columns first,
            then the data columns in table order.
        avro_schema_with_meta: the table's Avro schema with meta fields; written to the footer and
            determines the parquet column types (batches are cast to ``avro_to_arrow`` of it).
        conf: write config: ``hoodie.parquet.compression.codec``, ``hoodie.parquet.block.size``,
            ``hoodie.parquet.page.size``, ``hoodie.parquet.max.file.size`` and the bloom filter keys.
        populate_meta_fields: ``hoodie.populate.meta.fields``; when false no bloom filter or key range is
            kept or written.
        sink: write to this stream instead of creating ``path`` on ``storage`` (it stays open after
            :meth:`close`; ``path`` names the file in messages).

    Raises:
        SchemaMismatch: the schemas do not start with the meta columns or their columns differ.
        ConfigError: unknown codec or bloom settings.
        StorageError: the file cannot be created.
    """

    def __init__(
        self,
        storage: Storage,
        path: str,
        arrow_schema_with_meta: pa.Schema,
        avro_schema_with_meta: Mapping[str, Any],
        conf: HoodieConfig,
        populate_meta_fields: bool = True,
        sink: BinaryIO | None = None,
    ) -> None:
        self.path = path
        self._storage = storage
        self._avro_json = avro_schema_json(dict(avro_schema_with_meta))
        self._file_schema = avro_to_arrow(dict(avro_schema_with_meta))
        names = list(arrow_schema_with_meta.names)
        if tuple(names[:len(META_FIELDS)]) != META_FIELDS:
            raise SchemaMismatch(f"base file {path}: columns must start with the meta columns "
                                 f"{list(META_FIELDS)}, got {names[:len(META_FIELDS)]}")
        if names != self._file_schema.names:
            missing = [n for n in self._file_schema.names if n not in names]
            extra = [n for n in names if n not in self._file_schema.names]
            raise SchemaMismatch(f"base file {path}: Arrow columns differ from the Avro schema "
                                 f"(missing {missing}, extra {extra}, or in another order)")
        self._input_names = names
        self._populate_meta_fields = populate_meta_fields
        self._bloom: BloomFilter | None = bloom_filter_from_config(conf) if populate_meta_fields else None
        self._min_key: str | None = None
        self._max_key: str | None = None
        self._block_size = max(1, conf.get(WriteConfig.PARQUET_BLOCK_SIZE))
        self._max_file_size = conf.get(WriteConfig.PARQUET_MAX_FILE_SIZE)
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0
        self._flushed_arrow_bytes = 0
        self._num_rows = 0
        self._stats: BaseFileStats | None = None
        compression = base_file_compression(conf)
        self._external_sink = sink is not None
        self._sink: Any = sink if sink is not None else storage.open_output(path)
        try:
            self._writer = open_parquet_writer(self._sink, self._file_schema, conf)
        except (pa.ArrowException, OSError) as exc:
            if not self._external_sink:
                self._sink.close()
                storage.delete(path)
            raise StorageError(f"cannot start parquet file {path}: {exc}") from exc
        logger.debug("opened base file %s (codec %s)", path, compression)

    # ------------------------------------------------------------------ writing

    @property
    def num_rows(self) -> int:
        """Rows accepted so far."""
        return self._num_rows

    @property
    def bytes_written(self) -> int:
        """Estimated file size so far (bytes): bytes already flushed plus pending rows scaled by the
        compression ratio observed on flushed row groups (1.0 before the first flush). Used for rollover
        at ``hoodie.parquet.max.file.size``, like ``HoodieBaseParquetWriter.getDataSize``."""
        flushed = int(self._sink.tell()) if not self._sink.closed else 0
        if self._stats is not None:
            return self._stats.file_size
        ratio = flushed / self._flushed_arrow_bytes if self._flushed_arrow_bytes else 1.0
        return flushed + int(self._pending_bytes * ratio)

    def can_write(self) -> bool:
        """Whether the file is still below ``hoodie.parquet.max.file.size`` (Hudi ``canWrite``)."""
        return self.bytes_written < self._max_file_size

    def continue_keys(self, bloom: BloomFilter, min_key: str, max_key: str) -> None:
        """Start the file's bloom filter and key range from those of the base file this one rewrites (a merge
        that keeps every stored record): :meth:`write` with ``new_keys`` then adds only those keys. Call before
        the first write.

        Raises:
            StorageError: rows were written already.
        """
        if self._num_rows:
            raise StorageError(f"base file {self.path}: key tracking can only be seeded before the first write")
        self._bloom, self._min_key, self._max_key = bloom, min_key, max_key

    def write(self, batch: pa.RecordBatch | pa.Table, new_keys: pa.Array | None = None) -> None:
        """Append rows.

        Args:
            batch: rows with exactly ``arrow_schema_with_meta``'s columns (meta columns filled by the
                caller; ``_hoodie_record_key`` non-null when meta fields are populated).
            new_keys: after :meth:`continue_keys`, the keys of ``batch`` the seeded filter and range do not
                hold yet (only these are added); None adds every key of ``batch``.

        Raises:
            SchemaMismatch: columns differ or a value cannot be cast to the file's type.
            InvalidRecordKey: a null or empty record key (meta fields populated).
            StorageError: writing failed, or the writer is closed.
        """
        if self._stats is not None:
            raise StorageError(f"base file {self.path} is already closed")
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        if table.column_names != self._input_names:
            raise SchemaMismatch(f"base file {self.path}: batch columns {table.column_names} differ from "
                                 f"the writer's {self._input_names}")
        if table.num_rows == 0:
            return
        table = conform_table(table, self._file_schema, fill_missing=False, context=self.path)
        if self._populate_meta_fields:
            self._track_keys(table.column(RECORD_KEY_FIELD) if new_keys is None else pa.chunked_array([new_keys]))
        self._pending.append(table)
        self._pending_bytes += table.nbytes
        self._num_rows += table.num_rows
        if self._pending_bytes >= self._block_size:
            self._flush()

    def track_keys(self, keys: pa.Array | pa.ChunkedArray) -> None:
        """Add ``keys`` to the file's bloom filter and key range without writing rows (records whose row groups
        are copied into the file as bytes, :mod:`engine.formats.parquet_splice`). Nothing without meta fields.

        Raises:
            InvalidRecordKey: a null or empty key.
        """
        if self._populate_meta_fields:
            self._track_keys(keys if isinstance(keys, pa.ChunkedArray) else pa.chunked_array([keys]))

    def _track_keys(self, keys: pa.ChunkedArray) -> None:
        if not len(keys):
            return
        if keys.null_count:
            raise InvalidRecordKey(f"base file {self.path}: {keys.null_count} row(s) have a null "
                                   f"{RECORD_KEY_FIELD}")
        assert self._bloom is not None
        try:
            self._bloom.add_many(keys)
        except InvalidRecordKey as exc:
            raise InvalidRecordKey(f"base file {self.path}: {exc}") from exc
        bounds = java_min_max(keys)
        if bounds is None:
            return
        low, high = bounds
        if self._min_key is None or _java_order(low) < _java_order(self._min_key):
            self._min_key = low
        if self._max_key is None or _java_order(high) > _java_order(self._max_key):
            self._max_key = high

    def _flush(self) -> None:
        if not self._pending:
            return
        table = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        rows_per_group = max(1, int(table.num_rows * self._block_size / max(1, self._pending_bytes)))
        try:
            self._writer.write_table(table, row_group_size=min(table.num_rows, rows_per_group))
        except (pa.ArrowException, OSError) as exc:
            raise StorageError(f"cannot write row group to {self.path}: {exc}") from exc
        self._flushed_arrow_bytes += self._pending_bytes
        self._pending = []
        self._pending_bytes = 0

    def footer_metadata(self) -> dict[str, str]:
        """The footer key/value pairs :meth:`close` writes (for rows added so far), in Java's order."""
        meta: dict[str, str] = {}
        if self._bloom is not None:
            if self._min_key is not None and self._max_key is not None:
                meta[MIN_RECORD_KEY] = self._min_key
            meta[BLOOM_FILTER_KEY] = self._bloom.serialize()
            if self._max_key is not None and self._min_key is not None:
                meta[MAX_RECORD_KEY] = self._max_key
            if self._bloom.type_code is not None:
                meta[BLOOM_FILTER_TYPE_CODE_KEY] = self._bloom.type_code
        meta[WRITER_MODEL_NAME] = "avro"
        meta[PARQUET_AVRO_SCHEMA] = self._avro_json
        return meta

    def close(self) -> BaseFileStats:
        """Write pending rows and the footer, close the file; idempotent.

        Raises:
            StorageError: writing or closing failed.
        """
        if self._stats is not None:
            return self._stats
        self._flush()
        try:
            # One call per key: pyarrow keeps the order of separate calls (not within one mapping).
            for key, value in self.footer_metadata().items():
                self._writer.add_key_value_metadata({key: value})
            self._writer.close()
            size = int(self._sink.tell())
            if not self._external_sink:
                self._sink.close()
        except (pa.ArrowException, OSError) as exc:
            raise StorageError(f"cannot finish parquet file {self.path}: {exc}") from exc
        self._stats = BaseFileStats(self.path, self._num_rows, size, self._min_key, self._max_key)
        logger.debug("closed base file %s: %d rows, %d bytes", self.path, self._num_rows, size)
        return self._stats

    def abort(self) -> None:
        """Discard the file: close without a footer and delete it (missing is fine)."""
        if self._stats is not None:
            return
        self._pending = []
        try:
            self._writer.close()
        except (pa.ArrowException, OSError):
            logger.debug("ignoring error while aborting %s", self.path, exc_info=True)
        if self._external_sink:
            self._stats = BaseFileStats(self.path, 0, 0, None, None)
            return
        if not self._sink.closed:
            self._sink.close()
        self._storage.delete(self.path)
        self._stats = BaseFileStats(self.path, 0, 0, None, None)

    def __enter__(self) -> BaseFileWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


# ---------------------------------------------------------------------------------------------------------
# reading


def _open_parquet(storage: Storage, path: str) -> tuple[pa.NativeFile, pq.ParquetFile]:
    source = storage.open_input(path)
    try:
        return source, pq.ParquetFile(source)
    except (pa.ArrowException, OSError) as exc:
        source.close()
        raise CorruptFile(f"cannot read parquet file {path}: {exc}") from exc


def _decode_footer(raw: Mapping[bytes, bytes] | None) -> dict[str, str]:
    return {k.decode("utf-8"): v.decode("utf-8") for k, v in (raw or {}).items()}


def read_footer(storage: Storage, path: str) -> dict[str, str]:
    """Footer key/value metadata of a parquet file, decoded as UTF-8.

    Raises:
        StorageError: the file cannot be opened. CorruptFile: it is not parquet.
    """
    source, parquet = _open_parquet(storage, path)
    with source:
        return _decode_footer(parquet.metadata.metadata)


def read_base_file(storage: Storage, path: str, columns: list[str] | None = None,
                   *, normalize: bool = True) -> pa.Table:
    """Read a base file (any writer: Java parquet-avro or :class:`BaseFileWriter`); arguments and errors as
    :func:`read_base_file_with_footer`."""
    return read_base_file_with_footer(storage, path, columns, normalize=normalize)[0]


def read_base_file_with_footer(storage: Storage, path: str, columns: list[str] | None = None,
                               *, normalize: bool = True) -> tuple[pa.Table, dict[str, str]]:
    """Read a base file and its footer key/value metadata (decoded as UTF-8) in one open.

    Args:
        storage: storage holding the file.
        path: full path.
        columns: top-level columns to read (all when ``None``), in the order given.
        normalize: cast to ``avro_to_arrow`` of the footer's ``parquet.avro.schema`` when present, so files
            written with 2-level lists (``list<array: T not null>``) or INT96 timestamps read with the same
            Arrow types as files written here.

    Raises:
        StorageError: the file cannot be opened. CorruptFile: it is not readable parquet.
        SchemaMismatch: a requested column is absent.
    """
    source, parquet = _open_parquet(storage, path)
    with source:
        available = parquet.schema_arrow.names
        if columns is not None:
            absent = [c for c in columns if c not in available]
            if absent:
                raise SchemaMismatch(f"base file {path} has no column(s) {absent}")
        try:
            table = parquet.read(columns=columns)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFile(f"cannot read parquet file {path}: {exc}") from exc
        footer = _decode_footer(parquet.metadata.metadata)
    if not normalize or PARQUET_AVRO_SCHEMA not in footer:
        return table, footer
    target = avro_to_arrow(parse_avro_schema(footer[PARQUET_AVRO_SCHEMA]))
    wanted = columns if columns is not None else table.column_names
    fields = [target.field(name) if name in target.names else table.schema.field(name) for name in wanted]
    return conform_table(table, pa.schema(fields), fill_missing=False, context=path), footer


def read_record_keys(storage: Storage, path: str) -> pa.Array:
    """The ``_hoodie_record_key`` column of a base file as one string array, in row order (nulls when the
    table does not populate meta fields).

    Raises:
        StorageError / CorruptFile: as :func:`read_base_file`. SchemaMismatch: no record key column.
    """
    table = read_base_file(storage, path, [RECORD_KEY_FIELD], normalize=False)
    column = table.column(0)
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return array if array.type == pa.string() else array.cast(pa.string())


def read_bloom_filter(storage: Storage, path: str) -> BloomFilter | None:
    """The bloom filter in a base file's footer (``org.apache.hudi.bloomfilter``, or the pre-0.5 key
    ``com.uber.hoodie.bloomfilter``), or ``None`` when it has none (meta fields not populated).

    Raises:
        StorageError / CorruptFile: unreadable file or malformed filter.
    """
    return footer_bloom_filter(read_footer(storage, path), path)


def footer_bloom_filter(footer: Mapping[str, str], path: str) -> BloomFilter | None:
    """The bloom filter of a base file's decoded footer (:func:`read_footer`), or ``None`` when it has none.

    Raises:
        CorruptFile: a malformed filter (``path`` named).
    """
    text = footer.get(BLOOM_FILTER_KEY) or footer.get(OLD_BLOOM_FILTER_KEY)
    if not text:
        return None
    try:
        return deserialize_bloom_filter(text, footer.get(BLOOM_FILTER_TYPE_CODE_KEY))
    except CorruptFile as exc:
        raise CorruptFile(f"base file {path}: {exc}") from exc
