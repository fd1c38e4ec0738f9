"""The hudi-rs oracle on a scripted merge-on-read history that goes through the table services: inserts,
upserts into log files, deletes, a compaction scheduled and writes while it is pending, the compaction run,
a deltacommit that fails and is rolled back, and more writes after it.

After every step: our snapshot (``spark.read.format("hudi")`` through SQL) equals a Python model and what
hudi-rs reads; our read-optimized query equals hudi-rs's read-optimized read; time travel to every earlier
commit and incremental reads of every commit range agree between both readers. hudi-rs 0.5 does not merge a
slice on a pending compaction with the previous one (docs/FORMAT.md §9.2), so while a compaction is pending
only our reader is checked against the model.
"""

from __future__ import annotations

import pytest

import engine.spark.writer as spark_writer
from engine.errors import WriteError
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from sqlext.session import Session
from tests.conftest import hudi_rs_rows
from tests.integration.test_oracle_histories import Model, Row, a, oracle, ours, run_step

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

ONE_COMMIT = "options => 'hoodie.compact.inline.max.delta.commits=1'"


def read_optimized(session: Session, location: str) -> list[Row]:
    found = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized") \
        .load(location).select("id", "name", "v", "ts", "p").collect()
    return sorted(tuple(r) for r in found)  # type: ignore[misc]


def incremental(session: Session, location: str, begin: str, end: str) -> list[Row]:
    found = session.spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", begin) \
        .option("hoodie.datasource.read.end.instanttime", end).load(location) \
        .select("id", "name", "v", "ts", "p").collect()
    return sorted(tuple(r) for r in found)  # type: ignore[misc]


def fail_next_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the next write die after its files are written, before it commits."""
    def die(*args: object, **kwargs: object) -> None:
        raise RuntimeError("injected failure before commit")

    monkeypatch.setattr(spark_writer, "finish_write", die)


@pytest.mark.extended  # a minute; the oracle histories and the crash suite cover its steps by default
def test_mor_history_through_compaction_and_rollback(
        session: Session, table_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, v DOUBLE, ts BIGINT, p STRING) USING hudi
        PARTITIONED BY (p) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')""")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    location = entry.location
    model = Model(partitioned=True, mor=True)
    checked: list[tuple[str, list[Row]]] = []
    pending = False

    def check(step: str) -> None:
        table = Table.load(location)
        instant = table.timeline.completed_commits()[-1].timestamp
        expected = model.snapshot()
        assert ours(session, table_name) == expected, f"ours after {step}"
        if not pending:
            assert oracle(location) == expected, f"hudi-rs after {step}"
            assert read_optimized(session, location) == oracle(location, read_optimized="true"), \
                f"read-optimized after {step}"
        if not checked or checked[-1][0] != instant:
            checked.append((instant, expected))
        for earlier, rows in checked:
            assert ours(session, table_name, as_of=earlier) == rows, f"ours as of {earlier} after {step}"
            if not pending:
                assert oracle(location, as_of=earlier) == rows, f"hudi-rs as of {earlier} after {step}"
        if not pending:
            previous = "0"
            for earlier, _ in checked:
                assert incremental(session, location, previous, earlier) == \
                    oracle(location, begin=previous, end=earlier), f"incremental ({previous}, {earlier}]"
                previous = earlier

    def step(*what: object) -> None:
        run_step(session, table_name, model, what)
        check(str(what[0]))

    step("insert", [a(1), a(2), a(3, p="y"), a(4, p="y"), a(5, p="z")])
    step("insert", [a(1, ts=2, name="one"), a(3, ts=2, p="y", name="three"), a(6, p="z")])
    # Updates live in log files: read-optimized still returns the base files' rows.
    assert (1, "n1", 0.5, 1, "x") in read_optimized(session, location)
    step("delete", {2})
    step("merge", [a(4, ts=3, p="y", name="four"), a(7, ts=3, p="x"), a(5, ts=3, p="z")], {5})
    step("update", {1, 6}, "upd")

    scheduled = session.sql(f"CALL run_compaction(op => 'schedule', table => '{table_name}', {ONE_COMMIT})") \
        .collect()
    assert scheduled and scheduled[0]["state"] == "REQUESTED"
    pending = True
    step("insert", [a(3, ts=9, p="y", name="during"), a(8, p="x")])
    step("delete", {6})

    ran = session.sql(f"CALL run_compaction(op => 'execute', table => '{table_name}')").collect()
    assert ran and ran[0]["state"] == "COMPLETED"
    pending = False
    check("compaction")
    compacted = Table.load(location)
    assert [i for i in compacted.timeline.completed_commits()
            if i.action == "commit" and i.timestamp == scheduled[0]["timestamp"]]

    # A deltacommit that dies before committing is rolled back (a ROLLBACK command block for its log
    # files); readers never see it, and writers carry on.
    before = model.snapshot()
    fail_next_commit(monkeypatch)
    with pytest.raises((WriteError, RuntimeError)):
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'lost', 9.0, 99, 'x'), (9, 'lost', 9.0, 99, 'q')")
    monkeypatch.undo()
    table = Table.load(location)
    rollbacks = [i for i in table.timeline.completed() if i.action == "rollback"]
    assert rollbacks
    metadata = deserialize(table.timeline.read_details(rollbacks[-1]) or b"")
    assert metadata["totalFilesDeleted"] == 1  # the new base file of id 9
    # (the partition path is "x", or "p=x" when an earlier statement of the session set hive-style paths)
    assert [p.split("=")[-1] for p, m in metadata["partitionMetadata"].items() if m["rollbackLogFiles"]] == ["x"]
    assert not [i for i in table.timeline.pending() if i.action == "deltacommit"]
    assert ours(session, table_name) == before == oracle(location)
    step("insert", [a(1, ts=10, name="after"), a(9, p="q")])
    step("delete", {3})
    assert sorted(r["id"] for r in hudi_rs_rows(location)) == sorted(r[0] for r in model.snapshot())
