"""Hudi's DML suites (hudi-spark ``org.apache.spark.sql.hudi.dml``: TestInsertTable, TestMergeIntoTable,
TestMergeIntoTable2, TestMergeIntoTableWithNonRecordKeyField, TestUpdateTable, TestDeleteTable) ported as oracle
scripts, one module per suite family.

The whole port is 203 scripts and about 1,850 statements (both engines run each, then six final reads per
table): far past the default run's budget (about 4 minutes for the corpus). The default run takes :data:`SUITES`,
seven scripts (79 statements) across the six suites, chosen by :data:`DEFAULT`; every other script, the other table
types and settings of the same cases included, is in :data:`SUITES_EXTENDED` (``-m extended``).
"""

from __future__ import annotations

from tests.hudi_oracle import suite_insert, suite_insert2, suite_merge, suite_merge2, suite_update_delete
from tests.hudi_oracle.scripts import Script

ALL: list[Script] = [*suite_update_delete.SCRIPTS, *suite_update_delete.EXTENDED, *suite_merge.SCRIPTS,
                     *suite_merge.EXTENDED, *suite_merge2.SCRIPTS, *suite_merge2.EXTENDED, *suite_insert.SCRIPTS,
                     *suite_insert2.SCRIPTS]
"""Every ported script."""

DEFAULT: tuple[str, ...] = (
    "upd_non_pk_condition_mor", "del_no_pk_mor", "mit_basic_optimized", "mit2_mor_table_2",
    "mitnrk_pkless_complex_cond", "ins_exceptions", "ins_sql_operation_insert_mor",
)
"""The scripts of the default run (names)."""

SUITES: list[Script] = [s for s in ALL if s.name in DEFAULT]
"""Scripts of the default run."""

SUITES_EXTENDED: list[Script] = [s for s in ALL if s.name not in DEFAULT]
"""Scripts run under ``-m extended`` only."""

assert len(SUITES) == len(DEFAULT), sorted(set(DEFAULT) - {s.name for s in SUITES})
