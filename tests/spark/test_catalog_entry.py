"""The catalog entry of a Hudi table, as Apache Hudi 0.14 registers it (Hive-compatible columns, Hudi's input
formats, Spark's data source properties), and what SHOW CREATE TABLE / DESCRIBE / SHOW TBLPROPERTIES show of
it; CREATE TABLE without a primaryKey needs the meta fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sqlext.errors import SqlAnalysisError
from sqlext.session import Session

pytestmark = pytest.mark.spark

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def rows(session: Session, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def columns(session: Session, name: str) -> list[tuple[Any, ...]]:
    """DESCRIBE rows up to the detailed table information (columns and # Partition Information)."""
    described = rows(session, f"DESCRIBE {name}")
    return described[: described.index(("", "", ""))] if ("", "", "") in described else described


def tblproperties(session: Session, name: str) -> dict[str, str]:
    return {k: v for k, v in rows(session, f"SHOW TBLPROPERTIES {name}")}


def hive_table(session: Session, name: str) -> Any:
    """The raw metastore entry, through Spark's Hive client (what Hive, Hive sync and BI tools see)."""
    external = session.spark._jsparkSession.sharedState().externalCatalog().unwrapped()
    return external.client().getTable("default", name)


def create_trips(session: Session, name: str, kind: str = "mor") -> None:
    session.sql(f"""CREATE TABLE {name} (id INT, rider STRING COMMENT 'who rode', city STRING,
            fare DECIMAL(10,2), ts BIGINT) USING hudi PARTITIONED BY (city) COMMENT 'trips table'
        TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts', 'hoodie.index.type' = 'SIMPLE')""")


def test_entry_is_hive_compatible_with_hudi_formats(session: Session, table_name: str, tmp_path: Path) -> None:
    create_trips(session, table_name)
    raw = hive_table(session, table_name)
    assert raw.storage().inputFormat().get() == "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
    assert raw.storage().outputFormat().get() == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    assert raw.storage().serde().get() == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert raw.tableType().name() == "MANAGED"
    hive_columns = [(f.name(), f.dataType().simpleString()) for f in raw.schema().fields()]
    assert hive_columns == [(m, "string") for m in META] + [
        ("id", "int"), ("rider", "string"), ("fare", "decimal(10,2)"), ("ts", "bigint"), ("city", "string")]
    jvm = session.spark._jvm
    assert jvm is not None
    assert list(jvm.scala.jdk.javaapi.CollectionConverters.asJava(raw.partitionColumnNames())) == ["city"]
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None and entry.is_hudi
    assert raw.storage().properties().get("path").get() == entry.location

    session.sql(f"CREATE TABLE {table_name}_c (id INT, v STRING) USING hudi LOCATION '{tmp_path / 'c'}' "
                "TBLPROPERTIES (primaryKey = 'id')")
    cow = hive_table(session, f"{table_name}_c")
    assert cow.storage().inputFormat().get() == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert cow.tableType().name() == "EXTERNAL"
    session.sql(f"INSERT INTO {table_name}_c VALUES (1, 'a')")
    assert rows(session, f"SELECT id, v FROM {table_name}_c") == [(1, "a")]


def test_show_create_table_recreates_the_same_table(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    statement = rows(session, f"SHOW CREATE TABLE {table_name}")[0][0]
    assert "_hoodie_" not in statement and "LOCATION" not in statement  # managed: no LOCATION
    assert "`fare` DECIMAL(10,2),\n  `ts` BIGINT,\n  `city` STRING)" in statement  # partition column last
    assert "PARTITIONED BY (`city`)" in statement and "USING hudi" in statement
    assert "COMMENT 'who rode'" in statement and "COMMENT 'trips table'" in statement
    copy = f"{table_name}_copy"
    session.sql(statement.replace(f"`default`.`{table_name}`", f"`default`.`{copy}`"))
    assert columns(session, copy) == columns(session, table_name)
    assert tblproperties(session, copy) == tblproperties(session, table_name)
    assert rows(session, f"SHOW CREATE TABLE {copy}")[0][0] == statement.replace(table_name, copy)


def test_show_create_table_of_an_external_table(session: Session, table_name: str, tmp_path: Path) -> None:
    location = tmp_path / "ext"
    session.sql(f"""CREATE TABLE {table_name} (id BIGINT, tags ARRAY<STRING>, attrs MAP<STRING, INT>,
        st STRUCT<a: INT, `b c`: STRING>) USING hudi LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'id', 'hoodie.datasource.write.hive_style_partitioning' = 'true')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, array('x'), map('k', 1), named_struct('a', 1, 'b c', 'z'))")
    statement = rows(session, f"SHOW CREATE TABLE {table_name}")[0][0]
    assert f"LOCATION '{location}'" in statement
    assert "`st` STRUCT<`a`: INT, `b c`: STRING>" in statement
    copy = f"{table_name}_copy"
    session.sql(statement.replace(f"`default`.`{table_name}`", f"`default`.`{copy}`"))  # over the same path
    assert columns(session, copy) == columns(session, table_name)
    assert tblproperties(session, copy) == tblproperties(session, table_name)
    assert rows(session, f"SELECT id, st.a FROM {copy}") == [(1, 1)]


def test_describe_extended_and_formatted(session: Session, table_name: str) -> None:
    create_trips(session, table_name, kind="cow")
    for form in ("EXTENDED", "FORMATTED"):
        described = rows(session, f"DESCRIBE {form} {table_name}")
        names = [r[0] for r in described]
        assert names[:10] == [*META, "id", "rider", "fare", "ts", "city"]
        start = names.index("# Partition Information")
        assert described[start + 2][:2] == ("city", "string")
        details = {r[0]: r[1] for r in described[names.index("# Detailed Table Information"):]}
        entry = session.catalog.lookup_name(table_name)
        assert entry is not None
        assert details["Provider"] == "hudi" and details["Location"].removeprefix("file:") == entry.location
        assert details["Table Properties"] == \
            "[hoodie.index.type=SIMPLE,preCombineField=ts,primaryKey=id,type=cow]"


def test_show_tblproperties_lists_the_users_options_only(session: Session, table_name: str) -> None:
    create_trips(session, table_name)
    assert tblproperties(session, table_name) == {
        "type": "mor", "primaryKey": "id", "preCombineField": "ts", "hoodie.index.type": "SIMPLE"}
    session.sql(f"ALTER TABLE {table_name} SET TBLPROPERTIES ('hoodie.keep.max.commits' = '40')")
    assert tblproperties(session, table_name)["hoodie.keep.max.commits"] == "40"


def test_table_over_an_existing_hudi_path_shows_its_keys(session: Session, table_name: str,
                                                          tmp_path: Path) -> None:
    location = tmp_path / "t"
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, ts BIGINT, p STRING) USING hudi
        PARTITIONED BY (p) LOCATION '{location}'
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'x')")
    over = f"{table_name}_over"
    session.sql(f"CREATE TABLE {over} USING hudi LOCATION '{location}'")
    assert tblproperties(session, over) == {"type": "mor", "primaryKey": "id", "preCombineField": "ts"}
    assert columns(session, over) == columns(session, table_name)
    assert rows(session, f"SELECT id, v, p FROM {over}") == [(1, "a", "x")]


def test_create_without_primary_key_needs_meta_fields(session: Session, table_name: str) -> None:
    # keyless tables (auto-generated keys, tests/spark/test_keyless_tables.py) keep their key in the meta fields
    with pytest.raises(SqlAnalysisError, match=rf"default\.{table_name}: Disabling hoodie.populate.meta.fields"):
        session.sql(f"CREATE TABLE {table_name} (id INT, v STRING) USING hudi "
                    "TBLPROPERTIES (type = 'cow', 'hoodie.populate.meta.fields' = 'false')")
    assert session.catalog.lookup_name(table_name) is None
    assert not (session.catalog.warehouse / table_name).exists()
    session.sql(f"CREATE TABLE {table_name} (id INT, v STRING) USING hudi "
                "TBLPROPERTIES ('hoodie.datasource.write.recordkey.field' = 'id')")
    assert tblproperties(session, table_name)["primaryKey"] == "id"


def test_add_columns_to_a_partitioned_table(session: Session, table_name: str) -> None:
    create_trips(session, table_name, kind="cow")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1.00, 1, 'sf')")
    session.sql(f"ALTER TABLE {table_name} ADD COLUMNS (note STRING COMMENT 'free text')")
    described = columns(session, table_name)
    assert [r[0] for r in described[5:11]] == ["id", "rider", "fare", "ts", "note", "city"]
    raw = hive_table(session, table_name)
    assert [f.name() for f in raw.schema().fields()][-2:] == ["note", "city"]
    session.sql(f"INSERT INTO {table_name} (id, rider, city, fare, ts, note) VALUES (2, 'b', 'la', 2.00, 1, 'n')")
    assert rows(session, f"SELECT id, note, city FROM {table_name} ORDER BY id") == [(1, None, "sf"), (2, "n", "la")]
    assert "`note` STRING COMMENT 'free text',\n  `city` STRING)" in rows(session, f"SHOW CREATE TABLE {table_name}")[0][0]


def test_hive_columns_use_hive_syncs_types(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (id INT, b TINYINT, s SMALLINT, a ARRAY<SMALLINT>) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id')")
    raw = hive_table(session, table_name)
    assert [(f.name(), f.dataType().simpleString()) for f in raw.schema().fields()][5:] == [
        ("id", "int"), ("b", "int"), ("s", "int"), ("a", "array<int>")]  # what Hive sync derives from Avro
    # Hudi 0.15's catalog schema is its Avro schema's (HoodieCatalogTable), so DESCRIBE shows the same int columns
    assert [r[:2] for r in columns(session, table_name)][5:] == [
        ("id", "int"), ("b", "int"), ("s", "int"), ("a", "array<int>")]


def test_show_create_table_of_other_tables_goes_to_spark(session: Session, table_name: str) -> None:
    session.sql(f"CREATE TABLE {table_name} (a INT) USING parquet")
    assert rows(session, f"SHOW CREATE TABLE {table_name}")[0][0].startswith(
        f"CREATE TABLE spark_catalog.default.{table_name}")
