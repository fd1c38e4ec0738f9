"""``CALL help([cmd])`` (Hudi ``HelpProcedure``): the procedures, or one procedure's parameters and output.

The text is Hudi's, one row in a ``result`` column: a synopsis and every procedure with its description;
for one procedure its parameters (``param``, ``type_name``, ``default_value``, ``required``) and output
columns, each cell padded to 30 characters. Beyond Hudi, each parameter line ends with its valid values and
meaning, so ``CALL help(cmd => 'run_compaction')`` says which ``op`` values there are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType, _parse_datatype_string

from sqlext.errors import ProcedureError
from sqlext.procedures.registry import Param, Procedure, procedures, register

if TYPE_CHECKING:
    from sqlext.commands.context import CommandContext


def _cell(text: str) -> str:
    return f"{text:<30}"


def _param_line(param: Param) -> str:
    about = param.doc
    if param.choices:
        about = f"one of {', '.join(param.choices)}" + (f": {about}" if about else "")
    cells = [param.name, param.type, str(param.default) if param.default is not None else "None",
             "true" if param.required else "false"]
    line = "\t" + "\t".join(_cell(c) for c in cells)
    return f"{line}\t{about}" if about else line


def describe_procedure(proc: Procedure) -> str:
    """Hudi's ``help(cmd => ...)`` text for ``proc``, with each parameter's valid values and meaning."""
    lines = ["parameters:",
             "\t" + "\t".join(_cell(c) for c in ("param", "type_name", "default_value", "required"))]
    lines += [_param_line(p) for p in proc.params]
    lines.append("outputType:")
    lines.append("\t" + "\t".join(_cell(c) for c in ("name", "type_name", "nullable", "metadata")))
    schema = _parse_datatype_string(proc.output)
    assert isinstance(schema, StructType)
    for field in schema.fields:
        lines.append("\t" + "\t".join(_cell(c) for c in (field.name, field.dataType.typeName(), "true", "{}")))
    return "\n".join(lines) + "\n"


def list_procedures(known: dict[str, Procedure]) -> str:
    """Hudi's ``help()`` text: the synopsis and each procedure with its description."""
    lines = ["synopsis", "\tcall [command]([key1]=>[value1],[key2]=>[value2])", "commands and description"]
    lines += [f"\t{name}\t{proc.doc}" for name, proc in sorted(known.items())]
    lines.append("You can use 'call help(cmd=>[command])' to view the detailed parameters of the command")
    return "\n".join(lines) + "\n"


def _help(ctx: CommandContext, args: dict[str, Any]) -> DataFrame:
    known = procedures()
    command = args.get("cmd")
    if not command:
        text = list_procedures(known)
    else:
        proc = known.get(str(command).strip().lower())
        if proc is None:
            raise ProcedureError(f"can not find {command} command in procedures (procedures: "
                                 f"{', '.join(sorted(known))})")
        text = describe_procedure(proc)
    return ctx.spark.createDataFrame([(text,)], "result string")


register(Procedure("help", (Param("cmd", "string", doc="a procedure's name"),), "result string", _help,
                   "lists the procedures, or the parameters and output of one"))
