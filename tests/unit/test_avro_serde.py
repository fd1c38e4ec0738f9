"""engine.timeline.avro_serde: Hudi timeline Avro files, read and rewritten byte for byte."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable

import fastavro
import pytest

from engine.errors import CorruptFile, SchemaMismatch
from engine.timeline import avro_serde

ROLLBACK = "sample_table/mor/parquet/v6_nonpartitioned_rollback"
AVRO_FIXTURES = [
    (ROLLBACK, "20250126040936578.rollback.requested", "HoodieRollbackPlan"),
    (ROLLBACK, "20250126040936578.rollback", "HoodieRollbackMetadata"),
    ("sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable", "20240707001303088.replacecommit.requested",
     "HoodieRequestedReplaceMetadata"),
    ("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable",
     "20250121000702475.replacecommit.requested", "HoodieRequestedReplaceMetadata"),
]


def test_every_bundled_schema_has_its_provenance_and_licence() -> None:
    bundled = sorted(p.name for p in avro_serde.AVSC_DIR.glob("*.avsc"))
    listed = re.findall(r"^\| (\w+\.avsc) \| (copy|adjusted) \|", (avro_serde.AVSC_DIR / "README.md").read_text(),
                        re.MULTILINE)
    assert bundled and sorted(name for name, _ in listed) == bundled
    assert [name for name, _ in listed] == bundled  # one row each, in file-name order
    for name in bundled:
        text = (avro_serde.AVSC_DIR / name).read_text()
        assert text.lstrip().startswith("/*") and "Apache License, Version 2.0" in text[:1000], name


def test_strip_comments_keeps_strings() -> None:
    text = '/* head */ {"a": "http://x/*y*/", // tail\n "b": 1 /* c */}'
    assert avro_serde.strip_json_comments(text).split() == ['{"a":', '"http://x/*y*/",', '"b":', "1", "}"]


def test_every_record_resolves_across_files() -> None:
    names = avro_serde.record_names()
    assert len(names) >= 50
    for required in ("HoodieRollbackMetadata", "HoodieRollbackPlan", "HoodieRequestedReplaceMetadata",
                     "HoodieCompactionPlan", "HoodieCleanerPlan", "HoodieCleanMetadata", "HoodieSavepointMetadata",
                     "HoodieRestorePlan", "HoodieRestoreMetadata", "HoodieArchivedMetaEntry",
                     "HoodieDeleteRecordList", "HoodieReplaceCommitMetadata", "HoodieIndexPlan"):
        assert required in names
    for name in names:
        fastavro.parse_schema(avro_serde.schema(name))  # fully expanded, self-contained
    with pytest.raises(SchemaMismatch, match="NoSuchRecord"):
        avro_serde.schema_json("NoSuchRecord")


@pytest.mark.parametrize(("fixture", "file_name", "record"), AVRO_FIXTURES)
def test_fixture_files_round_trip_byte_identical(hudi_fixture: Callable[..., str], fixture: str, file_name: str,
                                                 record: str) -> None:
    with open(os.path.join(hudi_fixture(fixture), ".hoodie", file_name), "rb") as handle:
        original = handle.read()
    container = avro_serde.read_container(original)
    assert container.record_name == record
    assert set(container.metadata) == {"avro.schema"}  # Java writes no avro.codec
    # the embedded writer schema is exactly what we render for the Java SpecificRecord
    assert container.schema_json == avro_serde.schema_json(record)
    value = avro_serde.deserialize(original, source=file_name)
    assert value == avro_serde.deserialize(original, record)  # resolving against our schema changes nothing
    assert avro_serde.serialize(record, value, sync_marker=container.sync_marker) == original
    fresh = avro_serde.serialize(record, value)
    assert fresh != original  # new random sync marker ...
    assert avro_serde.deserialize(fresh) == value  # ... same content


def test_rollback_fixture_content(hudi_fixture: Callable[..., str]) -> None:
    meta = os.path.join(hudi_fixture(ROLLBACK), ".hoodie")
    with open(os.path.join(meta, "20250126040936578.rollback"), "rb") as handle:
        metadata = avro_serde.deserialize(handle.read())
    assert metadata["commitsRollback"] == ["20250126040826878"]
    assert metadata["instantsRollback"] == [{"commitTime": "20250126040826878", "action": "deltacommit"}]
    partition = metadata["partitionMetadata"][""]
    assert partition["rollbackLogFiles"] and partition["logFilesFromFailedCommit"]
    with open(os.path.join(meta, "20250126040936578.rollback.requested"), "rb") as handle:
        plan = avro_serde.deserialize(handle.read())
    assert plan["version"] == 1 and len(plan["RollbackRequests"]) == 2


def test_serialize_fills_defaults_and_validates() -> None:
    data = avro_serde.serialize("HoodieRollbackMetadata", {
        "startRollbackTime": "20240101000000000", "timeTakenInMillis": 5, "totalFilesDeleted": 0,
        "commitsRollback": ["20231231000000000"],
        "partitionMetadata": {"p": {"partitionPath": "p", "successDeleteFiles": [], "failedDeleteFiles": []}}})
    assert data.startswith(b"Obj\x01")
    back = avro_serde.deserialize(data)
    assert back["version"] == 1 and back["instantsRollback"] == []
    assert back["partitionMetadata"]["p"]["rollbackLogFiles"] is None
    reader = fastavro.reader(io.BytesIO(data))  # a generic Avro reader accepts it
    assert reader.codec == "null" and len(list(reader)) == 1
    with pytest.raises(SchemaMismatch, match="timeTakenInMillis"):
        avro_serde.serialize("HoodieRollbackMetadata", {"startRollbackTime": "1", "totalFilesDeleted": 0,
                                                        "commitsRollback": [], "partitionMetadata": {}})
    with pytest.raises(ValueError, match="16 bytes"):
        avro_serde.serialize("HoodieRollbackPlan", {}, sync_marker=b"short")


def test_compaction_and_clean_plans_round_trip() -> None:
    plan = {"operations": [{"baseInstantTime": "20240101000000000", "deltaFilePaths": [".f-0_2024.log.1_0-0-0"],
                            "dataFilePath": "f-0_0-0-0_20240101000000000.parquet", "fileId": "f-0",
                            "partitionPath": "p=1", "metrics": {"TOTAL_LOG_FILES": 1.0}}], "version": 2}
    back = avro_serde.deserialize(avro_serde.serialize("HoodieCompactionPlan", plan))
    assert back["operations"][0]["fileId"] == "f-0" and back["version"] == 2
    assert back["operations"][0]["metrics"] == {"TOTAL_LOG_FILES": 1.0}
    cleaner = avro_serde.deserialize(avro_serde.serialize("HoodieCleanerPlan", {"policy": "KEEP_LATEST_COMMITS"}))
    assert cleaner["policy"] == "KEEP_LATEST_COMMITS" and cleaner["lastCompletedCommitTimestamp"] == ""


def test_raw_datum_round_trip() -> None:
    record = {"deleteRecordList": [{"recordKey": "k1", "partitionPath": "p", "orderingVal": None}]}
    datum = avro_serde.encode_datum("HoodieDeleteRecordList", record)
    assert not datum.startswith(b"Obj")
    assert avro_serde.decode_datum("HoodieDeleteRecordList", datum) == record


def test_corrupt_input() -> None:
    with pytest.raises(CorruptFile, match="empty"):
        avro_serde.deserialize(b"", source="T.clean")
    with pytest.raises(CorruptFile, match="magic"):
        avro_serde.deserialize(b"{}", source="T.clean")
    good = avro_serde.serialize("HoodieCleanerPlan", {"policy": "x"})
    with pytest.raises(CorruptFile):
        avro_serde.deserialize(good[: len(good) - 30])
