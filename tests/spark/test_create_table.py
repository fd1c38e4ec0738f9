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


def test_a_part_of_an_option_name_stands_for_it_as_in_hudi(session: Session, table_name: str) -> None:
    """TestInsertTable writes ``preCombine = 'name'``: Hudi 0.15 takes a key contained in a short option name as
    that option (HoodieOptionConfig.makeOptionsCaseInsensitive), so the batch's rows of key 2 are combined by
    ``name`` while an ``insert`` keeps the stored key 1 (checked against Apache Hudi 0.15 on a MOR table)."""
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, dt STRING) USING hudi "
                "PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombine = 'name')")
    props = tblproperties(session, table_name)
    assert props["preCombineField"] == "name" and "preCombine" not in props
    assert Table.load(location(session, table_name)).config.raw_value("hoodie.table.precombine.field") == "name"
    session.sql("SET hoodie.spark.sql.insert.into.operation = insert")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 10, '2021-07-18')")
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1_1', 10, '2021-07-18'), (2, 'a2', 20, '2021-07-18'), "
                    "(2, 'a2_2', 30, '2021-07-18')")
    finally:
        session.sql("RESET hoodie.spark.sql.insert.into.operation")
    expected = [(1, "a1", 10.0), (1, "a1_1", 10.0), (2, "a2_2", 30.0)]
    assert rows(session, f"SELECT id, name, price FROM {table_name}") == expected
    assert sorted((r["id"], r["name"], r["price"]) for r in hudi_rs_rows(location(session, table_name))) == expected


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


def test_hand_made_ro_and_rt_entries_read_a_mor_table_as_hudi_does(session: Session, table_name: str,
                                                                    tmp_path) -> None:
    base = str(tmp_path / table_name)
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor') LOCATION '{base}'""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a2', 1100)")
    for suffix, flag, expected in (("_ro", "true", (1, "a1", 1000)), ("_rt", "false", (1, "a2", 1100))):
        name = table_name + suffix
        session.sql(f"DROP TABLE IF EXISTS {name}")
        session.sql(f"CREATE TABLE {name} USING hudi TBLPROPERTIES ('hoodie.query.as.ro.table' = '{flag}') "
                    f"LOCATION '{base}'")
        props = tblproperties(session, name)
        assert (props["type"], props["primaryKey"], props["preCombineField"]) == ("mor", "id", "ts")
        entry = session.catalog.lookup_name(name)
        assert entry is not None and entry.properties["hoodie.query.as.ro.table"] == flag
        raw = session.spark._jsparkSession.sharedState().externalCatalog().getTable("default", name)
        assert raw.storage().properties().get("hoodie.query.as.ro.table").get() == flag
        assert rows(session, f"SELECT id, name, ts FROM {name}") == [expected]


def test_ro_rt_entries_need_an_existing_mor_table_and_no_ctas(session: Session, table_name: str, tmp_path) -> None:
    cow = str(tmp_path / "cow")
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'cow') LOCATION '{cow}'""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    cases = [
        (f"CREATE TABLE {table_name}_ro USING hudi TBLPROPERTIES ('hoodie.query.as.ro.table' = 'true') "
         f"LOCATION '{cow}'", "Creating ro/rt table should only apply to a mor table."),
        (f"CREATE TABLE {table_name}_rt USING hudi TBLPROPERTIES ('hoodie.query.as.ro.table' = 'true') "
         f"LOCATION '{tmp_path / 'missing'}'", "Creating ro/rt table need the existence of the base table."),
        (f"CREATE TABLE {table_name}_x USING hudi TBLPROPERTIES (primaryKey = 'id', type = 'mor', "
         f"'hoodie.query.as.ro.table' = 'true') LOCATION '{tmp_path / 'ctas'}' AS SELECT 1 AS id, 'a1' AS name",
         "Not support CTAS for the ro/rt table"),
    ]
    for sql, message in cases:
        with pytest.raises(SqlAnalysisError, match=message.replace(".", r"\.")):
            session.sql(sql)
    for name in (f"{table_name}_ro", f"{table_name}_rt", f"{table_name}_x"):
        assert session.catalog.lookup_name(name) is None
    assert not (tmp_path / "missing").exists() and not (tmp_path / "ctas").exists()


