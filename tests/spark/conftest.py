"""One SparkSession (through sqlext.connect) for every Spark test: local[2], warehouse in a temp dir."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlext
from sqlext.session import Session

_names = itertools.count()


@pytest.fixture(scope="session")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    warehouse = tmp_path_factory.mktemp("warehouse")
    s = sqlext.connect(
        warehouse=warehouse,
        conf={
            "spark.master": "local[2]",
            "spark.sql.shuffle.partitions": "4",
            "spark.ui.showConsoleProgress": "false",
            "spark.default.parallelism": "2",
        },
    )
    yield s
    s.stop()


@pytest.fixture
def table_name() -> str:
    """A fresh table name per test."""
    return f"t{next(_names)}"


def hudi_rs_rows(base_path: str | Path, **read: str) -> list[dict[str, object]]:
    """Rows hudi-rs (the oracle) reads from a table: snapshot, or ``as_of=``, or ``begin=``/``end=``."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(base_path)).build()
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
