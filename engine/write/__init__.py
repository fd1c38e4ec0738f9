"""The write client, one module per step: prepare records (keys, de-duplication), plan file groups
(updates per file group, inserts to small files then new groups), write handles (create, merge),
markers, commit, and rollback of failed writes. The Spark wiring lives in :mod:`engine.spark.writer`."""
