"""No write escapes its table: a partition value that would make a folder outside the table (or a folder
name that is not one) is refused before anything is written, or stored escaped when
``hoodie.datasource.write.partitionpath.urlencode=true``; what is stored reads back unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import NestedPartitionPath, UnsafePartitionPath
from engine.partition_path import UNSAFE_SEGMENT_REGEX, URL_ENCODE_KEY, unsafe_reason
from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = pytest.mark.spark

NUL = "a\x00b"
NEWLINE = "a\nb"
CLEF = "\U0001d11e"  # 4-byte UTF-8
# Refused without urlencode: non-hive-style folders are the value itself.
REFUSED_PLAIN = ["..", "../../../../outside", "/x", "/", ".", "a//b", "x/", NUL, NEWLINE, ".hidden"]
# Hive style writes "p=<value>": "..", "." and a leading "/" stay inside that folder, the rest is refused.
REFUSED_HIVE = ["../../../../outside", "../../x", "a//b", "x/..", NUL, NEWLINE]
# With urlencode every value is one safe folder and reads back unchanged.
ENCODED = ["..", ".", "../../../../outside", "/x", "/", "a//b", NUL, NEWLINE, "%", "%2F", "%2E%2E", CLEF,
           "a/b", "50% off", ".hidden"]
# Without urlencode these are safe as they are and must read back unchanged too.
PLAIN_SAFE = ["%", "%2F", "50%", "%2E%2E", CLEF, "a%zz", "_x", "a/b"]


TABLE_SHAPES = [
    pytest.param(False, False, id="cow"),
    pytest.param(False, True, id="cow-hive"),
    pytest.param(True, False, id="mor"),
    # MOR writes take the same key path as COW; the fourth shape adds little.
    pytest.param(True, True, id="mor-hive", marks=pytest.mark.slow),
]
URLENCODE_SHAPES = [  # the value handling is the key generator's, one per table type by default
    pytest.param(False, False, id="cow", marks=pytest.mark.extended),
    pytest.param(False, True, id="cow-hive"),
    pytest.param(True, False, id="mor"),
    pytest.param(True, True, id="mor-hive", marks=pytest.mark.extended),
]


def tree(root: Path, skip: Path | None = None) -> set[str]:
    """Every path below ``root`` (relative), without ``skip`` and what is below it."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        if skip is not None and Path(folder) == skip:
            dirs.clear()
            continue
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


def create(session: Session, name: str, location: Path, *, mor: bool, hive: bool, urlencode: bool,
           key_type: str = "INT") -> None:
    session.sql(f"""CREATE TABLE {name} (id {key_type}, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'id', type = '{'mor' if mor else 'cow'}',
                       'hoodie.datasource.write.hive_style_partitioning' = '{str(hive).lower()}',
                       '{URL_ENCODE_KEY}' = '{str(urlencode).lower()}')""")


def source(session: Session, values: list[str], first_id: int = 1) -> str:
    """A temp view ``(id, v, p)`` with one row per value (ids from ``first_id``)."""
    rows = [(first_id + i, f"v{i}", value) for i, value in enumerate(values)]
    session.spark.createDataFrame(rows, "id INT, v STRING, p STRING").createOrReplaceTempView("path_src")
    return "path_src"


def assert_only_last_commit(session: Session, name: str, location: Path, commit: str,
                            expected: list[tuple[int, str]]) -> None:
    """The table reads its last commit ``commit`` and has nothing pending, no marker folders."""
    table = Table.load(str(location))
    timeline = table.timeline.reload()
    assert timeline.pending() == []
    last = timeline.last_completed_commit()
    assert last is not None and last.timestamp == commit
    assert not any((location / ".hoodie" / ".temp").iterdir())
    got = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, p FROM {name}").collect())
    assert got == sorted(expected)


def data_folders(location: Path) -> set[str]:
    """Folders (relative to the table) holding data files."""
    return {os.path.relpath(folder, location) for folder, _, files in os.walk(location)
            if ".hoodie" not in Path(folder).relative_to(location).parts
            and any(f.endswith(".parquet") or ".log." in f for f in files)}


