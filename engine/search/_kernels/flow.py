"""numba kernels: cost to a goal over reversed steps (flow fields).

Private; `engine.search.flow` validates everything first.
"""

import numpy as np
from numba import njit

from ..._intrinsics import prefetch
from ...terrain._kernels import smallest
from .astar import push_row
from .dijkstra import _step_cost

AHEAD = 4  # pops between asking for what a queued cell's expansion reads and reading it
# A queue entry is a cell and the step that reached it: ``cell << STEP_BITS | step``,
# ``NO_STEP`` for none (a goal).  uint32 entries hold grids of up to PACKED_CELLS
# cells; bigger grids need uint64 ones (`engine.search.flow.flow_field` picks).
STEP_BITS = 6  # steps 0 to 47, the most directions there are
NO_STEP = (1 << STEP_BITS) - 1
PACKED_CELLS = 1 << (32 - STEP_BITS)


@njit(cache=True, nogil=True, error_model="numpy")
def field_band(
    r, rnd, base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    nb, flat, flat_of, enter, narrow, in_row, in_cost, onward_start, onward, goals, limit,
    reach, bounds, dist, step, stacks, post_cell, post_step, post_cost, posted, settled, listed,
):
    """Round ``rnd`` (0 or 1) of a flow field's search in band ``r``: cells
    ``bounds[r]`` to ``bounds[r + 1]`` (whole rows), ``stacks[r]`` its queue.

    The caller (`engine.search.flow`) runs every band of a round at once, one
    per thread, then the next round, then `field_rest`.  Round 0 runs
    `reverse_search` from the ``goals`` (unique, ``dist`` 0 there) in the band
    or a step (``reach`` rows) from it; a step into a cell of another band is
    posted (``post_*[rnd, r]``, ``posted[rnd, r]`` of them, each row as wide
    as the steps out of the cells near a band's borders) instead.  Round 1
    takes every offer posted to the band in round 0 that beats its cell's cost
    as a seed and searches on from there.  ``settled[r]`` adds the cells
    expanded (-1 once a bucket outgrew its row of a stack); ``listed`` is
    scratch, a band's cells expanded in round 1, to take the marks off those
    alone.
    """
    lo = bounds[r]
    hi = bounds[r + 1]
    if rnd == 0:  # the goals in the band or a step from it
        near = (goals >= lo - reach * cols) & (goals < hi + reach * cols)
        seeds = goals[near]
    else:
        seeds = _offers(post_cell[0], post_step[0], post_cost[0], posted[0], r, lo, hi,
                        dist, step)
    # The first round expands most of the band, the second a few cells: it lists
    # what it expands, to take the marks off those alone.
    done = listed[0:0] if rnd == 0 else listed[lo:hi]
    n, m = reverse_search(
        base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len,
        ux, uy, piece_start, piece_dr, piece_dc, piece_w, nb, flat, flat_of, enter,
        narrow, in_row, in_cost, onward_start, onward, seeds, limit, lo, hi, dist, step,
        stacks[r], post_cell[rnd, r], post_step[rnd, r], post_cost[rnd, r], done,
    )
    settled[r] = -1 if n < 0 or settled[r] < 0 else settled[r] + n
    posted[rnd, r] = m
    _unmark(dist, lo, hi, done, n)


