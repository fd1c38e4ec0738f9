"""Partition value extractors, partition names, path safety and partition events; pure, no JVM."""

from __future__ import annotations

import pytest

from engine.keygen import escape_path_name
from hive_sync.errors import PartitionValueError, SyncConfigError
from hive_sync.partitions import (
    DEFAULT_EXTRACTOR,
    EXTRACTORS,
    PartitionEvent,
    PartitionEventType,
    check_partition_path,
    extractor_for,
    full_sync_events,
    hive_partition_name,
    incremental_sync_events,
    infer_extractor_class,
    parse_hive_partition_name,
    partition_location,
    partition_values,
)

P = "org.apache.hudi.hive."


@pytest.mark.parametrize(("cls", "path", "values"), [
    ("MultiPartKeysValueExtractor", "", []),
    ("MultiPartKeysValueExtractor", "2024/01/02", ["2024", "01", "02"]),
    ("MultiPartKeysValueExtractor", "year=2024/month=01", ["2024", "01"]),
    ("MultiPartKeysValueExtractor", "a=x y/plain", ["x y", "plain"]),
    ("HiveStylePartitionValueExtractor", "dt=2024-01-02", ["2024-01-02"]),
    ("SinglePartPartitionValueExtractor", "2024-01-02", ["2024-01-02"]),
    ("SinglePartPartitionValueExtractor", "202210/01/20", ["202210-01-20"]),
    ("SlashEncodedDayPartitionValueExtractor", "2024/1/2", ["2024-01-02"]),
    ("SlashEncodedDayPartitionValueExtractor", "y=2024/m=03/d=31", ["2024-03-31"]),
    ("SlashEncodedHourPartitionValueExtractor", "2024/01/02/7", ["2024-01-02-07"]),
    ("SlashEncodedMonthPartitionValueExtractor", "2024/01", ["2024-01"]),
    ("SlashEncodedYearMonthPartitionValueExtractor", "2024/11", ["2024-11"]),
    ("NonPartitionedExtractor", "", []),
    ("NonPartitionedExtractor", "whatever", []),
])
def test_extractors(cls: str, path: str, values: list[str]) -> None:
    assert extractor_for(P + cls).extract(path) == values
    assert extractor_for(cls).extract(path) == values  # simple name accepted too


@pytest.mark.parametrize(("cls", "path"), [
    ("MultiPartKeysValueExtractor", "k=/x"),
    ("MultiPartKeysValueExtractor", "k=a=b"),
    ("HiveStylePartitionValueExtractor", "2024-01-02"),
    ("SlashEncodedDayPartitionValueExtractor", "2024/01"),
    ("SlashEncodedDayPartitionValueExtractor", "2024/13/01"),
    ("SlashEncodedDayPartitionValueExtractor", "yyyy/mm/dd"),
    ("SlashEncodedHourPartitionValueExtractor", "2024/01/02"),
    ("SlashEncodedMonthPartitionValueExtractor", "2024/01/02"),
])
def test_extractor_rejects_bad_paths(cls: str, path: str) -> None:
    with pytest.raises(PartitionValueError, match="Partition"):
        extractor_for(cls).extract(path)


def test_extractor_registry_and_inference() -> None:
    assert len(EXTRACTORS) == 8
    assert extractor_for(None).hudi_class == DEFAULT_EXTRACTOR
    with pytest.raises(SyncConfigError, match="NoSuchExtractor"):
        extractor_for("org.apache.hudi.hive.NoSuchExtractor")
    assert infer_extractor_class([], False).endswith("NonPartitionedExtractor")
    assert infer_extractor_class(["dt"], True).endswith("HiveStylePartitionValueExtractor")
    assert infer_extractor_class(["dt"], False).endswith("SinglePartPartitionValueExtractor")
    assert infer_extractor_class(["a", "b"], True).endswith("MultiPartKeysValueExtractor")


ODD_VALUES = ["a/b", "k=v", "with space", "100%", "héllo wörld", "日本", "x:y?z#*", "'q'\"", "mix/=% é"]


@pytest.mark.parametrize("value", ODD_VALUES)
def test_url_encoded_values_round_trip(value: str) -> None:
    ex = extractor_for(DEFAULT_EXTRACTOR)
    path = f"region={escape_path_name(value)}/day={escape_path_name('2024-01-01')}"
    check_partition_path(path)  # encoded path stays two safe segments
    assert partition_values(path, ex, ["region", "day"], decode_partition=True) == [value, "2024-01-01"]
    # hive-style single field
    hs = extractor_for("HiveStylePartitionValueExtractor")
    assert partition_values(f"c={escape_path_name(value)}", hs, ["c"], decode_partition=True) == [value]
    # metastore partition names escape the same way and parse back
    name = hive_partition_name(["region", "day"], [value, "2024-01-01"])
    assert name.count("/") == 1
    assert parse_hive_partition_name(name) == [value, "2024-01-01"]


