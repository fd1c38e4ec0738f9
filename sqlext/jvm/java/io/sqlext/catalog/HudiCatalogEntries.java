/*
 * sqlext: registers a Hudi table in the Hive metastore the way Apache Hudi 0.14 does.
 */
package io.sqlext.catalog;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat$;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTable$;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
import org.apache.spark.sql.catalyst.catalog.CatalogUtils;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogWithListener;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.EnvironmentContext;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.ql.metadata.Hive;
import org.apache.spark.sql.hive.HiveExternalCatalog;
import org.apache.spark.sql.hive.client.HiveClientImpl;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import scala.Option;
import scala.Product;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Creates the metastore entry of a Hudi table as Hudi 0.14's
 * {@code CreateHoodieTableCommand.createHiveDataSourceTable} does: a Hive-compatible table (real
 * columns, partition columns as Hive partition keys, Hudi's input format, Parquet serde and output
 * format, storage property {@code path}) that also carries Spark's data source table properties
 * ({@code spark.sql.sources.provider=hudi}, the JSON schema in {@code spark.sql.sources.schema.*}
 * parts, the partition columns), created directly through {@code HiveExternalCatalog.client()} so that
 * Spark does not replace the columns with its non-Hive-compatible placeholder. Spark's Hive client loads
 * the input format class, so the jar carries placeholders for Hudi's two input format classes
 * ({@code org.apache.hudi.hadoop.HoodieParquetInputFormat} and its realtime subclass).
 *
 * <p>Spark's {@code CatalogTable} / {@code CatalogStorageFormat} gain fields between Spark releases, so
 * they are built by field name through the case classes' {@code copy} methods (reflection) rather than
 * their constructors; the code compiles and runs against any Spark 4.x.
 */
public final class HudiCatalogEntries {

  private static final Logger LOG = LoggerFactory.getLogger(HudiCatalogEntries.class);

  /** Spark's key for the schema JSON split threshold ({@code StaticSQLConf.SCHEMA_STRING_LENGTH_THRESHOLD}). */
  static final String SCHEMA_THRESHOLD_KEY = "spark.sql.sources.schemaStringLengthThreshold";

  private static final int DEFAULT_SCHEMA_THRESHOLD = 4000;

  private HudiCatalogEntries() {
  }

  /**
   * Whether the session's external catalog is Spark's {@code HiveExternalCatalog} (embedded Derby or a
   * remote metastore), the only catalog this class writes to.
   */
  public static boolean isHiveCatalog(SparkSession spark) {
    return hiveCatalog(spark) != null;
  }

  private static HiveExternalCatalog hiveCatalog(SparkSession spark) {
    ExternalCatalog catalog = spark.sharedState().externalCatalog();
    if (catalog instanceof ExternalCatalogWithListener) {
      catalog = ((ExternalCatalogWithListener) catalog).unwrapped();
    }
    return catalog instanceof HiveExternalCatalog ? (HiveExternalCatalog) catalog : null;
  }

