"""The simple index (Hudi ``HoodieSimpleIndex``): the record keys stored in the latest base files of the
partitions a write touches, to be joined with the incoming keys. This module reads one file's keys and
picks the files to read; the join runs in Spark (``engine.spark.writer.tag_locations``).

Merge-on-read: Hudi's simple index reads base files only (``canIndexLogFiles() == false``), which is right
for tables its Spark writer made (it never routes inserts into log files). Other writers do (Flink, the
bucket and HBase indexes): their keys may so far live only in log files, and an index blind to them would
insert a second copy into another file group. So we also read the keys of the log files that can hold such
records — every log file of a slice without a base file, and log files whose write stat reports inserts."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.config import HoodieConfig, TableConfig, parse_list
from engine.filegroup.naming import parse_log_file_name
from engine.filegroup.slices import FileSlice
from engine.formats.avro_schema import META_FIELDS
from engine.formats.log_format import AvroDataBlock, ParquetDataBlock, read_log_blocks
from engine.keygen import KeyGenerator
from engine.storage import Storage
from engine.table import Table

KEY_LOCATION_SCHEMA = pa.schema(
    [("_hoodie_record_key", pa.string()), ("_hoodie_partition_path", pa.string()),
     ("_hoodie_file_id", pa.string())]
)


@dataclass(frozen=True)
class KeyedFile:
    """A latest base file, or a log file of a latest slice, whose keys are wanted (``size`` in bytes, 0 when
    unknown)."""

    partition_path: str
    file_id: str
    path: str
    size: int = 0


def _record_keys(data: pa.Table, conf: HoodieConfig) -> pa.ChunkedArray | pa.Array:
    if conf.get(TableConfig.POPULATE_META_FIELDS) and META_FIELDS[2] in data.column_names:
        return data.column(META_FIELDS[2])
    return KeyGenerator.from_config(conf).record_keys(data)


def _log_file_keys(storage: Storage, path: str, conf: HoodieConfig) -> pa.Array:
    """Record keys of the data blocks of one log file (corrupt blocks skipped by the log reader)."""
    chunks: list[pa.Array] = []
    for block in read_log_blocks(storage, path):
        if isinstance(block, (AvroDataBlock, ParquetDataBlock)):
            keys = _record_keys(block.to_table(), conf)
            chunks.append(keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys)
    if not chunks:
        return pa.array([], pa.string())
    return pa.concat_arrays([c.cast(pa.string()) for c in chunks])


def read_key_locations(storage: Storage, file: KeyedFile, conf: HoodieConfig, among: pa.Array | None = None
                       ) -> pa.Table:
    """``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of every record in ``file`` (a
    base file, or a log file: the keys of its data blocks); with ``among`` (a ``pa.string()`` array), only
    of the records whose key is in it.

    Reads only the ``_hoodie_record_key`` column of a base file when meta fields are populated; otherwise
    the record key fields, passed through the table's key generator.
    """
    name = file.path.rsplit("/", 1)[-1]
    if parse_log_file_name(name) is not None:
        keys: pa.Array | pa.ChunkedArray = _log_file_keys(storage, file.path, conf)
    else:
        populate = conf.get(TableConfig.POPULATE_META_FIELDS)
        with storage.open_input(file.path) as handle:
            if populate:
                keys = pq.read_table(handle, columns=[META_FIELDS[2]]).column(0)
            else:
                fields = parse_list(conf.get(TableConfig.RECORDKEY_FIELDS))
                keys = _record_keys(pq.read_table(handle, columns=fields), conf)
    keys = keys.cast(pa.string())
    if among is not None:
        keys = keys.filter(pc.is_in(keys, value_set=among))
    n = len(keys)
    return pa.Table.from_arrays(
        [keys, pa.repeat(pa.scalar(file.partition_path, pa.string()), n),
         pa.repeat(pa.scalar(file.file_id, pa.string()), n)],
        schema=KEY_LOCATION_SCHEMA,
    )


def log_files_with_inserts(table: Table) -> set[str]:
    """Names of log files whose write stat (in a completed deltacommit of the active timeline) reports
    inserts: the log files that may hold keys found in no base file."""
    names: set[str] = set()
    for instant in table.timeline.completed_commits():
        if instant.action != "deltacommit":
            continue
        for stat in table.commit_metadata(instant).all_write_stats():
            if stat.num_inserts and stat.path:
                name = stat.path.rsplit("/", 1)[-1]
                if parse_log_file_name(name) is not None:
                    names.add(name)
    return names


def files_to_index(table: Table, partitions: list[str]) -> list[KeyedFile]:
    """The files whose keys the simple index reads for ``partitions``: the latest base file of every file
    group, plus (merge-on-read) the log files of the latest slices that may hold keys found in no base
    file — all of a slice without a base file, and those whose write stat reports inserts."""
    view = table.file_system_view()
    files = [KeyedFile(p, bf.file_id, bf.path, bf.size) for p in partitions for bf in view.latest_base_files(p)]
    if not table.is_mor:
        return files
    slices: list[FileSlice] = [fs for p in partitions for fs in view.latest_file_slices(p) if fs.log_files]
    if not slices:
        return files
    with_inserts = log_files_with_inserts(table)
    for fs in slices:
        for log in fs.log_files:
            if fs.base_file is None or log.name in with_inserts:
                files.append(KeyedFile(fs.partition_path, fs.file_id, log.path, log.size))
    return files


def balanced_groups(files: list[KeyedFile], count: int) -> list[list[KeyedFile]]:
    """``files`` split into at most ``count`` non-empty groups of about equal total size (largest file
    first into the lightest group), so tasks reading one group each finish together."""
    groups: list[list[KeyedFile]] = [[] for _ in range(max(1, min(count, len(files))))]
    totals = [0] * len(groups)
    for file in sorted(files, key=lambda f: f.size, reverse=True):
        lightest = totals.index(min(totals))
        groups[lightest].append(file)
        totals[lightest] += max(1, file.size)
    return [g for g in groups if g]
