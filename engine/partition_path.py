"""Path safety of paths built from data: partition paths, marker paths and storage writes must stay
under the table's base path.

Hudi builds a partition folder from each partition value (``KeyGenUtils.getPartitionPath``); without
``hoodie.datasource.write.partitionpath.urlencode`` a value is used as is, so ``../../x`` would walk out of
the table, ``/x`` would make an empty segment, and control characters make invalid or confusing names.
This module holds the pure checks (no Spark, no storage):

* :data:`UNSAFE_SEGMENT_REGEX`: one partition segment (``value`` or ``field=value``) that is unsafe; a
  regex both RE2 (pyarrow) and Java (Spark ``rlike``) understand, so the Python key generator and the
  Spark-expression fast path refuse exactly the same values;
* :func:`escape_leading_dot`: with urlencode on, Hudi's escaping turns ``/`` into ``%2F`` but leaves a
  value of ``.`` or ``..`` (or ``.x``, a hidden folder that listings skip) alone; its leading ``.``
  becomes ``%2E`` (decoded back by ``unescape_path_name``), so the value round-trips;
* :func:`unsafe_partition_message`: the error text (table, field, value, the setting that makes it safe);
* :func:`parent_segment`, :func:`check_relative_path`: the storage and marker defence-in-depth checks;
* :func:`nested_pair`, :func:`nested_partition_message`: two partitions one of whose folders lies inside the
  other (a value holding ``/``), which listings cannot both see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import TableConfig
from engine.errors import UnsafePath

URL_ENCODE_KEY = TableConfig.URL_ENCODE_PARTITIONING.key
"""The setting that stores any partition value safely (``%XX``-escaped)."""

UNSAFE_SEGMENT_REGEX = r"^/|//|/$|(^|/)\.|[\x00-\x1f\x7f]"
"""A partition segment that is absolute, has an empty part or a part starting with ``.`` (``.``, ``..``,
or a hidden folder that partition listings and Spark/Hive readers skip, so its rows would be written but
never read), or holds a control character. Valid for RE2 (``pyarrow.compute.match_substring_regex``),
Python ``re`` and Java regex."""

_UNSAFE_RE = re.compile(UNSAFE_SEGMENT_REGEX)
_UNSAFE_RELATIVE_RE = re.compile(r"^/|//|/$|(^|/)\.\.?(/|$)|[\x00-\x1f\x7f]")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def unsafe_reason(segment: str) -> str | None:
    """Why ``segment`` (one partition field's part of a partition path, ``/`` allowed inside) is not a safe
    relative folder path, or ``None`` when it is safe."""
    if _UNSAFE_RE.search(segment) is None:
        return None
    if _CONTROL_RE.search(segment):
        return "a control character (NUL, newline, ...), which makes an invalid or confusing file name"
    if segment.startswith("/"):
        return "a leading '/', which makes an absolute path (an empty folder name)"
    parts = segment.split("/")
    if ".." in parts:
        return "a '..' folder, which leaves the table's base path"
    if "." in parts:
        return "a '.' folder, which is not a folder of its own"
    if any(part.startswith(".") for part in parts):
        return "a folder starting with '.', which is hidden: readers would never see its rows"
    return "an empty folder name ('//' or a trailing '/')"


def first_unsafe(segments: pa.Array | pa.ChunkedArray) -> int | None:
    """Row index of the first unsafe segment of a ``pa.string()`` array (nulls are safe), or ``None``."""
    if len(segments) == 0:
        return None
    bad = pc.match_substring_regex(segments, UNSAFE_SEGMENT_REGEX).fill_null(False)
    if not pc.any(bad).as_py():
        return None
    return int(pc.index(bad, True).as_py())


def escape_leading_dot(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A leading ``.`` becomes ``%2E`` (``..`` → ``%2E.``, ``.x`` → ``%2Ex``; other values unchanged,
    nulls kept): applied to url-encoded, non-hive-style segments, where Hudi's ``escapePathName`` leaves
    ``.``/``..`` as folder names meaning "here" and "the parent", and ``.x`` as a hidden folder."""
    if len(values) == 0:
        return values
    return pc.replace_substring_regex(values, r"^\.", "%2E")


def unsafe_partition_message(table: str | None, field: str, value: object, segment: str,
                             url_encode: bool) -> str:
    """The error text for a partition value whose segment is unsafe: names the table, the partition
    field, the value (``repr``, so control characters show), what is wrong and what to do."""
    reason = unsafe_reason(segment) or "an unsafe path"
    if url_encode:
        remedy = ("change the value, or the key generator's output format, so the partition path stays a "
                  "plain relative folder")
    else:
        remedy = (f"change the value, or create the table with '{URL_ENCODE_KEY}' = 'true' (TBLPROPERTIES) "
                  "so partition values are stored escaped and read back unchanged")
    return (f"table {table or '<unnamed>'!s}: partition field '{field}' value {value!r} makes partition "
            f"path {segment!r} with {reason}; no data file was written ({URL_ENCODE_KEY}="
            f"{str(url_encode).lower()}). To store it, {remedy}")


def parent_segment(relative: str) -> bool:
    """Whether a ``/``-separated relative path has a ``..`` segment."""
    return ".." in relative.split("/")


def check_relative_path(relative: str, what: str) -> None:
    """Refuse a path relative to the table (a marker's ``<partition>/<file>``) that is absolute, has an
    empty, ``.`` or ``..`` segment, or holds a control character (names starting with ``.``, such as log
    files, are fine here).

    Raises:
        UnsafePath: naming ``what`` and the path.
    """
    if not relative or _UNSAFE_RELATIVE_RE.search(relative) is None:
        return
    reason = unsafe_reason(relative)
    if reason is not None:
        raise UnsafePath(f"{what} {relative!r} is not a safe path relative to the table: it has {reason}")


def ancestor_paths(partition_path: str) -> list[str]:
    """Proper ancestors of a relative partition path, outermost first: ``a/b/c`` → ``["a", "a/b"]``."""
    parts = [p for p in partition_path.split("/") if p]
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def nested_pair(partition_paths: Iterable[str]) -> tuple[str, str] | None:
    """``(outer, inner)`` for two of ``partition_paths`` where ``inner``'s folder lies inside ``outer``'s
    (``dt=..`` and ``dt=../x``), or ``None`` when no partition folder holds another. ``""`` (the table
    root of a non-partitioned table) is ignored."""
    paths = {p for p in partition_paths if p}
    for path in sorted(paths):
        for ancestor in ancestor_paths(path):
            if ancestor in paths:
                return ancestor, path
    return None


def nested_partition_message(table: str | None, outer: str, inner: str, new: str) -> str:
    """The error text for a partition ``new`` (one of ``outer``/``inner``) whose folder would lie inside,
    or hold, another partition's folder: names the table, both paths, why and what to do."""
    return (f"table {table or '<unnamed>'!s}: partition path {new!r} would put partition {inner!r} inside the "
            f"folder of partition {outer!r}. Partition listings stop at the first folder holding a partition "
            f"metafile (Hudi's file-system listing, hudi-rs), so readers would never see the rows of "
            f"{inner!r}; no data file was written. A partition value holding '/' makes such folders: change "
            f"the value, or create the table with '{URL_ENCODE_KEY}' = 'true' (TBLPROPERTIES) so '/' is "
            "stored escaped")
