"""Write operations (Hudi ``WriteOperationType``) and the timeline action each one commits as."""

from __future__ import annotations

from enum import Enum

from engine.errors import ConfigError


class WriteOperation(Enum):
    """A write operation; ``value`` is Hudi's config spelling, ``commit_name`` the name stored in
    ``operationType`` of the commit metadata."""

    INSERT = "insert"
    BULK_INSERT = "bulk_insert"
    UPSERT = "upsert"
    DELETE = "delete"
    INSERT_OVERWRITE = "insert_overwrite"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"
    DELETE_PARTITION = "delete_partition"
    ALTER_SCHEMA = "alter_schema"
    """A commit without data carrying a new schema (ALTER TABLE); never a data source write operation."""

    @property
    def commit_name(self) -> str:
        """Upper-case name as written in ``operationType`` (e.g. ``UPSERT``)."""
        return self.name

    @property
    def is_replace(self) -> bool:
        """Whether the operation replaces file groups (commits as a ``replacecommit``)."""
        return self in (
            WriteOperation.INSERT_OVERWRITE,
            WriteOperation.INSERT_OVERWRITE_TABLE,
            WriteOperation.DELETE_PARTITION,
        )

    @property
    def uses_index(self) -> bool:
        """Whether incoming records are tagged with their current file group before writing."""
        return self in (WriteOperation.UPSERT, WriteOperation.DELETE)

    @staticmethod
    def parse(value: str) -> WriteOperation:
        """Parse ``hoodie.datasource.write.operation`` (case-insensitive).

        Raises:
            ConfigError: unknown operation name.
        """
        try:
            operation = WriteOperation(value.strip().lower())
            if operation is WriteOperation.ALTER_SCHEMA:
                raise ValueError(value)
            return operation
        except ValueError:
            names = ", ".join(op.value for op in WriteOperation if op is not WriteOperation.ALTER_SCHEMA)
            raise ConfigError(
                f"hoodie.datasource.write.operation: unknown operation {value!r} (expected one of {names})"
            ) from None


def commit_action(operation: WriteOperation, is_mor: bool) -> str:
    """The timeline action a write commits as: ``replacecommit`` for overwrites, ``deltacommit`` on
    merge-on-read tables, else ``commit`` (Hudi ``CommitUtils.getCommitActionType``)."""
    if operation.is_replace:
        return "replacecommit"
    return "deltacommit" if is_mor else "commit"
