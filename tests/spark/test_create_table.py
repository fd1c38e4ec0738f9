"""CREATE TABLE as Hudi's ``CreateHoodieTableCommand`` / ``CreateHoodieTableLikeCommand`` and
``HoodieOptionConfig`` take it (issue 12, item 6): ``LIKE`` a Hudi or a parquet table, SQL option names in any
case stored as Hudi spells them, an unknown primaryKey / preCombineField refused with Hudi's message.

Behaviours from Hudi's suites: TestCreateTable (``Test Create Table Like``, option keys in upper case,
``Test Create Table With Unknown Primary Key``), TestHoodieOptionConfig (``validateTable`` messages).
"""

from __future__ import annotations

import pytest

from engine.table import Table
from sqlext.errors import SqlAnalysisError
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def rows(session: Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def tblproperties(session: Session, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in session.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def location(session: Session, table: str) -> str:
    entry = session.catalog.lookup_name(table)
    assert entry is not None
    return entry.location


def test_create_table_like_a_hudi_table_keeps_its_keys_type_and_partitions(session: Session, table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')""")
    copy = f"{table_name}_like"
    session.sql(f"CREATE TABLE {copy} LIKE {table_name}")
    props = tblproperties(session, copy)
    assert (props["type"], props["primaryKey"], props["preCombineField"]) == ("mor", "id", "ts")
    config = Table.load(location(session, copy)).config
    assert config.raw_value("hoodie.table.type") == "MERGE_ON_READ"
    assert config.raw_value("hoodie.table.partition.fields") == "dt"
    assert config.raw_value("hoodie.table.name") == copy
    described = [r[0] for r in session.sql(f"DESCRIBE {copy}").collect()]
    assert described[5:10] == ["id", "name", "price", "ts", "dt"]
    session.sql(f"INSERT INTO {copy} VALUES (1, 'a', 10.0, 1000, '2024-01-01'), (1, 'b', 11.0, 1001, '2024-01-01')")
    assert rows(session, f"SELECT id, name, dt FROM {copy}") == [(1, "b", "2024-01-01")]
    assert [(r["id"], r["name"]) for r in hudi_rs_rows(location(session, copy))] == [(1, "b")]


def test_create_table_like_a_parquet_table_using_hudi(session: Session, table_name: str) -> None:
    source = f"{table_name}_pq"
    session.sql(f"CREATE TABLE {source} (id INT, name STRING, dt STRING) USING parquet PARTITIONED BY (dt)")
    session.sql(f"CREATE TABLE {table_name} LIKE {source} USING hudi TBLPROPERTIES (primaryKey = 'id')")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None and entry.is_hudi and entry.partition_columns == ("dt",)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'x')")
    assert rows(session, f"SELECT id, name, dt FROM {table_name}") == [(1, "a", "x")]
    # Without USING hudi the copy of a parquet table is Spark's own.
    session.sql(f"CREATE TABLE {table_name}_pq2 LIKE {source}")
    copy = session.catalog.lookup_name(f"{table_name}_pq2")
    assert copy is not None and copy.provider.lower() == "parquet"


def test_option_names_in_any_case_are_stored_as_hudi_spells_them(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, ts BIGINT) USING hudi "
                "TBLPROPERTIES (TYPE = 'mor', PRIMARYKEY = 'id', precombinefield = 'ts')")
    props = tblproperties(session, table_name)
    assert (props["type"], props["primaryKey"], props["preCombineField"]) == ("mor", "id", "ts")
    assert not {"TYPE", "PRIMARYKEY", "precombinefield"} & set(props)
    config = Table.load(location(session, table_name)).config
    assert config.raw_value("hoodie.table.recordkey.fields") == "id"
    assert config.raw_value("hoodie.table.precombine.field") == "ts"


@pytest.mark.parametrize(("option", "message"), [
    ("primaryKey = 'uuid'", "Can't find primaryKey `uuid` in root"),
    ("primaryKey = 'id', preCombineField = 'updated'", "Can't find preCombineKey `updated` in root"),
])
def test_unknown_key_columns_are_refused_with_hudis_message(session: Session, table_name: str, option: str,
                                                           message: str) -> None:
    with pytest.raises(SqlAnalysisError, match=message) as info:
        session.sql(f"CREATE TABLE {table_name} (id INT, ts BIGINT) USING hudi TBLPROPERTIES ({option})")
    assert "|-- id: integer" in str(info.value)
    assert session.catalog.lookup_name(table_name) is None
