"""Many units at once: the reach of an army, and the turns a unit needs.

- `reach_army`: the reach of many units, of any profiles, on one battlefield:
  one cost grid per profile, shared by its units, searched on every core.
- `reach_turns`: for each cell, how many turns a unit needs to get there.

`reach_turns` counts a cell whose cheapest route costs ``c`` as
``ceil(c / allowance)`` turns: what `engine.route` counts for a unit without
rear ranks where the way costs nothing at once and no quantum (see
`engine.search.turns`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._args import flag, instance, listed, named, named_point, whole
from ..errors import InputError
from ..maps.battlefield import Battlefield
from ..rules.ruleset import Ruleset, Unit
from ..search.front import (
    _SLACK,
    Reach,
    _allowance,
    _start_cell,
    reach,
    reach_many,
)
from ..search.turns import MAX_TURNS
from ..terrain.costgrid import CostGrid, cost_grid

__all__ = ["reach_army", "reach_turns"]


def _units(units) -> list[tuple[Unit, tuple[float, float]]]:
    out = []
    for i, item in enumerate(listed("units", units)):
        try:
            unit, xy = item
        except (TypeError, ValueError):
            unit = None
        if not isinstance(unit, Unit):
            raise InputError(f"unit {i}: expected (Unit, (x, y)), got {item!r}")
        out.append((unit, named_point(f"unit {i}", xy)))
    return out


def reach_army(
    battlefield: Battlefield,
    rules: Ruleset,
    units: Sequence[tuple[Unit, tuple[float, float]]],
    *,
    charge: bool = False,
    directions: int = 32,
) -> list[Reach]:
    """`reach` of many units on one battlefield, each with its own allowance.

    Units of one profile (same `Unit.key` and move) share one cost grid and
    are searched together on every core (`engine.search.reach_many`); the
    answers equal one `reach` per unit.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    units : sequence of (Unit, (x, y))
        Each unit (from ``rules.unit``) and its position.
    charge : bool
        Each allowance is the unit's move plus its ``charge_bonus``.
    directions : int
        Steps of the search neighbourhood (see `engine.terrain.cost_grid`).

    Returns
    -------
    list of Reach
        In the order of ``units``.

    Raises
    ------
    InputError
        An entry that is not ``(Unit, (x, y))``, or a position off the table
        or on ground its unit cannot enter (named by its index).

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/demo.geojson")
    >>> army = [(rules.unit("humans"), (20, 20)), (rules.unit("goblins"), (20, 60)),
    ...         (rules.unit("humans"), (60, 100))]
    >>> [r.allowance for r in reach_army(bf, rules, army)]
    [20.0, 22.0, 20.0]
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    charge = flag("charge", charge)
    pairs = _units(units)
    groups: dict[tuple, list[int]] = {}
    grids = []
    for i, (unit, xy) in enumerate(pairs):
        g = cost_grid(battlefield, rules, unit, directions)
        named(f"unit {i}", _start_cell, g, xy, "position")
        grids.append(g)
        allowance = unit.move + (unit.charge_bonus if charge else 0.0)
        groups.setdefault((unit.key, allowance), []).append(i)
    out: list[Reach | None] = [None] * len(pairs)
    for (_, allowance), members in groups.items():
        found = reach_many(grids[members[0]], [pairs[i][1] for i in members], allowance)
        for i, r in zip(members, found, strict=True):
            out[i] = r
    return out


def reach_turns(
    grid: CostGrid, at: tuple[float, float], horizon: int, allowance: float | None = None,
    *, any_angle: bool = True,
) -> np.ndarray:
    """For each cell, the turns a unit at ``at`` needs to get there.

    0 is the unit's own cell, 1 within this turn's allowance, ``t`` where the
    cheapest route (to that cell's centre; on the step lattice, from the
    centre of the cell of ``at``) costs more than ``t - 1`` allowances and at
    most ``t``.  That is `route`'s ``turns`` for a unit without rear ranks
    where the way costs nothing at once (an obstacle, a formation change) and
    no quantum; there a turn may have to stop short, and the route takes
    more (and with rear ranks each turn stands them afresh, so a turn may cost
    more or less than its share of the route).

    Parameters
    ----------
    grid : CostGrid
    at : (x, y)
    horizon : int
        Count turns up to this many (0 to 32767); cells farther are -1.
    allowance : float, optional
        Per turn, > 0; defaults to the unit's move.
    any_angle : bool
        As `engine.search.reach`'s.

    Returns
    -------
    ndarray of int16, shape ``grid.grid.shape``
        -1 where unreachable within ``horizon`` turns.

    Raises
    ------
    InputError
        ``at`` off the table or on impassable ground; a negative or
        fractional horizon; an allowance <= 0, or so large that ``horizon``
        turns of it are more than a float holds.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/examples/goblins.geojson"), rules, rules.unit("goblins"))
    >>> t = reach_turns(g, (0.25, 3.25), 3)
    >>> [int(t[g.grid.xy_to_rc((x, 3.25))]) for x in (0.25, 13.25, 24.25, 30.25, 39.75)]
    [0, 1, 2, 3, -1]
    """
    instance("grid", grid, CostGrid, "cost_grid")
    if not whole(horizon) or horizon < 0 or horizon > MAX_TURNS:
        raise InputError(f"horizon must be a whole number of turns from 0 to {MAX_TURNS}, "
                         f"got {horizon!r}")
    per_turn = _allowance(grid, allowance)
    if per_turn <= 0:
        raise InputError(f"allowance must be > 0 to count turns, got {per_turn:g}")
    source = _start_cell(grid, at, "start")
    if not math.isfinite(per_turn * int(horizon)):
        raise InputError(f"{int(horizon)} turns of {per_turn:g} is more than a number can hold")
    r = reach(grid, at, per_turn * int(horizon), any_angle=any_angle)
    out = np.full(grid.grid.shape, -1, dtype=np.int16)
    out.flat[r.cells] = np.maximum(np.ceil(r.cost / per_turn - _SLACK), 1).astype(np.int16)
    out.flat[source] = 0
    return out
