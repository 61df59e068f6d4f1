"""numba kernels: any-angle search (Theta*) for a unit with rear ranks.

As `anyangle.theta_search`, but every move is priced with the rear-rank
trail (`trail.advance`): the ground still under the footprint behind the
front, carried from the path before it.  What a move costs then depends on
the path before it, so, as `labels.search_labels` does on the step lattice,
a cell keeps every path (label) no other beats: one that got there dearer
may have left its heavy ground behind sooner.  Each label keeps its trail
and the cell its front is in; a move from the start goes on from the
standing footprint, straight behind the unit's point facing along the move
(`_stand`), as `engine.price_path` stands it.  A move is priced piece by
piece as `walk_path` walks it (a box of alike ground in one piece, as
`segment_cost`), so a path found is priced the same by `price_path`, to
rounding.

Sentinels as `anyangle`'s.  Private; `engine.search` validates everything.
"""

import math

import numpy as np
from numba import njit

from ...grid import _EPS as _SEGMENT_EPS  # crossings this close are one
from ...grid import _GRAZE  # ranks in a cell for less stand on nothing there
from ...terrain._kernels import TRAIL, _length, fold, stretch, touched_lines
from .anyangle import (
    _SHAVE,
    _corner_touches,
    _least_move,
    _next_break,
    _on_rim,
    _one_box,
    _past_box,
    _piece_cell,
    _settle_limit,
    _source_sight,
    _walk_from,
    _window_index,
    by_cost,
)
from .heap import _heap_pop, _sift_up
from .labels import (
    EXPANDED,
    OPEN,
    TIE,
    _drop_beaten,
    _enqueue,
    _note_reached,
    _record_label,
)
from .sight import line_stretches
from .trail import advance, push

# `theta_labels`' searches between resets of its ``tried`` marks (see there).
_STAMPS = 1 << 31

# Most stretches of one ground a move is priced in by `line_stretches` (more: walked).
STRETCHES = 64


@njit(cache=True, error_model="numpy", _nrt=False)
def _stand(px, py, ux, uy, depth, cell, cols, height, base, steep, slope_of, slopes,
           lv, rem, org, piece_at, piece_from):
    """The footprint of a unit standing at ``(px, py)`` facing ``(ux, uy)`` (a unit
    vector), ``depth`` (table units) deep: the cells under its ranks straight
    behind it (the segment back from the point cut as `segment_cost` cuts it),
    farthest first, pushed onto an empty trail (`push`) with the distance the
    front must advance before each leaves the footprint, at its multiplier
    facing that way (`through`'s; impassable or off-table cells left out, and
    those it is in for less than `_GRAZE`).
    ``piece_*``: scratch for the pieces' cells and where each starts, room for
    ``2 * ceil(depth / cell) + 3``.  Returns the trail's size."""
    if depth <= 0.0:
        return 0
    cpx, cpy, dx, dy, tot, lox, loy, nx, ny, close, ix, sx, iy, sy = _walk_from(
        px, py, px - ux * depth, py - uy * depth, cell)
    last = 0.0
    k = 0
    while True:
        s, end, ix, sx, iy, sy = _next_break(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, ix, sx,
                                             iy, sy)
        if not end and s - last <= close:
            continue
        sm = 0.5 * (last + s) / tot
        r, c = math.floor(cpy + sm * dy), math.floor(cpx + sm * dx)
        on = 0 <= r < height and 0 <= c < cols and s - last >= _GRAZE
        piece_at[k] = r * cols + c if on else -1
        piece_from[k] = last
        k += 1
        last = s
        if end:
            break
    n = 0
    for t in range(k - 1, -1, -1):
        i = piece_at[t]
        if i >= 0:
            m = base[i]
            if steep[i] != 1.0:
                m *= fold(steep[i], slopes, slope_of[i], ux, uy, 0.0, 0.0, 0.0, 0.0)[2]
            if m != np.inf:
                n = push(lv, rem, org, n, m, (depth / cell - piece_from[t]) * cell, i)
    return n


