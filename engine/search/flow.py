"""Flow fields: every cell's cost to the nearest goal and the step that starts its
cheapest route there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._args import instance, listed, named, real, shown, tame
from .._threads import on_threads, thread_count
from ..errors import InputError, NoRouteError
from ..terrain.costgrid import CostGrid
from . import _kernels
from ._state import _SLACK
from .front import _start_cell

__all__ = ["FlowField", "flow_field"]


@dataclass(frozen=True, eq=False)
class FlowField:
    """Cost to the goal from every cell, and the step that starts its cheapest route.

    Attributes
    ----------
    grid : CostGrid
    goals : tuple of (x, y)
    cost : ndarray of float64, shape ``grid.grid.shape``
        Allowance to the nearest goal (``inf`` where unreachable, or beyond
        the field's limit).
    step : ndarray of int8
        Index into ``grid.steps`` of the step to take (-1 at a goal and where
        unreachable).
    limit : float
        The field's limit (`flow_field`): cells dearer than it are ``inf``.
    """

    grid: CostGrid
    goals: tuple
    cost: np.ndarray
    step: np.ndarray
    limit: float = math.inf

    def cost_at(self, xy: tuple[float, float]) -> float:
        """Cost from the cell ``xy`` stands in (`CostGrid.stand`) to the nearest goal."""
        return float(self.cost[self.grid.stand(xy)])

    def path_from(self, xy: tuple[float, float]) -> list[tuple[float, float]]:
        """Cell centres from the cell ``xy`` stands in (`CostGrid.stand`) down the field
        to its goal.

        Raises
        ------
        NoRouteError
            No goal can be reached from there.
        """
        spec = self.grid.grid
        r, c = self.grid.stand(xy)
        if math.isinf(self.cost[r, c]):
            raise NoRouteError(f"no goal of the flow field can be reached from "
                               f"({xy[0]:g}, {xy[1]:g}) for {self.grid.unit.race}")
        st = self.grid.steps
        out = [spec.rc_to_xy((r, c))]
        while self.step[r, c] >= 0:
            k = self.step[r, c]
            r, c = r + int(st.dr[k]), c + int(st.dc[k])
            out.append(spec.rc_to_xy((r, c)))
        return out


def flow_field(
    grid: CostGrid, goals: Sequence[tuple[float, float]], limit: float = math.inf
) -> FlowField:
    """A field every cell can follow to the nearest goal along its cheapest route.

    Built backwards from the goals over reversed steps, each priced in the
    direction of travel toward the goal (uphill on steep ground, flat entry
    costs), so following it from a cell spends the field's cost there (to the
    last bits of rounding), which is the lattice route's cost to the goal
    (``route(..., any_angle=False)``), for a unit without rear ranks; an
    any-angle route, free of the lattice's steps, may cost a little less.  Of
    equally cheap steps a cell's is the lowest-numbered.  Each thread (numba's
    count) searches a band of rows; the bands then mend each other's costs
    across their borders (a second round, then one search over the whole grid
    for whatever is left), giving one search's costs.  A band
    with no goal in it or a step from it waits for the others' offers: on two
    threads the two bands meet at a goal's row instead, so both start at once,
    and they share the work evenly when that row is near the middle.

    A unit with rear ranks (``depth > 0``) pays for ground still under its
    footprint, which depends on the path it came by, not only on the cell;
    its field prices the front alone: a lower bound of its route's cost, and
    the route it leads along may cost that unit more (price it with
    `price_path`).  Likewise ground priced per started quantum (Battlesystem's
    light woods) is priced smoothly here; `price_path` rounds it.

    Parameters
    ----------
    grid : CostGrid
    goals : sequence of (x, y)
        One goal or several (the field leads to the nearest).
    limit : float
        Costs above it are not searched (``inf``: the whole battlefield).

    Returns
    -------
    FlowField

    Raises
    ------
    InputError
        No goals, a goal off the table or on impassable ground, a negative limit.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid, route
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/demo.geojson"), rules, rules.unit("humans", depth=0))
    >>> f = flow_field(g, [(90.25, 30.25)])
    >>> a, goal = (20.25, 20.25), (90.25, 30.25)
    >>> round(f.cost_at(a), 6), round(route(g, a, goal, any_angle=False).cost, 6)
    (71.231056, 71.231056)
    >>> round(route(g, a, goal).cost, 6)  # any-angle: the straight line
    70.710678
    >>> len(f.path_from((20.25, 20.25)))
    81
    """
    instance("grid", grid, CostGrid, "cost_grid")
    points = listed("goals", goals)
    if not points:
        raise InputError("a flow field needs at least one goal")
    limit = tame(limit)  # an int too large for a float is an infinite limit
    if not real(limit) or math.isnan(limit) or limit < 0:
        raise InputError(f"limit must be a number >= 0, got {shown(limit)}")
    cells = [named(f"goal {i}", _start_cell, grid, xy, "goal") for i, xy in enumerate(points)]
    field = _costs_to(grid, np.array(cells, dtype=np.int64), float(limit))
    if field is None:
        raise InputError(f"the flow field's queue would outgrow {_kernels.STACK_LIMIT:,} "
                         f"entries: its {grid.kernel_args.nb:,} buckets (the dearest step "
                         "against the shortest) are too many; use inf for ground nobody enters")
    dist, step = field
    shape = grid.grid.shape
    return FlowField(grid, tuple((float(x), float(y)) for x, y in points), dist.reshape(shape),
                     step.reshape(shape), float(limit))


def _costs_to(grid: CostGrid, cells: np.ndarray, limit: float = math.inf
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """`flow_field`'s costs and steps (flat rows) to the nearest of some cells (flat
    indices, int64, on passable ground; not checked), or None if the queue would
    outgrow `_kernels.STACK_LIMIT` (a bucket holds the cells as they start)."""
    a = grid.kernel_args
    n = grid.base.size
    bounds = _bands(grid.grid.shape[0], thread_count(), int(np.abs(a.step_dr).max()),
                    cells // a.cols) * a.cols
    bands = len(bounds) - 1
    width = _kernels.stack_width(n, a.nb)
    entries = np.uint32 if n <= _kernels.PACKED_CELLS else np.uint64  # a cell and its step
    while True:  # a bucket that outgrows its row of a stack: again, with room
        dist = np.full(n, np.inf)
        step = np.full(n, -1, dtype=np.int8)
        if _reverse_field(grid, cells, limit + _SLACK, bounds, dist, step,
                          np.empty((bands, a.nb, width), dtype=entries)) >= 0:
            return dist, step
        width *= 2
        if a.nb * width > _kernels.STACK_LIMIT:
            return None


def _reverse_field(grid: CostGrid, cells: np.ndarray, limit: float, bounds: np.ndarray,
                   dist: np.ndarray, step: np.ndarray, stacks: np.ndarray) -> int:
    """Cost from every cell to the nearest of ``cells``, one band of rows per thread.

    Band r holds cells ``bounds[r]`` to ``bounds[r + 1]`` (whole rows) and
    ``stacks[r]`` its queue (`_kernels.reverse_search`'s entries: uint32 on grids
    of at most `_kernels.PACKED_CELLS` cells, else uint64).  Each band searches
    on its own thread (`_kernels.field_band`), from the goals in it or a step
    from it, writing only its band's cells; a step into a cell of another band
    is posted instead.  In the second round each band takes every posted offer
    that beats its cell's cost as a seed and searches on from there.  On open
    ground that round has little to do; where the best routes cross a border
    again and again (a corridor along it) each crossing would cost a round, so
    whatever the second round still posts is taken on by one search over the
    whole grid (`_kernels.field_rest`), which posts nothing.  Then no step
    anywhere can lower a cost (the Bellman condition holds inside every band
    and across every border): the costs are the single search's, and each
    cell's step is the lowest-numbered of its cheapest, whatever the bands.
    ``dist`` must come in ``inf`` and ``step`` ``-1``.  Returns the number of
    cells expanded, or -1 if a bucket outgrew its row of a stack (the caller
    starts again with wider ones).
    """
    a = grid.kernel_args
    ground = (*a[:15], a.nb, a.flat, a.flat_of, a.enter, a.narrow, *grid.incoming_steps,
              a.onward_start, a.onward)
    goals = np.unique(cells)
    reach = int(max(np.abs(a.step_dr).max(), np.abs(a.step_dc).max()))
    bands = len(bounds) - 1
    cap = 2 * reach * a.cols * len(a.step_dr)  # steps out of the cells near a band's borders
    posts = (np.empty((2, bands, cap), dtype=np.int64), np.empty((2, bands, cap), dtype=np.int8),
             np.empty((2, bands, cap)))
    posted = np.zeros((2, bands), dtype=np.int64)
    settled = np.zeros(bands, dtype=np.int64)
    listed = np.empty(dist.size, dtype=np.int32)  # cells expanded after the first round
    dist[goals] = 0.0
    for rnd in range(2):
        on_threads(lambda r, rnd=rnd: _kernels.field_band(
            r, rnd, *ground, goals, limit, reach, bounds, dist, step, stacks, *posts, posted,
            settled, listed), bands)
        if (settled < 0).any():
            return -1
        if not posted[rnd].any():
            return int(settled.sum())
    n = _kernels.field_rest(*ground, limit, dist, step, stacks, *posts, posted, listed)
    return -1 if n < 0 else int(settled.sum()) + n


def _bands(rows: int, threads: int, reach: int, goal_rows: np.ndarray) -> np.ndarray:
    """First rows of the flow kernel's bands, and the end: one band per thread, each
    at least four steps (``reach`` rows) tall.  Two bands meet at the goal row
    nearest the middle when one of them would otherwise have no goal in it or a
    step from it (it would wait for the other's offers)."""
    tall = 4 * reach
    bands = max(1, min(threads, rows // tall))
    edges = np.linspace(0, rows, bands + 1).astype(np.int64)
    if bands == 2:
        mid = edges[1]
        if not ((goal_rows < mid + reach).any() and (goal_rows >= mid - reach).any()):
            nearest = goal_rows[np.argmin(np.abs(goal_rows - mid))]
            edges[1] = min(max(nearest, tall), rows - tall)
    return edges
