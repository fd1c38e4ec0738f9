/*
 * sqlext: the session catalog that lets persistent Hudi tables reach the Python `hudi` data source.
 */
package io.sqlext.catalog;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.connector.catalog.CatalogV2Util;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.catalog.V1Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.DataSource;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import scala.Option;

/**
 * {@code spark.sql.catalog.spark_catalog} implementation for sqlext, the counterpart of Hudi's
 * {@code org.apache.spark.sql.hudi.catalog.HoodieCatalog}.
 *
 * <p>Spark's own session catalog loads a table whose provider is a Python data source through
 * {@code PythonDataSourceV2.getTable}, which drops the table's location and properties, so a reader
 * would get no options. This catalog wraps such tables in a {@link HudiTable} that hands the catalog's
 * options ({@link HudiTableOptions#fromCatalog}: storage/serde properties, TBLPROPERTIES,
 * {@code path} = location) to every scan and write, under the per-query options. Every other table and
 * every other operation is delegated unchanged to Spark's session catalog.
 *
 * <p>Time travel: {@code VERSION AS OF 'v'} reaches the reader as option {@code as.of.instant=v};
 * {@code TIMESTAMP AS OF ts} arrives here as microseconds and is passed on as
 * {@code as.of.instant=yyyyMMddHHmmssSSS}, the timestamp's wall-clock time in the session time zone.
 *
 * <p>{@code CREATE TABLE ... USING hudi} without columns asks the data source for the schema with
 * {@code path} = the location and the table's options, and stores that schema in the catalog.
 */
public class HudiSessionCatalog extends DelegatingCatalogExtension {

  /** The data source short name the catalog looks up for Hudi tables. */
  public static final String PROVIDER = "hudi";

  private static final Logger LOG = LoggerFactory.getLogger(HudiSessionCatalog.class);

  private static final String OPTION_PREFIX = TableCatalog.OPTION_PREFIX;

  /** Creates the catalog; Spark then calls {@code setDelegateCatalog} and {@code initialize}. */
  public HudiSessionCatalog() {
    super();
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    Table table = super.loadTable(ident);
    Table hudi = asHudiTable(table, null);
    return hudi != null ? hudi : table;
  }

