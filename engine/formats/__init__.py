"""Hudi file formats.

* :mod:`engine.formats.bloom` — bloom filters stored in base file footers, bit-exact with Java.
* :mod:`engine.formats.avro_schema` — Arrow ⇄ Avro table schemas as Hudi/Spark derive them, meta fields.
* :mod:`engine.formats.base_file` — parquet base files: writer with Hudi's footer, readers.
* :mod:`engine.formats.conform` — casting Arrow data to a target schema.
* :mod:`engine.formats.hfile_reader`, :mod:`engine.formats.hfile_writer` — HFiles (v3) of the metadata table,
  layout in :mod:`engine.formats.hfile_blocks`.
"""
