"""Differences of the last oracle run, grouped: ``python -m tests.hudi_oracle.summary [run log]``.

Reads the run log the tests append to (``$SQLEXT_ORACLE_HOME/last-run.jsonl``) and prints the scripts run, their
statements and times, then every difference grouped by its known reason (or ``NEW``) and kind."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from tests.hudi_oracle import setup


def main(argv: list[str]) -> int:
    """Print the summary of the run log ``argv[0]`` (default: the last run's)."""
    log = Path(argv[0]) if argv else setup.home() / "last-run.jsonl"
    scripts = statements = 0
    hudi_s = ours_s = 0.0
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if "script" not in entry:
            sys.stdout.write(f"{entry}\n")
            continue
        scripts += 1
        statements += entry["statements"]
        hudi_s += entry["hudi_s"]
        ours_s += entry["ours_s"]
        for diff in entry["differences"]:
            groups[(diff.get("known") or "NEW", diff["kind"])].append(diff)
    sys.stdout.write(f"{scripts} scripts, {statements} statements; statement time: Hudi {hudi_s:.0f} s, "
                     f"sqlext {ours_s:.0f} s; {sum(map(len, groups.values()))} differences\n")
    for (why, kind), diffs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "NEW", kv[0])):
        sys.stdout.write(f"\n[{kind}] {len(diffs)}x {why}\n")
        for d in diffs[:6]:
            sys.stdout.write(f"  {d['key']}: {d['statement'][:160]}\n    hudi:   {d['hudi'][:240]}\n"
                             f"    sqlext: {d['ours'][:240]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
