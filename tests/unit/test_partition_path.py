"""Path safety of paths built from data (JVM-free): the pure checks of :mod:`engine.partition_path`, the key
generators that apply them, markers, file names, the storage guard and managed-table locations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pytest

from engine.config import HoodieConfig
from engine.errors import InvalidRecordKey, NestedPartitionPath, StorageError, UnsafePartitionPath, UnsafePath
from engine.filegroup.naming import base_file_name, log_file_name
from engine.filegroup.partition_metadata import (
    check_partition_layout,
    has_partition_metadata,
    nesting_partition,
    write_partition_metadata,
)
from engine.keygen import KeyGenerator
from engine.partition_path import (
    URL_ENCODE_KEY,
    ancestor_paths,
    check_relative_path,
    escape_leading_dot,
    first_unsafe,
    nested_pair,
    unsafe_reason,
)
from engine.storage import Storage
from engine.write.markers import IOType, Marker, create_marker, list_markers
from sqlext.catalog import Catalog
from sqlext.errors import SqlAnalysisError

NUL = "a\x00b"
NEWLINE = "a\nb"
CLEF = "\U0001d11e"  # 4-byte UTF-8

# Values whose folder would leave the table or is not a valid folder name, without urlencode.
REFUSED_PLAIN = ["..", "../../x", "../../../../outside", "/x", "/", ".", "a//b", "x/", "x/..", NUL, NEWLINE,
                 "tab\there", "del\x7f", ".hidden", "...", "a/.b"]
# Hive style prefixes "p=", so a bare "." / ".." / leading "/" stays inside the "p=..." folder.
REFUSED_HIVE = ["../../x", "a//b", "x/", "x/..", "x/./y", "a/.b", NUL, NEWLINE]
ACCEPTED_HIVE = ["..", ".", "/x", ".hidden"]
# Values that are always safe and must be written and read back unchanged.
SAFE = ["%", "50%", "%2F", "%2E%2E", "a%b", CLEF, "a/b", "x..y", "a.", "é", "_x"]
EVERY = [*REFUSED_PLAIN, *REFUSED_HIVE, *SAFE, "a\x01b", "1/2/3"]


def keygen(*, hive: bool, urlencode: bool, fields: str = "p", cls: str | None = None) -> KeyGenerator:
    props = {
        "hoodie.table.name": "trips",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": fields,
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
        URL_ENCODE_KEY: str(urlencode).lower(),
    }
    if cls:
        props["hoodie.table.keygenerator.class"] = cls
        props["hoodie.datasource.write.partitionpath.field"] = fields
    return KeyGenerator.from_config(HoodieConfig(props))


def rows(values: list[str], field: str = "p", **extra: list[str]) -> pa.Table:
    return pa.table({"id": list(range(len(values))), field: values, **extra})


# -- pure checks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("segment", ["..", "a/..", "../a", "a/../b", ".", "./a", "/a", "a//b", "a/", NUL,
                                     NEWLINE, "p=a/../b", "p=x/", ".a", "...", "a/.b"])
def test_unsafe_segments_have_a_reason(segment: str) -> None:
    assert unsafe_reason(segment) is not None
    assert first_unsafe(pa.array(["ok", segment, None])) == 1


@pytest.mark.parametrize("segment", ["a", "a/b", "a..b", "a.", "p=..", "p=.", "p=", "p=.a", "%2E.", CLEF,
                                     "__HIVE_DEFAULT_PARTITION__", "2024/01/02", "a b"])
def test_safe_segments(segment: str) -> None:
    assert unsafe_reason(segment) is None
    assert first_unsafe(pa.array([segment, None])) is None


def test_reasons_say_what_is_wrong() -> None:
    assert "'..'" in (unsafe_reason("a/../b") or "")
    assert "control character" in (unsafe_reason(NUL) or "")
    assert "leading '/'" in (unsafe_reason("/a") or "")
    assert "empty folder name" in (unsafe_reason("a//b") or "")
    assert "hidden" in (unsafe_reason(".a") or "")


def test_escape_leading_dot_only_touches_a_leading_dot() -> None:
    out = escape_leading_dot(pa.array([".", "..", "...", ".x", "a.", "a.b", None]))
    assert out.to_pylist() == ["%2E", "%2E.", "%2E..", "%2Ex", "a.", "a.b", None]


# -- key generators -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("hive", [False, True])
def test_unsafe_value_refused_without_urlencode(hive: bool) -> None:
    gen = keygen(hive=hive, urlencode=False)
    for value in REFUSED_HIVE if hive else REFUSED_PLAIN:
        with pytest.raises(UnsafePartitionPath) as info:
            gen.partition_paths(rows(["ok", value]))
        text = str(info.value)
        assert "table trips" in text and "partition field 'p'" in text and repr(value) in text, text
        assert f"'{URL_ENCODE_KEY}' = 'true'" in text
        assert isinstance(info.value, InvalidRecordKey)  # callers that catch key errors still do


def test_hive_style_keeps_dot_values_inside_their_folder() -> None:
    gen = keygen(hive=True, urlencode=False)
    paths = gen.partition_paths(rows(ACCEPTED_HIVE)).to_pylist()
    assert paths == ["p=..", "p=.", "p=/x", "p=.hidden"]


@pytest.mark.parametrize("hive", [False, True])
def test_urlencode_stores_every_value_safely_and_round_trips(hive: bool) -> None:
    gen = keygen(hive=hive, urlencode=True)
    paths = gen.partition_paths(rows(EVERY)).to_pylist()
    for value, path in zip(EVERY, paths, strict=True):
        assert unsafe_reason(path) is None, (value, path)
        assert "/" not in path, (value, path)  # one folder per value
        assert gen.partition_values(path) == [value], (value, path)
    assert dict(zip(EVERY, paths, strict=True))[".."] == ("p=.." if hive else "%2E.")
    assert dict(zip(EVERY, paths, strict=True))["%2F"] == ("p=%252F" if hive else "%252F")


@pytest.mark.parametrize("hive", [False, True])
def test_safe_values_without_urlencode_round_trip(hive: bool) -> None:
    gen = keygen(hive=hive, urlencode=False)
    values = [v for v in SAFE if "/" not in v]
    paths = gen.partition_paths(rows(values)).to_pylist()
    assert paths == [f"p={v}" if hive else v for v in values]
    assert [gen.partition_values(p) for p in paths] == [[v] for v in values]


def test_complex_key_generator_names_the_field_at_fault() -> None:
    gen = keygen(hive=False, urlencode=False, fields="region,city")
    data = pa.table({"id": [1, 2], "region": ["eu", "us"], "city": ["paris", "/etc"]})
    with pytest.raises(UnsafePartitionPath, match=r"partition field 'city' value '/etc'"):
        gen.partition_paths(data)
    data = pa.table({"id": [1], "region": [".."], "city": ["paris"]})
    with pytest.raises(UnsafePartitionPath, match=r"partition field 'region' value '\.\.'"):
        gen.partition_paths(data)


def test_custom_key_generator_simple_field_is_checked() -> None:
    gen = keygen(hive=False, urlencode=False, fields="p:simple",
                 cls="org.apache.hudi.keygen.CustomKeyGenerator")
    with pytest.raises(UnsafePartitionPath, match="'../x'"):
        gen.partition_paths(rows(["../x"]))
    assert keygen(hive=False, urlencode=True, fields="p:simple",
                  cls="org.apache.hudi.keygen.CustomKeyGenerator").partition_paths(rows([".."])).to_pylist() \
        == ["%2E."]


def test_timestamp_key_generator_output_is_checked() -> None:
    props = {
        "hoodie.table.name": "events",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "ts",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
    }
    gen = KeyGenerator.from_config(HoodieConfig(props))
    # A nested yyyy/MM/dd layout stays allowed (Hudi's common timestamp layout).
    assert gen.partition_paths(pa.table({"id": [1], "ts": [0]})).to_pylist() == ["1970/01/01"]
    bad = KeyGenerator.from_config(HoodieConfig({**props, "hoodie.keygen.timebased.output.dateformat":
                                                 "'..'/yyyy"}))
    with pytest.raises(UnsafePartitionPath, match="table events: partition field 'ts' value 0"):
        bad.partition_paths(pa.table({"id": [1], "ts": [0]}))


# -- markers, file names, storage, managed locations ---------------------------------------------------------


def test_marker_outside_temp_folder_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "t"
    storage = Storage.for_uri(str(base))
    for partition, name in [("../../../x", "f.parquet"), ("/abs", "f.parquet"), ("a//b", "f.parquet"),
                            ("p", "../f.parquet"), ("p", ""), ("a\nb", "f.parquet")]:
        with pytest.raises(UnsafePath):
            create_marker(storage, str(base), "001", Marker(partition, name, IOType.CREATE))
    create_marker(storage, str(base), "001", Marker("p=%2E%2E", "f.parquet", IOType.CREATE))
    assert list_markers(storage, str(base), "001") == [Marker("p=%2E%2E", "f.parquet", IOType.CREATE)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_relative_path_check() -> None:
    check_relative_path("a/b/f.parquet", "data file")
    check_relative_path("", "data file")
    check_relative_path("%2E./.fid_001.log.1_0-1-2", "log file")
    with pytest.raises(UnsafePath, match="data file '../f' is not a safe path"):
        check_relative_path("../f", "data file")


def test_file_names_cannot_hold_a_path() -> None:
    with pytest.raises(ValueError, match="instant"):
        base_file_name("fid-0", "1-0-1", "../001")
    with pytest.raises(ValueError, match="extension"):
        base_file_name("fid-0", "1-0-1", "001", "/../x")
    with pytest.raises(ValueError, match="instant"):
        log_file_name("fid-0", "00/1", 1, "1-0-1")
    assert base_file_name("fid-0", "1-0-1", "001") == "fid-0_1-0-1_001.parquet"


def test_storage_refuses_parent_segments_below_its_root(tmp_path: Path) -> None:
    base = tmp_path / "t"
    base.mkdir()
    storage = Storage.for_uri(str(base))
    outside = f"{base}/p/../../outside"
    calls: list[tuple[str, Any]] = [
        ("write_bytes", lambda: storage.write_bytes(outside, b"x")),
        ("create_if_absent", lambda: storage.create_if_absent(outside)),
        ("write_atomic", lambda: storage.write_atomic(outside, b"x")),
        ("makedirs", lambda: storage.makedirs(outside)),
        ("open_output", lambda: storage.open_output(outside)),
        ("rename", lambda: storage.rename(f"{base}/a", outside)),
        ("delete", lambda: storage.delete(outside)),
        ("delete_dir", lambda: storage.delete_dir(f"{base}/..")),
        ("file uri", lambda: storage.write_bytes(f"file://{base}/../x", b"x")),
    ]
    for what, call in calls:
        with pytest.raises(UnsafePath, match="'..' segment"):
            call()
        assert isinstance(UnsafePath("x"), StorageError), what
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
    assert list(base.iterdir()) == []
    # A root that itself names its folder through '..' still works below it.
    dotted = Storage.for_uri(f"{base}/../t")
    dotted.write_bytes(f"{base}/../t/ok/f", b"x")
    assert (base / "ok" / "f").read_bytes() == b"x"
    storage.delete_dir(f"{base}/ok")
    assert not (base / "ok").exists()


@pytest.mark.parametrize("name", ["../evil", "..", ".", "", "a/b", "a\\b", "x\ny", "nul\x00"])
def test_managed_location_stays_in_the_warehouse(tmp_path: Path, name: str) -> None:
    catalog = Catalog(cast(Any, None), tmp_path / "warehouse")
    with pytest.raises(SqlAnalysisError, match="cannot be a folder in the warehouse"):
        catalog.default_location("default", name)
    with pytest.raises(SqlAnalysisError, match="database name"):
        catalog.default_location(name, "t")
    assert catalog.default_location("db", "t") == str(tmp_path / "warehouse" / "db.db" / "t")
    assert catalog.default_location("default", "t.1") == str(tmp_path / "warehouse" / "t.1")


def test_nested_partitions_are_found_among_paths() -> None:
    assert ancestor_paths("a/b/c") == ["a", "a/b"]
    assert ancestor_paths("a") == []
    assert nested_pair(["p=../n", "p=x", "p=.."]) == ("p=..", "p=../n")
    assert nested_pair(["a/b", "a-b", "a/c", "a"]) == ("a", "a/b")
    assert nested_pair(["2024/01/01", "2024/01/02", "2025/01/01"]) is None  # same depth never nests
    assert nested_pair(["ab", "a/b", ""]) is None  # a shared prefix that is not a folder is fine


def test_a_new_partition_inside_or_around_a_stored_one_is_refused(tmp_path: Path) -> None:
    storage = Storage.for_uri(str(tmp_path))
    base = str(tmp_path)
    assert write_partition_metadata(storage, base, "p=../n", "001")
    for new, pair in [("p=..", ("p=..", "p=../n")), ("p=../n/deeper", ("p=../n", "p=../n/deeper"))]:
        assert nesting_partition(storage, base, new) == pair
        with pytest.raises(NestedPartitionPath, match=re.escape(f"partition {pair[1]!r} inside the folder of "
                                                                f"partition {pair[0]!r}")):
            write_partition_metadata(storage, base, new, "002")
        assert not has_partition_metadata(storage, base, new)
    assert nesting_partition(storage, base, "p=../m") is None
    assert write_partition_metadata(storage, base, "p=../m", "003")
    assert not write_partition_metadata(storage, base, "p=../n", "004")  # existing: nothing to check
    with pytest.raises(NestedPartitionPath, match=r"table t1: partition path 'q' .* partition 'q/r' inside"):
        check_partition_layout(storage, base, ["q", "q/r"], "t1")
    with pytest.raises(NestedPartitionPath, match=r"table t1: .*partition 'p=../n' inside .* 'p=..'"):
        check_partition_layout(storage, base, ["p=..", "p=y"], "t1")
    check_partition_layout(storage, base, ["p=..", "p=y"], "t1", stored=False)  # only the paths themselves
    check_partition_layout(storage, base, ["p=../n", "p=../m", "p=y"], "t1")
