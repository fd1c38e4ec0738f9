"""HFile v3 building blocks shared by :mod:`engine.formats.hfile_reader` and :mod:`engine.formats.hfile_writer`.

The layout is HBase 2.4's (``HFileBlock``, ``FixedFileTrailer``, ``HFileInfo``, ``HFileBlockIndex``), which Hudi
0.14/0.15 write through HBase and Hudi 1.x through its own ``hudi-io`` ``HFileWriterImpl``:

* every block starts with a 33-byte header: 8-byte magic, int32 on-disk size without header (compressed data
  plus checksums), int32 uncompressed size without header, int64 offset of the previous block of the same
  type (-1 for none), byte checksum type, int32 bytes per checksum, int32 on-disk data size with header
  (header plus compressed data, checksums excluded); then the (compressed) payload, then one big-endian
  4-byte checksum per ``bytes_per_checksum`` chunk of header plus compressed payload;
* the file ends with a fixed 4096-byte trailer: magic ``TRABLK"$``, a length-delimited ``FileTrailerProto``,
  zero padding and an int32 whose low 3 bytes are the major version (3) and high byte the minor version;
* the file info block's payload is ``PBUF`` followed by a length-delimited ``FileInfoProto`` (a list of
  ``BytesBytesPair``); both protobuf messages are encoded and decoded here by hand (no protobuf package).

Keys are HBase ``KeyValue`` keys: int16 row length, row (the Hudi record key), int8 family length, family,
qualifier, int64 timestamp, type byte. Hudi 1.x writes only the int16 length and the row; readers here, like
Hudi's, look at the row only.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Final

from engine.errors import HFileError

MAGIC_LEN: Final = 8
HEADER_SIZE: Final = 33
"""``HFileBlock.headerSize(true)``: magic, three sizes, previous offset, checksum type and chunk size."""
TRAILER_SIZE: Final = 4096
"""``FixedFileTrailer.getTrailerSize(3)``."""
MAJOR_VERSION: Final = 3
MINOR_VERSION: Final = 3
"""What HBase 2.4 writes (``HFileReaderImpl.MAX_MINOR_VERSION``); Hudi 1.x writes 0, both are read."""

DATA: Final = b"DATABLK*"
ENCODED_DATA: Final = b"DATABLKE"
LEAF_INDEX: Final = b"IDXLEAF2"
META: Final = b"METABLKc"
INTERMEDIATE_INDEX: Final = b"IDXINTE2"
ROOT_INDEX: Final = b"IDXROOT2"
FILE_INFO: Final = b"FILEINF2"
TRAILER: Final = b'TRABLK"$'
BLOCK_NAMES: Final = {DATA: "DATA", ENCODED_DATA: "ENCODED_DATA", LEAF_INDEX: "LEAF_INDEX", META: "META",
                      INTERMEDIATE_INDEX: "INTERMEDIATE_INDEX", ROOT_INDEX: "ROOT_INDEX", FILE_INFO: "FILE_INFO",
                      b"BLMFMET2": "BLOOM_META", b"BLMFBLK2": "BLOOM_CHUNK", b"GENBLKc": "GENERAL_BLOOM_META"}
PBUF_MAGIC: Final = b"PBUF"

COMPRESSION_CODES: Final = {"LZO": 0, "GZ": 1, "NONE": 2, "SNAPPY": 3, "LZ4": 4, "BZIP2": 5, "ZSTD": 6}
"""``Compression.Algorithm`` ordinals as stored in the trailer's ``compression_codec``."""
COMPRESSION_NAMES: Final = {code: name for name, code in COMPRESSION_CODES.items()}
SUPPORTED_COMPRESSION: Final = ("NONE", "GZ")

CHECKSUM_NULL: Final = 0
CHECKSUM_CRC32: Final = 1
CHECKSUM_CRC32C: Final = 2
BYTES_PER_CHECKSUM: Final = 16 * 1024
"""HBase's ``hbase.bytes.per.checksum`` default."""

