"""Hudi bloom filters, bit-exact with Java (docs/FORMAT.md §4.3).

Mirrors ``org.apache.hudi.common.bloom``: :class:`SimpleBloomFilter` (``SimpleBloomFilter``, a Hadoop
``BloomFilter``) and :class:`DynamicBloomFilter` (``HoodieDynamicBoundedBloomFilter`` around
``InternalDynamicBloomFilter``, type code ``DYNAMIC_V0``), the bit positions of ``HashFunction`` and the
hash of ``util.hash.MurmurHash`` (Hadoop's MurmurHash2 variant). The serialized form is
``java.util.Base64`` of the ``DataOutput`` bytes that Java's ``write`` produces, so a filter built here
equals the ``org.apache.hudi.bloomfilter`` footer value Java writes for the same keys in the same order.

Hashing is vectorized with numpy: keys are UTF-8 encoded once, grouped by byte length and hashed as
``uint32`` matrices, so adding a million keys takes about a second.
"""

from __future__ import annotations

import base64
import logging
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from engine.config import HoodieConfig, IndexConfig
from engine.errors import ConfigError, CorruptFile, InvalidRecordKey, UnsupportedTable

logger = logging.getLogger(__name__)

MURMUR_HASH = 1
"""Hudi/Hadoop ``Hash.MURMUR_HASH``; the only hash type this module computes (``JENKINS_HASH`` is 0)."""

DYNAMIC_V0 = "DYNAMIC_V0"
"""``BloomFilterTypeCode.DYNAMIC_V0``: the value of the ``hoodie_bloom_filter_type_code`` footer key."""

SIMPLE = "SIMPLE"
"""``BloomFilterTypeCode.SIMPLE``; assumed when a file has no type-code footer key."""

_FILTER_VERSION = -1  # InternalFilter.VERSION, written first by every filter
_HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize
_DYNAMIC_HEADER = struct.Struct(">iii")  # nr, currentNbRecord, number of rows
_M = np.uint32(0x5BD1E995)
_M_INT = 0x5BD1E995
_MASK32 = 0xFFFFFFFF
_CHUNK_BYTES = 1 << 19  # key bytes hashed per step: keeps the uint32 work arrays in CPU cache

KeyInput: TypeAlias = pa.Array | pa.ChunkedArray | Sequence[str]
"""Keys accepted by ``add_many`` / ``might_contain_many``: an Arrow string array or Python strings."""


def bloom_bit_size(num_entries: int, fpp: float) -> int:
    """Bits per filter row, as ``BloomFilterUtils.getBitSize``:
    ``ceil(numEntries * (-ln(fpp) / ln(2)^2))`` in IEEE doubles (2,587,966 for 60000 / 1e-9)."""
    log2_squared = math.log(2) * math.log(2)
    return int(math.ceil(num_entries * (-math.log(fpp) / log2_squared)))


def bloom_num_hashes(bit_size: int, num_entries: int) -> int:
    """Hash functions per key, as ``BloomFilterUtils.getNumHashes``: ``ceil(ln 2 * bitSize / numEntries)``
    (30 for the defaults)."""
    return int(math.ceil(math.log(2) * bit_size / num_entries))


def _to_int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def murmur_hash(data: bytes, seed: int) -> int:
    """Hudi/Hadoop ``MurmurHash.hash(byte[], int seed)`` in pure Python (reference for one key).

    32-bit MurmurHash2 with Hadoop's quirks: ``h = seed ^ len``, little-endian 4-byte words, and the
    trailing ``len % 4`` bytes **sign-extended** (Java ``byte``) before being shifted into ``h``.

    Args:
        data: the key bytes (UTF-8 of the record key).
        seed: Java ``int`` seed (any Python int; taken modulo 2**32).

    Returns:
        The hash as a signed 32-bit Java ``int``.
    """
    h = (seed ^ len(data)) & _MASK32
    n_words = len(data) // 4
    for i in range(n_words):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _M_INT) & _MASK32
        k ^= k >> 24
        k = (k * _M_INT) & _MASK32
        h = (h * _M_INT) & _MASK32
        h ^= k
    tail = data[4 * n_words:]
    if tail:
        # Java: h ^= data[len-3] << 16; h ^= data[len-2] << 8; h ^= data[len-1] (for the bytes present),
        # i.e. the first tail byte is shifted most; bytes are signed.
        for i, byte in enumerate(tail):
            signed = byte - 256 if byte >= 128 else byte
            h ^= (signed << (8 * (len(tail) - 1 - i))) & _MASK32
        h = (h * _M_INT) & _MASK32
    h ^= h >> 13
    h = (h * _M_INT) & _MASK32
    h ^= h >> 15
    return _to_int32(h)


