"""Commit metadata JSON of ``commit`` / ``deltacommit`` / ``replacecommit`` instants (docs/FORMAT.md §2.3).

Mirrors Java ``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata`` / ``HoodieWriteStat`` /
``HoodieDeltaWriteStat`` as Jackson serializes them in table version 6: pretty-printed JSON
(``DefaultPrettyPrinter``: ``"key" : value``, arrays inline as ``[ a, b ]``, empty ``{ }`` / ``[ ]``, no
trailing newline) with the keys in Java field-declaration order. :meth:`CommitMetadata.to_json` reproduces
the files Hudi 0.14/0.15 wrote byte for byte; :meth:`CommitMetadata.from_json` accepts 0-byte content
(Java treats an empty completed commit as empty metadata) and ignores — but preserves — unknown keys.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.errors import CorruptFile

LOG = logging.getLogger(__name__)

NULL_COMMIT = "null"
"""``prevCommit`` of a new file group: the *string* ``"null"`` (Java ``HoodieWriteStat.NULL_COMMIT``)."""

SCHEMA_KEY = "schema"
"""``extraMetadata`` key holding the write's Avro schema JSON without meta fields."""


# ---------------------------------------------------------------------------------------------- JSON


def _jackson_pretty(value: Any, depth: int = 0) -> str:
    """Render ``value`` like Jackson's ``DefaultPrettyPrinter`` (2-space indent per object level; arrays do
    not add a level and stay on one line)."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        indent = "  " * (depth + 1)
        entries = [f"{indent}{json.dumps(str(k), ensure_ascii=False)} : {_jackson_pretty(v, depth + 1)}"
                   for k, v in value.items()]
        return "{\n" + ",\n".join(entries) + "\n" + "  " * depth + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_jackson_pretty(v, depth) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


def to_jackson_json(value: Any) -> bytes:
    """UTF-8 bytes of ``value`` pretty-printed the way Hudi's Jackson ``ObjectMapper`` does."""
    return _jackson_pretty(value).encode("utf-8")


# ---------------------------------------------------------------------------------------------- stats


@dataclass
class RuntimeStats:
    """Java ``HoodieWriteStat.RuntimeStats``; all times in milliseconds."""

    total_scan_time: int = 0
    total_upsert_time: int = 0
    total_create_time: int = 0

    def to_dict(self) -> dict[str, Any]:
        """``{"totalScanTime", "totalUpsertTime", "totalCreateTime"}`` in Java order."""
        return {"totalScanTime": self.total_scan_time, "totalUpsertTime": self.total_upsert_time,
                "totalCreateTime": self.total_create_time}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> RuntimeStats:
        """Inverse of :meth:`to_dict` (missing keys → 0)."""
        return RuntimeStats(int(data.get("totalScanTime") or 0), int(data.get("totalUpsertTime") or 0),
                            int(data.get("totalCreateTime") or 0))


# (json key, attribute) in Java field order of HoodieWriteStat
_BASE_FIELDS: tuple[tuple[str, str], ...] = (
    ("fileId", "file_id"),
    ("path", "path"),
    ("cdcStats", "cdc_stats"),
    ("prevCommit", "prev_commit"),
    ("numWrites", "num_writes"),
    ("numDeletes", "num_deletes"),
    ("numUpdateWrites", "num_update_writes"),
    ("numInserts", "num_inserts"),
    ("totalWriteBytes", "total_write_bytes"),
    ("totalWriteErrors", "total_write_errors"),
    ("tempPath", "temp_path"),
    ("partitionPath", "partition_path"),
    ("totalLogRecords", "total_log_records"),
    ("totalLogFilesCompacted", "total_log_files_compacted"),
    ("totalLogSizeCompacted", "total_log_size_compacted"),
    ("totalUpdatedRecordsCompacted", "total_updated_records_compacted"),
    ("totalLogBlocks", "total_log_blocks"),
    ("totalCorruptLogBlock", "total_corrupt_log_block"),
    ("totalRollbackBlocks", "total_rollback_blocks"),
    ("fileSizeInBytes", "file_size_in_bytes"),
    ("minEventTime", "min_event_time"),
    ("maxEventTime", "max_event_time"),
    ("runtimeStats", "runtime_stats"),
)
# HoodieDeltaWriteStat additions, in Java field order
_DELTA_FIELDS: tuple[tuple[str, str], ...] = (
    ("logVersion", "log_version"),
    ("logOffset", "log_offset"),
    ("baseFile", "base_file"),
    ("logFiles", "log_files"),
    ("recordsStats", "records_stats"),
)
_KNOWN_STAT_KEYS = frozenset(k for k, _ in _BASE_FIELDS + _DELTA_FIELDS)