def test_decode_off_keeps_escapes_and_count_check() -> None:
    ex = extractor_for(DEFAULT_EXTRACTOR)
    assert partition_values("c=a%2Fb", ex, ["c"]) == ["a%2Fb"]
    with pytest.raises(PartitionValueError, match="does not match"):
        partition_values("a/b/c", ex, ["x", "y"])
    with pytest.raises(PartitionValueError, match="does not match"):
        hive_partition_name(["a"], ["1", "2"])
    assert hive_partition_name(["a"], [""]) == "a=__HIVE_DEFAULT_PARTITION__"


@pytest.mark.parametrize("bad", ["/abs/path", "..", "a/../b", "../x", "a//b", "./a", "a/.", "s3://b/x",
                                 "a\\b", "a\x00b"])
def test_unsafe_partition_paths_rejected(bad: str) -> None:
    with pytest.raises(PartitionValueError):
        check_partition_path(bad)
    with pytest.raises(PartitionValueError):
        partition_location("/base", bad)


@pytest.mark.parametrize("path", ["c=..", "c=.", "c=%2E%2E"])
def test_unsafe_partition_values_rejected(path: str) -> None:
    with pytest.raises(PartitionValueError):
        partition_values(path, extractor_for(DEFAULT_EXTRACTOR), ["c"], decode_partition=True)


def test_partition_location() -> None:
    assert partition_location("/base/", "a=1/b=2") == "/base/a=1/b=2"
    assert partition_location("file:/base", "") == "file:/base"


MULTI = extractor_for(DEFAULT_EXTRACTOR)
BASE = "/data/t"


def test_full_sync_events() -> None:
    metastore = {
        ("2024", "01"): "file:/data/t/y=2024/m=01",          # same (scheme ignored) → nothing
        ("2024", "02"): "/elsewhere/y=2024/m=02",              # moved → UPDATE
        ("2023", "12"): "/data/t/y=2023/m=12",                 # gone from storage → DROP
        ("1999", "01"): "/outside/x",                          # outside base → DROP with no path
    }
    storage = ["y=2024/m=01", "y=2024/m=02", "y=2024/m=03"]
    events = full_sync_events(storage, metastore, BASE, MULTI, ["y", "m"])
    assert events == [
        PartitionEvent(PartitionEventType.UPDATE, ("2024", "02"), "y=2024/m=02", "/data/t/y=2024/m=02"),
        PartitionEvent(PartitionEventType.ADD, ("2024", "03"), "y=2024/m=03", "/data/t/y=2024/m=03"),
        PartitionEvent(PartitionEventType.DROP, ("2023", "12"), "y=2023/m=12", "/data/t/y=2023/m=12"),
        PartitionEvent(PartitionEventType.DROP, ("1999", "01"), None, "/outside/x"),
    ]


def test_full_sync_with_decoding_matches_decoded_metastore_values() -> None:
    value = "a/b c"
    path = f"c={escape_path_name(value)}"
    metastore = {(value,): f"{BASE}/{path}"}
    assert full_sync_events([path], metastore, BASE, extractor_for("HiveStylePartitionValueExtractor"),
                            ["c"], decode_partition=True) == []


def test_non_partitioned_full_sync_has_no_events() -> None:
    assert full_sync_events([""], {}, BASE, extractor_for("NonPartitionedExtractor")) == []


def test_incremental_sync_events() -> None:
    metastore = {("a",): f"{BASE}/p=a", ("b",): "/old/p=b", ("d",): f"{BASE}/p=d"}
    events = incremental_sync_events(
        written_partitions=["p=a", "p=b", "p=c", "p=c", "p=d"], dropped_partitions=["p=d", "p=e"],
        metastore_partitions=metastore, base_path=BASE, extractor=MULTI, partition_fields=["p"])
    assert [(e.type, e.values) for e in events] == [
        (PartitionEventType.UPDATE, ("b",)), (PartitionEventType.ADD, ("c",)),
        (PartitionEventType.DROP, ("d",)),  # p=e was never in the metastore: no DROP
    ]
    assert incremental_sync_events([], [], metastore, BASE, MULTI) == []
    with pytest.raises(PartitionValueError):
        incremental_sync_events(["../escape"], [], {}, BASE, MULTI)
