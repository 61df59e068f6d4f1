"""numba kernels: the cost of a step over a cost grid, and the tables of them.

`fold`/`step_climb` (steep ground, uphill only), `gradient` (the ground's slope at a
point), `through`, `entry` (flat entry costs), `step_table` (every step's cost from
every cell), `flat_cells`/`calm_cells` (cells whose steps all cost the same).

Private; `engine.terrain` validates everything first.  Kernels assume clean,
C-contiguous arrays of the documented dtypes; nothing compiles at import.
"""

import math

import numpy as np
from numba import njit

__all__ = [
    "RISING",
    "TRAIL",
    "UNIFORM",
    "UPHILL_TOL",
    "WIDE",
    "calm_cells",
    "end_climb",
    "entry",
    "flat_cells",
    "fold",
    "gradient",
    "largest",
    "mean",
    "smallest",
    "step_climb",
    "step_fold",
    "step_table",
    "stretch",
    "through",
    "touched_lines",
    "trail_cells",
]

UPHILL_TOL = 1e-9
TRAIL = 8  # deque capacity; distinct multiplier levels a footprint can hold exactly
WIDE = 128  # bit of a `flat_cells` mark: no heavier ground farther around
UNIFORM = 1  # `step_table`: a step whose pieces all have one multiplier
RISING = 2  # `step_table`: a step whose pieces' multipliers never fall


@njit(cache=True, inline="always")
def _plane(slopes, o, j, px, py):
    """Height at ``(px, py)`` (cells from the cell's centre) of plane ``j`` of the cell
    whose `Layers.slopes` start at ``o``, and its gradient per cell along x and y."""
    p = o + 3 + 3 * j
    return slopes[p] + slopes[p + 1] * px + slopes[p + 2] * py, slopes[p + 1], slopes[p + 2]


@njit(cache=True, inline="always")
def _lowest(slopes, o, k, ux, uy, px, py):
    """The plane lowest at a point, the one falling fastest along ``(ux, uy)`` on a
    tie (the lowest just beyond it): ``(index, height, rise along u)``."""
    best, rise, at = np.inf, 0.0, -1
    for j in range(k):
        v, gx, gy = _plane(slopes, o, j, px, py)
        s = gx * ux + gy * uy
        if v < best or (v == best and s < rise):
            best, rise, at = v, s, j
    return at, best, rise


@njit(cache=True, inline="always")
def _ground_plane(slopes, o, k, ux, uy, px, py):
    """The plane the ground follows at a point, as `_lowest` gives it, and whether the
    point is on the hill (that plane above 0, or at 0 and rising along ``(ux, uy)``):
    ``(index, height, rise along u, on the hill)``."""
    at, v, rise = _lowest(slopes, o, k, ux, uy, px, py)
    return at, v, rise, k > 0 and (v > 0.0 or (v == 0.0 and rise > 0.0))


@njit(cache=True, inline="always")
def touched_lines(f, i, size, tol):
    """The first and last of the rows (or columns) of cells a point at ``f`` cells
    along one axis touches: line ``i`` (of ``size``) holding it, and the one
    beside it if it lies within ``tol`` of their border (none beyond the
    table's edges)."""
    lo = i - 1 if f - i <= tol and i > 0 else i
    hi = i + 1 if i + 1 - f <= tol and i + 1 < size else i
    return lo, hi


@njit(cache=True, inline="always")
def _length(dx, dy):
    """``math.hypot(dx, dy)`` without its care for overflow (table distances are
    far from it), at a fraction of its cost: the searches take millions."""
    return math.sqrt(dx * dx + dy * dy)


