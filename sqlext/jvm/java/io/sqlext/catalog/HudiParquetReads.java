/*
 * sqlext: Hudi base files read by Spark's own parquet scan.
 */
package io.sqlext.catalog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ObjectType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.apache.spark.unsafe.types.UTF8String;
import org.slf4j.LoggerFactory;

import scala.Option;
import scala.PartialFunction$;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A post-hoc resolution rule (installed by {@link SqlextExtensions}) that gives the base files of a Hudi read
 * to Spark's own parquet scan, as Hudi 0.14's {@code DefaultSource.createRelation} does with
 * {@code BaseFileOnlyRelation.toHadoopFsRelation} for copy-on-write snapshot and read-optimized queries:
 * vectorized reading, column pruning, predicate push-down into the parquet reader, partition pruning.
 *
 * <p>For every read of a Hudi table (a catalog table, {@link HudiTable}, or a path read of the {@code hudi}
 * data source), the rule asks the engine's Python planner ({@link HudiReadPlanner#plan}, registered with
 * {@link #register} by the sqlext session) how the read splits, and replaces the scan:
 * <ul>
 *   <li>{@code parquet}: every latest file slice is a base file without log files (copy-on-write tables,
 *       read-optimized queries, compacted merge-on-read tables) — a {@code LogicalRelation} of a
 *       {@code HadoopFsRelation}({@link HudiBaseFileIndex}, empty partition schema (Hudi keeps the partition
 *       columns in the data files), the query's schema, {@code ParquetFileFormat}) with the scan's own output
 *       attributes;</li>
 *   <li>{@code union}: a merge-on-read table some of whose slices have log files — a {@code Union} of that
 *       relation over the slices without log files and of the {@code hudi} data source restricted to the
 *       other file groups (option {@code sqlext.read.file.groups}), read as of the instant the plan was made
 *       at ({@code sqlext.read.pinned.instant}), so both parts see one snapshot and every file group is read
 *       once. When the plan names {@code keyedFiles} (the base files of those slices with the record keys
 *       their logs name), a third part reads them with Spark's scan less the rows those keys replace
 *       ({@link HudiLogFilteredParquet}) and the Python part returns the log records only
 *       ({@code sqlext.read.log.records.only});</li>
 *   <li>{@code python}: the read stays as it is (incremental and CDC queries, tables whose schema evolved on
 *       read, ... — see the Python planner, {@code engine.read.parquet_slices}).</li>
 * </ul>
 * Without a registered planner, with {@code spark.sqlext.read.parquet.enabled=false}, or when the planner
 * fails (the Python reader then reports the error as before), every read stays with the Python reader. The
 * targets of UPDATE, DELETE and MERGE are left alone ({@link RefuseHudiWrites} refuses them).
 */
public final class HudiParquetReads extends Rule<LogicalPlan> {

  /** Session conf turning the rule off ({@code false}); default {@code true}. */
  public static final String ENABLED = "spark.sqlext.read.parquet.enabled";

  /** Reader option: the instant the plan was made at (the engine's {@code ReadConfig.PINNED_INSTANT}). */
  static final String PINNED_INSTANT = "sqlext.read.pinned.instant";

  /** Reader option: the file groups the Python part reads (the engine's {@code ReadConfig.FILE_GROUPS}). */
  static final String FILE_GROUPS = "sqlext.read.file.groups";

  /** The column holding record keys in Hudi base files. */
  static final String RECORD_KEY = "_hoodie_record_key";

  /** Reader option: the Python part reads the log records only (the engine's {@code ReadConfig.LOG_RECORDS_ONLY}). */
  static final String LOG_RECORDS_ONLY = "sqlext.read.log.records.only";

  private static final Logger LOG = LoggerFactory.getLogger(HudiParquetReads.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TreeNodeTag<String> DECIDED = new TreeNodeTag<>("sqlext.hudi.read");

  /** Parquet reader options: the engine reads dates and timestamps as stored (proleptic Gregorian). */
  private static final Map<String, String> PARQUET_OPTIONS = Map.of(
      "datetimeRebaseMode", "CORRECTED",
      "int96RebaseMode", "CORRECTED",
      "mergeSchema", "false");

  private static volatile HudiReadPlanner planner;

  private final SparkSession session;

  /** The rule for {@code session} (Spark builds one per session state). */
  public HudiParquetReads(SparkSession session) {
    this.session = session;
  }

  /** Registers the engine's planner (a Py4J proxy of the Python driver); replaces any earlier one. */
  public static void register(HudiReadPlanner readPlanner) {
    planner = readPlanner;
  }

  /** Removes the registered planner: reads stay with the Python reader. */
  public static void unregister() {
    planner = null;
  }

  /** The registered planner, or null. */
  static HudiReadPlanner planner() {
    return planner;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    HudiReadPlanner current = planner;
    if (current == null || !Boolean.parseBoolean(SQLConf.get().getConfString(ENABLED, "true").trim())) {
      return plan;
    }
    if (plan instanceof UpdateTable || plan instanceof DeleteFromTable || plan instanceof MergeIntoTable) {
      return plan;
    }
    return plan.resolveOperatorsUp(PartialFunction$.MODULE$.fromFunction(node -> {
      if (node instanceof DataSourceV2Relation && node.getTagValue(DECIDED).isEmpty()) {
        DataSourceV2Relation relation = (DataSourceV2Relation) node;
        Map<String, String> options = readOptions(relation);
        if (options != null) {
          return rewrite(relation, options, current);
        }
      }
      return node;
    }));
  }

  /**
   * The options the {@code hudi} data source would read {@code relation} with, or null when it is not a read
   * of a Hudi table or is the Python part of an earlier rewrite.
   */
  private static Map<String, String> readOptions(DataSourceV2Relation relation) {
    Table table = relation.table();
    Map<String, String> query = relation.options().asCaseSensitiveMap();
    Map<String, String> options;
    if (table instanceof HudiTable) {
      options = HudiTableOptions.forScan(((HudiTable) table).catalogOptions(), query).asCaseSensitiveMap();
    } else if (table instanceof PythonTable && HudiSessionCatalog.PROVIDER.equalsIgnoreCase(table.name())) {
      options = query;
    } else {
      return null;
    }
    for (String key : options.keySet()) {
      if (key.equalsIgnoreCase(FILE_GROUPS)) {
        return null;
      }
    }
    return options;
  }

  private LogicalPlan rewrite(DataSourceV2Relation relation, Map<String, String> options, HudiReadPlanner current) {
    StructType schema = relation.schema();
    ObjectNode request = JSON.createObjectNode();
    ObjectNode optionsNode = request.putObject("options");
    options.forEach(optionsNode::put);
    request.put("schema", schema.json());
    JsonNode answer;
    try {
      answer = JSON.readTree(current.plan(request.toString()));
    } catch (JsonProcessingException | RuntimeException e) {  // Py4J errors: the Python reader reports them
      LOG.warn("Table {}: no read plan from the engine ({}); reading it with the Python reader",
          relation.name(), e.toString());
      return keepPython(relation);
    }
    String mode = answer.path("mode").asText("python");
    if (!"parquet".equals(mode) && !"union".equals(mode)) {
      LOG.debug("Table {} is read by the Python reader: {}", relation.name(), answer.path("reason").asText(""));
      return keepPython(relation);
    }
    List<HudiBaseFileIndex.BaseFile> files = new ArrayList<>();
    for (JsonNode file : answer.path("files")) {
      files.add(new HudiBaseFileIndex.BaseFile(file.path("path").asText(), file.path("size").asLong(),
          file.path("mtime").asLong(), file.path("partition").asText("")));
    }
    JsonNode pinnedNode = answer.path("pinnedInstant");
    String pinned = pinnedNode.isTextual() ? pinnedNode.asText() : null;
    StructType partitionSchema = pathColumns(schema, answer.path("pathColumns"));
    Map<String, InternalRow> partitionValues = new LinkedHashMap<>();
    answer.path("pathValues").fields().forEachRemaining(entry ->
        partitionValues.put(entry.getKey(), partitionRow(partitionSchema, entry.getValue())));
    HudiBaseFileIndex index = new HudiBaseFileIndex(relation.name(), answer.path("basePath").asText(), pinned,
        files, partitionSchema, partitionValues);
    // Columns in both schemas: Spark keeps the data schema's order and reads their values from the partitions.
    HadoopFsRelation fsRelation = new HadoopFsRelation(index, partitionSchema, schema, Option.empty(),
        new ParquetFileFormat(), scalaMap(PARQUET_OPTIONS), session);
    if ("parquet".equals(mode)) {
      LogicalRelation parquet = new LogicalRelation(fsRelation, relation.output(), catalogTable(relation), false,
          Option.empty());
      LOG.debug("Table {}: {} base files read by Spark's parquet scan", relation.name(), index.fileCount());
      return parquet;
    }
    Map<String, String> partOptions = new LinkedHashMap<>(relation.options().asCaseSensitiveMap());
    if (pinned != null) {
      partOptions.put(PINNED_INSTANT, pinned);
    }
    partOptions.put(FILE_GROUPS, answer.path("fileGroups").toString());
    JsonNode keyed = answer.path("keyedFiles");
    if (keyed.size() > 0) {
      partOptions.put(LOG_RECORDS_ONLY, "true");
    }
    DataSourceV2Relation fresh = relation.newInstance();
    Table partTable = fresh.table();
    if (partTable instanceof PythonTable) {
      // A path read's data source caches the Python reader it was first asked for (with the options of the
      // whole read): the restricted part needs a table of a fresh provider.
      Optional<TableProvider> provider = HudiSessionCatalog.lookupProvider();
      if (!provider.isPresent()) {
        return keepPython(relation);
      }
      partTable = provider.get().getTable(schema, new Transform[0], partOptions);
    }
    DataSourceV2Relation merged = fresh.copy(partTable, fresh.output(), fresh.catalog(), fresh.identifier(),
        new CaseInsensitiveStringMap(partOptions), fresh.timeTravelSpec());
    // The union's output is its first child's: the relation's own attributes go to the first part.
    List<LogicalPlan> parts = new ArrayList<>();
    if (index.fileCount() > 0) {
      parts.add(new LogicalRelation(fsRelation, relation.output(), catalogTable(relation), false, Option.empty()));
    }
    if (keyed.size() > 0) {
      parts.add(logFiltered(relation, keyed, answer.path("basePath").asText(), pinned, partitionSchema,
          partitionValues, parts.isEmpty() ? relation.output() : relation.newInstance().output(), options));
    }
    parts.add(merged);
    LOG.debug("Table {}: {} base files read by Spark's parquet scan, {} less the rows their logs name; {} file "
        + "groups with log files by the Python reader", relation.name(), index.fileCount(), keyed.size(),
        answer.path("fileGroups").size());
    return new Union(CollectionConverters.asScala(parts).toSeq(), false, false);
  }

  /**
   * The scan of the base files of slices with log files ({@code keyedFiles} of the plan), each less the first row
   * of every key its logs name: a non-deterministic filter ({@link HudiLogFilteredParquet#keep}) over Spark's
   * batched parquet scan of those files, which never splits a file. The keys are read when the scan runs
   * ({@link HudiLogKeys}), with the read's options restricted to those file groups as of the pinned instant.
   */
  private LogicalPlan logFiltered(DataSourceV2Relation relation, JsonNode keyed, String basePath,
      String pinned, StructType partitionSchema, Map<String, InternalRow> partitionValues,
      scala.collection.immutable.Seq<AttributeReference> output, Map<String, String> readOptions) {
    List<HudiBaseFileIndex.BaseFile> files = new ArrayList<>();
    ArrayNode groups = JSON.createArrayNode();
    for (JsonNode file : keyed) {
      files.add(new HudiBaseFileIndex.BaseFile(file.path("path").asText(), file.path("size").asLong(),
          file.path("mtime").asLong(), file.path("partition").asText("")));
      groups.addArray().add(file.path("partition").asText("")).add(file.path("fileId").asText());
    }
    AttributeReference recordKey = null;
    for (AttributeReference attribute : CollectionConverters.asJava(output)) {
      if (attribute.name().equals(RECORD_KEY)) {
        recordKey = attribute;
      }
    }
    if (recordKey == null) {
      throw new IllegalStateException("Hudi table " + relation.name() + ": no " + RECORD_KEY + " column");
    }
    ObjectNode request = JSON.createObjectNode();
    ObjectNode options = request.putObject("options");
    readOptions.forEach(options::put);
    if (pinned != null) {
      options.put(PINNED_INSTANT, pinned);
    }
    options.put(FILE_GROUPS, groups.toString());
    HudiLogKeys keys = new HudiLogKeys(relation.name(), request.toString());
    HudiBaseFileIndex index = new HudiBaseFileIndex(relation.name(), basePath, pinned, files, partitionSchema,
        partitionValues);
    HadoopFsRelation fsRelation = new HadoopFsRelation(index, partitionSchema, relation.schema(), Option.empty(),
        new HudiLogFilteredParquet(keys), scalaMap(PARQUET_OPTIONS), session);
    LogicalRelation scan = new LogicalRelation(fsRelation, output, catalogTable(relation), false, Option.empty());
    Expression keep = new StaticInvoke(HudiLogFilteredParquet.class, DataTypes.BooleanType, "keep",
        CollectionConverters.asScala(List.<Expression>of(
            Literal.create(keys, new ObjectType(HudiLogKeys.class)), recordKey)).toSeq(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(), false, false, false, Option.empty());
    return new Filter(keep, scan);
  }

  /** The fields of {@code schema} named in {@code columns} (the engine spells them as the schema does). */
  private static StructType pathColumns(StructType schema, JsonNode columns) {
    List<StructField> fields = new ArrayList<>();
    for (JsonNode column : columns) {
      fields.add(schema.apply(column.asText()));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  /**
   * One partition's values as Spark holds them, parsed from the engine's text ({@code yyyy-MM-dd} dates,
   * Java's spellings of floating point values; null for a null value).
   */
  static InternalRow partitionRow(StructType partitionSchema, JsonNode texts) {
    Object[] values = new Object[partitionSchema.size()];
    for (int i = 0; i < values.length; i++) {
      JsonNode text = texts.get(i);
      values[i] = text == null || text.isNull() ? null : parse(partitionSchema.fields()[i].dataType(), text.asText());
    }
    return new GenericInternalRow(values);
  }

  private static Object parse(DataType type, String text) {
    if (type instanceof StringType) {
      return UTF8String.fromString(text);
    } else if (type instanceof IntegerType) {
      return Integer.parseInt(text);
    } else if (type instanceof LongType) {
      return Long.parseLong(text);
    } else if (type instanceof ShortType) {
      return Short.parseShort(text);
    } else if (type instanceof ByteType) {
      return Byte.parseByte(text);
    } else if (type instanceof DoubleType) {
      return Double.parseDouble(text);
    } else if (type instanceof FloatType) {
      return Float.parseFloat(text);
    } else if (type instanceof BooleanType) {
      return Boolean.parseBoolean(text);
    } else if (type instanceof DateType) {
      return (int) java.time.LocalDate.parse(text).toEpochDay();
    } else if (type instanceof DecimalType) {
      DecimalType decimal = (DecimalType) type;
      return Decimal.apply(new java.math.BigDecimal(text), decimal.precision(), decimal.scale());
    }
    throw new IllegalArgumentException("partition values of type " + type.simpleString() + " are not planned");
  }

  private static LogicalPlan keepPython(DataSourceV2Relation relation) {
    relation.setTagValue(DECIDED, "python");
    return relation;
  }

  /**
   * The metastore entry of a catalog table: plans name the table ({@code FileScan parquet db.t}), and Spark's
   * {@code Catalog.refreshTable} expects it on every {@code LogicalRelation} of a table. (Statistics the entry
   * may carry then size the relation for join planning, as for any catalog table.)
   */
  private static Option<CatalogTable> catalogTable(DataSourceV2Relation relation) {
    if (relation.table() instanceof HudiTable) {
      return Option.apply(((HudiTable) relation.table()).catalogTable());
    }
    return Option.empty();
  }

  private static scala.collection.immutable.Map<String, String> scalaMap(Map<String, String> map) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
  }
}
