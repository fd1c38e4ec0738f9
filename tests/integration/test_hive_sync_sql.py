"""Hive sync from SQL: post-commit sync of a merge-on-read table into a real metastore, CALL hive_sync, and a
metastore that is down during the post-commit sync (the commit stays, the error says how to re-run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_sync.client import HiveMetastoreClient
from hive_sync.metastore import free_port
from sqlext.commands.post_commit import MetaSyncFailed
from sqlext.session import Session
from tests.conftest import hudi_rs_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]



def test_post_commit_sync_registers_ro_and_rt_tables(session: Session, table_name: str, metastore: str) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.datasource.hive_sync.enable' = 'true',
                       'hoodie.datasource.hive_sync.metastore.uris' = '{metastore}')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
    with HiveMetastoreClient(metastore) as client:
        names = set(client.table_names("default"))
        assert {f"{table_name}_ro", f"{table_name}_rt", table_name} <= names
        ro = client.get_table("default", f"{table_name}_ro")
        assert ro.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "true"
        assert "HoodieParquetRealtimeInputFormat" in client.get_table("default", f"{table_name}_rt").sd.inputFormat
        assert sorted(client.partition_names("default", f"{table_name}_ro")) == ["p=x", "p=y"]
    session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 1, 'z')")
    with HiveMetastoreClient(metastore) as client:
        assert sorted(client.partition_names("default", f"{table_name}_rt")) == ["p=x", "p=y", "p=z"]
    result = session.sql(f"CALL hive_sync(table => '{table_name}', metastore_uri => '{metastore}')").collect()
    assert len(result) == 1 and result[0]["result"]


def test_metastore_down_keeps_the_commit_and_says_how_to_resync(
        session: Session, table_name: str, tmp_path: Path, metastore: str) -> None:
    dead = f"thrift://127.0.0.1:{free_port()}"
    session.sql(f"""CREATE TABLE {table_name} (id INT, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (primaryKey = 'id', 'hoodie.datasource.hive_sync.enable' = 'true',
                       'hoodie.datasource.hive_sync.metastore.uris' = '{dead}')""")
    with pytest.raises(MetaSyncFailed, match=rf"committed.*CALL hive_sync\(table => 'default\.{table_name}'\)"):
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'x')")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    assert [r["id"] for r in hudi_rs_rows(entry.location)] == [1]  # the commit stayed
    session.sql(f"CALL hive_sync(table => '{table_name}', metastore_uri => '{metastore}')")
    with HiveMetastoreClient(metastore) as client:
        assert client.partition_names("default", table_name) == ["p=x"]  # the next sync caught up
