"""Conditional upserts on Spark: the writer's side of ``MERGE INTO`` (Hudi ``MergeIntoHoodieTableCommand``'s write
with ``ExpressionPayload``).

The caller (the SQL layer) describes the statement in a :class:`MergeSpec`: the incoming rows, how their record
key (and partition) columns are computed from them, and what each clause writes. The engine owns the rest:

1. keys and partition paths of the incoming rows (the table's key generator, :func:`engine.spark.record_keys.add_keys`);
2. tagging: the index locates the stored records of those keys (:func:`engine.spark.index.locate_keys`: key
   ranges and bloom filters prune files, only the incoming keys are kept), or, when a clause reads stored
   columns, the stored rows themselves are joined (Hudi's merge handle hands ``ExpressionPayload`` the stored
   record);
3. a row *matches* when the index found its key (in its partition, with a non-global index), as in Hudi; a
   keyless table's rows match by the join predicate, and of several incoming rows matching one stored record the
   one with the greatest ordering value is kept (Hudi's combining of incoming records); the spec's clauses turn
   each joined row into the record to write and its operation (upsert or delete), and the stored records no
   incoming row matched into theirs (``NOT MATCHED BY SOURCE``);
4. routing by the index's rules: a record stays in its stored file group when its partition is unchanged; a
   record whose partition changed moves (a delete in the old partition and an insert in the new) with a global
   index and ``hoodie.*.index.update.partition.path=true``, keeps its stored partition with a global index
   without it, and is inserted into the new partition with a non-global index (the old record stays, as in
   Hudi);
5. the records are written as one upsert with ``ExpressionPayload`` (:func:`engine.spark.writer.write_dataframe`).

An *insert-only* spec (Hudi: no ordering field and no UPDATE clause) skips steps 2-4: every incoming row is
not matched, and the rows the clauses give are written with the ``insert`` operation (duplicate keys kept).
A *plain upsert* spec on a bucket-index table skips them too: its rows are written as an ``upsert``, which the
bucket index tags without reading stored keys (:attr:`MergeSpec.plain_upsert`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from engine.config import HoodieConfig, WriteConfig
from engine.formats.avro_schema import META_FIELDS
from engine.index import index_type, is_global_index, moves_partition
from engine.spark.index import STORED_PARTITION, locate_keys, with_moved_copies
from engine.spark.record_keys import add_keys, keys_computed_in_spark, table_arrow_schema
from engine.spark.schema import column, table_data_schema
from engine.spark.writer import write_dataframe
from engine.table import Table
from engine.write.handles import EXPRESSION_PAYLOAD
from engine.write.metrics import WriteMetrics
from engine.write.operation import WriteOperation
from engine.write.prepare import FILE_ID, IS_DELETED, PARTITION_PATH, RECORD_KEY, STORED_SEQNO

MATCHED = "_hoodie_merge_matched"
"""Boolean column of the joined rows: the incoming row matched a stored record."""
STORED_KEY = "_hoodie_stored_record_key"
"""Record key of the matched stored record (null when none), under the stored side's alias."""
STORED_FILE_ID = "_hoodie_stored_file_id"
STORED_LOCATION = (STORED_KEY, STORED_PARTITION, STORED_FILE_ID, STORED_SEQNO)
"""The stored record's location columns a clause projection must keep (:meth:`MergeSpec.stage`)."""
INCOMING_KEY = "_hoodie_incoming_record_key"
INCOMING_PARTITION = "_hoodie_incoming_partition_path"


