"""The driver side of a write on Spark (Hudi ``SparkRDDWriteClient`` + ``HoodieSparkSqlWriter``).

One entry point, :func:`write_dataframe`, serves INSERT, bulk insert, upsert, delete and the overwrites:

1. start the instant (single writer: failing at once when another writer is live, rolling back failed writes
   first; optimistic concurrency control: neither) and its heartbeat, which stops when the instant completes or
   is rolled back;
2. add record keys and partition paths (executors, ``mapInArrow``), unless the input is *prepped*
   (already carries ``_hoodie_record_key``, ``_hoodie_partition_path`` and ``_hoodie_file_id``);
3. bulk insert, and the first write of a bucket-index table: executors stream rows into new file groups
   (:mod:`engine.spark.bulk_insert`); otherwise tag records with the simple index
   (a Spark join with the keys of the latest base files of the touched partitions), count them per file
   group (the workload profile: counts only reach the driver), plan buckets, route records to them (a
   Spark expression, :mod:`engine.spark.bucket_column`) and write one file group per bucket
   (``groupBy(bucket).applyInArrow``);
4. commit the write stats the tasks returned (optimistic concurrency control: under the table lock, after the
   conflict check; a write that lost is rolled back and raises ``CommitConflict``).

No record is collected to the driver.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from engine import errors
from engine.auto_keys import is_keyless, validate_auto_key_config
from engine.concurrency.transaction import forget_start
from engine.config import CompactionConfig, HoodieConfig, TableConfig, WriteConfig
from engine.errors import EngineError, WriteError
from engine.filegroup.partition_metadata import check_partition_layout
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro
from engine.index import index_type
from engine.index.bucket import BucketSpec
from engine.payloads import configured_payload, payload_rules
from engine.schema.history import SchemaEvolution
from engine.services.post_commit import check_services_supported, run_post_commit
from engine.spark import tasks
from engine.spark.bucket_column import bucket_column
from engine.spark.bulk_insert import bucket_bulk_insert, bulk_insert
from engine.spark.clustering import run_inline_clustering
from engine.spark.compaction import run_inline_compaction
from engine.spark.dup_policy import apply_dup_policy, insert_dup_policy
from engine.spark.index import bucket_groups, bucket_id_column, locate_keys, tag_buckets, tag_locations
from engine.spark.record_keys import add_keys, auto_key_column, stored_arrow_schema, table_arrow_schema
from engine.spark.task_errors import failure_summary, unwrap_task_error
from engine.spark.task_slots import MAX_SLOTTED_BUCKETS, SLOT, slot_column
from engine.table import Table
from engine.timeline.commit_metadata import WriteStat
from engine.write.append_handle import LatestSlice
from engine.write.commit import finish_write, heartbeat_client, start_write
from engine.write.handles import WriteContext
from engine.write.metrics import WriteMetrics
from engine.write.operation import WriteOperation
from engine.write.planner import (
    ExistingFileGroup,
    WorkloadProfile,
    average_record_size,
    bucket_work,
    pack,
    plan_writes,
    reject_updates_in_clustering,
    small_file_candidates,
)
from engine.write.prepare import BUCKET, BUCKET_ID, FILE_ID, IS_DELETED, KEY_HASH, PARTITION_PATH, RECORD_KEY
from engine.write.rollback import rollback_instant
from engine.write.supported import check_write_supported

logger = logging.getLogger(__name__)


def _payload_deletes(df: DataFrame, conf: HoodieConfig) -> DataFrame:
    """Flag as deletes the records the payload class reads as deletes: ``Op = 'D'`` for
    ``AWSDmsAvroPayload`` (its ``getInsertValue`` / ``combineAndGetUpdateValue`` return empty for them)."""
    op_field = payload_rules(configured_payload(conf)).delete_op_field
    if op_field is None or op_field not in df.columns:
        return df
    flagged = F.coalesce(F.col(op_field).cast(StringType()) == F.lit("D"), F.lit(False))
    if IS_DELETED in df.columns:
        flagged = F.coalesce(F.col(IS_DELETED).cast(BooleanType()), F.lit(False)) | flagged
    return df.withColumn(IS_DELETED, flagged)


def _shuffle_partitions(spark: SparkSession, conf: HoodieConfig, operation: WriteOperation) -> int:
    """The most write tasks: ``hoodie.{upsert,delete,insert}.shuffle.parallelism`` of ``operation`` when set
    (> 0), else ``spark.sql.shuffle.partitions``."""
    prop = {
        WriteOperation.UPSERT: WriteConfig.UPSERT_PARALLELISM,
        WriteOperation.DELETE: WriteConfig.DELETE_PARALLELISM,
    }.get(operation, WriteConfig.INSERT_PARALLELISM)
    configured = conf.get(prop)
    return configured if configured > 0 else int(spark.conf.get("spark.sql.shuffle.partitions") or 200)


def datasource_write_options(merge_on_read: bool, table_config: HoodieConfig,
                             options: Mapping[str, str] | None) -> dict[str, str]:
    """The write options of a Spark SQL / data source write with Hudi's data source defaults applied
    (``DataSourceUtils.createHoodieConfig``): a merge-on-read batch write compacts inline
    (``hoodie.compact.inline=true``, every ``hoodie.compact.inline.max.delta.commits`` delta commits) unless the
    option or the table sets ``hoodie.compact.inline`` itself.

    Args:
        merge_on_read: the table type.
        table_config: the table's stored config (its own ``hoodie.compact.inline`` wins too).
        options: the statement's write options (``hoodie.*``).

    Returns:
        A new mapping: ``options`` plus the derived defaults.
    """
    merged = dict(options or {})
    if merge_on_read and CompactionConfig.INLINE.key not in merged and not table_config.contains(CompactionConfig.INLINE):
        merged[CompactionConfig.INLINE.key] = "true"
    return merged


def write_dataframe(
    spark: SparkSession,
    table: Table,
    df: DataFrame,
    operation: WriteOperation,
    options: Mapping[str, str] | None = None,
    *,
    prepped: bool = False,
    overwrite_partitions: Sequence[str] | None = None,
) -> WriteMetrics:
    """Write ``df`` to ``table`` with ``operation`` and commit.

    Args:
        spark: the session.
        table: the target table.
        df: rows with the table's data columns (matched by name; missing ones written as null). With
            ``prepped=True`` it also carries ``_hoodie_record_key``, ``_hoodie_partition_path``,
            ``_hoodie_file_id`` (null for new records) and optionally ``_hoodie_is_deleted``.
        operation: the write operation.
        options: write options (``hoodie.*``) over the table config.
        prepped: skip key generation and index tagging.
        overwrite_partitions: for ``insert_overwrite``, the partitions to replace; ``None`` = the
            partitions present in ``df`` (dynamic overwrite).

    Returns:
        The write's metrics (instant, row and file counts, bytes, milliseconds per phase).

    Raises:
        UnsupportedTable: a Hudi 1.x table (read only); nothing was changed.
        ConcurrentWriteError: another live writer has a pending write on the table (single-writer mode);
            nothing was changed.
        EngineError: the write failed; it was rolled back and the table reads its last commit.
    """
    table.check_writable()
    options = datasource_write_options(table.is_mor, table.config, options)
    conf = table.config.overlay(options)
    keyless = is_keyless(conf)
    if keyless and not prepped:
        validate_auto_key_config(conf, table.base_path)
        if operation is WriteOperation.UPSERT:
            # Hudi: an upsert with auto-generated keys can only insert (every key is new).
            logger.info("upsert into keyless table %s is written as insert", table.base_path)
            operation = WriteOperation.INSERT
        elif operation is WriteOperation.DELETE:
            raise errors.ConfigError(
                f"delete from {table.base_path}: the table has no primaryKey (auto-generated keys); delete "
                "records by their stored _hoodie_record_key (a prepped write, as DELETE FROM does)")
    # A bucket table's first write (CTAS, or INSERT into a table with no completed commit) writes every bucket as a
    # new file group straight away (Hudi BucketIndexBulkInsertPartitionerWithRows): no tagging, no cache.
    bucket_bulk = (_is_bucket_index(conf) and not prepped and not keyless
                   and operation in (WriteOperation.BULK_INSERT, WriteOperation.INSERT)
                   and not (operation is WriteOperation.INSERT and conf.get(WriteConfig.COMBINE_BEFORE_INSERT))
                   and not table.timeline.completed_commits())
    if operation is WriteOperation.BULK_INSERT and _is_bucket_index(conf) and not bucket_bulk:
        # Every record must land in its bucket's one file group, existing or new: a tagged insert.
        logger.info("bulk_insert into %s with hoodie.index.type=BUCKET is written as insert", table.base_path)
        operation = WriteOperation.INSERT
    metrics = WriteMetrics(operation=operation.value)
    table_schema = table_arrow_schema(table)  # every column, the key generator's input
    data_schema = stored_arrow_schema(table, table_schema)  # what files and the commit schema hold
    # The commit's schema in Hudi's canonical form (["null", T] with null defaults), whatever form the
    # stored schema had (hoodie.table.create.schema uses [T, "null"]).
    avro_schema = arrow_to_avro(data_schema, table.name)
    write_props = conf.overlay({
        WriteConfig.OPERATION.key: operation.value,
        WriteConfig.COMBINE_BEFORE_UPSERT.key: str(
            conf.get(WriteConfig.COMBINE_BEFORE_INSERT) if operation in (
                WriteOperation.INSERT, WriteOperation.INSERT_OVERWRITE,
                WriteOperation.INSERT_OVERWRITE_TABLE)
            else conf.get(WriteConfig.COMBINE_BEFORE_UPSERT)).lower(),
        # Change data capture is the table's (hoodie.properties), never a write option's.
        TableConfig.CDC_ENABLED.key: str(table.config.get(TableConfig.CDC_ENABLED)).lower(),
        TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key: table.config.get(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE),
    }).as_dict()
    check_write_supported(table, conf)
    check_services_supported(conf, table.base_path)
    dup_policy = insert_dup_policy(conf, table)
    persisted: list[DataFrame] = []
    held: list[Callable[[], object]] = []  # broadcasts of index lookups, released after the write
    early_keyed = None
    bucket_counts: list[tuple[str, int, int]] | None = None
    if operation is not WriteOperation.BULK_INSERT and not prepped and not keyless and not bucket_bulk:
        # Values cast to the table's types, record keys and partition paths are computed (and cached) before
        # the instant exists: bad input (CAST_INVALID_INPUT, a null key, an unsafe partition value) fails the
        # statement with nothing on the timeline.
        with metrics.phase("prepare"):
            early_keyed, bucket_counts = _prepare_keys(df, table, conf, table_schema, persisted)
    with metrics.phase("start"):
        try:
            instant = start_write(table, operation, conf)
        except BaseException:
            for frame in persisted:
                frame.unpersist()
            raise
    try:
        metrics.instant = instant.timestamp
        ctx = WriteContext(
            storage=table.storage,
            base_path=table.base_path,
            instant_time=instant.timestamp,
            data_schema=data_schema,
            avro_schema=add_meta_fields(avro_schema),
            props=write_props,
            evolution=SchemaEvolution.of(table),
        )
        replaced: dict[str, list[str]] = {}
        if bucket_bulk:
            stats = bucket_bulk_insert(df, table, conf, ctx, metrics, table_schema)
        elif operation is WriteOperation.BULK_INSERT:
            stats = bulk_insert(df, table, conf, ctx, metrics, prepped, table_schema)
        else:
            if not prepped:
                keyed = early_keyed if early_keyed is not None else add_keys(
                    df, table, conf, table_schema, auto_key_instant=instant.timestamp)
                if dup_policy != "none" and not keyless and table.timeline.completed_commits() and (
                        operation in (WriteOperation.INSERT, WriteOperation.UPSERT)):
                    stored, lookup_held = locate_keys(spark, table, keyed, conf)
                    held.extend(lookup_held)
                    keyed = apply_dup_policy(table, keyed, stored, conf, dup_policy)
            elif keyless:
                # Rows a MERGE inserts into a keyless table come without a key: generate it now.
                keyed = df.withColumn(RECORD_KEY, F.coalesce(
                    F.col(RECORD_KEY).cast(StringType()), auto_key_column(instant.timestamp)))
            else:
                keyed = df
            stats, replaced = _bucketed_write(
                spark, table, keyed, operation, conf, ctx, metrics, prepped, overwrite_partitions, persisted,
                keyed_cached=keyed is early_keyed, bucket_counts=bucket_counts if keyed is early_keyed else None,
            )
        with metrics.phase("commit"):
            committed = finish_write(table, instant, operation, stats, avro_schema, replaced, conf=conf)
        metrics.add_stats(stats)
        metrics.files_replaced = sum(len(v) for v in replaced.values())
        logger.info("%s %s on %s: %s", operation.value, instant.timestamp, table.base_path, metrics)
    except BaseException as exc:
        cause = exc if isinstance(exc, EngineError) else unwrap_task_error(exc)
        if _is_completed(table, instant.timestamp):
            raise  # what failed came after the commit (markers, heartbeat); the commit stands
        try:
            rollback_instant(table, instant)
        except Exception:  # noqa: BLE001 - the next writer rolls it back
            logger.exception("rollback of failed write %s on %s failed; the next writer will retry it",
                             instant.timestamp, table.base_path)
        if isinstance(exc, KeyboardInterrupt):
            raise
        if cause is not None:
            raise cause from exc
        raise WriteError(
            f"{operation.value} into {table.base_path} failed at instant {instant.timestamp} and was "
            f"rolled back: {failure_summary(exc)}"
        ) from exc
    finally:
        # Completed or rolled back, the heartbeat is gone by now; this also covers a rollback that failed
        # (the instant is then a failed write for the next writer) and an interrupt inside the rollback.
        heartbeat_client(table, conf).stop(instant.timestamp)
        forget_start(table.base_path, instant.timestamp)
        for frame in persisted:
            frame.unpersist()
        for release in held:
            release()
    # After the commit: compaction, clustering, clean, archive, callback (a failed compaction leaves its own inflight
    # instant, never this write's).
    def compact(target: Table) -> dict[str, object] | None:
        result = run_inline_compaction(spark, target, dict(options or {}))
        return None if result is None else result.as_dict()

    def cluster(target: Table) -> dict[str, object] | None:
        return run_inline_clustering(spark, target, dict(options or {}))

    steps = run_post_commit(table, conf, instant.timestamp, instant.action, committed, compact=compact,
                            cluster=cluster)
    for step in steps:
        if step.ran:
            metrics.phase_ms[step.name] = step.elapsed_ms
    return metrics


def _prepare_keys(df: DataFrame, table: Table, conf: HoodieConfig, table_schema: pa.Schema,
                  persisted: list[DataFrame]) -> tuple[DataFrame, list[tuple[str, int, int]] | None]:
    """``df`` with record keys and partition paths (and with the bucket index, each row's
    ``_hoodie_bucket_id``), cached and counted so every value is computed now.

    Returns:
        The cached rows, and with the bucket index their counts per ``(partition path, bucket number)``
        (the one Spark job that fills the cache; tagging and write planning need nothing else), else None.

    Raises:
        ConfigError: bad bucket settings.
        EngineError: the rows cannot be written (the cause from the executors); nothing was written.
    """
    try:
        # Constant inputs (INSERT ... VALUES) may fail while Spark plans the cache (constant folding).
        keyed = add_keys(df, table, conf, table_schema)
        if _is_bucket_index(conf):
            # Hashed in the same pass: the bucket index tags from the cache with no second Python pass.
            keyed = keyed.withColumn(BUCKET_ID, bucket_id_column(BucketSpec.from_config(conf, table.base_path)))
        keyed = keyed.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(keyed)
        if _is_bucket_index(conf):
            counts = [(str(r[0]), int(r[1]), int(r[2]))
                      for r in keyed.groupBy(PARTITION_PATH, BUCKET_ID).count().collect()]
            return keyed, counts
        keyed.count()
    except BaseException as exc:
        for frame in persisted:
            frame.unpersist()
        cause = exc if isinstance(exc, EngineError) else unwrap_task_error(exc)
        if isinstance(exc, KeyboardInterrupt) or cause is None:
            raise
        raise cause from exc
    return keyed, None


def _is_completed(table: Table, instant_time: str) -> bool:
    """Whether ``instant_time`` completed (re-reads the timeline; ``False`` when it cannot be read)."""
    try:
        return any(i.is_completed for i in table.timeline.reload().find(instant_time))
    except EngineError:
        return False


def _is_bucket_index(conf: HoodieConfig) -> bool:
    return index_type(conf) == "BUCKET"


def _bucketed_write(
    spark: SparkSession,
    table: Table,
    keyed: DataFrame,
    operation: WriteOperation,
    conf: HoodieConfig,
    ctx: WriteContext,
    metrics: WriteMetrics,
    prepped: bool,
    overwrite_partitions: Sequence[str] | None,
    persisted: list[DataFrame],
    keyed_cached: bool = False,
    bucket_counts: Sequence[tuple[str, int, int]] | None = None,
) -> tuple[list[WriteStat], dict[str, list[str]]]:
    """Tag, plan and write ``keyed``; returns the write stats and the replaced file groups by partition.

    ``bucket_counts``: the rows of ``keyed`` (cached) per ``(partition path, bucket number)``, counted when the
    keys were: the bucket index then tags and the planner counts from them, with no Spark job of their own."""
    created: dict[str, str] = {}
    counts: list[tuple[str, str | None, int]] | None = None
    bucket_tagged = _is_bucket_index(conf) and not (operation is WriteOperation.DELETE and prepped)
    with metrics.phase("tag"):
        if bucket_tagged and bucket_counts is not None and keyed_cached and FILE_ID not in keyed.columns \
                and operation in (WriteOperation.UPSERT, WriteOperation.INSERT):
            groups, created = bucket_groups(table, [(p, b) for p, b, _ in bucket_counts],
                                            reuse_existing=not operation.is_replace)
            tagged, created = tag_buckets(spark, table, keyed, conf, located=(groups, created))
            counts = [(p, groups[(p, b)], n) for p, b, n in bucket_counts]
        elif bucket_tagged:
            tagged, created = tag_buckets(spark, table, keyed, conf, reuse_existing=not operation.is_replace)
            if operation is WriteOperation.DELETE:
                tagged = tagged.filter(~F.col(FILE_ID).isin(list(created)))
        elif prepped:
            tagged = keyed if FILE_ID in keyed.columns else keyed.withColumn(FILE_ID, F.lit(None).cast(StringType()))
        elif operation.uses_index:
            tagged = tag_locations(spark, table, keyed, conf)
        else:
            tagged = keyed.withColumn(FILE_ID, F.lit(None).cast(StringType()))
        if operation is WriteOperation.DELETE and not prepped:
            tagged = tagged.filter(F.col(FILE_ID).isNotNull()).withColumn(IS_DELETED, F.lit(True))
        elif IS_DELETED in tagged.columns:
            tagged = tagged.withColumn(IS_DELETED, F.col(IS_DELETED).cast(BooleanType()))
        tagged = _payload_deletes(tagged, conf)
        tagged = tagged.withColumn(KEY_HASH, F.abs(F.xxhash64(RECORD_KEY)).cast(LongType()))
        if not (bucket_tagged and keyed_cached):
            # Counted, then written: cached unless it is a broadcast join away from the cached keyed rows.
            tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
            persisted.append(tagged)
        if counts is None:
            counts = [(r[0], r[1], r[2]) for r in tagged.groupBy(PARTITION_PATH, FILE_ID).count().collect()]
    with metrics.phase("plan"):
        profile = WorkloadProfile.from_counts(counts)
        view = table.file_system_view()
        touched = sorted({r[0] for r in counts})
        check_partition_layout(table.storage, table.base_path, touched, table.name)
        latest: dict[str, ExistingFileGroup] = {}
        slices: dict[str, LatestSlice] = {}
        for partition in touched:
            for bf in view.latest_base_files(partition):
                latest[bf.file_id] = ExistingFileGroup(partition, bf.file_id, bf.path, bf.commit_time, bf.size)
            if table.is_mor:
                for fs in view.latest_file_slices(partition, merge_pending_compaction=False):
                    slices[fs.file_id] = LatestSlice(
                        partition, fs.file_id, fs.base_instant, fs.base_file.name if fs.base_file else "",
                        tuple(lf.name for lf in fs.log_files))
                    if fs.file_id not in latest and fs.log_files:
                        # A log-only file group (another writer put inserts into log files): updates
                        # append to it; it never takes inserts (below: it has log files).
                        latest[fs.file_id] = ExistingFileGroup(partition, fs.file_id, "", fs.base_instant, 0)
        replaced: dict[str, list[str]] = {}
        small: dict[str, list[ExistingFileGroup]] = {}
        if operation.is_replace:
            if operation is WriteOperation.INSERT_OVERWRITE_TABLE:
                replace_in = view.partition_paths()
            else:
                replace_in = list(overwrite_partitions) if overwrite_partitions is not None else touched
            for partition in replace_in:
                ids = [bf.file_id for bf in view.latest_base_files(partition)]
                if ids:
                    replaced[partition] = ids
        in_clustering = view.file_groups_in_pending_clustering()
        reject_updates_in_clustering(profile, latest, replaced, in_clustering, table.base_path)
        if operation is not WriteOperation.DELETE and not operation.is_replace:
            small = small_file_candidates(
                latest, profile, conf, merge_on_read=table.is_mor,
                log_free=[fid for fid, sl in slices.items() if sl.base_file_name and not sl.log_file_names],
                excluded=in_clustering)
        missing = [fid for fid in profile.updates if fid not in latest and fid not in created]
        if missing:
            raise errors.CommitConflict(
                f"file groups {missing[:5]} of {table.base_path} changed while writing; retry the write")
        # Lazy: the estimate stops at the newest commit that wrote enough data.
        commits = (table.commit_metadata(i) for i in reversed(table.timeline.completed_commits()))
        avg_size = average_record_size(commits, conf)
        plan = plan_writes(profile, latest, small, avg_size, conf, created)
    if not plan.buckets:
        return [], replaced
    with metrics.phase("write"):
        routing = bucket_column(plan)
        if routing is not None:
            bucketed = tagged.withColumn(BUCKET, routing)
        else:
            bucket_schema = StructType([*tagged.schema.fields, StructField(BUCKET, IntegerType(), False)])
            bucketed = tagged.mapInArrow(tasks.assign_buckets_fn(plan), bucket_schema)
        # Merge-on-read small-file candidates take their updates into the rewritten base file (Hudi's "small
        # file corrections for updates"); every other updated file group gets a log file.
        merged = {fg.file_id for files in small.values() for fg in files}
        appends = ({fid: slices[fid] for fid in profile.updates if fid in slices and fid not in merged}
                   if table.is_mor else {})
        tasks_at_most = _shuffle_partitions(spark, conf, operation)
        if len(plan.buckets) <= MAX_SLOTTED_BUCKETS:
            task_of = pack(bucket_work(plan, profile, appends, avg_size), tasks_at_most)
            bucketed = bucketed.withColumn(SLOT, slot_column(F.col(BUCKET), task_of))
            bucketed = bucketed.repartition(max(task_of.values()) + 1, SLOT)
        else:
            bucketed = bucketed.withColumn(SLOT, F.col(BUCKET))
            bucketed = bucketed.repartition(min(len(plan.buckets), tasks_at_most), SLOT)
        # Grouping by (slot, bucket) keeps the partitioning above (no second shuffle); the bucket is the last key.
        written = bucketed.groupBy(SLOT, BUCKET).applyInArrow(
            tasks.write_bucket_fn(ctx, plan, appends), tasks.STATS_SCHEMA_DDL)
        stats = tasks.collect_stats(written)
    return stats, replaced
