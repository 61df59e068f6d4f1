"""numba kernels: any-angle search (Theta*) for a unit with rear ranks.

As `anyangle.theta_search`, but every move is priced with the rear-rank
trail (`trail.advance`): the ground still under the footprint behind the
front, carried from the path before it.  Each node keeps the trail of the
path that reached it (``t_lv``, ``t_rem``: up to ``TRAIL`` levels; ``t_n``
of them; ``t_at``, the cell the front is in), and a move from a node goes
on from that trail; a move from the start goes on from the standing
footprint, straight behind the unit's point facing along the move
(`_stand`), as `engine.price_path` stands it.  A move is priced piece by
piece exactly as `walk_path` walks it, so a path found is priced the same
by `price_path`, to rounding.

Each cell keeps one path, the cheapest (the lattice search keeps every path
no other beats, `labels.search_labels`): a dearer path that left heavy
ground behind sooner is dropped.

Sentinels as `anyangle`'s.  Private; `engine.search` validates everything.
"""

import math

import numpy as np
from numba import njit

from ...terrain._kernels import TRAIL, fold, stretch
from ...grid import _EPS as _SEGMENT_EPS
from .anyangle import (
    _TIE,
    _crossings,
    _inner_crossing,
    _leave_box,
    _length,
    _node_xy,
    _one_box,
    _pop,
    _presettle,
    _source_sight,
    _window_index,
)
from .heap import _sift_up
from .trail import _piece_cells, _segment_breaks, advance, push


@njit(cache=True, error_model="numpy")
def _stand(px, py, ux, uy, depth, cell, cols, height, base, steep, slope_of, slopes,
           lv, rem, org):
    """The footprint of a unit standing at ``(px, py)`` facing ``(ux, uy)`` (a unit
    vector), ``depth`` (table units) deep: the cells under its ranks straight
    behind it, farthest first, pushed onto an empty trail (`push`) with the
    distance the front must advance before each leaves the footprint, at its
    multiplier facing that way (`through`'s; impassable or off-table cells
    left out).  Returns the trail's size."""
    n = 0
    d = depth / cell
    if d <= 0.0:
        return n
    cpx, cpy = px / cell, py / cell
    breaks, _ = _segment_breaks(cpx, cpy, -ux * d, -uy * d, d)
    pr, pc = _piece_cells(breaks, cpx, cpy, -ux * d, -uy * d, d)
    for t in range(pr.shape[0] - 1, -1, -1):
        r, c = pr[t], pc[t]
        if 0 <= r < height and 0 <= c < cols:
            i = r * cols + c
            m = base[i]
            if steep[i] != 1.0:
                m *= fold(steep[i], slopes, slope_of[i], ux, uy, 0.0, 0.0, 0.0, 0.0)[2]
            if m != np.inf:
                n = push(lv, rem, org, n, m, (d - breaks[t]) * cell, i)
    return n


