"""A metastore outage (issue 15's reliability suite): the real metastore keeps running while a TCP proxy between
it and the writer cuts every connection — in the middle of a post-commit Hive sync, before a writer takes its
metastore lock (``HiveMetastoreBasedLockProvider``), and while a writer holds it. Each time the commit is either
kept (the sync or the release failed after it) or cleanly aborted (no lock: nothing written, nothing pending),
the table reads its last commit in hudi-rs, and once the network is back the next run catches up."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlparse

import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from hive_sync.client import HiveMetastoreClient
from hive_sync.lock_provider import HiveMetastoreBasedLockProvider
from hive_sync.sync_tool import LAST_COMMIT_TIME_SYNC
from sqlext.commands.post_commit import MetaSyncFailed
from sqlext.session import Session
from tests.conftest import hudi_rs_rows
from tests.integration.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]


@pytest.fixture()
def proxy(metastore: str) -> TcpProxy:
    address = urlparse(metastore)
    assert address.hostname and address.port
    with TcpProxy(address.hostname, address.port) as p:
        yield p  # type: ignore[misc]


def oracle(location: str) -> list[tuple[object, ...]]:
    return sorted((r["id"], r["p"]) for r in hudi_rs_rows(location))


def commits(location: str) -> list[str]:
    from engine.table import Table

    return [i.timestamp for i in Table.load(location).timeline.reload().completed_commits()]


def pending(location: str) -> list[str]:
    from engine.table import Table

    return [f"{i.timestamp}.{i.action}" for i in Table.load(location).timeline.reload().pending()]


def test_an_outage_in_the_middle_of_a_sync_keeps_the_commit_and_the_next_sync_catches_up(
        session: Session, table_name: str, metastore: str, proxy: TcpProxy) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.datasource.hive_sync.enable' = 'true',
                       'hoodie.datasource.hive_sync.metastore.uris' = '{proxy.uri}')""")
    session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'p0'), (2, 'b', 'p1')")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    values = ", ".join(f"({10 + n}, 'n', 'q{n}')" for n in range(12))
    proxy.cut(after_requests=6)  # a few metastore calls into the sync, the network goes
    with pytest.raises(MetaSyncFailed, match=rf"committed.*CALL hive_sync\(table => 'default\.{table_name}'\)"):
        session.sql(f"INSERT INTO {table_name} VALUES {values}")
    expected = sorted([(1, "p0"), (2, "p1")] + [(10 + n, f"q{n}") for n in range(12)])
    assert oracle(entry.location) == expected and not pending(entry.location)  # the commit stands
    latest = commits(entry.location)[-1]
    with HiveMetastoreClient(metastore) as client:  # the sync was cut part way: not all of it got there
        synced = {t: (client.get_table("default", t).parameters.get(LAST_COMMIT_TIME_SYNC),
                      len(client.partition_names("default", t)))
                  for t in (f"{table_name}_ro", f"{table_name}_rt")}
        assert any(state != (latest, 14) for state in synced.values()), synced
    proxy.restore()
    assert session.sql(f"CALL hive_sync(table => '{table_name}', metastore_uri => '{proxy.uri}')"
                       ).collect()[0]["result"]
    want = sorted(["p=p0", "p=p1"] + [f"p=q{n}" for n in range(12)])
    with HiveMetastoreClient(metastore) as client:
        for name in (f"{table_name}_ro", f"{table_name}_rt"):
            assert sorted(client.partition_names("default", name)) == want
            assert client.get_table("default", name).parameters[LAST_COMMIT_TIME_SYNC] == latest


def lock_settings(session: Session, proxy: TcpProxy, table_name: str) -> None:
    for key, value in {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider",
        "hoodie.write.lock.hivemetastore.database": "default",
        "hoodie.write.lock.hivemetastore.table": f"{table_name}_lock",
        "hoodie.write.lock.hivemetastore.uris": proxy.uri,
        "hoodie.write.lock.wait_time_ms": "2000", "hoodie.write.lock.num_retries": "1",
        "hoodie.write.lock.wait_time_ms_between_retry": "200", "hoodie.write.lock.client.num_retries": "1",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
    }.items():
        session.sql(f"SET {key}={value}")


def acquired(metastore: str, table: str) -> list[int]:
    with HiveMetastoreClient(metastore) as client:
        locks = client.show_locks("default", table)
    return [lock.lockid for lock in locks if lock.state == ttypes.LockState.ACQUIRED]


def test_an_outage_at_the_metastore_lock_aborts_cleanly_or_keeps_the_commit(
        session: Session, table_name: str, metastore: str, proxy: TcpProxy, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    session.sql(f"""CREATE TABLE {table_name} (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p)
        TBLPROPERTIES (primaryKey = 'id')""")
    entry = session.catalog.lookup_name(table_name)
    assert entry is not None
    lock_settings(session, proxy, table_name)
    try:
        session.sql(f"INSERT INTO {table_name} VALUES (1, 'a', 'x')")
        assert oracle(entry.location) == [(1, "x")]
        # Down before the commit takes its lock: the write is aborted, its files rolled back, nothing pending.
        proxy.cut()
        with pytest.raises(Exception, match=rf"{table_name}_lock.*metastore|metastore.*{table_name}_lock") as info:
            session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 'y')")
        assert "Traceback" not in str(info.value)
        assert oracle(entry.location) == [(1, "x")] and len(commits(entry.location)) == 1
        assert not pending(entry.location)
        assert not (Path(entry.location) / "p=y").exists() or not any((Path(entry.location) / "p=y").glob("*.parquet"))
        proxy.restore()
        session.sql(f"INSERT INTO {table_name} VALUES (2, 'b', 'y')")  # back: the retry commits
        assert oracle(entry.location) == [(1, "x"), (2, "y")]

        # Down while the lock is held: the commit is written (the lock service is not needed for that) and
        # kept; the failed release is logged, not raised — a retried INSERT would duplicate its rows.
        original = HiveMetastoreBasedLockProvider.try_lock

        def then_the_network_goes(self: HiveMetastoreBasedLockProvider, timeout_ms: int) -> bool:
            got = original(self, timeout_ms)
            proxy.cut()
            return got

        monkeypatch.setattr(HiveMetastoreBasedLockProvider, "try_lock", then_the_network_goes)
        with caplog.at_level(logging.ERROR):
            session.sql(f"INSERT INTO {table_name} VALUES (3, 'c', 'z')")
        assert oracle(entry.location) == [(1, "x"), (2, "y"), (3, "z")] and not pending(entry.location)
        assert any("could not be released" in r.getMessage() for r in caplog.records)
        monkeypatch.setattr(HiveMetastoreBasedLockProvider, "try_lock", original)
        assert acquired(metastore, f"{table_name}_lock")  # the metastore still holds it (no housekeeper runs)
        proxy.restore()
        # The next writer of this process finds the lock left by a request it no longer owns and frees it.
        session.sql(f"INSERT INTO {table_name} VALUES (4, 'd', 'z')")
        assert oracle(entry.location) == [(1, "x"), (2, "y"), (3, "z"), (4, "z")]
        assert not acquired(metastore, f"{table_name}_lock")
    finally:
        for key in ("hoodie.write.concurrency.mode", "hoodie.write.lock.provider"):
            session.sql(f"RESET {key}")
        session.sql(f"DROP TABLE {table_name}")
