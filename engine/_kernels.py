"""numba kernels: the direction stack of footprint multipliers and the search.

Private.  Callers (engine.terrain, engine.search) validate everything first:
kernels assume clean, C-contiguous arrays of the documented dtypes.  All are
compiled lazily with ``cache=True``; nothing compiles at import.  Kernels that
call each other live in this one file (numba's disk cache does not notice an
edit to a callee in another module).

Sentinels: an impassable multiplier is ``inf``; an unreached cell has cost
``inf``; ``pos`` is -1 for a cell never queued, -2 once it is settled.
"""

import math

import numpy as np
from numba import njit

UPHILL_TOL = 1e-9


@njit(cache=True)
def direction_multiplier(base, steep, gx, gy, r, c, ux, uy):
    """Multiplier of cell (r, c) for travel along (ux, uy): steep applies uphill only."""
    m = base[r, c]
    s = steep[r, c]
    if s != 1.0 and gx[r, c] * ux + gy[r, c] * uy > UPHILL_TOL:
        m *= s
    return m


@njit(cache=True)
def direction_stack(base, steep, gx, gy, ux, uy, fp_start, fp_dr, fp_dc, out):
    """Fill ``out[k]`` with the footprint multiplier of every cell for direction k.

    ``out[k, r, c]`` is the largest finite multiplier over the cells under a
    footprint whose front is at the centre of (r, c), trailing back along
    direction k (offsets ``fp_d*[fp_start[k]:fp_start[k + 1]]``); ``inf`` if
    (r, c) itself is impassable.  Impassable ground behind the front does not
    count: a unit's rear ranks are never in it.
    """
    rows, cols = base.shape
    for k in range(ux.shape[0]):
        for r in range(rows):
            for c in range(cols):
                own = direction_multiplier(base, steep, gx, gy, r, c, ux[k], uy[k])
                if own == np.inf:
                    out[k, r, c] = np.inf
                    continue
                best = own
                for j in range(fp_start[k], fp_start[k + 1]):
                    rr = r + fp_dr[j]
                    cc = c + fp_dc[j]
                    if rr < 0 or rr >= rows or cc < 0 or cc >= cols:
                        continue
                    m = direction_multiplier(base, steep, gx, gy, rr, cc, ux[k], uy[k])
                    if m > best and m != np.inf:
                        best = m
                out[k, r, c] = best


@njit(cache=True)
def _sift_up(i, hkey, hidx, pos):
    key = hkey[i]
    cell = hidx[i]
    while i > 0:
        parent = (i - 1) >> 1
        if hkey[parent] <= key:
            break
        hkey[i] = hkey[parent]
        hidx[i] = hidx[parent]
        pos[hidx[i]] = i
        i = parent
    hkey[i] = key
    hidx[i] = cell
    pos[cell] = i


@njit(cache=True)
def _sift_down(i, n, hkey, hidx, pos):
    key = hkey[i]
    cell = hidx[i]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and hkey[child + 1] < hkey[child]:
            child += 1
        if hkey[child] >= key:
            break
        hkey[i] = hkey[child]
        hidx[i] = hidx[child]
        pos[hidx[i]] = i
        i = child
    hkey[i] = key
    hidx[i] = cell
    pos[cell] = i


@njit(cache=True)
def search(
    mult,
    cols,
    step_dr,
    step_dc,
    step_len,
    piece_start,
    piece_dr,
    piece_dc,
    piece_w,
    source,
    source_cost,
    goal,
    cell,
    budget,
    dist,
    parent,
    pos,
    hkey,
    hidx,
    touched,
):
    """Dijkstra (``goal < 0``) or A* (``goal >= 0``) over the step neighbourhood.

    ``mult`` is ``(K, rows * cols)`` (one row per step direction) or
    ``(1, rows * cols)`` when the multiplier does not depend on direction.  A
    step k from cell a costs ``step_len[k] * sum(piece_w * mult)`` over the
    cells the straight step crosses; a piece weight of 0 marks a cell touched
    at a corner, which only blocks.  Cells settle in cost order; Dijkstra stops
    once the cheapest open cost exceeds ``budget``, A* when ``goal`` settles.

    Returns the number of cells written to ``touched`` (each has a finite
    ``dist``; the caller resets them).  ``parent`` holds the step index that
    reached each cell (-1 at the source).
    """
    ncell = dist.shape[0]
    rows = ncell // cols
    directional = mult.shape[0] > 1
    goal_r = goal // cols
    goal_c = goal % cols
    n_touched = 0
    n_heap = 0
    dist[source] = source_cost
    parent[source] = -1
    touched[n_touched] = source
    n_touched += 1
    hkey[0] = source_cost
    hidx[0] = source
    pos[source] = 0
    n_heap = 1
    while n_heap > 0:
        key = hkey[0]
        a = hidx[0]
        n_heap -= 1
        if n_heap > 0:
            hkey[0] = hkey[n_heap]
            hidx[0] = hidx[n_heap]
            pos[hidx[0]] = 0
            _sift_down(0, n_heap, hkey, hidx, pos)
        pos[a] = -2
        if a == goal:
            break
        if goal < 0 and key > budget:
            break
        da = dist[a]
        ar = a // cols
        ac = a - ar * cols
        for k in range(step_dr.shape[0]):
            br = ar + step_dr[k]
            bc = ac + step_dc[k]
            if br < 0 or br >= rows or bc < 0 or bc >= cols:
                continue
            b = br * cols + bc
            if pos[b] == -2:
                continue
            row = k if directional else 0
            total = 0.0
            for j in range(piece_start[k], piece_start[k + 1]):
                m = mult[row, a + piece_dr[j] * cols + piece_dc[j]]
                if m == np.inf:
                    total = np.inf
                    break
                total += piece_w[j] * m
            if total == np.inf:
                continue
            nd = da + step_len[k] * total
            if nd < dist[b]:
                if dist[b] == np.inf:
                    touched[n_touched] = b
                    n_touched += 1
                dist[b] = nd
                parent[b] = k
                h = 0.0
                if goal >= 0:
                    h = cell * math.hypot(br - goal_r, bc - goal_c)
                if pos[b] < 0:
                    hkey[n_heap] = nd + h
                    hidx[n_heap] = b
                    pos[b] = n_heap
                    n_heap += 1
                    _sift_up(n_heap - 1, hkey, hidx, pos)
                else:
                    hkey[pos[b]] = nd + h
                    _sift_up(pos[b], hkey, hidx, pos)
    return n_touched
