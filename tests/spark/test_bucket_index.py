"""The bucket index (hoodie.index.type=BUCKET, engine SIMPLE) as a user drives it: file groups named by bucket,
keys where Hudi's hash puts them, merge-on-read inserts into existing buckets as log records, bulk insert,
settings refused with nothing written, and Hudi-written tables updated through every other index type."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.errors import ConfigError, IndexLookupError
from engine.index.bucket import bucket_id, bucket_of_file_id
from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark


def _layout(base: Path) -> dict[str, list[tuple[str, bool, int]]]:
    """partition → [(file id, has base file, log files)] of the latest slices."""
    view = Table.load(str(base)).file_system_view()
    return {p: sorted((fs.file_id, fs.base_file is not None, len(fs.log_files)) for fs in view.latest_file_slices(p))
            for p in view.partition_paths()}


def test_mor_bucket_table_routes_inserts_into_existing_buckets_to_logs(
        session: Session, table_name: str, tmp_path: Path) -> None:
    base = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id STRING, v INT, ts BIGINT) USING hudi
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', 'hoodie.index.type' = 'BUCKET',
                       'hoodie.bucket.index.num.buckets' = '2') LOCATION '{base}'""")
    try:
        session.sql(f"INSERT INTO {table_name} VALUES " + ", ".join(f"('k{i}', {i}, 1)" for i in range(10)))
        first = _layout(base)[""]
        assert sorted(bucket_of_file_id(f) for f, _, _ in first) == [0, 1]
        assert all(has_base and logs == 0 for _, has_base, logs in first)
        # New keys whose buckets exist: log records in those file groups (Hudi tags them with the bucket's location).
        session.sql(f"INSERT INTO {table_name} VALUES " + ", ".join(f"('n{i}', {i}, 2)" for i in range(6)))
        session.sql(f"UPDATE {table_name} SET v = -1 WHERE id = 'k3'")
        second = _layout(base)[""]
        assert [f for f, _, _ in second] == [f for f, _, _ in first]
        assert all(logs >= 1 for _, _, logs in second)
        expected = sorted([(f"k{i}", -1 if i == 3 else i) for i in range(10)] + [(f"n{i}", i) for i in range(6)])
        rows = hudi_rs_rows(base)
        assert sorted((r["id"], r["v"]) for r in rows) == expected
        assert sorted(tuple(r) for r in session.sql(f"SELECT id, v FROM {table_name}").collect()) == expected
        for row in rows:
            fid = row["_hoodie_file_name"].split("_")[0]
            assert bucket_of_file_id(fid) == bucket_id(row["id"], ["id"], 2), row
        done = session.sql(f"CALL run_compaction(op => 'run', table => '{table_name}', "
                           "options => 'hoodie.compact.inline.max.delta.commits=1')").collect()
        assert done and done[0]["state"] == "COMPLETED"
        assert all(has_base and logs == 0 for _, has_base, logs in _layout(base)[""])
        assert sorted((r["id"], r["v"]) for r in hudi_rs_rows(base, read_optimized="true")) == expected
    finally:
        session.sql(f"DROP TABLE IF EXISTS {table_name}")