@njit(cache=True, nogil=True, error_model="numpy")
def field_rest(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    nb, flat, flat_of, enter, narrow, in_row, in_cost, onward_start, onward, limit,
    dist, step, stacks, post_cell, post_step, post_cost, posted, listed,
):
    """The end of a flow field's search, after `field_band`'s two rounds: what the
    second round still posted, taken on by one search over the whole grid, which
    posts nothing (where the best routes cross a border again and again, each
    crossing would cost a round).  Returns the cells it expanded, or -1 if a
    bucket outgrew its row of ``stacks[0]``."""
    everywhere = np.int64(0)  # from cell 0; typed, as -1: a literal compiles callees again
    seeds = _offers(post_cell[1], post_step[1], post_cost[1], posted[1], np.int64(-1),
                    everywhere, dist.shape[0], dist, step)
    n, _ = reverse_search(
        base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len,
        ux, uy, piece_start, piece_dr, piece_dc, piece_w, nb, flat, flat_of, enter, narrow,
        in_row, in_cost, onward_start, onward, seeds, limit, everywhere, dist.shape[0], dist,
        step, stacks[0], post_cell[0, 0], post_step[0, 0], post_cost[0, 0], listed,
    )
    _unmark(dist, everywhere, dist.shape[0], listed, n)
    return n


@njit(cache=True)
def _offers(post_cell, post_step, post_cost, posted, band, lo, hi, dist, step):
    """The posted offers (``post_*[o, :posted[o]]`` of every band o but ``band``) into
    cells ``lo`` to ``hi - 1``: each that beats its cell's cost sets it, a cost
    equal to it may lower its step (`reverse_search`'s rule); returns the cells
    improved, sorted by cost."""
    got = 0
    for o in range(posted.shape[0]):
        if o != band:
            got += posted[o]
    seeds = np.empty(got, dtype=np.int64)
    got = 0
    for o in range(posted.shape[0]):
        if o == band:
            continue
        for j in range(posted[o]):
            a = post_cell[o, j]
            nd = post_cost[o, j]
            if not lo <= a < hi:
                continue
            if nd < dist[a]:
                dist[a] = nd
                step[a] = post_step[o, j]
                seeds[got] = a
                got += 1
            elif nd == dist[a] and post_step[o, j] < step[a]:
                step[a] = post_step[o, j]
    return _by_cost(seeds[:got], dist)


@njit(cache=True)
def _by_cost(cells, dist):
    """``cells`` sorted by ``dist``, ties kept in their order: a bottom-up merge sort
    (numba's own stable argsort takes four times as long to compile)."""
    a = cells.copy()
    b = np.empty_like(cells)
    n = a.shape[0]
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            _merge(a, b, lo, min(lo + width, n), min(lo + 2 * width, n), dist)
        a, b = b, a
        width *= 2
    return a


@njit(cache=True, inline="always")
def _merge(a, out, lo, mid, hi, dist):
    """Merge the sorted runs ``a[lo:mid]`` and ``a[mid:hi]`` into ``out[lo:hi]``, the
    first run's cells first among equal costs."""
    i, j = lo, mid
    for k in range(lo, hi):
        if j >= hi or (i < mid and dist[a[i]] <= dist[a[j]]):
            out[k] = a[i]
            i += 1
        else:
            out[k] = a[j]
            j += 1


@njit(cache=True)
def _unmark(dist, lo, hi, done, n):
    """Expanded cells' costs back from negative: those listed in ``done`` (``n`` of
    them), or with an empty ``done`` all of cells ``lo`` to ``hi - 1``."""
    if done.shape[0] == 0:
        for i in range(lo, hi):
            dist[i] = abs(dist[i])
    else:
        for j in range(max(n, 0)):
            dist[done[j]] = abs(dist[done[j]])


