"""Long routes on big maps: the road network as a highway layer for an exact A*.

A `Highway` is built once per (map, unit).  It places landmarks on the road
network (its far ends first: road ends at the table's edge, then bridges,
fords and junctions, spread out by farthest-point choice) and stores every
cell's exact cost *to* each landmark, as the grid search itself prices it but
without the rear ranks (a flow field, `engine.search.flow_field`, on every
core), in float32.  A route is then A* with the landmark (ALT) lower bound

    cost(v -> goal) >= cost(v -> L) - cost(goal -> L)

(the triangle inequality; it holds for direction-dependent costs such as
uphill slopes, since only costs *to* the landmark are used) and, where a
step costs the same both ways (no slopes or entry costs),
``cost(goal -> L) - cost(v -> L)`` as well, taken as the largest over the
landmarks and the straight-line bound.  The rear ranks only ever add cost,
so fields without them still bound a unit with them from below.  For a unit
without rear ranks the A* runs on `_kernels.search_plain`'s buckets and reads
the prices of the steps out of the cells that are not flat from rows those
cells share (`CostGrid.outgoing_steps`, built with the fields): 2.2x faster
than `_kernels.search`'s heap across the 4096² campaign map.  Roads are
where the bound is tight: between two towns on a road every cell off the
road has a landmark that shows it to be a detour, so the search follows the
road instead of flooding the countryside.

The bound never overestimates, so the search finds the full grid search's
cost exactly, cell to cell, with rear ranks too (both keep every path no
other beats, `_kernels.search_labels`).  Among routes of equal cell cost it
may pick another, whose exact start and goal price a hair differently.

Why the landmarks leave so many cells to search across a road grid: its
staircases of roads cost within a few table units of each other, and a
landmark bound is that close to the true cost only where the goal lies on
the way from the cell to the landmark.  A landmark 20 cells beside the goal
already leaves 40 table units of slack over half the grid.  So a `Highway`
also takes *places*, the points an AI routes between most (towns, forts,
crossings): each keeps its own field, and a route to a place uses that field
alone, which is its exact cost to the goal, so the A* goes nearly straight
down the cheapest path.  Where a step costs the same both ways (and the unit
has no rear ranks, whose cost depends on which way they trail), a route from
a place is searched from the goal back to it and reversed, with the same
cost.

There too, a route between two points that are not places is searched from
both ends at once (`_kernels.search_both`, one side a thread where there
are two): each side keys on the average of the bounds to the goal and to
the start, and the two stop once their cheapest buckets together reach the
best path they have met on.  Each side need only get about halfway in key,
where the slack of the staircases has not yet spread: across the 4096²
campaign map, 3 to 7 times fewer cells than the A* from one end between
towns, 1.2 times between two points in open country.  Its state (costs,
steps and key offsets for both sides, 26 bytes a cell, and lists of the
cells it touched and queued, grown as needed) is made by the first such
route and kept.

A point deep in a block of roads is what the landmarks bound worst: a landmark
beyond the roads is short by twice the point's way out to them.  So where
steps cost the same both ways a `Highway` also parts the ground the cheapest
ground (the roads) leaves into *blocks*, and keeps each cell's block and its
cost out of it (8 bytes a cell) and each block's rim's least and greatest
costs to the landmarks (`_blocks`).  A path to an end in a block must come
in over the block's rim and then pay the end's way out, which bounds it from
every cell outside the block; the search from both ends takes these bounds
too where they raise the bound between its two ends by 10% or more: across
the 4096² campaign map, between two points at the middles of blocks of roads,
1.8 times fewer cells, and 26 to 28 ms against 42 to 44 ms before them
(alternating runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numba
import numpy as np
from scipy import ndimage

from .._args import instance, listed, named, point, whole
from .._limits import memory_bytes
from .._threads import on_threads
from ..errors import InputError
from ..terrain.costgrid import CostGrid, cost_grid
from ..terrain.roads import network
from . import _kernels
from ._state import _trace
from .flow import _costs_to, flow_field
from .front import Route, _route, _start_cell
from .paths import _find

__all__ = ["Highway"]

# Queue entries (8 bytes each) and touched cells (4 bytes) `Highway._both` first keeps a
# side, doubled when either runs out.
_FIRST_POOL = 1 << 20
_NO_POS, _NO_BEAT = np.empty(0, dtype=np.int32), np.empty(0)  # `_kernels.reset`: no heap, labels
# float32 keeps a field in 4 bytes a cell; relative rounding is below 2**-23, so
# the bound is lowered by this fraction of the fields' scale to stay admissible.
_F32_SLACK = 2.0**-21


class Highway:
    """Landmark cost fields over a cost grid, placed on its road network.

    Parameters
    ----------
    grid : CostGrid
        The unit's cost grid (any size; big maps are what this is for).
    landmarks : int
        How many cost fields to keep (4 bytes a cell each), at most: there are
        only as many places for them as the network has nodes, plus the
        table's four corners (`cells` holds those chosen).
    places : list of (x, y), optional
        Points routes often start or end at; each keeps an exact field of its
        own (4 bytes a cell, one flow field's time to build), so routes to it,
        and from it where steps cost the same both ways, search few cells
        beyond their path.  Two points in one cell are one place.

    Attributes
    ----------
    cells : ndarray of int64
        The landmarks' cells (flat indices); `landmarks` gives their centres.
    fields : ndarray of float32
        Every cell's cost to each landmark, one column each.
    rows : bool
        Whether routes read shared rows of steps (a unit without rear ranks,
        and the rows fit in the grid's table budget).
    symmetric : bool
        Whether a step costs the same both ways on this grid (no slopes, entry
        costs or narrow passages), so the bounds hold both ways round.
    slack : float
        How far the bounds are lowered to cover float32 rounding.

    Raises
    ------
    InputError
        ``landmarks`` is not a whole number >= 1, the unit can stand nowhere, a
        place is not a point on ground the unit can stand on (named by its
        index), or the places' fields would not fit in memory (`add_place`).

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid, route
    >>> rules = load_rules("fantasy-warlord")
    >>> grid = cost_grid(load_map("maps/crossings.geojson"), rules, rules.unit("humans"))
    >>> hw = Highway(grid, landmarks=4)
    >>> a, b = (2, 29), (198, 111)
    >>> abs(hw.route(a, b).cost - route(grid, a, b, any_angle=False).cost) < grid.cell
    True
    >>> town = Highway(grid, landmarks=4, places=[b])
    >>> abs(town.route(a, b).cost - route(grid, a, b, any_angle=False).cost) < grid.cell
    True
    """

    def __init__(self, grid: CostGrid, landmarks: int = 8,
                 places: Sequence[tuple[float, float]] = ()) -> None:
        instance("grid", grid, CostGrid, "cost_grid")
        if not whole(landmarks) or landmarks < 1:
            raise InputError(f"landmarks must be a whole number >= 1, got {landmarks!r}")
        places = listed("places", places)
        for i, xy in enumerate(places):  # every place checked before any field is built
            named(f"place {i}", _start_cell, grid, xy, "place")
        self.grid = grid
        self.cells = _place(grid, landmarks)
        # Fields without the footprint: what the rear ranks add depends on the path,
        # and costs without it are never higher, so they still bound from below.
        self._front = grid
        if grid.unit.depth > 0:
            self._front = cost_grid(grid.battlefield, grid.rules,
                                    dataclasses.replace(grid.unit, depth=0.0),
                                    len(grid.steps.dr))
        # Cell-major: a cell's landmark costs share a cache line, read together.
        self.fields = np.empty((grid.base.size, len(self.cells)), dtype=np.float32)
        top = 0.0
        for i, xy in enumerate(self.landmarks):
            cost = flow_field(self._front, [xy]).cost.ravel()  # every cell's cost to it
            self.fields[:, i] = cost
            top = max(top, float(cost[np.isfinite(cost)].max(initial=0.0)))
        self.slack = top * _F32_SLACK
        self._places: dict[int, np.ndarray] = {}  # cell -> an (n, 1) column of costs to it
        for xy in places:
            self.add_place(xy)
        # Rows of steps out of the cells that are not flat, shared among them, for the
        # A* of a unit without rear ranks (`CostGrid.outgoing_steps`, `_kernels.search_plain`).
        self.rows = bool(grid.unit.depth == 0 and grid.outgoing_steps[0].size)
        # A step costs the same both ways unless slopes or entry costs make the
        # direction matter; where it does, cost(v -> goal) >= cost(goal -> L) - cost(v -> L)
        # too.
        self.symmetric = bool((grid.steep == 1.0).all() and not grid.enter.any()
                              and not grid.narrow.any())
        # A route from a place may be searched backwards to it, and a route between two
        # other points from both ends at once, on the shared rows (the module's notes).
        self._reversible = self.symmetric and grid.unit.depth == 0
        self._both_ways = self._reversible and self.rows
        self._work: _BothWays | None = None  # `_both`'s state, made by its first route
        self._blocks = _blocks(grid, self.fields) if self._both_ways else None
        if self._blocks is not None:
            out = self._blocks.cells[:, 1]
            self.slack = max(self.slack, float(out[np.isfinite(out)].max()) * _F32_SLACK)

    def add_place(self, xy: tuple[float, float]) -> None:
        """Keep an exact field of costs to a point, as for ``places``.

        Parameters
        ----------
        xy : (x, y)
            A table point; one in a place's cell already is that place.

        Raises
        ------
        InputError
            ``xy`` is not a point on ground the unit can stand on, or another field
            would not fit in half the machine's memory.
        """
        cell = _start_cell(self.grid, point(xy), "place")
        if cell in self._places:
            return
        held = self.fields.nbytes + sum(f.nbytes for f in self._places.values())
        need = 4 * self.grid.base.size
        if held + need > memory_bytes() // 2:
            raise InputError(f"no room for another place: the {len(self._places)} places and "
                             f"{len(self.cells)} landmarks already hold {held / 2**30:.3g} GiB")
        centre = self.grid.grid.rc_to_xy(divmod(cell, self.grid.grid.shape[1]))
        cost = flow_field(self._front, [centre]).cost.reshape(-1, 1).astype(np.float32)
        self._places[cell] = cost
        self.slack = max(self.slack, float(cost[np.isfinite(cost)].max(initial=0.0)) * _F32_SLACK)

    @property
    def places(self) -> list[tuple[float, float]]:
        """The places' cells' centres (table units), in the order first given."""
        cols = self.grid.grid.shape[1]
        return [self.grid.grid.rc_to_xy(divmod(c, cols)) for c in self._places]

    @property
    def landmarks(self) -> list[tuple[float, float]]:
        """Where the landmarks stand (cell centres, table units)."""
        cols = self.grid.grid.shape[1]
        return [self.grid.grid.rc_to_xy(divmod(int(c), cols)) for c in self.cells]

    def route(self, start: tuple[float, float], goal: tuple[float, float],
              allowance: float | None = None) -> Route:
        """The cheapest route on the step lattice, exactly as ``engine.route(...,
        any_angle=False)`` finds it, guided by the landmarks.

        Parameters and the result are those of `engine.route`.

        Raises
        ------
        NoRouteError
            The goal cannot be reached (known before any search).
        InputError
            A point off the table or on impassable ground; a bad allowance.
        """
        return _route(self.grid, start, goal, allowance, self._find)

    def _find(self, source: int, target: int) -> tuple[list[int] | None, int]:
        """The cells of the cheapest path between two cells (None: no route) and how
        many the search touched (`search.front._route`'s ``find``): from both ends where
        the two may, neither end being a place (`_both`), else as `_plan` says."""
        if self._both_ways and source not in self._places and target not in self._places:
            return self._both(source, target)
        a, b, bounds = self._plan(source, target)
        if bounds is None:
            return None, 0
        cells, n = _find(self.grid, a, b, bounds)
        if cells is not None and a != source:
            cells.reverse()
        return cells, n

    def _both(self, source: int, target: int) -> tuple[list[int] | None, int]:
        """`_find` by `_kernels.search_both`, its pool of queue entries and rows of
        touched cells grown until they do not run out."""
        g = self.grid
        a = g.kernel_args
        row, cost = g.outgoing_steps
        n = g.base.size
        if self._work is None:
            split = _kernels.pool_split(a.nb)
            self._work = _BothWays(
                np.full((2, n), np.inf), np.full((2, n), -1, dtype=np.int8),
                np.empty((2, n), dtype=np.float32),
                np.empty((2, min(_FIRST_POOL, n)), dtype=np.int32),
                np.empty((2, 2 * _FIRST_POOL), dtype=np.int32),
                np.empty((2, _kernels.stack_rows(a.nb, True, split)), dtype=np.int64), split)
        w = self._work
        # Each side's bound is to the other's end.
        to_goal, goal_exit = self._bound_to(target)
        to_source, source_exit = self._bound_to(source)
        bounds, exits = np.stack([to_goal, to_source]), np.stack([goal_exit, source_exit])
        blocks = self._blocks.cells if self._blocks else np.empty((0, 2), dtype=np.float32)
        threads = numba.get_num_threads() >= 2
        while True:
            forward, backward, cost_found, meet = _kernels.search_both(
                a.cols, a.step_dr, a.step_dc, a.step_len, cost, row, a.flat, a.flat_of,
                a.onward_start, a.onward, source, target, g.cell, w.split, 2.0 * self.slack,
                w.dist, w.parent, w.touched, w.pool, w.heads, self.fields, bounds, exits,
                blocks, threads, w.pot)
            if forward >= 0:
                break
            self._reset(-forward, -backward)
            w.pool = np.empty((2, 2 * w.pool.shape[1]), dtype=np.int32)
            w.touched = np.empty((2, min(2 * w.touched.shape[1], n)), dtype=np.int32)
        try:
            if cost_found == np.inf:
                return None, forward + backward
            half = _trace(g, w.parent[0], source, meet)
            rest = _trace(g, w.parent[1], target, meet)
            return half + rest[-2::-1], forward + backward
        finally:
            self._reset(forward, backward)

    def _bound_to(self, end: int) -> tuple[np.ndarray, np.ndarray]:
        """`_kernels._bound_to`'s ``rows`` and ``exits`` for an end: `_bounds`' two rows,
        then its block's rim's least cost to each landmark and minus its greatest; its
        cost out of its block less the slack, and its block.  Outside any block: rim
        rows of -inf, and -inf and -1 (no blocks' bound)."""
        b = self._blocks
        j = int(b.cells[end, 0]) if b else -1
        if j < 0:
            rim, exit_ = np.full((2, len(self.cells)), -np.inf), np.array([-np.inf, -1.0])
        else:
            rim = np.stack([b.lo[j], -b.hi[j]])
            exit_ = np.array([float(b.cells[end, 1]) - self.slack, j])
        return np.concatenate([self._bounds(end)[1], rim]), exit_

    def _reset(self, forward: int, backward: int) -> None:
        """Return the cells `_both`'s two sides touched to unreached."""
        w = self._work
        on_threads(lambda side: _kernels.reset(
            w.touched[side], forward if side == 0 else backward, w.dist[side], w.parent[side],
            _NO_POS, _NO_BEAT), 2)  # a thread each

    def _plan(self, source: int, target: int) -> tuple[int, int, tuple | None]:
        """Which way to search and with which fields (`search.front._route`): to a place with
        its own field; from a place, backwards, where a step costs the same both ways;
        else to the goal with the landmarks'.  No fields (None) where a place's field
        shows the other end cannot reach it."""
        if target in self._places:
            a, b = source, target
        elif self._reversible and source in self._places:
            a, b = target, source
        else:
            return source, target, self._bounds(target)
        field = self._places[b]
        return a, b, None if field[a, 0] == np.inf else self._bounds(b, field)

    def _bounds(self, target: int, fields: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """The fields (the landmarks' unless given) and `_kernels.search`'s two rows for
        them: each one's cost from the goal less the float32 slack where costs are the
        same both ways (else ``-inf``), and minus it less the slack."""
        fields = self.fields if fields is None else fields
        at = fields[target]
        slack = np.float32(self.slack)
        ahead = at - slack if self.symmetric else np.full_like(at, -np.inf)
        return fields, np.stack([ahead, -at - slack])


@dataclasses.dataclass(eq=False)
class _BothWays:
    """`Highway._both`'s state: a row per side (forward, backward) of costs, steps in,
    keys' offsets from costs (`_kernels.search_both`'s ``pot``), queue entries, the
    touched cells and the bucket heads, kept between routes."""

    dist: np.ndarray
    parent: np.ndarray
    pot: np.ndarray
    touched: np.ndarray
    pool: np.ndarray
    heads: np.ndarray
    split: int


@dataclasses.dataclass(eq=False)
class _Blocks:
    """The ground the cheapest ground leaves in blocks (`_blocks`): each cell's block
    (-1: none) and its cost to the nearest cell of no block, in ``cells`` (float32,
    a row a cell), and each block's rim's least (``lo``) and greatest (``hi``) cost
    to each landmark (-inf and inf where the rim has none)."""

    cells: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _blocks(grid: CostGrid, fields: np.ndarray) -> _Blocks | None:
    """The blocks of a grid (None if it has none).

    The cheapest ground (the roads, on a campaign map), widened by one cell less
    than the steps reach so that no step jumps across it, leaves the rest of the
    passable ground in blocks: sets of cells one step apart (any step).  No step
    joins two blocks, so a path into a block comes in from a cell of no block one
    step from it, on the block's *rim*.  Hence a path from a cell outside an end's
    block costs at least its cost to that rim (which the landmarks bound by the
    rim's least and greatest costs to them) plus the end's cost out of its block.
    Within the end's block the bound is the end's cost out less the cell's.  Each
    term moves by no more than a step costs, and where a cell leaves the end's
    block the two meet (a rim's cell lies between its rim's least and greatest
    costs), so the bound stays consistent (`_kernels._bound_to`) among the cells
    that reach the end, which are all either side of the search ever reaches.
    (A block may straddle a river a long step jumps; the rim's costs to the
    landmarks its far bank cannot reach then come from the near bank alone, but a
    cell on the far bank cannot reach those landmarks either, and its bound
    leaves them out.)  None with 2**24 blocks or more, whose numbers float32
    would not hold exactly.
    """
    a = grid.kernel_args
    open_ = np.isfinite(grid.base)  # (some cell is: `_place` has made sure)
    reach = int(max(np.abs(a.step_dr).max(), np.abs(a.step_dc).max()))
    # Widened so that no step jumps over it from one block to the next.
    r = reach - 1
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    cheapest = grid.base == grid.base[open_].min()
    ground = open_ & ~ndimage.binary_dilation(cheapest, structure=dy**2 + dx**2 <= r * r + 0.5)
    label = np.empty(grid.base.size, dtype=np.int32)
    count = _kernels.block_labels(ground.ravel(), a.cols, a.step_dr, a.step_dc, label)
    if count == 0 or count >= 2**24:
        return None
    around = np.zeros((2 * reach + 1, 2 * reach + 1), dtype=bool)
    around[a.step_dr + reach, a.step_dc + reach] = True
    rim = (open_ & ~ground & ndimage.binary_dilation(ground, structure=around)).ravel()
    cells = np.empty((grid.base.size, 2), dtype=np.float32)
    cells[:, 0] = label
    cells[:, 1] = _cost_to_any(grid, np.flatnonzero(rim)) if rim.any() else np.inf
    cells[(open_ & ~ground).ravel(), 1] = 0.0
    lo = np.full((count, fields.shape[1]), np.inf)
    hi = np.full((count, fields.shape[1]), -np.inf)
    _kernels.block_rims(rim, label, a.cols, a.step_dr, a.step_dc, fields, lo, hi)
    none = lo > hi  # a landmark no cell of the rim reaches: no bound from it
    lo[none], hi[none] = -np.inf, np.inf
    return _Blocks(cells, lo, hi)


def _cost_to_any(grid: CostGrid, cells: np.ndarray) -> np.ndarray:
    """Every cell's cost to the nearest of some cells (`flow._costs_to`), the cells taken
    in halves while they are too many for one queue."""
    field = _costs_to(grid, cells)
    if field is not None:
        return field[0]
    if cells.size < 2:
        raise InputError("a field to one cell would outgrow its queue")
    half = cells.size // 2
    return np.minimum(_cost_to_any(grid, cells[:half]), _cost_to_any(grid, cells[half:]))


def _place(grid: CostGrid, count: int) -> np.ndarray:
    """Landmark cells: network ends first, then farthest-point choice over the network's
    nodes and the table's corners, on ground the unit can stand on."""
    spec = grid.grid
    cols = spec.shape[1]
    graph = network(grid.battlefield, grid.rules)
    order = {"end": 0, "bank": 1, "junction": 2}
    nodes = sorted(graph.nodes(data=True), key=lambda nd: order[nd[1]["kind"]])
    candidates = [d["pos"] for _, d in nodes]
    candidates += [(0.0, 0.0), (spec.width, 0.0), (0.0, spec.height), (spec.width, spec.height)]
    open_cells = np.isfinite(grid.base)
    if not open_cells.any():
        raise InputError(f"{grid.unit.race} can stand nowhere on this map")
    cells, xy = [], []
    for x, y in candidates:
        r, c = spec.xy_to_rc((min(max(x, 0.0), spec.width), min(max(y, 0.0), spec.height)))
        r, c = _nearest_open(open_cells, r, c)
        cells.append(r * cols + c)
        xy.append(((c + 0.5) * spec.cell, (r + 0.5) * spec.cell))
    xy = np.array(xy)
    chosen = [0]
    gap = np.hypot(*(xy - xy[0]).T)
    while len(chosen) < min(count, len(cells)):
        nxt = int(np.argmax(gap))
        if gap[nxt] == 0:
            break
        chosen.append(nxt)
        gap = np.minimum(gap, np.hypot(*(xy - xy[nxt]).T))
    return np.array(sorted({cells[i] for i in chosen}), dtype=np.int64)


def _nearest_open(open_cells: np.ndarray, r: int, c: int) -> tuple[int, int]:
    """The passable cell nearest (r, c), searching outwards ring by ring."""
    rows, cols = open_cells.shape
    for k in range(max(rows, cols)):
        r0, r1, c0, c1 = max(r - k, 0), min(r + k + 1, rows), max(c - k, 0), min(c + k + 1, cols)
        window = open_cells[r0:r1, c0:c1]
        if window.any():
            rr, cc = np.nonzero(window)
            best = int(np.argmin((rr + r0 - r) ** 2 + (cc + c0 - c) ** 2))
            return int(rr[best] + r0), int(cc[best] + c0)
    raise AssertionError("unreachable: some cell is open")
