"""Row order of clustered files (Hudi ``hoodie.layout.optimize.strategy``; ``SpaceCurveSortingHelper``).

``linear`` sorts by the sort columns themselves. ``z-order`` and ``hilbert`` sort by one binary key per row:
every sort column is first *normalised* to an unsigned 64-bit value whose order is the column's order (Hudi
``mapColumnValueTo8Bytes``: integers, dates and timestamps with the sign bit flipped, floating point by its
IEEE bits, strings and binaries by their first 8 bytes, booleans 0/1, nulls the largest value), then the
values are interleaved bit by bit (z-order, Hudi ``BinaryUtil.interleaving``) or mapped to their index on the
Hilbert curve of as many dimensions (64 bits each; Hudi's ``HilbertCurveUtils`` uses 63; Skilling's
transform). The key is ``8 × columns`` bytes, compared as unsigned bytes — Spark's order for ``BINARY``. Rows close on the
curve are close in every sort column at once, so min/max statistics of the written files prune well for
filters on any of the columns.

Everything here is plain pyarrow/numpy over one batch; no Spark.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import ConfigError

LINEAR = "linear"
Z_ORDER = "z-order"
HILBERT = "hilbert"
STRATEGIES = (LINEAR, Z_ORDER, HILBERT)
"""Layout strategies (Hudi ``LayoutOptimizationStrategy`` values)."""

_SIGN = np.uint64(1 << 63)
_HILBERT_BITS = 64


def layout_strategy(value: str) -> str:
    """The strategy named by ``value`` (case-insensitive; Hudi also accepts ``zorder``).

    Raises:
        ConfigError: not linear, z-order or hilbert.
    """
    lowered = value.strip().lower()
    if lowered == "zorder":
        lowered = Z_ORDER
    if lowered not in STRATEGIES:
        raise ConfigError(f"hoodie.layout.optimize.strategy: unknown layout optimization strategy {value!r}; "
                          f"expected one of {', '.join(STRATEGIES)}")
    return lowered


def _prefix_bytes(array: pa.Array) -> np.ndarray:
    """First 8 bytes of every string/binary value, big-endian, zero-padded, as uint64."""
    binary = array.cast(pa.large_binary()) if not pa.types.is_large_binary(array.type) else array
    binary = pc.fill_null(binary, b"")
    offsets = np.frombuffer(binary.buffers()[1], dtype=np.int64)[binary.offset:binary.offset + len(binary) + 1]
    data_buffer = binary.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    lengths = np.minimum(offsets[1:] - starts, 8)
    out = np.zeros(len(binary), dtype=np.uint64)
    for j in range(8):
        present = lengths > j
        byte = np.zeros(len(binary), dtype=np.uint64)
        if present.any():
            byte[present] = data[starts[present] + j].astype(np.uint64)
        out |= byte << np.uint64(8 * (7 - j))
    return out


def normalise(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Order-preserving unsigned 64-bit image of a column (nulls last).

    Args:
        array: a column of integers, floating point, decimals, booleans, dates, timestamps, strings or
            binaries.

    Returns:
        ``uint64`` numpy array of the same length.

    Raises:
        ConfigError: a type without an order here (nested types).
    """
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    kind = array.type
    nulls = array.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(kind):
        values = pc.fill_null(array, False).cast(pa.uint64()).to_numpy(zero_copy_only=False)
    elif pa.types.is_unsigned_integer(kind):
        values = pc.fill_null(array, 0).cast(pa.uint64()).to_numpy(zero_copy_only=False)
    elif pa.types.is_integer(kind) or pa.types.is_date(kind) or pa.types.is_timestamp(kind) \
            or pa.types.is_time(kind) or pa.types.is_duration(kind):
        ints = pc.fill_null(array.cast(pa.int64()) if not pa.types.is_integer(kind) else array.cast(pa.int64()), 0)
        values = ints.to_numpy(zero_copy_only=False).view(np.uint64) ^ _SIGN
    elif pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        floats = pc.fill_null(array.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        bits = floats.view(np.uint64)
        negative = (bits & _SIGN) != 0
        values = np.where(negative, ~bits, bits | _SIGN)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
            or pa.types.is_large_binary(kind):
        values = _prefix_bytes(array)
    else:
        raise ConfigError(f"cannot order rows by a column of type {kind} on a space-filling curve")
    values = np.asarray(values, dtype=np.uint64).copy()
    values[nulls] = np.uint64(0xFFFFFFFFFFFFFFFF)
    return values


def _interleave(columns: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Bit-interleave ``columns`` (each uint64, ``bits`` significant low bits) into ``len(columns)`` uint64 words
    per row, most significant first: bit ``b`` of column ``d`` lands at position ``(bits-1-b)*k + d``."""
    k = len(columns)
    n = len(columns[0])
    words = np.zeros((n, k), dtype=np.uint64)
    position = 0
    for b in range(bits - 1, -1, -1):
        for column in columns:
            bit = (column >> np.uint64(b)) & np.uint64(1)
            word, offset = divmod(position, 64)
            words[:, word] |= bit << np.uint64(63 - offset)
            position += 1
    return words


def _hilbert_transpose(columns: Sequence[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's ``AxestoTranspose``: the Hilbert index of each row in transposed form (interleave it to get
    the index)."""
    x = [c.copy() for c in columns]
    n = len(x)
    top = np.uint64(1 << (bits - 1))
    q = top
    while q > 1:
        p = q - np.uint64(1)
        for i in range(n):
            high = (x[i] & q) != 0
            flipped = x[0] ^ p
            t = (x[0] ^ x[i]) & p
            if i == 0:
                x[0] = np.where(high, flipped, x[0])
            else:
                x0 = np.where(high, flipped, x[0] ^ t)
                x[i] = np.where(high, x[i], x[i] ^ t)
                x[0] = x0
        q = q >> np.uint64(1)
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = np.zeros_like(x[0])
    q = top
    while q > 1:
        t = np.where((x[n - 1] & q) != 0, t ^ (q - np.uint64(1)), t)
        q = q >> np.uint64(1)
    return [xi ^ t for xi in x]


def curve_key(table: pa.Table | pa.RecordBatch, columns: Sequence[str], strategy: str) -> pa.Array:
    """One sortable binary key per row for a space-filling-curve layout.

    Args:
        table: the rows.
        columns: the sort columns (at least one, each present in ``table``).
        strategy: ``z-order`` or ``hilbert``.

    Returns:
        ``binary`` array whose unsigned byte order is the curve order.

    Raises:
        ConfigError: unknown strategy or a column type without an order.
    """
    if strategy not in (Z_ORDER, HILBERT):
        raise ConfigError(f"curve_key needs z-order or hilbert, not {strategy!r}")
    values = [normalise(table.column(name)) for name in columns]
    if strategy == HILBERT:
        values = _hilbert_transpose(values, _HILBERT_BITS)
        words = _interleave(values, _HILBERT_BITS)
    else:
        words = _interleave(values, 64)
    raw = pa.py_buffer(words.astype(">u8").tobytes())
    fixed = pa.Array.from_buffers(pa.binary(8 * words.shape[1]), words.shape[0], [None, raw])
    return fixed.cast(pa.binary())
