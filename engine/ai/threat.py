"""Threat maps: how many enemies can reach each cell next turn, and who can see it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..maps.battlefield import Battlefield
from ..rules.ruleset import Ruleset, Unit
from ..search.front import _SLACK
from .armies import _units, reach_army
from .visibility import viewshed

__all__ = ["Threat", "threat_map"]


@dataclass(frozen=True, eq=False)
class Threat:
    """Which enemies can reach each cell next turn.

    Attributes
    ----------
    battlefield : Battlefield
    rules : Ruleset
    enemies : tuple of (Unit, (x, y))
    reaches : tuple of Reach
        Each enemy's reach (its move, plus its charge bonus for a charge).
    charge : bool
    count : ndarray of int16, shape ``battlefield.grid.shape``
        How many enemies can reach each cell.
    margin : ndarray of float64
        The largest allowance an enemy has left on reaching the cell
        (``-inf`` where none can).
    """

    battlefield: Battlefield
    rules: Ruleset
    enemies: tuple
    reaches: tuple
    charge: bool
    count: np.ndarray
    margin: np.ndarray

    def at(self, xy: tuple[float, float]) -> list[tuple[int, float]]:
        """``(enemy index, margin)`` of each enemy that can reach ``xy``."""
        out = []
        for i, r in enumerate(self.reaches):
            c = r.cost_at(xy)
            if c <= r.allowance + _SLACK:
                out.append((i, max(r.allowance - c, 0.0)))
        return out

    @functools.cached_property
    def seen_by(self) -> np.ndarray:
        """How many of the enemies see each cell (`engine.ai.visibility.viewshed`)."""
        out = np.zeros(self.count.shape, dtype=np.int16)
        for unit, xy in self.enemies:
            out += viewshed(self.battlefield, self.rules, xy, flying=unit.flying)
        return out


def threat_map(
    battlefield: Battlefield,
    rules: Ruleset,
    enemies: Sequence[tuple[Unit, tuple[float, float]]],
    *,
    charge: bool = False,
    directions: int = 32,
) -> Threat:
    """How many and which ``enemies`` can reach each cell next turn, and with what margin.

    The union of the enemies' reaches (`reach_army`): a cell counts an enemy
    when its cost for that enemy is within the enemy's allowance.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    enemies : sequence of (Unit, (x, y))
    charge : bool
        Reach as a charge: each allowance is the unit's move plus its
        ``charge_bonus`` (ruleset data, default 0).
    directions : int

    Returns
    -------
    Threat

    Raises
    ------
    InputError
        As `reach_army`.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/demo.geojson")
    >>> t = threat_map(bf, rules, [(rules.unit("orcs"), (150, 60)),
    ...                            (rules.unit("goblins"), (150, 80))])
    >>> int(t.count[bf.grid.xy_to_rc((150, 70))]), [i for i, _ in t.at((150, 95))]
    (2, [1])
    """
    pairs = _units(enemies)
    reaches = reach_army(battlefield, rules, pairs, charge=charge, directions=directions)
    count = np.zeros(battlefield.grid.shape, dtype=np.int16)
    margin = np.full(battlefield.grid.shape, -np.inf)
    for r in reaches:
        count.flat[r.cells] += 1
        margin.flat[r.cells] = np.maximum(margin.flat[r.cells], r.remaining)
    return Threat(battlefield, rules, tuple(pairs), tuple(reaches), bool(charge), count, margin)
