"""Tables that carry a metadata table (docs/FORMAT.md §8): this engine runs as Hudi's writer does with
``hoodie.metadata.enable=false``.

Apache Hudi 0.14+ writers build a metadata table (MDT) by default: ``.hoodie/metadata`` (itself a merge-on-read
Hudi table) and ``hoodie.table.metadata.partitions=files,...`` in ``hoodie.properties``. Java readers then
list a table's files through the MDT instead of the file system. This engine does not maintain an MDT, so a
change it made to such a table would stay invisible to Java readers (or, for deletions, point them at files
that are gone). Before its first change to a table (any new timeline instant, archival) the engine therefore
does what Hudi's ``HoodieTable.maybeDeleteMetadataTable`` does for a writer with the MDT disabled:

1. empty ``hoodie.table.metadata.partitions`` and ``hoodie.table.metadata.partitions.inflight`` with the
   properties backup protocol (:meth:`engine.table.Table.update_properties`; Hudi
   ``HoodieTableConfig.clearMetadataPartitions``), so readers list the file system from then on;
2. delete ``.hoodie/metadata`` recursively (Hudi ``HoodieTableMetadataUtil.deleteMetadataTable``).

This is the order of Hudi 0.15+/1.x (0.14 deletes the folder first): a crash between the two steps leaves an
unused folder, which the next change deletes, never a table whose config points readers at a missing MDT.

Reads never change a table: a table with an MDT is read by listing, as hudi-rs reads every v6 table.
``hoodie.metadata.enable=true`` (Hudi's default, here only when set explicitly) is refused, naming the table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from engine.config import HoodieConfig, MetadataConfig, TableConfig, parse_list
from engine.errors import ConfigError
from engine.storage import Storage


class Table(Protocol):
    """What this module reads and changes of a data table (:class:`engine.table.Table` is one; this module
    does not import it, so the table can call it without an import cycle)."""

    @property
    def name(self) -> str: ...

    @property
    def base_path(self) -> str: ...

    @property
    def meta_path(self) -> str: ...

    @property
    def storage(self) -> Storage: ...

    config: HoodieConfig

    def update_properties(self, updates: Mapping[str, str | None]) -> None: ...

LOG = logging.getLogger(__name__)

METADATA_FOLDER = "metadata"
"""The metadata table's base path below ``.hoodie`` (Hudi ``HoodieTableMetaClient.METADATA_TABLE_FOLDER_PATH``)."""


def refuse_metadata_table(conf: HoodieConfig, table: Table) -> None:
    """Refuse ``hoodie.metadata.enable=true`` (Hudi's default; here only an explicit setting counts).

    Args:
        conf: the table config overlaid with the action's options (or the table config alone).
        table: the table the action is for (named in the error).

    Raises:
        ConfigError: ``hoodie.metadata.enable`` is true (or not a boolean), naming the key and the table.
    """
    if conf.get(MetadataConfig.ENABLE):
        key = MetadataConfig.ENABLE.key
        raise ConfigError(
            f"{key}=true is not supported for table {table.name} at {table.base_path}: the metadata table "
            f"(.hoodie/{METADATA_FOLDER}) is not maintained by this engine; set {key}=false or remove the "
            "setting (an existing metadata table is then deleted before the first change, as Hudi's writer "
            "does with false, and Java readers list the file system); nothing was written")


def metadata_table_path(table: Table) -> str:
    """``<base>/.hoodie/metadata``."""
    return table.storage.join(table.meta_path, METADATA_FOLDER)


def metadata_partitions_in_use(table: Table) -> list[str]:
    """The MDT partitions ``hoodie.properties`` lists as built or being built (``[]`` = none), from the
    loaded config (no I/O)."""
    listed: list[str] = []
    for prop in (TableConfig.METADATA_PARTITIONS, TableConfig.METADATA_PARTITIONS_INFLIGHT):
        for partition in parse_list(table.config.get_optional(prop) or ""):
            if partition not in listed:
                listed.append(partition)
    return listed


def drop_metadata_table(table: Table) -> bool:
    """Delete the table's metadata table, if it has one (Hudi ``HoodieTable.maybeDeleteMetadataTable``): when
    ``.hoodie/metadata`` exists or ``hoodie.table.metadata.partitions`` / ``...partitions.inflight`` is not
    empty, empty both properties (backup protocol, fresh checksum), then delete the folder, and log one
    warning naming the table. Call it before changing the table; it never runs on reads.

    Args:
        table: the table; its ``config`` is updated in place.

    Returns:
        Whether there was a metadata table to delete.

    Raises:
        ConfigError: ``hoodie.properties`` sets ``hoodie.metadata.enable=true`` (nothing is changed).
        StorageError: the properties or the folder could not be written or deleted (the properties update is
            recoverable through its backup; a folder left behind is deleted by the next change).
    """
    refuse_metadata_table(table.config, table)
    partitions = metadata_partitions_in_use(table)
    folder = metadata_table_path(table)
    folder_exists = table.storage.exists(folder)
    if not partitions and not folder_exists:
        return False
    if partitions:  # as Hudi: both keys stay, empty
        table.update_properties({TableConfig.METADATA_PARTITIONS.key: "",
                                 TableConfig.METADATA_PARTITIONS_INFLIGHT.key: ""})
    if folder_exists:
        table.storage.delete_dir(folder)
    LOG.warning("table %s at %s: deleted its metadata table (%s; partitions listed in hoodie.properties: %s) "
                "because this engine does not maintain one, as Hudi's writer does with %s=false; Java readers "
                "now list the file system", table.name, table.base_path,
                folder if folder_exists else "no folder left", ",".join(partitions) or "none",
                MetadataConfig.ENABLE.key)
    return True


__all__ = ["METADATA_FOLDER", "drop_metadata_table", "metadata_partitions_in_use", "metadata_table_path",
           "refuse_metadata_table"]
