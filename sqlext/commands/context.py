"""What a command needs to run: the SparkSession and the catalog, not the whole ``Session``.

A command (``sqlext.commands.*``) or procedure (``sqlext.procedures.*``) takes a :class:`CommandContext`;
:class:`sqlext.session.Session` builds one and hands it to :func:`sqlext.commands.dispatch`, so the
commands never import the session module (no import cycle between them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from engine.write.metrics import WriteMetrics
from sqlext.catalog import Catalog


@dataclass
class LastWrite:
    """The metrics of the session's last committed write (rows, files, milliseconds per phase), or None."""

    metrics: WriteMetrics | None = None


@dataclass(frozen=True)
class CommandContext:
    """The small context every command runs in.

    Attributes:
        spark: the SparkSession (``SET hoodie.*`` write options are read from its conf when a write starts,
            as Hudi's ``ProvidesHoodieConfig`` reads the SQL conf).
        catalog: the session catalog that resolves table names to Hudi tables.
        last_write: the last write's metrics (set by :func:`sqlext.commands.post_commit.after_write`).
    """

    spark: SparkSession
    catalog: Catalog
    last_write: LastWrite = field(default_factory=LastWrite)
