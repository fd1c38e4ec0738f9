"""Partition value extractors and partition events for Hive sync.

Mirrors Hudi ``org.apache.hudi.hive.*PartitionValueExtractor`` (selected by class name, docs/SQL.md §3.3),
``HoodieSyncClient.getPartitionEvents`` (full and incremental) and ``PartitionEvent``. Partition paths are
relative to the table base path, ``/``-separated, exactly as stored (already Hive-escaped when the table
url-encodes partition paths); values are what goes into the metastore (unescaped when ``decode_partition``).
"""

from __future__ import annotations

import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from engine.keygen import escape_path_name, unescape_path_name
from hive_sync.errors import PartitionValueError, SyncConfigError

logger = logging.getLogger(__name__)

HUDI_HIVE_PACKAGE = "org.apache.hudi.hive."
DEFAULT_EXTRACTOR = HUDI_HIVE_PACKAGE + "MultiPartKeysValueExtractor"


class PartitionValueExtractor(ABC):
    """Base class (Hudi ``PartitionValueExtractor``): ``extract(partition_path) -> list[str]``.

    Raises :class:`PartitionValueError` naming the path when it does not have the expected form.
    """

    hudi_class: str = ""

    @abstractmethod
    def extract(self, partition_path: str) -> list[str]:
        """Partition values of one relative partition path."""

    def _bad(self, partition_path: str, form: str) -> PartitionValueError:
        return PartitionValueError(f"Partition path {partition_path!r} is not in the form {form} "
                                   f"({self.hudi_class})")


class MultiPartKeysValueExtractor(PartitionValueExtractor):
    """Default: split on ``/``; each ``k=v`` segment gives ``v``, other segments are kept; ``""`` → []."""

    hudi_class = HUDI_HIVE_PACKAGE + "MultiPartKeysValueExtractor"

    def extract(self, partition_path: str) -> list[str]:
        if partition_path == "":
            return []
        values = []
        for seg in partition_path.split("/"):
            if "=" in seg:
                parts = seg.split("=")
                # Java String.split drops trailing empty strings: "k=" has one part, "k=a=b" three.
                while parts and parts[-1] == "":
                    parts.pop()
                if len(parts) != 2:
                    raise PartitionValueError(f"Partition Field ({seg}) not in expected format in path "
                                              f"{partition_path!r} ({self.hudi_class})")
                values.append(parts[1])
            else:
                values.append(seg)
        return values


class HiveStylePartitionValueExtractor(PartitionValueExtractor):
    """A single ``key=value`` path gives ``[value]``."""

    hudi_class = HUDI_HIVE_PACKAGE + "HiveStylePartitionValueExtractor"

    def extract(self, partition_path: str) -> list[str]:
        parts = partition_path.split("=")
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise self._bad(partition_path, "partition_key=partition_value")
        return [parts[1]]


class SinglePartPartitionValueExtractor(PartitionValueExtractor):
    """The whole path is one value, ``/`` replaced by ``-`` (``202210/01/20`` → ``202210-01-20``)."""

    hudi_class = HUDI_HIVE_PACKAGE + "SinglePartPartitionValueExtractor"

    def extract(self, partition_path: str) -> list[str]:
        return [partition_path.replace("/", "-")]


class _SlashEncodedDateExtractor(PartitionValueExtractor):
    """``yyyy/mm/dd[/hh]`` segments (each optionally ``k=`` prefixed) → one zero-padded value."""

    n_parts = 3
    form = "yyyy/mm/dd"

    def _ints(self, partition_path: str) -> list[int]:
        splits = partition_path.split("/")
        if len(splits) != self.n_parts:
            raise self._bad(partition_path, self.form)
        try:
            return [int(s.split("=")[1] if "=" in s else s) for s in splits]
        except (ValueError, IndexError) as e:
            raise self._bad(partition_path, self.form) from e

    def extract(self, partition_path: str) -> list[str]:
        y, m, d, *rest = self._ints(partition_path)
        if not (1 <= m <= 12 and 1 <= d <= 31 and all(0 <= h <= 23 for h in rest)):
            raise self._bad(partition_path, self.form)
        return ["-".join([f"{y:04d}", f"{m:02d}", f"{d:02d}", *(f"{h:02d}" for h in rest)])]


