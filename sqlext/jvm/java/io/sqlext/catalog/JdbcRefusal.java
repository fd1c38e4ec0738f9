/*
 * sqlext: a refusal that reaches JDBC clients (beeline, PyHive, BI tools) as one line.
 */
package io.sqlext.catalog;

import java.io.PrintStream;
import java.io.PrintWriter;

import org.apache.hive.service.cli.HiveSQLException;

/**
 * The error a statement run by Spark's Thrift JDBC/ODBC server ({@code sqlext serve}) fails with when sqlext
 * refuses it: a {@link HiveSQLException} whose text is the message alone, with no stack trace and no cause.
 *
 * <p>Spark's {@code SparkExecuteStatementOperation} hands a {@code HiveSQLException} to the client as it is
 * (any other exception is wrapped, cause chain included), and {@code ThriftCLIService.GetOperationStatus}
 * sends the client {@code Utils.stringifyException} of it: the whole stack trace, about 85 lines in beeline
 * for a refused INSERT. This one prints as its message only, so beeline shows
 * {@code Error: <message> (state=42000,code=0)}.
 *
 * <p>Only loaded when a statement runs in the Thrift server ({@link #inThriftServer}), so sessions without
 * the server classes never need {@code HiveSQLException}.
 */
final class JdbcRefusal extends HiveSQLException {

  private static final long serialVersionUID = 1L;

  /** The class running a JDBC client's statement in Spark's Thrift server. */
  static final String STATEMENT_OPERATION =
      "org.apache.spark.sql.hive.thriftserver.SparkExecuteStatementOperation";

  /** SQLSTATE 42000: syntax error or access rule violation, as Spark's analysis errors on writes. */
  private static final String SQL_STATE = "42000";

  private JdbcRefusal(String message) {
    super(message, SQL_STATE);
  }

  /** Whether the current thread runs a JDBC client's statement (the Thrift server's operation is on the stack). */
  static boolean inThriftServer() {
    for (StackTraceElement frame : Thread.currentThread().getStackTrace()) {
      if (frame.getClassName().startsWith(STATEMENT_OPERATION)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Throws {@code message} as a one-line {@link HiveSQLException} (a checked exception, thrown from code that
   * does not declare it, as Scala code does); declared to return an exception so callers can write
   * {@code throw JdbcRefusal.raise(...)}.
   */
  static RuntimeException raise(String message) {
    JdbcRefusal.<RuntimeException>sneakyThrow(new JdbcRefusal(message));
    return new IllegalStateException("unreachable");
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneakyThrow(Throwable error) throws T {
    throw (T) error;
  }

  /** No stack trace: the client is shown the message, nothing else. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }

  /**
   * Kept empty: Spark's {@code Utils.getTryWithCallerStacktrace} (the lazily analyzed plan) sets the caller's
   * stack on the exception it rethrows, and Hive's {@code HiveSQLException.toTStatus} sends those frames to the
   * client as info messages.
   */
  @Override
  public void setStackTrace(StackTraceElement[] stackTrace) {
    // no frames
  }

  @Override
  public StackTraceElement[] getStackTrace() {
    return new StackTraceElement[0];
  }

  /** The message alone: what {@code Utils.stringifyException} sends a client polling the statement's status. */
  @Override
  public void printStackTrace(PrintWriter out) {
    out.println(this);
  }

  @Override
  public void printStackTrace(PrintStream out) {
    out.println(this);
  }

  /** The message alone (not prefixed with the class name), since clients print this. */
  @Override
  public String toString() {
    return getMessage();
  }
}
