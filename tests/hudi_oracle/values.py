"""Row values in one JSON-able form on both sides of the oracle (pure Python: imported by the runner under the
oracle's pyspark 3.5 and by the tests under pyspark 4)."""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` (as a Spark ``Row`` field collects in Python) as JSON: decimals as ``"dec:<plain>"`` (trailing
    zeros dropped), dates ``"date:<iso>"``, timestamps ``"ts:<iso>"``, binaries ``"bin:<hex>"``, NaN/inf as
    strings, floats rounded to 12 significant digits, rows as ``{field: value}``, maps as sorted pairs."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"float:{value}"
        return float(f"{value:.12g}")
    if isinstance(value, decimal.Decimal):
        text = format(value.normalize(), "f")
        return f"dec:{'0' if text in ('-0', '') else text}"
    if isinstance(value, datetime.datetime):
        return f"ts:{value.isoformat()}"
    if isinstance(value, datetime.date):
        return f"date:{value.isoformat()}"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"bin:{bytes(value).hex()}"
    if hasattr(value, "asDict"):  # pyspark Row (either version)
        return {k: jsonable(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return [[jsonable(k), jsonable(v)] for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))]
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return f"{type(value).__name__}:{value}"


def sort_key(row: list[Any]) -> str:
    """A total order on JSON rows (None first), for comparing row sets without ORDER BY."""
    return repr([("", "") if v is None else (type(v).__name__, v) for v in row])
