"""Tagging incoming records with the file groups that hold their keys, on Spark (Hudi ``HoodieIndex.tagLocation``):
the simple index's key join, and the bloom index's pruned lookups (:mod:`engine.index.bloom`). The per-file work
is plain pyarrow in :mod:`engine.index`; this module only decides which task reads what."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.broadcast import Broadcast
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

from engine import errors
from engine.config import HoodieConfig, TableConfig
from engine.filegroup.naming import parse_log_file_name
from engine.index import index_type, is_global_index, moves_partition
from engine.index.bucket import BucketSpec, bucket_file_groups, bucket_ids, new_bucket_groups
from engine.index.simple import KeyedFile, balanced_groups, files_to_index
from engine.spark import tasks
from engine.spark.schema import column
from engine.table import Table
from engine.write.prepare import BUCKET_ID, FILE_ID, IS_DELETED, PARTITION_PATH, RECORD_KEY

logger = logging.getLogger(__name__)

BLOOM_INDEX_TYPES = ("BLOOM", "GLOBAL_BLOOM")
STORED_PARTITION = "_hoodie_stored_partition_path"
"""Column of the partition path where a global index found a key, while it tags."""
_COPY = "_hoodie_partition_move_copy"
BLOOM_BROADCAST_MAX_KEYS = 2_000_000
"""Incoming keys a bloom-index lookup broadcasts to its tasks; a larger write is tagged by the simple index's
join (the same answer, every stored key read)."""


def existing_key_locations(
    spark: SparkSession, table: Table, partitions: Sequence[str] | None, conf: HoodieConfig,
    wanted: Broadcast[pa.Array] | None = None, by_partition: Broadcast[dict[str, pa.Array]] | None = None,
) -> DataFrame:
    """The simple index's side of the join: ``(_hoodie_record_key, _hoodie_partition_path,
    _hoodie_file_id)`` of every record in the latest base files of ``partitions`` (all when ``None``), and
    of merge-on-read log files that may hold keys no base file has (:func:`engine.index.simple.files_to_index`).

    Without ``wanted``, base files of a local table with meta fields are read by Spark's own parquet reader
    (only the ``_hoodie_record_key`` column; file group and partition joined on by file name), so the keys
    never pass through Python; log files, tables without meta fields (keys come from the key generator),
    remote storage and paths Hadoop would take for glob patterns go through Python tasks
    (:func:`engine.spark.tasks.read_keys_fn`).

    With ``wanted`` (a broadcast ``pa.string()`` array of the incoming keys, Hudi's "keys to look up") or
    ``by_partition`` (partition → incoming keys), every file is read by Python tasks that keep only those keys:
    pyarrow reads a key column about twice as fast as Spark, and only the matches cross into the JVM. With
    ``hoodie.index.type`` BLOOM or GLOBAL_BLOOM a base file's key column is read only when its footer's key
    range and bloom filter admit some of the keys (:mod:`engine.index.bloom`).
    """
    names = table.file_system_view().partition_paths() if partitions is None else list(partitions)
    files = files_to_index(table, names)
    schema = StructType([StructField(RECORD_KEY, StringType()), StructField(PARTITION_PATH, StringType()),
                         StructField(FILE_ID, StringType())])
    if not files:
        return spark.createDataFrame([], schema)
    frames: list[DataFrame] = []
    in_python = files
    lookup = wanted is not None or by_partition is not None
    if not lookup and table.storage.is_local and conf.get(TableConfig.POPULATE_META_FIELDS):
        base = [f for f in files if parse_log_file_name(f.path.rsplit("/", 1)[-1]) is None
                and not _HADOOP_GLOB.search(f.path)]
        chosen = set(base)
        in_python = [f for f in files if f not in chosen]
        if base:
            frames.append(_base_file_keys_in_spark(spark, base))
    if in_python:
        # One task per group of files of about equal size; the groups travel in the function.
        groups = balanced_groups(in_python, spark.sparkContext.defaultParallelism * 2)
        bloom = index_type(conf) in BLOOM_INDEX_TYPES
        frames.append(spark.range(len(groups), numPartitions=len(groups)).mapInArrow(
            tasks.read_keys_fn(table.storage, conf.as_dict(), groups, wanted, by_partition, bloom), schema))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


_HADOOP_GLOB = re.compile(r"[*?\[\]{}\\]")


def _base_file_keys_in_spark(spark: SparkSession, files: Sequence[KeyedFile]) -> DataFrame:
    """``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of local base files, read by
    Spark's vectorized parquet reader."""
    file_column = "__sqlext_base_file_name"
    listing = spark.createDataFrame(
        [(f.path.rsplit("/", 1)[-1], f.partition_path, f.file_id) for f in files],
        StructType([StructField(file_column, StringType()), StructField(PARTITION_PATH, StringType()),
                     StructField(FILE_ID, StringType())]))
    keys = spark.read.schema(StructType([StructField(RECORD_KEY, StringType())])) \
        .parquet(*[f.path for f in files]) \
        .select(RECORD_KEY, F.col("_metadata.file_name").alias(file_column))
    return keys.join(F.broadcast(listing), on=file_column).select(RECORD_KEY, PARTITION_PATH, FILE_ID)


BROADCAST_KEY_BYTES = 64 * 2**20
"""Incoming keys whose size Spark's optimizer estimates at up to this many bytes are collected and broadcast to
the tasks reading the stored keys (:func:`locate_keys`)."""
BROADCAST_KEY_ROWS = 1_000_000
"""Incoming keys counted up to this many are broadcast too (when the estimate is larger or unknown)."""


def _estimated_bytes(df: DataFrame) -> int:
    """Spark's optimizer estimate of ``df``'s size in bytes (``spark.sql.defaultSizeInBytes`` when unknown)."""
    return int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())


