"""numba kernels: bending a polyline at obstacles' corners (`round_corners`).

A cheapest path round impassable cells bends only at their outer corners: a
grid corner where exactly one of the four cells meeting is impassable.  Where
an obstacle's side is a staircase of cells, the path follows its outer corners
off the straight line by about a millionth of a cell, and moving one bend of a
path at a time (`anyangle.refine`) cannot get there: every step of a bend
along the side makes a move touch a cell's corner.  `round_corners` finds the
cheapest path through the polyline's own points and the outer corners near
it instead; `straighten` then moves its bends on terrain edges (`refine`).

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import njit

from .anyangle import _stretch, refine, segment_cost

# How far from a move of the polyline a corner may be to be tried, in cells.
_NEAR = 1.5
# How far a corner's node stands off the impassable cell, in cells: far enough
# that a move by it is not taken for one through the corner (`segment_cost`).
_PUSH = 1e-7


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
def _outer_corners(xs, ys, n, base, cols, cell):
    """The nodes, in table units, of the outer corners within `_NEAR` cells of the
    polyline's moves (`_PUSH` off the impassable cell, diagonally), each once."""
    height = base.shape[0] // cols
    found = []
    for k in range(n - 1):
        px, py, qx, qy = xs[k] / cell, ys[k] / cell, xs[k + 1] / cell, ys[k + 1] / cell
        dx, dy = qx - px, qy - py
        for i in range(max(int(np.floor(min(py, qy) - _NEAR)), 1),
                       min(int(np.ceil(max(py, qy) + _NEAR)), height - 1) + 1):
            xa, xb = min(px, qx), max(px, qx)
            if dy != 0.0:  # where the move is within `_NEAR` of row line i
                ta, tb = (i - _NEAR - py) / dy, (i + _NEAR - py) / dy
                ta, tb = max(min(ta, tb), 0.0), min(max(ta, tb), 1.0)
                if ta > tb:
                    continue
                xa, xb = min(px + ta * dx, px + tb * dx), max(px + ta * dx, px + tb * dx)
            for j in range(max(int(np.floor(xa - _NEAR)), 1),
                           min(int(np.ceil(xb + _NEAR)), cols - 1) + 1):
                if _near(px, py, qx, qy, float(j), float(i)) <= _NEAR:
                    found.append(i * (cols + 1) + j)
    vertices = np.unique(np.array(found, dtype=np.int64))
    out = np.empty((vertices.shape[0], 2))
    m = 0
    for v in vertices:
        i, j = v // (cols + 1), v % (cols + 1)
        ox, oy, blocked = 0.0, 0.0, 0
        for dr in range(2):
            for dc in range(2):
                if base[(i - 1 + dr) * cols + j - 1 + dc] == np.inf:
                    blocked += 1
                    ox, oy = _PUSH * (1 - 2 * dc), _PUSH * (1 - 2 * dr)
        if blocked == 1:
            out[m, 0], out[m, 1] = (j + ox) * cell, (i + oy) * cell
            m += 1
    return out[:m]


@njit(cache=True, error_model="numpy")
def round_corners(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols,
                  cell):
    """The cheapest path from the polyline's first point to its last through its
    points, in order or not, and the outer corners of impassable cells near it
    (`_outer_corners`): A* over the straight moves between them, each priced by
    `segment_cost` (the front starting in the cell the move starts in; the
    first point's in cell ``at0``), toward the last point by the straight
    line (no move costs less than its length).  A move is priced only if the
    path through it may beat both the cost its end has and the polyline's own
    price.  Returns the path's points' x and y and its price (the walk's,
    the front's cell carried from move to move), or the polyline's if nothing
    beats it."""
    height = base.shape[0] // cols
    own, _ = _stretch(xs, ys, 0, n - 1, at0, cell, cols, height, base, steep, slope_of, slopes,
                      enter, narrow, clear)
    corners = _outer_corners(xs, ys, n, base, cols, cell)
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
               cell, sweeps):
    """The polyline bent at obstacles' corners (`round_corners`), then straightened by
    `refine` with up to ``sweeps`` sweeps (one: no point put halfway along its
    moves), whichever is cheaper: its points' x and y, and its price."""
    height = base.shape[0] // cols
    bx, by, price = round_corners(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow,
                                  clear, cols, cell)
    m = bx.shape[0]
    if m <= 2:
        return bx, by, price
    rx, ry = np.zeros(2 * m), np.zeros(2 * m)  # room for `refine`
    rx[:m], ry[:m] = bx, by
    k = refine(rx, ry, m, at0, base, steep, slope_of, slopes, enter, narrow, clear, cols, cell,
               sweeps)
    rx[0], ry[0], rx[k - 1], ry[k - 1] = bx[0], by[0], bx[m - 1], by[m - 1]
    other, _ = _stretch(rx, ry, 0, k - 1, at0, cell, cols, height, base, steep, slope_of,
                        slopes, enter, narrow, clear)
    if other <= price:
        return rx[:k].copy(), ry[:k].copy(), other
    return bx, by, price
