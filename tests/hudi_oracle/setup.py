"""Set up Apache Hudi's own Spark as the oracle: a venv with ``pyspark==3.5.x`` and Hudi's Spark bundle jar.

Run ``python -m tests.hudi_oracle.setup`` (``.ci/run`` does, before the tests). Idempotent and cached: a second run
checks the venv's pyspark version and the jar's SHA-1 and returns at once. Writes a status file the tests read,
so a failed set-up (no network) makes them skip with its reason rather than fail.

Where things go (``SQLEXT_ORACLE_HOME``, default ``~/.cache/sqlext-oracle``):
  ``venv/``                                 the oracle's Python (``SQLEXT_ORACLE_VENV`` overrides)
  ``jars/hudi-spark3.5-bundle_2.12-0.15.0.jar``  Hudi's bundle, from Maven Central
  ``status.json``                          ``{"ok": bool, "reason": str, "python": str, "jar": str, ...}``

The jar is a plain HTTPS download of Maven Central's file with its published ``.sha1`` checked, not ``mvn
dependency:copy`` (needs Maven, absent from a fresh machine, and resolves a whole plugin tree first) nor
``spark.jars.packages`` (Ivy resolution at every runner start, its own cache and lock files, and a network
round-trip each time even when cached): the bundle is one self-contained jar with no dependencies to resolve.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PYSPARK_VERSION = "3.5.9"
"""The newest pyspark 3.5 on PyPI (Hudi 0.15.0's Spark 3.5 bundle is built against 3.5.x)."""

HUDI_VERSION = "0.15.0"
HUDI_ARTIFACT = f"hudi-spark3.5-bundle_2.12-{HUDI_VERSION}.jar"
MAVEN_CENTRAL = os.environ.get("SQLEXT_ORACLE_MAVEN", "https://repo1.maven.org/maven2")
HUDI_URL = f"{MAVEN_CENTRAL}/org/apache/hudi/hudi-spark3.5-bundle_2.12/{HUDI_VERSION}/{HUDI_ARTIFACT}"


def home() -> Path:
    """The oracle's cache folder."""
    return Path(os.environ.get("SQLEXT_ORACLE_HOME", Path.home() / ".cache" / "sqlext-oracle"))


def venv_dir() -> Path:
    """The oracle's venv."""
    return Path(os.environ.get("SQLEXT_ORACLE_VENV", home() / "venv"))


def venv_python() -> Path:
    """The venv's python executable."""
    return venv_dir() / "bin" / "python"


def jar_path() -> Path:
    """Hudi's bundle jar in the cache."""
    return home() / "jars" / HUDI_ARTIFACT


def status_path() -> Path:
    """Where the last set-up's outcome is written."""
    return home() / "status.json"


def _installed_pyspark() -> str | None:
    python = venv_python()
    if not python.exists():
        return None
    out = subprocess.run([str(python), "-c", "import pyspark; print(pyspark.__version__)"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def ensure_venv() -> None:
    """Create the venv and install pyspark (only when missing or another version)."""
    if _installed_pyspark() == PYSPARK_VERSION:
        return
    pip = [str(venv_python()), "-m", "pip"]
    if not venv_python().exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv_dir())], capture_output=True, text=True)
        if made.returncode != 0:  # no ensurepip (Debian without python3-venv): the host's pip installs into it
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv_dir())], check=True)
    if subprocess.run([*pip, "--version"], capture_output=True).returncode != 0:
        pip = [sys.executable, "-m", "pip", "--python", str(venv_python())]
    subprocess.run([*pip, "install", "--quiet", "--disable-pip-version-check", f"pyspark=={PYSPARK_VERSION}"],
                   check=True)
    found = _installed_pyspark()
    if found != PYSPARK_VERSION:
        raise RuntimeError(f"pyspark {PYSPARK_VERSION} not importable in {venv_dir()} (found {found})")


def _sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch(url: str, timeout: float = 120) -> bytes:
    last: Exception | None = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                return response.read()
        except OSError as e:  # URLError is an OSError
            last = e
            time.sleep(2 * (attempt + 1))
    raise RuntimeError(f"cannot download {url}: {last}")


def ensure_jar() -> None:
    """Download Hudi's bundle from Maven Central and check its published SHA-1 (only when missing or corrupt)."""
    target = jar_path()
    expected = _fetch(HUDI_URL + ".sha1", timeout=30).decode().split()[0].strip() \
        if not (target.exists() and target.with_suffix(".sha1").exists()) else \
        target.with_suffix(".sha1").read_text().strip()
    if target.exists() and _sha1(target) == expected:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    partial.write_bytes(_fetch(HUDI_URL))
    got = _sha1(partial)
    if got != expected:
        partial.unlink()
        raise RuntimeError(f"{HUDI_URL}: SHA-1 {got}, Maven Central publishes {expected}")
    partial.replace(target)
    target.with_suffix(".sha1").write_text(expected)


def read_status() -> dict[str, object]:
    """The last set-up's outcome, or a not-set-up reason."""
    try:
        return json.loads(status_path().read_text())
    except (OSError, ValueError):
        return {"ok": False, "reason": f"oracle not set up: run `python -m tests.hudi_oracle.setup` "
                                       f"(no {status_path()})"}


def main() -> int:
    """Set up; always writes the status file; exit code 0 even on failure (the tests skip with the reason)."""
    start = time.monotonic()
    status: dict[str, object]
    try:
        ensure_venv()
        ensure_jar()
        status = {"ok": True, "reason": "", "python": str(venv_python()), "jar": str(jar_path()),
                  "pyspark": PYSPARK_VERSION, "hudi": HUDI_VERSION}
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        status = {"ok": False, "reason": f"hudi oracle set-up failed: {e}"}
    status["seconds"] = round(time.monotonic() - start, 1)
    home().mkdir(parents=True, exist_ok=True)
    status_path().write_text(json.dumps(status, indent=1))
    sys.stderr.write(f"hudi oracle set-up: {'ok' if status['ok'] else status['reason']} ({status['seconds']} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