@pytest.mark.parametrize(("mor", "hive"), TABLE_SHAPES)
def test_unsafe_partition_value_is_refused_before_writing(
        session: Session, table_name: str, tmp_path: Path, mor: bool, hive: bool) -> None:
    location = tmp_path / "a" / "b" / "c" / "d" / "e" / table_name
    create(session, table_name, location, mor=mor, hive=hive, urlencode=False)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'ok')")
    commit = Table.load(str(location)).timeline.last_completed_commit()
    assert commit is not None
    before = tree(tmp_path, skip=location)
    # Every value goes through the same regex (test_spark_and_python_checks_agree); a few end to end.
    refused = ["../../../../outside", NEWLINE] if hive else ["../../../../outside", NUL, ".hidden", "."]
    if mor:
        refused = refused[:1]
    for value in refused:
        src = source(session, ["fine", value], first_id=2)
        with pytest.raises(UnsafePartitionPath) as info:
            session.sql(f"INSERT INTO {table_name} SELECT id, v, p FROM {src}")
        text = str(info.value)
        assert f"table {table_name}" in text and "partition field 'p'" in text, text
        assert f"'{URL_ENCODE_KEY}' = 'true'" in text, text
        shown = value.replace("\x00", "\\u0000").replace("\n", "\\n")
        assert f'"{shown}"' in text, text
        assert tree(tmp_path, skip=location) == before, value
        assert_only_last_commit(session, table_name, location, commit.timestamp, [(1, "ok")])
    if mor:
        return
    # MERGE takes the same path.
    src = source(session, ["../../../../outside"], first_id=9)
    with pytest.raises(UnsafePartitionPath, match=r"partition field 'p' value \"\.\./\.\./\.\./\.\./outside\""):
        session.sql(f"""MERGE INTO {table_name} t USING {src} s ON t.id = s.id
                       WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    assert tree(tmp_path, skip=location) == before
    assert_only_last_commit(session, table_name, location, commit.timestamp, [(1, "ok")])


def test_spark_and_python_checks_agree(session: Session) -> None:
    """The Spark-expression fast path (Java regex) refuses exactly what the Python generator (RE2) does."""
    from pyspark.sql import functions as F

    values = sorted({*REFUSED_PLAIN, *REFUSED_HIVE, *ENCODED, *PLAIN_SAFE, "a\x01b", "tab\t", "del\x7f",
                     "x/./y", "...", ".a", "a.", "a/b/c", "p=..", "p=/x", "x/", "p="})
    df = session.spark.createDataFrame([(v,) for v in values], "v STRING")
    flags = {str(r[0]): bool(r[1]) for r in df.select("v", F.col("v").rlike(UNSAFE_SEGMENT_REGEX)).collect()}
    assert flags == {v: unsafe_reason(v) is not None for v in values}


def test_python_key_generator_path_refuses_too(session: Session, table_name: str, tmp_path: Path) -> None:
    """A DOUBLE record key is not rendered by Spark expressions: keys come from the Python generator."""
    location = tmp_path / "a" / "b" / "c" / "d" / table_name
    create(session, table_name, location, mor=False, hive=False, urlencode=False, key_type="DOUBLE")
    session.sql(f"INSERT INTO {table_name} VALUES (1.5, 'a', 'ok')")
    commit = Table.load(str(location)).timeline.last_completed_commit()
    assert commit is not None
    before = tree(tmp_path, skip=location)
    for value in ["../../../../outside", NEWLINE]:
        with pytest.raises(UnsafePartitionPath) as info:
            session.sql(f"INSERT INTO {table_name} SELECT CAST(id AS DOUBLE), v, p FROM "
                        f"{source(session, [value], first_id=2)}")
        assert f"table {table_name}: partition field 'p' value {value!r}" in str(info.value)
        assert URL_ENCODE_KEY in str(info.value)
    assert tree(tmp_path, skip=location) == before
    rows = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, p FROM {table_name}").collect())
    assert rows == [(1.5, "ok")]
    assert Table.load(str(location)).timeline.reload().pending() == []


@pytest.mark.parametrize(("mor", "hive"), URLENCODE_SHAPES)
def test_urlencode_stores_any_value_and_reads_it_back(
        session: Session, table_name: str, tmp_path: Path, mor: bool, hive: bool) -> None:
    location = tmp_path / "a" / "b" / "c" / "d" / "e" / table_name
    create(session, table_name, location, mor=mor, hive=hive, urlencode=True)
    before = tree(tmp_path, skip=location)
    src = source(session, ENCODED)
    result = session.sql(f"INSERT INTO {table_name} SELECT id, v, p FROM {src}").collect()
    assert result[0]["num_inserted_rows"] == len(ENCODED)
    expected = [(i + 1, value) for i, value in enumerate(ENCODED)]
    got = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, p FROM {table_name}").collect())
    assert got == expected
    assert tree(tmp_path, skip=location) == before
    # One folder per value, directly below the table.
    folders = data_folders(location)
    assert len(folders) == len(ENCODED) and all("/" not in f and f not in (".", "..") for f in folders)
    # Partition pruning decodes folder names back to the same values.
    for value in ["..", "%2F", NEWLINE]:
        found = session.spark.table(table_name).where(f"p = {sql_literal(value)}").select("id").collect()
        assert [r[0] for r in found] == [ENCODED.index(value) + 1], value
    # MERGE updates a row in such a partition and inserts into a new one.
    src = source(session, ["..", "../new"], first_id=1)
    session.sql(f"""MERGE INTO {table_name} t USING {src} s ON t.id = s.id
                   WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT *""")
    merged_rows = [(r[0], r[1], r[2]) for r in session.sql(f"SELECT id, v, p FROM {table_name}").collect()]
    assert [(v, p) for i, v, p in merged_rows if i == 1] == [("merged", "..")]
    # Non-global index (Hudi): key 2 is looked up in '../new' only, so it is a new record there.
    assert (2, "../new") in [(i, p) for i, _, p in merged_rows]
    assert tree(tmp_path, skip=location) == before
    if not mor:
        # The oracle (hudi-rs) reads the same values from the folders we wrote.
        oracle = sorted((int(str(r["id"])), str(r["p"])) for r in hudi_rs_rows(location))
        assert oracle == sorted((i, p) for i, _, p in merged_rows)


def sql_literal(value: str) -> str:
    """A Spark SQL string literal for any value (control characters through ``char``)."""
    parts = []
    for ch in value:
        parts.append(f"char({ord(ch)})" if ord(ch) < 0x20 else "'" + ch.replace("\\", "\\\\").replace("'", "\\'") + "'")
    return "concat(" + ", ".join(parts) + ")" if len(parts) > 1 else parts[0]


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
def test_percent_and_4_byte_values_round_trip_without_urlencode(
        session: Session, table_name: str, tmp_path: Path, hive: bool) -> None:
    location = tmp_path / "w" / table_name
    create(session, table_name, location, mor=False, hive=hive, urlencode=False)
    session.sql(f"INSERT INTO {table_name} SELECT id, v, p FROM {source(session, PLAIN_SAFE)}")
    got = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, p FROM {table_name}").collect())
    assert got == [(i + 1, v) for i, v in enumerate(PLAIN_SAFE)]
    assert data_folders(location) == {f"p={v}" if hive else v for v in PLAIN_SAFE}
    for value in PLAIN_SAFE:
        found = session.spark.table(table_name).where(f"p = {sql_literal(value)}").select("id").collect()
        assert [r[0] for r in found] == [PLAIN_SAFE.index(value) + 1], value
    oracle = sorted((int(str(r["id"])), str(r["p"])) for r in hudi_rs_rows(location))
    assert oracle == got


def test_managed_table_name_cannot_leave_the_warehouse(session: Session) -> None:
    warehouse = Path(session.catalog.warehouse)
    parent = warehouse.parent
    before = {p for p in tree(parent) if "metastore_db" not in p and not p.endswith(".log")}
    for name in ["`../evil`", "`..`", "`a/b`"]:
        with pytest.raises(Exception) as info:  # noqa: PT011 - Spark or we refuse; both are fine
            session.sql(f"CREATE TABLE {name} (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        assert "evil" in str(info.value) or ".." in str(info.value) or "a/b" in str(info.value)
    after = {p for p in tree(parent) if "metastore_db" not in p and not p.endswith(".log")}
    assert after - before == set()
    assert not (parent / "evil").exists()


def test_a_partition_inside_another_partition_is_refused(session: Session, table_name: str, tmp_path: Path) -> None:
    """A value holding '/' makes a two-level folder (``p=../n`` is ``p=..`` then ``n``); a later partition
    whose folder holds it, or lies inside it, would hide one from every listing that stops at a partition
    metafile, so the write is refused before any data file is written, by every write path."""
    location = tmp_path / table_name
    create(session, table_name, location, mor=False, hive=True, urlencode=False)
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', '../n'), (2, 'b', 'x')")
    commit = Table.load(str(location)).timeline.last_completed_commit()
    assert commit is not None
    folders = data_folders(location)
    assert folders == {"p=../n", "p=x"}
    expected = [(1, "../n"), (2, "x")]
    # The outer folder of an existing partition; a folder inside an existing partition; two nested in one
    # statement (upsert), and in one bulk insert (tasks write before the driver sees the partitions).
    cases = [("VALUES (3, 'c', '..')", "p=..", "p=../n"), ("VALUES (4, 'd', 'x/y')", "p=x", "p=x/y"),
             ("VALUES (5, 'e', 'z'), (6, 'f', 'z/w')", "p=z", "p=z/w")]
    for values, outer, inner in cases:
        with pytest.raises(NestedPartitionPath) as info:
            session.sql(f"INSERT INTO {table_name} {values}")
        text = str(info.value)
        assert f"table {table_name}" in text and f"partition {inner!r} inside the folder of partition {outer!r}" \
            in text, text
        assert URL_ENCODE_KEY in text, text
        assert data_folders(location) == folders, values
        assert_only_last_commit(session, table_name, location, commit.timestamp, expected)
    session.sql("SET hoodie.spark.sql.insert.into.operation = bulk_insert")
    try:
        with pytest.raises(NestedPartitionPath, match=r"partition 'p=z/w' inside the folder of partition 'p=z'"):
            session.sql(f"INSERT INTO {table_name} VALUES (5, 'e', 'z'), (6, 'f', 'z/w')")
    finally:
        session.spark.conf.unset("hoodie.spark.sql.insert.into.operation")
    assert data_folders(location) == folders
    assert_only_last_commit(session, table_name, location, commit.timestamp, expected)
    # Partitions at one depth are untouched by the check, and hudi-rs reads what the session reads.
    session.sql(f"INSERT INTO {table_name} VALUES (7, 'g', '../m'), (8, 'h', 'y')")
    rows = sorted((r[0], r[1]) for r in session.sql(f"SELECT id, p FROM {table_name}").collect())
    assert rows == [(1, "../n"), (2, "x"), (7, "../m"), (8, "y")]
    assert sorted((r["id"], r["p"]) for r in hudi_rs_rows(location)) == rows
