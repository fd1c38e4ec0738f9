/*
 * sqlext: the partitions a Hudi table's metastore entry holds (those Hive sync registered).
 */
package io.sqlext.catalog;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.CatalogUtils;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Read-only partition listing for {@link HudiTable}, from the session catalog's metastore entry (what
 * Spark's V1 {@code SHOW PARTITIONS} reads for a catalog table): the partitions Hudi's Hive sync
 * registered. Spark's V2 {@code SHOW PARTITIONS} / {@code SHOW TABLE EXTENDED ... PARTITION} need them
 * once the catalog serves the table as a {@link HudiTable} instead of Spark's {@code V1Table}.
 *
 * <p>Partitions of a Hudi table are changed by Hudi (writes, {@code ALTER TABLE ... DROP PARTITION}
 * through sqlext) and registered by Hive sync, never by Spark's partition DDL, so this class only reads.
 */
final class HudiPartitions {

  private HudiPartitions() {
  }

  /** Every metastore partition of {@code table} (one {@code listPartitions} call). */
  private static List<CatalogTablePartition> all(CatalogTable table) {
    SessionCatalog catalog = SparkSession.active().sessionState().catalog();
    return CollectionConverters.asJava(catalog.listPartitions(table.identifier(), Option.empty()));
  }

  /**
   * Identifiers (rows of the partition schema) of the metastore partitions of {@code table} whose
   * columns {@code names} equal the values of {@code ident} (all partitions when {@code names} is empty).
   */
  static InternalRow[] list(CatalogTable table, String[] names, InternalRow ident) {
    StructType schema = table.partitionSchema();
    String timeZone = SQLConf.get().sessionLocalTimeZone();
    int[] positions = new int[names.length];
    for (int i = 0; i < names.length; i++) {
      positions[i] = schema.fieldIndex(names[i]);
    }
    List<InternalRow> rows = new ArrayList<>();
    for (CatalogTablePartition partition : all(table)) {
      InternalRow row = partition.toRow(schema, timeZone);
      if (matches(row, positions, ident, schema)) {
        rows.add(row);
      }
    }
    return rows.toArray(new InternalRow[0]);
  }

  /**
   * The metastore's parameters of the partition {@code ident} (a full row of the partition schema) plus
   * {@code location}; empty when the metastore has no such partition.
   */
  static Map<String, String> metadata(CatalogTable table, InternalRow ident) {
    StructType schema = table.partitionSchema();
    String timeZone = SQLConf.get().sessionLocalTimeZone();
    int[] positions = new int[schema.length()];
    for (int i = 0; i < positions.length; i++) {
      positions[i] = i;
    }
    for (CatalogTablePartition partition : all(table)) {
      if (matches(partition.toRow(schema, timeZone), positions, ident, schema)) {
        Map<String, String> result = new LinkedHashMap<>(CollectionConverters.asJava(partition.parameters()));
        result.put("location", CatalogUtils.URIToString(partition.location()));
        return Collections.unmodifiableMap(result);
      }
    }
    return Collections.emptyMap();
  }

  private static boolean matches(InternalRow row, int[] positions, InternalRow ident, StructType schema) {
    for (int i = 0; i < positions.length; i++) {
      DataType type = schema.fields()[positions[i]].dataType();
      Object have = row.isNullAt(positions[i]) ? null : row.get(positions[i], type);
      Object want = ident.isNullAt(i) ? null : ident.get(i, type);
      if (!Objects.equals(have, want)) {
        return false;
      }
    }
    return true;
  }
}
