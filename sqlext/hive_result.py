"""Query results as ``spark-sql`` prints them (Spark's ``HiveResult.hiveResultString`` /
``toHiveString``): one tab-separated line per row, values formatted as the JVM formats them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any, Protocol

from engine.java_format import java_double_to_string, java_float_to_string


class DataFrameLike(Protocol):
    """What the shell needs of a query result (a ``pyspark.sql.DataFrame`` fits)."""

    @property
    def columns(self) -> list[str]: ...

    def collect(self) -> list[Any]: ...


def java_double_str(value: float, *, single: bool = False) -> str:
    """``value`` as Java's ``Double.toString`` (``Float.toString`` when ``single``) prints it, as the JVM
    running spark-sql does: plain notation for 1e-3 <= |v| < 1e7 (``1.0``, ``0.001``, ``1234567.0``), else
    ``1.0E7`` / ``1.0E-4`` style; ``NaN``, ``Infinity``, ``-Infinity``. One formatter serves the shell and
    the key generators (:func:`engine.java_format.java_double_to_string`)."""
    return java_float_to_string(value) if single else java_double_to_string(value)


def _type_name(data_type: Any) -> str:
    return type(data_type).__name__ if data_type is not None else ""


def _struct_fields(data_type: Any) -> list[Any] | None:
    fields = getattr(data_type, "fields", None)
    return list(fields) if fields is not None and _type_name(data_type) == "StructType" else None


def _format_timestamp(value: dt.datetime) -> str:
    text = (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    )
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def _format_day_time(value: dt.timedelta) -> str:
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    days, rest = divmod(micros, 86_400_000_000)
    hours, rest = divmod(rest, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds, micro = divmod(rest, 1_000_000)
    return f"{sign}{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{micro * 1000:09d}"


def to_hive_string(value: Any, data_type: Any = None, nested: bool = False) -> str:
    """One value as spark-sql prints it (Spark's ``HiveResult.toHiveString``).

    Args:
        value: a value from ``DataFrame.collect()`` (None, bool, int, float, Decimal, str, bytes,
            date, datetime, timedelta, list, dict, Row).
        data_type: its ``pyspark.sql.types.DataType`` when known (needed for FLOAT precision,
            year-month intervals, struct field names of plain tuples); inferred from the value
            otherwise.
        nested: inside an array, map or struct (nulls print ``null``, strings are double-quoted).

    Returns:
        ``NULL``/``null``; ``true``/``false``; numbers as Java prints them; decimals plain;
        dates ``yyyy-MM-dd``; timestamps ``yyyy-MM-dd HH:mm:ss[.f]`` (trailing zeros dropped);
        binary decoded as UTF-8; arrays ``[1,2]``; maps ``{"k":1}`` (entries sorted); structs
        ``{"a":1,"b":"x"}``.
    """
    tname = _type_name(data_type)
    if value is None:
        return "null" if nested else "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if tname == "YearMonthIntervalType":
            sign = "-" if value < 0 else ""
            return f"{sign}{abs(value) // 12}-{abs(value) % 12}"
        return str(value)
    if isinstance(value, float):
        return java_double_str(value, single=tname == "FloatType")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return f'"{value}"' if nested else value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dt.datetime):
        return _format_timestamp(value)
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if isinstance(value, dt.timedelta):
        return _format_day_time(value)
    if isinstance(value, dict):
        key_type = getattr(data_type, "keyType", None)
        value_type = getattr(data_type, "valueType", None)
        entries = sorted(
            to_hive_string(k, key_type, True) + ":" + to_hive_string(v, value_type, True)
            for k, v in value.items()
        )
        return "{" + ",".join(entries) + "}"
    fields = _struct_fields(data_type)
    names = getattr(value, "__fields__", None)
    if isinstance(value, tuple) and (fields is not None or names is not None):
        if fields is not None:
            pairs: Iterable[tuple[str, Any, Any]] = (
                (f.name, v, f.dataType) for f, v in zip(fields, value, strict=False)
            )
        else:
            pairs = ((n, v, None) for n, v in zip(names or (), value, strict=False))
        return "{" + ",".join(f'"{n}":{to_hive_string(v, t, True)}' for n, v, t in pairs) + "}"
    if isinstance(value, (list, tuple)):
        element_type = getattr(data_type, "elementType", None)
        return "[" + ",".join(to_hive_string(v, element_type, True) for v in value) + "]"
    return str(value)


def format_result(df: DataFrameLike, rows: Sequence[Any]) -> list[str]:
    """The output lines of a result, as Spark's ``HiveResult.hiveResultString``: one tab-separated
    line per row; ``SHOW TABLES`` / ``SHOW VIEWS`` print only the name column; ``DESCRIBE`` pads
    name, type and comment to 20 characters."""
    columns = list(df.columns)
    lowered = [c.lower() for c in columns]
    if lowered in (["namespace", "tablename", "istemporary"], ["namespace", "viewname", "istemporary"]):
        return [to_hive_string(row[1]) for row in rows]
    if lowered == ["col_name", "data_type", "comment"]:
        return [
            "\t".join(f"{'' if v is None else str(v):<20}" for v in (row[0], row[1], row[2])) for row in rows
        ]
    schema = getattr(df, "schema", None)
    fields = _struct_fields(schema) or []
    types = [f.dataType for f in fields] if len(fields) == len(columns) else [None] * len(columns)
    return ["\t".join(to_hive_string(v, t) for v, t in zip(row, types, strict=False)) for row in rows]


def collectable(df: DataFrameLike) -> DataFrameLike:
    """``df`` with top-level year-month interval columns turned into their Hive text (``1-2``) on
    the Spark side: PySpark cannot collect ``YearMonthIntervalType`` values."""
    fields = _struct_fields(getattr(df, "schema", None)) or []
    names = [f.name for f in fields]
    select_expr = getattr(df, "selectExpr", None)
    if (
        select_expr is None
        or len(set(names)) != len(names)
        or not any(_type_name(f.dataType) == "YearMonthIntervalType" for f in fields)
    ):
        return df
    exprs = []
    for field in fields:
        quoted = "`" + field.name.replace("`", "``") + "`"
        if _type_name(field.dataType) == "YearMonthIntervalType":
            exprs.append(f"regexp_extract(CAST({quoted} AS STRING), '\\'(.*)\\'', 1) AS {quoted}")
        else:
            exprs.append(quoted)
    result: DataFrameLike = select_expr(*exprs)
    return result
