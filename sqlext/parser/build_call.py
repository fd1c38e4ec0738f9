"""``CALL`` and the compaction statements from ``HudiSpark`` trees (Hudi ``CallProcedureHoodieCommand``,
``CompactionHoodieTableCommand``, ``CompactionShowHoodieTableCommand``).

Procedure arguments must be literals, as in Hudi's grammar (``callArgument: expression`` evaluated as a
constant): their Python values are what procedures receive.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlglot import exp

from sqlext.parser import statements as st
from sqlext.parser.dialect import HudiCall, HudiCompaction
from sqlext.parser.source import Source, name_parts, table_ident

DType = exp.DType
_INTEGERS = {DType.TINYINT, DType.SMALLINT, DType.INT, DType.BIGINT}
_FLOATS = {DType.FLOAT, DType.DOUBLE}


class _NotLiteral(Exception):
    def __init__(self, node: exp.Expr) -> None:
        super().__init__(node.sql(dialect="spark"))
        self.node = node


def _number(text: str) -> int | float | Decimal:
    if any(c in text for c in "eE"):
        return float(text)
    if "." in text:
        return Decimal(text)
    return int(text)


def literal_value(node: exp.Expr) -> Any:
    """The Python value of a literal argument: ``str``, ``int`` (plain, ``L``, ``S``, ``Y``), ``float`` (``D``,
    ``F``, exponent), ``Decimal`` (``1.5``, ``BD``), ``bool``, None (NULL), ``dict`` for ``map(k, v, ...)``, typed
    literals (``TIMESTAMP '...'``) as their string.

    Raises:
        _NotLiteral: anything else (a column, a function call).
    """
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg):
        return -literal_value(node.this)
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, exp.Concat) and all(isinstance(e, exp.Literal) and e.is_string for e in node.expressions):
        return "".join(e.this for e in node.expressions)
    if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Literal):
        to = node.args["to"].this
        text = node.this.this
        if to in _INTEGERS:
            return int(text)
        if to in _FLOATS:
            return float(text)
        if to == DType.DECIMAL:
            return Decimal(text)
        return text
    if isinstance(node, exp.VarMap):
        keys, values = node.args["keys"].expressions, node.args["values"].expressions
        return {str(literal_value(k)): (None if (v := literal_value(vn)) is None else str(v))
                for k, vn in zip(keys, values, strict=True)}
    raise _NotLiteral(node)


def build_call(src: Source, tree: HudiCall) -> st.Call:
    """``CALL [catalog.][system.]name(arg => literal, ... | literal, ...)``.

    Raises:
        SqlParseError: named and positional arguments mixed, a name given twice, a value that is not a literal,
            ``map(...)`` with an odd number of arguments.
    """
    name = name_parts(tree.this)[-1]
    args: list[st.CallArg] = []
    named: bool | None = None
    for node in tree.expressions:
        is_named = isinstance(node, exp.Kwarg)
        if named is not None and is_named != named:
            raise src.error_at_node(node, "Named and positional arguments cannot be mixed")
        named = is_named
        value_node = node.expression if is_named else node
        arg_name = node.this.name if is_named else None
        if arg_name is not None and any(a.name and a.name.lower() == arg_name.lower() for a in args):
            raise src.error_at_node(node, f"Argument {arg_name} is given more than once")
        try:
            value = literal_value(value_node)
        except _NotLiteral as exc:
            raise src.error_at_node(exc.node, f"Expected a literal argument value but found {str(exc)!r}") from None
        args.append(st.CallArg(arg_name, value))
    return st.Call(name, tuple(args))


def build_compaction(tree: HudiCompaction) -> st.Compaction:
    """``RUN|SCHEDULE COMPACTION|CLUSTERING ON t|'path' [AT instant]`` and ``SHOW COMPACTION|CLUSTERING ON t|'path'
    [LIMIT n]``."""
    kind = st.CompactionKind(tree.this.name)
    service = tree.args.get("service")
    table = tree.args.get("table")
    path = tree.args.get("path")
    instant = tree.args.get("instant")
    limit = tree.args.get("limit")
    return st.Compaction(kind, table=table_ident(table) if table is not None else None,
                         path=path.name if path is not None else None,
                         instant=instant.name if instant is not None else None,
                         limit=int(limit.name) if limit is not None else None,
                         service=service.name if service is not None else "COMPACTION")