@njit(cache=True, error_model="numpy", inline="always")
def fold(steep, slopes, o, ux, uy, ax, ay, bx, by):
    """How a piece from ``(ax, ay)`` to ``(bx, by)`` (cells from the centre of its cell)
    along ``(ux, uy)`` climbs: ``(t1, t2, m0, m1, m2)``, the slope's multiplier
    (``steep`` where it gains height, else 1) over the shares ``[0, t1)``,
    ``[t1, t2)`` and ``[t2, 1]`` of it.

    The cell's ground (`Layers.slopes` from ``o``: ``k`` planes, the gradient per
    cell of the other hills' ground, then per plane its height at the centre and
    gradient) is the lowest of its planes where that is above 0, else 0, plus
    the other hills' plane: so a hill's crest, its foot and the bends of its
    slope cross the cell where they do, and the piece climbs over one stretch
    of it at most, or two where another hill's slope rises under a hill's
    foot.  The walk follows the lowest plane along the piece from one plane to
    the next (each falls faster than the one before: at most ``k`` of them)
    and over 0 and back (once each).
    """
    k = int(slopes[o])
    extra = slopes[o + 1] * ux + slopes[o + 2] * uy
    length = _length(bx - ax, by - ay)
    at, _, rise, inside = _ground_plane(slopes, o, k, ux, uy, ax, ay)
    t, t1, t2 = 0.0, 1.0, 1.0
    m0 = m1 = m2 = steep if (rise if inside else 0.0) + extra > UPHILL_TOL else 1.0
    parts = 1
    for _ in range(k + 3):
        m = steep if (rise if inside else 0.0) + extra > UPHILL_TOL else 1.0
        if parts == 1 and m != m0:
            t1, m1, m2, parts = t, m, m, 2
        elif parts == 2 and m != m1:
            t2, m2, parts = t, m, 3
        if length == 0.0 or k == 0:
            break
        # The next event: another plane below this one, or the ground at 0.
        nxt, to = 1.0, -1
        px, py = ax + t * (bx - ax), ay + t * (by - ay)
        here = _plane(slopes, o, at, px, py)[0]
        for j in range(k):
            vj, gx, gy = _plane(slopes, o, j, px, py)
            s = gx * ux + gy * uy
            if s < rise:
                tj = t + max(vj - here, 0.0) / ((rise - s) * length)
                if tj < nxt:
                    nxt, to = tj, j
        if inside and rise < 0.0:
            t0 = t + here / (-rise * length)
            if t0 <= nxt:
                nxt, to = t0, -2
        elif not inside and rise > 0.0:
            t0 = t + max(-here, 0.0) / (rise * length)
            if t0 <= nxt:
                nxt, to = t0, -2
        if to == -1:
            break
        t = nxt
        if to == -2:
            inside = not inside
        else:
            at = to
            _, gx, gy = _plane(slopes, o, at, 0.0, 0.0)
            rise = gx * ux + gy * uy
    return t1, t2, m0, m1, m2


@njit(cache=True)
def gradient(slopes, o, ux, uy, px, py):
    """The ground's gradient per cell along x and y at ``(px, py)`` (cells from the
    centre of the cell whose `Layers.slopes` start at ``o``), on the side of it
    along ``(ux, uy)``, as `fold` reads the ground: the other hills' plane, plus
    the lowest plane where that is above 0 (on a tie, the one falling fastest
    that way, `_lowest`)."""
    k = int(slopes[o])
    gx, gy = slopes[o + 1], slopes[o + 2]
    at, _, _, inside = _ground_plane(slopes, o, k, ux, uy, px, py)
    if inside:
        _, ax, ay = _plane(slopes, o, at, px, py)
        gx, gy = gx + ax, gy + ay
    return gx, gy


@njit(cache=True, inline="always")
def stretch(cut, part, length):
    """Stretch ``part`` (0, 1, 2) of a piece ``length`` long cut by `fold` (``cut``, its
    answer): how long it is (0: none, but for the first of an uncut piece) and its
    multiplier for slope."""
    t1, t2, m0, m1, m2 = cut
    if part == 0:
        return length if t1 == 1.0 else t1 * length, m0
    if part == 1:
        return t2 * length - t1 * length, m1
    return length - t2 * length, m2


