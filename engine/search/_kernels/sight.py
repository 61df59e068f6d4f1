"""numba kernels: the cells a straight move from a unit's own point reaches over
ground alike to the start's, so that its price is that ground's multiplier
times its length, known without walking it (`plain_sight`), and the price of
one straight move over alike ground of one kind or more (`line_price`), with
its stretches of one ground (`line_stretches`).

A shadow cast: in each pair of octants about an axis, lines of cells across
the axis are visited outward from the start, keeping the sorted, merged
intervals of slopes that cells of other ground already block; a cell's
centre is in sight if its slope lies in none of them.  Within its own line a
sight line to a cell's centre crosses only that cell (slopes up to 1; on a
diagonal it passes by the corner of the cell beside it, which must be alike
too).  The origin's own line blocks the slopes its cells of other ground
take between the origin and the line's far edge.

Private; `theta_search` and `theta_labels` call them.
"""

import math

import numpy as np
from numba import njit

from ...grid import _EPS as _CORNER  # crossings this close the walk takes for one
from ...terrain._kernels import _length

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
    ``n`` of ``los``, ``his``, joined to the last if they overlap; returns the count.
    (Both lists written whatever the branch, so that numba drops their reference
    counts.)"""
    join = n > 0 and lo <= his[max(n - 1, 0)]
    k = n - 1 if join else n
    first = los[k] if join else lo
    last = max(his[k], hi) if join else hi
    los[k] = first
    his[k] = last
    return k + 1


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
            for q in range(na):  # copied back, not swapped: a swap counts references
                alo[q], ahi[q] = blo[q], bhi[q]
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


@njit(cache=True, error_model="numpy", _nrt=False)
def line_price(ax, ay, bx, by, alike, clear, cols, height):
    """`line_stretches` without its stretches written."""
    none = alike[:0]  # nowhere to write them (a view: nothing allocated)
    return line_stretches(ax, ay, bx, by, alike, clear, cols, height, none, none)


@njit(cache=True, inline="always")
def _stretch_ends(price, kind, last, s, grounds, kinds, ends):
    """A line's ``grounds``-th stretch, of ground ``kind`` from ``last`` to ``s``, ends:
    its price added to ``price`` and, where ``kinds`` is not empty, its ground and
    end written to ``kinds`` and ``ends``; -1 (cannot tell) where they have no
    room."""
    if kinds.shape[0] > 0:
        if grounds > kinds.shape[0]:
            return -1.0
        kinds[grounds - 1] = kind
        ends[grounds - 1] = s
    return price + kind * (s - last)


@njit(cache=True, error_model="numpy", _nrt=False)
def line_stretches(ax, ay, bx, by, alike, clear, cols, height, kinds, ends):
    """The price, over the grid's cell side, of the straight move from ``(ax, ay)`` to
    ``(bx, by)`` (cell units) if it crosses only alike ground (`CostGrid.alike`, not
    NaN) with no two grid-line crossings within `_MARGIN` of each other or of its
    ends, but at a corner, or inside a box of alike ground (``clear``,
    `CostGrid.clearance`), which it crosses at once: then the pricing walk
    (`segment_cost`) cuts it at exactly those crossings, each piece in the cell
    the line is in, so its price is the sum of each ground's multiplier times the
    length of the line in it, to rounding.  A corner is two crossings within
    `_MARGIN` where all four cells round it are of one ground, or within
    `_CORNER`, which the walk takes for one crossing, where all four are alike
    ground (none impassable): the line goes on in the cell across.

    Returns the price and how many stretches of one ground the line makes
    (1: it crosses one ground only); ``(-1, 0)`` where it cannot tell (a
    crossing close to an end, two crossings of mixed ground within `_MARGIN`
    but not `_CORNER`, a cell of ground alike to none, more stretches than
    ``kinds`` holds).  Each stretch's ground and where it ends (cell units
    along the line) are written to ``kinds`` and ``ends`` unless they are
    empty.  One exit, so that numba drops the arrays' reference counts.
    """
    dx, dy = bx - ax, by - ay
    tot = _length(dx, dy)
    close = _MARGIN * max(1.0, tot)
    corner = _CORNER * max(1.0, tot)
    ix = tot / dx if dx != 0.0 else np.inf  # length along the line per cell across
    iy = tot / dy if dy != 0.0 else np.inf
    c = min(max(math.floor(ax), 0), cols - 1)
    r = min(max(math.floor(ay), 0), height - 1)
    sc = 1 if dx > 0.0 else -1
    sr = 1 if dy > 0.0 else -1
    kind = alike[r * cols + c]
    price = 0.0 if kind == kind else -1.0  # NaN: alike to none
    last = 0.0  # where the line entered ground ``kind``
    at = 0.0  # how far along the line it has been followed
    grounds = 1
    done = False
    while price >= 0.0 and not done:
        k = clear[r * cols + c]
        if k >= 1:  # on to just short of where it leaves the box round this cell
            ex = (c + (k + 1 if sc > 0 else -k) - ax) * ix if dx != 0.0 else np.inf
            ey = (r + (k + 1 if sr > 0 else -k) - ay) * iy if dy != 0.0 else np.inf
            s = min(ex, ey) - 2.0 * close
            if s > at:
                at = min(s, tot)
                c = min(max(math.floor(ax + dx * (at / tot)), 0), cols - 1)
                r = min(max(math.floor(ay + dy * (at / tot)), 0), height - 1)
        # The next grid line along each axis, crossed at (g - start) * tot / delta.
        sx = (c + (sc > 0) - ax) * ix if dx != 0.0 else np.inf
        sy = (r + (sr > 0) - ay) * iy if dy != 0.0 else np.inf
        s = min(sx, sy)
        at = max(at, s)
        if s > tot + close or (k >= 1 and at >= tot):  # past its end
            price = _stretch_ends(price, kind, last, tot, grounds, kinds, ends)
            done = True
        elif s <= close or s >= tot - close:
            price = -1.0
        elif abs(sx - sy) <= close:  # by a corner
            rr, cc = min(max(r + sr, 0), height - 1), min(max(c + sc, 0), cols - 1)
            one, two, across = alike[r * cols + cc], alike[rr * cols + c], alike[rr * cols + cc]
            if one == kind and two == kind and across == kind:
                pass  # all four cells round it of one ground
            elif abs(sx - sy) <= corner and one == one and two == two and across == across:
                if across != kind:  # the walk cuts here once, into the cell across
                    price = _stretch_ends(price, kind, last, s, grounds, kinds, ends)
                    last = s
                    kind = across
                    grounds += 1
            else:
                price = -1.0
            r, c = r + sr, c + sc
        else:
            if sx < sy:
                c += sc
            else:
                r += sr
            other = alike[r * cols + c]
            if other != kind:
                if other == other:
                    price = _stretch_ends(price, kind, last, s, grounds, kinds, ends)
                    last = s
                    kind = other
                    grounds += 1
                else:
                    price = -1.0
    return price, (grounds if price >= 0.0 else 0)
