"""SHOW PARTITIONS on Hudi tables: relative partition paths from Hudi's file listing (not the
metastore), filtered by an optional partition spec (Hudi ``ShowHoodieTablePartitionsCommand``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from sqlext.commands.partitions import partition_paths_for_spec
from sqlext.parser.statements import ShowPartitions

if TYPE_CHECKING:
    from sqlext.session import Session


def show_partitions(session: Session, stmt: ShowPartitions) -> DataFrame:
    """One row per partition path, column ``partition``, sorted."""
    entry, table = session.catalog.require_hudi(stmt.ident)
    spec = dict(stmt.partition_spec or ())
    if spec:
        paths = partition_paths_for_spec(table, spec, entry.display)
    else:
        paths = [p for p in table.file_system_view().partition_paths() if p]
    return session.spark.createDataFrame([(p,) for p in sorted(paths)], "partition string")
