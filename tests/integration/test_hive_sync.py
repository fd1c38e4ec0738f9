"""HiveSyncTool against a real Hive Metastore (Thrift, Derby) over Hudi-written fixture tables; new commits are
simulated with engine timeline helpers (no Spark)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.table import Table
from engine.timeline.commit_metadata import CommitMetadata
from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    HUDI_PARQUET_REALTIME_INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
    HiveMetastoreClient,
)
from hive_sync.config import HiveSyncConfig
from hive_sync.errors import SyncConfigError, SyncError
from hive_sync.sync_tool import HiveSyncTool, sync_hudi_table

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COW = "sample_table/cow/v6_simplekeygen_nonhivestyle"
COW_HIVE = "sample_table/cow/v6_complexkeygen_hivestyle"
MOR = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle"
NONPART = "sample_table/cow/v6_nonpartitioned"


@pytest.fixture()
def uri(metastore: str) -> str:
    """The session's shared metastore (``tests.conftest.metastore``)."""
    return metastore


@pytest.fixture()
def client(uri: str) -> Iterator[HiveMetastoreClient]:
    with HiveMetastoreClient(uri) as c:
        yield c


def _opts(uri: str, db: str, **extra: str) -> dict[str, str]:
    return {"hoodie.datasource.hive_sync.mode": "hms", "hoodie.datasource.hive_sync.metastore.uris": uri,
            "hoodie.datasource.hive_sync.database": db, **extra}


def _tree(base: str) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(base)), p.stat().st_size) for p in Path(base).rglob("*"))


def add_commit(base: str, partition: str, delete_partition: str | None = None) -> str:
    """Simulate a completed commit writing ``partition`` (folder + copied base file), or a
    ``delete_partition`` replacecommit for ``delete_partition``. Returns the instant time."""
    table = Table.load(base)
    timeline = table.timeline
    last = timeline.completed_commits()[-1]
    meta = table.commit_metadata(last)
    ts = timeline.new_instant_time()
    template = next(s for stats in meta.partition_to_write_stats.values() for s in stats)
    if delete_partition is not None:
        new = CommitMetadata(partition_to_write_stats={}, compacted=False, extra_metadata=meta.extra_metadata,
                             operation_type="DELETE_PARTITION",
                             partition_to_replace_file_ids={delete_partition: ["x"]})
        action = "replacecommit"
    else:
        src_dir = Path(base) / (template.partition_path or "")
        dst_dir = Path(base) / partition
        dst_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(src_dir / ".hoodie_partition_metadata", dst_dir / ".hoodie_partition_metadata")
        src = Path(base) / (template.path or "")
        name = f"{template.file_id}-n_0-1-1_{ts}.parquet"
        shutil.copy(src, dst_dir / name)
        stat = dataclasses.replace(template, partition_path=partition, path=f"{partition}/{name}",
                                   prev_commit="null")
        new = CommitMetadata(partition_to_write_stats={partition: [stat]}, compacted=False,
                             extra_metadata=meta.extra_metadata, operation_type="UPSERT",
                             partition_to_replace_file_ids=None)
        action = "commit"
    inst = timeline.create_requested(ts, action)
    inst = timeline.transition_to_inflight(inst, b"")
    timeline.complete(inst, new.to_json())
    return ts