def locate_keys(
    spark: SparkSession, table: Table, keys: DataFrame, conf: HoodieConfig,
    count_rows: Callable[[], int] | None = None,
) -> tuple[DataFrame, list[Callable[[], object]]]:
    """Where the index finds the given record keys (Hudi ``HoodieIndex.tagLocation`` without the records):
    ``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of every stored record whose key occurs in
    ``keys`` (a DataFrame with a ``_hoodie_record_key`` column), over all partitions.

    Keys of moderate size (:data:`BROADCAST_KEY_BYTES` by the optimizer's estimate, or up to
    :data:`BROADCAST_KEY_ROWS` by ``count_rows()``, default counting ``keys``) are broadcast to the tasks reading
    the stored keys, which keep only those; with ``hoodie.index.type`` BLOOM or GLOBAL_BLOOM those tasks first
    prune files by footer key ranges and bloom filters (:func:`existing_key_locations`). More keys are
    semi-joined in Spark against every stored key.

    Returns:
        The locations and the callbacks that release what the lookup holds (call them after the write).
    """
    distinct = keys.select(F.col(RECORD_KEY).cast(StringType()).alias(RECORD_KEY)).distinct()
    count = count_rows or distinct.count
    if _estimated_bytes(distinct) <= BROADCAST_KEY_BYTES or count() <= BROADCAST_KEY_ROWS:
        values = distinct.toArrow().column(0).combine_chunks().cast(pa.string())
        wanted: Broadcast[pa.Array] = spark.sparkContext.broadcast(values)
        return existing_key_locations(spark, table, None, conf, wanted=wanted), [wanted.destroy]
    stored = existing_key_locations(spark, table, None, conf).join(distinct, on=RECORD_KEY, how="left_semi")
    return stored, []


def tag_locations(
    spark: SparkSession, table: Table, keyed: DataFrame, conf: HoodieConfig
) -> DataFrame:
    """Tag keyed records with ``_hoodie_file_id`` of the file group holding their key (null when new).

    Index types (``hoodie.index.type``): ``SIMPLE`` (Hudi ``HoodieSimpleIndex``: key and partition must match;
    every stored key of the touched partitions read and joined), ``BLOOM`` (Hudi ``HoodieBloomIndex``: the same
    answer, files pruned by their footers' key ranges and bloom filters first), ``GLOBAL_SIMPLE`` /
    ``GLOBAL_BLOOM`` (key only, over every partition; a key whose partition path changed moves or stays as
    ``hoodie.*.index.update.partition.path`` says, :func:`_route_global`: the moved key's rows gain
    ``_hoodie_is_deleted``).

    Raises:
        ConfigError: another index type.
    """
    kind = index_type(conf)
    if kind not in ("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM"):
        raise errors.ConfigError(f"hoodie.index.type={kind} is not supported for table "
                                 f"{table.base_path} (supported: SIMPLE, BLOOM, GLOBAL_SIMPLE, GLOBAL_BLOOM)")
    is_global = is_global_index(conf)
    stored = None
    if kind in BLOOM_INDEX_TYPES:
        incoming = keyed.select(RECORD_KEY, PARTITION_PATH).distinct()
        if incoming.count() <= BLOOM_BROADCAST_MAX_KEYS:
            pairs = incoming.toArrow()
            if is_global:
                wanted = spark.sparkContext.broadcast(
                    pc.unique(pairs.column(0).combine_chunks().cast(pa.string())))
                stored = existing_key_locations(spark, table, None, conf, wanted=wanted)
            else:
                grouped: dict[str, pa.Array] = {}
                partitions_col = pairs.column(1).combine_chunks()
                keys_col = pairs.column(0).combine_chunks().cast(pa.string())
                for partition in pc.unique(partitions_col).to_pylist():
                    grouped[str(partition)] = keys_col.filter(pc.equal(partitions_col, partition))
                per_partition = spark.sparkContext.broadcast(grouped)
                stored = existing_key_locations(spark, table, sorted(grouped), conf, by_partition=per_partition)
    if stored is None:
        if is_global:
            stored = existing_key_locations(spark, table, None, conf)
        else:
            partitions = [r[0] for r in keyed.select(PARTITION_PATH).distinct().collect()]
            stored = existing_key_locations(spark, table, partitions, conf)
    if is_global:
        stored = stored.withColumnRenamed(PARTITION_PATH, STORED_PARTITION)
        joined = keyed.join(stored, on=RECORD_KEY, how="left")
        tagged = _route_global(joined, keyed.columns, moves_partition(conf))
    else:
        tagged = keyed.join(stored, on=[RECORD_KEY, PARTITION_PATH], how="left")
    return tagged


