"""A bulk insert whose source is a plain scan of parquet files: the tasks read the files themselves
(engine/spark/source_scan.py) and write the same rows as through Spark's Arrow bridge. Each statement runs on
both paths (``SET sqlext.write.direct.parquet.source``); the tables must read the same, in Spark and in hudi-rs,
and the log says which path each statement took."""

from __future__ import annotations

import datetime
import decimal
import logging
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlext.session import Session
from tests.conftest import hudi_rs_rows

DIRECT = "sqlext.write.direct.parquet.source"
DIRECT_LOG = "read directly by the tasks"
VALUE_COLUMNS = "* EXCEPT (_hoodie_commit_time, _hoodie_commit_seqno, _hoodie_file_name)"


@pytest.fixture(scope="module")
def source_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three parquet files (pyarrow-written, several row groups each) with nulls in every column."""
    folder = tmp_path_factory.mktemp("direct-source") / "orders"
    folder.mkdir()
    for part in range(3):
        n = 40
        ids = [part * 1000 + i for i in range(n)]
        table = pa.table({
            "id": pa.array(ids, pa.int64()),
            "qty": pa.array([None if i % 11 == 3 else i % 7 for i in range(n)], pa.int32()),
            "price": pa.array([None if i % 13 == 5 else decimal.Decimal(i) / 4 for i in range(n)],
                              pa.decimal128(9, 2)),
            "mode": pa.array([None if i % 9 == 2 else ["AIR", "RAIL", "SHIP"][i % 3] for i in range(n)]),
            "day": pa.array([None if i % 10 == 7 else datetime.date(1995 + i % 4, 1 + i % 12, 1 + i % 28)
                             for i in range(n)]),
            "fast": pa.array([None if i % 8 == 1 else i % 2 == 0 for i in range(n)]),
            "score": pa.array([float(i) / 3 for i in range(n)], pa.float64()),
        })
        pq.write_table(table, folder / f"part-{part}.parquet", row_group_size=15)
    return folder


@pytest.fixture
def direct_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.INFO, logger="engine.spark.source_scan"):
        yield caplog


def _ctas(session: Session, name: str, query: str, direct: bool, partitioned_by: str | None = None) -> None:
    session.sql(f"SET {DIRECT} = {'true' if direct else 'false'}")
    part = f" PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    try:
        session.sql(f"CREATE TABLE {name} USING hudi{part} TBLPROPERTIES (primaryKey = 'id') AS {query}")
    finally:
        session.sql(f"RESET {DIRECT}")


def _values(session: Session, name: str) -> list[tuple[object, ...]]:
    return sorted((tuple(r) for r in session.sql(f"SELECT {VALUE_COLUMNS} FROM {name}").collect()),
                  key=repr)


QUERIES = [
    # the bench's shape: every column plus a computed one
    ("SELECT *, year(day) AS y FROM parquet.`{src}`", None, True),
    ("SELECT id, qty, mode, month(day) AS m, dayofmonth(day) AS d FROM parquet.`{src}` "
     "WHERE qty > 2 AND mode = 'AIR' OR NOT (fast = true) OR day IS NULL", "mode", True),
    ("SELECT id, CAST(qty AS BIGINT) AS qty, CAST(price AS DECIMAL(12, 3)) AS price, day AS shipped "
     "FROM parquet.`{src}` WHERE price >= 2.5 AND day < DATE'1997-03-01'", None, True),
    ("SELECT id, mode FROM parquet.`{src}` WHERE qty IS NULL", None, True),
    ("SELECT id, mode FROM parquet.`{src}` WHERE id > 999999", None, True),
    # Spark's own scan: a float comparison (NaN ordering), a function outside the list, a limit
    ("SELECT id, score FROM parquet.`{src}` WHERE score > 3.0", None, False),
    ("SELECT id, upper(mode) AS mode FROM parquet.`{src}`", None, False),
    ("SELECT id, mode FROM parquet.`{src}` LIMIT 7", None, False),
]


@pytest.mark.parametrize("query,partitioned_by,direct_expected", QUERIES)
def test_both_paths_write_the_same_rows(session: Session, table_name: str, source_dir: Path,
                                        direct_log: pytest.LogCaptureFixture, query: str,
                                        partitioned_by: str | None, direct_expected: bool) -> None:
    statement = query.format(src=source_dir)
    expected = sorted((tuple(r) for r in session.sql(statement).collect()), key=repr)
    direct_log.clear()
    _ctas(session, f"{table_name}_d", statement, True, partitioned_by)
    took_direct = DIRECT_LOG in direct_log.text
    direct_log.clear()
    _ctas(session, f"{table_name}_b", statement, False, partitioned_by)
    assert DIRECT_LOG not in direct_log.text
    assert took_direct == direct_expected
    direct_rows = _values(session, f"{table_name}_d")
    assert direct_rows == _values(session, f"{table_name}_b")
    columns = session.spark.sql(statement).columns
    written = sorted((tuple(r) for r in session.sql(
        f"SELECT {', '.join(columns)} FROM {table_name}_d").collect()), key=repr)
    assert written == expected
    location = session.catalog.lookup_name(f"{table_name}_d")
    assert location is not None
    oracle = hudi_rs_rows(location.location)
    assert sorted(r["id"] for r in oracle) == sorted(r[columns.index("id")] for r in expected)


def test_insert_as_bulk_insert_from_a_parquet_table_casts_to_the_table(
        session: Session, table_name: str, source_dir: Path, direct_log: pytest.LogCaptureFixture) -> None:
    session.sql(f"CREATE TABLE {table_name}_src USING parquet LOCATION '{source_dir}'")
    session.sql(f"CREATE TABLE {table_name} (id BIGINT, qty BIGINT, mode STRING, day DATE) USING hudi "
                "PARTITIONED BY (day) TBLPROPERTIES (primaryKey = 'id')")
    session.sql("SET hoodie.spark.sql.insert.into.operation = bulk_insert")
    try:
        direct_log.clear()
        session.sql(f"INSERT INTO {table_name} SELECT id, qty, mode, day FROM {table_name}_src WHERE qty < 3")
        assert DIRECT_LOG in direct_log.text
    finally:
        session.sql("RESET hoodie.spark.sql.insert.into.operation")
    got = sorted(tuple(r) for r in session.sql(f"SELECT id, qty, mode, day FROM {table_name}").collect())
    want = sorted(tuple(r) for r in session.sql(
        f"SELECT id, CAST(qty AS BIGINT), mode, day FROM {table_name}_src WHERE qty < 3").collect())
    assert got == want and len(got) > 10
    days = {r[0] for r in session.sql(f"SELECT DISTINCT _hoodie_partition_path FROM {table_name}").collect()}
    assert "day=__HIVE_DEFAULT_PARTITION__" in days  # null dates land in Hudi's default partition either way
