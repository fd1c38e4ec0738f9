"""Hive consumers of a synced merge-on-read table: sqlext writes a partitioned MOR table with post-commit Hive
sync into a real metastore (inserts, then an update and a delete, so file groups have log files), and a
SECOND Spark session with Hive support pointed at that metastore lists, describes and reads the synced
tables (``<t>_ro``: base files only; ``<t>_rt`` and the bare name: the merged snapshot).

One JVM per process, so the consumer session runs in a subprocess: this file run as a script
(:func:`consume`), printing one JSON line the test asserts on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    HUDI_PARQUET_REALTIME_INPUT_FORMAT,
    HiveMetastoreClient,
)
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
META_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name"]
COLUMNS = [("id", "int"), ("v", "string"), ("ts", "bigint"), ("p", "string")]
Row = tuple[int, str, int, str]

INSERTED: list[Row] = [(1, "a", 1, "x"), (2, "b", 1, "x"), (3, "c", 1, "y"), (4, "d", 1, "y"), (5, "e", 1, "z")]
UPDATED_IDS = (1, 4)  # UPDATE ... SET v = upper(v), ts = 2: log blocks in partitions x and y
DELETED_IDS = (3,)  # DELETE: a delete block in partition y
LATE: list[Row] = [(6, "f", 3, "w")]  # a later insert into a new partition: a new base file, synced incrementally


def expected_read_optimized() -> set[Row]:
    """Base files only: the rows as first written (updates and deletes live in log files)."""
    return set(INSERTED) | set(LATE)


def expected_snapshot() -> set[Row]:
    """The merged snapshot: updates applied, deletes gone."""
    rows = {r[0]: r for r in INSERTED + LATE}
    for key in UPDATED_IDS:
        _, v, _, p = rows[key]
        rows[key] = (key, v.upper(), 2, p)
    for key in DELETED_IDS:
        del rows[key]
    return set(rows.values())



def _values(rows: list[Row]) -> str:
    return ", ".join(f"({i}, '{v}', {ts}, '{p}')" for i, v, ts, p in rows)


def run_consumer(uri: str, warehouse: Path, tables: list[str]) -> dict[str, Any]:
    """Run :func:`consume` in a fresh Python process (its own JVM) and return its JSON report."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path),
               PYSPARK_PYTHON=sys.executable)
    result = subprocess.run([sys.executable, __file__, uri, str(warehouse), *tables], capture_output=True,
                            text=True, env=env, cwd=REPO, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.extended
def test_second_spark_session_reads_the_synced_ro_and_rt_tables(session: Session, table_name: str,
                                                                metastore: str, tmp_path: Path) -> None:
    t = table_name
    session.sql(f"""CREATE TABLE {t} (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.datasource.hive_sync.enable' = 'true',
                       'hoodie.datasource.hive_sync.metastore.uris' = '{metastore}')""")
    session.sql(f"INSERT INTO {t} VALUES {_values(INSERTED)}")
    session.sql(f"UPDATE {t} SET v = upper(v), ts = 2 WHERE id IN ({', '.join(map(str, UPDATED_IDS))})")
    session.sql(f"DELETE FROM {t} WHERE id IN ({', '.join(map(str, DELETED_IDS))})")
    session.sql(f"INSERT INTO {t} VALUES {_values(LATE)}")
    entry = session.catalog.lookup_name(t)
    assert entry is not None
    base = Path(entry.location)
    # The layout that makes _ro differ from _rt: log files beside the base files of x and y, none in w.
    logs = {f.parent.name for f in base.glob("p=*/.*.log.*")}
    assert {"p=x", "p=y"} <= logs and "p=w" not in logs
    assert expected_read_optimized() != expected_snapshot()

    partitions = sorted({f"p={r[3]}" for r in INSERTED + LATE})
    with HiveMetastoreClient(metastore) as client:  # Hudi's defaults: _ro, _rt and the bare name as snapshot
        for name, input_format, ro in ((f"{t}_ro", HUDI_PARQUET_INPUT_FORMAT, "true"),
                                       (f"{t}_rt", HUDI_PARQUET_REALTIME_INPUT_FORMAT, "false"),
                                       (t, HUDI_PARQUET_REALTIME_INPUT_FORMAT, "false")):
            hive = client.get_table("default", name)
            assert (hive.sd.inputFormat, hive.sd.serdeInfo.parameters["hoodie.query.as.ro.table"]) == \
                (input_format, ro)
            assert sorted(client.partition_names("default", name)) == partitions

    report = run_consumer(metastore, tmp_path / "consumer-warehouse", [t, f"{t}_ro", f"{t}_rt"])

    assert {t, f"{t}_ro", f"{t}_rt"} <= set(report["tables"])
    snapshot = expected_snapshot()
    for name in (t, f"{t}_ro", f"{t}_rt"):
        got = report[name]
        assert got["columns"] == [[c, "string"] for c in META_COLUMNS] + [list(c) for c in COLUMNS], name
        assert got["partition_columns"] == [["p", "string"]], name
        assert got["location"].removeprefix("file:") == str(base), name
        assert got["provider"] == "hudi", name
        assert got["show_partitions"] == partitions, name  # Spark: the metastore's partitions
        assert got["sqlext_show_partitions"] == partitions, name  # sqlext: the table's partitions on storage
    assert {tuple(r) for r in report[f"{t}_ro"]["rows"]} == expected_read_optimized()
    assert len(report[f"{t}_ro"]["rows"]) == len(expected_read_optimized())
    for name in (f"{t}_rt", t):
        assert {tuple(r) for r in report[name]["rows"]} == snapshot, name
        assert len(report[name]["rows"]) == len(snapshot), name
        assert {tuple(r) for r in report[name]["rows_in_x"]} == {r for r in snapshot if r[3] == "x"}, name
    oracle = [(r["id"], r["v"], r["ts"], r["p"]) for r in hudi_rs_rows(base)]
    assert set(oracle) == snapshot and len(oracle) == len(snapshot)
    assert report[f"{t}_ro"]["show_partitions_y"] == ["p=y"]
    assert "is a Hudi table: DROP PARTITION" in (report["drop_partition_error"] or "")
    assert report["partitions_after_drop"] == partitions


# ---- the consumer (subprocess) ---------------------------------------------------------------------


def consume(uri: str, warehouse: Path, tables: list[str]) -> dict[str, Any]:
    """A Spark session with Hive support on the metastore ``uri`` (sqlext's ``hudi`` data source and session
    catalog registered): SHOW TABLES, then per table its DESCRIBE columns and partition columns, location
    and provider (all from DESCRIBE EXTENDED), Spark's and sqlext's SHOW PARTITIONS, and its rows; then a
    refused ``ALTER TABLE <first table> DROP PARTITION`` and that table's partitions after it."""
    from sqlext.session import connect

    session = connect(warehouse=warehouse, master="local[1]", conf={
        "spark.hadoop.hive.metastore.uris": uri,
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.showConsoleProgress": "false",
    })
    spark = session.spark
    try:
        report: dict[str, Any] = {"tables": [r["tableName"] for r in spark.sql("SHOW TABLES IN default").collect()]}
        for name in tables:
            described = [(r["col_name"], r["data_type"])
                         for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()]
            marker = described.index(("# Partition Information", ""))
            end = described.index(("", ""), marker)
            extended = dict(described[end:])
            rows = spark.sql(f"SELECT id, v, ts, p FROM {name}").collect()
            in_x = spark.sql(f"SELECT id, v, ts, p FROM {name} WHERE p = 'x'").collect()
            report[name] = {
                "columns": described[:marker],
                "partition_columns": [c for c in described[marker + 1:end] if c != ("# col_name", "data_type")],
                "location": extended.get("Location"),
                "provider": extended.get("Provider"),
                "show_partitions": [r[0] for r in spark.sql(f"SHOW PARTITIONS {name}").collect()],
                "show_partitions_y": [r[0] for r in spark.sql(f"SHOW PARTITIONS {name} PARTITION (p = 'y')")
                                      .collect()],
                "sqlext_show_partitions": [r[0] for r in session.sql(f"SHOW PARTITIONS {name}").collect()],
                "rows": [tuple(r) for r in rows],
                "rows_in_x": [tuple(r) for r in in_x],
            }
        # Spark's partition DDL is refused on Hudi tables (Hudi owns its partitions) and changes nothing.
        try:
            spark.sql(f"ALTER TABLE {tables[0]} DROP PARTITION (p = 'x')").collect()
            report["drop_partition_error"] = None
        except Exception as exc:  # noqa: BLE001 - the message is what the test checks
            report["drop_partition_error"] = str(exc).splitlines()[0]
        report["partitions_after_drop"] = [r[0] for r in spark.sql(f"SHOW PARTITIONS {tables[0]}").collect()]
    finally:
        session.stop()
    return report


if __name__ == "__main__":
    sys.stdout.write(json.dumps(consume(sys.argv[1], Path(sys.argv[2]), sys.argv[3:])) + "\n")
