/*
 * sqlext: base files of merge-on-read slices read by Spark's parquet scan, less the rows their logs replace.
 */
package io.sqlext.catalog;

import java.util.HashSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Function1;
import scala.collection.Iterator;

/**
 * Spark's parquet format for the base files of merge-on-read file slices that have log files. Hudi's
 * {@code HoodieMergeOnReadRDD} reads a slice's base rows and replaces or drops those whose keys its log record
 * map holds; here the scan stays Spark's own (vectorized, batched) and a filter above it, {@link #keep}, drops
 * the first row of each record key the slice's logs name, while the log records themselves come from the Python
 * reader (with {@code sqlext.read.log.records.only}). A later row with such a key (a duplicate written by
 * {@code insert}) is kept as stored, as Hudi 0.15's file group reader keeps it.
 *
 * <p>The format differs from Spark's in one way: a file is never split, so one task reads it from its first row
 * and "the first row with a key" is the file's. The filter is marked non-deterministic, so Spark neither pushes
 * the query's own filters below it nor combines them with it: the query's filters apply to merged rows, as in
 * Hudi, where a slice with log files is merged before it is filtered.
 */
public final class HudiLogFilteredParquet extends ParquetFileFormat {

  private static final long serialVersionUID = 1L;

  private final transient HudiLogKeys keys;

  /** @param keys the keys of the files' logs, read when the scan's reader is first built (on the driver) */
  HudiLogFilteredParquet(HudiLogKeys keys) {
    this.keys = keys;
  }

  @Override
  public Function1<PartitionedFile, Iterator<InternalRow>> buildReaderWithPartitionValues(SparkSession session,
      StructType dataSchema, StructType partitionSchema, StructType requiredSchema,
      scala.collection.immutable.Seq<Filter> filters, scala.collection.immutable.Map<String, String> options,
      Configuration hadoopConf) {
    if (keys != null) {
      keys.load(session);  // before any task is sent: the filter's copy of the keys carries the broadcast
    }
    return super.buildReaderWithPartitionValues(session, dataSchema, partitionSchema, requiredSchema, filters,
        options, hadoopConf);
  }

  @Override
  public boolean isSplitable(SparkSession session, scala.collection.immutable.Map<String, String> options,
      Path path) {
    return false;
  }

  @Override
  public String toString() {
    return "HudiLogFilteredParquet";
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof HudiLogFilteredParquet && ((HudiLogFilteredParquet) other).keys == keys;
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(keys);
  }

  /** What one task has taken of one file's keys (the file as Spark's holder names it for this task). */
  private record Progress(UTF8String file, HashSet<UTF8String> pending) {
  }

  private static final ThreadLocal<Progress> PROGRESS = new ThreadLocal<>();

  /**
   * Whether the row with record key {@code key} of the file being read (Spark's {@code InputFileBlockHolder}, as
   * {@code input_file_name()} reads it) is kept: false for the first row of the file with a key the file's
   * slice's logs name. Called by generated code ({@code StaticInvoke}) for every row of a
   * {@link HudiLogFilteredParquet} scan, on the executor. Spark's holder names each file a task opens with a new
   * string, so progress is tracked per opening (a retried task starts afresh).
   *
   * @param keys the record keys each base file's slice's logs name (loaded on the driver before tasks were sent)
   * @param key the row's {@code _hoodie_record_key}; null keys are kept
   * @throws IllegalStateException the keys were not loaded, or the file being read has none
   */
  public static boolean keep(HudiLogKeys keys, UTF8String key) {
    UTF8String file = InputFileBlockHolder.getInputFilePath();
    Progress progress = PROGRESS.get();
    if (progress == null || progress.file() != file) {
      String path = file.toString();
      String name = path.substring(path.lastIndexOf('/') + 1);
      progress = new Progress(file, new HashSet<>(keys.of(name)));
      PROGRESS.set(progress);
    }
    HashSet<UTF8String> pending = progress.pending();
    return key == null || pending.isEmpty() || !pending.remove(key);
  }
}
