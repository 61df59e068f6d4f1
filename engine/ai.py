"""What an AI opponent builds on reach and route: armies, turns, threat, flow, choices.

- `reach_army`: the reach of many units, of any profiles, on one battlefield:
  one cost grid per profile, shared by its units, searched on every core.
- `reach_turns`: for each cell, how many turns a unit needs to get there.
- `threat_map`: how many (and which) enemies can reach each cell next turn,
  and with what margin; optionally as a charge (``charge_bonus`` in the rules).
- `flow_field`: cost to a goal from every cell and the step to take, for
  travel toward it (uphill and entry costs priced in that direction), one
  field serving every unit of a profile.
- `choose_position`: the cells a unit can reach this turn, ranked by a
  weighted score of progress, cover, concealment, threat and disorder.

Turns are counted as `engine.search.route` counts them: a unit spends its
whole allowance each turn but the last, stopping wherever that runs out, and
carries nothing over; a cell whose cheapest route costs ``c`` takes
``ceil(c / allowance)`` turns.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from . import _flow, _kernels
from ._args import flag, instance, listed, point, real, whole
from .errors import InputError, NoRouteError
from .maps import Battlefield
from .rules import COVERS, Ruleset, Unit
from .search import (
    _SLACK,
    MAX_TURNS,
    Reach,
    _allowance,
    _start_cell,
    _workspace,
    reach,
    reach_many,
)
from .terrain import CostGrid, cost_grid, layers
from .visibility import viewshed

__all__ = [
    "DEFAULT_WEIGHTS",
    "FlowField",
    "Option",
    "Threat",
    "choose_position",
    "flow_field",
    "reach_army",
    "reach_turns",
    "threat_map",
]

DEFAULT_WEIGHTS: dict[str, float] = {
    "progress": 1.0,
    "cover": 1.5,
    "concealment": 3.0,
    "threat": -4.0,
    "disorder": -2.0,
}
"""Weights of `choose_position`'s parts, each multiplying a part's value:
``progress`` (table units gained toward the objective), ``cover`` (0 none, 1
light, 2 medium, 3 heavy), ``concealment`` (share of the enemies that cannot
see the cell), ``threat`` (enemies that can reach it next turn) and
``disorder`` (1 where a charge disorders the unit).  Negative weights
penalise."""


def _units(units) -> list[tuple[Unit, tuple[float, float]]]:
    out = []
    for i, item in enumerate(listed("units", units)):
        try:
            unit, xy = item
        except (TypeError, ValueError):
            unit = None
        if not isinstance(unit, Unit):
            raise InputError(f"unit {i}: expected (Unit, (x, y)), got {item!r}")
        try:
            out.append((unit, point(xy)))
        except InputError as exc:
            raise InputError(f"unit {i}: {exc}") from None
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
        try:
            _start_cell(g, xy, "position")
        except InputError as exc:
            raise InputError(f"unit {i}: {exc}") from None
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
    grid: CostGrid, at: tuple[float, float], horizon: int, allowance: float | None = None
) -> np.ndarray:
    """For each cell, the turns a unit at ``at`` needs to get there.

    0 is the unit's own cell, 1 within this turn's allowance, ``t`` where the
    cheapest route costs more than ``t - 1`` allowances and at most ``t``:
    `route`'s ``turns`` from the cell centre of ``at`` to that cell's centre.

    Parameters
    ----------
    grid : CostGrid
    at : (x, y)
    horizon : int
        Count turns up to this many (0 to 32767); cells farther are -1.
    allowance : float, optional
        Per turn, > 0; defaults to the unit's move.

    Returns
    -------
    ndarray of int16, shape ``grid.grid.shape``
        -1 where unreachable within ``horizon`` turns.

    Raises
    ------
    InputError
        ``at`` off the table or on impassable ground; a negative or
        fractional horizon; an allowance <= 0.

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
    idx, cost = _workspace(grid).within(grid, source, per_turn * int(horizon))
    out = np.full(grid.grid.shape, -1, dtype=np.int16)
    out.flat[idx] = np.maximum(np.ceil(cost / per_turn - _SLACK), 1).astype(np.int16)
    out.flat[source] = 0
    return out


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
        """How many of the enemies see each cell (`engine.visibility.viewshed`)."""
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


