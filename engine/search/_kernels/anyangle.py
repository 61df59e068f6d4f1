"""numba kernels: any-angle search (Theta*) for a unit without rear ranks.

Nodes are cell centres, but for the start's own cell, whose node is the unit's
exact point, and an optional goal node (index ``ncell``) at the exact goal.
Relaxing neighbour v of an expanded cell u tries two parents: u itself, and
u's own parent p, if the straight segment from p to v is passable (Theta*);
the cheaper wins, so a path over open ground is one straight segment from the
start, and it bends only where terrain or an obstacle makes a bend pay.  Near a
slope or impassable ground a cell also offers the cells the step lattice's
longer steps reach the straight move there (`_longer_steps`).  Every
candidate is priced by `segment_cost`, the pricing walk of `walk_path` for a
unit without rear ranks: the multiplier of each cell the segment crosses
(uphill-only slopes for its direction) times the length in it, plus the flat
costs of entering obstacles and passages, ``inf`` if it crosses or touches at
a corner an impassable cell.  The walk crosses each square of alike ground
(`CostGrid.clearance`) in one piece.  A move over one alike ground only
(within such a square, in the start's `plain_sight`, or so found by
`line_price`) is priced as its multiplier times its length without a walk,
and one over alike ground of several kinds as `line_price` prices it: each
ground's multiplier times the length of the line in it, the walk's price to
rounding.  A candidate whose least price (its length, and its stretches in
its ends' squares at their multipliers, `_least_move`) cannot beat the cost
v has, or loses to the step, is not priced at all; one over ground alike to
none (slopes, flat costs), or that `line_price` cannot tell, is walked.
`corners.refine` then moves a route's bends to the continuous optimum (a bend
on a terrain edge, or at an obstacle's corner).

Sentinels: unreached cost ``inf``; ``parent`` -1 for the start (and unreached);
``state`` 0 never queued, 1 queued, 2 settled.

Private; `engine.search` validates everything first.
"""

import math

import numpy as np
from numba import njit

from ...grid import _EPS as _SEGMENT_EPS  # crossings this close are one: a corner
from ...terrain._kernels import _length, fold, stretch
from .heap import _heap_pop, _sift_up
from .sight import line_price, plain_sight

# A candidate parent farther back is taken on a tie within rounding: fewer bends.
_TIE = 1e-12
# A lower bound on a price is shaved by this factor, so that rounding cannot lift it
# past the walked price.
_SHAVE = 1.0 - 1e-12


@njit(cache=True, error_model="numpy", inline="always")
def _next_crossing(start, delta, lo, count, i, tot):
    """The distance along a segment of its i-th crossing of grid lines along one axis
    (`walk_path`'s `_line_crossings`, in ascending order of distance)."""
    g = math.floor(lo) + 1 + i if delta > 0.0 else math.floor(lo) + count - i
    return (g - start) * (tot / delta)


@njit(cache=True, error_model="numpy", inline="always")
def _inner_crossing(start, delta, lo, count, i, tot):
    """The first of the crossings ``i ..`` along one axis (`_next_crossing`) that is
    not within `_SEGMENT_EPS` of the segment's ends, as walk_path keeps them:
    ``(i, distance)``, or ``(count, tot)`` if none is."""
    while i < count:
        s = _next_crossing(start, delta, lo, count, i, tot)
        if _SEGMENT_EPS < s < tot - _SEGMENT_EPS:
            return i, s
        i += 1
    return count, tot


@njit(cache=True, error_model="numpy")
def _before(start, delta, lo, count, i, tot, limit):
    """The first of the crossings ``i ..`` along one axis (`_next_crossing`) at or
    beyond the distance ``limit``, and the distance of the one before it (-1 if
    that is not past crossing ``i``)."""
    j = i
    if delta > 0.0:  # the crossing of grid line g lies at (g - start) * tot / delta
        j = math.ceil(start + limit * delta / tot - math.floor(lo) - 1.0)
    elif delta < 0.0:
        j = math.ceil(math.floor(lo) + count - start - limit * delta / tot)
    j = min(max(j, i), count)
    while j > i and _next_crossing(start, delta, lo, count, j - 1, tot) >= limit:
        j -= 1
    while j < count and _next_crossing(start, delta, lo, count, j, tot) < limit:
        j += 1
    return j, (_next_crossing(start, delta, lo, count, j - 1, tot) if j > i else -1.0)


