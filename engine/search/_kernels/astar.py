"""numba kernels: A* over bucketed queues for a unit without rear ranks (`search_plain`).

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import literally, njit

from ...terrain._kernels import largest, smallest
from .bounds import _landmark_bound, _to_go
from .heap import ASTAR_SPLIT, CLOSED, REOPEN, pool_split, stack_rows


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
    it (`terrain.lattice.onward_steps`).  Without a table the grid has a border of
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

    Each case (A* or not, a table or not, ``lowest``, shared rows) is a kernel
    of its own (`PLAIN`), so that a call compiles only the one it runs.
    """
    astar = goal >= 0
    tabled = table_cost.shape[0] > 0
    case = (astar, tabled, tabled and bool(lowest) and not astar,
            astar and table_row.shape[0] > 0)
    return PLAIN[case](
        base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
        table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
        dist, parent, touched, stack, lm, lm_goal,
    )


@njit(cache=True, error_model="numpy")
def _prepare(args, astar, indexed):
    """What `_search_plain` reads, grouped (numba inlines a call of at most 30
    arguments), from `search_plain`'s arguments ``args`` (but ``lowest``):
    everything it would allocate or reduce is made here."""
    (base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
     table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
     dist, parent, touched, stack, lm, lm_goal) = args
    steps = (step_dr, step_dc, step_dr * cols + step_dc, step_len)
    pieces = (base, piece_start, piece_dr * cols + piece_dc,
              _piece_lengths(piece_start, piece_w, step_len))
    table = (table_cost, table_row, flat, flat_of, onward_start, onward)
    shortest = smallest(step_len)
    goal_r = goal // cols
    to_goal = (lm, lm_goal, goal_r, goal - goal_r * cols, step_dr.shape[0], shortest,
               min(largest(step_len), 2.0 * shortest), cell)
    width, span = _bucket_width(nb, shortest, astar, indexed)
    # The buckets' sizes, or with shared rows the heads of their lists (-1: empty).
    size = np.full(span, -1 if indexed else 0, dtype=np.int64)
    queue = (stack, stack.reshape(-1), size, span - 1)
    return (steps, pieces, table, to_goal, queue, cols, width, source, goal, budget, dist,
            parent, touched)


# `search_plain`'s cases, each a kernel of its arguments but ``lowest``.  `_prepare`'s
# flags are typed, not literal: it compiles once for all of them.
@njit(cache=True, error_model="numpy")
def astar_rows(*args):
    """`search_plain` to a goal over shared table rows."""
    return _search_plain(_prepare(args, np.bool_(True), np.bool_(True)),
                         True, True, False, True)


@njit(cache=True, error_model="numpy")
def astar_table(*args):
    """`search_plain` to a goal over a step table."""
    return _search_plain(_prepare(args, np.bool_(True), np.bool_(False)),
                         True, True, False, False)


@njit(cache=True, error_model="numpy")
def astar_pieces(*args):
    """`search_plain` to a goal over the steps' pieces."""
    return _search_plain(_prepare(args, np.bool_(True), np.bool_(False)),
                         True, False, False, False)


@njit(cache=True, error_model="numpy")
def reach_lowest(*args):
    """`search_plain` without a goal over a step table, keeping the lowest step."""
    return _search_plain(_prepare(args, np.bool_(False), np.bool_(False)),
                         False, True, True, False)


@njit(cache=True, error_model="numpy")
def reach_table(*args):
    """`search_plain` without a goal over a step table."""
    return _search_plain(_prepare(args, np.bool_(False), np.bool_(False)),
                         False, True, False, False)


@njit(cache=True, error_model="numpy")
def reach_pieces(*args):
    """`search_plain` without a goal over the steps' pieces."""
    return _search_plain(_prepare(args, np.bool_(False), np.bool_(False)),
                         False, False, False, False)


# (A*, a table, lowest, shared rows): `search_plain`'s kernel.
PLAIN = {
    (True, True, False, True): astar_rows,
    (True, True, False, False): astar_table,
    (True, False, False, False): astar_pieces,
    (False, True, True, False): reach_lowest,
    (False, True, False, False): reach_table,
    (False, False, False, False): reach_pieces,
}


