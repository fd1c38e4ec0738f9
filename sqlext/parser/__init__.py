"""SQL parsing for ``sqlext``: statement splitting, statement parsing, time-travel rewriting.

Public API::

    split_statements(text) -> list[StatementText]     # script -> statements with positions
    is_complete(buffer) -> bool                        # interactive prompt: ends with ';'
    parse_statement(text) -> Statement                 # one statement -> dataclass (statements.py)
    time_travel_rewrite(sql) -> str | None             # TIMESTAMP AS OF -> WITH ('as.of.instant'=..)

Errors: :class:`sqlext.errors.SqlParseError` (line/column), :class:`UnsupportedStatement`,
:class:`SqlAnalysisError` (``VERSION AS OF``).
"""

from sqlext.parser.parse import parse_statement
from sqlext.parser.split import StatementText, is_complete, split_statements
from sqlext.parser.statements import (
    AddColumns,
    AlterColumn,
    AlterTable,
    Assignment,
    Call,
    CallArg,
    ChangeColumn,
    ColumnDef,
    Compaction,
    CompactionKind,
    CreateTable,
    DeleteFrom,
    DropColumns,
    DropPartitions,
    DropTable,
    InsertInto,
    MergeClause,
    MergeInto,
    PartitionSpec,
    Passthrough,
    RenameColumn,
    RenameTable,
    SetLocation,
    SetProperties,
    ShowCreateTable,
    ShowPartitions,
    Statement,
    TableIdent,
    TruncateTable,
    UnsetProperties,
    UpdateTable,
    WhenMatchedDelete,
    WhenMatchedUpdate,
    WhenNotMatchedBySourceDelete,
    WhenNotMatchedBySourceUpdate,
    WhenNotMatchedInsert,
    quote_ident,
)
from sqlext.parser.time_travel import time_travel_rewrite

__all__ = [
    "WhenNotMatchedBySourceUpdate",
    "WhenNotMatchedBySourceDelete",
    "SetLocation",
    "RenameColumn",
    "DropColumns",
    "ChangeColumn",
    "AlterColumn",
    "AddColumns",
    "AlterTable",
    "Assignment",
    "Call",
    "CallArg",
    "ColumnDef",
    "Compaction",
    "CompactionKind",
    "CreateTable",
    "DeleteFrom",
    "DropPartitions",
    "DropTable",
    "InsertInto",
    "MergeClause",
    "MergeInto",
    "PartitionSpec",
    "Passthrough",
    "RenameTable",
    "SetProperties",
    "ShowCreateTable",
    "ShowPartitions",
    "Statement",
    "StatementText",
    "TableIdent",
    "TruncateTable",
    "UnsetProperties",
    "UpdateTable",
    "WhenMatchedDelete",
    "WhenMatchedUpdate",
    "WhenNotMatchedInsert",
    "is_complete",
    "parse_statement",
    "quote_ident",
    "split_statements",
    "time_travel_rewrite",
]