  /**
   * Creates the metastore entry {@code database.name}.
   *
   * @param spark the session (its Hive client writes the entry)
   * @param database database name (must exist)
   * @param name table name
   * @param schemaJson the full catalog schema as Spark JSON: meta columns, data columns, partition
   *     columns last (Spark's schema, stored in the {@code spark.sql.sources.schema.*} properties)
   * @param hiveSchemaJson the same columns with the types Hive sync gives them (the Hive columns)
   * @param partitionColumns partition column names, in order (a suffix of the schema)
   * @param location table base path (a URI or local path)
   * @param external EXTERNAL (created with LOCATION) or MANAGED
   * @param tableProperties TBLPROPERTIES to show users ({@code type}, {@code primaryKey}, ...)
   * @param storageProperties storage (serde) properties; {@code path} is added
   * @param inputFormat Hive input format class name
   * @param outputFormat Hive output format class name
   * @param serde serde class name
   * @param comment table comment or {@code null}
   * @throws IllegalStateException when the session has no Hive catalog, or Spark's classes do not have
   *     the expected fields
   */
  public static void createTable(SparkSession spark, String database, String name, String schemaJson,
      String hiveSchemaJson, List<String> partitionColumns, String location, boolean external,
      Map<String, String> tableProperties, Map<String, String> storageProperties, String inputFormat,
      String outputFormat, String serde, String comment) {
    HiveExternalCatalog catalog = hiveCatalog(spark);
    if (catalog == null) {
      throw new IllegalStateException("the session catalog is not Hive's (spark.sql.catalogImplementation="
          + spark.conf().get("spark.sql.catalogImplementation", "?") + ")");
    }
    StructType schema = (StructType) DataType.fromJson(schemaJson);
    URI uri = CatalogUtils.stringToURI(location);
    Map<String, String> storageProps = new LinkedHashMap<>(storageProperties);
    storageProps.put("path", location);
    Map<String, Object> storageFields = new HashMap<>();
    storageFields.put("locationUri", Option.apply(uri));
    storageFields.put("inputFormat", Option.apply(inputFormat));
    storageFields.put("outputFormat", Option.apply(outputFormat));
    storageFields.put("serde", Option.apply(serde));
    storageFields.put("properties", scalaMap(storageProps));
    CatalogStorageFormat storage = copyWith(CatalogStorageFormat$.MODULE$.empty(), storageFields);

    Map<String, String> props = new LinkedHashMap<>(dataSourceProperties(spark.sparkContext().conf(),
        schema, partitionColumns));
    props.putAll(tableProperties);
    Map<String, Object> fields = new HashMap<>();
    fields.put("provider", Option.apply(HudiSessionCatalog.PROVIDER));
    fields.put("partitionColumnNames", CollectionConverters.asScala(partitionColumns).toList());
    fields.put("createVersion", spark.version());
    fields.put("properties", scalaMap(props));
    fields.put("comment", Option.apply(comment));
    TableIdentifier ident = new TableIdentifier(name, Option.apply(database));
    CatalogTableType type = external ? CatalogTableType.EXTERNAL() : CatalogTableType.MANAGED();
    StructType hiveSchema = (StructType) DataType.fromJson(hiveSchemaJson);
    CatalogTable table = copyWith(newCatalogTable(ident, type, storage, hiveSchema), fields);
    catalog.client().createTable(table, false);
    LOG.info("Registered Hudi table {}.{} ({}) at {}", database, name, type.name(), location);
  }

  /**
   * Replaces the columns of {@code database.name} with {@code schemaJson} (the full catalog schema,
   * partition columns last) in both forms: the Hive columns (types from {@code hiveSchemaJson}) and
   * Spark's schema properties, as {@code HiveExternalCatalog.alterTableDataSchema} does, but with
   * CASCADE for a partitioned table (one Thrift {@code alter_table} call), so existing Hive partitions get
   * the new columns too (Hive's {@code ALTER TABLE ... ADD COLUMNS ... CASCADE}).
   */
  public static void alterSchema(SparkSession spark, String database, String name, String schemaJson,
      String hiveSchemaJson, List<String> partitionColumns) {
    HiveExternalCatalog catalog = hiveCatalog(spark);
    if (catalog == null || !(catalog.client() instanceof HiveClientImpl)) {
      throw new IllegalStateException("the session catalog is not Spark's built-in Hive catalog");
    }
    StructType schema = (StructType) DataType.fromJson(schemaJson);
    Map<String, String> schemaProps = dataSourceProperties(spark.sparkContext().conf(), schema,
        partitionColumns);
    java.util.Set<String> partitions = new java.util.HashSet<>();
    for (String column : partitionColumns) {
      partitions.add(column.toLowerCase(java.util.Locale.ROOT));
    }
    List<FieldSchema> columns = new java.util.ArrayList<>();
    for (StructField field : ((StructType) DataType.fromJson(hiveSchemaJson)).fields()) {
      if (!partitions.contains(field.name().toLowerCase(java.util.Locale.ROOT))) {
        String comment = field.getComment().isDefined() ? field.getComment().get() : null;
        columns.add(new FieldSchema(field.name(), field.dataType().catalogString(), comment));
      }
    }
    ((HiveClientImpl) catalog.client()).withHiveState(() -> {
      try {
        IMetaStoreClient client = Hive.get().getMSC();
        org.apache.hadoop.hive.metastore.api.Table table = client.getTable(database, name);
        table.getSd().setCols(columns);
        table.getParameters().keySet().removeIf(key -> key.startsWith("spark.sql.sources.schema"));
        table.getParameters().putAll(schemaProps);
        EnvironmentContext context = new EnvironmentContext();
        if (!partitionColumns.isEmpty()) {
          context.putToProperties("CASCADE", "true");
        }
        client.alter_table_with_environmentContext(database, name, table, context);
      } catch (Exception e) {
        throw new IllegalStateException(e.getClass().getSimpleName() + ": " + e.getMessage(), e);
      }
      return null;
    });
    LOG.info("Altered the columns of Hudi table {}.{}", database, name);
  }

