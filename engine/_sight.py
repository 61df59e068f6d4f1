"""numba kernels for lines of sight (private; `engine.visibility` is the front).

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

The viewshed settles whole tiles of targets without a line to each where it
can prove the answer: seen when no cell near any of the tile's lines may
block (`_clear`), hidden when all of them must cross a block of concealing
terrain or of high ground (`_screened`).  Both proofs are conservative, so
the result is the same as a line to every cell; only the time differs.

All kernels compile lazily with ``cache=True``; inputs are clean arrays
(`engine.visibility` checks them).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_TOL = 1e-9  # table units: ground this close under the line does not block
_TILE = 16  # viewshed tiles, cells a side
_SUB = 4  # and the tiles those are split into
_LOW = 8  # `lowest` looks this many cells around


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
        txo = _face(c, sx, px, ix)
        tyo = _face(r, sy, py, iy)
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
            r, c, t_in = _jump(r, c, m, sx, sy, px, py, dx, dy, ix, iy)
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
def _jump(r, c, m, sx, sy, px, py, dx, dy, ix, iy):
    """Past the ``m`` free cells around ``(r, c)``: the cell the line enters on leaving
    that square, and the ``t`` where (scalars only: no reference counts in the walk)."""
    cl, rl = c + sx * m, r + sy * m
    txl = _face(cl, sx, px, ix)
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


@njit(cache=True, error_model="numpy")
def _clear(free, px, py, qx, qy, r0, c0, r1, c1, half):
    """Whether every cell a line from ``p`` to any point within ``half`` of ``q`` crosses is free.

    Points in cell units, in cells ``(r0, c0)`` and ``(r1, c1)``.  Such lines
    stay within ``t * half`` of the segment ``p -> q`` at ``t`` along it, so
    the walk down the segment asks each cell for that much room, plus 3 cells
    for the grid and rounding.  Conservative: it may say no when the answer is
    yes, never the other way.
    """
    rows, cols = free.shape[1:]
    dx, dy = qx - px, qy - py
    sx = 1 if dx > 0 else (-1 if dx < 0 else 0)
    sy = 1 if dy > 0 else (-1 if dy < 0 else 0)
    ix = 1.0 / dx if sx != 0 else 0.0
    iy = 1.0 / dy if sy != 0 else 0.0
    grow = 1.0 + 1.5 * half / max(math.sqrt(dx * dx + dy * dy), 1.0)  # room per cell walked
    r, c = r0, c0
    t = 0.0
    while 0 <= r < rows and 0 <= c < cols:
        room = free[0, r, c] - 4.0 - t * half  # cells within `room` are free, and to spare
        if room < 0:
            return False
        m = int(room / grow)
        if abs(r1 - r) <= m and abs(c1 - c) <= m:
            return True
        r, c, t = _jump(r, c, m, sx, sy, px, py, dx, dy, ix, iy)
        if t >= 1.0:
            return False  # lost the segment's end to rounding: say no
    return False


@njit(cache=True, error_model="numpy")
def _screened(free, low, px, py, r0, c0, ra, rb, ca, cb, cell, reach, z0, ztop):
    """Whether every line from ``p`` to a centre of cells ``[ra:rb, ca:cb]`` is blocked.

    Walks down the middle of the wedge of those lines, looking for a block
    every line of it must cross with room to spare: a square of concealing
    cells wholly farther than ``reach`` from ``p``, or a square of ground
    (``low``: the lowest ground within ``_LOW`` cells) higher than any of the
    lines can be there (``ztop``: the highest end a line has in the tile).
    Points in cell units, ``reach`` in table units.  Conservative, like
    `_clear`; it gives up (False) after 256 looks.
    """
    rows, cols = free.shape[1:]
    qx, qy = 0.5 * (ca + cb), 0.5 * (ra + rb)
    r1, c1 = int(qy), int(qx)
    half = 0.5 * math.hypot(cb - ca, rb - ra)
    dx, dy = qx - px, qy - py
    span = max(math.sqrt(dx * dx + dy * dy), 1.0)
    sx = 1 if dx > 0 else (-1 if dx < 0 else 0)
    sy = 1 if dy > 0 else (-1 if dy < 0 else 0)
    ix = 1.0 / dx if sx != 0 else 0.0
    iy = 1.0 / dy if sy != 0 else 0.0
    r, c = r0, c0
    t = 0.0
    for _ in range(256):
        if not (0 <= r < rows and 0 <= c < cols):
            return False
        m = free[0, r, c] - 1
        if m < 0:
            m = 2  # look every third cell: a block worth finding is wider than that
            wide = (t + 2.0 / span) * half + 3.0  # the wedge's half-width here, and to spare
            if free[1, r, c] == 0 and free[2, r, c] - 1 >= wide:  # in concealing terrain
                ex, ey = c + 0.5 - px, r + 0.5 - py
                if (math.sqrt(ex * ex + ey * ey) - 1.5 * (wide + 2.0)) * cell > reach:
                    return True
            if (wide + 2.0 <= _LOW and abs(r - r0) > _LOW and abs(c - c0) > _LOW
                    and (r + _LOW < ra or r - _LOW >= rb or c + _LOW < ca or c - _LOW >= cb)):
                tt = min(1.0, t + 1.5 * (wide + 3.0) / span)
                if low[r, c] > max(z0, z0 + tt * (ztop - z0)) + 2 * _TOL:
                    return True
        if abs(r1 - r) <= m and abs(c1 - c) <= m:
            return False
        r, c, t = _jump(r, c, m, sx, sy, px, py, dx, dy, ix, iy)
        if t >= 1.0:
            return False
    return False


@njit(cache=True, error_model="numpy")
def _cells(elev, conceal, free, lip, ox, oy, r0, c0, cell, height, z0, ra, rb, ca, cb, out):
    """`viewshed` for the cells ``[ra:rb, ca:cb]``, a line to each."""
    for r in range(ra, rb):
        ty = (r + 0.5) * cell
        for c in range(ca, cb):
            tx = (c + 0.5) * cell
            length = distance(ox, oy, tx, ty)
            if length > conceal[r, c]:
                out[r, c] = False
                continue
            wr, _, hr, _ = march(elev, conceal, free, lip, ox, oy, tx, ty, r0, c0, r, c, cell,
                                 z0, elev[r, c] + height, length, True)
            out[r, c] = wr < 0 and hr < 0


@njit(cache=True, parallel=True, error_model="numpy")
def viewshed(elev, conceal, free, lip, low, reach, ox, oy, r0, c0, cell, height, out):
    """Fill ``out[r, c]`` with whether the observer at ``(ox, oy)`` sees cell ``(r, c)``'s centre.

    The observer is on the ground; its line of sight runs ``height`` above the
    ground at both ends.

    The grid is done in tiles of ``_TILE`` cells square, and those in tiles of
    ``_SUB``.  When every cell the lines from the observer to a tile can cross
    is free (`_clear`), nothing hides any cell of the tile: it is all seen,
    without a line to each.  When they all run into a block of concealing
    terrain farther than ``reach`` (the most any cell conceals within) from
    the observer, or into high ground (`_screened`), the tile is all hidden.
    """
    rows, cols = elev.shape
    z0 = elev[r0, c0] + height
    px, py = ox / cell, oy / cell
    ntr, ntc = (rows + _TILE - 1) // _TILE, (cols + _TILE - 1) // _TILE
    for tile in prange(ntr * ntc):
        ra, ca = (tile // ntc) * _TILE, (tile % ntc) * _TILE
        rb, cb = min(ra + _TILE, rows), min(ca + _TILE, cols)
        if _tile(elev, free, low, px, py, r0, c0, ra, rb, ca, cb, cell, reach, z0, height, out):
            continue
        for sa in range(ra, rb, _SUB):
            for sc in range(ca, cb, _SUB):
                sb, sd = min(sa + _SUB, rb), min(sc + _SUB, cb)
                if not _tile(elev, free, low, px, py, r0, c0, sa, sb, sc, sd, cell, reach, z0,
                             height, out):
                    _cells(elev, conceal, free, lip, ox, oy, r0, c0, cell, height, z0, sa, sb, sc,
                           sd, out)


@njit(cache=True, inline="always")
def _tile(elev, free, low, px, py, r0, c0, ra, rb, ca, cb, cell, reach, z0, height, out):
    """Settle the cells ``[ra:rb, ca:cb]`` whole if `_clear` or `_screened` can; say if done."""
    qx, qy = 0.5 * (ca + cb), 0.5 * (ra + rb)
    half = 0.5 * math.hypot(cb - ca, rb - ra)
    if _clear(free, px, py, qx, qy, r0, c0, int(qy), int(qx), half):
        out[ra:rb, ca:cb] = True
        return True
    ztop = elev[ra:rb, ca:cb].max() + height
    if _screened(free, low, px, py, r0, c0, ra, rb, ca, cb, cell, reach, z0, ztop):
        out[ra:rb, ca:cb] = False
        return True
    return False


def free_cells(elev: np.ndarray, conceal: np.ndarray, height: float) -> tuple[np.ndarray, float]:
    """What the walk skips by: ``(free, lip)`` (see the module's notes).

    ``free[0]`` is the chessboard distance from each cell to the nearest that
    may block a sight line: one that conceals or rises above ``height`` (a
    sight line never runs lower than ``height`` above the lowest ground, 0).
    ``free[1]`` is the distance to the nearest concealing cell and
    ``free[2]`` to the nearest that does not conceal.  All are capped at
    2**30.  ``lip`` bounds the rise from a cell to any neighbour.
    """
    from scipy.ndimage import distance_transform_cdt

    conceals = np.isfinite(conceal)
    free = np.empty((3, *elev.shape), dtype=np.int32)
    for i, stop in enumerate((conceals | (elev > height), conceals, ~conceals)):
        if stop.any():
            free[i] = np.minimum(distance_transform_cdt(~stop, metric="chessboard"), 2**30)
        else:
            free[i] = 2**30
    rises = [np.abs(np.diff(elev, axis=0)), np.abs(np.diff(elev, axis=1)),
             np.abs(elev[1:, 1:] - elev[:-1, :-1]), np.abs(elev[1:, :-1] - elev[:-1, 1:])]
    lip = max((float(d.max()) for d in rises if d.size), default=0.0)
    return free, lip * (1 + 1e-9) + 1e-12


def lowest(elev: np.ndarray) -> np.ndarray:
    """The lowest ground within ``_LOW`` cells (chessboard) of each cell."""
    from scipy.ndimage import minimum_filter

    return minimum_filter(elev, size=2 * _LOW + 1, mode="nearest")
