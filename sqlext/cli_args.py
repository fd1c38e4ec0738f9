"""Command-line argument helpers shared by the ``sqlext`` commands (the shell, ``serve``)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

HADOOP_PREFIX = "spark.hadoop."
"""Spark confs under this prefix go into the Hadoop configuration, which the Hive client is built from."""


def key_value_arg(text: str) -> tuple[str, str]:
    """argparse type for ``key=value`` flags (``--conf``, ``--hiveconf``): ``(key, value)``, both stripped.

    Raises:
        argparse.ArgumentTypeError: no ``=``, or an empty key.
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def hiveconf_settings(hiveconf: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The Spark confs to start a session with for ``--hiveconf k=v`` pairs: a ``spark.*`` key as given,
    any other key as ``spark.hadoop.<k>``, so e.g. ``hive.metastore.uris`` reaches the Hadoop configuration
    the Hive catalog is built from (the session then uses that remote metastore, not the embedded Derby one).

    Only ``spark.*`` keys reach ``spark-submit``, which PySpark starts with every builder conf: a plain
    ``hive.*`` key made it print ``Warning: Ignoring non-Spark config property: ...`` although the setting
    took effect. The plain keys are set on the session once it runs (:func:`set_session_confs`), as spark-sql
    does with ``--hiveconf``.

    Returns:
        A new dict; later pairs win over earlier ones.
    """
    settings: dict[str, str] = {}
    for key, value in hiveconf:
        settings[key if key.startswith("spark.") else HADOOP_PREFIX + key] = value
    return settings


def session_only(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The non-``spark.*`` pairs of ``pairs`` (``--hiveconf`` and ``--define`` keys): session confs to set
    once the session runs (:func:`set_session_confs`), never passed to ``spark-submit``."""
    return {key: value for key, value in pairs if not key.startswith("spark.")}


def set_session_confs(session: Any, confs: Mapping[str, str]) -> None:
    """Set ``confs`` on the running session's SQL conf (``session.spark.conf``), so ``SET k`` and
    ``${hiveconf:k}`` / ``${k}`` see them. A session without ``spark`` (a test double) is left alone."""
    spark = getattr(session, "spark", None)
    if spark is None or not confs:
        return
    for key, value in confs.items():
        spark.conf.set(key, value)
    logger.debug("session confs set: %s", ", ".join(sorted(confs)))
