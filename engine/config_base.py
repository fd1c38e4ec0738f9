"""The machinery of typed configuration (Hudi ``ConfigProperty`` / ``HoodieConfig``): a property (key, default,
parser, doc, legacy keys, table level), the string map of settings read through properties, and the Java-style
parsers. The keys themselves are declared once, in :mod:`engine.config`, which re-exports these names."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engine.errors import ConfigError

T = TypeVar("T")


def parse_bool(value: str) -> bool:
    """Parse a Java-style boolean (``true``/``false``, case-insensitive).

    Raises:
        ValueError: for anything else.
    """
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def parse_list(value: str) -> list[str]:
    """Parse a comma-separated list, trimming blanks and dropping empty entries."""
    return [part.strip() for part in value.split(",") if part.strip()]


@dataclass(frozen=True)
class ConfigProperty(Generic[T]):
    """One configuration key (Hudi ``ConfigProperty``).

    Attributes:
        key: the ``hoodie.*`` key.
        default: value used when the key (and its alternatives) is absent; ``None`` = no default.
        parse: converts the stored string to the typed value.
        doc: what the key means, with units.
        alternatives: legacy keys read when ``key`` is absent.
        table_level: persisted in ``hoodie.properties``.
    """

    key: str
    default: T | None
    parse: Callable[[str], T]
    doc: str
    alternatives: tuple[str, ...] = ()
    table_level: bool = False


def str_property(key: str, default: str | None, doc: str, *alts: str, table: bool = False) -> ConfigProperty[str]:
    """A string key (``alts``: legacy keys; ``table``: persisted in hoodie.properties)."""
    return ConfigProperty(key, default, str, doc, tuple(alts), table)


def int_property(key: str, default: int | None, doc: str, *alts: str) -> ConfigProperty[int]:
    """An integer key."""
    return ConfigProperty(key, default, int, doc, tuple(alts))


def float_property(key: str, default: float | None, doc: str) -> ConfigProperty[float]:
    """A floating-point key."""
    return ConfigProperty(key, default, float, doc)


def bool_property(key: str, default: bool | None, doc: str, *alts: str, table: bool = False) -> ConfigProperty[bool]:
    """A boolean key (Java ``true``/``false``)."""
    return ConfigProperty(key, default, parse_bool, doc, tuple(alts), table)


class HoodieConfig(Mapping[str, str]):
    """An immutable string map of ``hoodie.*`` options with typed access.

    Args:
        props: key/value strings; later layers are merged with :meth:`overlay`.
    """

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        self._props: dict[str, str] = {str(k): str(v) for k, v in (props or {}).items()}

    def __getitem__(self, key: str) -> str:
        return self._props[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._props)

    def __len__(self) -> int:
        return len(self._props)

    def __repr__(self) -> str:
        return f"HoodieConfig({self._props!r})"

    def raw(self, prop: ConfigProperty[Any]) -> str | None:
        """The stored string for ``prop`` (or one of its alternatives), or ``None``."""
        for key in (prop.key, *prop.alternatives):
            if key in self._props:
                return self._props[key]
        return None

    def raw_value(self, key: str) -> str | None:
        """The stored string of a key given by name, or ``None``."""
        return self._props.get(key)

    def contains(self, prop: ConfigProperty[Any]) -> bool:
        """Whether ``prop`` (or an alternative key) is set."""
        return self.raw(prop) is not None

    def get(self, prop: ConfigProperty[T], default: T | None = None) -> T:  # type: ignore[override]
        """Typed value of ``prop``: the stored value, else ``default``, else the property's default.

        Raises:
            ConfigError: the value does not parse, or the key is unset and has no default.
        """
        value = self.raw(prop)
        if value is None:
            fallback = default if default is not None else prop.default
            if fallback is None:
                raise ConfigError(f"config '{prop.key}' is not set and has no default")
            return fallback
        try:
            return prop.parse(value)
        except ValueError as exc:
            raise ConfigError(f"config '{prop.key}' has an invalid value {value!r}: {exc}") from exc

    def get_optional(self, prop: ConfigProperty[T]) -> T | None:
        """Typed value of ``prop``, or its default, or ``None`` when neither exists (never raises for a
        missing key; raises :class:`ConfigError` for a malformed one)."""
        if self.raw(prop) is None:
            return prop.default
        return self.get(prop)

    def overlay(self, other: Mapping[str, str] | None) -> HoodieConfig:
        """A new config: this one with ``other``'s keys on top (``other`` wins)."""
        merged = dict(self._props)
        merged.update({str(k): str(v) for k, v in (other or {}).items()})
        return HoodieConfig(merged)

    def with_value(self, prop: ConfigProperty[Any], value: object) -> HoodieConfig:
        """A new config with ``prop`` set to ``value`` (booleans written Java-style)."""
        text = str(value).lower() if isinstance(value, bool) else str(value)
        return self.overlay({prop.key: text})

    def as_dict(self) -> dict[str, str]:
        """A plain copy of the stored strings."""
        return dict(self._props)
