"""numba kernels: the bidirectional landmark search (`search_both`) and the blocks
between the cheapest ground that sharpen its bound (`block_labels`, `block_rims`).

Private; `engine.search.highway` validates everything first.
"""

import numpy as np
from numba import njit, prange

from ..._intrinsics import shared_get, shared_set
from ...terrain._kernels import largest, smallest
from .bounds import _bound_to, _landmark_bound, _potential, _to_go
from .heap import CLOSED, REOPEN


@njit(cache=True, error_model="numpy")
def search_both(
    cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of, onward_start,
    onward, source, goal, cell, split, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, threads, pot,
):
    """A* from both ends at once (`Highway`'s, where a step costs the same both ways).

    The forward search runs from ``source`` as `_search_plain` does with
    shared rows (``table_row``, flat cells taking their onward steps); the
    backward one runs from ``goal`` the same way, since a step costs the same
    both ways.  Both key on the average of the two bounds (`_bound_to`: the
    goal's with ``bounds[0]`` and ``exits[0]``, the source's with ``bounds[1]``
    and ``exits[1]``), ``p = (h_goal - h_source) / 2``: the forward search on ``cost + p``, the
    backward one on ``cost - p``.  ``p`` is consistent both ways, so neither
    search's keys fall along a step, and a path through a cell costs its two
    keys' sum.  Every step that reaches a cell the other side has reached
    offers the sum of the two costs (each side keeps its lowest), and a side
    stops once the two cheapest buckets together start at or beyond the lower
    offer plus ``margin``: no path left can be cheaper.  The float32 bounds are
    consistent only to their rounding, so a key may fall below its bucket by
    as much (it is queued in the current bucket, and a cell improved after it
    was expanded is reopened, as in `_search_plain`); ``margin``, twice the
    bounds' slack, covers both sides' share.

    A cell's ``p`` is worked out when a side first reaches it (the ends when
    the search starts), rounded to float32 and kept in ``pot`` (inf: the
    landmarks show it on neither's way), for the later steps that reach it
    more cheaply: the bounds read every landmark (15% of the time across the
    4096² campaign map).  A cell first reached at a cost that, with its whole
    bound to the other end, comes to ``best * (1 + 1e-12) + margin`` or more
    (``best``: the lowest offer this side knows of) is not queued: no path
    through it can be cheaper.  A cell on a cheapest path, reached at its own
    cheapest cost, is never left out so, which is why a side whose queue runs
    empty may stop both.

    The blocks' bounds are used only if they raise the bound between the two
    ends by ``BLOCKS_GAIN`` or more (else ``exits[:, 0]`` is set to -inf).
    They cost 15 to 20% more time a cell touched (the cell's block and way out
    read, the rim's bound worked out for each side), and where they raise the
    bound between the ends little they sharpen the two sides' bounds unevenly
    and may not save cells at all: across the 4096² campaign map, of ten pairs
    of points, the six they raised by 2 to 9% ran 2% faster to 23% slower
    with them, the four raised by 12 to 136%, 10 to 34% faster.

    With ``threads`` the two sides run on two threads (`_both_threads`), each
    reading the other's costs as they stand and its bucket, offer and state
    through `shared_get`; else one thread runs the side whose cheapest bucket
    is lower until that bucket passes the other's (`_both_run`'s ``until``:
    a run of pops with the counters in locals, not one pop a call, which
    took 2.3 times as long).  Either way the answer is taken at the end from
    every cell both sides reached (`_both_answer`), so an offer one thread
    did not see in time is not lost.

    ``dist``, ``parent``, ``pot``, ``touched`` (each cell a side reaches,
    once), ``pool`` (queue entries) and ``heads`` (a power of two of bucket
    heads, as many as `stack_rows` gives) have a row per side (forward,
    backward); ``pot`` is read only where ``dist`` is finite, so it needs no
    reset.
    Returns ``(forward, backward, mu, meet)``: the cells each side touched
    (both negative if a side's pool or touched row ran out: reset them and
    call again with more), the answer's cost (inf: no route) and a cell where
    its two halves meet.
    """
    # The two ends' cells, rows and columns (a column each: source, goal).
    ends = np.empty((3, 2), dtype=np.int64)
    for side, e in enumerate((source, goal)):
        ends[0, side] = e
        ends[1, side] = e // cols
        ends[2, side] = e - ends[1, side] * cols
        dist[side, e] = 0.0
        parent[side, e] = -1
        touched[side, 0] = e
    if source == goal:
        return 1, 1, 0.0, source
    width = smallest(step_len) / split
    heads[:, :] = -1
    # Each side's counters in a row of their own, a cache line apart from the other's.
    state = np.zeros(2 * _PAD, dtype=np.int64)
    mu = np.full(2 * _PAD, np.inf)  # each side's best offer
    shortest = smallest(step_len)
    diagonal = min(largest(step_len), 2.0 * shortest)
    nsteps = step_dr.shape[0]
    per_width = (1.0 / width) * (1.0 + 1e-12)
    if exits[0, 0] != -np.inf or exits[1, 0] != -np.inf:
        # The blocks' bounds only where they raise the bound between the ends enough.
        between = _to_go(ends[1, 1] - ends[1, 0], ends[2, 1] - ends[2, 0], nsteps, shortest,
                         diagonal, cell)
        landmarks = max(_landmark_bound(lm, bounds[0], source, between),
                        _landmark_bound(lm, bounds[1], goal, between))
        blocks_bound = max(_bound_to(lm, bounds[0], exits[0], blocks, source, between),
                           _bound_to(lm, bounds[1], exits[1], blocks, goal, between))
        if blocks_bound < BLOCKS_GAIN * landmarks:
            exits[:, 0] = -np.inf
    for side in range(2):
        e = ends[0, side]
        ht, hs = _potential(lm, bounds[0], exits[0], bounds[1], exits[1], blocks, e,
                            ends[1, side], ends[2, side], ends, nsteps, shortest, diagonal,
                            cell)
        if ht == np.inf or hs == np.inf:  # the landmarks show the goal out of reach
            return 1, 1, np.inf, -1
        key = np.float64(np.float32(0.5 * (ht - hs) if side == 0 else 0.5 * (hs - ht)))
        pot[side, e] = key
        at = side * _PAD
        state[at + _CURRENT] = max(int(key * per_width), 0)
        state[at + _QUEUED] = 1
        state[at + _USED] = 1
        state[at + _SPARE] = -1
        state[at + _TOUCHED] = 1
        pool[side, 0] = e
        pool[side, 1] = -1
        heads[side, state[at + _CURRENT] & (heads.shape[1] - 1)] = 0
    if threads:
        _both_threads(
            state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
            onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
            bounds, exits, blocks, ends, pot)
    else:
        while state[_DONE] == 0 and state[_PAD + _DONE] == 0:
            side = 0 if state[_CURRENT] <= state[_PAD + _CURRENT] else 1
            _both_run(
                side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row,
                flat, flat_of, onward_start, onward, cell, width, margin, dist, parent,
                touched, pool, heads, lm, bounds, exits, blocks, ends, pot,
                state[(1 - side) * _PAD + _CURRENT])
    forward, backward = state[_TOUCHED], state[_PAD + _TOUCHED]
    if state[_DONE] == 2 or state[_PAD + _DONE] == 2:
        return -forward, -backward, np.inf, -1
    best, at = _both_answer(dist, touched, forward, backward)
    return forward, backward, best, at


