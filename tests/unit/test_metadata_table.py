"""Tables with a metadata table (engine.metadata.disable): reads leave it alone; the first change of the table
(a new instant, archival) deletes it as Hudi's writer does with ``hoodie.metadata.enable=false``; an explicit
``hoodie.metadata.enable=true`` is refused before anything is written. No JVM: the changes are savepoints,
cleans and a started write, all on a Hudi-written fixture table, read back by hudi-rs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.metadata.disable import drop_metadata_table, metadata_partitions_in_use
from engine.services.archive import archive
from engine.services.clean import run_clean
from engine.services.savepoint import create_savepoint, delete_savepoint, savepoint_times
from engine.table import Table
from engine.write.commit import start_write
from engine.write.operation import WriteOperation
from engine.write.rollback import rollback_instant
from engine.write.supported import check_write_supported
from tests.conftest import hudi_rs_rows
from tests.unit.metadata_table_fixture import add_metadata_table, assert_metadata_table_gone, properties_of

FIXTURE = "sample_table/cow/v6_simplekeygen_nonhivestyle"
MDT_LOGGER = "engine.metadata.disable"


def _rows(base: str) -> list[tuple[object, ...]]:
    return sorted((r["id"], r["name"], r["intField"]) for r in hudi_rs_rows(base))


def _deletion_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == MDT_LOGGER]


@pytest.fixture
def with_mdt(hudi_fixture: Callable[..., str]) -> str:
    base = hudi_fixture(FIXTURE, fresh=True)
    add_metadata_table(base)
    return base


def test_reads_leave_the_metadata_table_alone(with_mdt: str) -> None:
    props_before = (Path(with_mdt) / ".hoodie" / "hoodie.properties").read_bytes()
    table = Table.load(with_mdt)
    assert table.metadata_partitions == ["files"]
    view = table.file_system_view()
    assert view.partition_paths()  # listed from storage; .hoodie/metadata is not a partition
    assert all(not p.startswith(".hoodie") for p in view.partition_paths())
    assert table.latest_avro_schema() is not None
    assert _rows(with_mdt)
    assert (Path(with_mdt) / ".hoodie" / "metadata" / "files").is_dir()
    assert (Path(with_mdt) / ".hoodie" / "hoodie.properties").read_bytes() == props_before


@pytest.mark.parametrize("inflight", ["", "column_stats,record_index"])
def test_first_change_deletes_the_metadata_table(with_mdt: str, inflight: str,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    if inflight:
        Table.load(with_mdt).update_properties({"hoodie.table.metadata.partitions.inflight": inflight})
    expected = _rows(with_mdt)
    table = Table.load(with_mdt)
    last = table.timeline.completed_commits()[-1].timestamp
    with caplog.at_level(logging.INFO, logger=MDT_LOGGER):
        create_savepoint(table, last)
    assert savepoint_times(table) == [last]
    assert_metadata_table_gone(with_mdt)
    assert metadata_partitions_in_use(table) == []  # the loaded table was updated in place
    lines = _deletion_lines(caplog)
    assert len(lines) == 1
    assert table.name in lines[0] and with_mdt in lines[0]
    assert "does not maintain" in lines[0] and "list the file system" in lines[0]
    assert ("column_stats" in lines[0]) == bool(inflight)
    assert _rows(with_mdt) == expected
    # later changes find nothing to delete and say nothing
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=MDT_LOGGER):
        delete_savepoint(Table.load(with_mdt), last)
    assert _deletion_lines(caplog) == []
    assert _rows(with_mdt) == expected


def test_a_write_deletes_it_before_its_instant_starts(with_mdt: str) -> None:
    table = Table.load(with_mdt)
    instant = start_write(table, WriteOperation.UPSERT)
    try:
        assert_metadata_table_gone(with_mdt)
        assert any(i.timestamp == instant.timestamp for i in Table.load(with_mdt).timeline.pending())
    finally:
        rollback_instant(table, instant)


@pytest.mark.parametrize(("folder", "properties"), [(True, False), (False, True)])
def test_a_leftover_folder_or_property_alone_is_cleared(hudi_fixture: Callable[..., str], folder: bool,
                                                        properties: bool) -> None:
    base = hudi_fixture(FIXTURE, fresh=True)
    add_metadata_table(base, folder=folder, properties=properties)
    table = Table.load(base)
    create_savepoint(table, table.timeline.completed_commits()[-1].timestamp)
    assert_metadata_table_gone(base)
    assert drop_metadata_table(Table.load(base)) is False


def test_no_metadata_table_no_rewrite(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture(FIXTURE, fresh=True)
    before = (Path(base) / ".hoodie" / "hoodie.properties").read_bytes()
    table = Table.load(base)
    create_savepoint(table, table.timeline.completed_commits()[-1].timestamp)
    assert (Path(base) / ".hoodie" / "hoodie.properties").read_bytes() == before


def test_enable_true_in_hoodie_properties_is_refused_with_nothing_changed(with_mdt: str) -> None:
    Table.load(with_mdt).update_properties({"hoodie.metadata.enable": "true"})
    props = properties_of(with_mdt)
    table = Table.load(with_mdt)
    timeline_files = sorted(p.name for p in (Path(with_mdt) / ".hoodie").iterdir())
    with pytest.raises(ConfigError, match=r"hoodie\.metadata\.enable=true .*table v6_simplekeygen_nonhivestyle.*"
                                          r"not maintained by this engine.*set hoodie\.metadata\.enable=false"):
        create_savepoint(table, table.timeline.completed_commits()[-1].timestamp)
    assert sorted(p.name for p in (Path(with_mdt) / ".hoodie").iterdir()) == timeline_files
    assert properties_of(with_mdt) == props
    assert (Path(with_mdt) / ".hoodie" / "metadata" / "files").is_dir()


@pytest.mark.parametrize("value", ["true", "TRUE"])
def test_enable_true_in_options_is_refused_by_writes_and_services(with_mdt: str, value: str) -> None:
    table = Table.load(with_mdt)
    conf = table.config.overlay({"hoodie.metadata.enable": value})
    with pytest.raises(ConfigError, match=rf"hoodie\.metadata\.enable=true .*{table.name} at {with_mdt}"):
        check_write_supported(table, conf)
    with pytest.raises(ConfigError, match=r"hoodie\.metadata\.enable"):
        run_clean(table, conf, force=True)
    with pytest.raises(ConfigError, match=r"hoodie\.metadata\.enable"):
        archive(table, conf)
    assert (Path(with_mdt) / ".hoodie" / "metadata" / "files").is_dir()
    assert Table.load(with_mdt).metadata_partitions == ["files"]
    for allowed in ({}, {"hoodie.metadata.enable": "false"}):
        check_write_supported(table, table.config.overlay(allowed))
    with pytest.raises(ConfigError, match=r"hoodie\.metadata\.enable.*invalid value"):
        check_write_supported(table, HoodieConfig(table.config).overlay({"hoodie.metadata.enable": "maybe"}))
