"""Whether a write's source DataFrame is a plain scan of parquet files that tasks can read themselves.

Issue 32: rows that need no Python should not cross Spark's Arrow bridge. When the optimized plan of the source
is ``[Project] [Filter] Relation(parquet files)`` with only operations :mod:`engine.formats.parquet_source`
computes exactly as Spark does, :func:`direct_parquet_source` returns a :class:`DirectSource`: the
:class:`~engine.formats.parquet_source.ScanProgram` and the row-group splits the tasks read. Anything else gives
``None`` (and a debug log naming why), and the write keeps Spark's bridge. The rows are the same either way.

Refused, so left to Spark: partitioned source layouts (values from directory names), data source options
(``mergeSchema``, rebase modes, ...), files whose columns differ by name or type from the relation's schema
(schema merging, upcasts Spark's reader would do), files written with Spark's legacy calendar, float and
timestamp comparisons (NaN ordering, time zones), non-deterministic or unknown expressions, caches, limits,
samples, joins, unions.

The switch is ``sqlext.write.direct.parquet.source`` (:data:`engine.config.WriteConfig.DIRECT_PARQUET_SOURCE`,
a Spark session conf; default on).
"""

from __future__ import annotations

import datetime
import decimal
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType, StructField, StructType, _parse_datatype_json_string

from engine.config import WriteConfig
from engine.errors import EngineError
from engine.formats.parquet_source import (
    Call,
    Col,
    Expr,
    Lit,
    ParquetSplit,
    ScanProgram,
    plan_splits,
    result_schema,
    row_group_sizes,
)
from engine.spark.schema import spark_to_arrow
from engine.storage import Storage

logger = logging.getLogger(__name__)

# Beyond this many files the driver's footer reads cost more than the bridge saves on a typical source.
MAX_FILES = 2000

_COMPARISONS = {"EqualTo": "eq", "LessThan": "lt", "LessThanOrEqual": "le", "GreaterThan": "gt",
                "GreaterThanOrEqual": "ge"}
_DATE_PARTS = {"Year": "year", "Month": "month", "DayOfMonth": "day"}
_INTEGRAL = ("byte", "short", "integer", "long")
_LEGACY_CALENDAR_KEYS = (b"org.apache.spark.legacyDateTime", b"org.apache.spark.legacyINT96")


class _Unsupported(Exception):
    """The source needs Spark's own scan (the message says why)."""


@dataclass(frozen=True)
class DirectSource:
    """A source the write's tasks read themselves: ``program`` over each of ``splits`` (one task each)."""

    storage: Storage
    program: ScanProgram
    splits: tuple[ParquetSplit, ...]


def direct_parquet_source(spark: SparkSession, df: DataFrame) -> DirectSource | None:
    """The :class:`DirectSource` reading ``df``'s rows, or ``None`` when ``df`` is not a plain parquet scan this
    module can compute exactly (see the module doc) or the switch is off."""
    if str(spark.conf.get(WriteConfig.DIRECT_PARQUET_SOURCE.key, "true")).strip().lower() != "true":
        return None
    try:
        return _analyse(spark, df)
    except _Unsupported as reason:
        logger.debug("write source read through Spark: %s", reason)
        return None
    except EngineError as exc:  # a footer that cannot be read: Spark's scan reports it in its own words
        logger.debug("write source read through Spark: %s", exc)
        return None
    except Exception:  # noqa: BLE001 - a plan shape this module did not foresee: Spark's path is always right
        logger.warning("write source read through Spark: its plan could not be analysed", exc_info=True)
        return None