def test_partition_columns_without_a_schema_are_refused_over_an_existing_table(session: Session, table_name: str,
                                                                                 tmp_path) -> None:
    base = str(tmp_path / "t")
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, dt STRING) USING hudi PARTITIONED BY (dt)
        TBLPROPERTIES (primaryKey = 'id') LOCATION '{base}'""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', '2021-08-02')")
    with pytest.raises(SqlAnalysisError, match="not allowed to specify partition columns when the table schema"):
        session.sql(f"CREATE TABLE {table_name}_2 USING hudi PARTITIONED BY (dt) LOCATION '{base}'")
    session.sql(f"CREATE TABLE {table_name}_2 USING hudi LOCATION '{base}'")
    assert rows(session, f"SELECT id, name, dt FROM {table_name}_2") == [(1, "a1", "2021-08-02")]
    with pytest.raises(SqlAnalysisError, match="Table config: hoodie.table.recordkey.fields in the create table "
                                               "is: name, is not the same with the value in hoodie.properties"):
        session.sql(f"CREATE TABLE {table_name}_3 USING hudi TBLPROPERTIES (primaryKey = 'name') LOCATION '{base}'")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_ctas_leaves_name_database_and_operation_out_of_the_catalog(session: Session, table_name: str,
                                                                     table_type: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} USING hudi PARTITIONED BY (dt) TBLPROPERTIES (
            hoodie.database.name = 'databaseName', hoodie.table.name = 'tableName', primaryKey = 'id',
            preCombineField = 'ts', hoodie.datasource.write.operation = 'upsert', type = '{table_type}')
        AS SELECT 1 AS id, 'a1' AS name, 10 AS price, '2021-04-01' AS dt, 1000 AS ts""")
    assert rows(session, f"SELECT id, name, price, dt FROM {table_name}") == [(1, "a1", 10, "2021-04-01")]
    props = tblproperties(session, table_name)
    for key in ("hoodie.database.name", "hoodie.table.name", "hoodie.datasource.write.operation"):
        assert key not in props
    config = Table.load(location(session, table_name)).config
    assert config.raw_value("hoodie.database.name") == "default"
    assert config.raw_value("hoodie.table.name") == table_name
    assert config.raw_value("hoodie.datasource.write.operation") is None
    timeline = Table.load(location(session, table_name)).timeline.completed_commits()
    assert [i.action for i in timeline] == (["commit"] if table_type == "cow" else ["deltacommit"])


def test_managed_ctas_over_an_existing_location_is_refused_and_keeps_the_data(session: Session,
                                                                             table_name: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 1000)")
    path = location(session, table_name)
    session.sql(f"DROP TABLE {table_name}")
    other = f"{table_name}_2"
    session.sql(f"CREATE TABLE {other} (id INT, name STRING, ts BIGINT) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'")
    session.sql(f"INSERT INTO {other} VALUES (1, 'a1', 1000)")
    with pytest.raises(SqlAnalysisError, match="Can not create the managed table"):
        session.sql(f"CREATE TABLE {table_name} USING hudi AS SELECT * FROM {other}")
    assert rows(session, f"SELECT id, name, ts FROM {other}") == [(1, "a1", 1000)]


def test_ctas_onto_a_non_empty_directory_is_refused(session: Session, table_name: str, tmp_path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "data.csv").write_text("1,a\n")
    with pytest.raises(SqlAnalysisError, match="should be empty for CTAS"):
        session.sql(f"CREATE TABLE {table_name} USING hudi TBLPROPERTIES (primaryKey = 'id') "
                    f"LOCATION '{target}' AS SELECT 1 AS id")
    assert session.catalog.lookup_name(table_name) is None
    assert [p.name for p in target.iterdir()] == ["data.csv"]


def test_a_failed_ctas_leaves_no_table_behind(session: Session, table_name: str, tmp_path) -> None:
    base = tmp_path / "t"
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        session.sql(f"CREATE TABLE {table_name} USING hudi TBLPROPERTIES (primaryKey = 'id') LOCATION '{base}' "
                    "AS SELECT CAST(v AS INT) AS id, v AS name FROM VALUES ('x') AS s(v)")
    assert session.catalog.lookup_name(table_name) is None
    assert not base.exists()
