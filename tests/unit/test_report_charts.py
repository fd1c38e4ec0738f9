"""``sqlext report`` without Spark: the SVG primitives (formats, scales, ticks, markers, escaping), the charts
as well-formed XML with one mark per instant / base file / file slice, reading a synthetic table with an
archived timeline, and resolving table names in a warehouse."""

from __future__ import annotations

import datetime as dt
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.services.archive import archive
from engine.table import Table
from engine.timeline.instant import Instant, State
from sqlext.report import ReportError, collect, main, render, resolve_base_path
from sqlext.report.charts import (
    ByteScale,
    LinearScale,
    TimeScale,
    byte_ticks,
    esc,
    fmt_bytes,
    fmt_duration,
    marker_path,
    nice_ticks,
    num,
    truncate,
)
from sqlext.report.instants import completed_file_times
from sqlext.report.model import BaseFileEntry, Limit, SliceEntry, TableReport, TimelineEntry, instant_moment
from sqlext.report.plots import file_size_chart, log_bar_chart, log_heat_strip, timeline_chart
from tests.unit.synthetic_timeline import commit

NASTY = "dt=<b>&\"x'"


def parse(fragment: str) -> ET.Element:
    """The fragment as XML (it must be well formed: every table string escaped)."""
    return ET.fromstring(f"<root>{fragment}</root>")


def report_with(partition: str = "dt=a", sizes: tuple[int, ...] = (2_000, 300_000, 200 * 2**20)) -> TableReport:
    report = TableReport("t<1>", "/wh/t<1>", "MERGE_ON_READ", "6", ["id"], "ts", ["dt"], "k", "PARQUET", "UTC")
    report.partitions = [partition]
    report.base_file_entries = {partition: [
        BaseFileEntry(partition, f"fg{i}", f"fg{i}_1-0-1_20240101000000000.parquet", size, "20240101000000000")
        for i, size in enumerate(sizes)]}
    report.limits = [Limit("hoodie.parquet.small.file.limit", 100 * 2**20, "default"),
                     Limit("hoodie.clustering.plan.strategy.small.file.limit", 300 * 2**20, "default"),
                     Limit("hoodie.parquet.max.file.size", 120 * 2**20, "--conf")]
    report.slices = [SliceEntry(partition, "fg0", "20240101000000000", 2_000, 3, 4_096, True),
                     SliceEntry(partition, "fg1", "20240101000000000", 300_000, 0, 0, False),
                     SliceEntry(partition, "fg2", "20240101000000000", None, 1, 100, False,
                                "in pending compaction 20240102000000000")]
    base = dt.datetime(2024, 1, 1, 12)
    report.timeline = [
        TimelineEntry("20240101115900000", base - dt.timedelta(minutes=1), "deltacommit", State.COMPLETED, True),
        TimelineEntry("20240101120000000", base, "deltacommit", State.COMPLETED,
                      completed_at=base + dt.timedelta(seconds=20), detail="UPSERT <x>"),
        TimelineEntry("20240101120100000", base + dt.timedelta(minutes=1), "compaction", State.REQUESTED),
        TimelineEntry("20240101120200000", base + dt.timedelta(minutes=2), "clustering", State.INFLIGHT),
        TimelineEntry("00000000000001", None, "commit", State.COMPLETED),
    ]
    return report


# ---------------------------------------------------------------------------------------------- primitives