class SlashEncodedDayPartitionValueExtractor(_SlashEncodedDateExtractor):
    """``yyyy/mm/dd`` → ``yyyy-MM-dd``."""

    hudi_class = HUDI_HIVE_PACKAGE + "SlashEncodedDayPartitionValueExtractor"


class SlashEncodedHourPartitionValueExtractor(_SlashEncodedDateExtractor):
    """``yyyy/mm/dd/hh`` → ``yyyy-MM-dd-HH``."""

    hudi_class = HUDI_HIVE_PACKAGE + "SlashEncodedHourPartitionValueExtractor"
    n_parts = 4
    form = "yyyy/mm/dd/hh"


class SlashEncodedMonthPartitionValueExtractor(PartitionValueExtractor):
    """``yyyy/mm`` → ``yyyy-mm`` (segments joined as they are, as Hudi does)."""

    hudi_class = HUDI_HIVE_PACKAGE + "SlashEncodedMonthPartitionValueExtractor"

    def extract(self, partition_path: str) -> list[str]:
        splits = partition_path.split("/")
        if len(splits) != 2:
            raise self._bad(partition_path, "yyyy/mm")
        return [f"{splits[0]}-{splits[1]}"]


class SlashEncodedYearMonthPartitionValueExtractor(SlashEncodedMonthPartitionValueExtractor):
    """Same behaviour as the month extractor (``yyyy/mm`` → ``yyyy-mm``)."""

    hudi_class = HUDI_HIVE_PACKAGE + "SlashEncodedYearMonthPartitionValueExtractor"


class NonPartitionedExtractor(PartitionValueExtractor):
    """Non-partitioned tables: always ``[]``."""

    hudi_class = HUDI_HIVE_PACKAGE + "NonPartitionedExtractor"

    def extract(self, partition_path: str) -> list[str]:
        return []


EXTRACTORS: dict[str, type[PartitionValueExtractor]] = {
    cls.hudi_class: cls for cls in (
        MultiPartKeysValueExtractor, HiveStylePartitionValueExtractor, SinglePartPartitionValueExtractor,
        SlashEncodedDayPartitionValueExtractor, SlashEncodedHourPartitionValueExtractor,
        SlashEncodedMonthPartitionValueExtractor, SlashEncodedYearMonthPartitionValueExtractor,
        NonPartitionedExtractor)
}
"""Hudi class name → extractor class."""


def extractor_for(class_name: str | None) -> PartitionValueExtractor:
    """Extractor for ``hoodie.datasource.hive_sync.partition_extractor_class`` (full Hudi name or simple
    name; ``None``/``""`` → MultiPartKeysValueExtractor). Raises :class:`SyncConfigError` when unknown."""
    name = (class_name or DEFAULT_EXTRACTOR).strip()
    cls = EXTRACTORS.get(name) or EXTRACTORS.get(HUDI_HIVE_PACKAGE + name)
    if cls is None:
        raise SyncConfigError(f"unknown partition value extractor {name!r}; known: {sorted(EXTRACTORS)}")
    return cls()


def infer_extractor_class(partition_fields: Sequence[str], hive_style: bool) -> str:
    """Hudi's inference when the extractor is unset: 0 fields → NonPartitioned, 1 field → HiveStyle (hive
    style paths) or SinglePart, more → MultiPartKeys."""
    if not partition_fields:
        return NonPartitionedExtractor.hudi_class
    if len(partition_fields) == 1:
        return (HiveStylePartitionValueExtractor if hive_style else SinglePartPartitionValueExtractor).hudi_class
    return MultiPartKeysValueExtractor.hudi_class


# ---- path safety and locations ---------------------------------------------------------------------


