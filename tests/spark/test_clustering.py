"""Clustering as a Hudi user runs it: ``CALL run_clustering`` / ``RUN|SCHEDULE|SHOW CLUSTERING`` rewrite small
files into sorted, larger file groups with a ``replacecommit``; query results (ours and hudi-rs's) and time
travel are unchanged; writes to file groups under pending clustering fail with a retryable conflict; inline
clustering runs after every ``inline.max.commits`` commits."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.errors import ClusteringUpdateConflict
from engine.services.clustering import pending_clusterings, read_clustering_plan
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import Instant, State
from sqlext.session import Session
from sqlext.shell import USER_MESSAGE_LOGGERS
from tests.conftest import hudi_rs_rows


def rows_of(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def latest_base_files(path: Path) -> list[Path]:
    table = Table.load(str(path))
    return [Path(bf.path) for bf in table.file_system_view().all_latest_base_files()]


def oracle(path: Path, **read: str) -> list[tuple[object, ...]]:
    return sorted((r["id"], r["name"], r["price"], r["dt"]) for r in hudi_rs_rows(path, **read))


def _small_files_table(session: Session, name: str, path: Path, table_type: str = "cow") -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts',
        'hoodie.parquet.small.file.limit' = '0') LOCATION '{path}'""")
    # Each INSERT writes a new small file per partition (small-file packing off): 3 per partition.
    for batch in range(3):
        values = ", ".join(f"({batch * 10 + i}, 'n{(7 * (batch * 10 + i)) % 40}', {float(40 - batch * 10 - i)}, "
                           f"{batch}, '{'d1' if i % 2 else 'd2'}')" for i in range(10))
        session.sql(f"INSERT INTO {name} VALUES {values}")


