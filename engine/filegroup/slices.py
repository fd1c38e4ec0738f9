"""File slices and file groups (Hudi ``HoodieBaseFile``, ``HoodieLogFile``, ``FileSlice``,
``HoodieFileGroup``; docs/FORMAT.md §3.4).

A *file group* is every file with one file id in one partition. A *file slice* is the part of a file group
sharing one base instant: at most one base file written at that instant plus the log files whose name
carries that base instant. Slices are ordered by base instant; the latest committed one is what a
snapshot reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.filegroup.naming import parse_base_file_name, parse_log_file_name


@dataclass(frozen=True)
class BaseFile:
    """A base (parquet) file (Hudi ``HoodieBaseFile``).

    Attributes:
        path: full path (as :class:`engine.storage.Storage` lists it).
        name: file name.
        file_id: file group id.
        commit_time: instant that wrote the file (the slice's base instant).
        size: bytes.
        mtime_ms: modification time, milliseconds since the epoch (0 when unknown).
    """

    path: str
    name: str
    file_id: str
    commit_time: str
    size: int
    mtime_ms: int = 0

    @property
    def write_token(self) -> str:
        """Write token part of the name."""
        parsed = parse_base_file_name(self.name)
        return parsed[1] if parsed else ""


@dataclass(frozen=True)
class LogFile:
    """A log file (Hudi ``HoodieLogFile``).

    Attributes:
        path: full path.
        name: file name (``.<fileId>_<baseInstant>.log.<version>_<token>``).
        file_id: file group id.
        base_instant: base instant of the slice it belongs to.
        version: log version (from 1).
        token: write token (``""`` if the name has none).
        size: bytes.
    """

    path: str
    name: str
    file_id: str
    base_instant: str
    version: int
    token: str
    size: int

    @property
    def sort_key(self) -> tuple[str, int, str, bool]:
        """Java ``HoodieLogFile.LogFileComparator`` order (base instant, version, token, cdc last)."""
        parsed = parse_log_file_name(self.name)
        return self.base_instant, self.version, self.token, bool(parsed and parsed.is_cdc)


@dataclass(frozen=True)
class FileSlice:
    """One slice of a file group (Hudi ``FileSlice``).

    Attributes:
        partition_path: relative partition path (``""`` non-partitioned).
        file_id: file group id.
        base_instant: the slice's base instant (base file commit time, or the instant log files name).
        base_file: the base file, or ``None`` (log-only slice, or pending-compaction slice).
        log_files: log files in :attr:`LogFile.sort_key` order (oldest first).
    """

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...] = ()

    @property
    def has_base_file(self) -> bool:
        """Whether the slice has a base file."""
        return self.base_file is not None

    @property
    def has_log_files(self) -> bool:
        """Whether the slice has log files."""
        return bool(self.log_files)

    @property
    def is_empty(self) -> bool:
        """No base file and no log files (e.g. a freshly scheduled compaction's slice)."""
        return self.base_file is None and not self.log_files

    @property
    def latest_log_file(self) -> LogFile | None:
        """The newest log file, or ``None``."""
        return self.log_files[-1] if self.log_files else None

    @property
    def total_size(self) -> int:
        """Base + log file bytes."""
        return (self.base_file.size if self.base_file else 0) + sum(f.size for f in self.log_files)

    def without_base_file(self) -> FileSlice:
        """This slice minus its base file (Hudi ``filterBaseFileAfterPendingCompaction``)."""
        return FileSlice(self.partition_path, self.file_id, self.base_instant, None, self.log_files)


@dataclass(frozen=True)
class FileGroup:
    """All committed slices of one file id in one partition (Hudi ``HoodieFileGroup``).

    Attributes:
        partition_path: relative partition path.
        file_id: file group id.
        slices: slices sorted by base instant (oldest first).
    """

    partition_path: str
    file_id: str
    slices: tuple[FileSlice, ...]

    @property
    def latest_slice(self) -> FileSlice | None:
        """The newest slice, or ``None`` if the group has none."""
        return self.slices[-1] if self.slices else None

    @property
    def latest_base_file(self) -> BaseFile | None:
        """Base file of the newest slice that has one."""
        for file_slice in reversed(self.slices):
            if file_slice.base_file is not None:
                return file_slice.base_file
        return None

    def slice_before_or_on(self, instant: str) -> FileSlice | None:
        """Newest slice with base instant ≤ ``instant``."""
        for file_slice in reversed(self.slices):
            if file_slice.base_instant <= instant:
                return file_slice
        return None

    def base_files(self) -> list[BaseFile]:
        """Every base file, oldest first."""
        return [s.base_file for s in self.slices if s.base_file is not None]


def base_instant_by_completion(log_instant: str, completion_time: str | None, slice_instants: list[str]) -> str:
    """The base instant of the slice a Hudi 1.x log file belongs to (Hudi 1.x ``HoodieFileGroup.
    getBaseInstantTime`` with a ``CompletionTimeQueryView``; timeline layout 2).

    Log files of 1.x tables are named after the delta commit that wrote them, not after a base instant. The log
    joins the slice with the greatest base instant (requested time of the commit that wrote the base file, or of
    a pending compaction) at or before the log's *completion* time; so a log whose delta commit completed after
    a compaction was scheduled belongs to the compaction's slice.

    Args:
        log_instant: the delta commit time in the log's name (its requested time).
        completion_time: that delta commit's completion time; ``None`` for a pending one.
        slice_instants: base instants of the file group's slices (any order).

    Returns:
        the slice's base instant: the greatest of ``slice_instants`` ≤ ``completion_time``; ``log_instant`` when
        the group has no slice yet or every slice starts later; the latest slice for a pending log (Hudi: "the
        log file is still pending, it always belongs to the latest file slice").
    """
    if not slice_instants:
        return log_instant
    if completion_time is None:
        return max(slice_instants)
    earlier = [t for t in slice_instants if t <= completion_time]
    return max(earlier) if earlier else log_instant