  /** {@code VERSION AS OF version}: for a Hudi table, option {@code as.of.instant} = {@code version}. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    Table hudi = asHudiTable(super.loadTable(ident), version);
    return hudi != null ? hudi : super.loadTable(ident, version);
  }

  /**
   * {@code TIMESTAMP AS OF}: Spark evaluates the expression in the session time zone and passes
   * microseconds since the epoch; for a Hudi table this becomes option {@code as.of.instant} =
   * {@code yyyyMMddHHmmssSSS} of that instant in the session time zone.
   */
  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    Table table = super.loadTable(ident);
    String instant = HudiTableOptions.instantFromMicros(timestamp, SQLConf.get().sessionLocalTimeZone());
    Table hudi = asHudiTable(table, instant);
    return hudi != null ? hudi : super.loadTable(ident, timestamp);
  }

  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    Column[] declared = columns;
    if (columns.length == 0 && isHudiProvider(properties.get(TableCatalog.PROP_PROVIDER))) {
      Optional<TableProvider> provider = lookupProvider();
      if (provider.isPresent()) {
        StructType inferred = provider.get().inferSchema(creationOptions(properties));
        LOG.info("Table {}: schema from the '{}' data source: {}", ident, PROVIDER, inferred.simpleString());
        declared = CatalogV2Util.structTypeToV2Columns(inferred, false);
      }
    }
    Table created = super.createTable(ident, declared, partitions, properties);
    if (created == null) {
      return null;
    }
    Table hudi = asHudiTable(created, null);
    return hudi != null ? hudi : created;
  }

  /** Deprecated Spark API: routed through {@link #createTable(Identifier, Column[], Transform[], Map)}. */
  @Deprecated
  @Override
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    return createTable(ident, CatalogV2Util.structTypeToV2Columns(schema, false), partitions, properties);
  }

  /**
   * The {@code hudi} data source registered in the active session, if any (Spark's
   * {@code DataSource.lookupDataSourceV2}, which finds Python data sources registered with
   * {@code spark.dataSource.register}). A new provider object each call.
   */
  static Optional<TableProvider> lookupProvider() {
    try {
      Option<TableProvider> provider = DataSource.lookupDataSourceV2(PROVIDER, SQLConf.get());
      return provider.isDefined() ? Optional.of(provider.get()) : Optional.empty();
    } catch (RuntimeException e) {
      LOG.debug("No '{}' data source in this session: {}", PROVIDER, e.getMessage());
      return Optional.empty();
    }
  }

  private static boolean isHudiProvider(String provider) {
    if (provider == null) {
      return false;
    }
    String name = provider.toLowerCase(Locale.ROOT);
    for (String hudi : HudiTableOptions.HUDI_PROVIDERS) {
      if (hudi.equals(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The wrapped table for a V1 table of the delegate whose metastore entry is a Hudi table, or
   * {@code null} to leave {@code loaded} as it is. The delegate's {@code V1Table} carries exactly the
   * {@code SessionCatalog.getTableMetadata} result, so the metastore is asked once.
   */
  private Table asHudiTable(Table loaded, String asOfInstant) {
    if (!(loaded instanceof V1Table)) {
      return null;
    }
    CatalogTable meta = ((V1Table) loaded).v1Table();
    if (!HudiTableOptions.isHudi(meta)) {
      return null;
    }
    Optional<TableProvider> provider = lookupProvider();
    if (!provider.isPresent()) {
      LOG.warn("Table {} is a Hudi table but no '{}' data source is registered in this session; "
          + "leaving it to Spark", loaded.name(), PROVIDER);
      return null;
    }
    Map<String, String> options = HudiTableOptions.fromCatalog(meta);
    StructType schema = meta.schema();
    Column[] columns = loaded.columns();
    if (asOfInstant != null) {
      options = HudiTableOptions.with(options, HudiTableOptions.AS_OF_INSTANT, asOfInstant);
      StructType then = schemaAsOf(provider.get(), options, loaded.name());
      if (then != null && !java.util.Arrays.equals(then.fieldNames(), schema.fieldNames())) {
        schema = then;  // the columns changed since: read the commit with the schema it had
        columns = CatalogV2Util.structTypeToV2Columns(then, CatalogV2Util.structTypeToV2Columns$default$2());
      }
    }
    Transform[] partitioning = loaded.partitioning();
    Table source = provider.get().getTable(schema, partitioning, options);
    return new HudiTable(loaded.name(), schema, columns, partitioning,
        visibleProperties(loaded.properties()), options, source.capabilities(), meta);
  }

  /**
   * The table schema as of the instant in {@code options} ({@code as.of.instant}), from the data source
   * (the schema of that commit), or {@code null} when the data source cannot tell (the catalog schema is
   * used then).
   */
  private static StructType schemaAsOf(TableProvider provider, Map<String, String> options, String name) {
    try {
      return provider.inferSchema(new CaseInsensitiveStringMap(options));
    } catch (RuntimeException e) {
      LOG.warn("Table {}: no schema as of {} from the data source ({}); using the catalog schema", name,
          options.get(HudiTableOptions.AS_OF_INSTANT), e.toString());
      return null;
    }
  }

  /**
   * The table properties Spark shows ({@code SHOW TBLPROPERTIES}, {@code DESCRIBE EXTENDED}): the V1
   * table's, without the {@code option.} copy of Hudi's serde flag {@code hoodie.query.as.ro.table}, which
   * Hive sync sets on every table it registers and Hudi's {@code ShowHoodieCreateTableCommand} hides too.
   * The flag still reaches the data source through the options.
   */
  static Map<String, String> visibleProperties(Map<String, String> properties) {
    Map<String, String> visible = new LinkedHashMap<>(properties);
    visible.keySet().removeIf(key -> key.equalsIgnoreCase(OPTION_PREFIX + HudiTableOptions.QUERY_AS_RO_TABLE));
    return visible;
  }

  /**
   * Data source options for a table being created, from the V2 properties Spark passes to
   * {@code createTable}: {@code OPTIONS} (the {@code option.} keys, prefix removed), then the other
   * non-reserved properties (TBLPROPERTIES), then {@code path} = {@code location}.
   */
  private static CaseInsensitiveStringMap creationOptions(Map<String, String> properties) {
    Map<String, String> options = new LinkedHashMap<>();
    Map<String, String> tableProperties = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : properties.entrySet()) {
      String key = entry.getKey();
      if (key.startsWith(OPTION_PREFIX)) {
        options.put(key.substring(OPTION_PREFIX.length()), entry.getValue());
      } else if (HudiTableOptions.isDataSourceOption(key)) {
        tableProperties.put(key, entry.getValue());
      }
    }
    Map<String, String> merged = HudiTableOptions.overlay(options, tableProperties).asCaseSensitiveMap();
    String location = properties.get(TableCatalog.PROP_LOCATION);
    if (location != null) {
      merged = HudiTableOptions.with(merged, "path", location);
    }
    return new CaseInsensitiveStringMap(merged);
  }
}
