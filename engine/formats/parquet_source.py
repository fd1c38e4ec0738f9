"""Reading a write's source parquet files straight into Arrow, without Spark's row bridge.

A bulk insert whose source is a plain scan of parquet files (``CREATE TABLE ... AS SELECT ... FROM parquet.`p```
or a parquet table, with column pruning, renames, widening casts, ``year``/``month``/``day`` and simple
filters) need not move every row from Spark's JVM into the Python task through Spark's Arrow bridge: the task
reads the files itself. :mod:`engine.spark.source_scan` decides, from Spark's optimized plan, whether a source
qualifies and builds a :class:`ScanProgram`; this module holds the program and runs it with plain pyarrow
(:mod:`pyarrow.dataset` evaluates the projections and the filter), so it is unit-tested without a JVM.

The program is a small expression tree (:class:`Col`, :class:`Lit`, :class:`Call`) whose every operation has the
same result in pyarrow as in Spark for the types it is built for (``engine.spark.source_scan`` checks the
types): three-valued ``AND``/``OR``/``NOT`` (Kleene logic in both), comparisons that are null when an input is
null, widening casts. Anything else stays on Spark's path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from engine.errors import StorageError
from engine.storage import Storage

logger = logging.getLogger(__name__)

# Spark's default batch of the Arrow bridge (spark.sql.execution.arrow.maxRecordsPerBatch).
BATCH_ROWS = 10_000


@dataclass(frozen=True)
class Col:
    """A column of the source files, by its name in the files."""

    name: str


@dataclass(frozen=True)
class Lit:
    """A non-null literal of Arrow type ``type``."""

    value: object
    type: pa.DataType


@dataclass(frozen=True)
class Call:
    """An operation on ``args``: one of :data:`OPERATIONS`; ``cast`` names its target in ``to``."""

    op: str
    args: tuple[Expr, ...]
    to: pa.DataType | None = None


Expr = Col | Lit | Call

_COMPARISONS = {"eq": pc.equal, "lt": pc.less, "le": pc.less_equal, "gt": pc.greater, "ge": pc.greater_equal}
_DATE_PARTS = {"year": pc.year, "month": pc.month, "day": pc.day}
OPERATIONS = frozenset({"and", "or", "not", "is_null", "is_not_null", "cast", *_COMPARISONS, *_DATE_PARTS})


def to_arrow(expr: Expr) -> pc.Expression:
    """The :class:`pyarrow.compute.Expression` computing ``expr``.

    ``year``/``month``/``day`` give ``int32`` as Spark's do. Raises:
        ValueError: an operation outside :data:`OPERATIONS`.
    """
    if isinstance(expr, Col):
        return pc.field(expr.name)
    if isinstance(expr, Lit):
        return pc.scalar(pa.scalar(expr.value, type=expr.type))
    args = [to_arrow(a) for a in expr.args]
    if expr.op == "and":
        return args[0] & args[1]
    if expr.op == "or":
        return args[0] | args[1]
    if expr.op == "not":
        return ~args[0]
    if expr.op == "is_null":
        return args[0].is_null()
    if expr.op == "is_not_null":
        return args[0].is_valid()
    if expr.op == "cast":
        assert expr.to is not None
        return args[0].cast(expr.to)
    if expr.op in _COMPARISONS:
        return _COMPARISONS[expr.op](*args)
    if expr.op in _DATE_PARTS:
        return _DATE_PARTS[expr.op](*args).cast(pa.int32())
    raise ValueError(f"operation {expr.op!r} is not supported in a direct parquet scan")


@dataclass(frozen=True)
class ParquetSplit:
    """Row groups of source files one task reads: ``(path, row group ordinals)`` pairs, in order."""

    parts: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class ScanProgram:
    """What a task computes from each source file: ``outputs`` (name, expression) in order, over the rows
    ``filter`` keeps (``None``: all rows), cast to ``schema`` (the Arrow schema Spark's bridge would give)."""

    outputs: tuple[tuple[str, Expr], ...]
    filter: Expr | None
    schema: pa.Schema

    def columns(self) -> dict[str, pc.Expression]:
        return {name: to_arrow(expr) for name, expr in self.outputs}

    def predicate(self) -> pc.Expression | None:
        return None if self.filter is None else to_arrow(self.filter)


def result_schema(program_outputs: Sequence[tuple[str, Expr]], file_schema: pa.Schema) -> pa.Schema:
    """The Arrow schema pyarrow gives for ``program_outputs`` over a file of ``file_schema`` (evaluated on no
    rows), to compare with the schema Spark would give.

    Raises:
        pyarrow.ArrowException: an expression does not apply to the file's types.
    """
    empty = ds.dataset(file_schema.empty_table())
    columns = {name: to_arrow(expr) for name, expr in program_outputs}
    return empty.to_table(columns=columns).schema


def plan_splits(files: Sequence[tuple[str, Sequence[int]]], count: int) -> list[ParquetSplit]:
    """Row groups dealt into at most ``count`` splits of about equal compressed bytes, each a contiguous run in
    file order (a row group goes to the split its byte midpoint falls in, as Spark assigns row groups to file
    ranges); empty splits are dropped.

    Args:
        files: per file its path and its row groups' compressed sizes in bytes.
        count: the number of splits wanted (>= 1).
    """
    total = sum(sum(groups) for _, groups in files)
    share = max(total, 1) / max(1, count)
    buckets: list[list[tuple[str, list[int]]]] = [[] for _ in range(max(1, count))]
    before = 0
    for path, groups in files:
        for ordinal, group_bytes in enumerate(groups):
            index = min(len(buckets) - 1, int((before + group_bytes / 2) // share))
            target = buckets[index]
            if not target or target[-1][0] != path:
                target.append((path, []))
            target[-1][1].append(ordinal)
            before += group_bytes
    return [ParquetSplit(tuple((p, tuple(g)) for p, g in parts)) for parts in buckets if parts]


def read_split(storage: Storage, split: ParquetSplit, program: ScanProgram,
               batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The rows of ``split`` as ``program`` computes them, in file and row order, in batches of at most
    ``batch_rows`` rows with ``program.schema``.

    Raises:
        StorageError: a file cannot be opened or read, or its columns no longer match the program (naming the
            file).
    """
    columns = program.columns()
    predicate = program.predicate()
    fmt = ds.ParquetFileFormat()
    for path, row_groups in split.parts:
        source = storage.open_input(path)
        try:
            fragment = fmt.make_fragment(source, row_groups=list(row_groups))
            scanner = ds.Scanner.from_fragment(
                fragment, schema=fragment.physical_schema, columns=columns, filter=predicate,
                batch_size=batch_rows, use_threads=False)
            for batch in scanner.to_batches():
                if batch.num_rows:
                    yield _conform(batch, program.schema, path)
        except (pa.ArrowException, OSError) as exc:
            raise StorageError(f"cannot read source file '{path}': {exc}") from exc
        finally:
            source.close()


def _conform(batch: pa.RecordBatch, schema: pa.Schema, path: str) -> pa.RecordBatch:
    if batch.schema.equals(schema):
        return batch
    try:
        arrays = [column if column.type == field.type else column.cast(field.type)
                  for column, field in zip(batch.columns, schema, strict=True)]
    except (pa.ArrowException, ValueError) as exc:
        raise StorageError(f"source file '{path}' no longer has the columns it was planned with: {exc}") from exc
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def row_group_sizes(storage: Storage, path: str) -> tuple[pa.Schema, list[int], dict[bytes, bytes]]:
    """A source file's Arrow schema, its row groups' compressed sizes (bytes) and its footer's key-value
    metadata.

    Raises:
        StorageError: the file cannot be opened or is not parquet.
    """
    source = storage.open_input(path)
    try:
        meta = pq.read_metadata(source)
        sizes = [sum(group.column(c).total_compressed_size for c in range(group.num_columns))
                 for group in (meta.row_group(i) for i in range(meta.num_row_groups))]
        return meta.schema.to_arrow_schema(), sizes, dict(meta.metadata or {})
    except (pa.ArrowException, OSError) as exc:
        raise StorageError(f"cannot read the parquet footer of '{path}': {exc}") from exc
    finally:
        source.close()
