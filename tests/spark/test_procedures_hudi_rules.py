"""Procedures, table options and payload classes as Hudi 0.15 answers them: what a user types in Hudi's
TestCompactionProcedure, TestCleanProcedure, TestCallProcedure, TestCreateTable and TestClusteringProcedure,
with Hudi's rows and error words; each payload class merged as Hudi's preCombine / combineAndGetUpdateValue."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sqlext.session import Session

pytestmark = pytest.mark.spark

PAYLOADS = "org.apache.hudi.common.model."
STRATEGY = "org.apache.hudi.table.action.compact.strategy."


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


@pytest.fixture
def one_delta_commit(session: Session) -> Iterator[None]:
    """``withSQLConf("hoodie.compact.inline" -> "false", "hoodie.compact.inline.max.delta.commits" -> "1")``."""
    session.sql("SET hoodie.compact.inline = false")
    session.sql("SET hoodie.compact.inline.max.delta.commits = 1")
    try:
        yield
    finally:
        session.sql("RESET hoodie.compact.inline.max.delta.commits")
        session.sql("RESET hoodie.compact.inline")


def mor(session: Session, name: str, extra: str = "") -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.parquet.small.file.limit' = '0' {extra})""")


# ---------------------------------------------------------------- run_compaction / show_compaction


def test_run_compaction_schedule_returns_the_plan_and_show_lists_every_compaction(
        session: Session, table_name: str) -> None:
    # TestCompactionProcedure "by Table" (there 4 inserts + 1 update reach the default 5 delta commits, with inline
    # compaction off; here the trigger is lowered in the table's properties, which the procedure reads as Hudi's does).
    mor(session, table_name, ", 'hoodie.compact.inline' = 'false', 'hoodie.compact.inline.max.delta.commits' = '1'")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'a2', 10, 1000)")
    session.sql(f"UPDATE {table_name} SET price = 11 WHERE id = 1")
    result_a = rows(session, f"CALL run_compaction(op => 'schedule', table => '{table_name}')")
    session.sql(f"UPDATE {table_name} SET price = 12 WHERE id = 2")
    result_b = rows(session, f"CALL run_compaction('schedule', '{table_name}')")  # positional
    assert len(result_a) == 1 and len(result_b) == 1
    assert result_a[0][2] == result_b[0][2] == "REQUESTED" and result_a[0][1] >= 1
    shown = rows(session, f"CALL show_compaction(table => '{table_name}', limit => 10)")
    assert sorted(shown) == sorted(result_a + result_b)
    # execute the second plan; the compaction becomes a commit and is still listed
    ran = rows(session, f"CALL run_compaction(op => 'run', table => '{table_name}', timestamp => {result_b[0][0]})")
    assert ran == [(result_b[0][0], result_b[0][1], "COMPLETED")]
    assert rows(session, f"SELECT id, name, price, ts FROM {table_name} ORDER BY id") == [
        (1, "a1", 11.0, 1000), (2, "a2", 12.0, 1000)]
    assert len(rows(session, f"CALL show_compaction('{table_name}')")) == 2
    assert len(rows(session, f"SHOW COMPACTION ON {table_name}")) == 2
    ran = rows(session, f"CALL run_compaction(op => 'run', table => '{table_name}', timestamp => {result_a[0][0]})")
    assert ran == [(result_a[0][0], result_a[0][1], "COMPLETED")]
    assert sorted(r[2] for r in rows(session, f"CALL show_compaction(table => '{table_name}')")) == \
        ["COMPLETED", "COMPLETED"]
    with pytest.raises(Exception, match="specific 12345 instants is not exist"):
        session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', timestamp => 12345L)")


def test_run_compaction_with_a_strategy_in_options(session: Session, table_name: str,
                                                   one_delta_commit: None) -> None:
    # TestCompactionProcedure "with options": LogFileNumBasedCompactionStrategy takes slices with >= 3 logs.
    mor(session, table_name)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000)")
    session.sql(f"UPDATE {table_name} SET name = 'a2' WHERE id = 1")
    session.sql(f"UPDATE {table_name} SET name = 'a3' WHERE id = 1")
    call = (f"CALL run_compaction(table => '{table_name}', op => 'run', options => \"\n"
            f" hoodie.compaction.strategy={STRATEGY}LogFileNumBasedCompactionStrategy,\n"
            " hoodie.compaction.logfile.num.threshold=3\n\")")
    assert rows(session, call) == []
    session.sql(f"UPDATE {table_name} SET name = 'a4' WHERE id = 1")
    result = rows(session, call)
    assert len(result) == 1 and result[0][1:] == (1, "COMPLETED")
    assert rows(session, f"SELECT id, name FROM {table_name}") == [(1, "a4")]


