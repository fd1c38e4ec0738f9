"""Commit callbacks (Hudi ``HoodieWriteCommitHttpCallback``): after a commit, an HTTP POST tells another system
what was committed.

``hoodie.write.commit.callback.on=true`` with ``hoodie.write.commit.callback.http.url``: the body is the JSON
of Hudi's ``HoodieWriteCommitCallbackMessage`` (``commitTime``, ``tableName``, ``basePath``,
``hoodieWriteStat`` — the commit's write stats as the commit file holds them —, ``commitActionType``,
``extraMetadata``), ``Content-Type: application/json``, the header ``HUDI-CALLBACK-KEY`` set to
``hoodie.write.commit.callback.http.api.key`` plus ``...http.custom.headers`` (``name:value;name:value``),
with ``...http.timeout.seconds``. A failed callback (refused, timed out, non-2xx) is logged and never fails
the commit, as in Hudi. Only the HTTP callback exists: another ``hoodie.write.commit.callback.class`` is a
:class:`~engine.errors.ConfigError`.
"""

from __future__ import annotations

import http.client
import json
import logging
import urllib.parse
from dataclasses import dataclass
from typing import Any

from engine.config import CallbackConfig, HoodieConfig
from engine.errors import ConfigError
from engine.timeline.commit_metadata import CommitMetadata

logger = logging.getLogger(__name__)

HEADER_API_KEY = "HUDI-CALLBACK-KEY"
HTTP_CALLBACK_CLASS = "org.apache.hudi.callback.impl.HoodieWriteCommitHttpCallback"


@dataclass(frozen=True)
class CallbackOutcome:
    """What one callback did.

    Attributes:
        url: where it was sent.
        status: the HTTP status, or None when no response came.
        error: why it failed, or "".
    """

    url: str
    status: int | None
    error: str = ""


def callback_message(table_name: str, base_path: str, instant: str, action: str,
                     metadata: CommitMetadata) -> dict[str, Any]:
    """The ``HoodieWriteCommitCallbackMessage`` of a commit, as a JSON-ready dict."""
    return {
        "commitTime": instant,
        "tableName": table_name,
        "basePath": base_path,
        "hoodieWriteStat": [stat.to_dict() for stat in metadata.all_write_stats()],
        "commitActionType": action,
        "extraMetadata": dict(metadata.extra_metadata),
    }


def _headers(conf: HoodieConfig) -> dict[str, str]:
    headers = {"Content-Type": "application/json", HEADER_API_KEY: conf.get(CallbackConfig.HTTP_API_KEY)}
    for item in (conf.raw(CallbackConfig.HTTP_CUSTOM_HEADERS) or "").split(";"):
        if ":" in item:
            name, value = item.split(":", 1)
            if name.strip():
                headers[name.strip()] = value.strip()
    return headers


def check_callback_config(conf: HoodieConfig, table: str) -> None:
    """Refuse a callback configuration that cannot work, before anything is written.

    Raises:
        ConfigError: callbacks on without ``...http.url``, or a callback class other than the HTTP one.
    """
    if not conf.get(CallbackConfig.ON):
        return
    klass = conf.get(CallbackConfig.CLASS).strip()
    if klass != HTTP_CALLBACK_CLASS:
        raise ConfigError(f"{CallbackConfig.CLASS.key}={klass} for table {table}: only {HTTP_CALLBACK_CLASS} "
                          "is available here; nothing was written")
    if not (conf.raw(CallbackConfig.HTTP_URL) or "").strip():
        raise ConfigError(f"{CallbackConfig.ON.key}=true for table {table} needs {CallbackConfig.HTTP_URL.key}; "
                          "nothing was written")


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST with the header names exactly as given (``urllib`` would re-case them); returns the status."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return int(response.status)
    finally:
        connection.close()


def send_commit_callback(conf: HoodieConfig, message: dict[str, Any]) -> CallbackOutcome | None:
    """POST ``message`` when callbacks are on; never raises for a failed delivery (it is logged).

    Returns:
        The outcome, or None when callbacks are off.
    """
    if not conf.get(CallbackConfig.ON):
        return None
    url = (conf.raw(CallbackConfig.HTTP_URL) or "").strip()
    body = json.dumps(message).encode("utf-8")
    timeout = conf.get(CallbackConfig.HTTP_TIMEOUT_SECONDS)
    try:
        status = _post(url, body, _headers(conf), timeout)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        logger.error("commit callback for %s to %s failed: %s", message["commitTime"], url, exc)
        return CallbackOutcome(url, None, str(exc))
    if not 200 <= status < 300:
        logger.error("commit callback for %s to %s failed: HTTP %d", message["commitTime"], url, status)
        return CallbackOutcome(url, status, f"HTTP {status}")
    logger.info("commit callback for %s sent to %s (HTTP %d)", message["commitTime"], url, status)
    return CallbackOutcome(url, status)


__all__ = ["HEADER_API_KEY", "CallbackOutcome", "callback_message", "check_callback_config",
           "send_commit_callback"]
