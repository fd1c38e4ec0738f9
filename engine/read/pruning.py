"""Partition pruning from simple predicates on partition columns (Hudi ``HoodieFileIndex`` /
``SparkHoodieTableFileIndex.prunePartition`` when the partition columns are read from the data files).

Predicates are ``(column, op, value)`` triples, ``op`` one of ``=``, ``in`` (value a tuple), ``>``, ``>=``,
``<``, ``<=``, as both readers derive them from Spark's pushed filters: the ``hudi`` Python data source
(:mod:`engine.spark.datasource`) and the file index of Spark's parquet scan (:mod:`engine.read.parquet_slices`).
Pruning only ever keeps too much: Spark re-applies every filter to the rows read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.keygen import DEFAULT_PARTITION_PATH, KeyGenerator
from engine.table import Table

Predicate = tuple[str, str, Any]
"""``(column, op, value)``: a top-level column name, one of ``= in > >= < <=``, and a Python value (a tuple of
values for ``in``)."""

OPERATORS = ("=", "in", ">", ">=", "<", "<=")
"""The operators a :data:`Predicate` may carry."""


def partition_filter(table: Table, predicates: Sequence[Predicate]) -> Callable[[str], bool] | None:
    """A test ``keep(partition_path) -> bool`` for the predicates on ``table``'s partition columns, or None
    when none applies (no predicate names a partition column, or the key generator's partition paths do not
    hold the column values: timestamp-based and custom key generators).

    A partition whose path cannot be parsed, or whose values do not compare with a predicate's value, is kept;
    a ``__HIVE_DEFAULT_PARTITION__`` (null) value fails every predicate, as a null fails them in SQL.

    Args:
        table: the table (its partition fields and key generator settings).
        predicates: conjuncts; other columns and unknown operators are ignored.
    """
    fields = [f.lower() for f in table.partition_fields]
    wanted = [(c.lower(), op, v) for c, op, v in predicates if c.lower() in fields and op in OPERATORS]
    if not wanted or "timestamp" in table.keygen_class.lower() or "custom" in table.keygen_class.lower():
        return None
    keygen = KeyGenerator.from_config(table.config)

    def keep(partition_path: str) -> bool:
        try:
            values = keygen.partition_values(partition_path)
        except Exception:  # noqa: BLE001 - an unparsable path is never pruned
            return True
        if len(values) != len(fields):
            return True
        current = dict(zip(fields, values, strict=True))
        for column, op, value in wanted:
            stored = current[column]
            if stored == DEFAULT_PARTITION_PATH:
                return False
            try:
                if not compare(stored, op, value):
                    return False
            except (TypeError, ValueError):
                continue
        return True

    return keep


def compare(stored: str, op: str, value: Any) -> bool:
    """Whether the partition value ``stored`` (text from the path) satisfies ``stored <op> value``; the text is
    read as the value's type (bool, int, float, else compared as text).

    Raises:
        ValueError: ``stored`` does not parse as the value's type.
        TypeError: the values do not compare.
    """
    if isinstance(value, bool):
        left: Any = stored.lower() == "true"
    elif isinstance(value, int):
        left = int(stored)
    elif isinstance(value, float):
        left = float(stored)
    else:
        left = stored
        value = str(value) if not isinstance(value, tuple) else tuple(str(v) for v in value)
    if op == "=":
        return bool(left == value)
    if op == "in":
        return left in value
    if op == ">":
        return bool(left > value)
    if op == ">=":
        return bool(left >= value)
    if op == "<":
        return bool(left < value)
    return bool(left <= value)