def test_run_compaction_operations_and_instants(session: Session, table_name: str, one_delta_commit: None) -> None:
    # TestCompactionProcedure "with operation" and "with specific instants".
    mor(session, table_name)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, 1000)")
    session.sql(f"UPDATE {table_name} SET name = 'a2' WHERE id = 1")
    assert rows(session, f"CALL run_compaction(table => '{table_name}', op => 'execute')") == []
    scheduled = rows(session, f"CALL run_compaction(table => '{table_name}', op => 'schedule')")
    assert len(scheduled) == 1
    executed = rows(session, f"CALL run_compaction(table => '{table_name}', op => 'execute', "
                             f"instants => '{scheduled[0][0]}')")
    assert executed == [(scheduled[0][0], scheduled[0][1], "COMPLETED")]
    with pytest.raises(Exception, match="specific 000000 instants is not exist"):
        session.sql(f"CALL run_compaction(table => '{table_name}', op => 'execute', instants => '000000')")
    session.sql(f"UPDATE {table_name} SET name = 'a3' WHERE id = 1")
    assert len(rows(session, f"CALL run_compaction(table => '{table_name}', op => 'scheduleAndExecute')")) == 1


# ---------------------------------------------------------------- run_clean

RUN_CLEAN_COLUMNS = ["start_clean_time", "time_taken_in_millis", "total_files_deleted", "earliest_commit_to_retain",
                     "bootstrap_part_metadata", "version"]


