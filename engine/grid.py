"""The one place where table coordinates and grid indices meet.

World points are ``xy`` in table units (x to the right, y down); grid cells are
``rc`` = ``(row, col)`` = ``(floor(y / cell), floor(x / cell))``.  A cell's centre
is ``((col + 0.5) * cell, (row + 0.5) * cell)``.

This module also holds the neighbourhood the searches use and the exact walk of
a straight segment through the cells it crosses, which the kernels' step costs
share with the path pricer's walk (`_kernels.walk_path`, the same cuts written
out in numba, checked against this one by tests/test_pricing.py), so that the
two price a step identically.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ._args import point, shown, whole
from .errors import InputError

__all__ = ["GridSpec", "neighbourhood", "segment_cells"]

_EPS = 1e-12
# Ranks standing in a cell for less than this (cells) stand on nothing there: a rank
# line through a grid corner, nearly along a grid line, touches the cell across the
# corner for a hair that a rounding of the unit's point makes or unmakes.
_GRAZE = 1e-6


@dataclass(frozen=True)
class GridSpec:
    """Size and resolution of a raster laid over the table.

    Parameters
    ----------
    width, height : float
        Table size in table units.
    cell : float
        Side of a square cell in table units.

    Examples
    --------
    >>> g = GridSpec(10.0, 5.0, 0.5)
    >>> g.shape
    (10, 20)
    >>> g.xy_to_rc((1.2, 0.3))
    (0, 2)
    >>> g.rc_to_xy((0, 2))
    (1.25, 0.25)
    """

    width: float
    height: float
    cell: float

    @functools.cached_property
    def shape(self) -> tuple[int, int]:
        """``(rows, cols)``; a partial cell at the far edge counts as a whole one (a
        battlefield has none: `load_map` refuses it)."""
        return (_cells(self.height, self.cell), _cells(self.width, self.cell))

    def xy_to_rc(self, xy: tuple[float, float]) -> tuple[int, int]:
        """Cell holding the table point ``xy``; raise `InputError` if it is off the table."""
        x, y = point(xy)
        if not (0.0 <= x <= self.width and 0.0 <= y <= self.height):
            raise InputError(
                f"point ({x:.10g}, {y:.10g}) is off the table (0..{self.width:g} x "
                f"0..{self.height:g})"
            )
        rows, cols = self.shape
        return (min(int(y / self.cell), rows - 1), min(int(x / self.cell), cols - 1))

    def rc_to_xy(self, rc: tuple[int, int]) -> tuple[float, float]:
        """Centre of cell ``rc`` in table units; `InputError` unless ``rc`` is the row
        and column (whole numbers) of a cell of the grid."""
        rows, cols = self.shape
        if not (isinstance(rc, tuple | list | np.ndarray) and len(rc) == 2
                and whole(rc[0]) and whole(rc[1]) and 0 <= rc[0] < rows and 0 <= rc[1] < cols):
            raise InputError(f"cell {shown(rc)} is not a row and column of the {rows} x {cols} "
                             "grid")
        r, c = rc
        return ((c + 0.5) * self.cell, (r + 0.5) * self.cell)


def _cells(length: float, cell: float) -> int:
    n = length / cell
    return max(1, round(n) if abs(n - round(n)) < 1e-9 else math.ceil(n))


# Each neighbourhood's steps in one eighth of the compass (the rest are their mirror
# images), chosen so that the widest angle between neighbouring steps is small.
_OCTANT = {
    8: ((1, 0), (1, 1)),
    16: ((1, 0), (1, 1), (2, 1)),
    32: ((1, 0), (1, 1), (2, 1), (3, 2), (4, 1)),
    48: ((1, 0), (1, 1), (2, 1), (3, 2), (4, 1), (3, 1), (4, 3)),
}
DIRECTIONS = tuple(_OCTANT)


def check_directions(directions) -> None:
    """Refuse a neighbourhood that `neighbourhood` does not have (one line, `InputError`)."""
    if not whole(directions) or directions not in _OCTANT:
        raise InputError(
            f"a neighbourhood has {', '.join(map(str, DIRECTIONS))} directions, got {directions!r}"
        )


def neighbourhood(directions: int = 32) -> np.ndarray:
    """Step offsets ``(drow, dcol)`` of the search neighbourhood.

    8 is the 8-neighbourhood and 16 adds the knight moves.  32 adds (3, 2)
    and (4, 1) and their mirror images, and 48 adds (3, 1) and (4, 3) as
    well.  A lattice route on open ground is longer than the straight line
    by at most ``1 / cos(gap / 2) - 1``, where ``gap`` is the widest angle
    between neighbouring steps: 8.2 %, 2.7 %, 0.76 % and 0.76 %.  For 32
    directions, (4, 1) rather than (3, 1) halves that (from 1.3 %), with
    the same number of steps.  Steps are primitive (coprime offsets: a
    longer step in the same direction is two short ones), sorted by length.

    Examples
    --------
    >>> [len(neighbourhood(d)) for d in (8, 16, 32, 48)]
    [8, 16, 32, 48]
    """
    check_directions(directions)
    steps = {
        (sr * a, sc * b)
        for dr, dc in _OCTANT[directions]
        for a, b in ((dr, dc), (dc, dr))
        for sr in (1, -1)
        for sc in (1, -1)
    }
    return np.array(sorted(steps, key=lambda s: (math.hypot(*s), math.atan2(s[0], s[1]))),
                    dtype=np.int64)


def segment_cells(
    p: tuple[float, float], q: tuple[float, float]
) -> tuple[list[tuple[int, int, float, float]], list[tuple[int, int]]]:
    """Walk the straight segment ``p -> q`` (in cell units) through the grid.

    Parameters
    ----------
    p, q : (x, y)
        End points measured in cells (table units divided by the cell size).

    Returns
    -------
    pieces : list of (row, col, s0, s1)
        The cells the segment crosses with positive length, in order, with
        the stretch ``s0 < s1`` of it (distance from ``p``, in cells) spent in
        each.  Axis-parallel segments get exact lengths.
    corners : list of (row, col)
        Cells the segment only touches at a corner.  They add no length but a
        step may not squeeze between two impassable cells through their
        shared corner.

    Examples
    --------
    >>> pieces, corners = segment_cells((0.5, 0.5), (2.5, 0.5))
    >>> [(r, c, s1 - s0) for r, c, s0, s1 in pieces]
    [(0, 0, 0.5), (0, 1, 1.0), (0, 2, 0.5)]
    >>> pieces, corners = segment_cells((0.5, 0.5), (1.5, 1.5))
    >>> [(r, c) for r, c, _, _ in pieces], sorted(corners)
    ([(0, 0), (1, 1)], [(0, 1), (1, 0)])
    """
    (px, py), (qx, qy) = p, q
    dx, dy = qx - px, qy - py
    total = math.hypot(dx, dy)
    if total == 0.0:
        return [], []
    crossings: list[float] = []  # distances from p where the segment crosses a grid line
    for start, delta in ((px, dx), (py, dy)):
        if delta != 0.0:
            scale = total / delta
            lo, hi = sorted((start, start + delta))
            for k in range(math.floor(lo) + 1, math.ceil(hi)):
                s = (k - start) * scale
                if _EPS < s < total - _EPS:
                    crossings.append(s)
    crossings.sort()
    breaks = [0.0]
    corner_at = []
    for s in crossings:
        if s - breaks[-1] <= _EPS * max(1.0, total):
            if len(breaks) > 1:
                corner_at.append(breaks[-1])
            continue
        breaks.append(s)
    breaks.append(total)
    pieces = []
    for s0, s1 in itertools.pairwise(breaks):
        sm = 0.5 * (s0 + s1) / total
        pieces.append((math.floor(py + sm * dy), math.floor(px + sm * dx), s0, s1))
    seen = {(r, c) for r, c, _, _ in pieces}
    corners = []
    for s in corner_at:
        cx, cy = round(px + s / total * dx), round(py + s / total * dy)
        for rc in ((cy - 1, cx - 1), (cy - 1, cx), (cy, cx - 1), (cy, cx)):
            if rc not in seen:
                corners.append(rc)
                seen.add(rc)
    return pieces, corners