  /**
   * Spark's data source table properties (as {@code HiveExternalCatalog.tableMetaToTableProps}, which
   * Hudi forks): provider, create version, the schema JSON in parts of at most
   * {@code spark.sql.sources.schemaStringLengthThreshold} characters, and the partition columns.
   */
  static Map<String, String> dataSourceProperties(SparkConf conf, StructType schema,
      List<String> partitionColumns) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("spark.sql.sources.provider", HudiSessionCatalog.PROVIDER);
    props.put("spark.sql.create.version", org.apache.spark.package$.MODULE$.SPARK_VERSION());
    int threshold = conf.getInt(SCHEMA_THRESHOLD_KEY, DEFAULT_SCHEMA_THRESHOLD);
    String json = schema.json();
    int parts = 0;
    for (int start = 0; start < json.length(); start += threshold) {
      props.put("spark.sql.sources.schema.part." + parts, json.substring(start,
          Math.min(json.length(), start + threshold)));
      parts++;
    }
    props.put("spark.sql.sources.schema.numParts", Integer.toString(parts));
    if (!partitionColumns.isEmpty()) {
      props.put("spark.sql.sources.schema.numPartCols", Integer.toString(partitionColumns.size()));
      for (int i = 0; i < partitionColumns.size(); i++) {
        props.put("spark.sql.sources.schema.partCol." + i, partitionColumns.get(i));
      }
    }
    return props;
  }

  private static scala.collection.immutable.Map<String, String> scalaMap(Map<String, String> map) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
  }

  /** {@code CatalogTable(identifier, tableType, storage, schema)} with every other field at its default. */
  private static CatalogTable newCatalogTable(TableIdentifier ident, CatalogTableType type,
      CatalogStorageFormat storage, StructType schema) {
    Object companion = CatalogTable$.MODULE$;
    Method apply = null;
    for (Method method : companion.getClass().getMethods()) {
      if (method.getName().equals("apply") && method.getReturnType() == CatalogTable.class
          && (apply == null || method.getParameterCount() > apply.getParameterCount())) {
        apply = method;
      }
    }
    if (apply == null) {
      throw new IllegalStateException("CatalogTable.apply not found");
    }
    Object[] args = new Object[apply.getParameterCount()];
    args[0] = ident;
    args[1] = type;
    args[2] = storage;
    args[3] = schema;
    try {
      for (int i = 4; i < args.length; i++) {
        args[i] = companion.getClass().getMethod("apply$default$" + (i + 1)).invoke(companion);
      }
      return (CatalogTable) apply.invoke(companion, args);
    } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException("cannot build a CatalogTable with this Spark: " + e, e);
    }
  }

  /**
   * {@code product.copy(field = value, ...)} for a Scala case class, by field name.
   *
   * @throws IllegalStateException when a named field does not exist
   */
  @SuppressWarnings("unchecked")
  static <T extends Product> T copyWith(T product, Map<String, Object> fields) {
    Method copy = null;
    for (Method method : product.getClass().getMethods()) {
      if (method.getName().equals("copy") && method.getParameterCount() == product.productArity()) {
        copy = method;
      }
    }
    if (copy == null) {
      throw new IllegalStateException("no copy method on " + product.getClass().getName());
    }
    Object[] args = new Object[product.productArity()];
    int used = 0;
    for (int i = 0; i < args.length; i++) {
      String field = product.productElementName(i);
      if (fields.containsKey(field)) {
        args[i] = fields.get(field);
        used++;
      } else {
        args[i] = product.productElement(i);
      }
    }
    if (used != fields.size()) {
      throw new IllegalStateException(product.getClass().getName() + " lacks some of the fields "
          + fields.keySet());
    }
    try {
      return (T) copy.invoke(product, args);
    } catch (IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException("cannot copy " + product.getClass().getName() + ": " + e, e);
    }
  }
}