def check_partition_path(partition_path: str) -> str:
    """Return ``partition_path`` when it stays inside the table base path, else raise
    :class:`PartitionValueError`: absolute paths, URIs (``scheme:``), ``.``/``..``/empty segments,
    backslashes and NUL are rejected. ``""`` (non-partitioned) is accepted."""
    if partition_path == "":
        return partition_path
    if partition_path.startswith("/") or "\\" in partition_path or "\x00" in partition_path:
        raise PartitionValueError(f"partition path {partition_path!r} is absolute or malformed; it must be "
                                  "relative to the table base path")
    if urlparse(partition_path).scheme and ":" in partition_path.split("/")[0]:
        raise PartitionValueError(f"partition path {partition_path!r} is a URI, not a relative path")
    for seg in partition_path.split("/"):
        if seg in ("", ".", ".."):
            raise PartitionValueError(f"partition path {partition_path!r} has a {seg or 'empty'!r} segment "
                                      "and could escape the table base path")
    return partition_path


def check_partition_value(value: str, partition_path: str = "") -> str:
    """Return ``value`` unless it is ``.``/``..`` or contains NUL (it would resolve outside the table when
    Hive derives a location from it); raises :class:`PartitionValueError` naming the path."""
    if value in (".", "..") or "\x00" in value:
        raise PartitionValueError(f"partition value {value!r} (path {partition_path!r}) is not allowed")
    return value


def partition_location(base_path: str, partition_path: str) -> str:
    """``<base>/<partition>`` (``base`` for ``""``), after :func:`check_partition_path`
    (Hudi ``FSUtils.getPartitionPath``)."""
    check_partition_path(partition_path)
    base = base_path.rstrip("/")
    if partition_path == "":
        return base or "/"
    return f"{base}/{partition_path}"


def path_without_scheme(path: str) -> str:
    """Hadoop ``Path.getPathWithoutSchemeAndAuthority(...).toUri().getPath()``: ``file:/a/b/`` → ``/a/b``."""
    parsed = urlparse(path)
    p = parsed.path if parsed.scheme and len(parsed.scheme) > 1 else path
    return p.rstrip("/") or "/"


def partition_values(partition_path: str, extractor: PartitionValueExtractor,
                     partition_fields: Sequence[str] = (), decode_partition: bool = False) -> list[str]:
    """Values of ``partition_path`` (validated) via ``extractor``, ``%XX``-unescaped when ``decode_partition``
    (``PartitionPathEncodeUtils.unescapePathName``). When ``partition_fields`` is given and the extractor
    returns values, their count must match ("Partition key parts ... does not match ...")."""
    check_partition_path(partition_path)
    values = extractor.extract(partition_path)
    if decode_partition:
        values = [unescape_path_name(v) for v in values]
    if partition_fields and values and len(values) != len(partition_fields):
        raise PartitionValueError(f"Partition key parts {list(partition_fields)} does not match with partition "
                                  f"values {values} of path {partition_path!r}")
    return [check_partition_value(v, partition_path) for v in values]


def hive_partition_name(keys: Sequence[str], values: Sequence[str]) -> str:
    """Hive ``Warehouse.makePartName``: ``k1=v1/k2=v2`` with keys and values escaped
    (``FileUtils.escapePathName``; empty value → ``__HIVE_DEFAULT_PARTITION__``). Raises
    :class:`PartitionValueError` when the counts differ."""
    if len(keys) != len(values):
        raise PartitionValueError(f"Partition key parts {list(keys)} does not match with partition values "
                                  f"{list(values)}")
    return "/".join(f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in zip(keys, values, strict=True))


def parse_hive_partition_name(name: str) -> list[str]:
    """Inverse of :func:`hive_partition_name` (``Warehouse.makeValsFromName``): unescaped values."""
    values = []
    for seg in name.split("/"):
        if "=" not in seg:
            raise PartitionValueError(f"invalid Hive partition name {name!r}")
        values.append(unescape_path_name(seg.split("=", 1)[1]))
    return values


# ---- partition events -------------------------------------------------------------------------------


