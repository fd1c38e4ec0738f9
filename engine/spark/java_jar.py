"""Java classes shipped as jars beside their sources, so running them needs only a Java runtime.

sqlext's session catalog (``sqlext/jvm/java`` -> ``sqlext/jvm/sqlext-catalog.jar``) and hive_sync's metastore
init hook (``hive_sync/java`` -> ``hive_sync/sqlext-hms-hook.jar``) are compiled ahead of time with
``python -m sqlext.jvm.build`` (``javac --release 17`` against the installed pyspark's jars) and shipped in the
package. Each jar records the sources it was built from in the entry :data:`SOURCES_ENTRY`, in ``sha256sum``
form (``<sha256>  <path relative to the source folder>`` per ``.java`` file, sorted by path).

At start-up :meth:`JavaJar.resolve` uses the shipped jar when that record equals the sources shipped beside
it. When they differ (a developer edited the Java and did not rebuild) it compiles the sources with ``javac``
into a cache (``$SQLEXT_CACHE_DIR/jvm``, else ``~/.cache/sqlext/jvm``), keyed by the sources and the pyspark
version; without ``javac`` it raises :class:`JavaBuildError` naming the jar and the build command.

Jars are written deterministically (entries sorted, manifest first, fixed timestamps and permissions), so a
rebuild from the same sources with the same JDK gives the same bytes.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError

__all__ = [
    "BUILD_COMMAND",
    "JAVA_RELEASE",
    "SOURCES_ENTRY",
    "JavaBuildError",
    "JavaJar",
    "cache_dir",
    "find_javac",
    "javac_version",
    "pyspark_home",
    "source_listing",
    "write_jar",
]

logger = logging.getLogger(__name__)

BUILD_COMMAND = "python -m sqlext.jvm.build"
"""The one command that rebuilds every shipped jar from its sources (needs a JDK 17+ with ``javac``)."""

JAVA_RELEASE = "17"
"""``javac --release``: Spark 4 runs on Java 17+, so the classes load on any JVM PySpark supports."""

SOURCES_ENTRY = "META-INF/sqlext/sources.sha256"
"""Jar entry recording the sources the jar was built from (``sha256sum`` format, see :func:`source_listing`)."""

_BUILD_FORMAT = "sqlext-jar/2"
"""Part of the cache key; changes whenever the way a jar is built changes, so older cached jars are not reused."""

_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""Timestamp of every jar entry (the earliest a zip can hold), so rebuilds are byte-identical."""

_JAVAC_TIMEOUT_S = 600.0


class JavaBuildError(EngineError):
    """A jar of sqlext's Java classes is unusable and cannot be built: its sources changed and there is no
    ``javac``, pyspark's jars are missing, or ``javac`` failed. The message names the jar, the source folder
    and (when relevant) the build command or javac's output."""


def source_listing(root: Path) -> str:
    """The ``sha256sum``-style record of every ``*.java`` under ``root``: one line
    ``<sha256 hex of the file's bytes>  <path relative to root, '/'-separated>`` per file, sorted by path.

    Raises:
        JavaBuildError: no ``.java`` file under ``root`` (package installed without its sources?).
    """
    sources = sorted(root.rglob("*.java"), key=lambda p: p.relative_to(root).as_posix())
    if not sources:
        raise JavaBuildError(f"no Java sources under {root} (package data missing from the install?)")
    return "".join(
        f"{hashlib.sha256(s.read_bytes()).hexdigest()}  {s.relative_to(root).as_posix()}\n" for s in sources
    )


def _listing_diff(recorded: str, current: str) -> list[str]:
    """Paths whose hash differs, or that are only on one side, between two :func:`source_listing` texts."""
    def parse(text: str) -> dict[str, str]:
        return {path: digest for digest, _, path in (line.partition("  ") for line in text.splitlines())}

    old, new = parse(recorded), parse(current)
    return sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))


def pyspark_home() -> tuple[Path, str]:
    """The Spark installation holding ``jars/``, and PySpark's version: the pyspark package folder (a pip
    install), else ``$SPARK_HOME`` (under ``spark-submit`` pyspark is imported from
    ``$SPARK_HOME/python/lib/pyspark.zip``, which holds no jars).

    Raises:
        JavaBuildError: neither place has a ``jars/`` folder.
    """
    import pyspark

    candidates = [Path(pyspark.__file__).resolve().parent]
    if os.environ.get("SPARK_HOME"):
        candidates.append(Path(os.environ["SPARK_HOME"]).resolve())
    for home in candidates:
        if (home / "jars").is_dir():
            return home, str(pyspark.__version__)
    raise JavaBuildError(f"no jars/ directory to compile against in {' or '.join(map(str, candidates))} "
                         "(the pyspark package, $SPARK_HOME)")


