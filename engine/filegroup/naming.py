"""Data file names (Hudi ``FSUtils``, docs/FORMAT.md §3.1).

* base file: ``<fileId>_<writeToken>_<instantTime>.parquet`` (``FSUtils.makeBaseFileName``)
* log file: ``.<fileId>_<baseInstant>.log.<version>_<writeToken>`` (``FSUtils.makeLogFileName``)
* file id: ``<UUIDv4>-<n>`` (``FSUtils.createNewFileId``); write token ``<taskPartitionId>-<stageId>-<attemptId>``

Java splits base names at ``_`` (``split("_", 2)[0]`` is the file id, ``split("_")[2]`` the instant), so
file ids and tokens must contain neither ``_`` nor ``.``; the builders below reject such values.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
"""Extension of parquet base files (``HoodieFileFormat.PARQUET``)."""

LOG_FILE_EXTENSION = "log"
"""Extension word of data log files (archived timeline files use ``archive``)."""

UNKNOWN_WRITE_TOKEN = "1-0-1"
"""Token Java uses when no Spark task context exists (rollback command blocks, docs/FORMAT.md §3.1)."""

_BASE_RE = re.compile(r"^([^_/]+)_([^_/]+)_(\d+)(\.[A-Za-z]+)$")
# Hudi FSUtils.LOG_FILE_PATTERN, anchored at the end.
_LOG_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")
_TOKEN_RE = re.compile(r"^\d+-\d+-\d+$")
_INSTANT_RE = re.compile(r"^\d+$")
_EXTENSION_RE = re.compile(r"^\.[A-Za-z]+$")


def new_file_id(n: int = 0) -> str:
    """A new file group id ``<uuid4>-<n>`` (``n`` counts roll-over files of one writer task).

    A UUID starting with eight decimal digits (about 2% of them) is drawn again: the bucket index reads such a
    prefix as a bucket number (Hudi ``BucketIdentifier.bucketIdFromFileId``), so a table written with another
    index would pass for a bucket table and a later ``hoodie.index.type=BUCKET`` write would not be refused."""
    while True:
        value = str(uuid.uuid4())
        if not value[:8].isdigit():
            return f"{value}-{n}"


def write_token(task_partition_id: int, stage_id: int, attempt_id: int) -> str:
    """``<taskPartitionId>-<stageId>-<taskAttemptId>`` (``FSUtils.makeWriteToken``)."""
    return f"{task_partition_id}-{stage_id}-{attempt_id}"


def _check_part(value: str, what: str) -> None:
    if not value or "_" in value or "/" in value or "." in value:
        raise ValueError(f"invalid {what} '{value}': must be non-empty without '_', '.' or '/'")


def _check_instant(value: str) -> None:
    if not _INSTANT_RE.match(value):
        raise ValueError(f"invalid instant time '{value}' in a file name: expected digits")


def base_file_name(file_id: str, token: str, instant: str, extension: str = BASE_FILE_EXTENSION) -> str:
    """``<fileId>_<token>_<instant><extension>``.

    Raises:
        ValueError: file id or token contains ``_``, ``.`` or ``/``; the instant is not digits; the
            extension is not ``.<letters>`` (so a name never holds a path separator or ``..``).
    """
    _check_part(file_id, "file id")
    _check_part(token, "write token")
    _check_instant(instant)
    if not _EXTENSION_RE.match(extension):
        raise ValueError(f"invalid base file extension '{extension}': expected '.' and letters")
    return f"{file_id}_{token}_{instant}{extension}"


def parse_base_file_name(name: str, extension: str = BASE_FILE_EXTENSION) -> tuple[str, str, str] | None:
    """``(file_id, token, instant)`` of a base file name with ``extension``, or ``None``."""
    match = _BASE_RE.match(name)
    if match is None or match.group(4) != extension:
        return None
    return match.group(1), match.group(2), match.group(3)


def is_base_file(name: str, extension: str = BASE_FILE_EXTENSION) -> bool:
    """Whether ``name`` is a base file name (``FSUtils.isBaseFile`` for parquet)."""
    return parse_base_file_name(name, extension) is not None


@dataclass(frozen=True)
class LogFileName:
    """Parts of a log file name (Hudi ``HoodieLogFile`` accessors).

    Attributes:
        file_id: file group id.
        base_instant: base instant of the file slice the log belongs to.
        extension: ``log`` (or ``archive`` for the archived timeline).
        version: log version, from 1.
        token: write token, or ``None`` for legacy names without one.
        is_cdc: name ends with ``.cdc``.
    """

    file_id: str
    base_instant: str
    extension: str
    version: int
    token: str | None
    is_cdc: bool = False

    @property
    def name(self) -> str:
        """The file name these parts give."""
        suffix = f"_{self.token}" if self.token is not None else ""
        cdc = ".cdc" if self.is_cdc else ""
        return f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}{suffix}{cdc}"

    @property
    def sort_key(self) -> tuple[str, int, str, bool]:
        """Java ``HoodieLogFile.LogFileComparator`` order: base instant, version, write token, cdc last."""
        return self.base_instant, self.version, self.token or "", self.is_cdc


def log_file_name(file_id: str, base_instant: str, version: int, token: str,
                  extension: str = LOG_FILE_EXTENSION) -> str:
    """``.<fileId>_<baseInstant>.<extension>.<version>_<token>`` (``FSUtils.makeLogFileName``).

    Raises:
        ValueError: bad file id/token/base instant/extension, or ``version`` < 1.
    """
    _check_part(file_id, "file id")
    _check_instant(base_instant)
    if not _EXTENSION_RE.match("." + extension):
        raise ValueError(f"invalid log file extension '{extension}': expected letters")
    if not _TOKEN_RE.match(token):
        raise ValueError(f"invalid write token '{token}': expected <int>-<int>-<int>")
    if version < 1:
        raise ValueError(f"invalid log version {version} for file id {file_id}: versions start at 1")
    return f".{file_id}_{base_instant}.{extension}.{version}_{token}"


def parse_log_file_name(name: str) -> LogFileName | None:
    """Parse a log file name (Java ``FSUtils.LOG_FILE_PATTERN``), or ``None``."""
    match = _LOG_RE.match(name)
    if match is None:
        return None
    return LogFileName(file_id=match.group(1), base_instant=match.group(2), extension=match.group(3),
                       version=int(match.group(4)), token=match.group(6), is_cdc=match.group(10) is not None)


def is_log_file(name: str) -> bool:
    """Whether ``name`` is a data log file name (extension ``log``, CDC logs included)."""
    parsed = parse_log_file_name(name)
    return parsed is not None and parsed.extension == LOG_FILE_EXTENSION
