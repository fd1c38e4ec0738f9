"""sqlext: the SQL front end for Apache Hudi tables on PySpark.

``sqlext.connect(warehouse=None, conf=None, spark=None) -> Session``; ``Session.sql(text) -> DataFrame``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlext.session import Session

__all__ = ["connect", "Session"]


def connect(*args: Any, **kwargs: Any) -> Session:
    """Start or attach to a SparkSession set up for Hudi tables; see :func:`sqlext.session.connect`."""
    from sqlext.session import connect as _connect

    return _connect(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "Session":
        from sqlext.session import Session

        return Session
    raise AttributeError(name)
