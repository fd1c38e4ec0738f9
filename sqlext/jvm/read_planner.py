"""The engine's read planner as the JVM asks it: which base files of a Hudi read Spark's own parquet scan
reads (Hudi ``BaseFileOnlyRelation`` / ``HoodieFileIndex``).

A sqlext session starts PySpark's Py4J callback server and registers a :class:`ReadPlanner` with
``io.sqlext.catalog.HudiParquetReads`` (:func:`install`). While Spark analyses a query on the driver, that
rule calls :meth:`ReadPlanner.plan` for every read of a Hudi table (catalog tables, ``hudi_query``, and
``spark.read.format("hudi").load(path)``) and, when Spark plans the scan, :meth:`ReadPlanner.prunePartitions`
with the filters pushed to it. The decisions are :func:`engine.read.parquet_slices.plan_parquet_read`'s;
everything here is JSON in and out. Any failure answers "read it with the Python reader" (planning) or "keep
every partition" (pruning), so errors reach the user from the Python reader as before.

Turn the parquet scan off for a session with ``SET spark.sqlext.read.parquet.enabled=false``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from engine.config import HoodieConfig
from engine.read.parquet_slices import ParquetReadPlan, log_keys_of, plan_parquet_read, prune_partitions
from engine.read.pruning import OPERATORS, Predicate
from engine.spark.datasource import table_path
from engine.spark.schema import spark_to_arrow
from engine.table import Table

__all__ = ["PLANNER_CLASS", "ReadPlanner", "answer_log_keys", "answer_plan", "answer_prune", "install"]

logger = logging.getLogger(__name__)

PLANNER_CLASS = "io.sqlext.catalog.HudiReadPlanner"
"""The Java interface :class:`ReadPlanner` implements."""

RULE_CLASS = "io.sqlext.catalog.HudiParquetReads"
"""The Java rule the planner is registered with."""


def answer_plan(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one ``HudiReadPlanner.plan`` request.

    Args:
        request: ``{"options": {data source options}, "schema": "<Spark StructType JSON>"}``.

    Returns:
        ``{"mode": "python", "reason": ...}``, or ``{"mode": "parquet" | "union", "basePath", "pinnedInstant",
        "files": [{"path", "size", "mtime", "partition"}], "fileGroups": [[partition, file id]],
        "pathColumns": [column], "pathValues": {partition: [text or null per path column]}, "keyedFiles":
        [{"path", "size", "mtime", "partition", "fileId"}]}`` (the columns Spark's scan takes from partition
        paths, :attr:`ParquetReadPlan.path_columns`; the base files Spark's scan reads less the rows whose keys
        their logs name, :attr:`ParquetReadPlan.keyed_files`, keys asked for with :func:`answer_log_keys` when
        the query runs: when there are any, the Python part reads the file groups' log records only).

    Raises:
        EngineError: the table cannot be read or the options are invalid.
        ConfigError: no ``path`` option.
    """
    options = {str(k): str(v) for k, v in dict(request.get("options") or {}).items()}
    schema = StructType.fromJson(json.loads(request["schema"]))
    table = Table.load(table_path(options))
    plan: ParquetReadPlan = plan_parquet_read(table, HoodieConfig(options), spark_to_arrow(schema))
    if plan.reason is not None:
        return {"mode": "python", "reason": plan.reason}
    return {
        "mode": plan.mode,
        "basePath": plan.base_path,
        "pinnedInstant": plan.pinned_instant,
        "files": [{"path": f.path, "size": f.size, "mtime": f.mtime_ms, "partition": f.partition_path}
                  for f in plan.files],
        "fileGroups": [list(g) for g in plan.merged_groups],
        "pathColumns": list(plan.path_columns),
        "pathValues": {partition: list(values) for partition, values in plan.path_values},
        "keyedFiles": [{"path": k.file.path, "size": k.file.size, "mtime": k.file.mtime_ms,
                        "partition": k.file.partition_path, "fileId": k.file_id} for k in plan.keyed_files],
    }


