"""Change data capture as a Hudi 0.14 user runs it (Hudi's TestCDCForSparkSQL): a table created with
``hoodie.table.cdc.enabled``, written by INSERT, UPDATE, DELETE, MERGE INTO and INSERT OVERWRITE, read with
``hudi_table_changes(t, 'cdc', ...)`` or the data source's ``incremental.format=cdc`` — one row per change
with ``op``, ``ts_ms`` and JSON ``before`` / ``after`` images, for every supplemental logging mode, on
copy-on-write and merge-on-read tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.formats.cdc import SupplementalLoggingMode
from engine.formats.log_format import CdcDataBlock, read_log_blocks
from engine.storage import Storage
from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows


def latest_commit(path: Path) -> str:
    """The newest completed write instant (commit, deltacommit or replacecommit)."""
    instant = Table.load(str(path)).timeline.last_completed_commit()
    assert instant is not None
    return instant.timestamp


def changes(session: Session, path: Path, begin: str, end: str | None = None) -> list[dict[str, Any]]:
    """CDC rows read through the data source, images parsed (a ``"null"`` text image counts as none)."""
    reader = (session.spark.read.format("hudi")
              .option("hoodie.datasource.query.type", "incremental")
              .option("hoodie.datasource.query.incremental.format", "cdc")
              .option("hoodie.datasource.read.begin.instanttime", begin))
    if end is not None:
        reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    out = []
    for row in reader.load(str(path)).collect():
        before = json.loads(row["before"]) if row["before"] is not None else None
        after = json.loads(row["after"]) if row["after"] is not None else None
        out.append({"op": row["op"], "ts_ms": row["ts_ms"], "before": before, "after": after})
    return out


def counts(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(inserts, updates, deletes)."""
    return tuple(sum(1 for r in rows if r["op"] == op) for op in ("i", "u", "d"))  # type: ignore[return-value]


def image(row: dict[str, Any], side: str, *columns: str) -> tuple[Any, ...] | None:
    values = row[side]
    return None if values is None else tuple(values[c] for c in columns)


