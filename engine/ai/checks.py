"""Checks that are orders, not moves: they answer yes or no, what it costs, and why.

- `enter_building`: Fantasy Warlord's "If a figure wishes to enter or leave a
  building via a ground floor window or small door, it must begin the turn
  within 5 cm of the building and be given the order Break Formation, which
  consumes an entire move."  The search never routes through a building's
  walls; this says whether that order is open to a unit standing at a point.
- `manoeuvre`: Battlesystem's "Movement costs for various types of special
  terrain are applied to changes in facing and frontage as well as to normal
  travel": a re-form, a face or a change of frontage priced where the unit
  stands.
- `can_charge`: Battlesystem's terrain effects on charges.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from shapely.geometry import Point

from .._args import flag, instance, non_negative, point, shown, whole
from ..errors import InputError, NoRouteError, RulesError
from ..maps.battlefield import Battlefield, Feature
from ..rules.ruleset import Ruleset
from ..search.front import Route, route
from ..search.pricing import price_path
from ..terrain.costgrid import CostGrid
from ..terrain.ground import combo_layers
from ..terrain.raster import kinds_in

__all__ = ["BuildingEntry", "ChargeCheck", "Manoeuvre", "can_charge", "enter_building", "manoeuvre"]

# Layer classes that make ground "special terrain" where a ruleset does not say.
_SPECIAL = ("area", "water", "obstacle")
# The most figures a change of frontage moves (a unit's ranks are bounded alike).
_MAX_FIGURES = 1_000_000


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


def enter_building(battlefield: Battlefield, rules: Ruleset,
                   at: tuple[float, float]) -> BuildingEntry:
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
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
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


@dataclass(frozen=True)
class Manoeuvre:
    """What a change of formation, facing or frontage costs where a unit stands.

    Attributes
    ----------
    kind : str
        ``"reform"``, ``"face"`` or ``"frontage"``.
    allowed : bool
        False where the rules forbid it there (re-forming off clear ground).
    cost : float
        Allowance it takes (``inf`` if not allowed).
    reason : str
        One line: the base cost, the ground's rate, the result.
    """

    kind: str
    allowed: bool
    cost: float
    reason: str


def manoeuvre(grid: CostGrid, at: tuple[float, float], kind: str,
              figures: int | None = None) -> Manoeuvre:
    """Price a manoeuvre at the rate of the ground the unit stands on.

    The ruleset's ``[manoeuvres]`` give the costs on clear ground: ``reform``
    (irregular to regular formation, allowed only on clear, open ground),
    ``face`` (a left or right face) and ``frontage`` per ``frontage_figures``
    figures moved.  Elsewhere they cost the ground's multiplier times as much.

    Parameters
    ----------
    grid : CostGrid
        The unit's cost grid.
    at : (x, y)
        Where the unit stands.
    kind : str
        ``"reform"``, ``"face"`` or ``"frontage"``.
    figures : int, optional
        For ``"frontage"``: how many figures change place (each started group
        of ``frontage_figures`` pays once).

    Returns
    -------
    Manoeuvre

    Raises
    ------
    RulesError
        The ruleset does not price this manoeuvre.
    InputError
        An unknown kind, a bad figure count, a point off the table or on
        ground the unit cannot stand on.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("battlesystem")
    >>> bf = load_map("maps/battlesystem/manoeuvres.geojson")
    >>> woods = (5, 5)
    >>> manoeuvre(cost_grid(bf, rules, rules.unit("infantry")), woods, "frontage", 2).cost
    3.0
    """
    instance("grid", grid, CostGrid, "cost_grid")
    costs = grid.rules.manoeuvres
    if kind not in ("reform", "face", "frontage"):
        raise InputError(f"unknown manoeuvre {kind!r}; known: reform, face, frontage")
    if kind not in costs:
        priced = ", ".join(costs) or "none"
        raise RulesError(f"{grid.rules.name} does not price the manoeuvre {kind!r}: its rules "
                         f"file's [manoeuvres] table prices {priced} (of the shipped "
                         "rulesets, only Battlesystem prices manoeuvres)")
    r, c = grid.stand(at)
    rate = float(grid.base[r, c])
    if math.isinf(rate):
        raise InputError(f"{grid.unit.race} cannot stand at ({at[0]:g}, {at[1]:g})")
    base = costs[kind]
    what = kind
    if kind == "frontage":
        if not whole(figures) or not 1 <= figures <= _MAX_FIGURES:
            raise InputError(f"a change of frontage needs figures from 1 to {_MAX_FIGURES}, "
                             f"got {shown(figures)}")
        per = int(costs.get("frontage_figures", 1))
        groups = -(-int(figures) // per)
        base *= groups
        what = f"frontage change of {figures} figures ({groups} x {costs[kind]:g} per {per})"
    elif figures is not None:
        raise InputError(f"figures are for a change of frontage, not a {kind}")
    u = grid.battlefield.units
    ground = ", ".join(n for n in grid.combos[grid.combo[r, c]] if n != "clear") or "clear"
    if kind == "reform" and (rate != 1.0 or _special(grid, r, c)):
        return Manoeuvre(kind, False, math.inf,
                         f"re-forming needs clear, open ground; here: {ground}")
    cost = base * rate
    return Manoeuvre(kind, True, cost,
                     f"{what}: {base:g} {u} on clear ground x {rate:g} ({ground}) = {cost:g} {u}")


def _special(grid: CostGrid, r: int, c: int) -> list[str]:
    """The special-terrain layers of the ground at cell (r, c), whoever stands there.

    A road cancels what it cancels and a bridge opens the river under it;
    ground nobody may enter (deep water) keeps its own layers.
    """
    rules, lay = grid.rules, grid.layers
    kinds = kinds_in(lay.kinds, lay.mask[r, c])
    walker = dataclasses.replace(grid.unit, flying=False, swimming=False)
    on = combo_layers(kinds, rules, walker)
    if on is None:
        on = {n for k in kinds for n in rules.terrain[k].layers}
    classes = rules.irregular_in or _SPECIAL
    return sorted(n for n in on if rules.layers[n] in classes)


@dataclass(frozen=True)
class ChargeCheck:
    """Whether a unit can charge a target along the cheapest route, and why (not).

    Attributes
    ----------
    allowed : bool
    reasons : list of str
        Every condition that fails (empty when allowed).
    checks : list of str
        Tests the charge still needs (a charge-initiation check to cross an
        obstacle).
    route : Route or None
        The route priced (None when there is none).
    """

    allowed: bool
    reasons: list[str]
    checks: list[str]
    route: Route | None


def can_charge(grid: CostGrid, start: tuple[float, float], target: tuple[float, float], *,
               minimum_range: float, bonus: float | None = None,
               climbed: bool = False) -> ChargeCheck:
    """Battlesystem's conditions for charging through special terrain.

    "A unit can charge through an area of special terrain, if it is able to
    move through the type of terrain in question and if all of the following
    conditions are met: 1. The target unit is not located in special terrain.
    2. The charging unit can pay the movement cost of getting through the
    special terrain and still have enough movement left (including its charge
    bonus) to contact the target.  3. The charging unit, when it emerges from
    the special terrain, is at least as far away from the target as its
    minimum charge range."  Also: "A unit cannot move uphill and charge in the
    same turn" (downhill is fine), and crossing an obstacle needs "a
    successful charge initiation check" (reported in ``checks``).

    Special terrain is ground carrying a layer of the classes in the ruleset's
    ``irregular_in`` (area, water and obstacle where it has none).

    Parameters
    ----------
    grid : CostGrid
        The charger's cost grid.
    start, target : (x, y)
        The charger's and the target's positions.
    minimum_range : float
        The charger's minimum charge range.
    bonus : float, optional
        The charge bonus added to the move; defaults to the unit's
        ``charge_bonus``.
    climbed : bool
        The unit has already moved uphill this turn.

    Returns
    -------
    ChargeCheck

    Raises
    ------
    InputError
        A point off the table, the target where the unit stands, the unit on
        impassable ground, or a bonus or minimum range that is not a finite
        number >= 0.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("battlesystem")
    >>> g = cost_grid(load_map("maps/battlesystem/charge.geojson"), rules,
    ...               rules.unit("infantry"))
    >>> c = can_charge(g, (2, 5), (14, 5), bonus=6, minimum_range=3)
    >>> c.allowed, c.checks
    (True, ['charge initiation check: crossing hedge at (8.75, 5)'])
    """
    instance("grid", grid, CostGrid, "cost_grid")
    climbed = flag("climbed", climbed)
    if bonus is None:
        bonus = grid.unit.charge_bonus
    non_negative("bonus", bonus)
    non_negative("minimum_range", minimum_range)
    u = grid.battlefield.units
    if point(start) == point(target):
        raise InputError(f"the target ({target[0]:g}, {target[1]:g}) is where the unit "
                         "stands: a charge needs a target away from it")
    reasons: list[str] = []
    checks: list[str] = []
    if climbed:
        reasons.append("it has moved uphill this turn")
    r, c = grid.grid.xy_to_rc(target)
    ground = ", ".join(n for n in grid.combos[grid.combo[r, c]] if n != "clear") or "clear"
    if _special(grid, r, c):
        reasons.append(f"the target is in special terrain ({ground})")
    if math.isinf(grid.base[r, c]):
        reasons.append(f"{grid.unit.race} cannot enter the target's ground ({ground})")
        return ChargeCheck(False, reasons, checks, None)
    allowance = grid.unit.move + bonus
    try:
        rt = route(grid, start, target, allowance)  # one charge: its turn is the allowance
    except NoRouteError:
        return ChargeCheck(False, [*reasons, "no route to the target"], checks, None)
    if rt.cost > allowance + 1e-9:
        reasons.append(f"the route costs {rt.cost:.2f} {u}, more than the move and charge "
                       f"bonus ({allowance:g} {u})")
    pieces = price_path(grid, rt.path).pieces
    if any(leg.kind == "move" and any("uphill" in t for t in leg.terrain) for leg in pieces):
        reasons.append("the route climbs: no charge after moving uphill")
    emerge = None
    for leg in pieces:
        if leg.kind == "obstacle":
            checks.append(f"charge initiation check: crossing {leg.terrain[0].split(' (')[0]} "
                          f"at ({leg.start[0]:g}, {leg.start[1]:g})")
        if leg.kind == "move" and _special(grid, *grid.grid.xy_to_rc(_mid(leg))):
            emerge = leg.end
    if emerge is not None:
        gap = math.dist(emerge, (float(target[0]), float(target[1])))
        if gap < minimum_range - 1e-9:
            reasons.append(f"it leaves special terrain {gap:.2f} {u} from the target, inside "
                           f"its minimum charge range of {minimum_range:g} {u}")
    return ChargeCheck(not reasons, reasons, checks, rt)


def _mid(leg) -> tuple[float, float]:
    return (0.5 * (leg.start[0] + leg.end[0]), 0.5 * (leg.start[1] + leg.end[1]))
