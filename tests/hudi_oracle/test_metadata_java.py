"""Our metadata table reader against Apache Hudi 0.15.0's own (``HoodieBackedTableMetadata`` behind the
``show_metadata_table_partitions`` / ``show_metadata_table_files`` procedures) on the metadata fixtures
(``tests/fixtures/hudi-written/metadata``): the same partitions and the same files per partition. Needs the
oracle's set-up (skipped with its reason otherwise)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from engine.metadata.reader import MetadataTableReader
from tests.conftest import HUDI_FIXTURES
from tests.hudi_oracle.oracle import HudiRunner

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.integration]

FIXTURES = sorted(str(p.relative_to(HUDI_FIXTURES).with_suffix("")) for p in HUDI_FIXTURES.glob("metadata/**/*.zip"))


@pytest.mark.parametrize("name", FIXTURES)
def test_hudi_reads_the_same_partitions_and_files(hudi: HudiRunner, name: str, tmp_path: Path) -> None:
    with zipfile.ZipFile(HUDI_FIXTURES / f"{name}.zip") as archive:
        archive.extractall(tmp_path)
    base = tmp_path / Path(name).name
    ours = MetadataTableReader(str(base))  # before Hudi's session touches the copy
    partitions = ours.all_partition_paths()
    files = {p: sorted(ours.files_in_partition(p)) for p in partitions}
    table = f"mdt_{abs(hash(str(tmp_path)))}"
    for statement in ("SET hoodie.metadata.enable=true", f"CREATE TABLE {table} USING hudi LOCATION '{base}'"):
        answer = hudi.sql(statement)
        assert answer.ok, answer.message
    answer = hudi.sql(f"CALL show_metadata_table_partitions(table => '{table}')")
    assert answer.ok, answer.message
    assert sorted(str(r[0]) for r in answer.rows) == partitions
    for partition in partitions:
        answer = hudi.sql(f"CALL show_metadata_table_files(table => '{table}', partition => '{partition}')")
        assert answer.ok, answer.message
        assert sorted(str(r[0]).rsplit("/", 1)[-1] for r in answer.rows) == files[partition], partition