@njit(cache=True, inline="always")
def mean(cut):
    """The mean multiplier for slope over a piece cut by `fold` (``cut``, its answer)."""
    t1, t2, m0, m1, m2 = cut
    if t1 == 1.0:
        return m0
    return t1 * m0 + (t2 - t1) * m1 + (1.0 - t2) * m2


@njit(cache=True, inline="always")
def step_fold(steep, slopes, j, ux, uy, t0, t1, dr, dc, pdr, pdc):
    """`fold` for the piece of a lattice step ``(dr, dc)`` from fraction ``t0`` to
    ``t1`` of it, in the cell ``(pdr, pdc)`` from the step's first."""
    return fold(steep, slopes, j, ux, uy, t0 * dc - pdc, t0 * dr - pdr,
                t1 * dc - pdc, t1 * dr - pdr)


@njit(cache=True, inline="always")
def step_climb(steep, slopes, j, ux, uy, t0, t1, dr, dc, pdr, pdc):
    """The mean multiplier for slope (`mean`) over the piece of a lattice step
    ``(dr, dc)`` from fraction ``t0`` to ``t1`` of it (`step_fold`)."""
    return mean(step_fold(steep, slopes, j, ux, uy, t0, t1, dr, dc, pdr, pdc))


@njit(cache=True, inline="always")
def end_climb(steep, slopes, j, ux, uy, k, last, pieces):
    """`step_climb` for the first piece of lattice step ``k`` (in the cell it leaves) or,
    with ``last``, its last (in the cell it reaches), as the step's walk prices it;
    ``pieces``: ``(step_dr, step_dc, piece_start, piece_w)`` (corner touches, of
    width 0, are listed after the pieces)."""
    step_dr, step_dc, piece_start, piece_w = pieces
    if not last:
        return step_climb(steep, slopes, j, ux, uy, 0.0, piece_w[piece_start[k]],
                          step_dr[k], step_dc[k], 0, 0)
    end = piece_start[k + 1] - 1
    while piece_w[end] == 0.0:
        end -= 1
    t = 0.0
    for p in range(piece_start[k], end):
        t += piece_w[p]
    return step_climb(steep, slopes, j, ux, uy, t, t + piece_w[end], step_dr[k], step_dc[k],
                      step_dr[k], step_dc[k])


@njit(cache=True, inline="always")
def through(base, steep, slope_of, slopes, i, ux, uy):
    """Multiplier of cell ``i`` under a unit's ranks facing ``(ux, uy)``, whose path
    through it is not walked: steep if the ground at its centre rises that way."""
    m = base[i]
    if steep[i] != 1.0:
        m *= fold(steep[i], slopes, slope_of[i], ux, uy, 0.0, 0.0, 0.0, 0.0)[2]
    return m


@njit(cache=True, inline="always")
def entry(enter_i, enter_prev, narrow_i, narrow_prev):
    """Flat costs of the front going into cell i from cell prev.

    ``enter`` (an obstacle's crossing cost) is paid going into a cell whose
    cost differs from prev's (another obstacle, or none); ``narrow`` (a
    formation change) going into a cell that has one from a cell that has
    none: a unit already narrowed does not narrow again.  Scalars only: the
    kernels call it per piece, where passing arrays would cost a reference
    count each.
    """
    c = 0.0
    if enter_i > 0.0 and enter_i != enter_prev:
        c += enter_i
    if narrow_i > 0.0 and narrow_prev == 0.0:
        c += narrow_i
    return c


