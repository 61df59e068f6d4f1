"""numba kernel: cost to a goal over reversed steps (flow fields).

Private; `engine.ai` validates everything first.  The kernel calls
`engine._kernels.climb`, a callee in another module: numba's disk cache does
not notice an edit to it, so after changing ``climb`` clear the cache
(``engine/__pycache__/_flow.*``) or touch this file.
"""

import numpy as np
from numba import njit

from ._kernels import climb, entry


@njit(cache=True, error_model="numpy")
def reverse_search(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    nb, table_cost, flat, enter, narrow, goals, limit, dist, step, stack,
):
    """Cost from every cell to the nearest of ``goals``, travelling toward it.

    A cell a's cost is the cheapest, over steps k out of a, of what step k
    costs leaving a (priced in its own direction, as `_kernels.search` prices
    it, without the rear-rank trail) plus the cost of the cell it lands on.
    The search runs from the goals over the steps reversed: expanding a cell
    b, it offers every a with ``a + step k == b`` the price of step k from a.
    ``step[a]`` is that k (-1 at a goal and where unreached).

    ``table_cost`` (from `_kernels.step_table`, or empty) holds every step's
    price; without it steps are priced from their pieces, slopes and flat
    entry costs ``enter`` and ``narrow`` as `_kernels.step_table` does, except
    out of a ``flat`` cell (`_kernels.flat_cells`): its multiplier times the
    step's length, the same number.  The queue is `_kernels.search_plain`'s:
    ``nb`` buckets as wide as the shortest step (no step costs less than its
    length), each a row of ``stack``; an improved cell is pushed again and
    its older entries are skipped once it is expanded (its cost negated in
    ``dist`` until the end: no cost beats a negative one, so a relaxation
    needs no other test).  Cells whose cost exceeds ``limit`` stay unreached.  ``dist``
    must come in ``inf`` and ``step`` ``-1``; returns the number of cells
    expanded, or -1 if a bucket outgrew its row of ``stack`` (the caller
    starts again with a wider one).
    """
    ncell = dist.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    tabled = table_cost.shape[0] > 0
    has_flat = flat.shape[0] > 0
    entering = enter.shape[0] > 0
    step_off = step_dr * cols + step_dc
    size = np.zeros(nb, dtype=np.int64)
    ring = nb - 1
    width = step_len.min()
    per_width = (1.0 / width) * (1.0 + 1e-12)
    queued = 0
    for g in goals:
        if dist[g] == 0.0:
            continue
        if size[0] == stack.shape[1]:
            return -1
        dist[g] = 0.0
        stack[0, size[0]] = g
        size[0] += 1
        queued += 1
    current = 0
    settled = 0
    while queued > 0:
        while size[current & ring] == 0:
            current += 1
        if current * width > limit:
            break
        slot = current & ring
        size[slot] -= 1
        b = stack[slot, size[slot]]
        queued -= 1
        db = dist[b]
        if db < 0.0:  # expanded since pushed
            continue
        dist[b] = -db
        settled += 1
        fb = flat[b] if has_flat else 0.0
        if fb > 0.0:
            # Every step into a flat cell lies inside its box: on the grid, over
            # one multiplier, at that times its length.  A loop of its own.
            for k in range(nsteps):
                a = b - step_off[k]
                nd = db + fb * step_len[k]
                if nd < dist[a] and nd <= limit:
                    dist[a] = nd
                    step[a] = k
                    slot = int(nd * per_width) & ring
                    if size[slot] == stack.shape[1]:
                        return -1
                    stack[slot, size[slot]] = a
                    size[slot] += 1
                    queued += 1
            continue
        br = b // cols
        bc = b - br * cols
        for k in range(nsteps):
            ar = br - step_dr[k]
            ac = bc - step_dc[k]
            if ar < 0 or ar >= rows or ac < 0 or ac >= cols:
                continue
            a = ar * cols + ac
            if dist[a] < 0.0:  # expanded
                continue
            if has_flat and flat[a] > 0.0:
                total = flat[a] * step_len[k]
            elif tabled:
                total = table_cost[a * nsteps + k]
            else:
                total = 0.0
                prev = a
                for j in range(piece_start[k], piece_start[k + 1]):
                    i = a + piece_dr[j] * cols + piece_dc[j]
                    if piece_w[j] == 0.0:  # a corner touch only blocks
                        if base[i] == np.inf:
                            total = np.inf
                            break
                        continue
                    g = base[i]
                    if not plain and steep[i] != 1.0:
                        g *= climb(steep[i], gxf[i], gxb[i], gyf[i], gyb[i], ux[k], uy[k])
                    if g == np.inf:
                        total = np.inf
                        break
                    total += piece_w[j] * step_len[k] * g
                    if entering:
                        total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    prev = i
            nd = db + total
            if not nd < dist[a] or nd > limit:  # inf fails the first test
                continue
            dist[a] = nd
            step[a] = k
            slot = int(nd * per_width) & ring
            if size[slot] == stack.shape[1]:
                return -1
            stack[slot, size[slot]] = a
            size[slot] += 1
            queued += 1
    for i in range(ncell):  # the marks off
        dist[i] = abs(dist[i])
    return settled
