"""Clustering planning and row layout without Spark: Hudi's size-based grouping, partition filter modes and the
space-filling curves' order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError
from engine.filegroup.slices import BaseFile, FileSlice, LogFile
from engine.services.clustering import (
    build_groups,
    check_clustering_config,
    filter_partitions,
    group_metrics,
    refuse_bucket_clustering,
)
from engine.services.layout import _hilbert_transpose, _interleave, curve_key, layout_strategy, normalise

MB = 2**20


def slice_of(file_id: str, size: int | None, logs: int = 0, partition: str = "p") -> FileSlice:
    base = BaseFile(f"/t/{partition}/{file_id}_0-1-0_001.parquet", f"{file_id}_0-1-0_001.parquet", file_id, "001",
                    size) if size is not None else None
    log_files = tuple(LogFile(f"/t/{partition}/.{file_id}_001.log.{v}_0-1-0", f".{file_id}_001.log.{v}_0-1-0",
                              file_id, "001", v, "0-1-0", 1000) for v in range(1, logs + 1))
    return FileSlice(partition, file_id, "001", base, log_files)


def conf(**props: str) -> HoodieConfig:
    return HoodieConfig({f"hoodie.clustering.plan.strategy.{k.replace('_', '.')}": v for k, v in props.items()})


def test_groups_are_cut_by_max_bytes_largest_first() -> None:
    slices = [slice_of("a", 10 * MB), slice_of("b", 40 * MB), slice_of("c", 30 * MB), slice_of("d", 20 * MB)]
    groups = build_groups(slices, conf(**{"max.bytes.per.group": str(50 * MB),
                                          "target.file.max.bytes": str(25 * MB)}))
    # Sorted by size: b(40) | c(30)+d(20) | a(10); each cut when the next slice would pass 50 MB.
    assert [[s.file_id for s in g.slices] for g in groups] == [["b"], ["c", "d"], ["a"]]
    assert [g.num_output_file_groups for g in groups] == [2, 2, 1]
    assert groups[1].metrics["TOTAL_IO_READ_MB"] == 50.0


def test_single_slice_last_group_and_max_groups() -> None:
    slices = [slice_of("a", 10 * MB), slice_of("b", 40 * MB)]
    no_single = conf(**{"max.bytes.per.group": str(45 * MB), "single.group.clustering.enabled": "false"})
    # The first group (b) is closed by size; the last group (a, one slice) is dropped without sort columns.
    assert [[s.file_id for s in g.slices] for g in build_groups(slices, no_single)] == [["b"]]
    with_sort = HoodieConfig({**no_single, "hoodie.clustering.plan.strategy.sort.columns": "x"})
    assert len(build_groups(slices, with_sort)) == 2
    many = [slice_of(str(i), 10 * MB) for i in range(10)]
    capped = conf(**{"max.bytes.per.group": str(10 * MB), "max.num.groups": "3"})
    assert len(build_groups(many, capped)) == 3


def test_log_only_slices_count_as_max_file_size_and_metrics() -> None:
    metrics = group_metrics([slice_of("a", None, logs=2), slice_of("b", 3 * MB, logs=1)], 120 * MB)
    assert metrics == {"TOTAL_IO_READ_MB": 3.0, "TOTAL_IO_WRITE_MB": 123.0, "TOTAL_IO_MB": 126.0,
                       "TOTAL_LOG_FILES_SIZE": 3000.0, "TOTAL_LOG_FILES": 3.0}


def test_partition_filter_modes() -> None:
    parts = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "x"]
    assert filter_partitions(parts, HoodieConfig({})) == parts
    recent = HoodieConfig({"hoodie.clustering.plan.partition.filter.mode": "RECENT_DAYS",
                           "hoodie.clustering.plan.strategy.daybased.lookback.partitions": "2",
                           "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": "1"})
    assert filter_partitions(parts, recent) == ["2024-01-04", "2024-01-03"]
    selected = HoodieConfig({"hoodie.clustering.plan.partition.filter.mode": "SELECTED_PARTITIONS",
                             "hoodie.clustering.plan.strategy.cluster.begin.partition": "2024-01-02",
                             "hoodie.clustering.plan.strategy.cluster.end.partition": "2024-01-03"})
    assert filter_partitions(parts, selected) == ["2024-01-02", "2024-01-03"]
    rolling = HoodieConfig({"hoodie.clustering.plan.partition.filter.mode": "DAY_ROLLING"})
    assert filter_partitions(parts, rolling, hour=1) == ["2024-01-02"]
    regex = HoodieConfig({"hoodie.clustering.plan.strategy.partition.regex.pattern": "2024-01-0[12]"})
    assert filter_partitions(parts, regex) == ["2024-01-01", "2024-01-02"]
    chosen = HoodieConfig({"hoodie.clustering.plan.strategy.partition.selected": "x,2024-01-01"})
    assert filter_partitions(parts, chosen) == ["x", "2024-01-01"]
    with pytest.raises(ConfigError, match="unknown partition filter mode 'WEEKLY'"):
        filter_partitions(parts, HoodieConfig({"hoodie.clustering.plan.partition.filter.mode": "weekly"}))


def test_unsupported_settings_are_refused() -> None:
    check_clustering_config(HoodieConfig({}), "t")
    with pytest.raises(ConfigError, match="only SparkRejectUpdateStrategy"):
        check_clustering_config(HoodieConfig({"hoodie.clustering.updates.strategy":
                                              "org.apache.hudi.client.clustering.update.strategy."
                                              "SparkAllowUpdateStrategy"}), "t")
    with pytest.raises(ConfigError, match="unknown layout optimization strategy"):
        check_clustering_config(HoodieConfig({"hoodie.layout.optimize.strategy": "spiral"}), "t")
    assert layout_strategy("ZORDER") == "z-order"
    check_clustering_config(HoodieConfig({"hoodie.index.type": "bucket"}), "t")  # writes to bucket tables check too
    with pytest.raises(ConfigError, match="Clustering is not supported for bucket index"):
        refuse_bucket_clustering(HoodieConfig({"hoodie.index.type": "bucket"}), "t")


def test_normalised_values_keep_column_order() -> None:
    ints = pa.array([5, -3, None, 0, 2**40], pa.int64())
    floats = pa.array([1.5, -2.25, -0.0, None, 1e300])
    strings = pa.array(["b", "abcdefghij", "", None, "abcdefgh"])
    for column in (ints, floats, strings):
        keys = normalise(column)
        values = column.to_pylist()
        present = [i for i, v in enumerate(values) if v is not None]
        by_value = sorted(present, key=lambda i: values[i])
        assert [keys[i] for i in by_value] == sorted(keys[i] for i in present)
        assert all(keys[i] == np.uint64(2**64 - 1) for i, v in enumerate(values) if v is None)


def test_hilbert_curve_steps_to_a_neighbour() -> None:
    xs, ys = (a.ravel().astype(np.uint64) for a in np.meshgrid(np.arange(32), np.arange(32)))
    index = _interleave(_hilbert_transpose([xs, ys], 5), 5)[:, 0] >> np.uint64(64 - 10)
    assert sorted(index.tolist()) == list(range(1024))
    order = np.argsort(index)
    steps = np.abs(np.diff(xs[order].astype(int))) + np.abs(np.diff(ys[order].astype(int)))
    assert steps.max() == 1


def test_curve_keys_sort_like_the_curve() -> None:
    table = pa.table({"x": pa.array([0, 1, 0, 1], pa.int32()), "y": pa.array([0, 0, 1, 1], pa.int32())})
    z = curve_key(table, ["x", "y"], "z-order").to_pylist()
    assert sorted(range(4), key=lambda i: z[i]) == [0, 2, 1, 3]  # x bit first, then y: (0,0) (0,1) (1,0) (1,1)
    h = curve_key(table, ["x", "y"], "hilbert").to_pylist()
    assert len(set(h)) == 4 and all(len(k) == 16 for k in h)
