"""Reading Apache Hudi's metadata table (``<base>/.hoodie/metadata``, table version 6): the record schema and
keys (:mod:`~engine.metadata.schema`, :mod:`~engine.metadata.keys`), the record model and its Avro codec
(:mod:`~engine.metadata.records`), the payload merge rules (:mod:`~engine.metadata.payload`), HFile decoding
(:mod:`~engine.metadata.hfile_records`), which log blocks are valid (:mod:`~engine.metadata.instants`) and the
reader (:mod:`~engine.metadata.reader`). Mirrors Hudi 0.15 ``HoodieBackedTableMetadata``; the on-disk
format is summed up in docs/FORMAT.md §8.2. Until the engine writes a metadata table, its first change to a table
Hudi wrote with one disables it (:mod:`~engine.metadata.disable`)."""
