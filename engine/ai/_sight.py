"""numba kernels for lines of sight (private; `engine.ai.visibility` is the front).

A sight line runs from the observer's exact point to the target's.  It is
walked cell by cell with the exact grid walk (Amanatides and Woo): the
parameter ``t`` in [0, 1] along the line at which it crosses a column
boundary ``X`` is ``(X - px) * (1 / dx)`` in cell units, and every decision (which
cell comes next, where the line enters and leaves a cell) compares those
numbers only, so the walk visits exactly the cells a brute-force check with
the same formula finds (tests/test_visibility.py does).  A cell the line
only grazes at a corner (it leaves as it enters) stops nothing.

Cells that cannot stop any sight line (not concealing, not above the sight
height) are skipped in bulk: ``free[0, r, c]`` is the chessboard distance to
the nearest cell that might, so every cell within ``free - 1`` of the current
one is passed over in one jump.  On a hill, where the line runs a height
``gap`` above the ground, no ground within ``j`` cells rises more than
``lip * j`` (``lip``: the steepest rise between neighbouring cells) while the
line falls at most its own slope, so the walk jumps the ``j`` that leaves the
line above it all, unless concealing terrain is nearer (``free[1]``, the
distance to the nearest concealing cell).

The viewshed settles most cells without walking a line, from a horizon
table built once per observer (`_horizons`): for each of many ranges of
direction and each ring of ``_BAND`` cells, the steepest slope any cell that
may stop a line (``stops``) in that direction and no farther out asks of a
line to pass it, and the shallowest slope that some cell wholly across that
direction and nearer blocks.  A line steeper than the first is seen, one
shallower than the second hidden; only the cells in between get a line of
their own.  The table's bounds take in every cell a line may cross (by
corner directions and distances, padded) and keep ``_SLACK`` to spare, so
the result is the same as a line to every cell; only the time differs.

All kernels compile lazily with ``cache=True``; inputs are clean arrays
(`engine.ai.visibility` checks them).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = ["distance", "free_cells", "march", "tiles", "viewshed"]

_TOL = 1e-9  # table units: ground this close under the line does not block
_SPREAD = 5.5  # the horizon table's direction bins per cell of its reach (then a power of 2)
_BAND = 16.0  # and rings of this many cells
_TILE = 16  # the viewshed settles tiles this many cells a side whole where it can
_SLACK = 1e-7  # table units of height: what the table's proofs keep to spare


@njit(cache=True)
def distance(ox, oy, tx, ty):
    """Table distance between two points (the one formula every concealment test uses)."""
    dx, dy = tx - ox, ty - oy
    return math.sqrt(dx * dx + dy * dy)


@njit(cache=True, inline="always")
def _face(i, s, p, inv):
    """``t`` where the line leaves cell index ``i`` moving by ``s`` (+1, -1 or 0).

    ``p`` is where the line starts and ``inv`` is 1 / (its run), on this axis.
    """
    if s > 0:
        return (i + 1 - p) * inv
    if s < 0:
        return (i - p) * inv
    return math.inf


@njit(cache=True, error_model="numpy")
def march(elev, conceal, free, lip, ox, oy, tx, ty, r0, c0, r1, c1, cell, z0, z1, length, first):
    """Walk the sight line from ``(ox, oy)`` in cell ``(r0, c0)`` to ``(tx, ty)`` in ``(r1, c1)``.

    Points are in table units, ``z0`` and ``z1`` the heights of the line's
    ends, ``length`` its `distance`.  The ground under the two ends never
    blocks.  A cell blocks when the line leaves it farther from the observer
    than ``conceal`` (concealing terrain), or when its elevation is above the
    line anywhere in it.

    Returns ``(woods_r, woods_c, hill_r, hill_c)``: the first concealing cell
    that blocks and the hill cell that rises farthest above the line, ``-1``
    for none.  With ``first`` it returns at the first blocking cell of any kind.
    """
    rows, cols = elev.shape
    px, py = ox / cell, oy / cell
    dx, dy = tx / cell - px, ty / cell - py
    sx = 1 if dx > 0 else (-1 if dx < 0 else 0)
    sy = 1 if dy > 0 else (-1 if dy < 0 else 0)
    ix = 1.0 / dx if sx != 0 else 0.0
    iy = 1.0 / dy if sy != 0 else 0.0
    fall = 1.5 * abs(z1 - z0) * cell / max(length, 1e-300)  # most the line drops per cell
    wr, wc, hr, hc = -1, -1, -1, -1
    worst = 0.0
    r, c = r0, c0
    t_in = 0.0
    while t_in < 1.0 and 0 <= r < rows and 0 <= c < cols and not (r == r1 and c == c1):
        # the line ends in (r1, c1): it never leaves the target's row or column onwards,
        # whatever rounding says of a face it only touches at its end
        txo = _face(c, sx, px, ix) if c != c1 else math.inf
        tyo = _face(r, sy, py, iy) if r != r1 else math.inf
        k = free[0, r, c]
        m = k - 1
        if k == 0:
            t_out = min(txo, tyo, 1.0)
            low = min(z0 + t_in * (z1 - z0), z0 + t_out * (z1 - z0))
            if t_out > t_in and not (r == r0 and c == c0):
                if t_out * length > conceal[r, c] and wr < 0:
                    wr, wc = r, c
                    if first:
                        return wr, wc, hr, hc
                above = elev[r, c] - low
                if above > _TOL and above > worst:
                    worst = above
                    hr, hc = r, c
                    if first:
                        return wr, wc, hr, hc
            gap = low - elev[r, c] - fall - 2 * _TOL
            if gap > 0:
                m = min(int(min(0.999 * gap / max(lip + fall, 1e-300), 1e9)), free[1, r, c] - 1)
        if m >= 1:
            if abs(r1 - r) <= m and abs(c1 - c) <= m:
                break  # the rest of the line lies in free cells
            r, c, t_in = _jump(r, c, m, r1, c1, sx, sy, px, py, dx, dy, ix, iy)
        elif txo < tyo:
            c += sx
            t_in = txo
        elif tyo < txo:
            r += sy
            t_in = tyo
        else:  # through a corner: the two side cells are only grazed
            c += sx
            r += sy
            t_in = txo
    return wr, wc, hr, hc


@njit(cache=True, inline="always")
def _jump(r, c, m, r1, c1, sx, sy, px, py, dx, dy, ix, iy):
    """Past the ``m`` free cells around ``(r, c)``: the cell the line enters on leaving
    that square, and the ``t`` where (scalars only: no reference counts in the walk).

    The line ends in ``(r1, c1)``: on an axis where the square reaches the
    target's row or column, it leaves the square by the other axis.
    """
    cl, rl = c + sx * m, r + sy * m
    txl, tyl = math.inf, math.inf
    if sx * (cl - c1) >= 0:
        cl = c1
    else:
        txl = _face(cl, sx, px, ix)
    if sy * (rl - r1) >= 0:
        rl = r1
    else:
        tyl = _face(rl, sy, py, iy)
    t = min(txl, tyl)
    nc = cl + sx if txl <= tyl else _landing(c, cl, sx, px, dx, ix, t)
    nr = rl + sy if tyl <= txl else _landing(r, rl, sy, py, dy, iy, t)
    return nr, nc, t


@njit(cache=True, inline="always")
def _landing(i0, i1, s, p, d, inv, t):
    """Index (between ``i0`` and ``i1``) the line is in at ``t`` on an axis it has not left."""
    if s == 0:
        return i0
    lo, hi = min(i0, i1), max(i0, i1)
    i = min(max(math.floor(p + t * d), lo), hi)
    while i != i0 and _face(i - s, s, p, inv) > t:
        i -= s
    while i != i1 and _face(i, s, p, inv) <= t:
        i += s
    return i


@njit(cache=True, inline="always")
def _turn(dx, dy):
    """The direction of ``(dx, dy)`` as a number in [0, 4), rising with its angle from +x.

    (The "diamond angle": no trigonometry, and the same order as the angle.)
    """
    if dy >= 0:
        return dy / (dx + dy) if dx >= 0 else 1.0 - dx / (dy - dx)
    return 2.0 - dy / (-dx - dy) if dx < 0 else 3.0 + dx / (dx - dy)


@njit(cache=True, inline="always")
def _up(x):
    """``x`` nudged up past float32 rounding (the tables are float32)."""
    return x + abs(x) * 1e-6 + 1e-12 if math.isfinite(x) else x


@njit(cache=True, inline="always")
def _enter(need, hide, elev, conceal, r, c, px, py, cell, z0):
    """Raise the horizon table (see `_horizons`) by what cell ``(r, c)`` asks and blocks."""
    bands, bins = need.shape
    per = bins / 4.0
    pad = 1e-9  # in `_turn` units: far more than rounding moves a line's direction
    x0, x1, y0, y1 = c - px, c + 1 - px, r - py, r + 1 - py
    nx = 0.0 if x0 <= 0.0 <= x1 else min(abs(x0), abs(x1))
    ny = 0.0 if y0 <= 0.0 <= y1 else min(abs(y0), abs(y1))
    fx, fy = max(abs(x0), abs(x1)), max(abs(y0), abs(y1))
    near, far = math.sqrt(nx * nx + ny * ny), math.sqrt(fx * fx + fy * fy)
    d = conceal[r, c]
    rise = elev[r, c] - z0
    if far * cell >= d - _SLACK:  # may be blocking as concealing terrain
        asks = math.inf
    elif rise + _SLACK > 0.0:
        asks = (rise + _SLACK) / near if near > 0.0 else math.inf
    else:
        asks = (rise + _SLACK) / far
    asks = np.float32(_up(asks))
    ring = min(int(near / _BAND), bands - 1)
    if near == 0.0:
        for i in range(bins):
            need[ring, i] = max(need[ring, i], asks)
        return
    t00, t01, t10, t11 = _turn(x0, y0), _turn(x1, y0), _turn(x0, y1), _turn(x1, y1)
    lo, hi = min(t00, t01, t10, t11), max(t00, t01, t10, t11)
    if hi - lo > 2.0:  # straddles direction 0: [least above 2, 4) and [0, most below 2]
        lo, hi = 4.0, 0.0
        for t in (t00, t01, t10, t11):
            if t > 2.0:
                lo = min(lo, t)
            else:
                hi = max(hi, t)
        for i in range(int((lo - pad) * per), bins):
            need[ring, i] = max(need[ring, i], asks)
        for i in range(min(int((hi + pad) * per), bins - 1) + 1):
            need[ring, i] = max(need[ring, i], asks)
        return
    for i in range(max(int((lo - pad) * per), 0), min(int((hi + pad) * per), bins - 1) + 1):
        need[ring, i] = max(need[ring, i], asks)
    after = int(far / _BAND) + 1
    if after >= bands:
        return
    if near * cell > d + _SLACK:  # concealing terrain wholly beyond its distance
        blocks = math.inf
    else:
        high = rise - _TOL - _SLACK
        blocks = min(high / near, high / far)
    blocks = np.float32(-_up(-blocks))
    for i in range(math.ceil((lo + pad) * per), math.floor((hi - pad) * per)):
        hide[after, i] = max(hide[after, i], blocks)


@njit(cache=True, error_model="numpy")
def _horizons(elev, conceal, stops, inner, reach, px, py, r0, c0, cell, z0, bands, bins):
    """The observer's horizon table: ``(need, hide)``, each ``bands`` x ``bins``.

    Directions from ``p`` (cell units) are cut into ``bins`` equal ranges of
    `_turn`, distances into rings ``_BAND`` cells wide.  A sight line of slope
    ``s`` (height gained per cell, table units) to a target ``L`` cells away,
    in direction bin ``i`` and ring ``b = int(L / _BAND)``:

    - crosses no cell that stops it if ``s > need[b, i]``, once ``need`` has
      been given its running maximum outwards (`viewshed` does): ``need[b, i]``
      is the most any cell that may stop a line (``free[0] == 0``) reaching
      into bin ``i`` and starting in ring ``b`` asks of the slope, ``+inf``
      for concealing terrain that ends beyond its distance;
    - is blocked if ``s < hide[b, i]``, after the same: ``hide[b, i]`` is the
      least slope such a cell covering the whole of bin ``i`` and ending in
      ring ``b - 1`` blocks, ``+inf`` for concealing terrain wholly beyond its
      distance.

    Both are conservative by ``_SLACK`` in height, more than rounding can
    move a line.  The cells touching ``p`` count in every direction; the
    observer's own cell never blocks.

    The cells are ``stops`` and those of ``inner`` (`free_cells`) that are not
    wholly beyond their distance or that touch the observer's cell (all
    within ``reach / cell + 2`` cells).  The rest of ``inner`` can be left
    out: a line enters such a cell from a neighbour other than the observer's
    cell, one that conceals within no more and reaches out at least as far as
    the cell starts, so asks ``+inf`` in the line's direction, no farther
    out, if it is in the table; if it was left out too, the same holds for
    the cell before it, and so on back to one that is.  (Leaving cells out
    also loses their ``hide`` entries, which only spare lines.)
    """
    need = np.full((bands, bins), -np.inf, dtype=np.float32)
    hide = np.full((bands, bins), -np.inf, dtype=np.float32)
    for k in range(stops.shape[0]):
        r, c = stops[k, 0], stops[k, 1]
        if not (r == r0 and c == c0):
            _enter(need, hide, elev, conceal, r, c, px, py, cell, z0)
    rows, cols = elev.shape
    w = int(reach / cell) + 2
    for r in range(max(r0 - w, 0), min(r0 + w + 1, rows)):
        ny = max(r - py, py - r - 1.0, 0.0)
        for c in range(max(c0 - w, 0), min(c0 + w + 1, cols)):
            if not inner[r, c] or (r == r0 and c == c0):
                continue
            nx = max(c - px, px - c - 1.0, 0.0)
            touches = abs(r - r0) <= 1 and abs(c - c0) <= 1
            if touches or math.sqrt(nx * nx + ny * ny) * cell <= conceal[r, c] + _SLACK:
                _enter(need, hide, elev, conceal, r, c, px, py, cell, z0)
    return need, hide


@njit(cache=True, parallel=True, error_model="numpy")
def viewshed(elev, conceal, free, lip, stops, inner, reach, low, high, deep, ox, oy, r0, c0, cell,
             height, out):
    """Fill ``out[r, c]`` with whether the observer at ``(ox, oy)`` sees cell ``(r, c)``'s centre.

    The observer is on the ground; its line of sight runs ``height`` above the
    ground at both ends.  ``low``, ``high`` and ``deep`` summarise tiles of
    ``_TILE`` cells square (`tiles`).  A tile of concealing cells wholly
    beyond their distance is hidden.  The horizon table (`_horizons`) settles
    a whole tile when bounds on the slopes and directions of its lines allow
    (a concealing cell too far off asks an infinite slope in its own
    direction, so a tile holding one is never all seen), otherwise most cells
    with one look each; the rest get a line each (`march`).
    """
    rows, cols = elev.shape
    z0 = elev[r0, c0] + height
    px, py = ox / cell, oy / cell
    span = 0.0
    for x in (px, cols - px):
        for y in (py, rows - py):
            span = max(span, math.sqrt(x * x + y * y))
    bands = int(span / _BAND) + 2
    bins = 64  # as fine, in cells at the far end, on a table of any size
    while bins < _SPREAD * span:
        bins *= 2
    need, hide = _horizons(elev, conceal, stops, inner, reach, px, py, r0, c0, cell, z0, bands,
                           bins)
    for j in prange(bins // 64):  # running maxima outwards, 64 directions at a time
        for b in range(1, bands):
            for i in range(64 * j, 64 * j + 64):
                need[b, i] = max(need[b, i], need[b - 1, i])
                hide[b, i] = max(hide[b, i], hide[b - 1, i])
    per = bins / 4.0
    ntc = low.shape[1]
    for tile in prange(low.size):
        tr, tc = tile // ntc, tile % ntc
        ra, ca = tr * _TILE, tc * _TILE
        rb, cb = min(ra + _TILE, rows), min(ca + _TILE, cols)
        # the tile's cell centres, from the observer: a box, its directions and distances
        x0, x1, y0, y1 = ca + 0.5 - px, cb - 0.5 - px, ra + 0.5 - py, rb - 0.5 - py
        nx = 0.0 if x0 <= 0.0 <= x1 else min(abs(x0), abs(x1))
        ny = 0.0 if y0 <= 0.0 <= y1 else min(abs(y0), abs(y1))
        fx, fy = max(abs(x0), abs(x1)), max(abs(y0), abs(y1))
        near = math.sqrt(nx * nx + ny * ny) - 1e-6
        far = math.sqrt(fx * fx + fy * fy) + 1e-6
        t00, t01, t10, t11 = _turn(x0, y0), _turn(x1, y0), _turn(x0, y1), _turn(x1, y1)
        lo, hi = min(t00, t01, t10, t11), max(t00, t01, t10, t11)
        if near * cell > deep[tr, tc]:
            out[ra:rb, ca:cb] = False
            continue
        if hi - lo < 2.0 and not (ra <= r0 < rb and ca <= c0 < cb):  # near > 0 here
            ilo = max(int((lo - 1e-9) * per), 0)
            ihi = min(int((hi + 1e-9) * per), bins - 1)
            rise, drop = low[tr, tc] + height - z0, high[tr, tc] + height - z0
            least = rise / far if rise >= 0.0 else rise / near  # slopes of the tile's lines
            most = drop / near if drop >= 0.0 else drop / far
            bn, bf = int(near / _BAND), min(int(far / _BAND), bands - 1)
            asks, blocks = -np.inf, np.inf
            for i in range(ilo, ihi + 1):
                asks = max(asks, need[bf, i])
                blocks = min(blocks, hide[bn, i])
            if least > asks:
                out[ra:rb, ca:cb] = True
                continue
            if most < blocks:
                out[ra:rb, ca:cb] = False
                continue
        for r in range(ra, rb):
            ty = (r + 0.5) * cell
            for c in range(ca, cb):
                tx = (c + 0.5) * cell
                length = distance(ox, oy, tx, ty)
                if length > conceal[r, c]:
                    out[r, c] = False
                    continue
                z1 = elev[r, c] + height
                if not (r == r0 and c == c0):
                    run = length / cell
                    slope = (z1 - z0) / run
                    i = min(int(_turn(c + 0.5 - px, r + 0.5 - py) * per), bins - 1)
                    b = min(int(run / _BAND), bands - 1)
                    if slope > need[b, i]:
                        out[r, c] = True
                        continue
                    if slope < hide[b, i]:
                        out[r, c] = False
                        continue
                wr, _, hr, _ = march(elev, conceal, free, lip, ox, oy, tx, ty, r0, c0, r, c, cell,
                                     z0, z1, length, np.bool_(True))
                out[r, c] = wr < 0 and hr < 0


def tiles(elev: np.ndarray, conceal: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lowest and highest ground of each tile of ``_TILE`` cells square, and its deepest cover.

    Returns ``(low, high, deep)``, each ``ceil(rows / _TILE)`` x
    ``ceil(cols / _TILE)``; ``deep`` is the farthest any cell of the tile
    conceals within (``inf`` if one does not conceal).
    """
    rows, cols = elev.shape
    shape = (-(-rows // _TILE), -(-cols // _TILE))
    pad = ((0, shape[0] * _TILE - rows), (0, shape[1] * _TILE - cols))
    blocks = np.pad(elev, pad, mode="edge").reshape(shape[0], _TILE, shape[1], _TILE)
    cover = np.pad(conceal, pad, mode="edge").reshape(blocks.shape)
    return blocks.min(axis=(1, 3)), blocks.max(axis=(1, 3)), cover.max(axis=(1, 3))


def free_cells(elev: np.ndarray, conceal: np.ndarray,
               height: float) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, float]:
    """What the walk skips by, and what may stop it: ``(free, lip, stops, inner, reach)``.

    ``free[0]`` is the chessboard distance from each cell to the nearest that
    may block a sight line: one that conceals or rises above ``height`` (a
    sight line never runs lower than ``height`` above the lowest ground, 0).
    ``free[1]`` is the distance to the nearest concealing cell.  Both are
    capped at 2**30.  ``lip`` bounds the rise from a cell to any neighbour.

    For the horizon table (`_horizons`): ``inner`` marks the concealing cells
    whose eight neighbours all conceal within no more than they do, ``stops``
    lists the ``(row, col)`` of the other cells with ``free[0] == 0``, and
    ``reach`` is the farthest any cell conceals within (0 if none does).
    """
    from scipy.ndimage import distance_transform_cdt

    conceals = np.isfinite(conceal)
    blocks = conceals | (elev > height)
    free = np.empty((2, *elev.shape), dtype=np.int32)
    for i, stop in enumerate((blocks, conceals)):
        if stop.any():
            free[i] = np.minimum(distance_transform_cdt(~stop, metric="chessboard"), 2**30)
        else:
            free[i] = 2**30
    rises = [np.abs(np.diff(elev, axis=0)), np.abs(np.diff(elev, axis=1)),
             np.abs(elev[1:, 1:] - elev[:-1, :-1]), np.abs(elev[1:, :-1] - elev[:-1, 1:])]
    lip = max((float(d.max()) for d in rises if d.size), default=0.0)
    rows, cols = elev.shape
    inner = np.zeros(elev.shape, dtype=np.bool_)
    if rows > 2 and cols > 2:
        middle = conceal[1:-1, 1:-1]
        core = np.isfinite(middle)
        for dr in (0, 1, 2):
            for dc in (0, 1, 2):
                core &= conceal[dr:rows - 2 + dr, dc:cols - 2 + dc] <= middle
        inner[1:-1, 1:-1] = core
    # C-ordered whatever their number (argwhere's are Fortran-ordered past one row): one
    # compiled `_horizons` for every map.
    stops = np.ascontiguousarray(np.argwhere(blocks & ~inner), dtype=np.int32)
    reach = float(conceal[conceals].max()) if conceals.any() else 0.0
    return free, lip * (1 + 1e-9) + 1e-12, stops, inner, reach
