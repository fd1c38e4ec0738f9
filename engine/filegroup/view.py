"""File-system view of a table: which files make up each file group and slice (Hudi
``HoodieTableFileSystemView`` over ``FileSystemBackedTableMetadata``; docs/FORMAT.md §3.4).

Assembly rules (Java's ``AbstractTableFileSystemView``):

1. Partitions are directories holding a ``.hoodie_partition_metadata*`` file (not descended further), plus —
   a fallback for tables written without metafiles — leaf directories holding base files. The base path
   itself is the only partition of a non-partitioned table. Each directory is listed once per view.
2. Files are grouped by file id; a slice is keyed by base instant (base file commit time, or the base
   instant in a log file's name).
3. Only *committed* slices are visible: the base instant is a completed ``commit``/``deltacommit``/
   ``replacecommit`` or a pending compaction (≤ ``as_of``), or it is older than the first such instant
   (archived) and not a pending write still on the timeline (``containsOrBeforeTimelineStarts``).
4. File groups listed in ``partitionToReplaceFileIds`` of a completed replacecommit ≤ ``as_of`` are dropped.
5. Pending compaction at ``T``: a base file written at ``T`` (compaction output in progress) is hidden, and
   file groups in the plan get a (possibly empty) slice at ``T`` that new log files attach to. Readers merge
   that slice with the previous one (previous base file + all logs; ``getLatestMergedFileSlicesBeforeOrOn``).

Log files are attached by base instant only; whether a log *block* is committed (or ≤ ``as_of``) is decided
by the log reader from the block's ``INSTANT_TIME`` header, as in Java.

Hudi 1.x tables (timeline layout 2) name log files after the delta commit that wrote them: a log joins the slice
whose base instant is the greatest at or before the delta commit's completion time
(:func:`engine.filegroup.slices.base_instant_by_completion`; archived delta commits take their completion time
from the LSM archive). Logs of pending delta commits are left out (their blocks would be skipped anyway), as
hudi-rs does.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Protocol

from engine.errors import ConfigError, CorruptFile, StorageError
from engine.filegroup.naming import parse_base_file_name, parse_log_file_name
from engine.filegroup.partition_metadata import is_partition_metafile
from engine.filegroup.slices import BaseFile, FileGroup, FileSlice, LogFile, base_instant_by_completion
from engine.storage import FileInfo, Storage
from engine.timeline import avro_serde
from engine.timeline.active import ActiveTimeline
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMPACTION, REPLACE_COMMIT, Instant, State


class TableSource(Protocol):
    """What a file-system view reads of its table (:class:`engine.table.Table` is one; the view does not
    import it, so the table can build views without an import cycle)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def base_path(self) -> str: ...

    @property
    def timeline(self) -> ActiveTimeline: ...

    @property
    def base_file_format(self) -> str: ...

    def commit_metadata(self, instant: Instant) -> CommitMetadata: ...

LOG = logging.getLogger(__name__)


def _relative(base_path: str, path: str) -> str:
    base = base_path.rstrip("/")
    if path == base:
        return ""
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    raise StorageError(f"'{path}' is not below the table base path '{base_path}'")


