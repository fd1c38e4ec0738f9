"""File access for the table engine (Hudi ``HoodieStorage`` / ``HoodieWrapperFileSystem``).

Only this module opens files by path. It wraps :mod:`pyarrow.fs`, so local disks, ``file://`` URIs and any
filesystem pyarrow can open (``s3://``, ``gs://``, ``hdfs://`` ...) look the same to the rest of the engine.

Paths: every method takes a *full* path as the caller knows it: a local absolute path (``/data/t1``), a
``file://`` URI, or a URI of the storage's own scheme (``s3://bucket/t1``). Paths are joined with ``/``
(:meth:`Storage.join`). Listing results carry the path in the same form as the root it was listed from.

A :class:`Storage` is picklable (Spark executors receive it inside closures): only the URI is pickled and
the pyarrow filesystem is re-created lazily on the other side.

Atomicity (what the timeline relies on):

* :meth:`Storage.write_atomic` writes a temporary sibling file whose name starts with ``.`` and ends with
  ``.tmp`` (so it never parses as a timeline instant and Java's timeline listing, which filters on instant
  extensions, ignores it), then renames it over the target. On a local filesystem the rename is atomic
  (POSIX ``rename``/``link``); on object stores pyarrow's move is copy + delete and only "appears at once"
  to the extent the store guarantees it.
* :meth:`Storage.create_if_absent` uses ``O_CREAT | O_EXCL`` locally; elsewhere it is check-then-write.

Path safety (defence in depth): every method that creates, writes, renames or deletes refuses a path with a
``..`` segment below the storage's root (the URI it was built for, the table's base path), raising
:class:`~engine.errors.UnsafePath`, so a path built from data can never walk out of the table.
"""

from __future__ import annotations

import errno
import logging
import os
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from engine.errors import StorageError, UnsafePath
from engine.partition_path import parent_segment

LOG = logging.getLogger(__name__)

_LOCAL_SCHEMES = ("", "file")


@dataclass(frozen=True)
class FileInfo:
    """One listed file or directory.

    Attributes:
        path: full path, in the same form (local path or URI) as the listed root.
        name: last path component.
        size: bytes (0 for directories).
        is_dir: whether the entry is a directory.
        mtime_ms: modification time, milliseconds since the epoch (0 when the store does not report it).
    """

    path: str
    name: str
    size: int
    is_dir: bool
    mtime_ms: int


def _split_scheme(uri: str) -> tuple[str, str]:
    """``("s3", "bucket/key")`` for ``s3://bucket/key``; ``("", path)`` for plain paths."""
    if "://" in uri:
        scheme, rest = uri.split("://", 1)
        return scheme.lower(), rest
    return "", uri


