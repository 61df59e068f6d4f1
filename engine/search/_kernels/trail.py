"""numba kernels: the rear-rank trail and the walk that prices a path with it.

The trail (Fantasy Warlord: "the terrain effect continues to apply until the
last rank has cleared it") is a monotone deque per path: entries
``(level, rem, origin)`` with levels falling and ``rem`` (distance the front
may still move before that ground leaves the footprint) rising.  The
multiplier paid at any moment is the larger of the ground under the front and
the first entry still in the footprint.  `push` and `advance` keep it;
`walk_path` prices a path piece by piece (`engine.search.pricing`), the only
caller that needs the origins.

Private; callers validate everything first.
"""

import math

import numpy as np
from numba import njit

from ...grid import _EPS as _SEGMENT_EPS  # crossings this close are one: a corner
from ...terrain._kernels import TRAIL, fold, stretch


@njit(cache=True, inline="always")
def push(lv, rem, org, n, level, r, origin):
    """Append ground ``level`` under the footprint for ``r`` more; return the new size."""
    while n > 0 and lv[n - 1] <= level:
        n -= 1
    if n == TRAIL:
        # Full: merge the two lowest entries upwards (never undercharges).
        rem[n - 2] = rem[n - 1]
        n -= 1
    lv[n] = level
    rem[n] = r
    org[n] = origin
    return n + 1


@njit(cache=True, error_model="numpy", inline="always")
def advance(lv, rem, org, n, level, origin, length, depth, rec_len, rec_lv, rec_org, record):
    """Move the front ``length`` over ground ``level`` (cell ``origin``).

    Returns ``(cost, n, n_records)``; with ``record`` set, the stretches of
    constant multiplier are written to ``rec_*`` (length, multiplier, the
    cell that set it).
    """
    while n > 0 and lv[n - 1] <= level:
        n -= 1
    cost = 0.0
    cur = 0.0
    nrec = 0
    for i in range(n):
        if cur >= length:
            break
        if rem[i] > cur:
            end = min(rem[i], length)
            cost += lv[i] * (end - cur)
            if record:
                rec_len[nrec] = end - cur
                rec_lv[nrec] = lv[i]
                rec_org[nrec] = org[i]
                nrec += 1
            cur = end
    if cur < length:
        cost += level * (length - cur)
        if record:
            rec_len[nrec] = length - cur
            rec_lv[nrec] = level
            rec_org[nrec] = origin
            nrec += 1
    m = 0
    for i in range(n):
        r = rem[i] - length
        if r > 0.0:
            lv[m] = lv[i]
            rem[m] = r
            org[m] = org[i]
            m += 1
    n = m
    if depth > 0.0:
        n = push(lv, rem, org, n, level, depth, origin)
    return cost, n, nrec


# `walk_path`'s row kinds.
MOVE, BLOCKED, BLOCKED_SEGMENT, OBSTACLE, NARROW, QUANTUM = range(6)
# A stretch within this of a whole number of quanta is that number (float error
# along a path must not start a quantum that was never entered).
_QUANTUM_TOL = 1e-9


