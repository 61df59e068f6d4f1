"""numba kernels: Dijkstra and A* over a grid (`search`) and reaches priced per
started quantum (`settle_quanta`).

Private; `engine.search` validates everything first.
"""

import math

import numpy as np
from numba import njit

from ...terrain._kernels import entry, largest, smallest, step_climb, step_fold
from .bounds import _landmark_bound, _to_go
from .heap import _heap_pop, _sift_up


@njit(cache=True, error_model="numpy")
def search(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, goal, cell, budget,
    dist, parent, pos, hkey, hidx, touched, link, lm, lm_goal,
):
    """Dijkstra (``goal < 0``) or A* (``goal >= 0``) over the step neighbourhood.

    A step k from cell a crosses the cells ``piece_*[piece_start[k]:
    piece_start[k + 1]]`` in order, a fraction ``piece_w`` of its length
    ``step_len[k]`` in each (weight 0: a cell touched only at a corner, which
    can only block).  With ``plain`` the multiplier is ``base``; otherwise it
    is the direction's `ground`.  A unit with rear ranks goes to
    `search_labels` (``depth``, ``fp_*`` and ``table_uniform`` are not read
    here).

    ``table_*`` (from `step_table`, or empty to price steps as it goes)
    hold every step's cost.  ``flat_of[flat[a]]`` (`flat_cells`; ``flat``
    may be empty) is the multiplier of a cell whose steps all cost it times
    their length, table or not, else 0; such a cell takes only the steps
    ``onward_*`` keep after the step that reached it
    (`terrain.lattice.onward_steps`; the last row holds all).

    ``enter`` and ``narrow`` (both empty for none) are flat costs per cell,
    paid as the step's front goes into a cell (`entry`): crossing a wall, a
    unit narrowing its formation to pass a bridge.

    Dijkstra keeps its open cells in a ring of ``nb`` buckets as wide as the
    shortest step (``nb``, a power of two, spans the costliest step; ``link``
    holds each cell's next and previous in its bucket).  No step costs less
    than its length (multipliers are >= 1), so every cell in the cheapest
    bucket is final and a bucket is emptied in any order (Dial's algorithm
    with buckets no wider than the lightest step).  It stops
    once the cheapest bucket starts beyond ``budget``.  A* keeps a heap (4-ary)
    on cost plus the distance on open ground (octile with 8 steps, straight
    line otherwise: no step is cheaper than its length) and stops when
    ``goal`` settles.  With landmarks (``lm[b, l]``: landmark l's cost at cell b,
    cell-major so that a cell's costs are read together; ``lm_goal[0, l]``: a
    lower bound of its cost at the goal, ``lm_goal[1, l]``: minus an upper
    bound of it where costs are the same both ways, else ``-inf``; both may be
    empty) the bound is the larger of that and, for every landmark,
    ``lm_goal[0, l] - lm[b, l]`` and ``lm[b, l] + lm_goal[1, l]`` (ALT); a cell
    the bound shows cannot reach the goal is dropped.  A queued cell reached
    more cheaply keeps its bound (its key drops by what it saved) instead of
    reading the landmarks again.

    Returns the number of cells written to ``touched`` (each with a finite
    ``dist``; the caller resets them).  ``parent`` holds the step index that
    reached a cell (-1 at the source).
    """
    rows = dist.shape[0] // cols
    nsteps = step_dr.shape[0]
    astar = goal >= 0
    tabled = table_cost.shape[0] > 0
    # Landmark bounds are float32, consistent only to rounding: a settled cell
    # reached more cheaply is queued again, so the answer stays exact.
    reopen = lm_goal.shape[1] > 0
    step_off = step_dr * cols + step_dc
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    heads = _start(source, astar, nb, dist, parent, pos, hkey, hidx, touched, link)
    n_touched = 1
    queued = np.int64(1)  # not a literal 1: `_heap_pop` compiles once
    ring = nb - 1  # nb is a power of two: a mask, not a division, picks the bucket
    width = smallest(step_len)  # no step costs less (multipliers are >= 1)
    per_width = (1.0 / width) * (1.0 + 1e-12)  # never wider than that
    diagonal = min(largest(step_len), 2.0 * width)
    current = 0
    while queued > 0:
        if astar:
            a = _heap_pop(queued, hkey, hidx, pos)
            if a == goal:
                pos[a] = -2
                break
        else:
            current = _next_bucket(heads, current, ring)
            if current * width > budget:
                break
            a = _bucket_take(current & ring, heads, link)
        queued -= 1
        pos[a] = -2
        da = dist[a]
        if da > budget:  # settled past the allowance (its bucket straddles it): a dead end
            continue
        ar = a // cols
        ac = a - ar * cols
        # A flat cell's steps all cost their length at its multiplier, and only the
        # steps the one that reached it leaves worth taking are taken.
        fa = flat_of[flat[a]] if flat.shape[0] > 0 else 0.0
        row = parent[a] if fa > 0.0 and a != source else nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            b, total = _step_end(a, ar, ac, k, fa, table_cost, nsteps, step_off, step_dr,
                                 step_dc, step_len, rows, cols)
            if b < 0 or (pos[b] == -2 and not reopen):
                continue
            if fa == 0.0 and not tabled:  # neither the table nor the flat multiplier
                total = _step_cost(base, steep, slope_of, slopes, cols, plain, step_dr,
                                   step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc,
                                   piece_w, enter, narrow, a, k)
            nd = da + total
            before = dist[b]
            if nd >= before:
                continue
            if before == np.inf:
                touched[n_touched] = b
                n_touched += 1
            dist[b] = nd
            parent[b] = k
            if astar and reopen and pos[b] >= 0:
                # Queued already: its bound is its key less its old cost (landmark
                # bounds carry far more slack than this subtraction's rounding).
                queued = _heap_offer(b, hkey[pos[b]] - (before - nd), queued, hkey, hidx, pos)
            elif astar:
                h = _landmark_bound(lm, lm_goal, b, _to_go(
                    b // cols - goal_r, b % cols - goal_c, nsteps, width, diagonal, cell))
                if h == np.inf:
                    continue
                queued = _heap_offer(b, nd + h, queued, hkey, hidx, pos)
            else:
                queued = _bucket_move(b, int(nd * per_width) & ring, pos, link, heads, queued)
    return n_touched


@njit(cache=True, inline="always")
def _start(source, astar, nb, dist, parent, pos, hkey, hidx, touched, link):
    """`search`'s start: the source reached at no cost, touched and queued (A*'s heap,
    or Dijkstra's bucket 0); returns the bucket heads (one, unused, for A*)."""
    dist[source] = 0.0
    parent[source] = -1
    touched[0] = source
    heads = np.full(nb if not astar else 1, -1, dtype=np.int64)
    if astar:
        hkey[0] = 0.0
        hidx[0] = source
    else:
        heads[0] = source
        link[2 * source] = -1
        link[2 * source + 1] = -1
    pos[source] = 0
    return heads


# The helpers below run once a cell or a step.  Arrays handed to an inlined helper cost
# a reference count each unless numba's pruning removes it, which it does where the
# helper's arrays all die in its first block or all in its last one: so they read
# their arrays before they branch, or end on unconditional writes (a helper that did
# not made `search` 1.2 to 4 times slower).


@njit(cache=True, inline="always")
def _next_bucket(heads, current, ring):
    """Dijkstra's cheapest bucket: the first from ``current`` on whose list is not
    empty."""
    while heads[current & ring] < 0:
        current += 1
    return current


@njit(cache=True, inline="always")
def _bucket_take(slot, heads, link):
    """Take the head off bucket ``slot``'s list; returns it."""
    a = heads[slot]
    nxt = link[2 * a]
    heads[slot] = nxt
    # The next cell, now the head, has none before it.  Without one the write goes to
    # ``a``'s own entry, which as the head's holds -1 already: the same write either
    # way, unconditional (see above).
    link[2 * (nxt if nxt >= 0 else a) + 1] = -1
    return a


@njit(cache=True, inline="always")
def _bucket_move(b, slot, pos, link, heads, queued):
    """Put cell ``b`` at the head of bucket ``slot``'s list, first taking it out of the
    one it is queued in, if any (``pos[b] >= 0``); returns the number queued."""
    old = pos[b]
    if old >= 0:  # unlink from its old bucket
        prv = link[2 * b + 1]
        nxt = link[2 * b]
        if prv >= 0:
            link[2 * prv] = nxt
        else:
            heads[old] = nxt
        if nxt >= 0:
            link[2 * nxt + 1] = prv
    head = heads[slot]
    if head >= 0:
        link[2 * head + 1] = b
    link[2 * b] = head
    link[2 * b + 1] = -1
    heads[slot] = b
    pos[b] = slot
    return queued if old >= 0 else queued + 1


@njit(cache=True, inline="always")
def _heap_offer(b, key, queued, hkey, hidx, pos):
    """Key cell ``b`` ``key`` on A*'s heap of ``queued``: pushed, or where it is queued
    already moved up (``key`` is never higher); returns the heap's size."""
    at = pos[b]
    if at < 0:
        at = queued
        hidx[at] = b
        pos[b] = at
        queued += 1
    hkey[at] = key
    _sift_up(at, hkey, hidx, pos)
    return queued


@njit(cache=True, inline="always")
def _step_end(a, ar, ac, k, fa, table_cost, nsteps, step_off, step_dr, step_dc, step_len,
              rows, cols):
    """Where step ``k`` out of cell ``a`` (row ``ar``, column ``ac``) lands, and its
    cost where that needs no pieces: ``(cell, cost)``, the cell -1 off the grid.
    From a flat cell (multiplier ``fa`` > 0) the cost is the table's number, without
    reading it or the pieces; else the table's (inf for steps off the grid), if
    there is one; else 0, left to `_step_cost`."""
    off = step_off[k]
    br = ar + step_dr[k]
    bc = ac + step_dc[k]
    total = fa * step_len[k]
    if fa == 0.0 and table_cost.shape[0] > 0:
        total = table_cost[a * nsteps + k]
        if total == np.inf:
            return -1, total
    elif fa == 0.0 and (br < 0 or br >= rows or bc < 0 or bc >= cols):
        return -1, total
    return a + off, total


@njit(cache=True, inline="always")
def _step_cost(base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len, ux, uy,
               piece_start, piece_dr, piece_dc, piece_w, enter, narrow, a, k):
    """Step ``k`` out of cell ``a`` priced over its pieces: each piece's share of the
    step's length at its multiplier (``base``, and unless ``plain`` the direction's
    `climb`), plus the flat costs (`entry`) of the cells the front goes into; inf if
    a piece is impassable, a corner piece (weight 0) included.  (`step_table` walks
    the pieces the same way in a loop of its own, which also notes whether their
    multipliers stay the same or rise; `flow._step_from` calls this one.)"""
    entering = enter.shape[0] > 0
    total = 0.0
    prev = a
    t = 0.0  # the share of the step before the piece
    for j in range(piece_start[k], piece_start[k + 1]):
        i = a + piece_dr[j] * cols + piece_dc[j]
        if piece_w[j] == 0.0:
            if base[i] == np.inf:
                return np.inf
            continue
        g = base[i]
        if not plain and steep[i] != 1.0:
            g *= step_climb(steep[i], slopes, slope_of[i], ux[k], uy[k], t, t + piece_w[j],
                            step_dr[k], step_dc[k], piece_dr[j], piece_dc[j])
        t += piece_w[j]
        if g == np.inf:
            return np.inf
        total += piece_w[j] * step_len[k] * g
        if entering:
            total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
        prev = i
    return total


@njit(cache=True, error_model="numpy")
def settle_quanta(
    cells, cost, parent, parent_step, base, steep, slope_of, slopes, cols,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, quantum, out,
):
    """Reach costs with ground priced per started quantum, along the paths the search kept.

    The paths form a tree: node u (sorted by ``cost``, the search's smooth
    costs, the source first) stands on cell ``cells[u]``, reached by step
    ``parent_step[u]`` from node ``parent[u]`` (-1 at the source).  The
    front's stretch of quantised ground (``quantum[cell]`` > 0) is followed
    piece by piece, as `engine.search.pricing` does: when it ends, the rest of its
    last started quantum is charged at the front's multiplier there; ``out``
    gets each node's cost with that charge for every stretch ended on the
    way, plus the stretch it is still in.
    """
    n = cells.shape[0]
    adj = np.empty(n)
    qs = np.empty(n)
    qd = np.empty(n)
    qm = np.empty(n)
    for u in range(n):
        v = parent[u]
        if v < 0:
            adj[u], qs[u], qd[u], qm[u] = 0.0, 0.0, 0.0, 1.0
        else:
            k = parent_step[u]
            p = cells[v]
            q, d, m = qs[v], qd[v], qm[v]
            extra = 0.0
            t = 0.0  # the share of the step before the piece
            for j in range(piece_start[k], piece_start[k + 1]):
                if piece_w[j] == 0.0:
                    continue
                i = p + piece_dr[j] * cols + piece_dc[j]
                if quantum[i] != q:
                    if q > 0.0:
                        extra += (math.ceil(d / q - 1e-9) * q - d) * m
                    q, d = quantum[i], 0.0
                if q > 0.0:
                    d += piece_w[j] * step_len[k]
                    m = base[i]  # where the front is at the piece's end (`walk_path`'s)
                    if steep[i] != 1.0:
                        m *= step_fold(steep[i], slopes, slope_of[i], ux[k], uy[k], t,
                                       t + piece_w[j], step_dr[k], step_dc[k], piece_dr[j],
                                       piece_dc[j])[4]
                t += piece_w[j]
            adj[u] = adj[v] + (cost[u] - cost[v]) + extra
            qs[u], qd[u], qm[u] = q, d, m
        out[u] = adj[u]
        if qs[u] > 0.0:
            out[u] += (math.ceil(qd[u] / qs[u] - 1e-9) * qs[u] - qd[u]) * qm[u]