@njit(cache=True, nogil=True, error_model="numpy")
def step_table(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, enter,
    narrow, flat, flat_of, incoming, into, cost, uniform,
):
    """Price every step of every cell once, without the trail.

    ``cost[a * K + k]`` is what step k out of cell a costs over its pieces
    (``inf`` if it leaves the grid or is blocked); ``uniform`` is ``UNIFORM``
    where all its pieces have one multiplier (the trail then needs a single
    update), ``RISING`` where their multipliers never fall from one piece to
    the next (a trail no heavier than the first piece's ground then leaves the
    last piece's alone: `search_labels`), else 0.
    Flat entry costs (``enter``, ``narrow``: `entry`) are included.  A uniform
    step without them costs its multiplier times its length: the number the
    searches compute, without the table, for a step out of a `flat_cells`
    cell (marked in ``flat``, which may be empty: such a cell's steps are
    written so, without their pieces).  The piece walk is the one in
    `search`, written out in both: a shared helper taking the arrays made the
    search twice as slow, and this table six times slower.

    With ``incoming``, row r prices instead the steps into cell ``into[r]``
    (cells that are not flat): ``cost[r * K + k]`` is step k's out of the cell
    ``into[r] - step k`` (``inf`` off the grid), the row the flow kernel
    (`engine.search._kernels.flow.reverse_search`) reads when it expands that cell.  Without
    it, a non-empty ``into`` asks for the rows of those cells alone: row r
    prices the steps out of ``into[r]``.
    """
    ncell = base.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    entering = enter.shape[0] > 0
    has_flat = flat.shape[0] > 0
    listed = into.shape[0] > 0
    for r in range(into.shape[0] if incoming or listed else ncell):
        fa = flat_of[flat[into[r] if listed else r]] if has_flat and not incoming else 0.0
        if fa > 0.0:
            for k in range(nsteps):
                cost[r * nsteps + k] = fa * step_len[k]
                uniform[r * nsteps + k] = UNIFORM
            continue
        tr = into[r] // cols if incoming else 0  # the cell the incoming row's steps reach
        tc = into[r] - tr * cols if incoming else 0
        for k in range(nsteps):
            slot = r * nsteps + k
            cost[slot] = np.inf
            uniform[slot] = 0
            if incoming:  # a is the cell step k leaves for into[r]
                ar = tr - step_dr[k]
                ac = tc - step_dc[k]
                if ar < 0 or ar >= rows or ac < 0 or ac >= cols:
                    continue
                a = ar * cols + ac
                fa = flat_of[flat[a]] if has_flat else 0.0
                if fa > 0.0:  # the step lies in a's box
                    cost[slot] = fa * step_len[k]
                    uniform[slot] = UNIFORM
                    continue
            else:
                a = into[r] if listed else r
                ar = a // cols
                ac = a - ar * cols
                br = ar + step_dr[k]
                bc = ac + step_dc[k]
                if br < 0 or br >= rows or bc < 0 or bc >= cols:
                    continue
            total = 0.0
            first = -1.0
            last = -1.0
            same = True
            rising = True
            flat_cost = True  # no entry cost on the way
            prev = a
            t = 0.0  # the share of the step before the piece
            for j in range(piece_start[k], piece_start[k + 1]):
                i = a + piece_dr[j] * cols + piece_dc[j]
                if piece_w[j] == 0.0:
                    if base[i] == np.inf:
                        total = np.inf
                        break
                    continue
                g = g0 = g1 = g2 = base[i]  # g0, g1, g2: across folds the piece crosses
                if not plain and steep[i] != 1.0:
                    cut = step_fold(steep[i], slopes, slope_of[i], ux[k], uy[k], t,
                                    t + piece_w[j], step_dr[k], step_dc[k], piece_dr[j],
                                    piece_dc[j])
                    g0, g1, g2 = g * cut[2], g * cut[3], g * cut[4]
                    g *= mean(cut)
                t += piece_w[j]
                if g == np.inf:
                    total = np.inf
                    break
                one = g0 == g1 and g1 == g2  # one multiplier all along
                if first < 0.0 and one:
                    first = g
                elif g != first or not one:
                    same = False
                rising = rising and g0 >= last and g1 >= g0 and g2 >= g1
                last = g2
                total += piece_w[j] * step_len[k] * g
                if entering:
                    e = entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    total += e
                    flat_cost = flat_cost and e == 0.0
                prev = i
            if same and total != np.inf:
                uniform[slot] = UNIFORM
                if flat_cost:
                    total = first * step_len[k]
            elif rising and total != np.inf:
                uniform[slot] = RISING
            cost[slot] = total


