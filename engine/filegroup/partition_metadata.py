"""``.hoodie_partition_metadata`` files (Hudi ``HoodiePartitionMetadata``, docs/FORMAT.md §3.2).

Every partition directory (the base path itself for a non-partitioned table) holds one. Java's listing
(``FileSystemBackedTableMetadata``) only recognises a directory as a partition through it, so it is
mandatory when no metadata table exists. Text form (Java properties)::

    #partition metadata
    #<Date.toString()>
    commitTime=<instant that created the partition>
    partitionDepth=<number of path segments>

Written like Java's ``trySave``: content goes to ``.hoodie_partition_metadata_<taskPartitionId>`` first and
is then renamed to the final name, unless another writer already created it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from engine import javaprops
from engine.errors import CorruptFile, NestedPartitionPath, StorageError
from engine.partition_path import ancestor_paths, nested_pair, nested_partition_message
from engine.storage import Storage

LOG = logging.getLogger(__name__)

PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"
"""Name of the text metafile, and prefix of every metafile variant."""

PARQUET_METAFILE = PARTITION_METAFILE_PREFIX + ".parquet"
"""Metafile name when ``hoodie.partition.metafile.use.base.format=true``."""

COMMIT_TIME_KEY = "commitTime"
PARTITION_DEPTH_KEY = "partitionDepth"


@dataclass(frozen=True)
class PartitionMetadata:
    """Content of a partition metafile.

    Attributes:
        commit_time: instant that created the partition.
        partition_depth: number of ``/``-separated segments of the partition path (0 = table root).
    """

    commit_time: str
    partition_depth: int


def partition_depth(partition_path: str) -> int:
    """Segments of ``partition_path``: ``""`` → 0, ``city=sf`` → 1, ``2023/04/01/12`` → 4."""
    return len([seg for seg in partition_path.split("/") if seg])


def is_partition_metafile(name: str) -> bool:
    """Whether ``name`` marks its directory as a partition: any name starting with
    ``.hoodie_partition_metadata`` (text, base-format variant, or a leftover temporary file), exactly the
    test of Java's ``FileSystemBackedTableMetadata`` listing."""
    return name.startswith(PARTITION_METAFILE_PREFIX)


def _partition_dir(storage: Storage, base_path: str, partition_path: str) -> str:
    return storage.join(base_path, partition_path) if partition_path else base_path


def has_partition_metadata(storage: Storage, base_path: str, partition_path: str) -> bool:
    """Whether the partition directory holds a text or parquet metafile."""
    folder = _partition_dir(storage, base_path, partition_path)
    return (storage.exists(storage.join(folder, PARTITION_METAFILE_PREFIX))
            or storage.exists(storage.join(folder, PARQUET_METAFILE)))


def nesting_partition(storage: Storage, base_path: str, partition_path: str) -> tuple[str, str] | None:
    """``(outer, inner)`` when the folder of ``partition_path`` (a partition without a metafile yet) lies
    inside an existing partition's folder (``outer`` has a metafile) or holds one somewhere below it
    (``inner``); ``None`` otherwise. Costs one ``exists`` pair per ancestor, and a walk of the folder only
    when it already exists (it normally does not).

    Raises:
        StorageError: a listing failed.
    """
    if not partition_path:
        return None
    for ancestor in ancestor_paths(partition_path):
        if has_partition_metadata(storage, base_path, ancestor):
            return ancestor, partition_path
    root = _partition_dir(storage, base_path, partition_path)
    pending = [(root, partition_path)]
    while pending:
        folder, relative = pending.pop()
        entries = storage.list_dir(folder)
        if folder != root and any(not e.is_dir and is_partition_metafile(e.name) for e in entries):
            return partition_path, relative
        pending.extend((e.path, f"{relative}/{e.name}") for e in entries
                       if e.is_dir and not e.name.startswith("."))
    return None


def check_new_partition(storage: Storage, base_path: str, partition_path: str, table: str | None = None) -> None:
    """Refuse to create ``partition_path`` when its folder would lie inside, or hold, another partition's.

    Raises:
        NestedPartitionPath: naming the table (its base path when ``table`` is not given) and both paths.
        StorageError: a listing failed.
    """
    pair = nesting_partition(storage, base_path, partition_path)
    if pair is not None:
        raise NestedPartitionPath(nested_partition_message(table or base_path, pair[0], pair[1], partition_path))


