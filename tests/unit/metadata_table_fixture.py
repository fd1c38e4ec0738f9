"""Give a table the metadata table (MDT) Apache Hudi 0.14's Spark writer builds by default (docs/FORMAT.md §8), by
hand: ``.hoodie/metadata`` as a merge-on-read Hudi table with a ``files`` partition, and
``hoodie.table.metadata.partitions`` (and optionally ``...partitions.inflight``) in the data table's
``hoodie.properties``, written with a valid checksum."""

from __future__ import annotations

from pathlib import Path

from engine.table import Table
from engine.table_properties import TableProperties

MDT_INSTANT = "00000000000000010"
"""The instant of the MDT's initial bulk load (Hudi ``SOLO_COMMIT_TIMESTAMP`` + ``010``)."""


def add_metadata_table(base_path: str | Path, inflight: str = "", *, folder: bool = True,
                       properties: bool = True) -> Path:
    """Add an MDT to the table at ``base_path``; returns ``<base>/.hoodie/metadata``.

    Args:
        base_path: the data table.
        inflight: value of ``hoodie.table.metadata.partitions.inflight`` (``""``: not set).
        folder: write the ``.hoodie/metadata`` folder.
        properties: list ``files`` in ``hoodie.table.metadata.partitions``.
    """
    table = Table.load(str(base_path))
    mdt = Path(table.meta_path) / "metadata"
    if folder:
        meta = mdt / ".hoodie"
        meta.mkdir(parents=True)
        props = {
            "hoodie.table.name": f"{table.name}_metadata",
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.base.file.format": "HFILE",
            "hoodie.table.recordkey.fields": "key",
            "hoodie.populate.meta.fields": "false",
            "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
            "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
        }
        props["hoodie.table.checksum"] = str(TableProperties.checksum_of(props))
        (meta / "hoodie.properties").write_bytes(TableProperties.render(props))
        for suffix in (".deltacommit.requested", ".deltacommit.inflight", ".deltacommit"):
            (meta / f"{MDT_INSTANT}{suffix}").write_bytes(b"{}" if suffix == ".deltacommit" else b"")
        files = mdt / "files"
        files.mkdir()
        (files / ".hoodie_partition_metadata").write_text(
            f"#partition metadata\ncommitTime={MDT_INSTANT}\npartitionDepth=1\n")
        (files / f"files-0000-0_0-1-0_{MDT_INSTANT}.hfile").write_bytes(b"HFILE placeholder")
        (files / f".files-0000-0_{MDT_INSTANT}.log.1_0-2-0").write_bytes(b"#HUDI#")
    updates = {}
    if properties:
        updates["hoodie.table.metadata.partitions"] = "files"
    if inflight:
        updates["hoodie.table.metadata.partitions.inflight"] = inflight
    if updates:
        table.update_properties(updates)
    return mdt


def properties_of(base_path: str | Path) -> dict[str, str]:
    """``.hoodie/hoodie.properties`` of the table, parsed (Java ``Properties`` semantics)."""
    return TableProperties.parse((Path(base_path) / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1"))


def assert_metadata_table_gone(base_path: str | Path) -> None:
    """The MDT folder is gone, both properties are empty (Hudi keeps the keys, empty), the checksum is valid,
    no properties backup is left."""
    meta = Path(base_path) / ".hoodie"
    assert not (meta / "metadata").exists()
    assert not (meta / "hoodie.properties.backup").exists()
    props = properties_of(base_path)
    assert props.get("hoodie.table.metadata.partitions", "") == ""
    assert props.get("hoodie.table.metadata.partitions.inflight", "") == ""
    assert TableProperties.is_valid(props)
    assert int(props["hoodie.table.checksum"]) == TableProperties.checksum_of(props)
