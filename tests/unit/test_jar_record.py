"""The jars of compiled Java classes shipped in the packages (``sqlext/jvm/sqlext-catalog.jar``,
``hive_sync/sqlext-hms-hook.jar``): each records the sources it was built from and must match them, holds only
our classes, and is what start-up uses without any ``javac``; edited sources are compiled into the cache, or
refused with the build command when there is no ``javac``. No JVM and no javac run here (compiles are faked;
real rebuilds: tests/integration/test_jre_only.py)."""

from __future__ import annotations

import logging
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from engine.spark import java_jar
from engine.spark.java_jar import BUILD_COMMAND, SOURCES_ENTRY, JavaBuildError, JavaJar
from hive_sync import metastore
from sqlext import jvm
from sqlext.errors import SqlError
from sqlext.jvm import build

JAVA_17_MAJOR = 61
"""Class file major version of Java 17 (``javac --release 17``)."""


@pytest.fixture
def no_javac(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A JRE-only machine as far as the lookup goes: no JAVA_HOME, an empty PATH; an empty cache. Returns the
    cache root ($SQLEXT_CACHE_DIR)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("SQLEXT_CACHE_DIR", str(tmp_path / "cache"))
    assert java_jar.find_javac() is None
    return tmp_path / "cache"


def edited_copy(tmp_path: Path, shipped: JavaJar) -> tuple[JavaJar, Path]:
    """A copy of ``shipped`` (sources and jar) in ``tmp_path`` whose first source file has one more line.
    Returns the copy and the edited file."""
    sources = tmp_path / "java"
    shutil.copytree(shipped.sources, sources)
    jar = tmp_path / shipped.jar.name
    shutil.copyfile(shipped.jar, jar)
    edited = sorted(sources.rglob("*.java"))[0]
    edited.write_text(edited.read_text() + "// edited\n")
    return JavaJar(sources, jar, shipped.classpath, shipped.main_class), edited


@pytest.mark.parametrize("shipped", build.SHIPPED_JARS, ids=lambda j: j.jar.name)
def test_the_shipped_jar_was_built_from_the_sources_beside_it(shipped: JavaJar) -> None:
    stale = shipped.stale_sources()
    assert stale == [], (f"{shipped.jar} was not rebuilt after {', '.join(stale)} changed under {shipped.sources}: "
                         f"run `{BUILD_COMMAND}` (needs a JDK 17+) and commit the jar with the sources")
    assert shipped.recorded_listing() == shipped.source_listing()


def test_the_build_command_checks_every_jar(capsys: pytest.CaptureFixture[str]) -> None:
    assert build.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [f"{j.jar} is current" for j in build.SHIPPED_JARS]
    assert {j.jar for j in build.SHIPPED_JARS} == {jvm.CATALOG_JAR.jar, metastore.INIT_HOOK_JAR.jar}


@pytest.mark.parametrize("shipped", build.SHIPPED_JARS, ids=lambda j: j.jar.name)
def test_the_shipped_jar_holds_only_our_classes_deterministically(shipped: JavaJar) -> None:
    with zipfile.ZipFile(shipped.jar) as archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        assert names[:2] == ["META-INF/MANIFEST.MF", SOURCES_ENTRY]
        classes = names[2:]
        assert classes == sorted(classes) and all(n.endswith(".class") for n in classes)
        assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.external_attr >> 16 for i in infos} == {0o644}
        majors = {int.from_bytes(archive.read(n)[6:8], "big") for n in classes}
        manifest = archive.read("META-INF/MANIFEST.MF").decode()
    assert majors == {JAVA_17_MAJOR}
    assert f"Created-By: {BUILD_COMMAND}\r\n" in manifest and "Build-Jdk-Spec: 17\r\n" in manifest
    sources = {p.relative_to(shipped.sources).with_suffix("").as_posix() for p in shipped.sources.rglob("*.java")}
    assert {n.removesuffix(".class").split("$")[0] for n in classes} == sources  # ours, all of ours
    assert shipped.jar.stat().st_size < 100_000


def test_start_up_uses_the_shipped_jars_without_javac(no_javac: Path) -> None:
    assert jvm.catalog_jar() == jvm.CATALOG_JAR.jar
    assert jvm.spark_conf()["spark.jars"] == str(jvm.CATALOG_JAR.jar)
    assert metastore.Metastore(no_javac.parent / "hms").build_init_hook() == metastore.INIT_HOOK_JAR.jar
    assert not no_javac.exists()  # nothing compiled, nothing cached