@pytest.mark.parametrize(("table_type", "mode"), [
    ("cow", "OP_KEY_ONLY"), pytest.param("cow", "DATA_BEFORE", marks=pytest.mark.extended), ("cow", "DATA_BEFORE_AFTER"), ("mor", "DATA_BEFORE_AFTER"),
])
def test_every_statement_shows_its_changes_on_a_non_partitioned_table(
        session: Session, table_name: str, tmp_path: Path, table_type: str, mode: str) -> None:
    path = tmp_path / table_name
    compaction = ("'hoodie.compact.inline' = 'true', 'hoodie.compact.inline.max.delta.commits' = '2',"
                  if table_type == "mor" else "")
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                       'hoodie.table.cdc.supplemental.logging.mode' = '{mode}', {compaction} type = '{table_type}')
        LOCATION '{path}'""")
    session.sql("SET hoodie.spark.sql.insert.into.operation = upsert")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 11, 1000), (2, 'a2', 12, 1000), (3, 'a3', 13, 1000)")
        first = latest_commit(path)
        rows = changes(session, path, str(int(first) - 1))
        assert counts(rows) == (3, 0, 0)
        assert {image(r, "after", "id", "name", "price") for r in rows} == \
            {(1, "a1", 11.0), (2, "a2", 12.0), (3, "a3", 13.0)}
        assert all(r["ts_ms"] == first and r["before"] is None for r in rows)

        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1_v2', 11, 1100)")
        second = latest_commit(path)  # on MOR the inline compaction comes after: read from `first` on
        rows = changes(session, path, first)
        assert counts(rows) == (0, 1, 0)
        assert image(rows[0], "before", "id", "name", "price") == (1, "a1", 11.0)
        assert image(rows[0], "after", "id", "name", "price") == (1, "a1_v2", 11.0)

        session.sql(f"UPDATE {table_name} SET name = 'a2_v2', ts = 1200 WHERE id = 2")
        third = latest_commit(path)
        if table_type == "mor":  # the update went to a log file: its changes are inferred from it
            table = Table.load(str(path))
            update = next(i for i in table.timeline.completed_commits() if i.timestamp == third)
            assert all(".log." in (s.path or "") and not s.cdc_stats
                       for s in table.commit_metadata(update).all_write_stats())
        rows = changes(session, path, second)
        assert counts(rows) == (0, 1, 0)
        assert image(rows[0], "before", "name") == ("a2",) and image(rows[0], "after", "name") == ("a2_v2",)

        session.sql(f"DELETE FROM {table_name} WHERE id = 3")
        fourth = latest_commit(path)
        rows = changes(session, path, third)
        assert counts(rows) == (0, 0, 1)
        assert image(rows[0], "before", "id", "name") == (3, "a3") and rows[0]["after"] is None

        session.sql(f"""MERGE INTO {table_name} USING (
              SELECT 1 AS id, 'a1_v3' AS name, CAST(11 AS DOUBLE) AS price, CAST(1300 AS BIGINT) AS ts
              UNION ALL SELECT 4, 'a4', CAST(14 AS DOUBLE), CAST(1300 AS BIGINT)) s0
            ON s0.id = {table_name}.id
            WHEN MATCHED THEN UPDATE SET id = s0.id, name = s0.name, price = s0.price, ts = s0.ts
            WHEN NOT MATCHED THEN INSERT *""")
        rows = changes(session, path, fourth)
        assert counts(rows) == (1, 1, 0)
        by_op = {r["op"]: r for r in rows}
        assert image(by_op["u"], "before", "id", "name") == (1, "a1_v2")
        assert image(by_op["u"], "after", "id", "name", "price") == (1, "a1_v3", 11.0)
        assert by_op["i"]["before"] is None and image(by_op["i"], "after", "id", "name") == (4, "a4")

        assert counts(changes(session, path, str(int(first) - 1))) == (4, 3, 1)
        # The table function reads the same changes, by name or by path, from 'earliest'.
        for target in (table_name, str(path)):
            tvf = session.sql(f"SELECT op, count(*) FROM hudi_table_changes('{target}', 'cdc', 'earliest') "
                              "GROUP BY op").collect()
            assert dict((r[0], r[1]) for r in tvf) == {"i": 4, "u": 3, "d": 1}
        # A bounded range: only the UPDATE's commit.
        assert counts(changes(session, path, second, third)) == (0, 1, 0)
        # The table stays readable by other Hudi readers (CDC logs are not data files).
        assert sorted(r["id"] for r in hudi_rs_rows(path)) == [1, 2, 4]
    finally:
        session.sql("RESET hoodie.spark.sql.insert.into.operation")
        session.sql(f"DROP TABLE {table_name}")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_insert_overwrite_of_a_partition_deletes_what_it_replaces(
        session: Session, table_name: str, tmp_path: Path, table_type: str) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT, pt STRING) USING hudi
        PARTITIONED BY (pt)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true',
                       'hoodie.table.cdc.supplemental.logging.mode' = 'DATA_BEFORE', type = '{table_type}')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a1', 11, 1000, '2021'), (2, 'a2', 12, 1000, '2022'), "
                    "(3, 'a3', 13, 1000, '2022')")
        first = latest_commit(path)
        session.sql(f"INSERT OVERWRITE TABLE {table_name} PARTITION (pt = '2021') VALUES (1, 'a1_v2', 11, 1100)")
        second = latest_commit(path)
        rows = changes(session, path, first)
        assert counts(rows) == (1, 0, 1)
        by_op = {r["op"]: r for r in rows}
        assert image(by_op["d"], "before", "id", "name", "pt") == (1, "a1", "2021")
        assert image(by_op["i"], "after", "id", "name", "pt") == (1, "a1_v2", "2021")
        assert {r["ts_ms"] for r in rows} == {second}

        session.sql(f"UPDATE {table_name} SET name = 'a2_v2', ts = 1200 WHERE id = 2")
        third = latest_commit(path)
        assert counts(changes(session, path, second)) == (0, 1, 0)
        session.sql(f"""MERGE INTO {table_name} USING (
              SELECT 1 AS id, 'a1_v3' AS name, CAST(11 AS DOUBLE) AS price, CAST(1300 AS BIGINT) AS ts, '2021' AS pt
              UNION ALL SELECT 4, 'a4', CAST(14 AS DOUBLE), CAST(1300 AS BIGINT), '2022') s0
            ON s0.id = {table_name}.id
            WHEN MATCHED THEN UPDATE SET id = s0.id, name = s0.name, price = s0.price, ts = s0.ts, pt = s0.pt
            WHEN NOT MATCHED THEN INSERT *""")
        assert counts(changes(session, path, third)) == (1, 1, 0)
        assert counts(changes(session, path, str(int(first) - 1))) == (5, 2, 1)
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_deleting_every_record_of_a_file_group(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
        PARTITIONED BY (name)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true', type = 'cow')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 11, 1000, 'a1'), (2, 12, 1000, 'a2')")
        first = latest_commit(path)
        assert counts(changes(session, path, str(int(first) - 1))) == (2, 0, 0)
        session.sql(f"DELETE FROM {table_name} WHERE id = 1")
        rows = changes(session, path, first)
        assert counts(rows) == (0, 0, 1)
        assert image(rows[0], "before", "id", "name") == (1, "a1")
        assert session.sql(f"SELECT DISTINCT _hoodie_file_name FROM {table_name}").count() == 1
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_cdc_logs_are_written_as_hudi_writes_them(session: Session, table_name: str, tmp_path: Path) -> None:
    """The CDC log of a copy-on-write update: named ``.<fileId>_<instant>.log.1_<token>.cdc`` next to the new
    base file, listed with its size in the write stat's ``cdcStats``, one CDC data block whose schema is
    Hudi's (record ``CDC``: op, ts_ms, before, after) and whose images leave out the meta columns."""
    path = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true')
        LOCATION '{path}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1), (2, 'b', 1)")
        session.sql(f"UPDATE {table_name} SET name = 'a2', ts = 2 WHERE id = 1")
        table = Table.load(str(path))
        instant = table.timeline.last_completed_commit()
        assert instant is not None
        stat = table.commit_metadata(instant).all_write_stats()[0]
        assert stat.cdc_stats is not None and len(stat.cdc_stats) == 1
        (relative, size), = stat.cdc_stats.items()
        assert relative == f".{stat.file_id}_{instant.timestamp}.log.1_{stat.path.split('_')[1]}.cdc"
        full = path / relative
        assert full.stat().st_size == size
        blocks = list(read_log_blocks(Storage.for_uri(str(path)), str(full)))
        assert len(blocks) == 1 and isinstance(blocks[0], CdcDataBlock)
        schema = json.loads(blocks[0].schema_json or "{}")
        assert schema["name"] == "CDC" and [f["name"] for f in schema["fields"]] == ["op", "ts_ms", "before", "after"]
        records = blocks[0].records()
        assert [(r["op"], r["ts_ms"], r["before"]["name"], r["after"]["name"]) for r in records] == \
            [("u", instant.timestamp, "a", "a2")]
        assert "_hoodie_commit_time" not in records[0]["before"]
        # The DATA_BEFORE_AFTER images are Avro's text; an insert logged by a rewrite has the text "null" as
        # its before image (Hudi prints the missing image with GenericData.toString), and reading the table
        # is unaffected by the CDC logs.
        session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 1)")
        rows = session.sql(f"SELECT op, before, after FROM hudi_table_changes('{table_name}', 'cdc', "
                           f"'{int(instant.timestamp) - 1}') ORDER BY ts_ms").collect()
        assert [tuple(r) for r in rows] == [
            ("u", '{"id": 1, "name": "a", "ts": 1}', '{"id": 1, "name": "a2", "ts": 2}'),
            ("i", "null", '{"id": 3, "name": "c", "ts": 1}')]
        assert sorted(r["name"] for r in hudi_rs_rows(path)) == ["a2", "b", "c"]
    finally:
        session.sql(f"DROP TABLE {table_name}")


