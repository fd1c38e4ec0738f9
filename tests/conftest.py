"""Shared pytest fixtures."""

from __future__ import annotations

import datetime
import decimal
import itertools
import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

if TYPE_CHECKING:
    from sqlext.session import Session

FIXTURES = Path(__file__).resolve().parent / "fixtures"
"""The test data kept in the repository (``tests/fixtures``; origin and licence in its ``NOTICE``)."""

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""Every JVM the tests start (the test sessions' drivers, the metastore, the reliability benches' writers and
the shells they run as subprocesses) compiles with C1 only and collects with the serial collector, through
``JDK_JAVA_OPTIONS`` (read by every ``java`` launcher from JDK 9). When two test workers share two cores, C2's
compile threads and the parallel collector's threads compete with the tests: test_merge_semantics under load took
196 s and 180 s with the JVM's defaults, 147 s and 127 s with these; the bad-input reliability run (its own
Spark process) 130 s and 132 s, 73 s and 82 s with these. The product itself keeps the JVM's defaults."""
_inherited = os.environ.get("JDK_JAVA_OPTIONS", "")
if TEST_JVM_OPTIONS not in _inherited:
    os.environ["JDK_JAVA_OPTIONS"] = f"{_inherited} {TEST_JVM_OPTIONS}".strip()

HUDI_FIXTURES = FIXTURES / "hudi-written"
"""Real Hudi-written tables: ``<shape>/<cow|mor>/[<format>/]v<table version>_<name>.zip`` (layout in
``tests/fixtures/README.md``): version 6 (Hudi 0.14/0.15), 8 and 9 (Hudi 1.x)."""

METADATA_FIXTURE_SHAPE = "metadata"
"""Folder of the fixtures written with the metadata table on (``hudi-written/metadata/<cow|mor>/``): their SQL
turns Hudi's metadata table on, which this engine's writer refuses, so the generic fixture lists leave them out;
``tests/unit/test_metadata_reader.py`` reads them."""

HUDI_FIXTURE_NAMES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                            for p in HUDI_FIXTURES.glob("**/v6_*.zip")
                            if p.relative_to(HUDI_FIXTURES).parts[0] != METADATA_FIXTURE_SHAPE)
"""Every version-6 fixture name but the metadata-table ones, e.g. ``sample_table/cow/v6_nonpartitioned``: the
tables this engine reads and writes."""

HUDI_1X_ALL_FIXTURE_NAMES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                                   for pattern in ("**/v8_*.zip", "**/v9_*.zip") for p in HUDI_FIXTURES.glob(pattern))
"""Every Hudi 1.x fixture (table versions 8 and 9): read-only tables."""

HUDI_LANCE_FIXTURE_NAMES = [n for n in HUDI_1X_ALL_FIXTURE_NAMES if "lance" in n.rsplit("/", 1)[-1]]
"""Version-9 fixtures with Lance base files: refused on load."""

HUDI_1X_FIXTURE_NAMES = [n for n in HUDI_1X_ALL_FIXTURE_NAMES if n not in HUDI_LANCE_FIXTURE_NAMES]
"""The Hudi 1.x fixtures this engine reads (parquet base files), e.g. ``sample_table/cow/v8_nonpartitioned``."""


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


@pytest.fixture(scope="session")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """One sqlext session (local[2], warehouse in a temp dir) shared by every Spark test.

    Adaptive query execution is off: on these tiny tables its per-stage re-planning cost about 12% of the
    Spark tests' time (test_merge_semantics alone: 143 s with it, 125 s without, in one process). The
    README's quickstart, the reliability tests' own sessions and every bench run with Spark's default (on).
    Its JVM options: :data:`TEST_JVM_OPTIONS`."""
    import sqlext

    warehouse = tmp_path_factory.mktemp("warehouse")
    s = sqlext.connect(
        warehouse=warehouse,
        conf={
            "spark.master": "local[2]",
            "spark.sql.shuffle.partitions": "4",
            "spark.ui.showConsoleProgress": "false",
            "spark.default.parallelism": "2",
            "spark.sql.adaptive.enabled": "false",
        },
    )
    yield s
    s.stop()


_names = itertools.count()


@pytest.fixture
def table_name() -> str:
    """A fresh table name per test."""
    return f"t{next(_names)}"


def hudi_rs_rows(base_path: str | Path, **read: str) -> list[dict[str, object]]:
    """Rows hudi-rs (the oracle) reads from a table: snapshot, or ``as_of=``, or ``begin=``/``end=``
    (incremental); ``read_optimized="true"`` reads the latest base files only."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    builder = HudiTableBuilder.from_base_uri(str(base_path))
    if read.get("read_optimized") == "true":
        builder = builder.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    table = builder.build()
    options = HudiReadOptions()
    if "as_of" in read:
        options = options.with_as_of_timestamp(read["as_of"])
    if "begin" in read:
        options = options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(read["begin"])
        options = options.with_end_timestamp(read["end"])
    batches = table.read(options)
    if not batches:
        return []
    return pa.Table.from_batches(batches).to_pylist()


def normalised(value: Any) -> Any:
    """A value in a form that compares equal across readers: timestamps as epoch seconds (naive = UTC), decimals
    as normalised strings, maps and lists as tuples."""
    if isinstance(value, datetime.datetime):
        return value.timestamp() if value.tzinfo else value.replace(tzinfo=datetime.UTC).timestamp()
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, dict):
        return tuple(sorted((k, normalised(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(normalised(v) for v in value)
    return value


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URI of a real Hive Metastore (Thrift, Derby; ``hive_sync.metastore``) shared by the session's tests;
    they use their own table names or databases, never a mock."""
    from hive_sync.metastore import Metastore, free_port

    server = Metastore(tmp_path_factory.mktemp("hms"), free_port())
    uri = server.start(timeout_s=180)
    yield uri
    server.stop()

