"""Reach and route: the public face of the numba search.

Positions are table points.  By default (``any_angle=True``) a unit is
measured as a tape measure measures: from its own point, a cell's parent may
be any earlier cell in straight sight (`_kernels.theta_search`; with rear
ranks `_kernels.theta_labels`, which keeps every path no other beats, each
with the trail of ground its ranks still stand on; on ground priced per
started quantum, the paths kept are then rounded, `_quantised_moves`), and
`Reach.cost_at` prices the last straight move to the point asked about.  A
route with rear ranks, and any search with ``any_angle=False``, runs on the
step lattice from the centre of the cell the start stands in
(`CostGrid.stand`): `reach` answers per cell, and `route` joins the exact
start and goal to the cell-centre path.  With ``any_angle``, `route` then
straightens the path it found by its price (`_kernels.straighten`; with rear
ranks `_ranked_moved`), and takes the path an any-angle reach prices the goal
along if cheaper (to a goal within a turn, the turn's reach; farther, with rear
ranks, a reach aimed at the goal: `_by_reach`).  Either way a route is priced
whole as `price_path` prices it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._args import flag, instance, listed, named, non_negative, point
from .._threads import on_threads, thread_count
from ..errors import InputError, NoRouteError
from ..terrain.costgrid import CostGrid
from . import _kernels
from ._state import (
    _SLACK,
    _KeptLabels,
    _many_workspace,
    _near_quanta,
    _quantised_moves,
    _theta_many,
    _theta_within,
    _workspace,
)
from .bends import _across_tries, _bendable, _levelled, _ranked_moved
from .paths import _faced, _searched, _stands_clean, _weighed
from .pricing import Leg, _path_cost, _price
from .turns import route_turns

__all__ = ["Reach", "Route", "reach", "reach_many", "route"]


def _start_cell(g: CostGrid, xy, what: str) -> int:
    """The flat index of the cell a unit at ``xy`` stands in (`CostGrid.stand`);
    `InputError` naming the point as ``what`` if that is impassable."""
    r, c = g.stand(xy)
    if g.base[r, c] == math.inf:
        kinds = ", ".join(g.combos[g.combo[r, c]]) or "ground"
        raise InputError(f"{what} ({float(xy[0]):g}, {float(xy[1]):g}) is on impassable "
                         f"ground ({kinds})")
    return r * g.grid.shape[1] + c


def _allowance(g: CostGrid, allowance: float | None) -> float:
    return non_negative("allowance", g.unit.move if allowance is None else allowance)


def _theta_reach(g: CostGrid, source: int, xy: tuple, budget: float) -> Reach:
    """The any-angle reach within ``budget`` of the point ``xy`` (in cell ``source``),
    searched in the workspace of ``g``'s battlefield (`_theta_within`)."""
    return _theta_answer(g, xy, budget, _theta_within(g, source, xy, budget))


def _theta_answer(g: CostGrid, xy: tuple, budget: float, found: tuple) -> Reach:
    """The `Reach` of an any-angle search's answer ``found`` (`_theta_within`'s) from
    the point ``xy``, its paths priced again where ground is charged per started
    quantum near it (`_quantised_moves`)."""
    if _near_quanta(g, xy, budget):
        found = _quantised_moves(g, xy, budget, *found)
    return Reach(g, xy, budget, *found)


