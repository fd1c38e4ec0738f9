/*
 * sqlext: plain Spark SQL statements that would change a Hudi table get one clear error.
 */
package io.sqlext.catalog;

import org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.InsertIntoStatement;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

/**
 * A resolution rule (installed by {@link SqlextExtensions}) that refuses INSERT, UPDATE, DELETE and MERGE on a
 * Hudi table of sqlext's session catalog when they run as plain Spark SQL ({@code sqlext serve},
 * {@code spark.sql}): sqlext writes Hudi tables itself ({@code sqlext} shell, {@code Session.sql}), so the
 * user gets one line saying where writes go instead of Spark's errors about the meta columns ("not
 * enough data columns") or unsupported row-level operations.
 */
public final class RefuseHudiWrites extends Rule<LogicalPlan> {

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    LogicalPlan target = null;
    String what = null;
    if (plan instanceof InsertIntoStatement) {
      target = ((InsertIntoStatement) plan).table();
      what = "INSERT";
    } else if (plan instanceof V2WriteCommand) {
      target = (LogicalPlan) ((V2WriteCommand) plan).table();
      what = "INSERT";
    } else if (plan instanceof UpdateTable) {
      target = ((UpdateTable) plan).table();
      what = "UPDATE";
    } else if (plan instanceof DeleteFromTable) {
      target = ((DeleteFromTable) plan).table();
      what = "DELETE";
    } else if (plan instanceof MergeIntoTable) {
      target = ((MergeIntoTable) plan).targetTable();
      what = "MERGE";
    }
    if (target != null) {
      LogicalPlan relation = EliminateSubqueryAliases.apply(target);
      if (relation instanceof DataSourceV2Relation
          && ((DataSourceV2Relation) relation).table() instanceof HudiTable) {
        throw HudiTable.writesGoThroughSqlext(what, ((DataSourceV2Relation) relation).table().name());
      }
    }
    return plan;
  }
}
