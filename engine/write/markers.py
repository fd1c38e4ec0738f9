"""Write markers (Hudi ``DirectWriteMarkers``): one empty file per data file a write creates, written
before the data file, so a failed write can be rolled back precisely.

Layout: ``<base>/.hoodie/.temp/<instant>/<partition>/<data file name>.marker.<CREATE|MERGE|APPEND>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from engine.errors import UnsafePath
from engine.partition_path import check_relative_path
from engine.storage import Storage


class IOType(Enum):
    """What the data file is: a new base file, a rewritten base file, or a log file appended to."""

    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


@dataclass(frozen=True)
class Marker:
    """One marker: the data file it stands for (partition-relative) and its IO type."""

    partition_path: str
    file_name: str
    io_type: IOType

    @property
    def data_file_relative_path(self) -> str:
        """``<partition>/<file>`` relative to the base path (just ``<file>`` when non-partitioned)."""
        return f"{self.partition_path}/{self.file_name}" if self.partition_path else self.file_name


def marker_dir(base_path: str, instant_time: str) -> str:
    """``<base>/.hoodie/.temp/<instant>``."""
    return f"{base_path.rstrip('/')}/.hoodie/.temp/{instant_time}"


def create_marker(storage: Storage, base_path: str, instant_time: str, marker: Marker) -> None:
    """Write the (empty) marker file for ``marker``; idempotent.

    Raises:
        UnsafePath: the marker's partition path or file name is absolute, has an empty, ``.`` or ``..``
            segment, or a control character, so the marker could land outside ``.hoodie/.temp``.
    """
    check_relative_path(marker.data_file_relative_path, f"marker of instant {instant_time} in {base_path}:")
    if not marker.file_name or "/" in marker.file_name:
        raise UnsafePath(f"marker of instant {instant_time} in {base_path}: data file name "
                         f"{marker.file_name!r} is empty or holds a '/'")
    storage.create_if_absent(_marker_path(base_path, instant_time, marker), b"")


def _marker_path(base_path: str, instant_time: str, marker: Marker) -> str:
    parts = [marker_dir(base_path, instant_time)]
    if marker.partition_path:
        parts.append(marker.partition_path)
    parts.append(f"{marker.file_name}.marker.{marker.io_type.value}")
    return "/".join(parts)


def delete_marker(storage: Storage, base_path: str, instant_time: str, marker: Marker) -> None:
    """Remove one marker of ``instant_time`` (its data file turned out to be another writer's: the name was
    taken), so that neither the commit's reconciliation nor a rollback ever touches that file."""
    storage.delete(_marker_path(base_path, instant_time, marker))


def list_markers(storage: Storage, base_path: str, instant_time: str) -> list[Marker]:
    """All markers of ``instant_time`` (empty when the marker directory does not exist)."""
    root = marker_dir(base_path, instant_time)
    markers: list[Marker] = []
    for info in storage.list_files_recursive(root):
        if info.is_dir or ".marker." not in info.name:
            continue
        relative = info.path[len(root):].strip("/")
        partition = relative.rsplit("/", 1)[0] if "/" in relative else ""
        data_name, _, io = info.name.rpartition(".marker.")
        try:
            markers.append(Marker(partition, data_name, IOType(io)))
        except ValueError:
            continue
    return markers


def delete_marker_dir(storage: Storage, base_path: str, instant_time: str) -> None:
    """Remove ``.hoodie/.temp/<instant>`` after a commit or rollback."""
    storage.delete_dir(marker_dir(base_path, instant_time))


def delete_uncommitted_files(storage: Storage, base_path: str, instant_time: str,
                             committed: set[str | None]) -> int:
    """Delete the data files of ``instant_time``'s markers that are not in ``committed`` (relative paths): what
    failed or duplicate task attempts left (Hudi ``reconcileAgainstMarkers``). Returns how many were deleted."""
    deleted = 0
    for marker in list_markers(storage, base_path, instant_time):
        if marker.data_file_relative_path not in committed:
            storage.delete(storage.join(base_path, marker.data_file_relative_path))
            deleted += 1
    return deleted