LATEST_TIMESTAMP: Final = 0x7FFFFFFFFFFFFFFF
"""``HConstants.LATEST_TIMESTAMP``: the timestamp of every cell Hudi writes (``new KeyValue(row, null, null,
value)``)."""
TYPE_PUT: Final = 4
TYPE_MAXIMUM: Final = 255
"""``KeyValue.Type.Maximum``: the type of HBase's shortened index keys (``PrivateCellUtil.createFirstOnRow``)."""

# File info keys (``HFileInfo``; Hudi's own keys are in ``HoodieAvroHFileReaderImplBase``).
LAST_KEY: Final = "hfile.LASTKEY"
AVG_KEY_LEN: Final = "hfile.AVG_KEY_LEN"
AVG_VALUE_LEN: Final = "hfile.AVG_VALUE_LEN"
CREATE_TIME_KEY: Final = "hfile.CREATE_TIME_TS"
MAX_MEMSTORE_TS_KEY: Final = "MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION: Final = "KEY_VALUE_VERSION"
KEY_VALUE_VERSION_WITH_MVCC: Final = 1
RESERVED_PREFIX: Final = "hfile."
"""HBase refuses file info keys with this prefix from callers (``HFileInfo.append`` with ``checkPrefix``)."""
HUDI_SCHEMA_KEY: Final = "schema"
HUDI_MIN_RECORD_KEY: Final = "minRecordKey"
HUDI_MAX_RECORD_KEY: Final = "maxRecordKey"
HUDI_BLOOM_FILTER_TYPE_CODE: Final = "bloomFilterTypeCode"
HUDI_BLOOM_FILTER_META_BLOCK: Final = "bloomFilter"
"""Names Hudi's ``HoodieAvroHFileWriter`` stores in file info and as meta block."""

I16: Final = struct.Struct(">h")
U16: Final = struct.Struct(">H")
I32: Final = struct.Struct(">i")
I64: Final = struct.Struct(">q")
HEADER: Final = struct.Struct(">8siiqbii")
KV_HEAD: Final = struct.Struct(">iiH")
"""Key length, value length and row length at the start of every cell in a data block."""
INDEX_ENTRY: Final = struct.Struct(">qi")


# ---------------------------------------------------------------------------------------------------------------
# Hadoop variable-length longs (WritableUtils) and protobuf varints


def vlong_size(first: int) -> int:
    """Bytes taken by a Hadoop vlong whose first byte (unsigned) is ``first`` (``WritableUtils.decodeVIntSize``)."""
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return -119 - signed if signed < -120 else -111 - signed


def read_vlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Decode a Hadoop vlong at ``pos``: ``(value, position after it)`` (``WritableUtils.readVLong``)."""
    first = buf[pos]
    size = vlong_size(first)
    signed = first - 256 if first > 127 else first
    if size == 1:
        return signed, pos + 1
    value = int.from_bytes(buf[pos + 1:pos + size], "big")
    if signed < -120:
        value = ~value
    return value, pos + size


def write_vlong(value: int) -> bytes:
    """Encode ``value`` as a Hadoop vlong (``WritableUtils.writeVLong``)."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value = ~value
        length = -120
    nbytes = (value.bit_length() + 7) // 8
    return struct.pack(">b", length - nbytes) + value.to_bytes(nbytes, "big")


