"""Tables that are not Hudi's (parquet, csv, views) are Spark's: every statement on them runs in Spark SQL
unchanged, and a Hudi MERGE or INSERT reads them as sources (issue 12, item 1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.errors import AnalysisException

from sqlext.session import Session


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


@pytest.fixture(scope="module")
def staged(session: Session) -> Iterator[str]:
    """A parquet staging table with three rows."""
    session.sql("CREATE TABLE nh_stage (id INT, name STRING, price DOUBLE, ts BIGINT) USING parquet")
    session.sql("INSERT INTO nh_stage VALUES (1, 'a', 10.0, 1000), (2, 'b', 20.0, 1000), (3, 'c', 30.0, 1000)")
    yield "nh_stage"
    session.sql("DROP TABLE IF EXISTS nh_stage")


def test_every_statement_on_a_parquet_table_is_sparks(session: Session) -> None:
    session.sql("CREATE TABLE nh_pq (id INT, name STRING, dt STRING) USING parquet PARTITIONED BY (dt)")
    session.sql("INSERT INTO nh_pq VALUES (1, 'a', 'x'), (2, 'b', 'y')")
    session.sql("INSERT INTO nh_pq PARTITION (dt = 'z') SELECT 3, 'c'")
    assert rows(session, "SELECT * FROM nh_pq") == [(1, "a", "x"), (2, "b", "y"), (3, "c", "z")]
    session.sql("INSERT OVERWRITE nh_pq PARTITION (dt = 'x') SELECT 9, 'i'")
    assert rows(session, "SELECT id FROM nh_pq") == [(2,), (3,), (9,)]
    assert rows(session, "SHOW PARTITIONS nh_pq") == [("dt=x",), ("dt=y",), ("dt=z",)]
    session.sql("ALTER TABLE nh_pq DROP PARTITION (dt = 'y')")
    session.sql("ALTER TABLE nh_pq ADD COLUMNS (extra STRING)")
    assert session.spark.table("nh_pq").columns == ["id", "name", "extra", "dt"]
    session.sql("TRUNCATE TABLE nh_pq")
    assert rows(session, "SELECT * FROM nh_pq") == []
    # row-level changes on a parquet table fail as Spark fails them
    with pytest.raises(Exception, match="UNSUPPORTED_FEATURE.TABLE_OPERATION|does not support"):
        session.sql("UPDATE nh_pq SET name = 'q' WHERE id = 1")
    with pytest.raises(Exception, match="UNSUPPORTED_FEATURE.TABLE_OPERATION|does not support"):
        session.sql("DELETE FROM nh_pq WHERE id = 1")
    session.sql("ALTER TABLE nh_pq RENAME TO nh_pq2")
    session.sql("DROP TABLE nh_pq2")
    assert not session.spark.catalog.tableExists("nh_pq2")


def test_csv_tables_and_views_are_sparks(session: Session, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("csv")
    session.sql(f"CREATE TABLE nh_csv (id INT, name STRING) USING csv LOCATION '{folder}'")
    session.sql("INSERT INTO nh_csv VALUES (1, 'a')")
    assert rows(session, "SELECT * FROM nh_csv") == [(1, "a")]
    session.sql("CREATE TEMPORARY VIEW nh_view AS SELECT * FROM nh_csv")
    with pytest.raises(AnalysisException):
        session.sql("INSERT INTO nh_view VALUES (2, 'b')")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        session.sql("INSERT INTO nh_no_such_table VALUES (1)")
    session.sql("DROP VIEW nh_view")
    session.sql("DROP TABLE nh_csv")


def test_spark_only_syntax_passes_through(session: Session, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Statements Hudi's SQL extension leaves to Spark (Hudi TestTimeTravelTable "unsupported syntax can be
    parsed") run as Spark runs them."""
    assert rows(session, "SELECT 1 DISTRIBUTE BY 1") == [(1,)]
    folder = tmp_path_factory.mktemp("local_dir")
    session.sql(f"INSERT OVERWRITE LOCAL DIRECTORY '{folder}' USING parquet SELECT 1 AS one")
    assert list(folder.glob("*.parquet"))


@pytest.mark.parametrize("table_type", [pytest.param("cow", marks=pytest.mark.extended), "mor"])
def test_hudi_merge_and_insert_read_any_source(session: Session, staged: str, table_type: str) -> None:
    target = f"nh_target_{table_type}"
    session.sql(f"CREATE TABLE {target} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi "
                f"TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts')")
    session.sql(f"INSERT INTO {target} SELECT * FROM {staged} WHERE id < 3")
    # the source named by its table name, no alias
    session.sql(f"MERGE INTO {target} USING {staged} ON {target}.id = {staged}.id "
                f"WHEN MATCHED THEN UPDATE SET price = {staged}.price * 2, ts = 1001")
    assert rows(session, f"SELECT id, price FROM {target}") == [(1, 20.0), (2, 40.0)]
    # a view, with aliases
    session.sql(f"CREATE OR REPLACE TEMPORARY VIEW nh_src_view AS SELECT * FROM {staged}")
    session.sql(f"MERGE INTO {target} t USING nh_src_view s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET t.price = s.price, t.ts = 1002 "
                "WHEN NOT MATCHED THEN INSERT (id, name, price, ts) VALUES (s.id, s.name, s.price, 1002)")
    assert rows(session, f"SELECT id, price FROM {target}") == [(1, 10.0), (2, 20.0), (3, 30.0)]
    # a subquery, VALUES with column aliases (inside the subquery: Spark refuses them on the MERGE source)
    session.sql(f"MERGE INTO {target} t USING (SELECT 4 AS id, 'd' AS name, 40.0 AS price, 1003L AS ts) s "
                "ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    session.sql(f"MERGE INTO {target} t USING (SELECT * FROM VALUES (5, 'e', 50.0, 1004L) AS v(id, name, price, ts)) "
                "s0 ON t.id = s0.id WHEN NOT MATCHED THEN INSERT *")
    assert rows(session, f"SELECT id FROM {target}") == [(1,), (2,), (3,), (4,), (5,)]
    # INSERT from a view and a staged table
    session.sql(f"INSERT INTO {target} SELECT id + 10, name, price, ts FROM nh_src_view")
    assert len(rows(session, f"SELECT id FROM {target}")) == 8
    session.sql(f"DROP TABLE {target} PURGE")
