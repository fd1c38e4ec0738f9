"""The simple bucket index (Hudi ``HoodieSimpleBucketIndex`` with ``hoodie.index.bucket.engine=SIMPLE``).

Every partition has a fixed number of buckets (``hoodie.bucket.index.num.buckets``); a record's bucket is a
hash of its hash-field values (``hoodie.bucket.index.hash.field``, default: the record key fields) and each
bucket is exactly one file group, whose id starts with the bucket number as 8 digits. So a key's file
group follows from the key alone: tagging reads no data file, only the file-system view's file ids.

The hash is Hudi's ``BucketIdentifier.getBucketId`` bit for bit (docs/FORMAT.md §7), so Hudi and this engine
route every key to the same bucket:

* hash keys (:func:`hash_keys`, Hudi 0.15 ``KeyGenUtils.extractRecordKeysByFields``): the key split on ``,``,
  each part on its first ``:``; the values of hash fields (and parts without ``:``) in the key's order;
* ``bucket = (javaListHashCode(hash_keys) & 0x7fffffff) % num_buckets`` where a Java ``List.hashCode`` is
  ``h = 1; h = 31*h + e.hashCode()`` (``0`` for null) and ``String.hashCode`` runs over UTF-16 code units,
  both in 32-bit wrap-around arithmetic.

Pure Python/pyarrow/numpy; :mod:`engine.spark.index` wires it into Spark.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, IndexConfig, KeyGenConfig, TableConfig, parse_list
from engine.errors import ConfigError, IndexLookupError, InvalidRecordKey
from engine.java_hash import java_string_hash

_MASK32 = 0xFFFFFFFF
_POSITIVE = 0x7FFFFFFF

BUCKET_ENGINES = ("SIMPLE",)
"""``hoodie.index.bucket.engine`` values supported; ``CONSISTENT_HASHING`` (resizable buckets with metadata under
``.hoodie/.bucket_index``) is refused."""


def java_list_hash(values: Sequence[str | None]) -> int:
    """Java ``List.hashCode`` of a list of strings (``null`` hashes to 0) as an unsigned 32-bit int."""
    h = 1
    for value in values:
        h = (31 * h + (0 if value is None else java_string_hash(value))) & _MASK32
    return h


NULL_RECORDKEY_PLACEHOLDER = "__null__"
"""Hudi ``KeyGenUtils.NULL_RECORDKEY_PLACEHOLDER``: a null key part, hashed as ``null``."""
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
"""Hudi ``KeyGenUtils.EMPTY_RECORDKEY_PLACEHOLDER``: an empty key part, hashed as ``""``."""


def hash_keys(record_key: str, hash_fields: Sequence[str]) -> list[str | None]:
    """Hudi 0.15 ``BucketIdentifier.getHashKeys`` = ``KeyGenUtils.extractRecordKeysByFields``: the key is split
    on every ``,`` (Java ``String.split``: trailing empty parts dropped), each part on its first ``:``; a part
    without ``:`` is kept whole, a ``field:value`` part is kept when ``field`` is a hash field; values are kept in
    the key's order (not the hash fields' order), ``__null__`` as ``None`` and ``__empty__`` as ``""``.

    So a value holding ``,`` or ``:`` is cut as Hudi cuts it: ``f1:abc,f2:bcd,efg`` hashes
    ``[abc, bcd, efg]`` and a simple key ``a,b`` hashes ``[a, b]`` (Hudi 1.0 changed this rule, HUDI-8403;
    tables written by 0.14/0.15 follow this one).
    """
    values: list[str | None] = []
    for part in _java_split(record_key, ","):
        field, sep, value = part.partition(":")
        if not sep:
            values.append(part)
        elif not hash_fields or field in hash_fields:
            values.append(None if value == NULL_RECORDKEY_PLACEHOLDER
                          else "" if value == EMPTY_RECORDKEY_PLACEHOLDER else value)
    return values


def _java_split(text: str, sep: str) -> list[str]:
    """Java ``String.split`` with a literal one-character separator: trailing empty strings are dropped (an
    empty ``text`` gives ``[""]``)."""
    if not text:
        return [text]
    pieces = text.split(sep)
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def bucket_id(record_key: str, hash_fields: Sequence[str], num_buckets: int) -> int:
    """The bucket of one record key (Hudi ``BucketIdentifier.getBucketId``), in ``[0, num_buckets)``."""
    return (java_list_hash(hash_keys(record_key, hash_fields)) & _POSITIVE) % num_buckets


def bucket_ids(keys: pa.Array | pa.ChunkedArray, hash_fields: Sequence[str], num_buckets: int) -> pa.Array:
    """:func:`bucket_id` of every key, as ``int32``.

    Keys that are plain ASCII without ``:`` or ``,`` (the common case) are hashed with numpy over the Arrow
    buffer; others one by one.

    Raises:
        InvalidRecordKey: a null key.
    """
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    keys = keys.cast(pa.large_string())
    n = len(keys)
    if n == 0:
        return pa.array([], pa.int32())
    if keys.null_count:
        raise InvalidRecordKey("a record key is null: it cannot be hashed to a bucket")
    out = np.empty(n, dtype=np.int64)
    ascii_ = np.asarray(pc.equal(pc.binary_length(keys), pc.utf8_length(keys)).to_numpy(zero_copy_only=False),
                        dtype=bool)
    plain = np.asarray(pc.invert(pc.match_substring_regex(keys, "[:,]")).to_numpy(zero_copy_only=False), dtype=bool)
    simple = ascii_ & plain
    if simple.any():
        chosen = keys.filter(pa.array(simple)) if not simple.all() else keys
        out[simple] = _ascii_hashes(chosen)  # a key without ',' (nor ':') hashes as [key]
    # Composite keys (``f1:v1,f2:v2``) of ASCII text, split as Java splits them; a trailing ',' (Java drops
    # trailing empty parts) and non-ASCII text go one by one.
    split = ascii_ & ~plain & ~np.asarray(pc.ends_with(keys, ",").to_numpy(zero_copy_only=False), dtype=bool)
    if split.any():
        out[split] = _composite_hashes(keys.filter(pa.array(split)), hash_fields)
    for i in np.nonzero(~(simple | split))[0].tolist():
        out[i] = java_list_hash(hash_keys(keys[i].as_py(), hash_fields))
    return pa.array(((out & _POSITIVE) % num_buckets).astype(np.int32), pa.int32())


def _string_hashes(values: pa.Array) -> np.ndarray:
    """Java ``String.hashCode`` of each ASCII ``large_string`` value (one UTF-16 unit per byte), as ``uint64``
    holding the unsigned 32-bit hash; vectorized over the Arrow buffers."""
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[values.offset: values.offset + len(values) + 1]
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[offsets[0]: offsets[-1]].astype(np.uint64)
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    hashes = np.zeros(len(values), dtype=np.uint64)
    if len(data):
        # String.hashCode = sum(unit_i * 31^(len-1-i)) mod 2^32: each byte's power from its distance to the end.
        ends = np.repeat(offsets[1:], lengths)
        exponent = ends - 1 - np.arange(len(data))
        powers = _powers_of_31(int(lengths.max()))
        terms = (data * powers[exponent]) & _MASK32
        nonempty = lengths > 0
        sums = np.add.reduceat(terms, offsets[:-1][nonempty])
        hashes[nonempty] = sums & _MASK32
    return hashes


def _ascii_hashes(keys: pa.Array) -> np.ndarray:
    """Java ``List.hashCode`` of ``[key]`` for ASCII keys, vectorized."""
    return ((31 + _string_hashes(keys)) & _MASK32).astype(np.int64)


_KEY_PART = r"(?s)^(?P<field>[^:]*):(?P<value>.*)$"


def _composite_hashes(keys: pa.Array, hash_fields: Sequence[str]) -> np.ndarray:
    """Java ``List.hashCode`` of :func:`hash_keys` of each ASCII ``large_string`` key that does not end with
    ``,``, vectorized: the keys are split on ``,``, each part on its first ``:``, the kept values hashed at once
    and each key's list hash summed as ``31^m + sum(h_i * 31^(m-1-i))`` (mod 2^32) over its ``m`` kept
    values."""
    parts = pc.split_pattern(keys, ",")
    part_offsets = np.asarray(parts.offsets, dtype=np.int64)
    part_offsets = part_offsets - part_offsets[0]
    flat = parts.flatten()
    pieces = pc.extract_regex(flat, _KEY_PART)
    has_field = np.asarray(pieces.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    field, value = pieces.field("field"), pieces.field("value")
    if hash_fields:
        wanted = np.asarray(pc.fill_null(pc.is_in(field, pa.array(list(hash_fields), field.type)), False)
                            .to_numpy(zero_copy_only=False), dtype=bool)
        kept = ~has_field | wanted
    else:
        kept = np.ones(len(flat), dtype=bool)
    values = pc.if_else(pa.array(has_field), value, flat).cast(pa.large_string())
    hashes = _string_hashes(values)
    placeholder = has_field & np.asarray(pc.fill_null(pc.is_in(
        value, pa.array([NULL_RECORDKEY_PLACEHOLDER, EMPTY_RECORDKEY_PLACEHOLDER], value.type)), False)
        .to_numpy(zero_copy_only=False), dtype=bool)
    hashes[placeholder] = 0  # null hashes to 0, and so does ""
    lengths = np.diff(part_offsets)
    owner = np.repeat(np.arange(len(keys)), lengths)
    kept_before = np.concatenate([[0], np.cumsum(kept)])
    counts = kept_before[part_offsets[1:]] - kept_before[part_offsets[:-1]]
    rank = kept_before[:-1] - kept_before[part_offsets[:-1]][owner]
    powers = _powers_of_31(int(counts.max()) + 1)
    exponent = np.where(kept, counts[owner] - 1 - rank, 0)
    terms = np.where(kept, (hashes * powers[exponent]) & _MASK32, 0).astype(np.uint64)
    summed = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(terms, dtype=np.uint64)])
    sums = summed[part_offsets[1:]] - summed[part_offsets[:-1]]  # wraps mod 2^64, exact mod 2^32
    return ((powers[counts] + sums) & _MASK32).astype(np.int64)


def _powers_of_31(count: int) -> np.ndarray:
    powers = np.empty(max(count, 1), dtype=np.uint64)
    value = 1
    for i in range(len(powers)):
        powers[i] = value
        value = (value * 31) & _MASK32
    return powers


def bucket_file_id(bucket: int) -> str:
    """A new file group id for ``bucket`` (Hudi ``BucketIdentifier.newBucketFileIdPrefix`` + ``-0``): a random
    UUID whose first 8 characters are the bucket number as 8 digits, e.g.
    ``00000003-5b6e-4c1d-9e2f-0123456789ab-0``."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket number of a bucket file group id (Hudi ``bucketIdFromFileId``), or ``None`` when its first 8
    characters are not digits (a file group another index type wrote)."""
    head = file_id[:8]
    return int(head) if len(head) == 8 and head.isdigit() else None


@dataclass(frozen=True)
class BucketSpec:
    """A table's bucket layout for a write.

    Attributes:
        num_buckets: buckets per partition (``hoodie.bucket.index.num.buckets``).
        hash_fields: fields hashed (``hoodie.bucket.index.hash.field``, default the record key fields).
    """

    num_buckets: int
    hash_fields: tuple[str, ...]

    @staticmethod
    def from_config(conf: HoodieConfig, table: str) -> BucketSpec:
        """The spec of a ``hoodie.index.type=BUCKET`` write (Hudi ``HoodieIndexConfig.validateBucketIndexConfig``).

        Raises:
            ConfigError: ``hoodie.index.bucket.engine`` is not SIMPLE, the bucket count is not positive, or a
                hash field is not a record key field; each naming the key and the table.
        """
        engine = conf.get(IndexConfig.BUCKET_ENGINE).strip().upper()
        if engine not in BUCKET_ENGINES:
            raise ConfigError(
                f"{IndexConfig.BUCKET_ENGINE.key}={engine} is not supported for table {table} (supported: "
                f"{', '.join(BUCKET_ENGINES)}; consistent hashing resizes buckets through metadata this engine "
                "does not write); nothing was written")
        num = conf.get(IndexConfig.BUCKET_NUM)
        if num is None or num <= 0:
            raise ConfigError(f"{IndexConfig.BUCKET_NUM.key}={num} for table {table}: the bucket index needs a "
                              "positive number of buckets; nothing was written")
        key_fields = parse_list(conf.get_optional(KeyGenConfig.RECORDKEY_FIELD)
                                or conf.get_optional(TableConfig.RECORDKEY_FIELDS) or "")
        configured = parse_list(conf.get_optional(IndexConfig.BUCKET_HASH_FIELD) or "")
        hash_fields = configured or key_fields
        missing = [f for f in hash_fields if f not in key_fields]
        if missing:
            raise ConfigError(
                f"{IndexConfig.BUCKET_HASH_FIELD.key}={','.join(configured)} for table {table}: bucket index key "
                f"fields must be a subset of the record key fields {key_fields} ({missing} are not); nothing was "
                "written")
        if not hash_fields:
            raise ConfigError(f"table {table} has no record key fields: the bucket index hashes record keys "
                              f"(set primaryKey / {TableConfig.RECORDKEY_FIELDS.key}); nothing was written")
        return BucketSpec(int(num), tuple(hash_fields))


def bucket_file_groups(
    partition: str, file_ids: Iterable[str], table: str
) -> dict[int, str]:
    """Bucket → file group id of one partition's latest file slices (Hudi
    ``loadBucketIdToFileIdMappingForPartition``).

    Raises:
        IndexLookupError: two file groups claim one bucket, or a file group id is not a bucket id (the partition
            was written with another index type), naming the partition and the file groups.
    """
    mapping: dict[int, str] = {}
    for file_id in sorted(file_ids):
        bucket = bucket_of_file_id(file_id)
        if bucket is None:
            raise IndexLookupError(
                f"file group {file_id} in partition '{partition}' of table {table} is not a bucket file group "
                "(its id does not start with an 8-digit bucket number): the partition was written with another "
                "index type and cannot be written with hoodie.index.type=BUCKET")
        if bucket in mapping:
            raise IndexLookupError(
                f"Find multiple files at partition path={partition} of table {table} belongs to the same bucket id "
                f"= {bucket} ({mapping[bucket]}, {file_id}); roll back the instant that wrote the second one "
                "(CALL rollback_to_instant)")
        mapping[bucket] = file_id
    return mapping


def new_bucket_groups(
    wanted: Iterable[tuple[str, int]], existing: Mapping[str, Mapping[int, str]]
) -> dict[tuple[str, int], str]:
    """File group ids for ``(partition, bucket)`` pairs: the existing one, else a new :func:`bucket_file_id`."""
    return {(partition, bucket): existing.get(partition, {}).get(bucket) or bucket_file_id(bucket)
            for partition, bucket in wanted}
