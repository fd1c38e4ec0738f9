"""The simple index's key locations: base files read by Spark's parquet reader, log files and paths
Hadoop would take for glob patterns read by Python tasks, both giving the same rows; the broadcast
"wanted keys" read keeps exactly the matches; MERGE gives the same rows on each of its paths."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine.index.simple import files_to_index, read_key_locations
from engine.spark import index as spark_index
from engine.spark.index import existing_key_locations
from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_upserts_find_keys_in_partitions_with_glob_characters(session: Session, table_name: str, kind: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = '{kind}', primaryKey = 'id',
                       'hoodie.spark.sql.insert.into.operation' = 'upsert')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'x[1]'), (2, 'b', 'y z'), (3, 'c', 'plain')")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a2', 'x[1]'), (2, 'b2', 'y z'), (4, 'd', 'plain')")
    session.sql(f"""MERGE INTO {table_name} t USING (SELECT 3 AS id, 'c3' AS v, 'plain' AS p
        UNION ALL SELECT 1, 'a3', 'x[1]') s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    rows = sorted(tuple(r) for r in session.sql(f"SELECT id, v, p FROM {table_name}").collect())
    assert rows == [(1, "a3", "x[1]"), (2, "b2", "y z"), (3, "c3", "plain"), (4, "d", "plain")]

    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    table = Table.load(entry.location)
    stored = sorted(tuple(r) for r in existing_key_locations(session.spark, table, None, table.config).collect())
    expected = []
    for file in files_to_index(table, table.file_system_view().partition_paths()):
        located = read_key_locations(table.storage, file, table.config)
        expected += list(zip(*(located.column(i).to_pylist() for i in range(3)), strict=True))
    assert stored == sorted(expected)
    assert {key for key, _, _ in stored} == {"1", "2", "3", "4"}
    assert {partition for _, partition, _ in stored} == {"p=x[1]", "p=y z", "p=plain"}


def test_wanted_keys_keep_exactly_the_matching_locations(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.spark.sql.insert.into.operation' = 'upsert')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'x[1]'), (2, 'b', 'y'), (3, 'c', 'y')")
    session.sql(f"INSERT INTO {table_name} VALUES (2, 'b2', 'y'), (4, 'd', 'y')")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    table = Table.load(entry.location)
    every = sorted(tuple(r) for r in existing_key_locations(session.spark, table, None, table.config).collect())
    wanted = session.spark.sparkContext.broadcast(pa.array(["1", "4", "9"], pa.string()))
    try:
        kept = sorted(tuple(r) for r in existing_key_locations(
            session.spark, table, None, table.config, wanted=wanted).collect())
    finally:
        wanted.destroy()
    assert kept == [row for row in every if row[0] in ("1", "4")]
    assert {row[0] for row in kept} == {"1", "4"}


@pytest.mark.parametrize("source", [
    "SELECT id, concat('v', CAST(id AS STRING)) AS v, 'y' AS p FROM range(0, 6) AS r(id)",
    # non-deterministic: evaluated once (cached), so the key index and the join see the same rows
    "SELECT id, concat('v', CAST(floor(rand() * 1000) AS STRING)) AS v, 'y' AS p FROM range(0, 6) AS r(id)",
], ids=["deterministic", "non-deterministic"])
@pytest.mark.parametrize("broadcast", [True, False], ids=["keys-broadcast", "semi-join"])
def test_merge_paths_give_the_same_rows(session: Session, table_name: str, source: str, broadcast: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if not broadcast:
        monkeypatch.setattr(spark_index, "BROADCAST_KEY_BYTES", -1)
        monkeypatch.setattr(spark_index, "BROADCAST_KEY_ROWS", -1)
    session.sql(f"""CREATE TABLE {table_name} (id BIGINT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id')""")
    session.sql(f"INSERT INTO {table_name} VALUES (0, 'old', 'y'), (2, 'old', 'y'), (4, 'old', 'x')")
    session.sql(f"""MERGE INTO {table_name} t USING ({source}) s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    rows = session.sql(f"SELECT id, v, _hoodie_partition_path AS path FROM {table_name} ORDER BY id, path").collect()
    assert [r["id"] for r in rows] == [0, 1, 2, 3, 4, 4, 5]
    # Non-global index (Hudi): key 4 is looked up in p=y only, so it is a new record there; p=x keeps the old.
    assert [r["v"] == "old" for r in rows] == [False, False, False, False, True, False, False]
    assert [r["path"] for r in rows] == ["p=y", "p=y", "p=y", "p=y", "p=x", "p=y", "p=y"]
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    assert sorted(r["id"] for r in hudi_rs_rows(entry.location)) == [0, 1, 2, 3, 4, 4, 5]


def test_merge_on_a_key_spark_cannot_render(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (d DATE, v INT) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'd')""")
    session.sql(f"INSERT INTO {table_name} VALUES (DATE'2024-01-01', 1), (DATE'2024-01-02', 2)")
    session.sql(f"""MERGE INTO {table_name} t USING (SELECT DATE'2024-01-02' AS d, 20 AS v
        UNION ALL SELECT DATE'2024-01-03', 30) s ON t.d = s.d
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    rows = session.sql(f"SELECT _hoodie_record_key, v FROM {table_name} ORDER BY d").collect()
    assert [(r[0], r[1]) for r in rows] == [("2024-01-01", 1), ("2024-01-02", 20), ("2024-01-03", 30)]
