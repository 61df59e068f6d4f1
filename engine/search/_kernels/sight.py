"""numba kernels: the cells a straight move from a unit's own point reaches over
ground alike to the start's, so that its price is that ground's multiplier
times its length, known without walking it (`plain_sight`), and whether one
straight move crosses only such ground (`plain_line`).

A shadow cast: in each pair of octants about an axis, lines of cells across
the axis are visited outward from the start, keeping the sorted, merged
intervals of slopes that cells of other ground already block; a cell's
centre is in sight if its slope lies in none of them.  Within its own line a
sight line to a cell's centre crosses only that cell (slopes up to 1; on a
diagonal it passes by the corner of the cell beside it, which must be alike
too).  The origin's own line blocks the slopes its cells of other ground
take between the origin and the line's far edge.

Private; `theta_search` calls them.
"""

import math

import numpy as np
from numba import njit

# Blocking cells are grown by this much (cells) each way: a sight line passing
# outside is at least this far from every cell of other ground, far beyond the
# tolerance the pricing walk gives a corner.
_MARGIN = 1e-6
# Blocked slopes are kept within +-_SPAN: sight lines asked about have slopes
# within +-1, and each kept interval is then at least 1 / (reach + 2) wide, so
# no more than 3 (reach + 2) + 1 of them are ever apart.
_SPAN = 1.5
# A sight line this close to a diagonal passes by a cell's corner, so the cell
# of its own line beside it must be alike too.
_DIAGONAL = 1e-9


@njit(cache=True, inline="always")
def _axis_cell(major, k, j, sr, sc, cols):
    """The flat index of the cell k cells out from the source's along ``major``
    (0: +x, 1: -x, 2: +y, 3: -y), in row (x majors) or column (y majors) j."""
    if major == 0:
        return j * cols + sc + k
    if major == 1:
        return j * cols + sc - k
    if major == 2:
        return (sr + k) * cols + j
    return (sr - k) * cols + j


@njit(cache=True)
def _merge(alo, ahi, na, clo, chi, nc, blo, bhi):
    """Merge two sorted lists of closed intervals into ``blo``, ``bhi``, joining
    those that overlap; returns how many there are."""
    i = 0
    j = 0
    n = 0
    while i < na or j < nc:
        if j >= nc or (i < na and alo[i] <= clo[j]):
            lo, hi = alo[i], ahi[i]
            i += 1
        else:
            lo, hi = clo[j], chi[j]
            j += 1
        n = _append(lo, hi, blo, bhi, n)
    return n


@njit(cache=True, inline="always")
def _append(lo, hi, los, his, n):
    """Add the interval ``lo .. hi`` (``lo`` no less than any before it) to the first
    ``n`` of ``los``, ``his``, joined to the last if they overlap; returns the count."""
    if n > 0 and lo <= his[n - 1]:
        his[n - 1] = max(his[n - 1], hi)
        return n
    los[n] = lo
    his[n] = hi
    return n + 1


@njit(cache=True)
def _sight_major(kind, k0, cols, height, ox, oy, sr, sc, reach, major, out, r0, c0, w,
                 alo, ahi, blo, bhi, clo, chi):
    """Mark in ``out`` the cells of ground ``k0`` in the two octants about one axis
    (``major``) whose centre the straight line from ``(ox, oy)`` (cell units)
    reaches through ground ``k0`` only."""
    along_o, minor_o = (ox, oy) if major < 2 else (oy, ox)
    along_s, minor_s = (sc, sr) if major < 2 else (sr, sc)
    limit = cols if major < 2 else height  # cells along the major axis
    span = height if major < 2 else cols  # cells along the minor axis
    sign = 1 if major % 2 == 0 else -1
    na = 0
    for k in range(reach + 1):
        line = along_s + sign * k
        if line < 0 or line >= limit:
            break
        a0 = (line - along_o) if sign > 0 else (along_o - line - 1.0)  # near edge
        ac = a0 + 0.5
        # The cells of this line within the octants: their centres' sight lines.
        jlo = max(math.ceil(minor_o - ac - 0.5), minor_s - reach, 0)
        jhi = min(math.floor(minor_o + ac - 0.5), minor_s + reach, span - 1)
        p = 0
        for j in range(jlo, jhi + 1 if k > 0 else jlo):
            m = (j + 0.5 - minor_o) / ac
            if abs(m) > 1.0 + _DIAGONAL:
                continue
            while p < na and ahi[p] < m:
                p += 1
            if p < na and alo[p] <= m:
                continue
            i = _axis_cell(major, k, j, sr, sc, cols)
            if kind[i] != k0:
                continue
            if abs(m) >= 1.0 - _DIAGONAL:  # by the corner of its neighbour towards the axis
                jj = j - 1 if m > 0.0 else j + 1
                if not 0 <= jj < span or kind[_axis_cell(major, k, jj, sr, sc, cols)] != k0:
                    continue
            r = i // cols
            out[(r - r0) * w + (i - r * cols) - c0] = 1
        # This line's cells of other ground block the sight lines through them.
        near, far = a0 - _MARGIN, a0 + 1.0 + _MARGIN
        nc = 0
        jlo = max(math.floor(minor_o - far) - 1, 0)
        jhi = min(math.ceil(minor_o + far) + 1, span - 1)
        for j in range(jlo, jhi + 1):
            i = _axis_cell(major, k, j, sr, sc, cols)
            if kind[i] == k0:
                continue
            b0, b1 = j - minor_o - _MARGIN, j + 1.0 - minor_o + _MARGIN
            if near <= 0.0:  # the origin's own line: lines from it on to the far edge
                lo = b0 / far if b0 > 0.0 else -_SPAN
                hi = b1 / far if b1 < 0.0 else _SPAN
            else:
                lo, hi = min(b0 / near, b0 / far), max(b1 / near, b1 / far)
            if hi < -1.0 or lo > 1.0:  # beyond every sight line asked about
                continue
            nc = _append(max(lo, -_SPAN), min(hi, _SPAN), clo, chi, nc)
        if nc > 0:
            na = _merge(alo, ahi, na, clo, chi, nc, blo, bhi)
            alo, blo = blo, alo
            ahi, bhi = bhi, ahi
            if na == 1 and alo[0] <= -1.0 and ahi[0] >= 1.0:
                break


