"""Shared pytest fixtures."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

HUDI_FIXTURES = Path("/work/shared/fixtures/hudi-written")
"""Real Hudi-written v6 tables: ``<shape>/<cow|mor>/[<format>/]v6_<name>.zip``."""

HUDI_FIXTURE_NAMES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                            for p in HUDI_FIXTURES.glob("**/*.zip"))
"""Every fixture name, e.g. ``sample_table/cow/v6_nonpartitioned``."""


@pytest.fixture(scope="session")
def hudi_fixture(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """Factory ``hudi_fixture(name, fresh=False) -> base path`` of an unzipped Hudi-written table.

    ``name`` is the zip path relative to ``HUDI_FIXTURES`` without ``.zip``, e.g.
    ``"sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable"``. Unzipped once per session and shared
    (treat as read-only); ``fresh=True`` gives a private copy the test may modify.
    """
    cache: dict[str, str] = {}

    def unzip(name: str, fresh: bool = False) -> str:
        if not fresh and name in cache:
            return cache[name]
        archive = HUDI_FIXTURES / f"{name}.zip"
        if not archive.exists():
            raise FileNotFoundError(f"no fixture {archive}")
        target = tmp_path_factory.mktemp(Path(name).name)
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target, [m for m in zf.namelist() if not m.startswith("__MACOSX")])
        base = str(target / Path(name).name)
        if not fresh:
            cache[name] = base
        return base

    return unzip
