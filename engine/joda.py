"""Time zones and date patterns as Java and Joda-Time resolve and format them (``DateTimeZone``,
``DateTimeFormat``), for Hudi's timestamp-based key generator."""

from __future__ import annotations

import functools
import logging
import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import ConfigError, InvalidRecordKey

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------------------
# Time zones as Java/Joda resolve them
# ---------------------------------------------------------------------------------------------------------

# Joda DateTimeZone.forTimeZone converts these old three-letter JDK ids (DateTimeZone.ZONE_ID_CONVERSION).
_JODA_OLD_IDS = {
    "GMT": "UTC",
    "UT": "UTC",
    "UTC": "UTC",
    "WET": "WET",
    "CET": "CET",
    "MET": "CET",
    "ECT": "CET",
    "EET": "EET",
    "MIT": "Pacific/Apia",
    "HST": "Pacific/Honolulu",
    "AST": "America/Anchorage",
    "PST": "America/Los_Angeles",
    "MST": "America/Denver",
    "PNT": "America/Phoenix",
    "CST": "America/Chicago",
    "EST": "America/New_York",
    "IET": "America/Indiana/Indianapolis",
    "PRT": "America/Puerto_Rico",
    "CNT": "America/St_Johns",
    "AGT": "America/Argentina/Buenos_Aires",
    "BET": "America/Sao_Paulo",
    "ART": "Africa/Cairo",
    "CAT": "Africa/Harare",
    "EAT": "Africa/Addis_Ababa",
    "NET": "Asia/Yerevan",
    "PLT": "Asia/Karachi",
    "IST": "Asia/Kolkata",
    "BST": "Asia/Dhaka",
    "VST": "Asia/Ho_Chi_Minh",
    "CTT": "Asia/Shanghai",
    "JST": "Asia/Tokyo",
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "SST": "Pacific/Guadalcanal",
    "NST": "Pacific/Auckland",
}
# Zone names Joda's 'z' parser understands (DateTimeUtils.getDefaultTimeZoneNames).
_JODA_PARSE_NAMES = {
    "UT": "UTC",
    "UTC": "UTC",
    "GMT": "UTC",
    "EST": "America/New_York",
    "EDT": "America/New_York",
    "CST": "America/Chicago",
    "CDT": "America/Chicago",
    "MST": "America/Denver",
    "MDT": "America/Denver",
    "PST": "America/Los_Angeles",
    "PDT": "America/Los_Angeles",
}
_GMT_CUSTOM_ID = re.compile(r"^GMT([+-])(\d{1,2})(?::?(\d{2}))?$")


@dataclass(frozen=True)
class Zone:
    """A resolved time zone: ``tz`` for Python arithmetic, ``arrow_name`` for ``pyarrow`` timestamp types,
    ``joda_id`` as Joda prints it (``ZZZ``)."""

    tz: tzinfo
    arrow_name: str
    joda_id: str

    @staticmethod
    def utc() -> Zone:
        """The UTC zone."""
        return Zone(UTC, "UTC", "UTC")

    @staticmethod
    def fixed(offset_minutes: int) -> Zone:
        """A fixed-offset zone (Joda ``forOffsetMillis``); offset 0 is UTC."""
        if offset_minutes == 0:
            return Zone.utc()
        sign = "+" if offset_minutes > 0 else "-"
        hh, mm = divmod(abs(offset_minutes), 60)
        name = f"{sign}{hh:02d}:{mm:02d}"
        return Zone(timezone(timedelta(minutes=offset_minutes)), name, name)


@functools.lru_cache(maxsize=256)
def resolve_java_zone(zone_id: str) -> Zone:
    """Resolve a zone id the way ``DateTimeZone.forTimeZone(TimeZone.getTimeZone(id))`` does.

    Accepts IANA names, ``UTC``/``GMT``, Java custom ids ``GMT+8`` / ``GMT+08:00`` / ``GMT-0530`` and the old
    three-letter JDK ids (``PST`` -> America/Los_Angeles, ``EST`` -> America/New_York, ...). Java maps an
    unknown id silently to GMT; so do we, with a warning.
    """
    zid = zone_id.strip()
    if zid in _JODA_OLD_IDS:
        zid = _JODA_OLD_IDS[zid]
    if zid in ("UTC", "Etc/UTC", "Etc/GMT", "Z", "Zulu", "Etc/Zulu", "Universal", "Etc/Universal"):
        return Zone.utc()
    m = _GMT_CUSTOM_ID.match(zid)
    if m:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours <= 23 and minutes <= 59:
            total = hours * 60 + minutes
            return Zone.fixed(total if m.group(1) == "+" else -total)
    try:
        info = zoneinfo.ZoneInfo(zid)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        logger.warning("unknown time zone id %r: using GMT like java.util.TimeZone.getTimeZone", zone_id)
        return Zone.utc()
    return Zone(info, zid, zid)