def read_varint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """Decode a protobuf base-128 varint at ``pos`` (not past ``end``): ``(value, position after it)``.

    Raises:
        ValueError: the varint runs past ``end`` or is longer than 10 bytes.
    """
    result = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("truncated or overlong varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def write_varint(value: int) -> bytes:
    """Encode a non-negative integer (a negative int64 as its 64-bit two's complement) as a protobuf varint."""
    if value < 0:
        value &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def decode_proto(buf: bytes | memoryview) -> dict[int, list[int | bytes]]:
    """Decode one protobuf message into ``{field number: [values]}``: varint fields as ``int``, length-delimited
    fields as ``bytes``; fixed 32/64-bit fields as unsigned ``int``.

    Raises:
        ValueError: malformed wire data (the caller adds the file name).
    """
    fields: dict[int, list[int | bytes]] = {}
    pos, end = 0, len(buf)
    while pos < end:
        tag, pos = read_varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, pos = read_varint(buf, pos, end)
        elif wire == 2:
            length, pos = read_varint(buf, pos, end)
            if pos + length > end:
                raise ValueError(f"field {number} runs past the end of the message")
            value = bytes(buf[pos:pos + length])
            pos += length
        elif wire == 1 or wire == 5:
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise ValueError(f"field {number} runs past the end of the message")
            value = int.from_bytes(buf[pos:pos + width], "little")
            pos += width
        else:
            raise ValueError(f"unsupported wire type {wire} for field {number}")
        fields.setdefault(number, []).append(value)
    return fields


def proto_field(number: int, value: int | bytes) -> bytes:
    """One encoded protobuf field: a varint for ``int``, length-delimited for ``bytes``."""
    if isinstance(value, int):
        return write_varint(number << 3) + write_varint(value)
    return write_varint(number << 3 | 2) + write_varint(len(value)) + value


# ---------------------------------------------------------------------------------------------------------------
# Checksums and compression


_CRC32C_TABLE: list[int] = []


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C (Castagnoli) of ``data``, table-driven in pure Python (slow: used only when asked to verify
    blocks written with HBase's default checksum type)."""
    table = _CRC32C_TABLE
    if not table:
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def block_checksums(checksum_type: int, data: bytes | memoryview, bytes_per_checksum: int) -> bytes:
    """The checksum bytes HBase stores after a block: one big-endian uint32 per ``bytes_per_checksum`` chunk of
    ``data`` (header plus on-disk payload); empty for ``CHECKSUM_NULL``."""
    if checksum_type == CHECKSUM_NULL:
        return b""
    fn = zlib.crc32 if checksum_type == CHECKSUM_CRC32 else crc32c
    out = bytearray()
    for start in range(0, len(data), bytes_per_checksum):
        out += struct.pack(">I", fn(data[start:start + bytes_per_checksum]) & 0xFFFFFFFF)
    return bytes(out)


def compress(data: bytes, compression: str) -> bytes:
    """Compress a block payload: GZ as a gzip stream at zlib level 6 (what Hadoop's ``GzipCodec`` writes for
    HBase), NONE unchanged."""
    if compression == "NONE":
        return data
    co = zlib.compressobj(6, zlib.DEFLATED, 31)
    out = bytearray(co.compress(data) + co.flush())
    out[9] = 0  # gzip header OS field: 0 as Java's GZIPOutputStream writes it, not zlib's 3 (Unix)
    return bytes(out)


def decompress(data: bytes | memoryview, compression: str, expected: int) -> bytes:
    """Decompress a block payload to ``expected`` bytes.

    Raises:
        ValueError: corrupt compressed data or a size other than ``expected`` (the caller names file and block).
    """
    if compression == "NONE":
        out = bytes(data)
    else:
        try:
            out = zlib.decompress(data, 47, max(expected, 1))
            if len(out) < expected:  # Hadoop may write several gzip members
                out, rest = b"", bytes(data)
                while rest and len(out) < expected:
                    d = zlib.decompressobj(47)
                    out += d.decompress(rest)
                    rest = d.unused_data
        except zlib.error as e:
            raise ValueError(f"GZ data does not decompress ({e})") from e
    if len(out) != expected:
        raise ValueError(f"payload is {len(out)} bytes uncompressed, the header says {expected}")
    return out


# ---------------------------------------------------------------------------------------------------------------
# Blocks


@dataclass(frozen=True)
class BlockHeader:
    """A parsed block header (``HFileBlock``'s header fields)."""

    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size(self) -> int:
        """Bytes the block takes in the file: header, compressed payload and checksums."""
        return HEADER_SIZE + self.on_disk_size_without_header


def encode_block(magic: bytes, payload: bytes, compression: str, prev_offset: int,
                 checksum_type: int = CHECKSUM_CRC32) -> bytes:
    """A whole on-disk block: header, ``payload`` compressed with ``compression``, checksums of type
    ``checksum_type`` over header and compressed payload (``HFileBlock.Writer.finishBlock``)."""
    body = compress(payload, compression)
    data_size = HEADER_SIZE + len(body)
    n_sums = 0 if checksum_type == CHECKSUM_NULL else -(-data_size // BYTES_PER_CHECKSUM)
    header = HEADER.pack(magic, len(body) + 4 * n_sums, len(payload), prev_offset, checksum_type,
                         BYTES_PER_CHECKSUM, data_size)
    head_body = header + body
    return head_body + block_checksums(checksum_type, head_body, BYTES_PER_CHECKSUM)


# ---------------------------------------------------------------------------------------------------------------
# Keys


def cell_key(row: bytes) -> bytes:
    """The HBase ``KeyValue`` key of a Hudi cell: row, empty family and qualifier, latest timestamp, type Put."""
    return U16.pack(len(row)) + row + b"\x00" + I64.pack(LATEST_TIMESTAMP) + bytes((TYPE_PUT,))


def index_key(row: bytes) -> bytes:
    """An index key for a shortened row (``PrivateCellUtil.createFirstOnRow``: type Maximum)."""
    return U16.pack(len(row)) + row + b"\x00" + I64.pack(LATEST_TIMESTAMP) + bytes((TYPE_MAXIMUM,))


def key_row(key: bytes | memoryview) -> bytes:
    """The row of a serialized key (HBase ``KeyValue`` key or Hudi 1.x's length-prefixed key).

    Raises:
        ValueError: the key is shorter than its row length says.
    """
    if len(key) < 2:
        raise ValueError(f"key of {len(key)} bytes has no row length")
    n = U16.unpack_from(key, 0)[0]
    if 2 + n > len(key):
        raise ValueError(f"key of {len(key)} bytes holds a row of {n} bytes")
    return bytes(key[2:2 + n])


def midpoint_row(left: bytes, right: bytes) -> bytes:
    """The shortest row ``m`` with ``left < m <= right`` that HBase puts in the index in place of a block's first
    row (``PrivateCellUtil.getMidpoint`` / ``getMinimumMidpointArray``); ``left < right`` is required."""
    n = min(len(left), len(right))
    i = 0
    while i < n and left[i] == right[i]:
        i += 1
    if i >= n:
        return right[:i + 1]
    if left[i] < 0xFF and left[i] + 1 < right[i]:
        return left[:i] + bytes((left[i] + 1,))
    return right[:i + 1]


# ---------------------------------------------------------------------------------------------------------------
# Index blocks


@dataclass(frozen=True)
class IndexEntry:
    """One block index entry: the row of the (possibly shortened) first key of the block it points to, that
    block's offset and its on-disk size with header; ``key`` is the serialized key as stored."""

    row: bytes
    offset: int
    size: int
    key: bytes


def encode_root_index(entries: list[IndexEntry]) -> bytes:
    """Root-format index entries (``BlockIndexChunk.writeRoot``): int64 offset, int32 size, vint key length,
    key."""
    out = bytearray()
    for e in entries:
        out += INDEX_ENTRY.pack(e.offset, e.size) + write_vlong(len(e.key)) + e.key
    return bytes(out)


def decode_root_index(payload: bytes, count: int, plain_names: bool) -> tuple[list[IndexEntry], int]:
    """Decode ``count`` root-format entries; ``plain_names`` for the meta index, whose keys are block names
    rather than cell keys. Returns the entries and the position after them (mid-key metadata may follow).

    Raises:
        ValueError: the entries run past the payload.
    """
    entries = []
    pos = 0
    for _ in range(count):
        if pos + 12 > len(payload):
            raise ValueError(f"root index holds fewer than the {count} entries the trailer counts")
        offset, size = INDEX_ENTRY.unpack_from(payload, pos)
        n, pos = read_vlong(payload, pos + 12)
        if n < 0 or pos + n > len(payload):
            raise ValueError("root index entry key runs past the block")
        key = payload[pos:pos + n]
        pos += n
        entries.append(IndexEntry(key if plain_names else key_row(key), offset, size, key))
    return entries, pos


def encode_nonroot_index(entries: list[IndexEntry]) -> bytes:
    """Non-root (leaf and intermediate) index payload (``BlockIndexChunk.writeNonRoot``): int32 count, int32
    secondary index of entry offsets plus the total, then per entry int64 offset, int32 size and the key."""
    marks = []
    total = 0
    for e in entries:
        marks.append(total)
        total += 12 + len(e.key)
    marks.append(total)
    out = bytearray(I32.pack(len(entries)))
    out += struct.pack(f">{len(marks)}i", *marks)
    for e in entries:
        out += INDEX_ENTRY.pack(e.offset, e.size) + e.key
    return bytes(out)


def decode_nonroot_index(payload: bytes) -> list[IndexEntry]:
    """Decode a leaf or intermediate index block payload.

    Raises:
        ValueError: the counts or offsets point past the payload.
    """
    if len(payload) < 4:
        raise ValueError("non-root index block has no entry count")
    count = I32.unpack_from(payload, 0)[0]
    base = 4 + 4 * (count + 1)
    if count < 0 or base > len(payload):
        raise ValueError(f"non-root index block counts {count} entries in {len(payload)} bytes")
    marks = struct.unpack_from(f">{count + 1}i", payload, 4)
    entries = []
    for i in range(count):
        start, end = base + marks[i], base + marks[i + 1]
        if start + 12 > end or end > len(payload):
            raise ValueError(f"non-root index entry {i} lies outside the block")
        offset, size = INDEX_ENTRY.unpack_from(payload, start)
        key = payload[start + 12:end]
        entries.append(IndexEntry(key_row(key), offset, size, key))
    return entries


# ---------------------------------------------------------------------------------------------------------------
# File info and trailer


def encode_file_info(info: dict[str, bytes]) -> bytes:
    """The file info payload: ``PBUF`` and a length-delimited ``FileInfoProto`` whose pairs are sorted by key
    bytes, as HBase's ``HFileInfo`` (a sorted map) writes them."""
    msg = bytearray()
    for k in sorted(info, key=lambda s: s.encode()):
        pair = proto_field(1, k.encode()) + proto_field(2, info[k])
        msg += proto_field(1, pair)
    return PBUF_MAGIC + write_varint(len(msg)) + bytes(msg)


def decode_file_info(payload: bytes) -> dict[str, bytes]:
    """Decode the file info payload into ``{key: value}`` (keys decoded as UTF-8).

    Raises:
        ValueError: no ``PBUF`` magic, or malformed protobuf.
    """
    if payload[:4] != PBUF_MAGIC:
        raise ValueError(f"file info block starts with {bytes(payload[:4])!r}, not PBUF")
    n, pos = read_varint(payload, 4, len(payload))
    if pos + n > len(payload):
        raise ValueError("file info message runs past the block")
    info: dict[str, bytes] = {}
    for pair in decode_proto(payload[pos:pos + n]).get(1, []):
        if not isinstance(pair, bytes):
            raise ValueError("file info entry is not a message")
        fields = decode_proto(pair)
        first, second = fields.get(1, [b""])[0], fields.get(2, [b""])[0]
        if not isinstance(first, bytes) or not isinstance(second, bytes):
            raise ValueError("file info entry key or value is not bytes")
        info[first.decode("utf-8", "replace")] = second
    return info


@dataclass(frozen=True)
class Trailer:
    """The fixed file trailer (``FixedFileTrailer`` / ``FileTrailerProto``). Offsets HBase leaves unset (-1)
    read as -1."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression: str
    major_version: int = MAJOR_VERSION
    minor_version: int = MINOR_VERSION


_TRAILER_INTS = ("file_info_offset", "load_on_open_offset", "uncompressed_data_index_size",
                 "total_uncompressed_bytes", "data_index_count", "meta_index_count", "entry_count",
                 "num_data_index_levels", "first_data_block_offset", "last_data_block_offset")
HBASE_COMPARATOR: Final = "org.apache.hadoop.hbase.KeyValue$KVComparator"
"""What HBase 2.4 writes for its default ``CellComparatorImpl`` (``FixedFileTrailer.getHBase1CompatibleName``)."""


def encode_trailer(t: Trailer) -> bytes:
    """The 4096-byte trailer (``FixedFileTrailer.serialize``)."""
    msg = bytearray()
    for number, name in enumerate(_TRAILER_INTS, start=1):
        msg += proto_field(number, getattr(t, name))
    msg += proto_field(11, t.comparator_class_name.encode())
    msg += proto_field(12, COMPRESSION_CODES[t.compression])
    body = TRAILER + write_varint(len(msg)) + bytes(msg)
    version = I32.pack((t.minor_version << 24) | t.major_version)
    return body + bytes(TRAILER_SIZE - len(body) - 4) + version


def decode_trailer(data: bytes | memoryview, name: str) -> Trailer:
    """Parse the trailer at the end of ``data``.

    Raises:
        HFileError: the file is shorter than a trailer, the trailer magic is wrong, the major version is not 3,
            the compression codec is unknown or unsupported, the file is encrypted, or the message is malformed.
    """
    if len(data) < TRAILER_SIZE:
        raise HFileError(f"HFile {name}: truncated: {len(data)} bytes, shorter than the "
                         f"{TRAILER_SIZE}-byte trailer")
    start = len(data) - TRAILER_SIZE
    magic = bytes(data[start:start + MAGIC_LEN])
    if magic != TRAILER:
        raise HFileError(f"HFile {name}: bad trailer magic {magic!r} at offset {start} (not an HFile, or "
                         f"truncated)")
    version = I32.unpack_from(data, len(data) - 4)[0]
    major, minor = version & 0xFFFFFF, (version >> 24) & 0xFF
    if major != MAJOR_VERSION:
        raise HFileError(f"HFile {name}: unsupported HFile version {major}.{minor} (only version 3 is read)")
    try:
        n, pos = read_varint(data, start + MAGIC_LEN, len(data) - 4)
        if pos + n > len(data) - 4:
            raise ValueError("trailer message runs past the trailer")
        fields = decode_proto(data[pos:pos + n])
    except ValueError as e:
        raise HFileError(f"HFile {name}: corrupt trailer: {e}") from e

    def num(number: int, default: int = 0) -> int:
        v = fields.get(number, [default])[-1]
        if not isinstance(v, int):
            raise HFileError(f"HFile {name}: corrupt trailer: field {number} is not a number")
        return v - (1 << 64) if v >= 1 << 63 else v

    codec = num(12, COMPRESSION_CODES["NONE"])
    compression = COMPRESSION_NAMES.get(codec)
    if compression is None:
        raise HFileError(f"HFile {name}: unknown compression codec {codec} in the trailer")
    if compression not in SUPPORTED_COMPRESSION:
        raise HFileError(f"HFile {name}: unsupported compression {compression} (only "
                         f"{', '.join(SUPPORTED_COMPRESSION)} are read)")
    if fields.get(13, [b""])[-1]:
        raise HFileError(f"HFile {name}: encrypted HFiles are not supported (the trailer holds an encryption key)")
    comparator = fields.get(11, [b""])[-1]
    values = {attr: num(i, 1 if attr == "num_data_index_levels" else 0)
              for i, attr in enumerate(_TRAILER_INTS, start=1)}
    return Trailer(**values,
                   comparator_class_name=comparator.decode("utf-8", "replace")
                   if isinstance(comparator, bytes) else "",
                   compression=compression, major_version=major, minor_version=minor)
