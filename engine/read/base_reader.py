"""Reading the columns a query asks for from a base file, by name, or by column id when the table's schema
evolved on read (:class:`engine.schema.history.SchemaEvolution`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptFile
from engine.filegroup.naming import parse_base_file_name
from engine.schema.history import SchemaEvolution
from engine.storage import Storage


def base_file_instant(path: str) -> str | None:
    """The instant a base file was written at (from its name ``<fileId>_<token>_<instant>.parquet``)."""
    parsed = parse_base_file_name(path.rsplit("/", 1)[-1])
    return parsed[2] if parsed else None


def read_base_batches(storage: Storage, path: str, names: Sequence[str], batch_rows: int,
                      evolution: SchemaEvolution | None = None) -> Iterator[pa.Table]:
    """Tables of up to ``batch_rows`` rows holding the file's columns for ``names`` (case-insensitive;
    missing columns are simply absent), named as the query names them.

    Raises:
        StorageError: the file cannot be opened.
        CorruptFile: the file is not readable parquet (truncated, damaged footer or pages); names the file.
    """
    with storage.open_input(path) as handle:
        try:
            parquet = pq.ParquetFile(handle)
            available = parquet.schema_arrow.names
        except (OSError, pa.ArrowException) as exc:
            raise CorruptFile(f"cannot read base file {path}: not a readable parquet file ({exc})") from exc
        instant = base_file_instant(path)
        if evolution is not None:
            columns = evolution.file_columns(available, list(names), instant)
        else:
            lowered = {n.lower(): n for n in available}
            columns = list(dict.fromkeys(lowered[n.lower()] for n in names if n.lower() in lowered))
        batches = parquet.iter_batches(batch_size=batch_rows, columns=columns)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, pa.ArrowException) as exc:
                raise CorruptFile(f"cannot read base file {path}: damaged parquet data ({exc})") from exc
            table = pa.Table.from_batches([batch])
            yield evolution.align(table, instant) if evolution is not None else table
