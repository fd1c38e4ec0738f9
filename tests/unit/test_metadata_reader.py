"""The metadata table reader on tables Apache Hudi 0.15 wrote (``tests/fixtures/hudi-written/metadata``): what
the MDT says must equal what the data table holds — partitions and files from the engine's file-system view of
the data table, record locations from the rows hudi-rs reads, column stats computed with pyarrow from the base
files, bloom filters from the base files' footers.

Each fixture is checked in its final state and as of earlier completed data instants: the data table's later
instants are turned back into pending ones (their completed files removed), which the reader must honour
through Hudi's valid-instant rule (MDT blocks of instants not completed on the data timeline are ignored). Only
cut points the history allows are used: not before the MDT's last compaction (its base files hold every earlier
deltacommit) and not before a rollback (its deletions are not revertible). A reverted clean has deleted its files
already while the MDT, rightly, still lists them: the expected listing adds the files of pending clean plans.
"""

from __future__ import annotations

import datetime
import shutil
import zipfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.config import HoodieConfig
from engine.errors import MetadataTableError
from engine.filegroup.view import FileSystemView
from engine.formats.base_file import read_bloom_filter
from engine.formats.log_format import HFileDataBlock, read_log_blocks
from engine.metadata import reader as reader_module
from engine.metadata.builders import (
    bloom_filter_record,
    column_stats_record,
    partition_list_record,
    record_index_record,
)
from engine.metadata.hfile_records import BaseFileRecords
from engine.metadata.instants import is_valid_metadata_instant, rolled_back_instants, valid_instant_timestamps
from engine.metadata.reader import MetadataTableReader
from engine.metadata.records import StatValue, decode_datum, encode_datum
from engine.metadata.schema import (
    DECIMAL_WRAPPER_SCALE,
    MetadataPartition,
    writer_schema_json,
)
from engine.table import Table
from engine.timeline import avro_serde
from engine.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Instant, State
from tests.conftest import HUDI_FIXTURES, hudi_rs_rows

METADATA_FIXTURES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix(""))
                           for p in HUDI_FIXTURES.glob("metadata/**/*.zip"))


def _unzip(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(HUDI_FIXTURES / f"{name}.zip") as archive:
        archive.extractall(dest, [m for m in archive.namelist() if not m.startswith("__MACOSX")])
    return dest / Path(name).name


def _cut_points(base: Path) -> list[str]:
    """Completed data instants the history allows reading the MDT as of (module docstring); the last one is
    the final state."""
    data = Table.load(str(base)).timeline
    mdt = Table.load(str(base / ".hoodie" / "metadata")).timeline
    floor = max((i.timestamp[:17] for i in mdt.completed() if i.action == COMMIT), default="")
    cuts = []
    for instant in data.completed():
        later = [i for i in data.instants if i.timestamp > instant.timestamp]
        if instant.timestamp >= floor and all(i.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN)
                                              for i in later):
            cuts.append(instant.timestamp)
    return cuts


def _as_of(base: Path, cut: str, dest: Path) -> Path:
    """A copy of the table whose write instants after ``cut`` are inflight again."""
    copy = dest / f"{base.name}_{cut}"
    shutil.copytree(base, copy)
    for instant in Table.load(str(copy)).timeline.completed():
        if instant.timestamp > cut:
            (copy / ".hoodie" / instant.file_name).unlink()
    return copy


