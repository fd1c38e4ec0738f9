"""The table engine: Apache Hudi table-version-6 format, write client, readers and table services.

Nothing here knows SQL or the metastore. Only :mod:`engine.spark` imports pyspark.
"""