@njit(cache=True, error_model="numpy")
def _leave_box(cpx, cpy, dx, dy, lox, loy, nx, ny, ix, iy, tot, close, x0, x1, y0, y1,
               last):
    """Skip the crossings a segment makes inside the box ``x0 .. x1, y0 .. y1`` (cell
    units) of alike ground it is in at the distance ``last``: those short of
    where it leaves the box (or its end), by more than ``close``, at whose
    corners only cells of the box meet.  Returns the next crossing indices
    along x and y and the distance of the last crossing skipped, as
    `segment_cost` would have cut there (of two crossings within ``close``,
    the first), or ``last`` if none is."""
    out = tot
    if dx != 0.0:
        out = min(out, ((x1 if dx > 0.0 else x0) - cpx) * tot / dx)
    if dy != 0.0:
        out = min(out, ((y1 if dy > 0.0 else y0) - cpy) * tot / dy)
    limit = out - 2.0 * close
    if limit <= last:
        return ix, iy, last
    ix, sx = _before(cpx, dx, lox, nx, ix, tot, limit)
    iy, sy = _before(cpy, dy, loy, ny, iy, tot, limit)
    s = max(sx, sy)
    if min(sx, sy) > last and s - min(sx, sy) <= close:
        s = min(sx, sy)  # two crossings that make a corner: cut at the first
    if s <= _SEGMENT_EPS:
        return ix, iy, last
    return ix, iy, max(s, last)


@njit(cache=True, error_model="numpy", inline="always")
def _crossings(lo, hi, delta):
    """How many grid lines a segment spanning ``lo .. hi`` along one axis may cross."""
    if delta == 0.0:
        return 0
    return max(math.ceil(hi) - math.floor(lo) - 1, 0)


@njit(cache=True, error_model="numpy", inline="always")
def _walk_from(px, py, qx, qy, cell):
    """A segment's walk set up (`segment_cost`'s): from ``(px, py)`` to ``(qx, qy)``
    (table units) in cells, ``(cpx, cpy, dx, dy, tot, lox, loy, nx, ny, close, ix, sx,
    iy, sy)``: its start, its extent, its length, its low corner, how many grid
    lines it may cross each way, the distance under which two crossings are one,
    and the first crossing along each axis (`_inner_crossing`)."""
    cpx, cpy = px / cell, py / cell
    dx, dy = qx / cell - cpx, qy / cell - cpy
    tot = math.hypot(dx, dy)
    lox, hix = min(cpx, cpx + dx), max(cpx, cpx + dx)
    loy, hiy = min(cpy, cpy + dy), max(cpy, cpy + dy)
    nx, ny = _crossings(lox, hix, dx), _crossings(loy, hiy, dy)
    ix, sx = _inner_crossing(cpx, dx, lox, nx, 0, tot)
    iy, sy = _inner_crossing(cpy, dy, loy, ny, 0, tot)
    return (cpx, cpy, dx, dy, tot, lox, loy, nx, ny, _SEGMENT_EPS * max(1.0, tot), ix, sx,
            iy, sy)


@njit(cache=True, error_model="numpy", inline="always")
def _next_break(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, ix, sx, iy, sy):
    """The next crossing of a segment's walk (x's first on a tie, as `walk_path`
    merges them), or its end: ``(distance, whether the end, ix, sx, iy, sy)``."""
    if ix >= nx and iy >= ny:
        return tot, True, ix, sx, iy, sy
    if sx <= sy:
        s = sx
        ix, sx = _inner_crossing(cpx, dx, lox, nx, ix + 1, tot)
    else:
        s = sy
        iy, sy = _inner_crossing(cpy, dy, loy, ny, iy + 1, tot)
    return s, False, ix, sx, iy, sy


@njit(cache=True, error_model="numpy", inline="always")
def _piece_cell(cpx, cpy, dx, dy, last, s, tot, cols, height):
    """The row and column of the cell holding the middle of a segment's piece from
    ``last`` to ``s`` (clamped to the grid)."""
    sm = 0.5 * (last + s) / tot
    r = min(max(math.floor(cpy + sm * dy), 0), height - 1)
    c = min(max(math.floor(cpx + sm * dx), 0), cols - 1)
    return r, c


@njit(cache=True, error_model="numpy", inline="always")
def _past_box(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, close, ix, sx, iy, sy, r, c, k, last):
    """From a piece in the cell at row r, column c, whose box of alike ground reaches
    ``k`` cells each way (`CostGrid.clearance`): where the walk goes on in one
    piece to (`_leave_box`, for ``k >= 2``), ``(ix, sx, iy, sy, distance)``; the
    distance is ``last`` where it does not."""
    s = last
    if k >= 2:
        jx, jy, s = _leave_box(cpx, cpy, dx, dy, lox, loy, nx, ny, ix, iy, tot, close,
                               c - k, c + k + 1, r - k, r + k + 1, last)
        if jx > ix:
            ix, sx = _inner_crossing(cpx, dx, lox, nx, jx, tot)
        if jy > iy:
            iy, sy = _inner_crossing(cpy, dy, loy, ny, jy, tot)
    return ix, sx, iy, sy, s


