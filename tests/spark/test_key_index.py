"""The simple index's key locations: base files read by Spark's parquet reader, log files and paths
Hadoop would take for glob patterns read by Python tasks, both giving the same rows."""

from __future__ import annotations

import pytest

from engine.index.simple import files_to_index, read_key_locations
from engine.spark.writer import existing_key_locations
from engine.table import Table
from sqlext.session import Session

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
