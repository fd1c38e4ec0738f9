"""Hive sync at scale: a copy-on-write table with 1,000 partitions (one INSERT of 1,000 rows with distinct
partition values), a first (full) sync, then one commit touching 3 partitions (2 existing, 1 new) and an
incremental sync whose metastore calls must not grow with the table: compared with a 100-partition table,
the incremental sync makes exactly the same calls, lists no whole table, and the metastore ends with
exactly ``partitions + 1`` entries."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pytest

from hive_sync.client import HiveMetastoreClient
from hive_sync.sync_tool import HiveSyncTool, SyncResult
from sqlext.session import Session

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow, pytest.mark.extended]

logger = logging.getLogger(__name__)

DATABASE = "scale"
SIZES = (100, 1000)



@dataclass
class Measured:
    """First and incremental sync of one table."""

    partitions: int
    first: SyncResult
    first_s: float
    incremental: SyncResult
    incremental_s: float
    in_metastore: list[str]


def create_partitioned_cow(session: Session, name: str, partitions: int) -> str:
    """A COW table with ``partitions`` partitions (``p`` = 0..n-1, one row each) written by ONE insert;
    returns its base path."""
    session.sql(f"""CREATE TABLE {name} (id INT, v STRING, ts BIGINT, p INT) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts')""")
    session.sql(f"""INSERT INTO {name} SELECT CAST(k AS INT) AS id, concat('v', k) AS v, 1L AS ts,
        CAST(k AS INT) AS p FROM (SELECT id AS k FROM range({partitions}))""").collect()
    entry = session.catalog.lookup_name(name)
    assert entry is not None
    return entry.location


def timed_sync(base: str, uri: str, table: str, client: HiveMetastoreClient) -> tuple[SyncResult, float]:
    """One ``HiveSyncTool`` run into ``scale.<table>`` and its wall time."""
    options = {"hoodie.datasource.hive_sync.mode": "hms", "hoodie.datasource.hive_sync.metastore.uris": uri,
               "hoodie.datasource.hive_sync.database": DATABASE, "hoodie.datasource.hive_sync.table": table}
    start = time.monotonic()
    result = HiveSyncTool(base, options, client).sync()
    return result, time.monotonic() - start


def measure(session: Session, uri: str, name: str, partitions: int) -> Measured:
    """Build, first-sync, commit to 2 existing + 1 new partition, incremental-sync."""
    base = create_partitioned_cow(session, name, partitions)
    with HiveMetastoreClient(uri) as client:
        first, first_s = timed_sync(base, uri, name, client)
        # one commit: updates in partitions 0 and 1, a new row in the new partition `partitions`
        session.sql(f"""INSERT INTO {name} VALUES (0, 'u0', 2, 0), (1, 'u1', 2, 1),
                        ({partitions}, 'new', 2, {partitions})""").collect()
        incremental, incremental_s = timed_sync(base, uri, name, client)
        in_metastore = client.partition_names(DATABASE, name)
    logger.info("%d partitions: first sync %.2f s / %d calls, incremental %.2f s / %d calls", partitions,
                first_s, first.metastore_calls, incremental_s, incremental.metastore_calls)
    return Measured(partitions, first, first_s, incremental, incremental_s, in_metastore)


def test_incremental_sync_costs_the_same_calls_whatever_the_table_size(session: Session, table_name: str,
                                                                       metastore: str) -> None:
    runs = {n: measure(session, metastore, f"{table_name}_{n}", n) for n in SIZES}
    for n, run in runs.items():
        table = f"{table_name}_{n}"
        first = run.first.tables[0]
        assert first.created and first.full_partition_sync
        assert sorted(first.partitions_added) == sorted((str(i),) for i in range(n))
        assert run.first.call_counts["add_partitions_req"] == 1  # batch_num 1000: one batch
        inc = run.incremental.tables[0]
        assert not inc.full_partition_sync and not inc.created
        assert inc.partitions_added == [(str(n),)]  # the new partition
        assert not inc.partitions_updated and not inc.partitions_dropped  # 0 and 1 are already registered
        assert inc.last_commit_time_sync is not None and first.last_commit_time_sync is not None
        assert inc.last_commit_time_sync > first.last_commit_time_sync
        assert run.incremental_s < run.first_s
        # only the touched partitions are fetched: no call lists the whole table
        assert run.incremental.call_counts.get("get_partitions_by_names") == 1, run.incremental.call_counts
        assert not {"get_partitions", "get_partition_names"} & set(run.incremental.call_counts)
        assert sorted(run.in_metastore) == sorted(f"p={i}" for i in range(n + 1)), table
        assert len(run.in_metastore) == n + 1
    small, large = runs[SIZES[0]], runs[SIZES[-1]]
    assert large.incremental.call_counts == small.incremental.call_counts
    assert large.incremental.metastore_calls == small.incremental.metastore_calls <= 10
    assert large.incremental.metastore_calls * 100 < large.partitions