def test_config_inference(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(COW_HIVE)
    cfg = HiveSyncConfig.from_options({}, Table.load(base))
    assert cfg.database == "default" and cfg.table == "v6_complexkeygen_hivestyle"
    assert cfg.partition_fields == ("byteField", "shortField")
    assert cfg.partition_extractor_class.endswith("MultiPartKeysValueExtractor")
    assert cfg.support_timestamp is False and cfg.sync_as_datasource and cfg.incremental
    assert cfg.metastore_uris == "thrift://localhost:9083" and cfg.schema_string_length_thresh == 4000
    single = HiveSyncConfig.from_options({}, Table.load(hudi_fixture(COW)))
    assert single.partition_extractor_class.endswith("SinglePartPartitionValueExtractor")
    assert HiveSyncConfig.from_options({}, Table.load(hudi_fixture(NONPART))).partition_extractor_class.endswith(
        "NonPartitionedExtractor")
    with pytest.raises(SyncConfigError, match="jdbc"):
        HiveSyncConfig.from_options({"hoodie.datasource.hive_sync.mode": "jdbc"})
    with pytest.raises(SyncConfigError, match="table.strategy"):
        HiveSyncConfig.from_options({"hoodie.datasource.hive_sync.table.strategy": "XX"})


def test_cow_sync_then_idempotent(uri: str, client: HiveMetastoreClient,
                                  hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(COW_HIVE, fresh=True)
    before = _tree(base)
    res = HiveSyncTool(base, _opts(uri, "cowdb", **{"hoodie.datasource.hive_sync.schema_string_length_thresh":
                                                      "500"}), client).sync()
    assert res.tables_created == ["v6_complexkeygen_hivestyle"]
    assert _tree(base) == before  # sync never writes to the Hudi table
    t = client.get_table("cowdb", "v6_complexkeygen_hivestyle")
    assert t.sd.inputFormat == HUDI_PARQUET_INPUT_FORMAT and t.sd.outputFormat == PARQUET_OUTPUT_FORMAT
    assert t.sd.serdeInfo.serializationLib == PARQUET_SERDE
    assert t.sd.location.removeprefix("file:") == base
    assert t.sd.serdeInfo.parameters == {"serialization.format": "1", "path": base,
                                         "hoodie.query.as.ro.table": "false"}
    p = t.parameters
    assert p["EXTERNAL"] == "TRUE" and t.tableType == "EXTERNAL_TABLE"
    assert p["spark.sql.sources.provider"] == "hudi"
    assert p["last_commit_time_sync"] == "20240418173235694" and len(p["last_commit_completion_time_sync"]) == 17
    n = int(p["spark.sql.sources.schema.numParts"])
    assert n > 1
    spark = json.loads("".join(p[f"spark.sql.sources.schema.part.{i}"] for i in range(n)))
    assert [f["name"] for f in spark["fields"]][-2:] == ["byteField", "shortField"]
    assert spark["fields"][0] == {"name": "_hoodie_commit_time", "type": "string", "nullable": True,
                                  "metadata": {}}
    assert p["spark.sql.sources.schema.numPartCols"] == "2" and p["spark.sql.sources.schema.partCol.1"] == \
        "shortField"
    cols = {f.name: f.type for f in t.sd.cols}
    assert list(cols)[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                              "_hoodie_partition_path", "_hoodie_file_name"]
    assert cols["timestampfield"] == "bigint" and cols["decimalfield"] == "decimal(10,5)"
    assert "bytefield" not in cols
    assert [(k.name, k.type) for k in t.partitionKeys] == [("bytefield", "int"), ("shortfield", "int")]
    locs = client.partition_locations("cowdb", "v6_complexkeygen_hivestyle")
    assert {k: v.removeprefix("file:") for k, v in locs.items()} == {
            ("10", "300"): f"{base}/byteField=10/shortField=300",
            ("20", "100"): f"{base}/byteField=20/shortField=100",
            ("30", "100"): f"{base}/byteField=30/shortField=100"}

    again = HiveSyncTool(base, _opts(uri, "cowdb"), client).sync()
    assert again.tables_skipped == ["v6_complexkeygen_hivestyle"] and not again.tables_created
    assert not any("partition" in m for m in again.call_counts), again.call_counts
    assert again.metastore_calls <= 3


def test_mor_tables(uri: str, client: HiveMetastoreClient, hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(MOR, fresh=True)
    res = sync_hudi_table(base, _opts(uri, "mordb", **{"hoodie.datasource.hive_sync.support_timestamp": "true"}))
    name = "v6_simplekeygen_nonhivestyle"
    assert sorted(res.tables_created) == sorted([name, f"{name}_ro", f"{name}_rt"])
    for table, fmt, ro in ((f"{name}_ro", HUDI_PARQUET_INPUT_FORMAT, "true"),
                           (f"{name}_rt", HUDI_PARQUET_REALTIME_INPUT_FORMAT, "false"),
                           (name, HUDI_PARQUET_REALTIME_INPUT_FORMAT, "false")):
        t = client.get_table("mordb", table)
        assert t.sd.inputFormat == fmt and t.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == ro
        assert {f.name: f.type for f in t.sd.cols}["timestampfield"] == "timestamp"
        assert sorted(client.partition_names("mordb", table)) == ["bytefield=10", "bytefield=20", "bytefield=30"]
    ro_only = sync_hudi_table(base, _opts(uri, "mordb_ro", **{"hoodie.datasource.hive_sync.table.strategy": "RO"}))
    assert ro_only.tables_created == [name]
    assert client.get_table("mordb_ro", name).sd.inputFormat == HUDI_PARQUET_INPUT_FORMAT
    skip = sync_hudi_table(base, _opts(uri, "mordb_skip", **{"hoodie.datasource.hive_sync.skip_ro_suffix": "true"}))
    assert sorted(skip.tables_created) == [name, f"{name}_rt"]
    assert client.get_table("mordb_skip", name).sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "true"


def test_incremental_special_chars_and_drop(uri: str, client: HiveMetastoreClient,
                                            hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(COW, fresh=True)
    name = "v6_simplekeygen_nonhivestyle"
    opts = _opts(uri, "incdb", **{"hoodie.meta.sync.decode_partition": "true"})
    assert HiveSyncTool(base, opts, client).sync().partitions_added == {name: [("10",), ("20",), ("30",)]}
    ts = add_commit(base, "a b%3Dc&d")
    res = HiveSyncTool(base, opts, client).sync()
    assert not res.tables[0].full_partition_sync
    assert res.partitions_added == {name: [("a b=c&d",)]}
    assert res.call_counts.get("add_partitions_req") == 1 and "alter_partitions" not in res.call_counts
    assert client.get_table("incdb", name).parameters["last_commit_time_sync"] == ts
    locs = {k: v.removeprefix("file:") for k, v in client.partition_locations("incdb", name).items()}
    assert locs[("a b=c&d",)] == f"{base}/a b%3Dc&d"
    # with filter push-down only the touched partition is fetched
    add_commit(base, "40")
    pushed = HiveSyncTool(base, {**opts, "hoodie.datasource.hive_sync.filter_pushdown_enabled": "true"},
                          client).sync()
    assert pushed.partitions_added == {name: [("40",)]}
    assert pushed.call_counts.get("get_partitions_by_names") == 1 and "get_partitions" not in pushed.call_counts
    # delete_partition replacecommit → DROP (special-character name round-trips through Hive escaping)
    add_commit(base, "", delete_partition="a b%3Dc&d")
    dropped = HiveSyncTool(base, opts, client).sync()
    assert dropped.partitions_dropped == {name: [("a b=c&d",)]} and not dropped.partitions_added
    assert ("a b=c&d",) not in client.partition_locations("incdb", name)
    # full sync (incremental off), after the cleaner removed the dropped folder: nothing more to do
    shutil.rmtree(Path(base) / "a b%3Dc&d")
    full = HiveSyncTool(base, {**opts, "hoodie.meta.sync.incremental": "false"}, client).sync()
    assert full.tables[0].full_partition_sync and not full.partitions_added and not full.partitions_dropped


def test_schema_evolution_and_nonpartitioned(uri: str, client: HiveMetastoreClient,
                                             hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(NONPART, fresh=True)
    res = sync_hudi_table(base, _opts(uri, "npdb"), client)
    name = res.tables_created[0]
    assert client.get_table("npdb", name).partitionKeys == [] and not res.partitions_added
    t = client.get_table("npdb", name)
    last = t.sd.cols[-1].name
    t.sd.cols = t.sd.cols[:-1]  # Hive lags the table by one (appended) column
    t.parameters["last_commit_time_sync"] = "0"
    client.alter_table("npdb", name, t)
    res2 = sync_hudi_table(base, _opts(uri, "npdb"), client)
    assert res2.tables_updated == [name]
    assert [k.lower() for k in res2.schema_changes[name].added] == [last]
    assert client.get_table("npdb", name).sd.cols[-1].name == last


def test_rejects_escaping_names_and_paths(uri: str, client: HiveMetastoreClient,
                                          hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(COW, fresh=True)
    with pytest.raises(SyncError, match="invalid table name"):
        HiveSyncTool(base, _opts(uri, "baddb", **{"hoodie.datasource.hive_sync.table": "../evil"}), client)
    HiveSyncTool(base, _opts(uri, "baddb"), client).sync()
    table = Table.load(base)
    meta = table.commit_metadata(table.timeline.completed_commits()[-1])
    stat = next(iter(meta.partition_to_write_stats.values()))[0]
    bad = CommitMetadata(partition_to_write_stats={"../outside": [dataclasses.replace(stat, partition_path="../outside")]},
                         compacted=False, extra_metadata=meta.extra_metadata, operation_type="UPSERT",
                         partition_to_replace_file_ids=None)
    tl = table.timeline
    inst = tl.transition_to_inflight(tl.create_requested(tl.new_instant_time(), "commit"), b"")
    tl.complete(inst, bad.to_json())
    before = _tree(base)
    with pytest.raises(SyncError, match=r"baddb\.v6_simplekeygen_nonhivestyle.*outside"):
        HiveSyncTool(base, _opts(uri, "baddb"), client).sync()
    assert _tree(base) == before
    assert ("..",) not in client.partition_locations("baddb", "v6_simplekeygen_nonhivestyle")


def test_cli_hive_sync(uri: str, client: HiveMetastoreClient, hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(COW, fresh=True)
    cmd = [sys.executable, "-m", "hive_sync.cli", "hive-sync", "--base-path", base, "--metastore-uris", uri,
           "--database", "clidb", "--table", "trips", "--support-timestamp"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "clidb.trips (COW) created: +3" in out.stdout
    assert {f.name: f.type for f in client.get_table("clidb", "trips").sd.cols}["timestampfield"] == "timestamp"
    bad = subprocess.run(cmd[:-1] + ["--sync-mode", "jdbc"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "only 'hms'" in bad.stderr
