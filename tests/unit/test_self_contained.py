"""The repository stands on its own: a clone into an empty folder has everything its tests, docs and code refer
to. No tracked file points outside the repository (a sibling ``shared`` folder, an absolute path of the machine
it was written on), every relative link of the README and ``docs/`` resolves to a file in the repository, and
every ``docs/<NAME>.md §<n>`` that code cites names a section that document has.

The forbidden patterns are built from pieces below, so this file does not match them itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import (
    HUDI_1X_ALL_FIXTURE_NAMES,
    HUDI_FIXTURE_NAMES,
    HUDI_FIXTURES,
    HUDI_LANCE_FIXTURE_NAMES,
    METADATA_FIXTURE_SHAPE,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

BINARY_SUFFIXES = frozenset({".zip", ".jar", ".parquet", ".png", ".jpg", ".gif", ".class", ".avro", ".gz"})

_DOTS = "." + "."
_SHARED = "sha" + "red"
OUTSIDE = re.compile("|".join([
    re.escape(f"{_DOTS}/{_SHARED}"),                       # a path into a sibling folder of the checkout
    r"""parents?\b[^\n]{0,40}/\s*["']""" + _SHARED + """["']""",   # a path built as parent / "<that folder>"
    re.escape("/" + "work" + "/"),                         # absolute paths of the machine the code was written on
    re.escape("/" + "root" + "/"),
]))
"""References to files outside the repository."""

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
"""A markdown link ``[text](target)``."""

CITATION = re.compile(r"docs/(FORMAT|SQL|DESIGN)\.md §(\d+(?:\.\d+)*)")
"""A citation of a numbered section of one of the docs, as code and docs write it."""


def tracked_files() -> list[Path]:
    """Every file git tracks in this checkout (skipping binaries); the test is skipped outside a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout, or git is missing ({exc}): the tracked files cannot be listed")
    names = [n for n in listed.stdout.decode().split("\0") if n]
    assert names, "git ls-files listed nothing"
    return [ROOT / n for n in names if Path(n).suffix.lower() not in BINARY_SUFFIXES and (ROOT / n).is_file()]


DOCUMENTS = sorted({"README.md", "docs/DESIGN.md", "docs/FORMAT.md", "docs/SQL.md",
                    *(str(p.relative_to(ROOT)) for p in DOCS.glob("*.md"))})
"""The README and every document under ``docs/`` (the three named ones must exist)."""


def test_no_tracked_file_refers_outside_the_repository() -> None:
    offending = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary content under a text-looking name
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert offending == [], "references outside the repository:\n" + "\n".join(offending)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_relative_links_resolve_inside_the_repository(name: str) -> None:
    doc = ROOT / name
    assert doc.is_file(), f"{name} is missing"
    links = LINK.findall(doc.read_text(encoding="utf-8"))
    broken = []
    for target in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # http(s)://, mailto:, an anchor in the same page
        resolved = (doc.parent / target.split("#", 1)[0]).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(target)
    assert broken == [], f"{doc.relative_to(ROOT)}: links that do not resolve inside the repository: {broken}"


def test_cited_doc_sections_exist() -> None:
    headings: dict[str, set[str]] = {}
    for name in ("FORMAT", "SQL", "DESIGN"):
        text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        headings[name] = set(re.findall(r"^#+ (\d+(?:\.\d+)*)\.? ", text, re.MULTILINE))
    cited = 0
    missing = []
    for path in tracked_files():
        if path.suffix not in (".py", ".md", ".java"):
            continue
        for name, section in CITATION.findall(path.read_text(encoding="utf-8")):
            cited += 1
            if section not in headings[name]:
                missing.append(f"{path.relative_to(ROOT)}: docs/{name}.md §{section}")
    assert cited > 20  # the engine's modules cite the format document throughout
    assert missing == [], "citations of sections the docs do not have:\n" + "\n".join(missing)


def test_the_hudi_written_fixtures_are_in_the_repository() -> None:
    assert HUDI_FIXTURES.is_relative_to(ROOT) and HUDI_FIXTURES.is_dir()
    assert (HUDI_FIXTURES.parent / "NOTICE").read_text().count("Apache License") >= 1
    scripts = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix("")) for p in HUDI_FIXTURES.rglob("v6_*.sql"))
    tables = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix("")) for p in HUDI_FIXTURES.rglob("v6_*.zip"))
    assert len(HUDI_FIXTURE_NAMES) == 16 and scripts == tables  # each table with the SQL that made it
    assert sorted(set(tables) - set(HUDI_FIXTURE_NAMES)) == \
        sorted(n for n in tables if n.startswith(METADATA_FIXTURE_SHAPE + "/"))
    scripts_1x = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                        for pattern in ("v8_*.sql", "v9_*.sql") for p in HUDI_FIXTURES.rglob(pattern))
    assert HUDI_LANCE_FIXTURE_NAMES and scripts_1x == HUDI_1X_ALL_FIXTURE_NAMES  # the Hudi 1.x tables too
