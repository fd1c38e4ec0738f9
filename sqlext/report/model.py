"""What ``sqlext report`` shows, read from a table's storage with the engine (no Spark): the timeline
(active and archived instants, classified by what they did; :mod:`sqlext.report.instants`), the latest base
files against the file-size limits, the log files of every latest file slice, and the pending and recent
table services.

:func:`collect` never fails because one instant file or plan cannot be read: it logs the problem, notes it
in :attr:`TableReport.warnings` and goes on, so the page still shows the rest of the table.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.config import ClusteringConfig, ConfigProperty, HoodieConfig, TableConfig, WriteConfig
from engine.errors import EngineError
from engine.services.compaction import compaction_triggered, plan_operations, why_nothing_to_schedule
from engine.table import Table
from engine.timeline.instant import State, comparable_action
from sqlext.report.data import (
    CLUSTERING,
    KIND_LABELS,
    KIND_ORDER,
    MAX_ARCHIVED,
    OVERWRITE,
    SERVICE_KINDS,
    BaseFileEntry,
    Limit,
    ServiceEntry,
    SliceEntry,
    TableReport,
    TimelineEntry,
    instant_moment,
)
from sqlext.report.instants import Reader, archived_entries, completed_file_times, describe, plural

__all__ = ["CLUSTERING", "KIND_LABELS", "KIND_ORDER", "MAX_ARCHIVED", "OVERWRITE", "SERVICE_KINDS", "BaseFileEntry",
           "Limit", "ServiceEntry", "SliceEntry", "TableReport", "TimelineEntry", "collect", "instant_moment"]


def _limits(table: Table, conf: HoodieConfig, overrides: Mapping[str, str]) -> list[Limit]:
    props: tuple[ConfigProperty[int], ...] = (WriteConfig.SMALL_FILE_LIMIT, ClusteringConfig.SMALL_FILE_LIMIT,
                                              WriteConfig.PARQUET_MAX_FILE_SIZE)
    out = []
    given = HoodieConfig(overrides)
    for prop in props:
        source = "--conf" if given.contains(prop) else "hoodie.properties" if table.config.contains(prop) \
            else "default"
        out.append(Limit(prop.key, conf.get(prop), source))
    return out


def collect(table: Table, overrides: Mapping[str, str] | None = None, *, recent: int = 10,
            archived: bool = True) -> TableReport:
    """Read what the report shows.

    Args:
        table: the table (its timeline is reloaded).
        overrides: ``hoodie.*`` settings on top of ``hoodie.properties`` (writer settings such as
            ``hoodie.parquet.small.file.limit`` live in the catalog's TBLPROPERTIES or the session, which
            a report without Spark does not see).
        recent: completed table services to list.
        archived: also read the archived timeline (the newest :data:`MAX_ARCHIVED` instants are drawn).

    Returns:
        the report data.

    Raises:
        ConfigError: a malformed value for one of the size limits.
        StorageError: the table's folders cannot be listed.
    """
    overrides = dict(overrides or {})
    conf = table.config.overlay(overrides)
    timeline = table.reload_timeline()
    report = TableReport(
        name=table.name, base_path=table.base_path, table_type=table.table_type,
        version=table.config.get(TableConfig.VERSION), record_key_fields=table.record_key_fields,
        precombine_field=table.precombine_field, partition_fields=table.partition_fields,
        keygen_class=table.keygen_class, base_file_format=table.base_file_format,
        timeline_timezone=table.timeline_timezone)
    report.limits = _limits(table, conf, overrides)
    reader = Reader(table, report.warnings)

    utc = report.timeline_timezone == "UTC"
    completed_files = completed_file_times(table)
    services: list[ServiceEntry] = []
    for instant in timeline.instants:
        ms = completed_files.get((instant.timestamp, comparable_action(instant.action)))
        entry, service = describe(reader, instant, ms, utc)
        report.timeline.append(entry)
        if service is not None:
            services.append(service)
    if archived:
        old, report.archived_total = archived_entries(reader, MAX_ARCHIVED)
        report.archived_shown = len(old)
        report.timeline = old + report.timeline
    report.pending = [s for s in services if s.state is not State.COMPLETED]
    report.recent = sorted((s for s in services if s.state is State.COMPLETED and s.kind in SERVICE_KINDS),
                           key=lambda s: s.timestamp, reverse=True)[:max(recent, 0)]
    _files(table, conf, report, reader)
    return report


def _files(table: Table, conf: HoodieConfig, report: TableReport, reader: Reader) -> None:
    """Fill the file counts, base files and file slices of ``report``."""
    view = table.file_system_view()
    report.partitions = view.partition_paths()
    in_compaction = view.pending_compaction_file_groups()
    in_clustering = view.file_groups_in_pending_clustering()

    def note(partition: str, file_id: str) -> str:
        if (partition, file_id) in in_compaction:
            return f"in pending compaction {in_compaction[(partition, file_id)]}"
        if (partition, file_id) in in_clustering:
            return f"in pending clustering {in_clustering[(partition, file_id)]}"
        return ""

    for partition in report.partitions:
        groups = view.file_groups(partition)
        report.file_groups += len(groups)
        replaced = view.replaced_file_groups(partition)
        report.replaced_file_groups += len(replaced)
        report.stored_bytes += sum(s.total_size for g in (*groups, *replaced) for s in g.slices)
        latest = view.latest_file_slices(partition)
        report.log_files += sum(len(s.log_files) for s in latest)
        report.latest_bytes += sum(s.total_size for s in latest)
        bases = view.latest_base_files(partition)
        report.base_files += len(bases)
        report.base_file_entries[partition] = [
            BaseFileEntry(partition, b.file_id, b.name, b.size, b.commit_time, note(partition, b.file_id))
            for b in bases]

    if not report.is_mor:
        return
    try:
        picked = {(op.partition_path, op.file_id) for op in plan_operations(table)}
        # why_nothing_to_schedule lists the table again when the trigger fires: only ask it when needed
        reason = why_nothing_to_schedule(table, conf) if not picked or not compaction_triggered(table, conf) \
            else None
        report.compaction_status = (
            f"a compaction scheduled now would take {plural(len(picked), 'file slice')}" if reason is None
            else f"no compaction would be scheduled now: {reason}")
    except EngineError as exc:
        reader.warn("cannot tell what compaction would pick", exc)
        picked = set()
    for partition in report.partitions:
        for fs in view.latest_file_slices(partition, merge_pending_compaction=False):
            key = (partition, fs.file_id)
            report.slices.append(SliceEntry(
                partition, fs.file_id, fs.base_instant, fs.base_file.size if fs.base_file else None,
                len(fs.log_files), sum(lf.size for lf in fs.log_files), key in picked,
                note(partition, fs.file_id) if fs.log_files and key not in picked else ""))
