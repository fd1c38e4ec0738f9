"""Table config of Hudi 1.x tables (table versions 8 and 9, Hudi ``HoodieTableConfig`` of 1.x), read only.

Hudi 1.x stores some settings under new keys. :func:`effective_properties` derives, from those, the
version-6 keys the rest of the engine reads, so readers need no version checks:

=====================================  ========================================================================
1.x key                                version-6 key it fills (when that key is unset or, for the merge mode,
                                       always)
=====================================  ========================================================================
``hoodie.table.keygenerator.type``     ``hoodie.table.keygenerator.class`` (``KeyGeneratorType`` → class)
``hoodie.table.ordering.fields`` (v9)  ``hoodie.table.precombine.field`` (one field; several are refused)
``hoodie.record.merge.mode``           ``hoodie.compaction.payload.class``: ``COMMIT_TIME_ORDERING`` →
                                       ``OverwriteWithLatestAvroPayload``, ``EVENT_TIME_ORDERING`` →
                                       ``DefaultHoodieRecordPayload`` (Hudi 1.x ``CommitTimeOrderingMerger`` /
                                       ``EventTimeRecordMerger`` keep what these payloads keep); ``CUSTOM``
                                       keeps the stored payload class, which the merge rules then accept or
                                       refuse (:func:`engine.payloads.payload_rules`)
=====================================  ========================================================================

Partition fields may carry key generator type suffixes (``ts:TIMESTAMP``); :attr:`engine.table.Table.
partition_fields` strips them as for version 6 custom key generators.

Base files other than parquet (version 9 ``LANCE``) are refused (:func:`check_readable`).
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.config import TableConfig
from engine.errors import ConfigError, UnsupportedTable
from engine.keygen.spec import class_of_type
from engine.payloads import DEFAULT, OVERWRITE_WITH_LATEST

COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
CUSTOM = "CUSTOM"

_MODE_PAYLOADS = {COMMIT_TIME_ORDERING: OVERWRITE_WITH_LATEST, EVENT_TIME_ORDERING: DEFAULT}


def _get(props: Mapping[str, str], key: str) -> str:
    return (props.get(key) or "").strip()


def write_refusal(where: str, version: int) -> UnsupportedTable:
    """The error every change to a Hudi 1.x table raises (writes, table services, ALTER, writing procedures)."""
    return UnsupportedTable(f"table {where} was written by Hudi 1.x (table version {version}); this engine "
                            "writes table version 6 only")


def check_readable(props: Mapping[str, str], where: str, version: int) -> None:
    """Refuse Hudi 1.x tables this engine cannot read.

    Raises:
        UnsupportedTable: base files in a format other than parquet (``hoodie.table.base.file.format``, e.g.
            ``LANCE``).
    """
    base_format = _get(props, TableConfig.BASE_FILE_FORMAT.key).upper() or "PARQUET"
    if base_format != "PARQUET":
        raise UnsupportedTable(f"table {where} (table version {version}) stores its base files as {base_format} "
                               f"('{TableConfig.BASE_FILE_FORMAT.key}'); this engine reads PARQUET base files "
                               "only")


def effective_properties(props: Mapping[str, str], where: str) -> dict[str, str]:
    """``props`` of a Hudi 1.x table plus the version-6 keys derived from its 1.x keys (module doc).

    Raises:
        UnsupportedTable: several ordering fields, an unknown merge mode, or an unknown key generator type.
    """
    out = dict(props)
    keygen_type = _get(props, TableConfig.KEYGEN_TYPE.key)
    if keygen_type and not _get(props, TableConfig.KEYGEN_CLASS.key):
        try:
            out[TableConfig.KEYGEN_CLASS.key] = class_of_type(keygen_type)
        except ConfigError as exc:
            raise UnsupportedTable(f"table {where}: '{TableConfig.KEYGEN_TYPE.key}': {exc}") from None
    ordering = [f.strip() for f in _get(props, TableConfig.ORDERING_FIELDS.key).split(",") if f.strip()]
    if len(ordering) > 1:
        raise UnsupportedTable(f"table {where} orders records by several fields {ordering} "
                               f"('{TableConfig.ORDERING_FIELDS.key}'); this engine merges by one ordering field")
    if ordering and not _get(props, TableConfig.PRECOMBINE_FIELD.key):
        out[TableConfig.PRECOMBINE_FIELD.key] = ordering[0]
    mode = _get(props, TableConfig.RECORD_MERGE_MODE.key).upper()
    if mode in _MODE_PAYLOADS:
        out[TableConfig.PAYLOAD_CLASS.key] = _MODE_PAYLOADS[mode]
    elif mode and mode != CUSTOM:
        raise UnsupportedTable(f"table {where} has merge mode {mode!r} ('{TableConfig.RECORD_MERGE_MODE.key}'); "
                               f"expected {COMMIT_TIME_ORDERING}, {EVENT_TIME_ORDERING} or {CUSTOM}")
    return out
