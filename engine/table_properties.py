"""``hoodie.properties`` text codec and checksum (Hudi ``HoodieTableConfig`` storage helpers; docs/FORMAT.md §1).

Re-exported by :mod:`engine.table`, which reads and updates the file.
"""

from __future__ import annotations

import datetime as _dt
import zlib
from collections.abc import Mapping

from engine import javaprops
from engine.config import TableConfig
from engine.errors import ConfigError

PROPERTIES_FILE = "hoodie.properties"


class TableProperties:
    """``hoodie.properties`` text codec and checksum (Hudi ``HoodieTableConfig`` storage helpers)."""

    @staticmethod
    def parse(text: str) -> dict[str, str]:
        """Parse properties text (decoded as ISO-8859-1) with Java ``Properties.load`` semantics, so
        ``{"type"\\:"record"}`` yields ``{"type":"record"}``.

        Raises:
            CorruptFile: malformed ``\\u`` escape.
        """
        return javaprops.parse(text, PROPERTIES_FILE)

    @staticmethod
    def render(props: Mapping[str, str], comment: str = "Properties saved on") -> bytes:
        """Properties file bytes: ``#<comment> <ISO instant>``, ``#<date>``, then ``key=value`` lines in
        ``props`` order. Values are written unescaped except backslash/newline (docs/FORMAT.md §1.1) so Java and
        hudi-rs read the same values.
        """
        now = _dt.datetime.now(_dt.UTC)
        return javaprops.render(props, comment=f"{comment} {javaprops.java_instant_string(now)}", now=now)

    @staticmethod
    def checksum(database: str | None, table: str) -> int:
        """``hoodie.table.checksum``: unsigned CRC32 of the UTF-8 bytes of ``"<database>.<table>"``
        (``""`` for a missing database), as ``HoodieTableConfig.generateChecksum``."""
        return zlib.crc32(f"{database or ''}.{table}".encode()) & 0xFFFFFFFF

    @staticmethod
    def checksum_of(props: Mapping[str, str]) -> int:
        """Checksum for a properties map (uses ``hoodie.table.name`` / ``hoodie.database.name``).

        Raises:
            ConfigError: ``hoodie.table.name`` is missing.
        """
        name = props.get(TableConfig.NAME.key)
        if not name:
            raise ConfigError(f"'{TableConfig.NAME.key}' is required in {PROPERTIES_FILE}")
        return TableProperties.checksum(props.get(TableConfig.DATABASE_NAME.key), name)

    @staticmethod
    def is_valid(props: Mapping[str, str]) -> bool:
        """Java ``fetchConfigs`` validity: no checksum key, or a checksum that matches."""
        value = props.get(TableConfig.CHECKSUM.key)
        if value is None:
            return True
        try:
            return int(value) == TableProperties.checksum_of(props)
        except (ValueError, ConfigError):
            return False
