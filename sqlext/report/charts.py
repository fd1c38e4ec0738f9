"""SVG primitives of ``sqlext report``: escaping, number formats, scales with tick choice, and element
builders. Everything is a pure function of its inputs (no clock, no randomness), so a page renders the
same bytes for the same table.

Coordinates are SVG user units (the charts use a fixed ``viewBox`` and scale to the page width); numbers are
written with at most two decimals.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

KIB = 1024
"""Bytes in a KiB."""

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def esc(value: object) -> str:
    """HTML/XML-escape ``str(value)`` for element text and double-quoted attribute values
    (``&``, ``<``, ``>``, ``"``, ``'``)."""
    return html.escape(str(value), quote=True)


def num(value: float) -> str:
    """A coordinate as SVG text: rounded to 2 decimals, no trailing zeros, ``-0`` written ``0``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_bytes(size: float) -> str:
    """Human-readable bytes with binary units: ``0 B``, ``512 B``, ``1.5 KiB``, ``120 MiB``, ``2.25 GiB``
    (three significant digits at most; negative sizes keep their sign)."""
    sign = "-" if size < 0 else ""
    value = float(abs(size))
    unit = 0
    while value >= KIB and unit < len(_UNITS) - 1:
        value /= KIB
        unit += 1
    if unit == 0:
        return f"{sign}{int(value)} B"
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{sign}{text} {_UNITS[unit]}"


def fmt_count(value: int) -> str:
    """An integer with thousands separators: ``12,345``."""
    return f"{value:,}"


def fmt_duration(seconds: float) -> str:
    """A duration: ``850 ms``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min``, ``3 d 4 h``."""
    if seconds < 1:
        return f"{int(round(seconds * 1000))} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    if whole < 86400:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    return f"{whole // 86400} d {whole % 86400 // 3600} h"


# ---------------------------------------------------------------------------------------------- scales


def nice_step(span: float, count: int) -> float:
    """The 1-2-5 step (…, 0.5, 1, 2, 5, 10, …) that cuts ``span`` into about ``count`` intervals.

    Raises:
        ValueError: ``span`` is not positive or ``count`` < 1.
    """
    if span <= 0 or count < 1:
        raise ValueError(f"nice_step needs a positive span and count, got {span}, {count}")
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power  # pragma: no cover - the loop always returns


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Ticks at multiples of :func:`nice_step` within ``[lo, hi]`` (``[lo]`` when ``lo == hi``)."""
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        return [lo]
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [round(i * step, 10) for i in range(first, last + 1)]


def byte_ticks(hi: float, count: int = 5) -> list[tuple[float, str]]:
    """Ticks from 0 to ``hi`` bytes at a 1-2-5 step of one binary unit, each with its label in that unit
    (``0 B``, ``5 KiB``, ``10 KiB`` …; a unit is chosen so that ``hi`` is at least 4 of it).

    Returns:
        ``[(bytes, label), ...]``; ``[(0.0, "0 B")]`` when ``hi`` is not positive.
    """
    if hi <= 0:
        return [(0.0, "0 B")]
    exponent = 0
    while exponent < len(_UNITS) - 1 and hi / KIB ** (exponent + 1) >= 4:
        exponent += 1
    unit = float(KIB ** exponent)
    out = []
    for value in nice_ticks(0, hi / unit, count):
        label = f"{value:.10g} {_UNITS[exponent]}" if value else "0 B"
        out.append((value * unit, label))
    return out


@dataclass(frozen=True)
class LinearScale:
    """Maps ``[lo, hi]`` linearly onto pixels ``[start, end]`` (a degenerate domain maps to the middle).

    Attributes:
        lo / hi: the data domain.
        start / end: the pixel range (``end < start`` for an upward y axis).
    """

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.hi == self.lo:
            return (self.start + self.end) / 2
        return self.start + (value - self.lo) / (self.hi - self.lo) * (self.end - self.start)

    def ticks(self, count: int = 5) -> list[float]:
        """:func:`nice_ticks` over the domain."""
        return nice_ticks(self.lo, self.hi, count)


@dataclass(frozen=True)
class ByteScale:
    """Maps byte sizes logarithmically (base 2) onto pixels; sizes below ``lo`` are drawn at ``lo``.

    Attributes:
        lo / hi: the domain in bytes (``1 <= lo < hi``).
        start / end: the pixel range.
    """

    lo: float
    hi: float
    start: float
    end: float

    @staticmethod
    def covering(values: Iterable[float], start: float, end: float) -> ByteScale:
        """A scale from the power of 4 at or below the smallest positive value to the power of 4 above the
        largest (1 KiB .. 4 KiB when there is no positive value)."""
        positive = [v for v in values if v > 0] or [float(KIB)]
        lo = max(1.0, 4.0 ** math.floor(math.log(min(positive), 4) + 1e-9))
        hi = max(4.0 ** (math.floor(math.log(max(positive), 4) + 1e-9) + 1), lo * 4)
        return ByteScale(lo, hi, start, end)

    def __call__(self, value: float) -> float:
        clamped = min(max(value, self.lo), self.hi)
        share = (math.log2(clamped) - math.log2(self.lo)) / (math.log2(self.hi) - math.log2(self.lo))
        return self.start + share * (self.end - self.start)

    def ticks(self, max_ticks: int = 12) -> list[float]:
        """Powers of 4 (1 KiB, 4 KiB, 16 KiB, …) within the domain, or only the powers of 1024 (1 KiB,
        1 MiB, …) when there would be more than ``max_ticks``."""
        lo_exp = math.ceil(math.log(self.lo, 4) - 1e-9)
        hi_exp = math.floor(math.log(self.hi, 4) + 1e-9)
        exps = list(range(lo_exp, hi_exp + 1))
        if len(exps) > max_ticks:
            exps = [e for e in exps if e % 5 == 0]
        return [float(4 ** e) for e in exps]


_TIME_STEPS: tuple[tuple[str, int], ...] = (
    ("s", 1), ("s", 2), ("s", 5), ("s", 10), ("s", 15), ("s", 30),
    ("min", 1), ("min", 2), ("min", 5), ("min", 10), ("min", 15), ("min", 30),
    ("h", 1), ("h", 2), ("h", 3), ("h", 6), ("h", 12),
    ("d", 1), ("d", 2), ("d", 7),
    ("mo", 1), ("mo", 3), ("mo", 6), ("mo", 12), ("mo", 24), ("mo", 60),
)
_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400, "mo": 30 * 86400}