def _analyse(spark: SparkSession, df: DataFrame) -> DirectSource:
    plan = df._jdf.queryExecution().optimizedPlan()
    project = condition = None
    node = plan
    if _kind(node) == "Project":
        project, node = node.projectList(), _only_child(node)
    if _kind(node) == "Filter":
        condition, node = node.condition(), _only_child(node)
    if _kind(node) != "LogicalRelation":
        raise _Unsupported(f"plan node {_kind(node)}")
    relation = node.relation()
    if relation.getClass().getSimpleName() != "HadoopFsRelation":
        raise _Unsupported(f"relation {relation.getClass().getSimpleName()}")
    if relation.fileFormat().getClass().getSimpleName() != "ParquetFileFormat":
        raise _Unsupported(f"file format {relation.fileFormat()}")
    if relation.partitionSchema().size() != 0:
        raise _Unsupported("partitioned source layout")
    options = [str(k).lower() for k in _iterate(relation.options().keysIterator())]
    if any(k not in ("path", "paths") for k in options):
        raise _Unsupported(f"data source options {options}")
    timezone = str(spark.conf.get("spark.sql.session.timeZone"))
    attributes = {}
    for attribute in _seq(node.output()):
        attributes[attribute.exprId().id()] = (attribute.name(), _spark_type(attribute.dataType()))
    translate = _Translator(attributes, timezone)
    outputs = [translate.named(e) for e in _seq(project if project is not None else node.output())]
    predicate = translate.expr(condition) if condition is not None else None
    if predicate is not None and translate.type_of(condition).typeName() != "boolean":
        raise _Unsupported("a filter that is not boolean")
    names = [n for n, _ in outputs]
    if len(set(names)) != len(names) or names != list(df.columns):
        raise _Unsupported("output columns differ from the DataFrame's")
    expected = spark_to_arrow(df.schema, timezone)  # what Spark's bridge would hand the tasks
    files = list(relation.location().inputFiles())
    if not files:
        raise _Unsupported("no input files")
    if len(files) > MAX_FILES:
        raise _Unsupported(f"{len(files)} files")
    storage = Storage.for_uri(files[0])
    sized, file_schema = _sized_files(storage, files, translate.used, timezone)
    try:
        produced = result_schema(outputs, file_schema)
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise _Unsupported(f"expressions do not apply to the files: {exc}") from exc
    for field, want in zip(produced, expected, strict=True):
        if field.type != want.type and not _same_values(field.type, want.type):
            raise _Unsupported(f"column {field.name} would be {field.type}, Spark gives {want.type}")
    total = sum(sum(sizes) for _, sizes in sized)
    max_bytes = int(spark._jsparkSession.sessionState().conf().filesMaxPartitionBytes())
    splits = plan_splits(sized, split_count(total, spark.sparkContext.defaultParallelism, max_bytes))
    if not splits:
        raise _Unsupported("no row groups")
    program = ScanProgram(tuple(outputs), predicate, expected)
    logger.info("write source: %d parquet files in %d splits read directly by the tasks", len(files), len(splits))
    return DirectSource(storage, program, tuple(splits))


def _sized_files(storage: Storage, files: list[str], used: dict[str, DataType], timezone: str
                 ) -> tuple[list[tuple[str, list[int]]], pa.Schema]:
    """Per file its row groups' compressed sizes, and the first file's Arrow schema, after checking from each
    footer that every column the program reads is there with the type Spark reads it as.

    Raises:
        _Unsupported: a file lacks a column or holds it as another type, or uses Spark's legacy calendar.
        EngineError: a footer cannot be read.
    """
    sized: list[tuple[str, list[int]]] = []
    wanted = {column: spark_to_arrow_type(spark_type, timezone) for column, spark_type in used.items()}
    first: pa.Schema | None = None
    for path in files:
        schema, sizes, meta = row_group_sizes(storage, path)
        if any(key in meta for key in _LEGACY_CALENDAR_KEYS):
            raise _Unsupported(f"{path} was written with Spark's legacy calendar")
        for column, arrow_type in wanted.items():
            index = schema.get_field_index(column)
            if index < 0:
                raise _Unsupported(f"{path} has no column {column}")
            if schema.field(index).type != arrow_type:
                raise _Unsupported(f"{path}: column {column} is {schema.field(index).type}")
        first = schema if first is None else first
        sized.append((path, sizes))
    assert first is not None
    return sized, first


