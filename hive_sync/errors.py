"""Errors raised by hive_sync; every one derives from :class:`HiveSyncError`."""

from __future__ import annotations


class HiveSyncError(Exception):
    """Root of all errors raised by :mod:`hive_sync`; messages name the table, database or partition."""
