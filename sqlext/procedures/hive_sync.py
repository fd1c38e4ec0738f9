"""``CALL hive_sync(table => ..., ...)`` (Hudi ``HiveSyncProcedure``): sync a table to the Hive Metastore
now, with the same options the post-commit sync uses plus the procedure's own overrides."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from sqlext.commands.options import write_options
from sqlext.commands.post_commit import URIS_KEY, session_metastore_uris
from sqlext.errors import ProcedureError
from sqlext.parser.statements import TableIdent
from sqlext.procedures.registry import Param, Procedure, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

PREFIX = "hoodie.datasource.hive_sync."
# Procedure argument -> sync config key.
ARGUMENT_KEYS = {
    "metastore_uri": URIS_KEY,
    "username": PREFIX + "username",
    "password": PREFIX + "password",
    "use_jdbc": PREFIX + "use_jdbc",
    "mode": PREFIX + "mode",
    "partition_fields": PREFIX + "partition_fields",
    "partition_extractor_class": PREFIX + "partition_extractor_class",
    "strategy": PREFIX + "table.strategy",
    "sync_incremental": "hoodie.meta.sync.incremental",
}


def hive_sync(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    """Sync now; one row ``result`` describing what changed.

    Raises:
        ProcedureError: unknown table, no metastore URI, or the sync failed.
    """
    database, _, name = str(args["table"]).rpartition(".")
    entry, table = ctx.catalog.require_hudi(TableIdent(database or None, name))
    options = {k: v for k, v in write_options(ctx.spark, entry, table).items() if "sync" in k}
    options.update({
        PREFIX + "database": entry.database, PREFIX + "table": entry.name, PREFIX + "mode": "hms",
        PREFIX + "support_timestamp": "true",
    })
    for argument, key in ARGUMENT_KEYS.items():
        if args.get(argument) is not None:
            options[key] = str(args[argument]).lower() if isinstance(args[argument], bool) else str(args[argument])
    if URIS_KEY not in options:
        uris = session_metastore_uris(ctx)
        if uris is None:
            raise ProcedureError(f"hive_sync({entry.display}): give metastore_uri => 'thrift://host:port' "
                                 "(or set hive.metastore.uris)")
        options[URIS_KEY] = uris
    try:
        from hive_sync.sync_tool import sync_hudi_table

        result = sync_hudi_table(table.base_path, options)
    except Exception as exc:  # noqa: BLE001 - reported as the procedure's failure
        raise ProcedureError(f"hive_sync({entry.display}) failed: {exc}") from exc
    return ctx.spark.createDataFrame([(str(result),)], "result string")


register(Procedure("hive_sync", (
    Param("table", "string", required=True), Param("metastore_uri", "string"), Param("username", "string"),
    Param("password", "string"), Param("use_jdbc", "boolean"), Param("mode", "string"),
    Param("partition_fields", "string"), Param("partition_extractor_class", "string"),
    Param("strategy", "string"), Param("sync_incremental", "boolean"),
), "result string", hive_sync, "sync a table to the Hive Metastore now"))