def test_complex_key_hashes_the_configured_fields_and_bulk_insert_keeps_buckets(
        session: Session, table_name: str, tmp_path: Path) -> None:
    base = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, name STRING, ts INT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id,name', preCombineField = 'ts',
        'hoodie.index.type' = 'BUCKET', 'hoodie.bucket.index.num.buckets' = '5', 'hoodie.bucket.index.hash.field' = 'id')
        LOCATION '{base}'""")
    try:
        session.spark.conf.set("hoodie.spark.sql.insert.into.operation", "bulk_insert")
        try:
            session.sql(f"INSERT INTO {table_name} VALUES " +
                        ", ".join(f"({i}, 'n{i % 4}', 1, 'd{i % 2}')" for i in range(40)))
        finally:
            session.spark.conf.unset("hoodie.spark.sql.insert.into.operation")
        session.sql(f"INSERT INTO {table_name} VALUES " +
                    ", ".join(f"({i}, 'n{i % 4}', 2, 'd{i % 2}')" for i in range(30, 50)))
        rows = hudi_rs_rows(base)
        assert sorted((r["id"], r["ts"]) for r in rows) == \
            sorted([(i, 1) for i in range(30)] + [(i, 2) for i in range(30, 50)])
        for row in rows:
            assert row["_hoodie_record_key"] == f"id:{row['id']},name:{row['name']}"
            fid = row["_hoodie_file_name"].split("_")[0]
            assert bucket_of_file_id(fid) == bucket_id(row["_hoodie_record_key"], ["id"], 5), row
        for partition, slices in _layout(base).items():
            buckets = [bucket_of_file_id(f) for f, _, _ in slices]
            assert len(buckets) == len(set(buckets)) <= 5, (partition, slices)
    finally:
        session.sql(f"DROP TABLE IF EXISTS {table_name}")


def test_bad_bucket_settings_and_foreign_layouts_are_refused_with_nothing_written(
        session: Session, table_name: str, tmp_path: Path, hudi_fixture: Callable[..., str]) -> None:
    base = tmp_path / table_name
    session.sql(f"""CREATE TABLE {table_name} (id INT, v INT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', 'hoodie.index.type' = 'BUCKET') LOCATION '{base}'""")
    spark = session.spark
    try:
        for key, value, message in [
            ("hoodie.index.bucket.engine", "CONSISTENT_HASHING", "hoodie.index.bucket.engine=CONSISTENT_HASHING is not supported"),
            ("hoodie.bucket.index.hash.field", "v", "must be a subset of the record key fields"),
            ("hoodie.bucket.index.num.buckets", "-1", "positive number of buckets"),
        ]:
            spark.conf.set(key, value)
            try:
                with pytest.raises(ConfigError, match=message):
                    session.sql(f"INSERT INTO {table_name} VALUES (1, 1)")
            finally:
                spark.conf.unset(key)
        assert not Table.load(str(base)).timeline.reload().instants
        # A table Hudi wrote with the simple index has no bucket file groups: refused, table unchanged.
        location = hudi_fixture("sample_table/cow/v6_nonpartitioned", fresh=True)
        before = sorted(r["id"] for r in hudi_rs_rows(location))
        spark.conf.set("hoodie.index.type", "BUCKET")
        try:
            session.sql(f"CREATE TABLE {table_name}_fx USING hudi LOCATION '{location}'")
            with pytest.raises(IndexLookupError, match="not a bucket file group"):
                session.sql(f"UPDATE {table_name}_fx SET intField = 0 WHERE id = {before[0]}")
        finally:
            spark.conf.unset("hoodie.index.type")
        assert sorted(r["id"] for r in hudi_rs_rows(location)) == before
    finally:
        session.sql(f"DROP TABLE IF EXISTS {table_name}")
        session.sql(f"DROP TABLE IF EXISTS {table_name}_fx")


@pytest.mark.parametrize(("fixture", "index_type"), [
    ("sample_table/cow/v6_simplekeygen_nonhivestyle", "BLOOM"),
    ("sample_table/cow/v6_complexkeygen_hivestyle", "GLOBAL_SIMPLE"),
    ("sample_table/mor/parquet/v6_complexkeygen_hivestyle", "GLOBAL_BLOOM"),
    ("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle", "SIMPLE"),
])
def test_hudi_written_tables_take_merges_through_every_index_type(
        session: Session, table_name: str, hudi_fixture: Callable[..., str], fixture: str, index_type: str) -> None:
    location = hudi_fixture(fixture, fresh=True)
    before = {r["id"]: r for r in hudi_rs_rows(location)}
    session.sql(f"CREATE TABLE {table_name} USING hudi LOCATION '{location}'")
    session.spark.conf.set("hoodie.index.type", index_type)
    try:
        target = sorted(before)[0]
        on = " AND ".join(f"t.{k} = s.{k}" for k in Table.load(location).record_key_fields)
        session.sql(f"""MERGE INTO {table_name} t USING (SELECT * FROM {table_name} WHERE id = {target}) s
            ON {on} WHEN MATCHED THEN UPDATE SET intField = -7""")
        after = {r["id"]: r for r in hudi_rs_rows(location)}
        assert sorted(after) == sorted(before)
        assert after[target]["intField"] == -7
        assert all(after[i]["intField"] == before[i]["intField"] for i in before if i != target)
    finally:
        session.spark.conf.unset("hoodie.index.type")
        session.sql(f"DROP TABLE IF EXISTS {table_name}")


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_a_merge_of_whole_rows_into_a_bucket_table_looks_nothing_up(
        session: Session, table_name: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *``: every source row is written as it is, so
    with the bucket index (a key's file group is its hash's) the MERGE is an upsert: no stored key is read. The
    rows equal those of the same MERGE with a condition, which looks the keys up; ordering still decides."""
    import engine.spark.merge as merge

    names = (table_name, f"{table_name}_looked_up")
    for name in names:
        session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt)
            TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts', 'hoodie.index.type' = 'BUCKET',
                           'hoodie.bucket.index.num.buckets' = '4')""")
        session.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"({i}, 'v{i}', 5, 'd{i % 2}')" for i in range(8)))
    source = ("SELECT * FROM VALUES (1, 'new1', 6, 'd1'), (2, 'old2', 4, 'd0'), (3, 'moved3', 6, 'd0'), "
              "(9, 'new9', 1, 'd1') AS s(id, v, ts, dt)")
    statement = ("MERGE INTO {t} t USING ({s}) s ON t.id = s.id AND t.dt = s.dt "
                 "WHEN MATCHED {cond}THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")

    def no_lookup(*args: object, **kwargs: object) -> None:
        raise AssertionError("the plain MERGE looked stored keys up")

    with monkeypatch.context() as patched:
        patched.setattr(merge, "locate_keys", no_lookup)
        patched.setattr(merge, "stored_rows", no_lookup)
        session.sql(statement.format(t=names[0], s=source, cond=""))
    session.sql(statement.format(t=names[1], s=source, cond="AND s.ts >= 0 "))
    got = [sorted(tuple(r) for r in session.sql(f"SELECT id, v, ts, dt FROM {n}").collect()) for n in names]
    assert got[0] == got[1]
    # id 1 updated; id 2 kept on copy-on-write (its stored ts 5 is greater: ExpressionPayload's ordering), a log
    # record the table's payload merges on merge-on-read (as in Hudi); id 3 inserted in d0 (the bucket index is not
    # global: the d1 copy stays); id 9 new
    two = (2, "v2", 5, "d0") if kind == "cow" else (2, "old2", 4, "d0")
    assert [r for r in got[0] if r[0] in (1, 2, 3, 9)] == [
        (1, "new1", 6, "d1"), two, (3, "moved3", 6, "d0"), (3, "v3", 5, "d1"), (9, "new9", 1, "d1")]
    entry = session.catalog.lookup_name(names[0])
    assert entry is not None
    base = entry.location
    assert sorted((r["id"], r["v"]) for r in hudi_rs_rows(base)) == [(r[0], r[1]) for r in got[0]]
    for name in names:
        session.sql(f"DROP TABLE {name}")