@pytest.fixture(scope="module", params=METADATA_FIXTURES)
def states(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The fixture's table as of each allowed cut point (the final state last)."""
    dest = tmp_path_factory.mktemp("mdt")
    base = _unzip(request.param, dest)
    last = Table.load(str(base)).timeline.completed()[-1].timestamp
    return [_as_of(base, cut, dest) for cut in _cut_points(base) if cut < last] + [base]


def test_fixtures_exist() -> None:
    assert METADATA_FIXTURES, "no metadata table fixtures under tests/fixtures/hudi-written/metadata"
    shapes = {(("/cow/" in n), ("nonpartitioned" not in n)) for n in METADATA_FIXTURES}
    assert len(shapes) == 4  # COW and MOR, partitioned and not


def _committed_blocks(path: str, table: Table) -> tuple[bool, bool]:
    """(any block of a completed instant, every data block of a completed instant) of a log file."""
    completed = {i.timestamp for i in table.timeline.completed()}
    instants = [b.instant_time for b in read_log_blocks(table.storage, path) if b.instant_time]
    return any(i in completed for i in instants), all(i in completed for i in instants)


def _listing(table: Table) -> dict[str, dict[str, int | None]]:
    """Partition → file name → size (None: a log file also holding uncommitted blocks, size unknown) of the
    committed files the file-system view sees."""
    view = FileSystemView(table)
    out: dict[str, dict[str, int | None]] = {}
    for partition in view.partition_paths():
        files: dict[str, int | None] = {}
        for group in view.file_groups(partition, include_replaced=True):
            for file_slice in group.slices:
                if file_slice.base_file is not None:
                    files[file_slice.base_file.name] = file_slice.base_file.size
                for log in file_slice.log_files:
                    some, every = _committed_blocks(log.path, table)
                    if some:
                        files[log.name] = log.size if every else None
        if files:
            out[partition] = files
    for clean in table.timeline.cleans():  # a pending clean's deletions are not in the MDT yet
        if clean.is_pending:
            requested = Instant(clean.timestamp, CLEAN, State.REQUESTED)
            plan = avro_serde.deserialize(table.timeline.read_details(requested), "HoodieCleanerPlan")
            for partition, entries in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
                for entry in entries:
                    out.setdefault(partition, {})[Path(entry["filePath"]).name] = None
    return out


def _each(states: list[Path]) -> Iterator[tuple[Path, Table, MetadataTableReader]]:
    for state in states:
        table = Table.load(str(state))
        yield state, table, MetadataTableReader(table)


def test_partitions_and_files_equal_the_file_system(states: list[Path]) -> None:
    for state, table, mdt in _each(states):
        expected = _listing(table)
        assert mdt.all_partition_paths() == sorted(expected), state.name
        for partition, files in expected.items():
            listed = mdt.files_in_partition(partition)
            assert sorted(listed) == sorted(files), f"{state.name} {partition}"
            for name, size in files.items():
                if size is not None:
                    assert listed[name] == size, f"{state.name} {partition}/{name}"
        assert mdt.files_in_partition("no/such/partition") == {}


def _file_id(file_name: str) -> str:
    return file_name.lstrip(".").split("_", 1)[0]


def test_record_index_locates_every_key(states: list[Path]) -> None:
    for state, table, mdt in _each(states):
        rows = [{k: str(v) for k, v in r.items() if k.startswith("_hoodie_")} for r in hudi_rs_rows(state)]
        assert rows, state.name
        expected = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], _file_id(r["_hoodie_file_name"]))
                    for r in rows}
        absent = [k for k in ("2", "8", "no-such-key", "") if k not in expected]  # 2 was deleted, 8 rolled back
        found = mdt.record_locations([*expected, *absent])
        assert {k: (v.partition, v.file_id) for k, v in found.items()} == expected, state.name
        completed = {i.timestamp for i in table.timeline.completed()}
        commit_time = {r["_hoodie_record_key"]: r["_hoodie_commit_time"] for r in rows}
        for key, where in found.items():
            assert where.instant in completed and where.instant <= commit_time[key], (state.name, key, where)


def _python(value: Any) -> Any:
    if isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    if isinstance(value, Decimal):
        return value.normalize()
    return value


def _stored(stored: StatValue | None, computed: Any) -> Any:
    """A stored statistic as a Python value. Hudi 0.15 re-wraps a decimal read back as a generic record as
    ``BytesWrapper`` of its unscaled big-endian bytes at the DecimalWrapper scale (15)."""
    if stored is None:
        return None
    if stored.wrapper == "BytesWrapper" and isinstance(computed, Decimal):
        return _python(Decimal(int.from_bytes(stored.value, "big", signed=True)).scaleb(-DECIMAL_WRAPPER_SCALE))
    return _python(stored.value)


