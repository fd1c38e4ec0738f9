/*
 * sqlext: Hudi's table-valued functions in plain Spark SQL.
 */
package io.sqlext.catalog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import scala.Tuple3;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * Hudi's table-valued functions (Hudi {@code TableValuedFunctions}, {@code HoodieQuery},
 * {@code HoodieTableChanges}), resolved to a read of the {@code hudi} data source:
 *
 * <ul>
 *   <li>{@code hudi_query('db.t' | 'path', 'snapshot' | 'read_optimized')}, and beyond Hudi 0.14
 *       {@code hudi_query(t, 'incremental', begin [, end])};</li>
 *   <li>{@code hudi_table_changes('db.t' | 'path', 'latest_state' | 'cdc', begin | 'earliest' [, end])}:
 *       an incremental query ({@code hoodie.datasource.query.type=incremental},
 *       {@code hoodie.datasource.query.incremental.format}, {@code hoodie.datasource.read.begin.instanttime}
 *       ({@code 'earliest'} is {@code 000}), {@code ...end.instanttime}).</li>
 * </ul>
 *
 * A first argument containing {@code /} is a table path (no catalog entry needed), anything else a table
 * name resolved through the session catalog with the options as per-query options. Arguments must be
 * constant strings; a wrong count or an unknown mode is an {@link IllegalArgumentException} with Hudi's
 * message.
 */
final class HudiTableFunctions {

  static final String HUDI_QUERY = "hudi_query";
  static final String HUDI_TABLE_CHANGES = "hudi_table_changes";

  private HudiTableFunctions() {}

  /** Registers both functions on {@code extensions}. */
  static void install(SparkSessionExtensions extensions) {
    extensions.injectTableFunction(function(HUDI_QUERY, HudiTableFunctions::hudiQuery,
        "hudi_query(table_or_path, 'snapshot' | 'read_optimized' | 'incremental', [begin, [end]])"));
    extensions.injectTableFunction(function(HUDI_TABLE_CHANGES, HudiTableFunctions::tableChanges,
        "hudi_table_changes(table_or_path, 'latest_state' | 'cdc', begin_instant | 'earliest', [end_instant])"));
  }

  private interface Builder {
    LogicalPlan build(List<String> args);
  }

  private static Tuple3<FunctionIdentifier, ExpressionInfo,
      scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan>> function(
      String name, Builder builder, String usage) {
    ExpressionInfo info = new ExpressionInfo(HudiTableFunctions.class.getCanonicalName(), null, name, usage,
        "", "", "", "table_funcs", "", "", "built-in");
    scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan> body =
        new AbstractFunction1<scala.collection.immutable.Seq<Expression>, LogicalPlan>() {
          @Override
          public LogicalPlan apply(scala.collection.immutable.Seq<Expression> expressions) {
            return builder.build(constants(name, expressions));
          }
        };
    return new Tuple3<>(FunctionIdentifier.apply(name), info, body);
  }

  private static List<String> constants(String name, scala.collection.immutable.Seq<Expression> expressions) {
    List<String> args = new ArrayList<>();
    for (Expression expression : CollectionConverters.asJava(expressions)) {
      if (!expression.foldable()) {
        throw new IllegalArgumentException("Function `" + name + "` takes constant arguments; got "
            + expression.sql());
      }
      Object value = expression.eval(null);
      args.add(value == null ? null : value.toString());
    }
    return args;
  }

  /** Hudi {@code HoodieQuery.parseOptions}. */
  private static LogicalPlan hudiQuery(List<String> args) {
    if (args.size() < 2) {
      throw new IllegalArgumentException("Expect arguments (table_name or table_path, query_type, ...) for "
          + "function `" + HUDI_QUERY + "`");
    }
    String mode = String.valueOf(args.get(1));
    Map<String, String> options = new LinkedHashMap<>();
    switch (mode.toLowerCase(Locale.ROOT)) {
      case "snapshot":
      case "read_optimized":
        if (args.size() > 2) {
          throw new IllegalArgumentException("No additional args are expected in `" + mode + "` mode");
        }
        options.put("hoodie.datasource.query.type", mode.toLowerCase(Locale.ROOT));
        break;
      case "incremental":
        if (args.size() < 3 || args.size() > 4) {
          throw new IllegalArgumentException("Expect arguments (table_name or table_path, 'incremental', "
              + "start_instant, [end_instant]) for function `" + HUDI_QUERY + "`");
        }
        options.put("hoodie.datasource.query.type", "incremental");
        putRange(options, args);
        break;
      default:
        throw new IllegalArgumentException("'" + HUDI_QUERY + "' doesn't currently support `" + mode + "`");
    }
    return read(args.get(0), options);
  }

