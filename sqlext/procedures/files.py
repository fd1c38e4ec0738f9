"""File procedures (Hudi ``ShowFileStatusProcedure``, ``ShowFsPathDetailProcedure``; docs/SQL.md §2).

* ``show_file_status(table, partition, file)`` → ``status, action, instant, timeline, full_path``: whether a
  data file of the table was deleted and by what, as Hudi looks for it: the completed cleans of the active
  timeline, then of the archived one, then the completed rollbacks (active, then archived), then the
  completed restores (active only), each newest first; a file is theirs when one of their
  ``successDeleteFiles`` contains the name. Found: ``deleted``, the action (``clean``, ``rollback``,
  ``restore``), its instant time, ``active`` or ``archived`` and an empty ``full_path``. Otherwise the file is
  looked up in the partition folder: ``exist`` with its path (no scheme, as Hadoop's ``toUri.getPath``), else
  ``unknown`` with every other column empty. ``partition`` is required on a partitioned table (Hudi's
  words). Beyond Hudi: ``filter`` (a Spark SQL predicate over the output, as newer Hudi's ``show_*``
  procedures take) and ``path`` (the base path, instead of ``table``).
* ``show_fs_path_detail(path, is_sub = false, sort = true, limit = 100)`` → ``path_num, file_num,
  storage_size, storage_size(unit), storage_path, space_consumed, quota, space_quota``: Hadoop's content
  summary of every path the glob ``path`` matches (``is_sub``: of every entry of the folder ``path``):
  folders (the path itself counted, as Hadoop does), files and bytes below it, the size as ``0.00KB`` /
  ``MB`` / ``GB`` (``B`` under 1 KiB), the qualified path (``file:/...`` for local paths); largest first
  (``sort``) or most files first. Storage here has no quotas: ``quota`` and ``space_quota`` are -1 and
  ``space_consumed`` is the length (Hadoop's local file system), each in its own column; Hudi swaps the
  values of ``space_consumed`` and ``quota``, which we do not copy.

Different on purpose: a partition folder that does not exist, a partition given for a non-partitioned table
and an empty ``file`` are errors naming the argument (Hudi fails with a Java exception or matches any
deleted file); ``show_fs_path_detail`` on a path without glob characters that does not exist is an error
naming it (Hudi fails with a NullPointerException), a glob matching nothing gives no rows.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterable
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import numpy as np
from pyspark.sql import DataFrame

from engine.errors import EngineError, StorageError
from engine.services.archive import read_archived
from engine.storage import Storage
from engine.table import Table
from engine.timeline.avro_serde import deserialize
from engine.timeline.instant import CLEAN, RESTORE, ROLLBACK, State
from sqlext.errors import ProcedureError
from sqlext.procedures.commits import bool_arg, check_filter, int_arg, rows_frame, text_arg
from sqlext.procedures.compaction import resolve_table
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

logger = logging.getLogger(__name__)

FILE_STATUS_OUTPUT = "status string, action string, instant string, timeline string, full_path string"
"""``show_file_status`` (Hudi ``ShowFileStatusProcedure.OUTPUT_TYPE``)."""

PATH_DETAIL_OUTPUT = ("path_num long, file_num long, storage_size long, `storage_size(unit)` string, "
                      "storage_path string, space_consumed long, quota long, space_quota long")
"""``show_fs_path_detail`` (Hudi ``ShowFsPathDetailProcedure.OUTPUT_TYPE``)."""

DELETED, EXIST, UNKNOWN = "deleted", "exist", "unknown"
"""Hudi's ``FileStatus`` values."""
ACTIVE, ARCHIVED = "active", "archived"
"""Hudi's ``TimelineType`` values."""

_METADATA_RECORD = {CLEAN: ("HoodieCleanMetadata", "hoodieCleanMetadata"),
                    ROLLBACK: ("HoodieRollbackMetadata", "hoodieRollbackMetadata")}
"""Action → (Avro schema of its completed file, field of the archived entry holding it)."""


