"""A route's path by its own searches: the any-angle search's and the step lattice's,
joined to the exact start and goal, its bends moved to where they cost least
(`engine.search.bends`), and with rear ranks a first step tried that faces them
another way.  `route` takes it, or the path a reach prices the goal along if that is
cheaper; `Reach.cost_at` asks it where a reach's own paths may miss a cheaper way.

Private to `engine.search`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..terrain.costgrid import CostGrid
from ._kernels.ranked import _clean_stand
from ._state import _NO_LANDMARKS, _nodes, _workspace, facing_points
from .bends import _across_tries, _bendable, _levelled, _ranked_moved, _refined, _unbent
from .pricing import Pricing, _path_cost, _price


def _searched(g: CostGrid, source: int, start: tuple, target: int, goal: tuple,
              find: Callable | None = None, any_angle: bool = True) -> tuple | None:
    """A route's path from ``start`` (in cell ``source``) to ``goal`` (in cell
    ``target``) by its own search, priced with its rows (`_price`), None if there is
    none: the cells ``find`` gives (`_find` without landmarks unless given) joined to
    the points, or with ``any_angle`` and without ``find`` for a unit without rear
    ranks the cheaper of the any-angle search's and the lattice's (`_either`); with
    ``any_angle`` then straightened (`_straighten`) and with rear ranks faced
    another way first where that is cheaper (`_faced`)."""
    found = None
    if any_angle and find is None and g.depth == 0:
        found = _either(g, source, start, target, goal)
    else:
        cells = (find or functools.partial(_find, g))(source, target)[0]
        if cells is not None:
            found = _join(g, start, goal, _polyline(g, cells))
    if found is None or not any_angle:
        return found
    found = _straighten(g, *found)
    return _faced(g, found) if g.depth > 0 and find is None else found


def _weighed(g: CostGrid, best: tuple | None, found: tuple) -> tuple:
    """``found`` (a route's path, pricing and rows), or the path ``best`` (its points and
    price, None for none) straightened (`_straighten`), if that is cheaper."""
    if best is None or best[1] >= found[1].cost:
        return found
    other = _straighten(g, best[0], *_price(g, best[0], pieces=False, checked=True))
    return other if other[1].cost < found[1].cost else found


def _stands_clean(g: CostGrid, x: float, y: float) -> bool:
    """Whether the rear ranks of a unit at ``(x, y)``, facing any way, stand on no ground
    heavier than where its front starts (`_kernels.ranked._clean_stand`): then no
    facing changes what a move from there costs."""
    a = g.kernel_args
    return _clean_stand(x, y, float(g.unit.depth), g.cell, a.cols, a.base.size // a.cols,
                        a.base, a.steep)


def _faced(g: CostGrid, found: tuple) -> tuple:
    """``found`` (a route's path, or `Reach.cost_at`'s, its pricing and rows), or, if
    cheaper, the path with a first step a hair long (`facing_points`, kept on the
    table), going on to its first bend or past it, its bends then moved
    (`_straighten`): the cheapest such step in one of `FACINGS` directions, and
    the cheapest of those facing the ranks past the edges of ground near them
    (`_edge_facings`) if cheaper still, whichever is cheaper once moved.

    A move stands the rear ranks straight behind the unit facing along its
    first leg, so a first step sideways (along a slope's contour, say, or a
    wood's edge) can keep them off ground that going straight would stand
    them on.  The any-angle reach tries those first steps too
    (`_kernels.theta_labels`, in the `FACINGS` directions), but the step
    lattice's search stands the ranks facing each first move only, and a path's
    bends, once moved, may want another facing."""
    path, priced = found[:2]
    x, y = path[0]
    if priced.cost == math.inf or _stands_clean(g, x, y):
        return found  # (no facing stands the ranks on ground heavier than the start's)
    at = np.array([path[0]], dtype=np.float64)
    taken, least = found, priced.cost
    for steps in (facing_points(g, at)[0], facing_points(g, at, _edge_facings(g, x, y))[0]):
        best = None
        for q in steps.tolist():
            if math.isnan(q[0]):  # (a step straight off the table, clamped back to the start)
                continue
            for on in (path[1:], path[2:])[:len(path) - 1]:  # on to the first bend, or past it
                faced = [path[0], tuple(q), *on]
                cost = _path_cost(g, faced)
                if cost < least:
                    best, least = faced, cost
        if best is not None:
            moved = _straighten(g, best, *_price(g, best, pieces=False, checked=True))
            if moved[1].cost < taken[1].cost:
                taken = moved
    return taken


# How far (radians) to either side of an edge of ground `_edge_facings` faces the ranks.
_EDGE_TURN = 1e-6


def _edge_facings(g: CostGrid, x: float, y: float) -> np.ndarray:
    """The directions (rows of unit vectors) a unit at ``(x, y)`` may face so that its
    rear ranks, straight behind it, pass a hair (`_EDGE_TURN`) to either side of a
    corner where cells of different ground meet, or end a hair to either side of
    an edge between two such cells, within its depth: there what the ranks stand
    on changes, and the cheapest facing can lie between two of the `FACINGS`
    directions.  Fantasy Warlord goblins 2 cm deep on the demo map from (36,
    30.0090) to (34.6154, 26.5850), by a wood on a hill: a first step facing 148
    degrees costs 3.9251 (3.9244 once the bends are moved), facing 147 degrees
    6.1173, and the best of the 32 facings (11.25 degrees apart) 4.1731.  None for a
    unit without rear ranks."""
    depth, cell = float(g.unit.depth), g.cell
    if depth == 0.0:
        return np.empty((0, 2))
    rows, cols = g.grid.shape
    base, steep = g.base, g.kernel_args.steep.reshape(rows, cols)  # (views, not copies)
    r0, r1 = max(int((y - depth) // cell), 0), min(int((y + depth) // cell) + 1, rows)
    c0, c1 = max(int((x - depth) // cell), 0), min(int((x + depth) // cell) + 1, cols)

    def differ(r, c, r2, c2):  # cells (r, c) and (r2, c2) of other ground (the table's
        r, r2 = np.clip(r, 0, rows - 1), np.clip(r2, 0, rows - 1)  # edge cells beyond it)
        c, c2 = np.clip(c, 0, cols - 1), np.clip(c2, 0, cols - 1)
        return (base[r, c] != base[r2, c2]) | (steep[r, c] != steep[r2, c2])

    rr, cc = np.mgrid[r0:r1 + 1, c0:c1 + 1]
    dx, dy = cc * cell - x, rr * cell - y
    meet = (differ(rr - 1, cc - 1, rr - 1, cc) | differ(rr - 1, cc - 1, rr, cc - 1)
            | differ(rr - 1, cc - 1, rr, cc))
    near = np.hypot(dx, dy)
    behind = [np.arctan2(dy, dx)[meet & (near > 0.0) & (near <= depth)]]
    lines = np.arange(c0, c1 + 1)
    t = (lines * cell - x) / depth
    lines, t = lines[np.abs(t) < 1.0], t[np.abs(t) < 1.0]
    for turn in (np.arccos(t), -np.arccos(t)):  # the ranks' far end on a column's edge
        r = ((y + depth * np.sin(turn)) // cell).astype(np.int64)
        behind.append(turn[differ(r, lines - 1, r, lines)])
    lines = np.arange(r0, r1 + 1)
    t = (lines * cell - y) / depth
    lines, t = lines[np.abs(t) < 1.0], t[np.abs(t) < 1.0]
    for turn in (np.arcsin(t), np.pi - np.arcsin(t)):  # on a row's edge
        c = ((x + depth * np.cos(turn)) // cell).astype(np.int64)
        behind.append(turn[differ(lines - 1, c, lines, c)])
    turns = np.concatenate(behind) + np.pi
    turns = np.concatenate([turns - _EDGE_TURN, turns + _EDGE_TURN])
    return np.stack([np.cos(turns), np.sin(turns)], axis=1)


def _either(g: CostGrid, source: int, start: tuple, target: int, goal: tuple
            ) -> tuple | None:
    """The path an any-angle route without rear ranks is straightened from, priced
    (with its rows), None if there is none: the cheaper of the any-angle search's
    (`_theta`) and the lattice route's with the bends a straight move makes no
    dearer dropped and bent at the outer corners of impassable cells where that is
    cheaper (`_refined` with no sweeps; unless that is dearer with ground priced per
    started quantum).  Both bend at cell centres, and each finds ways the other misses
    (the lattice's through a grid corner, say, where Theta*'s passes a cell's
    centre and pays for the ground beside it, or square across a strip of
    quantised ground); straightening moves bends only locally, so it starts
    from the cheaper."""
    points = _theta(g, source, start, target, goal)
    if points is None:
        return None
    best = (points, *_price(g, points, pieces=False, checked=True))
    cells = _find(g, source, target)[0]
    if cells is None:
        return best
    lattice = _join(g, start, goal, _polyline(g, cells))
    if len(lattice[0]) > 2:
        pulled = _refined(g, lattice[0], 0)[0]
        pulled = (pulled, *_price(g, pulled, pieces=False, checked=True))
        if pulled[1].cost <= lattice[1].cost:  # a strip crossed square may start fewer quanta
            lattice = pulled
    return lattice if lattice[1].cost < best[1].cost else best


def _theta(g: CostGrid, source: int, start: tuple, target: int, goal: tuple) -> list | None:
    """The points of the cheapest any-angle path from ``start`` (in cell ``source``) to
    ``goal`` (in cell ``target``) by `_kernels.theta_search`, None if there is none."""
    ws = _nodes(g)
    nodes = ws.path(g, ws.run(g, source, start, target, goal))
    if not nodes:
        return None
    cols, cell = g.grid.shape[1], g.cell
    return [start, *(((v % cols + 0.5) * cell, (v // cols + 0.5) * cell) for v in nodes[1:-1]),
            goal]


def _straighten(g: CostGrid, points: list, priced: Pricing,
                rows: np.ndarray) -> tuple[list, Pricing, np.ndarray]:
    """A path through ``points`` (priced ``priced``, with its ``rows``) no dearer,
    its bends moved to where they cost least, priced (`engine.search.pricing._price`,
    with the rows of its pieces).

    Without rear ranks a move's price does not depend on the moves before it but
    through the cell the front is in, so `_kernels.straighten` straightens the path
    in one call, and then it is tried with a bend on each terrain edge it crosses,
    moved along the edge, and at the corners of heavier ground it skirts
    (`_across_tries`); with rear ranks (or ground priced per started quantum) the
    bends are moved as `Reach.cost_at` moves a point's, each try priced whole
    (`_ranked_moved`: its moves also made in the other order, as a climb is cheaper
    last).  The cheapest is also tried with its first and last bends on the contour
    lines through its ends (`_levelled`).  A straightened path is kept only if its
    price is no higher.
    """
    if len(points) < 2 or priced.cost == math.inf or (
            len(points) == 2 and not _bendable(g, points, priced.cost)):
        return points, priced, rows
    if g.depth > 0 or g.quantum.any():
        moved = [_ranked_moved(g, points, priced.cost)]
    else:
        moved = _across_tries(g, points)
    tries = [*(p for p, _ in moved), _levelled(g, *moved[-1])[0]]
    best = (points, priced, rows)
    for straight in map(_unbent, tries):
        if straight != points:
            better, rows2 = _price(g, straight, pieces=False, checked=True)
            if better.cost <= best[1].cost:
                best = (straight, better, rows2)
    return best


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


def _join(g: CostGrid, start: tuple, goal: tuple, centres: list
          ) -> tuple[list, Pricing, np.ndarray]:
    """The exact start and goal joined to the cell-centre path, priced (and the rows
    of its pieces, `engine.search.pricing._price`).

    The end centres are dropped where going straight to the exact point is
    still passable, so a route does not overshoot into the middle of a cell.
    """
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
