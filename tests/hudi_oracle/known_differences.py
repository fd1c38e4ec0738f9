"""Known differences between Apache Hudi 0.15.0 (the oracle) and sqlext, each with its reason.

A difference the oracle finds that is not explained here fails its test; an ``EXACT`` entry that no longer
occurs fails too (the difference was fixed: delete its line). ``PATTERNS`` cover whole classes of statements
(and the seeded random scripts, whose statement numbers change with the generator): a pattern explains a
difference whose kind, statement and both sides' answers match its regular expressions.

Keys: ``<script>#<statement index>:<kind>`` for a statement, ``<script>:final:<table>:<reader>`` for a final
read (see :mod:`tests.hudi_oracle.compare`). Kinds: ``rows``, ``columns``, ``only_hudi_fails``,
``only_sqlext_fails``, ``error_phrase``, ``call_result``, ``read_fails``, ``final_rows``, ``final_columns``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.hudi_oracle.compare import Difference


@dataclass(frozen=True)
class Known:
    """A class of differences: regular expressions on the kind, the statement, Hudi's and sqlext's answer; with
    ``ours_as_hudi`` (a pattern and its replacement), sqlext's answer so rewritten must equal Hudi's exactly (the
    difference is that rewrite and nothing else)."""

    kind: str
    statement: str
    reason: str
    hudi: str = ""
    ours: str = ""
    ours_as_hudi: tuple[str, str] | None = None

    def explains(self, diff: Difference) -> bool:
        """Whether ``diff`` belongs to this class."""
        if self.ours_as_hudi is not None and re.sub(*self.ours_as_hudi, diff.ours) != diff.hudi:
            return False
        return bool(re.search(self.kind, diff.kind) and re.search(self.statement, diff.statement, re.I | re.S)
                    and re.search(self.hudi, diff.hudi, re.S) and re.search(self.ours, diff.ours, re.S))


_DML = r"^\s*(insert|merge|update|delete|create\s+table\s.*\sas\s+select)\b"

PATTERNS: list[Known] = [
    # Deliberate (README, "Session.sql"): sqlext's DML answers one row of counts, as Spark 4's Delta and
    # Databricks do; Hudi 0.15 on Spark 3.5 answers no rows.
    Known("columns", _DML, "DML returns num_affected_rows, ... (README: Session.sql)",
          hudi=r"^\[\] \[\]$", ours=r"^\['num_affected_rows', 'num_updated_rows', 'num_deleted_rows', "
                                   r"'num_inserted_rows'\]"),
    # Deliberate (engine/config.py: hoodie.write.complex.keygen.encode.single.record.key.field.name defaults to
    # true): a ComplexKeyGenerator table (several partition fields) with a one-field record key gets keys 'id:1';
    # Hudi 0.15.0 writes '1' (HUDI-7001). Only the keys differ (the rewrite must make the rows equal).
    Known(r"^(final_)?rows$", "", "deliberate: one-field ComplexKeyGenerator keys are written 'id:1', Hudi 0.15.0 "
          "writes '1' (engine/config.py hoodie.write.complex.keygen.encode.single.record.key.field.name)",
          ours=r"\['\w+:", ours_as_hudi=(r"\['\w+:([^',]*)', '", r"['\1', '")),
    # hudi-rs (the third reader) returns a TIMESTAMP partition column's values zone-aware (UTC), Spark naive: the
    # same instants (Hudi's table and sqlext's alike).
    # Deliberate: the consistent-hashing bucket index is not implemented; writes to such a table are refused
    # naming the key (an unsupported option is an error, never ignored).
    Known("only_sqlext_fails|error_phrase", r"^\s*insert\b", "deliberate: hoodie.index.bucket.engine=CONSISTENT_HASHING is not "
          "implemented (refused, naming the key)", ours=r"hoodie.index.bucket.engine=CONSISTENT_HASHING is not supported"),
    Known("final_rows", r"^read ", "hudi-rs 0.5 reads TIMESTAMP partition values as UTC-aware timestamps, Spark as "
          "naive ones: the same values", ours=r"\+00:00'", ours_as_hudi=(r"('ts:[0-9T:.-]+)\+00:00'", r"\1'")),
    # Hudi 0.15 itself fails MERGEs with a partial UPDATE SET on merge-on-read tables when the update goes to a log
    # file: HoodieAppendHandle asks ExpressionPayload.getInsertValue, whose processMatchedRecord evaluates the
    # unassigned columns' target values against a source-only row (ArrayIndexOutOfBoundsException: Index 4 out of
    # bounds for length 4, in its task log; the statement says only 'Merge into Hoodie table command failed').
    # sqlext runs them (README: deliberate differences).
    Known("only_hudi_fails", r"^\s*merge into .* when matched (and .* )?then update set (?!\*)",
          "Hudi 0.15 bug: a partial-update MERGE on a merge-on-read table fails in HoodieAppendHandle "
          "(ExpressionPayload.processMatchedRecord reads target columns from a source-only row: "
          "ArrayIndexOutOfBoundsException); sqlext runs it",
          hudi=r"Merge into Hoodie table command failed"),
]
"""Differences explained by class."""

_RECORD_KEY_UPDATE = ("sqlext refuses an UPDATE assigning the record key (Hudi 1.0's 'Detected disallowed assignment "
                      "clause'); Hudi 0.15 accepts it and writes id = 2 under record key '1', a row whose key "
                      "column and _hoodie_record_key disagree")
_HUDI_RS_PAYLOAD = ("hudi-rs 0.5 refuses to read a merge-on-read table whose payload class it cannot reproduce "
                    "(FirstValueAvroPayload), Hudi's table and sqlext's alike: a limit of the third reader")

_MOR_TARGET_RIGHT_VALUE = ("deliberate (sqlext/commands/merge/validate.py): a MERGE UPDATE on a merge-on-read table may "
                           "read target columns (price = s0.price + t0.price; the stored row is read, as on "
                           "copy-on-write); Hudi 0.15 refuses: 'Target table's field(price) cannot be the right-value "
                           "of the update clause for MOR table.'")

_STATIC_OVERWRITE_TYPED = ("Hudi 0.15 fails: INSERT OVERWRITE ... PARTITION (dt = <value>) of an INT, BIGINT or DATE "
                           "partition column (ClassCastException: UTF8String cannot be cast to Integer/Long, in its "
                           "static-partition file-index lookup) or a TIMESTAMP one (URISyntaxException on "
                           "'dt=2021-05-20%2000:00:00'); the suite (newer Hudi) expects the overwrite to succeed, as "
                           "sqlext's does")

_HUDI_RS_DROP_PARTITION_COLUMNS = ("hudi-rs 0.5 refuses tables written with hoodie.datasource.write.drop.partition."
                                   "columns=true ('Only support when ... is disabled'), Hudi's and sqlext's alike: a "
                                   "limit of the third reader")
_HUDI_RS_STRUCT = ("harness: hudi-rs rows hold a STRUCT value as a Python dict, which values.jsonable renders as a "
                   "map's sorted pairs while Spark's Row renders as a dict; the values are the same")

_MISSING_ERROR_CLASS = ("Hudi 0.15 fails too, but with Spark 3.5's INTERNAL_ERROR 'Cannot find main error class "
                        "_LEGACY_ERROR_TEMP_2309' (the class Hudi raises is not in Spark 3.5.9's error classes), so its "
                        "message does not name `new_col`; sqlext's UNRESOLVED_COLUMN does")
_HUDI_RS_STORED_PARTITION_VALUE = (
    "hudi-rs reads a partition column's value from the data file; Hudi 0.15's copy-on-write reader (and sqlext's, "
    "README: reads) from the partition path. They differ here because a global index with "
    "hoodie.simple.index.update.partition.path=false kept id 1 under partition=2023-10-01 while its partition "
    "column became '2023-10-02'")
_BULK_SIMPLE_BUCKET = ("deliberate (README, indexes): Hudi 0.15 writes a second bulk_insert into a COW SIMPLE-bucket "
                       "table (row writer off) as a new base file of each bucket's file group, hiding the rows stored "
                       "there: (9, 'a3,3') in partition side is lost when (13, 'a13,13') lands in its bucket; newer "
                       "Hudi refuses the statement. sqlext writes it as an insert into the buckets and keeps both")

_INSERT_WITHOUT_KEY = ("deliberate (README, MERGE INTO): a MERGE INSERT clause omitting the record key column "
                       "(insert (name, price, ts, dt) ...) is refused with Hudi 1.x's 'No matching assignment found "
                       "for target table record key field `id`'; Hudi 0.15 accepts it, keys the record by the "
                       "source's column and writes the key column as null")
_MOR_UPDATE_WITHOUT_KEY = ("Hudi 0.15 bug: a merge-on-read MERGE whose UPDATE SET omits a column (here the record key) "
                           "fails in HoodieAppendHandle (ExpressionPayload.processMatchedRecord: "
                           "ArrayIndexOutOfBoundsException; the newer suite expects 'No matching assignment found for "
                           "target table record key field `id`'); sqlext updates the row, keeping the stored key")
_HUDI_MOR_GLOBAL_MOVE = ("Hudi 0.15 fails (wrong rows): on a merge-on-read table with GLOBAL_SIMPLE and "
                         "hoodie.simple.index.update.partition.path=true its MERGE applies every matched source row "
                         "(ids 2 and 4, whose clause conditions do not hold, are updated; the deletes of 5 and 6 "
                         "are not applied); sqlext gives the rows the suite expects")

_BATCH_TIE = ("not a rule: the INSERT's batch holds three rows of key '1' with the same ordering value (dt = 123); "
               "which one survives depends on the row order after Spark's UNION (a shuffle), in Hudi as in sqlext: "
               "Hudi kept hour = 11 (the suite's check), sqlext another")
_FAIL_POLICY = ("deliberate (README, INSERT INTO): with hoodie.datasource.insert.dup.policy=fail sqlext checks incoming "
                "keys against the stored ones before writing and fails 'Duplicate key found for insert statement' "
                "(as the newer suite expects); Hudi 0.15 fails only when a record meets its stored copy in a merge "
                "handle, so this INSERT of a stored key (an upsert, or an insert routed to a new file) passes")
_OVERWRITE_COLUMN_LIST = ("Hudi 0.15 fails: INSERT INTO / OVERWRITE t (id, price, name) VALUES ... ignores the column list "
                          "([INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST]: 'aaa' for the DOUBLE column); sqlext "
                          "writes by the list, as the suite expects")
_BULK_COMPLEX_AVRO = ("Hudi 0.15 fails: bulk insert into a table whose hoodie.table.keygenerator.class is "
                      "ComplexAvroKeyGenerator (task failure; the suite tests a later fix); sqlext writes it")

_HUDI_RS_LOG_ORDER = ("hudi-rs 0.5 merges a merge-on-read table's log records by arrival, without the ordering value: "
                      "an update with a smaller preCombineField value wins in hudi-rs, Hudi's Spark reader and sqlext "
                      "keep the greater one (measured on Hudi's files and on sqlext's alike): a limit of the third "
                      "reader")
_SMALL_FILE_BY_BYTES = ("not a rule: two log-free file groups of nearly equal size (435,077 and 435,168 bytes in Hudi's "
                        "table; 434,673 and 434,710 in sqlext's) compete to take a MERGE's inserts as the smallest "
                        "file; parquet files of the two writers differ by bytes, so each picks another, and a key "
                        "stored three times then has its update merged into a different copy set")
_NO_OP_REWRITES = ("not a rule: Hudi 0.15 routes every MERGE source row before its ExpressionPayload drops the ones no "
                   "clause takes, so it rewrites their file groups unchanged (a new file version each); sqlext writes "
                   "nothing for them. A later run_clean(retain_commits => 1) then finds an old version to delete in "
                   "Hudi's table (one row) and none in sqlext's (no clean): rows are the same")
_DUPLICATE_UPDATE_TIE = ("not a rule: an UPDATE of a key stored three times in a merge-on-read table without "
                         "preCombineField writes one log record per key; which copy's new value survives the "
                         "de-duplication is the order Spark's shuffle gives, in Hudi as in sqlext")

EXACT: dict[str, str] = {
    "seed112#13:rows": _SMALL_FILE_BY_BYTES,
    "seed118#10:call_result": _NO_OP_REWRITES,
    "seed172#8:call_result": _NO_OP_REWRITES,
    "seed173#15:rows": _DUPLICATE_UPDATE_TIE,
    "seed183:final:t:hudi_rs_reads_hudi": _HUDI_RS_LOG_ORDER,
    "seed183:final:t:hudi_rs_reads_sqlext": _HUDI_RS_LOG_ORDER,
    "seed198:final:t:hudi_rs_reads_sqlext": _HUDI_RS_LOG_ORDER,
    # Hudi's DML suites (tests/hudi_oracle/suite_*.py)
    "mit2_mor_table_2#13:only_hudi_fails": _MOR_TARGET_RIGHT_VALUE,
    **{f"mit_changing_partition_global_simple_cow_stay:final:t:{reader}": _HUDI_RS_STORED_PARTITION_VALUE
       for reader in ("hudi_rs_reads_hudi", "hudi_rs_reads_sqlext")},
    "ins_multiple_bulk_cow_simple_bucket#5:rows": _BULK_SIMPLE_BUCKET,
    "ins_partition_pruning_single#2:rows": _BATCH_TIE,
    "ins_dup_policy_fail_insert_cow#5:only_sqlext_fails": _FAIL_POLICY,
    "ins_dup_policy_fail_insert_mor#5:only_sqlext_fails": _FAIL_POLICY,
    "ins_table_dup_policy_fail#4:only_sqlext_fails": _FAIL_POLICY,
    "ins_insert_overwrite_column_list#1:only_hudi_fails": _OVERWRITE_COLUMN_LIST,
    "ins_insert_into_column_list#1:only_hudi_fails": _OVERWRITE_COLUMN_LIST,
    "ins_insert_into_column_list#7:only_hudi_fails": _OVERWRITE_COLUMN_LIST,
    "ins_insert_overwrite_column_list#8:only_hudi_fails": _OVERWRITE_COLUMN_LIST,
    "ins_bulk_complex_avro_keygen#3:only_hudi_fails": _BULK_COMPLEX_AVRO,
    **{f"mit2_assignment_anti_patterns_cow_{m}#{i}:only_sqlext_fails": _INSERT_WITHOUT_KEY
       for m in ("commit", "event") for i in (3, 4)},
    **{f"mit2_assignment_anti_patterns_mor_{m}#{i}:only_sqlext_fails": _INSERT_WITHOUT_KEY
       for m in ("commit", "event") for i in (5, 6)},
    **{f"mit2_assignment_anti_patterns_mor_{m}#{i}:only_hudi_fails": _MOR_UPDATE_WITHOUT_KEY
       for m in ("commit", "event") for i in (3, 4)},
    "mit_changing_partition_global_simple_mor_move#18:rows": _HUDI_MOR_GLOBAL_MOVE,
    "mit2_complex_data_type:final:t:hudi_rs_reads_hudi": _HUDI_RS_STRUCT,
    "mit2_complex_data_type:final:t:hudi_rs_reads_sqlext": _HUDI_RS_STRUCT,
    **{f"mit_unresolved_columns_{kind}#{i}:error_phrase": _MISSING_ERROR_CLASS for kind in ("cow", "mor") for i in (3, 4)},
    **{f"mit_no_schema_evolution_{kind}#3:error_phrase": _MISSING_ERROR_CLASS for kind in ("cow", "mor")},
    **{f"ins_drop_partition_columns_{kind}:final:t:hudi_rs_reads_{side}": _HUDI_RS_DROP_PARTITION_COLUMNS
       for kind in ("cow", "mor") for side in ("hudi", "sqlext")},
    **{f"ins_nested_key_and_precombine_{kind}:final:t:hudi_rs_reads_{side}": _HUDI_RS_STRUCT
       for kind in ("cow", "mor") for side in ("hudi", "sqlext")},
    "ins_partition_column_types#7:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_partition_column_types#12:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_partition_column_types#17:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_partition_column_types#22:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_partition_column_types_logical_timestamp#3:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_partition_column_types_logical_timestamp#8:only_hudi_fails": _STATIC_OVERWRITE_TYPED,
    "ins_first_value_avro_payload:final:t:hudi_rs_reads_hudi": _HUDI_RS_PAYLOAD,
    "ins_first_value_avro_payload:final:t:hudi_rs_reads_sqlext": _HUDI_RS_PAYLOAD,
    "update_record_key#2:only_sqlext_fails": _RECORD_KEY_UPDATE,
}
"""Single corpus differences: key -> reason."""


def reason(diff: Difference) -> str | None:
    """Why ``diff`` is expected, or None when it is new."""
    if diff.key in EXACT:
        return EXACT[diff.key]
    for known in PATTERNS:
        if known.explains(diff):
            return known.reason
    return None


def listed_for(script: str) -> set[str]:
    """The EXACT keys of one script."""
    return {k for k in EXACT if k.startswith(f"{script}#") or k.startswith(f"{script}:")}
