"""Write options of a SQL statement, in Hudi's precedence (``ProvidesHoodieConfig.combineOptions``):
session ``SET hoodie.*`` confs over the catalog's TBLPROPERTIES; table-level keys come from
``hoodie.properties`` (the engine overlays these options on the table config)."""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

from engine.table import Table
from sqlext.catalog import CatalogTable
from sqlext.errors import SqlAnalysisError

# SQL short names (Hudi HoodieOptionConfig) -> hoodie keys.
SQL_OPTION_KEYS = {
    "primarykey": "hoodie.table.recordkey.fields",
    "precombinefield": "hoodie.table.precombine.field",
    "orderingfields": "hoodie.table.precombine.field",
    "payloadclass": "hoodie.datasource.write.payload.class",
    "type": "hoodie.table.type",
}


# The spelling Hudi stores SQL short names under, whatever case the user wrote (HoodieOptionConfig's sqlKeyName).
SQL_OPTION_NAMES = {"primarykey": "primaryKey", "precombinefield": "preCombineField",
                    "orderingfields": "orderingFields", "payloadclass": "payloadClass", "type": "type"}

_STANDARD_SQL_OPTIONS = ("primaryKey", "preCombineField", "type", "payloadClass", "recordMergerStrategy")
"""Hudi 0.15's short option names, in the order ``HoodieOptionConfig.makeOptionsCaseInsensitive`` tries them."""


def sql_option_name(key: str) -> str | None:
    """The SQL short option a TBLPROPERTIES / OPTIONS key stands for, or None.

    As Hudi 0.15's ``HoodieOptionConfig.makeOptionsCaseInsensitive``: the first standard name (primaryKey,
    preCombineField, type, payloadClass, recordMergerStrategy) whose lowercase form *contains* the key's, so
    ``PRIMARYKEY`` is primaryKey and ``preCombine`` (as TestInsertTable writes it) is preCombineField.
    ``orderingFields`` (Hudi 1.x) is taken as written."""
    lowered = key.lower()
    if not lowered or lowered.startswith("hoodie."):
        return None
    if lowered == "orderingfields":
        return "orderingFields"
    return next((name for name in _STANDARD_SQL_OPTIONS if lowered in name.lower()), None)


def canonical_option_names(properties: dict[str, str]) -> dict[str, str]:
    """``properties`` with SQL short names spelled as Hudi stores them (``PRIMARYKEY`` -> ``primaryKey``,
    ``preCombine`` -> ``preCombineField``: :func:`sql_option_name`)."""
    return {sql_option_name(k) or k: v for k, v in properties.items()}


def session_hoodie_confs(spark: SparkSession) -> dict[str, str]:
    """``hoodie.*`` keys set in the session (``SET hoodie.x = y``), read in one call to the JVM."""
    jvm = spark._jvm
    assert jvm is not None
    return dict(json.loads(jvm.io.sqlext.catalog.HudiSessionInfo.confs(spark._jsparkSession, "hoodie.")))


SQL_KEYGEN = "org.apache.spark.sql.hudi.command.SqlKeyGenerator"


def require_table_keygen(options: dict[str, str], table: Table, display: str) -> None:
    """A write's ``hoodie.datasource.write.keygenerator.class`` (a TBLPROPERTIES or ``SET`` key; behind Spark SQL's
    ``SqlKeyGenerator``, its ``hoodie.sql.origin.keygen.class``) must be the table's key generator, as Hudi
    ``HoodieWriterUtils.validateTableConfig`` requires, with Hudi's message: CREATE TABLE does not take the key
    generator from that key (it infers it), so such a table refuses every write in Hudi 0.15 too.

    Raises:
        SqlAnalysisError: the classes differ (before anything is written).
    """
    given = options.get("hoodie.datasource.write.keygenerator.class")
    if given == SQL_KEYGEN:
        given = options.get("hoodie.sql.origin.keygen.class")
    stored = table.keygen_class
    if given and stored and given.strip() != stored:
        raise SqlAnalysisError(f"Config conflict(key\tcurrent value\texisting value):\nKeyGenerator:\t{given}\t"
                               f"{stored}\n(table {display}: its hoodie.properties has the key generator "
                               f"{stored}; nothing was written)")


def write_options(spark: SparkSession, entry: CatalogTable, table: Table) -> dict[str, str]:
    """Catalog ``hoodie.*`` properties overlaid with the session's ``hoodie.*`` confs; the table's key
    generator is wrapped in Spark SQL's ``SqlKeyGenerator`` (as Hudi's SQL writes do: TIMESTAMP partition
    values are rendered as timestamps), unless the session names a key generator itself."""
    options = {k: v for k, v in entry.properties.items() if k.startswith("hoodie.")}
    options.update(session_hoodie_confs(spark))
    require_table_keygen(options, table, entry.display)
    if "hoodie.datasource.write.keygenerator.class" not in options:
        options["hoodie.datasource.write.keygenerator.class"] = SQL_KEYGEN
        options["hoodie.sql.origin.keygen.class"] = table.keygen_class
    return options