@dataclass(frozen=True, eq=False)
class Reach:
    """Every cell a unit can get to this turn, and what each costs.

    Attributes
    ----------
    grid : CostGrid
    start : (x, y)
    allowance : float
    cells : ndarray of int64
        Flat indices (``row * cols + col``) of the cells whose centre is within
        reach (and the start's own cell), cheapest first.
    cost : ndarray of float64
        Allowance spent to reach the centre of each of `cells` (the start's
        own cell: 0, at the start).
    parent : ndarray of int64 or None
        For an any-angle reach, the cell each of `cells` is reached from in
        one straight move (-1: from the start); None for a reach on the step
        lattice.
    """

    grid: CostGrid
    start: tuple[float, float]
    allowance: float
    cells: np.ndarray
    cost: np.ndarray
    parent: np.ndarray | None = None
    _labels: _KeptLabels | None = field(default=None, repr=False)

    @property
    def remaining(self) -> np.ndarray:
        """Allowance left in each of `cells`."""
        return np.maximum(self.allowance - self.cost, 0.0)

    @property
    def area(self) -> float:
        """Table area reachable, in table units squared."""
        return len(self.cells) * self.grid.grid.cell ** 2

    @functools.cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`cells`, `cost` and `parent` (-1 where there is none) by cell."""
        order = np.argsort(self.cells)
        parent = np.full(order.size, -1) if self.parent is None else self.parent[order]
        return self.cells[order], self.cost[order], parent

    def _found(self, flat: np.ndarray) -> np.ndarray:
        """Where each of the flat indices ``flat`` is in `_sorted`, -1 if not reached."""
        cells = self._sorted[0]
        if not len(cells):
            return np.full(len(flat), -1)
        i = np.minimum(np.searchsorted(cells, flat), len(cells) - 1)
        return np.where(cells[i] == flat, i, -1)

    def cost_at(self, xy: tuple[float, float]) -> float:
        """Cost to reach the point ``xy``; ``inf`` if it is out of reach.

        An any-angle reach prices a path to the point itself: the last straight move from
        the reached cells around it, or the cells they are reached from, whichever is
        cheapest (on open ground, the distance from the start).  Where that path bends, its
        bends are moved to where they cost least, as `route` moves a route's (to the outer
        corners of impassable ground, to where crossing a terrain edge is cheapest), with
        two sweeps of the route's search for them (`_POINT_SWEEPS`: the second may bend
        each move again, as along a terrain edge from heavier ground), then with a bend on
        each terrain edge it crosses, moved along the edge, and at the corners of heavier
        ground it skirts (`_across_tries`); with rear ranks, the paths are priced whole,
        the bends a straight move makes no dearer are dropped, they are moved as without
        ranks where that is cheaper (so too on ground priced per started quantum, its
        rounding included), each pair of moves is tried in the other order (a climb is
        cheaper last, the ranks behind still below it), and where the ranks standing at the
        start could stand on heavier ground, a first step a hair long in each of 32
        directions is tried to face them (`_faced`, as `route` does).  Either way the
        first bend is also tried on the contour line through the start, and the last on
        the one through ``xy``, where that is cheaper (`_levelled`: climbing pays over
        every inch of a move that gains height, so a move exactly level along a slope
        can be the cheapest).  Near the edge of the
        reach (a path dearer than the allowance over `_BENDS_SAVE`) the paths are those of
        a reach to `_BENDS_SAVE` times the allowance, searched once: a path there can run
        by cells whose centres cost more than the allowance along the search's paths, which
        bend at cell centres.  Where ground priced per started quantum lies within the
        allowance of the start (`_near_quanta`), the path `route`'s own search finds to
        ``xy`` (`_searched`) is priced too, and its price taken where it is lower: the
        reach's search runs on the smooth multiplier, and a way that starts fewer quanta
        (round a wood's edge, say) can be one it misses.  So too where the reach's paths
        price ``xy`` past the allowance but within `_BENDS_SAVE` times it: the route's
        search may find a way within it.  A reach on the step lattice answers the cost of
        the cell ``xy`` stands in (`CostGrid.stand`).
        """
        xy = point(xy)
        self.grid.grid.xy_to_rc(xy)  # on the table
        if self.parent is None:
            j = int(self._found(np.array([self.grid.stand_index(xy)]))[0])
            return math.inf if j < 0 else float(self._sorted[1][j])
        found, past = self._within(xy)
        cost = math.inf if found is None else found[1]
        g, within = self.grid, self.allowance + _SLACK
        if within < math.inf and math.dist(self.start, xy) * g.least <= within and (
                _near_quanta(g, self.start, self.allowance) or past):
            cost = min(cost, self._as_routed(xy, found))
        return cost

    def _as_routed(self, xy, best: tuple | None) -> float:
        """The price of the path `route` takes from the start to ``xy``, given this
        reach's (``best``, `_best_within`'s) if it is within the allowance, else
        ``inf``: its own search's path (`_searched`) or this reach's, if cheaper,
        straightened (`_weighed`), and with rear ranks faced (`_faced`)."""
        g = self.grid
        target = g.stand_index(xy)
        if g.base.flat[target] == math.inf:
            return math.inf
        found = _searched(g, self._home, self.start, target, xy)
        if found is None:
            return math.inf
        taken = _weighed(g, best, found)
        if g.depth > 0 and taken is not found:
            taken = _faced(g, taken)
        return taken[1].cost if taken[1].cost <= self.allowance + _SLACK else math.inf

    def _best_within(self, xy) -> tuple[list, float] | None:
        """`_best_path` to ``xy`` within the allowance, or None.  Near the edge of the
        reach (a path dearer than the allowance over `_BENDS_SAVE`) it is the
        `_wide` reach's: the path there may run through cells whose centres the
        reach's own search, bending at cell centres, prices over the allowance."""
        return self._within(xy)[0]

    def _within(self, xy) -> tuple[tuple[list, float] | None, bool]:
        """`_best_within`'s answer, and whether it is None only because ``xy`` is just
        past the allowance (the `_wide` reach prices it within `_BENDS_SAVE` times
        that)."""
        found = self._best_path(xy)
        if self.allowance == math.inf or (found is not None and found[1] * _BENDS_SAVE
                                          <= self.allowance):
            return found, False
        if math.dist(self.start, xy) * self.grid.least > self.allowance + _SLACK:
            return None, False
        wide = self._wide._best_path(xy)
        if wide is not None and wide[1] <= self.allowance + _SLACK and (
                found is None or wide[1] < found[1]):
            return wide, False
        return found, found is None and wide is not None

    @functools.cached_property
    def _wide(self) -> Reach:
        """This any-angle reach searched on to `_BENDS_SAVE` times its allowance."""
        budget = self.allowance * _BENDS_SAVE
        return _theta_reach(self.grid, self._home, self.start, budget)

    def _around(self, xy) -> tuple[np.ndarray, np.ndarray]:
        """An any-angle reach's nodes a last straight move to ``xy`` may start from:
        the reached cells around the cell of ``xy`` and the cells they are reached
        from, and their costs."""
        j = self._found(_block(self.grid, xy))
        j = j[j >= 0]
        cells, cost, parent = self._sorted[0][j], self._sorted[1][j], self._sorted[2][j]
        up = self._found(parent)
        return (np.concatenate([cells, parent[up >= 0]]),
                np.concatenate([cost, self._sorted[1][up[up >= 0]]]))

    def _last_moves(self, xy, nodes: np.ndarray, costs: np.ndarray) -> np.ndarray:
        """For each node, its cost plus the straight move from it to ``xy`` (``inf`` for
        one that cannot be the least, `_kernels.point_cost`)."""
        g, a = self.grid, self.grid.kernel_args
        xs, ys = self._where(nodes)
        out = np.empty(len(nodes))
        _kernels.point_cost(xy[0], xy[1], xs, ys, nodes, costs, a.base, a.steep, a.slope_of,
                            a.slopes, a.enter, a.narrow, g.clearance, a.cols, g.cell, out)
        return out

    def _best_path(self, xy) -> tuple[list, float] | None:
        """The path an any-angle reach prices ``xy`` along (`cost_at`) and its price,
        or None if ``xy`` is out of reach.

        The path is the straight move from the start, or, if cheaper, runs from
        the start through the centres of the cells the cheapest last move to
        ``xy`` leaves from and is reached through.  Where that bends, or is a
        straight move over dearer ground than the least (`_bendable`), its bends
        are moved, where it is cheaper, to the outer corners of impassable cells
        near it and then to where they cost least (`_across_tries`: `_POINT_SWEEPS`
        sweeps of `_kernels.corners.refine`, then a bend on each terrain edge it crosses, then
        the corners of heavier ground it skirts), then its first and last bends onto the
        contour lines through its ends (`_levelled`).
        That saves at most a few percent, so a point whose path costs more than
        `_BENDS_SAVE` times the allowance is not tried.  With rear ranks,
        `_ranked_path`.
        """
        if self._labels is not None:
            return self._ranked_path(xy)
        end = (float(xy[0]), float(xy[1]))
        nodes, costs = self._around(xy)
        each = self._last_moves(end, np.append(nodes, self._home), np.append(costs, 0.0))
        k = int(np.argmin(each))
        cost = float(each[k])
        if each[-1] <= cost:  # straight there from the start
            points = [self.start, end] if end != self.start else [end]
            if len(points) == 2 and _bendable(self.grid, points, cost) and (
                    cost <= self.allowance * _BENDS_SAVE + _SLACK):
                bent, other = _across_tries(self.grid, points, _POINT_SWEEPS)[-1]
                if other < cost:
                    points, cost = bent, other
        elif cost <= self.allowance * _BENDS_SAVE + _SLACK:
            chain = [int(nodes[k])]
            while (up := int(self._sorted[2][self._found(np.array(chain[-1:]))[0]])) >= 0:
                chain.append(up)
            xs, ys = self._where(np.array(chain[::-1]))
            points = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
            points, cost = _across_tries(
                self.grid, points if points[-1] == end else [*points, end], _POINT_SWEEPS)[-1]
        else:
            return None
        if cost <= self.allowance * _BENDS_SAVE + _SLACK:
            points, cost = _levelled(self.grid, points, cost)
        return (points, cost) if cost <= self.allowance + _SLACK else None

    def _ranked_path(self, xy) -> tuple[list, float] | None:
        """`_best_path` for a unit with rear ranks: the cheapest of the paths the reach
        kept to the cells around ``xy`` and to the cells those are reached from, each
        with a last straight move to ``xy``, and the straight move from the start,
        each priced whole (`price_path`'s walk: a move's price depends on the trail
        the path before it left), the cheapest first by a bound that no path beats
        (its cost so far plus the last move's length); then without the bends a
        straight move over them makes no dearer, and with its bends moved where a
        unit without ranks would move them if that is cheaper (`_ranked_moved`): the
        cheapest, or where the reach kept the step lattice's paths too
        (`_with_lattice`), the cheapest of each search's, and the cheaper of
        those, its first and last bends then tried on the contour lines through its
        ends (`_levelled`)."""
        end = (float(xy[0]), float(xy[1]))
        kept, g = self._labels, self.grid
        there = np.flatnonzero(np.isin(kept.cell, _block(g, end)))
        up = kept.prev[there]
        labels = np.unique(np.concatenate([[0], there, up[up >= 0]]))
        xs, ys = self._label_xy(labels)
        bound = kept.cost[labels] + np.hypot(xs - end[0], ys - end[1])
        found: dict[bool, tuple[float, list]] = {}  # the cheapest of each search's paths
        least = self.allowance * _BENDS_SAVE + _SLACK
        for j in np.argsort(bound, kind="stable"):
            if bound[j] > least:
                break
            chain = [int(labels[j])]
            while kept.prev[chain[-1]] >= 0:
                chain.append(int(kept.prev[chain[-1]]))
            px, py = self._label_xy(np.array(chain[::-1]))
            points = [(float(x), float(y)) for x, y in zip(px, py, strict=True)]
            if points[-1] != end:
                points.append(end)
            if len(points) == 1:
                return points, 0.0
            cost = _path_cost(g, points)
            tree = 0 <= kept.lattice <= labels[j]
            if tree not in found or cost < found[tree][0]:
                found[tree] = (cost, points)
            least = min(least, cost)
        if not found:
            return None
        # Where the bends of a path dearer than the cheapest can be moved to may be
        # cheaper still: the cheapest path of each search's is tried.
        best = _levelled(g, *min((_ranked_moved(g, points, cost, _POINT_SWEEPS)
                                  for cost, points in found.values()), key=lambda b: b[1]))
        if len(best[0]) > 1 and self._facings_matter:  # a first step may face the ranks
            faced = _faced(g, (best[0], *_price(g, best[0], pieces=False, checked=True)))
            if faced[1].cost < best[1]:
                best = (faced[0], faced[1].cost)
        return best if best[1] <= self.allowance + _SLACK else None

    @functools.cached_property
    def _facings_matter(self) -> bool:
        """Whether the rear ranks, standing at the start, may stand on ground heavier than
        the start's, facing some way (`_faced` then tries a first step a hair long)."""
        return not _stands_clean(self.grid, *self.start)

    def _label_xy(self, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where labels of a reach with rear ranks stand (`_KeptLabels`)."""
        return self._labels.x[labels], self._labels.y[labels]

    @functools.cached_property
    def _home(self) -> int:
        """The flat index of the cell the start stands in (`CostGrid.stand`)."""
        return self.grid.stand_index(self.start)

    def _where(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the nodes of cells ``nodes`` stand: their centres, the start for its cell."""
        cell, cols = self.grid.cell, self.grid.grid.shape[1]
        xs = (nodes % cols + 0.5) * cell
        ys = (nodes // cols + 0.5) * cell
        home = nodes == self._home
        xs[home], ys[home] = self.start
        return xs, ys

    def reachable(self, xy: tuple[float, float]) -> bool:
        """True if the unit can get to ``xy`` this turn."""
        return self.cost_at(xy) < math.inf

    def to_array(self) -> np.ndarray:
        """Dense ``(rows, cols)`` cost grid, ``inf`` where out of reach."""
        out = np.full(self.grid.grid.shape, np.inf)
        out.flat[self.cells] = self.cost
        return out


def _block(g: CostGrid, xy) -> np.ndarray:
    """The flat indices of the cell the point ``xy`` is in and of the cells around it
    (3 by 3, clipped to the table)."""
    r, c = g.grid.xy_to_rc(xy)
    rows, cols = g.grid.shape
    return np.array([rr * cols + cc for rr in range(max(r - 1, 0), min(r + 2, rows))
                     for cc in range(max(c - 1, 0), min(c + 2, cols))])


def reach(grid: CostGrid, at: tuple[float, float], allowance: float | None = None, *,
          any_angle: bool = True) -> Reach:
    """Every cell within the allowance of ``at``, with its cost.

    The search touches only cells within the allowance and reuses its
    workspace between queries.

    Parameters
    ----------
    grid : CostGrid
        From `cost_grid`.
    at : (x, y)
        The unit's position (middle of its front rank), table units.
    allowance : float, optional
        Defaults to the unit's move.
    any_angle : bool, default True
        Measure as a tape measure does (`_kernels.theta_search`, with rear
        ranks `_kernels.theta_labels`): from the unit's own point, in straight
        moves from any earlier cell in sight, with `Reach.cost_at` exact to the
        point; where ground priced per started quantum lies within the
        allowance of ``at`` as the crow flies, the paths found are then
        priced with its rounding (`_quantised_moves`).  False: the step
        lattice (the grid's ``directions``) from the centre of the start's
        cell.

    Returns
    -------
    Reach

    Raises
    ------
    InputError
        ``at`` off the table or on impassable ground; a negative allowance.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/examples/archers.geojson")
    >>> g = cost_grid(bf, rules, rules.unit("humans", ranks=2))
    >>> r = reach(g, (0.25, 3.25))
    >>> r.cost_at((11.25, 3.25)), r.reachable((11.75, 3.25))
    (20.0, False)
    """
    instance("grid", grid, CostGrid, "cost_grid")
    budget = _allowance(grid, allowance)
    source = _start_cell(grid, at, "start")
    xy = (float(at[0]), float(at[1]))
    if flag("any_angle", any_angle):
        return _theta_reach(grid, source, xy, budget)
    idx, cost = _workspace(grid).within(grid, source, budget)
    return Reach(grid, xy, budget, idx, cost)


def reach_many(grid: CostGrid, starts: Sequence[tuple[float, float]],
               allowance: float | None = None, *, any_angle: bool = True) -> list[Reach]:
    """`reach` from many starting points in one call, on every core.

    Each thread keeps its own workspace (cached on the battlefield) and runs
    its share of the searches in one kernel call; the answers equal one
    `reach` per start.  The reaches' arrays are views of a few buffers each
    thread fills (no copies), so keeping any one of them keeps the whole
    call's results in memory; copy one to keep it alone.

    Parameters
    ----------
    grid : CostGrid
    starts : sequence of (x, y)
    allowance : float, optional
        The same for every start; defaults to the unit's move.
    any_angle : bool
        As `reach`'s.

    Returns
    -------
    list of Reach
        In the order of ``starts``.

    Raises
    ------
    InputError
        Any start off the table or on impassable ground (named by its index).

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/examples/archers.geojson"), rules, rules.unit("humans"))
    >>> [round(r.area, 2) for r in reach_many(g, [(0.25, 3.25), (20.25, 3.25)], 2)]
    [5.25, 12.25]
    """
    instance("grid", grid, CostGrid, "cost_grid")
    budget = _allowance(grid, allowance)
    points = listed("starts", starts)
    sources = [named(f"start {i}", _start_cell, grid, xy, "start") for i, xy in enumerate(points)]
    if not sources:
        return []
    if flag("any_angle", any_angle):
        return _any_angle_many(grid, points, sources, budget)
    if grid.quantum.any():  # rounded along each kept path: one reach at a time
        return [reach(grid, xy, budget, any_angle=False) for xy in points]
    threads = thread_count()
    ws = _many_workspace(grid, threads)
    # Every reachable cell's centre lies within `budget` of the start's (no step is cheaper
    # than its length), so a row the size of that disc holds any one reach.
    radius = budget / float(grid.steps.length.min()) + 2.0
    cap = int(min(grid.base.size, math.pi * radius * radius + 16))
    # Each thread packs its reaches one after another in its row; the answers are views
    # of these two arrays (no copies: they are most of the time a call takes outside the
    # kernels).  Pages past the last reach are never written, so never resident.
    per_thread = -(-len(sources) // threads) * cap
    out_cells = np.empty((threads, per_thread), dtype=np.int64)
    out_cost = np.empty((threads, per_thread))
    out_start = np.empty(len(sources), dtype=np.int64)
    out_n = np.empty(len(sources), dtype=np.int64)
    # One driver per search, so that a call compiles only the one it runs.
    many = (_kernels.many_labels if grid.depth > 0
            else _kernels.many_plain if grid.kernel_args.table_cost.shape[0] > 0
            else _kernels.many_heap)
    args = (
        *grid.kernel_args, np.array(sources, dtype=np.int64), grid.cell, budget + _SLACK,
        grid.depth > 0 and grid.merging,
        grid.trail_width if grid.depth > 0 else 1, *ws,
        _kernels.stack_width(grid.base.size, grid.kernel_args.nb), _kernels.STACK_LIMIT,
        cap, out_cells, out_cost, out_start, out_n,
    )
    on_threads(lambda t: many(t, *args), threads)  # thread t: every threads-th start from t
    if (out_n < 0).any():  # cannot happen: the disc bounds every reach
        raise AssertionError("reach_many: a reach outgrew the disc of its allowance")
    return [
        Reach(grid, (float(xy[0]), float(xy[1])), budget,
              out_cells[u % threads, out_start[u]: out_start[u] + out_n[u]],
              out_cost[u % threads, out_start[u]: out_start[u] + out_n[u]])
        for u, xy in enumerate(points)
    ]


def _any_angle_many(grid: CostGrid, points: list, sources: list[int],
                    budget: float) -> list[Reach]:
    """`reach_many` any-angle: each start's `_theta_reach`, the searches run by
    `_theta_many` on every core (`_theta_answer`)."""
    found = _theta_many(grid, points, sources, budget, min(thread_count(), len(sources)))
    return [_theta_answer(grid, (float(xy[0]), float(xy[1])), budget, one)
            for xy, one in zip(points, found, strict=True)]


@dataclass(frozen=True, eq=False)
class Route:
    """The cheapest way from one point to another.

    Attributes
    ----------
    path : list of (x, y)
        Table points: the start, where the route bends, the goal.
    cost : float
        Allowance it spends (``price_path(grid, path).cost``).
    length : float
        Distance on the table.
    allowance : float
        Allowance per turn used to count turns.
    turns : int
        Turns it takes, spending at most the allowance each (none carried over):
        each goes as far along the path as its allowance pays, priced afresh
        from where the last ended, stopping short of a cost paid at once or a
        quantum started that it cannot pay whole (`engine.search.turns`).
    stops : list of (x, y)
        Where the unit stands at the end of each turn but the last.
    legs : list of Leg
        Which terrain priced each part.
    """

    path: list[tuple[float, float]]
    cost: float
    length: float
    allowance: float
    turns: int
    stops: list[tuple[float, float]] = field(default_factory=list)
    legs: list[Leg] = field(default_factory=list)


def route(grid: CostGrid, start: tuple[float, float], goal: tuple[float, float],
          allowance: float | None = None, *, any_angle: bool = True) -> Route:
    """The cheapest route between two points (A*, any-angle or over the step lattice).

    Parameters
    ----------
    grid : CostGrid
    start, goal : (x, y)
        Table points.
    allowance : float, optional
        Per turn, for counting turns (and for the way taken where the cheapest
        meets a cost paid at once that no turn can pay); defaults to the
        unit's move.
    any_angle : bool, default True
        Measure as a tape measure does: without rear ranks, the cheaper of an
        any-angle search from the exact start (`_kernels.theta_search`) and the
        lattice route string-pulled (`_either`); with them, the lattice
        search.  Either way the route found is then straightened by
        its price (`_straighten`): a straight move over open ground, bends on
        terrain edges and at obstacles' corners, a first or last move level along
        a slope where that is cheaper.  The path an any-angle
        `reach` prices the goal along is taken if cheaper: to a goal within a
        turn's allowance, the turn's reach; farther, with rear ranks, a
        reach from the unit's point aimed at the goal (`_by_reach`).  With
        rear ranks, a first step a hair long that faces them another way is
        taken where that is cheaper (`_faced`).  False: the lattice route
        between cell centres, joined to the exact start and goal.

    Returns
    -------
    Route

    Raises
    ------
    NoRouteError
        The goal cannot be reached, or not in turns of ``allowance`` (the
        cheapest way meets a cost paid at once that is more than that, and
        there is no way round the ground that charges it).
    InputError
        A point off the table or on impassable ground; a bad allowance.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/examples/goblins.geojson")
    >>> g = cost_grid(bf, rules, rules.unit("goblins"))
    >>> rt = route(g, (0, 3.25), (24.5, 3.25))
    >>> rt.cost, rt.turns, rt.stops
    (44.0, 2, [(13.5, 3.25)])
    """
    instance("grid", grid, CostGrid, "cost_grid")
    return _route(grid, start, goal, allowance, any_angle=flag("any_angle", any_angle))


def _route(grid: CostGrid, start, goal, allowance: float | None,
           find: Callable[[int, int], tuple[list[int] | None, int]] | None = None,
           any_angle: bool = False) -> Route:
    """`route`, its cells found by ``find`` (a function of the start and goal cells that
    gives the path's cells, None for no route, and the cells it touched; `_find`
    without landmarks unless given); ``any_angle``: `route`'s."""
    per_turn = _allowance(grid, allowance)
    source = _start_cell(grid, start, "start")
    target = _start_cell(grid, goal, "goal")
    start = (float(start[0]), float(start[1]))
    goal = (float(goal[0]), float(goal[1]))
    found = _searched(grid, source, start, target, goal, find, any_angle)
    if found is None:
        raise NoRouteError(f"no route from ({start[0]:g}, {start[1]:g}) to ({goal[0]:g}, "
                           f"{goal[1]:g}) for {grid.unit.race}")
    if any_angle and find is None:  # the reach's path, if cheaper; with rear ranks, faced
        taken = _by_reach(grid, source, start, goal, per_turn, found)
        found = _faced(grid, taken) if grid.depth > 0 and taken is not found else taken
    path, priced, rows = found
    try:
        turns, stops = route_turns(grid, path, priced, rows, per_turn)
    except NoRouteError as stuck:  # a cost at once a turn cannot pay: round it, if a way is
        narrower = grid.within_turn(per_turn) if find is None else grid
        if narrower is grid:
            raise
        try:
            return _route(narrower, start, goal, allowance, any_angle=any_angle)
        except (NoRouteError, InputError):  # none, or the unit stands on such ground
            raise stuck from None
    return Route(path, priced.cost, priced.length, per_turn, turns, stops, priced.legs)


def _by_reach(g: CostGrid, source: int, start: tuple, goal: tuple, per_turn: float,
               found: tuple) -> tuple:
    """``found`` (a route's path, pricing and rows), or, if cheaper, the path an
    any-angle reach prices the goal along (`Reach.cost_at`).  To a goal within a
    turn's allowance as the crow flies, the turn's `reach`: A* and Dijkstra
    settle Theta*'s cells in other orders and so keep other parents (and
    Dijkstra settles the start's plain sight at once), and a route to a goal
    `reach` says the unit reaches this turn must cost no more than `reach`
    says.  Farther, for a unit with rear ranks, a reach aimed at the goal
    (`_theta_within`) within `_BENDS_SAVE` times ``found``'s cost (a path the
    reach prices dearer may be cheaper once its bends are moved): ``found`` is
    searched on the step lattice from the centre of the start's cell, its ranks
    standing behind that, and so may miss a cheaper way from the unit's own
    point, as a reach of one turn would find it."""
    if math.dist(start, goal) <= per_turn:
        best = _theta_reach(g, source, start, per_turn)._best_within(goal)
    elif g.depth > 0 and found[1].cost < math.inf:
        budget = found[1].cost * _BENDS_SAVE
        aimed = _theta_within(g, source, start, budget, aim=goal)
        best = _theta_answer(g, start, budget, aimed)._best_path(goal)
    else:
        return found
    return _weighed(g, best, found)


# `Reach.cost_at` moves the bends of the path to a point if it costs up to this many
# times the allowance before (that saves at most a few percent).
_BENDS_SAVE = 1.05
# Sweeps of `_kernels.corners.refine` that `Reach.cost_at` moves a path's bends with: the
# second puts a bend halfway along every move, for a path that must bend where the
# reach's tree does not (along a terrain edge from heavier ground, in and out again).
_POINT_SWEEPS = 2
