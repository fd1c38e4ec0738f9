/*
 * sqlext: Hudi's time-travel instants in plain Spark SQL.
 */
package io.sqlext.catalog;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's SQL parser, with Hudi's instant form of {@code TIMESTAMP AS OF} (installed by
 * {@link SqlextExtensions} through {@code spark.sql.extensions}).
 *
 * <p>Hudi accepts {@code FROM t TIMESTAMP AS OF '20240102030405678'} (an instant, {@code yyyyMMddHHmmss} or
 * {@code yyyyMMddHHmmssSSS}, quoted or not) besides {@code 'yyyy-MM-dd HH:mm:ss[.SSS]'} and {@code 'yyyy-MM-dd'}
 * strings, which it reads as the instant of that wall-clock time (Hudi's parser extension and
 * {@code HoodieSqlCommonUtils.formatQueryInstant}). Spark casts a {@code TIMESTAMP AS OF} expression to a
 * timestamp, which fails for an instant ({@code INVALID_TIME_TRAVEL_TIMESTAMP_EXPR}), so this parser turns a
 * literal ({@code 'text'} or the unquoted instant) into {@code VERSION AS OF 'text'}, which
 * {@link HudiSessionCatalog} hands the reader as option {@code as.of.instant}; the reader reads it as Hudi
 * does and names a value it cannot read. Other expressions ({@code current_timestamp() - INTERVAL 1 DAY},
 * {@code TIMESTAMP '...'}) stay with Spark, which evaluates them in the session time zone. Every other
 * statement and every other method goes to Spark's parser unchanged.
 */
public final class HudiTimeTravelParser implements ParserInterface {

  /**
   * {@code TIMESTAMP|SYSTEM_TIME AS OF} followed by a string literal (any text without quotes or backslashes)
   * or an unquoted 14- or 17-digit instant.
   */
  private static final Pattern INSTANT_TIME_TRAVEL = Pattern.compile(
      "(?i)\\b(?:TIMESTAMP|SYSTEM_TIME)(\\s+AS\\s+OF\\s+)(?:'([^'\\\\]*)'|\"([^\"\\\\]*)\"|(\\d{17}|\\d{14})(?![\\w.]))");

  private final ParserInterface delegate;

  /** Wraps {@code delegate}, Spark's parser (or the parser of an extension installed before). */
  public HudiTimeTravelParser(ParserInterface delegate) {
    this.delegate = delegate;
  }

  /**
   * {@code sql} with every instant-form {@code TIMESTAMP AS OF} turned into {@code VERSION AS OF}; the text is
   * returned as it is when it has none.
   */
  static String rewrite(String sql) {
    if (sql == null || sql.length() < 20) {
      return sql;
    }
    Matcher matcher = INSTANT_TIME_TRAVEL.matcher(sql);
    if (!matcher.find()) {
      return sql;
    }
    StringBuilder out = new StringBuilder(sql.length());
    do {
      String value = matcher.group(2) != null ? matcher.group(2)
          : matcher.group(3) != null ? matcher.group(3) : matcher.group(4);
      matcher.appendReplacement(out, Matcher.quoteReplacement("VERSION" + matcher.group(1) + "'" + value + "'"));
    } while (matcher.find());
    matcher.appendTail(out);
    return out.toString();
  }

  @Override
  public LogicalPlan parsePlan(String sqlText) throws ParseException {
    return delegate.parsePlan(rewrite(sqlText));
  }

  @Override
  public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext context) throws ParseException {
    return delegate.parsePlanWithParameters(rewrite(sqlText), context);
  }

  @Override
  public LogicalPlan parseQuery(String sqlText) throws ParseException {
    return delegate.parseQuery(rewrite(sqlText));
  }

  @Override
  public Expression parseExpression(String sqlText) throws ParseException {
    return delegate.parseExpression(sqlText);
  }

  @Override
  public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
    return delegate.parseTableIdentifier(sqlText);
  }

  @Override
  public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
    return delegate.parseFunctionIdentifier(sqlText);
  }

  @Override
  public scala.collection.immutable.Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
    return delegate.parseMultipartIdentifier(sqlText);
  }

  @Override
  public StructType parseRoutineParam(String sqlText) throws ParseException {
    return delegate.parseRoutineParam(sqlText);
  }

  @Override
  public SqlStatementSplitResult splitStatements(String sqlText) {
    return delegate.splitStatements(sqlText);
  }

  @Override
  public StructType parseTableSchema(String sqlText) throws ParseException {
    return delegate.parseTableSchema(sqlText);
  }

  @Override
  public DataType parseDataType(String sqlText) throws ParseException {
    return delegate.parseDataType(sqlText);
  }
}