# `search_both`'s counters: a side's row of ``_PAD`` in ``state``, and its fields.
_PAD = 16
_CURRENT, _QUEUED, _USED, _SPARE, _TOUCHED, _DONE, _POPS = range(7)
_CHECK = 32  # `search_both`'s pops between looks at the other side
# `search_both` takes the blocks' bounds where they raise the bound between the ends by
# this factor or more: below it, they cost more a cell touched than they save in cells.
BLOCKS_GAIN = 1.1
_NEVER = np.iinfo(np.int64).max  # `_both_run`'s ``until`` for a side on a thread of its own


@njit(cache=True, parallel=True)
def _both_threads(
    state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
    onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, ends, pot,
):
    """`search_both`'s two sides, each on a thread of its own, until both stop.  (The
    arrays one by one: handed to the threads in a tuple, each side read its own copy
    of the other's counters, and neither ever stopped.)"""
    for side in prange(2):
        _both_run(
            side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat,
            flat_of, onward_start, onward, cell, width, margin, dist, parent, touched, pool,
            heads, lm, bounds, exits, blocks, ends, pot, _NEVER)


@njit(cache=True)
def _both_answer(dist, touched, forward, backward):
    """The cheapest sum of the two sides' costs over the cells both reached (all on
    either side's touched row: the shorter is read), and its cell."""
    side, n = (0, forward) if forward <= backward else (1, backward)
    best = np.inf
    at = -1
    for j in range(n):
        c = touched[side, j]
        total = dist[0, c] + dist[1, c]
        if total < best:
            best = total
            at = c
    return best, at


