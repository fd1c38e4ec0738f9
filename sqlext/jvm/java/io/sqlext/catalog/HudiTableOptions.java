/*
 * sqlext: the options a Hudi table's catalog entry contributes to every read and write.
 */
package io.sqlext.catalog;

import java.net.URI;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogUtils;
import org.apache.spark.sql.connector.catalog.CatalogV2Util;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Static helpers that turn a metastore entry ({@link CatalogTable}) into data source options, the way
 * Hudi's {@code HoodieCatalogTable.catalogProperties} does ({@code storage.properties ++ properties}),
 * plus {@code path} set to the table location.
 *
 * <p>Precedence, lowest first: storage/serde properties (including {@code OPTIONS (...)} of
 * {@code CREATE TABLE} and Hudi's serde {@code path} / {@code hoodie.query.as.ro.table}), then table
 * properties ({@code TBLPROPERTIES}; see {@link #isDataSourceOption}), then {@code path} = the table location. Per-query options are laid
 * on top of all of these by {@link #overlay(Map, Map)}. Keys are compared case-insensitively.
 */
final class HudiTableOptions {

  /** Provider names (lower case) that mark a table as a Hudi table. */
  static final String[] HUDI_PROVIDERS = {"hudi", "org.apache.hudi"};

  /** Prefix of Hudi's Hive input formats ({@code HoodieParquetInputFormat}, ...Realtime...). */
  static final String HUDI_INPUT_FORMAT_PREFIX = "org.apache.hudi.hadoop.";

  /** Option naming the instant a read is pinned to (Hudi {@code DataSourceReadOptions.TIME_TRAVEL_AS_OF_INSTANT}). */
  static final String AS_OF_INSTANT = "as.of.instant";

  /** Serde/option key telling Hudi to read a MOR table read-optimized (Hudi Hive sync's {@code _ro} tables). */
  static final String QUERY_AS_RO_TABLE = "hoodie.query.as.ro.table";

  /** Hudi's instant time layout ({@code HoodieInstantTimeGenerator}): 17 digits, millisecond precision. */
  private static final DateTimeFormatter INSTANT_FORMAT = DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSS");

  private HudiTableOptions() {
  }

  /**
   * Whether a metastore entry is a Hudi table: provider {@code hudi} (any case), or a Hive table whose
   * input format is one of Hudi's ({@code org.apache.hudi.hadoop.*}), as Hudi's Hive sync registers them
   * when it does not mark them as Spark data source tables.
   */
  static boolean isHudi(CatalogTable table) {
    Option<String> provider = table.provider();
    if (provider.isDefined()) {
      String name = provider.get().toLowerCase(Locale.ROOT);
      for (String hudi : HUDI_PROVIDERS) {
        if (hudi.equals(name)) {
          return true;
        }
      }
    }
    return hasHudiInputFormat(table);
  }

  private static boolean hasHudiInputFormat(CatalogTable table) {
    Option<String> inputFormat = table.storage().inputFormat();
    return inputFormat.isDefined() && inputFormat.get().startsWith(HUDI_INPUT_FORMAT_PREFIX);
  }

  /**
   * The options a Hudi table's catalog entry gives every scan and write (see the class comment for the
   * precedence). For a Hive table registered only through Hudi's input format, without the serde
   * property {@code hoodie.query.as.ro.table}, the flag is derived from the input format
   * ({@code ...Realtime...} means {@code false}, otherwise {@code true}).
   *
   * @return an unmodifiable, insertion-ordered map, keys unique ignoring case
   */
  static Map<String, String> fromCatalog(CatalogTable table) {
    Map<String, String> merged = new LinkedHashMap<>();
    putAll(merged, CollectionConverters.asJava(table.storage().properties()));
    for (Map.Entry<String, String> entry : CollectionConverters.asJava(table.properties()).entrySet()) {
      if (isDataSourceOption(entry.getKey())) {
        put(merged, entry.getKey(), entry.getValue());
      }
    }
    Option<URI> location = table.storage().locationUri();
    if (location.isDefined()) {
      put(merged, "path", CatalogUtils.URIToString(location.get()));
    }
    if (hasHudiInputFormat(table) && findKey(merged, QUERY_AS_RO_TABLE) == null) {
      boolean realtime = table.storage().inputFormat().get().contains("Realtime");
      put(merged, QUERY_AS_RO_TABLE, realtime ? "false" : "true");
    }
    return Collections.unmodifiableMap(merged);
  }

  /**
   * Whether a table property is one to hand the data source: not one of Spark's reserved V2 table
   * properties ({@code provider}, {@code location}, {@code owner}, {@code comment}, {@code external},
   * ..., which Spark 4 also stores among a V2-created table's properties) and not an {@code option.*}
   * copy of a {@code CREATE TABLE ... OPTIONS} entry (those arrive unprefixed as storage properties).
   */
  static boolean isDataSourceOption(String key) {
    return !key.startsWith(TableCatalog.OPTION_PREFIX)
        && !CatalogV2Util.TABLE_RESERVED_PROPERTIES().contains(key.toLowerCase(Locale.ROOT));
  }

  /**
   * {@code base} with {@code top} laid over it (a key of {@code top} replaces a key of {@code base} that
   * is equal ignoring case, and keeps {@code top}'s spelling).
   */
  static CaseInsensitiveStringMap overlay(Map<String, String> base, Map<String, String> top) {
    Map<String, String> merged = new LinkedHashMap<>(base);
    putAll(merged, top);
    return new CaseInsensitiveStringMap(merged);
  }

  /** Hudi's read option naming the query type (snapshot, read_optimized, incremental). */
  static final String QUERY_TYPE = "hoodie.datasource.query.type";

  /**
   * The options of one scan: the catalog's with the query's own laid over them. A query type the query
   * names itself ({@code hudi_table_changes}, {@code WITH ('hoodie.datasource.query.type' = ...)}) wins over
   * the catalog's {@code hoodie.query.as.ro.table} flag, which Hudi's reader would otherwise let override
   * it ({@code DataSourceOptionsHelper.parametersWithReadDefaults}).
   */
  static CaseInsensitiveStringMap forScan(Map<String, String> catalogOptions, Map<String, String> query) {
    Map<String, String> merged = new LinkedHashMap<>(catalogOptions);
    if (findKey(query, QUERY_TYPE) != null) {
      String flag = findKey(merged, QUERY_AS_RO_TABLE);
      if (flag != null) {
        merged.remove(flag);
      }
    }
    putAll(merged, query);
    return new CaseInsensitiveStringMap(merged);
  }

  /** {@code base} plus one more entry, replacing any key equal to {@code key} ignoring case. */
  static Map<String, String> with(Map<String, String> base, String key, String value) {
    Map<String, String> merged = new LinkedHashMap<>(base);
    put(merged, key, value);
    return Collections.unmodifiableMap(merged);
  }

  /**
   * A Spark timestamp (microseconds since the epoch, as {@code TIMESTAMP AS OF} delivers it) as a Hudi
   * instant {@code yyyyMMddHHmmssSSS} in the given time zone (Spark's session time zone, the one the
   * {@code AS OF} string was parsed in, so the digits are the wall-clock time the user wrote).
   * Sub-millisecond digits are dropped.
   */
  static String instantFromMicros(long micros, String timeZone) {
    long seconds = Math.floorDiv(micros, 1_000_000L);
    long nanos = Math.floorMod(micros, 1_000_000L) * 1_000L;
    ZoneId zone = ZoneId.of(timeZone, ZoneId.SHORT_IDS);
    return INSTANT_FORMAT.format(Instant.ofEpochSecond(seconds, nanos).atZone(zone));
  }

  private static void putAll(Map<String, String> target, Map<String, String> source) {
    if (source == null) {
      return;
    }
    for (Map.Entry<String, String> entry : source.entrySet()) {
      put(target, entry.getKey(), entry.getValue());
    }
  }

  private static void put(Map<String, String> target, String key, String value) {
    String existing = findKey(target, key);
    if (existing != null) {
      target.remove(existing);
    }
    target.put(key, value);
  }

  private static String findKey(Map<String, String> map, String key) {
    for (String candidate : map.keySet()) {
      if (candidate.equalsIgnoreCase(key)) {
        return candidate;
      }
    }
    return null;
  }
}
