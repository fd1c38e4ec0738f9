"""Command-line argument helpers shared by the ``sqlext`` commands (the shell, ``serve``)."""

from __future__ import annotations

import argparse


def key_value_arg(text: str) -> tuple[str, str]:
    """argparse type for ``key=value`` flags (``--conf``, ``--hiveconf``): ``(key, value)``, both stripped.

    Raises:
        argparse.ArgumentTypeError: no ``=``, or an empty key.
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()