# ---------------------------------------------------------------------------------------------------------
# Joda-Time DateTimeFormat patterns
# ---------------------------------------------------------------------------------------------------------

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_JODA_LETTERS = frozenset("GCYxwyeEDMdahKkHmsSzZ")
_SUPPORTED_LETTERS = frozenset("yYMdDHhKkmsSaEZz")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MILLIS = -62135596800000  # 0001-01-01T00:00:00Z
_MAX_MILLIS = 253402300799999  # 9999-12-31T23:59:59.999Z
# pyarrow's strftime in region zones is only trusted between 1900 and 2037 (no DST rules after 2037).
_ARROW_TZ_SAFE_MIN = -2208988800000  # 1900-01-01T00:00:00Z
_ARROW_TZ_SAFE_MAX = 2145916800000  # 2038-01-01T00:00:00Z


@dataclass(frozen=True)
class _Token:
    letter: str  # "" for literal text
    count: int
    text: str = ""

    @property
    def numeric(self) -> bool:
        if not self.letter:
            return False
        return self.letter in "yYdDHhKkmsS" or (self.letter == "M" and self.count <= 2)


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            tokens.append(_Token("", 0, "".join(literal)))
            literal.clear()

    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            j = i
            while j < n and pattern[j] == c:
                j += 1
            flush()
            tokens.append(_Token(c, j - i))
            i = j
        elif c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                literal.append("'")
                i += 2
                continue
            j = i + 1
            while j < n:
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        literal.append("'")
                        j += 2
                        continue
                    break
                literal.append(pattern[j])
                j += 1
            if j >= n:
                raise ConfigError(f"date pattern {pattern!r}: unterminated quote")
            i = j + 1
        else:
            literal.append(c)
            i += 1
    flush()
    return tokens


_STRFTIME = {
    ("y", 4): "%Y",
    ("Y", 4): "%Y",
    ("y", 2): "%y",
    ("Y", 2): "%y",
    ("M", 2): "%m",
    ("d", 2): "%d",
    ("H", 2): "%H",
    ("m", 2): "%M",
    ("s", 2): "%S",
    ("D", 3): "%j",
}


