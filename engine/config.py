"""Typed ``hoodie.*`` configuration: every key once, with its type, default and meaning.

Mirrors Hudi's ``ConfigProperty`` / ``HoodieConfig`` (``hudi-common/.../config``): a key, a default, a
doc string and alternative (legacy) keys. Table-level keys (``table_level=True``) are persisted in
``.hoodie/hoodie.properties`` when a table is created and are read from there afterwards; writers never
have to repeat them.

Usage::

    conf = HoodieConfig({"hoodie.parquet.max.file.size": "1048576"})
    conf.get(WriteConfig.PARQUET_MAX_FILE_SIZE)   # -> 1048576 (int)
"""


from __future__ import annotations

from engine.config_base import (
    ConfigProperty,
    HoodieConfig,
    bool_property,
    float_property,
    int_property,
    parse_bool,
    parse_list,
    str_property,
)

__all__ = ["ConfigProperty", "HoodieConfig", "parse_bool", "parse_list", "TableConfig", "KeyGenConfig", "WriteConfig", "IndexConfig", "MetadataConfig", "CompactionConfig", "CleanConfig", "ArchiveConfig", "ClusteringConfig", "LayoutConfig", "CallbackConfig", "ReadConfig", "MemoryConfig", "PartitionTTLConfig", "LockConfig", "declared_properties"]


class TableConfig:
    """Keys stored in ``.hoodie/hoodie.properties`` (Hudi ``HoodieTableConfig``)."""

    NAME = str_property("hoodie.table.name", None, "Table name; part of the checksum.", table=True)
    TYPE = str_property("hoodie.table.type", "COPY_ON_WRITE", "COPY_ON_WRITE or MERGE_ON_READ.", table=True)
    VERSION = str_property("hoodie.table.version", "6", "Table format version; this engine writes 6.", table=True)
    TIMELINE_LAYOUT_VERSION = str_property("hoodie.timeline.layout.version", "1", "Timeline layout; 1 for v6.", table=True)
    RECORDKEY_FIELDS = str_property("hoodie.table.recordkey.fields", None, "Comma list of record key fields.", table=True)
    PRECOMBINE_FIELD = str_property("hoodie.table.precombine.field", None,
                            "Ordering field used to pick the latest version of a record.", table=True)
    PARTITION_FIELDS = str_property("hoodie.table.partition.fields", None,
                            "Comma list of partition source fields; empty = non-partitioned.", table=True)
    KEYGEN_CLASS = str_property("hoodie.table.keygenerator.class", None,
                        "Key generator class (Simple, Complex, Nonpartitioned, TimestampBased, Custom).",
                        table=True)
    HIVE_STYLE_PARTITIONING = bool_property("hoodie.datasource.write.hive_style_partitioning", False,
                                    "Partition folders named field=value.", table=True)
    URL_ENCODE_PARTITIONING = bool_property("hoodie.datasource.write.partitionpath.urlencode", False,
                                    "Escape partition values Hive-style (%XX).", table=True)
    DROP_PARTITION_COLUMNS = bool_property("hoodie.datasource.write.drop.partition.columns", False,
                                   "Data files and commit schemas leave the partition columns out; readers take "
                                   "their values from the partition path (Hudi HoodieTableConfig).",
                                   table=True)
    BASE_FILE_FORMAT = str_property("hoodie.table.base.file.format", "PARQUET", "Base file format.", table=True)
    ARCHIVELOG_FOLDER = str_property("hoodie.archivelog.folder", "archived", "Archived timeline folder under .hoodie.",
                             table=True)
    POPULATE_META_FIELDS = bool_property("hoodie.populate.meta.fields", True,
                                 "Write the five _hoodie_* meta columns.", table=True)
    CREATE_SCHEMA = str_property("hoodie.table.create.schema", None, "Avro schema at creation (no meta fields).",
                         table=True)
    DATABASE_NAME = str_property("hoodie.database.name", None, "Database name; part of the checksum.", table=True)
    TIMELINE_TIMEZONE = str_property("hoodie.table.timeline.timezone", "LOCAL", "LOCAL or UTC clock for instants.",
                             table=True)
    CHECKSUM = str_property("hoodie.table.checksum", None, "CRC32 of '<database>.<table>'.", table=True)
    PAYLOAD_CLASS = str_property("hoodie.compaction.payload.class", None, "Record payload class.", table=True)
    RECORD_MERGER_STRATEGY = str_property("hoodie.compaction.record.merger.strategy", None, "Merger strategy id.",
                                  table=True)
    CDC_ENABLED = bool_property("hoodie.table.cdc.enabled", False,
                                "Change data capture: merges write CDC logs; CDC queries are allowed.", table=True)
    CDC_SUPPLEMENTAL_LOGGING_MODE = str_property(
        "hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER",
        "What CDC logs carry: OP_KEY_ONLY (op, record key), DATA_BEFORE (+ before image) or DATA_BEFORE_AFTER "
        "(op, instant, before and after images).", table=True)
    PARTITION_METAFILE_USE_BASE_FORMAT = bool_property("hoodie.partition.metafile.use.base.format", False,
                                               "Partition metafile as parquet.", table=True)
    METADATA_PARTITIONS = str_property("hoodie.table.metadata.partitions", None,
                               "Metadata-table partitions Hudi built (files, column_stats, ...); Java readers "
                               "list files through the metadata table when it holds 'files'. This engine "
                               "empties it (and deletes .hoodie/metadata) before its first change to the "
                               "table: engine.metadata.disable.", table=True)
    METADATA_PARTITIONS_INFLIGHT = str_property("hoodie.table.metadata.partitions.inflight", None,
                                        "Metadata-table partitions Hudi is building; emptied with "
                                        "hoodie.table.metadata.partitions.", table=True)
    # Hudi 1.x (table versions 8, 9): read only (engine.table_v1x maps them onto the keys above).
    TIMELINE_PATH = str_property("hoodie.timeline.path", "timeline", "1.x: timeline folder under .hoodie.", table=True)
    TIMELINE_HISTORY_PATH = str_property("hoodie.timeline.history.path", "history",
                                         "1.x: LSM archived timeline folder under the timeline folder.", table=True)
    KEYGEN_TYPE = str_property("hoodie.table.keygenerator.type", None,
                               "1.x: key generator type (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM).", table=True)
    ORDERING_FIELDS = str_property("hoodie.table.ordering.fields", None,
                                   "1.x (v9): ordering fields; replaces hoodie.table.precombine.field.", table=True)
    RECORD_MERGE_MODE = str_property("hoodie.record.merge.mode", None,
                                     "1.x: COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING or CUSTOM.", table=True)


