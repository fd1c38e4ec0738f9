"""What a write may ask for: options whose features this engine does not implement fail the write before it
starts, naming the key, rather than writing a table that does not do what its configuration says."""

from __future__ import annotations

from engine import errors
from engine.config import HoodieConfig, TableConfig
from engine.formats.cdc import SupplementalLoggingMode
from engine.index import index_type
from engine.index.bucket import BucketSpec
from engine.metadata.disable import refuse_metadata_table
from engine.payloads import check_payload_class, configured_payload
from engine.table import Table

SUPPORTED_INDEX_TYPES = ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET")
"""``hoodie.index.type`` values writes accept (the bloom indexes prune files by footer key ranges and bloom
filters: :mod:`engine.index.bloom`; the bucket index hashes keys to fixed file groups: :mod:`engine.index.bucket`).
``RECORD_INDEX``, ``HBASE``, ``INMEMORY`` and ``FLINK_STATE`` are refused."""


def check_write_supported(table: Table, conf: HoodieConfig) -> None:
    """Refuse a write whose configuration needs a feature not implemented here.

    Args:
        table: the target table.
        conf: the table config overlaid with the write's options.

    Raises:
        ConfigError: ``hoodie.index.type`` is not one of :data:`SUPPORTED_INDEX_TYPES` (or BUCKET with bad bucket
            settings), or
            ``hoodie.table.cdc.enabled`` differs from the table's, its
            ``hoodie.table.cdc.supplemental.logging.mode`` is not a mode Hudi knows, or
            ``hoodie.datasource.write.drop.partition.columns`` differs from the table's (a table's data files
            either all hold their partition columns or none do), or ``hoodie.metadata.enable`` is true (this
            engine maintains no metadata table: :mod:`engine.metadata.disable`), or the table's
            ``hoodie.table.base.file.format`` is not PARQUET (ORC and HFILE base files are not written here).
    """
    refuse_metadata_table(conf, table)
    if table.base_file_format != "PARQUET":
        raise errors.ConfigError(
            f"{TableConfig.BASE_FILE_FORMAT.key}={table.base_file_format} is not supported for table "
            f"{table.base_path} (this engine writes PARQUET base files only); nothing was written")
    check_payload_class(configured_payload(conf), f"table {table.base_path}")
    kind = index_type(conf)
    if kind not in SUPPORTED_INDEX_TYPES:
        raise errors.ConfigError(
            f"hoodie.index.type={kind} is not supported for table {table.base_path} "
            f"(supported: {', '.join(SUPPORTED_INDEX_TYPES)}); nothing was written")
    if kind == "BUCKET":
        BucketSpec.from_config(conf, table.base_path)
    cdc_wanted, cdc_stored = conf.get(TableConfig.CDC_ENABLED), table.config.get(TableConfig.CDC_ENABLED)
    if cdc_wanted != cdc_stored:
        raise errors.ConfigError(
            f"{TableConfig.CDC_ENABLED.key}={str(cdc_wanted).lower()} conflicts with table {table.base_path}, whose "
            f"hoodie.properties has {str(cdc_stored).lower()} (change data capture is set when the table is "
            "created); nothing was written")
    if cdc_stored:
        SupplementalLoggingMode.parse(table.config.raw(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE), table.base_path)
    wanted, stored = conf.get(TableConfig.DROP_PARTITION_COLUMNS), table.config.get(TableConfig.DROP_PARTITION_COLUMNS)
    if wanted != stored:
        raise errors.ConfigError(
            f"{TableConfig.DROP_PARTITION_COLUMNS.key}={str(wanted).lower()} conflicts with table {table.base_path}, "
            f"whose hoodie.properties has {str(stored).lower()} (set it when the table is created); nothing was "
            "written")
