"""Parquet files assembled from copied column chunks (engine.formats.parquet_splice), read back by pyarrow."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import CorruptFile
from engine.formats.parquet_splice import GroupSource, ParquetFooter, assemble, decode_struct, encode_struct


def parquet(table: pa.Table, rows_per_group: int, **options: object) -> io.BytesIO:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=rows_per_group, **options)  # type: ignore[arg-type]
    sink.seek(0)
    return sink


def footer(data: io.BytesIO) -> ParquetFooter:
    return ParquetFooter.read(data, len(data.getvalue()), "test")


def sample(n: int, name: str) -> pa.Table:
    return pa.table({"key": [f"k{i:05d}" for i in range(n)], "name": [name] * n,
                     "v": pa.array([i * 1.5 if i % 7 else None for i in range(n)], pa.float64()),
                     "d": pa.array([i % 300 for i in range(n)], pa.int32()).cast(pa.date32())})


def test_the_footer_round_trips_byte_for_byte() -> None:
    data = parquet(sample(1000, "a"), 300, compression="snappy")
    raw = data.getvalue()
    parsed = footer(data)
    assert encode_struct(parsed.fields) == raw[parsed.footer_start:-8]
    assert decode_struct(encode_struct(parsed.fields)) == parsed.fields
    assert parsed.column_names == ["key", "name", "v", "d"]
    assert [parsed.num_rows(g) for g in range(len(parsed.row_groups))] == [300, 300, 300, 100]


def test_row_groups_copied_with_one_column_replaced_read_back_equal() -> None:
    old = sample(1000, "old-file")
    source = parquet(old, 300, compression="snappy")
    old_footer = footer(source)
    # the replacement chunk: the name column of 300 rows encoded alone
    names = parquet(pa.table({"name": ["new-file"] * 300}), 300, compression="snappy")
    names_footer = footer(names)
    # rows written anew (a changed group and inserts), in a file of the same layout
    fresh = sample(1100, "new-file").slice(900)
    part = parquet(fresh, 1000, compression="snappy")
    part_footer = footer(part)
    assert part_footer.same_layout(old_footer)
    replace = ((1, names, names_footer.chunks(0)[0]),)
    groups = [GroupSource(source, old_footer, 0, replace), GroupSource(source, old_footer, 2, replace),
              GroupSource(part, part_footer, 0)]
    out = io.BytesIO()
    size = assemble(out, groups, part_footer)
    assert size == len(out.getvalue())
    out.seek(0)
    got = pq.read_table(out)
    expected = pa.concat_tables([old.slice(0, 300), old.slice(600, 300), fresh]).set_column(
        1, "name", pa.array(["new-file"] * 600 + ["new-file"] * 200))
    assert got.equals(expected)
    metadata = pq.ParquetFile(io.BytesIO(out.getvalue())).metadata
    assert metadata.num_rows == 800 and metadata.num_row_groups == 3
    assert metadata.row_group(0).column(2).statistics.max == old.slice(0, 300).column(2).to_pylist()[299]
    filtered = pq.read_table(io.BytesIO(out.getvalue()), filters=[("key", ">=", "k00950")])
    assert filtered.column("key").to_pylist() == [f"k{i:05d}" for i in range(950, 1100)]


def test_other_layouts_and_broken_files_are_told_apart() -> None:
    a = footer(parquet(sample(10, "a"), 10))
    b = footer(parquet(sample(10, "a").cast(pa.schema([("key", pa.string()), ("name", pa.string()),
                                                        ("v", pa.float32()), ("d", pa.date32())])), 10))
    assert not a.same_layout(b)
    with pytest.raises(CorruptFile, match="PAR1"):
        ParquetFooter.read(io.BytesIO(b"x" * 20), 20, "broken")
    with pytest.raises(CorruptFile, match="too few"):
        ParquetFooter.read(io.BytesIO(b"PAR1"), 4, "tiny")
