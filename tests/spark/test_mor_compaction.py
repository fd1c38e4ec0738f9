"""Merge-on-read compaction through SQL: schedule, writes while a compaction is pending, execute, show,
inline compaction, bad input, and a compaction interrupted mid-way; every step checked by hudi-rs."""

from __future__ import annotations

import logging

import pytest

from engine.filegroup.naming import base_file_name
from engine.services.compaction import pending_compactions, read_plan, start_compaction
from engine.table import Table
from engine.write.markers import IOType, Marker, create_marker
from sqlext.errors import ProcedureError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark

ONE_COMMIT = "options => 'hoodie.compact.inline.max.delta.commits=1'"


def state(session: Session, name: str, location: str, oracle: bool = True) -> list[tuple[int, str]]:
    """Rows as our reader sees them, and (``oracle``) as hudi-rs does. hudi-rs 0.5 does not merge a file
    slice on a pending compaction with the previous slice (docs/FORMAT.md §9.2), so while a compaction is
    pending only our reader (which follows Java's file-system view) is checked."""
    ours = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, v FROM {name}").collect())
    if oracle:
        theirs = sorted((r["id"], r["v"]) for r in hudi_rs_rows(location))
        assert ours == theirs
    return ours


def make_mor(session: Session, name: str, extra: str = "") -> str:
    session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts' {extra})""")
    session.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y')")
    session.sql(f"INSERT INTO {name} VALUES (2, 'b2', 2, 'x'), (3, 'c2', 2, 'y')")
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return entry.location


def test_schedule_write_while_pending_execute_and_show(session: Session, table_name: str) -> None:
    location = make_mor(session, table_name)
    scheduled = session.sql(f"CALL run_compaction(op => 'schedule', table => '{table_name}', {ONE_COMMIT})").collect()
    assert len(scheduled) == 1 and scheduled[0]["state"] == "REQUESTED" and scheduled[0]["operation_size"] == 2
    instant = scheduled[0]["timestamp"]
    # A write while the compaction is pending goes to the new file slice.
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a3', 3, 'x')")
    session.sql(f"DELETE FROM {table_name} WHERE id = 3")
    assert state(session, table_name, location, oracle=False) == [(1, "a3"), (2, "b2")]
    shown = session.sql(f"SHOW COMPACTION ON {table_name}").collect()
    assert [(r["timestamp"], r["state"]) for r in shown] == [(instant, "REQUESTED")]

    ran = session.sql(f"RUN COMPACTION ON {table_name} AT {instant}").collect()
    assert [(r["timestamp"], r["state"]) for r in ran] == [(instant, "COMPLETED")]
    table = Table.load(location)
    completed = [i for i in table.timeline.completed_commits() if i.timestamp == instant]
    assert completed and completed[0].action == "commit"
    metadata = table.commit_metadata(completed[0])
    assert metadata.compacted and metadata.operation_type == "COMPACT"
    assert state(session, table_name, location) == [(1, "a3"), (2, "b2")]
    ro = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized") \
        .load(location).select("id", "v").collect()
    assert sorted(tuple(r) for r in ro) == [(1, "a"), (2, "b2"), (3, "c2")]  # compacted base files only
    shown = session.sql(f"CALL show_compaction(table => '{table_name}')").collect()
    assert [(r["timestamp"], r["state"]) for r in shown] == [(instant, "COMPLETED")]


def test_run_compaction_with_nothing_to_do_returns_no_rows_and_says_why(
        session: Session, table_name: str, caplog: pytest.LogCaptureFixture) -> None:
    """As Hudi's RunCompactionProcedure: nothing pending or nothing triggered is an empty result, not an
    error; the reason is logged in the trigger strategy's own terms."""
    make_mor(session, table_name)
    with caplog.at_level(logging.INFO, logger="sqlext.procedures"):
        assert session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')").collect() == []
        assert session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}')").collect() == []
    said = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("sqlext.procedures"))
    assert "no pending compaction to execute" in said
    assert ("hoodie.compact.inline.trigger.strategy=NUM_COMMITS asks for 5 delta commits since the last "
            "compaction (hoodie.compact.inline.max.delta.commits), and there are 2") in said
    with pytest.raises(ProcedureError, match="op must be one of schedule, execute, scheduleAndExecute, run"):
        session.sql(f"CALL run_compaction(op => 'compact', table => '{table_name}')")
    with pytest.raises(ProcedureError, match="specific 20990101000000000 instants is not exist"):
        session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}', "
                    "instants => '20990101000000000')")


