"""engine.timeline.commit_metadata: Hudi's commit JSON, parsed and re-serialized byte for byte."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest

from engine.errors import CorruptFile
from engine.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat, to_jackson_json
from tests.conftest import HUDI_FIXTURE_NAMES

JSON_SUFFIXES = (".commit", ".deltacommit", ".replacecommit", ".inflight")


def _commit_files(base: str) -> list[str]:
    meta = os.path.join(base, ".hoodie")
    return sorted(os.path.join(meta, f) for f in os.listdir(meta) if f.endswith(JSON_SUFFIXES)
                  and not f.startswith(".") and not f.endswith((".rollback.inflight",)))


@pytest.mark.parametrize("name", [n for n in HUDI_FIXTURE_NAMES if "empty" not in n])
def test_fixture_commit_files_round_trip(hudi_fixture: Callable[..., str], name: str) -> None:
    files = _commit_files(hudi_fixture(name))
    assert files
    for path in files:
        with open(path, "rb") as handle:
            original = handle.read()
        metadata = CommitMetadata.from_json(original, path)
        rewritten = metadata.to_json()
        assert rewritten == original, path  # same keys, same order, same Jackson formatting
        assert json.loads(rewritten) == json.loads(original)
        again = CommitMetadata.from_json(rewritten)
        assert again == metadata
        assert metadata.is_replace == path.endswith(".replacecommit")


def test_fixture_fields(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture("sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable")
    with open(os.path.join(base, ".hoodie", "20240707001303088.replacecommit"), "rb") as handle:
        metadata = CommitMetadata.from_json(handle.read())
    assert metadata.operation_type == "INSERT_OVERWRITE_TABLE"
    assert not metadata.compacted
    assert metadata.replaced_file_ids() == {"30": ["d398fae1-c0e6-4098-8124-f55f7098bdba-0"],
                                            "20": ["88163884-fef0-4aab-865d-c72327a8a1d5-0"],
                                            "10": ["4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0"]}
    assert metadata.schema is not None and json.loads(metadata.schema)["type"] == "record"
    (stat,) = metadata.all_write_stats()
    assert stat.file_id == "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0"
    assert stat.prev_commit == "null" and stat.num_inserts == 1 and stat.num_writes == 1
    assert stat.total_write_bytes == stat.file_size_in_bytes == 441392
    assert stat.runtime_stats == RuntimeStats(0, 0, 83)
    assert not stat.is_delta
    assert stat.file_name == "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet"
    assert metadata.file_ids_by_partition() == {"30": ["ebcb261d-62d3-4895-90ec-5b3c9622dff4-0"]}
    assert metadata.written_paths() == [stat.path]


def test_delta_write_stat_fixture(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned_rollback")
    with open(os.path.join(base, ".hoodie", "20250126060846931.deltacommit"), "rb") as handle:
        metadata = CommitMetadata.from_json(handle.read())
    (stat,) = metadata.partition_to_write_stats[""]
    assert stat.is_delta
    assert stat.log_version == 3 and stat.log_offset == 0
    assert stat.base_file == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_0-13-23_20250126040823628.parquet"
    assert stat.log_files is not None and len(stat.log_files) == 3
    assert stat.prev_commit == "20250126040823628"
    assert stat.records_stats == {"val": None}


def test_empty_and_unknown_content() -> None:
    empty = CommitMetadata.from_json(b"")
    assert empty == CommitMetadata() and empty.schema is None and empty.all_write_stats() == []
    assert CommitMetadata.from_json(b"  \n") == CommitMetadata()
    text = json.dumps({"partitionToWriteStats": {"p": [{"fileId": "f", "newField": 7}]}, "compacted": True,
                       "extraMetadata": {"schema": ""}, "operationType": "COMPACT", "futureKey": [1]})
    metadata = CommitMetadata.from_json(text)
    assert metadata.compacted and metadata.operation_type == "COMPACT"
    assert metadata.schema is None  # empty schema counts as absent
    assert metadata.extra == {"futureKey": [1]}
    assert metadata.all_write_stats()[0].extra == {"newField": 7}
    round_trip = json.loads(metadata.to_json())
    assert round_trip["futureKey"] == [1]
    assert round_trip["partitionToWriteStats"]["p"][0]["newField"] == 7
    with pytest.raises(CorruptFile, match="T.commit"):
        CommitMetadata.from_json(b"{not json", "T.commit")
    with pytest.raises(CorruptFile):
        CommitMetadata.from_json(b"[1, 2]")


def test_new_metadata_serializes_like_java() -> None:
    metadata = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": '{"type":"record"}'})
    metadata.add_write_stat("p=1", WriteStat(file_id="f-0", path="p=1/f-0_0-0-0_1.parquet", partition_path="p=1",
                                             num_writes=2, num_inserts=2, total_write_bytes=10,
                                             file_size_in_bytes=10, runtime_stats=RuntimeStats(1, 2, 3)))
    metadata.add_write_stat("p=1", WriteStat(file_id="f-1", path="p=1/.f-1_1.log.1_0-0-0", partition_path="p=1",
                                             prev_commit="1", num_update_writes=1, log_version=1,
                                             base_file="f-1_0-0-0_1.parquet", log_files=[".f-1_1.log.1_0-0-0"]))
    text = metadata.to_json().decode()
    assert text.startswith('{\n  "partitionToWriteStats" : {\n    "p=1" : [ {\n      "fileId" : "f-0",')
    assert '"extraMetadata" : {\n    "schema" : "{\\"type\\":\\"record\\"}"\n  },' in text
    assert text.endswith('"operationType" : "UPSERT"\n}')
    data = json.loads(text)
    first, second = data["partitionToWriteStats"]["p=1"]
    assert list(first)[:4] == ["fileId", "path", "cdcStats", "prevCommit"] and "logVersion" not in first
    assert first["prevCommit"] == "null"
    assert list(second)[-5:] == ["logVersion", "logOffset", "baseFile", "logFiles", "recordsStats"]
    assert second["recordsStats"] == {"val": None} and second["logOffset"] == 0
    assert "partitionToReplaceFileIds" not in data
    replace = CommitMetadata(operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p": ["a"]})
    assert list(json.loads(replace.to_json()))[-1] == "partitionToReplaceFileIds"


def test_jackson_pretty_printer_shapes() -> None:
    assert to_jackson_json({}) == b"{ }"
    assert to_jackson_json({"a": [], "b": {}, "c": ["x", "y"], "d": None, "e": "é\n"}) == (
        '{\n  "a" : [ ],\n  "b" : { },\n  "c" : [ "x", "y" ],\n  "d" : null,\n  "e" : "é\\n"\n}'.encode())