@njit(cache=True, error_model="numpy")
def walk_path(
    segs, cell, base, steep, slope_of, slopes, enter, narrow, quantum, combo, lv, rem, org,
    n, at, depth, cols, out_f, out_i,
):
    """Price a polyline piece by piece: `engine.search.pricing`'s walk, in one call.

    Row j of ``segs`` is a segment ``(px, py, qx, qy, length, ux, uy, cells)``:
    from p to q (table units; no move of zero length), ``length`` long, along
    the unit vector ``(ux, uy)``, ``cells`` long in cells (the caller computes
    the last four, so they are Python's own ``math.hypot``).  Each segment is cut where
    it crosses grid lines, as `engine.grid.segment_cells` cuts it; a segment that
    touches an impassable cell at a corner only is one `BLOCKED_SEGMENT` row.
    The trail (``lv``, ``rem``, ``org``, ``n`` entries: the footprint the unit
    stood on) and the front's cell ``at`` carry on from piece to piece;
    ``quantum`` (empty where nothing is priced per started quantum) is the
    quantum of each kind of ground, ``combo`` each cell's kind.

    Row k of the result is ``out_i[k] = (kind, cell, front, kind of ground,
    uphill)`` and ``out_f[k] = (x0, y0, x1, y1, length, cost, level)``: a `MOVE`
    stretch (cell: the one that set the multiplier ``level``, whose ``combo``
    the fourth column repeats, and the fifth is 1 where ``level`` is above its
    ``base``: it was climbing; front: the cell the front is in), a
    `BLOCKED` piece, an `OBSTACLE` crossed or a `NARROW` passage entered (cost:
    its flat cost), or a `QUANTUM` rounding up (level: the distance priced in
    the quantised ground, cell: the last cell of it, front: the quanta
    started).  A piece crossing folds of a hill's slope (`_kernels.fold`) is up
    to three stretches, each at its own multiplier.  Returns the number of
    rows.  A cell crossed writes at most ``3 * TRAIL + 6`` of them (an
    obstacle, a passage, a quantum and the trail's ``TRAIL + 1`` stretches in
    each of three), and a segment ``d`` cells long along x and ``e`` along y
    crosses at most ``ceil(d) + 1`` grid lines one way and ``ceil(e) + 1`` the
    other, so at most ``ceil(d) + ceil(e) + 3`` cells: arrays of
    ``(ceil(d) + ceil(e) + 3) * (3 * TRAIL + 6)`` rows a segment, and one for
    the last quantum, always suffice (numba does not check the bounds).
    """
    height = base.shape[0] // cols
    rec_len = np.empty(TRAIL + 1)
    rec_lv = np.empty(TRAIL + 1)
    rec_org = np.empty(TRAIL + 1, dtype=np.int64)
    rec = (rec_len, rec_lv, rec_org)
    grid, trail = (base, steep, slope_of, slopes), (lv, rem, org)
    q, qd, qm, qcell = 0.0, 0.0, 1.0, -1
    k = 0
    for j in range(segs.shape[0]):
        px, py, qx, qy = segs[j, 0], segs[j, 1], segs[j, 2], segs[j, 3]
        seg, u, w, tot = segs[j, 4], segs[j, 5], segs[j, 6], segs[j, 7]
        # The segment in cells, cut where it crosses grid lines (`_segment_breaks`).
        cpx, cpy = px / cell, py / cell
        dx, dy = qx / cell - cpx, qy / cell - cpy
        if tot == 0.0:
            continue
        breaks, corner_at = _segment_breaks(cpx, cpy, dx, dy, tot)
        pr, pc = _piece_cells(breaks, cpx, cpy, dx, dy, tot)
        blocked = _corner_blocked(corner_at, pr, pc, cpx, cpy, dx, dy, tot, base, height, cols)
        if blocked >= 0:
            k = _write_row(out_f, out_i, k, BLOCKED_SEGMENT, blocked, blocked,
                           px, py, qx, qy, seg, np.inf, np.inf)
            continue
        k, at, n, q, qd, qm, qcell = _walk_pieces(
            breaks, pr, pc, (px, py, qx, qy, u, w), cell, height, cols, grid, enter, narrow,
            quantum, combo, trail, n, at, depth, (q, qd, qm, qcell), rec, out_f, out_i, k,
        )
    last = segs.shape[0] - 1
    return _close_quantum(q, qd, qm, qcell, segs[last, 2], segs[last, 3], out_f, out_i, k)


@njit(cache=True, inline="always")
def _close_quantum(q, qd, qm, qcell, x, y, out_f, out_i, k):
    """`walk_path`'s end of a stretch of quantised ground at (x, y): a `QUANTUM` row
    for the rest of its last started quantum, if any; returns the row count."""
    if q <= 0.0:
        return k
    started = math.ceil(qd / q - _QUANTUM_TOL)
    extra = (started * q - qd) * qm
    if extra > _QUANTUM_TOL:
        k = _write_row(out_f, out_i, k, QUANTUM, qcell, started, x, y, x, y, 0.0, extra, qd)
    return k


@njit(cache=True, inline="always")
def _write_row(out_f, out_i, k, kind, i, front, x0, y0, x1, y1, length, cost, level):
    """Write `walk_path`'s row k: ``out_i[k, :3] = (kind, i, front)`` (a `MOVE` row
    sets the other two columns itself) and ``out_f[k]``; returns the row count."""
    out_i[k, 0], out_i[k, 1], out_i[k, 2] = kind, i, front
    out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = x0, y0, x1, y1
    out_f[k, 4], out_f[k, 5], out_f[k, 6] = length, cost, level
    return k + 1


@njit(cache=True, inline="always")
def _line_crossings(start, delta, lo, count, tot, cross, nc):
    """Append to ``cross`` (``nc`` used) where a segment from ``start`` moving ``delta``
    (cells, along one axis; ``tot`` long) crosses the ``count`` grid lines past ``lo``,
    leaving out those within `_SEGMENT_EPS` of its ends; returns the new count."""
    if count > 0:
        scale = tot / delta
        for g in range(math.floor(lo) + 1, math.floor(lo) + 1 + count):
            s = (g - start) * scale
            if _SEGMENT_EPS < s < tot - _SEGMENT_EPS:
                cross[nc] = s
                nc += 1
    return nc


