"""Java's ``String.hashCode`` as Hudi's Java code computes it (over UTF-16 code units, 32-bit wrap): the bucket
index (``BucketIdentifier``) and the metadata table's record-key → file-group mapping
(``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``) both hash keys this way."""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF


def java_string_hash(value: str) -> int:
    """Java ``String.hashCode`` of ``value`` as an unsigned 32-bit int (``s[0]*31^(n-1) + ... + s[n-1]`` over
    UTF-16 code units: a surrogate pair counts as two chars)."""
    units = np.frombuffer(value.encode("utf-16-le"), dtype="<u2")
    h = 0
    for unit in units.tolist():
        h = (31 * h + unit) & MASK32
    return h


def java_int(value: int) -> int:
    """An unsigned 32-bit value read as Java's signed ``int``."""
    return value - (1 << 32) if value >= 1 << 31 else value