@njit(cache=True, error_model="numpy")
def _both_run(
    side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
    onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, ends, pot, until,
):
    """Pops of `search_both`'s ``side`` (0 forward, 1 backward) and the steps out of the
    cells they pop, until the side should stop (marked done: 1, or 2 when its pool or
    touched row ran out) or its cheapest bucket passes ``until``.  Its counters are
    kept in locals and written back to ``state`` on the way out; what the other side
    writes is read with `shared_get`, and what it reads written with `shared_set`."""
    other = 1 - side
    me = side * _PAD
    you = other * _PAD
    ring = heads.shape[1] - 1
    nsteps = step_dr.shape[0]
    shortest = smallest(step_len)  # `_to_go`'s (as arguments, a 30th made routes 10-15% slower)
    diagonal = min(largest(step_len), 2.0 * shortest)
    to_goal, goal_exit, to_source, source_exit = bounds[0], exits[0], bounds[1], exits[1]
    per_width = (1.0 / width) * (1.0 + 1e-12)
    current = state[me + _CURRENT]
    queued = state[me + _QUEUED]
    used = state[me + _USED]
    spare = state[me + _SPARE]
    n_touched = state[me + _TOUCHED]
    pops = state[me + _POPS]
    best = mu[me]
    done = 0
    while done == 0:
        if queued == 0:  # nothing left on this side can beat the best offer
            done = 1
            break
        while heads[side, current & ring] == -1:
            current += 1
        if current > until:  # (one thread: the other side's turn)
            break
        # Every ``_CHECK`` pops, as reading what the other thread writes costs a cache
        # miss; a side that stops a few pops late finds the same answer.
        if pops % _CHECK == 0:
            shared_set(state, me + _CURRENT, current)
            shared_set(mu, me, best)
            # The other side stopped: either its queue ran empty (nothing left on its
            # side can beat the best offer: `search_both`), or the test below held for
            # it, and then holds here too (this side's bucket has only risen since, and the offers
            # fallen); or its pool ran out, and the search starts again.
            if shared_get(state, you + _DONE) != 0:
                done = 1
                break
            # The other side's bucket and offer as they stand: one a little behind
            # only makes this side stop later.  Its offer is this side's too, for the
            # test of whether a cell is worth queueing.
            best = min(best, shared_get(mu, you))
            if (current + shared_get(state, you + _CURRENT)) * width >= (
                    best * (1.0 + 1e-12) + margin):
                done = 1
                break
        pops += 1
        slot = current & ring
        top = heads[side, slot]
        a = pool[side, 2 * top]
        heads[side, slot] = pool[side, 2 * top + 1]
        pool[side, 2 * top + 1] = spare
        spare = top
        queued -= 1
        if parent[side, a] >= CLOSED:  # expanded since this entry was pushed
            continue
        if a != ends[0, side]:  # an end's -1 has every bit set already
            parent[side, a] |= CLOSED
        da = dist[side, a]
        ar = a // cols
        ac = a - ar * cols
        fa = flat_of[flat[a]]
        # Out of a flat cell, only the steps the one that reached it leaves worth taking.
        row = parent[side, a] & (CLOSED - 1) if fa > 0.0 and a != ends[0, side] else nsteps
        own = np.int64(table_row[a]) * nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            if fa > 0.0:  # the table's number, without reading it
                total = fa * step_len[k]
            else:
                total = table_cost[own + k]
                if total == np.inf:  # off the grid, or blocked
                    continue
            b = a + step_dr[k] * cols + step_dc[k]
            nd = da + total
            db = dist[side, b]
            if not nd < db:  # NaN fails too
                continue
            if parent[side, b] >= CLOSED and nd > db * REOPEN:  # rounding, not cheaper
                continue
            if db == np.inf:
                if n_touched == touched.shape[1]:
                    done = 2
                    break
                touched[side, n_touched] = b
                n_touched += 1
            dist[side, b] = nd
            parent[side, b] = k
            there = dist[other, b]
            if nd + there < best:
                best = nd + there
            if db == np.inf:
                ht, hs = _potential(lm, to_goal, goal_exit, to_source, source_exit, blocks, b,
                                    ar + step_dr[k], ac + step_dc[k], ends, nsteps, shortest,
                                    diagonal, cell)
                if ht == np.inf or hs == np.inf:  # the landmarks show b on neither's way
                    pot[side, b] = np.inf
                    continue
                # Rounded as kept, so every entry of b is keyed alike.
                p = np.float64(np.float32(0.5 * (ht - hs) if side == 0 else 0.5 * (hs - ht)))
                pot[side, b] = p
                if nd + (ht if side == 0 else hs) >= best * (1.0 + 1e-12) + margin:
                    continue  # no path through b beats the best offer
            else:
                p = pot[side, b]
                if p == np.inf:
                    continue
            slot = max(int((nd + p) * per_width), current) & ring
            e = spare
            if e >= 0:
                spare = pool[side, 2 * e + 1]
            elif 2 * used + 1 < pool.shape[1]:
                e = used
                used += 1
            else:
                done = 2
                break
            pool[side, 2 * e] = b
            pool[side, 2 * e + 1] = heads[side, slot]
            heads[side, slot] = e
            queued += 1
    state[me + _CURRENT] = current
    state[me + _QUEUED] = queued
    state[me + _USED] = used
    state[me + _SPARE] = spare
    state[me + _TOUCHED] = n_touched
    state[me + _POPS] = pops
    mu[me] = best
    if done != 0:
        shared_set(state, me + _DONE, done)