class KeyGenConfig:
    """Record key / partition path generation (Hudi ``KeyGeneratorOptions``)."""

    RECORDKEY_FIELD = str_property("hoodie.datasource.write.recordkey.field", None, "Record key field(s).")
    PARTITIONPATH_FIELD = str_property("hoodie.datasource.write.partitionpath.field", None, "Partition field(s).")
    KEYGEN_CLASS = str_property("hoodie.datasource.write.keygenerator.class", None, "Key generator class.")
    TIMESTAMP_TYPE = str_property("hoodie.keygen.timebased.timestamp.type", None,
                          "UNIX_TIMESTAMP, DATE_STRING, MIXED, EPOCHMILLISECONDS, SCALAR.", table=True)
    TIMESTAMP_SCALAR_UNIT = str_property("hoodie.keygen.timebased.timestamp.scalar.time.unit", "SECONDS",
                                 "Unit of SCALAR timestamps.", table=True)
    INPUT_DATEFORMAT = str_property("hoodie.keygen.timebased.input.dateformat", "",
                            "Java date pattern(s) of DATE_STRING input.", table=True)
    INPUT_DATEFORMAT_DELIMITER = str_property("hoodie.keygen.timebased.input.dateformat.list.delimiter.regex", ",",
                                      "Separator of several input patterns.", table=True)
    INPUT_TIMEZONE = str_property("hoodie.keygen.timebased.input.timezone", "UTC", "Input time zone.", table=True)
    OUTPUT_DATEFORMAT = str_property("hoodie.keygen.timebased.output.dateformat", "",
                             "Java date pattern of the partition path.", table=True)
    OUTPUT_TIMEZONE = str_property("hoodie.keygen.timebased.output.timezone", "UTC", "Output time zone.", table=True)
    TIMEZONE = str_property("hoodie.keygen.timebased.timezone", "UTC", "Both time zones, legacy key.", table=True)
    CONSISTENT_LOGICAL_TIMESTAMP = bool_property("hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled",
                                         False, "Render logical timestamps as dates in keys.")
    KEYGEN_TYPE = str_property("hoodie.datasource.write.keygenerator.type", None,
                       "Key generator type when no class is set: SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, "
                       "CUSTOM (an _AVRO suffix is accepted).")
    COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME = bool_property(
        "hoodie.write.complex.keygen.encode.single.record.key.field.name", True,
        "ComplexKeyGenerator with one record key field writes 'field:value' (0.14.0, 0.14.2+, 0.15.1+) when "
        "true, plain 'value' (0.14.1, 0.15.0, 1.0.0-1.0.2; HUDI-7001) when false.")
    SQL_ORIGIN_KEYGEN_CLASS = str_property("hoodie.sql.origin.keygen.class", None,
                                   "Real key generator class wrapped by Spark SQL's SqlKeyGenerator.")
    SQL_PARTITION_SCHEMA = str_property("hoodie.sql.partition.schema", None,
                                "Spark DDL of the partition columns (SqlKeyGenerator: which are TIMESTAMP).")
    JVM_TIMEZONE = str_property("hoodie.keygen.engine.jvm.timezone", "UTC",
                        "Engine-only (not a Hudi key): the zone Java's default TimeZone would be in a Hudi "
                        "writer; used where Hudi formats with the JVM default zone (SqlKeyGenerator TIMESTAMP "
                        "partitions, java.sql.Timestamp keys, timebased keygen without zones).")