@njit(cache=True, error_model="numpy")
def reverse_search(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    nb, flat, flat_of, enter, narrow, in_row, in_cost, onward_start, onward, seeds, limit, lo,
    hi, dist, step, stack, post_cell, post_step, post_cost, done,
):
    """Costs to the goal over the cells ``lo`` to ``hi - 1``, from ``seeds`` on.

    A cell a's cost is the cheapest, over steps k out of a, of what step k
    costs leaving a (priced in its own direction, as `_kernels.search` prices
    it, without the rear-rank trail) plus the cost of the cell it lands on.
    The search runs from the seeds over the steps reversed: expanding a cell
    b, it offers every a with ``a + step k == b`` the price of step k from a.
    ``step[a]`` is that k (-1 at a goal and where unreached), the lowest of
    the steps that offer exactly a's cost (bit for bit: of two equal routes
    whose sums round apart, the cheaper rounding wins): every such offer comes
    before a is expanded (it costs more than its source, so it lands in a later
    bucket), and an offer from another band or round comes to a unmarked
    cell, so the choice does not depend on the order of the queue or the
    bands.  A seed's cost
    is its ``dist`` (``seeds`` sorted by it), except a seed outside the band,
    a goal, which costs 0 and offers only to cells in the band (its own band
    makes the rest of its offers).  An offer to a cell outside the band goes
    to ``post_cell``, ``post_step`` and ``post_cost`` instead (`field_band`
    takes it on).

    ``flat`` holds the cost grid's marks (`_kernels.flat_cells`; not empty).
    A step into or out of a marked cell costs its length times that cell's
    multiplier ``flat_of[flat[cell]]`` (the step table's number: it lies
    inside the cell's box), and a flat cell offers only the steps
    ``onward_*`` keep before its own (`terrain.lattice.onward_steps`).  Every step
    into any other cell b is priced in ``in_cost``'s row ``in_row[b]``
    (`_kernels.step_table`'s incoming rows), or where that is -1 (the table
    would be too big) from the step's pieces, slopes and flat entry costs
    ``enter`` and ``narrow`` as `step_table` prices them, or the flat number
    out of a flat cell (a uniform step's sum over its pieces may differ from
    the table's number in the last bit).
    The queue is `_kernels.search_plain`'s: ``nb`` buckets as wide as the
    shortest step (no step costs less than its length), each a row of
    ``stack``, the seeds joining as it reaches their costs; an improved cell
    is pushed again and its older entries are skipped once it is expanded
    (its cost negated in ``dist``, which the caller undoes: no cost beats a
    negative one, so a relaxation needs no other test).  An entry carries
    the step that reached its cell (``cell << STEP_BITS | step``), so a flat
    cell's onward steps are known when it is popped, without waiting for
    its ``step`` to load (a fifth of the 2048² field's time).  Every
    improvement is pushed, so a cell's newest entry, which holds its step, is
    the first popped: in an earlier bucket, or in the same one above the
    older (last in, first out).  An offer equal to a cell's cost lowers its
    step without an entry: the step in its entry reaches that cost too, and
    the pruning is sound for any step that does.  Cells whose cost exceeds
    ``limit`` stay unreached.  Returns the number of cells expanded
    (-1 if a bucket outgrew its row of ``stack``: the caller starts again
    with a wider one; unless ``done`` is empty, the expanded cells of the band
    are listed in it, as many as it holds) and of offers posted.
    """
    # What the search reads, grouped (numba inlines a call of at most 30 arguments),
    # everything it would allocate or reduce made here (`_reverse_search`).
    step_off = step_dr * cols + step_dc
    reach = _widest(step_dr, step_dc)
    ground = (base, steep, slope_of, slopes, plain, enter, narrow)
    steps = (step_dr, step_dc, step_off, step_len, ux, uy)
    pieces = (piece_start, piece_dr, piece_dc, piece_w)
    # The onward steps' offsets and lengths, in their order.
    flats = (flat, flat_of, onward_start, onward, step_off[onward], step_len[onward])
    posts = (post_cell, post_step, post_cost)
    return _reverse_search(ground, steps, pieces, flats, in_row, in_cost, cols, reach,
                           smallest(step_len), seeds, limit, lo, hi, dist, step, stack,
                           np.zeros(nb, dtype=np.int64), posts, done)


@njit(cache=True)
def _widest(step_dr, step_dc):
    """The most rows or columns any step crosses (a loop: ``np.abs(a).max()``
    compiles numba's ufunc and reduction)."""
    m = 0
    for k in range(step_dr.shape[0]):
        m = max(m, abs(step_dr[k]), abs(step_dc[k]))
    return m


