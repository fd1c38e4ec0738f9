"""engine.table: hoodie.properties, Table.create/load, schema resolution, property updates."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import hudi
import pytest

from engine.errors import ConfigError, CorruptFile, TableExists, TableNotFound, UnsupportedTable
from engine.table import Table
from engine.table_properties import TableProperties
from engine.timeline import COMMIT, CommitMetadata, new_instant_time
from tests.conftest import HUDI_FIXTURE_NAMES

SCHEMA = {"type": "record", "name": "t1_record", "namespace": "hoodie.t1",
          "fields": [{"name": "id", "type": ["int", "null"]}, {"name": "name", "type": ["string", "null"]},
                     {"name": "ts", "type": ["long", "null"]}, {"name": "p", "type": ["string", "null"]}]}


def _props_text(base: str) -> str:
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), encoding="latin-1") as handle:
        return handle.read()


@pytest.mark.parametrize("name", HUDI_FIXTURE_NAMES)
def test_fixture_properties_parse_and_checksum(hudi_fixture: Callable[..., str], name: str) -> None:
    base = hudi_fixture(name)
    props = TableProperties.parse(_props_text(base))
    assert props["hoodie.table.version"] == "6"
    expected = TableProperties.checksum(props.get("hoodie.database.name"), props["hoodie.table.name"])
    assert int(props["hoodie.table.checksum"]) == expected
    assert TableProperties.is_valid(props)
    schema = json.loads(props["hoodie.table.create.schema"])  # "\:" unescaped
    assert schema["type"] == "record"
    # rendering and parsing again gives the same map
    assert TableProperties.parse(TableProperties.render(props).decode("latin-1")) == props

    table = Table.load(base)
    assert table.name == props["hoodie.table.name"]
    assert table.table_type == ("MERGE_ON_READ" if "/mor/" in name else "COPY_ON_WRITE")
    assert table.is_mor == ("/mor/" in name)
    assert table.record_key_fields == props["hoodie.table.recordkey.fields"].split(",")
    assert table.precombine_field == props.get("hoodie.table.precombine.field")
    assert table.partition_fields == ([] if "nonpartitioned" in name else table.partition_fields)
    assert table.meta_path == os.path.join(base, ".hoodie")
    assert table.temp_path == os.path.join(base, ".hoodie", ".temp")
    latest = table.latest_avro_schema()
    assert latest is not None and latest["type"] == "record"
    with_meta = table.latest_avro_schema(include_meta=True)
    assert with_meta is not None
    assert [f["name"] for f in with_meta["fields"][:5]] == [
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def test_known_checksum_and_keys() -> None:
    assert TableProperties.checksum("default", "v6_nonpartitioned") == 1363530505
    assert TableProperties.checksum(None, "t") == TableProperties.checksum("", "t")


def test_fixture_accessors(hudi_fixture: Callable[..., str]) -> None:
    table = Table.load(hudi_fixture("sample_table/cow/v6_complexkeygen_hivestyle"))
    assert table.record_key_fields == ["id", "name"]
    assert table.partition_fields == ["byteField", "shortField"]
    assert table.hive_style and not table.url_encode and table.populate_meta_fields
    assert table.keygen_class.endswith("ComplexKeyGenerator")
    nonpart = Table.load(hudi_fixture("sample_table/mor/parquet/v6_nonpartitioned"))
    assert nonpart.partition_fields == [] and not nonpart.is_partitioned
    nometa = Table.load(hudi_fixture("sample_table/cow/v6_simplekeygen_hivestyle_no_metafields"))
    assert not nometa.populate_meta_fields


def test_latest_schema_prefers_latest_commit(hudi_fixture: Callable[..., str]) -> None:
    base = hudi_fixture("sample_table/cow/v6_nonpartitioned")
    table = Table.load(base)
    last = table.timeline.last_completed_commit()
    assert last is not None
    schema = table.latest_avro_schema()
    assert schema == json.loads(table.commit_metadata(last).schema or "")
    # commit schemas have ["null", T] unions, the create schema [T, "null"]
    assert schema is not None and schema["fields"][0]["type"][0] == "null"
    empty = Table.load(hudi_fixture("sample_table/cow/v6_empty"))
    assert empty.latest_avro_schema() == json.loads(_props_text_value(empty, "hoodie.table.create.schema"))


def test_latest_schema_skips_compaction_commits(tmp_path: Path) -> None:
    table = _create(tmp_path)
    timeline = table.timeline
    write_schema = dict(SCHEMA, fields=SCHEMA["fields"][:2])
    for operation, schema in (("UPSERT", write_schema), ("COMPACT", {"type": "record", "name": "x", "fields": []})):
        ts = timeline.new_instant_time()
        inflight = timeline.transition_to_inflight(timeline.create_requested(ts, COMMIT))
        timeline.complete(inflight, CommitMetadata(operation_type=operation,
                                                   extra_metadata={"schema": json.dumps(schema)}).to_json())
    assert table.latest_avro_schema() == write_schema


def _props_text_value(table: Table, key: str) -> str:
    return TableProperties.parse(_props_text(table.base_path))[key]


def test_render_writes_values_unescaped() -> None:
    text = TableProperties.render({"hoodie.table.name": "t", "hoodie.table.create.schema": '{"a":"b=c#!"}',
                                   "x": "back\\slash\nline"}).decode("latin-1")
    lines = text.splitlines()
    assert lines[0].startswith("#Properties saved on ") and lines[0].endswith("Z")
    assert lines[1].startswith("#") and " UTC " in lines[1]
    assert 'hoodie.table.create.schema={"a":"b=c#!"}' in lines
    assert "x=back\\\\slash\\nline" in lines
    assert TableProperties.parse(text)["x"] == "back\\slash\nline"


def test_parse_java_escapes() -> None:
    text = "#c\n! also comment\nk1=a\\:b\\=c\nk2 : spaced value\nk3\\ key=v\nlong=one\\\n    two\nu=\\u00e9\n"
    assert TableProperties.parse(text) == {"k1": "a:b=c", "k2": "spaced value", "k3 key": "v",
                                           "long": "onetwo", "u": "é"}


def test_characters_above_the_bmp_are_written_as_java_writes_them(tmp_path: Path) -> None:
    """Java strings are UTF-16: Properties.store writes an emoji as its surrogate pair (two \\u escapes); a
    table named with one loads again, its checksum intact."""
    text = TableProperties.render({"hoodie.table.name": "t_\U0001F600"}).decode("latin-1")
    assert "hoodie.table.name=t_\\uD83D\\uDE00" in text.splitlines()
    assert TableProperties.parse(text)["hoodie.table.name"] == "t_\U0001F600"
    assert _create(tmp_path, **{"hoodie.table.name": "t_\U0001F600"}).name == "t_\U0001F600"
    assert Table.load(str(tmp_path / "t1")).name == "t_\U0001F600"


def _create(tmp_path: Path, table_type: str = "COPY_ON_WRITE", **extra: str) -> Table:
    props = {"hoodie.table.name": "t1", "hoodie.table.type": table_type, "hoodie.database.name": "default",
             "hoodie.table.recordkey.fields": "id", "hoodie.table.precombine.field": "ts",
             "hoodie.table.partition.fields": "p",
             "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
             "hoodie.datasource.write.hive_style_partitioning": "true",
             "hoodie.datasource.write.partitionpath.urlencode": "false",
             "hoodie.table.create.schema": json.dumps(SCHEMA, separators=(",", ":")), **extra}
    return Table.create(str(tmp_path / "t1"), props)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_create_then_load_and_read_with_hudi_rs(tmp_path: Path, table_type: str) -> None:
    table = _create(tmp_path, table_type)
    base = table.base_path
    for folder in (".hoodie", ".hoodie/archived", ".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions",
                   ".hoodie/.aux/.bootstrap/.fileids"):
        assert os.path.isdir(os.path.join(base, folder)), folder
    props = TableProperties.parse(_props_text(base))
    assert props["hoodie.table.version"] == "6" and props["hoodie.timeline.layout.version"] == "1"
    assert props["hoodie.table.timeline.timezone"] == "UTC"
    assert props["hoodie.archivelog.folder"] == "archived"
    assert props["hoodie.datasource.write.drop.partition.columns"] == "false"
    assert props["hoodie.populate.meta.fields"] == "true"
    assert int(props["hoodie.table.checksum"]) == TableProperties.checksum("default", "t1")
    assert ("hoodie.compaction.payload.class" in props) == (table_type == "MERGE_ON_READ")
    assert "\\:" not in _props_text(base)  # create schema written unescaped
    loaded = Table.load(base)
    assert loaded.config.as_dict() == props
    assert loaded.table_type == table_type and loaded.partition_fields == ["p"]
    assert loaded.timeline.instants == []
    assert loaded.latest_avro_schema() == SCHEMA
    assert loaded.file_system_view().all_latest_file_slices() == []

    rs_table = hudi.HudiTableBuilder.from_base_uri(base).build()
    batches = rs_table.read()
    assert sum(b.num_rows for b in batches) == 0
    rs_schema = rs_table.get_schema()
    assert rs_schema.names == ["id", "name", "ts", "p"]


def test_hudi_rs_ignores_our_temp_files(tmp_path: Path) -> None:
    table = _create(tmp_path)
    ts = new_instant_time()
    timeline = table.timeline
    inflight = timeline.transition_to_inflight(timeline.create_requested(ts, COMMIT), b"")
    # a commit without write stats must still name the schema, or hudi-rs cannot resolve it
    schema_text = table.config["hoodie.table.create.schema"]
    timeline.complete(inflight, CommitMetadata(operation_type="INSERT",
                                               extra_metadata={"schema": schema_text}).to_json())
    # a crashed atomic write leaves a temp file behind; no reader may trip over it
    with open(os.path.join(table.meta_path, f".{ts}.commit.0123abcd.tmp"), "wb") as handle:
        handle.write(b"{partial")
    assert Table.load(table.base_path).timeline.instants == timeline.instants
    assert sum(b.num_rows for b in hudi.HudiTableBuilder.from_base_uri(table.base_path).build().read()) == 0


def test_create_errors(tmp_path: Path) -> None:
    _create(tmp_path)
    with pytest.raises(TableExists, match="t1"):
        _create(tmp_path)
    with pytest.raises(ConfigError, match="hoodie.table.name"):
        Table.create(str(tmp_path / "x"), {"hoodie.table.type": "COPY_ON_WRITE"})
    with pytest.raises(ConfigError, match="MERGE_ON_READ"):
        Table.create(str(tmp_path / "y"), {"hoodie.table.name": "y", "hoodie.table.type": "BOGUS"})
    dropping = Table.create(str(tmp_path / "z"), {"hoodie.table.name": "z", "hoodie.table.partition.fields": "dt",
                                                  "hoodie.datasource.write.drop.partition.columns": "true"})
    assert dropping.dropped_partition_columns == ["dt"]  # supported since: files leave the column out
    with pytest.raises(ConfigError, match="metadata table"):
        Table.create(str(tmp_path / "m"), {"hoodie.table.name": "m", "hoodie.table.metadata.partitions": "files"})
    assert Table.create(str(tmp_path / "lower"), {"hoodie.table.name": "l",
                                                  "hoodie.table.type": "merge_on_read"}).is_mor


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(TableNotFound, match=str(tmp_path)):
        Table.load(str(tmp_path))
    assert not Table.exists(str(tmp_path))
    meta = tmp_path / ".hoodie"
    meta.mkdir()
    (meta / "hoodie.properties").write_bytes(TableProperties.render(
        {"hoodie.table.name": "t", "hoodie.table.version": "5", "hoodie.timeline.layout.version": "1"}))
    with pytest.raises(UnsupportedTable, match="version 5"):
        Table.load(str(tmp_path))
    (meta / "hoodie.properties").write_bytes(TableProperties.render(
        {"hoodie.table.name": "t", "hoodie.table.version": "6", "hoodie.table.checksum": "1"}))
    with pytest.raises(CorruptFile, match="checksum"):
        Table.load(str(tmp_path))


def test_update_properties_backup_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _create(tmp_path)
    meta = Path(table.meta_path)
    table.update_properties({"hoodie.table.metadata.partitions": "files", "hoodie.table.precombine.field": "name"})
    assert table.metadata_partitions == ["files"]
    assert not (meta / "hoodie.properties.backup").exists()
    text = (meta / "hoodie.properties").read_text(encoding="latin-1")
    assert text.startswith("#Updated at ")
    assert table.precombine_field == "name"
    assert Table.load(table.base_path).precombine_field == "name"
    # deleting keys, renaming the table refreshes the checksum
    table.update_properties({"hoodie.table.metadata.partitions": None, "hoodie.table.name": "renamed"})
    props = TableProperties.parse((meta / "hoodie.properties").read_text(encoding="latin-1"))
    assert "hoodie.table.metadata.partitions" not in props
    assert int(props["hoodie.table.checksum"]) == TableProperties.checksum("default", "renamed")
    with pytest.raises(ConfigError):
        table.update_properties({"hoodie.table.name": None})

    # an update interrupted after step 3 (properties deleted, backup present): readers use the backup,
    # and the next update recovers
    (meta / "hoodie.properties").rename(meta / "hoodie.properties.backup")
    assert Table.exists(table.base_path)
    assert Table.load(table.base_path).name == "renamed"
    table.update_properties({"hoodie.table.precombine.field": "ts"})
    assert not (meta / "hoodie.properties.backup").exists()
    assert Table.load(table.base_path).precombine_field == "ts"

    # a corrupt hoodie.properties (bad checksum) next to a valid backup: the backup wins
    good = (meta / "hoodie.properties").read_bytes()
    (meta / "hoodie.properties.backup").write_bytes(good)
    (meta / "hoodie.properties").write_bytes(good.replace(b"hoodie.table.checksum=", b"hoodie.table.checksum=9"))
    assert Table.load(table.base_path).precombine_field == "ts"
    (meta / "hoodie.properties").write_bytes(good)
    (meta / "hoodie.properties.backup").unlink()
    # hudi-rs still reads the updated table
    assert sum(b.num_rows for b in hudi.HudiTableBuilder.from_base_uri(table.base_path).build().read()) == 0