@njit(cache=True, error_model="numpy", _nrt=False)
def trail_cost(px, py, qx, qy, at, lv, rem, org, n, depth, cell, cols, height, base, steep,
               slope_of, slopes, enter, narrow, clear, rec_len, rec_lv, rec_org):
    """The price of the straight move from ``(px, py)`` to ``(qx, qy)`` (table units),
    the front starting in cell ``at`` with the trail ``lv``, ``rem``, ``org`` (``n``
    entries), which it moves on in place: `segment_cost`'s walk, each piece moving
    the trail on (`advance`) as `walk_path` does.  Returns ``(cost, cell the front
    ends in, trail size)``; ``inf`` if it crosses an impassable cell or touches one
    at a corner it passes."""
    cpx, cpy, dx, dy, tot, lox, loy, nx, ny, close, ix, sx, iy, sy = _walk_from(px, py, qx, qy,
                                                                             cell)
    if tot == 0.0:
        return 0.0, at, n
    u, w = dx / tot, dy / tot
    entering = enter.shape[0] > 0
    cost = 0.0
    last = 0.0
    first = True
    while True:
        s, end, ix, sx, iy, sy = _next_break(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, ix, sx,
                                             iy, sy)
        if not end and s - last <= close:
            if not first and _corner_touches(base, cols, height, cpx, cpy, dx, dy, last, tot):
                return np.inf, at, n  # a corner: no impassable cell may touch it
            continue
        r, c = _piece_cell(cpx, cpy, dx, dy, last, s, tot, cols, height)
        i = r * cols + c
        m = base[i]
        if m == np.inf:
            return np.inf, at, n
        cut = (1.0, 1.0, 1.0, 1.0, 1.0)
        if steep[i] != 1.0:
            ox, oy = cpx - c - 0.5, cpy - r - 0.5
            cut = fold(steep[i], slopes, slope_of[i], u, w, ox + u * last, oy + w * last,
                       ox + u * s, oy + w * s)
        if entering:
            if enter[i] > 0.0 and enter[i] != enter[at]:
                cost += enter[i]
            if narrow[i] > 0.0 and narrow[at] == 0.0:
                cost += narrow[i]
        at = i
        length = (s - last) * cell
        for part in range(3):
            along, slope = stretch(cut, part, length)
            if along > 0.0 or part == 0:
                c_part, n, _ = advance(lv, rem, org, n, m * slope, i, along, depth, rec_len,
                                       rec_lv, rec_org, False)
                cost += c_part
        last = s
        first = False
        if end:
            return cost, at, n
        ix, sx, iy, sy, s = _past_box(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, close, ix, sx,
                                      iy, sy, r, c, clear[i], last)
        if s > last:
            c_part, n, _ = advance(lv, rem, org, n, m, i, (s - last) * cell, depth, rec_len,
                                   rec_lv, rec_org, False)
            cost += c_part
            last = s


@njit(cache=True, inline="always")
def _heavier(base, steep, i, k0):
    """Whether cell ``i``'s ground, climbing it or not, is heavier than ``k0`` (an
    impassable cell is not: no rank stands there)."""
    m = base[i] * max(steep[i], 1.0)
    return m != np.inf and m > k0


@njit(cache=True, error_model="numpy", _nrt=False)
def _clean_stand(sx, sy, depth, cell, cols, height, base, steep):
    """Whether no cell within ``depth`` of the point ``(sx, sy)`` (and a cell more) is
    heavier, climbing or not, than the ground of every cell the point touches
    (the cell holding it, and those beside it where it lies on their edge or
    corner, into which a move may go at once): then the standing footprint,
    facing any way, holds nothing heavier than where the front starts, and a
    move from the start costs what it would without the ranks."""
    sr = min(max(math.floor(sy / cell), 0), height - 1)
    sc = min(max(math.floor(sx / cell), 0), cols - 1)
    # Nearer a border than the walk's tolerance for its longest move, the move's
    # first piece may be dropped (`segment_cost`): the point touches both sides.
    tol = _SEGMENT_EPS * (cols + height)
    k0 = np.inf
    r0, r1 = touched_lines(sy / cell, sr, height, tol)
    c0, c1 = touched_lines(sx / cell, sc, cols, tol)
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            k0 = min(k0, base[r * cols + c])
    k = math.ceil(depth / cell) + 1
    for r in range(max(sr - k, 0), min(sr + k + 1, height)):
        for c in range(max(sc - k, 0), min(sc + k + 1, cols)):
            if _heavier(base, steep, r * cols + c, k0):
                return False
    return True


