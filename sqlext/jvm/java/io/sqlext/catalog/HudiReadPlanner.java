/*
 * sqlext: the Python side of a Hudi table's read, as the JVM asks it.
 */
package io.sqlext.catalog;

/**
 * The engine's read planner, implemented in Python ({@code sqlext.jvm.read_planner.ReadPlanner}) and called
 * through Py4J's callback server while Spark analyses and plans a query on the driver. Registered with
 * {@link HudiParquetReads#register} when a sqlext session starts. Requests and answers are JSON text.
 *
 * <p>Mirrors what Hudi's {@code HoodieFileIndex} asks its meta client: the latest file slices of a table, and
 * the partitions that survive partition pruning.
 */
public interface HudiReadPlanner {

  /**
   * Plans one read of a Hudi table.
   *
   * @param request {@code {"options": {...the data source options...}, "schema": "<Spark schema JSON>"}}
   * @return {@code {"mode": "python", "reason": "..."}} when the whole read stays with the Python reader, or
   *     {@code {"mode": "parquet"|"union", "basePath": "...", "pinnedInstant": "..."|null,
   *     "files": [{"path", "size", "mtime", "partition"}...], "fileGroups": [[partition, fileId]...]}}: the
   *     base files Spark's parquet scan reads and (for {@code union}) the file groups with log files the
   *     Python reader merges
   */
  String plan(String request);

  /**
   * The record keys the log files of a split merge-on-read read name, asked when the read runs.
   *
   * @param request {@code {"options": {...the Python part's options: its file groups and pinned instant...}}}
   * @return {@code {"keys": {"<base file name>": ["<record key>"...]}}} or {@code {"error": "..."}}
   */
  String logKeys(String request);

  /**
   * Partition pruning.
   *
   * @param request {@code {"path": "<base path>", "partitions": ["<partition path>"...],
   *     "predicates": [[column, "=" | "in" | ">" | ">=" | "<" | "<=", value]...]}}
   * @return a JSON list of the partitions that may hold matching rows
   */
  String prunePartitions(String request);
}
