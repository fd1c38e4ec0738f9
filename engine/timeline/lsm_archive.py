"""The archived timeline of Hudi 1.x tables: an LSM tree of parquet files (Hudi ``LSMTimeline``,
``HoodieLSMTimelineManifest``, ``ArchivedTimelineV2``): located, its range and completion times read.

Layout under ``.hoodie/timeline/history`` (``hoodie.timeline.history.path``)::

    _version_                                  the latest snapshot version N (decimal text)
    manifest_<N>                               JSON {"files": [{"fileName": ..., "fileLen": ...}, ...]}
    <minInstant>_<maxInstant>_<level>.parquet  archived instants (HoodieLSMTimelineInstant records)

Data files hold ``HoodieLSMTimelineInstant`` records (``instantTime``, ``completionTime``, ``action``,
``metadata``, ``plan``, ``version``). This engine reads their times only (:func:`completion_times`: the file
slicing of logs whose delta commits were archived needs their completion times); a time-travel, incremental or
CDC read that needs archived instants themselves is refused by the read retention check
(:mod:`engine.read.retention`) with the archived range this module gives.
"""

from __future__ import annotations

import io
import json
import logging
import re
from dataclasses import dataclass

import pyarrow.parquet as pq

from engine.errors import CorruptFile
from engine.storage import Storage

LOG = logging.getLogger(__name__)

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_DATA_FILE_RE = re.compile(r"^(\d+)_(\d+)_(\d+)\.parquet$")


@dataclass(frozen=True)
class ArchivedRange:
    """The instants the LSM archive holds.

    Attributes:
        first: smallest archived instant time (requested time).
        last: largest archived instant time.
        files: data file names of the snapshot, sorted.
    """

    first: str
    last: str
    files: tuple[str, ...]

    def __str__(self) -> str:
        return f"[{self.first}, {self.last}]"


def parse_data_file_name(name: str) -> tuple[str, str, int] | None:
    """``(min instant, max instant, level)`` of an LSM data file name, or ``None``."""
    match = _DATA_FILE_RE.match(name)
    if match is None:
        return None
    return match.group(1), match.group(2), int(match.group(3))


def snapshot_files(storage: Storage, history_path: str) -> list[str]:
    """Data file names of the latest LSM snapshot: those ``manifest_<_version_>`` lists, or, with no
    ``_version_`` file, every data file in the folder (Hudi ``LSMTimeline.latestSnapshotManifest`` /
    ``listAllMetaFiles``). ``[]`` when the folder does not exist.

    Raises:
        CorruptFile: ``_version_`` or the manifest does not parse.
        StorageError: reading failed.
    """
    if not storage.exists(history_path):
        return []
    version_path = storage.join(history_path, VERSION_FILE)
    if storage.exists(version_path):
        text = storage.read_bytes(version_path).decode("utf-8", "replace").strip()
        if not text.isdigit():
            raise CorruptFile(f"LSM timeline version file {version_path} holds {text[:40]!r}, expected a number")
        manifest_path = storage.join(history_path, f"{MANIFEST_PREFIX}{int(text)}")
        try:
            manifest = json.loads(storage.read_bytes(manifest_path))
            names = [str(entry["fileName"]) for entry in manifest.get("files") or []]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptFile(f"LSM timeline manifest {manifest_path} is not valid: {exc}") from exc
        return sorted(n for n in names if parse_data_file_name(n) is not None)
    return sorted(info.name for info in storage.list_dir(history_path)
                  if not info.is_dir and parse_data_file_name(info.name) is not None)


def archived_range(storage: Storage, history_path: str) -> ArchivedRange | None:
    """The range of archived instants (from the data file names of the latest snapshot), or ``None`` when
    nothing was archived.

    Raises:
        CorruptFile: a malformed version file or manifest.
        StorageError: reading failed.
    """
    files = snapshot_files(storage, history_path)
    spans = [parsed for parsed in (parse_data_file_name(n) for n in files) if parsed is not None]
    if not spans:
        return None
    return ArchivedRange(min(s[0] for s in spans), max(s[1] for s in spans), tuple(files))


def completion_times(storage: Storage, history_path: str) -> dict[str, str]:
    """Requested time → completion time of every archived instant of the latest snapshot (Hudi
    ``CompletionTimeQueryView`` loading the archived timeline); ``{}`` when nothing was archived.

    Raises:
        CorruptFile: a malformed version file, manifest or data file (named).
        StorageError: reading failed.
    """
    out: dict[str, str] = {}
    for name in snapshot_files(storage, history_path):
        path = storage.join(history_path, name)
        try:
            table = pq.read_table(io.BytesIO(storage.read_bytes(path)), columns=["instantTime", "completionTime"])
        except (OSError, ValueError, KeyError) as exc:
            raise CorruptFile(f"LSM timeline file {path} cannot be read: {exc}") from exc
        for requested, completed in zip(table.column("instantTime").to_pylist(),
                                        table.column("completionTime").to_pylist(), strict=True):
            if requested and completed:
                out[str(requested)] = str(completed)
    return out

