"""The simple index (Hudi ``HoodieSimpleIndex``): the record keys stored in the latest base files of the
partitions a write touches, to be joined with the incoming keys. This module reads one file's keys; the
join runs in Spark (:mod:`engine.spark.index`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from engine.config import HoodieConfig, TableConfig, parse_list
from engine.formats.avro_schema import META_FIELDS
from engine.keygen import KeyGenerator
from engine.storage import Storage

KEY_LOCATION_SCHEMA = pa.schema(
    [("_hoodie_record_key", pa.string()), ("_hoodie_partition_path", pa.string()),
     ("_hoodie_file_id", pa.string())]
)


@dataclass(frozen=True)
class KeyedFile:
    """A latest base file whose keys are wanted."""

    partition_path: str
    file_id: str
    path: str


def read_key_locations(storage: Storage, file: KeyedFile, conf: HoodieConfig) -> pa.Table:
    """``(_hoodie_record_key, _hoodie_partition_path, _hoodie_file_id)`` of every record in ``file``.

    Reads only the ``_hoodie_record_key`` column when meta fields are populated; otherwise the record key
    fields, passed through the table's key generator.
    """
    populate = conf.get(TableConfig.POPULATE_META_FIELDS)
    with storage.open_input(file.path) as handle:
        if populate:
            keys = pq.read_table(handle, columns=[META_FIELDS[2]]).column(0)
        else:
            fields = parse_list(conf.get(TableConfig.RECORDKEY_FIELDS))
            data = pq.read_table(handle, columns=fields)
            keys = KeyGenerator.from_config(conf).record_keys(data)
    n = len(keys)
    return pa.Table.from_arrays(
        [keys.cast(pa.string()), pa.array([file.partition_path] * n, pa.string()),
         pa.array([file.file_id] * n, pa.string())],
        schema=KEY_LOCATION_SCHEMA,
    )
