/*
 * sqlext: a class-path placeholder for the Hive input format name Hudi registers for merge-on-read tables.
 */
package org.apache.hudi.hadoop.realtime;

import org.apache.hudi.hadoop.HoodieParquetInputFormat;

/**
 * Stands in for Hudi's {@code org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat} (the input
 * format of merge-on-read tables and their {@code _rt} tables) so that Spark's Hive client can write their
 * metastore entries; see {@link HoodieParquetInputFormat}. It never reads.
 */
public class HoodieParquetRealtimeInputFormat extends HoodieParquetInputFormat {

  /** Creates the placeholder. */
  public HoodieParquetRealtimeInputFormat() {
    super();
  }
}