@njit(cache=True, error_model="numpy")
def trail_cost(px, py, qx, qy, at, lv, rem, org, n, depth, cell, cols, height, base, steep,
               slope_of, slopes, enter, narrow, clear, rec_len, rec_lv, rec_org):
    """The price of the straight move from ``(px, py)`` to ``(qx, qy)`` (table units),
    the front starting in cell ``at`` with the trail ``lv``, ``rem``, ``org`` (``n``
    entries), which it moves on in place: `segment_cost`'s walk, each piece moving
    the trail on (`advance`) as `walk_path` does.  Returns ``(cost, cell the front
    ends in, trail size)``; ``inf`` if it crosses an impassable cell or touches one
    at a corner it passes."""
    cpx, cpy = px / cell, py / cell
    dx, dy = qx / cell - cpx, qy / cell - cpy
    tot = math.hypot(dx, dy)
    if tot == 0.0:
        return 0.0, at, n
    u, w = dx / tot, dy / tot
    lox, hix = min(cpx, cpx + dx), max(cpx, cpx + dx)
    loy, hiy = min(cpy, cpy + dy), max(cpy, cpy + dy)
    nx, ny = _crossings(lox, hix, dx), _crossings(loy, hiy, dy)
    entering = enter.shape[0] > 0
    close = _SEGMENT_EPS * max(1.0, tot)
    cost = 0.0
    ix, sx = _inner_crossing(cpx, dx, lox, nx, 0, tot)
    iy, sy = _inner_crossing(cpy, dy, loy, ny, 0, tot)
    last = 0.0
    first = True
    while True:
        s = tot
        end = ix >= nx and iy >= ny
        if not end:
            if sx <= sy:
                s = sx
                ix, sx = _inner_crossing(cpx, dx, lox, nx, ix + 1, tot)
            else:
                s = sy
                iy, sy = _inner_crossing(cpy, dy, loy, ny, iy + 1, tot)
            if s - last <= close:
                if not first:  # a corner: no impassable cell may touch it
                    cx, cy = round(cpx + last / tot * dx), round(cpy + last / tot * dy)
                    for r in range(cy - 1, cy + 1):
                        for c in range(cx - 1, cx + 1):
                            if 0 <= r < height and 0 <= c < cols and base[r * cols + c] == np.inf:
                                return np.inf, at, n
                continue
        sm = 0.5 * (last + s) / tot
        r = min(max(math.floor(cpy + sm * dy), 0), height - 1)
        c = min(max(math.floor(cpx + sm * dx), 0), cols - 1)
        i = r * cols + c
        m = base[i]
        if m == np.inf:
            return np.inf, at, n
        cut = (1.0, 1.0, 1.0, 1.0, 1.0)
        if steep[i] != 1.0:
            ox, oy = cpx - c - 0.5, cpy - r - 0.5
            cut = fold(steep[i], slopes, slope_of[i], u, w, ox + u * last, oy + w * last,
                       ox + u * s, oy + w * s)
        if entering:
            if enter[i] > 0.0 and enter[i] != enter[at]:
                cost += enter[i]
            if narrow[i] > 0.0 and narrow[at] == 0.0:
                cost += narrow[i]
        at = i
        length = (s - last) * cell
        for part in range(3):
            along, slope = stretch(cut, part, length)
            if along > 0.0 or part == 0:
                c_part, n, _ = advance(lv, rem, org, n, m * slope, i, along, depth, rec_len,
                                       rec_lv, rec_org, False)
                cost += c_part
        last = s
        first = False
        if end:
            return cost, at, n
        k = clear[i]
        if k >= 2:  # across the box of alike ground around cell i in one piece
            jx, jy, s = _leave_box(cpx, cpy, dx, dy, lox, loy, nx, ny, ix, iy, tot, close,
                                   c - k, c + k + 1, r - k, r + k + 1, last)
            if jx > ix:
                ix, sx = _inner_crossing(cpx, dx, lox, nx, jx, tot)
            if jy > iy:
                iy, sy = _inner_crossing(cpy, dy, loy, ny, jy, tot)
            if s > last:
                c_part, n, _ = advance(lv, rem, org, n, m, i, (s - last) * cell, depth,
                                       rec_len, rec_lv, rec_org, False)
                cost += c_part
            last = s


@njit(cache=True, error_model="numpy")
def _clean_stand(sx, sy, depth, cell, cols, height, base, steep):
    """Whether no cell within ``depth`` of the point ``(sx, sy)`` (and a cell more) is
    heavier, climbing or not, than the ground of the cell holding it: then the
    standing footprint, facing any way, holds nothing heavier, and a move from
    the start costs what it would without the ranks."""
    sr = min(max(math.floor(sy / cell), 0), height - 1)
    sc = min(max(math.floor(sx / cell), 0), cols - 1)
    k0 = base[sr * cols + sc]
    k = math.ceil(depth / cell) + 1
    for r in range(max(sr - k, 0), min(sr + k + 1, height)):
        for c in range(max(sc - k, 0), min(sc + k + 1, cols)):
            m = base[r * cols + c] * max(steep[r * cols + c], 1.0)
            if m != np.inf and m > k0:
                return False
    return True


