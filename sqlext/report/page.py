"""The HTML page of ``sqlext report``: one self-contained document (inline CSS and SVG, no script, no
external resource; a Content-Security-Policy forbids loading any) with a header about the table, the
charts of :mod:`sqlext.report.plots` and tables of pending and recent table services."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from sqlext.report.charts import esc, fmt_bytes, fmt_count
from sqlext.report.data import ServiceEntry, TableReport
from sqlext.report.plots import (
    KIND_COLORS,
    file_size_chart,
    kind_label,
    log_bar_chart,
    log_heat_strip,
    timeline_chart,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""Content-Security-Policy of the page: nothing but its own inline styles may load."""

CSS = """
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #dde1e6; --panel: #ffffff;
  --bg: #f3f4f6; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 20px 48px; }
header.top { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px; }
h1 { margin: 0 0 2px; font-size: 26px; letter-spacing: -0.01em; }
h1 .type { font-size: 13px; font-weight: 600; color: #fff; background: var(--accent); border-radius: 999px;
  padding: 2px 10px; vertical-align: middle; margin-left: 8px; }
.path { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; word-break: break-all; }
dl.props { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 14px 0 0; }
dl.props dt { color: var(--muted); }
dl.props dd { margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 10px; margin-top: 16px; }
.stat { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; background: #fafbfc; }
.stat .value { font-size: 20px; font-weight: 650; }
.stat .label { color: var(--muted); font-size: 12px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 18px 24px;
  margin-top: 18px; }
h2 { margin: 0 0 4px; font-size: 18px; }
h3 { margin: 18px 0 6px; font-size: 15px; }
p.lead { margin: 0 0 12px; color: var(--muted); }
svg.chart { display: block; width: 100%; height: auto; margin: 6px 0; }
svg.chart text { font-family: inherit; fill: var(--ink); }
svg .tick, svg .bar-value { font-size: 11px; fill: var(--muted); }
svg .row-label { font-size: 12px; }
svg .axis-title { font-size: 12px; fill: var(--muted); }
svg .band-label { font-size: 11px; fill: var(--muted); font-style: italic; }
svg .mark:hover, svg .file:hover, svg .slice:hover, svg .cell:hover { stroke: #000; stroke-width: 2; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 6px 18px; padding: 0; margin: 4px 0 8px;
  color: var(--muted); font-size: 12.5px; }
ul.legend li { display: flex; align-items: center; gap: 6px; }
svg.swatch { display: inline-block; flex: none; }
p.empty { color: var(--muted); font-style: italic; }
p.status { margin: 4px 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.took { white-space: nowrap; }
td.instant { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: nowrap; }
.badge { display: inline-block; border-radius: 999px; padding: 1px 9px; color: #fff; font-size: 12px;
  white-space: nowrap; }
.state { font-size: 12px; font-weight: 600; }
.state.requested { color: #8a6d00; } .state.inflight { color: #b34700; } .state.completed { color: #1b7f4b; }
ul.warnings { color: #8a3b00; }
footer { color: var(--muted); font-size: 12px; margin-top: 18px; text-align: center; }
"""


def _stat(key: str, value: int, label: str, as_bytes: bool = False) -> str:
    shown = fmt_bytes(value) if as_bytes else fmt_count(value)
    title = f' title="{esc(fmt_count(value))} bytes"' if as_bytes else ""
    return (f'<div class="stat"{title}><div class="value" data-count="{esc(key)}" data-value="{value}">'
            f'{esc(shown)}</div><div class="label">{esc(label)}</div></div>')


def _header(report: TableReport) -> str:
    props = [
        ("table type", report.table_type), ("table version", report.version),
        ("record key fields", ", ".join(report.record_key_fields) or "(none: keyless)"),
        ("precombine field", report.precombine_field or "(none)"),
        ("partition fields", ", ".join(report.partition_fields) or "(non-partitioned)"),
        ("key generator", report.keygen_class or "(default)"), ("base file format", report.base_file_format),
        ("timeline time zone", report.timeline_timezone),
    ]
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in props)
    active = sum(1 for e in report.timeline if not e.archived)
    stats = "".join([
        _stat("partitions", len(report.partitions), "partitions"),
        _stat("file-groups", report.file_groups, "file groups"),
        _stat("base-files", report.base_files, "base files (latest)"),
        _stat("log-files", report.log_files, "log files (latest slices)"),
        _stat("latest-bytes", report.latest_bytes, "latest file slices", as_bytes=True),
        _stat("stored-bytes", report.stored_bytes, "all committed file slices", as_bytes=True),
        _stat("replaced-file-groups", report.replaced_file_groups, "replaced file groups not yet cleaned"),
        _stat("instants", active, "active instants"),
        _stat("archived-instants", report.archived_total, "archived instants"),
    ])
    short_type = "MOR" if report.is_mor else "COW"
    return (f'<header class="top"><h1>{esc(report.name)}<span class="type" title="{esc(report.table_type)}">'
            f'{short_type}</span></h1><div class="path">{esc(report.base_path)}</div>'
            f'<dl class="props">{rows}</dl><div class="stats">{stats}</div></header>')