  /** Hudi {@code HoodieTableChangesOptionsParser.parseOptions}. */
  private static LogicalPlan tableChanges(List<String> args) {
    if (args.size() < 3 || args.size() > 4) {
      throw new IllegalArgumentException("Expect arguments (table_name or table_path, incremental_format, "
          + "start_instant, [end_instant]) for function `" + HUDI_TABLE_CHANGES + "`");
    }
    String format = String.valueOf(args.get(1));
    if (!format.equals("latest_state") && !format.equals("cdc")) {
      throw new IllegalArgumentException("'" + HUDI_TABLE_CHANGES + "' doesn't support `" + format + "`");
    }
    Map<String, String> options = new LinkedHashMap<>();
    options.put("hoodie.datasource.query.type", "incremental");
    options.put("hoodie.datasource.query.incremental.format", format);
    putRange(options, args);
    return read(args.get(0), options);
  }

  private static void putRange(Map<String, String> options, List<String> args) {
    String begin = String.valueOf(args.get(2));
    options.put("hoodie.datasource.read.begin.instanttime", begin.equals("earliest") ? "000" : begin);
    if (args.size() > 3 && args.get(3) != null) {
      options.put("hoodie.datasource.read.end.instanttime", args.get(3));
    }
  }

  /** A read of the table named (or at the path given) by {@code identifier} with {@code options}. */
  private static LogicalPlan read(String identifier, Map<String, String> options) {
    if (identifier == null || identifier.isEmpty()) {
      throw new IllegalArgumentException("The first argument must name a Hudi table or its path");
    }
    SparkSession spark = SparkSession.active();
    if (identifier.contains("/")) {
      org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> frame =
          spark.read().format(HudiSessionCatalog.PROVIDER).options(options).load(identifier);
      return ((org.apache.spark.sql.classic.Dataset<?>) frame).logicalPlan();
    }
    scala.collection.immutable.Seq<String> parts;
    try {
      parts = ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().sqlParser()
          .parseMultipartIdentifier(identifier);
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw new IllegalArgumentException("Not a table name or path: '" + identifier + "'", e);
    }
    if ("cdc".equals(options.get("hoodie.datasource.query.incremental.format"))) {
      return readCdc(spark, identifier, parts, options);
    }
    return new UnresolvedRelation(parts, new CaseInsensitiveStringMap(options), false);
  }

  /**
   * A CDC query of a table named in the catalog: its rows ({@code op, ts_ms, before, after}) are not the
   * table's columns, so the data source is read at the table's location (with the catalog's options)
   * rather than through the catalog table.
   */
  private static LogicalPlan readCdc(SparkSession spark, String identifier,
      scala.collection.immutable.Seq<String> parts, Map<String, String> options) {
    List<String> names = CollectionConverters.asJava(parts);
    int n = names.size();
    scala.Option<String> database = n >= 2 ? scala.Option.apply(names.get(n - 2)) : scala.Option.empty();
    org.apache.spark.sql.catalyst.catalog.CatalogTable meta;
    try {
      meta = ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().catalog()
          .getTableMetadata(new org.apache.spark.sql.catalyst.TableIdentifier(names.get(n - 1), database));
    } catch (org.apache.spark.sql.AnalysisException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    if (!HudiTableOptions.isHudi(meta)) {
      throw new IllegalArgumentException("Table " + identifier + " is not a Hudi table: function `"
          + HUDI_TABLE_CHANGES + "` reads Hudi tables only");
    }
    Map<String, String> merged = new LinkedHashMap<>(HudiTableOptions.fromCatalog(meta));
    merged.putAll(options);
    String path = merged.remove("path");
    if (path == null) {
      throw new IllegalArgumentException("Table " + identifier + " has no location");
    }
    org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> frame =
        spark.read().format(HudiSessionCatalog.PROVIDER).options(merged).load(path);
    return ((org.apache.spark.sql.classic.Dataset<?>) frame).logicalPlan();
  }
}
