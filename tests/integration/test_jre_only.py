"""A Java runtime is enough (issue 31): the shell starts, creates, writes and reads a Hudi table on a machine
whose only Java is a runtime (no ``javac`` on ``PATH``, beside ``java`` or in ``$JAVA_HOME``) with an empty
cache, using the jars shipped in the packages; and those jars are what ``python -m sqlext.jvm.build``
rebuilds from the sources (when a JDK is present)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from engine.spark import java_jar
from engine.spark.java_jar import SOURCES_ENTRY, JavaJar
from sqlext.jvm import build

ROOT = Path(__file__).resolve().parents[2]


def entries(jar: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(jar) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.slow
@pytest.mark.parametrize("shipped", build.SHIPPED_JARS, ids=lambda j: j.jar.name)
def test_rebuilding_a_jar_from_its_sources_reproduces_it(shipped: JavaJar, tmp_path: Path) -> None:
    javac = java_jar.find_javac()
    if javac is None:
        pytest.skip("no javac (a JDK 17+) to rebuild the jar with; the shipped jar's record is checked in "
                    "tests/unit/test_jar_record.py")
    rebuilt = shipped.build(tmp_path / shipped.jar.name)
    old, new = entries(shipped.jar), entries(rebuilt)
    assert list(new) == list(old), f"rebuilt {shipped.jar} has other entries: run `{java_jar.BUILD_COMMAND}`"
    assert new[SOURCES_ENTRY] == old[SOURCES_ENTRY]
    jdk = java_jar.javac_version(javac).removeprefix("javac ")
    if f"Build-Jdk: {jdk}\r\n".encode() in old["META-INF/MANIFEST.MF"]:
        # the same JDK as the shipped jar's: the very same bytes
        assert rebuilt.read_bytes() == shipped.jar.read_bytes()
    else:  # another JDK may compile other bytes; still, a rebuild with it gives the same bytes again
        assert shipped.build(tmp_path / "again.jar").read_bytes() == rebuilt.read_bytes()


@pytest.mark.slow
def test_a_compile_error_of_edited_sources_carries_javacs_output(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if java_jar.find_javac() is None:
        pytest.skip("no javac (a JDK 17+) to compile edited sources with")
    source = tmp_path / "src" / "io" / "sqlext" / "Broken.java"
    source.parent.mkdir(parents=True)
    source.write_text("package io.sqlext; public class Broken { int x = ; }\n")
    monkeypatch.setenv("SQLEXT_CACHE_DIR", str(tmp_path / "cache"))
    broken = JavaJar(tmp_path / "src", tmp_path / "broken.jar", ("slf4j-api-*.jar",), "io.sqlext.Broken")
    with pytest.raises(java_jar.JavaBuildError, match=r"javac failed[\s\S]*Broken\.java[\s\S]*error"):
        broken.resolve()
    assert list((tmp_path / "cache" / "jvm").rglob("*.jar")) == []


def jre_only_environment(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine with a Java runtime only: ``JAVA_HOME`` is a folder whose ``bin`` holds just
    a ``java`` script running the real launcher, and every ``PATH`` folder that holds ``javac`` is replaced by
    a copy of its links without ``javac`` and with that script as ``java`` (so resolving ``java`` finds no
    ``javac`` beside it either). ``HOME`` and the sqlext cache are empty folders."""
    real_java = Path(shutil.which("java") or os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "java")).resolve()
    assert real_java.is_file(), "no java to run Spark with"
    jre_bin = tmp_path / "jre" / "bin"
    jre_bin.mkdir(parents=True)
    (jre_bin / "java").write_text(f'#!/bin/sh\nexec "{real_java}" "$@"\n')
    (jre_bin / "java").chmod(0o755)
    path: list[str] = []
    for index, folder in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if not folder or not (Path(folder) / "javac").exists():
            path.append(folder)
            continue
        copy = tmp_path / f"path{index}"
        copy.mkdir()
        for entry in Path(folder).iterdir():
            if entry.name not in {"javac", "java"}:
                (copy / entry.name).symlink_to(entry)
        (copy / "java").symlink_to(jre_bin / "java")
        path.append(str(copy))
    (tmp_path / "home").mkdir()
    env = {key: value for key, value in os.environ.items() if key not in {"JAVA_HOME", "SPARK_HOME", "PYTHONPATH"}}
    return {**env, "PATH": os.pathsep.join(path), "JAVA_HOME": str(tmp_path / "jre"), "HOME": str(tmp_path / "home"),
            "SQLEXT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}


@pytest.mark.slow
@pytest.mark.spark
def test_the_shell_runs_hudi_sql_with_a_java_runtime_only(tmp_path: Path) -> None:
    env = jre_only_environment(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", "import shutil; from engine.spark.java_jar import find_javac; "
                               "print(find_javac(), shutil.which('java'))"],
        env=env, capture_output=True, text=True, timeout=120, check=True)
    javac, java = probe.stdout.split()
    assert javac == "None" and Path(java).resolve() == tmp_path / "jre" / "bin" / "java", probe.stdout
    sql = ("CREATE TABLE jre_only (id INT, name STRING, ts BIGINT) USING hudi "
           "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts'); "
           "INSERT INTO jre_only VALUES (1, 'a', 10), (2, 'b', 20); "
           "SELECT id, name FROM jre_only ORDER BY id")
    result = subprocess.run(
        [sys.executable, "-m", "sqlext.shell", "-S", "--warehouse", str(tmp_path / "warehouse"), "-e", sql],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.splitlines()[-2:] == ["1\ta", "2\tb"], result.stdout
    assert (tmp_path / "warehouse" / "jre_only" / ".hoodie" / "hoodie.properties").is_file()
    assert not (tmp_path / "cache").exists(), "something was compiled into the cache"
