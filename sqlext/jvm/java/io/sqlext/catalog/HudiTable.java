/*
 * sqlext: a Hudi table from the session catalog, served by the `hudi` data source.
 */
package io.sqlext.catalog;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsPartitionManagement;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A catalog table whose provider is {@code hudi}: the metadata (name, schema, partitioning,
 * properties) come from the metastore entry, reads go to the {@code hudi} data source (a Python
 * {@code pyspark.sql.datasource.DataSource}) with the table's catalog options laid under the per-query
 * options. Writes through plain Spark SQL are refused with a message saying they go through sqlext. Mirrors what Hudi's {@code HoodieInternalV2Table} does for Hudi's own catalog.
 *
 * <p>Each {@link #newScanBuilder} call asks a freshly looked-up provider
 * for a fresh table, because Spark's {@code PythonDataSourceV2} caches the Python reader it planned
 * with (its schema and options), and one catalog table may be scanned twice with different columns or
 * options in the same query (a self join, say). Scans are column-pruned: see {@link HudiScanBuilder}.
 *
 * <p>Partitions: listed read-only from the metastore entry ({@link HudiPartitions}), so Spark's
 * {@code SHOW PARTITIONS} shows what Hive sync registered, as it does for a V1 catalog table; Spark's
 * partition DDL on a Hudi table is refused (Hudi, not the metastore, owns the partitions).
 */
public final class HudiTable
    implements SupportsRead, SupportsWrite, SupportsRowLevelOperations, SupportsPartitionManagement {

  private final String name;
  private final StructType schema;
  private final Column[] columns;
  private final Transform[] partitioning;
  private final Map<String, String> properties;
  private final Map<String, String> catalogOptions;
  private final Set<TableCapability> capabilities;
  private final CatalogTable catalogTable;

  /**
   * @param name           the table's name as Spark prints it (that of the catalog's V1 table)
   * @param schema         the schema declared in the catalog: what readers are asked to produce
   * @param columns        the same as V2 columns (those of the catalog's V1 table, with defaults)
   * @param partitioning   the catalog's partitioning (identity transforms of the partition columns)
   * @param properties     the catalog table's V2 properties (provider, location, TBLPROPERTIES, ...),
   *                       shown by {@code DESCRIBE EXTENDED} and {@code SHOW TBLPROPERTIES}
   * @param catalogOptions options every scan and write receives under its own options
   *                       ({@link HudiTableOptions#fromCatalog}, possibly with {@code as.of.instant})
   * @param capabilities   the data source table's capabilities
   * @param catalogTable   the metastore entry (its identifier and partition schema list partitions)
   */
  HudiTable(String name, StructType schema, Column[] columns, Transform[] partitioning,
      Map<String, String> properties, Map<String, String> catalogOptions,
      Set<TableCapability> capabilities, CatalogTable catalogTable) {
    this.name = name;
    this.schema = schema;
    this.columns = columns.clone();
    this.partitioning = partitioning.clone();
    this.properties = properties;
    this.catalogOptions = catalogOptions;
    this.capabilities = capabilities;
    this.catalogTable = catalogTable;
  }

  @Override
  public String name() {
    return name;
  }

  /** The catalog schema (Spark deprecates {@code Table.schema()} for {@link #columns()}). */
  @Deprecated
  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Column[] columns() {
    return columns.clone();
  }

  @Override
  public Transform[] partitioning() {
    return partitioning.clone();
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public Set<TableCapability> capabilities() {
    // Writes through plain Spark SQL (sqlext serve, spark.sql) are refused by newWriteBuilder with a
    // message that says where writes go. Declaring them, with ACCEPT_ANY_SCHEMA, lets Spark reach it
    // instead of failing first on the meta columns ("not enough data columns").
    Set<TableCapability> declared = capabilities.isEmpty()
        ? EnumSet.noneOf(TableCapability.class) : EnumSet.copyOf(capabilities);
    declared.add(TableCapability.BATCH_WRITE);
    declared.add(TableCapability.ACCEPT_ANY_SCHEMA);
    declared.add(TableCapability.TRUNCATE);
    declared.add(TableCapability.OVERWRITE_BY_FILTER);
    declared.add(TableCapability.OVERWRITE_DYNAMIC);
    return declared;
  }

  /** Why a Hudi table cannot be changed through plain Spark SQL, and what to use instead. */
  private RuntimeException writesGoThroughSqlext(String what) {
    return writesGoThroughSqlext(what, name);
  }

  /**
   * Why Hudi table {@code table} cannot be changed through plain Spark SQL ({@code what}: INSERT, ...): an
   * {@link UnsupportedOperationException}, or, for a statement a JDBC client sent to {@code sqlext serve}, a
   * one-line error thrown right away ({@link JdbcRefusal}) so the client sees the message without a stack.
   */
  static RuntimeException writesGoThroughSqlext(String what, String table) {
    String message = what + " on Hudi table " + table + " is not run by plain Spark SQL "
        + "(sqlext serve, spark.sql): create and change Hudi tables (INSERT, MERGE, UPDATE, DELETE, "
        + "CREATE TABLE ... USING hudi, CALL) with the sqlext shell or sqlext.connect().sql(...); queries "
        + "work here";
    if (JdbcRefusal.inThriftServer()) {
      throw JdbcRefusal.raise(message);
    }
    return new UnsupportedOperationException(message);
  }

  /** UPDATE, DELETE and MERGE through plain Spark SQL: refused, see {@link #writesGoThroughSqlext}. */
  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    throw writesGoThroughSqlext(info.command().toString());
  }

  /** The partition columns of the metastore entry. */
  @Override
  public StructType partitionSchema() {
    return catalogTable.partitionSchema();
  }

  /** The metastore's partitions matching {@code names} = {@code ident} (all when {@code names} is empty). */
  @Override
  public InternalRow[] listPartitionIdentifiers(String[] names, InternalRow ident) {
    return HudiPartitions.list(catalogTable, names, ident);
  }

  /** The metastore's parameters and {@code location} of one partition (empty when it is not registered). */
  @Override
  public Map<String, String> loadPartitionMetadata(InternalRow ident) {
    return HudiPartitions.metadata(catalogTable, ident);
  }

  /** Refused: Hudi writes create partitions, and Hive sync registers them. */
  @Override
  public void createPartition(InternalRow ident, Map<String, String> metadata) {
    throw refusedPartitionChange("ADD PARTITION");
  }

  /** Refused: drop a Hudi partition with sqlext's {@code ALTER TABLE ... DROP PARTITION}. */
  @Override
  public boolean dropPartition(InternalRow ident) {
    throw refusedPartitionChange("DROP PARTITION");
  }

  /** Refused, as {@link #createPartition}. */
  @Override
  public void replacePartitionMetadata(InternalRow ident, Map<String, String> metadata) {
    throw refusedPartitionChange("partition metadata changes");
  }

  private UnsupportedOperationException refusedPartitionChange(String what) {
    return new UnsupportedOperationException("Table " + name + " is a Hudi table: " + what
        + " through Spark's catalog is not supported; Hudi owns its partitions (use sqlext's "
        + "ALTER TABLE ... DROP PARTITION, and Hive sync to update the metastore)");
  }

  /** The metastore entry this table was loaded from. */
  CatalogTable catalogTable() {
    return catalogTable;
  }

  /** The options this table gives every scan and write before the per-query ones (unmodifiable). */
  public Map<String, String> catalogOptions() {
    return catalogOptions;
  }

  /**
   * A {@link HudiScanBuilder}: the scan reads only the columns the query needs, through a source table
   * created with that pruned schema, with the catalog options under {@code options}.
   */
  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    CaseInsensitiveStringMap merged = HudiTableOptions.forScan(catalogOptions, options.asCaseSensitiveMap());
    return HudiScanBuilder.create(schema, sourceScanBuilder(schema, merged),
        readSchema -> sourceScanBuilder(readSchema, merged));
  }

  /** The scan builder of a fresh source table producing {@code readSchema}. */
  private ScanBuilder sourceScanBuilder(StructType readSchema, CaseInsensitiveStringMap options) {
    Table table = freshSourceTable(readSchema);
    if (!(table instanceof SupportsRead)) {
      throw new UnsupportedOperationException(
          "Table " + name + ": the '" + HudiSessionCatalog.PROVIDER + "' data source cannot read");
    }
    return ((SupportsRead) table).newScanBuilder(options);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    // sqlext writes Hudi tables itself (engine.spark.writer), never through a Spark write of this table.
    throw writesGoThroughSqlext("INSERT");
  }

  /** A table of a freshly looked-up provider whose reader produces {@code readSchema}. */
  private Table freshSourceTable(StructType readSchema) {
    TableProvider provider = HudiSessionCatalog.lookupProvider().orElseThrow(
        () -> new IllegalStateException("Table " + name + " has provider '" + HudiSessionCatalog.PROVIDER
            + "' but no data source of that name is registered in this Spark session "
            + "(register sqlext's Python data source first)"));
    return provider.getTable(readSchema, partitioning.clone(), catalogOptions);
  }
}