@dataclass
class MergeSpec:
    """A MERGE as the writer needs it.

    Attributes:
        source: the incoming rows.
        source_alias / stored_alias: the names the clause expressions use for the two sides of the join.
        key_columns: one Column per record-key field, over ``source``, named as the field (the values the ON
            condition equates the key with); empty for a keyless table (auto-generated keys).
        partition_columns: Columns over ``source`` giving every partition field a value, named as the field,
            or None when the source does not give them all. With a non-global index a key is looked up in that
            partition only (Hudi); otherwise they are not used.
        condition: for a keyless table the whole ON condition (Spark SQL over both aliases); None for a keyed
            table (the record key, and partition with a non-global index, decide a match).
        needs_stored_rows: some clause or predicate reads stored columns: the stored rows are joined, not
            only their locations.
        stage: the WHEN [NOT] MATCHED clauses. Given the joined rows (source columns under ``source_alias``,
            stored columns and :data:`STORED_LOCATION` under ``stored_alias``, :data:`MATCHED`), return one row
            per record to write: every table data column, ``_hoodie_is_deleted`` (boolean: the clause deletes)
            and the :data:`STORED_LOCATION` columns; rows no clause takes are filtered out.
        stage_unmatched: the WHEN NOT MATCHED BY SOURCE clauses, or None. Given the stored rows no incoming row
            matched (stored data columns and :data:`STORED_LOCATION` under ``stored_alias``), return rows as
            ``stage`` does.
        insert_only: no row is tagged: every incoming row is not matched and the records are written with the
            ``insert`` operation (Hudi's MERGE without ordering field and UPDATE clause).
        ordering: for a keyless table, the ordering value of an incoming row (Spark SQL over ``source_alias``),
            or None: of the incoming rows matching one stored record, the greatest wins.
        release: callbacks the caller wants run after the write (cached frames of its own).
        plain_upsert: the clauses write every incoming row as it is, matched or not (``WHEN MATCHED THEN UPDATE
            SET *`` and ``WHEN NOT MATCHED THEN INSERT *``, no conditions, key and partition columns taken from
            the source columns of their names). With ``hoodie.index.type=BUCKET``, which tags a key by its hash
            without reading the table, the MERGE is then written as an upsert of the incoming rows: nothing is
            looked up or joined, as in Hudi, whose MERGE tags through the same index.
    """

    source: DataFrame
    source_alias: str
    stored_alias: str
    key_columns: list[Column]
    partition_columns: list[Column] | None
    condition: str | None
    needs_stored_rows: bool
    stage: Callable[[DataFrame], DataFrame]
    stage_unmatched: Callable[[DataFrame], DataFrame] | None = None
    insert_only: bool = False
    ordering: str | None = None
    release: list[Callable[[], object]] = field(default_factory=list)
    plain_upsert: bool = False

    @property
    def keyless(self) -> bool:
        """The table has auto-generated keys: rows are matched by the whole ON condition."""
        return not self.key_columns


def merge_dataframe(spark: SparkSession, table: Table, spec: MergeSpec,
                    options: Mapping[str, str] | None = None) -> WriteMetrics:
    """Run ``spec`` against ``table`` and commit one upsert (module docstring).

    Args:
        options: write options (``hoodie.*``) over the table config; ``hoodie.datasource.write.payload.class``
            is Hudi's ``ExpressionPayload`` whatever they say (Hudi's MERGE: ordering decides updates on
            copy-on-write tables, a matched DELETE always deletes).

    Returns:
        The write's metrics.

    Raises:
        AnalysisException: a clause expression does not resolve (Spark's message).
        EngineError: the write failed (rolled back; the table reads its last commit).
    """
    options = {**(options or {}), WriteConfig.PAYLOAD_CLASS.key: EXPRESSION_PAYLOAD}
    conf = table.config.overlay(options)
    held: list[Callable[[], object]] = list(spec.release)
    try:
        if spec.insert_only or (spec.plain_upsert and index_type(conf) == "BUCKET"):
            rows = inserted_rows(spark, table, spec)
            rows.schema  # noqa: B018 - analysis errors (unknown column) surface before the instant starts
            operation = WriteOperation.INSERT if spec.insert_only else WriteOperation.UPSERT
            return write_dataframe(spark, table, rows, operation, options)
        rows = changes(spark, table, spec, conf, held)
        rows.schema  # noqa: B018 - analysis errors (unknown column) surface before the instant starts
        return write_dataframe(spark, table, rows, WriteOperation.UPSERT, options, prepped=True)
    finally:
        for release in held:
            release()


def stored_rows(spark: SparkSession, table: Table) -> DataFrame:
    """The table's latest rows with :data:`STORED_LOCATION` columns and no other meta column."""
    target = spark.read.format("hudi").load(table.base_path)
    target = target.withColumn(STORED_FILE_ID, F.split(F.col(META_FIELDS[4]), "_").getItem(0))
    target = target.withColumnRenamed(RECORD_KEY, STORED_KEY).withColumnRenamed(PARTITION_PATH, STORED_PARTITION)
    target = target.withColumnRenamed(META_FIELDS[1], STORED_SEQNO)
    return target.drop(*[c for c in META_FIELDS if c in target.columns])


