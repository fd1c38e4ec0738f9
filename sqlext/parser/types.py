"""Spark data types of a parsed tree rendered as Spark's ``DataType.sql`` prints them.

``LONG`` -> ``BIGINT``, ``DECIMAL`` -> ``DECIMAL(10,0)``, ``STRUCT<a: INT NOT NULL COMMENT 'c'>``, ``MAP<STRING,
ARRAY<INT>>`` -> ``MAP<STRING, ARRAY<INT>>``: the text Spark's catalog stores and ``DESCRIBE`` shows, so column types
compare equal whatever spelling the user wrote.
"""

from __future__ import annotations

from sqlglot import exp

from sqlext.parser.statements import quote_ident

DType = exp.DType

_SIMPLE: dict[DType, str] = {
    DType.BOOLEAN: "BOOLEAN",
    DType.TINYINT: "TINYINT",
    DType.SMALLINT: "SMALLINT",
    DType.INT: "INT",
    DType.BIGINT: "BIGINT",
    DType.FLOAT: "FLOAT",
    DType.DOUBLE: "DOUBLE",
    DType.DATE: "DATE",
    DType.TIMESTAMP: "TIMESTAMP_NTZ",
    DType.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
    DType.TIMESTAMPTZ: "TIMESTAMP",
    DType.TIMESTAMPLTZ: "TIMESTAMP",
    DType.TEXT: "STRING",
    DType.BINARY: "BINARY",
    DType.VARBINARY: "BINARY",
    DType.VARIANT: "VARIANT",
    DType.NULL: "VOID",
}


class InvalidType(ValueError):
    """A type Spark would refuse; ``node`` is where (for the error position)."""

    def __init__(self, message: str, node: exp.Expr) -> None:
        super().__init__(message)
        self.node = node


def _params(dt: exp.DataType) -> list[int]:
    return [int(p.name) for p in dt.expressions if isinstance(p, exp.DataTypeParam)]


def spark_type_sql(dt: exp.Expr) -> str:
    """The canonical Spark SQL text of a parsed data type.

    Raises:
        InvalidType: a type Spark does not have or an invalid one (``DECIMAL(40,2)``, ``VARCHAR`` without length).
    """
    if not isinstance(dt, exp.DataType):
        raise InvalidType(f"Unsupported data type {dt.sql()!r}", dt)
    kind = dt.this
    if isinstance(kind, exp.Interval):
        unit = kind.args.get("unit")
        if isinstance(unit, exp.IntervalSpan):
            return f"INTERVAL {unit.this.name.upper()} TO {unit.expression.name.upper()}"
        return f"INTERVAL {unit.name.upper() if unit is not None else 'DAY TO SECOND'}"
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == DType.DECIMAL:
        params = _params(dt)
        precision = params[0] if params else 10
        scale = params[1] if len(params) > 1 else 0
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise InvalidType(
                f"Invalid DECIMAL({precision},{scale}): precision must be 1..38 and scale 0..precision", dt)
        return f"DECIMAL({precision},{scale})"
    if kind in (DType.CHAR, DType.VARCHAR):
        params = _params(dt)
        name = "CHAR" if kind == DType.CHAR else "VARCHAR"
        if not params:
            raise InvalidType(f"Data type {name} needs a length, e.g. {name}(10)", dt)
        return f"{name}({params[0]})"
    if kind == DType.ARRAY:
        return f"ARRAY<{spark_type_sql(dt.expressions[0])}>"
    if kind == DType.MAP:
        key, value = dt.expressions
        return f"MAP<{spark_type_sql(key)}, {spark_type_sql(value)}>"
    if kind == DType.STRUCT:
        return "STRUCT<" + ", ".join(_struct_field(f) for f in dt.expressions) + ">"
    raise InvalidType(f'Unsupported data type "{dt.sql(dialect="spark")}"', dt)


def _struct_field(field: exp.Expr) -> str:
    if not isinstance(field, exp.ColumnDef):
        raise InvalidType(f"Expected a struct field (name: type) but found {field.sql()!r}", field)
    text = f"{quote_ident(field.name)}: {spark_type_sql(field.args['kind'])}"
    for constraint in field.args.get("constraints") or ():
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            text += " NOT NULL"
        elif isinstance(kind, exp.CommentColumnConstraint):
            comment = kind.this.name.replace("\\", "\\\\").replace("'", "\\'")
            text += f" COMMENT '{comment}'"
    return text