@njit(cache=True, error_model="numpy", inline="always")
def _corner_touches(base, cols, height, cpx, cpy, dx, dy, last, tot):
    """Whether an impassable cell touches the grid corner a segment passes at the
    distance ``last``."""
    cx, cy = round(cpx + last / tot * dx), round(cpy + last / tot * dy)
    for r in range(cy - 1, cy + 1):
        for c in range(cx - 1, cx + 1):
            if 0 <= r < height and 0 <= c < cols and base[r * cols + c] == np.inf:
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def segment_cost(px, py, qx, qy, at, cell, cols, height, base, steep, slope_of, slopes,
                 enter, narrow, clear):
    """The price of the straight move from ``(px, py)`` to ``(qx, qy)`` (table units),
    the front starting in cell ``at``: `walk_path`'s for a unit without rear ranks,
    piece for piece, without writing rows or allocating.

    The segment is cut where it crosses grid lines, crossings within
    `_SEGMENT_EPS` of one another being one (a corner) and those that close to
    its ends none, exactly as `walk_path` cuts it.  ``enter`` and ``narrow`` may
    be empty (no flat costs).  ``clear`` (`CostGrid.clearance`): from a piece in
    a cell with a square of alike ground around it at least 2 cells each way,
    the walk goes on to where the segment leaves that square in one piece
    (`_leave_box`); all zeros, it walks every piece.  Returns ``(cost, cell)``:
    ``inf`` if it crosses an impassable cell or touches one at a corner it
    passes, and the cell its last piece is in.
    """
    cpx, cpy, dx, dy, tot, lox, loy, nx, ny, close, ix, sx, iy, sy = _walk_from(px, py, qx, qy,
                                                                             cell)
    if tot == 0.0:
        return 0.0, at
    u, w = dx / tot, dy / tot
    entering = enter.shape[0] > 0
    cost = 0.0
    last = 0.0  # the last break
    first = True
    while True:
        s, end, ix, sx, iy, sy = _next_break(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, ix, sx,
                                             iy, sy)
        if not end and s - last <= close:
            if not first and _corner_touches(base, cols, height, cpx, cpy, dx, dy, last, tot):
                return np.inf, at  # a corner: no impassable cell may touch it
            continue
        # The piece from `last` to `s`, in the cell holding its middle.
        r, c = _piece_cell(cpx, cpy, dx, dy, last, s, tot, cols, height)
        i = r * cols + c
        m = base[i]
        cut = (1.0, 1.0, 1.0, 1.0, 1.0)  # across the folds it crosses, as `walk_path` cuts
        if steep[i] != 1.0:
            ox, oy = cpx - c - 0.5, cpy - r - 0.5
            cut = fold(steep[i], slopes, slope_of[i], u, w, ox + u * last, oy + w * last,
                       ox + u * s, oy + w * s)
        if m == np.inf:
            return np.inf, at
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
                cost += along * (m * slope)
        last = s
        first = False
        if end:
            return cost, at
        # Across the box of alike ground around cell i in one piece.
        ix, sx, iy, sy, s = _past_box(cpx, cpy, dx, dy, lox, loy, nx, ny, tot, close, ix, sx,
                                      iy, sy, r, c, clear[i], last)
        if s > last:
            cost += (s - last) * cell * m
            last = s


@njit(cache=True, error_model="numpy", _nrt=False)
def _edge_step(u, k, ux, uy, vx, vy, edge_row, edge_cost, cell, cols, height, base, steep,
               slope_of, slopes, enter, narrow, clear, width=8):
    """The price (`segment_cost`'s) of the step from ``(ux, uy)``, the centre of cell
    u, to ``(vx, vy)``, the centre of the cell its k-th step (of ``width``) reaches:
    read from ``edge_cost`` at u's ``edge_row`` (`CostGrid.edge_steps`, or
    `CostGrid.longer_steps`) if a search has walked it before, else walked and,
    where u has a row (and ``edge_cost`` any room), kept there."""
    i = edge_row[u] * width + k if edge_cost.shape[0] > 0 else -1
    if i >= 0 and edge_cost[i] > 0.0:
        return edge_cost[i]
    cost = segment_cost(ux, uy, vx, vy, u, cell, cols, height, base, steep, slope_of, slopes,
                        enter, narrow, clear)[0]
    if i >= 0:
        edge_cost[i] = cost
    return cost


@njit(cache=True, inline="always")
def _node_xy(v, source, sx, sy, ncell, tx, ty, cols, cell):
    """Where node v stands: the start, the goal or a cell's centre."""
    if v == source:
        return sx, sy
    if v == ncell:
        return tx, ty
    r = v // cols
    return (v - r * cols + 0.5) * cell, (r + 0.5) * cell