def test_column_stats_equal_the_base_files(states: list[Path]) -> None:
    """Every column of every latest base file the index covers. Hudi 0.15 writes no column stats for the files
    of a DELETE commit nor for files without rows (a compaction whose records were all deleted), so those (and
    only those) may be missing. (Its cleaner also writes the tombstones of cleaned files under keys of names
    cut short by the partition path's length, so cleaned files keep live stats; lookups by real names are not
    affected.)"""
    for state, table, mdt in _each(states):
        view = FileSystemView(table)
        checked = 0
        for partition in view.partition_paths():
            bases = view.latest_base_files(partition)
            columns = pq.read_schema(bases[0].path).names if bases else []
            stats = mdt.column_stats(partition, [b.name for b in bases], columns)
            for base in bases:
                data = pq.read_table(base.path)
                if not any((base.name, c) in stats for c in columns):
                    instant = next(i for i in table.timeline.completed() if i.timestamp == base.commit_time)
                    operation = table.commit_metadata(instant).operation_type
                    assert data.num_rows == 0 or operation.startswith("DELETE"), (state.name, base, operation)
                    continue
                for column in columns:
                    got = stats[(base.name, column)]
                    array = data.column(column)
                    extremes = pc.min_max(array).as_py() if len(array) else {"min": None, "max": None}
                    assert got.value_count == data.num_rows and got.null_count == array.null_count, \
                        (state.name, base.name, column)
                    for stored, computed in ((got.min_value, extremes["min"]), (got.max_value, extremes["max"])):
                        assert _stored(stored, computed) == _python(computed), \
                            (state.name, base.name, column, stored, computed)
                    checked += 1
        assert checked, state.name
        assert mdt.column_stats(view.partition_paths()[0], ["no-such-file.parquet"], ["id"]) == {}


def test_bloom_filters_equal_the_footers(states: list[Path]) -> None:
    for state, table, mdt in _each(states):
        view = FileSystemView(table)
        bases = [b for p in view.partition_paths() for b in view.latest_base_files(p)]
        assert bases, state.name
        for base in bases:
            partition = str(Path(base.path).parent.relative_to(state)) if Path(base.path).parent != state else ""
            footer = read_bloom_filter(table.storage, base.path)
            stored = mdt.bloom_filter(partition, base.name)
            assert footer is not None and stored is not None, (state.name, base.name)
            assert stored.serialize() == footer.serialize(), (state.name, base.name)
        assert mdt.bloom_filter("", "no-such-file.parquet") is None