@pytest.mark.parametrize("spelling", ["hoodie.cleaner", "hoodie.clean"])
def test_run_clean_reads_both_key_spellings_and_options_win(session: Session, table_name: str,
                                                            spelling: str) -> None:
    # One file group rewritten 4 times; KEEP_LATEST_FILE_VERSIONS keeping 1 deletes the 3 older base files.
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.clean.automatic' = 'false',
                       '{spelling}.policy' = 'KEEP_LATEST_FILE_VERSIONS', '{spelling}.fileversions.retained' = '3')""")
    for i in range(4):
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'v{i}', {i})")
    # the table keeps 3 versions: one file is deleted
    first = session.sql(f"CALL run_clean(table => '{table_name}')")
    assert first.columns == RUN_CLEAN_COLUMNS
    (row,) = first.collect()
    assert row["total_files_deleted"] == 1 and row["version"] == 2 and row["bootstrap_part_metadata"] == "{}"
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'v4', 4)")
    # options under the other spelling win over the table's: keep 1 version of the 4 left
    other = "hoodie.clean" if spelling == "hoodie.cleaner" else "hoodie.cleaner"
    (row,) = rows(session, f"CALL run_clean(table => '{table_name}', options => '{other}.fileversions.retained=1')")
    assert row[2] == 3
    assert rows(session, f"CALL run_clean(table => '{table_name}', file_versions_retained => 1)") == []
    assert rows(session, f"SELECT name FROM {table_name}") == [("v4",)]


# ---------------------------------------------------------------- arguments

def test_argument_errors_in_hudis_words_and_names_of_both_releases(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
    with pytest.raises(Exception, match="Argument: table is required"):
        session.sql("CALL show_commits(limit => 10)")
    with pytest.raises(Exception, match="Argument: instant_time is required"):
        session.sql(f"CALL rollback_to_instant(table => '{table_name}')")
    with pytest.raises(Exception, match=r"procedure: run_compcation is not exists; did you mean run_compaction\?"):
        session.sql(f"CALL run_compcation(op => 'run', table => '{table_name}')")
    with pytest.raises(Exception, match="Table name or table path must be given one"):
        session.sql("CALL run_compaction(op => 'run')")
    with pytest.raises(Exception, match="has no parameter tabel; did you mean table"):
        session.sql(f"CALL show_commits(tabel => '{table_name}')")
    (commit,) = [r[0] for r in rows(session, f"CALL show_commits(table => '{table_name}')")]
    # comments (0.14/0.15) and comment; startTs (0.14/0.15) and start_ts
    assert rows(session, f"CALL create_savepoint(table => '{table_name}', commit_time => '{commit}', "
                         "comment => 'before the change')") == [(True,)]
    for spelling in ("startTs => '0', endTs => '99999999999999999'", "start_ts => '0', end_ts => '99999999999999999'"):
        assert rows(session, f"CALL show_archived_commits(table => '{table_name}', {spelling})") == []


# ---------------------------------------------------------------- refusals

def test_create_table_refusals_in_hudis_words(session: Session, table_name: str, tmp_path: object) -> None:
    columns = "(id INT, name STRING, ts BIGINT) USING hudi"
    with pytest.raises(Exception, match="'type' must be 'cow' or 'mor'"):
        session.sql(f"CREATE TABLE {table_name} {columns} TBLPROPERTIES (primaryKey = 'id', type = 'cow1')")
    with pytest.raises(Exception, match="The value of hoodie.index.type should be one of HBASE,INMEMORY,BLOOM,"
                                        "GLOBAL_BLOOM,SIMPLE,GLOBAL_SIMPLE,BUCKET,FLINK_STATE,RECORD_INDEX, but was "
                                        "BUCKET_XXX"):
        session.sql(f"CREATE TABLE {table_name} {columns} TBLPROPERTIES (primaryKey = 'id', type = 'mor', "
                    "'hoodie.index.type' = 'BUCKET_XXX')")
    with pytest.raises(Exception, match="Compaction is not supported on a CopyOnWrite table"):
        session.sql(f"CREATE TABLE {table_name} USING hudi TBLPROPERTIES (primaryKey = 'id', type = 'cow', "
                    "hoodie.compact.inline = 'true') AS SELECT 1 AS id, 'a1' AS name, 10 AS price, 1000 AS ts")
    assert session.catalog.lookup_name(table_name) is None
    with pytest.raises(Exception, match=f"payload class {PAYLOADS}PartialUpdateAvroPayload is not supported"):
        session.sql(f"CREATE TABLE {table_name} {columns} TBLPROPERTIES (primaryKey = 'id', "
                    f"preCombineField = 'ts', payloadClass = '{PAYLOADS}PartialUpdateAvroPayload')")
    assert session.catalog.lookup_name(table_name) is None


def test_writes_refused_before_anything_is_written(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.index.type' = 'BUCKET', "
                "'hoodie.bucket.index.num.buckets' = '2')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
    with pytest.raises(Exception, match="Clustering is not supported for bucket index"):
        session.sql(f"CALL run_clustering(table => '{table_name}')")
    session.sql("SET hoodie.compact.inline = true")
    try:
        with pytest.raises(Exception, match="Compaction is not supported on a CopyOnWrite table"):
            session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 1)")
    finally:
        session.sql("RESET hoodie.compact.inline")
    session.sql(f"SET hoodie.datasource.write.payload.class = {PAYLOADS}PartialUpdateAvroPayload")
    try:
        with pytest.raises(Exception, match=f"payload class {PAYLOADS}PartialUpdateAvroPayload is not supported"):
            session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 1)")
    finally:
        session.sql("RESET hoodie.datasource.write.payload.class")
    assert rows(session, f"SELECT id, name FROM {table_name}") == [(1, "a")]


# ---------------------------------------------------------------- payload classes

def payload_table(session: Session, name: str, payload: str, kind: str, extra_column: str = "") -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT {extra_column}) USING hudi
        TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts',
                       payloadClass = '{PAYLOADS}{payload}')""")


def reads_the_same_after_compaction(session: Session, table: str, expected: list[tuple[int, str, int]]) -> None:
    """Compact the merge-on-read ``table`` and check its rows (id, name, ts) are still ``expected``."""
    ran = rows(session, f"CALL run_compaction(op => 'run', table => '{table}', "
                        "options => 'hoodie.compact.inline.max.delta.commits=1')")
    assert [r[2] for r in ran] == ["COMPLETED"]
    assert rows(session, f"SELECT id, name, ts FROM {table} ORDER BY id") == expected


