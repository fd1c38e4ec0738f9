"""The ``CALL`` registry (Hudi ``HoodieProcedures``): each procedure declares its parameters (name, type,
default, required) and output schema, so ``CALL help()`` can list them. One module per family."""

from __future__ import annotations

from sqlext.procedures.registry import Param, Procedure, call, procedures, register

__all__ = ["Param", "Procedure", "call", "procedures", "register"]