def _add_months(moment: _dt.datetime, months: int) -> _dt.datetime:
    total = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=total // 12, month=total % 12 + 1, day=1)


@dataclass(frozen=True)
class TimeScale:
    """Maps naive datetimes linearly onto pixels ``[start, end]``.

    Attributes:
        first / last: the domain (``first < last``; use :meth:`padded` for a single instant).
        start / end: the pixel range.
    """

    first: _dt.datetime
    last: _dt.datetime
    start: float
    end: float

    @staticmethod
    def padded(moments: Iterable[_dt.datetime], start: float, end: float) -> TimeScale:
        """A scale over ``moments`` with 3% room on each side (30 s each side for a single moment).

        Raises:
            ValueError: no moments.
        """
        values = list(moments)
        if not values:
            raise ValueError("a time scale needs at least one moment")
        first, last = min(values), max(values)
        room = (last - first) * 0.03 if last > first else _dt.timedelta(seconds=30)
        return TimeScale(first - room, last + room, start, end)

    def __call__(self, moment: _dt.datetime) -> float:
        span = (self.last - self.first).total_seconds()
        share = (moment - self.first).total_seconds() / span if span > 0 else 0.5
        return self.start + share * (self.end - self.start)

    def ticks(self, max_ticks: int = 8) -> list[tuple[_dt.datetime, str]]:
        """Ticks at whole seconds/minutes/hours/days/months (the smallest step giving at most ``max_ticks``),
        each with a label in the step's precision (``HH:mm:ss``, ``HH:mm``, ``MM-dd HH:mm``, ``yyyy-MM-dd``,
        ``yyyy-MM``)."""
        span = (self.last - self.first).total_seconds()
        unit, size = _TIME_STEPS[-1]
        for candidate_unit, candidate_size in _TIME_STEPS:
            if span / (_SECONDS[candidate_unit] * candidate_size) <= max_ticks:
                unit, size = candidate_unit, candidate_size
                break
        out: list[tuple[_dt.datetime, str]] = []
        if unit == "mo":
            moment = _add_months(self.first.replace(day=1, hour=0, minute=0, second=0, microsecond=0), 0)
            while moment < self.first or (moment.year * 12 + moment.month - 1) % size:
                moment = _add_months(moment, 1)
            while moment <= self.last:
                out.append((moment, moment.strftime("%Y-%m")))
                moment = _add_months(moment, size)
            return out
        step = _SECONDS[unit] * size
        epoch = _dt.datetime(1970, 1, 1)
        offset = (self.first - epoch).total_seconds()
        moment = epoch + _dt.timedelta(seconds=math.ceil(offset / step) * step)
        multi_day = self.first.date() != self.last.date()
        while moment <= self.last:
            if unit == "s":
                label = moment.strftime("%H:%M:%S")
            elif unit in ("min", "h"):
                label = moment.strftime("%m-%d %H:%M" if multi_day and moment.hour == 0 and moment.minute == 0
                                        else "%H:%M")
            else:
                label = moment.strftime("%Y-%m-%d")
            out.append((moment, label))
            moment += _dt.timedelta(seconds=step)
        return out


