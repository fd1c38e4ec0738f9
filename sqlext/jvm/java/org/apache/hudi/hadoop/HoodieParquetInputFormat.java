/*
 * sqlext: a class-path placeholder for the Hive input format name Hudi registers for its tables.
 */
package org.apache.hudi.hadoop;

import java.io.IOException;

import org.apache.hadoop.io.ArrayWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;

/**
 * Stands in for Hudi's {@code org.apache.hudi.hadoop.HoodieParquetInputFormat} (from {@code hudi-hadoop-mr},
 * not on PySpark's class path) so that Spark's Hive client, which loads a table's input format class
 * whenever it writes the table's metastore entry ({@code CREATE}, {@code ALTER TABLE ... SET TBLPROPERTIES},
 * {@code RENAME}, statistics), can write the entries of Hudi tables: the ones sqlext registers and the
 * {@code _ro}/{@code _rt} tables Hive sync registers.
 *
 * <p>It never reads: sqlext's session catalog ({@code io.sqlext.catalog.HudiSessionCatalog}) serves every
 * table with a Hudi input format through the {@code hudi} data source. A read through this class (the
 * catalog not installed) fails with a message saying so, rather than returning the raw files of every
 * file slice.
 */
public class HoodieParquetInputFormat extends FileInputFormat<NullWritable, ArrayWritable> {

  /** Creates the placeholder. */
  public HoodieParquetInputFormat() {
    super();
  }

  @Override
  public InputSplit[] getSplits(JobConf job, int numSplits) throws IOException {
    throw unsupported();
  }

  @Override
  public RecordReader<NullWritable, ArrayWritable> getRecordReader(InputSplit split, JobConf job,
      Reporter reporter) throws IOException {
    throw unsupported();
  }

  /** The error a read through the placeholder raises. */
  protected IOException unsupported() {
    return new IOException(getClass().getName() + " is sqlext's placeholder for Hudi's Hive input format and "
        + "cannot read: read Hudi tables through sqlext's session catalog (spark.sql.catalog.spark_catalog="
        + "io.sqlext.catalog.HudiSessionCatalog, set by sqlext.connect), or put Hudi's hudi-hadoop-mr bundle "
        + "on the class path instead of sqlext's catalog jar");
  }
}
