"""The production set-up for BI: sqlext's session catalog AND Hive sync on the same remote Hive Metastore
(``sqlext --hiveconf hive.metastore.uris=thrift://...``). The catalog entry sqlext registers is the one Hudi
0.14 registers (Hive-compatible columns, Hudi's input formats), so every write's post-commit Hive sync
finds it and alters it cleanly: no "types incompatible" failure, MOR tables get ``_ro``/``_rt``, and a
second Spark session on the metastore reads them, also after ALTER TABLE ... ADD COLUMNS.

One JVM per process: the writer and the reader each run in a subprocess (this file run as a script,
printing one JSON line), both pointed at the session-wide real metastore.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    HUDI_PARQUET_REALTIME_INPUT_FORMAT,
    PARQUET_SERDE,
    HiveMetastoreClient,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
SYNC = "'hoodie.datasource.hive_sync.enable' = 'true'"


def writer_statements(db: str, cow: str, external_dir: Path) -> list[str]:
    """Every write statement the writer runs; each commit is followed by a Hive sync into the same
    metastore that holds the catalog."""
    return [
        f"CREATE DATABASE {db}",
        # MOR, partitioned, managed in a new database.
        f"""CREATE TABLE {db}.mp (id INT, v STRING, fare DECIMAL(10,2), ts BIGINT, p STRING) USING hudi
            PARTITIONED BY (p) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', {SYNC})""",
        f"INSERT INTO {db}.mp VALUES (1, 'a', 1.50, 1, 'x'), (2, 'b', 2.50, 1, 'y'), (3, 'c', 3.50, 1, 'y')",
        f"""MERGE INTO {db}.mp t USING (SELECT 2 AS id, 'B' AS v, CAST(2.75 AS DECIMAL(10,2)) AS fare, 2L AS ts,
            'y' AS p UNION ALL SELECT 4, 'd', 4.50, 2L, 'z') s ON t.id = s.id
            WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""",
        f"UPDATE {db}.mp SET v = 'A', ts = 3 WHERE id = 1",
        f"DELETE FROM {db}.mp WHERE id = 3",
        f"ALTER TABLE {db}.mp ADD COLUMNS (note STRING)",
        f"INSERT INTO {db}.mp (id, v, fare, ts, p, note) VALUES (5, 'e', 5.50, 4, 'x', 'n5')",
        # COW, not partitioned, managed in `default`: goes under the session's --warehouse.
        f"""CREATE TABLE {cow} (id INT, v STRING, ts BIGINT) USING hudi
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', {SYNC})""",
        f"INSERT INTO {cow} VALUES (1, 'a', 1), (2, 'b', 1)",
        f"""MERGE INTO {cow} t USING (SELECT 2 AS id, 'B' AS v, 2L AS ts UNION ALL SELECT 3, 'c', 2L) s
            ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""",
        f"UPDATE {cow} SET v = 'A' WHERE id = 1",
        f"DELETE FROM {cow} WHERE id = 2",
        f"ALTER TABLE {cow} ADD COLUMNS (note STRING)",
        f"INSERT INTO {cow} (id, v, ts, note) VALUES (4, 'd', 3, 'n4')",
        # COW, partitioned, CTAS; TINYINT is a Hive `int` (as Hive sync maps it), a Spark `tinyint`.
        f"""CREATE TABLE {db}.cp USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', {SYNC})
            AS SELECT 1 AS id, 'a' AS v, CAST(1 AS TINYINT) AS b, 'x' AS p""",
        f"INSERT INTO {db}.cp VALUES (2, 'b', 2, 'y')",
        # MOR, not partitioned, external (LOCATION).
        f"""CREATE TABLE {db}.mn (id INT, v STRING) USING hudi LOCATION '{external_dir}'
            TBLPROPERTIES (type = 'mor', primaryKey = 'id', {SYNC})""",
        f"INSERT INTO {db}.mn VALUES (1, 'a'), (2, 'b')",
        f"UPDATE {db}.mn SET v = 'B' WHERE id = 2",
    ]


EXPECTED = {
    "mp": {(1, "A", "1.50", 3, "x", None), (2, "B", "2.75", 2, "y", None), (4, "d", "4.50", 2, "z", None),
           (5, "e", "5.50", 4, "x", "n5")},
    "cow": {(1, "A", 1, None), (3, "c", 2, None), (4, "d", 3, "n4")},
    "cp": {(1, "a", 1, "x"), (2, "b", 2, "y")},
    "mn": {(1, "a"), (2, "B")},
}
SELECTS = {"mp": "SELECT id, v, fare, ts, p, note FROM {t}", "cow": "SELECT id, v, ts, note FROM {t}",
           "cp": "SELECT id, v, b, p FROM {t}", "mn": "SELECT id, v FROM {t}"}


def _plain(row: Any) -> tuple[Any, ...]:
    return tuple(str(v) if isinstance(v, Decimal) else v for v in row)


def _connect(uri: str, warehouse: Path) -> Any:
    from sqlext.session import connect

    return connect(warehouse=warehouse, master="local[2]", conf={
        "spark.hadoop.hive.metastore.uris": uri,
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.showConsoleProgress": "false",
    })


