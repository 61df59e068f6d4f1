"""Why a path costs what it costs: pricing a polyline leg by leg.

The pricer walks each straight segment of the path through the cells it
crosses and charges every piece its length times the multiplier in force: the
larger of the ground under the front (uphill-only slopes priced for the
segment's direction) and any ground still under the unit's footprint behind
it.  The walk is one numba call (`_kernels.walk_path`) running the same trail
code the search kernels run on their steps, so pricing a route's own path
returns the route's cost; Python then names what set each price.  Fantasy
Warlord has no rounding: costs are the smooth product of distance and
multiplier.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._args import instance, listed, points
from ..errors import InputError
from ..terrain._kernels import TRAIL, through
from ..terrain.costgrid import CostGrid
from ..terrain.lattice import trail_behind
from . import _kernels

__all__ = ["Leg", "Pricing", "price_path"]


@dataclass(frozen=True)
class Leg:
    """A stretch of path priced by one rule.

    Attributes
    ----------
    start, end : (x, y)
        Table coordinates.
    length : float
        Distance the front moved.
    cost : float
        Allowance spent (``inf`` if the ground is impassable).
    multiplier : float
        Cost per unit of distance.
    terrain : list of str
        What set the multiplier: the kinds under the footprint's costliest cell
        (``"steep slope (uphill)"`` when the steep rule applies), ``["clear"]``
        when nothing does, ``["impassable: river"]`` for blocked ground.
    kind : str
        ``"move"``; ``"formation change"``: the unit narrows its frontage to
        enter a passage; ``"obstacle"``: the flat cost of crossing one; or
        ``"quantum"``: what rounding a stretch of ground priced per started
        quantum up to whole quanta adds (``terrain`` says which).  The last
        three have no length, multiplier 0 and a flat cost.
    """

    start: tuple[float, float]
    end: tuple[float, float]
    length: float
    cost: float
    multiplier: float
    terrain: list[str] = field(default_factory=list)
    kind: str = "move"

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "from": [round(self.start[0], 6), round(self.start[1], 6)],
            "to": [round(self.end[0], 6), round(self.end[1], 6)],
            "length": round(self.length, 6),
            "cost": None if math.isinf(self.cost) else round(self.cost, 6),
            "multiplier": None if math.isinf(self.multiplier) else self.multiplier,
            "terrain": self.terrain,
        }


@dataclass(frozen=True)
class Pricing:
    """The price of a path.

    Attributes
    ----------
    cost, length : float
    legs : list of Leg
        Consecutive stretches priced alike, merged (a leg may span bends of
        the path; ``start`` and ``end`` are where it begins and ends).
    pieces : list of Leg
        The same, unmerged: one straight stretch per cell and multiplier.
    """

    cost: float
    length: float
    legs: list[Leg]
    pieces: list[Leg] = field(default_factory=list, repr=False)


def price_path(grid: CostGrid, path: Sequence[tuple[float, float]]) -> Pricing:
    """Price a polyline under the rules, leg by leg.

    The unit stands at the first point facing along the first leg, its ranks
    straight behind it; from there its footprint follows the path (the rear
    ranks pay for ground until they have left it).

    Parameters
    ----------
    grid : CostGrid
        From `cost_grid`.
    path : sequence of (x, y)
        At least two points in table units, all on the table.

    Returns
    -------
    Pricing
        ``cost`` is ``inf`` if the path crosses impassable ground (the leg
        that does says what).

    Raises
    ------
    InputError
        Fewer than two points, a point off the table, or a path that crosses
        more than `MAX_CROSSED` cell edges (thousands of times across the table).

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/examples/archers.geojson")
    >>> g = cost_grid(bf, rules, rules.unit("humans", ranks=2))
    >>> p = price_path(g, [(0, 3.25), (11, 3.25)])
    >>> p.cost
    20.0
    >>> [(leg.length, leg.multiplier, leg.terrain)
    ...  for leg in p.legs]  # doctest: +NORMALIZE_WHITESPACE
    [(1.0, 1.0, ['clear']), (5.0, 2.0, ['broken ground']),
     (4.0, 2.0, ['broken ground (rear ranks)']), (1.0, 1.0, ['clear'])]
    """
    instance("grid", grid, CostGrid, "cost_grid")
    return _price(grid, path, pieces=True)[0]


def _price(grid: CostGrid, path, pieces: bool,
           checked: bool = False) -> tuple[Pricing, np.ndarray]:
    """`price_path`, and its pieces' rows ``(x0, y0, x1, y1, length, cost, level)``
    (`_kernels.walk_path`); without ``pieces``, ``Pricing.pieces`` is left empty
    (a route's legs and turns need only the rows).  ``checked``: ``path`` is a list
    of float points known to be on the table (a route's)."""
    points = list(path) if checked else _points(grid, path)
    if not checked:
        _not_too_long(points, grid.grid.cell)
    moves = _moves(points, grid.grid.cell)
    if not moves:
        return Pricing(0.0, 0.0, [], []), np.empty((0, 7))
    pricer = _Pricer(grid)
    rows_f, rows_i = pricer.walk(moves)
    lengths, costs = rows_f[:, 4].tolist(), rows_f[:, 5].tolist()
    shown = []
    if pieces:
        shown = [pricer.piece(*row)
                 for row in zip(rows_f.tolist(), rows_i.tolist(), strict=True)]
    legs = pricer.legs(_runs(rows_f, rows_i), lengths, costs)
    return Pricing(math.fsum(costs), math.fsum(lengths), legs, shown), rows_f


def _moves(points: list, cell: float) -> list:
    """The points a walk takes: ``points`` without those starting a move too short to
    show in cells (a subnormal one is no move: it has no direction); empty if there
    is no move."""
    moves = [p for p, q in itertools.pairwise(points)
             if math.hypot((q[0] - p[0]) / cell, (q[1] - p[1]) / cell) > 0.0]
    return [*moves, points[-1]] if moves else []


def _path_cost(grid: CostGrid, points: list) -> float:
    """`_price`'s cost alone of a path that is a list of float points on the table (a
    route's), without its legs: to compare paths."""
    moves = _moves(points, grid.grid.cell)
    return math.fsum(_Pricer(grid).walk(moves)[0][:, 5].tolist()) if moves else 0.0


def _runs(rows_f: np.ndarray, rows_i: np.ndarray) -> list:
    """Where `_Pricer.legs` starts anew: each row of `_Pricer.walk`'s (as lists) that
    is not a move it adds to the leg as it stands (the same ground and rank as the row
    before, neither climbing, the same multiplier), with the index of the next such
    row and the end of the last row before it.  A long route's thousands of rows are
    its few dozen legs' worth."""
    if not len(rows_f):
        return []
    kind, origin, front, combo, uphill = rows_i.T
    plain = (kind == _kernels.MOVE) & (uphill == 0)
    rear = origin != front
    level = rows_f[:, 6]
    adds = (plain[1:] & plain[:-1] & (combo[1:] == combo[:-1]) & (rear[1:] == rear[:-1])
            & (level[1:] == level[:-1]))
    starts = np.flatnonzero(np.concatenate([[True], ~adds]))
    stops = np.append(starts[1:], len(rows_f))
    return list(zip(rows_f[starts].tolist(), rows_i[starts].tolist(), stops.tolist(),
                    rows_f[stops - 1, 2:4].tolist(), strict=True))


# The most cell edges a path given to `price_path` may cross: each piece of its walk
# becomes a leg's worth of Python objects (about a kilobyte a cell crossed), so a path
# of thousands of points each across the table would take gigabytes and minutes.
MAX_CROSSED = 500_000


def _not_too_long(points: list, cell: float) -> None:
    """`InputError` if the path ``points`` crosses more than `MAX_CROSSED` cell edges."""
    crossed = sum(abs(q[0] - p[0]) + abs(q[1] - p[1]) for p, q in itertools.pairwise(points))
    if crossed / cell > MAX_CROSSED:
        raise InputError(f"the path crosses about {crossed / cell:,.0f} cell edges, more than "
                         f"the {MAX_CROSSED:,} one pricing takes: price it in parts")


def _points(grid: CostGrid, path) -> list:
    """The points of ``path``, two or more, each on ``grid``'s table; else `InputError`."""
    path = listed("path", path)
    if len(path) < 2:
        raise InputError(f"a path needs at least two points, got {len(path)}")
    return points("path", path, grid.grid.xy_to_rc)


class _Pricer:
    """Walks a path cell by cell with the kernels' own trail (`_kernels.walk_path`)
    and names what it priced."""

    def __init__(self, grid: CostGrid):
        self.g = grid
        self.cell = grid.grid.cell
        self.rows, self.cols = grid.base.shape
        self.flat = (grid.base.ravel(), grid.steep.ravel(), grid.slope[0].ravel(), grid.slope[1])
        self.lv = np.empty(TRAIL)
        self.rem = np.empty(TRAIL)
        self.org = np.empty(TRAIL, dtype=np.int64)
        self.n = 0
        self.at = -1  # the cell the front is in, for entry costs
        self.names: dict[tuple, list[str]] = {}

    def _direction(self, p, q) -> tuple[float, float]:
        dx, dy = (q[0] - p[0]) / self.cell, (q[1] - p[1]) / self.cell
        hyp = math.hypot(dx, dy)
        return dx / hyp, dy / hyp

    def stand(self, p, q) -> None:
        """Place the footprint anew straight behind ``p``, facing ``q``, the front in
        the cell ``p`` stands in (`CostGrid.stand`)."""
        u = self._direction(p, q)
        self.at = self.g.stand_index(p)
        self.n = 0
        depth = self.g.unit.depth / self.cell
        for r, c, rem in trail_behind((p[0] / self.cell, p[1] / self.cell), u, depth):
            # Ranks along the table's far edge stand in its last column or row, as the
            # front does there; beyond the table they stand nowhere.
            if r == self.rows and u[1] == 0:
                r -= 1
            if c == self.cols and u[0] == 0:
                c -= 1
            if 0 <= r < self.rows and 0 <= c < self.cols:
                i = r * self.cols + c
                m = through(*self.flat, i, *u)
                if m != math.inf:
                    self.n = _kernels.push(
                        self.lv, self.rem, self.org, self.n, m, rem * self.cell, i
                    )

    def walk(self, points: list) -> tuple[np.ndarray, np.ndarray]:
        """The rows of `_kernels.walk_path` (floats, integers) for the polyline
        ``points`` (each move at least a subnormal in cells), the unit standing at
        the first facing the second."""
        self.stand(points[0], points[1])
        cell, segs, size = self.cell, [], 1
        for p, q in itertools.pairwise(points):
            dx, dy = q[0] / cell - p[0] / cell, q[1] / cell - p[1] / cell
            # Python's own hypot (numba's may differ in the last bit), as the walk always had.
            segs.append((*p, *q, math.hypot(q[0] - p[0], q[1] - p[1]), *self._direction(p, q),
                         math.hypot(dx, dy)))
            size += (math.ceil(abs(dx)) + math.ceil(abs(dy)) + 3) * (3 * TRAIL + 6)
        out_f = np.empty((size, 7))  # walk_path's bound on its rows
        out_i = np.empty((size, 5), dtype=np.int64)
        g = self.g
        k = _kernels.walk_path(
            np.array(segs), cell, *self.flat, g.enter.ravel(), g.narrow.ravel(),
            g.quantum if g.quantum.any() else np.empty(0), g.combo.ravel(),
            self.lv, self.rem, self.org, self.n, self.at, float(g.unit.depth), self.cols,
            out_f, out_i,
        )
        return out_f[:k], out_i[:k]

    def piece(self, row_f: list, row_i: list) -> Leg:
        """The piece a row of `walk` stands for."""
        (x0, y0, x1, y1, length, cost, level), (kind, i, front, combo, uphill) = row_f, row_i
        a, b = (x0, y0), (x1, y1)
        if kind == _kernels.MOVE:
            return Leg(a, b, length, cost, level, list(self._terrain(i, front, combo, uphill)))
        if kind in (_kernels.BLOCKED, _kernels.BLOCKED_SEGMENT):
            return Leg(a, b, length, math.inf, math.inf, [self._blocked(i)])
        if kind == _kernels.QUANTUM:
            return Leg(a, a, 0.0, cost, 0.0, [self._quantum(i, level, front)], "quantum")
        return self._entry(kind, i, cost, a)

    def legs(self, runs: list, lengths: list, costs: list) -> list[Leg]:
        """The pieces of `walk`'s rows merged where their multiplier and terrain are
        the same; a leg is built only once it is complete.  ``runs`` (`_runs`) are the
        rows that may start a leg, each with the rows after it up to the next that
        go on the same ground (``lengths`` and ``costs``: every row's, added to the
        leg one by one as they always were, so its sums are the same to the bit)."""
        legs = []
        cur: list = []  # the leg being merged: Leg's fields, in order
        at = 0  # the row of the run
        for row_f, row_i, stop, end_of_run in runs:
            self._add(legs, cur, row_f, row_i)
            if stop > at + 1:  # the same ground as the last: same terrain
                for j in range(at + 1, stop):
                    cur[2] += lengths[j]
                    cur[3] += costs[j]
                cur[1] = tuple(end_of_run)
            at = stop
        if cur:
            legs.append(Leg(*cur[:5], list(cur[5]), cur[6]))
        return legs

    def _add(self, legs: list, cur: list, row_f: list, row_i: list) -> None:
        """Add a row that may start a leg (`legs`) to the leg ``cur`` where its
        multiplier and terrain are the same, or close ``cur`` in ``legs`` and start
        it anew with the row."""
        if row_i[0] == _kernels.MOVE:
            x0, y0, x1, y1, length, cost, multiplier = row_f
            start, end = (x0, y0), (x1, y1)
            terrain, kind = self._terrain(*row_i[1:]), "move"
        else:
            leg = self.piece(row_f, row_i)
            start, end, length, cost, multiplier, terrain, kind = dataclasses.astuple(leg)
        if cur and cur[4] == multiplier and cur[5] == terrain:
            cur[1], cur[2], cur[3] = end, cur[2] + length, cur[3] + cost
        else:
            if cur:
                legs.append(Leg(*cur[:5], list(cur[5]), cur[6]))
            cur[:] = [start, end, length, cost, multiplier, terrain, kind]

    def _terrain(self, origin: int, front: int, combo: int, uphill: int) -> list[str]:
        """What set the multiplier of a `_kernels.MOVE` row: cell ``origin``'s kinds
        (``combo``), climbing or not, under the front (cell ``front``) or the rear
        ranks.  One list per answer, shared (callers copy it into a leg)."""
        steep = bool(uphill) and bool(self.g.layers.steep.flat[origin])
        key = (combo, uphill, steep, origin != front)
        names = self.names.get(key)
        if names is None:
            names = [n for n in self.g.combos[combo] if n != "clear"]
            if uphill:
                names.append("steep slope (uphill)" if steep else "uphill")
            names = names or ["clear"]
            if origin != front:
                names = [f"{n} (rear ranks)" for n in names]
            self.names[key] = names
        return names

    def _quantum(self, i: int, distance: float, started: int) -> str:
        """What a `_kernels.QUANTUM` row says: ``distance`` over the quantised ground
        that ends in cell ``i`` charged as ``started`` quanta."""
        combo = self.g.combo.flat[i]
        names = [n for n in self.g.combos[combo] if n != "clear"]
        return (f"{', '.join(names)}: {distance:g} charged as {started} started "
                f"{self.g.quantum[combo]:g}")

    def _entry(self, kind: int, i: int, cost: float, at) -> Leg:
        """A flat cost of the front going into cell ``i`` (`terrain._kernels.entry`): an
        obstacle's crossing (`_kernels.OBSTACLE`), a formation change
        (`_kernels.trail.NARROW`)."""
        rc = divmod(i, self.cols)
        rules, unit, lay = self.g.rules, self.g.unit, self.g.layers
        names = self.g.combos[self.g.combo[rc]]
        if kind == _kernels.OBSTACLE:
            kinds = [n for n in names if rules.terrain[n].crossing_cost > 0] or list(names)
            return Leg(at, at, 0.0, cost, 0.0, [f"{', '.join(kinds)} ({cost:g} to cross)"],
                       "obstacle")
        widths = [f"{name} {lay.passage[name][rc]:g} wide" for name in names
                  if name in lay.passage and lay.passage[name][rc] < unit.frontage]
        return Leg(at, at, 0.0, cost, 0.0, [f"{', '.join(widths)}, frontage {unit.frontage:g}"],
                   "formation change")

    def _blocked(self, i: int) -> str:
        names = self.g.combos[self.g.combo[divmod(i, self.cols)]]
        return "impassable: " + (", ".join(names) if names else "ground")
