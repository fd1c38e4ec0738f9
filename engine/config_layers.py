"""Settings in layers (table properties, session settings, statement options): a key given in an upper layer
under any of its spellings replaces every spelling of it below (Hudi ``ConfigProperty`` alternatives)."""

from __future__ import annotations

from engine.config import HoodieConfig, declared_properties


def overlay_settings(base: HoodieConfig, layer: dict[str, str]) -> HoodieConfig:
    """``base`` with ``layer`` on top, where a key of ``layer`` given under any spelling of a declared key
    (its name or an alternative, e.g. ``hoodie.clean.commits.retained`` for ``hoodie.cleaner.commits.retained``)
    replaces every spelling of that key in ``base``: the upper layer wins whichever spelling each layer used.
    """
    spellings = {}
    for prop in declared_properties():
        if prop.alternatives:
            for key in (prop.key, *prop.alternatives):
                spellings[key] = (prop.key, *prop.alternatives)
    merged = base.as_dict()
    for key in layer:
        for other in spellings.get(key, ()):
            merged.pop(other, None)
    merged.update(layer)
    return HoodieConfig(merged)
