/*
 * sqlext: the record keys a merge-on-read read's log files name, read when the read runs.
 */
package io.sqlext.catalog;

import java.io.Serializable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The record keys the log files of a split merge-on-read read name, by base file name ({@link
 * HudiLogFilteredParquet}). They are asked of the engine's planner ({@link HudiReadPlanner#logKeys}) on the driver
 * when Spark first builds the scan's reader, not when the query is analysed, so statements that only analyse a
 * read (MERGE validation, schema checks) never decode logs; then shipped to executors as one broadcast, which
 * this object carries when tasks serialize it (the filter holds it as a literal).
 */
public final class HudiLogKeys implements Serializable {

  private static final long serialVersionUID = 1L;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String table;
  private final String request;
  private volatile Broadcast<HashMap<String, HashSet<UTF8String>>> keys;

  /**
   * @param table the table's name, for messages
   * @param request the planner request ({@code {"options": {...}}}: the read's file groups and pinned instant)
   */
  HudiLogKeys(String table, String request) {
    this.table = table;
    this.request = request;
  }

  /**
   * Reads and broadcasts the keys if not done yet (driver only).
   *
   * @throws IllegalStateException no planner is registered, or it could not read the keys (its message)
   */
  synchronized void load(SparkSession session) {
    if (keys != null) {
      return;
    }
    HudiReadPlanner planner = HudiParquetReads.planner();
    if (planner == null) {
      throw new IllegalStateException("Hudi table " + table + ": the read needs the record keys of its log files, "
          + "but no sqlext read planner is registered in this session");
    }
    JsonNode answer;
    try {
      answer = JSON.readTree(planner.logKeys(request));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Hudi table " + table + ": unreadable log keys answer: " + e.getMessage(), e);
    }
    if (answer.has("error")) {
      throw new IllegalStateException("Hudi table " + table + ": cannot read the record keys of its log files: "
          + answer.path("error").asText());
    }
    HashMap<String, HashSet<UTF8String>> byFile = new HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> files = answer.path("keys").fields();
    while (files.hasNext()) {
      Map.Entry<String, JsonNode> file = files.next();
      HashSet<UTF8String> named = new HashSet<>();
      for (JsonNode key : file.getValue()) {
        named.add(UTF8String.fromString(key.asText()));
      }
      byFile.put(file.getKey(), named);
    }
    keys = JavaSparkContext.fromSparkContext(session.sparkContext()).broadcast(byFile);
  }

  /**
   * The keys named in the logs of the slice of base file {@code name}.
   *
   * @throws IllegalStateException the keys were not loaded before the tasks were sent, or the file has none
   */
  HashSet<UTF8String> of(String name) {
    Broadcast<HashMap<String, HashSet<UTF8String>>> loaded = keys;
    if (loaded == null) {
      throw new IllegalStateException("Hudi table " + table + ": the record keys of the log files were not read "
          + "before the scan ran");
    }
    HashSet<UTF8String> named = loaded.value().get(name);
    if (named == null) {
      throw new IllegalStateException("Hudi table " + table + ": base file '" + name + "' is read as a "
          + "merge-on-read base file, but no log keys were read for it");
    }
    return named;
  }
}