def test_edited_sources_without_javac_name_the_jar_and_the_build_command(
        tmp_path: Path, no_javac: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edited_jar, edited = edited_copy(tmp_path, jvm.CATALOG_JAR)
    monkeypatch.setattr(jvm, "CATALOG_JAR", edited_jar)
    with pytest.raises(SqlError) as caught:
        jvm.catalog_jar()
    message = str(caught.value)
    assert isinstance(caught.value, jvm.JvmBuildError)
    assert f"{edited_jar.jar} was built from other sources than those under {edited_jar.sources}" in message
    assert f"(changed: {edited.relative_to(edited_jar.sources).as_posix()})" in message
    assert "needs a JDK 17+ with javac, and none was found" in message
    assert f"`{BUILD_COMMAND}`" in message
    assert not no_javac.exists()


def test_a_new_source_file_and_a_missing_jar_are_named(tmp_path: Path, no_javac: Path) -> None:
    edited_jar, _ = edited_copy(tmp_path, jvm.CATALOG_JAR)
    (edited_jar.sources / "io" / "sqlext" / "New.java").write_text("package io.sqlext; class New {}\n")
    assert "io/sqlext/New.java" in edited_jar.stale_sources()
    edited_jar.jar.unlink()
    assert edited_jar.stale_sources() == ["<no jar>"]
    with pytest.raises(JavaBuildError, match=rf"{edited_jar.jar} is missing or unreadable; .*{BUILD_COMMAND}"):
        edited_jar.resolve()


def test_an_edited_hook_without_javac_leaves_the_metastore_without_it(
        tmp_path: Path, no_javac: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    edited_jar, _ = edited_copy(tmp_path, metastore.INIT_HOOK_JAR)
    monkeypatch.setattr(metastore, "INIT_HOOK_JAR", edited_jar)
    with caplog.at_level(logging.WARNING, logger="hive_sync.metastore"):
        assert metastore.Metastore(tmp_path / "hms").build_init_hook() is None
    assert "lock API will fail" in caplog.text and str(edited_jar.jar) in caplog.text and BUILD_COMMAND in caplog.text


def test_edited_sources_are_compiled_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two racing start-ups (javac faked, each waiting for the other) both get the one complete cached jar,
    which records the edited sources; a third start-up reuses it without compiling."""
    monkeypatch.setenv("SQLEXT_CACHE_DIR", str(tmp_path / "cache"))
    edited_jar, _ = edited_copy(tmp_path, jvm.CATALOG_JAR)
    barrier = threading.Barrier(2)
    compiles: list[Path] = []

    def fake_compile(self: JavaJar, javac: str, jars_dir: Path, classes: Path) -> None:
        assert self is edited_jar and javac == "/jdk/bin/javac" and jars_dir.is_dir()
        compiles.append(classes)
        barrier.wait(timeout=30)  # both builds are inside their temporary folders at once
        (classes / "io").mkdir()
        (classes / "io" / "Fake.class").write_bytes(b"\xca\xfe\xba\xbe")

    monkeypatch.setattr(java_jar, "find_javac", lambda: "/jdk/bin/javac")
    monkeypatch.setattr(java_jar, "javac_version", lambda javac: "javac 17.0.99")
    monkeypatch.setattr(JavaJar, "_compile", fake_compile)
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(edited_jar.resolve())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and results[0] == results[1] and len(compiles) == 2
    cached = results[0]
    assert cached.name == jvm.JAR_NAME and cached.parent.parent == java_jar.cache_dir() == tmp_path / "cache" / "jvm"
    with zipfile.ZipFile(cached) as archive:
        assert archive.testzip() is None
        assert archive.namelist() == ["META-INF/MANIFEST.MF", SOURCES_ENTRY, "io/Fake.class"]
        assert "Build-Jdk: 17.0.99\r\n" in archive.read("META-INF/MANIFEST.MF").decode()
    assert edited_jar.recorded_listing(cached) == edited_jar.source_listing() != edited_jar.recorded_listing()
    assert [p.name for p in cached.parent.iterdir()] == [jvm.JAR_NAME]  # no temporary folders left
    assert edited_jar.resolve() == cached and len(compiles) == 2
