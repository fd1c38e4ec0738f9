"""Change data capture (CDC) on disk: the supplemental logging modes, the schema of CDC log records and the
names of CDC log files (Hudi ``HoodieCDCUtils``, ``HoodieCDCSupplementalLoggingMode``, ``HoodieCDCOperation``).

A table with ``hoodie.table.cdc.enabled=true`` gets, for every file group a write *rewrites* (a merge of
updates, deletes or inserts into an existing base file), a CDC log file next to the new base file:
``.<fileId>_<instant>.log.1_<writeToken>.cdc``, holding ``CDC_DATA_BLOCK`` blocks (the Avro data block
layout) whose records follow :func:`cdc_avro_schema`. What a record carries depends on
``hoodie.table.cdc.supplemental.logging.mode``:

* ``OP_KEY_ONLY``: ``op`` and ``record_key`` (readers look the images up in the file slices);
* ``DATA_BEFORE``: ``op``, ``record_key`` and the ``before`` image;
* ``DATA_BEFORE_AFTER`` (Hudi's default): ``op``, ``ts_ms`` (the instant) and both images.

Images are the table's data columns (no ``_hoodie_*`` meta columns). New file groups and merge-on-read log
appends get no CDC log: readers infer their changes from the base or log file (:mod:`engine.read.cdc`).
"""

from __future__ import annotations

import copy
from enum import Enum
from typing import Any

from engine.errors import ConfigError
from engine.formats.avro_schema import META_FIELDS

CDC_LOGFILE_SUFFIX = ".cdc"
"""Suffix of CDC log file names (``HoodieCDCUtils.CDC_LOGFILE_SUFFIX``)."""

CDC_OPERATION_TYPE = "op"
CDC_COMMIT_TIMESTAMP = "ts_ms"
CDC_BEFORE_IMAGE = "before"
CDC_AFTER_IMAGE = "after"
CDC_RECORD_KEY = "record_key"
CDC_COLUMNS = (CDC_OPERATION_TYPE, CDC_COMMIT_TIMESTAMP, CDC_BEFORE_IMAGE, CDC_AFTER_IMAGE)
"""Columns of a CDC query (Hudi ``CDCRelation.FULL_CDC_SPARK_SCHEMA``), all strings."""

INSERT, UPDATE, DELETE = "i", "u", "d"
"""``HoodieCDCOperation`` values of the ``op`` column."""

_OP_KEY_ONLY_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "Record",
    "fields": [{"name": CDC_OPERATION_TYPE, "type": ["string", "null"]},
               {"name": CDC_RECORD_KEY, "type": ["string", "null"]}],
}


class SupplementalLoggingMode(Enum):
    """``hoodie.table.cdc.supplemental.logging.mode`` (Hudi ``HoodieCDCSupplementalLoggingMode``)."""

    OP_KEY_ONLY = "OP_KEY_ONLY"
    DATA_BEFORE = "DATA_BEFORE"
    DATA_BEFORE_AFTER = "DATA_BEFORE_AFTER"

    @staticmethod
    def parse(value: str | None, table: str = "") -> SupplementalLoggingMode:
        """The mode named by ``value`` (case-insensitive; ``None`` = ``DATA_BEFORE_AFTER``, Hudi's default).

        Raises:
            ConfigError: any other value, naming the key, the value and the table.
        """
        if value is None or not value.strip():
            return SupplementalLoggingMode.DATA_BEFORE_AFTER
        try:
            return SupplementalLoggingMode(value.strip().upper())
        except ValueError:
            where = f" on table {table}" if table else ""
            raise ConfigError(
                f"hoodie.table.cdc.supplemental.logging.mode={value!r}{where}: expected one of "
                f"{', '.join(m.value for m in SupplementalLoggingMode)}") from None


def image_schema(table_avro_schema: dict[str, Any]) -> dict[str, Any]:
    """The table's Avro record schema without the ``_hoodie_*`` meta fields (``removeMetadataFields``)."""
    image = copy.deepcopy(table_avro_schema)
    image["fields"] = [f for f in image.get("fields", []) if f.get("name") not in META_FIELDS]
    return image


def cdc_avro_schema(mode: SupplementalLoggingMode, table_avro_schema: dict[str, Any]) -> dict[str, Any]:
    """The Avro schema of CDC log records (``HoodieCDCUtils.schemaBySupplementalLoggingMode``).

    Args:
        mode: the table's supplemental logging mode.
        table_avro_schema: the writer's table schema (meta fields are removed here).

    Returns:
        Parsed-JSON Avro schema: record ``CDC`` (``Record`` for ``OP_KEY_ONLY``) with nullable fields in
        Hudi's order; the image fields are ``["null", <table record>]`` (the second one by name).
    """
    if mode is SupplementalLoggingMode.OP_KEY_ONLY:
        return copy.deepcopy(_OP_KEY_ONLY_SCHEMA)
    image = image_schema(table_avro_schema)
    namespace = image.get("namespace")
    full_name = f"{namespace}.{image['name']}" if namespace else image["name"]

    def nullable(name: str, kind: Any) -> dict[str, Any]:
        return {"name": name, "type": ["null", kind], "doc": "", "default": None}

    fields = [nullable(CDC_OPERATION_TYPE, "string")]
    if mode is SupplementalLoggingMode.DATA_BEFORE_AFTER:
        fields += [nullable(CDC_COMMIT_TIMESTAMP, "string"), nullable(CDC_BEFORE_IMAGE, image),
                   nullable(CDC_AFTER_IMAGE, full_name)]
    else:
        fields += [nullable(CDC_RECORD_KEY, "string"), nullable(CDC_BEFORE_IMAGE, image)]
    return {"type": "record", "name": "CDC", "doc": "", "fields": fields}


__all__ = [
    "CDC_AFTER_IMAGE",
    "CDC_BEFORE_IMAGE",
    "CDC_COLUMNS",
    "CDC_COMMIT_TIMESTAMP",
    "CDC_LOGFILE_SUFFIX",
    "CDC_OPERATION_TYPE",
    "CDC_RECORD_KEY",
    "DELETE",
    "INSERT",
    "UPDATE",
    "SupplementalLoggingMode",
    "cdc_avro_schema",
    "image_schema",
]