def find_javac() -> str | None:
    """Path of ``javac``: ``$JAVA_HOME/bin/javac``, else ``javac`` on ``PATH``, else beside the ``java`` on
    ``PATH`` after resolving its links (a JDK whose ``javac`` is not linked into ``PATH``); ``None`` when none
    exists (a Java runtime without the JDK)."""
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "javac")
    on_path = shutil.which("javac")
    if on_path:
        candidates.append(Path(on_path))
    java = shutil.which("java")
    if java:
        candidates.append(Path(java).resolve().parent / "javac")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def cache_dir() -> Path:
    """Where jars compiled at start-up are kept: ``$SQLEXT_CACHE_DIR/jvm``, else ``~/.cache/sqlext/jvm``."""
    root = os.environ.get("SQLEXT_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "sqlext"
    return base / "jvm"


def javac_version(javac: str) -> str:
    """What ``javac -version`` prints, e.g. ``javac 17.0.15`` (recorded in the manifest as ``Build-Jdk``).

    Raises:
        JavaBuildError: javac cannot be run.
    """
    try:
        result = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaBuildError(f"could not run {javac} -version: {exc}") from exc
    return (result.stdout + result.stderr).strip().splitlines()[-1] if result.returncode == 0 else "unknown"


def _manifest(pyspark_version: str, jdk: str) -> str:
    """The jar manifest (CRLF lines, each under the format's 72-byte limit)."""
    lines = [
        "Manifest-Version: 1.0",
        f"Created-By: {BUILD_COMMAND}",
        f"Build-Jdk: {jdk.removeprefix('javac ')}",
        f"Build-Jdk-Spec: {JAVA_RELEASE}",
        f"Sqlext-Built-Against: pyspark {pyspark_version}",
    ]
    return "".join(line + "\r\n" for line in lines) + "\r\n"


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so the permission bits below mean the same everywhere
    info.external_attr = 0o644 << 16
    return info


def write_jar(classes: Path, jar: Path, listing: str, pyspark_version: str, jdk: str) -> None:
    """Zip the ``*.class`` files under ``classes`` into ``jar``: the manifest first, then :data:`SOURCES_ENTRY`
    holding ``listing``, then the classes sorted by path; every entry with the same timestamp and mode."""
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr(_entry("META-INF/MANIFEST.MF"), _manifest(pyspark_version, jdk))
        archive.writestr(_entry(SOURCES_ENTRY), listing)
        for name in sorted(p.relative_to(classes).as_posix() for p in classes.rglob("*.class")):
            archive.writestr(_entry(name), (classes / name).read_bytes())


@dataclass(frozen=True)
class JavaJar:
    """One jar of sqlext's Java classes, shipped at ``jar`` and built from the ``*.java`` under ``sources``.

    Attributes:
        sources: root of the Java source tree (package folders below it).
        jar: the shipped jar inside the Python package.
        classpath: glob patterns, relative to pyspark's ``jars/``, of what the sources compile against (the
            whole folder when empty; a few jars make javac much faster).
        main_class: the class the jar exists for, named in messages.
    """

    sources: Path
    jar: Path
    classpath: tuple[str, ...] = ()
    main_class: str = ""

    def source_listing(self) -> str:
        """:func:`source_listing` of :attr:`sources`. Raises JavaBuildError when there are none."""
        return source_listing(self.sources)

    def recorded_listing(self, jar: Path | None = None) -> str | None:
        """The :data:`SOURCES_ENTRY` text of ``jar`` (default :attr:`jar`); ``None`` when the jar is missing,
        unreadable or holds no such entry."""
        try:
            with zipfile.ZipFile(jar or self.jar) as archive:
                return archive.read(SOURCES_ENTRY).decode("utf-8")
        except (OSError, KeyError, zipfile.BadZipFile):
            return None

    def stale_sources(self) -> list[str]:
        """Source paths (relative to :attr:`sources`) that differ from what the shipped jar was built from;
        empty when the jar is current. ``["<no jar>"]`` when the jar or its record is missing."""
        recorded = self.recorded_listing()
        if recorded is None:
            return ["<no jar>"]
        return _listing_diff(recorded, self.source_listing())

    def resolve(self) -> Path:
        """The jar to put on the classpath: the shipped :attr:`jar` when it was built from the sources beside
        it, else a jar compiled from those sources under :func:`cache_dir` (once per sources and pyspark
        version; compiling takes a few seconds).

        Raises:
            JavaBuildError: the sources differ from the jar and there is no ``javac`` (the message names the
                jar, the changed files and :data:`BUILD_COMMAND`), or compiling fails.
        """
        listing = self.source_listing()
        recorded = self.recorded_listing()
        if recorded == listing:
            return self.jar
        changed = _listing_diff(recorded, listing) if recorded is not None else []
        why = (f"{self.jar} was built from other sources than those under {self.sources} "
               f"(changed: {', '.join(changed)})" if recorded is not None else f"{self.jar} is missing or unreadable")
        home, version = pyspark_home()
        key = hashlib.sha256(f"{_BUILD_FORMAT}\0{JAVA_RELEASE}\0{version}\0{listing}".encode()).hexdigest()
        cached = cache_dir() / key[:32] / self.jar.name
        if self.recorded_listing(cached) == listing:
            return cached
        javac = find_javac()
        if javac is None:
            raise JavaBuildError(
                f"{why}; compiling {self.main_class} needs a JDK {JAVA_RELEASE}+ with javac, and none was found "
                f"($JAVA_HOME/bin, PATH). Rebuild the jar with `{BUILD_COMMAND}` on a machine with a JDK, or "
                "restore the sources it was built from"
            )
        logger.info("%s; compiling it with %s into %s", why, javac, cached)
        self._build_into(cached, javac, home, version, listing)
        return cached

    def build(self, target: Path | None = None) -> Path:
        """Compile the sources with ``javac --release 17`` against pyspark's jars and write the jar to
        ``target`` (default the shipped :attr:`jar`), replacing it atomically. Returns ``target``.

        Raises:
            JavaBuildError: no ``javac``, no pyspark jars, or compilation fails (with javac's output).
        """
        javac = find_javac()
        if javac is None:
            raise JavaBuildError(f"building {self.jar} needs a JDK {JAVA_RELEASE}+ with javac ($JAVA_HOME/bin, PATH)")
        home, version = pyspark_home()
        target = target or self.jar
        self._build_into(target, javac, home, version, self.source_listing())
        return target

    def _build_into(self, target: Path, javac: str, home: Path, version: str, listing: str) -> None:
        """Compile into a private temporary folder beside ``target`` and rename the jar into place, so
        concurrent builders never expose a half-written jar (the last of two identical builds wins)."""
        started = time.monotonic()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as work:
                classes = Path(work) / "classes"
                classes.mkdir()
                self._compile(javac, home / "jars", classes)
                built = Path(work) / target.name
                write_jar(classes, built, listing, version, javac_version(javac))
                os.replace(built, target)
        except OSError as exc:
            raise JavaBuildError(f"could not write {target}: {exc}") from exc
        logger.info("built %s (%s, pyspark %s) in %.1f s", target, self.main_class, version,
                    time.monotonic() - started)

    def _classpath(self, jars_dir: Path) -> str:
        if not self.classpath:
            return str(jars_dir / "*")
        found: list[str] = []
        for pattern in self.classpath:
            matches = sorted(glob.glob(str(jars_dir / pattern)))
            if not matches:
                raise JavaBuildError(f"no {pattern} under {jars_dir} to compile {self.main_class} against")
            found.append(matches[0])
        return os.pathsep.join(found)

    def _compile(self, javac: str, jars_dir: Path, classes: Path) -> None:
        """Run javac over the sources into ``classes``; JavaBuildError with its output on failure."""
        sources = sorted(str(p) for p in self.sources.rglob("*.java"))
        command = [javac, "--release", JAVA_RELEASE, "-encoding", "UTF-8", "-Xlint:all,-path,-options",
                   "-d", str(classes), "-cp", self._classpath(jars_dir), *sources]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=_JAVAC_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise JavaBuildError(f"could not run {javac} to compile {self.main_class}: {exc}") from exc
        output = (result.stdout + result.stderr).strip()
        if result.returncode != 0:
            raise JavaBuildError(f"javac failed (exit {result.returncode}) compiling {self.main_class} from "
                                 f"{self.sources} against {jars_dir}:\n{output}")
        if output:
            logger.debug("javac output for %s:\n%s", self.main_class, output)

