"""Checks that are orders, not moves: they answer yes or no, and why.

Fantasy Warlord: "If a figure wishes to enter or leave a building via a ground
floor window or small door, it must begin the turn within 5 cm of the building
and be given the order Break Formation, which consumes an entire move."  The
search never routes through a building's walls; this check says whether that
order is open to a unit standing at a point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapely.geometry import Point

from .errors import RulesError
from .maps import Battlefield, Feature
from .rules import Ruleset

__all__ = ["BuildingEntry", "enter_building"]


@dataclass(frozen=True)
class BuildingEntry:
    """Whether a unit may enter the nearest building by a window or small door.

    Attributes
    ----------
    allowed : bool
        Within the rules' distance of a building.
    building : Feature or None
        The nearest building (None if the map has none).
    distance : float
        From the unit to that building (``inf`` if none).
    order : str
        The order it takes ("Break Formation"); it consumes the whole move.
    reason : str
        One line saying why (not).
    """

    allowed: bool
    building: Feature | None
    distance: float
    order: str
    reason: str


def enter_building(battlefield: Battlefield, rules: Ruleset, at) -> BuildingEntry:
    """Can a unit at ``at`` enter a building by a window or small door this turn?

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
        Must define ``break_formation_distance``.
    at : (x, y)
        The unit's position, table units.

    Returns
    -------
    BuildingEntry

    Raises
    ------
    RulesError
        The ruleset has no Break Formation distance.
    InputError
        ``at`` is off the table.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> bf = load_map("maps/demo.geojson")
    >>> e = enter_building(bf, load_rules("fantasy-warlord"), (145, 80))
    >>> e.allowed, e.building.id, e.distance
    (False, 'farmhouse', 6.0)
    """
    limit = rules.break_formation_distance
    if limit is None:
        raise RulesError(f"{rules.name} has no break_formation_distance in [ruleset]")
    battlefield.check(rules)
    battlefield.grid.xy_to_rc(at)  # refuses a point off the table
    point = Point(float(at[0]), float(at[1]))
    buildings = [f for f in battlefield.features if rules.terrain[f.terrain].role == "building"]
    order = "Break Formation"
    if not buildings:
        return BuildingEntry(False, None, math.inf, order, "there is no building on the map")
    nearest = min(buildings, key=lambda f: f.area.distance(point))
    d = float(nearest.area.distance(point))
    unit = battlefield.units
    if d <= limit:
        reason = (f"within {limit:g} {unit} of {nearest.label} ({d:.2f} {unit}): "
                  f"order {order}, it takes the whole move")
    else:
        reason = f"{d:.2f} {unit} from {nearest.label}; must begin the turn within {limit:g} {unit}"
    return BuildingEntry(d <= limit, nearest, d, order, reason)