# `_reverse_search` runs without numba's reference counting (``_nrt=False``), as
# `_kernels.astar._search_plain` does, and for the same reason: with it on, the arrays
# its inlined helpers take would be counted up and down on every pop.  So it is handed
# every array it reads and calls no numpy function: `reverse_search` makes them.
@njit(cache=True, error_model="numpy", _nrt=False)
def _reverse_search(
    ground, steps, pieces, flats, in_row, in_cost, cols, reach, width, seeds, limit, lo, hi,
    dist, step, stack, size, posts, done,
):
    """`reverse_search`'s loop, over its arrays in groups: ``ground`` (``base`` to
    ``slopes``, ``plain``, ``enter``, ``narrow``), ``steps`` (``step_dr``,
    ``step_dc``, their offsets, ``step_len``, ``ux``, ``uy``), ``pieces``,
    ``flats`` (``flat``, ``flat_of``, ``onward_start``, ``onward`` and the
    onward steps' offsets and lengths) and ``posts`` (``post_*``); ``reach``
    is the longest step's in rows or columns, ``width`` the shortest's length (a
    bucket's), ``size`` the buckets' (zeros)."""
    ncell = dist.shape[0]
    rows = ncell // cols
    step_len = steps[3]
    flat, flat_of = flats[0], flats[1]
    ring = size.shape[0] - 1
    per_width = (1.0 / width) * (1.0 + 1e-12)
    queued = 0
    sent = 0
    nseed = seeds.shape[0]
    next_seed = 0
    current = 0
    settled = 0
    while True:
        if queued == 0:
            if next_seed == nseed:
                break
            current = max(current, _seed_key(seeds[next_seed], lo, hi, dist, per_width))
        next_seed, queued, room = _join_seeds(seeds, next_seed, current, lo, hi, dist, step,
                                              per_width, stack, size, ring, queued)
        if not room:
            return -1, sent
        if size[current & ring] == 0:
            current += 1
            continue
        if current * width > limit:
            break
        b, b_step, slot, top = _pop_entry(stack, size, np.uint64(current & ring))
        queued -= 1
        _prefetch_ahead(stack, slot, top, ground[0], dist, flats, in_row, in_cost, cols,
                        reach, ncell, step_len.shape[0])
        own = lo <= np.int64(b) < hi  # signed: a comparison with uint64 goes through floats
        if own:
            db = dist[b]
            if db < 0.0:  # expanded since pushed (a goal's -0.0 is not: goals come once)
                continue
            dist[b] = -db
            if settled < done.shape[0]:
                done[settled] = b
        else:
            db = 0.0  # a goal in another band: its band posts its other steps
        settled += 1
        fb = flat_of[flat[b]]
        if fb > 0.0:
            sent, queued, room = _offer_flat(b, b_step, db, fb, own, flats, step_len.shape[0],
                                             lo, hi, limit, per_width, dist, step, stack, size,
                                             ring, posts, sent, queued)
        else:
            sent, queued, room = _offer_steps(b, db, own, ground, steps, pieces, flats, in_row,
                                              in_cost, rows, cols, lo, hi, limit, per_width,
                                              dist, step, stack, size, ring, posts, sent, queued)
        if not room:
            return -1, sent
    return settled, sent


@njit(inline="always", cache=True)
def _seed_key(s, lo, hi, dist, per_width):
    """The bucket seed ``s`` joins: its cost's, or 0 for a goal outside the band."""
    return int(dist[s] * per_width) if lo <= s < hi else 0


@njit(inline="always", cache=True)
def _join_seeds(seeds, next_seed, current, lo, hi, dist, step, per_width, stack, size, ring,
                queued):
    """Queue the seeds from ``next_seed`` on that the search has reached (their bucket
    is ``current`` or lower), each with its step (``NO_STEP`` for a goal).  Returns
    ``(next_seed, queued, room)``, room False if the bucket's row is full."""
    while next_seed < seeds.shape[0]:
        s = seeds[next_seed]
        if _seed_key(s, lo, hi, dist, per_width) > current:
            break
        k = step[s] if lo <= s < hi and step[s] >= 0 else NO_STEP
        if not push_row(stack, size, current & ring, (s << STEP_BITS) | k):
            return next_seed, queued, False
        queued += 1
        next_seed += 1
    return next_seed, queued, True