# ---------------------------------------------------------------------------------------------- elements


def attrs(values: Mapping[str, object | None]) -> str:
    """`` key="value"`` pairs (escaped; floats via :func:`num`; ``None`` values left out)."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        text = num(value) if isinstance(value, float) else str(value)
        parts.append(f' {key.replace("_", "-")}="{esc(text)}"')
    return "".join(parts)


def element(tag: str, values: Mapping[str, object | None], body: str = "", title: str | None = None) -> str:
    """One SVG element; ``title`` becomes a ``<title>`` child (the browser's tooltip), escaped; ``body`` is
    inserted as is (already markup)."""
    inner = (f"<title>{esc(title)}</title>" if title else "") + body
    if not inner:
        return f"<{tag}{attrs(values)}/>"
    return f"<{tag}{attrs(values)}>{inner}</{tag}>"


def text(x: float, y: float, content: str, *, anchor: str = "start", cls: str | None = None,
         size: float | None = None, fill: str | None = None, rotate: float | None = None,
         title: str | None = None) -> str:
    """A ``<text>`` element; ``content`` is escaped."""
    transform = f"rotate({num(rotate)} {num(x)} {num(y)})" if rotate else None
    return element("text", {"x": float(x), "y": float(y), "text_anchor": anchor, "class": cls,
                            "font_size": None if size is None else float(size), "fill": fill,
                            "transform": transform}, esc(content), title)


def line(x1: float, y1: float, x2: float, y2: float, *, stroke: str = "#999", width: float = 1.0,
         dash: str | None = None, cls: str | None = None, title: str | None = None,
         opacity: float | None = None) -> str:
    """A ``<line>``."""
    return element("line", {"x1": float(x1), "y1": float(y1), "x2": float(x2), "y2": float(y2),
                            "stroke": stroke, "stroke_width": float(width), "stroke_dasharray": dash,
                            "class": cls, "opacity": None if opacity is None else float(opacity)}, title=title)


def rect(x: float, y: float, width: float, height: float, *, fill: str, cls: str | None = None,
         title: str | None = None, stroke: str | None = None, stroke_width: float | None = None,
         opacity: float | None = None, rx: float | None = None, data: Mapping[str, str] | None = None) -> str:
    """A ``<rect>`` (negative sizes are drawn as 0); ``data`` adds ``data-*`` attributes."""
    values: dict[str, object | None] = {
        "x": float(x), "y": float(y), "width": float(max(width, 0.0)), "height": float(max(height, 0.0)),
        "fill": fill, "stroke": stroke, "stroke_width": None if stroke_width is None else float(stroke_width),
        "opacity": None if opacity is None else float(opacity), "rx": None if rx is None else float(rx),
        "class": cls}
    values.update({f"data-{k}": v for k, v in (data or {}).items()})
    return element("rect", values, title=title)


SHAPES = ("circle", "triangle", "square", "diamond")
"""Marker shapes :func:`marker` draws."""


def marker_path(shape: str, x: float, y: float, size: float) -> str:
    """Path data of a marker of ``shape`` centred on ``(x, y)`` inside a ``size`` box.

    Raises:
        ValueError: unknown shape.
    """
    r = size / 2
    if shape == "circle":
        return (f"M{num(x - r)} {num(y)}a{num(r)} {num(r)} 0 1 0 {num(2 * r)} 0"
                f"a{num(r)} {num(r)} 0 1 0 {num(-2 * r)} 0Z")
    if shape == "triangle":
        return f"M{num(x)} {num(y - r)}L{num(x + r)} {num(y + r * 0.8)}L{num(x - r)} {num(y + r * 0.8)}Z"
    if shape == "square":
        s = r * 0.85
        return f"M{num(x - s)} {num(y - s)}h{num(2 * s)}v{num(2 * s)}h{num(-2 * s)}Z"
    if shape == "diamond":
        return f"M{num(x)} {num(y - r)}L{num(x + r)} {num(y)}L{num(x)} {num(y + r)}L{num(x - r)} {num(y)}Z"
    raise ValueError(f"unknown marker shape {shape!r}; expected one of {', '.join(SHAPES)}")


def marker(shape: str, x: float, y: float, size: float, *, fill: str, stroke: str, hollow: bool = False,
           opacity: float = 1.0, dash: str | None = None, cls: str | None = None, title: str | None = None,
           data: Mapping[str, str] | None = None) -> str:
    """A marker ``<path>``: filled with ``fill`` (or white when ``hollow``) and outlined with ``stroke``;
    ``data`` adds ``data-*`` attributes (the tests count marks by class and data)."""
    values: dict[str, object | None] = {
        "d": marker_path(shape, x, y, size), "fill": "#fff" if hollow else fill, "stroke": stroke,
        "stroke_width": 1.6 if hollow else 1.0, "stroke_dasharray": dash,
        "opacity": float(opacity) if opacity < 1 else None, "class": cls}
    values.update({f"data-{k}": v for k, v in (data or {}).items()})
    return element("path", values, title=title)


def svg(width: float, height: float, body: str, label: str, cls: str = "chart") -> str:
    """An inline ``<svg>`` with a ``viewBox`` of ``width`` x ``height`` (it scales to the page width), a
    ``role="img"`` and an ``aria-label``."""
    return (f'<svg viewBox="0 0 {num(width)} {num(height)}" '
            f'width="{num(width)}" height="{num(height)}" class="{esc(cls)}" role="img" '
            f'aria-label="{esc(label)}" preserveAspectRatio="xMinYMin meet">{body}</svg>')


def swatch(shape: str, fill: str, stroke: str, *, hollow: bool = False, opacity: float = 1.0,
           dash: str | None = None) -> str:
    """A 14x14 inline SVG showing one marker (for HTML legends)."""
    return svg(14, 14, marker(shape, 7, 7, 11, fill=fill, stroke=stroke, hollow=hollow, opacity=opacity,
                              dash=dash), shape, cls="swatch")


def line_swatch(stroke: str, dash: str | None, width: float = 2.0) -> str:
    """A 22x14 inline SVG showing a line style (for HTML legends)."""
    return svg(22, 14, line(1, 7, 21, 7, stroke=stroke, width=width, dash=dash), "line", cls="swatch")


def sequential_color(share: float) -> str:
    """A colour of a light-to-dark blue ramp for ``share`` in ``[0, 1]`` (clamped)."""
    share = min(max(share, 0.0), 1.0)
    light, dark = (222, 235, 247), (8, 69, 148)
    rgb = [round(a + (b - a) * share) for a, b in zip(light, dark, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def truncate(value: str, limit: int) -> str:
    """``value`` shortened to ``limit`` characters with a middle ellipsis (labels keep both ends)."""
    if len(value) <= limit:
        return value
    keep = max(limit - 1, 2)
    head = (keep + 1) // 2
    return value[:head] + "…" + value[len(value) - (keep - head):]