# ---------------------------------------------------------------------------------------------- globbing


def _expand_braces(pattern: str) -> list[str]:
    """Hadoop glob alternation: ``a{b,c}d`` → ``abd``, ``acd`` (nested groups too; an unclosed ``{`` is
    literal)."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, parts, current = 0, [], ""
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
            if depth == 1:
                continue
        elif char == "}":
            depth -= 1
            if depth == 0:
                parts.append(current)
                rest = pattern[index + 1:]
                return [expanded for part in parts for expanded in _expand_braces(pattern[:start] + part + rest)]
        elif char == "," and depth == 1:
            parts.append(current)
            current = ""
            continue
        current += char
    return [pattern]


def _is_glob(component: str) -> bool:
    return any(c in component for c in "*?[")


def _root_and_parts(pattern: str) -> tuple[str, list[str]]:
    """(root, path components) of an absolute pattern: ``("/", [...])`` locally, ``("s3://bucket", [...])``."""
    if pattern.startswith("file:"):
        pattern = "/" + pattern[len("file:"):].lstrip("/")
    if "://" in pattern:
        scheme, rest = pattern.split("://", 1)
        authority, _, path = rest.partition("/")
        return f"{scheme}://{authority}", [p for p in path.split("/") if p]
    return "/", [p for p in pattern.split("/") if p]


def local_absolute(path: str) -> str:
    """``path`` made absolute when it is a local relative path (Hadoop resolves those against the working
    directory); URIs and absolute paths unchanged."""
    if "://" in path or path.startswith("file:") or path.startswith("/"):
        return path
    return os.path.abspath(path)


def glob_paths(storage: Storage, pattern: str) -> list[str]:
    """The existing paths an absolute Hadoop glob matches (``*``, ``?``, ``[abc]``, ``[^a]``, ``{a,b}``),
    sorted, in the form of the pattern's root (plain paths locally). A pattern without glob characters
    gives itself when it exists.

    Raises:
        StorageError: a folder could not be listed.
    """
    found: set[str] = set()
    for expanded in _expand_braces(pattern):
        root, parts = _root_and_parts(expanded)
        current = [root]
        for part in parts:
            following: list[str] = []
            for base in current:
                if not _is_glob(part):
                    following.append(storage.join(base, part))
                    continue
                if not storage.is_dir(base):
                    continue
                wanted = part.replace("[^", "[!")
                following.extend(storage.join(base, info.name) for info in storage.list_dir(base)
                                 if fnmatch.fnmatchcase(info.name, wanted))
            current = following
        found.update(p for p in current if storage.exists(p))
    return sorted(found)


# ---------------------------------------------------------------------------------------------- show_file_status


def _deleted_in(metadata: dict[str, Any] | None, partition: str, file_name: str) -> bool:
    """Hudi's test: the partition's ``successDeleteFiles`` contain the name, or any partition's do."""
    partitions = (metadata or {}).get("partitionMetadata") or {}
    first = [partitions[partition]] if partition in partitions else []
    return any(file_name in str(deleted) for detail in [*first, *partitions.values()]
               for deleted in (detail or {}).get("successDeleteFiles") or [])


