"""Pure logic of the inspection procedures: Hadoop globs, Hudi's size units, the deleted-file test of
show_file_status, the header JSON of show_logfile_metadata, partition wildcards and TTL expiry."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.formats.log_format import HeaderKey
from engine.storage import Storage
from sqlext.procedures.files import _deleted_in, _expand_braces, glob_paths, size_with_unit
from sqlext.procedures.logfiles import _header_json


def test_braces_expand_like_hadoop() -> None:
    assert _expand_braces("a{b,c}d") == ["abd", "acd"]
    assert _expand_braces("{x,y{1,2}}/z") == ["x/z", "y1/z", "y2/z"]
    assert _expand_braces("no{brace") == ["no{brace"]
    assert _expand_braces("plain") == ["plain"]


def test_glob_paths(tmp_path: Path) -> None:
    for name in ("dt=a/x.log.1", "dt=a/y.parquet", "dt=b/x.log.2", "dt=c/z.log.1", ".hoodie/h"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1")
    storage = Storage.for_uri(str(tmp_path))
    assert glob_paths(storage, f"{tmp_path}/dt=*/*.log.*") == \
        [str(tmp_path / p) for p in ("dt=a/x.log.1", "dt=b/x.log.2", "dt=c/z.log.1")]
    assert glob_paths(storage, f"{tmp_path}/dt={{a,c}}") == [str(tmp_path / "dt=a"), str(tmp_path / "dt=c")]
    assert glob_paths(storage, f"{tmp_path}/dt=[^a]/?.log.?") == \
        [str(tmp_path / "dt=b/x.log.2"), str(tmp_path / "dt=c/z.log.1")]
    assert glob_paths(storage, f"file://{tmp_path}/dt=a/y.parquet") == [str(tmp_path / "dt=a/y.parquet")]
    assert glob_paths(storage, f"{tmp_path}/missing/*") == []
    assert glob_paths(storage, f"{tmp_path}/missing") == []


@pytest.mark.parametrize(("size", "text"), [
    (0, "0B"), (1023, "1023B"), (1024, "1.00KB"), (1536, "1.50KB"), (1024 * 1024 - 1, "1024.00KB"),
    (5 * 1024 ** 2, "5.00MB"), (3 * 1024 ** 3 + 512 * 1024 ** 2, "3.50GB"), (1029, "1.00KB"), (1035, "1.01KB"),
])
def test_size_with_unit(size: int, text: str) -> None:
    assert size_with_unit(size) == text


def test_deleted_in_matches_any_partition_by_substring() -> None:
    metadata = {"partitionMetadata": {
        "dt=1": {"successDeleteFiles": ["/t/dt=1/f1_0-1-0_001.parquet"]},
        "dt=2": {"successDeleteFiles": ["f2_0-1-0_002.parquet"]},
    }}
    assert _deleted_in(metadata, "dt=1", "f1_0-1-0_001.parquet")
    assert _deleted_in(metadata, "dt=1", "f2_0-1-0_002.parquet")  # Hudi also looks in the other partitions
    assert not _deleted_in(metadata, "dt=1", "f3_0-1-0_003.parquet")
    assert not _deleted_in(None, "", "f1")


def test_header_json_names_the_header_keys() -> None:
    header = {HeaderKey.INSTANT_TIME: "001", HeaderKey.SCHEMA: '{"a":"/"}', 9: "x"}
    assert _header_json(header) == '{"INSTANT_TIME":"001","SCHEMA":"{\\"a\\":\\"/\\"}","9":"x"}'
    assert _header_json({}) == "{}"
