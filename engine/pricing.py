"""Why a path costs what it costs: pricing a polyline leg by leg.

The pricer walks each straight segment of the path through the cells it
crosses and charges, for every piece, its length times the footprint
multiplier of that cell for the segment's direction (`CostGrid.multiplier`):
the same rule the search kernels apply to their steps, so pricing a route's
own path returns the route's cost.  Fantasy Warlord has no rounding: costs are
the smooth product of distance and multiplier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .errors import InputError
from .grid import segment_cells
from .terrain import CostGrid

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
    """

    start: tuple[float, float]
    end: tuple[float, float]
    length: float
    cost: float
    multiplier: float
    terrain: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "from": [round(self.start[0], 6), round(self.start[1], 6)],
            "to": [round(self.end[0], 6), round(self.end[1], 6)],
            "length": round(self.length, 6),
            "cost": None if math.isinf(self.cost) else round(self.cost, 6),
            "multiplier": None if math.isinf(self.multiplier) else self.multiplier,
            "terrain": self.terrain,
        }


@dataclass(frozen=True)
class Pricing:
    """The price of a path: total cost, length and the legs."""

    cost: float
    length: float
    legs: list[Leg]


def price_path(grid: CostGrid, path) -> Pricing:
    """Price a polyline under the rules, leg by leg.

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
    >>> p = price_path(g, [(0.25, 3.25), (11.25, 3.25)])
    >>> p.cost, [(leg.length, leg.multiplier, leg.terrain) for leg in p.legs]
    (20.0, [(1.0, 1.0, ['clear']), (9.0, 2.0, ['broken ground']), (1.0, 1.0, ['clear'])])
    """
    points = [tuple(float(v) for v in p) for p in _points(path)]
    for p in points:
        grid.grid.xy_to_rc(p)
    pieces = []
    for p, q in zip(points, points[1:], strict=False):
        pieces.extend(_segment_pieces(grid, p, q))
    legs: list[Leg] = []
    for piece in pieces:
        last = legs[-1] if legs else None
        if last and last.multiplier == piece.multiplier and last.terrain == piece.terrain:
            legs[-1] = Leg(
                last.start, piece.end, last.length + piece.length,
                last.cost + piece.cost, last.multiplier, last.terrain,
            )
        else:
            legs.append(piece)
    cost = math.fsum(leg.cost for leg in pieces)
    length = math.fsum(leg.length for leg in pieces)
    return Pricing(cost, length, legs)


def _points(path) -> list:
    try:
        points = list(path)
    except TypeError:
        raise InputError("a path must be a sequence of (x, y) points") from None
    if len(points) < 2:
        raise InputError(f"a path needs at least two points, got {len(points)}")
    return points


def _segment_pieces(grid: CostGrid, p, q) -> list[Leg]:
    """Price one straight segment cell by cell (the pieces legs are made of)."""
    cell = grid.grid.cell
    dx, dy = q[0] - p[0], q[1] - p[1]
    seg = math.hypot(dx, dy)
    if seg == 0:
        return []
    hyp = math.hypot(dx / cell, dy / cell)
    u = ((dx / cell) / hyp, (dy / cell) / hyp)
    cells, corners = segment_cells((p[0] / cell, p[1] / cell), (q[0] / cell, q[1] / cell))
    rows, cols = grid.base.shape
    out = []
    for r, c in corners:
        if 0 <= r < rows and 0 <= c < cols and grid.base[r, c] == math.inf:
            names = grid.combos[grid.combo[r, c]]
            return [Leg(p, q, seg, math.inf, math.inf, [_blocked(names)])]
    for r, c, t0, t1 in cells:
        r, c = min(max(r, 0), rows - 1), min(max(c, 0), cols - 1)
        m, where = grid.multiplier((r, c), u)
        a = (p[0] + t0 * dx, p[1] + t0 * dy)
        b = (p[0] + t1 * dx, p[1] + t1 * dy)
        names = list(grid.combos[grid.combo[where]])
        if m == math.inf:
            terrain = [_blocked(names)]
        else:
            terrain = [n for n in names if n != "clear"] if m > 1 else []
            if m > 1 and grid.uphill(where, u):
                terrain.append("steep slope (uphill)")
            terrain = terrain or ["clear"]
        length = seg * (t1 - t0)
        out.append(Leg(a, b, length, length * m, m, terrain))
    return out


def _blocked(names) -> str:
    return "impassable: " + (", ".join(names) if names else "ground")
