"""Records placed in the Spark task their bucket was packed into (:func:`engine.write.planner.pack`).

``DataFrame.repartition(n, col)`` hash-partitions by ``pmod(murmur3(col, seed 42), n)``: partitioning by the
bucket number itself puts some buckets together and leaves other tasks empty (14 file groups of one size hashed
into 4 tasks ran as 2.4 s, 2.8 s, 4.6 s and 7.6 s). :func:`slot_column` gives each record a value that Spark's
hash sends to exactly the task its bucket was packed into; Spark launches a stage's tasks by partition index, so
the heaviest runs first.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from engine.write.prepare import SLOT

__all__ = ["MAX_SLOTTED_BUCKETS", "SLOT", "slot_column", "slot_values", "spark_hash_int"]

MAX_SLOTTED_BUCKETS = 4096
"""Writes with more buckets than this keep Spark's plain hash partitioning of the bucket number (the slot map
literal grows with the buckets)."""

_SPARK_HASH_SEED = 42  # org.apache.spark.sql.catalyst.expressions.Murmur3Hash's default seed
_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def spark_hash_int(value: int, seed: int = _SPARK_HASH_SEED) -> int:
    """Spark's ``hash(<int column>)``: ``Murmur3_x86_32.hashInt(value, seed)`` as a signed 32-bit int."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = _rotl(k1, 15) * 0x1B873593 & _MASK
    h1 = (seed & _MASK) ^ k1
    h1 = (_rotl(h1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def slot_values(n: int) -> list[int]:
    """``values[i]``: the smallest non-negative int that ``repartition(n, <int column>)`` sends to partition ``i``.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"slot_values: need at least one partition, got {n}")
    values: list[int | None] = [None] * n
    missing, candidate = n, 0
    while missing:
        slot = spark_hash_int(candidate) % n  # Python's % of a negative int is Spark's pmod
        if values[slot] is None:
            values[slot] = candidate
            missing -= 1
        candidate += 1
    return [v for v in values if v is not None]


def slot_column(bucket: Column, task_of: Mapping[int, int]) -> Column:
    """The slot value of each record's bucket (int): with ``repartition(max(task_of.values()) + 1, SLOT)``, the
    records of bucket ``b`` go to task ``task_of[b]``.

    Args:
        bucket: the record's bucket number (int column).
        task_of: bucket number -> task index, as :func:`engine.write.planner.pack` gives.
    """
    values = slot_values(max(task_of.values()) + 1)
    pairs = [F.lit(v) for b, t in sorted(task_of.items()) for v in (b, values[t])]
    return F.element_at(F.create_map(*pairs), bucket).cast(IntegerType())
