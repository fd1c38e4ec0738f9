"""Indexes: tagging incoming records with the file group that currently holds their key."""

from __future__ import annotations

from engine.config import HoodieConfig, IndexConfig

GLOBAL_INDEX_MOVE_KEYS = {
    "GLOBAL_SIMPLE": IndexConfig.SIMPLE_UPDATE_PARTITION_PATH,
    "GLOBAL_BLOOM": IndexConfig.BLOOM_UPDATE_PARTITION_PATH,
}
"""Global index types and the key saying whether a record whose partition changed moves (Hudi
``hoodie.simple.index.update.partition.path`` / ``hoodie.bloom.index.update.partition.path``)."""


def index_type(conf: HoodieConfig) -> str:
    """``hoodie.index.type``, upper-cased and stripped (``SIMPLE``, ``BLOOM``, ``GLOBAL_SIMPLE``, ...)."""
    return conf.get(IndexConfig.TYPE).strip().upper()


def is_global_index(conf: HoodieConfig) -> bool:
    """Whether the index finds a key in any partition (Hudi ``HoodieIndex.isGlobal``): GLOBAL_SIMPLE, GLOBAL_BLOOM."""
    return index_type(conf) in GLOBAL_INDEX_MOVE_KEYS


def moves_partition(conf: HoodieConfig) -> bool:
    """Whether a global index moves a record whose partition changed (a delete in the stored partition and an
    insert in the new one) rather than keeping its stored partition; False for a non-global index."""
    key = GLOBAL_INDEX_MOVE_KEYS.get(index_type(conf))
    return bool(conf.get(key)) if key is not None else False
