"""Procedure declarations, argument binding and dispatch for ``CALL name(arg => value, ...)``."""

from __future__ import annotations

import difflib
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
        aliases: other names the parameter had in another Hudi release (e.g. ``comment`` for ``comments``).
            Names also match without regard to case and ``_`` (``startTs`` = ``start_ts``).
    """

    name: str
    type: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    doc: str = ""
    aliases: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        """The keys this parameter is found under (:func:`name_key` of its name and aliases)."""
        return tuple(name_key(n) for n in (self.name, *self.aliases))

    def check(self, procedure: str, value: Any) -> None:
        """Raise when ``value`` is not one of :attr:`choices`.

        Raises:
            ProcedureError: names the procedure, the parameter, the valid values and the value given.
        """
        if not self.choices or value is None:
            return
        if str(value).strip().lower() not in {c.lower() for c in self.choices}:
            # Hudi (HoodieProcedureUtils.Operation.fromValue): "Invalid value (<value>)"
            raise ProcedureError(f"Invalid value ({value}): procedure {procedure}: {self.name} must be one of "
                                 f"{', '.join(self.choices)}")


def name_key(name: str) -> str:
    """How argument names are matched: lower case, ``_`` ignored, so the camelCase names of one Hudi release
    (``startTs``, ``showArchived``) and the snake_case names of another (``start_ts``) both bind."""
    return name.replace("_", "").lower()


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
        """Bind positional and named arguments (Hudi ``BaseProcedure.checkArgs`` / ``getArgValueOrDefault``).

        Raises:
            ProcedureError: unknown or repeated argument, too many positional ones, a required one missing or
                null (Hudi's words: ``Argument: table is required``).
        """
        by_name = {key: p for p in self.params for key in p.names()}
        bound: dict[str, Any] = {}
        for index, arg in enumerate(call_.args):
            if arg.name is None:
                if index >= len(self.params):
                    raise ProcedureError(f"procedure {self.name} takes {len(self.params)} argument(s), "
                                         f"got {len(call_.args)}")
                param = self.params[index]
            else:
                found = by_name.get(name_key(arg.name))
                if found is None:
                    raise ProcedureError(f"procedure {self.name} has no parameter {arg.name}{_suggest(arg.name, [p.name.lower() for p in self.params])}"
                                         f" (parameters: {', '.join(p.name for p in self.params)})")
                param = found
            if param.name in bound:
                raise ProcedureError(f"procedure {self.name}: argument {param.name} given twice")
            param.check(self.name, arg.value)
            bound[param.name] = arg.value
        for param in self.params:
            if bound.get(param.name) is None:
                if param.required:
                    raise ProcedureError(f"Argument: {param.name} is required (procedure {self.name})")
                bound.setdefault(param.name, param.default)
        return bound


def _suggest(name: str, names: Any) -> str:
    """``; did you mean x?`` for the closest of ``names`` (difflib), or ``""``."""
    close = difflib.get_close_matches(name.lower(), [str(n) for n in names], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


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
    known = procedures()
    procedure = known.get(statement.name.lower())
    if procedure is None:
        hint = _suggest(statement.name, sorted(known)) or "; CALL help() lists the procedures"
        raise ProcedureError(f"procedure: {statement.name} is not exists{hint}")
    args = procedure.bind(statement)
    return procedure.run(ctx, args)
