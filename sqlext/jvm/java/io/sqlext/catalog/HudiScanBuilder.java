/*
 * sqlext: column pruning for scans of Hudi tables served by the Python `hudi` data source.
 */
package io.sqlext.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The scan builder {@link HudiTable#newScanBuilder} returns: it adds column pruning, which Spark's
 * Python data source API lacks ({@code PythonScanBuilder} reads the whole table schema).
 *
 * <p>Spark's pushdown rule calls, in this order, {@code pushFilters} (only when the query has filters),
 * {@link #pruneColumns}, then {@link #build}. Only at {@code build()} is the read schema known, so
 * everything is deferred to it: it asks the Python provider for a fresh table with the pruned schema
 * (the Python reader is created with that schema and produces only those columns), replays the
 * recorded filters on that table's scan builder and builds its scan. Filters are therefore reported to
 * Spark as pushed <em>and</em> as post-scan filters (as Parquet does): Spark re-applies every filter, so
 * the columns a filter needs stay in the required schema, and asking the Python reader which filters it
 * fully handles would cost a second planning round trip (its pushdown plans the read).
 *
 * <p>The pruned schema keeps the catalog's order and types of the required top-level columns; a
 * nested-pruned struct keeps its whole catalog type. An empty requirement ({@code count(*)}) keeps one
 * cheap column, {@link #CHEAP_COLUMN} if present, else the first, so the reader still yields one row per
 * record.
 *
 * <p>The subclass implements the same filter pushdown interface as the data source's own builder
 * (probed on a builder for the full schema, which costs no Python call and is reused when nothing is
 * pruned), so Spark pushes exactly what it would have pushed without this wrapper.
 */
class HudiScanBuilder implements SupportsPushDownRequiredColumns {

  /** Hudi's commit time meta column: small (dictionary-encoded) and present in every Hudi table. */
  static final String CHEAP_COLUMN = "_hoodie_commit_time";

  private final StructType tableSchema;
  private final ScanBuilder fullBuilder;
  private final Function<StructType, ScanBuilder> builderFor;
  private StructType readSchema;

  /**
   * @param tableSchema the catalog schema
   * @param fullBuilder the data source's scan builder for {@code tableSchema}
   * @param builderFor  a fresh data source table's scan builder (same options) for a read schema
   */
  HudiScanBuilder(StructType tableSchema, ScanBuilder fullBuilder,
      Function<StructType, ScanBuilder> builderFor) {
    this.tableSchema = tableSchema;
    this.fullBuilder = fullBuilder;
    this.builderFor = builderFor;
    this.readSchema = tableSchema;
  }

  /** A pruning builder with the filter pushdown interface of {@code fullBuilder}, if any. */
  static ScanBuilder create(StructType tableSchema, ScanBuilder fullBuilder,
      Function<StructType, ScanBuilder> builderFor) {
    if (fullBuilder instanceof SupportsPushDownFilters) {
      return new WithFilters(tableSchema, fullBuilder, builderFor);
    }
    if (fullBuilder instanceof SupportsPushDownV2Filters) {
      return new WithPredicates(tableSchema, fullBuilder, builderFor);
    }
    return new HudiScanBuilder(tableSchema, fullBuilder, builderFor);
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    readSchema = prune(tableSchema, requiredSchema);
  }

  @Override
  public Scan build() {
    boolean pruned = readSchema.length() < tableSchema.length();
    ScanBuilder inner = pruned ? builderFor.apply(readSchema) : fullBuilder;
    replayPushdown(inner);
    if (inner instanceof SupportsPushDownRequiredColumns) {  // a future Spark's own pruning: harmless
      ((SupportsPushDownRequiredColumns) inner).pruneColumns(readSchema);
    }
    return inner.build();
  }

  /** Hands the recorded filters to the data source's builder; nothing to do without filter pushdown. */
  void replayPushdown(ScanBuilder inner) {
  }

  /**
   * The fields of {@code tableSchema} (in its order, with its types) whose name is a top-level field of
   * {@code required} (ignoring case: a superset is always safe), or one cheap column if none is.
   */
  static StructType prune(StructType tableSchema, StructType required) {
    List<StructField> kept = new ArrayList<>();
    for (StructField field : tableSchema.fields()) {
      for (String name : required.fieldNames()) {
        if (name.equalsIgnoreCase(field.name())) {
          kept.add(field);
          break;
        }
      }
    }
    if (kept.isEmpty() && tableSchema.length() > 0) {
      StructField cheap = tableSchema.fields()[0];
      for (StructField field : tableSchema.fields()) {
        if (CHEAP_COLUMN.equalsIgnoreCase(field.name())) {
          cheap = field;
          break;
        }
      }
      kept.add(cheap);
    }
    return kept.isEmpty() ? tableSchema : new StructType(kept.toArray(new StructField[0]));
  }

  /** For data sources whose builder takes V1 {@link Filter}s (Spark's {@code PythonScanBuilder}). */
  private static final class WithFilters extends HudiScanBuilder implements SupportsPushDownFilters {
    private Filter[] filters;  // null until Spark pushes

    WithFilters(StructType tableSchema, ScanBuilder fullBuilder,
        Function<StructType, ScanBuilder> builderFor) {
      super(tableSchema, fullBuilder, builderFor);
    }

    /** Records the filters for {@link #build}; all of them stay post-scan filters (see the class comment). */
    @Override
    public Filter[] pushFilters(Filter[] pushed) {
      filters = pushed.clone();
      return pushed;
    }

    @Override
    public Filter[] pushedFilters() {
      return filters == null ? new Filter[0] : filters.clone();
    }

    @Override
    void replayPushdown(ScanBuilder inner) {
      if (filters != null) {
        ((SupportsPushDownFilters) inner).pushFilters(filters.clone());
      }
    }
  }

  /** For data sources whose builder takes V2 {@link Predicate}s. */
  private static final class WithPredicates extends HudiScanBuilder implements SupportsPushDownV2Filters {
    private Predicate[] predicates;  // null until Spark pushes

    WithPredicates(StructType tableSchema, ScanBuilder fullBuilder,
        Function<StructType, ScanBuilder> builderFor) {
      super(tableSchema, fullBuilder, builderFor);
    }

    /** Records the predicates for {@link #build}; all of them stay post-scan (see the class comment). */
    @Override
    public Predicate[] pushPredicates(Predicate[] pushed) {
      predicates = pushed.clone();
      return pushed;
    }

    @Override
    public Predicate[] pushedPredicates() {
      return predicates == null ? new Predicate[0] : predicates.clone();
    }

    @Override
    void replayPushdown(ScanBuilder inner) {
      if (predicates != null) {
        ((SupportsPushDownV2Filters) inner).pushPredicates(predicates.clone());
      }
    }
  }
}