def test_ctas_into_a_bucket_table_writes_each_bucket_as_one_file_group(
        session: Session, table_name: str, tmp_path: Path) -> None:
    """A CTAS into a bucket table (Hudi's default 256 buckets, a composite key, partitioned) writes every bucket
    straight into one new file group, as Hudi's bulk insert with the bucket index does: each key in the file
    group its hash names, each file's rows ordered by key under GLOBAL_SORT. Later writes find those buckets:
    a MERGE adds no second file group to any of them."""
    source = tmp_path / "source"
    session.spark.range(3000).selectExpr(
        "CAST(id % 1000 AS INT) AS a", "CAST(id DIV 1000 AS INT) AS b", "concat('v', id) AS v",
        "CAST(id % 3 AS STRING) AS p").write.parquet(str(source))
    session.sql("SET hoodie.bulkinsert.sort.mode=GLOBAL_SORT")
    try:
        session.sql(f"""CREATE TABLE {table_name} USING hudi PARTITIONED BY (p)
            TBLPROPERTIES (primaryKey = 'a,b', 'hoodie.index.type' = 'BUCKET')
            AS SELECT * FROM parquet.`{source}`""")
    finally:
        session.sql("RESET hoodie.bulkinsert.sort.mode")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    base = entry.location
    table = Table.load(base)
    commit = table.timeline.completed_commits()[-1]
    assert table.commit_metadata(commit).operation_type == "BULK_INSERT"
    rows = hudi_rs_rows(base)
    assert len(rows) == 3000
    pairs = set()
    for row in rows:
        bucket = bucket_id(row["_hoodie_record_key"], ["a", "b"], 256)
        assert bucket_of_file_id(row["_hoodie_file_name"].split("_")[0]) == bucket, row
        pairs.add((row["p"], bucket))
    layout = _layout(Path(base))
    assert sum(len(slices) for slices in layout.values()) == len(pairs)
    view = table.file_system_view()
    for base_file in view.all_latest_base_files():
        keys = pq.read_table(base_file.path, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert keys == sorted(keys), base_file.path
    session.sql(f"""MERGE INTO {table_name} t USING (SELECT * FROM VALUES (1, 0, 'x', '1'), (5000, 0, 'y', '2')
        AS s(a, b, v, p)) s ON t.a = s.a AND t.b = s.b
        WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *""")
    for partition, slices in _layout(Path(base)).items():
        buckets = [bucket_of_file_id(f) for f, _, _ in slices]
        assert len(buckets) == len(set(buckets)), partition
    got = {(r["a"], r["b"]): r["v"] for r in hudi_rs_rows(base)}
    assert len(got) == 3001 and got[(1, 0)] == "x" and got[(5000, 0)] == "y" and got[(2, 0)] == "v2"
    session.sql(f"DROP TABLE {table_name}")


def test_bucket_numbers_are_hashed_in_the_jvm_as_hudi_hashes_them(session: Session) -> None:
    """An sqlext session computes bucket numbers with the JVM function (no Python worker), equal to Hudi's rule
    (engine.index.bucket.bucket_id, itself checked against Hudi-written tables) on keys of every shape."""
    import random

    from engine.index.bucket import BucketSpec
    from engine.spark.index import _JAVA_BUCKET_ID_FUNCTION, bucket_id_column

    rng = random.Random(33)
    keys = [",".join(rng.choice(["f1:", "f2:", "f3:", ""]) + "".join(rng.choice("ab:_1é€𝄞") for _ in range(
        rng.randint(0, 4))) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    keys += ["f1:__null__,f2:x", "f1:__empty__", "__null__", "", ",", "a,,b", "f1:a:b,f2:c", ":x", "f1:",
             "f1:1,f2:2,", "l_orderkey:1,l_linenumber:7", "id:42", "42"]
    frame = session.spark.createDataFrame([(k,) for k in keys], "_hoodie_record_key string")
    for fields, num in ((("f1", "f2"), 16), ((), 256), (("f3",), 7), (("l_orderkey", "l_linenumber"), 1)):
        column = bucket_id_column(BucketSpec(num, fields))
        hashed = frame.select("_hoodie_record_key", column.alias("b"))
        plan = hashed._jdf.queryExecution().executedPlan().toString()
        assert _JAVA_BUCKET_ID_FUNCTION in plan and "ArrowEvalPython" not in plan, plan
        got = {r[0]: r[1] for r in hashed.collect()}
        assert got == {k: bucket_id(k, fields, num) for k in keys}, (fields, num)
    with pytest.raises(Exception, match="InvalidRecordKey"):
        session.spark.createDataFrame([(None,)], "_hoodie_record_key string").select(
            bucket_id_column(BucketSpec(4, ()))).collect()
