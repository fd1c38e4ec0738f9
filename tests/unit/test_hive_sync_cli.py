"""``sqlext hive-sync`` command line (hive_sync.cli) without a metastore: help text and the options it makes."""

from __future__ import annotations

import re

import pytest

from hive_sync.cli import _BOOL_FLAGS, build_parser, main, sync_options


def test_every_switch_has_its_no_form_in_the_help(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A switch shown as "(default: true)" could not be turned off: each has a --no- form now."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["hive-sync", "--help"], prog="sqlext") == 0
    text = capsys.readouterr().out
    for flag, prop in _BOOL_FLAGS.items():
        no_flag = "--no-" + flag[2:]
        assert re.search(rf"^\s+{flag}, {no_flag}$", text, re.MULTILINE), flag
        assert f"sets {prop.key}=true ({no_flag}: false)" in text
    line = next(line for line in text.splitlines() if "auto_create_database=true" in line)
    assert "(--no-auto-create-database: false)" in line


def test_switches_set_true_or_false_and_unset_ones_stay_unset() -> None:
    parser = build_parser("sqlext")
    args = parser.parse_args(["hive-sync", "--base-path", "/t", "--support-timestamp",
                              "--no-auto-create-database", "--database", "d"])
    opts = sync_options(args)
    assert opts["hoodie.datasource.hive_sync.support_timestamp"] == "true"
    assert opts["hoodie.datasource.hive_sync.auto_create_database"] == "false"
    assert opts["hoodie.datasource.hive_sync.database"] == "d"
    assert "hoodie.datasource.hive_sync.skip_ro_suffix" not in opts  # the table's / Hudi's default applies
    assert opts["hoodie.datasource.hive_sync.mode"] == "hms"