def _encode_keys(keys: KeyInput) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """UTF-8 bytes and offsets of ``keys`` (``len(offsets) == len(keys) + 1``); the bytes are the Arrow data
    buffer itself (no copy) for string arrays.

    Raises:
        InvalidRecordKey: a key is null, or the values are not (valid UTF-8) strings.
    """
    if isinstance(keys, pa.ChunkedArray):
        array: pa.Array = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    elif isinstance(keys, pa.Array):
        array = keys
    else:
        try:
            array = pa.array(list(keys), type=pa.string())
        except (UnicodeEncodeError, pa.ArrowException) as exc:
            raise InvalidRecordKey(f"bloom filter: record keys must be valid strings: {exc}") from exc
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        try:
            array = array.cast(pa.large_string() if pa.types.is_large_binary(array.type) else pa.string())
        except pa.ArrowException as exc:
            raise InvalidRecordKey(f"bloom filter: record keys of type {array.type} are not strings: {exc}") \
                from exc
    if array.null_count:
        raise InvalidRecordKey(f"bloom filter: {array.null_count} null record key(s) cannot be added")
    n = len(array)
    if n == 0:
        return np.empty(0, np.uint8), np.zeros(1, np.int64)
    buffers = array.buffers()
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=offset_type, count=array.offset + n + 1)[array.offset:]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.empty(0, np.uint8)
    return data, offsets.astype(np.int64)


def _positions_equal_length(rows: npt.NDArray[np.uint8], nb_hash: int, vector_size: int,
                            out: npt.NDArray[np.int64]) -> None:
    """Bit positions of keys that all have the same byte length (``HashFunction.hash``).

    Args:
        rows: ``(n, L)`` key bytes, ``L > 0``.
        nb_hash: hash functions per key.
        vector_size: bits per filter row.
        out: ``(n, nb_hash)`` result, ``abs(h_i % vector_size)`` with Java remainder semantics, where
            ``h_0 = murmur(key, 0)`` and ``h_i = murmur(key, h_{i-1})`` (chained seeds).
    """
    n, length = rows.shape
    n_words = length // 4
    tail = length - 4 * n_words
    # Word mixing (k*m, k^=k>>>24, k*m) and the tail XOR do not depend on the seed: compute them once.
    words = np.ascontiguousarray(rows[:, :4 * n_words]).view("<u4").astype(np.uint32)
    mixed = words * _M
    mixed ^= mixed >> 24
    mixed *= _M
    mixed_by_word = np.ascontiguousarray(mixed.T)  # (n_words, n)
    tail_xor = np.zeros(n, dtype=np.uint32)
    if tail:
        # First tail byte shifted most (Java ``data[len-left] << 8*(left-1)``), sign-extended.
        signed = rows[:, 4 * n_words:].view(np.int8).astype(np.int32).view(np.uint32)
        for i in range(tail):
            tail_xor ^= signed[:, i] << (8 * (tail - 1 - i))
    seed = np.zeros(n, dtype=np.uint32)
    length32 = np.uint32(length)
    h = np.empty(n, dtype=np.uint32)
    shifted = np.empty(n, dtype=np.uint32)
    row = np.empty(n, dtype=np.int32)
    remainder_by = np.int32(vector_size)
    for i in range(nb_hash):
        np.bitwise_xor(seed, length32, out=h)
        for j in range(n_words):
            h *= _M
            h ^= mixed_by_word[j]
        if tail:
            h ^= tail_xor
            h *= _M
        np.right_shift(h, 13, out=shifted)
        h ^= shifted
        h *= _M
        np.right_shift(h, 15, out=shifted)
        h ^= shifted
        seed, h = h, seed
        # Java ``Math.abs(hash % vectorSize)`` in int32: |remainder| < vectorSize, so abs cannot overflow.
        np.fmod(seed.view(np.int32), remainder_by, out=row)
        np.abs(row, out=row)
        out[:, i] = row