def split_count(total: int, parallelism: int, max_bytes: int) -> int:
    """How many splits a source of ``total`` compressed bytes is read in: enough that none exceeds ``max_bytes``
    (``spark.sql.files.maxPartitionBytes``), rounded up to whole waves of ``parallelism`` task slots. Spark packs
    splits of ``min(max_bytes, total / parallelism)`` bytes, which can leave a slot idle in the last wave (3
    splits on 2 cores); each split here is a whole task's writing, so the waves are kept full."""
    slots = max(1, parallelism)
    splits = max(slots, -(-total // max(1, max_bytes)))
    return -(-splits // slots) * slots


def spark_to_arrow_type(spark_type: DataType, timezone: str) -> pa.DataType:
    """The Arrow type Spark's bridge gives a value of ``spark_type`` in (timestamps in ``timezone``)."""
    return spark_to_arrow(StructType([StructField("c", spark_type)]), timezone).field(0).type


def _same_values(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether a cast from ``got`` to ``want`` only relabels (string widths, a timestamp's time zone)."""
    if pa.types.is_string(want) and pa.types.is_large_string(got):
        return True
    if pa.types.is_binary(want) and pa.types.is_large_binary(got):
        return True
    return (pa.types.is_timestamp(got) and pa.types.is_timestamp(want) and got.unit == want.unit
            and (got.tz is None) == (want.tz is None))


class _Translator:
    """Spark Catalyst expressions (py4j objects) to :mod:`engine.formats.parquet_source` expressions."""

    def __init__(self, attributes: dict[int, tuple[str, DataType]], timezone: str) -> None:
        self.attributes = attributes
        self.timezone = timezone
        self.used: dict[str, DataType] = {}

    def named(self, expr: Any) -> tuple[str, Expr]:
        kind = _kind(expr)
        if kind == "Alias":
            return str(expr.name()), self.expr(expr.child())
        if kind == "AttributeReference":
            return str(expr.name()), self.expr(expr)
        raise _Unsupported(f"projection {kind}")

    def type_of(self, expr: Any) -> DataType:
        return _spark_type(expr.dataType())

    def expr(self, expr: Any) -> Expr:
        kind = _kind(expr)
        if not expr.deterministic():
            raise _Unsupported(f"non-deterministic {kind}")
        if kind == "AttributeReference":
            found = self.attributes.get(expr.exprId().id())
            if found is None:
                raise _Unsupported(f"attribute {expr.name()} not in the scanned files")
            self.used[found[0]] = found[1]
            return Col(found[0])
        if kind == "Literal":
            return self._literal(expr)
        if kind in ("And", "Or"):
            return Call(kind.lower(), (self.expr(expr.left()), self.expr(expr.right())))
        if kind == "Not":
            return Call("not", (self.expr(expr.child()),))
        if kind in ("IsNull", "IsNotNull"):
            return Call("is_null" if kind == "IsNull" else "is_not_null", (self.expr(expr.child()),))
        if kind in _COMPARISONS:
            left, right = self.type_of(expr.left()), self.type_of(expr.right())
            if left != right or left.typeName() not in (*_INTEGRAL, "string", "date", "decimal", "boolean"):
                raise _Unsupported(f"{kind} on {left.simpleString()} and {right.simpleString()}")
            return Call(_COMPARISONS[kind], (self.expr(expr.left()), self.expr(expr.right())))
        if kind in _DATE_PARTS:
            if self.type_of(expr.child()).typeName() != "date":
                raise _Unsupported(f"{kind} of {self.type_of(expr.child()).simpleString()}")
            return Call(_DATE_PARTS[kind], (self.expr(expr.child()),))
        if kind == "Cast":
            source, target = self.type_of(expr.child()), self.type_of(expr)
            if source == target:
                return self.expr(expr.child())
            if not _widens(source, target):
                raise _Unsupported(f"cast from {source.simpleString()} to {target.simpleString()}")
            return Call("cast", (self.expr(expr.child()),), spark_to_arrow_type(target, self.timezone))
        raise _Unsupported(f"expression {kind}")

    def _literal(self, expr: Any) -> Lit:
        spark_type = self.type_of(expr)
        value = expr.value()
        name = spark_type.typeName()
        if value is None:
            raise _Unsupported("null literal")
        arrow_type = spark_to_arrow_type(spark_type, self.timezone)
        if name in _INTEGRAL or name == "boolean":
            return Lit(value, arrow_type)
        if name == "string":
            return Lit(str(value.toString()), arrow_type)
        if name == "date":
            return Lit(_date(int(value)), arrow_type)
        if name == "decimal":
            big = value.toJavaBigDecimal()  # py4j hands java.math.BigDecimal over as decimal.Decimal
            return Lit(big if isinstance(big, decimal.Decimal) else decimal.Decimal(str(big.toPlainString())),
                       arrow_type)
        raise _Unsupported(f"literal of {spark_type.simpleString()}")


def _date(days: int) -> datetime.date:
    return datetime.date(1970, 1, 1) + datetime.timedelta(days=days)


def _widens(source: DataType, target: DataType) -> bool:
    """Whether every ``source`` value casts to ``target`` exactly (Spark and pyarrow agree)."""
    s, t = source.typeName(), target.typeName()
    if s in _INTEGRAL and t in _INTEGRAL:
        return _INTEGRAL.index(s) <= _INTEGRAL.index(t)
    if s == "decimal" and t == "decimal":
        sp, ss = source.precision, source.scale  # type: ignore[attr-defined]
        tp, ts = target.precision, target.scale  # type: ignore[attr-defined]
        return ts >= ss and tp - ts >= sp - ss
    if s in _INTEGRAL and t == "decimal":
        digits = {"byte": 3, "short": 5, "integer": 10, "long": 20}[s]
        return target.precision - target.scale >= digits  # type: ignore[attr-defined]
    return False


def _spark_type(java_type: Any) -> DataType:
    return _parse_datatype_json_string(java_type.json())


def _kind(node: Any) -> str:
    return str(node.getClass().getSimpleName())


def _only_child(node: Any) -> Any:
    children = node.children()
    if children.size() != 1:
        raise _Unsupported(f"{_kind(node)} with {children.size()} inputs")
    return children.apply(0)


def _seq(seq: Any) -> Iterator[Any]:
    for i in range(seq.size()):
        yield seq.apply(i)


def _iterate(iterator: Any) -> Iterator[Any]:
    while iterator.hasNext():
        yield iterator.next()
