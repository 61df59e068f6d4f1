"""Moving a path's bends to where they cost least: the straightening `route` and
`Reach.cost_at` give the paths their searches find, which bend at cell centres.

Private to `engine.search`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from ..terrain import _kernels as _ground
from ..terrain.costgrid import CostGrid
from . import _kernels
from ._kernels.corners import _stretch, next_step
from ._state import FACE_STEP, _near_quanta
from .pricing import _moves, _path_cost, _price, _Pricer


def _unbent(points: list) -> list:
    """``points`` without the bends that do not bend (a point on the straight line
    between its neighbours, such as the middle `_refined` gives a straight move
    that stays where it was)."""
    out = [points[0]]
    for p, q in itertools.pairwise(points[1:]):
        (ax, ay), (bx, by), (cx, cy) = out[-1], p, q
        ux, uy, vx, vy = bx - ax, by - ay, cx - bx, cy - by
        if not (abs(ux * vy - uy * vx) <= 1e-12 * math.hypot(ux, uy) * math.hypot(vx, vy)
                and ux * vx + uy * vy > 0.0):
            out.append(p)
    out.append(points[-1])
    return out


# Most times `_kernels.corners.refine` moves a route's bends (it stops once none moves).
_SWEEPS = 8


def _bendable(g: CostGrid, points: list, cost: float) -> bool:
    """Whether a bend may make the straight move ``points`` (two, costing ``cost``)
    cheaper: it costs more than its length at the grid's least multiplier (it
    crosses dearer ground, which a bend may cut short, as on leaving woods)."""
    return cost > g.least * math.dist(*points) * (1.0 + 1e-12)


def _as_arrays(g: CostGrid, points: list) -> tuple[list, np.ndarray, np.ndarray, int]:
    """``points`` as the bend-moving kernels take them: a straight move (two points)
    given a bend at its middle to move, the x's and y's as arrays, and the cell
    the unit stands in at the start (`CostGrid.stand`)."""
    if len(points) == 2:
        (x0, y0), (x1, y1) = points
        points = [points[0], (0.5 * (x0 + x1), 0.5 * (y0 + y1)), points[1]]
    xs, ys = (np.array(v, dtype=np.float64) for v in zip(*points, strict=True))
    return points, xs, ys, g.stand_index(points[0])


def _as_points(points: list, xs: np.ndarray, ys: np.ndarray) -> list:
    """The points a bend-moving kernel left in ``xs``, ``ys``, the ends those of
    ``points`` as they were (not a float's rounding away)."""
    moved = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
    moved[0], moved[-1] = points[0], points[-1]
    return moved


def _refined(g: CostGrid, points: list, sweeps: int = _SWEEPS, pull: bool = True,
             heavier: bool = False) -> tuple[list, float]:
    """``points`` straightened by `_kernels.corners.refine` (`_kernels.straighten`, with
    ``sweeps`` sweeps), and its price (a unit without rear ranks).  With ``pull``,
    first bent at the outer corners of impassable cells near them where that is
    cheaper, and its points a straight move makes no dearer dropped; without, moved
    as they are.  A straight move (two points) takes two sweeps:
    `_kernels.corners.refine` bends it only on its second, halving its moves (it is
    given a point at its middle so that `_kernels.straighten` refines it at all).
    With ``heavier`` (and ``pull``) the corners of heavier ground are tried too, and
    the path is straightened only if one of them makes it cheaper."""
    if len(points) == 2:
        sweeps = max(sweeps, 2)
    points, xs, ys, start = _as_arrays(g, points)
    a = g.kernel_args
    xs, ys, cost = _kernels.straighten(xs, ys, len(points), start, a.base, a.steep, a.slope_of,
                                       a.slopes, a.enter, a.narrow, g.clearance, a.cols, g.cell,
                                       sweeps, pull, heavier)
    return _as_points(points, xs, ys), float(cost)


# Most terrain edges `_crossings` puts a bend on (more: the path as it is).
_CROSSINGS = 12


def _crossings(g: CostGrid, points: list) -> list:
    """``points`` with a bend put wherever a move passes from ground of one multiplier to
    another (`_Pricer.walk`'s pieces), for `_refined` without ``pull`` to move
    along the edge to where crossing it costs least.  Moving one bend of a path at
    a time cannot find that from a straight move across a strip of heavier ground:
    the path crosses it square, bending at both edges, and a bend moved off the
    line alone only lengthens it."""
    moves = _moves(points, g.grid.cell)
    if len(moves) < 2:
        return points
    rows, kinds = _Pricer(g).walk(moves)
    out, level, own = [points[0]], None, set(points)
    for (x0, y0, _, _, length, _, here), kind in zip(rows.tolist(), kinds[:, 0].tolist(),
                                                   strict=True):
        if kind != _kernels.MOVE or length <= 0.0:
            continue
        if (x0, y0) != out[-1] and ((x0, y0) in own or level not in (None, here)):
            out.append((x0, y0))
        level = here
    out.append(points[-1])
    return out if len(out) - len(points) <= _CROSSINGS else points


def _across_tries(g: CostGrid, points: list, sweeps: int = _SWEEPS) -> list[tuple[list, float]]:
    """Paths through ``points`` with their bends moved, each with its price without rear
    ranks: `_refined` ``points``, or, where cheaper, that with a bend put on each
    terrain edge its moves cross (`_crossings`), each moved along its edge with one
    sweep; and, if it is cheaper still, that bent at the corners of heavier ground
    it skirts (`_refined` with ``heavier``; one sweep, as the path is straightened
    already).  From (12.59, 6.50) to (30.26, 4.18) on the Reglamento's march
    example, the cheapest path just touches the corner of the woods at (25, 6), and
    a bend moved a little at a time stops short of it, in the woods or off the
    straight line to the corner.  A unit with rear ranks prices both whole: the
    corner's may be dearer with them."""
    best = _refined(g, points, sweeps)
    seeded = _crossings(g, best[0])
    if len(seeded) > len(best[0]):
        other = _refined(g, seeded, 1, pull=False)
        if other[1] < best[1]:
            best = other
    other = _refined(g, best[0], 1, heavier=True)
    return [best, other] if other[1] < best[1] else [best]


def _rounded_bends(g: CostGrid, points: list) -> list:
    """``points`` with its bends moved where its price with each stretch of ground
    priced per started quantum rounded up is least (`_kernels.settle_rounded`: a
    stretch may as well run on to the end of its last started quantum); a
    straight move is given a bend at its middle to move.  For a unit with rear
    ranks the trail is not priced: a candidate to price whole."""
    points, xs, ys, start = _as_arrays(g, points)
    a = g.kernel_args
    _kernels.settle_rounded(xs, ys, len(points), start, a.base, a.steep, a.slope_of, a.slopes,
                            a.enter, a.narrow, g.clearance, g.cell_quantum, a.cols, g.cell,
                            _SWEEPS)
    return _as_points(points, xs, ys)


def _rounded_tries(g: CostGrid, points: list) -> list[list]:
    """Paths through ``points`` with their bends moved where the rounding of ground
    priced per started quantum costs least (`_rounded_bends`): as they are, and
    where it pays for part of a quantum it does not use, with a bend wherever
    the path enters or leaves a ground, and each such stretch also set square to
    the grid (either end moved level with the other, across or along).  Such
    ground is cells, its edges the grid's, and a strip of it is crossed
    cheapest in whole quanta, often square: on the charge example, from (3, 4)
    to (8, 3) over 2" of light woods, straight on a slant 9.05 (2.07" of woods,
    two started quanta), square across 6.18.  Moving bends a little at a time
    never finds that: the price drops a quantum only where the crossing is
    exactly square."""
    legs = _price(g, points, pieces=False, checked=True)[0].legs
    tries = [_rounded_bends(g, points)]
    # Where a stretch of quantised ground ends paying part of a quantum it did not use.
    paid = {leg.start for leg in legs if leg.kind == "quantum" and leg.cost > 0.0}
    if not paid:
        return tries
    edges = [points[0]]
    for p in [q for leg in legs for q in (leg.start, leg.end)] + [points[-1]]:
        if p != edges[-1]:
            edges.append(p)
    shapes = [edges]
    for i in range(len(edges) - 1):
        (ax, ay), (bx, by) = edges[i], edges[i + 1]
        if edges[i + 1] not in paid or min(abs(ax - bx), abs(ay - by)) < 1e-9 * g.cell:
            continue
        for k, level in ((i + 1, (bx, ay)), (i + 1, (ax, by)), (i, (ax, by)), (i, (bx, ay))):
            if 0 < k < len(edges) - 1:
                shapes.append([*edges[:k], level, *edges[k + 1:]])
    # Only the cheapest of those as it stands has its bends moved: that takes the time.
    price = [_path_cost(g, shape) for shape in shapes]
    return [*tries, _rounded_bends(g, shapes[int(np.argmin(price))])]


def _slope(g: CostGrid, xy: tuple, way: tuple) -> tuple[float, float] | None:
    """The gradient of the ground at ``xy`` on the side of it along ``way`` (per
    cell; `terrain._kernels.gradient`, in the cell a move that way goes through
    first, where ``xy`` is on the edge of cells), None where it is level or
    climbing costs nothing extra."""
    a = g.kernel_args
    hair = min(1e-7 * g.cell, 0.5 * math.hypot(*way)) / math.hypot(*way)
    r, c = g.grid.xy_to_rc((xy[0] + hair * way[0], xy[1] + hair * way[1]))
    i = r * a.cols + c
    if a.steep[i] == 1.0:
        return None
    gx, gy = _ground.gradient(a.slopes, a.slope_of[i], way[0], way[1],
                              xy[0] / g.cell - (c + 0.5), xy[1] / g.cell - (r + 0.5))
    return None if gx == 0.0 and gy == 0.0 else (gx, gy)


def _plain_cost(g: CostGrid, points: list) -> float:
    """`_path_cost` of ``points`` for a unit without rear ranks away from ground priced
    per started quantum, by the kernels' walk (`_kernels.corners._stretch`), in a
    third of its time."""
    _, xs, ys, start = _as_arrays(g, points)
    a = g.kernel_args
    return float(_stretch(xs, ys, 0, len(xs) - 1, start, g.cell, a.cols, len(a.base) // a.cols,
                          a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow,
                          g.clearance)[0])


def _along(g: CostGrid, shaped: Callable[[float], list | None], t: float,
           price: Callable[[CostGrid, list], float]) -> tuple[list, float]:
    """The cheapest of the paths ``shaped(s)`` (None off the table) for ``s > 0`` around
    ``t`` by ``price``, and its price: a compass search along the line, from a cell's
    steps down to a millionth of one (`next_step`)."""
    first = shaped(t)
    best = (first, price(g, first))
    h, taken, way, back = g.cell, 0, 1.0, None  # way: the last step's; back: its reverse
    while h > 1e-6 * g.cell:
        found = False
        for d in (way * h, -way * h):
            if d != back and t + d > 0.0 and (path := shaped(t + d)) is not None:
                cost = price(g, path)
                if cost < best[1]:
                    best, t, found = (path, cost), t + d, True
                    way, back = math.copysign(1.0, d), -d
                    break
        step, taken = next_step(h, found, taken)
        if step != h:
            h, back = step, None
    return best


def _levelled(g: CostGrid, points: list, cost: float) -> tuple[list, float]:
    """``points`` (costing ``cost``) with its first bend moved onto the contour line
    through its start, or its last onto the one through its goal (its first or
    last move made level along the slope there), if that is cheaper, each try
    priced whole, and its price.

    Climbing costs extra over every inch of a move that gains height, however
    little: a move exactly along a slope's contour pays nothing more, the least
    slant up off it the whole extra.  Moving bends a little at a time (`_refined`)
    cannot find that from a search's path, which bends at cell centres.  So the
    first bend is tried on the contour line through the start (the last, through
    the goal), at the point of it nearest the bend and then where along it the
    path costs least (`_along`).  Battlesystem cavalry on the uphill-woods example
    from (34.5120, 14.9368), by the fold where two of the hill's slopes meet, to
    (39.9089, 9.3989): straight up to the fold first 8.0331, level along the slope
    to it first 7.8673.  A path so made cheaper has its bends moved again (as
    `_straighten` moves them): the bend before a level move may now cost least
    elsewhere.  Fantasy Warlord dwarves 2 cm deep on the demo map from (40.58,
    28.9) to (36.51, 31.66), through woods on a hill: 11.5203 as `_ranked_moved`
    leaves it, 11.5114 with the last bend levelled, 10.1069 with the bends then
    moved again.  Not tried for a path as cheap as the straight line over the least
    ground, nor near ground priced per started quantum (`_near_quanta`): there the
    price along the line is a staircase, and the search stops on a step
    (`_rounded_tries` moves bends there).
    """
    if len(points) < 2 or not _bendable(g, [points[0], points[-1]], cost) or _near_quanta(
            g, points[0], cost):
        return points, cost
    price = _path_cost if g.depth > 0 else _plain_cost
    best = (points, cost)
    for last in (False, True):
        tried = _level_try(g, best[0], last, price)
        if tried is not None and tried[1] < best[1]:
            best = tried
    if best[0] is not points:  # the other bends may now move on
        if g.depth > 0 or g.quantum.any():
            moved = _ranked_moved(g, *best)[0]
        else:
            moved = _across_tries(g, best[0])[-1][0]
        found = _path_cost(g, moved)
        if found < best[1]:
            best = (moved, found)
    return best


def _level_try(g: CostGrid, path: list, last: bool, price: Callable[[CostGrid, list], float]
               ) -> tuple[list, float] | None:
    """For `_levelled`: ``path`` with its first bend (``last``: its last) moved onto the
    contour line through its start (its goal) where that costs least by ``price``,
    the path going on from the moved bend as it did from the bend after it, or,
    with two bends or more, straight to its far end, whichever is cheaper; and its
    price (`_path_cost`).  None where the ground there is level, or the straight
    move does not climb, or the bend is behind the end along the line."""
    end, bend = (path[-1], path[-2]) if last else (path[0], path[1])
    way = (bend[0] - end[0], bend[1] - end[1])  # from the end to the path's rest
    slope = None if way == (0.0, 0.0) else _slope(g, end, way)
    if slope is None:
        return None
    rise = (slope[0] * way[0] + slope[1] * way[1]) / math.hypot(*way)
    if len(path) == 2 and (-rise if last else rise) <= _ground.UPHILL_TOL:
        return None  # a straight move that does not climb there: the shortest
    norm = math.hypot(*slope)
    u = (-slope[1] / norm, slope[0] / norm)
    if u[0] * way[0] + u[1] * way[1] < 0.0:
        u = (-u[0], -u[1])
    t = way[0] * u[0] + way[1] * u[1]
    if t <= 0.0:
        return None
    width, tall = g.grid.shape[1] * g.cell, g.grid.shape[0] * g.cell
    best = None
    # The rest of the path kept: on from its next bend, or straight to the far end.
    rests = [path[:-2], path[:1]] if last else [path[2:], path[-1:]]
    for rest in rests[:1 + (len(path) > 3)]:
        keep = (rest or path[:1], path[-1:]) if last else (path[:1], rest or path[1:])

        def shaped(s, end=end, u=u, keep=keep):
            x, y = end[0] + s * u[0], end[1] + s * u[1]
            inside = 0.0 <= x < width and 0.0 <= y < tall
            return [*keep[0], (x, y), *keep[1]] if inside else None

        if shaped(t) is not None:
            tried = _along(g, shaped, t, price)[0]
            found = _path_cost(g, tried)  # as `_path_cost` prices it
            if best is None or found < best[1]:
                best = (tried, found)
    return best


def _pull(g: CostGrid, points: list, cost: float) -> tuple[list, float]:
    """``points`` (costing ``cost``) without the bends a straight move over them makes
    no dearer, the farthest first, each try priced whole (rear ranks: a move's price
    depends on the path before it), and its price."""
    out = [points[0]]
    i = 0
    while i < len(points) - 1:
        j = len(points) - 1
        while j > i + 1:
            trial = [*out, *points[j:]]
            priced = _path_cost(g, trial)
            if priced <= cost * (1.0 + 1e-12):
                cost = priced
                break
            j -= 1
        out.append(points[j])
        i = j
    return out, cost


def _swapped(points: list) -> list[list]:
    """``points`` with each pair of consecutive moves made in the other order: the
    bend between them moved to the far corner of the parallelogram they span.  With
    rear ranks the order matters (`_ranked_moved`)."""
    out = []
    for i in range(len(points) - 2):
        (ax, ay), (bx, by), (cx, cy) = points[i:i + 3]
        out.append([*points[:i + 1], (ax + cx - bx, ay + cy - by), *points[i + 2:]])
    return out


def _heads(g: CostGrid, points: list) -> list[tuple[list, list]]:
    """Ways to move the bends of ``points`` as a unit without ranks would: pairs of
    the points kept as they are and the path on from there, ``([], points)``, and
    if its first step is a hair long (`FACE_STEP`: it faces the rear ranks,
    `facing_points`) ``([start], points[1:])`` too.  Moving the bends of the whole
    path drops such a step, and the ranks face along the first move instead;
    either may be cheaper."""
    out = [([], points)]
    if len(points) > 2 and math.dist(*points[:2]) <= FACE_STEP * g.cell * (1.0 + 1e-9):
        out.append((points[:1], points[1:]))
    return out


def _ranked_moved(g: CostGrid, points: list, cost: float, sweeps: int = _SWEEPS
                  ) -> tuple[list, float]:
    """``points`` (costing ``cost``, rear ranks and rounding included) without the
    bends a straight move over them makes no dearer (`_pull`), its bends then moved
    as a unit without ranks would move them (`_across_tries` with ``sweeps``; on
    quantised ground, where its rounding costs least, `_rounded_tries`; with a
    first step that faces the ranks kept too, `_heads`), and then, without the
    bends that do not bend (`_unbent`: moving bends can leave a bend on a straight
    move, splitting it in two), with each pair of its moves made in the other
    order (`_swapped`), each if that is cheaper with the ranks; and its price.
    The ranks pay for ground the front left while they still stand on it, so a
    climb is cheaper last: on Battlesystem's uphill-woods example cavalry 2" deep
    from (32.0804, 0.0625) to (37.7417, 0.8888) pay 7.09 along the contour first and
    up at the end, 9.09 up first.  A path that bends at cell centres cannot start
    exactly level, and the bend moving of a unit without ranks keeps the order of
    its moves (both orders cost the same without ranks)."""
    if len(points) > 2:
        points, cost = _pull(g, points, cost)
    best = (points, cost)
    for head, body in _heads(g, points):
        if not (len(body) > 2 or (len(body) == 2 and _bendable(g, body, cost))):
            continue
        for moved in ([p for p, _ in _across_tries(g, body, sweeps)]
                      + (_rounded_tries(g, body) if g.quantum.any() else [])):
            moved = [*head, *moved]
            price = _path_cost(g, moved)
            if price < best[1]:
                best = (moved, price)
    for moved in _swapped(_unbent(best[0])):
        price = _path_cost(g, moved)
        if price < best[1]:
            best = (moved, price)
    return best