@njit(inline="always", cache=True)
def _pop_entry(stack, size, slot):
    """Take the newest entry off bucket ``slot`` (uint64); returns its cell (uint64),
    the step that reached it (``NO_STEP`` for none), and where it lay: ``slot`` and
    its row's ``top``, now the number of entries below it."""
    # Unsigned indices (here and in `_offer_flat`) spare numba's test for a negative
    # one: about 6% of the 2048² field.
    size[slot] -= 1
    top = np.uint64(size[slot])
    popped = np.uint64(stack[slot, top])
    return popped >> np.uint64(STEP_BITS), np.int64(popped & np.uint64(NO_STEP)), slot, top


@njit(inline="always", cache=True)
def _prefetch_ahead(stack, slot, top, base, dist, flats, in_row, in_cost, cols, reach, ncell,
                    nsteps):
    """Ask for what the entries further down bucket ``slot`` will read (no effect on any
    result).  A bucket pops last in, first out, and the cells it holds lie far apart
    in memory: the cell ``2 * AHEAD`` pops ahead, its cost and mark; then (with those
    in cache) the cell ``AHEAD`` pops ahead, the costs of the cells it offers to and
    their ground, or its row of ``in_cost``."""
    flat, flat_of, onward_start, _, on_off, _ = flats
    if top >= 2 * AHEAD:
        c = np.int64(stack[slot, top - 2 * AHEAD]) >> STEP_BITS
        prefetch(dist, c)
        prefetch(flat, c)
    if top < AHEAD:
        return
    ahead = np.int64(stack[slot, top - AHEAD])
    c = ahead >> STEP_BITS
    if flat_of[flat[c]] > 0.0:
        own_step = ahead & NO_STEP if ahead & NO_STEP != NO_STEP else nsteps
        for q in range(np.uint64(onward_start[own_step]), np.uint64(onward_start[own_step + 1])):
            prefetch(dist, c - on_off[q])
        return
    into = np.int64(in_row[c]) * nsteps
    if into >= 0:  # its row's lines (a row need not start on one)
        for k in range(0, nsteps, 8):
            prefetch(in_cost, into + k)
        prefetch(in_cost, into + nsteps - 1)
    for dr in range(-reach, reach + 1):  # the lines of its box, row by row
        i = c + dr * cols
        if reach <= i < ncell - reach:
            prefetch(dist, i - reach)
            prefetch(dist, i + reach)
            if into < 0:
                prefetch(base, i - reach)
                prefetch(base, i + reach)


@njit(inline="always", cache=True)
def _post(posts, sent, a, k, nd):
    """Post the offer of cost ``nd`` by step ``k`` to cell ``a``, outside the band (for
    `field_band` to take on); returns how many are posted."""
    post_cell, post_step, post_cost = posts
    post_cell[sent] = a
    post_step[sent] = k
    post_cost[sent] = nd
    return sent + 1