@dataclass(frozen=True, eq=False)
class FlowField:
    """Cost to the goal from every cell, and the step that starts its cheapest route.

    Attributes
    ----------
    grid : CostGrid
    goals : tuple of (x, y)
    cost : ndarray of float64, shape ``grid.grid.shape``
        Allowance to the nearest goal (``inf`` where unreachable, or beyond
        the field's limit).
    step : ndarray of int8
        Index into ``grid.steps`` of the step to take (-1 at a goal and where
        unreachable).
    limit : float
        The field's limit (`flow_field`): cells dearer than it are ``inf``.
    """

    grid: CostGrid
    goals: tuple
    cost: np.ndarray
    step: np.ndarray
    limit: float = math.inf

    def cost_at(self, xy: tuple[float, float]) -> float:
        """Cost from the cell holding ``xy`` to the nearest goal."""
        return float(self.cost[self.grid.grid.xy_to_rc(xy)])

    def path_from(self, xy: tuple[float, float]) -> list[tuple[float, float]]:
        """Cell centres from the cell holding ``xy`` down the field to its goal.

        Raises
        ------
        NoRouteError
            No goal can be reached from there.
        """
        spec = self.grid.grid
        r, c = spec.xy_to_rc(xy)
        if math.isinf(self.cost[r, c]):
            raise NoRouteError(f"no goal of the flow field can be reached from "
                               f"({xy[0]:g}, {xy[1]:g}) for {self.grid.unit.race}")
        st = self.grid.steps
        out = [spec.rc_to_xy((r, c))]
        while self.step[r, c] >= 0:
            k = self.step[r, c]
            r, c = r + int(st.dr[k]), c + int(st.dc[k])
            out.append(spec.rc_to_xy((r, c)))
        return out


def flow_field(
    grid: CostGrid, goals: Sequence[tuple[float, float]], limit: float = math.inf
) -> FlowField:
    """A field every cell can follow to the nearest goal along its cheapest route.

    Built backwards from the goals over reversed steps, each priced in the
    direction of travel toward the goal (uphill on steep ground, flat entry
    costs), so following it from a cell spends the field's cost there (to the
    last bits of rounding), which is `route`'s cost to the goal, for a unit
    without rear ranks.  Of equally cheap steps a cell's is the lowest-numbered.
    Each of numba's threads searches a band of rows; the bands then mend each
    other's costs across their borders (a second round, then one search over
    the whole grid for whatever is left), giving one search's costs.  A band
    with no goal in it or a step from it waits for the others' offers: on two
    threads the two bands meet at a goal's row instead, so both start at once,
    and they share the work evenly when that row is near the middle.

    A unit with rear ranks (``depth > 0``) pays for ground still under its
    footprint, which depends on the path it came by, not only on the cell;
    its field prices the front alone: a lower bound of its route's cost, and
    the route it leads along may cost that unit more (price it with
    `price_path`).  Likewise ground priced per started quantum (Battlesystem's
    light woods) is priced smoothly here; `price_path` rounds it.

    Parameters
    ----------
    grid : CostGrid
    goals : sequence of (x, y)
        One goal or several (the field leads to the nearest).
    limit : float
        Costs above it are not searched (``inf``: the whole battlefield).

    Returns
    -------
    FlowField

    Raises
    ------
    InputError
        No goals, a goal off the table or on impassable ground, a negative limit.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid, route
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/demo.geojson"), rules, rules.unit("humans", depth=0))
    >>> f = flow_field(g, [(90.25, 30.25)])
    >>> round(f.cost_at((20.25, 20.25)), 6), round(route(g, (20.25, 20.25), (90.25, 30.25)).cost, 6)
    (71.231056, 71.231056)
    >>> len(f.path_from((20.25, 20.25)))
    81
    """
    instance("grid", grid, CostGrid, "cost_grid")
    points = listed("goals", goals)
    if not points:
        raise InputError("a flow field needs at least one goal")
    if not real(limit) or math.isnan(limit) or limit < 0:
        raise InputError(f"limit must be a number >= 0, got {limit!r}")
    cells = []
    for i, xy in enumerate(points):
        try:
            cells.append(_start_cell(grid, xy, "goal"))
        except (InputError, TypeError, ValueError) as exc:
            raise InputError(f"goal {i}: {exc}") from None
    field = _costs_to(grid, np.array(cells, dtype=np.int64), float(limit))
    if field is None:
        raise InputError(f"the flow field's queue would outgrow {_kernels.STACK_LIMIT:,} "
                         f"entries: its {grid.kernel_args.nb:,} buckets (the dearest step "
                         "against the shortest) are too many; use inf for ground nobody enters")
    dist, step = field
    shape = grid.grid.shape
    return FlowField(grid, tuple((float(x), float(y)) for x, y in points), dist.reshape(shape),
                     step.reshape(shape), float(limit))