@njit(cache=True, inline="always")
def _one_box(ar, ac, br, bc, clear, cols):
    """Whether cells ``(ar, ac)`` and ``(br, bc)`` both lie in the box of alike ground
    (`CostGrid.clearance`) around one of them or the cell midway: the box is
    convex, so a straight move between them crosses only that ground."""
    mr, mc = (ar + br) // 2, (ac + bc) // 2
    ka, kb, km = clear[ar * cols + ac], clear[br * cols + bc], clear[mr * cols + mc]
    apart = max(abs(br - ar), abs(bc - ac))
    return apart <= ka or apart <= kb or max(abs(ar - mr), abs(ac - mc), abs(br - mr),
                                             abs(bc - mc)) <= km


@njit(cache=True, inline="always")
def _least_move(start, far, cell, exact, pm, pk, pc, centre, qm, qk, qc):
    """A lower bound on ``start`` plus the price of a straight move ``far`` long from
    a node in a cell of multiplier ``pm``, `CostGrid.alike` kind ``pk`` and
    clearance ``pc`` (its centre, or a point anywhere in it if ``exact``) to
    one in a cell of ``qm``, ``qk``, ``qc`` (its centre if ``centre``): where
    a cell's ground is alike, the move's first (last) stretch inside that
    cell's box of alike ground is priced at its multiplier, the rest at no
    less than 1 (`_SHAVE`d)."""
    near_q = min(far, (qc + 0.5) * cell) if centre and not math.isnan(qk) else 0.0
    near_p = min(far - near_q, (pc + (0.0 if exact else 0.5)) * cell) if not math.isnan(
        pk) else 0.0
    return (start + far + (qm - 1.0) * near_q + (pm - 1.0) * near_p) * _SHAVE


@njit(cache=True, error_model="numpy")
def _source_sight(alike, cols, height, source, sx, sy, cell, budget):
    """`plain_sight` from the point ``(sx, sy)`` in cell ``source`` as far as a
    straight move over its ground can go within ``budget``: the window of
    marks, its first row and column and its width (an empty window where
    the source's own ground is not alike)."""
    if math.isnan(alike[source]):
        return np.zeros(0, dtype=np.uint8), 0, 0, 1
    reach = math.ceil(min(budget / (alike[source] * cell), float(max(cols, height))) + 1.0)
    sr = source // cols
    sc = source - sr * cols
    r0, r1 = max(sr - reach, 0), min(sr + reach, height - 1)
    c0, c1 = max(sc - reach, 0), min(sc + reach, cols - 1)
    w = c1 - c0 + 1
    sight = np.zeros((r1 - r0 + 1) * w, dtype=np.uint8)
    plain_sight(alike, cols, source, sx / cell, sy / cell, reach, sight, r0, c0, w)
    return sight, r0, c0, w


