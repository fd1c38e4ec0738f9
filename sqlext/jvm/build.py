"""Rebuild the jars sqlext ships from their Java sources: ``python -m sqlext.jvm.build``.

Builds ``sqlext/jvm/sqlext-catalog.jar`` (the session catalog, :data:`sqlext.jvm.CATALOG_JAR`) and
``hive_sync/sqlext-hms-hook.jar`` (the metastore init hook, :data:`hive_sync.metastore.INIT_HOOK_JAR`) in the
folders the packages are imported from, with ``javac --release 17`` against the installed pyspark's jars. Each
jar is deterministic and records the hashes of its sources (``META-INF/sqlext/sources.sha256``); run this after
editing any ``.java`` file and commit the jars with the sources. Needs a JDK 17+ (``javac`` on ``PATH`` or
``$JAVA_HOME/bin``). ``--check`` builds nothing and exits 1 when a jar is out of date with its sources.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.spark.java_jar import JavaBuildError, JavaJar
from hive_sync.metastore import INIT_HOOK_JAR
from sqlext.jvm import CATALOG_JAR

SHIPPED_JARS: tuple[JavaJar, ...] = (CATALOG_JAR, INIT_HOOK_JAR)
"""Every jar shipped in the packages, with its sources."""


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or with ``--check`` verify) every jar of :data:`SHIPPED_JARS`; returns the exit status
    (0 done/current, 1 a jar is stale (``--check``) or a build failed, with the reason on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m sqlext.jvm.build", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report jars out of date with their sources")
    args = parser.parse_args(argv)
    status = 0
    for jar in SHIPPED_JARS:
        if args.check:
            stale = jar.stale_sources()
            if stale:
                sys.stderr.write(f"{jar.jar} is out of date with {jar.sources}: {', '.join(stale)}\n")
                status = 1
            else:
                sys.stdout.write(f"{jar.jar} is current\n")
            continue
        try:
            built = jar.build()
        except JavaBuildError as exc:
            sys.stderr.write(f"{exc}\n")
            return 1
        sys.stdout.write(f"built {built} ({built.stat().st_size} bytes)\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