@njit(cache=True)
def trail_cells(step_len, depth):
    """How many cells (rows or columns) from the front a trail ``depth`` deep can
    hold ground of: a cell's ground is kept until the front is ``depth`` past
    where it left the cell, half a cell or more from its centre.  So is the
    footprint's at the source: a cell behind it is kept until the front is
    ``depth`` past where the footprint's line enters it.  (A full trail merges
    two levels, the lower taking the other's distance: that distance is still
    a cell's within this reach.)"""
    return math.floor(depth / smallest(step_len) + 0.5)


@njit(cache=True)
def smallest(a):
    """The smallest of the values in ``a`` (not empty): one loop, compiled once for
    every kernel, where ``a.min()`` compiles numba's reduction in each."""
    m = a[0]
    for v in a:
        m = min(m, v)
    return m


@njit(cache=True)
def largest(a):
    """The largest of the values in ``a`` (not empty), as `smallest`."""
    m = a[0]
    for v in a:
        m = max(m, v)
    return m


@njit(cache=True)
def _clear(a):
    """Set every value of ``a`` to 0, a loop for ``a[:] = 0``."""
    for i in range(a.shape[0]):
        a[i] = 0


@njit(cache=True, inline="always")
def _alike(base, steep, enter, narrow, i, j, has_steep, entering):
    """Whether cells i and j have the same multiplier, steep multiplier and flat costs."""
    if base[i] != base[j]:
        return False
    if has_steep and steep[i] != steep[j]:
        return False
    return not entering or (enter[i] == enter[j] and narrow[i] == narrow[j])


@njit(cache=True, inline="always")
def _window_max(line, n, half, prefix, suffix):
    """``line[i]`` becomes the largest of ``line[i - half : i + half + 1]`` (0 past
    either end; values >= 0): van Herk and Gil-Werman's prefix and suffix maxima
    over blocks as wide as the window, three passes whatever ``half``."""
    w = 2 * half + 1
    m = n + 2 * half  # the line padded with `half` zeros each side
    for j in range(m):
        v = line[j - half] if half <= j < n + half else 0.0
        prefix[j] = v if j % w == 0 else max(prefix[j - 1], v)
    for j in range(m - 1, -1, -1):
        v = line[j - half] if half <= j < n + half else 0.0
        suffix[j] = v if j % w == w - 1 or j == m - 1 else max(suffix[j + 1], v)
    for i in range(n):
        line[i] = max(suffix[i], prefix[i + w - 1])


@njit(cache=True)
def calm_cells(base, steep, cols, half, out):
    """Mark (uint8, 1) the cells with no heavier ground within ``half`` rows and
    columns: no cell there whose multiplier (times its steep multiplier, ``steep``
    empty for none) exceeds the cell's own.  Impassable cells and the ground off
    the grid hold no trail and count as none.  A running maximum along the rows,
    then down the columns (`_window_max`)."""
    n = base.shape[0]
    rows = n // cols
    top = np.empty(n)
    for i in range(n):
        g = base[i]
        top[i] = 0.0 if g == np.inf else (g * steep[i] if steep.shape[0] > 0 else g)
    longest = max(rows, cols)
    line = np.empty(longest)
    prefix = np.empty(longest + 4 * half + 1)
    suffix = np.empty(longest + 4 * half + 1)
    for r in range(rows):  # loops, not slices: a slice copy compiles numba's shape checks
        o = r * cols
        for c in range(cols):
            line[c] = top[o + c]
        _window_max(line, cols, half, prefix, suffix)
        for c in range(cols):
            top[o + c] = line[c]
    for c in range(cols):
        for r in range(rows):
            line[r] = top[r * cols + c]
        _window_max(line, rows, half, prefix, suffix)
        for r in range(rows):
            i = r * cols + c
            out[i] = 1 if line[r] <= base[i] else 0


