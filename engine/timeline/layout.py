"""Timeline layouts: where a table's instants live and how their files are named (Hudi ``TimelineLayout``,
``TimelineLayoutVersion``, ``InstantFileNameGenerator`` / ``InstantFileNameParser``).

* layout 1 (table version 6): instant files directly in ``.hoodie/``, ``T.<action>`` when completed, commit
  metadata as JSON, archived timeline as ``.hoodie/archived/.commits_.archive.N_<token>`` log files
  (:mod:`engine.timeline.instant`, :mod:`engine.services.archive`);
* layout 2 (table versions 8 and 9, Hudi 1.x): instant files in ``.hoodie/<hoodie.timeline.path>``, completed
  ones named ``<requested>_<completion>.<action>``, commit metadata as Avro, archived timeline an LSM tree of
  parquet files under ``timeline/<hoodie.timeline.history.path>`` (:mod:`engine.timeline.layout_v2`).

The :class:`TimelineLayout` object is the one seam the rest of the engine consults; no module checks table
versions itself.
"""

from __future__ import annotations

from typing import Protocol

from engine.errors import UnsupportedTable
from engine.storage import Storage
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import Instant
from engine.timeline.layout_v2 import TimelineLayoutV2


class TimelineLayout(Protocol):
    """How one timeline layout names and stores instants (Hudi ``TimelineLayout`` + ``InstantFileNameGenerator``
    + ``CommitMetadataSerDe`` of one layout version)."""

    @property
    def version(self) -> int:
        """The ``hoodie.timeline.layout.version`` number (1 or 2)."""
        ...

    def timeline_path(self, storage: Storage, meta_path: str) -> str:
        """The folder holding the active timeline's instant files."""
        ...

    def parse(self, file_name: str) -> Instant | None:
        """The instant a file name of the timeline folder stands for, or ``None`` for other files."""
        ...

    def file_name(self, instant: Instant) -> str:
        """The file name of ``instant`` (a completed layout-2 instant needs its ``completion_time``).

        Raises:
            TimelineError: the action/state has no file, or a completed layout-2 instant has no completion time.
        """
        ...

    def commit_metadata(self, content: bytes, source: str) -> CommitMetadata:
        """Decode the content of a commit/deltacommit/replacecommit file (0 bytes gives empty metadata).

        Raises:
            CorruptFile: the content is not commit metadata of this layout.
        """
        ...

    def has_archived_instants(self, storage: Storage, archive_path: str) -> bool:
        """Whether the archived timeline under ``archive_path`` holds instants.

        Raises:
            StorageError: listing failed.
        """
        ...

    def archived_completion_times(self, storage: Storage, meta_path: str) -> dict[str, str]:
        """Requested → completion time of archived instants (``{}`` on layout 1, which keeps none).

        Raises:
            CorruptFile: the archived timeline cannot be read.
            StorageError: reading failed.
        """
        ...


class TimelineLayoutV1:
    """Layout 1 (table version 6; Hudi ``TimelineLayoutV1`` / ``InstantFileNameGeneratorV1``)."""

    version = 1

    def timeline_path(self, storage: Storage, meta_path: str) -> str:
        """``.hoodie`` itself."""
        return meta_path

    def parse(self, file_name: str) -> Instant | None:
        """:meth:`engine.timeline.instant.Instant.parse`."""
        return Instant.parse(file_name)

    def file_name(self, instant: Instant) -> str:
        """:attr:`engine.timeline.instant.Instant.file_name`."""
        return instant.file_name

    def commit_metadata(self, content: bytes, source: str) -> CommitMetadata:
        """JSON commit metadata (:meth:`CommitMetadata.from_json`)."""
        return CommitMetadata.from_json(content, source=source)

    def has_archived_instants(self, storage: Storage, archive_path: str) -> bool:
        """Whether ``archive_path`` holds an ``.archive.`` log file."""
        return any(".archive." in info.name for info in storage.list_dir(archive_path))

    def archived_completion_times(self, storage: Storage, meta_path: str) -> dict[str, str]:
        """``{}``: layout 1 keeps no completion times."""
        return {}


LAYOUT_V1 = TimelineLayoutV1()
"""The layout of table version 6."""

READABLE_TABLE_VERSIONS = {6: 1, 8: 2, 9: 2}
"""Table versions this engine reads → the timeline layout version each must have (Hudi
``HoodieTableVersion.getTimelineLayoutVersion``)."""


def layout_for(table_version: int, layout_version: str | None, where: str, *, timeline_folder: str = "timeline",
               history_folder: str = "history") -> TimelineLayout:
    """The layout of a table of ``table_version`` whose ``hoodie.timeline.layout.version`` is ``layout_version``.

    Args:
        table_version: ``hoodie.table.version``.
        layout_version: ``hoodie.timeline.layout.version`` (``None`` when unset: the version's own layout).
        where: the table named in errors.
        timeline_folder: ``hoodie.timeline.path`` (layout 2: the folder under ``.hoodie``).
        history_folder: ``hoodie.timeline.history.path`` (layout 2: the LSM archive under the timeline folder).

    Raises:
        UnsupportedTable: a table version this engine does not read, or a layout that does not belong to it.
    """
    expected = READABLE_TABLE_VERSIONS.get(table_version)
    if expected is None:
        raise UnsupportedTable(f"table {where} has version {table_version}; this engine reads table versions "
                               f"{', '.join(str(v) for v in sorted(READABLE_TABLE_VERSIONS))}")
    if layout_version is not None and layout_version != str(expected):
        raise UnsupportedTable(f"table {where} has timeline layout {layout_version}; version {table_version} "
                               f"tables need layout {expected}")
    return LAYOUT_V1 if expected == 1 else TimelineLayoutV2(timeline_folder, history_folder)
