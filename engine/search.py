"""Reach and route: the public face of the numba search.

Positions are table points.  A search runs from the centre of the cell holding
the start; `reach` answers per cell, `route` joins the exact start and goal to
the cell-centre path and prices the whole of it as `price_path` does.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numba
import numpy as np

from . import _kernels
from ._args import instance, listed, real
from .errors import InputError, NoRouteError
from .maps import _memory_bytes
from .pricing import Leg, Pricing, _price
from .terrain import CostGrid, KernelArgs, kernel_args, steps

__all__ = [
    "GridRouter",
    "Reach",
    "Route",
    "cost_field",
    "grid_route",
    "reach",
    "reach_many",
    "route",
    "warm_up",
]

# Costs are sums of float products; a cell exactly at the allowance must count.
_SLACK = 1e-9
# Most turns a route or `engine.ai.reach_turns` counts (they fit an int16).
MAX_TURNS = 2**15 - 1
# No landmark bounds for A* (`engine.highway` passes its own).
_NO_LANDMARKS = (np.empty((0, 0), dtype=np.float32), np.empty((2, 0), dtype=np.float32))
# The most a raw grid's path may cost, with room to add the A*'s bound to it.
_MAX_COST = 1e306
# What a raw grid's search keeps a cell (its multiplier, workspace and queue), about.
_RAW_BYTES_PER_CELL = 64
# What `cost_field`, `grid_route` and `GridRouter` take as a convention (`terrain.steps`).
_CONVENTIONS = {"pricing", "corner_cutting", "lengths"}
_NO_ROWS = (np.empty(0, dtype=np.int32), np.empty(0))  # `CostGrid.outgoing_steps` not built


class _Labels(NamedTuple):
    """`_kernels.search_labels`' pool of labels, in its order (`_kernels.label_pool`)."""

    cost: np.ndarray
    cell: np.ndarray
    prev: np.ndarray
    step: np.ndarray
    n: np.ndarray
    lv: np.ndarray
    rem: np.ndarray
    next: np.ndarray
    state: np.ndarray
    pos: np.ndarray
    link: np.ndarray
    hkey: np.ndarray
    hidx: np.ndarray

    @classmethod
    def pool(cls, size: int, width: int) -> _Labels:
        """Room for ``size`` labels whose trails hold up to ``width`` levels."""
        return cls(*_kernels.label_pool(size, width))


