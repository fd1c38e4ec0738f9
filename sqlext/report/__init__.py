"""``sqlext report``: one self-contained HTML page about a Hudi table, with pictures rather than text.

* :mod:`sqlext.report.model` reads the table with the engine (no Spark): latest base files, latest file
  slices and their log files; :mod:`sqlext.report.instants` the timeline (active and archived) and what
  pending and recent table services plan or did; :mod:`sqlext.report.data` holds what they read;
* :mod:`sqlext.report.charts` holds the SVG primitives (scales, ticks, markers, escaping);
* :mod:`sqlext.report.plots` draws the timeline, the base file sizes against the small-file limits and the
  log files per file slice;
* :mod:`sqlext.report.page` assembles the page (inline CSS and SVG, no script, nothing from the network);
* :mod:`sqlext.report.cli` is the ``sqlext report`` command.
"""

from __future__ import annotations

from sqlext.report.cli import ReportError, main, resolve_base_path, write_report
from sqlext.report.model import TableReport, collect
from sqlext.report.page import render

__all__ = ["ReportError", "TableReport", "collect", "main", "render", "resolve_base_path", "write_report"]
