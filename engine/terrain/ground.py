"""What a unit pays on ground covered by some terrain kinds: the layers in force
(rivers, crossings, buildings, gateways, roads cancelling layers, flyers) and
their multiplier, combined as the rules say.
"""

from __future__ import annotations

import math

import numpy as np

from ..rules.ruleset import Ruleset, TerrainKind, Unit
from .raster import Layers, kinds_in

__all__ = ["combo_layers", "combo_multiplier", "combo_quantum", "layers_multiplier", "price_kinds"]


def price_kinds(mask: np.ndarray, lay: Layers, rules: Ruleset, unit: Unit):
    """``(combos, combo, base)`` of a kind mask: the kind sets, each cell's index
    into them and each cell's multiplier."""
    combo_ids, inverse = np.unique(mask, return_inverse=True)
    combos = [kinds_in(lay.kinds, b) for b in combo_ids]
    prices = np.array([combo_multiplier(c, rules, unit) for c in combos], dtype=np.float64)
    combo = inverse.reshape(mask.shape).astype(np.int32)
    return combos, combo, prices[combo]


def combo_multiplier(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> float:
    """Multiplier of ground covered by ``kinds`` for ``unit``.

    Layers multiply; each layer counts once however many features bring it.
    """
    on = combo_layers(kinds, rules, unit)
    return math.inf if on is None else layers_multiplier(on, rules, unit)


def layers_multiplier(on: set[str], rules: Ruleset, unit: Unit) -> float:
    """Multiplier of the layers ``on`` for ``unit``, combined as the rules say."""
    rates = [unit.multipliers[name] for name in on]
    return max(rates, default=1.0) if rules.combine == "worst" else math.prod(rates)


def combo_quantum(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> float:
    """The quantum the ground covered by ``kinds`` is charged in (0: none; the
    smallest where several layers have one)."""
    on = combo_layers(kinds, rules, unit) or ()
    return min((unit.quanta[name] for name in on if name in unit.quanta), default=0.0)


def combo_layers(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> set[str] | None:
    """The layers a unit pays on ground covered by ``kinds``; None where it is impassable.

    A river is impassable unless a crossing (bridge, ford) lies over it (a
    ford drawn along a river lies over its whole fordable stretch,
    `Battlefield.fordable`), whose own layers then apply (of overlapping
    crossings, those with the lowest multiplier: a unit too wide for that one
    re-forms to use it, `narrowing`), or the unit swims; a building is
    impassable but through a gateway.  Road-like kinds cancel whole layer
    classes.  Flyers ignore ground terrain.
    """
    if unit.flying:
        return set()
    specs: list[TerrainKind] = [rules.terrain[k] for k in kinds]
    roles = {s.role for s in specs}
    if any(s.impassable for s in specs):
        return None
    on_layers: set[str] = set()
    for s in specs:
        if s.role in ("ground", "hill"):
            on_layers.update(s.layers)
    ways: list[tuple[str, ...]] = [()]  # the layers of each way over a river
    if "river" in roles:
        if "crossing" in roles:
            ways = [s.layers for s in specs if s.role == "crossing"]
        elif unit.swimming:
            ways = [tuple(name for s in specs if s.role == "river" for name in s.layers)]
        else:
            return None
    if "building" in roles:
        if "gateway" not in roles:
            return None
        for s in specs:
            if s.role == "gateway":
                on_layers.update(s.layers)
    cancelled = {c for s in specs for c in s.cancels}
    options = [{name for name in on_layers.union(way) if rules.layers[name] not in cancelled}
               for way in ways]
    return min(options, key=lambda on: layers_multiplier(on, rules, unit))
