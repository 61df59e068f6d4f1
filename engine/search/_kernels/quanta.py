"""numba kernels: any-angle paths on ground priced per started quantum
(`settle_moves`, `settle_rounded`).

The search (`theta_search`, `theta_labels`) prices every move on the smooth
multiplier, so no path is cheaper by it than by the rulebook; `settle_moves`
then prices the paths it kept with each stretch of quantised ground rounded
up to whole quanta, as `walk_path` does.  Rounding can make another path
cheapest (a stretch of woods may as well run on to the end of its last
started quantum), which `settle_rounded` looks for by moving a path's bends.

Private; `engine.search` validates everything first.
"""

import math

import numpy as np
from numba import njit

from ...terrain._kernels import fold, stretch
from .anyangle import _TIE, _next_break, _piece_cell, _walk_from, segment_cost
from .corners import next_step
from .trail import _QUANTUM_TOL


@njit(cache=True, error_model="numpy", inline="always")
def _rounding(q, d, m):
    """What rounding a stretch of ``d`` over ground of quantum ``q`` (0: none) up to
    whole quanta adds at the multiplier ``m`` (`walk_path`'s `_close_quantum`)."""
    if q <= 0.0:
        return 0.0
    extra = (math.ceil(d / q - _QUANTUM_TOL) * q - d) * m
    return extra if extra > _QUANTUM_TOL else 0.0


@njit(cache=True, error_model="numpy")
def _carry(px, py, qx, qy, cell, cols, height, base, steep, slope_of, slopes, quantum,
           q, d, m):
    """Follow the front's stretch of quantised ground along the straight move from
    ``(px, py)`` to ``(qx, qy)`` (table units), cut into pieces as `segment_cost`
    and `walk_path` cut it: it comes in as quantum ``q`` (0: none), distance ``d``
    in it and multiplier ``m`` at its last piece.  Returns what the stretches it
    ends cost by rounding (`_rounding`) and the stretch it leaves off in."""
    cpx, cpy, dx, dy, tot, lox, loy, nx, ny, close, ix, sx, iy, sy = _walk_from(px, py, qx, qy,
                                                                             cell)
    extra = 0.0
    if tot == 0.0:
        return extra, q, d, m
    u, w = dx / tot, dy / tot
    last = 0.0
    while True:
        s, end, ix, sx, iy, sy = _next_break(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, ix, sx,
                                             iy, sy)
        if not end and s - last <= close:
            continue
        r, c = _piece_cell(cpx, cpy, dx, dy, last, s, tot, cols, height)
        i = r * cols + c
        if quantum[i] != q:
            extra += _rounding(q, d, m)
            q, d = quantum[i], 0.0
        if q > 0.0:
            cut = (1.0, 1.0, 1.0, 1.0, 1.0)
            if steep[i] != 1.0:
                ox, oy = cpx - c - 0.5, cpy - r - 0.5
                cut = fold(steep[i], slopes, slope_of[i], u, w, ox + u * last, oy + w * last,
                           ox + u * s, oy + w * s)
            length = (s - last) * cell
            for part in range(3):
                along, slope = stretch(cut, part, length)
                if along > 0.0 or part == 0:
                    d += along
                    m = base[i] * slope
        last = s
        if end:
            return extra, q, d, m


@njit(cache=True, error_model="numpy", nogil=True)
def settle_moves(xs, ys, parent, cost, base, steep, slope_of, slopes, quantum, cols, cell,
                 budget, out):
    """Reach costs with ground priced per started quantum, along the straight moves
    an any-angle search kept.

    The moves form a tree: node u stands at ``(xs[u], ys[u])``, reached by a
    straight move from node ``parent[u]`` (-1 at the start; a parent after
    its child, which no path the search kept has, is taken as over the
    budget) at the smooth cost ``cost[u]``; ``quantum`` is each
    cell's quantum (0: none).  ``out[u]`` gets the smooth cost plus, for each
    stretch of quantised ground on the way, the rest of its last started
    quantum at the front's multiplier where it ends (for the stretch node u
    is still in, as if the path ended there); ``inf`` where that or its
    parent's is over ``budget``.
    """
    n = xs.shape[0]
    height = base.shape[0] // cols
    out[:] = np.inf
    adj = np.empty(n)
    qs = np.zeros(n)
    qd = np.zeros(n)
    qm = np.ones(n)
    for u in range(n):
        v = parent[u]
        if v < 0:
            adj[u] = cost[u]
        elif out[v] > budget:
            out[u] = np.inf
            continue
        else:
            extra, qs[u], qd[u], qm[u] = _carry(xs[v], ys[v], xs[u], ys[u], cell, cols, height,
                                                base, steep, slope_of, slopes, quantum, qs[v],
                                                qd[v], qm[v])
            adj[u] = adj[v] + (cost[u] - cost[v]) + extra
        out[u] = adj[u] + _rounding(qs[u], qd[u], qm[u])
        if out[u] > budget:
            out[u] = np.inf


@njit(cache=True, error_model="numpy")
def _rounded(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear, quantum,
             cols, cell):
    """The price of the polyline's ``n`` points, the front starting in cell ``at0``:
    each move's `segment_cost` and each stretch of quantised ground rounded up to
    whole quanta (`_carry`), the last where the path ends."""
    height = base.shape[0] // cols
    total, at = 0.0, at0
    q, d, m = 0.0, 0.0, 1.0
    for k in range(n - 1):
        c, at = segment_cost(xs[k], ys[k], xs[k + 1], ys[k + 1], at, cell, cols, height, base,
                             steep, slope_of, slopes, enter, narrow, clear)
        if c == np.inf:
            return np.inf
        extra, q, d, m = _carry(xs[k], ys[k], xs[k + 1], ys[k + 1], cell, cols, height, base,
                                steep, slope_of, slopes, quantum, q, d, m)
        total += c + extra
    return total + _rounding(q, d, m)


@njit(cache=True, error_model="numpy")
def settle_rounded(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear,
                   quantum, cols, cell, sweeps):
    """Move each bend of the polyline's ``n`` points (the first and last fixed) where
    the whole path's price with quanta (`_rounded`) is least: a compass search in
    8 directions, from half a cell down to a millionth of one
    (`corners.next_step`), a bend at a time, up to ``sweeps`` times while any
    moves.  Returns the price."""
    width, tall = cols * cell, (base.shape[0] // cols) * cell
    best = _rounded(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow, clear,
                    quantum, cols, cell)
    for _ in range(sweeps):
        moved = False
        for k in range(1, n - 1):
            h = 0.5 * cell
            taken = 0  # moves at this step size
            while h > 1e-6 * cell:
                found = False
                for e in range(8):
                    ox = (1.0, -1.0, 0.0, 0.0, 1.0, 1.0, -1.0, -1.0)[e] * h
                    oy = (0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0)[e] * h
                    x, y = xs[k], ys[k]
                    if not (0.0 <= x + ox < width and 0.0 <= y + oy < tall):
                        continue
                    xs[k], ys[k] = x + ox, y + oy
                    c = _rounded(xs, ys, n, at0, base, steep, slope_of, slopes, enter, narrow,
                                 clear, quantum, cols, cell)
                    if c < best * (1.0 - _TIE):
                        best, found, moved = c, True, True
                        break
                    xs[k], ys[k] = x, y
                h, taken = next_step(h, found, taken)
        if not moved:
            break
    return best