@njit(cache=True, inline="always")
def _turn(a):
    """The angle ``a`` (radians) brought into ``[0, 2 pi]``."""
    return a % (2.0 * math.pi)


@njit(cache=True, error_model="numpy")
def _facing_clean(sight, r0, c0, w, source, sx, sy, depth, cell, cols, height, base, steep):
    """Clear from `_source_sight`'s window (in place) each cell the straight move to
    which, from the point ``(sx, sy)`` in cell ``source``, stands the unit's ranks
    (straight behind it, ``depth`` deep, as `_stand`) on any cell heavier,
    climbing or not, than the start's: a move to each cell left then leaves the
    standing footprint behind at no cost.  Each heavier cell near is widened by
    the walk's tolerance, and every facing whose ranks point at any part of it
    is cleared (more than the ranks reach, never less); if the point lies in
    one, the whole window is cleared."""
    sr = source // cols
    sc = source - sr * cols
    k0 = base[source]
    px, py, far = sx / cell, sy / cell, depth / cell
    tol = _SEGMENT_EPS * (cols + height)
    k = math.ceil(far) + 1
    lo = np.empty((2 * k + 1) ** 2)
    span = np.empty((2 * k + 1) ** 2)
    n = 0
    for r in range(max(sr - k, 0), min(sr + k + 1, height)):
        for c in range(max(sc - k, 0), min(sc + k + 1, cols)):
            if not _heavier(base, steep, r * cols + c, k0):
                continue
            x0, x1, y0, y1 = c - tol, c + 1.0 + tol, r - tol, r + 1.0 + tol
            gx, gy = max(x0 - px, 0.0, px - x1), max(y0 - py, 0.0, py - y1)
            if gx == 0.0 and gy == 0.0:
                sight[:] = 0
                return
            if math.hypot(gx, gy) > far + tol:
                continue  # the ranks cannot reach it
            mid = math.atan2(0.5 * (y0 + y1) - py, 0.5 * (x0 + x1) - px)
            least, most = 0.0, 0.0
            for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
                d = _turn(math.atan2(y - py, x - px) - mid + math.pi) - math.pi
                least, most = min(least, d), max(most, d)
            lo[n], span[n] = _turn(mid + least - 1e-9), most - least + 2e-9
            n += 1
    if n == 0:
        return
    for i in range(sight.shape[0]):
        if sight[i] == 0:
            continue
        rr = i // w
        back = math.atan2(py - (rr + r0 + 0.5), px - (i - rr * w + c0 + 0.5))
        for j in range(n):
            if _turn(back - lo[j]) <= span[j]:
                sight[i] = 0
                break


