"""Apache Hudi 0.15.0 on Spark 3.5 as a process answering SQL over JSON lines (run by the oracle venv's python).

Started by :mod:`tests.hudi_oracle.oracle` as ``<venv python> runner.py <warehouse>`` with the Hudi bundle on
``PYSPARK_SUBMIT_ARGS``. Requests (one JSON object a line on stdin):
  ``{"sql": "..."}``        run a statement, answer its rows;
  ``{"read": "<path>"}``    ``spark.read.format("hudi").load(path)``, answer its rows;
  ``{"quit": true}``        stop the session and exit.
Answers (one a line on stdout): ``{"ok": true, "columns": [...], "rows": [[...]], "seconds": s}`` or
``{"ok": false, "class": "<java or python class>", "message": "...", "causes": ["class: message", ...]}``.
Spark's own output goes to stderr (stdout is re-pointed there; answers use a private copy of it).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from values import jsonable  # noqa: E402

HUDI_CONF = {
    "spark.master": "local[1]",
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "1g",
    "hoodie.metadata.enable": "false",
    "hoodie.embed.timeline.server": "false",
}


def _error(e: BaseException) -> dict[str, Any]:
    java = getattr(e, "java_exception", None)
    causes: list[str] = []
    if java is not None:  # Py4JJavaError: the Java class and its cause chain
        cls = java.getClass().getName()
        message = str(java.getMessage())
        cause = java.getCause()
        while cause is not None and len(causes) < 8:
            causes.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
            cause = cause.getCause()
    else:
        cls = type(e).__name__
        message = str(e)
    return {"ok": False, "class": cls, "message": message[:4000], "causes": [c[:2000] for c in causes]}


def _rows(df: Any) -> dict[str, Any]:
    rows = df.collect()
    return {"ok": True, "columns": list(df.columns), "rows": [[jsonable(v) for v in r] for r in rows]}


def main() -> int:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("hudi-oracle")
    for key, value in HUDI_CONF.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.sql.warehouse.dir", sys.argv[1])
    start = time.monotonic()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    answers.write(json.dumps({"ok": True, "ready": True, "seconds": round(time.monotonic() - start, 2),
                              "spark": spark.version}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("quit"):
            break
        start = time.monotonic()
        try:
            if "sql" in request:
                answer = _rows(spark.sql(request["sql"]))
            else:
                answer = _rows(spark.read.format("hudi").load(request["read"]))
        except Exception as e:  # every failure is an answer, the runner lives on
            answer = _error(e)
        answer["seconds"] = round(time.monotonic() - start, 3)
        answers.write(json.dumps(answer) + "\n")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