@njit(cache=True)
def flat_cells(base, steep, enter, narrow, cols, reach, calm, out, multiplier):
    """Mark the cells every step out of which costs the cell's multiplier times its length.

    That holds where every cell within ``reach`` (the longest step's, in rows
    or columns) of a is on the grid, has a's finite multiplier, no steep
    multiplier, and a's flat entry costs (so `entry` charges nothing).
    ``out[a]`` (uint8) is then the index of a's multiplier in ``multiplier``
    (whose entry 0 is 0.0, filled here, at most ``WIDE`` long), else 0; a
    cell whose multiplier would be the ``WIDE``-th distinct one is left
    unmarked (the searches price it as any other).  The bit ``WIDE`` is set
    as well where ``calm`` (uint8, empty for none) is set: for a unit with
    rear ranks, no ground near the cell is heavier than its own, so no trail
    near it weighs more (`search_labels` prunes such a cell's steps).  Returns
    how many entries of ``multiplier`` are used.  One byte a cell keeps the
    mark where the searches read it often: on a 2048² grid, 4 MiB against 32
    for the multipliers themselves.

    Runs of alike cells along each row, then runs down each column of cells
    whose row is alike, make it one pass each way.  The searches price a
    marked cell's steps without the table or the pieces (``step_table`` holds
    the same numbers); ``steep`` and ``enter`` may be empty (none).
    """
    n = base.shape[0]
    rows = n // cols
    has_steep = steep.shape[0] > 0
    entering = enter.shape[0] > 0
    has_calm = calm.shape[0] > 0
    # Runs of alike cells ending at each cell: leftward, then rightward (a row's
    # `reach` on both sides alike: `row_ok`); then upward and downward over cells
    # whose rows are alike, per column.
    run = np.zeros(cols, dtype=np.int64)
    row_ok = np.zeros(n, dtype=np.bool_)
    for r in range(rows):
        o = r * cols
        for c in range(cols):
            i = o + c
            alike = c > 0 and _alike(base, steep, enter, narrow, i, i - 1, has_steep, entering)
            run[c] = run[c - 1] + 1 if alike else 1
        right = 0
        for c in range(cols - 1, -1, -1):
            i = o + c
            alike = c < cols - 1 and _alike(base, steep, enter, narrow, i, i + 1, has_steep,
                                            entering)
            right = right + 1 if alike else 1
            row_ok[i] = run[c] > reach and right > reach
    _clear(run)
    for i in range(n):  # whether the run upward is long enough, kept in `out` for the way back
        c = i % cols
        alike = i >= cols and row_ok[i - cols] and _alike(base, steep, enter, narrow, i,
                                                          i - cols, has_steep, entering)
        run[c] = (run[c] + 1 if alike else 1) if row_ok[i] else 0
        out[i] = 1 if run[c] > reach else 0
    _clear(run)
    multiplier[0] = 0.0
    used = 1
    last = 0  # the index found last: neighbours mostly share it
    for i in range(n - 1, -1, -1):
        c = i % cols
        alike = i + cols < n and row_ok[i + cols] and _alike(base, steep, enter, narrow, i,
                                                             i + cols, has_steep, entering)
        run[c] = (run[c] + 1 if alike else 1) if row_ok[i] else 0
        ok = out[i] == 1 and run[c] > reach and base[i] != np.inf
        if ok and has_steep:
            ok = steep[i] == 1.0
        out[i] = 0
        if ok:
            if multiplier[last] != base[i]:
                last = 0
                for j in range(1, used):
                    if multiplier[j] == base[i]:
                        last = j
                        break
                if last == 0 and used < multiplier.shape[0]:
                    multiplier[used] = base[i]
                    last = used
                    used += 1
            out[i] = last | WIDE if has_calm and calm[i] and last > 0 else last
    return used
