"""numba kernels: the exact search for a unit with rear ranks (`search_labels`).

What a step costs depends on the trail of ground still under the footprint, so
the search keeps at each cell every path (label) no other beats.

`search_labels` makes the search's scratch arrays and runs `_search`, which is
compiled without numba's reference counting (it allocates nothing) so that the
helpers it inlines, all taking arrays, cost nothing per call: inlined into a
kernel that counts references, each call counted its arrays, and LLVM pruned
few of those counts (the search was ten times slower).  The helpers follow in
the order a label meets them: seeded, popped, expanded step by step (priced,
tested against the labels at the step's cell), recorded and queued.

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import njit

from ...terrain._kernels import (
    RISING,
    TRAIL,
    WIDE,
    end_climb,
    entry,
    largest,
    smallest,
    step_fold,
    through,
)
from .bounds import _landmark_bound, _to_go
from .heap import _heap_pop, _sift_up
from .trail import advance, push

OPEN, EXPANDED, DROPPED = 0, 1, 2  # `search_labels`: a label's state
LIT = 4  # `search_labels`: a label's state bit: reached by a light step (flat ground)
TIE = 1.0 + 1e-12  # `search_labels`: a label beats another this much dearer, as rounding


@njit(cache=True, error_model="numpy")
def search_labels(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, goal, cell, budget, merging,
    dist, head, beat, touched, lm, lm_goal,
    l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, l_link, hkey, hidx,
):
    """The exact search for a unit with rear ranks: Dijkstra (``goal < 0``) or A*.

    What a step costs depends on the trail the path brought to its cell, so
    a cell may need more than one path: one that got there dearer may have
    left its heavy ground behind sooner and lead on more cheaply.  Each path
    kept is a label (``l_*``, a pool the caller provides: cost, cell, the
    label it came from, the step, and its trail, in rows as wide as the most
    levels a trail can hold on the grid).  A trail is a falling
    staircase: ground ``lv[j]`` stays under the ranks for ``rem[j]`` more, so
    its weight after the front moves t on is that of the first entry with
    ``rem > t``.  On any path on, the multiplier is the larger of that and
    the ground since, which is at least 1, so two trails' multipliers differ
    by at most the excess of one's weight over the other's, both taken at
    least 1.  A label is dropped when another at its cell costs no more, that
    excess included; what is left at a cell are the paths none of the others
    beats (up to rounding: ``TIE``).  A queued label beaten takes the new
    one's place (its number, and its key lowered by what the new one saves:
    the bound is the cell's).  The labels are expanded in order of cost
    (plus the A* bound, as in `search`, with ``lm`` and ``lm_goal`` its
    landmarks), so the first label of the goal to leave the queue is the
    cheapest route, and each cell's cheapest label its cheapest cost.  Steps
    are priced as `search` prices them; the source's label (0) carries the
    standing footprint.

    That bound holds while no trail merges (`push`): with ``merging`` (a grid
    with more levels of ground than ``TRAIL``) a label beats only one with the
    same trail, and nothing below is pruned by the bound.

    A cell's labels form a list from ``head`` (-1: none).  Every step leaves
    at least the cell's own ground under the whole depth, so no path arriving
    costing ``beat[cell]`` or more (the least over the cell's labels of cost
    plus the excess of trail over that ground) can beat one there: a step
    whose price without the ranks shows it would cost that is not priced.

    Returns ``(cells touched, goal label or -1, labels used)``; labels used
    is minus one if the pool (labels, or Dijkstra's bucket entries) ran out,
    and the caller resets the touched cells and calls again with a bigger
    pool.  ``dist`` gets each touched cell's cheapest label's cost.
    """
    s_lv = np.empty(TRAIL)
    s_rem = np.empty(TRAIL)
    s_org = np.empty(TRAIL, dtype=np.int64)  # `advance`'s origins: not kept here
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int64)
    step_off = step_dr * cols + step_dc
    heads = np.full(1 if goal >= 0 else nb, -1, dtype=np.int64)
    straight = smallest(step_len)
    diagonal = min(largest(step_len), 2.0 * straight)
    return _search(
        base, steep, slope_of, slopes, cols, plain,
        step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
        depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
        narrow, onward_start, onward, source, goal, cell, budget, merging,
        dist, head, beat, touched, lm, lm_goal,
        l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, l_link, hkey,
        hidx, s_lv, s_rem, s_org, no_f, no_i, step_off, heads, straight, diagonal,
    )


@njit(cache=True, error_model="numpy", _nrt=False)
def _search(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, goal, cell, budget, merging,
    dist, head, beat, touched, lm, lm_goal,
    l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, l_link, hkey, hidx,
    s_lv, s_rem, s_org, no_f, no_i, step_off, heads, straight, diagonal,
):
    """`search_labels`' search, given its scratch: ``s_*``, the trail of the label a
    step would make; ``heads``, Dijkstra's buckets; each step's offset, the shortest
    step's length and the diagonal's.  No reference counts (``_nrt=False``)."""
    rows = dist.shape[0] // cols
    nsteps = step_dr.shape[0]
    cap = l_cost.shape[0]
    tabled = table_cost.shape[0] > 0
    astar = goal >= 0
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    ring = nb - 1
    per_width = (1.0 / straight) * (1.0 + 1e-12)
    entries = _seed(source, astar, heads, head, dist, touched, l_cost, l_cell, l_prev, l_step,
                    l_n, l_next, l_state, l_pos, l_link, hkey, hidx)
    n_touched, used, current, found = 1, 1, 0, -1
    queued = np.int64(1)  # not a literal 1: `_heap_pop` compiles once
    while queued > 0:
        x, current = _pop_label(astar, queued, hkey, hidx, l_pos, heads, ring, current, l_link)
        queued -= 1
        if l_state[x] & 3 != OPEN:  # dropped, or expanded from another entry
            continue
        lit = l_state[x] & LIT
        l_state[x] = EXPANDED
        a = l_cell[x]
        if a == goal:
            found = x
            break
        da = l_cost[x]
        ar, ac, na, heavy, heavy_rem, fa, light, row = _expansion(
            x, lit, a, cols, nsteps, flat, flat_of, l_n, l_lv, l_rem, l_step)
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            b, total = _step_to(a, ar, ac, k, fa, tabled, table_cost, nsteps, step_off, step_dr,
                                step_dc, step_len, rows, cols)
            if b < 0:
                continue
            # What the step costs at least: the price without the ranks (the trail
            # only adds), or the heaviest ground behind for as long as it stays.
            floor = da + max(total, heavy * min(heavy_rem, step_len[k]))
            if floor * (1.0 - 1e-12) > budget:
                continue
            # Nor if a label at b beats (as `_drop_beaten`, ``TIE`` included) any trail
            # the step can leave: one holding at least the ground of b under the whole depth.
            if not merging and beat[b] <= floor * TIE:
                continue
            n, done = _uniform_trail(x, k, a, b, fa, light, heavy, depth, tabled, nsteps,
                                     table_uniform, plain, base, steep, slope_of, slopes, ux,
                                     uy, (step_dr, step_dc, piece_start, piece_w), s_lv, s_rem)
            if not done:
                if x != 0 and not merging and _beats_least(
                        x, b, na, step_len[k], floor, base[b], head, l_cost, l_n, l_lv, l_rem,
                        l_next):
                    continue
                n = _start_trail(x, k, ar, ac, na, rows, cols, fp_start, fp_dr, fp_dc, fp_rem,
                                 base, steep, slope_of, slopes, ux, uy, l_lv, l_rem, s_lv,
                                 s_rem, s_org)
                total, n = _walk_pieces(a, k, n, cols, plain, depth, piece_start, piece_dr,
                                        piece_dc, piece_w, step_dr, step_dc, step_len, base,
                                        steep, slope_of, slopes, ux, uy, enter, narrow, s_lv,
                                        s_rem, s_org, no_f, no_i)
            nd = da + total
            if not nd <= budget or nd == np.inf:  # blocked (inf fails the first unless
                continue  # the budget is inf too)
            beaten, z = _drop_beaten(b, nd, n, merging, base, beat, head, l_cost, l_n, l_lv,
                                     l_rem, l_state, l_next, s_lv, s_rem)
            if beaten:
                continue
            fresh = z < 0
            if fresh:
                key = _fresh_key(b, nd, astar, lm, lm_goal, cols, goal_r, goal_c, nsteps,
                                 straight, diagonal, cell)
                if key == np.inf:  # the bound shows b cannot reach the goal
                    continue
                if used == cap:
                    return n_touched, -1, -1
                z = used
                used += 1
            else:
                # In the place of the first queued label it beats: that one's key,
                # lowered by what the new one saves (the bound is the cell's).
                key = (hkey[l_pos[z]] if astar else hkey[z]) - (l_cost[z] - nd)
            _record_label(z, x, k, b, nd, n, light, head, l_cost, l_cell, l_prev, l_step, l_n,
                          l_lv, l_rem, l_state, l_next, s_lv, s_rem)
            n_touched = _note_reached(b, nd, n, n_touched, dist, touched, beat, base, s_lv,
                                      s_rem)
            queued, entries = _enqueue(z, key, fresh, astar, queued, entries, cap, current, ring,
                                       per_width, heads, hkey, hidx, l_pos, l_link)
            if entries < 0:
                return n_touched, -1, -1
    return n_touched, found, used


@njit(cache=True, inline="always")
def _seed(source, astar, heads, head, dist, touched, l_cost, l_cell, l_prev, l_step, l_n,
          l_next, l_state, l_pos, l_link, hkey, hidx):
    """Label 0 at the source, the only one touched and queued; returns the bucket
    entries used (Dijkstra's one; A*'s heap needs none)."""
    l_cost[0] = 0.0
    l_cell[0] = source
    l_prev[0] = -1
    l_step[0] = -1
    l_n[0] = 0  # its trail, the standing footprint's, is made for each step (`_start_trail`)
    l_next[0] = -1
    l_state[0] = OPEN
    head[source] = 0
    dist[source] = 0.0
    touched[0] = source
    hkey[0] = 0.0
    hidx[0] = 0
    l_pos[0] = 0
    if astar:
        return 0
    heads[0] = 0
    l_link[0, 0] = 0
    l_link[0, 1] = -1
    return 1


@njit(cache=True, inline="always")
def _pop_label(astar, queued, hkey, hidx, l_pos, heads, ring, current, l_link):
    """Take the next label off the queue (of ``queued``): A*'s heap top, or the first
    entry of Dijkstra's first bucket not empty from ``current`` on.  Returns it and
    the bucket reached."""
    if astar:
        return _heap_pop(queued, hkey, hidx, l_pos), current
    while heads[current & ring] < 0:
        current += 1
    e = heads[current & ring]
    heads[current & ring] = l_link[e, 1]
    return l_link[e, 0], current


@njit(cache=True, error_model="numpy", inline="always")
def _expansion(x, lit, a, cols, nsteps, flat, flat_of, l_n, l_lv, l_rem, l_step):
    """What the steps out of label ``x`` (at cell ``a``; ``lit``: reached by a light
    step) share: ``(row, column, trail size, its heaviest ground, for how much
    longer, a's flat multiplier or 0, whether its steps are light, the row of
    ``onward`` to take)``."""
    ar = a // cols
    ac = a - ar * cols
    na = l_n[x]
    heavy = l_lv[x, 0] if na > 0 else 0.0
    heavy_rem = l_rem[x, 0] if na > 0 else 0.0
    fa = flat_of[flat[a]] if flat.shape[0] > 0 else 0.0
    # Behind the front of a flat cell, nothing heavier than its ground: every
    # step costs its length at that multiplier and leaves that ground alone.
    light = x != 0 and fa > 0.0 and heavy <= fa
    # Reached by a light step where no trail near can hold heavier ground (the
    # footprint at the source holds ground behind the front for no longer than a
    # path's trail would), only the steps that one leaves worth taking: the paths
    # that beat the others cost the same with or without the ranks.
    row = l_step[x] if lit and flat[a] >= WIDE else nsteps
    return ar, ac, na, heavy, heavy_rem, fa, light, row


@njit(cache=True, inline="always")
def _step_to(a, ar, ac, k, fa, tabled, table_cost, nsteps, step_off, step_dr, step_dc,
             step_len, rows, cols):
    """The cell step ``k`` from cell ``a`` (row ``ar``, column ``ac``) reaches and its
    price without the ranks: exact out of a flat cell (multiplier ``fa``) or from the
    table, else the step's length (multipliers are >= 1).  The cell is -1 off the
    grid (or where the table says blocked)."""
    if fa > 0.0:
        return a + step_off[k], fa * step_len[k]
    if tabled:  # the table says inf for steps off the grid
        total = table_cost[a * nsteps + k]
        if total == np.inf:
            return -1, total
        return a + step_off[k], total
    br = ar + step_dr[k]
    bc = ac + step_dc[k]
    if br < 0 or br >= rows or bc < 0 or bc >= cols:
        return -1, 0.0
    return br * cols + bc, step_len[k]


@njit(cache=True, inline="always")
def _uniform_trail(x, k, a, b, fa, light, heavy, depth, tabled, nsteps, table_uniform, plain,
                   base, steep, slope_of, slopes, ux, uy, pieces, s_lv, s_rem):
    """The trail step ``k`` from label ``x`` at ``a`` to ``b`` leaves where it is one
    level under the whole depth and known without its pieces (a light step, or a
    uniform or rising one from the table, none of the trail heavier than a's ground):
    written to ``s_lv``, ``s_rem``.  ``pieces``: ``(step_dr, step_dc, piece_start,
    piece_w)``.  Returns ``(size, whether known)``; the table's price is then the
    step's."""
    if light:
        s_lv[0] = fa
        s_rem[0] = depth
        return 1, True
    if tabled and x != 0 and table_uniform[a * nsteps + k] > 0:
        g = base[a]
        if not plain and steep[a] != 1.0:
            c = end_climb(steep[a], slopes, slope_of[a], ux[k], uy[k], k, False, pieces)
            if c != 1.0 and c != steep[a]:  # across a fold: the trail holds both sides
                return 0, False
            g *= c
        if heavy <= g:
            if table_uniform[a * nsteps + k] == RISING:
                # Each piece leaves the ground before it behind at once, the
                # trail too (none heavier than a's): the table's price, and b's
                # ground alone.
                g = base[b]
                if not plain and steep[b] != 1.0:
                    c = end_climb(steep[b], slopes, slope_of[b], ux[k], uy[k], k, True, pieces)
                    if c != 1.0 and c != steep[b]:
                        return 0, False
                    g *= c
            s_lv[0] = g
            s_rem[0] = depth
            return 1, True
    return 0, False


@njit(cache=True, inline="always")
def _beats_least(x, b, na, move, floor, ground_b, head, l_cost, l_n, l_lv, l_rem, l_next):
    """Whether a label at ``b`` (the source's aside) beats, at cost ``floor``, the
    least trail a step ``move`` long from label ``x`` (``na`` levels) can leave:
    x's moved on by the step's length, and b's ground (``ground_b``) under the
    whole depth."""
    y = head[b]
    while y > 0:
        if _over_least(x, y, na, move, ground_b, l_cost, l_n, l_lv, l_rem) <= floor * TIE:
            return True
        y = l_next[y]
    return False


@njit(cache=True, inline="always")
def _over_least(x, y, na, move, ground_b, l_cost, l_n, l_lv, l_rem):
    """Label ``y``'s cost plus the excess of its trail over that least trail
    (`_beats_least`'s): at most what y's trail can add on any path on."""
    over = l_cost[y]
    t = 0.0
    i = 0
    j = 0
    while j < na and l_rem[x, j] <= move:
        j += 1
    while i < l_n[y]:
        end = l_rem[y, i]
        least = ground_b
        if j < na:
            least = max(least, l_lv[x, j])
            end = min(end, l_rem[x, j] - move)
        if l_lv[y, i] > least:
            over += (l_lv[y, i] - least) * (end - t)
        t = end
        if l_rem[y, i] <= t:
            i += 1
        if j < na and l_rem[x, j] - move <= t:
            j += 1
    return over


@njit(cache=True, inline="always")
def _start_trail(x, k, ar, ac, na, rows, cols, fp_start, fp_dr, fp_dc, fp_rem, base, steep,
                 slope_of, slopes, ux, uy, l_lv, l_rem, s_lv, s_rem, s_org):
    """The trail step ``k`` sets out with, into ``s_*``: label ``x``'s (``na``
    levels), or out of the source (label 0, at row ``ar``, column ``ac``) the
    ground of the footprint standing there, its cells read in the step's
    direction.  Returns its size."""
    if x != 0:
        for j in range(na):
            s_lv[j] = l_lv[x, j]
            s_rem[j] = l_rem[x, j]
        return na
    n = 0
    for j in range(fp_start[k], fp_start[k + 1]):
        rr = ar + fp_dr[j]
        cc = ac + fp_dc[j]
        if rr < 0 or rr >= rows or cc < 0 or cc >= cols:
            continue
        i = rr * cols + cc
        g = through(base, steep, slope_of, slopes, i, ux[k], uy[k])
        if g != np.inf:
            n = push(s_lv, s_rem, s_org, n, g, fp_rem[j], i)
    return n


@njit(cache=True, error_model="numpy", inline="always")
def _walk_pieces(a, k, n, cols, plain, depth, piece_start, piece_dr, piece_dc, piece_w,
                 step_dr, step_dc, step_len, base, steep, slope_of, slopes, ux, uy, enter,
                 narrow, s_lv, s_rem, s_org, no_f, no_i):
    """Price step ``k`` from cell ``a`` piece by piece, the trail in ``s_*`` (``n``
    levels) moving along (`advance`) and the flat entry costs (`entry`) added.
    Returns ``(cost, trail size)``; the cost is inf if a piece is blocked."""
    entering = enter.shape[0] > 0
    total = 0.0
    prev = a
    t = 0.0  # the share of the step before the piece
    for j in range(piece_start[k], piece_start[k + 1]):
        i = a + piece_dr[j] * cols + piece_dc[j]
        if piece_w[j] == 0.0:
            if base[i] == np.inf:
                return np.inf, n
            continue
        g = g2 = base[i]
        share = 1.0  # of the piece before a fold it crosses: the trail holds each side's own
        if not plain and steep[i] != 1.0:
            share, m1, m2 = step_fold(steep[i], slopes, slope_of[i], ux[k], uy[k], t,
                                      t + piece_w[j], step_dr[k], step_dc[k], piece_dr[j],
                                      piece_dc[j])
            g, g2 = g * m1, g * m2
        t += piece_w[j]
        if g == np.inf:
            return np.inf, n
        length = piece_w[j] * step_len[k]
        c, n, _ = advance(s_lv, s_rem, s_org, n, g, i, share * length, depth, no_f, no_f, no_i,
                          False)
        total += c
        if share < 1.0:
            c, n, _ = advance(s_lv, s_rem, s_org, n, g2, i, length - share * length, depth, no_f,
                              no_f, no_i, False)
            total += c
        if entering:
            total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
        prev = i
    return total, n


@njit(cache=True, inline="always")
def _drop_beaten(b, nd, n, merging, base, beat, head, l_cost, l_n, l_lv, l_rem, l_state,
                 l_next, s_lv, s_rem):
    """Whether a label at ``b`` beats a new one there (cost ``nd``, trail ``s_*`` of
    ``n`` levels); if none does, those it beats leave b's list.  Returns ``(beaten,
    z)``: z the first of those still queued, for the new one to take the place of
    (-1: none); the others queued are dropped."""
    # A trail of b's ground alone is the least any label at b holds: `beat`
    # says whether one beats it, and it beats every label costing as much.
    least = not merging and n == 1 and s_lv[0] <= base[b]
    if least and beat[b] <= nd * TIE:
        return True, -1
    z = -1
    before = -1
    y = head[b]
    while y >= 0:
        after = l_next[y]
        if y != 0:
            over_y, over_s = _excesses(y, n, least, merging, l_n, l_lv, l_rem, s_lv, s_rem)
            if l_cost[y] + over_y <= nd * TIE:
                return True, z
            if nd + over_s <= l_cost[y] * TIE:
                if before < 0:
                    head[b] = after
                else:
                    l_next[before] = after
                if l_state[y] & 3 == OPEN:
                    if z < 0:
                        z = y
                    else:
                        l_state[y] = DROPPED
                y = after
                continue
        before = y
        y = after
    return False, z


@njit(cache=True, inline="always")
def _excesses(y, n, least, merging, l_n, l_lv, l_rem, s_lv, s_rem):
    """At most how much more than the other each of label ``y``'s trail and the new
    one (``s_*``, ``n`` levels) can make any path on cost: ``(y's, the new one's)``.
    The multiplier is the larger of the trail's weight and the ground since, which
    is at least 1.  ``least`` (the new trail is b's ground alone): (inf, 0), as
    `beat` has told whether y beats it; with ``merging``: 0 for the same trail,
    else inf (no bound)."""
    ny = l_n[y]
    if merging:
        same = ny == n
        for i in range(n if same else 0):
            same = same and l_lv[y, i] == s_lv[i] and abs(l_rem[y, i] - s_rem[i]) <= 1e-9
        return (0.0, 0.0) if same else (np.inf, np.inf)
    if least:
        return np.inf, 0.0
    over_y = 0.0
    over_s = 0.0
    t = 0.0
    i = 0
    j = 0
    while i < ny or j < n:
        wy = 1.0
        end = np.inf
        if i < ny:
            wy = max(l_lv[y, i], 1.0)
            end = l_rem[y, i]
        ws = 1.0
        if j < n:
            ws = max(s_lv[j], 1.0)
            end = min(end, s_rem[j])
        if wy > ws:
            over_y += (wy - ws) * (end - t)
        else:
            over_s += (ws - wy) * (end - t)
        t = end
        if i < ny and l_rem[y, i] <= t:
            i += 1
        if j < n and s_rem[j] <= t:
            j += 1
    return over_y, over_s


@njit(cache=True, error_model="numpy", inline="always")
def _fresh_key(b, nd, astar, lm, lm_goal, cols, goal_r, goal_c, nsteps, straight, diagonal,
               cell):
    """A new label's key at cell ``b``: its cost ``nd``, plus for A* the bound on the
    cost to go (`search`'s); inf if that shows the goal out of reach."""
    if not astar:
        return nd
    return nd + _landmark_bound(lm, lm_goal, b, _to_go(
        b // cols - goal_r, b % cols - goal_c, nsteps, straight, diagonal, cell))


@njit(cache=True, inline="always")
def _record_label(z, x, k, b, nd, n, light, head, l_cost, l_cell, l_prev, l_step, l_n, l_lv,
                  l_rem, l_state, l_next, s_lv, s_rem):
    """Write label ``z``: cost ``nd`` at cell ``b``, reached from label ``x`` by step
    ``k`` (a light one if ``light``), trail ``s_*`` of ``n`` levels, open, first in
    b's list."""
    l_cost[z] = nd
    l_cell[z] = b
    l_prev[z] = x
    l_step[z] = k
    l_n[z] = n
    for j in range(n):
        l_lv[z, j] = s_lv[j]
        l_rem[z, j] = s_rem[j]
    l_state[z] = (OPEN | LIT) if light else OPEN
    l_next[z] = head[b]
    head[b] = z


@njit(cache=True, inline="always")
def _note_reached(b, nd, n, n_touched, dist, touched, beat, base, s_lv, s_rem):
    """Cell ``b`` holds a new label (cost ``nd``, trail ``s_*`` of ``n`` levels):
    b is touched if it was not, ``dist`` its cheapest cost and ``beat`` the least
    over its labels of cost plus the excess of trail over b's ground.  Returns
    the cells touched."""
    if dist[b] == np.inf:
        touched[n_touched] = b
        n_touched += 1
    if nd < dist[b]:
        dist[b] = nd
    over = nd
    below = 0.0
    for j in range(n):
        if s_lv[j] > base[b]:
            over += (s_lv[j] - base[b]) * (s_rem[j] - below)
        below = s_rem[j]
    if over < beat[b]:
        beat[b] = over
    return n_touched


@njit(cache=True, error_model="numpy", inline="always")
def _enqueue(z, key, fresh, astar, queued, entries, cap, current, ring, per_width, heads, hkey,
             hidx, l_pos, l_link):
    """Queue label ``z`` at ``key``; returns ``(queued, entries)``, entries -1 if the
    pool of ``cap`` bucket entries ran out.

    A* keeps a heap of labels (``hkey``, ``hidx``; ``l_pos``: a label's place): a
    ``fresh`` label is appended, one in a beaten one's place keeps that place, and
    either rises to its key.  Dijkstra keeps a ring of buckets (``heads``, ``ring``
    + 1 of them) as wide as the shortest step (as `search`), each a list of
    entries (``l_link``: label, next entry), ``hkey`` a label's key; a label that
    takes a beaten one's place is queued again, and its older entry is skipped
    once it is expanded.  No bucket before ``current`` (the one being emptied)."""
    if astar:
        if fresh:
            hkey[queued] = key
            hidx[queued] = z
            l_pos[z] = queued
            queued += 1
        hkey[l_pos[z]] = key
        _sift_up(np.int64(l_pos[z]), hkey, hidx, l_pos)
        return queued, entries
    if entries == cap:
        return queued, -1
    hkey[z] = key
    slot = max(int(key * per_width), current) & ring
    l_link[entries, 0] = z
    l_link[entries, 1] = heads[slot]
    heads[slot] = entries
    return queued + 1, entries + 1


@njit(cache=True)
def trace_labels(l_prev, l_cell, label):
    """The cells of label ``label``'s path, source first."""
    n = 0
    x = label
    while x >= 0:
        n += 1
        x = l_prev[x]
    out = np.empty(n, dtype=np.int64)
    x = label
    for j in range(n - 1, -1, -1):
        out[j] = l_cell[x]
        x = l_prev[x]
    return out


@njit(cache=True)
def label_pool(size, width):
    """`search_labels`' pool and heap for ``size`` labels whose trails hold up to
    ``width`` levels (`engine.search` keeps one)."""
    return (
        np.empty(size), np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int32),
        np.empty(size, dtype=np.int8), np.empty(size, dtype=np.int8),
        np.empty((size, width)), np.empty((size, width)), np.empty(size, dtype=np.int32),
        np.empty(size, dtype=np.int8), np.empty(size, dtype=np.int32),
        np.empty((size, 2), dtype=np.int32), np.empty(size), np.empty(size, dtype=np.int32),
    )