@dataclass(eq=False)
class _Workspace:
    """Search state reused between queries; only touched cells are reset."""

    dist: np.ndarray
    parent: np.ndarray
    pos: np.ndarray
    hkey: np.ndarray
    hidx: np.ndarray
    touched: np.ndarray
    link: np.ndarray
    # `_kernels.search_labels`' pool of labels (a unit with rear ranks), made bigger when
    # it runs out; how many the last search used, the one that reached the goal, and
    # the cells' `beat` costs.
    labels: _Labels | None = None
    used: int = 0
    found: int = -1
    beat: np.ndarray = field(default_factory=lambda: np.empty(0))
    # `_kernels.search_plain`'s buckets (a row each), widened when one overflows.
    stack: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.int32))
    # Grids (their `KernelArgs`' ids) whose stack outgrew `_kernels.STACK_LIMIT`: they
    # take `_kernels.search` from then on.
    linked: set = field(default_factory=set)

    @classmethod
    def for_cells(cls, n: int, plain: bool = False) -> _Workspace:
        """State for ``n`` cells; ``plain`` (raw grids) leaves out `_kernels.search`'s queue."""
        q = 0 if plain else n
        return cls(
            dist=np.full(n, np.inf),
            parent=np.full(n, -1, dtype=np.int8),
            pos=np.full(q, -1, dtype=np.int32),
            hkey=np.empty(0),
            hidx=np.empty(0, dtype=np.int32),
            touched=np.empty(n, dtype=np.int32),
            link=np.empty(2 * q, dtype=np.int32),
        )

    def run(self, g: CostGrid | _RawGrid, source: int, goal: int, budget: float,
            landmarks: tuple = _NO_LANDMARKS, lowest: bool = False) -> int:
        if g.depth > 0:
            return self._labelled(g, source, goal, budget, landmarks)
        a = g.kernel_args
        n = -1
        # An A* with landmarks, or too big for the whole table, reads the shared rows
        # if they are built (`Highway` builds them: a reach would pay for every row).
        row, cost = _NO_ROWS
        if isinstance(g, CostGrid) and goal >= 0 and (
                landmarks[1].size or not a.table_cost.size):
            row, cost = vars(g).get("outgoing_steps", _NO_ROWS)
        if id(a) in self.linked:
            pass
        elif isinstance(g, _RawGrid) or row.size or (
                a.table_cost.size and not landmarks[1].size):
            n = self._stacked(_kernels.stack_rows(a.nb, goal >= 0), lambda stack: (
                _kernels.search_plain(
                    a.base, a.cols, a.step_dr, a.step_dc, a.step_len, a.piece_start, a.piece_dr,
                    a.piece_dc, a.piece_w, a.nb, cost if row.size else a.table_cost, row,
                    a.flat, a.flat_of, a.onward_start, a.onward, source, goal,
                    g.cell, budget, self.dist, self.parent, self.touched, stack, lowest,
                    *landmarks,
                )
            ))
        if n >= 0:
            return n
        if n == -2:
            self.linked.add(id(a))
        if self.pos.size == 0:  # a raw grid's workspace, whose stack outgrew its limit
            self.pos = np.full(self.dist.size, -1, dtype=np.int32)
            self.link = np.empty(2 * self.dist.size, dtype=np.int32)
        if goal >= 0 and self.hkey.size == 0:  # A*'s heap, only when asked for
            self.hkey = np.empty(self.dist.size)
            self.hidx = np.empty(self.dist.size, dtype=np.int32)
        return _kernels.search(
            *a, source, goal, g.cell, budget,
            self.dist, self.parent, self.pos, self.hkey, self.hidx, self.touched, self.link,
            *landmarks,
        )

    def _labelled(self, g: CostGrid, source: int, goal: int, budget: float,
                  landmarks: tuple) -> int:
        """`_kernels.search_labels` to ``goal``, its pool grown until it does not run
        out; sets `found`, returns the number of cells touched."""
        width = g.trail_width
        while True:
            if self.labels is None or self.labels.lv.shape[1] < width:
                self.labels = _Labels.pool(1 << 16, width)
            if not self.beat.size:
                self.beat = np.full(self.dist.size, np.inf)
            n, self.found, self.used = _kernels.search_labels(
                *g.kernel_args, source, goal, g.cell, budget, g.merging, self.dist, self.pos,
                self.beat, self.touched, *landmarks, *self.labels,
            )
            if self.used >= 0:
                return n
            self.reset(n)
            self.labels = _Labels.pool(4 * self.labels.cost.size, width)

    def path(self, g: CostGrid, source: int, target: int) -> list[int]:
        """The cells from ``source`` to ``target`` of the last search (before `reset`)."""
        if g.depth > 0:
            return _kernels.trace_labels(self.labels.prev, self.labels.cell, self.found).tolist()
        return _trace(g, self.parent, source, target)

    def _stacked(self, rows: int, kernel) -> int:
        """Run a kernel on stack buckets (``kernel(stack)``), widening ``stack`` until
        no bucket outgrows its row; returns the cells it touched, or -2 (nothing
        touched) if the stack would outgrow ``_kernels.STACK_LIMIT``."""
        if self.stack.shape[0] < rows:
            width = self.stack.shape[1] or _kernels.stack_width(self.dist.size, rows)
            self.stack = np.empty((rows, width), dtype=np.int32)
        while (n := kernel(self.stack)) < 0:
            self.reset(-n)  # a bucket outgrew its row: again, with room
            if 2 * self.stack.size > _kernels.STACK_LIMIT:
                self.stack = np.empty((0, 0), dtype=np.int32)
                return -2
            self.stack = np.empty((self.stack.shape[0], 2 * self.stack.shape[1]), dtype=np.int32)
        return n

    def within(self, g: CostGrid | _RawGrid, source: int, budget: float):
        """Flat indices and costs of the cells within ``budget`` of ``source``.

        On ground priced per started quantum the costs are the rulebook's
        (`_quantised`), not the search's smooth ones.
        """
        if isinstance(g, CostGrid) and g.quantum.any():
            return _quantised(g, self, source, budget)
        n = self.run(g, source, -1, budget + _SLACK)
        try:
            idx = self.touched[:n].astype(np.int64)
            cost = self.dist[idx]
        finally:
            self.reset(n)
        keep = cost <= budget + _SLACK
        return idx[keep], cost[keep]

    def reset(self, n: int) -> None:
        _kernels.reset(self.touched, n, self.dist, self.parent, self.pos, self.beat)


