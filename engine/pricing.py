"""Why a path costs what it costs: pricing a polyline leg by leg.

The pricer walks each straight segment of the path through the cells it
crosses and charges every piece its length times the multiplier in force: the
larger of the ground under the front (uphill-only slopes priced for the
segment's direction) and any ground still under the unit's footprint behind
it.  It runs the same numba trail code the search kernels run on their steps,
so pricing a route's own path returns the route's cost.  Fantasy Warlord has
no rounding: costs are the smooth product of distance and multiplier.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from . import _kernels
from .errors import InputError
from .grid import _finite_point, segment_cells
from .terrain import CostGrid, trail_behind

__all__ = ["Leg", "Pricing", "price_path"]

# A stretch within this of a whole number of quanta is that number (float error
# along a path must not start a quantum that was never entered).
_QUANTUM_TOL = 1e-9


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


def price_path(grid: CostGrid, path) -> Pricing:
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
        Fewer than two points, or a point off the table.

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
    points = _points(path)
    for i, p in enumerate(points):
        try:
            points[i] = _finite_point(p)
        except InputError as exc:
            raise InputError(f"path point {i}: {exc}") from None
        grid.grid.xy_to_rc(points[i])
    pricer = _Pricer(grid)
    moves = [(p, q) for p, q in itertools.pairwise(points) if p != q]
    if moves:
        pricer.stand(*moves[0])
    for p, q in moves:
        pricer.move(p, q)
    pricer.close_quantum(points[-1])
    legs: list[Leg] = []
    for piece in pricer.pieces:
        last = legs[-1] if legs else None
        if last and last.multiplier == piece.multiplier and last.terrain == piece.terrain:
            legs[-1] = Leg(
                last.start, piece.end, last.length + piece.length,
                last.cost + piece.cost, last.multiplier, last.terrain,
            )
        else:
            legs.append(piece)
    cost = math.fsum(leg.cost for leg in pricer.pieces)
    length = math.fsum(leg.length for leg in pricer.pieces)
    return Pricing(cost, length, legs, pricer.pieces)


def _points(path) -> list:
    try:
        points = list(path)
    except TypeError:
        raise InputError("a path must be a sequence of (x, y) points") from None
    if len(points) < 2:
        raise InputError(f"a path needs at least two points, got {len(points)}")
    return points


class _Pricer:
    """Walks a path cell by cell with the kernels' own trail, recording pieces."""

    def __init__(self, grid: CostGrid):
        self.g = grid
        self.cell = grid.grid.cell
        self.rows, self.cols = grid.base.shape
        self.flat = (grid.base.ravel(), grid.steep.ravel(), *(s.ravel() for s in grid.slope))
        self.lv = np.empty(_kernels.TRAIL)
        self.rem = np.empty(_kernels.TRAIL)
        self.org = np.empty(_kernels.TRAIL, dtype=np.int64)
        self.rec = (
            np.empty(_kernels.TRAIL + 1),
            np.empty(_kernels.TRAIL + 1),
            np.empty(_kernels.TRAIL + 1, dtype=np.int64),
        )
        self.n = 0
        self.pieces: list[Leg] = []
        self.flats = (grid.enter.ravel(), grid.narrow.ravel())
        self.at = -1  # the cell the front is in, for entry costs
        # The stretch of quantised ground the front is in: quantum, distance so far,
        # the front's multiplier and cell at its latest piece.
        self.quantum = grid.quantum[grid.combo].ravel() if grid.quantum.any() else None
        self.q, self.qd, self.qm, self.qcell = 0.0, 0.0, 1.0, -1

    def _direction(self, p, q) -> tuple[float, float]:
        dx, dy = (q[0] - p[0]) / self.cell, (q[1] - p[1]) / self.cell
        hyp = math.hypot(dx, dy)
        return dx / hyp, dy / hyp

    def _index(self, r: int, c: int) -> int:
        return min(max(r, 0), self.rows - 1) * self.cols + min(max(c, 0), self.cols - 1)

    def stand(self, p, q) -> None:
        """Place the footprint straight behind ``p``, facing ``q``."""
        u = self._direction(p, q)
        self.at = self._index(*self.g.grid.xy_to_rc(p))
        depth = self.g.unit.depth / self.cell
        for r, c, rem in trail_behind((p[0] / self.cell, p[1] / self.cell), u, depth):
            if 0 <= r < self.rows and 0 <= c < self.cols:
                i = r * self.cols + c
                m = _kernels.ground(*self.flat, i, *u)
                if m != math.inf:
                    self.n = _kernels.push(
                        self.lv, self.rem, self.org, self.n, m, rem * self.cell, i
                    )

    def move(self, p, q) -> None:
        """Advance the front from ``p`` to ``q`` in a straight line."""
        u = self._direction(p, q)
        seg = math.hypot(q[0] - p[0], q[1] - p[1])
        cells, corners = segment_cells(
            (p[0] / self.cell, p[1] / self.cell), (q[0] / self.cell, q[1] / self.cell)
        )
        base = self.flat[0]
        for r, c in corners:
            if 0 <= r < self.rows and 0 <= c < self.cols and base[r * self.cols + c] == math.inf:
                blocked = [self._blocked(r * self.cols + c)]
                self.pieces.append(Leg(p, q, seg, math.inf, math.inf, blocked))
                return
        depth = float(self.g.unit.depth)
        for r, c, s0, s1 in cells:
            i = self._index(r, c)
            # Points by distance along the unit direction: exact on axis-parallel paths.
            a = (p[0] + u[0] * s0 * self.cell, p[1] + u[1] * s0 * self.cell)
            b = (p[0] + u[0] * s1 * self.cell, p[1] + u[1] * s1 * self.cell)
            if s1 == cells[-1][3]:
                b = q
            length = (s1 - s0) * self.cell
            m = _kernels.ground(*self.flat, i, *u)
            if m == math.inf:
                self.pieces.append(Leg(a, b, length, math.inf, math.inf, [self._blocked(i)]))
                continue
            if self.flats[0][i] > 0.0 or self.flats[1][i] > 0.0:
                self._entry(i, a)
            self.at = i
            if self.quantum is not None:
                if self.quantum[i] != self.q:
                    self.close_quantum(a)
                    self.q, self.qd = float(self.quantum[i]), 0.0
                if self.q > 0:
                    self.qd += length
                    self.qm, self.qcell = m, i
            _, self.n, nrec = _kernels.advance(
                self.lv, self.rem, self.org, self.n, m, i, length, depth, *self.rec, True
            )
            done = 0.0
            for j in range(nrec):
                part, level = float(self.rec[0][j]), float(self.rec[1][j])
                origin = int(self.rec[2][j])
                f0, f1 = done / length, (done + part) / length
                done += part
                self.pieces.append(Leg(
                    (a[0] + f0 * (b[0] - a[0]), a[1] + f0 * (b[1] - a[1])),
                    (a[0] + f1 * (b[0] - a[0]), a[1] + f1 * (b[1] - a[1])),
                    part, part * level, level, self._terrain(origin, i, level),
                ))

    def _terrain(self, origin: int, front: int, level: float) -> list[str]:
        rc = divmod(origin, self.cols)
        names = [n for n in self.g.combos[self.g.combo[rc]] if n != "clear"]
        if level > self.flat[0][origin]:
            names.append("steep slope (uphill)" if self.g.layers.steep[rc] else "uphill")
        names = names or ["clear"]
        if origin != front:
            names = [f"{n} (rear ranks)" for n in names]
        return names

    def close_quantum(self, at) -> None:
        """End the stretch of quantised ground: charge the rest of its last started quantum."""
        if self.q <= 0:
            return
        started = math.ceil(self.qd / self.q - _QUANTUM_TOL)
        extra = (started * self.q - self.qd) * self.qm
        if extra > _QUANTUM_TOL:
            names = [n for n in self.g.combos[self.g.combo[divmod(self.qcell, self.cols)]]
                     if n != "clear"]
            self.pieces.append(Leg(at, at, 0.0, extra, 0.0, [
                f"{', '.join(names)}: {self.qd:g} charged as {started} started "
                f"{self.q:g}"], "quantum"))
        self.q, self.qd = 0.0, 0.0

    def _entry(self, i: int, at) -> None:
        """The flat costs of the front going into cell ``i`` (`_kernels.entry`): an
        obstacle's crossing, a formation change."""
        enter, narrow = self.flats
        prev = self.at
        rc = divmod(i, self.cols)
        rules, unit, lay = self.g.rules, self.g.unit, self.g.layers
        names = self.g.combos[self.g.combo[rc]]
        if enter[i] > 0.0 and enter[i] != enter[prev]:
            kinds = [n for n in names if rules.terrain[n].crossing_cost > 0] or list(names)
            self.pieces.append(Leg(at, at, 0.0, float(enter[i]), 0.0,
                                   [f"{', '.join(kinds)} ({enter[i]:g} to cross)"], "obstacle"))
        if narrow[i] > 0.0 and narrow[prev] == 0.0:
            widths = [f"{kind} {lay.passage[kind][rc]:g} wide" for kind in names
                      if kind in lay.passage and lay.passage[kind][rc] < unit.frontage]
            self.pieces.append(Leg(at, at, 0.0, float(narrow[i]), 0.0,
                                   [f"{', '.join(widths)}, frontage {unit.frontage:g}"],
                                   "formation change"))

    def _blocked(self, i: int) -> str:
        names = self.g.combos[self.g.combo[divmod(i, self.cols)]]
        return "impassable: " + (", ".join(names) if names else "ground")