def hash_positions(keys: KeyInput, nb_hash: int, vector_size: int) -> npt.NDArray[np.int64]:
    """Bit positions of every key, as Java's ``HashFunction.hash(new Key(key.getBytes(UTF_8)))``.

    Args:
        keys: record keys.
        nb_hash: hash functions per key.
        vector_size: bits per filter row.

    Returns:
        ``(len(keys), nb_hash)`` int64 array of positions in ``[0, vector_size)``.

    Raises:
        InvalidRecordKey: a key is null or empty (Java: ``key length must be > 0``).
    """
    data, offsets = _encode_keys(keys)
    n = len(offsets) - 1
    out = np.empty((n, nb_hash), dtype=np.int64)
    if n == 0:
        return out
    lengths = np.diff(offsets)
    if (lengths == 0).any():
        raise InvalidRecordKey(f"bloom filter: empty record key at row {int(np.argmin(lengths))}")
    first = int(lengths[0])
    if (lengths == first).all():
        # Uniform length (e.g. UUID keys): the bytes are one contiguous (n, L) matrix, no gather needed.
        start = int(offsets[0])
        matrix = data[start:start + n * first].reshape(n, first)
        step = max(1, _CHUNK_BYTES // first)
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            _positions_equal_length(matrix[lo:hi], nb_hash, vector_size, out[lo:hi])
        return out
    order = np.argsort(lengths, kind="stable")
    bounds = np.flatnonzero(np.diff(lengths[order])) + 1
    starts = offsets[:-1]
    for group in np.split(order, bounds):
        length = int(lengths[group[0]])
        step = max(1, _CHUNK_BYTES // length)
        for chunk_start in range(0, len(group), step):
            chunk = group[chunk_start:chunk_start + step]
            rows = data[starts[chunk][:, None] + np.arange(length)]
            block = np.empty((len(chunk), nb_hash), dtype=np.int64)
            _positions_equal_length(rows, nb_hash, vector_size, block)
            out[chunk] = block
    return out


class _BitRow:
    """One ``InternalBloomFilter`` (Hadoop ``BloomFilter``): a bit vector plus its sizing."""

    def __init__(self, vector_size: int, nb_hash: int, bits: npt.NDArray[np.bool_] | None = None) -> None:
        self.vector_size = vector_size
        self.nb_hash = nb_hash
        self.bits = bits if bits is not None else np.zeros(vector_size, dtype=np.bool_)

    def set_positions(self, positions: npt.NDArray[np.int64]) -> None:
        self.bits[positions.ravel()] = True

    def contains(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        return np.asarray(self.bits[positions].all(axis=1), dtype=np.bool_)

    def to_bytes(self) -> bytes:
        """``InternalBloomFilter.write``: the 13-byte header then ``(vectorSize+7)/8`` bytes, bit ``i`` in
        byte ``i >> 3`` under mask ``1 << (i & 7)``."""
        header = _HEADER.pack(_FILTER_VERSION, self.nb_hash, MURMUR_HASH, self.vector_size)
        return header + np.packbits(self.bits, bitorder="little").tobytes()

    @staticmethod
    def from_bytes(data: bytes, offset: int) -> tuple[_BitRow, int]:
        """Parse one row at ``offset``; returns the row and the offset after it.

        Raises:
            CorruptFile: truncated data or a bad version.
            UnsupportedTable: a hash type other than murmur.
        """
        if len(data) < offset + _HEADER.size:
            raise CorruptFile("bloom filter: truncated filter header")
        version, nb_hash, hash_type, vector_size = _HEADER.unpack_from(data, offset)
        if version != _FILTER_VERSION or nb_hash <= 0 or vector_size <= 0:
            raise CorruptFile(
                f"bloom filter: bad header (version={version}, nbHash={nb_hash}, vectorSize={vector_size})")
        if hash_type != MURMUR_HASH:
            raise UnsupportedTable(f"bloom filter: hash type {hash_type} is not supported (only murmur = 1)")
        start = offset + _HEADER.size
        end = start + (vector_size + 7) // 8
        if len(data) < end:
            raise CorruptFile(f"bloom filter: bit vector truncated ({len(data) - start} of {end - start} bytes)")
        packed = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
        bits = np.unpackbits(packed, bitorder="little")[:vector_size].astype(np.bool_)
        return _BitRow(vector_size, nb_hash, bits), end


class BloomFilter(ABC):
    """A Hudi bloom filter over record keys (Hudi ``org.apache.hudi.common.bloom.BloomFilter``).

    Keys are hashed as their UTF-8 bytes. ``add_many`` with keys in row order reproduces Java's filter
    after the same sequence of ``add`` calls.
    """

    def __init__(self, vector_size: int, nb_hash: int) -> None:
        if vector_size <= 0 or nb_hash <= 0:
            raise ConfigError(f"bloom filter: vector size ({vector_size}) and hash count ({nb_hash}) must be > 0")
        self.vector_size = vector_size
        self.nb_hash = nb_hash

    @property
    @abstractmethod
    def type_code(self) -> str | None:
        """The ``hoodie_bloom_filter_type_code`` footer value, or ``None`` when none is written (SIMPLE)."""

    @abstractmethod
    def _add_positions(self, positions: npt.NDArray[np.int64]) -> None:
        """Record keys (in add order) given their ``(n, nb_hash)`` bit positions."""

    @abstractmethod
    def _rows(self) -> list[_BitRow]:
        """The bit rows membership is tested against."""

    @abstractmethod
    def _serialize_bytes(self) -> bytes:
        """Java ``write(DataOutput)`` bytes."""

    def add(self, key: str) -> None:
        """Add one record key.

        Raises:
            InvalidRecordKey: ``key`` is empty.
        """
        self.add_many([key])

    def add_many(self, keys: KeyInput) -> None:
        """Add record keys in order (as Java ``add`` per key; order matters for dynamic filters).

        Args:
            keys: Arrow string array (chunked allowed) or a sequence of ``str``.

        Raises:
            InvalidRecordKey: a key is null or empty.
        """
        self._add_positions(hash_positions(keys, self.nb_hash, self.vector_size))

    def might_contain(self, key: str) -> bool:
        """Whether ``key`` may have been added (no false negatives)."""
        return bool(self.might_contain_many([key])[0])

    def might_contain_many(self, keys: KeyInput) -> npt.NDArray[np.bool_]:
        """Vectorized :meth:`might_contain`: a boolean array aligned with ``keys``.

        Raises:
            InvalidRecordKey: a key is null or empty.
        """
        positions = hash_positions(keys, self.nb_hash, self.vector_size)
        result = np.zeros(len(positions), dtype=np.bool_)
        for row in self._rows():
            result |= row.contains(positions)
        return result

    def serialize(self) -> str:
        """The footer string: ``java.util.Base64`` (standard alphabet, padded) of the Java bytes."""
        return base64.b64encode(self._serialize_bytes()).decode("ascii")


class SimpleBloomFilter(BloomFilter):
    """Hudi ``SimpleBloomFilter``: one Hadoop bloom filter row; no type-code footer is written.

    Args:
        num_entries: expected keys (``hoodie.index.bloom.num_entries``).
        fpp: target false-positive probability (``hoodie.index.bloom.fpp``).
    """

    def __init__(self, num_entries: int, fpp: float) -> None:
        vector_size = bloom_bit_size(num_entries, fpp)
        super().__init__(vector_size, bloom_num_hashes(vector_size, num_entries))
        self._row = _BitRow(self.vector_size, self.nb_hash)

    @classmethod
    def _from_row(cls, row: _BitRow) -> SimpleBloomFilter:
        instance = cls.__new__(cls)
        BloomFilter.__init__(instance, row.vector_size, row.nb_hash)
        instance._row = row
        return instance

    @property
    def type_code(self) -> str | None:
        return None

    def _add_positions(self, positions: npt.NDArray[np.int64]) -> None:
        self._row.set_positions(positions)

    def _rows(self) -> list[_BitRow]:
        return [self._row]

    def _serialize_bytes(self) -> bytes:
        return self._row.to_bytes()


class DynamicBloomFilter(BloomFilter):
    """Hudi ``HoodieDynamicBoundedBloomFilter`` (type code ``DYNAMIC_V0``).

    A matrix of rows of ``num_entries`` keys each. When the active (last) row is full a row is appended,
    until ``rows * num_entries >= max_entries``; from then on keys are spread round-robin over all rows,
    starting at row 0 (which the first overflowing key also uses) — ``InternalDynamicBloomFilter.add``.

    Args:
        num_entries: keys per row (``hoodie.index.bloom.num_entries``, Java ``nr``).
        fpp: false-positive probability per row (``hoodie.index.bloom.fpp``).
        max_entries: bound on growth (``hoodie.bloom.index.filter.dynamic.max.entries``); not serialized,
            so a deserialized filter has 0 here, like Java's.
    """

    def __init__(self, num_entries: int, fpp: float, max_entries: int) -> None:
        vector_size = bloom_bit_size(num_entries, fpp)
        super().__init__(vector_size, bloom_num_hashes(vector_size, num_entries))
        self.num_entries = num_entries
        self.max_entries = max_entries
        self.current_nb_record = 0
        self._reached_max = False
        self._cur_matrix_index = 0
        self._matrix = [_BitRow(self.vector_size, self.nb_hash)]

    @property
    def type_code(self) -> str | None:
        return DYNAMIC_V0

    @property
    def num_rows(self) -> int:
        """Rows in the matrix."""
        return len(self._matrix)

    def _assign_rows(self, n: int) -> npt.NDArray[np.int64]:
        """Row index for each of the next ``n`` keys, advancing the add state exactly as Java does."""
        rows = np.empty(n, dtype=np.int64)
        done = 0
        while done < n and not self._reached_max:
            if self.current_nb_record >= self.num_entries:
                if len(self._matrix) * self.num_entries < self.max_entries:
                    self._matrix.append(_BitRow(self.vector_size, self.nb_hash))
                    self.current_nb_record = 0
                else:
                    # getActiveStandardBF: reachedMax = true, this key goes to row 0 without advancing
                    # curMatrixIndex.
                    self._reached_max = True
                    rows[done] = 0
                    done += 1
                    self.current_nb_record += 1
                    continue
            take = min(n - done, self.num_entries - self.current_nb_record)
            rows[done:done + take] = len(self._matrix) - 1
            done += take
            self.current_nb_record += take
        if done < n:
            count = n - done
            rows[done:] = (self._cur_matrix_index + np.arange(count, dtype=np.int64)) % len(self._matrix)
            self._cur_matrix_index += count
            self.current_nb_record += count
        return rows

    def _add_positions(self, positions: npt.NDArray[np.int64]) -> None:
        rows = self._assign_rows(len(positions))
        if len(rows) == 0:
            return
        first, last = int(rows[0]), int(rows[-1])
        if first == last and (rows == first).all():
            self._matrix[first].set_positions(positions)
            return
        for index in np.unique(rows):
            self._matrix[int(index)].set_positions(positions[rows == index])

    def _rows(self) -> list[_BitRow]:
        return self._matrix

    def _serialize_bytes(self) -> bytes:
        """``InternalDynamicBloomFilter.write``: filter header, ``nr``, ``currentNbRecord``, row count, rows."""
        parts = [
            _HEADER.pack(_FILTER_VERSION, self.nb_hash, MURMUR_HASH, self.vector_size),
            _DYNAMIC_HEADER.pack(self.num_entries, self.current_nb_record, len(self._matrix)),
        ]
        parts.extend(row.to_bytes() for row in self._matrix)
        return b"".join(parts)

    @classmethod
    def _from_bytes(cls, data: bytes) -> DynamicBloomFilter:
        if len(data) < _HEADER.size + _DYNAMIC_HEADER.size:
            raise CorruptFile("bloom filter: truncated dynamic filter header")
        version, nb_hash, hash_type, vector_size = _HEADER.unpack_from(data, 0)
        if version != _FILTER_VERSION:
            raise CorruptFile(f"bloom filter: bad version {version}")
        if hash_type != MURMUR_HASH:
            raise UnsupportedTable(f"bloom filter: hash type {hash_type} is not supported (only murmur = 1)")
        nr, current, n_rows = _DYNAMIC_HEADER.unpack_from(data, _HEADER.size)
        if n_rows <= 0:
            raise CorruptFile(f"bloom filter: dynamic filter with {n_rows} rows")
        offset = _HEADER.size + _DYNAMIC_HEADER.size
        matrix = []
        for _ in range(n_rows):
            row, offset = _BitRow.from_bytes(data, offset)
            matrix.append(row)
        instance = cls.__new__(cls)
        BloomFilter.__init__(instance, vector_size, nb_hash)
        instance.num_entries = nr
        instance.max_entries = 0
        instance.current_nb_record = current
        instance._reached_max = False
        instance._cur_matrix_index = 0
        instance._matrix = matrix
        return instance


def bloom_filter_from_config(conf: HoodieConfig) -> BloomFilter:
    """A new empty filter per the index config (Hudi ``BloomFilterFactory.createBloomFilter``).

    Reads ``hoodie.bloom.index.filter.type`` (SIMPLE | DYNAMIC_V0, case-insensitive),
    ``hoodie.index.bloom.num_entries``, ``hoodie.index.bloom.fpp`` and
    ``hoodie.bloom.index.filter.dynamic.max.entries``.

    Raises:
        ConfigError: unknown filter type or malformed numbers.
    """
    filter_type = conf.get(IndexConfig.BLOOM_FILTER_TYPE).strip().upper()
    num_entries = conf.get(IndexConfig.BLOOM_NUM_ENTRIES)
    fpp = conf.get(IndexConfig.BLOOM_FPP)
    if num_entries <= 0 or not 0.0 < fpp < 1.0:
        raise ConfigError(f"bloom filter: num_entries={num_entries} must be > 0 and fpp={fpp} in (0, 1)")
    if filter_type == SIMPLE:
        return SimpleBloomFilter(num_entries, fpp)
    if filter_type == DYNAMIC_V0:
        return DynamicBloomFilter(num_entries, fpp, conf.get(IndexConfig.BLOOM_DYNAMIC_MAX_ENTRIES))
    raise ConfigError(f"bloom filter type {filter_type!r} is not recognized "
                      f"({IndexConfig.BLOOM_FILTER_TYPE.key}: SIMPLE or DYNAMIC_V0)")


def deserialize_bloom_filter(text: str, type_code: str | None) -> BloomFilter:
    """Parse a footer bloom filter (Hudi ``BloomFilterFactory.fromString``).

    Args:
        text: the ``org.apache.hudi.bloomfilter`` value (base64).
        type_code: the ``hoodie_bloom_filter_type_code`` value; ``None``/empty means SIMPLE.

    Raises:
        CorruptFile: not base64 or not a well-formed filter.
        UnsupportedTable: unknown type code or hash type.
    """
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise CorruptFile(f"bloom filter: not valid base64 ({exc})") from exc
    code = (type_code or SIMPLE).strip().upper()
    if code == SIMPLE:
        row, end = _BitRow.from_bytes(data, 0)
        if end != len(data):
            logger.warning("bloom filter: %d trailing bytes after a SIMPLE filter ignored", len(data) - end)
        return SimpleBloomFilter._from_row(row)
    if code.startswith("DYNAMIC"):
        return DynamicBloomFilter._from_bytes(data)
    raise UnsupportedTable(f"bloom filter type code {type_code!r} is not supported")