def _costs_to(grid: CostGrid, cells: np.ndarray, limit: float = math.inf
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """`flow_field`'s costs and steps (flat rows) to the nearest of some cells (flat
    indices, int64, on passable ground; not checked), or None if the queue would
    outgrow `_kernels.STACK_LIMIT` (a bucket holds the cells as they start)."""
    a = grid.kernel_args
    n = grid.base.size
    bounds = _bands(grid.grid.shape[0], numba.get_num_threads(), int(np.abs(a.step_dr).max()),
                    cells // a.cols) * a.cols
    bands = len(bounds) - 1
    width = _kernels.stack_width(n, a.nb)
    entries = np.uint32 if n <= _flow.PACKED_CELLS else np.uint64  # a cell and its step
    while True:  # a bucket that outgrows its row of a stack: again, with room
        dist = np.full(n, np.inf)
        step = np.full(n, -1, dtype=np.int8)
        if _flow.reverse_field(
            *a[:17], a.nb, a.flat, a.flat_of, a.enter, a.narrow, *grid.incoming_steps,
            a.onward_start, a.onward, cells, limit + _SLACK, bounds, dist, step,
            np.empty((bands, a.nb, width), dtype=entries),
        ) >= 0:
            return dist, step
        width *= 2
        if a.nb * width > _kernels.STACK_LIMIT:
            return None


def _bands(rows: int, threads: int, reach: int, goal_rows: np.ndarray) -> np.ndarray:
    """First rows of the flow kernel's bands, and the end: one band per thread, each
    at least four steps (``reach`` rows) tall.  Two bands meet at the goal row
    nearest the middle when one of them would otherwise have no goal in it or a
    step from it (it would wait for the other's offers)."""
    tall = 4 * reach
    bands = max(1, min(threads, rows // tall))
    edges = np.linspace(0, rows, bands + 1).astype(np.int64)
    if bands == 2:
        mid = edges[1]
        if not ((goal_rows < mid + reach).any() and (goal_rows >= mid - reach).any()):
            nearest = goal_rows[np.argmin(np.abs(goal_rows - mid))]
            edges[1] = min(max(nearest, tall), rows - tall)
    return edges


@dataclass(frozen=True)
class Option:
    """One place a unit could move to this turn, scored.

    Attributes
    ----------
    at : (x, y)
        The cell centre.
    cost : float
        Allowance spent to get there.
    score : float
        Sum of `parts`.
    parts : dict of str to float
        Each part's weighted contribution (`DEFAULT_WEIGHTS` names them).
    reasons : tuple of str
        One line per part that contributes.
    """

    at: tuple[float, float]
    cost: float
    score: float
    parts: dict
    reasons: tuple[str, ...]

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"at": [round(v, 6) for v in self.at], "cost": round(self.cost, 6),
                "score": round(self.score, 6),
                "parts": {k: round(v, 6) for k, v in self.parts.items()},
                "reasons": list(self.reasons)}


def _ground(battlefield: Battlefield, rules: Ruleset, close_order: bool):
    """Per cell: cover level (0 none, then `COVERS` + 1) and the kind giving it (-1 none),
    and the kind whose charge disorders (-1 none); cached on the battlefield."""
    key = ("ai-ground", id(rules), close_order)
    cached = battlefield._cache.get(key)
    if cached is not None:
        return cached
    lay = layers(battlefield, rules)
    level = np.zeros(lay.grid.shape, dtype=np.int8)
    cover_from = np.full(lay.grid.shape, -1, dtype=np.int16)
    disorder_from = np.full(lay.grid.shape, -1, dtype=np.int16)
    for i, name in enumerate(lay.kinds):
        e = rules.terrain[name].effects
        on = (lay.mask >> np.uint64(i) & np.uint64(1)).astype(bool)
        if e.cover is not None:
            better = on & (COVERS.index(e.cover) + 1 > level)
            level[better] = COVERS.index(e.cover) + 1
            cover_from[better] = i
        if e.disorders == "any" or (e.disorders == "close order" and close_order):
            disorder_from[on & (disorder_from < 0)] = i
    battlefield._cache[key] = result = (lay.kinds, level, cover_from, disorder_from)
    return result


def _weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    out = dict(DEFAULT_WEIGHTS)
    if weights is not None and not isinstance(weights, Mapping):
        raise InputError(f"weights must be a mapping of names to numbers, got "
                         f"{type(weights).__name__}")
    for name, w in (weights or {}).items():
        if name not in DEFAULT_WEIGHTS:
            raise InputError(f"unknown weight {name!r}; valid: {', '.join(DEFAULT_WEIGHTS)}")
        if not real(w) or not math.isfinite(w):
            raise InputError(f"weight {name} must be a finite number, got {w!r}")
        out[name] = float(w)
    return out


def choose_position(
    grid: CostGrid,
    at: tuple[float, float],
    flow: FlowField | None = None,
    threat: Threat | None = None,
    *,
    allowance: float | None = None,
    weights: Mapping[str, float] | None = None,
    top: int = 3,
    avoid: Sequence[tuple[float, float]] = (),
    spacing: float | None = None,
    close_order: bool = True,
) -> list[Option]:
    """The best few cells a unit can reach this turn, by a weighted score, with reasons.

    Each reachable cell scores the sum of ``weight * value`` over the parts
    of `DEFAULT_WEIGHTS`: progress toward ``flow``'s goals along cheapest
    routes (its cost here minus its cost at the cell; cells from which no
    goal is reachable are left out), the cover of the cell's terrain
    (walls, hedges and fences count for the cells their strip covers),
    concealment (share of ``threat``'s enemies whose viewshed misses the
    cell), threat (``threat.count``) and disorder (a charge in the cell
    would disorder the unit).  Ties go to the cheaper cell.

    Parameters
    ----------
    grid : CostGrid
    at : (x, y)
    flow : FlowField, optional
        Toward the objective; without it progress is 0.  Built for this
        unit's profile (``flow.grid`` the same grid).
    threat : Threat, optional
        The enemy; without it concealment and threat are 0.
    allowance : float, optional
        Defaults to the unit's move.
    weights : mapping of str to float, optional
        Overrides of `DEFAULT_WEIGHTS` (any subset).
    top : int
        How many options to return (>= 1).
    avoid : sequence of (x, y)
        Points (friends' positions, say) no option may be within ``spacing`` of.
    spacing : float, optional
        Least distance between options, and from ``avoid``; default the
        unit's frontage, at least one cell.
    close_order : bool
        The unit fights in close order (woods and fens disorder only those).

    Returns
    -------
    list of Option
        Best first, at least ``spacing`` apart; fewer than ``top`` if the
        reach holds fewer such cells.

    Raises
    ------
    InputError
        Bad position, allowance, weights, ``top`` or ``spacing``; a flow
        field or threat map from another battlefield or profile.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/demo.geojson"), rules, rules.unit("humans", depth=0))
    >>> best = choose_position(g, (20, 20), flow_field(g, [(90, 30)]))[0]
    >>> best.cost <= 20, best.parts["progress"] > 19
    (True, True)
    """
    instance("grid", grid, CostGrid, "cost_grid")
    close_order = flag("close_order", close_order)
    w = _weights(weights)
    if not whole(top) or top < 1:
        raise InputError(f"top must be a whole number >= 1, got {top!r}")
    spec = grid.grid
    if spacing is None:
        spacing = max(grid.unit.frontage, spec.cell)
    if not real(spacing) or not math.isfinite(spacing) or spacing < 0:
        raise InputError(f"spacing must be a finite number >= 0, got {spacing!r}")
    if flow is not None:
        instance("flow", flow, FlowField, "flow_field")
    if threat is not None:
        instance("threat", threat, Threat, "threat_map")
    if flow is not None and flow.grid is not grid:
        raise InputError("the flow field was built for another cost grid (unit or battlefield)")
    if threat is not None and threat.battlefield is not grid.battlefield:
        raise InputError("the threat map is of another battlefield")
    r = reach(grid, at, allowance)
    cells, cost = r.cells, r.cost
    kinds, level, cover_from, disorder_from = _ground(grid.battlefield, grid.rules, close_order)
    values = {name: np.zeros(len(cells)) for name in DEFAULT_WEIGHTS}
    if flow is not None:
        here = flow.cost.flat[_start_cell(grid, at, "start")]
        there = flow.cost.flat[cells]
        if math.isinf(here) and math.isfinite(flow.limit):
            raise InputError(f"the unit at ({at[0]:g}, {at[1]:g}) is beyond the flow field's "
                             f"limit ({flow.limit:g}): no progress can be measured; build it "
                             "with a larger limit")
        if math.isfinite(here):
            keep = np.isfinite(there)
            cells, cost, there = cells[keep], cost[keep], there[keep]
            values = {name: v[keep] for name, v in values.items()}
            values["progress"] = here - there
    values["cover"] = level.flat[cells].astype(float)
    values["disorder"] = (disorder_from.flat[cells] >= 0).astype(float)
    n_enemies = 0 if threat is None else len(threat.enemies)
    if n_enemies:
        values["concealment"] = 1.0 - threat.seen_by.flat[cells] / n_enemies
        values["threat"] = threat.count.flat[cells].astype(float)
    with np.errstate(over="ignore", invalid="ignore"):
        score = sum(w[name] * v for name, v in values.items())
    if not np.isfinite(score).all():
        raise InputError("the weights are too large: a score overflows")
    order = np.lexsort((cost, -score))
    cols = spec.shape[1]
    xs = (cells % cols + 0.5) * spec.cell
    ys = (cells // cols + 0.5) * spec.cell
    taken = [point(xy) for xy in listed("avoid", avoid)]
    units = grid.battlefield.units
    out = []
    for j in order:
        xy = (float(xs[j]), float(ys[j]))
        if any(math.dist(xy, p) < spacing for p in taken):
            continue
        taken.append(xy)
        parts = {name: w[name] * float(v[j]) for name, v in values.items()}
        reasons = []
        gain = values["progress"][j]
        if gain:
            way = "closer to" if gain > 0 else "farther from"
            reasons.append(f"{abs(gain):.2f} {units} {way} the objective")
        if level.flat[cells[j]]:
            reasons.append(f"{COVERS[level.flat[cells[j]] - 1]} cover from "
                           f"{kinds[cover_from.flat[cells[j]]]}")
        if n_enemies:
            seen = int(threat.seen_by.flat[cells[j]])
            reasons.append(f"seen by {seen} of {n_enemies} enemies")
            hit = int(threat.count.flat[cells[j]])
            if hit:
                reasons.append(f"{hit} enem{'y' if hit == 1 else 'ies'} can reach it next turn "
                               f"(margin up to {threat.margin.flat[cells[j]]:.2f} {units})")
        if disorder_from.flat[cells[j]] >= 0:
            reasons.append(f"a charge here is disordered ({kinds[disorder_from.flat[cells[j]]]})")
        out.append(Option(xy, float(cost[j]), float(score[j]), parts, tuple(reasons)))
        if len(out) == top:
            break
    return out
