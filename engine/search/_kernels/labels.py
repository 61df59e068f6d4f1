"""numba kernels: the exact search for a unit with rear ranks (`search_labels`).

What a step costs depends on the trail of ground still under the footprint, so
the search keeps at each cell every path (label) no other beats.

Private; `engine.search` validates everything first.
"""

import numpy as np
from numba import njit

from ...terrain._kernels import RISING, TRAIL, WIDE, climb, entry, ground
from .bounds import _landmark_bound, _to_go
from .heap import _heap_pop, _sift_up
from .trail import advance, push

OPEN, EXPANDED, DROPPED = 0, 1, 2  # `search_labels`: a label's state
LIT = 4  # `search_labels`: a label's state bit: reached by a light step (flat ground)
TIE = 1.0 + 1e-12  # `search_labels`: a label beats another this much dearer, as rounding


@njit(cache=True, error_model="numpy")
def search_labels(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
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
    ncell = dist.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    cap = l_cost.shape[0]
    has_flat = flat.shape[0] > 0
    tabled = table_cost.shape[0] > 0
    entering = enter.shape[0] > 0
    astar = goal >= 0
    s_lv = np.empty(TRAIL)
    s_rem = np.empty(TRAIL)
    s_org = np.empty(TRAIL, dtype=np.int64)  # `advance`'s origins: not kept here
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int64)
    step_off = step_dr * cols + step_dc
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    straight = step_len.min()
    diagonal = min(step_len.max(), 2.0 * straight)
    l_cost[0] = 0.0
    l_cell[0] = source
    l_prev[0] = -1
    l_step[0] = -1
    l_n[0] = 0
    l_next[0] = -1
    l_state[0] = OPEN
    head[source] = 0
    dist[source] = 0.0
    touched[0] = source
    n_touched = 1
    used = 1
    # A* keeps a heap of labels (``hkey``, ``hidx``; ``l_pos``: a label's place).
    # Dijkstra keeps a ring of ``nb`` buckets as wide as the shortest step (as
    # `search`): each a list of entries (``l_link``: label, next entry),
    # ``hkey`` a label's key; a label that takes a beaten one's place is queued
    # again, and its older entry is skipped once it is expanded.
    heads = np.full(1 if astar else nb, -1, dtype=np.int64)
    ring = nb - 1
    per_width = (1.0 / straight) * (1.0 + 1e-12)
    current = 0
    hkey[0] = 0.0
    hidx[0] = 0
    l_pos[0] = 0
    entries = 0
    if not astar:
        heads[0] = 0
        l_link[0, 0] = 0
        l_link[0, 1] = -1
        entries = 1
    queued = 1
    found = -1
    while queued > 0:
        if astar:
            x = _heap_pop(queued, hkey, hidx, l_pos)
            queued -= 1
        else:
            while heads[current & ring] < 0:
                current += 1
            e = heads[current & ring]
            heads[current & ring] = l_link[e, 1]
            x = l_link[e, 0]
            queued -= 1
        if l_state[x] & 3 != OPEN:
            continue
        lit = l_state[x] & LIT
        l_state[x] = EXPANDED
        a = l_cell[x]
        if a == goal:
            found = x
            break
        da = l_cost[x]
        ar = a // cols
        ac = a - ar * cols
        na = l_n[x]
        heavy = l_lv[x, 0] if na > 0 else 0.0
        heavy_rem = l_rem[x, 0] if na > 0 else 0.0
        fa = flat_of[flat[a]] if has_flat else 0.0
        # Behind the front of a flat cell, nothing heavier than its ground: every
        # step costs its length at that multiplier and leaves that ground alone.
        light = x != 0 and fa > 0.0 and heavy <= fa
        # Reached by a light step where no trail near can hold heavier ground (the
        # footprint at the source holds ground behind the front for no longer than a
        # path's trail would), only the steps that one leaves worth taking: the paths
        # that beat the others cost the same with or without the ranks.
        row = l_step[x] if lit and flat[a] >= WIDE else nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            if fa > 0.0:
                total = fa * step_len[k]
                b = a + step_off[k]
            elif tabled:  # the table says inf for steps off the grid
                total = table_cost[a * nsteps + k]
                if total == np.inf:
                    continue
                b = a + step_off[k]
            else:
                br = ar + step_dr[k]
                bc = ac + step_dc[k]
                if br < 0 or br >= rows or bc < 0 or bc >= cols:
                    continue
                b = br * cols + bc
                total = step_len[k]  # multipliers are >= 1
            # What the step costs at least: the price without the ranks (the trail
            # only adds), or the heaviest ground behind for as long as it stays.
            floor = da + max(total, heavy * min(heavy_rem, step_len[k]))
            if floor * (1.0 - 1e-12) > budget:
                continue
            # Nor if a label at b beats (as below, ``TIE`` included) any trail the step
            # can leave: one holding at least the ground of b under the whole depth.
            if not merging and beat[b] <= floor * TIE:
                continue
            n = 0
            done = light
            if light:
                n = 1
                s_lv[0] = fa
                s_rem[0] = depth
            elif tabled and x != 0 and table_uniform[a * nsteps + k] > 0:
                g = base[a]
                if not plain and steep[a] != 1.0:
                    g *= climb(steep[a], gxf[a], gxb[a], gyf[a], gyb[a], ux[k], uy[k])
                if heavy <= g:
                    n = 1
                    s_lv[0] = g
                    s_rem[0] = depth
                    done = True
                    if table_uniform[a * nsteps + k] == RISING:
                        # Each piece leaves the ground before it behind at once, the
                        # trail too (none heavier than a's): the table's price, and b's
                        # ground alone.
                        g = base[b]
                        if not plain and steep[b] != 1.0:
                            g *= climb(steep[b], gxf[b], gxb[b], gyf[b], gyb[b], ux[k], uy[k])
                        s_lv[0] = g
            if not done and x != 0 and not merging:
                # Nor if a label at b beats the least trail the step can leave: a's
                # moved on by the step's length, and b's ground under the whole depth.
                move = step_len[k]
                y = head[b]
                while y > 0:
                    over = l_cost[y]
                    t = 0.0
                    i = 0
                    j = 0
                    while j < na and l_rem[x, j] <= move:
                        j += 1
                    while i < l_n[y]:
                        end = l_rem[y, i]
                        least = base[b]
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
                    if over <= floor * TIE:
                        break
                    y = l_next[y]
                if y > 0:
                    continue
            if not done:
                if x == 0:
                    for j in range(fp_start[k], fp_start[k + 1]):
                        rr = ar + fp_dr[j]
                        cc = ac + fp_dc[j]
                        if rr < 0 or rr >= rows or cc < 0 or cc >= cols:
                            continue
                        i = rr * cols + cc
                        g = ground(base, steep, gxf, gxb, gyf, gyb, i, ux[k], uy[k])
                        if g != np.inf:
                            n = push(s_lv, s_rem, s_org, n, g, fp_rem[j], i)
                else:
                    n = na
                    for j in range(n):
                        s_lv[j] = l_lv[x, j]
                        s_rem[j] = l_rem[x, j]
                total = 0.0
                prev = a
                for j in range(piece_start[k], piece_start[k + 1]):
                    i = a + piece_dr[j] * cols + piece_dc[j]
                    if piece_w[j] == 0.0:
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
                    # Always true here, but without the test numba counts references to
                    # the inlined advance's arrays on every piece (a fifth of the time).
                    if depth > 0.0:
                        c, n, _ = advance(
                            s_lv, s_rem, s_org, n, g, i, piece_w[j] * step_len[k], depth,
                            no_f, no_f, no_i, False,
                        )
                        total += c
                    if entering:
                        total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    prev = i
            nd = da + total
            if not nd <= budget or nd == np.inf:  # blocked (inf fails the first unless
                continue  # the budget is inf too)
            # A trail of b's ground alone is the least any label at b holds: `beat`
            # says whether one beats it, and it beats every label costing as much.
            least = not merging and n == 1 and s_lv[0] <= base[b]
            if least and beat[b] <= nd * TIE:
                continue
            # Dropped if a label at b beats it; it drops those it beats, and takes the
            # place of the first of them still queued.
            beaten = False
            z = -1
            before = -1
            y = head[b]
            while y >= 0:
                after = l_next[y]
                if y != 0:
                    # At most how much more than the other each trail can make any path
                    # on cost: the multiplier is the larger of the trail's weight and
                    # the ground since, which is at least 1.
                    over_y = np.inf if least else 0.0
                    over_s = 0.0
                    t = 0.0
                    i = 0
                    j = 0
                    ny = l_n[y]
                    if merging:  # the same trail, or no bound
                        same = ny == n
                        for i in range(n if same else 0):
                            same = same and l_lv[y, i] == s_lv[i] and abs(
                                l_rem[y, i] - s_rem[i]) <= 1e-9
                        over_y = over_s = 0.0 if same else np.inf
                    while not least and not merging and (i < ny or j < n):
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
                    if l_cost[y] + over_y <= nd * TIE:
                        beaten = True
                        break
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
            if beaten:
                continue
            if z >= 0:
                key = (hkey[l_pos[z]] if astar else hkey[z]) - (l_cost[z] - nd)
            else:
                key = nd
                if astar:
                    h = _landmark_bound(lm, lm_goal, b, _to_go(
                        b // cols - goal_r, b % cols - goal_c, nsteps, straight, diagonal, cell))
                    if h == np.inf:
                        continue
                    key += h
                if used == cap:
                    return n_touched, -1, -1
                z = used
                used += 1
                if astar:
                    hkey[queued] = key
                    hidx[queued] = z
                    l_pos[z] = queued
                    queued += 1
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
            if astar:
                hkey[l_pos[z]] = key
                _sift_up(l_pos[z], hkey, hidx, l_pos)
            else:
                if entries == cap:
                    return n_touched, -1, -1
                hkey[z] = key
                slot = max(int(key * per_width), current) & ring
                l_link[entries, 0] = z
                l_link[entries, 1] = heads[slot]
                heads[slot] = entries
                entries += 1
                queued += 1
    return n_touched, found, used


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
