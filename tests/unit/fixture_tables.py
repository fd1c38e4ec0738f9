"""Access to the Hudi-written fixture tables (``tests/fixtures/hudi-written``) for unit tests.

Each ``.zip`` holds one table folder (plus macOS ``__MACOSX`` junk, skipped). Tests extract into a
temporary directory and never touch the originals.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.conftest import HUDI_FIXTURES

FIXTURES = HUDI_FIXTURES


def extract_tables(dest: Path, pattern: str = "**/v6_*.zip") -> list[Path]:
    """Extract every fixture zip matching ``pattern`` (relative to the fixtures root; default: the version-6
    tables) under ``dest``.

    Zips are extracted to ``dest/<zip's folder relative to the root>`` so tables with the same name from
    different folders (cow/mor) do not collide.

    Returns:
        The table base paths, sorted.
    """
    tables = []
    for archive in sorted(FIXTURES.glob(pattern)):
        target = dest / archive.parent.relative_to(FIXTURES)
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX")]
            zf.extractall(target, members)
        tables.append(target / archive.stem)
    return tables


def table_properties(base: Path) -> dict[str, str]:
    """``hoodie.properties`` as a dict, Java ``\\:`` / ``\\=`` escapes removed (values are ASCII there)."""
    props = {}
    for line in (base / ".hoodie" / "hoodie.properties").read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        props[key.strip()] = value.replace("\\:", ":").replace("\\=", "=").replace("\\\\", "\\")
    return props


def commit_schemas(base: Path) -> list[str]:
    """``extraMetadata.schema`` of every completed (delta/replace) commit, in timeline order."""
    timeline = base / ".hoodie"
    files = sorted(
        [*timeline.glob("*.commit"), *timeline.glob("*.deltacommit"), *timeline.glob("*.replacecommit")]
    )
    schemas = []
    for path in files:
        text = path.read_text()
        if text.strip():
            schema = json.loads(text).get("extraMetadata", {}).get("schema")
            if schema:
                schemas.append(schema)
    return schemas


def base_files(base: Path) -> list[Path]:
    """Every parquet base file of a table, sorted."""
    return sorted(p for p in base.rglob("*.parquet") if not p.name.startswith("."))