class Storage:
    """Filesystem facade used by every module that touches files (Hudi ``HoodieStorage``).

    Build one with :meth:`for_uri`. All errors are raised as :class:`~engine.errors.StorageError` naming
    the path, except that missing files raise ``StorageError`` too (callers check :meth:`exists` first
    when absence is expected).
    """

    def __init__(self, uri: str, filesystem: pafs.FileSystem | None = None) -> None:
        scheme, _ = _split_scheme(uri)
        self._uri = uri
        self._scheme = "" if scheme in _LOCAL_SCHEMES else scheme
        self._fs: pafs.FileSystem | None = filesystem

    # ------------------------------------------------------------------ construction / pickling

    @staticmethod
    def for_uri(uri: str) -> Storage:
        """A storage able to access ``uri`` and every path below it.

        Args:
            uri: a local path, a ``file://`` URI, or any URI :func:`pyarrow.fs.FileSystem.from_uri`
                understands.

        Raises:
            StorageError: pyarrow cannot build a filesystem for the URI.
        """
        scheme, _ = _split_scheme(uri)
        if scheme in _LOCAL_SCHEMES:
            return Storage(uri, pafs.LocalFileSystem())
        try:
            fs, _ = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
            raise StorageError(f"cannot open a filesystem for '{uri}': {exc}") from exc
        return Storage(uri, fs)

    def __getstate__(self) -> dict[str, Any]:
        return {"uri": self._uri}

    def __setstate__(self, state: dict[str, Any]) -> None:
        uri = state["uri"]
        scheme, _ = _split_scheme(uri)
        self._uri = uri
        self._scheme = "" if scheme in _LOCAL_SCHEMES else scheme
        self._fs = None

    def __repr__(self) -> str:
        return f"Storage({self._uri!r})"

    @property
    def fs(self) -> pafs.FileSystem:
        """The underlying pyarrow filesystem (created on first use)."""
        if self._fs is None:
            if self._scheme == "":
                self._fs = pafs.LocalFileSystem()
            else:
                try:
                    self._fs, _ = pafs.FileSystem.from_uri(self._uri)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
                    raise StorageError(f"cannot open a filesystem for '{self._uri}': {exc}") from exc
        return self._fs

    @property
    def is_local(self) -> bool:
        """Whether paths are local filesystem paths (plain paths or ``file://``)."""
        return self._scheme == ""

    # ------------------------------------------------------------------ paths

    def _p(self, path: str) -> str:
        """The pyarrow-internal form of ``path`` (scheme stripped)."""
        scheme, rest = _split_scheme(path)
        if scheme == "file":
            # file:///abs/path -> /abs/path ; file:/abs/path is not produced by split (no '//')
            return rest if rest.startswith("/") else "/" + rest
        if scheme:
            if scheme != self._scheme:
                raise StorageError(f"path '{path}' is not on this storage ({self._uri})")
            return rest.rstrip("/") if len(rest) > 1 else rest
        if path.startswith("file:"):
            return path[len("file:"):]
        return path.rstrip("/") if len(path) > 1 else path

    def _guard(self, path: str) -> None:
        """Refuse a write/delete ``path`` with a ``..`` segment below the storage's root (the whole path
        when it is not below the root).

        Raises:
            UnsafePath: naming the path and the root.
        """
        internal = self._p(path)
        try:
            root = self._p(self._uri)
        except StorageError:
            root = ""
        relative = internal
        if root and (internal == root or internal.startswith(root.rstrip("/") + "/")):
            relative = internal[len(root.rstrip("/")):]
        if parent_segment(relative):
            raise UnsafePath(f"refusing to write or delete '{path}': it has a '..' segment below "
                             f"'{self._uri}' and could leave the table's base path")

    def _out(self, like: str, internal: str) -> str:
        """``internal`` (pyarrow form) rendered in the same form as the caller's path ``like``."""
        scheme, _ = _split_scheme(like)
        if scheme == "file":
            return "file://" + internal
        if scheme:
            return f"{scheme}://{internal}"
        return internal

    def join(self, *parts: str) -> str:
        """Join path components with ``/``, dropping empty parts and duplicate slashes.

        ``join("/t", "", "a/", "/b")`` is ``"/t/a/b"``; the scheme prefix of the first part is kept.
        """
        if not parts:
            return ""
        head = parts[0]
        scheme, rest = _split_scheme(head)
        prefix = f"{scheme}://" if scheme else ""
        absolute = rest.startswith("/")
        pieces: list[str] = []
        for part in (rest, *parts[1:]):
            pieces.extend(seg for seg in part.split("/") if seg)
        joined = "/".join(pieces)
        if absolute:
            joined = "/" + joined
        return prefix + joined

    # ------------------------------------------------------------------ queries

    def _info(self, path: str) -> pafs.FileInfo:
        try:
            return self.fs.get_file_info(self._p(path))
        except OSError as exc:
            raise StorageError(f"cannot stat '{path}': {exc}") from exc

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return bool(self._info(path).type != pafs.FileType.NotFound)

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` is an existing directory."""
        return bool(self._info(path).type == pafs.FileType.Directory)

    def size(self, path: str) -> int:
        """Size of the file at ``path`` in bytes.

        Raises:
            StorageError: the file does not exist or is a directory.
        """
        info = self._info(path)
        if info.type != pafs.FileType.File:
            raise StorageError(f"not a file: '{path}'")
        return int(info.size or 0)

    def file_info(self, path: str) -> FileInfo | None:
        """The file or directory at ``path`` (size, modification time), or ``None`` when nothing is there.

        Raises:
            StorageError: the stat failed.
        """
        info = self._info(path)
        if info.type == pafs.FileType.NotFound:
            return None
        return self._to_file_info(path, info)

    def _to_file_info(self, like: str, info: pafs.FileInfo) -> FileInfo:
        mtime = info.mtime_ns
        return FileInfo(
            path=self._out(like, info.path),
            name=info.base_name,
            size=int(info.size or 0) if info.type == pafs.FileType.File else 0,
            is_dir=info.type == pafs.FileType.Directory,
            mtime_ms=int(mtime // 1_000_000) if mtime is not None else 0,
        )

    _LISTING_ATTEMPTS = 3

    def _select(self, path: str, recursive: bool) -> list[pafs.FileInfo]:
        """Entries below ``path`` (``[]`` when it does not exist). Arrow's local listing reports a folder
        missing when its ``opendir`` fails and the folder exists by the time Arrow checks (another task created
        it in between, as tasks creating file groups in one new partition do), so a listing that fails with
        ``FileNotFoundError`` is taken again, up to :attr:`_LISTING_ATTEMPTS` times.

        Raises:
            StorageError: ``path`` is a file, or the listing failed (every attempt, for a missing entry).
        """
        selector = pafs.FileSelector(self._p(path), allow_not_found=True, recursive=recursive)
        how = " recursively" if recursive else ""
        attempt = 1
        while True:
            try:
                return list(self.fs.get_file_info(selector))
            except FileNotFoundError as exc:
                if attempt >= self._LISTING_ATTEMPTS:
                    raise StorageError(f"cannot list '{path}'{how}: entries kept vanishing while it was "
                                       f"listed ({exc})") from exc
                LOG.debug("'%s' changed while it was listed; listing again", path)
                attempt += 1
            except (OSError, pa.ArrowException) as exc:
                raise StorageError(f"cannot list '{path}'{how}: {exc}") from exc

    def list_dir(self, path: str) -> list[FileInfo]:
        """Direct children of the directory ``path`` (files and directories), sorted by name.

        Returns ``[]`` when ``path`` does not exist.

        Raises:
            StorageError: ``path`` is a file or listing failed.
        """
        infos = self._select(path, recursive=False)
        return sorted((self._to_file_info(path, i) for i in infos), key=lambda f: f.name)

    def list_files_recursive(self, path: str) -> list[FileInfo]:
        """Every *file* (not directory) below ``path``, recursively, sorted by path; ``[]`` if missing."""
        infos = self._select(path, recursive=True)
        files = [self._to_file_info(path, i) for i in infos if i.type == pafs.FileType.File]
        return sorted(files, key=lambda f: f.path)

    # ------------------------------------------------------------------ reads

    def read_bytes(self, path: str) -> bytes:
        """The whole content of the file at ``path``.

        Raises:
            StorageError: the file is missing or unreadable.
        """
        try:
            with self.fs.open_input_stream(self._p(path)) as stream:
                return bytes(stream.read())
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot read '{path}': {exc}") from exc

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        """The file at ``path`` decoded with ``encoding`` (UTF-8 by default)."""
        data = self.read_bytes(path)
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise StorageError(f"'{path}' is not valid {encoding}: {exc}") from exc

    def open_input(self, path: str) -> pa.NativeFile:
        """A random-access reader for ``path`` (for :mod:`pyarrow.parquet`); the caller closes it."""
        try:
            return self.fs.open_input_file(self._p(path))
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot open '{path}' for reading: {exc}") from exc

    # ------------------------------------------------------------------ writes

    def makedirs(self, path: str) -> None:
        """Create the directory ``path`` and its parents (no error if it exists).

        Raises:
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        try:
            self.fs.create_dir(self._p(path), recursive=True)
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot create directory '{path}': {exc}") from exc

    def _parent(self, path: str) -> str:
        internal = self._p(path)
        return internal.rsplit("/", 1)[0] if "/" in internal else ""

    def _make_parent(self, path: str) -> None:
        parent = self._parent(path)
        if parent:
            try:
                self.fs.create_dir(parent, recursive=True)
            except (OSError, pa.ArrowException) as exc:
                raise StorageError(f"cannot create directory for '{path}': {exc}") from exc

    def open_output(self, path: str) -> pa.NativeFile:
        """A writable stream for ``path`` (parents created, existing file truncated); caller closes it.

        Raises:
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        self._make_parent(path)
        try:
            return self.fs.open_output_stream(self._p(path))
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot open '{path}' for writing: {exc}") from exc

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path``, creating parents and replacing any existing file (not atomic)."""
        with self.open_output(path) as out:
            out.write(data)

    def create_if_absent(self, path: str, data: bytes = b"") -> bool:
        """Create ``path`` with ``data`` only if nothing exists there.

        Returns:
            ``True`` if this call created the file, ``False`` if it already existed.

        Local filesystems use ``O_CREAT | O_EXCL`` (atomic against concurrent creators); other stores check
        existence first (not atomic).

        Raises:
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        if self.is_local:
            self._make_parent(path)
            local = self._p(path)
            try:
                fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            except OSError as exc:
                raise StorageError(f"cannot create '{path}': {exc}") from exc
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            finally:
                os.close(fd)
            return True
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    def _temp_sibling(self, path: str) -> str:
        internal = self._p(path)
        parent, _, name = internal.rpartition("/")
        temp_name = f".{name}.{uuid.uuid4().hex}.tmp"
        return self._out(path, f"{parent}/{temp_name}" if parent else temp_name)

    def write_atomic(self, path: str, data: bytes, *, overwrite: bool = True) -> None:
        """Make ``path`` appear with the full ``data`` at once: write a temporary sibling, then rename.

        The temporary file is ``.<name>.<uuid>.tmp`` in the same directory: it starts with ``.`` and ends
        with ``.tmp``, so it never parses as a timeline instant.

        Args:
            path: target file.
            data: content.
            overwrite: when ``False`` and ``path`` already exists, raise instead of replacing it (locally
                this is atomic via ``link``; elsewhere it is check-then-rename).

        Raises:
            StorageError: the write or rename failed, or ``overwrite=False`` and the target exists.
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        temp = self._temp_sibling(path)
        self.write_bytes(temp, data)
        try:
            if not overwrite:
                if self.is_local:
                    try:
                        os.link(self._p(temp), self._p(path))
                    except FileExistsError as exc:
                        raise StorageError(f"cannot create '{path}': it already exists") from exc
                    except OSError as exc:
                        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                            raise StorageError(f"cannot create '{path}': {exc}") from exc
                        # filesystem without hard links: fall back to check-then-rename
                        if self.exists(path):
                            raise StorageError(f"cannot create '{path}': it already exists") from exc
                        self.rename(temp, path)
                        return
                    self.delete(temp)
                    return
                if self.exists(path):
                    raise StorageError(f"cannot create '{path}': it already exists")
            self.rename(temp, path)
        except BaseException:
            self.delete(temp)
            raise

    def rename(self, src: str, dst: str) -> None:
        """Move ``src`` to ``dst`` (replacing ``dst``; atomic on local filesystems).

        Raises:
            UnsafePath: ``src`` or ``dst`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(src)
        self._guard(dst)
        try:
            if self.is_local:
                os.replace(self._p(src), self._p(dst))
            else:
                self.fs.move(self._p(src), self._p(dst))
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot rename '{src}' to '{dst}': {exc}") from exc

    def delete(self, path: str) -> None:
        """Delete the file ``path``; a missing file is not an error.

        Raises:
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        try:
            self.fs.delete_file(self._p(path))
        except FileNotFoundError:
            return
        except (OSError, pa.ArrowException) as exc:
            if not self.exists(path):
                return
            raise StorageError(f"cannot delete '{path}': {exc}") from exc

    def delete_dir(self, path: str) -> None:
        """Delete the directory ``path`` and everything below it; a missing directory is not an error.

        Raises:
            UnsafePath: ``path`` has a ``..`` segment below the root (:meth:`_guard`).
        """
        self._guard(path)
        try:
            self.fs.delete_dir(self._p(path))
        except FileNotFoundError:
            return
        except (OSError, pa.ArrowException) as exc:
            if not self.exists(path):
                return
            raise StorageError(f"cannot delete directory '{path}': {exc}") from exc
