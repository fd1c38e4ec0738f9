"""Known differences between Apache Hudi 0.15.0 (the oracle) and sqlext, each with its reason.

A difference the oracle finds that is not explained here fails its test; an ``EXACT`` entry that no longer
occurs fails too (the difference was fixed: delete its line). ``PATTERNS`` cover whole classes of statements
(and the seeded random scripts, whose statement numbers change with the generator): a pattern explains a
difference whose kind, statement and both sides' answers match its regular expressions.

Keys: ``<script>#<statement index>:<kind>`` for a statement, ``<script>:final:<table>:<reader>`` for a final
read (see :mod:`tests.hudi_oracle.compare`). Kinds: ``rows``, ``columns``, ``only_hudi_fails``,
``only_sqlext_fails``, ``error_phrase``, ``call_result``, ``read_fails``, ``final_rows``, ``final_columns``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.hudi_oracle.compare import Difference


@dataclass(frozen=True)
class Known:
    """A class of differences: regular expressions on the kind, the statement, Hudi's and sqlext's answer."""

    kind: str
    statement: str
    reason: str
    hudi: str = ""
    ours: str = ""

    def explains(self, diff: Difference) -> bool:
        """Whether ``diff`` belongs to this class."""
        return bool(re.search(self.kind, diff.kind) and re.search(self.statement, diff.statement, re.I | re.S)
                    and re.search(self.hudi, diff.hudi, re.S) and re.search(self.ours, diff.ours, re.S))


_DML = r"^\s*(insert|merge|update|delete|create\s+table\s.*\sas\s+select)\b"

PATTERNS: list[Known] = [
    # Deliberate (README, "Session.sql"): sqlext's DML answers one row of counts, as Spark 4's Delta and
    # Databricks do; Hudi 0.15 on Spark 3.5 answers no rows.
    Known("columns", _DML, "DML returns num_affected_rows, ... (README: Session.sql)",
          hudi=r"^\[\] \[\]$", ours=r"^\['num_affected_rows', 'num_updated_rows', 'num_deleted_rows', "
                                   r"'num_inserted_rows'\]"),
]
"""Differences explained by class."""

_RECORD_KEY_UPDATE = ("sqlext refuses an UPDATE assigning the record key (Hudi 1.0's 'Detected disallowed assignment "
                      "clause'); Hudi 0.15 accepts it and writes id = 2 under record key '1', a row whose key "
                      "column and _hoodie_record_key disagree")
EXACT: dict[str, str] = {
    "update_record_key#2:only_sqlext_fails": _RECORD_KEY_UPDATE,
}
"""Single corpus differences: key -> reason."""


def reason(diff: Difference) -> str | None:
    """Why ``diff`` is expected, or None when it is new."""
    if diff.key in EXACT:
        return EXACT[diff.key]
    for known in PATTERNS:
        if known.explains(diff):
            return known.reason
    return None


def listed_for(script: str) -> set[str]:
    """The EXACT keys of one script."""
    return {k for k in EXACT if k.startswith(f"{script}#") or k.startswith(f"{script}:")}
