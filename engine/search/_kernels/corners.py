"""numba kernels: bending a polyline at the corners of obstacles and heavier ground
(`round_corners`), and moving its bends to where they cost least (`refine`).

A cheapest path round impassable cells bends only at their outer corners: a
grid corner where exactly one of the four cells meeting is impassable.  Where
an obstacle's side is a staircase of cells, the path follows its outer corners
off the straight line by about a millionth of a cell, and moving one bend of a
path at a time (`refine`) cannot get there: every step of a bend
along the side makes a move touch a cell's corner.  `round_corners` finds the
cheapest path through the polyline's own points and the outer corners near
it instead; `straighten` then moves its bends on terrain edges (`refine`).
A path that skirts a patch of heavier ground may bend at its outer corner too
(where one of the four cells is dearer than the other three), and there the
price rises on every side of the corner, so `refine` stops short of it;
`straighten` can try those corners on a path already straightened.

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import njit

from .anyangle import _TIE, segment_cost

# How far from a move of the polyline a corner may be to be tried, in cells.
_NEAR = 1.5
# The same for a second pass over a straightened path with the corners of heavier
# ground (`straighten` with ``heavier``): it passes them closely.
_HEAVIER_NEAR = 0.75
# How far a corner's node stands off the impassable (or heavier) cell, in cells: far
# enough that a move by it is not taken for one through the corner (`segment_cost`).
_PUSH = 1e-7
# The most moves a compass search of a bend (`_settle_bend`, `quanta.settle_rounded`;
# in Python `search.bends._along`, by `next_step`) takes at one step size before it
# halves the step.  Where the price falls along a line none of its 8 directions
# follows (a bend sliding along the move before it, its ground priced per started
# quantum), only the smallest steps keep finding a lower price: on Battlesystem's
# uphill-woods example, 8 million of them (a minute and a half) for one bend without
# the bound.
SAME_STEP = 64


@njit(cache=True, inline="always")
def next_step(h, found, taken):
    """A compass search's step size after a try at step ``h``, and how many moves it
    has taken at that size: the same after a move (``found``), but halved after
    `SAME_STEP` of them or a try that found no lower price."""
    taken += 1
    if not found or taken == SAME_STEP:
        return 0.5 * h, 0
    return h, taken


@njit(cache=True, error_model="numpy")
def _near(px, py, qx, qy, x, y):
    """The distance from the point ``(x, y)`` to the segment from ``(px, py)`` to
    ``(qx, qy)``."""
    dx, dy = qx - px, qy - py
    t = 0.0
    if dx != 0.0 or dy != 0.0:
        t = min(max(((x - px) * dx + (y - py) * dy) / (dx * dx + dy * dy), 0.0), 1.0)
    return np.hypot(px + t * dx - x, py + t * dy - y)


@njit(cache=True, error_model="numpy")
def _outer_corners(xs, ys, n, base, cols, cell, heavier):
    """The nodes, in table units, of the outer corners within `_NEAR` cells of the
    polyline's moves (`_PUSH` off the impassable cell, diagonally), each once; with
    ``heavier``, those within `_HEAVIER_NEAR` cells, of heavier ground too: where
    one of the four cells meeting is dearer than the other three."""
    height = base.shape[0] // cols
    near = _HEAVIER_NEAR if heavier else _NEAR
    found = []
    for k in range(n - 1):
        px, py, qx, qy = xs[k] / cell, ys[k] / cell, xs[k + 1] / cell, ys[k + 1] / cell
        dx, dy = qx - px, qy - py
        for i in range(max(int(np.floor(min(py, qy) - near)), 1),
                       min(int(np.ceil(max(py, qy) + near)), height - 1) + 1):
            xa, xb = min(px, qx), max(px, qx)
            if dy != 0.0:  # where the move is within `near` of row line i
                ta, tb = (i - near - py) / dy, (i + near - py) / dy
                ta, tb = max(min(ta, tb), 0.0), min(max(ta, tb), 1.0)
                if ta > tb:
                    continue
                xa, xb = min(px + ta * dx, px + tb * dx), max(px + ta * dx, px + tb * dx)
            for j in range(max(int(np.floor(xa - near)), 1),
                           min(int(np.ceil(xb + near)), cols - 1) + 1):
                if _near(px, py, qx, qy, float(j), float(i)) <= near:
                    found.append(i * (cols + 1) + j)
    vertices = np.unique(np.array(found, dtype=np.int64))
    out = np.empty((vertices.shape[0], 2))
    m = 0
    for v in vertices:
        i, j = v // (cols + 1), v % (cols + 1)
        ox, oy, top, ties = 0.0, 0.0, -1.0, 0
        for dr in range(2):
            for dc in range(2):
                b = base[(i - 1 + dr) * cols + j - 1 + dc]
                if b > top:
                    top, ties = b, 1
                    ox, oy = _PUSH * (1 - 2 * dc), _PUSH * (1 - 2 * dr)
                elif b == top:
                    ties += 1
        if ties == 1 and (heavier or top == np.inf):
            out[m, 0], out[m, 1] = (j + ox) * cell, (i + oy) * cell
            m += 1
    return out[:m]


@njit(cache=True, error_model="numpy")
def round_corners(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols,
                  cell, own, heavier):
    """The cheapest path from the polyline's first point to its last through its
    points, in order or not, and the outer corners of impassable cells near it
    (`_outer_corners`; with ``heavier``, of heavier ground too), ``own`` the
    polyline's price: A* over the straight moves between them, each priced by
    `segment_cost` (the front starting in the cell the move starts in; the
    first point's in cell ``at0``), toward the last point by the straight
    line (no move costs less than its length).  A move is priced only if the
    path through it may beat both the cost its end has and the polyline's own
    price.  Returns the path's points' x and y and its price (the walk's,
    the front's cell carried from move to move), or the polyline's if nothing
    beats it."""
    height = base.shape[0] // cols
    corners = _outer_corners(xs, ys, n, base, cols, cell, heavier)
    m = n + corners.shape[0]
    nx, ny = np.empty(m), np.empty(m)
    nx[:n], ny[:n] = xs[:n], ys[:n]
    nx[n:], ny[n:] = corners[:, 0], corners[:, 1]
    to_go = np.hypot(nx - xs[n - 1], ny - ys[n - 1])
    dist = np.full(m, np.inf)
    via = np.full(m, -1, dtype=np.int64)
    done = np.zeros(m, dtype=np.bool_)
    dist[0] = 0.0
    goal = n - 1
    while True:
        u, key = -1, np.inf
        for v in range(m):
            if not done[v] and dist[v] + to_go[v] < key:
                u, key = v, dist[v] + to_go[v]
        if u < 0 or u == goal or key >= own:
            break
        done[u] = True
        at = at0 if u == 0 else (min(max(int(ny[u] / cell), 0), height - 1) * cols
                                 + min(max(int(nx[u] / cell), 0), cols - 1))
        for v in range(m):
            near = dist[u] + np.hypot(nx[v] - nx[u], ny[v] - ny[u])
            if done[v] or near >= dist[v] or near + to_go[v] >= own:
                continue
            c, _ = segment_cost(nx[u], ny[u], nx[v], ny[v], at, cell, cols, height, base, steep,
                                slope_of, slopes, enter, narrow, clear)
            if dist[u] + c < dist[v]:
                dist[v], via[v] = dist[u] + c, u
    if not dist[goal] < own:
        return xs[:n].copy(), ys[:n].copy(), own
    count = 0
    v = goal
    while v >= 0:
        count += 1
        v = via[v]
    ox, oy = np.empty(count), np.empty(count)
    v = goal
    for k in range(count - 1, -1, -1):
        ox[k], oy[k] = nx[v], ny[v]
        v = via[v]
    # Priced again with the front's cells as the walk finds them (a node on a cell's
    # edge may have started its move in the other cell, for a flat entry cost).
    price, _ = _stretch(ox, oy, 0, count - 1, at0, cell, cols, height, base, steep, slope_of,
                        slopes, enter, narrow, clear)
    if not price < own:
        return xs[:n].copy(), ys[:n].copy(), own
    return ox, oy, price


@njit(cache=True, error_model="numpy")
def straighten(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols,
               cell, sweeps, pull, heavier):
    """The polyline bent at obstacles' corners (`round_corners`), then straightened by
    `refine` with up to ``sweeps`` sweeps (one: no point put halfway along its
    moves), whichever is cheaper: its points' x and y, and its price.  Without
    ``pull`` the polyline is straightened as it is, its points a straight move
    makes no dearer kept until the end (`refine`).  With ``heavier`` (and
    ``pull``) it is bent at the outer corners of heavier ground too, and
    straightened only if that is cheaper (else returned as it is): a second
    pass over a path already straightened."""
    height = base.shape[0] // cols
    bx, by = xs[:n].copy(), ys[:n].copy()
    price, _ = _stretch(xs, ys, 0, n - 1, at0, cell, cols, height, base, steep, slope_of, slopes,
                        enter, narrow, clear)
    if pull:
        own = price
        bx, by, price = round_corners(xs, ys, n, at0, base, steep, slope_of, slopes, enter,
                                      narrow, clear, cols, cell, own, heavier)
        if heavier and not price < own:
            return bx, by, price
    m = bx.shape[0]
    if m <= 2:
        return bx, by, price
    rx, ry = np.zeros(2 * m), np.zeros(2 * m)  # room for `refine`
    rx[:m], ry[:m] = bx, by
    k = refine(rx, ry, m, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols, cell,
               sweeps, pull)
    rx[0], ry[0], rx[k - 1], ry[k - 1] = bx[0], by[0], bx[m - 1], by[m - 1]
    other, _ = _stretch(rx, ry, 0, k - 1, at0, cell, cols, height, base, steep, slope_of,
                        slopes, enter, narrow, clear)
    if other <= price:
        return rx[:k].copy(), ry[:k].copy(), other
    return bx, by, price


@njit(cache=True, error_model="numpy", _nrt=False)
def _stretch(xs, ys, lo, hi, at, cell, cols, height, base, steep, slope_of, slopes,
             enter, narrow, clear):
    """The price of the polyline's points ``lo .. hi``, the front starting in cell
    ``at``; returns it and the cell the front ends in."""
    total = 0.0
    for k in range(lo, hi):
        c, at = segment_cost(xs[k], ys[k], xs[k + 1], ys[k + 1], at, cell, cols, height,
                             base, steep, slope_of, slopes, enter, narrow, clear)
        total += c
        if total == np.inf:
            break
    return total, at


@njit(cache=True, error_model="numpy", _nrt=False)
def _fronts(xs, ys, lo, hi, cell, cols, height, base, steep, slope_of, slopes, enter,
            narrow, clear, ats):
    """``ats[k]`` for k in ``lo + 1 .. hi``: the cell the front is in on reaching point
    k of the polyline, from ``ats[lo]``."""
    for k in range(lo, hi):
        _, ats[k + 1] = segment_cost(xs[k], ys[k], xs[k + 1], ys[k + 1], ats[k], cell, cols,
                                     height, base, steep, slope_of, slopes, enter, narrow, clear)


@njit(cache=True, error_model="numpy", _nrt=False)
def _pull(xs, ys, n, ats, cell, cols, height, base, steep, slope_of, slopes, enter,
          narrow, clear):
    """Drop the points a straight move over them makes no dearer (string pulling),
    the farthest first; returns the new number of points."""
    out = 1
    i = 0
    while i < n - 1:
        j = n - 1
        while j > i + 1:
            along, _ = _stretch(xs, ys, i, j, ats[i], cell, cols, height, base, steep, slope_of,
                                slopes, enter, narrow, clear)
            direct, _ = segment_cost(xs[i], ys[i], xs[j], ys[j], ats[i], cell, cols, height,
                                     base, steep, slope_of, slopes, enter, narrow, clear)
            if direct <= along * (1.0 + _TIE):
                break
            j -= 1
        xs[out], ys[out] = xs[j], ys[j]
        out += 1
        i = j
    return out


@njit(cache=True, error_model="numpy", _nrt=False)
def _settle_bend(xs, ys, k, span, n, ats, cell, cols, height, base, steep, slope_of, slopes, enter,
                 narrow, clear):
    """Move points ``k .. k + span - 1`` of the polyline together (one bend, or a
    move between two bends slid sideways) where the stretch from point ``k - 1``
    to point ``k + span + 1`` costs least: a compass search in 8 directions,
    from half a cell down to a millionth of one (`next_step`).  Returns True if
    they moved."""
    hi = min(k + span + 1, n - 1)
    best, _ = _stretch(xs, ys, k - 1, hi, ats[k - 1], cell, cols, height, base, steep, slope_of,
                       slopes, enter, narrow, clear)
    width, tall = cols * cell, height * cell
    h = 0.5 * cell
    moved = False
    taken = 0  # moves at this step size
    while h > 1e-6 * cell:
        found = False
        for d in range(8):
            ox = (1.0, -1.0, 0.0, 0.0, 1.0, 1.0, -1.0, -1.0)[d] * h
            oy = (0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0)[d] * h
            inside = True
            for j in range(k, k + span):
                inside = inside and 0.0 <= xs[j] + ox < width and 0.0 <= ys[j] + oy < tall
            if not inside:
                continue
            for j in range(k, k + span):
                xs[j] += ox
                ys[j] += oy
            c, _ = _stretch(xs, ys, k - 1, hi, ats[k - 1], cell, cols, height, base, steep,
                            slope_of, slopes, enter, narrow, clear)
            if c < best * (1.0 - _TIE):
                best, found, moved = c, True, True
                break
            for j in range(k, k + span):
                xs[j] -= ox
                ys[j] -= oy
        h, taken = next_step(h, found, taken)
    return moved


@njit(cache=True, _nrt=False)
def _halve(xs, ys, n):
    """Put a point halfway along every move of the polyline (``xs`` has room for
    ``2 n - 1``); returns the new number of points."""
    for k in range(n - 1, 0, -1):
        xs[2 * k], ys[2 * k] = xs[k], ys[k]
    for k in range(1, 2 * n - 1, 2):
        xs[k], ys[k] = 0.5 * (xs[k - 1] + xs[k + 1]), 0.5 * (ys[k - 1] + ys[k + 1])
    return 2 * n - 1


@njit(cache=True, error_model="numpy")
def refine(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols,
           cell, sweeps, pull):
    """Straighten a polyline of ``n`` points (the first and last fixed) by its price:
    drop points a straight move makes no dearer (`_pull`; only at the end unless
    ``pull``: points put on a straight move where it crosses terrain edges move
    along them to where crossing costs least), then move each bend,
    and each pair of bends together, to where they cost least (`_settle_bend`),
    up to ``sweeps`` times while any moves; after the first, with a point put
    halfway along every move (a path round a many-sided obstacle may need more
    bends than the search gave it), where ``xs`` has room.  The front starts in
    cell ``at0``.  Returns the number of points left in ``xs``, ``ys``; the price
    does not rise (the caller keeps the path it gave if it does, by rounding)."""
    height = base.shape[0] // cols
    ats = np.empty(xs.shape[0], dtype=np.int64)
    grid = (base, steep, slope_of, slopes, enter, narrow, clear)
    if pull:
        n = _pulled(xs, ys, n, at0, ats, cell, cols, height, grid)
    else:
        ats[0] = at0
        _fronts(xs, ys, 0, n - 1, cell, cols, height, *grid, ats)
    # A bend is settled again only if a point its stretch runs through moved since.
    moved_at = np.ones(xs.shape[0], dtype=np.int64)
    settled_at = np.zeros((2, xs.shape[0]), dtype=np.int64)
    clock = 1
    for sweep in range(sweeps):
        if sweep == 1 and 2 * n - 1 <= xs.shape[0]:  # a bend halfway along every move
            n = _halve(xs, ys, n)
            clock += 1
            moved_at[:n] = clock
        moved = False
        fresh = 0  # ats[0 .. fresh] are current
        for span in (1, 2):
            for k in range(1, n - span):
                hi = min(k + span + 1, n - 1)
                if moved_at[k - 1:hi + 1].max() < settled_at[span - 1, k]:
                    continue
                if fresh < k - 1:
                    _fronts(xs, ys, fresh, k - 1, cell, cols, height, *grid, ats)
                    fresh = k - 1
                clock += 1
                settled_at[span - 1, k] = clock
                if _settle_bend(xs, ys, k, span, n, ats, cell, cols, height, *grid):
                    moved = True
                    moved_at[k:k + span] = clock
                    fresh = min(fresh, k - 1)
        if not moved and sweep > 0:
            break
    return _pulled(xs, ys, n, at0, ats, cell, cols, height, grid)


@njit(cache=True, error_model="numpy", _nrt=False)
def _pulled(xs, ys, n, at0, ats, cell, cols, height, grid):
    """`_pull` after `_fronts`: the polyline's points a straight move makes no dearer
    dropped; returns how many are left."""
    ats[0] = at0
    _fronts(xs, ys, 0, n - 1, cell, cols, height, *grid, ats)
    return _pull(xs, ys, n, ats, cell, cols, height, *grid)