def _workspace(g: CostGrid) -> _Workspace:
    cache = g.battlefield._cache
    ws = cache.get("workspace")
    if ws is None:
        ws = cache["workspace"] = _Workspace.for_cells(g.base.size)
    return ws


def _start_cell(g: CostGrid, xy, what: str) -> int:
    r, c = g.grid.xy_to_rc(xy)
    if g.base[r, c] == math.inf:
        kinds = ", ".join(g.combos[g.combo[r, c]]) or "ground"
        raise InputError(f"{what} ({xy[0]:g}, {xy[1]:g}) is on impassable ground ({kinds})")
    return r * g.grid.shape[1] + c


def _allowance(g: CostGrid, allowance: float | None) -> float:
    a = g.unit.move if allowance is None else allowance
    if not real(a) or not math.isfinite(a) or a < 0:
        raise InputError(f"allowance must be a finite number >= 0, got {a!r}")
    return float(a)


@dataclass(frozen=True, eq=False)
class Reach:
    """Every cell a unit can get to this turn, and what each costs.

    Attributes
    ----------
    grid : CostGrid
    start : (x, y)
    allowance : float
    cells : ndarray of int64
        Flat indices (``row * cols + col``) of the reachable cells, in the
        order the search found them.
    cost : ndarray of float64
        Allowance spent to reach each of `cells`.
    """

    grid: CostGrid
    start: tuple[float, float]
    allowance: float
    cells: np.ndarray
    cost: np.ndarray

    @property
    def remaining(self) -> np.ndarray:
        """Allowance left in each of `cells`."""
        return np.maximum(self.allowance - self.cost, 0.0)

    @property
    def area(self) -> float:
        """Table area reachable, in table units squared."""
        return len(self.cells) * self.grid.grid.cell ** 2

    @functools.cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.cells)
        return self.cells[order], self.cost[order]

    def cost_at(self, xy) -> float:
        """Cost to reach the cell holding ``xy``; ``inf`` if it is out of reach."""
        r, c = self.grid.grid.xy_to_rc(xy)
        flat = r * self.grid.grid.shape[1] + c
        cells, cost = self._sorted
        i = np.searchsorted(cells, flat)
        if i < len(cells) and cells[i] == flat:
            return float(cost[i])
        return math.inf

    def reachable(self, xy) -> bool:
        """True if the unit can get to ``xy`` this turn."""
        return self.cost_at(xy) <= self.allowance + _SLACK

    def to_array(self) -> np.ndarray:
        """Dense ``(rows, cols)`` cost grid, ``inf`` where out of reach."""
        out = np.full(self.grid.grid.shape, np.inf)
        out.flat[self.cells] = self.cost
        return out


def reach(grid: CostGrid, at, allowance: float | None = None) -> Reach:
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
    idx, cost = _workspace(grid).within(grid, _start_cell(grid, at, "start"), budget)
    return Reach(grid, (float(at[0]), float(at[1])), budget, idx, cost)


