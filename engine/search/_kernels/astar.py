"""numba kernels: A* over bucketed queues for a unit without rear ranks (`search_plain`).

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import literally, njit

from .bounds import _landmark_bound, _to_go
from .heap import ASTAR_SPLIT, CLOSED, REOPEN, pool_split, stack_rows


@njit(cache=True, error_model="numpy")
def search_plain(
    base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
    table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
    dist, parent, touched, stack, lowest, lm, lm_goal,
):
    """`search` where a step's cost depends on nothing behind the front.

    No footprint: a step costs its entry in ``table_cost`` (`step_table`:
    inf off the grid; from a cell marked in ``flat`` (`flat_cells`), its
    multiplier ``flat_of[flat[a]]`` times the step's length, the same number)
    or, with an empty table, its pieces' multipliers (no slopes), in a kernel
    small enough to compile tight.  With a ``table_row`` (A* only), the table
    holds rows shared by cells (`CostGrid.outgoing_steps`): cell a's is
    ``table_row[a]``, and every cell that is not flat must have one.  A flat
    cell takes only the steps ``onward_*`` keep after the step that reached
    it (`terrain.onward_steps`).  Without a table the grid has a border of
    blocked cells at least as wide as the longest step, so no step leaves it
    and nothing is bounds-checked.  Pieces are priced branch-free: a corner
    piece (length 0) over a blocked cell gives NaN, which blocks like inf.

    Dijkstra and A* share one queue: a ring of buckets, each a stack of cells
    (the lightest queue: an entry is two sequential writes; an improved cell is
    pushed again and its older entries are skipped once it is expanded, marked
    by ``CLOSED`` in ``parent``).  Dijkstra keys on cost in buckets as wide as
    the shortest step, so a bucket's cells are final (Dial's algorithm, as in
    `search`).  With ``lowest`` (Dijkstra with a table: a reach priced per
    started quantum is settled along the steps kept), of offers equal to the
    bit a cell keeps the lowest-numbered step, so the steps kept depend on
    neither the queue's order nor pruning; otherwise it keeps the first
    (keeping the lowest made demo reaches 20% slower).  A* keys on cost plus
    the distance left on open ground (octile with 8 steps, straight line
    otherwise), which no step lowers, or the landmarks' bound where it is
    larger (``lm``, ``lm_goal``: `search`'s; a cell it shows cannot reach the
    goal is dropped), in buckets ``ASTAR_SPLIT`` times narrower (``POOL_SPLIT``
    with a ``table_row``, whose buckets are lists in ``stack`` taken whole).
    Cells within one bucket can still improve each other (and the landmarks'
    float32 bound is consistent only to rounding), so an improved cell is
    reopened and expanded again (unless the improvement is rounding,
    ``REOPEN``; a key below the current bucket goes into it), and the search
    stops once the cheapest bucket starts at or beyond the goal's cost: no open
    path can then be cheaper.  Cells costing more than ``budget`` are never
    queued.

    The buckets are rows of ``stack``, the caller's (`stack_rows` of them),
    so the loop holds no array it may replace.  Returns the number of cells
    written to ``touched``, or minus it if a bucket outgrew its row (the
    caller resets them and calls again with a wider stack).
    """
    tabled = table_cost.shape[0] > 0
    if goal >= 0 and table_row.shape[0] > 0:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, True, False, True,
        )
    if goal >= 0 and tabled:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, True, False, False,
        )
    if goal >= 0:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, False, False, False,
        )
    if tabled and lowest:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, False, True, True, False,
        )
    if tabled:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, False, True, False, False,
        )
    return _search_plain(
        base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
        nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
        budget, dist, parent, touched, stack, lm, lm_goal, False, False, False, False,
    )


@njit(cache=True, error_model="numpy")
def _search_plain(
    base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
    table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
    dist, parent, touched, stack, lm, lm_goal, astar, tabled, lowest, indexed,
):
    """`search_plain` compiled for each value of ``astar`` (``goal >= 0``), ``tabled``,
    ``lowest`` and ``indexed`` (a ``table_row``).

    ``numba.literally`` makes the flags constants, so each compiled loop keeps
    only its own branches (about 15% on demo-map reaches, bench/README.md).
    Called from Python, the flags would cost a literal re-dispatch (milliseconds)
    every time: call `search_plain`.
    """
    literally(astar)
    literally(tabled)
    literally(lowest)
    literally(indexed)
    nsteps = step_dr.shape[0]
    step_off = step_dr * cols + step_dc
    piece_off = piece_dr * cols + piece_dc
    piece_len = np.empty(piece_w.shape[0])
    for k in range(nsteps):
        for j in range(piece_start[k], piece_start[k + 1]):
            piece_len[j] = piece_w[j] * step_len[k]
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    shortest = step_len.min()
    diagonal = min(step_len.max(), 2.0 * shortest)
    # The pool's lists cost nothing per bucket, so its A* keeps them far narrower: wide
    # ones, taken last in first out, expanded the plateau's cells before their cost was
    # final and again after (2.2x the time across the 4096² campaign map).
    split = pool_split(nb) if indexed else ASTAR_SPLIT
    width = shortest / split if astar else shortest
    per_width = (1.0 / width) * (1.0 + 1e-12)
    has_flat = tabled and flat.shape[0] > 0
    span = stack_rows(nb, astar, split)
    ring = span - 1
    size = np.zeros(span, dtype=np.int64)
    dist[source] = 0.0
    parent[source] = -1
    touched[0] = source
    n_touched = 1
    current = 0
    if astar:
        h = _to_go(source // cols - goal_r, source % cols - goal_c, nsteps, shortest, diagonal,
                   cell)
        h = _landmark_bound(lm, lm_goal, source, h)
        if h == np.inf:  # the landmarks show the goal out of reach
            return n_touched
        current = int(h * per_width)
    # With shared rows (a grid too big for the whole table: the highway's A*) one
    # bucket may hold most of the queue (the landmark bound's plateau), so the buckets
    # are lists through ``stack`` taken whole, entries (cell, next), ``size`` their
    # heads (-1: empty): last in, first out as the rows are.  A popped entry is
    # reused (``spare`` lists them), so the pool holds the queue, not every push.
    pool = stack.reshape(-1)
    used = 1
    spare = -1
    if indexed:
        size[:] = -1
        pool[0] = source
        pool[1] = -1
        size[current & ring] = 0
    else:
        stack[current & ring, 0] = source
        size[current & ring] = 1
    queued = 1
    while queued > 0:
        while size[current & ring] == (-1 if indexed else 0):
            current += 1
        if current * width > budget:
            break
        if astar and current * width >= dist[goal] * (1.0 + 1e-12):
            break
        slot = current & ring
        if indexed:
            top = size[slot]
            a = pool[2 * top]
            size[slot] = pool[2 * top + 1]
            pool[2 * top + 1] = spare
            spare = top
        else:
            size[slot] -= 1
            a = stack[slot, size[slot]]
        queued -= 1
        if parent[a] >= CLOSED:  # expanded since this entry was pushed
            continue
        if a != source:  # the source's -1 has every bit set already
            parent[a] |= CLOSED
        da = dist[a]
        ar = a // cols
        ac = a - ar * cols
        # No path through a beats the goal's (in the last buckets: many ties).  With
        # shared rows the buckets are narrow and the check, a landmark look-up a pop,
        # saved nothing (4096² campaign routes 262, 236, 392 ms with it, 238, 193, 342
        # without).
        if astar and not indexed and da + _landmark_bound(lm, lm_goal, a, _to_go(
                ar - goal_r, ac - goal_c, nsteps, shortest, diagonal, cell)) >= dist[goal]:
            continue
        fa = flat_of[flat[a]] if has_flat else 0.0
        # Out of a flat cell, only the steps the one that reached it leaves worth taking.
        row = parent[a] & (CLOSED - 1) if fa > 0.0 and a != source else nsteps
        if fa > 0.0 and not astar:
            # A flat cell's steps, in a loop of their own: its number without the
            # table, and no branch per step on how to price it (13% on demo reaches).
            for q in range(onward_start[row], onward_start[row + 1]):
                k = onward[q]
                nd = da + fa * step_len[k]
                b = a + step_off[k]
                db = dist[b]
                if nd < db and nd <= budget and (parent[b] < CLOSED or nd <= db * REOPEN):
                    if db == np.inf:
                        touched[n_touched] = b
                        n_touched += 1
                    elif parent[b] < CLOSED and int(nd * per_width) == int(db * per_width):
                        dist[b] = nd  # queued in this bucket already: no second entry
                        parent[b] = k
                        continue
                    dist[b] = nd
                    parent[b] = k
                    slot = max(int(nd * per_width), current) & ring
                    if size[slot] == stack.shape[1]:
                        return -n_touched
                    stack[slot, size[slot]] = b
                    size[slot] += 1
                    queued += 1
                elif lowest and nd == db and k < parent[b] < CLOSED:
                    parent[b] = k  # of offers equal to the bit, the lowest step
            continue
        # (Raw grids have no flat cells: their loop is the plain one over every step.)
        own = (np.int64(table_row[a]) if indexed else a) * nsteps  # a's row of the table
        for q in range(onward_start[row] if tabled else 0,
                       onward_start[row + 1] if tabled else nsteps):
            k = onward[q] if tabled else q
            if fa > 0.0:  # the table's number, without reading it
                total = fa * step_len[k]
            elif tabled:
                total = table_cost[own + k]
                if total == np.inf:  # off the grid, or blocked
                    continue
            else:
                total = 0.0
                for j in range(piece_start[k], piece_start[k + 1]):
                    total += piece_len[j] * base[a + piece_off[j]]
            b = a + step_off[k]
            nd = da + total
            db = dist[b]
            if not nd < db or nd > budget:  # NaN and inf fail the first test
                if lowest and nd == db and k < parent[b] < CLOSED:
                    parent[b] = k  # of offers equal to the bit, the lowest step
                continue
            if parent[b] >= CLOSED and nd > db * REOPEN:  # rounding, not a cheaper path
                continue
            if db == np.inf:
                touched[n_touched] = b
                n_touched += 1
            elif not astar and parent[b] < CLOSED and int(nd * per_width) == int(db * per_width):
                dist[b] = nd  # queued in this bucket already: no second entry
                parent[b] = k
                continue
            dist[b] = nd
            parent[b] = k
            key = nd
            if astar:
                key += _landmark_bound(lm, lm_goal, b, _to_go(
                    ar + step_dr[k] - goal_r, ac + step_dc[k] - goal_c, nsteps, shortest,
                    diagonal, cell))
                if key == np.inf:  # the landmarks show b cannot reach the goal
                    continue
            slot = max(int(key * per_width), current) & ring
            if indexed:
                e = spare
                if e >= 0:
                    spare = pool[2 * e + 1]
                elif 2 * used + 1 < pool.shape[0]:
                    e = used
                    used += 1
                else:
                    return -n_touched
                pool[2 * e] = b
                pool[2 * e + 1] = size[slot]
                size[slot] = e
            else:
                if size[slot] == stack.shape[1]:
                    return -n_touched
                stack[slot, size[slot]] = b
                size[slot] += 1
            queued += 1
    return n_touched