class WriteConfig:
    """Write client options (Hudi ``HoodieWriteConfig``, ``DataSourceWriteOptions``, storage/compaction
    configs used by copy-on-write file sizing)."""

    OPERATION = str_property("hoodie.datasource.write.operation", "upsert",
                     "insert, bulk_insert, upsert, delete, insert_overwrite, insert_overwrite_table.")
    PRECOMBINE_FIELD = str_property("hoodie.datasource.write.precombine.field", None, "Ordering field.")
    PAYLOAD_CLASS = str_property("hoodie.datasource.write.payload.class",
                         "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload", "Payload class.")
    COMBINE_BEFORE_INSERT = bool_property("hoodie.combine.before.insert", False,
                                  "De-duplicate incoming records by key (precombine) before insert.")
    COMBINE_BEFORE_UPSERT = bool_property("hoodie.combine.before.upsert", True,
                                  "De-duplicate incoming records by key (precombine) before upsert.")
    COMBINE_BEFORE_DELETE = bool_property("hoodie.combine.before.delete", True,
                                  "De-duplicate incoming keys before delete.")
    MERGE_ALLOW_DUPLICATE_ON_INSERTS = bool_property(
        "hoodie.merge.allow.duplicate.on.inserts", True,
        "An insert routed into an existing small file keeps every stored record and appends the new ones, "
        "duplicate keys included (Hudi HoodieConcatHandle; true by default since Hudi 0.14); false merges them "
        "by key (HoodieMergeHandle). Only the insert operation into base files.")
    INSERT_DROP_DUPLICATES = bool_property("hoodie.datasource.write.insert.drop.duplicates", False,
                                   "Drop incoming inserts whose key already exists.")
    SMALL_FILE_LIMIT = int_property("hoodie.parquet.small.file.limit", 104857600,
                            "Base files smaller than this (bytes) take new inserts; 0 disables.")
    SMALL_FILE_GROUP_CANDIDATES_LIMIT = int_property(
        "hoodie.merge.small.file.group.candidates.limit", 1,
        "Merge-on-read: at most this many small base-only file groups per partition take a write's inserts; "
        "their updates are merged into the new base file instead of a log file (Hudi HoodieWriteConfig "
        "MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT).")
    PARQUET_MAX_FILE_SIZE = int_property("hoodie.parquet.max.file.size", 125829120, "Target base file size (bytes).")
    PARQUET_BLOCK_SIZE = int_property("hoodie.parquet.block.size", 125829120, "Parquet row group size (bytes).")
    PARQUET_PAGE_SIZE = int_property("hoodie.parquet.page.size", 1048576, "Parquet page size (bytes).")
    PARQUET_COMPRESSION = str_property("hoodie.parquet.compression.codec", "snappy",
                               "Parquet codec: gzip, snappy, zstd, lz4, uncompressed. Deliberately snappy by "
                               "default (Hudi 0.x: gzip): pyarrow's gzip made copy-on-write rewrites ~9x "
                               "slower; every Hudi reader reads either.")
    LOGFILE_MAX_SIZE = int_property("hoodie.logfile.max.size", 1073741824,
                                    "A log file reaching this size (bytes) rolls over to the next version "
                                    "(Hudi HoodieStorageConfig.LOGFILE_MAX_SIZE).")
    LOGFILE_DATA_BLOCK_MAX_SIZE = int_property("hoodie.logfile.data.block.max.size", 268435456,
                                               "Records per data block are capped so a block's in-memory size "
                                               "(bytes) stays under this (Hudi LOGFILE_DATA_BLOCK_MAX_SIZE).")
    RECORD_SIZE_ESTIMATE = int_property("hoodie.copyonwrite.record.size.estimate", 1024,
                                "Average record size (bytes) assumed before any commit gives one.")
    INSERT_SPLIT_SIZE = int_property("hoodie.copyonwrite.insert.split.size", 500000,
                             "Records per new file group when auto split is off.")
    INSERT_AUTO_SPLIT = bool_property("hoodie.copyonwrite.insert.auto.split", True,
                              "Size new file groups from max file size / average record size.")
    UPSERT_PARALLELISM = int_property("hoodie.upsert.shuffle.parallelism", 0, "Shuffle partitions; 0 = Spark's.")
    INSERT_PARALLELISM = int_property("hoodie.insert.shuffle.parallelism", 0, "Shuffle partitions; 0 = Spark's.")
    BULKINSERT_PARALLELISM = int_property("hoodie.bulkinsert.shuffle.parallelism", 0, "Shuffle partitions; 0 = input's.")
    DELETE_PARALLELISM = int_property("hoodie.delete.shuffle.parallelism", 0, "Shuffle partitions; 0 = Spark's.")
    BULKINSERT_SORT_MODE = str_property("hoodie.bulkinsert.sort.mode", "NONE",
                                "NONE, GLOBAL_SORT, PARTITION_SORT, PARTITION_PATH_REPARTITION.")
    MARKERS_TYPE = str_property("hoodie.write.markers.type", "DIRECT", "DIRECT markers (one file per data file).")
    DIRECT_PARQUET_SOURCE = bool_property(
        "sqlext.write.direct.parquet.source", True,
        "Not a Hudi key (a Spark session conf, SET sqlext.write.direct.parquet.source = false): a bulk insert "
        "whose source is a plain scan of parquet files (column pruning, renames, widening casts, simple "
        "filters) has its tasks read those files with pyarrow instead of receiving the rows through Spark's "
        "Arrow bridge (engine.spark.source_scan). The rows written are the same either way.")
    SCHEMA_ON_READ_ENABLE = bool_property("hoodie.schema.on.read.enable", False,
                                          "Schema on read (Hudi HoodieCommonConfig.SCHEMA_EVOLUTION_ENABLE): ALTER "
                                          "TABLE may rename, drop, retype and move columns; files are read by "
                                          "column id through the history under .hoodie/.schema.")
    SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP = bool_property("hoodie.datasource.write.schema.allow.auto.evolution.column.drop",
                                                    False, "Allow writes that drop columns.")
    SQL_INSERT_INTO_OPERATION = str_property("hoodie.spark.sql.insert.into.operation", None,
                                     "bulk_insert, insert or upsert for INSERT INTO; unset = upsert when the "
                                     "table has a primary key and precombine field, else insert.")
    INSERT_DUP_POLICY = str_property("hoodie.datasource.insert.dup.policy", "none",
                                     "What an insert does with a record whose key the table already holds: none "
                                     "(write it), drop (leave it out) or fail (fail the write, naming the key).")
    SQL_INSERT_MODE = str_property("hoodie.sql.insert.mode", None,
                                   "Hudi's older INSERT INTO setting (read only while "
                                   "hoodie.spark.sql.insert.into.operation is unset): upsert, strict (as upsert; "
                                   "on copy-on-write tables a key the table already holds fails the write) or "
                                   "non-strict (insert, duplicates kept).")
    SQL_BULK_INSERT_ENABLE = bool_property("hoodie.sql.bulk.insert.enable", False,
                                           "Hudi's older INSERT INTO setting: true = bulk_insert, with "
                                           "hoodie.sql.insert.mode=non-strict (refused in the other modes).")
    SQL_OPTIMIZED_WRITES = bool_property(
        "hoodie.spark.sql.optimized.writes.enable", False,
        "MERGE INTO (read from the session's SET only, as Hudi 0.15's MergeIntoHoodieTableCommand does, unset = "
        "false): true requires the ON condition to equate every record-key column; false reads a key column ON "
        "does not name from the source column of that name.")
    OVERWRITE_MODE = str_property("hoodie.datasource.overwrite.mode", None, "STATIC or DYNAMIC partition overwrite.")
    AUTO_COMMIT = bool_property("hoodie.auto.commit", True, "Commit at the end of the write.")
    FAILED_WRITES_CLEANER_POLICY = str_property(
        "hoodie.cleaner.policy.failed.writes", "EAGER",
        "EAGER: a writer rolls back failed writes (pending instants whose heartbeat has expired, or that have "
        "none) before it starts. LAZY: the cleaner rolls them back (always under optimistic concurrency control, "
        "as Hudi adjusts it). NEVER is refused.")
    WRITE_CONCURRENCY_MODE = str_property(
        "hoodie.write.concurrency.mode", "SINGLE_WRITER",
        "SINGLE_WRITER: one writer at a time; a second writer that finds a live pending write fails at once. "
        "OPTIMISTIC_CONCURRENCY_CONTROL: several writers; each takes hoodie.write.lock.provider's lock to commit "
        "and fails with a retryable conflict when a commit since its start touched the same file groups.")
    HEARTBEAT_INTERVAL_MS = int_property("hoodie.client.heartbeat.interval_in_ms", 60000,
                                         "How often (ms, at least 1000) a writer refreshes "
                                         ".hoodie/.heartbeat/<instant> (Hudi HoodieHeartbeatClient).")
    HEARTBEAT_TOLERABLE_MISSES = int_property("hoodie.client.heartbeat.tolerable.misses", 2,
                                              "Missed beats after which a pending instant's writer is taken "
                                              "to be dead and its instant may be rolled back.")


