"""Lines of sight: who can see whom, and everything an observer can see.

The rules are data: a terrain kind with ``conceals = D`` in the ruleset hides
the units inside it, and the ruleset's ``sight_height`` is how far above the
ground figures see and are seen.  Fantasy Warlord, read as follows:

- **Inside concealing terrain** (woods, swamp: 5 cm; jungle: 3 cm): "Units
  that are inside woods cannot be seen by any other units more than 5 cm
  away": a target standing in it is seen only from within ``D`` (4.9 cm seen,
  5.1 cm hidden; exactly ``D`` is seen).
- **Seeing out, and through**: "nor can they see any unit around them in the
  woods which is over 5 cm away", and a unit firing out of a wood "must be
  within 5 cm of the edge of the wood".  So sight runs at most ``D`` into
  concealing terrain: a sight line is blocked where it is still in such
  terrain farther than ``D`` from the observer.  An observer deep in a wood
  sees out only along lines that leave it within ``D``; one outside sees
  through a strip of wood only if the strip ends within ``D`` of it.
- **Behind woods**: "Units can hide from the enemy by being positioned on the
  far side of woods".  A wood blocks ground observers' sight through it
  (beyond ``D``), whatever the heights: trees stand taller than figures.
- **Hills**: "Troops positioned behind the crest of a hill, away from the
  enemy, are classed as being concealed".  A sight line runs from
  ``sight_height`` above the observer's ground to ``sight_height`` above the
  target's; ground above it anywhere between blocks it.
- **Flyers** at Flight Height "can see over all hills" and see "units hiding
  behind woods", but "Units concealed in woods are invisible to flying
  creatures": a flyer sees every point that is not in concealing terrain,
  and none that is, however close (to look into a wood it must land, and is
  then a ground observer).

On the grid: the elevation, and whether a point conceals, are those of the
cell holding it (`engine.terrain.layers`); the line is walked through every
cell it crosses (`engine.ai._sight`).  The ground under the observer and under
the target never blocks.  Distances are exact, between the exact points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._args import flag, instance, named, non_negative
from ..errors import InputError
from ..maps.battlefield import Battlefield
from ..rules.ruleset import Ruleset
from ..terrain.raster import kind_cells, kinds_in, layers
from . import _sight

__all__ = ["Sight", "viewshed", "visible"]


@dataclass(frozen=True)
class Sight:
    """Whether an observer sees a target, and why (not).

    Attributes
    ----------
    seen : bool
    reason : str
        One line, e.g. ``"hidden: inside woods, 5.10 cm > 5 cm"`` or
        ``"blocked by hill crest at (52.25, 30.25), ground 4.00 cm high"``.
    distance : float
        From observer to target, table units.
    blocked_at : (x, y) or None
        Centre of the cell that stops the line (the crest for a hill: the cell
        rising farthest above the line), or None.
    """

    seen: bool
    reason: str
    distance: float
    blocked_at: tuple[float, float] | None = None

    def as_dict(self) -> dict:
        """JSON-ready form."""
        at = None if self.blocked_at is None else [round(v, 6) for v in self.blocked_at]
        return {"seen": self.seen, "reason": self.reason,
                "distance": round(self.distance, 6), "blocked_at": at}


@dataclass(frozen=True, eq=False)
class _SightGrids:
    """A battlefield's sight data for one ruleset: what the kernels take."""

    elevation: np.ndarray
    conceal: np.ndarray  # distance each cell conceals within; inf where it does not
    kinds: tuple[str, ...]
    mask: np.ndarray
    tiles: tuple[np.ndarray, np.ndarray, np.ndarray]  # `_sight.tiles`


def _grids(battlefield: Battlefield, rules: Ruleset) -> _SightGrids:
    key = ("sight", id(rules))
    cached = battlefield._cache.get(key)
    if cached is not None:
        return cached
    lay = layers(battlefield, rules)
    conceal = np.full(lay.grid.shape, math.inf)
    for i, name in enumerate(lay.kinds):
        d = rules.terrain[name].effects.conceals
        if d is not None:
            on = kind_cells(lay.mask, i)
            conceal[on] = np.minimum(conceal[on], d)
    result = _SightGrids(lay.elevation, conceal, lay.kinds, lay.mask,
                         _sight.tiles(lay.elevation, conceal))
    battlefield._cache[key] = result
    return result


def _free(battlefield: Battlefield, rules: Ruleset, grids: _SightGrids, height: float):
    key = ("sight-free", id(rules), height)
    cached = battlefield._cache.get(key)
    if cached is None:
        cached = _sight.free_cells(grids.elevation, grids.conceal, height)
        battlefield._cache[key] = cached
    return cached


def _height(rules: Ruleset, height: float | None, flying: bool) -> float:
    """The sight height: ``height``, else the rules'; `InputError` for a bad one, or one
    given a flyer (it sees from its flight height, and the height would be ignored)."""
    if flying and height is not None:
        raise InputError("a flyer sees from its flight height: give flying or a sight "
                         "height, not both")
    return non_negative("sight height", rules.sight_height if height is None else height)


def _cell_of(battlefield: Battlefield, xy, who: str) -> tuple[tuple[float, float], tuple[int, int]]:
    rc = named(who, battlefield.grid.xy_to_rc, xy)
    return (float(xy[0]), float(xy[1])), rc


def _concealer(rules: Ruleset, grids: _SightGrids, rc: tuple[int, int]) -> str:
    """The kind that sets a cell's concealment distance."""
    return min(kinds_in(grids.kinds, grids.mask[rc]),
               key=lambda k: rules.terrain[k].effects.conceals or math.inf)