@njit(cache=True, error_model="numpy")
def _offer(a, ax, ay, source, vr, vc, t_lv, t_rem, t_n, t_at, depth, cell, cols, height,
           base, steep, slope_of, slopes, enter, narrow, clear, lv, rem, org, rec_len, rec_lv,
           rec_org, sight, r0, c0, w):
    """The price of the straight move from node ``a`` (at ``(ax, ay)``) to the centre of
    the cell at row ``vr``, column ``vc``, with the trail of the path that reached
    ``a`` (the standing footprint at the start, facing the move); the trail after it
    is left in ``lv``, ``rem``.  Returns ``(cost, front's cell, trail size)``.

    Between two cells of one box of alike ground (`_one_box`) with nothing
    heavier than that ground in the trail, the move costs the ground's
    multiplier times its length and leaves that ground alone under the whole
    depth, unwalked (`advance` drops lighter ground behind at once).  So too a
    move from the start to a cell in its plain sight (``sight``, `_source_sight`'s
    window: empty unless `_clean_stand`)."""
    vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
    ar = a // cols
    ac = a - ar * cols
    if a == source:
        k = _window_index(vr, vc, r0, c0, w, sight.shape[0])
        if k >= 0 and sight[k] == 1:
            lv[0], rem[0] = base[a], depth
            return base[a] * _length(vx - ax, vy - ay), vr * cols + vc, 1
    elif (t_n[a] == 0 or t_lv[a, 0] <= base[a]) and _one_box(
            ar, ac, vr, vc, clear, cols):
        lv[0], rem[0] = base[a], depth
        return base[a] * _length(vx - ax, vy - ay), vr * cols + vc, 1
    if a == source:
        tot = _length(vx - ax, vy - ay)
        n = _stand(ax, ay, (vx - ax) / tot, (vy - ay) / tot, depth, cell, cols, height, base,
                   steep, slope_of, slopes, lv, rem, org)
        at = a
    else:
        n = t_n[a]
        for j in range(n):
            lv[j], rem[j] = t_lv[a, j], t_rem[a, j]
        at = t_at[a]
    return trail_cost(ax, ay, vx, vy, at, lv, rem, org, n, depth, cell, cols, height, base,
                      steep, slope_of, slopes, enter, narrow, clear, rec_len, rec_lv, rec_org)


