"""``sqlext report`` end to end: a merge-on-read table built through SQL (small files, updates into log files,
clustering, clean, a pending compaction and a pending clustering), reported by path and by name; the HTML
checked against the engine's own view of the table, then loaded in headless Chromium (the DOM keeps every
mark; the screenshot shows the charts' colours). Hudi-written fixture tables (rollback, overwrite, empty)
are reported without Spark."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine.table import Table
from engine.timeline.avro_serde import deserialize
from sqlext.report.model import collect
from sqlext.session import Session
from sqlext.shell import main

pytestmark = [pytest.mark.integration]

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (/usr/bin/chromium) not installed")
FORBIDDEN = ("http://", "https://", "<script", "<link", "<img", "src=", "url(", "@import")
MIB = 2**20


def count(html: str, attribute: str) -> int:
    """Occurrences of an attribute/value text in the page."""
    return html.count(attribute)


def stat(html: str, key: str) -> int:
    """The number a header tile shows (``data-count="<key>" data-value="<n>"``)."""
    match = re.search(rf'data-count="{key}" data-value="(\d+)"', html)
    assert match, f"no {key} tile"
    return int(match.group(1))


def build_table(session: Session, name: str) -> None:
    """Three partitions: d1 (3 file groups with log files, then in a pending compaction, plus a newer log file),
    d2 (3 small file groups clustered into 1, replaced ones cleaned, then a pending clustering), d3 (one file
    group with a log file a compaction would pick)."""
    session.sql(f"""CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
        'hoodie.parquet.small.file.limit' = '0', 'hoodie.compact.inline' = 'false')""")
    for batch in range(3):  # each INSERT writes a new file group per partition (small-file packing off)
        values = ", ".join(f"({batch * 10 + i}, 'n{batch * 10 + i}', {float(i)}, {batch}, '{'d1' if i % 2 else 'd2'}')"
                           for i in range(10))
        session.sql(f"INSERT INTO {name} VALUES {values}")
    session.sql(f"UPDATE {name} SET price = price + 1 WHERE dt = 'd1'")
    session.sql(f"UPDATE {name} SET price = 100 WHERE id = 1")
    session.sql(f"CALL run_clustering(table => '{name}', selected_partitions => 'dt=d2')")
    session.sql(f"UPDATE {name} SET price = 200 WHERE id = 3")
    session.sql(f"CALL run_clean(table => '{name}', retain_commits => 1)")
    session.sql(f"CALL run_compaction(op => 'schedule', table => '{name}', "
                "options => 'hoodie.compact.inline.max.delta.commits=1')")
    session.sql(f"UPDATE {name} SET price = 300 WHERE id = 5")
    session.sql(f"INSERT INTO {name} VALUES (100, 'x', 1.0, 9, 'd3'), (101, 'y', 2.0, 9, 'd3')")
    session.sql(f"UPDATE {name} SET price = 400 WHERE id = 100")
    session.sql(f"CALL run_clustering(table => '{name}', op => 'schedule', selected_partitions => 'dt=d2')")


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium without network services or GPU."""
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           "--hide-scrollbars", f"--user-data-dir={tmp / 'chromium-profile'}", *args],
                          capture_output=True, text=True, timeout=180, check=False)


def png_rgb(path: Path) -> np.ndarray:
    """The pixels of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) as ``(height, width, 3)``."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, chunks = 8, []
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and color in (2, 6), (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            chunks.append(body)
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        if kind == 1:  # Sub: running sum per channel
            row = np.cumsum(row.reshape(width, channels), axis=0).reshape(stride) % 256
        elif kind == 2:  # Up
            row = (row + previous) % 256
        elif kind in (3, 4):  # Average, Paeth: sequential along the row
            values, prior = row.tolist(), previous.tolist()
            for i in range(stride):
                left = values[i - channels] if i >= channels else 0
                up, corner = prior[i], prior[i - channels] if i >= channels else 0
                if kind == 3:
                    values[i] = (values[i] + ((left + up) >> 1)) & 255
                else:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                    values[i] = (values[i] + pred) & 255
            row = np.array(values, dtype=np.int32)
        out[y] = row
        previous = row
    return out.reshape(height, width, channels)[:, :, :3]


def pixels_of(image: np.ndarray, hex_color: str) -> int:
    """How many pixels have exactly ``#rrggbb``."""
    rgb = tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return int(np.all(image == np.array(rgb, dtype=np.uint8), axis=2).sum())


