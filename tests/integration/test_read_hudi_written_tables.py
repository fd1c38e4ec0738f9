"""Every table Apache Hudi wrote (``tests/fixtures/hudi-written``: table version 6 and Hudi 1.x versions 8 and 9;
copy-on-write and merge-on-read; Avro and parquet log blocks; rollback; overwrite; complex, timestamp and
non-partitioned key generators; no meta fields; empty), read through ``spark.read.format("hudi")``, returns the
rows hudi-rs returns — snapshot, read-optimized, time travel and incremental queries (Hudi 1.x: incremental
bounds are completion times, as in Hudi 1.x and hudi-rs). Tables with Lance base files are refused.

Rows are compared as Arrow data (``DataFrame.toArrow``), every column hudi-rs returns, values normalised
only where the two sides legitimately differ in representation (time zone of a timestamp, decimal scale).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from engine.errors import UnsupportedTable
from engine.table import Table
from sqlext.session import Session
from tests.conftest import HUDI_1X_FIXTURE_NAMES, HUDI_FIXTURE_NAMES, HUDI_LANCE_FIXTURE_NAMES, normalised

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

FIXTURES = [*HUDI_FIXTURE_NAMES, *HUDI_1X_FIXTURE_NAMES]
"""Version 6 and Hudi 1.x (versions 8, 9) tables; the Lance ones are refused (last test)."""


def canonical(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    return sorted(repr(tuple(normalised(r[c]) for c in columns)) for r in rows)


def hudi_rs(path: str, configure: Callable[[Any], Any] | None = None,
            read_optimized: bool = False) -> list[dict[str, Any]]:
    from hudi import HudiReadOptions, HudiTableBuilder

    builder = HudiTableBuilder.from_base_uri(path)
    if read_optimized:
        builder = builder.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    options = HudiReadOptions()
    if configure is not None:
        options = configure(options)
    batches = builder.build().read(options)
    return pa.Table.from_batches(batches).to_pylist() if batches else []


def spark_rows(session: Session, path: str, options: dict[str, str]) -> list[dict[str, Any]]:
    reader = session.spark.read.format("hudi")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path).toArrow().to_pylist()


def retyped_columns(table: Table, as_of: str) -> set[str]:
    """Columns whose type the table schema changed after ``as_of``. Time travel reads with the schema as of the
    instant (Hudi ``TableSchemaResolver.getTableAvroSchema(timestamp)``; so do we), hudi-rs 0.5.0 with the latest
    one: e.g. a Hudi 1.x timestamp-based partition column, a long until an UPDATE declared it a string."""
    then, now = table.latest_avro_schema(as_of=as_of), table.latest_avro_schema()
    if then is None or now is None:
        return set()
    latest = {f["name"]: f["type"] for f in now["fields"]}
    return {f["name"] for f in then["fields"] if f["name"] in latest and latest[f["name"]] != f["type"]}


def as_text(rows: list[dict[str, Any]], columns: set[str]) -> list[dict[str, Any]]:
    """``rows`` with the values of ``columns`` as text (hudi-rs's representation after a string retyping)."""
    return [{k: (str(v) if k in columns and v is not None else v) for k, v in r.items()} for r in rows]


def assert_same(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], what: str) -> None:
    assert len(ours) == len(theirs), what
    if not theirs:
        return
    columns = list(theirs[0])
    assert set(columns) <= set(ours[0]), what
    assert canonical(ours, columns) == canonical(theirs, columns), what


@pytest.mark.parametrize("fixture", FIXTURES)
def test_spark_reads_hudi_written_table_like_hudi_rs(
        session: Session, hudi_fixture: Callable[..., str], fixture: str) -> None:
    from hudi import HudiQueryType

    path = hudi_fixture(fixture)
    assert_same(spark_rows(session, path, {}), hudi_rs(path), "snapshot")
    table = Table.load(path)
    if table.is_mor:
        assert_same(spark_rows(session, path, {"hoodie.datasource.query.type": "read_optimized"}),
                    hudi_rs(path, read_optimized=True), "read_optimized")
    times = [i.timestamp for i in table.timeline.completed_commits()]
    # Time travel to the first, a middle and the last commit.
    for ts in sorted({times[0], times[len(times) // 2], times[-1]} if times else set()):
        assert_same(as_text(spark_rows(session, path, {"as.of.instant": ts}), retyped_columns(table, ts)),
                    hudi_rs(path, lambda o, ts=ts: o.with_as_of_timestamp(ts)), f"as of {ts}")
    if not times or "no_metafields" in fixture:
        # No _hoodie_commit_time to filter on: Java refuses incremental queries on such tables.
        return
    ranges = {("19700101000000000", times[-1])}
    if len(times) > 1:
        ranges.add((times[-2], times[-1]))
        ranges.add((times[0], times[len(times) // 2]))
    for begin, end in sorted(ranges):
        ours = spark_rows(session, path, {"hoodie.datasource.query.type": "incremental",
                                          "hoodie.datasource.read.begin.instanttime": begin,
                                          "hoodie.datasource.read.end.instanttime": end})
        theirs = hudi_rs(path, lambda o, b=begin, e=end: o.with_query_type(HudiQueryType.Incremental)
                         .with_start_timestamp(b).with_end_timestamp(e))
        assert_same(ours, theirs, f"incremental ({begin}, {end}]")


@pytest.mark.parametrize("fixture", HUDI_LANCE_FIXTURE_NAMES)
def test_spark_refuses_lance_base_files(session: Session, hudi_fixture: Callable[..., str], fixture: str) -> None:
    path = hudi_fixture(fixture)
    with pytest.raises(UnsupportedTable, match="stores its base files as LANCE"):
        Table.load(path)
    with pytest.raises(Exception, match=r"\(table version 9\) stores its base files as LANCE"):
        spark_rows(session, path, {})