def _route_global(joined: DataFrame, columns: Sequence[str], move: bool) -> DataFrame:
    """Records a global index found (``STORED_PARTITION`` and ``_hoodie_file_id`` set) routed by Hudi's
    ``HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded``: a record whose partition path changed is, with ``move``
    (``hoodie.simple.index.update.partition.path`` / ``hoodie.bloom.index.update.partition.path``), deleted from
    its stored file group and inserted as a new record in its new partition; without ``move`` it is updated
    where it is stored (its partition columns then disagree with its partition path, as in Hudi). A delete goes
    to the stored record whatever its partition path says."""
    stored_here = F.coalesce(F.col(STORED_PARTITION), F.col(PARTITION_PATH))
    if not move:
        return joined.withColumn(PARTITION_PATH, stored_here).drop(STORED_PARTITION)
    is_delete = F.coalesce(F.col(IS_DELETED).cast(BooleanType()), F.lit(False)) if IS_DELETED in columns \
        else F.lit(False)
    moved = F.col(STORED_PARTITION).isNotNull() & ~F.col(PARTITION_PATH).eqNullSafe(F.col(STORED_PARTITION)) \
        & ~is_delete
    rows, delete_copy = with_moved_copies(joined, moved)
    inserted = moved & ~delete_copy
    out = [column(c) for c in columns if c not in (PARTITION_PATH, IS_DELETED)]
    return rows.select(
        *out,
        F.when(inserted, F.col(PARTITION_PATH)).otherwise(stored_here).alias(PARTITION_PATH),
        (is_delete | delete_copy).alias(IS_DELETED),
        F.when(inserted, F.lit(None).cast(StringType())).otherwise(F.col(FILE_ID)).alias(FILE_ID),
    )


def with_moved_copies(rows: DataFrame, moved: Column) -> tuple[DataFrame, Column]:
    """``rows`` with every row where ``moved`` holds written twice, as a record moving partition is (Hudi
    ``HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded``): the first copy is the record in its new partition,
    the second deletes the stored record. Returns the rows and the Column true on the second copies."""
    doubled = rows.withColumn(_COPY, F.explode(F.when(moved, F.array(F.lit(0), F.lit(1))).otherwise(F.array(F.lit(0)))))
    return doubled, F.col(_COPY) == 1


JAVA_BUCKET_ID_CLASS = "io.sqlext.catalog.HudiBucketId"
"""The JVM twin of :func:`engine.index.bucket.bucket_id` (a Spark Java UDF shipped in sqlext's jar)."""

_JAVA_BUCKET_ID_FUNCTION = "sqlext_hudi_bucket_id"


def _java_bucket_function(spark: SparkSession | None) -> bool:
    """Whether ``spark`` has the JVM bucket function, registering it (once per session) when its class is on the
    session's classpath (sqlext sessions put it there)."""
    if spark is None:
        return False
    try:
        if not spark.catalog.functionExists(_JAVA_BUCKET_ID_FUNCTION):
            spark.udf.registerJavaFunction(_JAVA_BUCKET_ID_FUNCTION, JAVA_BUCKET_ID_CLASS, IntegerType())
        return True
    except Exception as exc:  # noqa: BLE001 - the class is not on this session's classpath
        logger.debug("bucket ids hashed in Python: %s unavailable (%s)", JAVA_BUCKET_ID_CLASS, exc)
        return False