def test_lookups_touch_only_the_hashed_file_group(states: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    state = states[-1]
    mdt = MetadataTableReader(str(state))
    slices = mdt.file_slices(MetadataPartition.RECORD_INDEX)
    assert len(slices) > 1
    asked: list[tuple[str, list[str] | None]] = []
    original = reader_module._Slice.records

    def spy(self: Any, keys: Any) -> Any:
        asked.append((self.file_slice.file_id, None if keys is None else list(keys)))
        return original(self, keys)

    monkeypatch.setattr(reader_module._Slice, "records", spy)
    mdt.record_locations(["1", "3"])
    assert {fid for fid, _ in asked} <= {s.file_id for s in slices}
    assert all(keys is not None and len(keys) <= 2 for _, keys in asked)  # point lookups, never a full scan
    assert sum(len(keys or []) for _, keys in asked) == 2


def test_tables_without_a_metadata_table_are_refused(tmp_path: Path) -> None:
    base = _unzip("sample_table/cow/v6_nonpartitioned", tmp_path)
    with pytest.raises(MetadataTableError, match="no metadata table"):
        MetadataTableReader(str(base))


def test_unbuilt_partition_is_refused(states: list[Path]) -> None:
    table = Table.load(str(states[-1]))
    assert set(MetadataTableReader(table).available_partitions) == {p.value for p in MetadataPartition}
    table.config = HoodieConfig({**table.config.as_dict(), "hoodie.table.metadata.partitions": "files"})
    mdt = MetadataTableReader(table)
    assert mdt.available_partitions == ["files"] and mdt.all_partition_paths()
    with pytest.raises(MetadataTableError, match="record_index"):
        mdt.record_locations(["1"])


def test_every_stored_record_decodes_and_reencodes_byte_for_byte(states: list[Path]) -> None:
    """Every cell of every MDT base file and HFile log block (any instant, any state) decodes, and our encoder
    writes the same bytes Hudi wrote (base files: under the meta-field schema with their own name)."""
    base = states[-1]
    storage = Table.load(str(base)).storage
    counts = {"base": 0, "log": 0}
    for path in sorted((base / ".hoodie" / "metadata").rglob("*")):
        if path.suffix == ".crc" or ".hoodie" in path.relative_to(base / ".hoodie" / "metadata").parts:
            continue
        if path.suffix == ".hfile":
            opened = BaseFileRecords(storage, str(path))
            assert opened.schema_json == writer_schema_json()
            for key, value in opened.hfile.scan():
                record = decode_datum(value, opened.schema_json, key=str(key))
                assert encode_datum(record, base_file_name=path.name) == value, (path.name, key)
                counts["base"] += 1
        elif ".log." in path.name:
            for block in read_log_blocks(storage, str(path)):
                if isinstance(block, HFileDataBlock):
                    assert block.schema_json == writer_schema_json()
                    for key, value in block.cells():
                        assert encode_datum(decode_datum(value, block.schema_json, key=key)) == value, \
                            (path.name, key)
                        counts["log"] += 1
    assert counts["base"] and counts["log"], counts


def test_builders_make_the_records_hudi_wrote(states: list[Path]) -> None:
    """What the writer side will build (engine.metadata.builders) equals what Hudi stored: the partition list,
    the bloom filter and column stats entries of every latest base file, the record index entry of every key."""
    state = states[-1]
    table = Table.load(str(state))
    mdt = MetadataTableReader(table)
    view = FileSystemView(table)
    partitions = mdt.all_partition_paths()
    stored_list = mdt.read_records(MetadataPartition.FILES, ["__all_partitions__"])["__all_partitions__"]
    assert partition_list_record(partitions) == stored_list
    compared, modes = 0, set()
    for partition in partitions:
        for base in view.latest_base_files(partition):
            bloom = bloom_filter_record(partition, base.name, base.commit_time, read_bloom_filter(table.storage,
                                                                                                 base.path))
            assert mdt.read_records(MetadataPartition.BLOOM_FILTERS, [bloom.key]) == {bloom.key: bloom}
            data = pq.read_table(base.path)
            meta = pq.ParquetFile(base.path).metadata
            for index, field in enumerate(data.schema):
                chunks = [meta.row_group(g).column(index) for g in range(meta.num_row_groups)]
                extremes = pc.min_max(data.column(field.name)).as_py()
                built = [column_stats_record(
                    partition, base.name, field.name, field.type, extremes["min"], extremes["max"],
                    value_count=data.num_rows, null_count=data.column(field.name).null_count,
                    total_size=sum(c.total_compressed_size for c in chunks),
                    total_uncompressed_size=sum(c.total_uncompressed_size for c in chunks), as_committed=committed)
                    for committed in (True, False)]
                stored = mdt.read_records(MetadataPartition.COLUMN_STATS, [built[0].key]).get(built[0].key)
                if stored is None:
                    continue  # not indexed (see the column stats test)
                assert stored in built, (base.name, field.name)
                modes.add(built.index(stored))
                compared += 1
    assert compared and 0 in modes  # later commits' re-wrapped values (the initialization's may be gone)
    locations = mdt.record_locations([str(k) for k in range(20)])
    for key, where in locations.items():
        entry = record_index_record(key, where.partition, where.file_id, where.instant, utc=True)
        assert mdt.read_records(MetadataPartition.RECORD_INDEX, [key]) == {key: entry}
    assert locations


def test_valid_instants(states: list[Path]) -> None:
    """getValidInstantTimestamps on the fixtures: every completed data instant, the instants completed data
    rollbacks undid, the MDT's own operations (compaction/clean/rollback suffixes, initialization)."""
    table = Table.load(str(states[-1]))
    mdt = Table.load(str(states[-1] / ".hoodie" / "metadata"))
    valid = valid_instant_timestamps(table.timeline, mdt.timeline)
    assert {i.timestamp for i in table.timeline.completed()} <= valid
    rollbacks = [i for i in table.timeline.completed() if i.action == "rollback"]
    assert rollbacks
    for rollback in rollbacks:
        undone = rolled_back_instants(table.timeline, rollback)
        assert undone and set(undone) <= valid and not set(undone) & {i.timestamp for i in table.timeline.completed()}
    initial = [i.timestamp for i in mdt.timeline.completed()
               if i.timestamp.startswith("00000000000000") and i.action == DELTA_COMMIT]
    assert initial and set(initial) <= valid
    for instant in mdt.timeline.completed():
        if instant.action == "deltacommit" and len(instant.timestamp) == 20:
            assert is_valid_metadata_instant(instant) == (instant.timestamp[-3:] in
                                                          {"001", "002", "003", "004", "005", "006"}
                                                          or instant.timestamp[-3:] >= "010")
    assert not is_valid_metadata_instant(Instant("20240101000000000007", DELTA_COMMIT, State.COMPLETED))
    assert is_valid_metadata_instant(Instant("20240101000000000011", DELTA_COMMIT, State.COMPLETED))
    assert not is_valid_metadata_instant(Instant("20240101000000000001", COMMIT, State.COMPLETED))
    assert not is_valid_metadata_instant(Instant("20240101000000000", DELTA_COMMIT, State.COMPLETED))