@njit(cache=True, nogil=True, error_model="numpy")
def theta_ranked(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols, cell, depth, source, sx,
                 sy, budget, dist, parent, state, hkey, hidx, pos, touched, tried, stamp, t_lv,
                 t_rem, t_n, t_at):
    """Theta* with the rear-rank trail from the point ``(sx, sy)`` in cell ``source``:
    Dijkstra within ``budget``.  Relaxing neighbour v of an expanded cell u tries
    the step from u and the straight move from u's parent, each priced with the
    trail of the path to where it starts (`_offer`); the cheaper wins (on a tie
    within rounding, the parent farther back), and v keeps its trail.  Nodes,
    sentinels and the workspace are `anyangle.theta_search`'s (``dist``,
    ``parent``, ``state`` at rest; `reset_nodes` returns them there); ``t_*``
    need no reset.  Returns the number of nodes touched."""
    ncell = base.shape[0]
    height = ncell // cols
    stamp[0] += 1
    mark = stamp[0] * (ncell + 1)
    org = np.empty(TRAIL, dtype=np.int64)
    lv_a, rem_a = np.empty(TRAIL), np.empty(TRAIL)
    lv_b, rem_b = np.empty(TRAIL), np.empty(TRAIL)
    rec_len, rec_lv = np.empty(TRAIL + 1), np.empty(TRAIL + 1)
    rec_org = np.empty(TRAIL + 1, dtype=np.int64)
    dist[source] = 0.0
    state[source] = 1
    touched[0] = source
    hkey[0], hidx[0], pos[source] = 0.0, source, 0
    nt, n = 1, 1
    sight, r0, c0, w = np.zeros(0, dtype=np.uint8), 0, 0, 1
    if _clean_stand(sx, sy, depth, cell, cols, height, base, steep):
        sight, r0, c0, w = _source_sight(alike, cols, height, source, sx, sy, cell, budget)
        if base[source] == least:  # settled at once, each with its ground alone behind it
            nt, n = _presettle(sight, r0, c0, w, source, sx, sy, base, cols, cell, budget,
                               dist, parent, state, hkey, hidx, pos, touched, nt, n)
            for j in range(1, nt):
                v = touched[j]
                t_lv[v, 0], t_rem[v, 0], t_n[v], t_at[v] = base[source], depth, 1, v
    while n > 0:
        key = hkey[0]
        u = _pop(n, hkey, hidx, pos)
        n -= 1
        state[u] = 2
        if key > budget:
            break
        ux, uy = _node_xy(u, source, sx, sy, ncell, 0.0, 0.0, cols, cell)
        p = parent[u]
        px, py = 0.0, 0.0
        if p >= 0:
            px, py = _node_xy(p, source, sx, sy, ncell, 0.0, 0.0, cols, cell)
        ur = u // cols
        uc = u - ur * cols
        for j in range(9):
            vr, vc = ur + j // 3 - 1, uc + j % 3 - 1
            if j == 4 or vr < 0 or vr >= height or vc < 0 or vc >= cols:
                continue
            v = vr * cols + vc
            if state[v] == 2 or base[v] == np.inf:
                continue
            vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
            best, via, at, nb = dist[v], -1, -1, 0
            if dist[u] + _length(vx - ux, vy - uy) < best:  # no move costs less than its length
                c, a_at, a_n = _offer(u, ux, uy, source, vr, vc, t_lv, t_rem, t_n, t_at, depth,
                                      cell, cols, height, base, steep, slope_of, slopes, enter,
                                      narrow, clear, lv_a, rem_a, org, rec_len, rec_lv, rec_org, sight,
                                      r0, c0, w)
                if dist[u] + c < best:
                    best, via, at, nb = dist[u] + c, u, a_at, a_n
            if (p >= 0 and tried[v] != mark + p
                    and dist[p] + _length(vx - px, vy - py) <= best * (1.0 + _TIE)):
                tried[v] = mark + p
                c, b_at, b_n = _offer(p, px, py, source, vr, vc, t_lv, t_rem, t_n, t_at, depth,
                                      cell, cols, height, base, steep, slope_of, slopes, enter,
                                      narrow, clear, lv_b, rem_b, org, rec_len, rec_lv, rec_org, sight,
                                      r0, c0, w)
                if dist[p] + c <= best * (1.0 + _TIE) and dist[p] + c < dist[v]:
                    best, via, at, nb = dist[p] + c, p, b_at, -1 - b_n  # -1 - n: trail b
            if via < 0 or best > budget:
                continue
            if state[v] == 0:  # first offer: onto the end of the heap
                state[v] = 1
                touched[nt] = v
                nt += 1
                pos[v] = n
                n += 1
            dist[v], parent[v], t_at[v] = best, via, at
            size = nb if nb >= 0 else -1 - nb
            for k in range(size):
                t_lv[v, k] = lv_a[k] if nb >= 0 else lv_b[k]
                t_rem[v, k] = rem_a[k] if nb >= 0 else rem_b[k]
            t_n[v] = size
            i = pos[v]
            hkey[i] = best
            hidx[i] = v
            _sift_up(i, hkey, hidx, pos)
    return nt
