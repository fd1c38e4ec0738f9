/*
 * sqlext: what the Python side asks the session for on every statement, in one Py4J call each.
 */
package io.sqlext.catalog;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Answers as JSON text what would otherwise take hundreds of Py4J round trips: iterating a Scala map
 * through Py4J costs a call per entry and a Java exception (about 40 ms to convert) at its end.
 */
public final class HudiSessionInfo {

  private static final ObjectMapper JSON = new ObjectMapper();

  private HudiSessionInfo() {}

  /**
   * The session catalog's entry of {@code database.name} ({@code SessionCatalog.getTableMetadata}), as a
   * JSON object with {@code provider}, {@code location} (URI text or null), {@code properties},
   * {@code storage} (storage properties), {@code schema} (Spark's schema JSON text),
   * {@code partitionColumns}, {@code comment} (or null) and {@code tableType}; null when no such table.
   */
  public static String tableMetadata(SparkSession spark, String database, String name) throws Exception {
    TableIdentifier ident = new TableIdentifier(name, Option.apply(database));
    SessionCatalog catalog = spark.sessionState().catalog();
    if (!catalog.tableExists(ident)) {
      return null;
    }
    CatalogTable meta = catalog.getTableMetadata(ident);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("provider", meta.provider().isDefined() ? meta.provider().get() : "");
    out.put("location", meta.storage().locationUri().isDefined()
        ? meta.storage().locationUri().get().toString() : null);
    out.put("properties", CollectionConverters.asJava(meta.properties()));
    out.put("storage", CollectionConverters.asJava(meta.storage().properties()));
    out.put("schema", meta.schema().json());
    out.put("partitionColumns", CollectionConverters.asJava(meta.partitionColumnNames()));
    out.put("comment", meta.comment().isDefined() ? meta.comment().get() : null);
    out.put("tableType", meta.tableType().name());
    return JSON.writeValueAsString(out);
  }

  /** The session's SQL confs whose key starts with {@code prefix} ({@code RuntimeConfig.getAll}), as JSON. */
  public static String confs(SparkSession spark, String prefix) throws JsonProcessingException {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> e : CollectionConverters.asJava(spark.conf().getAll()).entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return JSON.writeValueAsString(out);
  }
}
