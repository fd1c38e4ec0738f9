"""Errors raised by hive_sync; every one derives from :class:`HiveSyncError`."""

from __future__ import annotations


class HiveSyncError(Exception):
    """Root of all errors raised by :mod:`hive_sync`; messages name the table, database or partition."""


class MetastoreUnavailable(HiveSyncError):
    """The Hive Metastore cannot be started or reached (java missing, port busy, start timeout,
    connection refused). The message names the port/URI and, for a local server, its log file."""


class SyncError(HiveSyncError):
    """A metastore call failed (Hudi ``HoodieHiveSyncException``); names the database/table/partition."""


class SchemaConversionError(HiveSyncError):
    """An Avro schema cannot be mapped to Hive column types (Hudi ``HiveSchemaUtil`` failures)."""


class PartitionValueError(HiveSyncError):
    """A partition path cannot be turned into partition values (wrong number of parts, bad format, or a
    path/value that would escape the table base path)."""


class SyncConfigError(HiveSyncError):
    """An invalid hive-sync setting, e.g. an unknown partition value extractor class."""
