"""The ``hudi`` Spark Python data source (reader): ``spark.read.format("hudi").load(path)`` and, through
sqlext's session catalog, plain ``SELECT ... FROM t`` on tables created ``USING hudi``.

Options (Hudi ``DataSourceReadOptions``): ``path``; ``hoodie.datasource.query.type`` = snapshot |
read_optimized | incremental; ``as.of.instant``; ``hoodie.datasource.read.begin.instanttime`` /
``end.instanttime``; ``hoodie.datasource.query.incremental.format`` = latest_state | cdc (CDC queries,
:mod:`engine.read.cdc`); ``hoodie.query.as.ro.table`` (set by Hive sync on ``_ro`` tables).

Partition pruning: equality / IN / comparison filters on partition columns of hive-style or plain
partition paths are used to skip partitions (Spark still re-applies every filter).

Through sqlext's session catalog, the base files of snapshot and read-optimized reads go to Spark's own
parquet scan instead (:mod:`engine.read.parquet_slices`, :mod:`sqlext.jvm.read_planner`); this reader then
reads only the file groups with log files, named by the internal options ``sqlext.read.file.groups`` and
``sqlext.read.pinned.instant`` (:func:`engine.read.planner.plan_query`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from engine.config import HoodieConfig, ReadConfig
from engine.errors import ConfigError
from engine.read.cdc import CDC_SCHEMA, is_cdc_query, plan_cdc, read_cdc_group
from engine.read.file_group_reader import read_split
from engine.read.planner import QueryPlan, ReadSplit, normalize_instant, plan_query
from engine.read.pruning import Predicate, partition_filter
from engine.read.retention import load_window
from engine.spark.schema import arrow_to_spark, spark_to_arrow, table_spark_schema
from engine.storage import Storage
from engine.table import Table

logger = logging.getLogger(__name__)

TARGET_SPLIT_BYTES = 32 * 1024 * 1024  # slices are grouped up to this size per Spark task
CDC_GROUPS_PER_TASK = 16  # file groups whose changes one Spark task reads in a CDC query


def table_path(options: Mapping[str, str]) -> str:
    """The table's base path from data source options (``path``, else ``hoodie.base.path``; a ``file:`` prefix
    is dropped).

    Raises:
        ConfigError: neither option is set.
    """
    path = options.get("path") or options.get("hoodie.base.path")
    if not path:
        raise ConfigError("the hudi data source needs a 'path' option (the table's base path)")
    return path.removeprefix("file:")


class HudiDataSource(DataSource):
    """Spark data source ``hudi`` (Hudi ``DefaultSource`` for reads)."""

    @classmethod
    def name(cls) -> str:
        """The format name: ``hudi``."""
        return "hudi"

    def schema(self) -> StructType:
        """The table schema with meta columns (used when Spark has no catalog schema, and by the catalog for
        time travel): the latest, or as of ``as.of.instant`` (the columns a commit had, Hudi
        ``HoodieBaseRelation`` with ``hoodie.schema.on.read.enable``). A CDC query
        (``hoodie.datasource.query.incremental.format=cdc``) has the columns ``op, ts_ms, before, after``
        (strings, Hudi ``CDCRelation``)."""
        options = {str(k): str(v) for k, v in dict(self.options).items()}
        if is_cdc_query(HoodieConfig(options)):
            return arrow_to_spark(CDC_SCHEMA)
        table = Table.load(table_path(options))
        raw_as_of = HoodieConfig(options).raw(ReadConfig.AS_OF_INSTANT)
        as_of = normalize_instant(raw_as_of) if raw_as_of else None
        if as_of is not None:
            load_window(table).check_as_of(as_of)  # before the schema of a commit that may be archived
        schema = table_spark_schema(table, as_of)
        if not schema.fields:
            raise ConfigError(f"table {table.base_path} has no schema yet")
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        """A reader producing ``schema`` (the catalog's declared schema or :meth:`schema`)."""
        return HudiDataSourceReader(dict(self.options), schema)


def _filter_value(f: Filter) -> Predicate | None:
    column = ".".join(getattr(f, "attribute", ()) or ())
    if isinstance(f, EqualTo):
        return column, "=", f.value
    if isinstance(f, In):
        return column, "in", tuple(f.value)
    for cls, op in ((GreaterThan, ">"), (GreaterThanOrEqual, ">="), (LessThan, "<"), (LessThanOrEqual, "<=")):
        if isinstance(f, cls):
            return column, op, f.value
    return None


class HudiDataSourceReader(DataSourceReader):
    """Plans file slices on the driver and reads them on executors.

    Args:
        options: data source options (see module doc).
        schema: the Spark schema to produce.
    """

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self._options = {str(k): str(v) for k, v in options.items()}
        self._spark_schema = schema
        self._arrow_schema = spark_to_arrow(schema)
        self._path = table_path(self._options)
        self._predicates: list[Predicate] = []

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 - Spark's name
        """Keep partition-column predicates for pruning; every filter is returned so Spark re-applies it."""
        for f in filters:
            parsed = _filter_value(f)
            if parsed is not None:
                self._predicates.append(parsed)
            yield f

    def _plan(self) -> QueryPlan:
        table = Table.load(self._path)
        return plan_query(table, HoodieConfig(self._options), partition_filter(table, self._predicates))

    def _cdc_partitions(self) -> Sequence[InputPartition]:
        """A CDC query: file groups with changes, about :data:`CDC_GROUPS_PER_TASK` per task."""
        plan = plan_cdc(Table.load(self._path), HoodieConfig(self._options))
        shared = replace(plan, groups=())  # each partition carries the settings and its own groups
        groups = [plan.groups[i:i + CDC_GROUPS_PER_TASK] for i in range(0, len(plan.groups), CDC_GROUPS_PER_TASK)]
        return [InputPartition((shared, tuple(g))) for g in groups] or [InputPartition((shared, ()))]

    def partitions(self) -> Sequence[InputPartition]:
        """Slices grouped into input partitions of up to 32 MB (small slices share a task)."""
        if is_cdc_query(HoodieConfig(self._options)):
            return self._cdc_partitions()
        plan = self._plan()
        self._plan_cache = plan
        groups: list[list[ReadSplit]] = []
        size = 0
        for split in sorted(plan.splits, key=lambda s: -s.size_bytes):
            if not groups or size + split.size_bytes > TARGET_SPLIT_BYTES:
                groups.append([])
                size = 0
            groups[-1].append(split)
            size += split.size_bytes
        return [InputPartition(tuple(g)) for g in groups] or [InputPartition(())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Rows of the partition's slices as Arrow batches of exactly the requested schema."""
        storage = Storage.for_uri(self._path)
        if is_cdc_query(HoodieConfig(self._options)):
            cdc_plan, groups = partition.value
            for group in groups:
                for batch in read_cdc_group(storage, cdc_plan, group):
                    yield batch.select(self._arrow_schema.names)
            return
        plan = getattr(self, "_plan_cache", None) or self._plan()
        for split in partition.value:
            yield from read_split(storage, split, self._arrow_schema, plan)