@njit(cache=True)
def block_labels(ground, cols, step_dr, step_dc, label):
    """Number the blocks of ``ground`` (a flat bool row, True where a cell belongs to
    some block): the sets of its cells one step apart, any step, on the grid.
    ``label`` (int32, the grid's size) gets each cell's block, -1 off ``ground``.
    Returns how many blocks there are."""
    ncell = label.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    label[:] = -1
    stack = np.empty(ncell, dtype=np.int32)
    blocks = 0
    for first in range(ncell):
        if not ground[first] or label[first] >= 0:
            continue
        label[first] = blocks
        stack[0] = first
        top = 1
        while top > 0:
            top -= 1
            a = np.int64(stack[top])
            for k in range(nsteps):
                b = _step_to(a, k, rows, cols, step_dr, step_dc)
                if b >= 0 and ground[b] and label[b] < 0:
                    label[b] = blocks
                    stack[top] = b
                    top += 1
        blocks += 1
    return blocks


@njit(cache=True, inline="always")
def _step_to(a, k, rows, cols, step_dr, step_dc):
    """The cell step ``k`` leads to from cell ``a``, or -1 off the grid."""
    ar = a // cols
    r = ar + step_dr[k]
    c = a - ar * cols + step_dc[k]
    return r * cols + c if 0 <= r < rows and 0 <= c < cols else -1


@njit(cache=True)
def block_rims(rim, label, cols, step_dr, step_dc, lm, lo, hi):
    """The least (``lo``) and greatest (``hi``) cost to each landmark (``lm``, as
    `search`'s) over each block's rim: the cells of ``rim`` (a flat bool row) one
    step from a cell of the block (``label``, `block_labels`').  ``lo`` and ``hi``
    come as ``(blocks, landmarks)`` rows of inf and -inf; unreachable costs are
    left out."""
    ncell = label.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    for a in range(ncell):
        if not rim[a]:
            continue
        for k in range(nsteps):
            b = _step_to(a, k, rows, cols, step_dr, step_dc)
            j = label[b] if b >= 0 else -1
            if j >= 0:
                for m in range(lm.shape[1]):
                    at = lm[a, m]
                    if at != np.inf:
                        lo[j, m] = min(lo[j, m], at)
                        hi[j, m] = max(hi[j, m], at)