def _active_metadata(table: Table, action: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """(instant time, metadata) of the completed ``action`` instants of the active timeline, newest first
    (unreadable files are skipped, as Hudi's timeline skips them)."""
    schema = _METADATA_RECORD[action][0] if action != RESTORE else "HoodieRestoreMetadata"
    for instant in sorted(table.timeline.of_actions([action]), key=lambda i: i.timestamp, reverse=True):
        if instant.state is not State.COMPLETED:
            continue
        try:
            yield instant.timestamp, deserialize(table.timeline.read_details(instant), schema,
                                                 source=instant.file_name)
        except EngineError as exc:
            logger.warning("show_file_status: skipping unreadable %s: %s", instant.file_name, exc)


def _archived_metadata(entries: list[dict[str, Any]], action: str) -> list[tuple[str, dict[str, Any]]]:
    """(instant time, metadata) of the completed ``action`` instants of the archived timeline, newest first."""
    field = _METADATA_RECORD[action][1]
    found = [(str(e.get("commitTime")), e.get(field)) for e in entries
             if e.get("actionType") == action and e.get("actionState") == State.COMPLETED.name and e.get(field)]
    return sorted(((t, dict(m)) for t, m in found if m is not None), key=lambda item: item[0], reverse=True)


def _deleted_by(display: str, table: Table, partition: str, file_name: str) -> tuple[str, str, str] | None:
    """(action, instant time, timeline) of the clean, rollback or restore that deleted the file, or None."""
    archived: list[dict[str, Any]] | None = None
    for action in (CLEAN, ROLLBACK):
        for instant_time, metadata in _active_metadata(table, action):
            if _deleted_in(metadata, partition, file_name):
                return action, instant_time, ACTIVE
        if archived is None:
            try:
                archived = read_archived(table)
            except EngineError as exc:
                raise ProcedureError(f"show_file_status on {display}: cannot read the archived timeline: "
                                     f"{exc}") from exc
        for instant_time, metadata in _archived_metadata(archived, action):
            if _deleted_in(metadata, partition, file_name):
                return action, instant_time, ARCHIVED
    for instant_time, restore in _active_metadata(table, RESTORE):
        for rollbacks in (restore.get("hoodieRestoreMetadata") or {}).values():
            if any(_deleted_in(m, partition, file_name) for m in rollbacks or []):
                return RESTORE, instant_time, ACTIVE
    return None


def _uri_path(path: str) -> str:
    """Hadoop ``Path.toUri.getPath``: the path without scheme and authority."""
    if "://" in path:
        return urlparse(path).path
    return path[len("file:"):] if path.startswith("file:") else path


def show_file_status(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_file_status(table, partition, file)``: one row saying whether the data file exists or
    which clean, rollback or restore deleted it (module docstring).

    Raises:
        ProcedureError: no table, no or an empty ``file``, ``partition`` missing on a partitioned table or
            given for a non-partitioned one, a partition folder that does not exist, an invalid filter.
    """
    procedure = "show_file_status"
    text = text_arg(args, "filter")
    check_filter(ctx, procedure, FILE_STATUS_OUTPUT, text)
    display, table = resolve_table(ctx, args.get("table"), args.get("path"), procedure)
    file_name = text_arg(args, "file")
    if not file_name:
        raise ProcedureError(f"{procedure} on {display}: file must name a data file (got {args.get('file')!r})")
    partition = text_arg(args, "partition").strip("/")
    if not partition and table.is_partitioned:
        raise ProcedureError(f"{procedure}: table {display} is a partitioned table. Please specify the partition "
                             "name where the current file is located.")
    if partition and not table.is_partitioned:
        raise ProcedureError(f"{procedure}: table {display} is not partitioned; give no partition "
                             f"(got {partition!r})")
    table.timeline.reload()
    deleted = _deleted_by(display, table, partition, file_name)
    if deleted is not None:
        row: tuple[str, ...] = (DELETED, deleted[0], deleted[1], deleted[2], "")
    else:
        folder = table.storage.join(table.base_path, partition) if partition else table.base_path
        if not table.storage.is_dir(folder):
            raise ProcedureError(f"{procedure} on {display}: partition {partition!r} does not exist (no folder "
                                 f"{folder}) and no clean, rollback or restore deleted {file_name}")
        match = [info for info in table.storage.list_dir(folder) if info.name == file_name]
        row = ((EXIST, "", "", ACTIVE, _uri_path(match[0].path)) if match else (UNKNOWN, "", "", "", ""))
    return rows_frame(ctx, procedure, [row], FILE_STATUS_OUTPUT, 1, text)


# ---------------------------------------------------------------------------------------------- show_fs_path_detail


def _content_summary(storage: Storage, path: str) -> tuple[int, int, int]:
    """Hadoop ``FileSystem.getContentSummary``: (directories, the path itself included; files; bytes)."""
    if not storage.is_dir(path):
        return 0, 1, storage.size(path)
    directories, files, length = 1, 0, 0
    pending = [path]
    while pending:
        for info in storage.list_dir(pending.pop()):
            if info.is_dir:
                directories += 1
                pending.append(info.path)
            else:
                files += 1
                length += info.size
    return directories, files, length


def size_with_unit(size: int) -> str:
    """Hudi ``ShowFsPathDetailProcedure.getFileSize``: ``DecimalFormat("0.00")`` of the size divided (as a Java
    float) by the largest of GiB, MiB, KiB it reaches, with the unit; plain bytes below 1 KiB."""
    for unit, name in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if size // unit >= 1:
            value = float(np.float32(size) / np.float32(unit))
            return f"{Decimal(repr(value)).quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN)}{name}"
    return f"{size}B"


def _qualified(path: str) -> str:
    """Hadoop's qualified path text: ``file:/abs`` for local paths, URIs unchanged."""
    if "://" in path and not path.startswith("file://"):
        return path
    return "file:" + _uri_path(path)


def show_fs_path_detail(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """``CALL show_fs_path_detail(path, is_sub, sort, limit)``: the content summary of each matched path
    (module docstring).

    Raises:
        ProcedureError: no path; a path without glob characters that does not exist; ``is_sub`` on a path that
            is not a folder; bad ``is_sub``/``sort``/``limit``; the storage cannot be read.
    """
    procedure = "show_fs_path_detail"
    source = text_arg(args, "path")
    if not source:
        raise ProcedureError(f"procedure {procedure}: path is required (a folder, a file or a glob)")
    is_sub = bool_arg(args, "is_sub", procedure)
    sort = bool_arg({"sort": True if args.get("sort") is None else args.get("sort")}, "sort", procedure)
    limit = int_arg({"limit": 100 if args.get("limit") is None else args.get("limit")}, "limit", procedure)
    pattern = local_absolute(source)
    try:
        storage = Storage.for_uri(_root_and_parts(pattern)[0] if "://" in pattern else "/")
        if is_sub:
            if not storage.is_dir(pattern):
                raise ProcedureError(f"procedure {procedure}: is_sub => true needs a folder; {source} is not one")
            paths = [info.path for info in storage.list_dir(pattern)]
        else:
            paths = glob_paths(storage, pattern)
            if not paths and not any(c in pattern for c in "*?[{"):
                raise ProcedureError(f"procedure {procedure}: path {source} does not exist")
        rows = []
        for path in paths:
            directories, files, length = _content_summary(storage, path)
            rows.append((directories, files, length, size_with_unit(length), _qualified(path), length, -1, -1))
    except StorageError as exc:
        raise ProcedureError(f"procedure {procedure}: cannot read {source}: {exc}") from exc
    rows.sort(key=lambda r: r[2] if sort else r[1], reverse=True)
    return ctx.spark.createDataFrame(rows[:limit], PATH_DETAIL_OUTPUT)


register(Procedure("show_file_status", (
    Param("table", "string", doc="the table ([db.]name); or give path"),
    Param("partition", "string", doc="the partition path of the file (required on a partitioned table)"),
    Param("file", "string", required=True, doc="the data file's name"),
    Param("filter", "string", "", doc="a Spark SQL predicate over the output columns"),
    Param("path", "string", doc="the table's base path; or give table"),
), FILE_STATUS_OUTPUT, show_file_status,
    "whether a data file exists, or which clean, rollback or restore deleted it"))
register(Procedure("show_fs_path_detail", (
    Param("path", "string", required=True, doc="a folder, a file or a glob ('/data/t/dt=*')"),
    Param("is_sub", "boolean", False, doc="summarize each entry of the folder path instead"),
    Param("sort", "boolean", True, doc="largest first (false: most files first)"),
    Param("limit", "int", 100, doc="at most this many rows"),
), PATH_DETAIL_OUTPUT, show_fs_path_detail, "folders, files and bytes below paths"))