@njit(cache=True)
def plain_sight(kind, cols, source, ox, oy, reach, out, r0, c0, w):
    """Mark with 1 in ``out`` (a window of the grid, ``w`` cells wide, its first cell
    at row ``r0``, column ``c0``) each cell within ``reach`` cells of the source
    (chessboard) whose centre the straight line from the point ``(ox, oy)``
    (cell units) reaches through ground alike to the source's only (``kind``,
    `CostGrid.alike`): a move there costs the source's multiplier times its
    length.  Marks nothing where the source's own ground is not alike.
    Conservative: a line that passes within `_MARGIN` of other ground is not
    marked."""
    if math.isnan(kind[source]):
        return
    height = kind.shape[0] // cols
    sr = source // cols
    sc = source - sr * cols
    k0 = kind[source]
    reach = min(reach, max(cols, height))
    cap = 3 * (reach + 2) + 8  # blocked intervals apart, at most (`_SPAN`)
    alo, ahi = np.empty(cap), np.empty(cap)
    blo, bhi = np.empty(cap), np.empty(cap)
    clo, chi = np.empty(cap), np.empty(cap)
    out[(sr - r0) * w + sc - c0] = 1
    for major in range(4):
        _sight_major(kind, k0, cols, height, ox, oy, sr, sc, reach, major, out, r0, c0, w,
                     alo, ahi, blo, bhi, clo, chi)


@njit(cache=True, error_model="numpy")
def plain_line(ax, ay, bx, by, kind, alike, cols, height):
    """Whether every cell of the grid within `_MARGIN` of the straight move from
    ``(ax, ay)`` to ``(bx, by)`` (cell units) is of ground ``kind`` (`CostGrid.alike`,
    not NaN): then the move's price is that ground's multiplier times its
    length, every piece of the pricing walk in such a cell and no corner it
    passes touching other ground.  Along the major axis, each line of cells the
    widened move spans, and in it the cells across that its span over the
    line's width covers.  (One exit, so that numba drops ``alike``'s reference
    count.)"""
    steep = abs(by - ay) > abs(bx - ax)
    a0, a1, b0, b1 = (ay, by, ax, bx) if steep else (ax, bx, ay, by)
    if a1 < a0:
        a0, a1, b0, b1 = a1, a0, b1, b0
    slope = (b1 - b0) / (a1 - a0) if a1 > a0 else 0.0
    along = height if steep else cols
    across = cols if steep else height
    ok = True
    for i in range(max(math.floor(a0 - _MARGIN), 0), min(math.floor(a1 + _MARGIN), along - 1) + 1):
        y0 = b0 + (max(i - _MARGIN, a0) - a0) * slope
        y1 = b0 + (min(i + 1.0 + _MARGIN, a1) - a0) * slope
        jlo = max(math.floor(min(y0, y1) - _MARGIN), 0)
        jhi = min(math.floor(max(y0, y1) + _MARGIN), across - 1)
        for j in range(jlo, jhi + 1):
            ok = ok and alike[i * cols + j if steep else j * cols + i] == kind
        if not ok:
            break
    return ok