def test_help_shows_valid_values_and_real_defaults(session: Session) -> None:
    text = session.sql("CALL help(cmd => 'run_compaction')").collect()[0][0]
    op_line = next(line for line in text.splitlines() if line.strip().startswith("op "))
    assert "one of schedule, execute, scheduleAndExecute, run" in op_line and "true" in op_line
    limit_line = next(line for line in text.splitlines() if line.strip().startswith("limit "))
    assert "20" not in limit_line
    show = session.sql("CALL help(cmd => 'show_compaction')").collect()[0][0]
    assert any(line.split()[:3] == ["limit", "int", "20"] for line in show.splitlines()[2:])
    assert "outputType:" in text and "operation_size" in text


def test_run_compaction_errors_say_what_is_wrong(session: Session, table_name: str) -> None:
    make_mor(session, table_name)
    cow = f"{table_name}_cow"
    session.sql(f"CREATE TABLE {cow} (id INT) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    with pytest.raises(ProcedureError, match="needs a merge-on-read table"):
        session.sql(f"CALL run_compaction(op => 'run', table => '{cow}')")
    with pytest.raises(ProcedureError, match="is not exists"):
        session.sql("CALL no_such_procedure(a => 1)")
    assert "run_compaction" in " ".join(r[0] for r in session.sql("CALL help()").collect())


def test_interrupted_compaction_is_rolled_back_and_finished_by_the_next_run(
        session: Session, table_name: str) -> None:
    location = make_mor(session, table_name)
    instant = session.sql(f"CALL run_compaction(op => 'schedule', table => '{table_name}', {ONE_COMMIT})") \
        .collect()[0]["timestamp"]
    table = Table.load(location)
    operation = read_plan(table, instant)[0]
    start_compaction(table, instant)  # the run that "dies" after writing a partial file
    partial = base_file_name(operation.file_id, "9-9-9", instant)
    create_marker(table.storage, location, instant, Marker(operation.partition_path, partial, IOType.MERGE))
    partial_path = table.storage.join(location, operation.partition_path, partial)
    table.storage.write_bytes(partial_path, b"not a parquet file")
    assert state(session, table_name, location) == [(1, "a"), (2, "b2"), (3, "c2")]

    session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')")
    table = Table.load(location)
    assert not pending_compactions(table)
    assert not table.storage.exists(partial_path)
    assert state(session, table_name, location) == [(1, "a"), (2, "b2"), (3, "c2")]


def test_inline_compaction_after_enough_delta_commits(session: Session, table_name: str) -> None:
    location = make_mor(session, table_name, ", 'hoodie.compact.inline' = 'true', "
                                              "'hoodie.compact.inline.max.delta.commits' = '3'")
    table = Table.load(location)
    assert not [i for i in table.timeline.completed_commits() if i.action == "commit"]
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a4', 4, 'x')")
    table = Table.load(location)
    compactions = [i for i in table.timeline.completed_commits()
                   if i.action == "commit" and table.commit_metadata(i).compacted]
    assert len(compactions) == 1
    assert state(session, table_name, location) == [(1, "a4"), (2, "b2"), (3, "c2")]


@pytest.mark.parametrize("inline", [None, "false"])
def test_sql_writes_compact_inline_by_default_as_hudis_data_source_does(
        session: Session, table_name: str, inline: str | None) -> None:
    """Hudi's data source (DataSourceUtils.createHoodieConfig) turns inline compaction on for merge-on-read batch
    writes unless hoodie.compact.inline is set: the 5th delta commit is followed by a compaction."""
    extra = "" if inline is None else f", 'hoodie.compact.inline' = '{inline}'"
    location = make_mor(session, table_name, extra)  # 2 delta commits
    for i in range(3):
        session.sql(f"UPDATE {table_name} SET v = 'u{i}', ts = {10 + i} WHERE id = 1")
    table = Table.load(location)
    compactions = [i for i in table.timeline.completed_commits()
                   if i.action == "commit" and table.commit_metadata(i).compacted]
    assert len(compactions) == (1 if inline is None else 0)
    assert state(session, table_name, location) == [(1, "u2"), (2, "b2"), (3, "c2")]


def test_compaction_tasks_allocate_arrow_buffers_from_the_system_allocator(session: Session) -> None:
    """Python workers of sqlext's sessions use the system allocator (it returns freed pages, jemalloc keeps
    them: bench_compaction_memory), and a compaction task switches to it even where the worker does not."""
    import pyarrow as pa

    from engine.services.compaction import returning_memory_pool

    def backend(batches):  # type: ignore[no-untyped-def]
        import pyarrow as pa

        for _ in batches:
            yield pa.RecordBatch.from_pydict({"pool": [pa.default_memory_pool().backend_name]})

    rows = session.spark.range(2).mapInArrow(backend, "pool string").collect()
    assert {r["pool"] for r in rows} == {"system"}

    before = pa.default_memory_pool().backend_name
    with returning_memory_pool():
        assert pa.default_memory_pool().backend_name == "system"
        buffer = pa.array(range(1000))
    assert pa.default_memory_pool().backend_name == before
    assert buffer.sum().as_py() == 499500
