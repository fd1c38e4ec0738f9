"""The bloom index (Hudi ``HoodieBloomIndex`` / ``HoodieGlobalBloomIndex``): which stored file holds
each incoming record key, reading as little as possible.

For each latest base file that could hold incoming keys (those of its partition; every partition for the
global index):

1. **Range pruning** (``hoodie.bloom.index.prune.by.ranges``, on by default): the footer's
   ``hoodie_min_record_key`` / ``hoodie_max_record_key`` keep only the keys inside the file's range (Java
   ``String`` order; keys or bounds with characters above U+FFFF, whose UTF-8 and UTF-16 orders can differ,
   are never pruned). A file without the range keeps every key.
2. **Bloom filter** (the footer's ``org.apache.hudi.bloomfilter``): keys the filter rules out are dropped. A
   file without a filter keeps every key.
3. **Key check**: only files with keys left have their record key column read; a key is tagged with the file
   when it is really there (so false positives never tag).

Only the footer of a file whose range excludes every key is read; Hudi reads the ranges in one job and the
filters in another — the same files, the same answer. Log files that may hold keys no base file has
(merge-on-read slices without a base file, log files whose write stat reports inserts; see
:mod:`engine.index.simple`) have no footer: their keys are always read.

Pure pyarrow; :mod:`engine.spark.index` runs it in Spark tasks.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, IndexConfig
from engine.filegroup.naming import parse_log_file_name
from engine.formats.base_file import (
    BLOOM_FILTER_KEY,
    BLOOM_FILTER_TYPE_CODE_KEY,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    OLD_BLOOM_FILTER_KEY,
    may_have_supplementary,
    read_footer,
)
from engine.formats.bloom import deserialize_bloom_filter
from engine.index.simple import KEY_LOCATION_SCHEMA, KeyedFile, read_key_locations
from engine.storage import Storage

logger = logging.getLogger(__name__)

_SUPPLEMENTARY = "[\\x{10000}-\\x{10FFFF}]"


@dataclass
class ProbeStats:
    """What a lookup read (Hudi's index metrics).

    Attributes:
        files: files considered.
        footers_read: base file footers read (ranges and bloom filters).
        files_pruned_by_range: files whose key range held no incoming key.
        files_pruned_by_bloom: files whose bloom filter ruled out every remaining key.
        files_key_checked: files whose record keys were read.
        keys_probed: incoming keys checked against bloom filters.
        keys_found: keys found in a file.
        bytes_key_checked: sizes of the files whose record keys were read, bytes.
    """

    files: int = 0
    footers_read: int = 0
    files_pruned_by_range: int = 0
    files_pruned_by_bloom: int = 0
    files_key_checked: int = 0
    keys_probed: int = 0
    keys_found: int = 0
    bytes_key_checked: int = 0

    def add(self, other: ProbeStats) -> None:
        """Accumulate ``other`` into this."""
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


def keys_in_range(keys: pa.Array, low: str | None, high: str | None) -> pa.Array:
    """The keys of ``keys`` (``pa.string()``) that may lie in ``[low, high]`` (Java ``String`` order); all of
    them when a bound is missing or has a character above U+FFFF."""
    if low is None or high is None or len(keys) == 0:
        return keys
    bounds = pa.array([low, high], pa.string())
    if pc.any(pc.match_substring_regex(bounds, _SUPPLEMENTARY)).as_py():
        return keys
    inside = pc.and_(pc.greater_equal(keys, low), pc.less_equal(keys, high))
    if not may_have_supplementary(keys):
        return keys.filter(inside)
    unsure = pc.match_substring_regex(keys, _SUPPLEMENTARY)
    return keys.filter(pc.or_(inside, unsure))


def lookup_file(storage: Storage, file: KeyedFile, keys: pa.Array, conf: HoodieConfig,
                stats: ProbeStats | None = None) -> pa.Table:
    """``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of the ``keys`` (distinct,
    ``pa.string()``) that ``file`` holds, through range pruning, the bloom filter and a key check (module doc).

    Raises:
        StorageError / CorruptFile: the file cannot be read.
    """
    stats = stats if stats is not None else ProbeStats()
    stats.files += 1
    empty = KEY_LOCATION_SCHEMA.empty_table()
    if len(keys) == 0:
        return empty
    if parse_log_file_name(file.path.rsplit("/", 1)[-1]) is not None:
        stats.files_key_checked += 1
        stats.bytes_key_checked += file.size
        found = read_key_locations(storage, file, conf, keys)
        stats.keys_found += found.num_rows
        return found
    footer = read_footer(storage, file.path)
    stats.footers_read += 1
    if conf.get(IndexConfig.BLOOM_PRUNE_BY_RANGES):
        keys = keys_in_range(keys, footer.get(MIN_RECORD_KEY), footer.get(MAX_RECORD_KEY))
        if len(keys) == 0:
            stats.files_pruned_by_range += 1
            return empty
    text = footer.get(BLOOM_FILTER_KEY) or footer.get(OLD_BLOOM_FILTER_KEY)
    if text:
        stats.keys_probed += len(keys)
        bloom = deserialize_bloom_filter(text, footer.get(BLOOM_FILTER_TYPE_CODE_KEY))
        keys = keys.filter(pa.array(bloom.might_contain_many(keys)))
        if len(keys) == 0:
            stats.files_pruned_by_bloom += 1
            return empty
    stats.files_key_checked += 1
    stats.bytes_key_checked += file.size
    found = read_key_locations(storage, file, conf, keys)
    stats.keys_found += found.num_rows
    return found


def lookup_files(storage: Storage, files: list[KeyedFile], keys_by_partition: dict[str, pa.Array] | None,
                 all_keys: pa.Array | None, conf: HoodieConfig, stats: ProbeStats | None = None) -> pa.Table:
    """:func:`lookup_file` over ``files``: each probed with the keys of its partition (``keys_by_partition``,
    the non-global index) or with ``all_keys`` (the global index)."""
    parts = []
    for file in files:
        keys = all_keys if keys_by_partition is None else keys_by_partition.get(file.partition_path)
        if keys is None or len(keys) == 0:
            continue
        parts.append(lookup_file(storage, file, keys, conf, stats))
    if not parts:
        return KEY_LOCATION_SCHEMA.empty_table()
    return pa.concat_tables(parts)
