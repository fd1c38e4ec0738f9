"""SQL parsing for ``sqlext``: statement splitting and statement parsing on sqlglot's Spark dialect.

Public API::

    split_statements(text) -> list[StatementText]     # script -> statements with positions
    is_complete(buffer) -> bool                        # interactive prompt: ends with ';'
    parse_statement(text) -> Statement                 # one statement -> dataclass (statements.py)

The grammar is :class:`sqlext.parser.dialect.HudiSpark`, sqlglot's Spark dialect with Hudi's statements added.
Errors: :class:`sqlext.errors.SqlParseError` (line/column), :class:`UnsupportedStatement`.
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

__all__ = [
    "AddColumns",
    "AlterColumn",
    "AlterTable",
    "Assignment",
    "Call",
    "CallArg",
    "ChangeColumn",
    "ColumnDef",
    "Compaction",
    "CompactionKind",
    "CreateTable",
    "DeleteFrom",
    "DropColumns",
    "DropPartitions",
    "DropTable",
    "InsertInto",
    "MergeClause",
    "MergeInto",
    "PartitionSpec",
    "Passthrough",
    "RenameColumn",
    "RenameTable",
    "SetLocation",
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
    "WhenNotMatchedBySourceDelete",
    "WhenNotMatchedBySourceUpdate",
    "WhenNotMatchedInsert",
    "is_complete",
    "parse_statement",
    "quote_ident",
    "split_statements",
]