@njit(cache=True, error_model="numpy", _nrt=False)
def _offer(x, a, ax, ay, vr, vc, l_lv, l_rem, l_n, l_at, depth, cell, cols, height,
           base, steep, slope_of, slopes, enter, narrow, clear, alike, lv, rem, org, rec_len,
           rec_lv, rec_org, clean, sight, r0, c0, w, piece_at, piece_from, grounds, kinds,
           ends):
    """The price of the straight move from label ``x`` (at cell ``a``, the point
    ``(ax, ay)``) to the centre of the cell at row ``vr``, column ``vc``, with the
    label's trail (the standing footprint at the start, facing the move); the trail
    after it is left in ``lv``, ``rem``.  Returns ``(cost, front's cell, trail size)``.

    Over alike ground (two cells of one box of it, `_one_box`, or as
    `line_stretches` finds it) the move is not walked: one `advance` over each
    stretch of one ground moves the trail on as the walk's pieces, all of that
    ground, would one by one (over one ground with nothing heavier in the
    trail, the ground's multiplier times the length, that ground alone left
    under the whole depth).  So too a move from the start to a cell in its
    plain sight (``sight``, `_source_sight`'s window, cleared by `_facing_clean`
    unless ``clean``, `_clean_stand`).  Where ``clean`` a move from the start
    leaves the standing footprint behind at once: its trail starts empty.
    ``grounds``: `line_stretches`' count of grounds for the move if known (its
    stretches in ``kinds`` and ``ends``), else -1.  No move from the start to
    its own point (``inf``): it would face no way, its ranks dropped."""
    vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
    ar = a // cols
    ac = a - ar * cols
    if x == 0:
        if vx == ax and vy == ay:
            return np.inf, a, 0  # no move: the start's own label stands there
        k = _window_index(vr, vc, r0, c0, w, sight.shape[0])
        if k >= 0 and sight[k] == 1:
            lv[0], rem[0] = base[a], depth
            return base[a] * _length(vx - ax, vy - ay), vr * cols + vc, 1
        n = 0
        if not clean:
            tot = _length(vx - ax, vy - ay)
            n = _stand(ax, ay, (vx - ax) / tot, (vy - ay) / tot, depth, cell, cols, height,
                       base, steep, slope_of, slopes, lv, rem, org, piece_at, piece_from)
        at = a
    else:
        n = l_n[x]
        for j in range(n):
            lv[j], rem[j] = l_lv[x, j], l_rem[x, j]
        if _one_box(ar, ac, vr, vc, clear, cols):
            # Every piece of the walk moves the trail on over this ground: one step does.
            b = vr * cols + vc
            cost, n, _ = advance(lv, rem, org, n, base[a], b, _length(vx - ax, vy - ay), depth,
                                 rec_len, rec_lv, rec_org, False)
            return cost, b, n
        at = l_at[x]
    if grounds < 0:
        grounds = line_stretches(ax / cell, ay / cell, vx / cell, vy / cell, alike, clear, cols,
                                 height, kinds, ends)[1]
    if grounds > 0:  # over alike ground: one step of the trail a stretch of one ground
        cost = 0.0
        since = 0.0
        for k in range(grounds):
            part, n, _ = advance(lv, rem, org, n, kinds[k], at, (ends[k] - since) * cell, depth,
                                 rec_len, rec_lv, rec_org, False)
            cost += part
            since = ends[k]
        return cost, vr * cols + vc, n
    return trail_cost(ax, ay, vx, vy, at, lv, rem, org, n, depth, cell, cols, height, base,
                      steep, slope_of, slopes, enter, narrow, clear, rec_len, rec_lv, rec_org)


@njit(cache=True, error_model="numpy", _nrt=False)
def _presettle_labels(sight, r0, c0, w, source, sx, sy, gx, gy, base, cols, cell, depth, lowest,
                      budget, limit, dist, head, beat, touched, l_cost, l_cell, l_prev, l_step, l_n,
                      l_lv, l_rem, l_next, l_state, l_pos, hkey, hidx, l_at, longer, long_row):
    """`anyangle._presettle` with labels: each cell of `_source_sight`'s window within
    ``limit`` (`anyangle._settle_limit`) gets one label, straight from the start
    at its multiplier times the distance, with that ground alone behind it,
    which beats any other path there; those beside a passable cell not yet
    touched and within ``budget`` at the ``lowest`` multiplier are queued, the
    others expanded; aimed at ``(gx, gy)`` (`theta_labels`), only those that may go
    on to it within ``budget``.  Returns ``(cells touched, labels used, queued)``
    after the start's label 0 (the caller checks the pool holds the window)."""
    height = base.shape[0] // cols
    k0 = base[source]
    aimed = not math.isnan(gx)
    nt, used, queued = 1, 1, np.int64(1)
    for i in range(sight.shape[0]):
        if sight[i] == 0:
            continue
        rr = i // w
        r, c = rr + r0, i - rr * w + c0
        v = r * cols + c
        vx, vy = (c + 0.5) * cell, (r + 0.5) * cell
        cost = k0 * _length(vx - sx, vy - sy)
        if v == source or cost > limit or (aimed and cost + _length(gx - vx, gy - vy) > budget):
            continue
        z = used
        used += 1
        l_cost[z], l_cell[z], l_prev[z], l_step[z], l_n[z] = cost, v, 0, 0, 1
        l_lv[z, 0], l_rem[z, 0], l_at[z], l_next[z], l_state[z] = k0, depth, v, -1, EXPANDED
        head[v] = z
        dist[v] = cost
        beat[v] = cost
        touched[nt] = v
        nt += 1
    for j in range(1, nt):
        v = touched[j]
        if _on_rim(v, sight, r0, c0, w, sx, sy, base, cols, height, cell, k0, lowest, budget,
                   limit, dist, longer, long_row):
            z = head[v]
            l_state[z] = OPEN
            hkey[queued], hidx[queued], l_pos[z] = dist[v], z, queued
            queued += 1
            _sift_up(queued - 1, hkey, hidx, l_pos)
    return nt, used, queued


