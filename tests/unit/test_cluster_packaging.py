"""What running on a cluster needs of the packages (README "Running on a cluster"): imported from a zip (as
``--py-files`` / ``spark.submit.pyFiles`` ship them to executors) the engine still finds its bundled Avro
schemas, so executors write and read delete blocks; and under ``spark-submit``, where pyspark is imported from
``$SPARK_HOME/python/lib/pyspark.zip`` (no ``jars/`` beside it), the shipped session catalog jar is used as is
and a rebuild finds the Spark installation's jars."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pyspark
import pytest

from engine.spark import java_jar
from sqlext import jvm

ROOT = Path(__file__).resolve().parents[2]

ZIPPED_DELETE_BLOCK = """
import sys
sys.path.insert(0, sys.argv[1])
import engine
from engine.formats.log_delete import DeleteBlock, DeleteRecord
from engine.timeline import avro_serde
assert engine.__file__.startswith(sys.argv[1]), engine.__file__
block = DeleteBlock.from_records([DeleteRecord("k1", "p=1", 7, "LongWrapper")], "20260101000000000")
print(len(avro_serde.bundled_schemas()), [(d.record_key, d.ordering_value) for d in block.delete_records()])
"""


def test_a_zipped_engine_reads_its_bundled_avro_schemas(tmp_path: Path) -> None:
    archive = tmp_path / "sqlext-packages.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((ROOT / "engine").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(ROOT))
    done = subprocess.run([sys.executable, "-c", ZIPPED_DELETE_BLOCK, str(archive)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    bundled = len(list((ROOT / "engine" / "timeline" / "avro").glob("*.avsc")))
    assert done.stdout.strip() == f"{bundled} [('k1', 7)]"


def test_catalog_builds_against_spark_home_when_pyspark_is_zipped(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    installed = Path(pyspark.__file__).resolve().parent
    assert (installed / "jars").is_dir()
    # where spark-submit's Python imports pyspark from
    monkeypatch.setattr(pyspark, "__file__", str(tmp_path / "python" / "lib" / "pyspark.zip" / "pyspark" / "__init__.py"))
    monkeypatch.setenv("SPARK_HOME", str(installed))
    assert java_jar.pyspark_home() == (installed, pyspark.__version__)  # what a rebuild compiles against
    monkeypatch.delenv("SPARK_HOME")
    with pytest.raises(java_jar.JavaBuildError, match=r"no jars/ directory .*\$SPARK_HOME"):
        java_jar.pyspark_home()
    assert jvm.catalog_jar() == jvm.CATALOG_JAR.jar  # the shipped jar needs no jars/ folder