class IndexConfig:
    """Index options (Hudi ``HoodieIndexConfig``)."""

    TYPE = str_property("hoodie.index.type", "SIMPLE", "SIMPLE, GLOBAL_SIMPLE, BLOOM, GLOBAL_BLOOM, BUCKET.")
    BLOOM_NUM_ENTRIES = int_property("hoodie.index.bloom.num_entries", 60000, "Keys per bloom filter row.")
    BLOOM_FPP = float_property("hoodie.index.bloom.fpp", 0.000000001, "Bloom false positive probability.")
    BLOOM_FILTER_TYPE = str_property("hoodie.bloom.index.filter.type", "DYNAMIC_V0", "SIMPLE or DYNAMIC_V0.")
    BLOOM_DYNAMIC_MAX_ENTRIES = int_property("hoodie.bloom.index.filter.dynamic.max.entries", 100000,
                                     "Capacity of a dynamic bloom filter.")
    SIMPLE_UPDATE_PARTITION_PATH = bool_property("hoodie.simple.index.update.partition.path", True,
                                         "Global index: move a record whose partition changed.")
    BLOOM_UPDATE_PARTITION_PATH = bool_property("hoodie.bloom.index.update.partition.path", True,
                                        "Global bloom index: move a record whose partition changed.")
    BLOOM_PRUNE_BY_RANGES = bool_property("hoodie.bloom.index.prune.by.ranges", True,
                                          "Bloom index: skip files whose footer key range holds none of the keys.")
    BLOOM_USE_CACHING = bool_property("hoodie.bloom.index.use.caching", True,
                                      "Bloom index: cache the incoming keys between its stages (Spark).")
    BLOOM_USE_TREEBASED_FILTER = bool_property("hoodie.bloom.index.use.treebased.filter", True,
                                               "Bloom index: find candidate files by an interval tree (the answer "
                                               "is the same either way).")
    BLOOM_PARALLELISM = int_property("hoodie.bloom.index.parallelism", 0,
                                     "Bloom index: tasks probing files (0: the Spark default parallelism).")
    BUCKET_ENGINE = str_property("hoodie.index.bucket.engine", "SIMPLE",
                                 "Bucket index engine: SIMPLE (fixed buckets; CONSISTENT_HASHING is refused).")
    BUCKET_NUM = int_property("hoodie.bucket.index.num.buckets", 256,
                              "Buckets per partition (bucket index); 256 as in Hudi (HoodieIndexConfig), so a table "
                              "written here and by Hudi without the key hashes keys into the same buckets.")
    BUCKET_HASH_FIELD = str_property("hoodie.bucket.index.hash.field", None,
                                     "Bucket index: record key fields hashed (default: all of them).")