@njit(cache=True, error_model="numpy", _nrt=False)
def _faced_labels(faces, source, sx, sy, depth, cell, cols, base, steep, slope_of, slopes, enter,
                  narrow, clear, merging, dist, head, beat, touched, nt, used, queued, l_cost,
                  l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, hkey, hidx,
                  l_at, org, lv_s, rem_s, rec_len, rec_lv, rec_org, piece_at, piece_from, heads,
                  link):
    """Label the start's cell with each first step to one of ``faces`` (points a hair
    from the start; NaN: none) that ends in that cell: the ranks stand straight
    behind the start facing the step (`_stand`) and the step is priced with them
    (`trail_cost`), so a path from there goes on with the trail that facing
    leaves, as `engine.price_path` prices a path whose first leg is that step.
    The standing footprint faces the first move, and a first step sideways
    (along a wood's edge, say) may keep the ranks off ground that going
    straight would stand them on.  A label is kept unless another at the cell
    beats it; its step is the face's number plus one (`_label_xy`).  Returns
    ``(cells touched, labels used, queued)``, labels used -1 if the pool ran
    out."""
    height = base.shape[0] // cols
    for k in range(faces.shape[0]):
        hx, hy = faces[k, 0], faces[k, 1]
        tot = _length(hx - sx, hy - sy)
        if not tot > 0.0:  # (NaN: no such face)
            continue
        n = _stand(sx, sy, (hx - sx) / tot, (hy - sy) / tot, depth, cell, cols, height, base,
                   steep, slope_of, slopes, lv_s, rem_s, org, piece_at, piece_from)
        c, at, n = trail_cost(sx, sy, hx, hy, source, lv_s, rem_s, org, n, depth, cell, cols,
                              height, base, steep, slope_of, slopes, enter, narrow, clear,
                              rec_len, rec_lv, rec_org)
        if c == np.inf or at != source:
            continue
        z, nt, used, queued = _keep(source, c, n, 0, k + 1, merging, base, dist, touched, nt,
                                    used, queued, beat, head, l_cost, l_cell, l_prev, l_step,
                                    l_n, l_lv, l_rem, l_next, l_state, l_pos, hkey, hidx, lv_s,
                                    rem_s, heads, link)
        if z == -2:
            return nt, -1, queued
        if z >= 0:
            l_at[z] = at
    return nt, used, queued


# (Inlined: numba inlines a function of no more than 30 arguments.)
@njit(cache=True, inline="always")
def _keep(b, nd, n, z0, face, merging, base, dist, touched, nt, used, queued, beat, head, l_cost,
          l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, hkey, hidx, lv_s,
          rem_s, heads, link):
    """Keep at cell b the label of a move from label ``z0`` (``face``: the step, as
    `_faced_labels` numbers it, else 0), costing ``nd``, its trail ``lv_s``, ``rem_s``
    (``n`` levels), unless a label there beats it (`_drop_beaten`): recorded in the
    place of one it beats still queued, or as a new one, noted (`_note_reached`)
    and queued.  Returns ``(label, cells touched, labels used, queued)``; the label
    is -1 where one beats it, -2 where the pool ran out (the caller writes where
    the label's front is, ``l_at``)."""
    beaten, z = _drop_beaten(b, nd, n, merging, base, beat, head, l_cost, l_n, l_lv, l_rem,
                             l_state, l_next, lv_s, rem_s)
    if beaten:
        return -1, nt, used, queued
    cap = l_cost.shape[0]
    fresh = z < 0
    if fresh:
        if used == cap:
            return -2, nt, used, queued
        z = used
        used += 1
    _record_label(z, z0, face, b, nd, n, False, head, l_cost, l_cell, l_prev, l_step, l_n, l_lv,
                  l_rem, l_state, l_next, lv_s, rem_s)
    nt = _note_reached(b, nd, n, nt, dist, touched, beat, base, lv_s, rem_s)
    queued, _ = _enqueue(z, nd, fresh, True, queued, 0, cap, 0, 0, 0.0, heads, hkey, hidx,
                         l_pos, link)
    return z, nt, used, queued