def test_run_clustering_rewrites_small_files_sorted(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    _small_files_table(session, table_name, path)
    try:
        before = oracle(path)
        ours_before = rows_of(session, f"SELECT id, name, price, dt FROM {table_name}")
        assert before == ours_before and len(before) == 30
        last_commit = Table.load(str(path)).timeline.completed_commits()[-1].timestamp
        assert len(latest_base_files(path)) == 6

        result = session.sql(f"CALL run_clustering(table => '{table_name}', order => 'price', "
                             "show_involved_partition => true)").collect()
        assert len(result) == 1
        instant = result[0]["timestamp"]
        assert result[0]["state"] == "COMPLETED"
        assert result[0]["input_group_size"] == 2  # one group per partition
        assert sorted(result[0]["involved_partitions"].split(",")) == ["dt=d1", "dt=d2"]

        # The plan is a HoodieRequestedReplaceMetadata holding a HoodieClusteringPlan, as Hudi writes it.
        table = Table.load(str(path))
        raw = deserialize(table.timeline.read_details(Instant(instant, "replacecommit", State.REQUESTED)),
                          "HoodieRequestedReplaceMetadata")
        assert raw["operationType"] == "CLUSTER"
        plan = raw["clusteringPlan"]
        assert plan["strategy"]["strategyClassName"].endswith("SparkSortAndSizeExecutionStrategy")
        assert plan["strategy"]["strategyParams"] == {"hoodie.clustering.plan.strategy.sort.columns": "price"}
        assert all(len(g["slices"]) == 3 and g["numOutputFileGroups"] == 1 for g in plan["inputGroups"])
        metadata = table.commit_metadata(table.timeline.completed_commits()[-1])
        assert metadata.operation_type == "CLUSTER"
        assert sum(len(v) for v in metadata.replaced_file_ids().values()) == 6

        # One sorted file per partition; rows unchanged, meta columns kept (commit times of the inserts).
        files = latest_base_files(path)
        assert len(files) == 2 and all(f.name.endswith(f"_{instant}.parquet") for f in files)
        for f in files:
            data = pq.read_table(f)
            prices = data.column("price").to_pylist()
            assert prices == sorted(prices)
            assert set(data.column("_hoodie_file_name").to_pylist()) == {f.name}
            assert instant not in set(data.column("_hoodie_commit_time").to_pylist())
        assert oracle(path) == before
        assert rows_of(session, f"SELECT id, name, price, dt FROM {table_name}") == before
        # Time travel to before the clustering reads the old file groups.
        assert rows_of(session, f"SELECT id, name, price, dt FROM {table_name} TIMESTAMP AS OF '{last_commit}'") \
            == oracle(path, as_of=last_commit) == before
        # An incremental query over the clustering sees no new data (it is not a data change).
        assert hudi_rs_rows(path, begin=last_commit, end=instant) == []

        shown = session.sql(f"SHOW CLUSTERING ON {table_name}").collect()
        assert [(r["timestamp"], r["state"], r["involved_partitions"]) for r in shown] == \
            [(instant, "COMPLETED", "*")]
        # Updates after clustering land in the new file groups.
        session.sql(f"UPDATE {table_name} SET price = 99.5 WHERE id = 3")
        assert (3, "n21", 99.5, "d1") in oracle(path)
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_pending_clustering_blocks_updates_not_reads(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    _small_files_table(session, table_name, path, "mor")
    try:
        before = oracle(path)
        scheduled = session.sql(f"CALL run_clustering(table => '{table_name}', op => 'schedule', "
                                "selected_partitions => 'dt=d1')").collect()
        assert [r["state"] for r in scheduled] == ["REQUESTED"]
        instant = scheduled[0]["timestamp"]
        plan = read_clustering_plan(Table.load(str(path)), instant)
        assert plan.partitions == ["dt=d1"]
        assert rows_of(session, f"SELECT id, name, price, dt FROM {table_name}") == before == oracle(path)

        with pytest.raises(ClusteringUpdateConflict, match="pending clustering"):
            session.sql(f"UPDATE {table_name} SET price = 1.0 WHERE id = 1")  # id 1 is in dt=d1
        # Nothing was written; the other partition takes updates; inserts avoid the file groups.
        assert oracle(path) == before
        session.sql(f"UPDATE {table_name} SET price = 2.0 WHERE id = 2")  # dt=d2
        session.sql(f"INSERT INTO {table_name} VALUES (100, 'new', 1.0, 9, 'd1')")
        expected = sorted([r if r[0] != 2 else (2, r[1], 2.0, r[3]) for r in before] + [(100, "new", 1.0, "d1")])
        assert oracle(path) == expected

        shown = session.sql(f"CALL show_clustering(table => '{table_name}', show_involved_partition => true)")
        assert [(r["timestamp"], r["state"], r["involved_partitions"]) for r in shown.collect()] == \
            [(instant, "REQUESTED", "dt=d1")]
        executed = session.sql(f"CALL run_clustering(table => '{table_name}', op => 'execute')").collect()
        assert [(r["timestamp"], r["state"]) for r in executed] == [(instant, "COMPLETED")]
        assert not pending_clusterings(Table.load(str(path)))
        assert oracle(path) == expected
        assert rows_of(session, f"SELECT id, name, price, dt FROM {table_name}") == expected
        session.sql(f"UPDATE {table_name} SET price = 1.0 WHERE id = 1")
        assert (1, "n7", 1.0, "d1") in oracle(path)
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_space_filling_curve_orders(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    _small_files_table(session, table_name, path)
    try:
        before = oracle(path)
        # A target of a third of a partition's bytes: each group writes 3 file groups, one per Spark range
        # partition (memory budget of 1 byte: the group is sorted by Spark, not inside one task).
        target = sum(f.stat().st_size for f in latest_base_files(path) if "dt=d1" in str(f)) // 3 + 1
        session.sql(f"CALL run_clustering(path => '{path}', order => 'price,name', order_strategy => 'z-order', "
                    f"options => 'hoodie.clustering.plan.strategy.target.file.max.bytes={target},"
                    "hoodie.memory.merge.max.size=1')")
        assert oracle(path) == before
        files = latest_base_files(path)
        assert len(files) == 6
        assert sum(pq.read_metadata(f).num_rows for f in files) == 30
        # Hilbert over the clustered files (all under the default small-file limit), sorted in one task each.
        session.sql(f"CALL run_clustering(path => '{path}', order => 'price,name', order_strategy => 'hilbert')")
        assert oracle(path) == before
        assert len(latest_base_files(path)) == 2
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_inline_clustering_and_statements(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
        'hoodie.parquet.small.file.limit' = '0', 'hoodie.clustering.inline' = 'true',
        'hoodie.clustering.inline.max.commits' = '2') LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.0, 1, 'd1')")
        assert not Table.load(str(path)).timeline.completed_replace_commits()
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 2.0, 1, 'd1')")
        replaces = Table.load(str(path)).timeline.completed_replace_commits()
        assert len(replaces) == 1  # clustered after the second commit
        assert len(latest_base_files(path)) == 1
        assert oracle(path) == [(1, "a", 1.0, "d1"), (2, "b", 2.0, "d1")]

        with pytest.raises(Exception, match="Order column not exist: nope"):
            session.sql(f"CALL run_clustering(table => '{table_name}', order => 'nope')")
        with pytest.raises(Exception, match="Only partition predicates are allowed"):
            session.sql(f"CALL run_clustering(table => '{table_name}', predicate => 'price > 1')")
        assert session.sql(f"CALL run_clustering(table => '{table_name}', predicate => \"dt = 'zz'\")").count() == 0
        session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 3.0, 1, 'd1')")
        # The procedure reads the table's properties (Hudi HoodieCLIUtils.createHoodieWriteClient): inline
        # clustering every 2 commits waits for a second commit, as Hudi's ClusteringPlanActionExecutor does.
        assert session.sql(f"SCHEDULE CLUSTERING ON {table_name}").collect() == []
        session.sql("SET hoodie.clustering.inline = false")
        try:
            scheduled = session.sql(f"SCHEDULE CLUSTERING ON {table_name}").collect()
        finally:
            session.sql("RESET hoodie.clustering.inline")
        assert [r["state"] for r in scheduled] == ["REQUESTED"]
        ran = session.sql(f"RUN CLUSTERING ON '{path}' AT {scheduled[0]['timestamp']}").collect()
        assert [(r["timestamp"], r["state"]) for r in ran] == [(scheduled[0]["timestamp"], "COMPLETED")]
        assert oracle(path) == [(1, "a", 1.0, "d1"), (2, "b", 2.0, "d1"), (3, "c", 3.0, "d1")]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_clustering_says_what_it_does(session: Session, table_name: str, tmp_path: Path,
                                      caplog: pytest.LogCaptureFixture) -> None:
    """The lines the shell prints (its USER_MESSAGE_LOGGERS): plan size, progress, commit."""
    path = tmp_path / table_name
    _small_files_table(session, table_name, path)
    try:
        with caplog.at_level(logging.INFO, logger="engine"):
            session.sql(f"CALL run_clustering(path => '{path}', order => 'name')")
        said = [r.getMessage() for r in caplog.records if r.name.startswith(USER_MESSAGE_LOGGERS)]
        assert any(m.startswith("scheduled clustering ") and "2 groups, 6 file slices" in m for m in said), said
        assert any("2 of 2 groups done" in m for m in said), said
        assert any(m.startswith("completed clustering ") for m in said), said
        assert session.sql(f"CALL run_clustering(path => '{path}', op => 'schedule', "
                           "options => 'hoodie.clustering.plan.strategy.small.file.limit=1')").count() == 0
    finally:
        session.sql(f"DROP TABLE {table_name}")