class MetadataConfig:
    """The metadata table (Hudi ``HoodieMetadataConfig``)."""

    ENABLE = bool_property("hoodie.metadata.enable", False,
                           "Maintain the metadata table (.hoodie/metadata). Deliberately false by default (Hudi: "
                           "true): this engine does not maintain one, so, as Hudi's writer does with false, it "
                           "deletes an existing metadata table before its first change to the table and Java "
                           "readers list the file system; true is refused (an error naming the table).")


class CompactionConfig:
    """Compaction options (Hudi ``HoodieCompactionConfig``)."""

    INLINE = bool_property("hoodie.compact.inline", False, "Schedule and run a compaction after each write that triggers it.")
    TRIGGER_STRATEGY = str_property("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                            "NUM_COMMITS, TIME_ELAPSED, NUM_AND_TIME or NUM_OR_TIME.")
    MAX_DELTA_COMMITS = int_property("hoodie.compact.inline.max.delta.commits", 5,
                             "Delta commits since the last compaction that trigger one.")
    MAX_DELTA_SECONDS = int_property("hoodie.compact.inline.max.delta.seconds", 3600,
                             "Seconds since the last compaction that trigger one.")
    STRATEGY = str_property(
        "hoodie.compaction.strategy",
        "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
        "Which file slices a compaction plan takes and in what order (Hudi CompactionStrategy): "
        "LogFileSizeBasedCompactionStrategy, LogFileNumBasedCompactionStrategy, BoundedIOCompactionStrategy or "
        "UnBoundedCompactionStrategy; the partition-date strategies are refused.")
    LOGFILE_SIZE_THRESHOLD = int_property("hoodie.compaction.logfile.size.threshold", 0,
                                          "LogFileSizeBasedCompactionStrategy: slices whose log files total at "
                                          "least this many bytes.")
    LOGFILE_NUM_THRESHOLD = int_property("hoodie.compaction.logfile.num.threshold", 0,
                                         "LogFileNumBasedCompactionStrategy: slices with at least this many log "
                                         "files.")
    TARGET_IO = int_property("hoodie.compaction.target.io", 500 * 1024,
                             "Bounded-IO strategies: MB of read + write a plan may take (the operation that "
                             "crosses it is still taken).")


class CleanConfig:
    """Cleaner options (Hudi ``HoodieCleanConfig``). The ``hoodie.cleaner.*`` keys of 0.14/0.15 are read under
    the ``hoodie.clean.*`` names later releases gave them as well (alternatives)."""

    AUTOMATIC = bool_property("hoodie.clean.automatic", True,
                              "Clean after every commit (the post-commit pipeline).")
    ASYNC = bool_property("hoodie.clean.async", False,
                          "Hudi cleans beside the write; here the clean runs right after the commit either way.")
    POLICY = str_property("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS",
                          "KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.",
                          "hoodie.clean.policy")
    COMMITS_RETAINED = int_property("hoodie.cleaner.commits.retained", 10,
                                    "KEEP_LATEST_COMMITS: commits whose file versions stay readable.",
                                    "hoodie.clean.commits.retained")
    FILE_VERSIONS_RETAINED = int_property("hoodie.cleaner.fileversions.retained", 3,
                                          "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group.",
                                          "hoodie.clean.fileversions.retained")
    HOURS_RETAINED = int_property("hoodie.cleaner.hours.retained", 24,
                                  "KEEP_LATEST_BY_HOURS: hours of commits whose file versions stay readable.",
                                  "hoodie.clean.hours.retained")
    TRIGGER_STRATEGY = str_property("hoodie.clean.trigger.strategy", "NUM_COMMITS",
                                    "When to schedule a clean: NUM_COMMITS (the only strategy).")
    MAX_COMMITS = int_property("hoodie.clean.max.commits", 1,
                               "Commits since the last clean before another clean is scheduled.")
    INCREMENTAL_MODE = bool_property("hoodie.cleaner.incremental.mode", True,
                                     "Only look at partitions written since the last clean's retained commit.",
                                     "hoodie.clean.incremental.enabled")


class ArchiveConfig:
    """Archival of the active timeline (Hudi ``HoodieArchivalConfig``)."""

    AUTOMATIC = bool_property("hoodie.archive.automatic", True, "Archive after every commit (post-commit pipeline).")
    MIN_COMMITS = int_property("hoodie.keep.min.commits", 20, "Completed commits the active timeline keeps.")
    MAX_COMMITS = int_property("hoodie.keep.max.commits", 30,
                               "Completed commits on the active timeline that trigger archival down to min.")
    BATCH = int_property("hoodie.commits.archival.batch", 10, "Archived instants per log block.")
    MERGE_ENABLE = bool_property("hoodie.archive.merge.enable", False,
                                 "After archiving, merge the newest small archive files into one.")
    MERGE_SMALL_FILE_LIMIT = int_property("hoodie.archive.merge.small.file.limit.bytes", 20 * 1024 * 1024,
                                          "Archive files under this many bytes are merge candidates.")
    MERGE_FILES_BATCH_SIZE = int_property("hoodie.archive.merge.files.batch.size", 10,
                                          "Merge once this many small archive files are in a row.")
    BEYOND_SAVEPOINT = bool_property("hoodie.archive.beyond.savepoint", False,
                                     "Archive commits after the first savepoint (savepointed ones are kept).")


class ClusteringConfig:
    """Clustering (Hudi ``HoodieClusteringConfig``): when to schedule, which file slices a plan takes
    (``SparkSizeBasedClusteringPlanStrategy``), how it is executed (``SparkSortAndSizeExecutionStrategy``)."""

    INLINE = bool_property("hoodie.clustering.inline", False,
                           "Schedule (every inline.max.commits commits) and execute clustering after a write.",
                           "hoodie.datasource.clustering.inline.enable")
    INLINE_MAX_COMMITS = int_property("hoodie.clustering.inline.max.commits", 4,
                                      "Commits since the last clustering before inline clustering is scheduled.")
    SCHEDULE_INLINE = bool_property("hoodie.clustering.schedule.inline", False,
                                    "Only schedule clustering after a write (execution by CALL run_clustering).")
    ASYNC_ENABLED = bool_property("hoodie.clustering.async.enabled", False,
                                  "Clustering runs beside writers (streaming writers, CALL run_clustering); batch "
                                  "writes do not run it; scheduling waits for async.max.commits commits.",
                                  "hoodie.datasource.clustering.async.enable")
    ASYNC_MAX_COMMITS = int_property("hoodie.clustering.async.max.commits", 4,
                                     "With async clustering: commits since the last clustering before scheduling.")
    PLAN_STRATEGY_CLASS = str_property(
        "hoodie.clustering.plan.strategy.class",
        "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
        "Plan strategy: SparkSizeBasedClusteringPlanStrategy (the only one here).")
    EXECUTION_STRATEGY_CLASS = str_property(
        "hoodie.clustering.execution.strategy.class",
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
        "Execution strategy: SparkSortAndSizeExecutionStrategy (the only one here).")
    SMALL_FILE_LIMIT = int_property("hoodie.clustering.plan.strategy.small.file.limit", 300 * 1024 * 1024,
                                    "Base files smaller than this many bytes are clustering candidates.")
    TARGET_FILE_MAX_BYTES = int_property("hoodie.clustering.plan.strategy.target.file.max.bytes", 1024 ** 3,
                                         "Target size of clustering output files, bytes (output groups per input "
                                         "group = ceil(group bytes / this)).")
    MAX_BYTES_PER_GROUP = int_property("hoodie.clustering.plan.strategy.max.bytes.per.group", 2 * 1024 ** 3,
                                       "Input bytes of one clustering group.")
    MAX_NUM_GROUPS = int_property("hoodie.clustering.plan.strategy.max.num.groups", 30,
                                  "Clustering groups of one plan.")
    SORT_COLUMNS = str_property("hoodie.clustering.plan.strategy.sort.columns", None,
                                "Comma-separated columns the clustered rows are ordered by.")
    SINGLE_GROUP_CLUSTERING = bool_property("hoodie.clustering.plan.strategy.single.group.clustering.enabled", True,
                                            "Plan a group of one file slice (always when sort columns are set).")
    PARTITION_FILTER_MODE = str_property("hoodie.clustering.plan.partition.filter.mode", "NONE",
                                         "Partitions a plan looks at: NONE, RECENT_DAYS, SELECTED_PARTITIONS, "
                                         "DAY_ROLLING.")
    LOOKBACK_PARTITIONS = int_property("hoodie.clustering.plan.strategy.daybased.lookback.partitions", 2,
                                       "RECENT_DAYS: newest partitions considered (by name).")
    SKIP_PARTITIONS_FROM_LATEST = int_property(
        "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions", 0,
        "RECENT_DAYS: newest partitions skipped first.")
    BEGIN_PARTITION = str_property("hoodie.clustering.plan.strategy.cluster.begin.partition", None,
                                   "SELECTED_PARTITIONS: first partition (inclusive, by name).")
    END_PARTITION = str_property("hoodie.clustering.plan.strategy.cluster.end.partition", None,
                                 "SELECTED_PARTITIONS: last partition (inclusive, by name).")
    PARTITION_REGEX = str_property("hoodie.clustering.plan.strategy.partition.regex.pattern", None,
                                   "Only partitions whose path fully matches this Java regex.")
    PARTITION_SELECTED = str_property("hoodie.clustering.plan.strategy.partition.selected", None,
                                      "Comma-separated partitions to cluster (instead of listing the table).")
    UPDATES_STRATEGY = str_property(
        "hoodie.clustering.updates.strategy",
        "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
        "Writes to file groups under pending clustering: rejected (SparkRejectUpdateStrategy, the only one here).")
    ROLLBACK_PENDING_ON_CONFLICT = bool_property(
        "hoodie.clustering.rollback.pending.replacecommit.on.conflict", False,
        "Roll back a pending clustering a write conflicts with (not supported: refused when true).")
    PRESERVE_COMMIT_METADATA = bool_property("hoodie.clustering.preserve.commit.metadata", True,
                                             "Clustered rows keep their _hoodie_commit_time and seqno.")
    MAX_PARALLELISM = int_property("hoodie.clustering.max.parallelism", 15,
                                   "Clustering groups executed at once (one Spark job each).")


class LayoutConfig:
    """Record layout of clustered files (Hudi ``hoodie.layout.optimize.*``)."""

    STRATEGY = str_property("hoodie.layout.optimize.strategy", "linear",
                            "Row order: linear (by the sort columns), z-order or hilbert (space-filling curve "
                            "over the sort columns).")
    CURVE_BUILD_METHOD = str_property("hoodie.layout.optimize.curve.build.method", "direct",
                                      "How the curve is built: direct (the only method here).")


class CallbackConfig:
    """Commit callbacks (Hudi ``HoodieWriteCommitCallbackConfig``)."""

    ON = bool_property("hoodie.write.commit.callback.on", False, "Notify after every successful commit.")
    CLASS = str_property("hoodie.write.commit.callback.class",
                         "org.apache.hudi.callback.impl.HoodieWriteCommitHttpCallback",
                         "Callback implementation: the HTTP callback (the only one here).")
    HTTP_URL = str_property("hoodie.write.commit.callback.http.url", None, "URL the HTTP callback POSTs to.")
    HTTP_API_KEY = str_property("hoodie.write.commit.callback.http.api.key", "hudi_write_commit_http_callback",
                                "Value of the HUDI-CALLBACK-KEY request header.")
    HTTP_TIMEOUT_SECONDS = int_property("hoodie.write.commit.callback.http.timeout.seconds", 30,
                                       "HTTP callback timeout, seconds.")
    HTTP_CUSTOM_HEADERS = str_property("hoodie.write.commit.callback.http.custom.headers", None,
                                       "Extra request headers: 'name1:value1;name2:value2'.")


class ReadConfig:
    """Query options (Hudi ``DataSourceReadOptions``)."""

    QUERY_TYPE = str_property("hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized, incremental.")
    AS_OF_INSTANT = str_property("as.of.instant", None, "Time travel: read the table as of this instant.")
    BEGIN_INSTANTTIME = str_property("hoodie.datasource.read.begin.instanttime", None,
                             "Incremental: commits after this instant (exclusive).")
    END_INSTANTTIME = str_property("hoodie.datasource.read.end.instanttime", None,
                           "Incremental: commits up to this instant (inclusive).")
    INCREMENTAL_FORMAT = str_property("hoodie.datasource.query.incremental.format", "latest_state",
                                      "Incremental: latest_state (rows as they are now) or cdc (one row "
                                      "per change: op, ts_ms, before and after images as JSON; needs "
                                      "hoodie.table.cdc.enabled).")
    INCR_FALLBACK_FULL_TABLE_SCAN = bool_property(
        "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False,
        "Incremental: when the begin instant is archived, read the latest snapshot filtered to commit times in "
        "(begin, end] instead of the active commits in the range only.")
    EXTRACT_PARTITION_VALUES_FROM_PATH = bool_property(
        "hoodie.datasource.read.extract.partition.values.from.path", False,
        "Partition columns take their values from each file slice's partition path for every query type (Hudi "
        "DataSourceReadOptions.EXTRACT_PARTITION_VALUES_FROM_PARTITION_PATH). Without it, copy-on-write "
        "snapshot and read-optimized queries still do so, as Hudi 0.15's base-file relation does; merge-on-read "
        "snapshot, incremental and CDC queries read the values stored in the records.")
    QUERY_AS_RO_TABLE = bool_property("hoodie.query.as.ro.table", None,
                              "Set by Hive sync on _ro (true) / _rt (false) tables.")
    PINNED_INSTANT = str_property(
        "sqlext.read.pinned.instant", None,
        "Internal (set by sqlext's session catalog when Spark's parquet scan reads part of a query): the latest "
        "completed instant when the query was planned; a snapshot or read-optimized read then reads the table as "
        "of it if newer commits completed since, so both parts of the query see one snapshot.")
    FILE_GROUPS = str_property(
        "sqlext.read.file.groups", None,
        "Internal (set by sqlext's session catalog): JSON list of [partition path, file id] pairs; the read "
        "returns the rows of these file groups only (the slices with log files of a query whose other slices "
        "Spark's parquet scan reads).")
    LOG_RECORDS_ONLY = bool_property(
        "sqlext.read.log.records.only", False,
        "Internal (set by sqlext's session catalog with sqlext.read.file.groups): the file groups are read without "
        "their base files: only the log records that win the merge, while Spark's parquet scan reads each base "
        "file less the rows whose keys the logs name.")
    LOG_KEYS_MAX = int_property(
        "sqlext.read.log.keys.max", 5000000,
        "Merge-on-read snapshot reads: when the log files a query applies hold at most this many records (counted "
        "from block headers, over the whole query), their record keys are read on the driver when the query runs "
        "so that Spark's parquet scan reads the base rows the logs leave alone, and only the log records go "
        "through the Python reader; with more (or 0), every slice with log files is merged whole by the Python "
        "reader.")


class MemoryConfig:
    """Memory limits of merge-on-read merging (Hudi ``HoodieMemoryConfig``)."""

    MAX_MEMORY_FOR_MERGE = int_property("hoodie.memory.merge.max.size", 1073741824,
                                "Bytes of decoded log records a file-slice merge may hold in memory before "
                                "spilling to hoodie.memory.spillable.map.path (Hudi default 1 GiB).")
    SPILLABLE_MAP_PATH = str_property("hoodie.memory.spillable.map.path", "/tmp/",
                              "Local directory for merge spill files.")


class PartitionTTLConfig:
    """Partition TTL management (Hudi 1.0 ``HoodieTTLConfig``; read by ``CALL run_ttl``). Only the ``KEEP_BY_TIME``
    and ``KEEP_BY_CREATION_TIME`` strategies exist here; TTL after every commit (``inline``) is not implemented."""

    INLINE = bool_property("hoodie.partition.ttl.inline", False,
                           "Delete expired partitions after every commit (not implemented: run_ttl refuses true).",
                           "hoodie.partition.ttl.automatic")
    STRATEGY_CLASS = str_property("hoodie.partition.ttl.strategy.class", None,
                                  "Strategy class finding expired partitions; wins over the strategy type (only "
                                  "Hudi's KeepByTimeStrategy and KeepByCreationTimeStrategy are supported).")
    STRATEGY_TYPE = str_property("hoodie.partition.ttl.management.strategy.type", "KEEP_BY_TIME",
                                 "KEEP_BY_TIME (a partition's newest file slice base instant) or "
                                 "KEEP_BY_CREATION_TIME (its partition metafile's commitTime).")
    DAYS_RETAIN = int_property("hoodie.partition.ttl.strategy.days.retain", -1,
                               "Days a partition is kept after its reference time; <= 0 expires nothing.")
    PARTITION_SELECTED = str_property("hoodie.partition.ttl.strategy.partition.selected", None,
                                      "Comma list of the partitions TTL looks at (default: every partition).")
    MAX_PARTITIONS_TO_DELETE = int_property("hoodie.partition.ttl.strategy.max.delete.partitions", 1000,
                                            "Most partitions one TTL run deletes (one replacecommit).")


class LockConfig:
    """Locks of optimistic concurrency control (Hudi 0.14 ``HoodieLockConfig`` / ``LockConfiguration``): the lock
    provider taken around each commit and how long and how often to wait for it (``engine.concurrency.locks``)."""

    PROVIDER = str_property(
        "hoodie.write.lock.provider", "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
        "Lock provider class (Hudi's Java class name): FileSystemBasedLockProvider, InProcessLockProvider "
        "(org.apache.hudi.client.transaction.lock.*) or org.apache.hudi.hive.transaction.lock."
        "HiveMetastoreBasedLockProvider. Hudi's default, ZookeeperBasedLockProvider, is not supported here (an "
        "error), as are the DynamoDB and other providers.")
    CONFLICT_RESOLUTION_STRATEGY = str_property(
        "hoodie.write.lock.conflict.resolution.strategy",
        "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy",
        "Conflict check run under the lock before a commit (Hudi ConflictResolutionStrategy class).")
    WAIT_TIME_MS = int_property("hoodie.write.lock.wait_time_ms", 60000,
                                "Timeout (ms) of one lock attempt at the lock provider (try_lock).")
    WAIT_TIME_MS_BETWEEN_RETRY = int_property(
        "hoodie.write.lock.wait_time_ms_between_retry", 1000,
        "Provider level: initial wait (ms) between the provider's own retries, doubling up to "
        "max_wait_time_ms_between_retry; the file system and Hive Metastore providers poll a held lock at most "
        "this far apart.")
    MAX_WAIT_TIME_MS_BETWEEN_RETRY = int_property(
        "hoodie.write.lock.max_wait_time_ms_between_retry", 16000,
        "Provider level: bound (ms) of the exponential backoff between the provider's own retries.")
    NUM_RETRIES = int_property(
        "hoodie.write.lock.num_retries", 15,
        "Provider level: retries of a lock service call that failed (the Hive Metastore provider retries its "
        "check, heartbeat and release calls after a broken connection this many times).")
    CLIENT_NUM_RETRIES = int_property(
        "hoodie.write.lock.client.num_retries", 50,
        "Lock manager level: further lock attempts after the first one fails (Hudi LockManager).")
    CLIENT_WAIT_TIME_MS_BETWEEN_RETRY = int_property(
        "hoodie.write.lock.client.wait_time_ms_between_retry", 5000,
        "Lock manager level: wait (ms) between two lock attempts.")
    HEARTBEAT_INTERVAL_MS = int_property(
        "hoodie.write.lock.heartbeat_interval_ms", 60000,
        "Hive Metastore provider: how often (ms) a held lock is heartbeaten so the metastore does not time it "
        "out (hive.txn.timeout, 300 s by default).")
    FILESYSTEM_PATH = str_property(
        "hoodie.write.lock.filesystem.path", None,
        "File system provider: directory of the lock file 'lock' (default: <base path>/.hoodie).")
    FILESYSTEM_EXPIRE = int_property(
        "hoodie.write.lock.filesystem.expire", 0,
        "File system provider: minutes after which a lock file (by its modification time) is expired and taken "
        "over; 0 = never (a lock file of a dead process on this host is taken over at once either way).")
    HIVE_DATABASE = str_property("hoodie.write.lock.hivemetastore.database", None,
                                 "Hive Metastore provider: database of the table locked (required).")
    HIVE_TABLE = str_property("hoodie.write.lock.hivemetastore.table", None,
                              "Hive Metastore provider: table locked (required; it need not exist).")
    HIVE_METASTORE_URIS = str_property(
        "hoodie.write.lock.hivemetastore.uris", None,
        "Hive Metastore provider: thrift://host:port of the metastore (default: hive.metastore.uris of the "
        "session's Hive configuration, as Hudi does).")


def declared_properties() -> list[ConfigProperty[object]]:
    """Every key declared in this module (the ``ConfigProperty`` attributes of its config classes)."""
    found: list[ConfigProperty[object]] = []
    for name in __all__:
        holder = globals()[name]
        if isinstance(holder, type):
            found += [v for v in vars(holder).values() if isinstance(v, ConfigProperty)]
    return found