@njit(cache=True, inline="always")
def _label_xy(x, cell_of, face, faces, sx, sy, cols, cell):
    """Where label ``x`` (at cell ``cell_of``, its step ``face``) stands: the start for
    label 0, the point ``faces[face - 1]`` for one that first faces the unit another
    way (`_faced_labels`), else its cell's centre."""
    if x == 0:
        return sx, sy
    if face > 0:
        return faces[face - 1, 0], faces[face - 1, 1]
    r = cell_of // cols
    return (cell_of - r * cols + 0.5) * cell, (r + 0.5) * cell


@njit(cache=True, nogil=True, error_model="numpy")
def theta_labels(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols, cell,
                 depth, source, sx, sy, gx, gy, faces, budget, merging, longer, long_row, dist,
                 head, beat, touched, tried, stamp, l_cost, l_cell, l_prev, l_step, l_n, l_lv,
                 l_rem, l_next, l_state, l_pos, hkey, hidx, l_at):
    """Theta* with the rear-rank trail from the point ``(sx, sy)`` in cell ``source``,
    within ``budget``, keeping at each cell every path (label) no other beats, as
    `labels.search_labels` does on the step lattice (`_drop_beaten`: a label is
    beaten by one costing no more, the excess of its trail included).

    Expanding label x (at cell a, reached from label y) offers each neighbour b
    the straight move from y (Theta*; first, so that on a tie the parent farther
    back wins) and the step from x, each priced with its label's trail
    (`_offer`), and from a cell near a slope or impassable ground (``long_row``
    not -1) the cells the lattice's ``longer`` steps reach the step from x
    (`CostGrid.longer_steps`, as `anyangle._longer_steps`); each is kept as a
    label at b unless one there beats it.  Labels
    are expanded in order of cost.  The cells the start sees over its own ground
    are settled at once (`_presettle_labels`) as far as no cheaper path can reach
    them (`anyangle._settle_limit`, given ``least``, `CostGrid.least`), but for
    those a straight move to would stand its ranks on heavier ground
    (`_facing_clean`).  Where the ranks standing at the start may stand on heavier
    ground, the start's cell also holds a label for each of ``faces`` (points a hair
    from the start, NaN: none) that a first step to faces the unit that way
    (`_faced_labels`).  ``dist`` gets each touched cell's cheapest label's cost;
    ``dist``, ``head`` (-1) and ``beat`` (inf) must be at rest and are returned
    there by `reset_labels`.  The pool (`_kernels.label_pool`'s, with ``l_at``,
    each label's front cell) needs no reset.  ``tried[b]`` is ``stamp[0] * 2**32``
    plus label y once the straight move from y to cell b has been priced in this
    search (not priced again); ``stamp[0]`` goes up by one each search (``tried``
    is reset before the keys could overflow), so ``tried`` needs no reset.
    Aimed at the point ``(gx, gy)`` (NaN: at none), it keeps only the paths that
    may go on to it within ``budget``: a label whose cost plus the distance from
    its cell's centre to there is more is not kept (no move costs less than its
    length).  Returns ``(cells touched, labels used)``; labels used is -1 if the
    pool ran out (reset and call again with a bigger one)."""
    height = base.shape[0] // cols
    org = np.empty(TRAIL, dtype=np.int64)
    lv_s, rem_s = np.empty(TRAIL), np.empty(TRAIL)
    rec_len, rec_lv = np.empty(TRAIL + 1), np.empty(TRAIL + 1)
    rec_org = np.empty(TRAIL + 1, dtype=np.int64)
    pieces = 2 * math.ceil(depth / cell) + 3
    piece_at, piece_from = np.empty(pieces, dtype=np.int64), np.empty(pieces)
    kinds, ends = np.empty(STRETCHES), np.empty(STRETCHES)  # `line_stretches`'
    heads = np.empty(1, dtype=np.int64)  # `_enqueue`'s buckets: unused by a heap
    link = np.empty((1, 2), dtype=np.int32)
    clean = _clean_stand(sx, sy, depth, cell, cols, height, base, steep)
    sight, r0, c0, w = _source_sight(alike, cols, height, source, sx, sy, cell, budget)
    if not clean:
        _facing_clean(sight, r0, c0, w, source, sx, sy, depth, cell, cols, height, base,
                      steep)
    return _labels_loop(
        base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols, cell, depth,
        source, sx, sy, gx, gy, faces, budget, merging, longer, long_row, dist, head, beat,
        touched, tried, stamp, l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next,
        l_state, l_pos, hkey, hidx, l_at, org, lv_s, rem_s, rec_len, rec_lv, rec_org, piece_at,
        piece_from, kinds, ends, heads, link, clean, sight, r0, c0, w)