def inserted_rows(spark: SparkSession, table: Table, spec: MergeSpec) -> DataFrame:
    """The data columns of the records an insert-only or plain-upsert spec writes: every incoming row, staged as
    not matched (a plain upsert's UPDATE and INSERT clauses write the same row)."""
    S, T = spec.source_alias, spec.stored_alias
    # No stored row is met (Hudi tags none), but clause conditions may name target columns (never true here):
    # an empty frame of the table's columns, built from the schema without reading the table.
    location = [StructField(c, StringType()) for c in STORED_LOCATION]
    nothing = spark.createDataFrame([], StructType([*table_data_schema(table).fields, *location])).alias(T)
    joined = spec.source.alias(S).join(nothing, F.lit(False), "left").withColumn(MATCHED, F.lit(False))
    staged = spec.stage(joined)
    data = {f.name.lower() for f in table_arrow_schema(table)}
    return staged.select(*[column(c) for c in staged.columns if c.lower() in data])


def _best_match(joined: DataFrame, spec: MergeSpec) -> DataFrame:
    """Of the incoming rows matching one stored record, the one with the greatest ordering value (keyless)."""
    if spec.ordering is None:
        return joined
    stored_key = F.col(f"`{spec.stored_alias}`.{STORED_KEY}")
    window = Window.partitionBy(stored_key).orderBy(F.expr(spec.ordering).desc_nulls_last())
    rank = F.when(stored_key.isNull(), F.lit(1)).otherwise(F.row_number().over(window))
    return joined.withColumn("__sqlext_rank", rank).filter(F.col("__sqlext_rank") == 1).drop("__sqlext_rank")


def changes(spark: SparkSession, table: Table, spec: MergeSpec, conf: HoodieConfig,
            held: list[Callable[[], object]]) -> DataFrame:
    """The prepped rows of ``spec``: data columns, ``_hoodie_record_key``, ``_hoodie_partition_path``,
    ``_hoodie_file_id`` (null for new records) and ``_hoodie_is_deleted``. Frames and broadcasts to release
    after the write are appended to ``held``."""
    S, T = spec.source_alias, spec.stored_alias
    data_schema = table_arrow_schema(table)
    if spec.keyless:
        joined = spec.source.alias(S).join(stored_rows(spark, table).alias(T), F.expr(spec.condition or "true"), "left")
        joined = _best_match(joined, spec)
        matched = F.col(f"`{T}`.{STORED_KEY}").isNotNull()
    else:
        src, stored, on = _tagged_sides(spark, table, spec, conf, data_schema, held)
        joined = src.alias(S).join(stored.alias(T), on, "left")
        matched = F.col(f"`{T}`.{STORED_KEY}").isNotNull()
    joined = joined.withColumn(MATCHED, matched)
    if spec.stage_unmatched is not None:
        joined = joined.persist(StorageLevel.MEMORY_AND_DISK)
        held.append(joined.unpersist)
    staged = spec.stage(joined)
    if spec.stage_unmatched is not None:
        matched_ids = joined.filter(F.col(MATCHED)).select(
            F.col(f"`{T}`.{STORED_KEY}").alias(STORED_KEY),
            F.col(f"`{T}`.{STORED_PARTITION}").alias(STORED_PARTITION)).distinct()
        unmatched = stored_rows(spark, table).join(matched_ids, on=[STORED_KEY, STORED_PARTITION], how="left_anti")
        staged = staged.unionByName(spec.stage_unmatched(unmatched.alias(T)))
    return _route(staged, table, conf, data_schema, keyless=spec.keyless)


def _lookup_partition(spec: MergeSpec, conf: HoodieConfig, table: Table) -> list[Column] | None:
    """The partition columns a non-global index looks a key up in (None: every partition)."""
    if is_global_index(conf) or not table.partition_fields:
        return None
    return spec.partition_columns


def _deterministic(df: DataFrame) -> bool:
    """Whether evaluating ``df`` twice gives the same rows (Spark's ``LogicalPlan.deterministic``)."""
    return bool(df._jdf.queryExecution().analyzed().deterministic())