def write(uri: str, warehouse: Path, db: str, cow: str) -> dict[str, Any]:
    """The writer: runs :func:`writer_statements` (any failure, including a failed post-commit sync, is
    reported with the statement), then describes the tables as its own session sees them."""
    session = _connect(uri, warehouse)
    report: dict[str, Any] = {"error": None}
    try:
        for sql in writer_statements(db, cow, warehouse.parent / "external_mn"):
            try:
                session.sql(sql).collect()
            except Exception as exc:  # noqa: BLE001 - reported to the test
                report["error"] = f"{sql.split(chr(10))[0]}: {exc}"
                return report
        described = session.sql(f"DESCRIBE EXTENDED {db}.mp").collect()
        report["describe_mp"] = [[r[0], r[1]] for r in described]
        report["show_create_mp"] = session.sql(f"SHOW CREATE TABLE {db}.mp").collect()[0][0]
        report["tblproperties_mp"] = {r[0]: r[1] for r in session.sql(f"SHOW TBLPROPERTIES {db}.mp").collect()}
        report["cow_location"] = session.catalog.lookup_name(cow).location
        report["describe_cp"] = [[r[0], r[1]] for r in session.sql(f"DESCRIBE {db}.cp").collect()]
    finally:
        session.stop()
    return report


def read(uri: str, warehouse: Path, tables: list[str]) -> dict[str, Any]:
    """The second session on the metastore: rows of each ``db.table`` (``name=SELECT ...`` pairs)."""
    session = _connect(uri, warehouse)
    try:
        out: dict[str, Any] = {}
        for item in tables:
            name, _, sql = item.partition("=")
            out[name] = [_plain(r) for r in session.spark.sql(sql).collect()]
        return out
    finally:
        session.stop()


def _run(*args: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path),
               PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.extended
def test_catalog_and_hive_sync_share_a_remote_metastore(metastore: str, tmp_path: Path) -> None:
    db, cow = f"shared_{uuid.uuid4().hex[:8]}", f"cow_{uuid.uuid4().hex[:8]}"
    warehouse = tmp_path / "warehouse"
    report = _run("write", metastore, str(warehouse), db, cow)
    assert report["error"] is None, report["error"]

    with HiveMetastoreClient(metastore) as client:
        names = set(client.table_names(db))
        assert {"mp", "mp_ro", "mp_rt", "cp", "mn", "mn_ro", "mn_rt"} <= names
        for database, name, input_format in ((db, "mp", HUDI_PARQUET_REALTIME_INPUT_FORMAT),
                                             (db, "mp_ro", HUDI_PARQUET_INPUT_FORMAT),
                                             (db, "cp", HUDI_PARQUET_INPUT_FORMAT),
                                             ("default", cow, HUDI_PARQUET_INPUT_FORMAT)):
            hive = client.get_table(database, name)
            assert (hive.sd.inputFormat, hive.sd.serdeInfo.serializationLib) == (input_format, PARQUET_SERDE), name
            assert hive.parameters["spark.sql.sources.provider"] == "hudi", name
            assert hive.parameters.get("last_commit_time_sync"), name  # the sync reached it
        mp = client.get_table(db, "mp")
        assert [(c.name, c.type) for c in mp.sd.cols][5:] == [
            ("id", "int"), ("v", "string"), ("fare", "decimal(10,2)"), ("ts", "bigint"), ("note", "string")]
        assert [(c.name, c.type) for c in mp.partitionKeys] == [("p", "string")]
        assert sorted(client.partition_names(db, "mp_rt")) == ["p=x", "p=y", "p=z"]
        assert client.get_table("default", cow).tableType == "MANAGED_TABLE"
        assert [(c.name, c.type) for c in client.get_table(db, "cp").sd.cols][5:] == [
            ("id", "int"), ("v", "string"), ("b", "int")]
        assert client.get_table(db, "mn").tableType == "EXTERNAL_TABLE"
    assert report["cow_location"] == str(warehouse / cow)  # --warehouse honoured with a remote metastore

    described = dict((k, v) for k, v in report["describe_mp"])
    assert described["Provider"] == "hudi" and "# Partition Information" in described
    assert "last_commit_time_sync" not in report["show_create_mp"]
    assert "`note` STRING,\n  `p` STRING)" in report["show_create_mp"]
    # The user's options, then Hive sync's bookkeeping (shown by Hudi too); nothing of Spark's or Hive's own.
    assert set(report["tblproperties_mp"]) == {"type", "primaryKey", "preCombineField",
                                               "hoodie.datasource.hive_sync.enable", "last_commit_time_sync",
                                               "last_commit_completion_time_sync"}, report["tblproperties_mp"]

    queries = [f"{name}={SELECTS[kind].format(t=table)}" for name, kind, table in (
        ("mp", "mp", f"{db}.mp"), ("mp_rt", "mp", f"{db}.mp_rt"), ("mp_ro", "mp", f"{db}.mp_ro"),
        ("cow", "cow", cow), ("cp", "cp", f"{db}.cp"), ("mn_rt", "mn", f"{db}.mn_rt"), ("mn_ro", "mn", f"{db}.mn_ro"))]
    rows = _run("read", metastore, str(tmp_path / "reader"), *queries)
    as_sets = {name: {tuple(r) for r in got} for name, got in rows.items()}
    assert as_sets["mp"] == as_sets["mp_rt"] == EXPECTED["mp"]
    assert as_sets["cow"] == EXPECTED["cow"]
    assert as_sets["cp"] == EXPECTED["cp"]
    assert as_sets["mn_rt"] == EXPECTED["mn"]
    assert {r[0] for r in as_sets["mp_ro"]} <= {1, 2, 3, 4, 5} and as_sets["mp_ro"]  # base files only
    assert {r[0] for r in as_sets["mn_ro"]} == {1, 2}


if __name__ == "__main__":
    mode, uri, where, *rest = sys.argv[1:]
    result = write(uri, Path(where), *rest) if mode == "write" else read(uri, Path(where), rest)
    sys.stdout.write(json.dumps(result) + "\n")