def _quantised(g: CostGrid, ws: _Workspace, source: int, budget: float):
    """`_Workspace.within` on ground priced per started quantum.

    The search runs on the smooth multiplier, so no cell is cheaper by it than
    by the rulebook; then each cell's cost is recomputed along the paths the
    search kept (one a cell, or with rear ranks every label) with every
    stretch of quantised ground rounded up to whole quanta
    (`_kernels.settle_quanta`, the pricer's arithmetic), and only the cells
    still within the allowance are kept, at their cheapest.
    """
    # Of equally cheap steps into a cell the lowest-numbered, whatever the queue's order.
    n = ws.run(g, source, -1, budget + _SLACK, lowest=True)
    try:
        if g.depth > 0:  # every label kept: its cell, cost, the label and step it came from
            lab = ws.labels
            cost, cell, prev, step, state = (
                x[:ws.used] for x in (lab.cost, lab.cell, lab.prev, lab.step, lab.state))
            live = ((state & 3) != _kernels.DROPPED) & (cost <= budget + _SLACK)
            node = np.flatnonzero(live)
            cost, cell, prev, step = cost[node], cell[node], prev[node], step[node]
        else:
            cell = ws.touched[:n].astype(np.int64)
            cost = ws.dist[cell]
            step = ws.parent[cell] & (_kernels.CLOSED - 1)  # expanded: | CLOSED
            keep = cost <= budget + _SLACK
            cell, cost, step = cell[keep], cost[keep], step[keep]
            node = cell
            a = g.kernel_args
            prev = np.full(cell.size, -1, dtype=np.int64)
            moved = cell != source
            prev[moved] = cell[moved] - (a.step_dr * a.cols + a.step_dc)[step[moved]]
    finally:
        ws.reset(n)
    order = np.argsort(cost, kind="stable")
    cell, cost, step = cell[order].astype(np.int64), cost[order], step[order].astype(np.int64)
    # Parents by their place in this order (every parent is kept: it costs no more).
    ids, prev = node[order], prev[order]
    by_id = np.argsort(ids)
    place = by_id[np.minimum(np.searchsorted(ids[by_id], prev), ids.size - 1)]
    parent = np.where(prev < 0, -1, place)
    a = g.kernel_args
    out = np.empty(cell.size)
    _kernels.settle_quanta(
        cell, cost, parent, step, a.base, a.steep, a.gxf, a.gxb, a.gyf, a.gyb, a.cols,
        a.step_len, a.ux, a.uy, a.piece_start, a.piece_dr, a.piece_dc, a.piece_w,
        g.quantum[g.combo].ravel(), out,
    )
    # Each cell at its cheapest node, in the order the cheapest were found.
    by_cell = np.lexsort((out, cell))
    first = np.ones(by_cell.size, dtype=bool)
    first[1:] = cell[by_cell[1:]] != cell[by_cell[:-1]]
    best = np.sort(by_cell[first])
    keep = out[best] <= budget + _SLACK
    return cell[best][keep], out[best][keep]


def reach_many(grid: CostGrid, starts, allowance: float | None = None) -> list[Reach]:
    """`reach` from many starting points in one call, on every core.

    Each thread keeps its own workspace (cached on the battlefield); the
    answers equal one `reach` per start.  The reaches' arrays are views of
    two buffers the call shares out (no copies), so keeping any one of them
    keeps the whole call's results in memory; copy one to keep it alone.

    Parameters
    ----------
    grid : CostGrid
    starts : sequence of (x, y)
    allowance : float, optional
        The same for every start; defaults to the unit's move.

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
    sources = []
    for i, xy in enumerate(points):
        try:
            sources.append(_start_cell(grid, xy, "start"))
        except InputError as exc:
            raise InputError(f"start {i}: {exc}") from None
    if not sources:
        return []
    if grid.quantum.any():  # rounded along each kept path: one reach at a time
        return [reach(grid, xy, budget) for xy in points]
    threads = numba.get_num_threads()
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
    _kernels.search_many(
        *grid.kernel_args, np.array(sources, dtype=np.int64), grid.cell, budget + _SLACK,
        grid.depth > 0 and grid.merging,
        grid.trail_width if grid.depth > 0 else 1, *ws,
        _kernels.stack_width(grid.base.size, grid.kernel_args.nb), _kernels.STACK_LIMIT,
        cap, out_cells, out_cost, out_start, out_n,
    )
    if (out_n < 0).any():  # cannot happen: the disc bounds every reach
        raise AssertionError("reach_many: a reach outgrew the disc of its allowance")
    return [
        Reach(grid, (float(xy[0]), float(xy[1])), budget,
              out_cells[u % threads, out_start[u]: out_start[u] + out_n[u]],
              out_cost[u % threads, out_start[u]: out_start[u] + out_n[u]])
        for u, xy in enumerate(points)
    ]


def _many_workspace(g: CostGrid, threads: int) -> tuple:
    """Per-thread search state for `reach_many`, cached on the battlefield."""
    key = ("workspace_many", threads, g.depth > 0)
    ws = g.battlefield._cache.get(key)
    if ws is None:
        n = g.base.size
        ws = g.battlefield._cache[key] = (
            np.full((threads, n), np.inf),
            np.full((threads, n), -1, dtype=np.int8),
            np.full((threads, n), -1, dtype=np.int32),
            np.empty((threads, n), dtype=np.int32),
            np.empty((threads, 2 * n), dtype=np.int32),
            np.full((threads, n if g.depth > 0 else 0), np.inf),  # `search_labels`' beat
        )
    return ws


@dataclass(frozen=True, eq=False)
class Route:
    """The cheapest way from one point to another.

    Attributes
    ----------
    path : list of (x, y)
        Table points: the start, the cell centres where the route bends, the goal.
    cost : float
        Allowance it spends (``price_path(grid, path).cost``).
    length : float
        Distance on the table.
    allowance : float
        Allowance per turn used to count turns.
    turns : int
        Turns it takes, spending at most the allowance each (none carried over).
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


