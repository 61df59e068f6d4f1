"""Searches over plain multiplier arrays, without a map or rules: `cost_field`,
`grid_route` and `GridRouter` (Moving AI grids, peers' benchmarks).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._args import finite, non_negative, real, shown, tame
from .._limits import memory_bytes
from ..errors import InputError, NoRouteError
from ..terrain.costgrid import KernelArgs, kernel_args
from ..terrain.lattice import steps
from . import _kernels
from ._state import _SLACK, _Workspace

__all__ = ["GridRouter", "cost_field", "grid_route"]
# What a raw grid's search keeps a cell (its multiplier, workspace and queue), about.
_RAW_BYTES_PER_CELL = 64
# The least cell side of a raw grid: below it, step lengths lose their precision
# as subnormal floats (5e-324 made every cost 0). A vast cell is refused by the
# overflow check of `_RawGrid.build` instead.
_MIN_CELL = 1e-300


# The most a raw grid's path may cost, with room to add the A*'s bound to it.
_MAX_COST = 1e306
# What `cost_field`, `grid_route` and `GridRouter` take as a convention (`terrain.lattice.steps`).
_CONVENTIONS = {"pricing", "corner_cutting", "lengths"}


def cost_field(
    multipliers: np.ndarray,
    source: tuple[int, int],
    cell: float = 1.0,
    directions: int = 32,
    allowance: float = math.inf,
    **convention,
) -> np.ndarray:
    """Cost from one cell to every cell of a raw multiplier grid.

    The map-free entry point for comparing pathfinders: each cell's
    multiplier (>= 1, ``inf`` for blocked) prices the distance travelled
    through it, steps run in 32 directions (or 8, 16, 48), and no
    footprint or slope applies.

    Parameters
    ----------
    multipliers : ndarray, shape (rows, cols)
    source : (row, col)
    cell : float
        Side of a cell in table units.
    directions : int
        Steps of the neighbourhood (see `engine.grid.neighbourhood`).
    allowance : float
        Stop once every cell within it is settled (``inf``: the whole grid).
    **convention
        ``pricing``, ``corner_cutting`` and ``lengths``, to answer under
        another pathfinder's convention (see `engine.terrain.lattice.steps`).

    Returns
    -------
    ndarray of float64, shape (rows, cols)
        ``inf`` where unreachable (or beyond the allowance).  A view of the
        search's own buffer, which has a border of blocked cells around the
        grid (no copy).

    Raises
    ------
    InputError
        A malformed grid, a multiplier below 1 or NaN, a source off the grid
        or blocked.

    Examples
    --------
    >>> cost_field(np.ones((3, 4)), (0, 0))[2, 3].round(6)
    np.float64(3.605551)
    """
    m = _check_multipliers(multipliers, cell)
    allowance = tame(allowance)  # an int too large for a float is an infinite allowance
    if not (real(allowance) and allowance >= 0):
        raise InputError(f"allowance must be a number >= 0, got {shown(allowance)}")
    raw = _RawGrid.build(m, cell, directions, **convention)
    ws = _Workspace.for_cells(raw.m.size, plain=True)
    ws.run(raw, raw.index(source), -1, float(allowance))
    out = raw.interior(ws.dist)
    out[out > allowance + _SLACK] = np.inf
    return out


def grid_route(
    multipliers: np.ndarray,
    start: tuple[int, int],
    goal: tuple[int, int],
    cell: float = 1.0,
    directions: int = 32,
    **convention,
) -> tuple[float, list[tuple[int, int]]]:
    """Cheapest route between two cells of a raw multiplier grid (A*).

    The same conventions as `cost_field`.  For many queries on one grid use
    `GridRouter`, which builds its workspace once.

    Parameters
    ----------
    multipliers : ndarray, shape (rows, cols)
        Each cell's multiplier (>= 1, ``inf`` for blocked).
    start, goal : (row, col)
    cell : float
        Side of a cell in table units.
    directions : int
        Steps of the neighbourhood (see `engine.grid.neighbourhood`).
    **convention
        ``pricing``, ``corner_cutting`` and ``lengths``, as for `cost_field`.

    Returns
    -------
    cost : float
    cells : list of (row, col)
        From ``start`` to ``goal``.

    Raises
    ------
    InputError
        As `cost_field`, for either end.
    NoRouteError
        The goal cannot be reached.

    Examples
    --------
    >>> m = np.ones((3, 3)); m[1, 1] = np.inf
    >>> cost, cells = grid_route(m, (0, 0), (2, 2), directions=8)
    >>> round(cost, 6), len(cells)
    (4.0, 5)
    """
    return GridRouter(multipliers, cell, directions, **convention).route(start, goal)


class GridRouter:
    """Repeated queries on one raw multiplier grid (its workspace built once).

    Parameters
    ----------
    multipliers : ndarray, shape (rows, cols)
        Each cell's multiplier (>= 1, ``inf`` for blocked).
    cell : float
    directions : int
        Steps of the neighbourhood: 8 is 8-connected (straight 1, diagonal
        sqrt 2, no corner cutting: the Moving AI convention).
    **convention
        ``pricing``, ``corner_cutting``, ``lengths`` (see `engine.terrain.lattice.steps`).

    Examples
    --------
    >>> router = GridRouter(np.ones((4, 4)), directions=8)
    >>> round(router.route((0, 0), (3, 3))[0], 6)
    4.242641
    """

    def __init__(
        self, multipliers: np.ndarray, cell: float = 1.0, directions: int = 32, **convention
    ) -> None:
        m = _check_multipliers(multipliers, cell)
        self._raw = _RawGrid.build(m, cell, directions, **convention)
        self._ws = _Workspace.for_cells(self._raw.m.size, plain=True)
        self._path = np.empty((2, self._raw.m.size), dtype=np.int64)

    def route(
        self, start: tuple[int, int], goal: tuple[int, int]
    ) -> tuple[float, list[tuple[int, int]]]:
        """``(cost, cells)`` of the cheapest route from ``start`` to ``goal`` (row, col)."""
        raw, ws = self._raw, self._ws
        source, target = raw.index(start, "start"), raw.index(goal, "goal")
        n = ws.run(raw, source, target, math.inf)
        try:
            cost = float(ws.dist[target])
            if cost == math.inf:
                raise NoRouteError(f"no route from {tuple(start)} to {tuple(goal)}")
            rows, cols = self._path
            k = _kernels.trace(ws.parent, raw.step_off, source, target, raw.m.shape[1], raw.pad,
                               rows, cols)
        finally:
            ws.reset(n)
        return cost, list(zip(rows[:k].tolist(), cols[:k].tolist(), strict=True))


    def reach(self, source: tuple[int, int], allowance: float) -> tuple[np.ndarray, np.ndarray]:
        """Cells within ``allowance`` of ``source``: ``(cells, costs)``, cells as (row, col) rows.

        Touches only those cells (and the next ring), like `reach`.
        """
        non_negative("allowance", allowance)
        idx, cost = self._ws.within(self._raw, self._raw.index(source), allowance)
        return np.stack(self._raw.rc(idx), axis=1), cost


def _check_multipliers(multipliers, cell) -> np.ndarray:
    if isinstance(multipliers, np.ma.MaskedArray):
        raise InputError("multipliers must be a plain array, not a masked one (its mask would "
                         "be ignored): use inf for cells nobody enters")
    try:
        m = np.asarray(multipliers)
    except ValueError:  # ragged rows
        raise InputError("multipliers must be a non-empty 2-D numeric array, got ragged "
                         "rows") from None
    if m.ndim != 2 or m.size == 0:
        raise InputError(f"multipliers must be a non-empty 2-D numeric array, got shape {m.shape}")
    if not np.issubdtype(m.dtype, np.number) or np.issubdtype(m.dtype, np.complexfloating):
        raise InputError(f"multipliers must be real numbers, got an array of {m.dtype}")
    if m.size * _RAW_BYTES_PER_CELL > memory_bytes() // 2:
        raise InputError(f"a {m.shape[0]} x {m.shape[1]} grid is too large for memory (needs "
                         f"about {m.size * _RAW_BYTES_PER_CELL / 2**30:.3g} GiB)")
    m = m.astype(np.float64, copy=False)
    if np.isnan(m).any() or (m < 1).any():
        raise InputError("multipliers must be >= 1 (inf for blocked), with no NaN")
    if not (finite(cell) and cell >= _MIN_CELL):  # NaN fails too
        raise InputError(f"cell must be a finite number >= {_MIN_CELL:g}, got {shown(cell)}")
    return m


@dataclass(frozen=True, eq=False)
class _RawGrid:
    """A bare multiplier grid in the form `_kernels.search_plain` takes (no footprint, no slope).

    ``m`` is the grid inside a border of blocked cells as wide as the
    longest step, so no step leaves it; cells are numbered flat in
    that padded grid (`index`, `rc`).
    """

    m: np.ndarray
    pad: int
    cell: float
    steps: object
    kernel_args: KernelArgs
    step_off: np.ndarray
    depth: float = 0.0

    @functools.cached_property
    def shape(self) -> tuple[int, int]:
        """The grid's own shape, without the border."""
        return self.m.shape[0] - 2 * self.pad, self.m.shape[1] - 2 * self.pad

    @classmethod
    def build(cls, m: np.ndarray, cell: float, directions: int, **convention) -> _RawGrid:
        unknown = sorted(set(convention) - _CONVENTIONS)
        if unknown:
            raise InputError(f"unknown option {unknown[0]!r} (the conventions are "
                             f"{', '.join(sorted(_CONVENTIONS))})")
        st = steps(float(cell), directions, **convention)
        # A path enters each cell once at most, by a step no longer than the longest.
        longest = float(st.length.max())
        dearest = float(m[np.isfinite(m)].max(initial=1.0))
        if not m.size * longest * dearest < _MAX_COST:
            raise InputError(
                f"costs would overflow: a path over the {m.shape[0]} x {m.shape[1]} grid, by "
                f"steps up to {longest:.3g} table units long on multipliers up to "
                f"{dearest:.3g}, could cost {m.size * longest * dearest:.3g}"
            )
        p = int(np.abs(st.dr).max())
        padded = np.full((m.shape[0] + 2 * p, m.shape[1] + 2 * p), np.inf)
        padded[p:-p, p:-p] = m
        return cls(padded, p, float(cell), st, kernel_args(padded, st, table=False, flat=False),
                   st.dr * padded.shape[1] + st.dc)

    def index(self, rc, what: str = "source") -> int:
        rows, cols = self.shape
        try:
            r0, c0 = rc
            r, c = int(r0), int(c0)
            whole = real(r0) and real(c0) and r == r0 and c == c0  # not a bool
        except (TypeError, ValueError, OverflowError):
            whole = False
        if not whole:
            raise InputError(f"{what} must be (row, col), two whole numbers, got {rc!r}")
        if not (0 <= r < rows and 0 <= c < cols):
            raise InputError(f"{what} {(r, c)} is off the {rows} x {cols} grid")
        if self.m[r + self.pad, c + self.pad] == math.inf:
            raise InputError(f"{what} {(r, c)} is blocked")
        return (r + self.pad) * self.m.shape[1] + c + self.pad

    def rc(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns (in the grid's own shape) of padded flat indices."""
        r, c = np.divmod(flat, self.m.shape[1])
        return r - self.pad, c - self.pad

    def interior(self, values: np.ndarray) -> np.ndarray:
        """A view of per-cell ``values`` (padded, flat) without the border."""
        p = self.pad
        return values.reshape(self.m.shape)[p:-p, p:-p]
