"""engine.storage: local paths and file:// URIs, atomic writes, listing, pickling."""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from engine.errors import StorageError
from engine.storage import Storage
from engine.timeline.instant import Instant


@pytest.fixture(params=["plain", "file-uri"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(tmp_path) if request.param == "plain" else f"file://{tmp_path}"


def test_join_normalizes_slashes() -> None:
    storage = Storage.for_uri("/tmp")
    assert storage.join("/t", "", "a/", "/b", "c//d") == "/t/a/b/c/d"
    assert storage.join("file:///t/", "x") == "file:///t/x"
    assert storage.join("s3://bucket/t", "p=1", "f.parquet") == "s3://bucket/t/p=1/f.parquet"
    assert storage.join("rel", "x") == "rel/x"


def test_write_read_exists_size_delete(root: str) -> None:
    storage = Storage.for_uri(root)
    path = storage.join(root, "a", "b", "file.bin")
    assert not storage.exists(path)
    storage.write_bytes(path, b"hello")
    assert storage.exists(path) and not storage.is_dir(path)
    assert storage.is_dir(storage.join(root, "a", "b"))
    assert storage.read_bytes(path) == b"hello"
    assert storage.read_text(path) == "hello"
    assert storage.size(path) == 5
    storage.write_bytes(path, b"bye")  # overwrite
    assert storage.read_bytes(path) == b"bye"
    storage.delete(path)
    assert not storage.exists(path)
    storage.delete(path)  # missing is fine


def test_missing_file_errors_name_the_path(root: str) -> None:
    storage = Storage.for_uri(root)
    path = storage.join(root, "nope.txt")
    with pytest.raises(StorageError, match="nope.txt"):
        storage.read_bytes(path)
    with pytest.raises(StorageError, match="nope.txt"):
        storage.size(path)


def test_create_if_absent(root: str) -> None:
    storage = Storage.for_uri(root)
    path = storage.join(root, "x", "marker")
    assert storage.create_if_absent(path, b"1") is True
    assert storage.create_if_absent(path, b"2") is False
    assert storage.read_bytes(path) == b"1"


def test_create_if_absent_is_exclusive_under_races(tmp_path: Path) -> None:
    storage = Storage.for_uri(str(tmp_path))
    path = str(tmp_path / "race")
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(storage.create_if_absent(path, b"x")))
               for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1


def test_write_atomic_uses_hidden_temp_that_is_not_an_instant(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    storage = Storage.for_uri(str(tmp_path))
    target = str(tmp_path / "20240101000000000.commit")
    seen: list[str] = []
    real_rename = Storage.rename

    def spy(self: Storage, src: str, dst: str) -> None:
        seen.append(src)
        assert os.path.exists(src) and not os.path.exists(dst)
        real_rename(self, src, dst)

    monkeypatch.setattr(Storage, "rename", spy)
    storage.write_atomic(target, b"{}")
    assert storage.read_bytes(target) == b"{}"
    temp_name = os.path.basename(seen[0])
    assert temp_name.startswith(".") and temp_name.endswith(".tmp")
    assert Instant.parse(temp_name) is None
    assert os.path.dirname(seen[0]) == str(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["20240101000000000.commit"]


def test_write_atomic_no_overwrite(root: str) -> None:
    storage = Storage.for_uri(root)
    path = storage.join(root, "t.commit")
    storage.write_atomic(path, b"one", overwrite=False)
    with pytest.raises(StorageError, match="already exists"):
        storage.write_atomic(path, b"two", overwrite=False)
    assert storage.read_bytes(path) == b"one"
    storage.write_atomic(path, b"three")
    assert storage.read_bytes(path) == b"three"
    names = [f.name for f in storage.list_dir(root)]
    assert names == ["t.commit"], "temporary files must be cleaned up"


def test_write_atomic_cleans_temp_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = Storage.for_uri(str(tmp_path))

    def boom(self: Storage, src: str, dst: str) -> None:
        raise StorageError("rename failed")

    monkeypatch.setattr(Storage, "rename", boom)
    with pytest.raises(StorageError):
        storage.write_atomic(str(tmp_path / "f"), b"x")
    assert os.listdir(tmp_path) == []


def test_listing(root: str) -> None:
    storage = Storage.for_uri(root)
    storage.write_bytes(storage.join(root, "b.txt"), b"12")
    storage.write_bytes(storage.join(root, "a", "c.txt"), b"123")
    storage.write_bytes(storage.join(root, "a", "d", "e.txt"), b"")
    top = storage.list_dir(root)
    assert [(f.name, f.is_dir) for f in top] == [("a", True), ("b.txt", False)]
    assert top[1].size == 2 and top[1].mtime_ms > 0
    assert top[1].path == storage.join(root, "b.txt")
    deep = storage.list_files_recursive(root)
    assert [f.path for f in deep] == [storage.join(root, "a", "c.txt"), storage.join(root, "a", "d", "e.txt"),
                                      storage.join(root, "b.txt")]
    assert storage.list_dir(storage.join(root, "missing")) == []
    assert storage.list_files_recursive(storage.join(root, "missing")) == []
    storage.delete_dir(storage.join(root, "a"))
    assert not storage.exists(storage.join(root, "a"))
    storage.delete_dir(storage.join(root, "a"))  # missing is fine


def test_rename_and_makedirs(root: str) -> None:
    storage = Storage.for_uri(root)
    storage.makedirs(storage.join(root, "x", "y"))
    storage.makedirs(storage.join(root, "x", "y"))
    assert storage.is_dir(storage.join(root, "x", "y"))
    src, dst = storage.join(root, "x", "s"), storage.join(root, "x", "y", "d")
    storage.write_bytes(src, b"v")
    storage.rename(src, dst)
    assert not storage.exists(src) and storage.read_bytes(dst) == b"v"


def test_parquet_through_streams(root: str) -> None:
    storage = Storage.for_uri(root)
    path = storage.join(root, "p", "f.parquet")
    with storage.open_output(path) as out:
        pq.write_table(pa.table({"a": [1, 2, 3]}), out)
    with storage.open_input(path) as handle:
        assert pq.read_table(handle).column("a").to_pylist() == [1, 2, 3]


def test_pickle_round_trip(root: str) -> None:
    storage = Storage.for_uri(root)
    storage.write_bytes(storage.join(root, "f"), b"data")
    clone = pickle.loads(pickle.dumps(storage))
    assert isinstance(clone, Storage)
    assert clone.read_bytes(clone.join(root, "f")) == b"data"
    assert clone.is_local



class _RacingHandler(pafs.FileSystemHandler):
    """A local filesystem whose first ``failures`` listings fail as Arrow's local listing does when a folder
    is created by another task between its failed ``opendir`` and its existence check."""

    def __init__(self, failures: int) -> None:
        self.local = pafs.LocalFileSystem()
        self.failures = failures
        self.listings = 0

    def get_type_name(self) -> str:
        return "racing"

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.listings += 1
        if self.listings <= self.failures:
            raise FileNotFoundError(f"[Errno 2] Cannot list directory '{selector.base_dir}'")
        return self.local.get_file_info(selector)

    def normalize_path(self, path: str) -> str:
        return path

    def _unused(self, *args: object) -> None:
        raise NotImplementedError("the listing test only lists")

    copy_file = create_dir = delete_dir = delete_dir_contents = delete_file = _unused
    delete_root_dir_contents = move = open_append_stream = open_input_file = open_input_stream = _unused
    open_output_stream = _unused


def test_listing_is_taken_again_when_the_folder_appears_while_it_is_listed(tmp_path: Path) -> None:
    """Two tasks creating file groups in one new partition: one lists the partition's folder while the other
    creates it. Arrow then reports the folder missing although it exists; the listing is taken again."""
    (tmp_path / "p=b").mkdir()
    (tmp_path / "p=b" / "f.parquet").write_bytes(b"x")
    handler = _RacingHandler(failures=2)
    storage = Storage(str(tmp_path), pafs.PyFileSystem(handler))
    assert [f.name for f in storage.list_dir(str(tmp_path / "p=b"))] == ["f.parquet"]
    assert handler.listings == 3
    handler.failures, handler.listings = 1, 0
    assert [f.name for f in storage.list_files_recursive(str(tmp_path))] == ["f.parquet"]
    handler.failures, handler.listings = 5, 0
    with pytest.raises(StorageError, match=r"p=b.*kept vanishing"):
        storage.list_dir(str(tmp_path / "p=b"))
    assert handler.listings == 3