# Without numba's reference counting, as `anyangle._theta_loop`.
@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _labels_loop(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols, cell,
                 depth, source, sx, sy, gx, gy, faces, budget, merging, longer, long_row, dist,
                 head, beat, touched, tried, stamp, l_cost, l_cell, l_prev, l_step, l_n, l_lv,
                 l_rem, l_next, l_state, l_pos, hkey, hidx, l_at, org, lv_s, rem_s, rec_len,
                 rec_lv, rec_org, piece_at, piece_from, kinds, ends, heads, link, clean, sight,
                 r0, c0, w):
    """`theta_labels`' search, given its scratch arrays (a trail, a record, the pieces
    of a standing footprint, `_enqueue`'s buckets), whether the start is clean
    (`_clean_stand`) and, if so, `_source_sight`'s window; where it is not, the
    start's cell holds the labels of ``faces`` too (`_faced_labels`)."""
    ncell = base.shape[0]
    height = ncell // cols
    cap = l_cost.shape[0]
    aimed = not math.isnan(gx)
    stamp[0] += 1
    if stamp[0] >= _STAMPS:  # the keys would overflow: start the marks afresh
        for i in range(tried.shape[0]):
            tried[i] = -1
        stamp[0] = 1
    mark = stamp[0] << 32  # labels are fewer than 2**32
    l_cost[0], l_cell[0], l_prev[0], l_step[0], l_n[0] = 0.0, source, -1, 0, 0
    l_next[0], l_state[0], l_at[0] = -1, OPEN, source
    head[source] = 0
    dist[source] = 0.0
    touched[0] = source
    hkey[0], hidx[0], l_pos[0] = 0.0, 0, 0
    nt, used, queued = 1, 1, np.int64(1)
    if sight.shape[0] > 0:
        if sight.shape[0] >= cap:
            return nt, -1
        limit, lowest = _settle_limit(sight, r0, c0, w, source, sx, sy, base, cols, cell, least,
                                     budget, depth)
        nt, used, queued = _presettle_labels(
            sight, r0, c0, w, source, sx, sy, gx, gy, base, cols, cell, depth, lowest, budget,
            limit, dist, head, beat, touched, l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem,
            l_next, l_state, l_pos, hkey, hidx, l_at, longer, long_row)
    if not clean:
        nt, used, queued = _faced_labels(
            faces, source, sx, sy, depth, cell, cols, base, steep, slope_of, slopes, enter,
            narrow, clear, merging, dist, head, beat, touched, nt, used, queued, l_cost,
            l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, hkey, hidx, l_at,
            org, lv_s, rem_s, rec_len, rec_lv, rec_org, piece_at, piece_from, heads, link)
        if used < 0:
            return nt, -1
    while queued > 0:
        x = _heap_pop(queued, hkey, hidx, l_pos)
        queued -= 1
        if l_state[x] & 3 != OPEN:
            continue
        l_state[x] = EXPANDED
        if l_cost[x] > budget:
            break
        a = l_cell[x]
        ax, ay = _label_xy(x, a, l_step[x], faces, sx, sy, cols, cell)
        y = l_prev[x]
        p = l_cell[y] if y >= 0 else -1
        px, py = _label_xy(y, p, l_step[y], faces, sx, sy, cols, cell) if y >= 0 else (0.0, 0.0)
        ar = a // cols
        ac = a - ar * cols
        # Near a slope or impassable ground, the lattice's longer steps too.
        far = longer.shape[0] if longer.shape[0] > 0 and long_row[a] >= 0 else 0
        for j in range(9 + far):
            if j < 9:
                vr, vc = ar + j // 3 - 1, ac + j % 3 - 1
            else:
                vr, vc = ar + longer[j - 9, 0], ac + longer[j - 9, 1]
            if j == 4 or vr < 0 or vr >= height or vc < 0 or vc >= cols:
                continue
            b = vr * cols + vc
            if base[b] == np.inf:
                continue
            vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
            on = _length(gx - vx, gy - vy) if aimed else 0.0  # at least, to the aim
            for which in range(2):  # the straight move from y, then the step from x
                z0, c_at, c_x, c_y = y, p, px, py
                if which == 1:
                    z0, c_at, c_x, c_y = x, a, ax, ay
                elif y < 0 or j >= 9 or tried[b] == mark + y:
                    continue
                else:
                    tried[b] = mark + y
                # No move costs less than its price without the ranks (`_least_move`).
                floor = _least_move(l_cost[z0], _length(vx - c_x, vy - c_y), cell,
                                    z0 == 0 or l_step[z0] > 0,
                                    base[c_at], alike[c_at], clear[c_at], True, base[b],
                                    alike[b], clear[b])
                if (floor + on) * _SHAVE > budget or (not merging and beat[b] <= floor * TIE):
                    continue
                grounds = -1
                if which == 0 and not merging and beat[b] < np.inf:
                    # Its price without the ranks, to rounding, is no less a bound.
                    line, grounds = line_stretches(c_x / cell, c_y / cell, vx / cell,
                                                   vy / cell, alike, clear, cols, height,
                                                   kinds, ends)
                    if grounds > 0 and beat[b] <= (l_cost[z0] + line * cell) * _SHAVE * TIE:
                        continue
                c, at, n = _offer(z0, c_at, c_x, c_y, vr, vc, l_lv, l_rem, l_n, l_at,
                                  depth, cell, cols, height, base, steep, slope_of, slopes,
                                  enter, narrow, clear, alike, lv_s, rem_s, org, rec_len,
                                  rec_lv, rec_org, clean, sight, r0, c0, w, piece_at, piece_from,
                                  grounds, kinds, ends)
                nd = l_cost[z0] + c
                if not nd + on <= budget:
                    continue
                z, nt, used, queued = _keep(b, nd, n, z0, 0, merging, base, dist, touched, nt,
                                            used, queued, beat, head, l_cost, l_cell, l_prev,
                                            l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos,
                                            hkey, hidx, lv_s, rem_s, heads, link)
                if z == -2:
                    return nt, -1
                if z >= 0:
                    l_at[z] = at
    return nt, used


@njit(cache=True, nogil=True)
def reset_labels(touched, nt, dist, head, beat):
    """Return the first ``nt`` touched cells of `theta_labels`' state to rest."""
    for j in range(nt):
        v = touched[j]
        dist[v] = np.inf
        head[v] = -1
        beat[v] = np.inf


@njit(cache=True, nogil=True)
def collect_labels(touched, nt, dist, head, beat, budget, l_cost, l_next, cells, cost, best):
    """Write the cells within ``budget`` of the last `theta_labels` (cell, cheapest cost,
    its cheapest label) to the outputs, cheapest first (`by_cost`), and return the
    state to rest (`reset_labels`); returns how many were written."""
    k = 0
    for j in range(nt):
        v = touched[j]
        if dist[v] <= budget:
            z, b = head[v], -1
            while z >= 0:
                if b < 0 or l_cost[z] < l_cost[b]:
                    b = z
                z = l_next[z]
            cells[k], cost[k], best[k] = v, dist[v], b
            k += 1
    reset_labels(touched, nt, dist, head, beat)
    by_cost(cells, cost, best, k)
    return k
