"""Auto-generated record keys for tables without a primary key (Hudi 0.14 ``AutoRecordGenWrapperKeyGenerator``
and ``AutoRecordKeyGenerationUtils``).

A table is *keyless* when neither ``hoodie.table.recordkey.fields`` nor the write option
``hoodie.datasource.write.recordkey.field`` names a column. Each inserted record then gets the key
``<instant>_<task partition id>_<row id>`` (Hudi ``HoodieRecord.generateSequenceId``): the write's instant,
the Spark partition that produced the row and the row's position in that partition, counted from 0. Keys
are stored in ``_hoodie_record_key`` (meta fields are required), so later UPDATE, DELETE and MERGE
statements locate records by that column rather than by a key generator.

The partition path of a keyless record comes from the table's key generator as usual
(``hoodie.table.partition.fields``; Hudi's ``KeyGenUtils.inferKeyGeneratorTypeForAutoKeyGen`` picks
non-partitioned, simple or complex from the partition fields alone).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, KeyGenConfig, TableConfig, WriteConfig, parse_list
from engine.errors import ConfigError


def is_keyless(conf: HoodieConfig) -> bool:
    """Whether records of this table/write get auto-generated keys: no record key field is configured,
    neither in ``hoodie.properties`` (``hoodie.table.recordkey.fields``) nor as a write option
    (``hoodie.datasource.write.recordkey.field``)."""
    raw = conf.raw(KeyGenConfig.RECORDKEY_FIELD) or conf.raw(TableConfig.RECORDKEY_FIELDS) or ""
    return not parse_list(raw)


def validate_auto_key_config(conf: HoodieConfig, table: str) -> None:
    """Refuse write settings Hudi refuses with auto-generated keys (Hudi
    ``AutoRecordKeyGenerationUtils.mayBeValidateParamsForAutoGenerationOfRecordKeys``).

    Args:
        conf: table config overlaid with the write options.
        table: table name or base path, for the message.

    Raises:
        ConfigError: ``hoodie.combine.before.insert`` or ``hoodie.datasource.write.insert.drop.duplicates``
            is true (there is no key to de-duplicate by), or ``hoodie.populate.meta.fields`` is false (the
            generated key lives only in ``_hoodie_record_key``).
    """
    if conf.get(WriteConfig.COMBINE_BEFORE_INSERT):
        raise ConfigError(
            f"table {table}: Enabling {WriteConfig.COMBINE_BEFORE_INSERT.key} is not supported with auto "
            "generation of record keys (the table has no primaryKey)")
    if conf.get(WriteConfig.INSERT_DROP_DUPLICATES):
        raise ConfigError(
            f"table {table}: Enabling {WriteConfig.INSERT_DROP_DUPLICATES.key} is not supported with auto "
            "generation of record keys (the table has no primaryKey)")
    if not conf.get(TableConfig.POPULATE_META_FIELDS):
        raise ConfigError(
            f"table {table}: Disabling {TableConfig.POPULATE_META_FIELDS.key} is not supported with auto "
            "generation of record keys (the table has no primaryKey)")


def auto_record_key(instant: str, partition_id: int, row_id: int) -> str:
    """One auto-generated key: ``<instant>_<partition id>_<row id>`` (Hudi ``generateSequenceId``)."""
    return f"{instant}_{partition_id}_{row_id}"


def auto_record_keys(instant: str, partition_id: int, count: int, start: int = 0) -> pa.Array:
    """``count`` consecutive keys of one task (row ids ``start`` .. ``start + count - 1``) as a
    ``pa.string()`` array."""
    numbers = pc.cast(pa.array(np.arange(start, start + count, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(f"{instant}_{partition_id}_", numbers, "")