def test_cdc_queries_refuse_what_hudi_refuses(session: Session, table_name: str, tmp_path: Path) -> None:
    path = tmp_path / table_name
    session.sql(f"CREATE TABLE {table_name} (id INT, name STRING, ts BIGINT) USING hudi "
                f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '{path}'")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1)")
        with pytest.raises(Exception, match="It isn't a CDC hudi table on"):
            session.sql(f"SELECT * FROM hudi_table_changes('{table_name}', 'cdc', 'earliest')").collect()
        with pytest.raises(Exception, match="It isn't a CDC hudi table on"):
            changes(session, path, "000")
    finally:
        session.sql(f"DROP TABLE {table_name}")
    cdc = f"{table_name}_cdc"
    session.sql(f"CREATE TABLE {cdc} (id INT, name STRING, ts BIGINT) USING hudi "
                "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true')")
    try:
        session.sql(f"INSERT INTO {cdc} VALUES (1, 'a', 1)")
        with pytest.raises(Exception, match="This is not a valid range between 30000101000000000 and 20000101000000000"):
            session.sql(f"SELECT * FROM hudi_table_changes('{cdc}', 'cdc', '30000101000000000', "
                        "'20000101000000000')").collect()
        with pytest.raises(Exception, match="hoodie.table.cdc.supplemental.logging.mode"):
            session.sql(f"CREATE TABLE {cdc}_bad (id INT, ts BIGINT) USING hudi TBLPROPERTIES (primaryKey = 'id', "
                        "'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'ALL')")
    finally:
        session.sql(f"DROP TABLE {cdc}")
        session.sql(f"DROP TABLE IF EXISTS {cdc}_bad")


def test_supplemental_logging_modes_parse_as_hudi_names_them() -> None:
    assert SupplementalLoggingMode.parse(None) is SupplementalLoggingMode.DATA_BEFORE_AFTER
    assert SupplementalLoggingMode.parse("op_key_only") is SupplementalLoggingMode.OP_KEY_ONLY
    with pytest.raises(Exception, match="expected one of OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER"):
        SupplementalLoggingMode.parse("cdc_op_key")
