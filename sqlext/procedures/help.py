"""``CALL help([cmd])``: the procedures, or one procedure's parameters and output schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from sqlext.errors import ProcedureError
from sqlext.procedures.registry import Param, Procedure, procedures, register

if TYPE_CHECKING:
    from sqlext.session import Session


def _help(session: Session, args: dict[str, Any]) -> DataFrame:
    known = procedures()
    command = args.get("cmd")
    if not command:
        lines = [f"{name}: {proc.doc}" for name, proc in sorted(known.items())]
    else:
        proc = known.get(str(command).lower())
        if proc is None:
            raise ProcedureError(f"procedure: {command} is not exists")
        lines = [f"{proc.name}: {proc.doc}", "parameters:"]
        lines += [f"  {p.name} {p.type} {'required' if p.required else f'default {p.default!r}'}"
                  for p in proc.params]
        lines.append(f"output: {proc.output}")
    return session.spark.createDataFrame([(line,) for line in lines], "result string")


register(Procedure("help", (Param("cmd", "string"),), "result string", _help,
                   "lists procedures, or the parameters and output of one"))