class FileSystemView:
    """Committed file groups and slices of a table, optionally as of an instant.

    Args:
        table: the table (its storage, base path and timeline snapshot are used).
        as_of: time-travel instant (``yyyyMMddHHmmssSSS``, compared as a string like Java); ``None`` = latest.

    Raises:
        ConfigError: ``as_of`` is not a numeric instant time.

    The view is a snapshot: it does not see files or instants created after construction (build a new
    one after ``table.reload()``). It reads the timeline eagerly (replacecommit metadata, pending compaction
    and clustering plans) and lists partitions lazily, once each.
    """

    def __init__(self, table: TableSource, as_of: str | None = None) -> None:
        if as_of is not None and (not as_of.isdigit()):
            raise ConfigError(f"invalid as-of instant '{as_of}' for table {table.base_path}: expected digits "
                              "yyyyMMddHHmmssSSS")
        self.table = table
        self.as_of = as_of
        self.storage = table.storage
        self.base_path = table.base_path
        self.timeline = table.timeline
        self._base_ext = "." + table.base_file_format.lower()
        self._visible: list[str] = [t for t in self.timeline.visible_commit_times() if self._within(t)]
        self._visible_set = set(self._visible)
        self._pending_writes = {i.timestamp for i in self.timeline.commits_timeline()
                                if i.is_pending and i.action != COMPACTION}
        self._pending_compaction_times = {i.timestamp for i in self.timeline.pending_compactions()
                                          if self._within(i.timestamp)}
        self._pending_compaction_ops = self._load_pending_compactions()
        self._replaced = self._load_replaced()
        self._completion_times = self.timeline.completion_times()
        self._by_completion = self.timeline.layout.version != 1
        self._partition_files: dict[str, list[FileInfo]] = {}
        self._partitions: list[str] | None = None
        self._groups: dict[str, list[FileGroup]] = {}

    # ------------------------------------------------------------------ timeline-derived state

    def _within(self, ts: str) -> bool:
        return self.as_of is None or ts <= self.as_of

    def is_committed(self, instant_time: str) -> bool:
        """Whether files with this base instant are visible (rule 3 of the module doc)."""
        if not self._within(instant_time):
            return False
        if instant_time in self._visible_set:
            return True
        if not self._visible or instant_time >= self._visible[0]:
            return False
        return instant_time not in self._pending_writes

    def _load_replaced(self) -> dict[tuple[str, str], str]:
        replaced: dict[tuple[str, str], str] = {}
        for instant in self.timeline.completed_replace_commits():
            if not self._within(instant.timestamp):
                continue
            metadata = self.table.commit_metadata(instant)
            for partition, file_ids in metadata.replaced_file_ids().items():
                for file_id in file_ids:
                    replaced[(partition, file_id)] = instant.timestamp
        return replaced

    def _load_pending_compactions(self) -> dict[tuple[str, str], str]:
        ops: dict[tuple[str, str], str] = {}
        for ts in sorted(self._pending_compaction_times):
            requested = Instant(ts, COMPACTION, State.REQUESTED)
            try:
                content = self.timeline.read_details(requested)
                plan = avro_serde.deserialize(content, "HoodieCompactionPlan", source=requested.file_name)
            except (CorruptFile, StorageError) as exc:
                LOG.warning("cannot read compaction plan %s of %s (%s); its file groups are only "
                            "recognised by the instant time", requested.file_name, self.base_path, exc)
                continue
            for op in plan.get("operations") or []:
                ops[(op.get("partitionPath") or "", op.get("fileId") or "")] = ts
        return ops

    def pending_compaction_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) → pending compaction instant, from the compaction plans (≤ as-of)."""
        return dict(self._pending_compaction_ops)

    def pending_compaction_instants(self) -> list[str]:
        """Sorted pending compaction instant times (≤ as-of)."""
        return sorted(self._pending_compaction_times)

    def replaced_file_ids(self) -> dict[tuple[str, str], str]:
        """(partition, file id) → completed replacecommit instant that replaced it (≤ as-of)."""
        return dict(self._replaced)

    def file_groups_in_pending_clustering(self) -> dict[tuple[str, str], str]:
        """(partition, file id) → instant of a pending clustering ``replacecommit`` whose plan lists it
        (Hudi ``getFileGroupsInPendingClustering``). Such file groups stay readable; writers must not
        update them."""
        out: dict[tuple[str, str], str] = {}
        for instant in self.timeline.of_actions([REPLACE_COMMIT]):
            if not instant.is_pending:
                continue
            requested = Instant(instant.timestamp, REPLACE_COMMIT, State.REQUESTED)
            try:
                content = self.timeline.read_details(requested)
            except (StorageError, CorruptFile):
                continue
            if not content:
                continue
            try:
                metadata: dict[str, Any] = avro_serde.deserialize(content, "HoodieRequestedReplaceMetadata",
                                                                  source=requested.file_name)
            except CorruptFile as exc:
                LOG.warning("cannot read %s of %s: %s", requested.file_name, self.base_path, exc)
                continue
            plan = metadata.get("clusteringPlan") or {}
            for group in plan.get("inputGroups") or []:
                for file_slice in group.get("slices") or []:
                    out[(file_slice.get("partitionPath") or "", file_slice.get("fileId") or "")] = \
                        instant.timestamp
        return out

    # ------------------------------------------------------------------ listing

    def partition_paths(self) -> list[str]:
        """Relative partition paths, sorted (``[""]`` for a non-partitioned table; ``[]`` when empty).

        Raises:
            StorageError: listing failed.
        """
        if self._partitions is None:
            found: dict[str, list[FileInfo]] = {}
            pending = [self.base_path]
            while pending:
                folder = pending.pop()
                entries = self.storage.list_dir(folder)
                files = [e for e in entries if not e.is_dir]
                subdirs = [e for e in entries if e.is_dir and not e.name.startswith(".")]
                rel = _relative(self.base_path, folder)
                if any(is_partition_metafile(f.name) for f in files):
                    found[rel] = files
                    continue
                if any(parse_base_file_name(f.name, self._base_ext) for f in files):
                    if not subdirs:
                        LOG.debug("treating %s as a partition although it has no partition metafile", folder)
                        found[rel] = files
                    else:
                        LOG.warning("ignoring base files in %s: it has sub-directories and no partition "
                                    "metafile", folder)
                pending.extend(d.path for d in subdirs)
            self._partition_files.update(found)
            self._partitions = sorted(found)
        return list(self._partitions)

    def _files(self, partition: str) -> list[FileInfo]:
        if partition not in self._partition_files:
            folder = self.storage.join(self.base_path, partition) if partition else self.base_path
            self._partition_files[partition] = [e for e in self.storage.list_dir(folder) if not e.is_dir]
        return self._partition_files[partition]

    # ------------------------------------------------------------------ file groups

    def _build(self, partition: str) -> list[FileGroup]:
        if partition in self._groups:
            return self._groups[partition]
        bases: dict[str, dict[str, BaseFile]] = defaultdict(dict)
        logs: dict[str, dict[str, list[LogFile]]] = defaultdict(lambda: defaultdict(list))
        for info in self._files(partition):
            parsed_base = parse_base_file_name(info.name, self._base_ext)
            if parsed_base is not None:
                file_id, _, commit_time = parsed_base
                existing = bases[file_id].get(commit_time)
                base = BaseFile(info.path, info.name, file_id, commit_time, info.size, info.mtime_ms)
                if existing is not None:
                    LOG.warning("two base files for file group %s at instant %s in %s: %s and %s; using the "
                                "last by name", file_id, commit_time, partition or "<root>", existing.name,
                                info.name)
                    if existing.name > info.name:
                        continue
                bases[file_id][commit_time] = base
                continue
            parsed_log = parse_log_file_name(info.name)
            if parsed_log is not None and parsed_log.extension == "log" and not parsed_log.is_cdc:
                logs[parsed_log.file_id][parsed_log.base_instant].append(LogFile(
                    info.path, info.name, parsed_log.file_id, parsed_log.base_instant, parsed_log.version,
                    parsed_log.token or "", info.size))
        for (op_partition, file_id), ts in self._pending_compaction_ops.items():
            if op_partition == partition and (file_id in bases or file_id in logs):
                logs[file_id].setdefault(ts, [])
        if self._by_completion:
            logs = self._slice_logs_by_completion(bases, logs)
        groups: list[FileGroup] = []
        for file_id in sorted(set(bases) | set(logs)):
            instants = set(bases.get(file_id, {})) | set(logs.get(file_id, {}))
            slices: list[FileSlice] = []
            for base_instant in sorted(instants):
                if not self.is_committed(base_instant):
                    continue
                base_file = bases.get(file_id, {}).get(base_instant)
                if base_file is not None and base_instant in self._pending_compaction_times:
                    base_file = None  # compaction output still being written
                log_files = tuple(sorted(logs.get(file_id, {}).get(base_instant, []), key=lambda f: f.sort_key))
                slices.append(FileSlice(partition, file_id, base_instant, base_file, log_files))
            if slices:
                groups.append(FileGroup(partition, file_id, tuple(slices)))
        self._groups[partition] = groups
        return groups

    def _log_completion(self, delta_commit: str) -> str | None:
        """Completion time of a log's delta commit: from the active timeline, else, when it is older than the
        active timeline (archived), from the LSM archive (its own time if the archive does not hold it); ``None``
        when it is pending or unknown."""
        completion = self._completion_times.get(delta_commit)
        if completion is not None:
            return completion
        if self._visible and delta_commit < self._visible[0] and delta_commit not in self._pending_writes:
            return self.timeline.archived_completion_times().get(delta_commit, delta_commit)
        return None

    def _slice_logs_by_completion(self, bases: dict[str, dict[str, BaseFile]],
                                  logs: dict[str, dict[str, list[LogFile]]]) -> dict[str, dict[str, list[LogFile]]]:
        """Logs re-keyed from their delta commit to their slice's base instant (timeline layout 2). Slices start
        at committed base files and at pending compactions; logs of pending delta commits are dropped."""
        out: dict[str, dict[str, list[LogFile]]] = defaultdict(lambda: defaultdict(list))
        for file_id, by_instant in logs.items():
            starts = [t for t in bases.get(file_id, {}) if self.is_committed(t)]
            starts += [t for t, files in by_instant.items() if not files]  # pending compaction slices
            for t in starts:
                out[file_id].setdefault(t, [])
            for delta_commit, files in by_instant.items():
                if not files:
                    continue
                completion = self._log_completion(delta_commit)
                if completion is None:
                    LOG.debug("skipping log files of pending delta commit %s in file group %s", delta_commit,
                              file_id)
                    continue
                out[file_id][base_instant_by_completion(delta_commit, completion, starts)].extend(files)
        return out

    def _is_replaced(self, partition: str, file_id: str) -> bool:
        return (partition, file_id) in self._replaced

    def file_groups(self, partition: str, include_replaced: bool = False) -> list[FileGroup]:
        """Committed file groups of ``partition`` sorted by file id (Hudi ``getAllFileGroups``).

        Args:
            partition: relative partition path (``""`` non-partitioned).
            include_replaced: also return file groups replaced by a completed replacecommit.
        """
        groups = self._build(partition)
        if include_replaced:
            return list(groups)
        return [g for g in groups if not self._is_replaced(partition, g.file_id)]

    def replaced_file_groups(self, partition: str) -> list[FileGroup]:
        """File groups of ``partition`` replaced by completed replacecommits (Hudi
        ``getReplacedFileGroupsBeforeOrOn``)."""
        return [g for g in self._build(partition) if self._is_replaced(partition, g.file_id)]

    def file_group(self, partition: str, file_id: str) -> FileGroup | None:
        """One committed, non-replaced file group, or ``None``."""
        for group in self.file_groups(partition):
            if group.file_id == file_id:
                return group
        return None

    def _merged_latest(self, group: FileGroup) -> FileSlice | None:
        latest = group.latest_slice
        if latest is None:
            return None
        if latest.base_instant in self._pending_compaction_times and len(group.slices) > 1:
            previous = group.slices[-2]
            return FileSlice(previous.partition_path, previous.file_id, previous.base_instant,
                             previous.base_file, previous.log_files + latest.log_files)
        return latest

    def latest_file_slices(self, partition: str, *, merge_pending_compaction: bool = True) -> list[FileSlice]:
        """The latest committed slice of every non-replaced file group in ``partition``.

        Args:
            partition: relative partition path.
            merge_pending_compaction: ``True`` (readers; Hudi ``getLatestMergedFileSlicesBeforeOrOn``): a
                slice whose base instant is a pending compaction is merged with the previous slice, and
                empty slices are dropped. ``False`` (writers; Hudi ``getLatestFileSlices``): the raw latest
                slice, whose base instant new log files must carry — possibly empty, never with the base
                file of a pending compaction.
        """
        out: list[FileSlice] = []
        for group in self.file_groups(partition):
            file_slice = self._merged_latest(group) if merge_pending_compaction else group.latest_slice
            if file_slice is None or (merge_pending_compaction and file_slice.is_empty):
                continue
            out.append(file_slice)
        return out

    def latest_file_slice(self, partition: str, file_id: str, *,
                          merge_pending_compaction: bool = True) -> FileSlice | None:
        """The latest slice of one file group (see :meth:`latest_file_slices`), or ``None``."""
        group = self.file_group(partition, file_id)
        if group is None:
            return None
        return self._merged_latest(group) if merge_pending_compaction else group.latest_slice

    def latest_base_files(self, partition: str) -> list[BaseFile]:
        """The newest committed base file of every non-replaced file group (Hudi ``getLatestBaseFiles``);
        pending compaction outputs are never returned."""
        out: list[BaseFile] = []
        for group in self.file_groups(partition):
            base = group.latest_base_file
            if base is not None:
                out.append(base)
        return out

    def all_latest_file_slices(self, *, merge_pending_compaction: bool = True) -> list[FileSlice]:
        """:meth:`latest_file_slices` over every partition (partitions sorted)."""
        out: list[FileSlice] = []
        for partition in self.partition_paths():
            out.extend(self.latest_file_slices(partition, merge_pending_compaction=merge_pending_compaction))
        return out

    def all_latest_base_files(self) -> list[BaseFile]:
        """:meth:`latest_base_files` over every partition."""
        out: list[BaseFile] = []
        for partition in self.partition_paths():
            out.extend(self.latest_base_files(partition))
        return out

    def all_file_groups(self, include_replaced: bool = False) -> list[FileGroup]:
        """:meth:`file_groups` over every partition."""
        out: list[FileGroup] = []
        for partition in self.partition_paths():
            out.extend(self.file_groups(partition, include_replaced=include_replaced))
        return out