@pytest.mark.parametrize(("payload", "kind", "expected"), [
    # (in one INSERT: ties keep the later / first; against the stored record: lower ts loses or wins)
    ("OverwriteWithLatestAvroPayload", "cow", [(1, "tie-2", 5), (2, "lower", 1), (3, "higher", 9)]),
    ("DefaultHoodieRecordPayload", "cow", [(1, "tie-2", 5), (2, "stored", 5), (3, "higher", 9)]),
    ("EventTimeAvroPayload", "mor", [(1, "tie-2", 5), (2, "stored", 5), (3, "higher", 9)]),
    ("FirstValueAvroPayload", "cow", [(1, "tie-1", 5), (2, "stored", 5), (3, "higher", 9)]),
    ("FirstValueAvroPayload", "mor", [(1, "tie-1", 5), (2, "stored", 5), (3, "higher", 9)]),
])
def test_payload_merges_as_hudi(session: Session, table_name: str, payload: str, kind: str,
                                expected: list[tuple[int, str, int]]) -> None:
    payload_table(session, table_name, payload, kind)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'tie-1', 5), (1, 'tie-2', 5), (2, 'stored', 5), "
                "(3, 'stored', 5)")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'lower', 1), (3, 'higher', 9)")
    assert rows(session, f"SELECT id, name, ts FROM {table_name} ORDER BY id") == expected
    if kind == "mor":
        reads_the_same_after_compaction(session, table_name, expected)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_first_value_keeps_the_stored_record_on_equal_ordering_values(session: Session, table_name: str,
                                                                     kind: str) -> None:
    """FirstValueAvroPayload: against the stored record an incoming one wins only with a greater ordering value
    (``needUpdatingPersistedRecord``: persisted < incoming), in the merge handle and when a reader or compaction
    merges a log record into its base row; of two log records with equal values the older is kept
    (``preCombine``). Checked against Apache Hudi 0.15: [1, base, 5], [2, log-2, 6]."""
    payload_table(session, table_name, "FirstValueAvroPayload", kind)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'base', 5), (2, 'base', 5)")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'log-1', 5)")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'log-2', 5), (2, 'log-2', 6)")
    expected = [(1, "base", 5), (2, "log-2", 6)]
    assert rows(session, f"SELECT id, name, ts FROM {table_name} ORDER BY id") == expected
    if kind == "mor":
        reads_the_same_after_compaction(session, table_name, expected)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_overwrite_non_defaults_keeps_stored_values_of_null_columns(session: Session, table_name: str,
                                                                    kind: str) -> None:
    payload_table(session, table_name, "OverwriteNonDefaultsWithLatestAvroPayload", kind, ", price DOUBLE")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 5, 10.0), (2, 'b', 5, 20.0)")
    # a null column keeps the stored value; a lower ordering value still wins (OverwriteWithLatest underneath)
    session.sql(f"INSERT INTO {table_name} VALUES (1, NULL, 6, 11.0), (2, 'b2', 1, NULL)")
    expected = [(1, "a", 6, 11.0), (2, "b2", 1, 20.0)]
    assert rows(session, f"SELECT id, name, ts, price FROM {table_name} ORDER BY id") == expected
    if kind == "mor":
        ran = rows(session, f"CALL run_compaction(op => 'run', table => '{table_name}', "
                            "options => 'hoodie.compact.inline.max.delta.commits=1')")
        assert [r[2] for r in ran] == ["COMPLETED"]
        assert rows(session, f"SELECT id, name, ts, price FROM {table_name} ORDER BY id") == expected


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_aws_dms_payload_deletes_op_d(session: Session, table_name: str, kind: str) -> None:
    payload_table(session, table_name, "AWSDmsAvroPayload", kind, ", Op STRING")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'I'), (2, 'b', 1, 'I'), (3, 'c', 1, 'D')")
    assert rows(session, f"SELECT id, name, Op FROM {table_name} ORDER BY id") == [(1, "a", "I"), (2, "b", "I")]
    # Op = 'D' deletes whatever the ordering value (OverwriteWithLatestAvroPayload underneath)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 0, 'D'), (2, 'b2', 2, 'U')")
    assert rows(session, f"SELECT id, name, Op FROM {table_name} ORDER BY id") == [(2, "b2", "U")]
