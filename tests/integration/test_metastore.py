"""A real Hive Metastore (Thrift, Derby) started by hive_sync.metastore, driven through hive_sync.client."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from hive_sync.client import (
    HUDI_PARQUET_INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
    HiveMetastoreClient,
    make_table,
)
from hive_sync.errors import MetastoreUnavailable
from hive_sync.metastore import Metastore, free_port
from hive_sync.partitions import hive_partition_name

pytestmark = [pytest.mark.integration, pytest.mark.slow]
log = logging.getLogger(__name__)


def test_metastore_lifecycle_and_client(tmp_path: Path) -> None:
    port = free_port()
    ms = Metastore(tmp_path / "ms", port)
    started = time.monotonic()
    uri = ms.start(timeout_s=120)
    log.info("metastore ready in %.1f s", time.monotonic() - started)
    try:
        assert uri == f"thrift://127.0.0.1:{port}"
        st = ms.status()
        assert st.running and st.ready and st.pid and st.port == port
        with pytest.raises(MetastoreUnavailable, match=str(port)):
            Metastore(tmp_path / "other", port).start(timeout_s=5)  # port busy

        base = str(tmp_path / "tbl")
        with HiveMetastoreClient(uri) as c:
            assert "default" in c.all_databases()
            assert not c.database_exists("hudi_db")
            c.create_database("hudi_db", location=(tmp_path / "db").as_uri())
            assert c.database_exists("hudi_db")
            t = make_table("hudi_db", "trips", base, [("_hoodie_commit_time", "string"), ("id", "bigint")],
                           [("region", "string"), ("dt", "string")],
                           serde_params={"path": base, "hoodie.query.as.ro.table": "false"},
                           table_params={"spark.sql.sources.provider": "hudi"})
            c.create_table(t)
            assert c.table_exists("hudi_db", "trips") and not c.table_exists("hudi_db", "nope")
            got = c.get_table("hudi_db", "trips")
            assert got.tableType == "EXTERNAL_TABLE" and got.parameters["EXTERNAL"] == "TRUE"
            assert got.sd.inputFormat == HUDI_PARQUET_INPUT_FORMAT
            assert got.sd.outputFormat == PARQUET_OUTPUT_FORMAT
            assert got.sd.serdeInfo.serializationLib == PARQUET_SERDE
            assert got.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "false"
            assert [k.name for k in got.partitionKeys] == ["region", "dt"]

            # schema change, cascaded to partitions
            got.sd.cols.append(type(got.sd.cols[0])(name="fare", type="double", comment=""))
            c.alter_table("hudi_db", "trips", got, cascade=True)
            assert [f.name for f in c.get_table("hudi_db", "trips").sd.cols][-1] == "fare"

            # partitions: 5 added in batches of 2 → 3 calls; values with '/' and spaces survive
            values = [["eu", "2024-01-01"], ["eu", "2024-01-02"], ["us", "2024-01-01"], ["a/b c", "x"],
                      ["é", "2024-01-03"]]
            before = c.calls
            n = c.add_partitions(got, [(v, f"{base}/{hive_partition_name(['region', 'dt'], v)}")
                                       for v in values], batch_size=2)
            assert n == 3 and c.calls - before == 3
            assert c.call_counts["add_partitions_req"] == 3
            # ifNotExists: re-adding is a no-op, not an error
            c.add_partitions(got, [(values[0], f"{base}/dup")])
            names = c.partition_names("hudi_db", "trips")
            assert sorted(names) == sorted(hive_partition_name(["region", "dt"], v) for v in values)
            locs = c.partition_locations("hudi_db", "trips")
            assert locs[("eu", "2024-01-01")].endswith("region=eu/dt=2024-01-01")
            assert ("a/b c", "x") in locs

            before = c.calls
            assert c.alter_partitions(got, [(values[1], f"{base}/moved")]) == 1
            assert c.partition_locations("hudi_db", "trips")[tuple(values[1])].endswith("/moved")

            assert c.drop_partition("hudi_db", "trips", hive_partition_name(["region", "dt"], values[3]))
            assert not c.drop_partition("hudi_db", "trips", "region=zz/dt=none")
            assert len(c.partition_names("hudi_db", "trips")) == 4
            assert c.calls - before == 5  # alter, get_partitions, 2 drops, get_partition_names
            assert c.drop_table("hudi_db", "trips") and not c.table_exists("hudi_db", "trips")
    finally:
        assert ms.stop()
    st = ms.status()
    assert not st.running and not st.ready and st.pid is None
    assert not ms.stop()  # idempotent