@njit(inline="always", cache=True)
def _offer_flat(b, b_step, db, fb, own, flats, nsteps, lo, hi, limit, per_width, dist, step,
                stack, size, ring, posts, sent, queued):
    """The offers of flat cell ``b`` (cost ``db``, multiplier ``fb``, reached by step
    ``b_step``).  Every step into a flat cell lies inside its box: on the grid,
    over one multiplier, at that times its length.  A loop of its own, over the
    steps b's own step leaves worth taking before it (`terrain.lattice.onward_steps`: a
    pair kept one way round is kept the other).  Returns ``(sent, queued, room)``,
    room False if a bucket's row is full."""
    _, _, onward_start, onward, on_off, on_len = flats
    row = b_step if b_step != NO_STEP else nsteps
    # Unsigned too: ``onward``, ``on_off`` and ``on_len`` are arguments here, their
    # lengths not known to be one, and a signed q paid a test for each (2.5% of the
    # 32-direction 2048² field).
    for q in range(np.uint64(onward_start[row]), np.uint64(onward_start[row + 1])):
        k = onward[q]
        a = b - on_off[q]
        nd = db + fb * on_len[q]
        if nd > limit:
            continue
        if a < lo or a >= hi:
            if own:
                sent = _post(posts, sent, a, k, nd)
            continue
        ua = np.uint64(a)
        da = dist[ua]
        if nd < da:
            dist[ua] = nd
            step[ua] = k
            if not push_row(stack, size, np.uint64(int(nd * per_width) & ring),
                            ua << np.uint64(STEP_BITS) | np.uint64(k)):
                return sent, queued, False
            queued += 1
        elif nd == da and k < step[ua]:  # of the cheapest steps, the lowest-numbered
            step[ua] = k
    return sent, queued, True


@njit(inline="always", cache=True)
def _offer_steps(b, db, own, ground, steps, pieces, flats, in_row, in_cost, rows, cols, lo, hi,
                 limit, per_width, dist, step, stack, size, ring, posts, sent, queued):
    """The offers of cell ``b`` (not flat; cost ``db``) to the cells a step away, each
    priced in b's row of ``in_cost`` or, without one (-1), by `_step_from` (an
    expanded cell is skipped first: it costs less).  Returns ``(sent, queued,
    room)``, room False if a bucket's row is full."""
    step_dr, step_dc, step_off = steps[0], steps[1], steps[2]
    flat, flat_of = flats[0], flats[1]
    nsteps = step_dr.shape[0]
    into = np.int64(in_row[b]) * nsteps  # negative: no row, walk the pieces
    br = np.int64(b) // cols
    bc = np.int64(b) - br * cols
    for k in range(nsteps):
        total = 0.0
        if into >= 0:
            total = in_cost[into + k]
            if total == np.inf:  # off the grid or blocked
                continue
            a = b - step_off[k]
        else:
            ar = br - step_dr[k]
            ac = bc - step_dc[k]
            if ar < 0 or ar >= rows or ac < 0 or ac >= cols:
                continue
            a = ar * cols + ac
        inside = lo <= a < hi
        if inside:
            if dist[a] < 0.0:  # expanded
                continue
        elif not own:  # its band posts this step
            continue
        if into < 0:
            total = _step_from(a, k, flat_of[flat[a]], ground, steps, pieces, cols)
        nd = db + total
        if not nd <= limit:  # inf and NaN too
            continue
        if not inside:
            sent = _post(posts, sent, a, k, nd)
            continue
        if not nd < dist[a]:
            if nd == dist[a] and k < step[a]:
                step[a] = k
            continue
        dist[a] = nd
        step[a] = k
        if not push_row(stack, size, int(nd * per_width) & ring, (a << STEP_BITS) | k):
            return sent, queued, False
        queued += 1
    return sent, queued, True


@njit(inline="always", cache=True)
def _step_from(a, k, fa, ground, steps, pieces, cols):
    """What step ``k`` out of cell ``a`` costs without the table: its length times a flat
    cell's multiplier ``fa``, else over its pieces, slopes and flat entry costs as
    `step_table` prices them (inf: blocked)."""
    step_dr, step_dc, step_len, ux, uy = steps[0], steps[1], steps[3], steps[4], steps[5]
    if fa > 0.0:
        return fa * step_len[k]
    base, steep, slope_of, slopes, plain, enter, narrow = ground
    piece_start, piece_dr, piece_dc, piece_w = pieces
    return _step_cost(base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len,
                      ux, uy, piece_start, piece_dr, piece_dc, piece_w, enter, narrow, a, k)