def answer_log_keys(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one ``HudiReadPlanner.logKeys`` request, made when a split merge-on-read read runs.

    Args:
        request: ``{"options": {data source options, with sqlext.read.file.groups and sqlext.read.pinned.instant}}``.

    Returns:
        ``{"keys": {base file name: [record key]}}`` (:func:`engine.read.parquet_slices.log_keys_of`).

    Raises:
        EngineError: the keys cannot be read.
        ConfigError: no ``path`` option.
    """
    options = {str(k): str(v) for k, v in dict(request.get("options") or {}).items()}
    table = Table.load(table_path(options))
    return {"keys": {name: list(keys) for name, keys in log_keys_of(table, HoodieConfig(options)).items()}}


def _predicate(raw: Any) -> Predicate | None:
    if not isinstance(raw, list) or len(raw) != 3 or raw[1] not in OPERATORS:
        return None
    column, op, value = raw
    if op == "in":
        return (str(column), op, tuple(value)) if isinstance(value, list) else None
    return str(column), op, value


def answer_prune(request: dict[str, Any]) -> list[str]:
    """The answer to one ``HudiReadPlanner.prunePartitions`` request: the partitions that may hold rows
    matching every predicate.

    Args:
        request: ``{"path": base path, "partitions": [...], "predicates": [[column, op, value], ...]}``.

    Raises:
        EngineError: the table cannot be loaded.
    """
    partitions = [str(p) for p in request.get("partitions") or []]
    predicates = [p for p in (_predicate(raw) for raw in request.get("predicates") or []) if p is not None]
    if not predicates:
        return partitions
    return prune_partitions(Table.load(str(request["path"])), partitions, predicates)


class ReadPlanner:
    """Py4J callback object implementing ``io.sqlext.catalog.HudiReadPlanner`` (JSON text in and out; see
    :func:`answer_plan` and :func:`answer_prune`). Never raises into the JVM."""

    class Java:
        """Py4J: the Java interface this object implements."""

        implements = [PLANNER_CLASS]

    def plan(self, request: str) -> str:
        """``HudiReadPlanner.plan``: :func:`answer_plan`, or ``{"mode": "python"}`` with the failure as reason."""
        started = time.perf_counter()
        try:
            answer = answer_plan(json.loads(request))
        except Exception as exc:  # noqa: BLE001 - the Python reader reports the error to the user
            logger.debug("read planning failed, the Python reader takes the read: %s", exc, exc_info=True)
            answer = {"mode": "python", "reason": f"planning failed: {exc}"}
        logger.debug("read plan in %.1f ms: %s (%s; %d base files, %d file groups with log files)",
                     (time.perf_counter() - started) * 1000, answer["mode"], answer.get("reason", ""),
                     len(answer.get("files", ())), len(answer.get("fileGroups", ())))
        return json.dumps(answer, separators=(",", ":"))

    def logKeys(self, request: str) -> str:  # noqa: N802 - the Java interface's name
        """``HudiReadPlanner.logKeys``: :func:`answer_log_keys`, or ``{"error": message}`` (the query then fails
        naming it: its plan already left those base rows to a filter that needs the keys)."""
        started = time.perf_counter()
        try:
            answer = answer_log_keys(json.loads(request))
        except Exception as exc:  # noqa: BLE001 - reported by the JVM as the query's error
            logger.debug("reading log keys failed: %s", exc, exc_info=True)
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        logger.debug("log keys of %d base files in %.1f ms", len(answer.get("keys", ())),
                     (time.perf_counter() - started) * 1000)
        return json.dumps(answer, separators=(",", ":"))

    def prunePartitions(self, request: str) -> str:  # noqa: N802 - the Java interface's name
        """``HudiReadPlanner.prunePartitions``: :func:`answer_prune`, or every partition on failure."""
        parsed = json.loads(request)
        try:
            kept = answer_prune(parsed)
        except Exception as exc:  # noqa: BLE001 - pruning is an optimisation: read every partition
            logger.debug("partition pruning failed, keeping every partition: %s", exc, exc_info=True)
            kept = [str(p) for p in parsed.get("partitions") or []]
        return json.dumps(kept)


def install(spark: SparkSession) -> bool:
    """Start PySpark's Py4J callback server and register a :class:`ReadPlanner` with the session's JVM, so the
    base files of Hudi reads go to Spark's parquet scan. Idempotent (a later call replaces the planner).

    Returns:
        False, logging why, when the session's JVM lacks sqlext's catalog jar (a session built without
        :func:`sqlext.jvm.spark_conf`): reads then stay with the Python reader.
    """
    from py4j.protocol import Py4JError
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = spark.sparkContext._gateway
    jvm = spark._jvm
    assert gateway is not None and jvm is not None
    ensure_callback_server_started(gateway)
    try:
        jvm.io.sqlext.catalog.HudiParquetReads.register(ReadPlanner())
    except Py4JError as exc:
        logger.info("sqlext's catalog jar is not on this session's class path (%s): Hudi reads stay with the "
                    "Python reader", exc)
        return False
    return True