def test_formats() -> None:
    assert [num(v) for v in (1.0, 1.005, -0.001, 12.3456, 100.0)] == ["1", "1", "0", "12.35", "100"]
    assert [fmt_bytes(v) for v in (0, 512, 1536, 120 * 2**20, 2.25 * 2**30)] == \
        ["0 B", "512 B", "1.5 KiB", "120 MiB", "2.25 GiB"]
    assert [fmt_duration(s) for s in (0.25, 12.34, 245, 7380, 97200)] == \
        ["250 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "1 d 3 h"]
    assert esc("<a href='x'>&\"") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&quot;"
    assert truncate("abcdefghij", 5) == "ab…ij" and truncate("abc", 5) == "abc"


def test_linear_scale_and_nice_ticks() -> None:
    scale = LinearScale(0, 10, 100, 200)
    assert (scale(0), scale(5), scale(10)) == (100, 150, 200)
    assert LinearScale(3, 3, 0, 50)(3) == 25  # degenerate domain: the middle
    assert LinearScale(0, 4, 300, 100)(1) == 250  # upward axis
    assert nice_ticks(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(0.3, 0.95, 5) == [0.4, 0.6, 0.8]  # step 0.2: the 1-2-5 step above 0.65 / 5
    assert nice_ticks(7, 7) == [7]
    with pytest.raises(ValueError):
        nice_ticks(0, 1, 0)


def test_byte_scale_is_logarithmic_and_ticks_at_powers_of_four() -> None:
    scale = ByteScale.covering([1_500, 100 * 2**20], 0, 100)
    assert scale.lo == 1024 and scale.hi == 256 * 2**20
    assert scale(1024) == 0 and scale(256 * 2**20) == 100
    assert scale(4 * 1024) - scale(1024) == pytest.approx(scale(16 * 1024) - scale(4 * 1024))  # equal ratios
    assert scale(1) == 0 and scale(2**40) == 100  # clamped
    assert scale.ticks() == [4.0 ** e for e in range(5, 15)]
    wide = ByteScale(1, 2**40, 0, 100)
    assert wide.ticks(12) == [1.0, 1024.0, 2.0**20, 2.0**30, 2.0**40]  # only powers of 1024 when crowded
    assert ByteScale.covering([], 0, 10).lo == 1024
    assert byte_ticks(23 * 1024) == [(0.0, "0 B"), (5120.0, "5 KiB"), (10240.0, "10 KiB"), (15360.0, "15 KiB"),
                                     (20480.0, "20 KiB")]
    assert byte_ticks(0) == [(0.0, "0 B")]


def test_time_scale_ticks_follow_the_span() -> None:
    start = dt.datetime(2024, 4, 18, 17, 28, 4, 498000)
    seconds = TimeScale(start, start + dt.timedelta(seconds=20), 0, 100).ticks()
    assert [label for _, label in seconds] == ["17:28:05", "17:28:10", "17:28:15", "17:28:20"]
    hours = TimeScale(start, start + dt.timedelta(days=2), 0, 100).ticks()
    assert [label for _, label in hours] == ["18:00", "04-19 00:00", "06:00", "12:00", "18:00", "04-20 00:00",
                                             "06:00", "12:00"]  # 6 h steps; the date where a day starts
    days = TimeScale(start, start + dt.timedelta(days=10), 0, 100).ticks()
    assert [label for _, label in days] == ["2024-04-19", "2024-04-21", "2024-04-23", "2024-04-25", "2024-04-27"]
    months = TimeScale(start, start + dt.timedelta(days=240), 0, 100).ticks()
    assert [label for _, label in months][:3] == ["2024-05", "2024-06", "2024-07"]
    single = TimeScale.padded([start], 0, 100)
    assert single(start) == 50 and single.last - single.first == dt.timedelta(seconds=60)
    scale = TimeScale(start, start + dt.timedelta(hours=1), 10, 110)
    assert scale(start + dt.timedelta(minutes=30)) == pytest.approx(60)
    with pytest.raises(ValueError):
        TimeScale.padded([], 0, 1)


def test_marker_shapes() -> None:
    assert marker_path("square", 10, 10, 10).startswith("M5.75 5.75")
    assert marker_path("triangle", 0, 0, 10) == "M0 -5L5 4L-5 4Z"
    with pytest.raises(ValueError, match="unknown marker shape 'star'"):
        marker_path("star", 0, 0, 1)


def test_instant_moment() -> None:
    assert instant_moment("20240418172804498") == dt.datetime(2024, 4, 18, 17, 28, 4, 498000)
    assert instant_moment("20240418172804") == dt.datetime(2024, 4, 18, 17, 28, 4)
    assert instant_moment("00000000000001") is None and instant_moment("abc") is None


# ---------------------------------------------------------------------------------------------- charts


def test_charts_escape_table_strings_and_draw_one_mark_each() -> None:
    report = report_with(NASTY)
    sizes = file_size_chart(report)
    assert "<b>" not in sizes and "dt=&lt;b&gt;&amp;&quot;x&#x27;" in sizes
    root = parse(sizes)
    files = [e for e in root.iter("path") if e.get("class") == "file"]
    assert len(files) == 3 and {e.get("data-partition") for e in files} == {NASTY}
    colors = [e.get("fill") for e in sorted(files, key=lambda e: int(e.get("data-size") or 0))]
    assert colors == ["#E69F00", "#E69F00", "#D55E00"]  # small, small, above the 120 MiB target
    assert len([e for e in root.iter("line") if e.get("class") == "limit"]) == 3
    assert "hoodie.parquet.max.file.size = 120 MiB (--conf)" in sizes

    bars = parse(log_bar_chart(report))
    slices = [e for e in bars.iter("rect") if e.get("class") == "slice"]
    assert [(e.get("data-logs"), e.get("data-picked"), e.get("fill")) for e in slices] == \
        [("3", "true", "#009E73"), ("1", "false", "#9aa0a8")]  # most log bytes first; pending compaction grey
    cells = [e for e in parse(log_heat_strip(report)).iter("rect") if e.get("class") == "cell"]
    assert len(cells) == 3 and sum(1 for c in cells if c.get("stroke") == "#009E73") == 1


def test_timeline_chart_marks_state_and_archive() -> None:
    report = report_with()
    report.archived_total = report.archived_shown = 1
    chart = timeline_chart(report)
    marks = [e for e in parse(chart).iter("path") if e.get("class") == "mark"]
    assert len(marks) == 4  # the reserved instant has no calendar time
    by_instant = {e.get("data-instant"): e for e in marks}
    assert by_instant["20240101115900000"].get("data-archived") == "true"
    assert by_instant["20240101115900000"].get("opacity") == "0.4"
    assert by_instant["20240101120100000"].get("fill") == "#fff"  # requested: hollow
    assert by_instant["20240101120200000"].get("d", "").count("L") == 2  # inflight: triangle
    assert "UPSERT &lt;x&gt;" in chart and "completed after 20.0 s" in chart
    assert "replacecommit (clustering) (1)" in chart and "archived" in chart
    assert "no instants" in timeline_chart(TableReport("t", "/t", "COPY_ON_WRITE", "6", [], None, [], "", "P", "UTC"))


def test_page_is_self_contained_and_escaped() -> None:
    page = render(report_with(NASTY))
    assert page.startswith("<!DOCTYPE html>") and "<title>t&lt;1&gt; · Hudi table report</title>" in page
    assert "<b>" not in page and "t<1>" not in page
    for forbidden in ("http://", "https://", "<script", "<link", "src=", "url(", "@import"):
        assert forbidden not in page
    assert "Content-Security-Policy" in page and 'data-count="base-files" data-value="0"' in page


# ---------------------------------------------------------------------------------------------- reading tables


def test_collect_draws_archived_instants_faded(tmp_path: Path) -> None:
    table = Table.create(str(tmp_path / "syn"), {"hoodie.table.name": "syn", "hoodie.table.type": "MERGE_ON_READ",
                                                 "hoodie.table.recordkey.fields": "id"})
    for i in range(8):
        commit(table, f"2024010112{i:02d}00000", "deltacommit")
    archived = archive(table, HoodieConfig({"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                           "hoodie.cleaner.commits.retained": "1"}))
    assert len(archived.instants) == 6
    report = collect(table.reload(), {"hoodie.parquet.small.file.limit": "1024"})
    assert report.archived_total == report.archived_shown == 6
    assert [e.archived for e in report.timeline] == [True] * 6 + [False] * 2
    assert {e.kind for e in report.timeline} == {"deltacommit"}
    assert report.limit("hoodie.parquet.small.file.limit") == Limit("hoodie.parquet.small.file.limit", 1024, "--conf")
    assert report.limit("hoodie.parquet.max.file.size") == Limit("hoodie.parquet.max.file.size", 125829120, "default")
    page = render(report)
    assert page.count('data-archived="true"') == 6 and page.count('data-archived="false"') == 2
    assert collect(table, archived=False).timeline == report.timeline[6:]


def test_completion_times_come_from_files_unless_the_timeline_was_copied(tmp_path: Path) -> None:
    table = Table.create(str(tmp_path / "t"), {"hoodie.table.name": "t"})
    for ts in ("20240101120000000", "20240101120100000"):
        commit(table, ts)
    meta = tmp_path / "t" / ".hoodie"
    parsed = {p: i for p in meta.iterdir() if (i := Instant.parse(p.name)) is not None}
    instant_files = sorted(parsed, key=lambda p: (parsed[p].timestamp, parsed[p].state.rank))
    for i, path in enumerate(instant_files):  # written 5 s apart, each state after the previous
        os.utime(path, (1_704_110_400 + 5 * i, 1_704_110_400 + 5 * i))
    times = completed_file_times(table)
    assert times == {("20240101120000000", "commit"): 1_704_110_410_000,
                     ("20240101120100000", "commit"): 1_704_110_425_000}
    entries = collect(table).timeline
    assert entries[0].completed_at == dt.datetime(2024, 1, 1, 12, 0, 10)  # UTC timeline: 10 s after the instant
    assert entries[1].completed_at is None  # 2024-01-01 12:00:25 is before its instant time: not believed
    for path in instant_files:  # unpacked from an archive: every file the same time
        os.utime(path, (1_704_110_400, 1_704_110_400))
    assert completed_file_times(table) == {}


def test_resolve_names_in_the_warehouse(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    for folder in (wh / "t1", wh / "db1.db" / "t2", wh / "db1.db" / "t1"):
        Table.create(str(folder), {"hoodie.table.name": folder.name})
    assert resolve_base_path("t1", str(wh)) == str(wh / "t1")  # default database first
    assert resolve_base_path("db1.t1", str(wh)) == str(wh / "db1.db" / "t1")
    assert resolve_base_path("T2", str(wh)) == str(wh / "db1.db" / "t2")
    assert resolve_base_path("default.t1", str(wh)) == str(wh / "t1")
    assert resolve_base_path(str(wh / "t1") + "/", str(wh)) == str(wh / "t1")
    with pytest.raises(ReportError, match=r"no Hudi table 'nope' in the warehouse .*wh/nope and .*\*\.db/nope"):
        resolve_base_path("nope", str(wh))
    Table.create(str(wh / "db2.db" / "t2"), {"hoodie.table.name": "t2"})
    with pytest.raises(ReportError, match="ambiguous"):
        resolve_base_path("t2", str(wh))


def test_cli_errors_name_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing"
    assert main([str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"Error: sqlext report {missing}: ") and "no Hudi table" in err
    assert main(["nope", "--warehouse", str(tmp_path)]) == 1
    assert "no Hudi table 'nope' in the warehouse" in capsys.readouterr().err
    table = Table.create(str(tmp_path / "t"), {"hoodie.table.name": "t"})
    assert main([table.base_path, "--conf", "hoodie.parquet.small.file.limit=lots", "--out",
                 str(tmp_path / "x.html")]) == 1
    assert "hoodie.parquet.small.file.limit" in capsys.readouterr().err
    assert main([table.base_path, "--out", str(tmp_path / "no" / "dir" / "x.html")]) == 1
    assert "No such file or directory" in capsys.readouterr().err
    assert main([]) == 2


def test_a_savepoint_row_says_how_long_the_savepoint_took_not_since_its_commit(tmp_path: Path) -> None:
    """`sqlext report` said "took 18.1 s" for a savepoint call of 0.38 s: a savepoint's instant time is the
    commit it keeps. Its time runs from its inflight file to its completed file."""
    import re

    from engine.services.savepoint import create_savepoint

    table = Table.create(str(tmp_path / "t"), {"hoodie.table.name": "t"})
    commit(table, "20240101120000000")
    create_savepoint(table.reload(), "20240101120000000")
    meta = tmp_path / "t" / ".hoodie"
    commit_done = 1_704_110_401.0  # 1 s after the commit's instant time (UTC)
    os.utime(meta / "20240101120000000.commit", (commit_done, commit_done))
    os.utime(meta / "20240101120000000.savepoint.inflight", (commit_done + 17.5, commit_done + 17.5))
    os.utime(meta / "20240101120000000.savepoint", (commit_done + 17.875, commit_done + 17.875))
    report = collect(table.reload())
    savepoint = next(s for s in report.recent if s.kind == "savepoint")
    assert savepoint.duration == "375 ms"
    page = render(report)
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*savepoint(?:(?!</tr>).)*</tr>", page, re.DOTALL)
    assert row is not None
    assert "<td class=\"took\">375 ms</td>" in row.group(0) and "17.9 s" not in row.group(0)
    entry = next(e for e in report.timeline if e.kind == "savepoint")
    assert entry.completed_at is None  # no duration bar from the commit's time on the chart
    assert "completed after 17" not in page