class PartitionEventType(enum.Enum):
    """Hudi ``PartitionEvent.PartitionEventType``."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    DROP = "DROP"


@dataclass(frozen=True)
class PartitionEvent:
    """One metastore change: ``values`` (metastore partition values), ``partition_path`` (relative storage
    path; None for a DROP of a metastore partition whose location is outside the table) and ``location``
    (full path the partition must point to; for DROP the location it had in the metastore)."""

    type: PartitionEventType
    values: tuple[str, ...]
    partition_path: str | None
    location: str | None


def _relative(base_path: str, location: str) -> str | None:
    base = path_without_scheme(base_path)
    loc = path_without_scheme(location)
    if loc == base:
        return ""
    prefix = base.rstrip("/") + "/"
    return loc[len(prefix):] if loc.startswith(prefix) else None


def _storage_event(partition_path: str, base_path: str, metastore: Mapping[tuple[str, ...], str],
                   extractor: PartitionValueExtractor, partition_fields: Sequence[str],
                   decode_partition: bool) -> PartitionEvent | None:
    values = tuple(partition_values(partition_path, extractor, partition_fields, decode_partition))
    if not values:
        return None
    location = partition_location(base_path, partition_path)
    if values not in metastore:
        return PartitionEvent(PartitionEventType.ADD, values, partition_path, location)
    if path_without_scheme(metastore[values]) != path_without_scheme(location):
        return PartitionEvent(PartitionEventType.UPDATE, values, partition_path, location)
    return None


def full_sync_events(storage_partitions: Iterable[str], metastore_partitions: Mapping[tuple[str, ...], str],
                     base_path: str, extractor: PartitionValueExtractor,
                     partition_fields: Sequence[str] = (), decode_partition: bool = False) -> list[PartitionEvent]:
    """Events of a full sync (Hudi ``getPartitionEvents(allInMetastore, allOnStorage)``).

    ``storage_partitions``: every relative partition path on storage; ``metastore_partitions``:
    ``{values: location}`` of every metastore partition. ADD for storage-only values, UPDATE when the
    locations differ (scheme/authority ignored), DROP for metastore-only values. Order: storage order, then
    drops in metastore order. Raises :class:`PartitionValueError` for unsafe/malformed storage paths.
    """
    events: list[PartitionEvent] = []
    remaining = dict(metastore_partitions)
    for path in storage_partitions:
        event = _storage_event(path, base_path, metastore_partitions, extractor, partition_fields,
                               decode_partition)
        if event is not None:
            events.append(event)
        values = tuple(partition_values(path, extractor, partition_fields, decode_partition))
        remaining.pop(values, None)
    for values, location in remaining.items():
        rel = _relative(base_path, location)
        if rel is None:
            logger.warning("metastore partition %s has location %s outside %s; dropping it by values",
                           list(values), location, base_path)
        events.append(PartitionEvent(PartitionEventType.DROP, tuple(values), rel, location))
    return events


def incremental_sync_events(written_partitions: Iterable[str], dropped_partitions: Iterable[str],
                            metastore_partitions: Mapping[tuple[str, ...], str], base_path: str,
                            extractor: PartitionValueExtractor, partition_fields: Sequence[str] = (),
                            decode_partition: bool = False) -> list[PartitionEvent]:
    """Events of an incremental sync (Hudi ``getPartitionEvents(inMetastore, written, dropped)``).

    ``written_partitions``: partitions touched by commits since the last sync; ``dropped_partitions``:
    partitions deleted since (``delete_partition`` replacecommits); ``metastore_partitions``: the metastore
    entries that were fetched (``{values: location}``). A dropped partition yields DROP only when it is
    present in the metastore (apache/hudi#13794) and never ADD/UPDATE; other written partitions yield
    ADD/UPDATE as in :func:`full_sync_events`. No event for partitions that were not written or dropped.
    """
    dropped = list(dict.fromkeys(dropped_partitions))
    dropped_set = set(dropped)
    events: list[PartitionEvent] = []
    for path in dict.fromkeys(written_partitions):
        if path in dropped_set:
            continue
        event = _storage_event(path, base_path, metastore_partitions, extractor, partition_fields,
                               decode_partition)
        if event is not None:
            events.append(event)
    for path in dropped:
        values = tuple(partition_values(path, extractor, partition_fields, decode_partition))
        if values and values in metastore_partitions:
            events.append(PartitionEvent(PartitionEventType.DROP, values, path, metastore_partitions[values]))
    return events
