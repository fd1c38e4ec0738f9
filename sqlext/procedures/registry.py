"""Procedure declarations, argument binding and dispatch for ``CALL name(arg => value, ...)``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from sqlext.errors import ProcedureError
from sqlext.parser.statements import Call

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext

# Modules that register procedures when imported.
FAMILIES = ("archive", "clean", "clustering", "commits", "compaction", "copy", "files", "filesystem", "help", "hive_sync",
            "logfiles", "partitions", "repair", "savepoints", "timeline")


@dataclass(frozen=True)
class Param:
    """One procedure parameter (Hudi ``ProcedureParameter``).

    Attributes:
        name: the name used in ``name => value``.
        type: Spark SQL type name, as ``CALL help`` shows it (``string``, ``int``, ``long``, ``boolean``).
        default: the value bound when the argument is not given.
        required: whether the argument must be given.
        choices: the valid values, when there is a fixed set (matched case-insensitively).
        doc: what the parameter means, for ``CALL help(cmd => ...)``.
    """

    name: str
    type: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    doc: str = ""

    def check(self, procedure: str, value: Any) -> None:
        """Raise when ``value`` is not one of :attr:`choices`.

        Raises:
            ProcedureError: names the procedure, the parameter, the valid values and the value given.
        """
        if not self.choices or value is None:
            return
        if str(value).strip().lower() not in {c.lower() for c in self.choices}:
            raise ProcedureError(f"procedure {procedure}: {self.name} must be one of {', '.join(self.choices)}; "
                                 f"got {value!r}")


@dataclass(frozen=True)
class Procedure:
    """A ``CALL`` procedure.

    Attributes:
        name: lower-case name.
        params: declared parameters, in positional order.
        output: Spark DDL of the output columns.
        run: ``run(ctx, args) -> DataFrame`` with ``args`` bound by name (defaults filled).
        doc: one line of help.
    """

    name: str
    params: tuple[Param, ...]
    output: str
    run: Callable[[CommandContext, dict[str, Any]], DataFrame]
    doc: str = ""

    def bind(self, call_: Call) -> dict[str, Any]:
        """Bind positional and named arguments.

        Raises:
            ProcedureError: unknown or repeated argument, too many positional ones, a required one missing.
        """
        by_name = {p.name.lower(): p for p in self.params}
        bound: dict[str, Any] = {}
        for index, arg in enumerate(call_.args):
            if arg.name is None:
                if index >= len(self.params):
                    raise ProcedureError(f"procedure {self.name} takes {len(self.params)} argument(s), "
                                         f"got {len(call_.args)}")
                name = self.params[index].name
            else:
                name = arg.name.lower()
                if name not in by_name:
                    raise ProcedureError(f"procedure {self.name} has no parameter {arg.name} (parameters: "
                                         f"{', '.join(p.name for p in self.params)})")
                name = by_name[name].name
            if name in bound:
                raise ProcedureError(f"procedure {self.name}: argument {name} given twice")
            by_name[name.lower()].check(self.name, arg.value)
            bound[name] = arg.value
        for param in self.params:
            if param.name not in bound:
                if param.required:
                    raise ProcedureError(f"procedure {self.name}: argument {param.name} is required")
                bound[param.name] = param.default
        return bound


_REGISTRY: dict[str, Procedure] = {}


def register(procedure: Procedure) -> Procedure:
    """Add a procedure to the registry (names are case-insensitive)."""
    _REGISTRY[procedure.name.lower()] = procedure
    return procedure


def procedures() -> dict[str, Procedure]:
    """All registered procedures by name (families are imported, and so registered, on first use)."""
    for family in FAMILIES:
        importlib.import_module(f"sqlext.procedures.{family}")

    return dict(_REGISTRY)


def call(ctx: CommandContext, statement: Call) -> DataFrame:
    """Run ``CALL``.

    Raises:
        ProcedureError: unknown procedure, bad arguments, or the procedure failed.
    """
    procedure = procedures().get(statement.name.lower())
    if procedure is None:
        raise ProcedureError(f"procedure: {statement.name} is not exists (Hudi's words); the procedures are "
                             f"{', '.join(sorted(procedures()))}; CALL help() describes them")
    args = procedure.bind(statement)
    return procedure.run(ctx, args)
