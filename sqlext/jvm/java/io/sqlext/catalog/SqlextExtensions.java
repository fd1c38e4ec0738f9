/*
 * sqlext: the session extensions (spark.sql.extensions).
 */
package io.sqlext.catalog;

import org.apache.spark.sql.SparkSessionExtensions;

import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * What sqlext adds to every Spark session, plain {@code spark.sql} and {@code sqlext serve} (JDBC) included:
 * <ul>
 *   <li>{@link RefuseHudiWrites}: INSERT, UPDATE, DELETE and MERGE on a Hudi table run as plain Spark SQL
 *       fail with one line saying they go through sqlext;</li>
 *   <li>{@link HudiTimeTravelParser}: {@code TIMESTAMP AS OF '<instant>'} as Hudi accepts it;</li>
 *   <li>{@link HudiTableFunctions}: Hudi's table-valued functions {@code hudi_query} and
 *       {@code hudi_table_changes};</li>
 *   <li>{@link HudiParquetReads}: the base files of Hudi reads go to Spark's own parquet scan.</li>
 * </ul>
 */
public final class SqlextExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectResolutionRule(session -> new RefuseHudiWrites());
    extensions.injectParser((session, delegate) -> new HudiTimeTravelParser(delegate));
    HudiTableFunctions.install(extensions);
    extensions.injectPostHocResolutionRule(session -> new HudiParquetReads(session));
    return BoxedUnit.UNIT;
  }
}
