/*
 * sqlext: the base files of a Hudi read, as a file index of Spark's own parquet scan.
 */
package io.sqlext.catalog;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InterpretedPredicate;
import org.apache.spark.sql.execution.datasources.DataSourceStrategy$;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The {@link FileIndex} of the {@code HadoopFsRelation} that {@link HudiParquetReads} puts in place of a Hudi
 * read: the base files of the latest file slices without log files, as the engine planned them when the query
 * was analysed (Hudi's {@code HoodieFileIndex} in {@code BaseFileOnlyRelation.toHadoopFsRelation}).
 *
 * <p>The partition schema holds the partition columns whose values the engine takes from partition paths (a
 * copy-on-write snapshot or a read-optimized query, as Hudi 0.15's {@code HoodieFileIndex} gives Spark its
 * partition schema): the files hold those columns too, and Spark's rule for a column in both schemas takes the
 * path's value. Spark does not re-apply filters on those columns to the rows, so {@link #listFiles} evaluates
 * them on each partition's values exactly. Otherwise the schema is empty: Spark hands every filter to
 * {@link #listFiles} as a data filter, and the index asks the Python planner which partitions can hold matching
 * rows ({@link HudiReadPlanner#prunePartitions}), as Hudi's index prunes partitions with the data filters on
 * partition columns. That pruning only keeps too much; Spark re-applies those filters to the rows.
 *
 * <p>The listing is a snapshot: it never changes after analysis ({@link #refresh} only drops the pruning
 * results), so the parquet part of a query and its Python part (the file groups with log files, read as of the
 * same instant) see one version of the table, as a Hudi file index does until refreshed.
 */
final class HudiBaseFileIndex implements FileIndex {

  private static final Logger LOG = LoggerFactory.getLogger(HudiBaseFileIndex.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long BLOCK_SIZE = 128L * 1024 * 1024;

  /** One base file: local absolute path, bytes, modification time (ms), relative partition path. */
  record BaseFile(String path, long size, long mtimeMs, String partition) {
  }

  private final String table;
  private final String basePath;
  private final String pinnedInstant;
  private final List<BaseFile> files;
  private final StructType partitionSchema;
  private final Map<String, InternalRow> partitionValues;
  private final long totalBytes;
  private final Map<String, scala.collection.immutable.Seq<PartitionDirectory>> listings =
      new ConcurrentHashMap<>();

  /**
   * @param table         the table's name (or base path) for messages
   * @param basePath      the table's base path (local, absolute)
   * @param pinnedInstant the instant the files were planned at (null for a table without commits)
   * @param files         the base files
   * @param partitionSchema the columns taken from partition paths (empty: none)
   * @param partitionValues partition path to the values of {@code partitionSchema} there (every partition of
   *                        {@code files} when the schema is not empty)
   */
  HudiBaseFileIndex(String table, String basePath, String pinnedInstant, List<BaseFile> files,
      StructType partitionSchema, Map<String, InternalRow> partitionValues) {
    this.table = table;
    this.basePath = basePath;
    this.pinnedInstant = pinnedInstant;
    this.files = List.copyOf(files);
    this.partitionSchema = partitionSchema;
    this.partitionValues = Map.copyOf(partitionValues);
    long total = 0;
    for (BaseFile file : files) {
      total += file.size();
    }
    this.totalBytes = total;
  }

  /** Number of base files (for log lines). */
  int fileCount() {
    return files.size();
  }

  private static Path hadoopPath(String localPath) {
    return new Path("file", null, localPath);
  }

  @Override
  public scala.collection.immutable.Seq<Path> rootPaths() {
    return CollectionConverters.asScala(List.of(hadoopPath(basePath))).toSeq();
  }

  /**
   * The base files, those of partitions the filters rule out left out: one directory per partition with its
   * values when the partition schema is not empty (the partition filters evaluated on them), else one directory.
   */
  @Override
  public scala.collection.immutable.Seq<PartitionDirectory> listFiles(
      scala.collection.immutable.Seq<Expression> partitionFilters,
      scala.collection.immutable.Seq<Expression> dataFilters) {
    ArrayNode predicates = predicates(dataFilters);
    List<Expression> onPartitions = CollectionConverters.asJava(partitionFilters);
    String key = predicates.toString() + "|" + onPartitions;
    return listings.computeIfAbsent(key, k -> {
      List<BaseFile> chosen = predicates.isEmpty() ? files : pruned(predicates);
      return partitionSchema.isEmpty() ? directory(chosen) : directories(chosen, onPartitions);
    });
  }

  private static FileStatus status(BaseFile file) {
    return new FileStatus(file.size(), false, 1, BLOCK_SIZE, file.mtimeMs(), hadoopPath(file.path()));
  }

  private static scala.collection.immutable.Seq<PartitionDirectory> directory(List<BaseFile> chosen) {
    FileStatus[] statuses = new FileStatus[chosen.size()];
    for (int i = 0; i < statuses.length; i++) {
      statuses[i] = status(chosen.get(i));
    }
    PartitionDirectory directory = PartitionDirectory.apply(InternalRow.empty(), statuses);
    return CollectionConverters.asScala(List.of(directory)).toSeq();
  }

  /** One directory per partition of {@code chosen} whose values satisfy every filter. */
  private scala.collection.immutable.Seq<PartitionDirectory> directories(List<BaseFile> chosen,
      List<Expression> filters) {
    InterpretedPredicate predicate = null;
    if (!filters.isEmpty()) {
      Expression all = filters.get(0);
      for (int i = 1; i < filters.size(); i++) {
        all = new org.apache.spark.sql.catalyst.expressions.And(all, filters.get(i));
      }
      predicate = new InterpretedPredicate(bindToPartitionSchema(all));
      predicate.initialize(0);
    }
    Map<String, List<FileStatus>> byPartition = new java.util.LinkedHashMap<>();
    for (BaseFile file : chosen) {
      byPartition.computeIfAbsent(file.partition(), p -> new ArrayList<>()).add(status(file));
    }
    List<PartitionDirectory> out = new ArrayList<>();
    for (Map.Entry<String, List<FileStatus>> entry : byPartition.entrySet()) {
      InternalRow values = partitionValues.get(entry.getKey());
      if (values == null) {
        throw new IllegalStateException("Table " + table + ": no partition values planned for partition '"
            + entry.getKey() + "'");
      }
      if (predicate == null || predicate.eval(values)) {
        out.add(PartitionDirectory.apply(values, entry.getValue().toArray(new FileStatus[0])));
      }
    }
    return CollectionConverters.asScala(out).toSeq();
  }

  /** {@code filter} with its column references bound to the partition schema's positions (by name). */
  private Expression bindToPartitionSchema(Expression filter) {
    String[] names = partitionSchema.fieldNames();
    return filter.transform(scala.PartialFunction$.MODULE$.fromFunction(node -> {
      if (node instanceof AttributeReference) {
        String name = ((AttributeReference) node).name();
        for (int i = 0; i < names.length; i++) {
          if (names[i].equalsIgnoreCase(name)) {
            return new BoundReference(i, partitionSchema.fields()[i].dataType(), true);
          }
        }
        throw new IllegalStateException("Table " + table + ": partition filter on '" + name
            + "', not a partition column");
      }
      return node;
    }));
  }

  /** The files of the partitions the Python planner keeps for {@code predicates} (all when it cannot tell). */
  private List<BaseFile> pruned(ArrayNode predicates) {
    HudiReadPlanner planner = HudiParquetReads.planner();
    if (planner == null) {
      return files;
    }
    Set<String> partitions = new LinkedHashSet<>();
    for (BaseFile file : files) {
      partitions.add(file.partition());
    }
    ObjectNode request = JSON.createObjectNode();
    request.put("path", basePath);
    ArrayNode names = request.putArray("partitions");
    partitions.forEach(names::add);
    request.set("predicates", predicates);
    Set<String> kept = new java.util.HashSet<>();
    try {
      JsonNode answer = JSON.readTree(planner.prunePartitions(request.toString()));
      if (answer == null || !answer.isArray()) {
        return files;
      }
      answer.forEach(node -> kept.add(node.asText()));
    } catch (Exception e) {  // Py4J and JSON failures: read every partition (Spark still filters the rows)
      LOG.warn("Table {}: partition pruning failed, reading every partition: {}", table, e.toString());
      return files;
    }
    List<BaseFile> chosen = new ArrayList<>();
    for (BaseFile file : files) {
      if (kept.contains(file.partition())) {
        chosen.add(file);
      }
    }
    LOG.debug("Table {}: {} of {} partitions kept by {}", table, kept.size(), partitions.size(), predicates);
    return chosen;
  }

  /**
   * The data filters Spark's V1 filter translation turns into simple column predicates, as JSON
   * {@code [column, op, value]} triples (the shapes the Python reader's pushdown gets); others are left out.
   */
  static ArrayNode predicates(scala.collection.immutable.Seq<Expression> dataFilters) {
    ArrayNode out = JSON.createArrayNode();
    for (Expression expression : CollectionConverters.asJava(dataFilters)) {
      Option<Filter> filter = DataSourceStrategy$.MODULE$.translateFilter(expression, true);
      if (filter.isDefined()) {
        addPredicates(filter.get(), out);
      }
    }
    return out;
  }

  private static void addPredicates(Filter filter, ArrayNode out) {
    if (filter instanceof And) {
      addPredicates(((And) filter).left(), out);
      addPredicates(((And) filter).right(), out);
    } else if (filter instanceof EqualTo) {
      add(out, ((EqualTo) filter).attribute(), "=", ((EqualTo) filter).value());
    } else if (filter instanceof GreaterThan) {
      add(out, ((GreaterThan) filter).attribute(), ">", ((GreaterThan) filter).value());
    } else if (filter instanceof GreaterThanOrEqual) {
      add(out, ((GreaterThanOrEqual) filter).attribute(), ">=", ((GreaterThanOrEqual) filter).value());
    } else if (filter instanceof LessThan) {
      add(out, ((LessThan) filter).attribute(), "<", ((LessThan) filter).value());
    } else if (filter instanceof LessThanOrEqual) {
      add(out, ((LessThanOrEqual) filter).attribute(), "<=", ((LessThanOrEqual) filter).value());
    } else if (filter instanceof In) {
      ArrayNode values = JSON.createArrayNode();
      for (Object value : ((In) filter).values()) {
        if (!addValue(values, value)) {
          return;
        }
      }
      ArrayNode triple = JSON.createArrayNode();
      triple.add(((In) filter).attribute()).add("in").add(values);
      out.add(triple);
    }
  }

  private static void add(ArrayNode out, String column, String op, Object value) {
    ArrayNode triple = JSON.createArrayNode();
    triple.add(column).add(op);
    if (addValue(triple, value)) {
      out.add(triple);
    }
  }

  /**
   * Appends {@code value} as the Python reader's pushdown would see it (int, float, bool, text; dates as
   * {@code yyyy-MM-dd}); false, appending nothing, for other values (decimals, timestamps, nulls), whose
   * predicate then prunes nothing.
   */
  private static boolean addValue(ArrayNode target, Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      target.add(((Number) value).longValue());
    } else if (value instanceof Double || value instanceof Float) {
      double number = ((Number) value).doubleValue();
      if (Double.isNaN(number) || Double.isInfinite(number)) {
        return false;
      }
      target.add(number);
    } else if (value instanceof Boolean) {
      target.add((Boolean) value);
    } else if (value instanceof String) {
      target.add((String) value);
    } else if (value instanceof java.sql.Date || value instanceof java.time.LocalDate) {
      target.add(value.toString());
    } else {
      return false;
    }
    return true;
  }

  @Override
  public String[] inputFiles() {
    String[] paths = new String[files.size()];
    for (int i = 0; i < paths.length; i++) {
      paths[i] = hadoopPath(files.get(i).path()).toString();
    }
    return paths;
  }

  /** Drops the pruning results; the files stay those planned at analysis (see the class comment). */
  @Override
  public void refresh() {
    listings.clear();
  }

  @Override
  public long sizeInBytes() {
    return totalBytes;
  }

  @Override
  public StructType partitionSchema() {
    return partitionSchema;
  }

  /** Equal for the same table, instant and files: two analyses of one unchanged table share cached data. */
  @Override
  public boolean equals(Object other) {
    if (!(other instanceof HudiBaseFileIndex)) {
      return false;
    }
    HudiBaseFileIndex that = (HudiBaseFileIndex) other;
    return basePath.equals(that.basePath) && Objects.equals(pinnedInstant, that.pinnedInstant)
        && files.equals(that.files);
  }

  @Override
  public int hashCode() {
    return Objects.hash(basePath, pinnedInstant, files.size());
  }

  @Override
  public String toString() {
    return "HudiBaseFileIndex(" + table + ", " + files.size() + " base files"
        + (pinnedInstant == null ? "" : " as of " + pinnedInstant) + ")";
  }
}
