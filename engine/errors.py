"""Errors raised by the table engine.

Every error derives from :class:`EngineError`, so callers can catch "any engine error" in one place.
Messages name the table (base path), instant, file or key at fault, so a user can act on them.
"""

from __future__ import annotations


class EngineError(Exception):
    """Root of all errors raised by :mod:`engine`."""


class ConfigError(EngineError):
    """A ``hoodie.*`` configuration value is missing, malformed or contradicts the table config."""


class StorageError(EngineError):
    """Reading, writing, listing or deleting a file failed; the message names the path."""


class TableNotFound(EngineError):
    """No Hudi table (``.hoodie/hoodie.properties``) exists at the given base path."""


class TableExists(EngineError):
    """A Hudi table already exists where a new one was to be created."""


class UnsupportedTable(EngineError):
    """The table uses a feature or version this engine does not implement (named in the message)."""


class TimeTravelError(ConfigError):
    """A read as of an instant (time travel, incremental or CDC range) needs files the cleaner deleted or
    instants that were archived (Hudi ``HoodieTimeTravelException``); the message names the earliest instant
    that can still be read."""


class TimelineError(EngineError):
    """The timeline is inconsistent: a bad instant file name, an illegal state transition, or a
    missing instant."""


class PendingRestoreError(TimelineError):
    """A restore was started and did not finish: no write may start until it is run again to the end (Hudi
    ``BaseHoodieWriteClient.startCommit``: "Found pending restore in active timeline")."""


class CorruptFile(EngineError):
    """A data or metadata file could not be decoded (bad magic, truncated, wrong sizes)."""


class SchemaMismatch(EngineError):
    """Incoming data does not match the table schema (missing, extra or incompatible columns)."""


class InvalidRecordKey(EngineError):
    """A record key or partition path could not be built (null/empty key field, unknown field)."""


class UnsafePartitionPath(InvalidRecordKey):
    """A partition value would make a partition path that leaves the table's base path, or is not a
    valid folder name (a ``.``/``..`` or empty segment, a hidden ``.x`` folder readers skip, an absolute
    path, a control character). Raised before any data file or marker is written; the message names the table, the partition field, the
    value and ``hoodie.datasource.write.partitionpath.urlencode`` (which stores such values escaped)."""


class NestedPartitionPath(UnsafePartitionPath):
    """A new partition folder would lie inside another partition's folder, or hold one (a partition value
    with ``/`` makes ``dt=../x`` and a later ``dt=..``). Listings that stop at the first folder holding a
    partition metafile (Hudi ``FileSystemBackedTableMetadata``, hudi-rs) would never see the inner
    partition's rows, so readers would disagree; the write is refused before its data file is written."""


class UnsafePath(StorageError):
    """A write, delete or mkdir was handed a path with a ``..`` segment below the storage's root (the
    table's base path): a defence-in-depth check that a path built from data never leaves the table."""


class LogFileExists(StorageError):
    """A new log file's name is taken (another writer, or another task, created it first): the writer rolls over
    to the next log version, as Hudi's ``HoodieLogFormatWriter`` does."""


class CommitConflict(EngineError):
    """Another writer committed to the same file groups since this writer started.

    Attributes:
        retryable: always ``True``: re-running the write against the new table state is safe.
    """

    retryable = True


class ClusteringUpdateConflict(CommitConflict):
    """A write would update or delete records of a file group under a pending clustering (Hudi
    ``SparkRejectUpdateStrategy`` / ``HoodieClusteringUpdateException``). Raised before anything is written; the
    message names the table, the file groups and the clustering instant.

    Attributes:
        retryable: always ``True``: once the clustering completes (or is rolled back), the write can run.
    """


class ConcurrentWriteError(EngineError):
    """Another live writer (its heartbeat is fresh) holds a pending instant of the table, and the table
    allows one writer at a time (``hoodie.write.concurrency.mode=SINGLE_WRITER``). Raised before this
    writer changed anything; the message names the table, the live instant, its action and its writer.

    Attributes:
        retryable: always ``True``: once the other writer finishes, running again is safe.
    """

    retryable = True


class LockError(EngineError):
    """A table lock could not be acquired, held or released (Hudi ``HoodieLockException``): the lock provider
    timed out after its retries, the same holder asked for it twice, or the lock service (lock file, Hive
    Metastore) failed. The message names the table, the lock provider and, when known, who holds the lock."""


class IndexLookupError(EngineError):
    """The index cannot locate records: a bucket claimed by two file groups, a partition laid out by another
    index type (Hudi ``HoodieIndexException``)."""


class WriteError(EngineError):
    """A write failed after its instant was started; the instant is left inflight and the next writer
    rolls it back."""


class TableServiceError(EngineError):
    """A table service (compaction, clustering, clean, archive, rollback, restore) failed or cannot run
    (for example no pending plan, or the wrong table type)."""


class SchemaEvolutionError(EngineError):
    """A schema change that Hudi's schema evolution refuses (``TableChanges`` / ``SchemaChangeUtils``): a
    missing or duplicate column, a narrowing type change, a meta, key or partition column."""


class HFileError(EngineError):
    """An HFile (the metadata table's base files and HFile log blocks) could not be read or written: bad magic,
    truncated bytes, an unsupported version, compression or block encoding, or keys added out of order. The
    message names the file (or ``<bytes>``) and what is wrong."""


class MetadataTableError(EngineError):
    """A data table's metadata table cannot answer: it is not in use, an MDT partition is not built, or a
    partition has no file slice. The message names the table and the MDT partition."""
