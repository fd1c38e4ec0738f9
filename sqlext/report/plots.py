"""The charts of ``sqlext report`` as inline SVG with HTML legends: the timeline, base file sizes against the
file-size limits, and log files per file slice (bar chart and heat strip).

Each function returns an HTML fragment. Marks carry a ``class`` (``mark``, ``file``, ``slice``, ``cell``)
and ``data-*`` attributes, and a ``<title>`` the browser shows as a tooltip; every table-derived string is
escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.config import ClusteringConfig, WriteConfig
from engine.timeline.instant import State
from sqlext.report.charts import (
    ByteScale,
    LinearScale,
    TimeScale,
    byte_ticks,
    esc,
    fmt_bytes,
    fmt_count,
    fmt_duration,
    line,
    line_swatch,
    marker,
    rect,
    sequential_color,
    svg,
    swatch,
    text,
    truncate,
)
from sqlext.report.data import KIND_LABELS, KIND_ORDER, BaseFileEntry, SliceEntry, TableReport, TimelineEntry

WIDTH = 1000.0
LEFT = 220.0
RIGHT = 24.0

KIND_COLORS = {
    "commit": "#0072B2", "deltacommit": "#56B4E9", "compaction": "#009E73", "logcompaction": "#6FBF9F",
    "clustering": "#E69F00", "overwrite": "#D55E00", "clean": "#CC79A7", "rollback": "#333333",
    "savepoint": "#7B57B8", "restore": "#A50026", "indexing": "#7F7F7F", "schemacommit": "#A6A21C",
}
"""Colour of each kind of instant (Okabe-Ito based, distinguishable with colour-blindness)."""

STATE_STYLES = {
    State.COMPLETED: ("circle", False, None),
    State.INFLIGHT: ("triangle", False, None),
    State.REQUESTED: ("square", True, "2 1.5"),
}
"""State → (marker shape, hollow, stroke dash)."""

ARCHIVED_OPACITY = 0.4
SMALL_COLOR, NORMAL_COLOR, LARGE_COLOR = "#E69F00", "#0072B2", "#D55E00"
LIMIT_STYLES = {
    WriteConfig.SMALL_FILE_LIMIT.key: ("#E69F00", "6 3", "small-file limit (base files below it take inserts)"),
    ClusteringConfig.SMALL_FILE_LIMIT.key: ("#CC79A7", "2 3", "clustering small-file limit (candidates below it)"),
    WriteConfig.PARQUET_MAX_FILE_SIZE.key: ("#333333", None, "target base file size"),
}
MAX_STRIPS = 40
MAX_BARS = 30
MAX_CELLS = 3000


def kind_label(kind: str) -> str:
    """Display name of a kind of instant (``replacecommit (clustering)`` ...)."""
    return KIND_LABELS.get(kind, kind)


def _legend(items: Sequence[tuple[str, str]]) -> str:
    """An HTML legend: ``(swatch markup, escaped-later label)`` pairs."""
    return '<ul class="legend">' + "".join(f"<li>{mark}<span>{esc(label)}</span></li>"
                                           for mark, label in items) + "</ul>"


def _note(message: str) -> str:
    return f'<p class="empty">{esc(message)}</p>'


# ---------------------------------------------------------------------------------------------- timeline


def timeline_chart(report: TableReport) -> str:
    """The timeline: one row per kind of instant, x = instant time, colour = kind, shape = state, faded =
    archived; a thin bar from the instant time to the completed file's time shows how long it took.

    Returns:
        HTML (an SVG and its legend), or a note when no instant has a calendar time.
    """
    entries = [e for e in report.timeline if e.moment is not None]
    if not entries:
        return _note("The timeline has no instants yet.")
    kinds = [k for k in KIND_ORDER if any(e.kind == k for e in entries)]
    kinds += sorted({e.kind for e in entries} - set(kinds))
    row_h, top, bottom = 30.0, 30.0, 48.0
    height = top + row_h * len(kinds) + bottom
    moments = [e.moment for e in entries if e.moment is not None]
    moments += [e.completed_at for e in entries if e.completed_at is not None]
    scale = TimeScale.padded(moments, LEFT, WIDTH - RIGHT)
    parts: list[str] = []
    row_y = {kind: top + row_h * i + row_h / 2 for i, kind in enumerate(kinds)}
    for i in range(0, len(kinds), 2):
        parts.append(rect(LEFT, top + row_h * i, WIDTH - RIGHT - LEFT, row_h, fill="#f6f7f9"))
    archived = [e.moment for e in entries if e.archived and e.moment is not None]
    if archived:
        active = [e.moment for e in entries if not e.archived and e.moment is not None]
        x_end = (scale(max(archived)) + scale(min(active))) / 2 if active else scale.end
        parts.append(rect(LEFT, top - 6, x_end - LEFT, row_h * len(kinds) + 6, fill="#e9ebef", opacity=0.6,
                          cls="archived-band",
                          title=f"archived timeline: {report.archived_shown} of {report.archived_total} "
                                "archived instants drawn"))
        parts.append(text(LEFT + 4, top - 10, "archived", cls="band-label"))
    for moment, label in scale.ticks():
        x = scale(moment)
        parts.append(line(x, top, x, top + row_h * len(kinds), stroke="#d9dce1"))
        parts.append(text(x, height - bottom + 18, label, anchor="middle", cls="tick"))
    for kind in kinds:
        y = row_y[kind]
        count = sum(1 for e in entries if e.kind == kind)
        parts.append(marker("circle", 14, y, 10, fill=KIND_COLORS.get(kind, "#777"),
                            stroke=KIND_COLORS.get(kind, "#777")))
        parts.append(text(26, y + 4, f"{kind_label(kind)} ({fmt_count(count)})", cls="row-label"))
    for entry in entries:
        if entry.completed_at is not None and entry.moment is not None:
            x1, x2 = scale(entry.moment), scale(entry.completed_at)
            if x2 - x1 >= 1.5:
                took = fmt_duration((entry.completed_at - entry.moment).total_seconds())
                parts.append(line(x1, row_y[entry.kind], x2, row_y[entry.kind],
                                  stroke=KIND_COLORS.get(entry.kind, "#777"), width=4, opacity=0.35,
                                  cls="duration", title=f"{entry.timestamp}: completed after {took}"))
    busiest = max(sum(1 for e in entries if e.kind == kind) for kind in kinds)
    size = max(6.0, min(12.0, 1.6 * (WIDTH - RIGHT - LEFT) / busiest))  # smaller marks on a crowded row
    for entry in entries:
        parts.append(_timeline_mark(entry, scale(entry.moment) if entry.moment else 0.0, row_y[entry.kind], size))
    parts.append(line(LEFT, top + row_h * len(kinds), WIDTH - RIGHT, top + row_h * len(kinds), stroke="#8a8f98"))
    zone = "UTC" if report.timeline_timezone == "UTC" else "writer's local time"
    first, last = min(moments), max(moments)
    span = f"{first:%Y-%m-%d %H:%M:%S} – {last:%Y-%m-%d %H:%M:%S}"
    parts.append(text((LEFT + WIDTH - RIGHT) / 2, height - 8, f"instant time ({zone}): {span}",
                      anchor="middle", cls="axis-title"))
    chart = svg(WIDTH, height, "".join(parts), "timeline of instants by action and state", cls="chart timeline")
    legend = [(swatch(STATE_STYLES[s][0], "#555", "#555", hollow=STATE_STYLES[s][1], dash=STATE_STYLES[s][2]),
               s.name.lower()) for s in (State.COMPLETED, State.INFLIGHT, State.REQUESTED)]
    if archived:
        legend.append((swatch("circle", "#555", "#555", opacity=ARCHIVED_OPACITY), "archived (faded)"))
    legend.append((line_swatch("#888", None, 4), "instant time → completed file written"))
    return chart + _legend(legend)


def _timeline_mark(entry: TimelineEntry, x: float, y: float, size: float) -> str:
    shape, hollow, dash = STATE_STYLES[entry.state]
    color = KIND_COLORS.get(entry.kind, "#777")
    when = entry.moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if entry.moment else entry.timestamp
    lines = [f"{entry.timestamp} · {kind_label(entry.kind)} · {entry.state.name}"
             + (" · archived" if entry.archived else ""), when]
    if entry.completed_at is not None and entry.moment is not None:
        lines.append(f"completed after {fmt_duration((entry.completed_at - entry.moment).total_seconds())}")
    if entry.detail:
        lines.append(entry.detail)
    return marker(shape, x, y, size, fill=color, stroke=color, hollow=hollow, dash=dash,
                  opacity=ARCHIVED_OPACITY if entry.archived else 0.9, cls="mark", title="\n".join(lines),
                  data={"kind": entry.kind, "state": entry.state.name.lower(),
                        "archived": "true" if entry.archived else "false", "instant": entry.timestamp})


# ---------------------------------------------------------------------------------------------- file sizes


def _limit_values(report: TableReport) -> dict[str, int]:
    return {lim.key: lim.value for lim in report.limits}


def _file_color(size: int, limits: dict[str, int]) -> str:
    if size < limits.get(WriteConfig.SMALL_FILE_LIMIT.key, 0):
        return SMALL_COLOR
    max_size = limits.get(WriteConfig.PARQUET_MAX_FILE_SIZE.key, 0)
    if max_size and size > max_size:
        return LARGE_COLOR
    return NORMAL_COLOR


def _shown_partitions(report: TableReport) -> list[str]:
    with_files = [p for p in report.partitions if report.base_file_entries.get(p)]
    if len(with_files) <= MAX_STRIPS:
        return with_files
    busiest = sorted(with_files, key=lambda p: (-len(report.base_file_entries[p]), p))[:MAX_STRIPS]
    return sorted(busiest)


def file_size_chart(report: TableReport) -> str:
    """Latest base file sizes: a histogram over all partitions, then one strip of dots per partition (log
    scale of bytes), with vertical lines at the small-file limit, the clustering small-file limit and the
    target file size.

    Returns:
        HTML (an SVG and its legend), or a note when the table has no base files.
    """
    files: list[BaseFileEntry] = [f for p in report.partitions for f in report.base_file_entries.get(p, [])]
    if not files:
        return _note("No base files yet.")
    limits = _limit_values(report)
    shown = _shown_partitions(report)
    hist_h, top, strip_h, bottom = 110.0, 24.0, 24.0, 44.0
    strips_top = top + hist_h + 16
    height = strips_top + strip_h * len(shown) + bottom
    scale = ByteScale.covering([f.size for f in files] + [v for v in limits.values() if v > 0], LEFT, WIDTH - RIGHT)
    parts: list[str] = []
    ticks = scale.ticks()
    for tick in ticks:
        x = scale(tick)
        parts.append(line(x, top, x, height - bottom, stroke="#e3e5e9"))
        parts.append(text(x, height - bottom + 16, fmt_bytes(tick), anchor="middle", cls="tick"))
    # histogram: one bar per power-of-two bin
    bins: dict[int, int] = {}
    for f in files:
        exponent = max(int(max(f.size, 1)).bit_length() - 1, int(scale.lo).bit_length() - 1)
        bins[exponent] = bins.get(exponent, 0) + 1
    tallest = max(bins.values())
    count_scale = LinearScale(0, tallest, top + hist_h, top + 8)
    for exponent, count in sorted(bins.items()):
        x1, x2 = scale(2 ** exponent), scale(2 ** (exponent + 1))
        y = count_scale(count)
        parts.append(rect(x1 + 1, y, x2 - x1 - 2, top + hist_h - y, fill="#9fb7cf", cls="bin",
                          title=f"{fmt_count(count)} base files of {fmt_bytes(2 ** exponent)} to "
                                f"{fmt_bytes(2 ** (exponent + 1))}"))
        parts.append(text((x1 + x2) / 2, y - 3, fmt_count(count), anchor="middle", cls="bar-value"))
    parts.append(text(LEFT - 10, top + hist_h / 2, f"all partitions ({fmt_count(len(files))})", anchor="end",
                      cls="row-label"))
    parts.append(line(LEFT, top + hist_h, WIDTH - RIGHT, top + hist_h, stroke="#8a8f98"))
    for i, partition in enumerate(shown):
        y = strips_top + strip_h * i + strip_h / 2
        if i % 2 == 0:
            parts.append(rect(LEFT, y - strip_h / 2, WIDTH - RIGHT - LEFT, strip_h, fill="#f6f7f9"))
        entries = report.base_file_entries[partition]
        label = partition or "(non-partitioned)"
        parts.append(text(LEFT - 10, y + 4, f"{truncate(label, 28)} ({fmt_count(len(entries))})", anchor="end",
                          cls="row-label", title=label))
        for j, f in enumerate(sorted(entries, key=lambda e: (e.size, e.name))):
            jitter = ((j * 7) % 5 - 2) * 3.0
            color = _file_color(f.size, limits)
            tip = (f"{f.name}\n{partition or '(non-partitioned)'} · file group {f.file_id}\n"
                   f"{fmt_bytes(f.size)} ({fmt_count(f.size)} bytes) · written by {f.commit_time}"
                   + (f"\n{f.note}" if f.note else ""))
            parts.append(marker("circle", scale(f.size), y + jitter, 9, fill=color, stroke=color,
                                hollow=bool(f.note), opacity=0.8, cls="file", title=tip,
                                data={"partition": partition, "size": str(f.size)}))
    for key, value in limits.items():
        if value <= 0 or key not in LIMIT_STYLES:
            continue
        color, dash, meaning = LIMIT_STYLES[key]
        x = scale(value)
        parts.append(line(x, top - 4, x, height - bottom, stroke=color, width=2, dash=dash, cls="limit",
                          title=f"{key} = {fmt_bytes(value)} ({fmt_count(value)} bytes): {meaning}"))
    parts.append(text((LEFT + WIDTH - RIGHT) / 2, height - 8, "base file size (log scale)", anchor="middle",
                      cls="axis-title"))
    chart = svg(WIDTH, height, "".join(parts), "latest base file sizes per partition", cls="chart sizes")
    legend = []
    for lim in report.limits:
        if lim.key not in LIMIT_STYLES:
            continue
        color, dash, meaning = LIMIT_STYLES[lim.key]
        shown_value = fmt_bytes(lim.value) if lim.value > 0 else "0 (disabled)"
        legend.append((line_swatch(color, dash), f"{lim.key} = {shown_value} ({lim.source}): {meaning}"))
    legend += [(swatch("circle", SMALL_COLOR, SMALL_COLOR), "below the small-file limit"),
               (swatch("circle", NORMAL_COLOR, NORMAL_COLOR), "at or above it"),
               (swatch("circle", LARGE_COLOR, LARGE_COLOR), "above the target size"),
               (swatch("circle", "#555", "#555", hollow=True), "in a pending compaction or clustering")]
    note = ""
    hidden = len([p for p in report.partitions if report.base_file_entries.get(p)]) - len(shown)
    if hidden > 0:
        note = _note(f"{fmt_count(hidden)} more partitions are not drawn as strips (the {MAX_STRIPS} with the "
                     "most base files are); the histogram counts every partition.")
    return chart + _legend(legend) + note


# ---------------------------------------------------------------------------------------------- log files


def _slice_label(entry: SliceEntry, short: bool = False) -> str:
    """``partition / file id`` (``short``: the partition cut to 18 characters, the file id to its first 8)."""
    if short:
        return f"{truncate(entry.partition or '(root)', 18)} / {entry.file_id[:8]}"
    return f"{entry.partition or '(root)'} / {entry.file_id}"


def _slice_tip(entry: SliceEntry) -> str:
    base = fmt_bytes(entry.base_size) if entry.base_size is not None else "none"
    status = ("compaction would pick it" if entry.picked else entry.note or
              ("no log files" if not entry.log_count else "not picked"))
    return (f"{entry.partition or '(non-partitioned)'} · file group {entry.file_id}\n"
            f"base instant {entry.base_instant} · base file {base}\n"
            f"{fmt_count(entry.log_count)} log files · {fmt_bytes(entry.log_bytes)}\n{status}")


def _slice_color(entry: SliceEntry) -> str:
    if entry.picked:
        return "#009E73"
    if entry.note.startswith("in pending compaction"):
        return "#9aa0a8"
    if entry.note.startswith("in pending clustering"):
        return "#E69F00"
    return "#56B4E9"


def log_bar_chart(report: TableReport) -> str:
    """The file slices with the most log bytes as horizontal bars (length = log bytes, label = log file
    count), coloured by what compaction would do with them.

    Returns:
        HTML, or a note when no latest file slice has log files.
    """
    with_logs = sorted((s for s in report.slices if s.log_count), key=lambda s: (-s.log_bytes, s.partition, s.file_id))
    if not with_logs:
        return _note("No latest file slice has log files.")
    shown = with_logs[:MAX_BARS]
    bar_h, top, bottom = 22.0, 12.0, 40.0
    height = top + bar_h * len(shown) + bottom
    right_room = 150.0
    scale = LinearScale(0, max(s.log_bytes for s in shown), LEFT, WIDTH - RIGHT - right_room)
    parts: list[str] = []
    for tick, tick_label in byte_ticks(scale.hi, 5):
        x = scale(tick)
        parts.append(line(x, top, x, height - bottom, stroke="#e3e5e9"))
        parts.append(text(x, height - bottom + 16, tick_label, anchor="middle", cls="tick"))
    for i, entry in enumerate(shown):
        y = top + bar_h * i
        parts.append(text(LEFT - 10, y + bar_h / 2 + 4, _slice_label(entry, short=True), anchor="end",
                          cls="row-label", title=_slice_label(entry)))
        parts.append(rect(LEFT, y + 3, scale(entry.log_bytes) - LEFT, bar_h - 6, fill=_slice_color(entry), rx=2.0,
                          cls="slice", title=_slice_tip(entry),
                          data={"picked": "true" if entry.picked else "false", "logs": str(entry.log_count)}))
        parts.append(text(scale(entry.log_bytes) + 6, y + bar_h / 2 + 4,
                          f"{fmt_count(entry.log_count)} log {'file' if entry.log_count == 1 else 'files'} · "
                          f"{fmt_bytes(entry.log_bytes)}", cls="bar-value"))
    parts.append(text((LEFT + WIDTH - RIGHT) / 2, height - 8, "log bytes in the latest file slice",
                      anchor="middle", cls="axis-title"))
    chart = svg(WIDTH, height, "".join(parts), "log files per file slice", cls="chart logs")
    legend = _legend([(swatch("square", "#009E73", "#009E73"), "compaction would pick it"),
                      (swatch("square", "#9aa0a8", "#9aa0a8"), "in a pending compaction"),
                      (swatch("square", "#E69F00", "#E69F00"), "in a pending clustering")])
    note = _note(f"The {MAX_BARS} of {fmt_count(len(with_logs))} file slices with log files that hold the most "
                 "log bytes are drawn.") if len(with_logs) > MAX_BARS else ""
    return chart + legend + note


def log_heat_strip(report: TableReport) -> str:
    """Every latest file slice as a cell, one block per partition: the darker, the more log files; a green
    outline marks the slices a compaction scheduled now would take.

    Returns:
        HTML, or a note when there are no file slices.
    """
    if not report.slices:
        return _note("No file slices yet.")
    shown = report.slices[:MAX_CELLS]
    most = max(s.log_count for s in shown) or 1
    cell, gap, top = 12.0, 3.0, 8.0
    per_line = max(int((WIDTH - RIGHT - LEFT) // (cell + gap)), 1)
    parts: list[str] = []
    y = top
    by_partition: dict[str, list[SliceEntry]] = {}
    for entry in shown:
        by_partition.setdefault(entry.partition, []).append(entry)
    for partition, entries in by_partition.items():
        label = partition or "(non-partitioned)"
        parts.append(text(LEFT - 10, y + cell - 2, f"{truncate(label, 28)} ({fmt_count(len(entries))})",
                          anchor="end", cls="row-label", title=label))
        for i, entry in enumerate(entries):
            row, col = divmod(i, per_line)
            fill = sequential_color(entry.log_count / most) if entry.log_count else "#eceef1"
            parts.append(rect(LEFT + col * (cell + gap), y + row * (cell + gap), cell, cell, fill=fill,
                              stroke="#009E73" if entry.picked else None,
                              stroke_width=2.0 if entry.picked else None, rx=2.0, cls="cell",
                              title=_slice_tip(entry), data={"logs": str(entry.log_count)}))
        y += ((len(entries) - 1) // per_line + 1) * (cell + gap) + 8
    chart = svg(WIDTH, y + 4, "".join(parts), "log file count of every latest file slice", cls="chart heat")
    steps = [(1.0, "1 log file")] if most == 1 else [(1 / most, "1 log file"), (1.0, f"{most} log files")]
    ramp = [(svg(14, 14, rect(1, 1, 12, 12, fill=sequential_color(share), rx=2.0), "cell", cls="swatch"), label)
            for share, label in steps]
    legend = _legend([(svg(14, 14, rect(1, 1, 12, 12, fill="#eceef1", rx=2.0), "cell", cls="swatch"),
                       "no log files"), *ramp,
                      (svg(14, 14, rect(2, 2, 10, 10, fill="#fff", stroke="#009E73", stroke_width=2.0, rx=2.0),
                           "cell", cls="swatch"), "compaction would pick it")])
    note = _note(f"The first {MAX_CELLS} of {fmt_count(len(report.slices))} file slices are drawn.") \
        if len(report.slices) > MAX_CELLS else ""
    return chart + legend + note


__all__ = ["KIND_COLORS", "file_size_chart", "kind_label", "log_bar_chart", "log_heat_strip", "timeline_chart"]
