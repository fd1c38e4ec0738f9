"""``HoodieParquetDataBlock``: log records as a complete parquet file in the block content (docs/FORMAT.md §5)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptFile, SchemaMismatch
from engine.formats.avro_schema import avro_to_arrow, parse_avro_schema
from engine.formats.conform import conform_table
from engine.formats.log_block import (
    BlockType,
    HeaderKey,
    LogBlock,
    _header,
    header_schema,
)

logger = logging.getLogger(__name__)

@dataclass
class ParquetDataBlock(LogBlock):
    """``HoodieParquetDataBlock``: content = a complete parquet file (``PAR1...PAR1``), no version prefix."""

    block_type: ClassVar[BlockType] = BlockType.PARQUET_DATA_BLOCK

    @classmethod
    def from_table(
        cls,
        table: pa.Table,
        schema: Mapping[str, Any] | str,
        instant_time: str,
        compression: str = "gzip",
        extra_header: Mapping[int, str] | None = None,
    ) -> ParquetDataBlock:
        """Write ``table`` (cast to ``avro_to_arrow(schema)``) as parquet with footer ``parquet.avro.schema``
        and ``writer.model.name=avro`` like ``HoodieParquetDataBlock`` (no bloom filter).

        Args:
            compression: parquet codec (``hoodie.parquet.compression.codec``: gzip, snappy, zstd, ...).

        Raises:
            SchemaMismatch: the table does not conform to the schema.
        """
        header = _header(instant_time, schema, extra_header)
        schema_json = header[HeaderKey.SCHEMA]
        arrow_schema = avro_to_arrow(parse_avro_schema(schema_json))
        data = conform_table(table, arrow_schema, fill_missing=False, context="parquet log block")
        data = data.replace_schema_metadata({"parquet.avro.schema": schema_json, "writer.model.name": "avro"})
        sink = io.BytesIO()
        codec = "none" if compression.lower() in ("uncompressed", "none") else compression.lower()
        pq.write_table(data, sink, compression=codec, store_schema=False)
        return cls(header=header, content=sink.getvalue())

    def to_table(self, normalize: bool = True) -> pa.Table:
        """Read the embedded parquet file; with ``normalize`` cast to ``avro_to_arrow`` of the SCHEMA header.

        Raises:
            CorruptFile: the content is not readable parquet or does not fit the header schema.
        """
        try:
            table = pq.read_table(io.BytesIO(self.content))
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFile(
                f"parquet data block in {self.file_path or '<memory>'} is unreadable: {exc}"
            ) from exc
        table = table.replace_schema_metadata(None)
        if not normalize or not self.schema_json:
            return table
        target = avro_to_arrow(header_schema(self.schema_json, self.file_path))
        try:
            return conform_table(
                table, target, fill_missing=False, context=self.file_path or "parquet log block"
            )
        except SchemaMismatch as exc:
            raise CorruptFile(str(exc)) from exc

    def iter_tables(self, chunk_rows: int = 16384) -> Iterator[pa.Table]:
        """:meth:`to_table` in slices of at most ``chunk_rows`` rows (the same interface as
        :meth:`AvroDataBlock.iter_tables`; the embedded file is decoded once).

        Raises:
            CorruptFile: see :meth:`to_table`.
        """
        table = self.to_table()
        for offset in range(0, table.num_rows, chunk_rows):
            yield table.slice(offset, chunk_rows)

    @property
    def record_count(self) -> int:
        """Rows in the embedded parquet file (from its footer)."""
        try:
            return int(pq.ParquetFile(io.BytesIO(self.content)).metadata.num_rows)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFile(
                f"parquet data block in {self.file_path or '<memory>'} is unreadable: {exc}"
            ) from exc