@pytest.fixture(scope="module")
def mor_table(session: Session) -> tuple[str, Path]:
    """The merge-on-read table of :func:`build_table`, built once for this module's tests: (name, base path)."""
    name = f"report_mor_{uuid.uuid4().hex[:8]}"
    build_table(session, name)
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return name, Path(entry.location)


@pytest.mark.spark
@pytest.mark.slow
def test_report_of_a_merge_on_read_table(session: Session, mor_table: tuple[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    table_name, base = mor_table
    out = tmp_path / "report.html"
    assert main(["report", str(base), "--out", str(out), "--conf", f"hoodie.parquet.small.file.limit={MIB}"]) == 0
    assert capsys.readouterr().out == f"{out}\n"
    html = out.read_text(encoding="utf-8")

    # Self-contained, and about this table.
    for forbidden in FORBIDDEN:
        assert forbidden not in html, forbidden
    assert f"<h1>{table_name}<" in html and str(base) in html and "MERGE_ON_READ" in html
    assert ">id<" in html and ">ts<" in html and ">dt<" in html  # record key, precombine, partition fields

    # Counts as the engine's file-system view has them.
    table = Table.load(str(base))
    view = table.file_system_view()
    latest = view.all_latest_file_slices()
    assert stat(html, "partitions") == len(view.partition_paths()) == 3
    assert stat(html, "file-groups") == len(view.all_file_groups()) == 5
    assert stat(html, "base-files") == len(view.all_latest_base_files()) == 5
    assert stat(html, "log-files") == sum(len(s.log_files) for s in latest) > 0
    assert stat(html, "latest-bytes") == sum(s.total_size for s in latest)

    # Timeline: one mark per instant of the active timeline, each kind present.
    instants = table.timeline.instants
    assert count(html, 'class="mark"') == len(instants)
    assert count(html, 'data-kind="compaction" data-state="requested"') == 1
    assert count(html, 'data-kind="clustering" data-state="completed"') == 1
    assert count(html, 'data-kind="clustering" data-state="requested"') == 1
    assert count(html, 'data-kind="clean" data-state="completed"') == 1
    assert count(html, 'class="mark" data-kind="deltacommit"') == \
        sum(1 for i in instants if i.action == "deltacommit")

    # Base files against the limits (1 MiB from --conf; the others' defaults); the clustered one is pending again.
    assert count(html, 'class="file"') == 5
    assert "hoodie.parquet.small.file.limit = 1 MiB (--conf)" in html
    assert "hoodie.clustering.plan.strategy.small.file.limit = 300 MiB (default)" in html
    assert count(html, 'class="limit"') == 3
    assert count(html, 'data-partition="dt=d2"') == 1 and "in pending clustering" in html

    # Log files: d3's slice is what a compaction would pick; d1's newest log file waits behind the pending one.
    with_logs = [s for s in view.all_latest_file_slices(merge_pending_compaction=False) if s.log_files]
    assert count(html, 'class="slice"') == len(with_logs) == 2
    assert count(html, 'class="slice" data-picked="true"') == 1
    assert count(html, 'class="cell"') == 5
    assert "a compaction scheduled now would take 1 file slice" in html or "no compaction would be scheduled" in html

    # Services: the plans waiting, and what the clustering and the clean did.
    pending = html[html.index('<table class="pending">'):html.index("</table>", html.index('<table class="pending">'))]
    compaction = table.timeline.pending_compactions()[0]
    assert compaction.timestamp in pending and "3 file groups in 1 partition" in pending
    assert "1 group · 1 file slice in 1 partition → 1 new file group" in pending
    recent = html[html.index('<table class="recent">'):]
    clean = next(i for i in instants if i.action == "clean")
    deleted = deserialize(table.timeline.read_details(clean), "HoodieCleanMetadata")["totalFilesDeleted"]
    assert deleted >= 3 and f"deleted {deleted} files in 1 partition" in recent
    assert "replaced 3 file groups in 1 partition with 1 new file group" in recent
    assert collect(table).warnings == []

    # By name in the warehouse, to the default file in the current directory.
    monkeypatch.chdir(tmp_path)
    assert main(["report", table_name, "--warehouse", str(session.warehouse)]) == 0
    default = tmp_path / f"{table_name}-report.html"
    assert capsys.readouterr().out == f"{default}\n" and default.exists()
    assert main(["report", f"nope_{table_name}", "--warehouse", str(session.warehouse)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no Hudi table 'nope_{table_name}'" in err


@pytest.mark.spark
@pytest.mark.slow
@needs_chromium
def test_report_of_a_merge_on_read_table_in_browser(mor_table: tuple[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The DOM Chromium builds keeps every mark; the screenshot has the charts' colours."""
    _, base = mor_table
    page = tmp_path / "report.html"
    assert main(["report", str(base), "--out", str(page), "--conf", f"hoodie.parquet.small.file.limit={MIB}"]) == 0
    capsys.readouterr()
    html = page.read_text(encoding="utf-8")
    dumped = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = dumped.stdout
    assert dom.count("<svg") == html.count("<svg") > 10
    for mark in ('class="mark"', 'class="file"', 'class="slice"', 'class="cell"', 'class="limit"', 'class="bin"'):
        assert dom.count(mark) == html.count(mark) > 0, mark
    assert dom.count("<title>") == html.count("<title>")

    shot = tmp_path / "report.png"
    taken = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri())
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    image = png_rgb(shot)
    assert image.shape == (2000, 1280, 3)
    colours = np.unique(image[::2, ::2].reshape(-1, 3), axis=0)
    assert len(colours) > 50  # text, anti-aliasing, marks: not a blank page
    assert pixels_of(image, "#f3f4f6") > 100_000  # the page background
    assert pixels_of(image, "#0072b2") > 50  # the MOR badge
    assert pixels_of(image, "#9fb7cf") > 500  # the base file size histogram
    assert pixels_of(image, "#009e73") > 500  # the log-file bar of the slice compaction would pick


@needs_chromium
def test_report_of_hudi_written_tables_renders(hudi_fixture: Callable[..., str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rollback = hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned_rollback")
    overwrite = hudi_fixture("sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable")
    empty = hudi_fixture("sample_table/cow/v6_empty")
    pages = {}
    for name, base in (("rollback", rollback), ("overwrite", overwrite), ("empty", empty)):
        out = tmp_path / f"{name}.html"
        assert main(["report", base, "--out", str(out)]) == 0
        pages[name] = out.read_text(encoding="utf-8")
        for forbidden in FORBIDDEN:
            assert forbidden not in pages[name]
    capsys.readouterr()

    table = Table.load(rollback)
    rolled = deserialize(table.timeline.read_details(table.timeline.rollbacks()[0]), "HoodieRollbackMetadata")
    assert f"rolled back {rolled['commitsRollback'][0]}" in pages["rollback"]
    assert 'data-kind="rollback"' in pages["rollback"]
    assert 'data-kind="overwrite"' in pages["overwrite"] and "replacecommit (overwrite)" in pages["overwrite"]
    assert "Copy-on-write table: there are no log files" in pages["overwrite"]
    assert "The timeline has no instants yet." in pages["empty"] and "No base files yet." in pages["empty"]
    assert stat(pages["empty"], "file-groups") == 0

    dumped = chromium(tmp_path, "--dump-dom", (tmp_path / "rollback.html").as_uri())
    assert dumped.returncode == 0 and dumped.stdout.count('class="mark"') == len(table.timeline.instants)