def visible(
    battlefield: Battlefield,
    rules: Ruleset,
    observer: tuple[float, float],
    target: tuple[float, float],
    *,
    flying: bool = False,
    height: float | None = None,
) -> Sight:
    """Does a unit at ``observer`` see a unit at ``target``?  Yes or no, and why.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
        Its terrain kinds' ``conceals`` distances and its ``sight_height``.
    observer, target : (x, y)
        Table points.
    flying : bool
        The observer is a flyer at Flight Height.
    height : float, optional
        Height of eyes and heads above the ground; default ``rules.sight_height``
        (not with ``flying``).

    Returns
    -------
    Sight

    Raises
    ------
    InputError
        A point off the table, a bad height, or a height given a flyer.
    MapError
        The map names terrain the rules do not define.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map({"type": "FeatureCollection",
    ...     "battlefield": {"width": 40, "height": 20, "units": "cm"},
    ...     "features": [{"type": "Feature", "properties": {"terrain": "woods"},
    ...         "geometry": {"type": "Polygon",
    ...                      "coordinates": [[[20, 0], [40, 0], [40, 20], [20, 20], [20, 0]]]}}]})
    >>> visible(bf, rules, (17.0, 10.0), (21.9, 10.0)).reason
    'seen: inside woods, 4.90 cm <= 5 cm'
    >>> visible(bf, rules, (16.8, 10.0), (21.9, 10.0)).reason
    'hidden: inside woods, 5.10 cm > 5 cm'
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    flying = flag("flying", flying)
    h = _height(rules, height, flying)
    grids = _grids(battlefield, rules)
    (ox, oy), (r0, c0) = _cell_of(battlefield, observer, "observer")
    (tx, ty), (r1, c1) = _cell_of(battlefield, target, "target")
    dist = float(_sight.distance(ox, oy, tx, ty))
    u = battlefield.units
    d = float(grids.conceal[r1, c1])
    hides = math.isfinite(d)
    kind = _concealer(rules, grids, (r1, c1)) if hides else ""
    if flying:
        if hides:
            return Sight(False, f"hidden: inside {kind}, which hides units from flyers "
                         "(a flyer must land to look in)", dist)
        return Sight(True, f"seen: a flyer at flight height sees over hills and woods, "
                     f"{dist:.2f} {u}", dist)
    if dist > d:
        return Sight(False, f"hidden: inside {kind}, {dist:.2f} {u} > {d:g} {u}", dist)
    free, lip, *_ = _free(battlefield, rules, grids, h)
    z0, z1 = grids.elevation[r0, c0] + h, grids.elevation[r1, c1] + h
    wr, wc, hr, hc = _sight.march(grids.elevation, grids.conceal, free, lip, ox, oy, tx, ty,
                                  r0, c0, r1, c1, battlefield.cell, z0, z1, dist, False)
    spec = battlefield.grid
    if hr >= 0:
        x, y = spec.rc_to_xy((hr, hc))
        ground = float(grids.elevation[hr, hc])
        return Sight(False, f"blocked by hill crest at ({x:.2f}, {y:.2f}), ground {ground:.2f} "
                     f"{u} high", dist, (x, y))
    if wr >= 0:
        x, y = spec.rc_to_xy((wr, wc))
        wood = _concealer(rules, grids, (wr, wc))
        reach = float(grids.conceal[wr, wc])
        if math.isfinite(grids.conceal[r0, c0]):
            why = f"from inside {_concealer(rules, grids, (r0, c0))} sight reaches {reach:g} {u}"
        else:
            why = f"sight reaches {reach:g} {u} into {wood}"
        return Sight(False, f"blocked by {wood} at ({x:.2f}, {y:.2f}): {why}", dist, (x, y))
    if hides:
        return Sight(True, f"seen: inside {kind}, {dist:.2f} {u} <= {d:g} {u}", dist)
    return Sight(True, f"seen: clear line of sight, {dist:.2f} {u}", dist)


def viewshed(
    battlefield: Battlefield,
    rules: Ruleset,
    observer: tuple[float, float],
    *,
    flying: bool = False,
    height: float | None = None,
) -> np.ndarray:
    """Every cell an observer sees: a boolean grid on the battlefield's grid.

    Cell ``[row, col]`` is True when `visible` says the observer sees a
    target at the cell's centre (``battlefield.grid.rc_to_xy``); the two agree
    on every cell.  Runs on every core.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    observer : (x, y)
    flying : bool
        The observer is a flyer at Flight Height.
    height : float, optional
        Default ``rules.sight_height`` (not with ``flying``).

    Returns
    -------
    ndarray of bool, shape ``battlefield.grid.shape``

    Raises
    ------
    InputError
        The observer is off the table, a bad height, or a height given a flyer.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> bf = load_map("maps/demo.geojson")
    >>> seen = viewshed(bf, load_rules("fantasy-warlord"), (30, 40))
    >>> seen.shape == bf.grid.shape, bool(seen[80, 60])
    (True, True)
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    flying = flag("flying", flying)
    h = _height(rules, height, flying)
    grids = _grids(battlefield, rules)
    (ox, oy), (r0, c0) = _cell_of(battlefield, observer, "observer")
    if flying:  # sees all but what conceals
        return np.isinf(grids.conceal)
    free = _free(battlefield, rules, grids, h)
    out = np.empty(grids.elevation.shape, dtype=np.bool_)
    _sight.viewshed(grids.elevation, grids.conceal, *free, *grids.tiles, ox, oy, r0, c0,
                    battlefield.cell, h, out)
    return out
