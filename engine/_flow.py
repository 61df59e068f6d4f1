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
    nb, table_cost, flat, enter, narrow, goals, limit, dist, step, pos, link,
):
    """Cost from every cell to the nearest of ``goals``, travelling toward it.

    A cell a's cost is the cheapest, over steps k out of a, of what step k
    costs leaving a (priced in its own direction, as `_kernels.search` prices
    it, without the rear-rank trail) plus the cost of the cell it lands on.
    The search runs from the goals over the steps reversed: settling a cell
    b, it offers every a with ``a + step k == b`` the price of step k from a.
    ``step[a]`` is that k (-1 at a goal and where unreached).

    ``table_cost`` (from `_kernels.step_table`, or empty) holds every step's
    price; without it steps are priced from their pieces, slopes and flat
    entry costs ``enter`` and ``narrow`` as `_kernels.step_table` does, except
    out of a ``flat`` cell (`_kernels.flat_cells`): its multiplier times the
    step's length, the same number.  Dial's buckets
    (``nb`` of them, as wide as the shortest step) as in `_kernels.search`:
    no step costs less than its length.  Cells whose cost exceeds ``limit``
    stay unreached.  ``dist`` must come in ``inf``, ``step`` and ``pos``
    ``-1``; returns the number of cells settled.
    """
    ncell = dist.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    tabled = table_cost.shape[0] > 0
    has_flat = flat.shape[0] > 0
    entering = enter.shape[0] > 0
    heads = np.full(nb, -1, dtype=np.int64)
    ring = nb - 1
    width = step_len.min()
    per_width = (1.0 / width) * (1.0 + 1e-12)
    queued = 0
    for g in goals:
        if dist[g] == 0.0:
            continue
        dist[g] = 0.0
        link[2 * g] = heads[0]
        link[2 * g + 1] = -1
        if heads[0] >= 0:
            link[2 * heads[0] + 1] = g
        heads[0] = g
        pos[g] = 0
        queued += 1
    current = 0
    settled = 0
    while queued > 0:
        while heads[current & ring] < 0:
            current += 1
        if current * width > limit:
            break
        slot = current & ring
        b = heads[slot]
        nxt = link[2 * b]
        heads[slot] = nxt
        if nxt >= 0:
            link[2 * nxt + 1] = -1
        queued -= 1
        pos[b] = -2
        settled += 1
        db = dist[b]
        if db > limit:
            continue
        br = b // cols
        bc = b - br * cols
        for k in range(nsteps):
            ar = br - step_dr[k]
            ac = bc - step_dc[k]
            if ar < 0 or ar >= rows or ac < 0 or ac >= cols:
                continue
            a = ar * cols + ac
            if pos[a] == -2:
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
            if total == np.inf:
                continue
            nd = db + total
            if nd >= dist[a]:
                continue
            dist[a] = nd
            step[a] = k
            if pos[a] >= 0:  # unlink from its old bucket
                prv = link[2 * a + 1]
                nx = link[2 * a]
                if prv >= 0:
                    link[2 * prv] = nx
                else:
                    heads[pos[a]] = nx
                if nx >= 0:
                    link[2 * nx + 1] = prv
                queued -= 1
            slot = int(nd * per_width) & ring
            head = heads[slot]
            link[2 * a] = head
            link[2 * a + 1] = -1
            if head >= 0:
                link[2 * head + 1] = a
            heads[slot] = a
            pos[a] = slot
            queued += 1
    return settled