@njit(cache=True, inline="always")
def _merged(cross, n1, nc):
    """``cross[:nc]`` in ascending order, given as two runs, ``[:n1]`` and
    ``[n1:nc]`` (`_line_crossings`' along each axis), each in ascending or
    descending order: merged, where ``np.sort`` would compile a sort."""
    for lo, hi in ((0, n1), (n1, nc)):  # each run ascending
        if hi - lo > 1 and cross[lo] > cross[hi - 1]:
            for j in range((hi - lo) // 2):
                cross[lo + j], cross[hi - 1 - j] = cross[hi - 1 - j], cross[lo + j]
    out = np.empty(nc)
    i, j = 0, n1
    for k in range(nc):
        if j >= nc or (i < n1 and cross[i] <= cross[j]):
            out[k] = cross[i]
            i += 1
        else:
            out[k] = cross[j]
            j += 1
    return out


@njit(cache=True, error_model="numpy", inline="always")
def _segment_breaks(cpx, cpy, dx, dy, tot):
    """Where a segment (in cells: from ``(cpx, cpy)`` by ``(dx, dy)``, ``tot`` long)
    is cut, as `engine.grid.segment_cells` cuts it: the distances of its pieces'
    ends, ascending from 0 to ``tot``, and of the corners it passes (a grid line
    crossed within `_SEGMENT_EPS` of another: one crossing, through a corner)."""
    lox, hix = min(cpx, cpx + dx), max(cpx, cpx + dx)
    loy, hiy = min(cpy, cpy + dy), max(cpy, cpy + dy)
    nx = max(math.ceil(hix) - math.floor(lox) - 1, 0) if dx != 0.0 else 0
    ny = max(math.ceil(hiy) - math.floor(loy) - 1, 0) if dy != 0.0 else 0
    cross = np.empty(nx + ny)
    n1 = _line_crossings(cpx, dx, lox, nx, tot, cross, 0)
    nc = _line_crossings(cpy, dy, loy, ny, tot, cross, n1)
    cross = _merged(cross, n1, nc)
    breaks = np.empty(nc + 2)
    corner_at = np.empty(nc)
    breaks[0] = 0.0
    nb, ncorner = 1, 0
    close = _SEGMENT_EPS * max(1.0, tot)
    for s in cross:
        if s - breaks[nb - 1] <= close:
            if nb > 1:
                corner_at[ncorner] = breaks[nb - 1]
                ncorner += 1
            continue
        breaks[nb] = s
        nb += 1
    breaks[nb] = tot
    nb += 1
    return breaks[:nb], corner_at[:ncorner]


@njit(cache=True, error_model="numpy", inline="always")
def _piece_cells(breaks, cpx, cpy, dx, dy, tot):
    """The row and column of each piece of a segment cut at ``breaks``
    (`_segment_breaks`): the cell holding the piece's middle."""
    pr = np.empty(breaks.shape[0] - 1, dtype=np.int64)
    pc = np.empty(breaks.shape[0] - 1, dtype=np.int64)
    for t in range(breaks.shape[0] - 1):
        sm = 0.5 * (breaks[t] + breaks[t + 1]) / tot
        pr[t] = math.floor(cpy + sm * dy)
        pc[t] = math.floor(cpx + sm * dx)
    return pr, pc


@njit(cache=True, error_model="numpy", inline="always")
def _corner_blocked(corner_at, pr, pc, cpx, cpy, dx, dy, tot, base, height, cols):
    """The first impassable cell a segment touches only at a corner it passes
    (``corner_at``: `_segment_breaks`'; ``pr``, ``pc``: the cells it crosses), else -1:
    a step may not squeeze between impassable cells through their shared corner."""
    for t in range(corner_at.shape[0]):
        s = corner_at[t]
        cx, cy = round(cpx + s / tot * dx), round(cpy + s / tot * dy)
        for r, c in ((cy - 1, cx - 1), (cy - 1, cx), (cy, cx - 1), (cy, cx)):
            if 0 <= r < height and 0 <= c < cols and base[r * cols + c] == np.inf:
                crossed = False
                for v in range(pr.shape[0]):
                    if pr[v] == r and pc[v] == c:
                        crossed = True
                if not crossed:
                    return r * cols + c
    return -1


@njit(cache=True, error_model="numpy", inline="always")
def _walk_pieces(breaks, pr, pc, seg, cell, height, cols, grid, enter, narrow, quantum, combo,
                 trail, n, at, depth, quantised, rec, out_f, out_i, k):
    """`walk_path`'s rows for one segment (``seg``: its ``(px, py, qx, qy, ux, uy)``)
    cut at ``breaks`` into pieces in cells ``pr``, ``pc`` (`_segment_breaks`,
    `_piece_cells`): per piece a `BLOCKED` row, or an `OBSTACLE`, a `NARROW` passage,
    a `QUANTUM` closed (`_close_quantum`) and the trail's `MOVE` stretches, the
    trail moved on (`advance`).  ``grid`` holds `ground`'s arrays, ``trail`` the
    trail's (``n`` entries), ``rec`` `advance`'s records, ``quantised`` the stretch of
    quantised ground so far: its quantum, the distance in it, the multiplier and
    cell last priced in it.

    Returns the walk's state after it: ``(k, at, n, q, qd, qm, qcell)`` (rows, the
    front's cell, the trail's size, and the stretch's four).  The pieces' loop is
    here, once a segment, with its rows written in it: arrays handed to an inlined
    helper once a piece (its `MOVE` rows' loop, or the whole piece) cost reference
    counts that made the walk 1.6 to 2 times slower.
    """
    px, py, qx, qy, u, w = seg
    base, steep, slope_of, slopes = grid
    lv, rem, org = trail
    rec_len, rec_lv, rec_org = rec
    q, qd, qm, qcell = quantised
    has_q = quantum.shape[0] > 0
    nb = breaks.shape[0]
    for t in range(nb - 1):
        s0, s1 = breaks[t], breaks[t + 1]
        r, c = min(max(pr[t], 0), height - 1), min(max(pc[t], 0), cols - 1)
        i = r * cols + c
        # Points by distance along the unit direction: exact on axis-parallel paths.
        ax, ay = px + u * s0 * cell, py + w * s0 * cell
        bx, by = (qx, qy) if t == nb - 2 else (px + u * s1 * cell, py + w * s1 * cell)
        length = (s1 - s0) * cell
        ox, oy = px / cell - c - 0.5, py / cell - r - 0.5  # the start, from the cell's centre
        m = base[i]
        cut = (1.0, 1.0, 1.0, 1.0, 1.0)  # across the folds it crosses: each stretch's own
        if steep[i] != 1.0:
            cut = fold(steep[i], slopes, slope_of[i], u, w, ox + u * s0, oy + w * s0,
                       ox + u * s1, oy + w * s1)
        if m == np.inf:
            k = _write_row(out_f, out_i, k, BLOCKED, i, i, ax, ay, bx, by, length, np.inf, np.inf)
            continue
        if enter[i] > 0.0 and enter[i] != enter[at]:
            k = _write_row(out_f, out_i, k, OBSTACLE, i, i, ax, ay, ax, ay, 0.0, enter[i], 0.0)
        if narrow[i] > 0.0 and narrow[at] == 0.0:
            k = _write_row(out_f, out_i, k, NARROW, i, i, ax, ay, ax, ay, 0.0, narrow[i], 0.0)
        at = i
        if has_q and quantum[combo[i]] != q:
            k = _close_quantum(q, qd, qm, qcell, ax, ay, out_f, out_i, k)
            q, qd = quantum[combo[i]], 0.0
        for part in range(3):
            along, slope = stretch(cut, part, length)
            if along <= 0.0 and part > 0:
                continue
            f0 = 0.0 if part == 0 else cut[part - 1]  # the stretch's share of the piece
            f1 = cut[part] if part < 2 else 1.0
            x0, y0 = ax + f0 * (bx - ax), ay + f0 * (by - ay)
            x1, y1 = (bx, by) if f1 == 1.0 else (ax + f1 * (bx - ax), ay + f1 * (by - ay))
            level = m * slope
            if q > 0.0:
                qd += along
                qm, qcell = level, i
            _, n, nrec = advance(lv, rem, org, n, level, i, along, depth, rec_len, rec_lv,
                                 rec_org, True)
            done = 0.0
            for v in range(nrec):
                part_len, lvl = rec_len[v], rec_lv[v]
                f0, f1 = done / along, (done + part_len) / along
                done += part_len
                o = rec_org[v]
                out_i[k, 3], out_i[k, 4] = combo[o], lvl > base[o]
                k = _write_row(out_f, out_i, k, MOVE, o, i, x0 + f0 * (x1 - x0),
                               y0 + f0 * (y1 - y0), x0 + f1 * (x1 - x0), y0 + f1 * (y1 - y0),
                               part_len, part_len * lvl, lvl)
    return k, at, n, q, qd, qm, qcell