def bucket_id_column(spec: BucketSpec, key: str = RECORD_KEY) -> Column:
    """``int`` bucket number of each record (Hudi ``BucketIdentifier.getBucketId``): computed in the JVM by
    :data:`JAVA_BUCKET_ID_CLASS` when the active session has it, else by :func:`engine.index.bucket.bucket_ids` on
    executors (only the key column crossing into Python). A null key fails the write (``InvalidRecordKey``)."""
    fields, num = spec.hash_fields, spec.num_buckets
    if _java_bucket_function(SparkSession.getActiveSession()):
        hashed = F.call_function(_JAVA_BUCKET_ID_FUNCTION, F.col(key).cast(StringType()), F.lit(",".join(fields)),
                                 F.lit(num))
        message = F.lit("InvalidRecordKey: a record key is null: it cannot be hashed to a bucket")
        return F.when(F.col(key).isNull(), F.raise_error(message).cast(IntegerType())).otherwise(hashed)

    def ids(keys: pa.Array) -> pa.Array:
        return bucket_ids(keys, fields, num)

    udf = F.arrow_udf(ids, IntegerType())  # type: ignore[call-overload]  # stubs lack the (function, type) form
    return udf(F.col(key))


def bucket_groups(table: Table, pairs: Sequence[tuple[str, int]], *, reuse_existing: bool = True
                  ) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    """The file group of each ``(partition path, bucket number)`` of ``pairs``: the latest file slice of that
    bucket in the partition, or a new bucket file group (:func:`engine.index.bucket.new_bucket_groups`).

    Args:
        reuse_existing: False for overwrites: every bucket gets a new file group.

    Returns:
        ``(partition, bucket) → file id``, and the new file groups (file id → partition path).

    Raises:
        IndexLookupError: a partition has two file groups for one bucket, or file groups of another index type.
    """
    existing: dict[str, dict[int, str]] = {}
    if reuse_existing:
        view = table.file_system_view()
        for partition in sorted({p for p, _ in pairs}):
            file_ids = [fs.file_id for fs in view.latest_file_slices(partition, merge_pending_compaction=False)]
            existing[partition] = bucket_file_groups(partition, file_ids, table.base_path)
    groups = new_bucket_groups(pairs, existing)
    known = {fid for mapping in existing.values() for fid in mapping.values()}
    return groups, {fid: partition for (partition, _), fid in groups.items() if fid not in known}


def tag_buckets(
    spark: SparkSession, table: Table, keyed: DataFrame, conf: HoodieConfig, *, reuse_existing: bool = True,
    located: tuple[dict[tuple[str, int], str], dict[str, str]] | None = None,
) -> tuple[DataFrame, dict[str, str]]:
    """Tag records with the file group of their bucket (Hudi ``HoodieSimpleBucketIndex.tagLocation``): no data
    file is read; the buckets of the latest file slices of the touched partitions are the index.

    Every record gets ``_hoodie_file_id``: the file group of its ``(partition, bucket)`` when one exists (a key
    not stored there is an insert into it, written by its merge or append handle, as in Hudi), else a new
    bucket file group id (:func:`engine.index.bucket.bucket_file_id`). Rows that already carry a
    ``_hoodie_file_id`` (a prepped MERGE's matched rows) keep it. A ``_hoodie_bucket_id`` column ``keyed`` already
    has (hashed while the keys were computed) is used as it is, and dropped.

    Args:
        reuse_existing: False for overwrites: every bucket gets a new file group (the old ones are replaced).
        located: :func:`bucket_groups` of every ``(partition, bucket)`` of ``keyed`` when the caller has it
            (counted with the keys); None: the pairs are collected from ``keyed`` (one Spark job).

    Returns:
        The tagged rows and the new file groups (file id → partition path) the write creates.

    Raises:
        ConfigError: bad bucket settings (:meth:`engine.index.bucket.BucketSpec.from_config`).
        IndexLookupError: a partition has two file groups for one bucket, or file groups of another index type.
    """
    spec = BucketSpec.from_config(conf, table.base_path)
    with_bucket = keyed if BUCKET_ID in keyed.columns else keyed.withColumn(BUCKET_ID, bucket_id_column(spec))
    if located is None:
        pairs = [(str(r[0]), int(r[1])) for r in with_bucket.select(PARTITION_PATH, BUCKET_ID).distinct().collect()]
        located = bucket_groups(table, pairs, reuse_existing=reuse_existing)
    groups, created = located
    schema = StructType([StructField(PARTITION_PATH, StringType()), StructField(BUCKET_ID, IntegerType()),
                         StructField("_bucket_file_id", StringType())])
    mapping = spark.createDataFrame([(p, b, fid) for (p, b), fid in groups.items()], schema)
    joined = with_bucket.join(F.broadcast(mapping), on=[PARTITION_PATH, BUCKET_ID], how="left")
    if FILE_ID in keyed.columns:
        file_id = F.coalesce(F.col(FILE_ID), F.col("_bucket_file_id"))
        tagged = joined.withColumn(FILE_ID, file_id).drop("_bucket_file_id", BUCKET_ID)
    else:
        tagged = joined.withColumnRenamed("_bucket_file_id", FILE_ID).drop(BUCKET_ID)
    kept = [c for c in keyed.columns if c != BUCKET_ID]
    return tagged.select(*kept, *([] if FILE_ID in keyed.columns else [FILE_ID])), created
