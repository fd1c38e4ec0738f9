"""Index types against each other on the same random history: SIMPLE, BLOOM, GLOBAL_SIMPLE, GLOBAL_BLOOM and
BUCKET tables given the same upserts (INSERT INTO), MERGE INTO and DELETE statements hold the same rows after
every commit, read by hudi-rs, and the rows a plain model of the statements predicts; the BUCKET table keeps
every key in the file group of the bucket Hudi's hash gives it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.index.bucket import bucket_id, bucket_of_file_id
from engine.table import Table
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

INDEX_TYPES = ("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET")


def _assert_bucket_layout(base: Path, num_buckets: int) -> None:
    """Each partition has at most one file group per bucket, and every stored key lives in its bucket's."""
    table = Table.load(str(base))
    view = table.file_system_view()
    for partition in view.partition_paths():
        ids = [fs.file_id for fs in view.latest_file_slices(partition)]
        buckets = [bucket_of_file_id(f) for f in ids]
        assert None not in buckets and len(set(buckets)) == len(buckets) and max(buckets) < num_buckets, ids
    for row in hudi_rs_rows(base):
        fid = row["_hoodie_file_name"].split("_")[0] if row["_hoodie_file_name"].endswith(".parquet") else None
        if fid is not None:  # rows read from log files name the log file's group in their file name too
            assert bucket_of_file_id(fid) == bucket_id(row["_hoodie_record_key"], ["id"], num_buckets), row


def _values(rows: list[tuple[int, str, int]]) -> str:
    return ", ".join(f"({i}, '{name}', {ts}, 'p{i % 3}')" for i, name, ts in rows)


@pytest.mark.parametrize(("table_type", "index_types"), [("cow", INDEX_TYPES), ("mor", ("SIMPLE", "BLOOM", "BUCKET"))])
def test_index_types_agree_on_a_random_history(session: Session, table_name: str, tmp_path: Path,
                                               table_type: str, index_types: tuple[str, ...]) -> None:
    rng = random.Random(1405 if table_type == "cow" else 1406)
    names = {t: f"{table_name}_{t.lower()}" for t in index_types}
    for index_type, name in names.items():
        session.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi
            PARTITIONED BY (dt) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts',
            'hoodie.index.type' = '{index_type}', 'hoodie.parquet.small.file.limit' = '0',
            'hoodie.bucket.index.num.buckets' = '3')
            LOCATION '{tmp_path / name}'""")
    model: dict[int, tuple[str, int]] = {}
    try:
        for step in range(4):
            ts = step + 1
            kind = "insert" if step == 0 else rng.choice(["insert", "merge", "delete"])
            if kind == "insert":
                rows = [(i, f"v{step}-{i}", ts) for i in rng.sample(range(60), 20)]
                statement = "INSERT INTO {t} VALUES " + _values(rows)
                model.update({i: (n, t) for i, n, t in rows})
            elif kind == "merge":
                rows = [(i, f"m{step}-{i}", ts) for i in rng.sample(range(60), 15)]
                statement = (f"MERGE INTO {{t}} t USING (SELECT * FROM VALUES {_values(rows)} AS s(id, name, ts, dt)) s "
                             "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
                model.update({i: (n, t) for i, n, t in rows})
            else:
                doomed = rng.sample(sorted(model), min(5, len(model)))
                statement = f"DELETE FROM {{t}} WHERE id IN ({', '.join(map(str, doomed))})"
                for i in doomed:
                    model.pop(i)
            expected = sorted((i, n, t, f"p{i % 3}") for i, (n, t) in model.items())
            for index_type, name in names.items():
                session.sql(statement.format(t=name))
                got = sorted((r["id"], r["name"], r["ts"], r["dt"]) for r in hudi_rs_rows(tmp_path / name))
                assert got == expected, f"{index_type} after step {step} ({kind})"
        # Every type but BUCKET wrote the same number of file groups: each key found where it was.
        groups = {t: len(Table.load(str(tmp_path / n)).file_system_view().all_file_groups()) for t, n in names.items()
                  if t != "BUCKET"}
        assert len(set(groups.values())) == 1, groups
        if "BUCKET" in names:
            _assert_bucket_layout(tmp_path / names["BUCKET"], 3)
    finally:
        for name in names.values():
            session.sql(f"DROP TABLE IF EXISTS {name}")