def _tagged_sides(spark: SparkSession, table: Table, spec: MergeSpec, conf: HoodieConfig, data_schema: pa.Schema,
                  held: list[Callable[[], object]]) -> tuple[DataFrame, DataFrame, Column]:
    """The incoming rows with their key (and partition), the stored side of the join, and the join condition."""
    S, T = spec.source_alias, spec.stored_alias
    part_columns = _lookup_partition(spec, conf, table)
    with_partition = part_columns is not None
    probe = spec.source.alias(S).select(
        F.struct(*[column(c) for c in spec.source.columns]).alias("__src"), *spec.key_columns,
        *(part_columns or []))
    # With the index's locations as stored side the source is evaluated twice (its keys, then the join)
    # unless cached: caching costs more than rereading a deterministic source whose keys Spark computes, but a
    # Python key pass or a non-deterministic source (whose two evaluations could disagree) is computed once.
    cache_source = spec.stage_unmatched is not None or (not spec.needs_stored_rows and (
        not keys_computed_in_spark(probe, table, conf, data_schema, with_partition=with_partition)
        or not _deterministic(probe)))
    probe = add_keys(probe, table, conf, data_schema, with_partition=with_partition)
    extra = [F.col(PARTITION_PATH).alias(INCOMING_PARTITION)] if with_partition else []
    src = probe.select("__src.*", F.col(RECORD_KEY).alias(INCOMING_KEY), *extra)
    if cache_source:
        src = src.persist(StorageLevel.MEMORY_AND_DISK)
        held.append(src.unpersist)
    if spec.needs_stored_rows:
        stored = stored_rows(spark, table)
    else:
        # Only stored keys that occur in the source matter: the index locates them (counting the source rows,
        # when needed to choose how, runs the source).
        located, lookup_held = locate_keys(spark, table, src.select(F.col(INCOMING_KEY).alias(RECORD_KEY)), conf,
                                           count_rows=src.count)
        held.extend(lookup_held)
        # The rows the clauses write do not read the stored record: one per key serves every stored copy.
        stored = located.select(F.col(RECORD_KEY).alias(STORED_KEY), F.col(PARTITION_PATH).alias(STORED_PARTITION),
                                F.col(FILE_ID).alias(STORED_FILE_ID), F.lit(None).cast(StringType()).alias(STORED_SEQNO))
    cond = F.col(f"`{S}`.{INCOMING_KEY}") == F.col(f"`{T}`.{STORED_KEY}")
    if with_partition:
        cond = cond & (F.col(f"`{S}`.{INCOMING_PARTITION}") == F.col(f"`{T}`.{STORED_PARTITION}"))
    return src, stored, cond


def _route(staged: DataFrame, table: Table, conf: HoodieConfig, data_schema: pa.Schema, *,
           keyless: bool) -> DataFrame:
    """Keys, partitions and file groups of the written rows (module docstring, step 4)."""
    keyed = add_keys(staged, table, conf, data_schema)
    is_delete = F.coalesce(F.col(IS_DELETED).cast(BooleanType()), F.lit(False))
    located = F.col(STORED_KEY).isNotNull()
    same = F.col(PARTITION_PATH).eqNullSafe(F.col(STORED_PARTITION))
    global_index, move_partition = is_global_index(conf), moves_partition(conf)
    if keyless:
        stay = located
        move = F.lit(False)
    else:
        stay = located & (is_delete | same | F.lit(global_index and not move_partition))
        move = located & ~is_delete & ~same & F.lit(move_partition)
    rows, delete_copy = with_moved_copies(keyed, move)
    old = stay | delete_copy
    data_columns: Sequence[str] = [c for c in staged.columns if c not in (IS_DELETED, *STORED_LOCATION)]
    return rows.select(
        *[column(c) for c in data_columns],
        F.when(old, F.col(STORED_KEY)).otherwise(F.col(RECORD_KEY)).cast(StringType()).alias(RECORD_KEY),
        F.when(old, F.col(STORED_PARTITION)).otherwise(F.col(PARTITION_PATH)).cast(StringType()).alias(PARTITION_PATH),
        F.when(old, F.col(STORED_FILE_ID)).otherwise(F.lit(None)).cast(StringType()).alias(FILE_ID),
        (is_delete | delete_copy).cast(BooleanType()).alias(IS_DELETED),
        F.when(old, F.col(STORED_SEQNO)).otherwise(F.lit(None)).cast(StringType()).alias(STORED_SEQNO),
    )