class JodaDateFormat:
    """A Joda-Time ``DateTimeFormat.forPattern`` pattern: format epoch milliseconds, parse strings.

    Supported letters (Joda semantics, English names):
    ``y``/``Y`` year (``yy`` = two-digit year, parsed with Joda's pivot: current year - 30 ± 50),
    ``M`` month (``M``/``MM`` number, ``MMM`` ``Apr``, ``MMMM`` ``April``), ``d`` day of month, ``D`` day of
    year, ``H`` hour 0-23, ``k`` 1-24, ``K`` 0-11, ``h`` 1-12, ``a`` AM/PM, ``m`` minute, ``s`` second,
    ``S`` fraction of second (millisecond precision; exactly as many digits as letters, truncated or
    zero-filled: ``S`` of .120 s is ``1``, ``SSSS`` is ``1200``), ``E`` day-of-week text (ignored when
    parsing), ``Z`` offset (``Z`` ``+0800``, ``ZZ`` ``+08:00``, ``ZZZ`` zone id; parsing also accepts ``Z``
    for UTC), ``z`` short zone name (``UTC``,
    ``PST``; printed from the tz database, which differs from Java's names for a few zones such as
    Australia/Lord_Howe and before ~1900; parsing knows UT/UTC/GMT/EST/EDT/CST/CDT/MST/MDT/PST/PDT),
    ``'text'`` quoting and ``''``. Numeric fields parse like Joda (``MM`` takes 1-2 digits, ``SSS`` at
    most 3, a year followed by another number takes exactly its letter count); a local time inside a DST
    gap is rejected like Joda's ``IllegalInstantException``. Years are limited to 1-9999.
    Verified against joda-time 2.14 on ~6k print and ~900 parse cases.

    Unsupported (raise :class:`ConfigError`): ``G`` era, ``C`` century, ``x`` week-year, ``w`` week,
    ``e`` day-of-week number, ``zzzz`` long zone names, and every letter Joda itself rejects, notably
    ``X``, ``u``, ``L``, ``V``, ``O`` (``SimpleDateFormat``/``java.time`` letters; Hudi would fail on them
    too).

    Args:
        pattern: the Joda pattern, e.g. ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``.

    Raises:
        ConfigError: empty pattern, unterminated quote, or an unsupported letter.
    """

    def __init__(self, pattern: str) -> None:
        if not pattern:
            raise ConfigError("date pattern must not be empty")
        self.pattern = pattern
        self.tokens = _tokenize(pattern)
        for tok in self.tokens:
            if not tok.letter:
                continue
            if tok.letter not in _JODA_LETTERS:
                raise ConfigError(
                    f"date pattern {pattern!r}: letter {tok.letter!r} is not a Joda-Time pattern "
                    "letter (Hudi's TimestampBasedKeyGenerator uses Joda DateTimeFormat)"
                )
            if tok.letter not in _SUPPORTED_LETTERS or (tok.letter == "z" and tok.count >= 4):
                raise ConfigError(
                    f"date pattern {pattern!r}: letter {tok.letter * tok.count!r} is not supported "
                    f"(supported: {''.join(sorted(_SUPPORTED_LETTERS))}, quotes)"
                )
        self._regex: re.Pattern[str] | None = None
        self._strftime = self._build_strftime()

    def __repr__(self) -> str:
        return f"JodaDateFormat({self.pattern!r})"

    # -- formatting ------------------------------------------------------------------------------------

    def _build_strftime(self) -> str | None:
        parts: list[str] = []
        for tok in self.tokens:
            if not tok.letter:
                parts.append(tok.text.replace("%", "%%"))
            elif (tok.letter, tok.count) in _STRFTIME:
                parts.append(_STRFTIME[(tok.letter, tok.count)])
            else:
                return None
        return "".join(parts)

    def format(self, millis: int, zone: Zone) -> str:
        """Format epoch milliseconds in ``zone``.

        Raises:
            InvalidRecordKey: the instant is outside years 1-9999.
        """
        if not _MIN_MILLIS <= millis <= _MAX_MILLIS:
            raise InvalidRecordKey(
                f"timestamp {millis} ms is outside years 1-9999 and cannot be formatted with {self.pattern!r}"
            )
        local = (_EPOCH + timedelta(milliseconds=millis)).astimezone(zone.tz)
        ms = millis % 1000
        out: list[str] = []
        for tok in self.tokens:
            out.append(tok.text if not tok.letter else self._format_field(tok, local, ms, zone))
        return "".join(out)

    @staticmethod
    def _format_field(tok: _Token, local: datetime, ms: int, zone: Zone) -> str:
        letter, count = tok.letter, tok.count
        if letter in "yY":
            return f"{local.year % 100:02d}" if count == 2 else f"{local.year:0{count}d}"
        if letter == "M":
            if count >= 4:
                return _MONTHS[local.month - 1]
            if count == 3:
                return _MONTHS[local.month - 1][:3]
            return f"{local.month:0{count}d}"
        simple = {
            "d": local.day,
            "D": local.timetuple().tm_yday,
            "H": local.hour,
            "m": local.minute,
            "s": local.second,
            "K": local.hour % 12,
            "h": (local.hour % 12) or 12,
            "k": local.hour or 24,
        }
        if letter in simple:
            return f"{simple[letter]:0{count}d}"
        if letter == "S":  # Joda appendFractionOfSecond(n, n): exactly n digits, truncated
            return f"{ms:03d}".ljust(count, "0")[:count]
        if letter == "a":
            return "AM" if local.hour < 12 else "PM"
        if letter == "E":
            name = _DAYS[local.weekday()]
            return name if count >= 4 else name[:3]
        offset = local.utcoffset() or timedelta(0)
        if letter == "Z":
            if count >= 3:
                return zone.joda_id
            seconds = int(offset.total_seconds())
            sign = "+" if seconds >= 0 else "-"
            hh, mm = divmod(abs(seconds) // 60, 60)  # Joda drops the seconds of LMT offsets
            return f"{sign}{hh:02d}:{mm:02d}" if count == 2 else f"{sign}{hh:02d}{mm:02d}"
        # 'z': short name
        if zone.joda_id == "UTC":
            return "UTC"
        if isinstance(zone.tz, timezone):
            return zone.joda_id
        return local.tzname() or zone.joda_id

    def format_many(self, millis: np.ndarray, valid: np.ndarray, zone: Zone) -> pa.Array:
        """Format an int64 array of epoch milliseconds (``valid`` = non-null mask) in ``zone``.

        Uses ``pyarrow.compute.strftime`` when every token has a strftime equivalent (``yyyy yy MM dd HH mm
        ss DDD`` and literals), else formats each distinct value in Python. Returns ``pa.string()``.

        Raises:
            InvalidRecordKey: a value is outside years 1-9999.
        """
        n = len(millis)
        if n == 0:
            return pa.array([], pa.string())
        lo = hi = 0
        if valid.any():
            vals = millis[valid]
            lo, hi = int(vals.min()), int(vals.max())
            if lo < _MIN_MILLIS or hi > _MAX_MILLIS:
                bad = lo if lo < _MIN_MILLIS else hi
                raise InvalidRecordKey(
                    f"timestamp {bad} ms is outside years 1-9999 and cannot be formatted "
                    f"with {self.pattern!r}"
                )
        if self._strftime is not None and (
            isinstance(zone.tz, timezone)
            or (not valid.any() or (lo >= _ARROW_TZ_SAFE_MIN and hi <= _ARROW_TZ_SAFE_MAX))
        ):
            secs = np.floor_divide(np.where(valid, millis, 0), 1000)
            arr = pa.array(secs, pa.timestamp("s", tz=zone.arrow_name), mask=~valid)
            return pc.strftime(arr, format=self._strftime)
        distinct, inverse = np.unique(np.where(valid, millis, 0), return_inverse=True)
        texts = pa.array([self.format(int(v), zone) for v in distinct], pa.string())
        return texts.take(pa.array(inverse.astype(np.int64), mask=~valid))

    # -- parsing ---------------------------------------------------------------------------------------

    def _build_regex(self) -> re.Pattern[str]:
        parts: list[str] = []
        for idx, tok in enumerate(self.tokens):
            if not tok.letter:
                parts.append(re.escape(tok.text))
                continue
            nxt = self.tokens[idx + 1] if idx + 1 < len(self.tokens) else None
            next_numeric = nxt is not None and nxt.numeric
            g = f"(?P<g{idx}>"
            letter, count = tok.letter, tok.count
            if letter in "yY":
                if count == 2:
                    parts.append(g + (r"\d{2})" if next_numeric else r"[-+]?\d{2,9})"))
                else:
                    parts.append(g + rf"[-+]?\d{{1,{count if next_numeric else 9}}})")
            elif letter == "M" and count >= 3:
                names = sorted(_MONTHS + [m[:3] for m in _MONTHS], key=len, reverse=True)
                parts.append(g + "(?i:" + "|".join(names) + "))")
            elif letter == "E":
                names = sorted(_DAYS + [d[:3] for d in _DAYS], key=len, reverse=True)
                parts.append(g + "(?i:" + "|".join(names) + "))")
            elif letter == "D":
                parts.append(g + r"\d{1,3})")
            elif letter == "S":
                parts.append(g + rf"\d{{1,{count}}})")
            elif letter == "a":
                parts.append(g + r"(?i:AM|PM))")
            elif letter == "Z":
                parts.append(
                    g + (r"[A-Za-z][A-Za-z0-9_/+\-]*)" if count >= 3 else r"Z|[+-]\d{2}(?::?\d{2})?)")
                )
            elif letter == "z":
                parts.append(g + r"[A-Za-z]{2,4})")
            else:
                parts.append(g + r"\d{1,2})")
        return re.compile("".join(parts), re.DOTALL)

    def parse(self, text: str, zone: Zone | None, default_zone: Zone) -> tuple[int, Zone]:
        """Parse ``text`` completely, like ``DateTimeFormatter.parseDateTime`` of a formatter that is
        ``withZone(zone)`` (``zone`` given) or ``withOffsetParsed()`` (``zone`` None).

        Returns:
            (epoch milliseconds, zone of the resulting Joda ``DateTime``): the parsed offset/zone when
            ``zone`` is None and the text carries one, else ``zone``, else ``default_zone``.

        Raises:
            ValueError: the text does not match the pattern or a field is out of range.
        """
        if self._regex is None:
            self._regex = self._build_regex()
        m = self._regex.fullmatch(text)
        if m is None:
            raise ValueError(f"Invalid format: {text!r} does not match {self.pattern!r}")
        year, month, day, doy = 1970, 1, 1, None
        hour24: int | None = None
        hour12: int | None = None
        pm: bool | None = None
        minute = second = millis = 0
        offset_min: int | None = None
        parsed_zone: Zone | None = None
        for idx, tok in enumerate(self.tokens):
            if not tok.letter:
                continue
            v = m.group(f"g{idx}")
            letter = tok.letter
            if letter in "yY":
                if tok.count == 2 and len(v) == 2 and v.isdigit():
                    pivot = datetime.now().year - 30
                    low = pivot - 50
                    year = (low // 100) * 100 + int(v)
                    if year < low:
                        year += 100
                else:
                    year = int(v)
            elif letter == "M":
                month = (
                    int(v) if tok.count <= 2 else [n.lower()[:3] for n in _MONTHS].index(v.lower()[:3]) + 1
                )
            elif letter == "d":
                day = int(v)
            elif letter == "D":
                doy = int(v)
            elif letter == "H":
                hour24 = int(v)
            elif letter == "k":
                hour24 = 0 if int(v) == 24 else int(v)
            elif letter == "K":
                hour12 = int(v)
            elif letter == "h":
                hour12 = 0 if int(v) == 12 else int(v)
            elif letter == "a":
                pm = v.upper() == "PM"
            elif letter == "m":
                minute = int(v)
            elif letter == "s":
                second = int(v)
            elif letter == "S":
                millis = int((v + "00")[:3])
            elif letter == "Z":
                if tok.count >= 3:
                    parsed_zone = resolve_java_zone(v)
                elif v == "Z":
                    offset_min = 0
                else:
                    digits = v[1:].replace(":", "")
                    total = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
                    offset_min = total if v[0] == "+" else -total
            elif letter == "z":
                if v.upper() not in _JODA_PARSE_NAMES:
                    raise ValueError(f"Invalid format: unknown zone name {v!r} in {text!r}")
                parsed_zone = resolve_java_zone(_JODA_PARSE_NAMES[v.upper()])
        if hour12 is not None:
            hour = hour12 + (12 if pm else 0)
        elif hour24 is not None:
            hour = hour24
            if pm is not None and hour < 12 and pm:
                hour += 12
        else:
            hour = 12 if pm else 0
        if doy is not None:
            local = datetime(year, 1, 1) + timedelta(days=doy - 1)
            local = local.replace(hour=hour, minute=minute, second=second)
        else:
            local = datetime(year, month, day, hour, minute, second)
        naive_ms = (local - datetime(1970, 1, 1)) // timedelta(milliseconds=1) + millis
        if offset_min is not None:
            instant = naive_ms - offset_min * 60_000
            result_zone = zone if zone is not None else Zone.fixed(offset_min)
        else:
            calc_zone = parsed_zone or zone or default_zone
            off = local.replace(tzinfo=calc_zone.tz).utcoffset() or timedelta(0)
            instant = naive_ms - off // timedelta(milliseconds=1)
            back = (_EPOCH + timedelta(milliseconds=instant)).astimezone(calc_zone.tz)
            if back.replace(tzinfo=None, microsecond=0) != local:
                raise ValueError(
                    f"Cannot parse {text!r}: Illegal instant due to time zone offset transition "
                    f"({calc_zone.joda_id})"
                )
            result_zone = zone if zone is not None else calc_zone
        return instant, result_zone
