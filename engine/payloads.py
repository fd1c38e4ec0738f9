"""Record payload classes (``hoodie.datasource.write.payload.class`` / ``hoodie.compaction.payload.class``) and
how each combines two versions of a record, as Hudi 0.14/0.15 implement them.

Hudi merges with two methods of the payload class:

* ``preCombine`` picks one record among versions of a key *within* a batch (the write's de-duplication) and
  among log records (``HoodieMergedLogRecordScanner``);
* ``combineAndGetUpdateValue`` merges an incoming (or log) record with the stored one (COW merge handle,
  base file + log on read and compaction).

The payloads this engine implements, by their rules (:class:`PayloadRules`):

==========================================  ===========================  ==================================
class (``org.apache.hudi.common.model.``)   preCombine                   against the stored record
==========================================  ===========================  ==================================
``OverwriteWithLatestAvroPayload``          greater ordering; tie: later the incoming record
``DefaultHoodieRecordPayload``              greater ordering; tie: later the stored one if its ordering is greater
``EventTimeAvroPayload``                    greater ordering; tie: later as DefaultHoodieRecordPayload
``FirstValueAvroPayload``                   greater ordering; tie: first the stored one unless the incoming one's
                                                                         ordering is greater (a tie keeps it)
``AWSDmsAvroPayload``                       greater ordering; tie: later the incoming record; ``Op = 'D'`` deletes
``OverwriteNonDefaultsWith...Payload``      greater ordering; tie: later the incoming record, its null columns
                                                                         taken from the stored one
==========================================  ===========================  ==================================

``PartialUpdateAvroPayload`` (column-wise in preCombine too, and symmetric by ordering value) and any other
class are refused by :func:`check_payload_class` when a table is created or written, naming the class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, TableConfig, WriteConfig
from engine.errors import ConfigError

PACKAGE = "org.apache.hudi.common.model."
OVERWRITE_WITH_LATEST = PACKAGE + "OverwriteWithLatestAvroPayload"
DEFAULT = PACKAGE + "DefaultHoodieRecordPayload"
EVENT_TIME = PACKAGE + "EventTimeAvroPayload"
FIRST_VALUE = PACKAGE + "FirstValueAvroPayload"
AWS_DMS = PACKAGE + "AWSDmsAvroPayload"
OVERWRITE_NON_DEFAULTS = PACKAGE + "OverwriteNonDefaultsWithLatestAvroPayload"
PARTIAL_UPDATE = PACKAGE + "PartialUpdateAvroPayload"
EXPRESSION = "org.apache.spark.sql.hudi.command.payload.ExpressionPayload"
"""The payload Hudi's MERGE INTO writes with (the merged row is computed by the command)."""

AWS_DMS_OP_FIELD = "Op"
"""``AWSDmsAvroPayload.OP_FIELD``: a record whose ``Op`` is ``D`` is a delete."""


@dataclass(frozen=True)
class PayloadRules:
    """How a payload class combines record versions.

    Attributes:
        name: the class name.
        event_time: against the stored record, a stored record whose ordering value is greater is kept
            (``DefaultHoodieRecordPayload.needUpdatingPersistedRecord``).
        first_on_ties: of versions with equal ordering values the first (older) one is kept, in ``preCombine``
            and against the stored record (``FirstValueAvroPayload.needUpdatingPersistedRecord``); else the later
            one.
        delete_op_field: a column whose value ``D`` marks the record as a delete (``AWSDmsAvroPayload``), or None.
        fill_nulls_from_stored: against the stored record, a null column of the incoming record keeps the stored
            value (``OverwriteNonDefaultsWithLatestAvroPayload.combineAndGetUpdateValue``; ``preCombine`` is
            ``OverwriteWithLatestAvroPayload``'s, without filling).
    """

    name: str
    event_time: bool = False
    first_on_ties: bool = False
    delete_op_field: str | None = None
    fill_nulls_from_stored: bool = False


SUPPORTED: dict[str, PayloadRules] = {
    OVERWRITE_WITH_LATEST: PayloadRules(OVERWRITE_WITH_LATEST),
    DEFAULT: PayloadRules(DEFAULT, event_time=True),
    EVENT_TIME: PayloadRules(EVENT_TIME, event_time=True),
    FIRST_VALUE: PayloadRules(FIRST_VALUE, event_time=True, first_on_ties=True),
    AWS_DMS: PayloadRules(AWS_DMS, delete_op_field=AWS_DMS_OP_FIELD),
    OVERWRITE_NON_DEFAULTS: PayloadRules(OVERWRITE_NON_DEFAULTS, fill_nulls_from_stored=True),
    EXPRESSION: PayloadRules(EXPRESSION, event_time=True),
}
"""Payload classes whose merge this engine implements, by name."""

REFUSED_REASONS = {
    PARTIAL_UPDATE: "it merges column by column in preCombine too, the version with the greater ordering value "
                    "filled from the other",
}


def payload_rules(name: str | None) -> PayloadRules:
    """The rules of payload class ``name`` (``None`` or empty: ``OverwriteWithLatestAvroPayload``, Hudi's default).

    Raises:
        ConfigError: a class this engine does not implement (see :func:`check_payload_class`).
    """
    cls = (name or "").strip() or OVERWRITE_WITH_LATEST
    rules = SUPPORTED.get(cls)
    if rules is None:
        raise ConfigError(_refusal(cls, "this table"))
    return rules


def configured_payload(conf: HoodieConfig) -> str:
    """The payload class of a write: ``hoodie.datasource.write.payload.class``, else the table's
    ``hoodie.compaction.payload.class``, else ``OverwriteWithLatestAvroPayload``."""
    return ((conf.raw(WriteConfig.PAYLOAD_CLASS) or conf.raw(TableConfig.PAYLOAD_CLASS) or "").strip()
            or OVERWRITE_WITH_LATEST)


def check_payload_class(name: str | None, where: str) -> None:
    """Refuse a payload class whose merge this engine does not implement, before anything is written.

    Raises:
        ConfigError: names the class, ``where`` (the table) and the supported classes.
    """
    cls = (name or "").strip()
    if cls and cls not in SUPPORTED:
        raise ConfigError(_refusal(cls, where))


def fill_nulls(incoming: pa.Table, stored: pa.Table, skip: Sequence[str] = ()) -> pa.Table:
    """``incoming`` with each null value replaced by the value of the same column in ``stored`` (row by row;
    both tables of one schema and length), columns in ``skip`` kept as they are
    (``OverwriteNonDefaultsWithLatestAvroPayload``: a null incoming field keeps the stored field's value).
    """
    columns = []
    for name in incoming.column_names:
        column = incoming.column(name)
        if name not in skip and column.null_count:
            column = pc.if_else(pc.is_null(column), stored.column(name), column)
        columns.append(column)
    return pa.table(columns, schema=incoming.schema)


def _refusal(cls: str, where: str) -> str:
    reason = REFUSED_REASONS.get(cls, "this engine does not implement its merge")
    supported = ", ".join(sorted(c.rsplit(".", 1)[-1] for c in SUPPORTED if c != EXPRESSION))
    return (f"payload class {cls} is not supported for {where}: {reason} (supported: {supported}); nothing was "
            "written")