# `_search_plain` runs without numba's reference counting (``_nrt=False``), so it is
# handed every array it reads and calls no numpy function (a reduction compiled so
# fails): `_prepare` makes them.  With the counting on, each array an inlined
# helper takes is a new reference, counted up and down on every call wherever numba
# cannot pair the two (the helper's last use of it in a branch): split so, a 1024² raw
# field took 5.6 times as long.
@njit(cache=True, error_model="numpy", _nrt=False)
def _search_plain(search, astar, tabled, lowest, indexed):
    """`search_plain` compiled for each value of ``astar`` (``goal >= 0``), ``tabled``,
    ``lowest`` and ``indexed`` (a ``table_row``).

    ``numba.literally`` makes the flags constants, so each compiled loop keeps
    only its own branches (about 15% on demo-map reaches, bench/README.md);
    the helpers are inlined, and take them as constants too.  Called from
    Python, the flags would cost a literal re-dispatch (milliseconds) every
    time: call a case of `search_plain`, whose `_prepare` makes ``search``:
    the groups ``steps`` (``step_dr``, ``step_dc``, their offsets,
    ``step_len``), ``pieces`` (``base``, ``piece_start``, the pieces' offsets
    and lengths), ``table`` (``table_cost`` to ``onward``), ``to_goal``
    (`_bound_at`'s) and ``queue`` (`_push`'s), its buckets ``width`` wide,
    then ``cols`` to ``touched`` as `search_plain` takes them.
    """
    literally(astar)
    literally(tabled)
    literally(lowest)
    literally(indexed)
    (steps, pieces, table, to_goal, queue, cols, width, source, goal, budget, dist, parent,
     touched) = search
    flat, flat_of, onward_start = table[2], table[3], table[4]
    nsteps = steps[0].shape[0]
    per_width = (1.0 / width) * (1.0 + 1e-12)
    has_flat = tabled and flat.shape[0] > 0
    dist[source] = 0.0
    parent[source] = -1
    touched[0] = source
    n_touched = 1
    current = 0
    if astar:
        h = _bound_at(to_goal, source, source // cols, source % cols)
        if h == np.inf:  # the landmarks show the goal out of reach
            return n_touched
        current = int(h * per_width)
    _queue_source(indexed, queue, current, source)
    used = 1
    spare = -1
    queued = 1
    while queued > 0:
        current = _next_bucket(indexed, queue, current)
        if current * width > budget:
            break
        if astar and current * width >= dist[goal] * (1.0 + 1e-12):
            break
        a, spare = _pop(indexed, queue, current, spare)
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
        if astar and not indexed and da + _bound_at(to_goal, a, ar, ac) >= dist[goal]:
            continue
        fa = flat_of[flat[a]] if has_flat else 0.0
        # Out of a flat cell, only the steps the one that reached it leaves worth taking.
        row = parent[a] & (CLOSED - 1) if fa > 0.0 and a != source else nsteps
        if fa > 0.0 and not astar:
            n_touched, queued, room = _expand_flat(
                a, da, fa, onward_start[row], onward_start[row + 1], steps, table, dist,
                parent, touched, n_touched, budget, per_width, lowest, queue, current, queued)
        else:
            # (Raw grids have no flat cells: their loop is the plain one over every step.)
            n_touched, queued, used, spare, room = _expand(
                a, ar, ac, da, fa, row, astar, tabled, lowest, indexed, steps, pieces, table,
                to_goal, budget, per_width, dist, parent, touched, n_touched, queue, current,
                queued, used, spare)
        if not room:
            return -n_touched
    return n_touched


@njit(inline="always", cache=True)
def _piece_lengths(piece_start, piece_w, step_len):
    """Each piece's length: its weight (its share of its step) times its step's length."""
    piece_len = np.empty(piece_w.shape[0])
    for k in range(step_len.shape[0]):
        for j in range(piece_start[k], piece_start[k + 1]):
            piece_len[j] = piece_w[j] * step_len[k]
    return piece_len


@njit(inline="always", cache=True)
def _bucket_width(nb, shortest, astar, indexed):
    """`_search_plain`'s buckets: how wide (in cost), and how many (`stack_rows`)."""
    # The pool's lists cost nothing per bucket, so its A* keeps them far narrower: wide
    # ones, taken last in first out, expanded the plateau's cells before their cost was
    # final and again after (2.2x the time across the 4096² campaign map).
    split = pool_split(nb) if indexed else ASTAR_SPLIT
    width = shortest / split if astar else shortest
    return width, stack_rows(nb, astar, split)


@njit(inline="always", cache=True)
def _bound_at(to_goal, b, r, c):
    """A*'s lower bound of the cost from cell ``b`` (row ``r``, column ``c``) to the goal:
    the distance left on open ground (`_to_go`), which no step lowers, raised to the
    landmarks' (inf: b cannot reach the goal).  ``to_goal``: the landmarks' costs
    (`search`'s ``lm``, ``lm_goal``), the goal's row and column, then `_to_go`'s
    step count, shortest and diagonal lengths and cell."""
    lm, lm_goal, goal_r, goal_c, nsteps, shortest, diagonal, cell = to_goal
    return _landmark_bound(lm, lm_goal, b, _to_go(r - goal_r, c - goal_c, nsteps, shortest,
                                                  diagonal, cell))


# The queue, ``(stack, pool, size, ring)``: bucket ``key`` is ``key & ring``.  With
# shared rows (``indexed``: a grid too big for the whole table, the highway's A*) one
# bucket may hold most of the queue (the landmark bound's plateau), so the buckets are
# lists through ``pool`` (``stack`` flattened) taken whole, entries (cell, next),
# ``size`` their heads (-1: empty): last in, first out as the rows are.  A popped entry
# is reused (``spare`` lists them), so the pool holds the queue, not every push.
# Otherwise a bucket is a row of ``stack``, ``size`` entries deep.


@njit(inline="always", cache=True)
def push_row(stack, size, slot, entry):
    """Push ``entry`` on bucket ``slot``: row ``slot`` of ``stack``, ``size[slot]``
    entries deep (two sequential writes).  False if the row is full.  (Also
    `reverse_search`'s queue; the unsigned column spares numba's test for a
    negative index.)"""
    if size[slot] == stack.shape[1]:
        return False
    stack[slot, np.uint64(size[slot])] = entry
    size[slot] += 1
    return True


@njit(inline="always", cache=True)
def _queue_source(indexed, queue, key, source):
    """Put ``source`` in the empty queue, in bucket ``key`` (the pool's entry 0)."""
    stack, pool, size, ring = queue
    if indexed:
        pool[0] = source
        pool[1] = -1
        size[key & ring] = 0
    else:
        stack[key & ring, 0] = source
        size[key & ring] = 1


@njit(inline="always", cache=True)
def _next_bucket(indexed, queue, current):
    """The first bucket from ``current`` on that holds an entry (one must)."""
    size, ring = queue[2], queue[3]
    while size[current & ring] == (-1 if indexed else 0):
        current += 1
    return current


@njit(inline="always", cache=True)
def _pop(indexed, queue, current, spare):
    """Take the newest entry off bucket ``current``; returns its cell and the pool's
    spare entries (the popped one now first)."""
    stack, pool, size, ring = queue
    slot = current & ring
    if indexed:
        top = size[slot]
        a = pool[2 * top]
        size[slot] = pool[2 * top + 1]
        pool[2 * top + 1] = spare
        return a, top
    size[slot] -= 1
    return stack[slot, size[slot]], spare


@njit(inline="always", cache=True)
def _push(indexed, queue, key, b, used, spare):
    """Queue cell ``b`` in bucket ``key`` (in the pool, a spare entry or else the next
    unused); returns ``(used, spare, room)``, room False if the pool or the
    bucket's row is full."""
    stack, pool, size, ring = queue
    slot = key & ring
    if not indexed:
        return used, spare, push_row(stack, size, slot, b)
    e = spare
    if e >= 0:
        spare = pool[2 * e + 1]
    elif 2 * used + 1 < pool.shape[0]:
        e = used
        used += 1
    else:
        return used, spare, False
    pool[2 * e] = b
    pool[2 * e + 1] = size[slot]
    size[slot] = e
    return used, spare, True


@njit(inline="always", cache=True)
def _improve(dist, parent, touched, n_touched, b, k, nd, budget, per_width, lowest, astar):
    """Offer cell ``b`` the cost ``nd`` by step ``k``: taken if cheaper and within
    ``budget`` (an expanded cell's only by more than rounding, ``REOPEN``), a
    cell first reached listed in ``touched``.  Returns ``(n_touched, queue)``:
    queue if b needs a new entry (not if Dijkstra has it in the same bucket)."""
    db = dist[b]
    if not nd < db or nd > budget:  # NaN and inf fail the first test
        if lowest and nd == db and k < parent[b] < CLOSED:
            parent[b] = k  # of offers equal to the bit, the lowest step
        return n_touched, False
    if parent[b] >= CLOSED and nd > db * REOPEN:  # rounding, not a cheaper path
        return n_touched, False
    if db == np.inf:
        touched[n_touched] = b
        n_touched += 1
    elif not astar and parent[b] < CLOSED and int(nd * per_width) == int(db * per_width):
        dist[b] = nd  # queued in this bucket already: no second entry
        parent[b] = k
        return n_touched, False
    dist[b] = nd
    parent[b] = k
    return n_touched, True


@njit(inline="always", cache=True)
def _expand_flat(
    a, da, fa, first, last, steps, table, dist, parent, touched, n_touched, budget,
    per_width, lowest, queue, current, queued,
):
    """Dijkstra's steps out of flat cell ``a`` (cost ``da``, multiplier ``fa``): the
    onward steps ``first`` to ``last - 1``, each its length times fa.  A loop of
    its own: its number without the table, and no branch per step on how to
    price it (13% on demo reaches).  Returns ``(n_touched, queued, room)``."""
    step_off, step_len = steps[2], steps[3]
    onward = table[5]
    stack, size, ring = queue[0], queue[2], queue[3]
    for q in range(first, last):
        k = onward[q]
        nd = da + fa * step_len[k]
        b = a + step_off[k]
        n_touched, fresh = _improve(dist, parent, touched, n_touched, b, k, nd, budget,
                                    per_width, lowest, False)
        if fresh:
            if not push_row(stack, size, max(int(nd * per_width), current) & ring, b):
                return n_touched, queued, False
            queued += 1
    return n_touched, queued, True


@njit(inline="always", cache=True)
def _step_cost(a, k, fa, own, tabled, table_cost, pieces, step_len):
    """What step ``k`` out of cell ``a`` costs: its length times a flat cell's ``fa``
    (the table's number, without reading it), else its entry in a's row ``own`` of
    the table (inf: off the grid, or blocked), else the sum over its pieces of
    their lengths times their cells' multipliers (a corner piece, length 0, over a
    blocked cell gives NaN, which blocks like inf: branch-free)."""
    if fa > 0.0:
        return fa * step_len[k]
    if tabled:
        return table_cost[own + k]
    base, piece_start, piece_off, piece_len = pieces
    total = 0.0
    for j in range(piece_start[k], piece_start[k + 1]):
        total += piece_len[j] * base[a + piece_off[j]]
    return total


@njit(inline="always", cache=True)
def _expand(
    a, ar, ac, da, fa, row, astar, tabled, lowest, indexed, steps, pieces, table, to_goal,
    budget, per_width, dist, parent, touched, n_touched, queue, current, queued, used, spare,
):
    """The steps out of cell ``a`` (row ``ar``, column ``ac``, cost ``da``; ``fa`` its
    flat multiplier or 0): with a table the onward steps of ``row``, else every
    step.  An improved cell is queued at its cost (A*: plus its bound, dropped
    if inf), in the current bucket if that is lower.  Returns ``(n_touched,
    queued, used, spare, room)``, room False if the pool or a bucket is full."""
    step_dr, step_dc, step_off, step_len = steps
    table_cost, table_row, _, _, onward_start, onward = table
    nsteps = step_dr.shape[0]
    own = (np.int64(table_row[a]) if indexed else a) * nsteps  # a's row of the table
    for q in range(onward_start[row] if tabled else 0,
                   onward_start[row + 1] if tabled else nsteps):
        k = onward[q] if tabled else q
        total = _step_cost(a, k, fa, own, tabled, table_cost, pieces, step_len)
        if tabled and total == np.inf:  # off the grid, or blocked
            continue
        b = a + step_off[k]
        nd = da + total
        n_touched, fresh = _improve(dist, parent, touched, n_touched, b, k, nd, budget,
                                    per_width, lowest, astar)
        if not fresh:
            continue
        key = nd
        if astar:
            key += _bound_at(to_goal, b, ar + step_dr[k], ac + step_dc[k])
            if key == np.inf:  # the landmarks show b cannot reach the goal
                continue
        used, spare, room = _push(indexed, queue, max(int(key * per_width), current), b,
                                  used, spare)
        if not room:
            return n_touched, queued, used, spare, False
        queued += 1
    return n_touched, queued, used, spare, True
