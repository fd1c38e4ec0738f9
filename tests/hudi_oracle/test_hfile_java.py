"""HFiles our writer produced, read by Apache Hudi 0.15.0's own Java readers: HBase 2.4.9 as shaded in the Hudi
Spark bundle (what Hudi 0.14/0.15 read the metadata table with through ``HoodieAvroHFileReader``) and Hudi's native
``HFileReaderImpl``. ``HFileCheck.java`` (beside this file) is compiled against the bundle and pyspark 3.5's
Hadoop jars from the oracle's set-up; skipped, with the reason, where that set-up or a JDK is missing."""

from __future__ import annotations

import random
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from engine.formats.hfile_reader import HFileReader
from engine.formats.hfile_writer import HFileWriter
from tests.hudi_oracle import setup

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.integration]

SOURCE = Path(__file__).with_name("HFileCheck.java")


@pytest.fixture(scope="module")
def java_check(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The ``java`` command line that runs ``HFileCheck`` (compiled here)."""
    status = setup.read_status()
    if not status.get("ok"):
        pytest.skip(str(status.get("reason")))
    if not shutil.which("javac") or not shutil.which("java"):
        pytest.skip("no JDK (javac, java) on this machine")
    jars = subprocess.run([str(setup.venv_python()), "-c",
                           "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))"],
                          capture_output=True, text=True)
    if jars.returncode != 0:
        pytest.skip(f"the oracle's pyspark jars cannot be found: {jars.stderr.strip()[-300:]}")
    classpath = f"{setup.jar_path()}:{jars.stdout.strip()}/*"
    out = tmp_path_factory.mktemp("hfile_java")
    made = subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(SOURCE)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    return ["java", "-cp", f"{classpath}:{out}", "HFileCheck"]


def _write(path: Path, n: int, block_size: int, max_index_chunk: int = 128 * 1024) -> dict[str, bytes]:
    rnd = random.Random(n)
    w = HFileWriter(compression="GZ", name=str(path), block_size=block_size, max_index_chunk=max_index_chunk)
    w.set_file_info("schema", b'{"type":"record","name":"r","fields":[]}')
    w.add_meta_block("bloomFilter", b"bloom" * 100)
    cells = {}
    for i in range(n):
        key = f"rk-{i:08d}-{'x' * (i % 7)}"
        cells[key] = rnd.randbytes(rnd.randrange(0, 80))
        w.add(key, cells[key])
    path.write_bytes(w.finish())
    return cells


def _run(cmd: list[str], path: Path, mode: str, keys: list[str]) -> dict[str, str]:
    done = subprocess.run(cmd + [str(path), mode] + keys, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {}
    for line in done.stdout.splitlines():  # "hbase.entries=N", "hbase.scanned=N crc=X", "hbase.get KEY X|MISSING"
        if ".get " in line:
            name, key, value = line.split(" ")
            out[f"{name} {key}"] = value
        elif "=" in line:
            name, _, rest = line.partition("=")
            out[name] = rest.split(" ")[0]
            if " crc=" in rest:
                out[name + ".crc"] = rest.split(" crc=")[1]
    return out


def _expect(cells: dict[str, bytes], keys: list[str]) -> tuple[str, dict[str, str]]:
    crc = 0
    for key, value in cells.items():
        crc = zlib.crc32(value, zlib.crc32(key.encode(), crc))
    gets = {k: (f"{zlib.crc32(cells[k]):x}" if k in cells else "MISSING") for k in keys}
    return f"{crc:x}", gets


def test_hbase_and_hudi_read_our_gz_multi_block_file(java_check: list[str], tmp_path: Path) -> None:
    path = tmp_path / "ours.hfile"
    cells = _write(path, 50000, 4096)
    assert HFileReader(path.read_bytes()).trailer.data_index_count > 100
    keys = ["rk-00000000-", "rk-00012345-xxxx", "rk-00049999-xxxxx", "rk-00025000-xxxxxx", "rk-00000001",
            "aaa", "zzz"]
    crc, gets = _expect(cells, keys)
    out = _run(java_check, path, "both", keys)
    for reader in ("hbase", "hudi"):
        assert out[f"{reader}.entries"] == out[f"{reader}.scanned"] == "50000"
        assert out[f"{reader}.scanned.crc"] == crc, reader
        assert {k: out[f"{reader}.get {k}"] for k in keys} == gets
    assert out["hbase.bloomFilter.bytes"] == "500"


def test_hbase_reads_our_multi_level_index(java_check: list[str], tmp_path: Path) -> None:
    """A 3-level data index (leaf blocks between the data blocks, intermediate blocks before the root) with
    HBase's mid-key metadata: HBase's reader checks it. (Hudi 0.15's native reader reads single-level indexes
    only; with Hudi's 1 MB blocks and 128 KB index chunks a file needs about 2,000 data blocks for two levels.)"""
    path = tmp_path / "deep.hfile"
    cells = _write(path, 100000, 1024, max_index_chunk=1024)
    assert HFileReader(path.read_bytes()).index_levels == 3
    keys = ["rk-00000000-", "rk-00077777-", "rk-00099999-x", "rk-00050000-x", "rk-00099999-xx"]
    crc, gets = _expect(cells, keys)
    out = _run(java_check, path, "hbase", keys)
    assert out["hbase.entries"] == out["hbase.scanned"] == "100000"
    assert out["hbase.scanned.crc"] == crc
    assert {k: out[f"hbase.get {k}"] for k in keys} == gets
