"""engine.filegroup: names, partition metadata and the file-system view, checked against hudi-rs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import hudi
import pytest

from engine.errors import ConfigError
from engine.filegroup.naming import (
    base_file_name,
    is_base_file,
    is_log_file,
    log_file_name,
    new_file_id,
    parse_base_file_name,
    parse_log_file_name,
    write_token,
)
from engine.filegroup.partition_metadata import (
    partition_depth,
    read_partition_metadata,
    write_partition_metadata,
)
from engine.filegroup.slices import FileSlice
from engine.storage import Storage
from engine.table import Table
from engine.timeline import (
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    CommitMetadata,
    WriteStat,
    avro_serde,
)
from tests.conftest import HUDI_FIXTURE_NAMES
from tests.unit.synthetic_timeline import commit

OVERWRITE = "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable"
COW_WITH_META = [n for n in HUDI_FIXTURE_NAMES if "/cow/" in n and "no_metafields" not in n]


def _slice_key(s: FileSlice) -> tuple[str, str, str, str, tuple[str, ...]]:
    return (s.partition_path, s.file_id, s.base_instant, s.base_file.name if s.base_file else "",
            tuple(f.name for f in s.log_files))


def _rs_options(as_of: str | None) -> hudi.HudiReadOptions:
    options = hudi.HudiReadOptions()
    return options.with_as_of_timestamp(as_of) if as_of else options


# ------------------------------------------------------------------------------------------ naming


def test_names_build_and_parse() -> None:
    file_id = new_file_id()
    assert file_id.endswith("-0") and len(file_id) == 38
    assert new_file_id(3).endswith("-3")
    # never a bucket number's prefix (eight digits), which the bucket index would take for a bucket file group
    assert not any(new_file_id()[:8].isdigit() for _ in range(2000))
    token = write_token(1, 119, 167)
    name = base_file_name(file_id, token, "20240418172804498")
    assert name == f"{file_id}_1-119-167_20240418172804498.parquet"
    assert parse_base_file_name(name) == (file_id, "1-119-167", "20240418172804498")
    assert is_base_file(name) and not is_log_file(name)
    log = log_file_name(file_id, "20240418172804498", 2, "0-33-47")
    assert log == f".{file_id}_20240418172804498.log.2_0-33-47"
    parsed = parse_log_file_name(log)
    assert parsed is not None and (parsed.file_id, parsed.base_instant, parsed.version, parsed.token) == (
        file_id, "20240418172804498", 2, "0-33-47")
    assert parsed.name == log and is_log_file(log) and not is_base_file(log)
    archive = parse_log_file_name(".commits_.archive.1_1-0-1")
    assert archive is not None and archive.extension == "archive" and archive.file_id == "commits"
    assert not is_log_file(".commits_.archive.1_1-0-1")
    cdc = parse_log_file_name(f".{file_id}_1.log.1_0-0-0.cdc")
    assert cdc is not None and cdc.is_cdc
    for bad in ("x.parquet", "a_b.parquet", ".hoodie_partition_metadata", "a_b_c.log", "f_1-0-0_123.orc"):
        assert parse_base_file_name(bad) is None and parse_log_file_name(bad) is None
    with pytest.raises(ValueError, match="file id"):
        base_file_name("bad_id", token, "1")
    with pytest.raises(ValueError, match="version"):
        log_file_name(file_id, "1", 0, "0-0-0")
    # Java's LogFileComparator: base instant, version, token
    names = [".f_2.log.1_0-0-0", ".f_1.log.10_0-0-0", ".f_1.log.2_1-0-0", ".f_1.log.2_0-0-0"]
    keys = sorted((parse_log_file_name(n) for n in names), key=lambda p: p.sort_key)  # type: ignore[union-attr]
    assert [k.name for k in keys if k] == [".f_1.log.2_0-0-0", ".f_1.log.2_1-0-0", ".f_1.log.10_0-0-0",
                                           ".f_2.log.1_0-0-0"]


@pytest.mark.parametrize("name", HUDI_FIXTURE_NAMES)
def test_fixture_file_names_parse(hudi_fixture: Callable[..., str], name: str) -> None:
    base = hudi_fixture(name)
    for _folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for file_name in files:
            if file_name.endswith(".parquet"):
                parsed = parse_base_file_name(file_name)
                assert parsed is not None and base_file_name(*parsed) == file_name
            elif ".log." in file_name:
                log = parse_log_file_name(file_name)
                assert log is not None and log.name == file_name


# ------------------------------------------------------------------------------------------ partition metadata


def test_partition_metadata(hudi_fixture: Callable[..., str], tmp_path: Path) -> None:
    base = hudi_fixture("sample_table/cow/v6_timebasedkeygen_nonhivestyle")
    storage = Storage.for_uri(base)
    meta = read_partition_metadata(storage, base, "2023/04/01/12")
    assert meta.commit_time == "20240418181355771" and meta.partition_depth == 4
    nonpart = hudi_fixture("sample_table/cow/v6_nonpartitioned")
    assert read_partition_metadata(storage, nonpart, "").partition_depth == 0
    assert [partition_depth(p) for p in ("", "city=sf", "a/b", "2023/04/01/12")] == [0, 1, 2, 4]

    root = str(tmp_path)
    assert write_partition_metadata(storage, root, "byteField=10/shortField=300", "20240101000000000", 3)
    assert not write_partition_metadata(storage, root, "byteField=10/shortField=300", "20240102000000000", 4)
    folder = tmp_path / "byteField=10" / "shortField=300"
    assert os.listdir(folder) == [".hoodie_partition_metadata"]
    lines = (folder / ".hoodie_partition_metadata").read_text().splitlines()
    assert lines[0] == "#partition metadata" and lines[1].startswith("#") and lines[1].endswith(tuple("0123456789"))
    assert lines[2:] == ["commitTime=20240101000000000", "partitionDepth=2"]
    assert write_partition_metadata(storage, root, "pq", "20240101000000000", use_base_format=True)
    assert os.listdir(tmp_path / "pq") == [".hoodie_partition_metadata.parquet"]
    assert read_partition_metadata(storage, root, "pq").partition_depth == 1


# ------------------------------------------------------------------------------------------ view vs hudi-rs


@pytest.mark.parametrize("name", HUDI_FIXTURE_NAMES)
def test_view_matches_hudi_rs_slices(hudi_fixture: Callable[..., str], name: str) -> None:
    base = hudi_fixture(name)
    table = Table.load(base)
    rs_table = hudi.HudiTableBuilder.from_base_uri(base).build()
    for as_of in [None, *(i.timestamp for i in table.timeline.completed_commits())]:
        view = table.file_system_view(as_of)
        mine = sorted(_slice_key(s) for s in view.all_latest_file_slices())
        theirs = sorted((s.partition_path, s.file_id, s.creation_instant_time, s.base_file_name,
                         tuple(s.log_file_names)) for s in rs_table.get_file_slices(_rs_options(as_of)))
        assert mine == theirs, f"{name} as of {as_of}"


@pytest.mark.parametrize("name", COW_WITH_META)
def test_cow_base_files_are_the_files_hudi_rs_reads(hudi_fixture: Callable[..., str], name: str) -> None:
    base = hudi_fixture(name)
    table = Table.load(base)
    rs_table = hudi.HudiTableBuilder.from_base_uri(base).build()
    for as_of in [None, *(i.timestamp for i in table.timeline.completed_commits())]:
        view = table.file_system_view(as_of)
        mine = {f.name for f in view.all_latest_base_files()}
        rows = rs_table.read(_rs_options(as_of))
        theirs = {n for batch in rows for n in batch.column("_hoodie_file_name").to_pylist()}
        assert mine == theirs, f"{name} as of {as_of}"
        assert all(f.size == os.path.getsize(f.path) for f in view.all_latest_base_files())


def test_overwrite_table_excludes_replaced_file_groups(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture(OVERWRITE))
    view = table.file_system_view()
    assert view.partition_paths() == ["10", "20", "30"]
    assert [f.name for f in view.all_latest_base_files()] == [
        "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet"]
    assert view.file_groups("10") == [] and view.latest_file_slices("20") == []
    replaced = {(g.partition_path, g.file_id) for p in view.partition_paths() for g in view.replaced_file_groups(p)}
    assert replaced == set(view.replaced_file_ids())
    assert len(replaced) == 3
    assert len(view.file_groups("10", include_replaced=True)) == 1
    assert len(view.file_groups("10", include_replaced=True)[0].slices) == 2
    before = table.file_system_view("20240707001302376")
    assert len(before.all_latest_base_files()) == 3 and before.replaced_file_ids() == {}


def test_each_partition_directory_is_listed_once(hudi_fixture: Callable[..., str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    table = Table.load(hudi_fixture("sample_table/cow/v6_timebasedkeygen_nonhivestyle"))
    calls: list[str] = []
    real = Storage.list_dir

    def counting(self: Storage, path: str) -> list:  # type: ignore[type-arg]
        calls.append(path)
        return real(self, path)

    view = table.file_system_view()
    monkeypatch.setattr(Storage, "list_dir", counting)
    assert view.partition_paths() == ["2023/04/01/12", "2023/04/02/12", "2023/04/03/12", "2023/04/04/13"]
    view.all_latest_file_slices()
    view.all_latest_base_files()
    view.file_groups("2023/04/01/12")
    assert len(calls) == len(set(calls))
    with pytest.raises(ConfigError, match="as-of"):
        table.file_system_view("2024-01-01")


# ------------------------------------------------------------------------------------------ synthetic tables


def _table(tmp_path: Path, table_type: str = "MERGE_ON_READ") -> Table:
    return Table.create(str(tmp_path / "t"), {
        "hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.recordkey.fields": "id",
        "hoodie.table.precombine.field": "ts", "hoodie.table.partition.fields": "p",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"})


def _touch(table: Table, partition: str, name: str, size: int = 10) -> None:
    folder = os.path.join(table.base_path, partition)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as handle:
        handle.write(b"x" * size)


def test_only_committed_files_are_visible(tmp_path: Path) -> None:
    table = _table(tmp_path, "COPY_ON_WRITE")
    storage = table.storage
    write_partition_metadata(storage, table.base_path, "p=1", "20240101000000000")
    _touch(table, "p=1", base_file_name("a-0", "0-0-0", "20240101000000000"))
    _touch(table, "p=1", base_file_name("a-0", "0-0-0", "20240102000000000"))  # update, inflight
    _touch(table, "p=1", base_file_name("b-0", "0-0-0", "20231201000000000"))  # archived commit
    _touch(table, "p=1", base_file_name("c-0", "0-0-0", "20230101000000000"))  # failed, still pending
    _touch(table, "p=1", base_file_name("d-0", "0-0-0", "20240301000000000"))  # no instant at all
    _touch(table, "p=1", "_SUCCESS")
    commit(table, "20230101000000000", complete=False)
    commit(table, "20240101000000000")
    commit(table, "20240102000000000", complete=False)
    view = table.file_system_view()
    assert view.partition_paths() == ["p=1"]
    assert sorted(f.name for f in view.latest_base_files("p=1")) == [
        base_file_name("a-0", "0-0-0", "20240101000000000"), base_file_name("b-0", "0-0-0", "20231201000000000")]
    table.timeline.complete(table.timeline.find("20240102000000000")[0], CommitMetadata().to_json())
    table.reload()
    latest = table.file_system_view().file_group("p=1", "a-0")
    assert latest is not None and [s.base_instant for s in latest.slices] == ["20240101000000000",
                                                                              "20240102000000000"]
    assert table.file_system_view("20240101000000000").latest_base_files("p=1")[0].commit_time == \
        "20240101000000000"


def test_partition_without_metafile_is_found_by_its_base_files(tmp_path: Path) -> None:
    table = _table(tmp_path, "COPY_ON_WRITE")
    _touch(table, "a/b", base_file_name("a-0", "0-0-0", "20240101000000000"))
    write_partition_metadata(table.storage, table.base_path, "c", "20240101000000000")
    os.makedirs(os.path.join(table.base_path, "empty", "dir"))
    commit(table, "20240101000000000")
    view = table.file_system_view()
    assert view.partition_paths() == ["a/b", "c"]
    assert [f.file_id for f in view.all_latest_base_files()] == ["a-0"]


def test_mor_slices_and_pending_compaction(tmp_path: Path) -> None:
    table = _table(tmp_path)
    b1, d2, c3, d4 = "20240101000000000", "20240102000000000", "20240103000000000", "20240104000000000"
    write_partition_metadata(table.storage, table.base_path, "p=1", b1)
    _touch(table, "p=1", base_file_name("f-0", "0-0-0", b1))
    _touch(table, "p=1", base_file_name("g-0", "0-0-0", b1))
    commit(table, b1, DELTA_COMMIT)
    _touch(table, "p=1", log_file_name("f-0", b1, 1, "0-0-0"))
    _touch(table, "p=1", log_file_name("h-0", d2, 1, "0-0-0"))  # log-only file group (bucket index)
    commit(table, d2, DELTA_COMMIT)
    plan = avro_serde.serialize("HoodieCompactionPlan", {"operations": [
        {"baseInstantTime": b1, "deltaFilePaths": [log_file_name("f-0", b1, 1, "0-0-0")],
         "dataFilePath": base_file_name("f-0", "0-0-0", b1), "fileId": "f-0", "partitionPath": "p=1"},
        {"baseInstantTime": b1, "deltaFilePaths": [], "dataFilePath": base_file_name("g-0", "0-0-0", b1),
         "fileId": "g-0", "partitionPath": "p=1"}]})
    timeline = table.reload_timeline()
    timeline.transition_to_inflight(timeline.create_requested(c3, COMPACTION, plan))
    _touch(table, "p=1", base_file_name("f-0", "1-0-0", c3))  # compaction output being written
    _touch(table, "p=1", log_file_name("f-0", c3, 1, "0-0-0"))  # update after scheduling
    commit(table, d4, DELTA_COMMIT)
    table.reload()

    view = table.file_system_view()
    assert view.pending_compaction_instants() == [c3]
    assert view.pending_compaction_file_groups() == {("p=1", "f-0"): c3, ("p=1", "g-0"): c3}
    merged = {s.file_id: s for s in view.latest_file_slices("p=1")}
    assert merged["f-0"].base_instant == b1 and merged["f-0"].base_file is not None
    assert merged["f-0"].base_file.commit_time == b1
    assert [f.name for f in merged["f-0"].log_files] == [log_file_name("f-0", b1, 1, "0-0-0"),
                                                         log_file_name("f-0", c3, 1, "0-0-0")]
    assert merged["g-0"].base_instant == b1 and not merged["g-0"].log_files
    assert merged["h-0"].base_file is None and merged["h-0"].base_instant == d2
    raw = {s.file_id: s for s in view.latest_file_slices("p=1", merge_pending_compaction=False)}
    assert raw["f-0"].base_instant == c3 and raw["f-0"].base_file is None  # writers append logs at c3
    assert [f.name for f in raw["f-0"].log_files] == [log_file_name("f-0", c3, 1, "0-0-0")]
    assert raw["g-0"].base_instant == c3 and raw["g-0"].is_empty
    assert {f.file_id: f.commit_time for f in view.latest_base_files("p=1")} == {"f-0": b1, "g-0": b1}

    as_of = table.file_system_view(d2)
    assert as_of.pending_compaction_instants() == []
    old = {s.file_id: s for s in as_of.latest_file_slices("p=1")}
    assert old["f-0"].base_instant == b1 and [f.version for f in old["f-0"].log_files] == [1]

    # the compaction completes: its base file becomes the latest slice
    timeline = table.reload_timeline()
    compaction = [i for i in timeline.pending_compactions() if i.timestamp == c3][0]
    stat = WriteStat(file_id="f-0", path=f"p=1/{base_file_name('f-0', '1-0-0', c3)}", prev_commit=b1)
    done = CommitMetadata(compacted=True, operation_type="COMPACT")
    done.add_write_stat("p=1", stat)
    timeline.complete(compaction, done.to_json())
    table.reload()
    after = {s.file_id: s for s in table.file_system_view().latest_file_slices("p=1")}
    assert after["f-0"].base_instant == c3 and after["f-0"].base_file is not None
    assert [f.name for f in after["f-0"].log_files] == [log_file_name("f-0", c3, 1, "0-0-0")]
    assert after["g-0"].base_instant == b1  # no output written for g-0: previous slice stays


def test_replace_commit_in_synthetic_table(tmp_path: Path) -> None:
    table = _table(tmp_path, "COPY_ON_WRITE")
    t1, t2 = "20240101000000000", "20240102000000000"
    write_partition_metadata(table.storage, table.base_path, "p=1", t1)
    _touch(table, "p=1", base_file_name("old-0", "0-0-0", t1))
    commit(table, t1)
    _touch(table, "p=1", base_file_name("new-0", "0-0-0", t2))
    replace = CommitMetadata(operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p=1": ["old-0"]})
    commit(table, t2, REPLACE_COMMIT, metadata=replace)
    view = table.file_system_view()
    assert [f.file_id for f in view.latest_base_files("p=1")] == ["new-0"]
    assert view.replaced_file_ids() == {("p=1", "old-0"): t2}
    assert [f.file_id for f in table.file_system_view(t1).latest_base_files("p=1")] == ["old-0"]
    assert view.file_groups_in_pending_clustering() == {}