def _state(entry: ServiceEntry) -> str:
    name = entry.state.name.lower()
    return f'<span class="state {name}">{esc(name)}</span>'


def _badge(kind: str) -> str:
    color = KIND_COLORS.get(kind, "#777777")
    return f'<span class="badge" style="background:{esc(color)}">{esc(kind_label(kind))}</span>'


def _service_table(rows: Sequence[ServiceEntry], empty: str, cls: str, *, with_plan: bool) -> str:
    if not rows:
        return f'<p class="empty">{esc(empty)}</p>'
    head = ["instant", "action", "state"] + (["plan", "what it does"] if with_plan else ["what it did", "took"])
    body = []
    for row in rows:
        cells = [f'<td class="instant">{esc(row.timestamp)}</td>', f"<td>{_badge(row.kind)}</td>",
                 f"<td>{_state(row)}</td>"]
        if with_plan:
            cells += [f"<td>{esc(row.plan or '–')}</td>", f"<td>{esc(row.summary or '–')}</td>"]
        else:
            cells += [f"<td>{esc(row.summary or '–')}</td>", f'<td class="took">{esc(row.duration or "–")}</td>']
        body.append(f'<tr data-kind="{esc(row.kind)}">{"".join(cells)}</tr>')
    header = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f'<table class="{esc(cls)}"><thead><tr>{header}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _section(anchor: str, title: str, lead: str, body: str) -> str:
    return (f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2><p class="lead">{esc(lead)}</p>{body}</section>')


def render(report: TableReport, generated_at: _dt.datetime | None = None) -> str:
    """The whole page.

    Args:
        report: what :func:`sqlext.report.model.collect` read.
        generated_at: shown in the footer (omitted when ``None``, for byte-identical output).

    Returns:
        the HTML document (UTF-8 text).
    """
    parts = [_header(report)]
    archived = ""
    if report.archived_total:
        archived = (f" Faded marks are archived instants ({fmt_count(report.archived_shown)} of "
                    f"{fmt_count(report.archived_total)} drawn).")
    parts.append(_section(
        "timeline", "Timeline",
        "Every instant by action (row and colour) and state (shape), placed at its instant time. Hover a mark "
        "for its details." + archived, timeline_chart(report)))
    parts.append(_section(
        "file-sizes", "Base file sizes",
        "Latest base file of every file group, per partition, against the file-size settings: base files "
        "below the small-file limit take new inserts; clustering rewrites those below its own limit.",
        file_size_chart(report)))
    if report.is_mor:
        status = f'<p class="status">{esc(report.compaction_status)}</p>' if report.compaction_status else ""
        body = (status + "<h3>Slices with the most log bytes</h3>" + log_bar_chart(report) +
                "<h3>Every latest file slice</h3>" + log_heat_strip(report))
    else:
        body = '<p class="empty">Copy-on-write table: there are no log files; updates rewrite base files.</p>'
    parts.append(_section(
        "log-files", "Log files per file slice",
        "Log files of the latest file slice of every file group (merge-on-read). Compaction merges them into a "
        "new base file.", body))
    services = ("<h3>Pending</h3>" +
                _service_table(report.pending, "Nothing is pending.", "pending", with_plan=True) +
                f"<h3>Recent table services (last {len(report.recent)})</h3>" +
                _service_table(report.recent, "No table service has completed on the active timeline.",
                               "recent", with_plan=False))
    parts.append(_section(
        "services", "Table services",
        "Pending compactions, clusterings, cleans, rollbacks and writes, with their plan sizes; then the last "
        "completed compactions, clusterings, cleans, rollbacks, savepoints and restores of the active timeline.",
        services))
    if report.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in report.warnings)
        parts.append(_section("warnings", "Could not be read", "These parts of the table were skipped.",
                              f'<ul class="warnings">{items}</ul>'))
    when = f" at {generated_at:%Y-%m-%d %H:%M:%S %Z}".rstrip() if generated_at is not None else ""
    footer = (f"<footer>Generated by sqlext report{esc(when)} from the table's storage (no Spark). "
              "Self-contained: inline styles and SVG, nothing is loaded from the network.</footer>")
    title = f"{report.name} · Hudi table report"
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>"
            f'<body><main>{"".join(parts)}{footer}</main></body></html>\n')
