"""Archival of the active timeline (Hudi ``HoodieTimelineArchiver``): old instants move from
``.hoodie`` into ``.hoodie/archived/.commits_.archive.<N>_1-0-1`` so listing the timeline stays cheap.

* **What** (:func:`instants_to_archive`): when more than ``hoodie.keep.max.commits`` (30) completed commits are
  on the active timeline, the oldest go until ``hoodie.keep.min.commits`` (20) remain — never the earliest
  pending write or anything after it, nothing from the first savepoint on (unless
  ``hoodie.archive.beyond.savepoint``, which still keeps savepointed commits), nothing the cleaner has not
  cleaned yet (at or after the last clean's earliest retained commit), on merge-on-read with inline
  compaction nothing from the last compaction on, and no replacecommit whose replaced files are still on
  disk (readers would see them again). Completed cleans and rollbacks beyond ``keep.max.commits`` go down to
  ``keep.min.commits`` too. Every state file of an archived instant goes (requested, inflight, completed).
* **How** (:func:`archive`): one new archive log file version per run (the store has no append), Avro data
  blocks of ``hoodie.commits.archival.batch`` ``HoodieArchivedMetaEntry`` records (one per state file, with
  the plan or metadata it held, as Hudi's ``MetadataConversionUtils`` converts them), written before
  anything is deleted; then the pending state files are deleted before the completed ones, so a crash
  midway never leaves a completed instant without its history.
* **Merging** (``hoodie.archive.merge.enable``, :func:`merge_small_archive_files`): after archiving, the newest
  run of archive files under ``hoodie.archive.merge.small.file.limit.bytes`` becomes one file once it is
  ``hoodie.archive.merge.files.batch.size`` files long, behind a ``mergeArchivePlan`` that
  :func:`recover_archive_merge` uses to finish or undo a merge that stopped half-way.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any

from engine.concurrency.transaction import TransactionManager
from engine.config import ArchiveConfig, CleanConfig, CompactionConfig, HoodieConfig
from engine.errors import ConfigError, CorruptFile, EngineError
from engine.filegroup.naming import parse_log_file_name
from engine.formats.log_format import AvroDataBlock, HeaderKey, LogWriter, read_log_blocks
from engine.metadata.disable import refuse_metadata_table
from engine.storage import FileInfo
from engine.table import Table
from engine.timeline import avro_serde
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    COMPLETED_ACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
    instant_time_of_millis,
)

logger = logging.getLogger(__name__)

ARCHIVE_FILE_ID = "commits"
ARCHIVE_TOKEN = "1-0-1"
_I32 = struct.Struct(">i")
_ROLLING_STAT_KEY = "ROLLING_STAT_METADATA"


@dataclass(frozen=True)
class ArchiveResult:
    """One archival run.

    Attributes:
        instants: (timestamp, action) of the instants archived, oldest first.
        archive_file: the archive log file written, or "" when nothing was archived.
        reason: why nothing was archived, or "".
    """

    instants: tuple[tuple[str, str], ...]
    archive_file: str
    reason: str = ""


def check_archive_config(conf: HoodieConfig, table: str) -> None:
    """Hudi's checks on the archival settings (``HoodieWriteConfig.validate``).

    Raises:
        ConfigError: min ≥ max, or min not above the cleaner's retained commits.
    """
    low, high = conf.get(ArchiveConfig.MIN_COMMITS), conf.get(ArchiveConfig.MAX_COMMITS)
    if low >= high:
        raise ConfigError(f"Increase {ArchiveConfig.MAX_COMMITS.key}={high} to be greater than "
                          f"{ArchiveConfig.MIN_COMMITS.key}={low} (table {table})")
    retained = conf.get(CleanConfig.COMMITS_RETAINED)
    if low <= retained:
        raise ConfigError(f"Increase {ArchiveConfig.MIN_COMMITS.key}={low} to be greater than "
                          f"{CleanConfig.COMMITS_RETAINED.key}={retained}. Otherwise, there is risk of incremental "
                          f"pull missing data from few instants (table {table}).")


def _comparable(action: str) -> str:
    return COMPLETED_ACTION.get(action, action)


def _last_clean_retained(table: Table) -> str | None:
    cleans = [i for i in table.timeline.cleans() if i.state is State.COMPLETED]
    if not cleans:
        return None
    metadata = avro_serde.deserialize(table.timeline.read_details(cleans[-1]), "HoodieCleanMetadata",
                                      source=cleans[-1].file_name)
    return str(metadata.get("earliestCommitToRetain") or "") or None


def _replaced_files_remain(table: Table, instant: Instant) -> bool:
    replaced = table.commit_metadata(instant).replaced_file_ids()
    if not replaced:
        return False
    storage = table.storage
    for partition, file_ids in replaced.items():
        folder = storage.join(table.base_path, partition) if partition else table.base_path
        wanted = set(file_ids)
        for info in storage.list_dir(folder):
            name = info.name
            parsed = parse_log_file_name(name)
            file_id = parsed.file_id if parsed is not None else name.split("_", 1)[0]
            if file_id in wanted:
                return True
    return False


def instants_to_archive(table: Table, conf: HoodieConfig) -> tuple[list[Instant], str]:
    """The instants (completed ones; their pending files follow) to archive now, oldest first, and when there
    are none, why."""
    timeline = table.timeline.reload()
    low, high = conf.get(ArchiveConfig.MIN_COMMITS), conf.get(ArchiveConfig.MAX_COMMITS)
    chosen: list[Instant] = []
    for action in (CLEAN, ROLLBACK):
        done = [i for i in timeline.of_actions([action]) if i.is_completed]
        if len(done) > high:
            chosen += done[: len(done) - low]
    commits = timeline.completed_commits()
    reason = ""
    if len(commits) <= high:
        reason = (f"{len(commits)} completed commit(s) on the active timeline, not more than "
                  f"{ArchiveConfig.MAX_COMMITS.key}={high}")
    else:
        bound: str | None = None
        pending = [i for i in timeline if i.is_pending and i.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT,
                                                                           COMPACTION, LOG_COMPACTION)]
        if pending:
            bound = pending[0].timestamp
        savepoints = [i.timestamp for i in timeline.savepoints()]
        beyond = conf.get(ArchiveConfig.BEYOND_SAVEPOINT)
        if savepoints and not beyond:
            bound = min(filter(None, [bound, savepoints[0]]))
        retained = _last_clean_retained(table)
        if retained:
            bound = min(filter(None, [bound, retained]))
        if table.is_mor and conf.get(CompactionConfig.INLINE):
            compactions = [i.timestamp for i in commits if i.action == COMMIT and table.commit_metadata(i).compacted]
            keep_from = compactions[-1] if compactions else next(
                (i.timestamp for i in commits if i.action == DELTA_COMMIT), None)
            if keep_from:
                bound = min(filter(None, [bound, keep_from]))
        eligible = []
        for instant in commits[: len(commits) - low]:
            if bound is not None and instant.timestamp >= bound:
                break
            if instant.timestamp in savepoints:
                continue
            if instant.action == REPLACE_COMMIT and _replaced_files_remain(table, instant):
                break  # keep it and everything after it: no holes in the timeline
            eligible.append(instant)
        chosen += eligible
        if not eligible:
            reason = "every commit beyond the minimum is pending, savepointed, not cleaned yet or still needed"
    chosen.sort(key=lambda i: (i.timestamp, i.action))
    return chosen, reason if not chosen else ""


def _state_time(table: Table, instant: Instant, mtimes: dict[str, int]) -> str | None:
    millis = mtimes.get(instant.file_name)
    return instant_time_of_millis(millis, table.timeline_timezone.upper() == "UTC") if millis else None


def _commit_avro(metadata: CommitMetadata, replace: bool) -> dict[str, Any]:
    data = metadata.to_dict()
    extra = dict(data.get("extraMetadata") or {})
    extra[_ROLLING_STAT_KEY] = ""
    out: dict[str, Any] = {
        "partitionToWriteStats": data.get("partitionToWriteStats") or {},
        "extraMetadata": extra,
        "version": 1,
        "operationType": "COMPACT" if metadata.compacted else data.get("operationType"),
    }
    if replace:
        out["partitionToReplaceFileIds"] = data.get("partitionToReplaceFileIds") or {}
        out["compacted"] = bool(data.get("compacted"))
    return out


def meta_entry(table: Table, instant: Instant, state_time: str | None) -> dict[str, Any]:
    """The ``HoodieArchivedMetaEntry`` of one state file (Hudi ``MetadataConversionUtils.createMetaWrapper``)."""
    entry: dict[str, Any] = {"commitTime": instant.timestamp, "actionState": instant.state.name,
                             "stateTransitionTime": state_time, "version": 1}
    content = table.timeline.read_details(instant)
    action = instant.action
    if action == CLEAN:
        if instant.is_completed:
            entry["hoodieCleanMetadata"] = avro_serde.deserialize(content, "HoodieCleanMetadata")
        elif content:
            entry["hoodieCleanerPlan"] = avro_serde.deserialize(content, "HoodieCleanerPlan")
        entry["actionType"] = "clean"
    elif action in (COMMIT, DELTA_COMMIT):
        if content:
            try:
                entry["hoodieCommitMetadata"] = _commit_avro(CommitMetadata.from_json(content), False)
            except CorruptFile:
                pass
        entry["actionType"] = action
    elif action == REPLACE_COMMIT:
        if instant.is_completed:
            entry["hoodieReplaceCommitMetadata"] = _commit_avro(CommitMetadata.from_json(content), True)
        elif instant.is_inflight and content:
            entry["HoodieInflightReplaceMetadata"] = _commit_avro(CommitMetadata.from_json(content), False)
        elif content:
            entry["hoodieRequestedReplaceMetadata"] = avro_serde.deserialize(content, "HoodieRequestedReplaceMetadata")
        entry["actionType"] = "replacecommit"
    elif action == ROLLBACK:
        if instant.is_completed:
            entry["hoodieRollbackMetadata"] = avro_serde.deserialize(content, "HoodieRollbackMetadata")
        entry["actionType"] = "rollback"
    elif action == SAVEPOINT:
        entry["hoodieSavePointMetadata"] = avro_serde.deserialize(content, "HoodieSavepointMetadata")
        entry["actionType"] = "savepoint"
    elif action in (COMPACTION, LOG_COMPACTION):
        if instant.state is State.REQUESTED and content:
            entry["hoodieCompactionPlan"] = avro_serde.deserialize(content, "HoodieCompactionPlan")
        entry["actionType"] = action
    return entry


def _next_archive_version(table: Table) -> int:
    highest = 0
    for info in table.storage.list_dir(table.archive_path):
        parsed = parse_log_file_name(info.name)
        if parsed is not None and parsed.extension == "archive":
            highest = max(highest, parsed.version)
    return highest + 1


def archive(table: Table, conf: HoodieConfig) -> ArchiveResult:
    """Archive what :func:`instants_to_archive` picks (module docstring); under optimistic concurrency control
    while holding the table lock (Hudi ``HoodieTimelineArchiver.archiveIfRequired``).

    Raises:
        UnsupportedTable: a Hudi 1.x table (read only; :meth:`Table.check_writable`).
        ConfigError: bad archival settings.
        StorageError: the archive file cannot be written (nothing is deleted then) or a timeline file deleted.
    """
    table.check_writable()
    check_archive_config(conf, table.base_path)
    refuse_metadata_table(conf, table)
    with TransactionManager(table, conf).transaction("archive"):
        return _archive(table.reload(), conf)


def _archive(table: Table, conf: HoodieConfig) -> ArchiveResult:
    merging = conf.get(ArchiveConfig.MERGE_ENABLE)
    if merging:
        recover_archive_merge(table)
    chosen, reason = instants_to_archive(table, conf)
    if not chosen:
        if merging:
            merge_small_archive_files(table, conf)
        return ArchiveResult((), "", reason)
    table.before_change()  # a metadata table goes before the active timeline does
    timeline = table.timeline
    wanted = {(i.timestamp, _comparable(i.action)) for i in chosen}
    files = [f for ts in sorted({i.timestamp for i in chosen}) for f in timeline.instant_files(ts)
             if (f.timestamp, _comparable(f.action)) in wanted]
    files.sort(key=lambda i: (i.timestamp, i.state.rank))
    mtimes = {info.name: info.mtime_ms for info in table.storage.list_dir(table.meta_path)}
    schema_json = avro_serde.schema_json("HoodieArchivedMetaEntry")
    batch = max(1, conf.get(ArchiveConfig.BATCH))
    blocks = []
    for start in range(0, len(files), batch):
        encoded = [avro_serde.encode_datum("HoodieArchivedMetaEntry", meta_entry(table, i, _state_time(table, i, mtimes)))
                   for i in files[start:start + batch]]
        content = _I32.pack(3) + _I32.pack(len(encoded)) + b"".join(_I32.pack(len(e)) + e for e in encoded)
        blocks.append(AvroDataBlock(header={HeaderKey.SCHEMA: schema_json}, content=content))
    table.storage.makedirs(table.archive_path)
    name = f".{ARCHIVE_FILE_ID}_.archive.{_next_archive_version(table)}_{ARCHIVE_TOKEN}"
    path = table.storage.join(table.archive_path, name)
    with LogWriter(table.storage, path) as writer:
        writer.append_blocks(blocks)
    for instant in sorted(files, key=lambda i: i.state.rank):  # requested, inflight, then completed
        table.storage.delete(table.storage.join(table.meta_path, instant.file_name))
    timeline.reload()
    archived = tuple(sorted({(i.timestamp, i.action) for i in chosen}))
    logger.info("%s: archived %d instant(s) (%d timeline files) into %s", table.base_path, len(archived),
                len(files), name)
    if merging:
        merge_small_archive_files(table, conf)
    return ArchiveResult(archived, path)


MERGE_PLAN_NAME = "mergeArchivePlan"
"""``.hoodie/archived/mergeArchivePlan``: the plan of a merge of small archive files in progress."""


def _archive_files(table: Table) -> list[tuple[int, FileInfo]]:
    """``(version, file)`` of every archive file, newest first."""
    found = []
    for info in table.storage.list_dir(table.archive_path):
        parsed = parse_log_file_name(info.name)
        if parsed is not None and parsed.extension == "archive":
            found.append((parsed.version, info))
    return sorted(found, key=lambda item: -item[0])


def merge_small_archive_files(table: Table, conf: HoodieConfig) -> str | None:
    """Merge the newest run of small archive files into one (Hudi ``HoodieTimelineArchiver
    .mergeArchiveFilesIfNecessary``): archive files newer than the newest file over
    ``hoodie.archive.merge.small.file.limit.bytes``, once there are ``hoodie.archive.merge.files.batch.size`` of
    them. First ``mergeArchivePlan`` (Avro ``HoodieMergeArchiveFilePlan``: the candidates' paths and the merged
    file's name, the next version), then the merged file (the candidates' entries in order, in blocks of
    ``hoodie.commits.archival.batch``), then the candidates are deleted, then the plan.

    Returns:
        The merged file's path, or None when there was nothing to merge.

    Raises:
        StorageError: a file cannot be written or deleted (:func:`recover_archive_merge` finishes or undoes it).
    """
    if not table.storage.exists(table.archive_path):
        return None
    files = _archive_files(table)
    limit = conf.get(ArchiveConfig.MERGE_SMALL_FILE_LIMIT)
    candidates = []
    for _, info in files:
        if info.size > limit:
            break
        candidates.append(info)
    if len(candidates) < max(1, conf.get(ArchiveConfig.MERGE_FILES_BATCH_SIZE)) or not candidates:
        return None
    name = f".{ARCHIVE_FILE_ID}_.archive.{files[0][0] + 1}_{ARCHIVE_TOKEN}"
    storage = table.storage
    plan = avro_serde.serialize("HoodieMergeArchiveFilePlan", {
        "version": 1, "candidate": [c.path for c in candidates], "mergedArchiveFileName": name})
    storage.write_atomic(storage.join(table.archive_path, MERGE_PLAN_NAME), plan)
    oldest_first = list(reversed(candidates))
    records = [record for info in oldest_first for record in _archive_records(table, info.path)]
    schema_json = avro_serde.schema_json("HoodieArchivedMetaEntry")
    batch = max(1, conf.get(ArchiveConfig.BATCH))
    blocks = []
    for start in range(0, len(records), batch):
        encoded = [avro_serde.encode_datum("HoodieArchivedMetaEntry", r) for r in records[start:start + batch]]
        content = _I32.pack(3) + _I32.pack(len(encoded)) + b"".join(_I32.pack(len(e)) + e for e in encoded)
        blocks.append(AvroDataBlock(header={HeaderKey.SCHEMA: schema_json}, content=content))
    path = storage.join(table.archive_path, name)
    with LogWriter(storage, path) as writer:
        writer.append_blocks(blocks)
    for info in candidates:
        storage.delete(info.path)
    storage.delete(storage.join(table.archive_path, MERGE_PLAN_NAME))
    logger.info("%s: merged %d small archive files (%d entries) into %s", table.base_path, len(candidates),
                len(records), name)
    return path


def recover_archive_merge(table: Table) -> None:
    """Finish or undo a merge of archive files that stopped half-way (Hudi
    ``verifyLastMergeArchiveFilesIfNecessary``): with every candidate still present the merged file (if any) is
    deleted; otherwise the merged file is complete and the remaining candidates are deleted. The plan goes last;
    an unreadable plan (the crash came while writing it) is just deleted."""
    storage = table.storage
    plan_path = storage.join(table.archive_path, MERGE_PLAN_NAME)
    if not storage.exists(plan_path):
        return
    try:
        plan = avro_serde.deserialize(storage.read_bytes(plan_path), "HoodieMergeArchiveFilePlan")
    except EngineError as exc:
        logger.warning("%s: unreadable archive merge plan deleted (%s)", table.base_path, exc)
        storage.delete(plan_path)
        return
    merged = storage.join(table.archive_path, plan.get("mergedArchiveFileName") or "")
    names = {p.rsplit("/", 1)[-1] for p in plan.get("candidate") or []}
    present = [info for _, info in _archive_files(table) if info.name in names]
    if len(present) == len(names):
        if plan.get("mergedArchiveFileName") and storage.exists(merged):
            storage.delete(merged)
        logger.warning("%s: undid an interrupted merge of archive files", table.base_path)
    elif storage.exists(merged):
        for info in present:
            storage.delete(info.path)
        logger.warning("%s: finished an interrupted merge of archive files", table.base_path)
    storage.delete(plan_path)


def _archive_records(table: Table, path: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for block in read_log_blocks(table.storage, path):
        if isinstance(block, AvroDataBlock):
            try:
                records.extend(block.records())
            except EngineError as exc:
                raise CorruptFile(f"archive file {path}: {exc}") from exc
    return records


def read_archived(table: Table) -> list[dict[str, Any]]:
    """Every ``HoodieArchivedMetaEntry`` in the table's archive files, in file order.

    Raises:
        CorruptFile: an undecodable archive block.
    """
    entries: list[dict[str, Any]] = []
    for _, info in reversed(_archive_files(table)):
        entries.extend(_archive_records(table, info.path))
    return entries


def archived_commits(table: Table) -> list[tuple[str, str, CommitMetadata, str | None]]:
    """Completed commits in the archive: ``(commit time, action, metadata, state transition time)``, oldest first.

    Raises:
        CorruptFile: an undecodable archive block.
    """
    out = []
    for entry in read_archived(table):
        if entry.get("actionState") != State.COMPLETED.name:
            continue
        action = entry.get("actionType") or ""
        record = entry.get("hoodieReplaceCommitMetadata") if action == REPLACE_COMMIT else \
            entry.get("hoodieCommitMetadata")
        if action not in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT) or record is None:
            continue
        data = dict(record)
        extra = {k: v for k, v in (data.get("extraMetadata") or {}).items() if k != _ROLLING_STAT_KEY}
        data["extraMetadata"] = extra
        out.append((str(entry.get("commitTime")), action, CommitMetadata.from_dict(data),
                    entry.get("stateTransitionTime")))
    out.sort(key=lambda item: item[0])
    return out


__all__ = ["ArchiveResult", "archived_commits", "archive", "check_archive_config", "instants_to_archive", "meta_entry",
           "read_archived"]