def route(grid: CostGrid, start, goal, allowance: float | None = None) -> Route:
    """The cheapest route between two points (A* over the step neighbourhood).

    Parameters
    ----------
    grid : CostGrid
    start, goal : (x, y)
        Table points.
    allowance : float, optional
        Per turn, for counting turns; defaults to the unit's move.

    Returns
    -------
    Route

    Raises
    ------
    NoRouteError
        The goal cannot be reached.
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
    return _route(grid, start, goal, allowance)


def _route(grid: CostGrid, start, goal, allowance: float | None,
           find: Callable[[int, int], tuple[list[int] | None, int]] | None = None) -> Route:
    """`route`, its cells found by ``find`` (a function of the start and goal cells that
    gives the path's cells, None for no route, and the cells it touched; `_find`
    without landmarks unless given)."""
    per_turn = _allowance(grid, allowance)
    source = _start_cell(grid, start, "start")
    target = _start_cell(grid, goal, "goal")
    cells = (find or functools.partial(_find, grid))(source, target)[0]
    if cells is None:
        raise NoRouteError(f"no route from ({start[0]:g}, {start[1]:g}) to ({goal[0]:g}, "
                           f"{goal[1]:g}) for {grid.unit.race}")
    path, priced, rows = _join(grid, start, goal, _polyline(grid, cells))
    turns, stops = _turns(rows, priced.cost, per_turn)
    return Route(path, priced.cost, priced.length, per_turn, turns, stops, priced.legs)


def _find(grid: CostGrid, source: int, target: int, bounds: tuple = _NO_LANDMARKS
          ) -> tuple[list[int] | None, int]:
    """The cells of the cheapest path from one cell to another (None if there is none),
    by A* with the landmark bounds ``bounds`` (`_Workspace.run`), and the number of
    cells it touched."""
    ws = _workspace(grid)
    n = ws.run(grid, source, target, math.inf, bounds)
    try:
        return (None if ws.dist[target] == math.inf else ws.path(grid, source, target)), n
    finally:
        ws.reset(n)


def _trace(g: CostGrid, parent: np.ndarray, source: int, target: int) -> list[int]:
    """Cells from source to target, following the steps that reached them."""
    cols = g.grid.shape[1]
    st = g.steps
    cells = [target]
    while cells[-1] != source:
        k = parent[cells[-1]] & (_kernels.CLOSED - 1)  # expanded cells carry CLOSED
        cells.append(cells[-1] - int(st.dr[k]) * cols - int(st.dc[k]))
    cells.reverse()
    return cells


def _polyline(g: CostGrid, cells: list[int]) -> list[tuple[float, float]]:
    """Centres of the cells where the route changes direction, first and last included."""
    cols = g.grid.shape[1]
    keep = [cells[0]]
    for prev, here, after in zip(cells, cells[1:], cells[2:], strict=False):
        if here - prev != after - here:
            keep.append(here)
    if len(cells) > 1:
        keep.append(cells[-1])
    return [g.grid.rc_to_xy(divmod(c, cols)) for c in keep]


def _join(g: CostGrid, start, goal, centres: list) -> tuple[list, Pricing, np.ndarray]:
    """The exact start and goal joined to the cell-centre path, priced (and the rows
    of its pieces, `engine.pricing._price`).

    The end centres are dropped where going straight to the exact point is
    still passable, so a route does not overshoot into the middle of a cell.
    """
    start = (float(start[0]), float(start[1]))
    goal = (float(goal[0]), float(goal[1]))
    options = [[start, *centres[1:-1], goal], [start, *centres, goal]]
    best = None
    for points in options:
        path = [points[0]]
        for p in points[1:]:
            if p != path[-1]:
                path.append(p)
        if len(path) == 1:
            path.append(path[0])
        priced, rows = _price(g, path, pieces=False, checked=True)
        if priced.cost < math.inf:
            return path, priced, rows
        best = best or (path, priced, rows)
    return best


def _turns(rows: np.ndarray, cost: float, per_turn: float):
    """Turns needed and where each full turn ends (leftover is not carried over).

    ``rows`` are the path's pieces, ``(x0, y0, x1, y1, length, cost, level)``
    (`engine.pricing._price`); they are straight, so a stop is found by
    interpolating within one.
    """
    if cost <= _SLACK:
        return 0, []
    if per_turn <= 0:
        raise InputError("allowance must be > 0 to count the turns of a route")
    turns = max(1, math.ceil(cost / per_turn - _SLACK))
    if turns > MAX_TURNS:
        raise InputError(f"allowance {per_turn:g} is too small: the route costs {cost:g}, "
                         f"more than {MAX_TURNS} turns")
    spent = list(itertools.accumulate(rows[:, 5].tolist()))  # after each piece, in order
    stops = []
    for k in range(1, turns):
        j = bisect.bisect_left(spent, k * per_turn - _SLACK)
        if j == len(spent):  # the pieces' sum fell short of the fsum by rounding
            break
        x0, y0, x1, y1, _, price, _ = rows[j].tolist()
        f = (k * per_turn - (spent[j - 1] if j else 0.0)) / price
        stops.append((x0 + f * (x1 - x0), y0 + f * (y1 - y0)))
    return turns, stops


def cost_field(
    multipliers: np.ndarray,
    source: tuple[int, int],
    cell: float = 1.0,
    directions: int = 32,
    allowance: float = math.inf,
    **convention,
) -> np.ndarray:
    """Cost from one cell to every cell of a raw multiplier grid.

    The map-free entry point for comparing pathfinders: each cell's
    multiplier (>= 1, ``inf`` for blocked) prices the distance travelled
    through it, steps run in 32 directions (or 8, 16, 48), and no
    footprint or slope applies.

    Parameters
    ----------
    multipliers : ndarray, shape (rows, cols)
    source : (row, col)
    cell : float
        Side of a cell in table units.
    directions : int
        Steps of the neighbourhood (see `engine.grid.neighbourhood`).
    allowance : float
        Stop once every cell within it is settled (``inf``: the whole grid).
    **convention
        ``pricing``, ``corner_cutting`` and ``lengths``, to answer under
        another pathfinder's convention (see `engine.terrain.steps`).

    Returns
    -------
    ndarray of float64, shape (rows, cols)
        ``inf`` where unreachable (or beyond the allowance).  A view of the
        search's own buffer, which has a border of blocked cells around the
        grid (no copy).

    Raises
    ------
    InputError
        A malformed grid, a multiplier below 1 or NaN, a source off the grid
        or blocked.

    Examples
    --------
    >>> cost_field(np.ones((3, 4)), (0, 0))[2, 3].round(6)
    np.float64(3.605551)
    """
    m = _check_multipliers(multipliers, cell)
    if not (real(allowance) and allowance >= 0):
        raise InputError(f"allowance must be a number >= 0, got {allowance!r}")
    raw = _RawGrid.build(m, cell, directions, **convention)
    ws = _Workspace.for_cells(raw.m.size, plain=True)
    ws.run(raw, raw.index(source), -1, float(allowance))
    out = raw.interior(ws.dist)
    out[out > allowance + _SLACK] = np.inf
    return out


def grid_route(
    multipliers: np.ndarray,
    start: tuple[int, int],
    goal: tuple[int, int],
    cell: float = 1.0,
    directions: int = 32,
    **convention,
) -> tuple[float, list[tuple[int, int]]]:
    """Cheapest route between two cells of a raw multiplier grid (A*).

    The same conventions as `cost_field`.  For many queries on one grid use
    `GridRouter`, which builds its workspace once.

    Returns
    -------
    cost : float
    cells : list of (row, col)
        From ``start`` to ``goal``.

    Raises
    ------
    InputError
        As `cost_field`, for either end.
    NoRouteError
        The goal cannot be reached.

    Examples
    --------
    >>> m = np.ones((3, 3)); m[1, 1] = np.inf
    >>> cost, cells = grid_route(m, (0, 0), (2, 2), directions=8)
    >>> round(cost, 6), len(cells)
    (4.0, 5)
    """
    return GridRouter(multipliers, cell, directions, **convention).route(start, goal)


class GridRouter:
    """Repeated queries on one raw multiplier grid (its workspace built once).

    Parameters
    ----------
    multipliers : ndarray, shape (rows, cols)
        Each cell's multiplier (>= 1, ``inf`` for blocked).
    cell : float
    directions : int
        Steps of the neighbourhood: 8 is 8-connected (straight 1, diagonal
        sqrt 2, no corner cutting: the Moving AI convention).
    **convention
        ``pricing``, ``corner_cutting``, ``lengths`` (see `engine.terrain.steps`).

    Examples
    --------
    >>> router = GridRouter(np.ones((4, 4)), directions=8)
    >>> round(router.route((0, 0), (3, 3))[0], 6)
    4.242641
    """

    def __init__(
        self, multipliers: np.ndarray, cell: float = 1.0, directions: int = 32, **convention
    ) -> None:
        m = _check_multipliers(multipliers, cell)
        self._raw = _RawGrid.build(m, cell, directions, **convention)
        self._ws = _Workspace.for_cells(self._raw.m.size, plain=True)
        self._path = np.empty((2, self._raw.m.size), dtype=np.int64)

    def route(
        self, start: tuple[int, int], goal: tuple[int, int]
    ) -> tuple[float, list[tuple[int, int]]]:
        """``(cost, cells)`` of the cheapest route from ``start`` to ``goal`` (row, col)."""
        raw, ws = self._raw, self._ws
        source, target = raw.index(start, "start"), raw.index(goal, "goal")
        n = ws.run(raw, source, target, math.inf)
        try:
            cost = float(ws.dist[target])
            if cost == math.inf:
                raise NoRouteError(f"no route from {tuple(start)} to {tuple(goal)}")
            rows, cols = self._path
            k = _kernels.trace(ws.parent, raw.step_off, source, target, raw.m.shape[1], raw.pad,
                               rows, cols)
        finally:
            ws.reset(n)
        return cost, list(zip(rows[:k].tolist(), cols[:k].tolist(), strict=True))


    def reach(self, source: tuple[int, int], allowance: float) -> tuple[np.ndarray, np.ndarray]:
        """Cells within ``allowance`` of ``source``: ``(cells, costs)``, cells as (row, col) rows.

        Touches only those cells (and the next ring), like `reach`.
        """
        if not (real(allowance) and math.isfinite(allowance) and allowance >= 0):
            raise InputError(f"allowance must be a finite number >= 0, got {allowance!r}")
        idx, cost = self._ws.within(self._raw, self._raw.index(source), allowance)
        return np.stack(self._raw.rc(idx), axis=1), cost


def _check_multipliers(multipliers, cell) -> np.ndarray:
    if isinstance(multipliers, np.ma.MaskedArray):
        raise InputError("multipliers must be a plain array, not a masked one (its mask would "
                         "be ignored): use inf for cells nobody enters")
    try:
        m = np.asarray(multipliers)
    except ValueError:  # ragged rows
        raise InputError("multipliers must be a non-empty 2-D numeric array, got ragged "
                         "rows") from None
    if (m.ndim != 2 or m.size == 0 or not np.issubdtype(m.dtype, np.number)
            or np.issubdtype(m.dtype, np.complexfloating)):
        raise InputError(f"multipliers must be a non-empty 2-D numeric array, got shape {m.shape}")
    if m.size * _RAW_BYTES_PER_CELL > _memory_bytes() // 2:
        raise InputError(f"a {m.shape[0]} x {m.shape[1]} grid is too large for memory (needs "
                         f"about {m.size * _RAW_BYTES_PER_CELL / 2**30:.3g} GiB)")
    m = m.astype(np.float64, copy=False)
    if np.isnan(m).any() or (m < 1).any():
        raise InputError("multipliers must be >= 1 (inf for blocked), with no NaN")
    if not (real(cell) and math.isfinite(cell) and cell > 0):
        raise InputError(f"cell must be a finite number > 0, got {cell!r}")
    return m


@dataclass(frozen=True, eq=False)
class _RawGrid:
    """A bare multiplier grid in the form `_kernels.search_plain` takes (no footprint, no slope).

    ``m`` is the grid inside a border of blocked cells as wide as the
    longest step, so no step leaves it; cells are numbered flat in
    that padded grid (`index`, `rc`).
    """

    m: np.ndarray
    pad: int
    cell: float
    steps: object
    kernel_args: KernelArgs
    step_off: np.ndarray
    depth: float = 0.0

    @functools.cached_property
    def shape(self) -> tuple[int, int]:
        """The grid's own shape, without the border."""
        return self.m.shape[0] - 2 * self.pad, self.m.shape[1] - 2 * self.pad

    @classmethod
    def build(cls, m: np.ndarray, cell: float, directions: int, **convention) -> _RawGrid:
        unknown = sorted(set(convention) - _CONVENTIONS)
        if unknown:
            raise InputError(f"unknown option {unknown[0]!r} (the conventions are "
                             f"{', '.join(sorted(_CONVENTIONS))})")
        st = steps(float(cell), directions, **convention)
        # A path enters each cell once at most, by a step no longer than the longest.
        longest = float(st.length.max())
        dearest = float(m[np.isfinite(m)].max(initial=1.0))
        if not m.size * longest * dearest < _MAX_COST:
            raise InputError(
                f"costs would overflow: a path over the {m.shape[0]} x {m.shape[1]} grid, by "
                f"steps up to {longest:.3g} table units long on multipliers up to "
                f"{dearest:.3g}, could cost {m.size * longest * dearest:.3g}"
            )
        p = int(np.abs(st.dr).max())
        padded = np.full((m.shape[0] + 2 * p, m.shape[1] + 2 * p), np.inf)
        padded[p:-p, p:-p] = m
        return cls(padded, p, float(cell), st, kernel_args(padded, st, table=False, flat=False),
                   st.dr * padded.shape[1] + st.dc)

    def index(self, rc, what: str = "source") -> int:
        rows, cols = self.shape
        try:
            r0, c0 = rc
            r, c = int(r0), int(c0)
            whole = real(r0) and real(c0) and r == r0 and c == c0  # not a bool
        except (TypeError, ValueError, OverflowError):
            whole = False
        if not whole:
            raise InputError(f"{what} must be (row, col), two whole numbers, got {rc!r}")
        if not (0 <= r < rows and 0 <= c < cols):
            raise InputError(f"{what} {(r, c)} is off the {rows} x {cols} grid")
        if self.m[r + self.pad, c + self.pad] == math.inf:
            raise InputError(f"{what} {(r, c)} is blocked")
        return (r + self.pad) * self.m.shape[1] + c + self.pad

    def rc(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns (in the grid's own shape) of padded flat indices."""
        r, c = np.divmod(flat, self.m.shape[1])
        return r - self.pad, c - self.pad

    def interior(self, values: np.ndarray) -> np.ndarray:
        """A view of per-cell ``values`` (padded, flat) without the border."""
        p = self.pad
        return values.reshape(self.m.shape)[p:-p, p:-p]


def warm_up() -> None:
    """Compile (or load from numba's disk cache) every kernel on a tiny map."""
    from .ai import flow_field
    from .maps import load_map
    from .rules import load_rules
    from .terrain import cost_grid
    from .visibility import viewshed, visible

    rules = load_rules("fantasy-warlord")
    bf = load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 4, "height": 4, "units": "cm"},
        "features": [{
            "type": "Feature", "properties": {"terrain": "hill", "elevation": 1, "steep": True},
            "geometry": {"type": "Polygon", "coordinates": [[[1, 1], [3, 1], [3, 3], [1, 1]]]},
        }],
    })
    for unit in (rules.unit("humans"), rules.unit("humans", depth=0)):
        g = cost_grid(bf, rules, unit)
        reach(g, (0.25, 0.25), 3)
        reach_many(g, [(0.25, 0.25)], 3)
        route(g, (0.25, 0.25), (3.75, 3.75))
        flow_field(g, [(3.75, 3.75)])
    viewshed(bf, rules, (0.25, 0.25))
    visible(bf, rules, (0.25, 0.25), (3.75, 3.75))
    cost_field(np.ones((4, 4)), (0, 0), directions=8)
    GridRouter(np.ones((4, 4)), directions=8).route((0, 0), (3, 3))
    bs = load_rules("battlesystem")  # ground priced per started quantum
    woods = load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 2, "height": 2, "units": "in"},
        "features": [{"type": "Feature", "properties": {"terrain": "light woods"},
                      "geometry": {"type": "Polygon",
                                   "coordinates": [[[1, 0], [2, 0], [2, 2], [1, 2], [1, 0]]]}}],
    })
    reach(cost_grid(woods, bs, bs.unit("infantry", depth=0)), (0.1, 0.1), 3)
