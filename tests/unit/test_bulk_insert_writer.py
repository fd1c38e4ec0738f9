"""A bulk-insert task's writer: rows gathered into larger batches, split by partition in one pass, each file
holding its partition's rows in the order they came, keyed footers as Hudi writes them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import WriteError
from engine.formats.avro_schema import add_meta_fields, arrow_to_avro
from engine.formats.base_file import MAX_RECORD_KEY, MIN_RECORD_KEY, may_have_supplementary, read_base_file
from engine.index.bucket import bucket_of_file_id
from engine.storage import Storage
from engine.write.handles import BucketBulkInsertWriter, BulkInsertWriter, TaskIdentity, WriteContext
from engine.write.prepare import BUCKET_ID, PARTITION_PATH, RECORD_KEY

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string())])


def context(tmp_path: Path, **props: str) -> WriteContext:
    conf = {"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "p", **props}
    return WriteContext(Storage.for_uri(str(tmp_path)), str(tmp_path), "20240101000000001", SCHEMA,
                        add_meta_fields(arrow_to_avro(SCHEMA, "t")), conf)


def batch(ids: list[int], parts: list[str | None]) -> pa.Table:
    keys = [f"k{i:05d}" for i in ids]
    return pa.table({"id": keys, "ts": pa.array(ids, pa.int64()), "p": parts,
                     RECORD_KEY: keys, PARTITION_PATH: parts})


def test_small_batches_are_gathered_and_each_partition_keeps_its_order(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    writer = BulkInsertWriter(ctx, TaskIdentity(3, 1, 7), batch_rows=25)
    written: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    order = [7, 3, 11, 0, 5, 9, 2, 8, 1, 6, 4, 10] * 5
    for n in range(0, len(order), 4):  # 15 batches of 4 rows, three partitions interleaved
        ids = [i * 100 + n for i in order[n:n + 4]]
        parts = ["abc"[(i + n) % 3] for i in ids]
        for i, p in zip(ids, parts, strict=True):
            written[p].append(i)
        writer.write(batch(ids, parts))
    stats = writer.close()
    assert sorted(s.partition_path for s in stats) == ["a", "b", "c"]  # one file a partition, not one a batch
    for stat in stats:
        rows = read_base_file(ctx.storage, f"{tmp_path}/{stat.path}")
        assert rows.column("ts").to_pylist() == written[stat.partition_path]  # arrival order kept
        assert stat.num_writes == stat.num_inserts == len(written[stat.partition_path])
        seq = rows.column("_hoodie_commit_seqno").to_pylist()
        assert len(set(seq)) == len(seq)
        assert set(rows.column("_hoodie_file_name").to_pylist()) == {stat.path.split("/")[-1]}
        keys = rows.column(RECORD_KEY).to_pylist()
        footer = pq.read_metadata(f"{tmp_path}/{stat.path}").metadata
        assert footer[MIN_RECORD_KEY.encode()].decode() == min(keys)
        assert footer[MAX_RECORD_KEY.encode()].decode() == max(keys)


def test_a_file_rolls_over_at_the_max_file_size_within_one_gathered_batch(tmp_path: Path) -> None:
    ctx = context(tmp_path, **{"hoodie.parquet.max.file.size": "1"})
    writer = BulkInsertWriter(ctx, TaskIdentity(), batch_rows=100_000)
    n = 45_000
    writer.write(batch(list(range(n)), ["a"] * n))
    stats = writer.close()
    # Checked every 20,000 rows: three files, none holding more than that.
    assert [s.num_writes for s in stats] == [20_000, 20_000, 5_000]
    assert len({s.file_id for s in stats}) == 3


def test_a_row_without_a_partition_path_is_refused_by_name(tmp_path: Path) -> None:
    writer = BulkInsertWriter(context(tmp_path), TaskIdentity(), batch_rows=2)
    with pytest.raises(WriteError, match="1 row\\(s\\) have no _hoodie_partition_path"):
        writer.write(batch([1, 2], ["a", None]))


@pytest.mark.parametrize(("values", "expected"), [
    (["plain", "ascii"], False),
    (["é", "中文"], False),  # two- and three-byte characters are one UTF-16 unit each
    (["a", "😀"], True),
    ([], False),
])
def test_supplementary_characters_are_found_by_their_lead_byte(values: list[str], expected: bool) -> None:
    assert may_have_supplementary(pa.array(values, pa.string())) is expected
    assert may_have_supplementary(pa.chunked_array([pa.array(values, pa.string())], pa.string())) is expected


def bucketed(ids: list[int], parts: list[str], buckets: list[int]) -> pa.Table:
    return batch(ids, list(parts)).append_column(BUCKET_ID, pa.array(buckets, pa.int32()))


def test_bucket_writer_makes_one_file_group_per_bucket_across_batches(tmp_path: Path) -> None:
    """Rows sorted by partition and bucket, a bucket's run cut across gathered batches: one file per bucket,
    its id starting with the bucket number, and no rollover however small hoodie.parquet.max.file.size is."""
    ctx = context(tmp_path, **{"hoodie.parquet.max.file.size": "1"})
    writer = BucketBulkInsertWriter(ctx, TaskIdentity(1, 2, 3), batch_rows=7)
    runs = [("a", 0, 5), ("a", 3, 9), ("b", 0, 4), ("b", 250, 12)]
    expected: dict[tuple[str, int], list[int]] = {}
    n = 0
    rows = []
    for part, bucket, count in runs:
        expected[(part, bucket)] = list(range(n, n + count))
        rows += [(i, part, bucket) for i in range(n, n + count)]
        n += count
    for start in range(0, len(rows), 4):
        chunk = rows[start:start + 4]
        writer.write(bucketed([r[0] for r in chunk], [r[1] for r in chunk], [r[2] for r in chunk]))
    stats = writer.close()
    assert len(stats) == len(runs)
    for stat in stats:
        bucket = bucket_of_file_id(stat.file_id)
        assert bucket is not None
        ids = read_base_file(ctx.storage, f"{tmp_path}/{stat.path}").column("ts").to_pylist()
        assert ids == expected[(stat.partition_path, bucket)]
        assert stat.num_inserts == len(ids)
        assert BUCKET_ID not in pq.read_schema(f"{tmp_path}/{stat.path}").names


def test_bucket_writer_refuses_a_bucket_that_comes_back(tmp_path: Path) -> None:
    writer = BucketBulkInsertWriter(context(tmp_path), TaskIdentity(), batch_rows=1)
    writer.write(bucketed([1], ["a"], [4]))
    writer.write(bucketed([2], ["a"], [5]))
    with pytest.raises(WriteError, match="bucket 4 of partition 'a' came after"):
        writer.write(bucketed([3], ["a"], [4]))
