"""Procedure argument binding, payload rules, compaction strategies and layered settings, without a JVM."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine.config import CleanConfig, CompactionConfig, HoodieConfig
from engine.config_layers import overlay_settings
from engine.errors import ConfigError, TableServiceError
from engine.payloads import (
    AWS_DMS,
    DEFAULT,
    FIRST_VALUE,
    OVERWRITE_NON_DEFAULTS,
    PARTIAL_UPDATE,
    check_payload_class,
    configured_payload,
    fill_nulls,
    payload_rules,
)
from engine.services.compaction import CompactionOperation, select_operations
from engine.write.prepare import RECORD_KEY, dedupe_by_key
from sqlext.errors import ProcedureError
from sqlext.parser.statements import Call, CallArg
from sqlext.procedures.registry import Param, Procedure

STRATEGY = "org.apache.hudi.table.action.compact.strategy."


def _procedure() -> Procedure:
    return Procedure("create_savepoint", (
        Param("table", "string", required=True),
        Param("commit_time", "string", required=True),
        Param("comments", "string", "", aliases=("comment",)),
        Param("startTs", "string", ""),
    ), "ok boolean", lambda ctx, args: None)  # type: ignore[arg-type, return-value]


def test_bind_matches_names_of_both_releases() -> None:
    proc = _procedure()
    bound = proc.bind(Call(name="create_savepoint", args=(
        CallArg("TABLE", "t"), CallArg("commit_Time", "1"), CallArg("comment", "why"), CallArg("start_ts", "0"))))
    assert bound == {"table": "t", "commit_time": "1", "comments": "why", "startTs": "0"}
    with pytest.raises(ProcedureError, match="argument comments given twice"):
        proc.bind(Call(name="x", args=(CallArg("table", "t"), CallArg("commit_time", "1"), CallArg("comment", "a"),
                                       CallArg("comments", "b"))))


def test_bind_errors_in_hudis_words() -> None:
    proc = _procedure()
    with pytest.raises(ProcedureError, match="^Argument: commit_time is required"):
        proc.bind(Call(name="x", args=(CallArg("table", "t"),)))
    with pytest.raises(ProcedureError, match="^Argument: table is required"):  # a NULL required argument
        proc.bind(Call(name="x", args=(CallArg("table", None), CallArg("commit_time", "1"))))
    with pytest.raises(ProcedureError, match="has no parameter comit_time; did you mean commit_time"):
        proc.bind(Call(name="x", args=(CallArg("table", "t"), CallArg("comit_time", "1"))))


def test_payload_rules_of_each_class() -> None:
    assert payload_rules(None).event_time is False
    assert payload_rules(DEFAULT).event_time and not payload_rules(DEFAULT).first_on_ties
    assert payload_rules(FIRST_VALUE).event_time and payload_rules(FIRST_VALUE).first_on_ties
    assert payload_rules(AWS_DMS).delete_op_field == "Op" and not payload_rules(AWS_DMS).event_time
    assert payload_rules(OVERWRITE_NON_DEFAULTS).fill_nulls_from_stored
    with pytest.raises(ConfigError, match=f"payload class {PARTIAL_UPDATE} is not supported for t1"):
        check_payload_class(PARTIAL_UPDATE, "t1")
    with pytest.raises(ConfigError, match="payload class com.acme.MyPayload is not supported"):
        payload_rules("com.acme.MyPayload")
    conf = HoodieConfig({"hoodie.compaction.payload.class": DEFAULT})
    assert configured_payload(conf) == DEFAULT
    assert configured_payload(conf.overlay({"hoodie.datasource.write.payload.class": AWS_DMS})) == AWS_DMS


def test_fill_nulls_takes_stored_values_except_skipped_columns() -> None:
    incoming = pa.table({"_hoodie_commit_time": [None, "2"], "a": [None, 1], "b": ["x", None]})
    stored = pa.table({"_hoodie_commit_time": ["0", "0"], "a": [7, 8], "b": ["s", "t"]})
    filled = fill_nulls(incoming, stored, skip=("_hoodie_commit_time",))
    assert filled.to_pydict() == {"_hoodie_commit_time": [None, "2"], "a": [7, 1], "b": ["x", "t"]}


def test_dedupe_keeps_the_first_of_ties_for_first_value() -> None:
    records = pa.table({RECORD_KEY: ["k", "k", "k", "j"], "ts": [5, 5, 1, 2], "v": ["a", "b", "c", "d"]})
    assert sorted(dedupe_by_key(records, "ts").column("v").to_pylist()) == ["b", "d"]
    assert sorted(dedupe_by_key(records, "ts", first_on_ties=True).column("v").to_pylist()) == ["a", "d"]


def _op(file_id: str, logs: int, log_size: float, io_mb: float) -> CompactionOperation:
    return CompactionOperation("", file_id, "1", None, tuple(f"l{i}" for i in range(logs)),
                               {"TOTAL_LOG_FILES_SIZE": log_size, "TOTAL_IO_MB": io_mb})


def test_compaction_strategies_order_and_filter_as_hudi() -> None:
    ops = [_op("a", 1, 100.0, 10.0), _op("b", 3, 50.0, 10.0), _op("c", 2, 300.0, 10.0)]

    def chosen(**settings: str) -> list[str]:
        return [op.file_id for op in select_operations(ops, HoodieConfig(settings))]

    assert chosen() == ["c", "a", "b"]  # LogFileSizeBasedCompactionStrategy: largest logs first
    assert chosen(**{CompactionConfig.LOGFILE_SIZE_THRESHOLD.key: "100"}) == ["c", "a"]
    num = {CompactionConfig.STRATEGY.key: STRATEGY + "LogFileNumBasedCompactionStrategy"}
    assert chosen(**num) == ["b", "c", "a"]
    assert chosen(**num, **{CompactionConfig.LOGFILE_NUM_THRESHOLD.key: "2"}) == ["b", "c"]
    bounded = {CompactionConfig.STRATEGY.key: STRATEGY + "BoundedIOCompactionStrategy",
               CompactionConfig.TARGET_IO.key: "15"}
    assert chosen(**bounded) == ["a", "b"]  # the operation crossing the bound is taken
    assert chosen(**{CompactionConfig.STRATEGY.key: "UnBoundedCompactionStrategy"}) == ["a", "b", "c"]
    with pytest.raises(TableServiceError, match="DayBasedCompactionStrategy is not supported"):
        chosen(**{CompactionConfig.STRATEGY.key: STRATEGY + "DayBasedCompactionStrategy"})


def test_upper_layer_wins_whichever_spelling() -> None:
    table = HoodieConfig({"hoodie.cleaner.commits.retained": "1", "hoodie.clean.policy": "KEEP_LATEST_BY_HOURS"})
    assert table.get(CleanConfig.POLICY) == "KEEP_LATEST_BY_HOURS"
    merged = overlay_settings(table, {"hoodie.clean.commits.retained": "3"})
    assert merged.get(CleanConfig.COMMITS_RETAINED) == 3
    merged = overlay_settings(merged, {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS"})
    assert merged.get(CleanConfig.POLICY) == "KEEP_LATEST_COMMITS"
