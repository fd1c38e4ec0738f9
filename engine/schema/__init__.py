"""Schema on read (Hudi ``org.apache.hudi.internal.schema``): the internal schema with column ids, the schema
changes ALTER TABLE applies to it, the history kept under ``.hoodie/.schema/`` and the alignment of files
written under older schemas to the schema a query reads."""
