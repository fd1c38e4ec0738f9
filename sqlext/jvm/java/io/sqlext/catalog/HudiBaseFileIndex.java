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
import org.apache.spark.sql.catalyst.expressions.Expression;
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
 * <p>The partition schema is empty, because Hudi keeps the partition columns in the data files: Spark hands
 * every filter to {@link #listFiles} as a data filter, and the index asks the Python planner which partitions
 * can hold matching rows ({@link HudiReadPlanner#prunePartitions}), as Hudi's index prunes partitions with the
 * data filters on partition columns. Pruning only keeps too much; Spark re-applies every filter to the rows.
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
  private final long totalBytes;
  private final Map<String, scala.collection.immutable.Seq<PartitionDirectory>> listings =
      new ConcurrentHashMap<>();

  /**
   * @param table         the table's name (or base path) for messages
   * @param basePath      the table's base path (local, absolute)
   * @param pinnedInstant the instant the files were planned at (null for a table without commits)
   * @param files         the base files
   */
  HudiBaseFileIndex(String table, String basePath, String pinnedInstant, List<BaseFile> files) {
    this.table = table;
    this.basePath = basePath;
    this.pinnedInstant = pinnedInstant;
    this.files = List.copyOf(files);
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
   * All base files in one partition directory (the partition schema is empty), those of partitions the data
   * filters rule out left out.
   */
  @Override
  public scala.collection.immutable.Seq<PartitionDirectory> listFiles(
      scala.collection.immutable.Seq<Expression> partitionFilters,
      scala.collection.immutable.Seq<Expression> dataFilters) {
    ArrayNode predicates = predicates(dataFilters);
    String key = predicates.toString();
    return listings.computeIfAbsent(key, k -> directory(predicates.isEmpty() ? files : pruned(predicates)));
  }

  private static scala.collection.immutable.Seq<PartitionDirectory> directory(List<BaseFile> chosen) {
    FileStatus[] statuses = new FileStatus[chosen.size()];
    for (int i = 0; i < statuses.length; i++) {
      BaseFile file = chosen.get(i);
      statuses[i] = new FileStatus(file.size(), false, 1, BLOCK_SIZE, file.mtimeMs(), hadoopPath(file.path()));
    }
    PartitionDirectory directory = PartitionDirectory.apply(InternalRow.empty(), statuses);
    return CollectionConverters.asScala(List.of(directory)).toSeq();
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
    return new StructType();
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