@njit(cache=True, error_model="numpy", _nrt=False)
def _settle_limit(sight, r0, c0, w, source, sx, sy, base, cols, cell, least, budget, depth):
    """How dear a cell of `_source_sight`'s window may be to be settled at once
    (`_presettle`), and the lowest multiplier a path within ``budget`` can meet.

    Where the start's multiplier is the map's ``least``: ``budget`` and that.
    Else the window is searched, widened by the unit's ``depth`` (its rear ranks
    stand behind the start), for ground cheaper than the start's: where there is
    none, no path within ``budget`` leaves it (it would pay more on the way), so
    ``budget`` and the start's multiplier; else that multiplier times the
    distance from the start to the nearest such cell, less ``depth`` (a path
    that meets cheaper ground costs at least that much before it does, and one
    that does not, no less than the start's multiplier times its length), and
    ``least``.  Nothing where the window is empty (ground alike to none) or
    ``least`` is above the start's multiplier (no map's is: so a search is told
    to settle nothing at once)."""
    k0 = base[source]
    if k0 == least:
        return budget, least
    if sight.shape[0] == 0 or k0 < least:
        return 0.0, least
    height = base.shape[0] // cols
    e = math.ceil(depth / cell)
    near = np.inf
    for r in range(max(r0 - e, 0), min(r0 + sight.shape[0] // w + e, height)):
        for c in range(max(c0 - e, 0), min(c0 + w + e, cols)):
            if base[r * cols + c] < k0:  # the nearest point of the cell
                dx = max(c * cell - sx, sx - (c + 1) * cell, 0.0)
                dy = max(r * cell - sy, sy - (r + 1) * cell, 0.0)
                near = min(near, _length(dx, dy))
    if near == np.inf:
        return budget, k0
    return min(budget, k0 * max(near - depth, 0.0)), least


@njit(cache=True, inline="always")
def _may_reach(r, c, sx, sy, cell, lowest, budget):
    """Whether a path from the point ``(sx, sy)`` to the centre of the cell at row
    ``r``, column ``c`` may cost no more than ``budget``, no multiplier on it being
    below ``lowest`` (`_SHAVE`d)."""
    return lowest * _length((c + 0.5) * cell - sx, (r + 0.5) * cell - sy) * _SHAVE <= budget


@njit(cache=True, inline="always")
def _on_rim(v, sight, r0, c0, w, sx, sy, base, cols, height, cell, k0, lowest, budget, limit,
            dist, longer, long_row):
    """Whether cell v, settled at once (`_presettle`, `_presettle_labels`) at the
    start's multiplier ``k0`` times its distance, is to be queued for expansion:
    not inside (its eight neighbours in sight, each within ``limit``: no farther
    than 1.5 cells more from the start, so all settled too), and beside a
    passable cell not yet touched (``dist`` at rest, ``inf``) that a path within
    ``budget`` may reach (`_may_reach`).  From a cell near a slope or impassable
    ground (``long_row``, `CostGrid.longer_steps`) the search takes the lattice's
    ``longer`` steps too: the cells they reach count as beside it, and it is
    never inside."""
    r = v // cols
    c = v - r * cols
    rows = sight.shape[0] // w
    i = (r - r0) * w + c - c0
    far = longer.shape[0] if longer.shape[0] > 0 and long_row[v] >= 0 else 0
    if (far == 0 and 0 < r - r0 < rows - 1 and 0 < c - c0 < w - 1
            and dist[v] + 1.5 * k0 * cell <= limit
            and sight[i - w - 1] & sight[i - w] & sight[i - w + 1] & sight[i - 1]
            & sight[i + 1] & sight[i + w - 1] & sight[i + w] & sight[i + w + 1]):
        return False
    for k in range(9 + far):
        if k < 9:
            rr, cc = r + k // 3 - 1, c + k % 3 - 1
        else:
            rr, cc = r + longer[k - 9, 0], c + longer[k - 9, 1]
        if k != 4 and 0 <= rr < height and 0 <= cc < cols:
            u = rr * cols + cc
            if (dist[u] == np.inf and base[u] != np.inf
                    and _may_reach(rr, cc, sx, sy, cell, lowest, budget)):
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def _presettle(sight, r0, c0, w, source, sx, sy, base, cols, cell, lowest, budget, limit, dist,
               parent, state, hkey, hidx, pos, touched, nt, n, longer, long_row):
    """Settle every cell of `_source_sight`'s window within ``limit`` (`_settle_limit`)
    at the start's multiplier times its distance from the start, parent the
    start: the least any path there can cost.  Of those, the cells beside a
    passable cell not yet touched are queued to be expanded as usual (a settled
    cell offers nothing to another), unless no such cell is within ``budget``
    of the start at the ``lowest`` multiplier any path within it meets
    (`_on_rim`, given the ``longer`` steps taken near slopes, ``long_row``).
    Returns the touched count and the heap's size."""
    height = base.shape[0] // cols
    k0 = base[source]
    first = nt
    for i in range(sight.shape[0]):
        if sight[i] == 0:
            continue
        rr = i // w
        r, c = rr + r0, i - rr * w + c0
        v = r * cols + c
        cost = k0 * _length((c + 0.5) * cell - sx, (r + 0.5) * cell - sy)
        if v == source or cost > limit:
            continue
        dist[v] = cost
        parent[v] = source
        state[v] = 2
        touched[nt] = v
        nt += 1
    for j in range(first, nt):
        v = touched[j]
        if _on_rim(v, sight, r0, c0, w, sx, sy, base, cols, height, cell, k0, lowest, budget,
                   limit, dist, longer, long_row):
            state[v] = 1
            hkey[n] = dist[v]
            hidx[n] = v
            n += 1
            _sift_up(n - 1, hkey, hidx, pos)
    return nt, n


@njit(cache=True, inline="always")
def _window_index(r, c, r0, c0, w, size):
    """The index in `_source_sight`'s window of the cell at row r, column c, or -1
    if the window does not hold it."""
    i = (r - r0) * w + c - c0
    return i if 0 <= c - c0 < w and 0 <= i < size else -1


@njit(cache=True, nogil=True, error_model="numpy")
def theta_search(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols,
                 cell, source, sx, sy, goal_cell, tx, ty, budget, edge_row, edge_cost, longer,
                 long_row, long_cost, dist, parent, state, hkey, hidx, pos, touched, tried,
                 stamp):
    """Theta* from the point ``(sx, sy)`` in cell ``source``: Dijkstra within
    ``budget`` (``goal_cell < 0``), or A* to the point ``(tx, ty)`` in cell
    ``goal_cell``, node ``ncell`` (the arrays hold ``ncell + 1`` nodes).

    ``clear`` (`CostGrid.clearance`) is how far around each cell the ground is
    alike: a move within that box is priced without walking it.  Dijkstra
    prices a move from the start to a cell in its `plain_sight` over
    ``alike`` (`CostGrid.alike`) ground the same way, and settles those cells at
    once (`_presettle`) as far as no cheaper path can reach them: all of them
    where the start's multiplier is the map's ``least`` (`CostGrid.least`) or
    no cheaper ground is within ``budget``, else those nearer than any cheaper
    ground (`_settle_limit`).  Other moves over alike ground
    are priced by `line_price`, the rest walked; see the module's text.  A step
    from a cell's centre to a neighbour's that must be walked is walked once
    for the grid: its price is kept in ``edge_cost`` at the cell's
    ``edge_row`` (`CostGrid.edge_steps`, `_edge_step`).  From a cell near a
    slope or impassable ground (``long_row`` not -1) the search takes the
    lattice's ``longer`` steps too, their prices kept in ``long_cost``
    (`CostGrid.longer_steps`, `_longer_steps`).  The
    A* bound is the straight-line distance (no multiplier is below 1).  A node
    is settled once and never reopened.  ``dist``, ``parent`` and ``state``
    must be at rest (``inf``, -1, 0); `reset_nodes` returns the ``touched``
    ones there.
    ``tried[v]`` is ``stamp[0] * (ncell + 1) + p`` once the move from node p
    to node v has been priced in this search (it is not priced again);
    ``stamp[0]`` goes up by one each search, so ``tried`` needs no reset.
    Returns the number of nodes touched.  (The loop reads and writes the
    arrays itself, and runs in `_theta_loop`.)
    """
    height = base.shape[0] // cols
    sight, r0, c0, w = _source_sight(alike, cols, height, source, sx, sy, cell,
                                     budget if goal_cell < 0 else 0.0)
    return _theta_loop(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols,
                       cell, source, sx, sy, goal_cell, tx, ty, budget, edge_row, edge_cost,
                       longer, long_row, long_cost, dist, parent, state, hkey, hidx, pos,
                       touched, tried, stamp, sight, r0, c0, w)


# `_theta_loop` and the helpers it calls that take arrays run without numba's reference
# counting (``_nrt=False``; they allocate nothing, so need none): with it, a call may
# count every array it is handed up and down, an atomic operation each (in
# `ranked._labels_loop`, two thirds of a reach's time).
@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _theta_loop(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols,
                cell, source, sx, sy, goal_cell, tx, ty, budget, edge_row, edge_cost, longer,
                long_row, long_cost, dist, parent, state, hkey, hidx, pos, touched, tried, stamp,
                sight, r0, c0, w):
    """`theta_search`'s search, given `_source_sight`'s window (``sight``, ``r0``, ``c0``,
    ``w``)."""
    ncell = base.shape[0]
    height = ncell // cols
    astar = goal_cell >= 0
    stamp[0] += 1
    mark = stamp[0] * (ncell + 1)
    gr = goal_cell // cols if astar else -9
    gc = goal_cell - gr * cols if astar else -9
    dist[source] = 0.0
    state[source] = 1
    touched[0] = source
    hkey[0], hidx[0], pos[source] = 0.0, source, 0
    nt, n = 1, 1
    if not astar:
        limit, lowest = _settle_limit(sight, r0, c0, w, source, sx, sy, base, cols, cell, least,
                                     budget, 0.0)
        nt, n = _presettle(sight, r0, c0, w, source, sx, sy, base, cols, cell, lowest, budget,
                           limit, dist, parent, state, hkey, hidx, pos, touched, nt, n, longer,
                           long_row)
    while n > 0:
        key = hkey[0]
        u = _heap_pop(n, hkey, hidx, pos)
        n -= 1
        state[u] = 2
        if u == ncell or (not astar and key > budget):
            break
        ux, uy = _node_xy(u, source, sx, sy, ncell, tx, ty, cols, cell)
        p = parent[u]
        px, py = 0.0, 0.0
        if p >= 0:
            px, py = _node_xy(p, source, sx, sy, ncell, tx, ty, cols, cell)
        ur = u // cols
        uc = u - ur * cols
        pr = p // cols
        pc = p - pr * cols
        near_goal = astar and abs(ur - gr) <= 1 and abs(uc - gc) <= 1
        for j in range(10 if near_goal else 9):
            if j == 9:  # the goal node, priced as in the cell it stands in
                v, vx, vy, vr, vc = ncell, tx, ty, gr, gc
            else:
                vr, vc = ur + j // 3 - 1, uc + j % 3 - 1
                if j == 4 or vr < 0 or vr >= height or vc < 0 or vc >= cols:
                    continue
                v = vr * cols + vc
                if state[v] == 2 or base[v] == np.inf:
                    continue
                vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
            # The step from u, if it may be cheaper than v's cost so far (no move costs
            # less than its length), then (Theta*) straight from u's parent, unless its
            # least price (`_least_move`) shows it can beat neither.
            step = np.inf
            b = vr * cols + vc  # v's cell (the goal's, for the goal node)
            near = _length(vx - ux, vy - uy)
            if dist[v] > dist[u] + near:
                # Between centres of one ground (a diagonal by the corner of two cells of it
                # too), as `line_price` finds it; from the start's own point, it looks.
                plain = alike[b] == alike[u] and (
                    (ur == vr or uc == vc or (alike[ur * cols + vc] == alike[u]
                                              and alike[vr * cols + uc] == alike[u]))
                    if u != source and v < ncell else line_price(
                        ux / cell, uy / cell, vx / cell, vy / cell, alike, clear, cols,
                        height)[1] == 1)
                if plain or _one_box(ur, uc, vr, vc, clear, cols):
                    step = dist[u] + base[u] * near
                elif u != source and v < ncell:  # centre to centre
                    step = dist[u] + _edge_step(u, j if j < 4 else j - 1, ux, uy, vx, vy,
                                                edge_row, edge_cost, cell, cols, height, base,
                                                steep, slope_of, slopes, enter, narrow, clear)
                else:
                    step = dist[u] + segment_cost(ux, uy, vx, vy, u, cell, cols, height, base,
                                                  steep, slope_of, slopes, enter, narrow,
                                                  clear)[0]
            cost, via = np.inf, p
            far = _length(vx - px, vy - py)
            if p >= 0 and tried[v] != mark + p and dist[v] > dist[p] + far:
                tried[v] = mark + p
                least_far = _least_move(dist[p], far, cell, p == source, base[p], alike[p],
                                        clear[p], v < ncell, base[b], alike[b], clear[b])
                k = _window_index(vr, vc, r0, c0, w, sight.shape[0]) if p == source else -1
                if least_far > step * (1.0 + _TIE) or min(least_far, step) >= dist[v]:
                    pass  # it would lose to the step, or cost no less than v's cost
                elif (k >= 0 and v < ncell and sight[k] == 1) or _one_box(pr, pc, vr, vc, clear,
                                                                          cols):
                    cost = dist[p] + base[p] * far
                else:
                    line, grounds = line_price(px / cell, py / cell, vx / cell, vy / cell,
                                               alike, clear, cols, height)
                    if grounds > 1:
                        cost = dist[p] + line * cell
                    elif grounds == 1:
                        cost = dist[p] + base[p] * far
                    elif least_far <= step * (1.0 + _TIE) and min(least_far, step) < dist[v]:
                        cost = dist[p] + segment_cost(px, py, vx, vy, p, cell, cols, height,
                                                      base, steep, slope_of, slopes, enter,
                                                      narrow, clear)[0]
            if cost > step * (1.0 + _TIE):  # on a tie, the parent farther back
                cost, via = step, u
            if cost < dist[v]:
                nt, n = _queue(v, cost, via, vx, vy, astar, tx, ty, dist, parent, state, touched,
                               nt, pos, n, hkey, hidx)
        if longer.shape[0] > 0 and long_row[u] >= 0:  # near a slope or an obstacle: longer steps
            nt, n = _longer_steps(u, source, ux, uy, longer, long_row, long_cost, base, steep,
                                  slope_of, slopes, enter, narrow, clear, cols, cell, astar, tx,
                                  ty, dist, parent, state, touched, nt, pos, n, hkey, hidx)
    return nt


@njit(cache=True, inline="always")
def _queue(v, cost, via, vx, vy, astar, tx, ty, dist, parent, state, touched, nt, pos, n, hkey,
           hidx):
    """Give node v (at ``(vx, vy)``) the cost ``cost``, below its own, by way of node
    ``via``: onto the end of the heap if it is not on it, then sifted up (A*: keyed
    by the cost plus the distance to the goal).  Returns the touched count and the
    heap's size."""
    if state[v] == 0:  # first offer: onto the end of the heap
        state[v] = 1
        touched[nt] = v
        nt += 1
        pos[v] = n
        n += 1
    dist[v], parent[v] = cost, via
    i = pos[v]
    hkey[i] = cost + _length(tx - vx, ty - vy) * (1.0 - _TIE) if astar else cost
    hidx[i] = v
    _sift_up(i, hkey, hidx, pos)
    return nt, n


@njit(cache=True, error_model="numpy", _nrt=False)
def _longer_steps(u, source, ux, uy, longer, long_row, long_cost, base, steep, slope_of, slopes,
                  enter, narrow, clear, cols, cell, astar, tx, ty, dist, parent, state, touched,
                  nt, pos, n, hkey, hidx):
    """Offer the cells the lattice's ``longer`` steps reach from node u (at ``(ux, uy)``)
    the straight move from u, each priced as `segment_cost` walks it, a step from a
    cell's centre once for the grid (`_edge_step`: kept in ``long_cost`` at u's
    ``long_row``, `CostGrid.longer_steps`).

    Theta* offers a cell the step from a neighbour and the straight move from
    that neighbour's parent.  Up a slope a move's price hangs on its direction,
    and round impassable ground the parents, cell centres, stand off its
    corners, so the way a lattice step goes can be cheaper than both: the
    steps, taken there, keep a cell from costing more than the lattice search
    prices it.  Returns the touched count and the heap's size."""
    height = base.shape[0] // cols
    ur = u // cols
    uc = u - ur * cols
    for k in range(longer.shape[0]):
        vr, vc = ur + longer[k, 0], uc + longer[k, 1]
        if vr < 0 or vr >= height or vc < 0 or vc >= cols:
            continue
        v = vr * cols + vc
        if state[v] == 2 or base[v] == np.inf:
            continue
        vx, vy = (vc + 0.5) * cell, (vr + 0.5) * cell
        if not dist[v] > dist[u] + _length(vx - ux, vy - uy):  # no move costs less than its length
            continue
        if u == source:  # from the unit's own point, not a centre: walked, not kept
            step = segment_cost(ux, uy, vx, vy, u, cell, cols, height, base, steep, slope_of,
                                slopes, enter, narrow, clear)[0]
        else:
            step = _edge_step(u, k, ux, uy, vx, vy, long_row, long_cost, cell, cols, height,
                              base, steep, slope_of, slopes, enter, narrow, clear,
                              longer.shape[0])
        if dist[u] + step < dist[v]:
            nt, n = _queue(v, dist[u] + step, u, vx, vy, astar, tx, ty, dist, parent, state,
                           touched, nt, pos, n, hkey, hidx)
    return nt, n


@njit(cache=True, nogil=True)
def reset_nodes(touched, nt, dist, parent, state):
    """Return the first ``nt`` touched nodes of a workspace to rest."""
    for j in range(nt):
        v = touched[j]
        dist[v] = np.inf
        parent[v] = -1
        state[v] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def point_cost(qx, qy, xs, ys, ats, costs, base, steep, slope_of, slopes, enter, narrow,
               clear, cols, cell, out):
    """``out[j]``: ``costs[j]`` plus a straight move from ``(xs[j], ys[j])`` (the front
    in cell ``ats[j]``) to the point ``(qx, qy)``, or ``inf`` where ``costs[j]``
    alone is more than an earlier one's total (it cannot be the least): a
    reach's cost at a point is the least of them."""
    height = base.shape[0] // cols
    best = np.inf
    for j in range(xs.shape[0]):
        out[j] = np.inf
        if costs[j] > best:
            continue
        c, _ = segment_cost(xs[j], ys[j], qx, qy, ats[j], cell, cols, height, base, steep,
                            slope_of, slopes, enter, narrow, clear)
        out[j] = costs[j] + c
        best = min(best, out[j])


@njit(cache=True, nogil=True, inline="always")
def _bin(x, top, bins):
    """Which of ``bins`` bins of equal width from 0 to ``top`` the cost ``x`` (``0 <= x
    <= top``) falls in, never decreasing with ``x``; by the ratio ``x / top``, which a
    tiny ``top`` cannot make infinite (``bins / top`` can)."""
    return bins - 1 if x >= top else min(int(x / top * bins), bins - 1)


@njit(cache=True, nogil=True)
def by_cost(cells, cost, other, k):
    """Sort the first ``k`` of ``cost`` and, with it, ``cells`` and ``other``, cheapest
    first, equal costs in the order they were in (as a stable argsort): costs
    spread into about k / 4 bins of equal width (no two out of order), each bin
    then sorted by insertion.  Costs must be finite and not negative."""
    if k < 2:
        return
    top = 0.0
    for j in range(k):
        top = max(top, cost[j])
    bins = max(k // 4, 1)
    start = np.zeros(bins + 1, dtype=np.int64)
    for j in range(k):
        start[_bin(cost[j], top, bins) + 1] += 1
    for b in range(bins):
        start[b + 1] += start[b]
    c0, x0, o0 = cells[:k].copy(), cost[:k].copy(), other[:k].copy()
    for j in range(k):
        b = _bin(x0[j], top, bins)
        i = start[b]
        start[b] += 1
        cells[i], cost[i], other[i] = c0[j], x0[j], o0[j]
    for i in range(1, k):  # within its bin, by insertion: each bin holds a few
        x, c, o = cost[i], cells[i], other[i]
        j = i
        while j > 0 and cost[j - 1] > x:
            cost[j], cells[j], other[j] = cost[j - 1], cells[j - 1], other[j - 1]
            j -= 1
        cost[j], cells[j], other[j] = x, c, o


@njit(cache=True, nogil=True)
def collect(touched, nt, dist, parent, state, budget, cells, cost, parents):
    """Write the nodes within ``budget`` of the last `theta_search` (cell, cost, parent
    cell) to the outputs, cheapest first (`by_cost`), and return the workspace
    to rest (`reset_nodes`); returns how many were written."""
    k = 0
    for j in range(nt):
        v = touched[j]
        if dist[v] <= budget:
            cells[k] = v
            cost[k] = dist[v]
            parents[k] = parent[v]
            k += 1
    reset_nodes(touched, nt, dist, parent, state)
    by_cost(cells, cost, parents, k)
    return k