@dataclass
class WriteStat:
    """Statistics of one file written by a commit (Java ``HoodieWriteStat``; ``HoodieDeltaWriteStat`` when
    :attr:`is_delta`).

    Attributes:
        file_id: file group id (``""`` in inflight workload placeholders).
        path: file path relative to the base path (``<partition>/<file>`` or ``<file>``); for a log write
            the log file; ``None`` in inflight placeholders.
        cdc_stats: CDC log path → size in bytes, or ``None``.
        prev_commit: base instant of the slice this write replaced/appended to, or ``"null"`` (string) for
            a new file group.
        num_writes: records written to the file (including copied unchanged records).
        num_deletes: records deleted.
        num_update_writes: records updated.
        num_inserts: records inserted.
        total_write_bytes: bytes written (for a log append: the bytes appended).
        total_write_errors: failed records.
        temp_path: temporary path, normally ``None``.
        partition_path: partition (``""`` non-partitioned; ``None`` in inflight placeholders).
        total_log_records / total_log_files_compacted / total_log_size_compacted (bytes) /
        total_updated_records_compacted / total_log_blocks / total_corrupt_log_block /
        total_rollback_blocks: compaction and log-reading statistics.
        file_size_in_bytes: size of the resulting file in bytes.
        min_event_time / max_event_time: event-time bounds (ms) or ``None``.
        runtime_stats: timings, or ``None`` (inflight placeholders).
        log_version: log file version (delta stats only; ``None`` = plain ``HoodieWriteStat``).
        log_offset: byte offset of the appended block in the log file (delta only).
        base_file: base file *name* of the slice, ``""`` if none (delta only).
        log_files: log file names of the slice (delta only).
        records_stats: raw ``recordsStats`` JSON (delta only; Java writes ``{"val": null}``).
        extra: unknown JSON keys, preserved in order for re-serialization.
    """

    file_id: str = ""
    path: str | None = None
    cdc_stats: dict[str, int] | None = None
    prev_commit: str = NULL_COMMIT
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    temp_path: str | None = None
    partition_path: str | None = None
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: RuntimeStats | None = None
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: list[str] | None = None
    records_stats: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_delta(self) -> bool:
        """Whether this is a ``HoodieDeltaWriteStat`` (a MOR log append), i.e. has log fields."""
        return self.log_version is not None or self.log_files is not None or self.base_file is not None

    @property
    def file_name(self) -> str | None:
        """Last component of :attr:`path` (``None`` when no path)."""
        if self.path is None:
            return None
        return self.path.rsplit("/", 1)[-1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with Jackson's key names and order (delta keys only when :attr:`is_delta`)."""
        out: dict[str, Any] = {}
        for key, attr in _BASE_FIELDS:
            value = getattr(self, attr)
            if attr == "runtime_stats" and value is not None:
                value = value.to_dict()
            out[key] = value
        if self.is_delta:
            out["logVersion"] = self.log_version if self.log_version is not None else 0
            out["logOffset"] = self.log_offset if self.log_offset is not None else 0
            out["baseFile"] = self.base_file
            out["logFiles"] = list(self.log_files) if self.log_files is not None else []
            out["recordsStats"] = self.records_stats if self.records_stats is not None else {"val": None}
        out.update(self.extra)
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> WriteStat:
        """Build from a parsed JSON write stat; unknown keys go to :attr:`extra`.

        Raises:
            CorruptFile: ``data`` is not a JSON object.
        """
        if not isinstance(data, dict):
            raise CorruptFile(f"write stat is not a JSON object: {data!r}")
        stat = WriteStat()
        for key, attr in _BASE_FIELDS + _DELTA_FIELDS:
            if key in data:
                value = data[key]
                if attr == "runtime_stats" and value is not None:
                    value = RuntimeStats.from_dict(value)
                setattr(stat, attr, value)
        stat.extra = {k: v for k, v in data.items() if k not in _KNOWN_STAT_KEYS}
        return stat


# ---------------------------------------------------------------------------------------------- metadata


@dataclass
class CommitMetadata:
    """Content of a completed (or inflight) ``commit``/``deltacommit``/``replacecommit`` file (Java
    ``HoodieCommitMetadata``; ``HoodieReplaceCommitMetadata`` when :attr:`partition_to_replace_file_ids` is
    not ``None``).

    Attributes:
        partition_to_write_stats: partition path (``""`` non-partitioned) → write stats, in file order.
        compacted: ``True`` for a compaction commit.
        extra_metadata: string map; ``"schema"`` holds the Avro schema JSON (without meta fields).
        operation_type: ``WriteOperationType`` name (``UPSERT``, ``INSERT``, ``BULK_INSERT``, ``DELETE``,
            ``INSERT_OVERWRITE``, ``INSERT_OVERWRITE_TABLE``, ``DELETE_PARTITION``, ``CLUSTER``,
            ``COMPACT``, ``UNKNOWN`` ...).
        partition_to_replace_file_ids: ``None`` for a plain commit; for a replacecommit, partition →
            replaced file group ids.
        extra: unknown top-level JSON keys, preserved.
    """

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    partition_to_replace_file_ids: dict[str, list[str]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ derived

    @property
    def is_replace(self) -> bool:
        """Whether this is replace-commit metadata."""
        return self.partition_to_replace_file_ids is not None

    @property
    def schema(self) -> str | None:
        """``extraMetadata["schema"]`` (Avro JSON without meta fields), or ``None`` if absent/empty."""
        value = self.extra_metadata.get(SCHEMA_KEY)
        return value or None

    def add_write_stat(self, partition_path: str, stat: WriteStat) -> None:
        """Append ``stat`` under ``partition_path`` (Java ``addWriteStat``)."""
        self.partition_to_write_stats.setdefault(partition_path, []).append(stat)

    def all_write_stats(self) -> list[WriteStat]:
        """Every write stat, partitions in file order."""
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def iter_write_stats(self) -> Iterator[tuple[str, WriteStat]]:
        """(partition path, stat) pairs."""
        for partition, stats in self.partition_to_write_stats.items():
            for stat in stats:
                yield partition, stat

    def file_ids_by_partition(self) -> dict[str, list[str]]:
        """Partition → distinct non-empty file ids written (first-seen order)."""
        out: dict[str, list[str]] = {}
        for partition, stats in self.partition_to_write_stats.items():
            ids = out.setdefault(partition, [])
            for stat in stats:
                if stat.file_id and stat.file_id not in ids:
                    ids.append(stat.file_id)
        return out

    def replaced_file_ids(self) -> dict[str, list[str]]:
        """Partition → replaced file group ids (``{}`` for a plain commit)."""
        return {p: list(ids) for p, ids in (self.partition_to_replace_file_ids or {}).items()}

    def written_paths(self) -> list[str]:
        """Relative paths of every written file (stats without a path are skipped)."""
        return [s.path for s in self.all_write_stats() if s.path]

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict in Jackson's key order."""
        out: dict[str, Any] = {
            "partitionToWriteStats": {p: [s.to_dict() for s in stats]
                                      for p, stats in self.partition_to_write_stats.items()},
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            out["partitionToReplaceFileIds"] = {p: list(ids)
                                                for p, ids in self.partition_to_replace_file_ids.items()}
        out.update(self.extra)
        return out

    def to_json(self) -> bytes:
        """UTF-8 Jackson-style pretty JSON, as Hudi writes commit files (no trailing newline)."""
        return to_jackson_json(self.to_dict())

    @staticmethod
    def from_dict(data: dict[str, Any]) -> CommitMetadata:
        """Build from parsed JSON. A ``partitionToReplaceFileIds`` key makes it replace metadata.

        Raises:
            CorruptFile: the structure is not commit metadata.
        """
        if not isinstance(data, dict):
            raise CorruptFile(f"commit metadata is not a JSON object: {str(data)[:80]!r}")
        stats_raw = data.get("partitionToWriteStats") or {}
        if not isinstance(stats_raw, dict):
            raise CorruptFile("commit metadata: partitionToWriteStats is not an object")
        stats = {str(p): [WriteStat.from_dict(s) for s in (lst or [])] for p, lst in stats_raw.items()}
        replace_raw = data.get("partitionToReplaceFileIds")
        replace = None
        if "partitionToReplaceFileIds" in data:
            replace = {str(p): [str(i) for i in (ids or [])] for p, ids in (replace_raw or {}).items()}
        known = {"partitionToWriteStats", "compacted", "extraMetadata", "operationType",
                 "partitionToReplaceFileIds"}
        return CommitMetadata(
            partition_to_write_stats=stats,
            compacted=bool(data.get("compacted") or False),
            extra_metadata={str(k): v for k, v in (data.get("extraMetadata") or {}).items()},
            operation_type=str(data.get("operationType") or "UNKNOWN"),
            partition_to_replace_file_ids=replace,
            extra={k: v for k, v in data.items() if k not in known},
        )

    @staticmethod
    def from_json(content: bytes | str, source: str = "") -> CommitMetadata:
        """Parse commit JSON; 0-byte/blank content gives empty metadata (as Java does).

        Args:
            content: file bytes (UTF-8) or text.
            source: file/instant named in error messages.

        Raises:
            CorruptFile: not valid JSON or not commit metadata.
        """
        text = content.decode("utf-8") if isinstance(content, bytes | bytearray) else content
        if not text.strip():
            return CommitMetadata()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptFile(f"commit metadata {source or ''} is not valid JSON: {exc}".replace("  ", " ")) \
                from exc
        try:
            return CommitMetadata.from_dict(data)
        except CorruptFile as exc:
            raise CorruptFile(f"{source}: {exc}" if source else str(exc)) from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise CorruptFile(f"commit metadata {source} is malformed: {exc}") from exc