def check_partition_layout(storage: Storage, base_path: str, partitions: Iterable[str], table: str | None = None,
                           stored: bool = True) -> None:
    """Refuse a write whose partitions nest (one partition's folder inside another's): two of ``partitions``,
    or (``stored``) a new one of them (no metafile yet) and a partition already on storage. The writer calls
    it on the driver before any data file is written; each task's :func:`write_partition_metadata` checks
    the storage side again as it creates a partition.

    Raises:
        NestedPartitionPath: naming the table and both partition paths.
        StorageError: a listing failed.
    """
    paths = {p for p in partitions if p}
    pair = nested_pair(paths)
    if pair is not None:
        raise NestedPartitionPath(nested_partition_message(table or base_path, pair[0], pair[1], pair[0]))
    if stored:
        for partition in sorted(paths):
            if not has_partition_metadata(storage, base_path, partition):
                check_new_partition(storage, base_path, partition, table)


def render_partition_metadata(commit_time: str, depth: int) -> bytes:
    """The text metafile bytes Java writes (``Properties.store`` with comment ``partition metadata``)."""
    return javaprops.render({COMMIT_TIME_KEY: commit_time, PARTITION_DEPTH_KEY: str(depth)},
                            comment="partition metadata")


def _parquet_metafile_bytes(commit_time: str, depth: int) -> bytes:
    table = pa.table({"dummyint": pa.array([], pa.int64())})
    table = table.replace_schema_metadata({COMMIT_TIME_KEY: commit_time, PARTITION_DEPTH_KEY: str(depth)})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="NONE")
    return bytes(sink.getvalue().to_pybytes())


def write_partition_metadata(storage: Storage, base_path: str, partition_path: str, commit_time: str,
                             task_partition_id: int = 0, use_base_format: bool = False) -> bool:
    """Create the partition's metafile if it is missing (Java ``HoodiePartitionMetadata.trySave``).

    Args:
        storage: table storage.
        base_path: table base path.
        partition_path: relative partition path (``""`` for a non-partitioned table).
        commit_time: instant creating the partition.
        task_partition_id: suffix of the temporary file, so concurrent tasks do not collide.
        use_base_format: write the parquet variant (``hoodie.partition.metafile.use.base.format``).

    Returns:
        ``True`` if this call created the metafile, ``False`` if one existed already.

    Raises:
        NestedPartitionPath: the new partition's folder would lie inside another partition's, or hold one.
        StorageError: the write failed (the temporary file is removed).
    """
    if has_partition_metadata(storage, base_path, partition_path):
        return False
    check_new_partition(storage, base_path, partition_path)
    folder = _partition_dir(storage, base_path, partition_path)
    depth = partition_depth(partition_path)
    final_name = PARQUET_METAFILE if use_base_format else PARTITION_METAFILE_PREFIX
    data = _parquet_metafile_bytes(commit_time, depth) if use_base_format else \
        render_partition_metadata(commit_time, depth)
    temp = storage.join(folder, f"{PARTITION_METAFILE_PREFIX}_{task_partition_id}")
    final = storage.join(folder, final_name)
    try:
        storage.write_bytes(temp, data)
        if storage.exists(final):
            return False
        try:
            storage.rename(temp, final)
        except StorageError:
            if storage.exists(final):
                return False  # a concurrent task created it first
            raise
        LOG.debug("created partition metadata %s (commit %s)", final, commit_time)
        return True
    finally:
        storage.delete(temp)


def read_partition_metadata(storage: Storage, base_path: str, partition_path: str) -> PartitionMetadata:
    """Read the partition's metafile (text or parquet variant).

    Raises:
        StorageError: no metafile exists.
        CorruptFile: it lacks ``commitTime``/``partitionDepth`` or they are malformed.
    """
    folder = _partition_dir(storage, base_path, partition_path)
    text_path = storage.join(folder, PARTITION_METAFILE_PREFIX)
    parquet_path = storage.join(folder, PARQUET_METAFILE)
    if storage.exists(text_path):
        path = text_path
        props = javaprops.parse(storage.read_bytes(text_path).decode("latin-1"), text_path)
    elif storage.exists(parquet_path):
        path = parquet_path
        with storage.open_input(parquet_path) as handle:
            raw = pq.read_metadata(handle).metadata or {}
        props = {k.decode("utf-8"): v.decode("utf-8") for k, v in raw.items()}
    else:
        raise StorageError(f"no partition metadata in '{folder}'")
    try:
        return PartitionMetadata(props[COMMIT_TIME_KEY], int(props[PARTITION_DEPTH_KEY]))
    except (KeyError, ValueError) as exc:
        raise CorruptFile(f"partition metadata '{path}' is malformed: {exc}") from exc
