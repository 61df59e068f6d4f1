"""Search state reused between queries on one grid: costs, parents, queues and the
label pool, grown on demand and reset by the cells a search touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._threads import on_threads
from ..terrain.costgrid import CostGrid
from . import _kernels

__all__: list[str] = []  # private: the search's own modules use it

if TYPE_CHECKING:
    from .raw import _RawGrid

# Costs are sums of float products; a cell exactly at the allowance must count.
_SLACK = 1e-9
# Labels an any-angle search with rear ranks has room for at first (grown fourfold as
# it runs out).
_POOL = 1 << 14
# Labels the step lattice's search with rear ranks (`_kernels.search_labels`) has room
# for at first (grown as it runs out).
_LATTICE_POOL = 1 << 16
# Most items `_theta_runs` makes room for at first in each buffer of a thread (grown
# as they fill).
_BUFFER = 1 << 23
# No landmark bounds for A* (`engine.search.highway` passes its own).
_NO_LANDMARKS = (np.empty((0, 0), dtype=np.float32), np.empty((2, 0), dtype=np.float32))
_NO_ROWS = (np.empty(0, dtype=np.int32), np.empty(0))  # `CostGrid.outgoing_steps` not built


def _cells_around(g: CostGrid, at, far: float) -> tuple[int, int, int, int]:
    """The first and last rows and columns of the cells within ``far`` of the point
    ``at`` each way (a square, clipped to the grid)."""
    rows, cols = g.base.shape
    r0, r1 = (int(min(max((at[1] + s) / g.cell, 0.0), rows - 1.0)) for s in (-far, far))
    c0, c1 = (int(min(max((at[0] + s) / g.cell, 0.0), cols - 1.0)) for s in (-far, far))
    return r0, r1, c0, c1


def _near_quanta(g: CostGrid, at: tuple, budget: float) -> bool:
    """Whether a cell charged per started quantum lies within ``budget`` of the point
    ``at`` as the crow flies (no move costs less than its length, so a path within
    the budget touches none otherwise)."""
    if not g.quantum.any():
        return False
    r0, r1, c0, c1 = _cells_around(g, at, budget)
    q = g.quantised
    return q[r1 + 1, c1 + 1] - q[r0, c1 + 1] - q[r1 + 1, c0] + q[r0, c0] != 0


class _Labels(NamedTuple):
    """`_kernels.search_labels`' pool of labels, in its order (`_kernels.label_pool`)."""

    cost: np.ndarray
    cell: np.ndarray
    prev: np.ndarray
    step: np.ndarray
    n: np.ndarray
    lv: np.ndarray
    rem: np.ndarray
    next: np.ndarray
    state: np.ndarray
    pos: np.ndarray
    link: np.ndarray
    hkey: np.ndarray
    hidx: np.ndarray

    @classmethod
    def pool(cls, size: int, width: int) -> _Labels:
        """Room for ``size`` labels whose trails hold up to ``width`` levels."""
        return cls(*_kernels.label_pool(size, width))


@dataclass(eq=False)
class _Workspace:
    """Search state reused between queries; only touched cells are reset."""

    dist: np.ndarray
    parent: np.ndarray
    pos: np.ndarray
    hkey: np.ndarray
    hidx: np.ndarray
    touched: np.ndarray
    link: np.ndarray
    # `_kernels.search_labels`' pool of labels (a unit with rear ranks), made bigger when
    # it runs out; how many the last search used, the one that reached the goal, and
    # the cells' `beat` costs.
    labels: _Labels | None = None
    used: int = 0
    found: int = -1
    beat: np.ndarray = field(default_factory=lambda: np.empty(0))
    # `_kernels.search_plain`'s buckets (a row each), widened when one overflows.
    stack: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.int32))
    # Grids whose stack outgrew `_kernels.STACK_LIMIT`, by their `KernelArgs`' ids (each
    # kept, so that no other takes its id): they take `_kernels.search` from then on.
    linked: dict = field(default_factory=dict)

    @classmethod
    def for_cells(cls, n: int, plain: bool = False) -> _Workspace:
        """State for ``n`` cells; ``plain`` (raw grids) leaves out `_kernels.search`'s queue."""
        q = 0 if plain else n
        return cls(
            dist=np.full(n, np.inf),
            parent=np.full(n, -1, dtype=np.int8),
            pos=np.full(q, -1, dtype=np.int32),
            hkey=np.empty(0),
            hidx=np.empty(0, dtype=np.int32),
            touched=np.empty(n, dtype=np.int32),
            link=np.empty(2 * q, dtype=np.int32),
        )

    def run(self, g: CostGrid | _RawGrid, source: int, goal: int, budget: float,
            landmarks: tuple = _NO_LANDMARKS, lowest: bool = False) -> int:
        if g.depth > 0:
            return self._labelled(g, source, goal, budget, landmarks)
        a = g.kernel_args
        n = -1
        # An A* with landmarks, or too big for the whole table, reads the shared rows
        # if they are built (`Highway` builds them: a reach would pay for every row).
        row, cost = _NO_ROWS
        if isinstance(g, CostGrid) and goal >= 0 and (
                landmarks[1].size or not a.table_cost.size):
            row, cost = vars(g).get("outgoing_steps", _NO_ROWS)
        if self.linked.get(id(a)) is not a and (not isinstance(g, CostGrid) or row.size or (
                a.table_cost.size and not landmarks[1].size)):
            rows = _kernels.stack_rows(a.nb, goal >= 0, _kernels.ASTAR_SPLIT)
            n = self._stacked(rows, lambda stack: (
                _kernels.search_plain(
                    a.base, a.cols, a.step_dr, a.step_dc, a.step_len, a.piece_start, a.piece_dr,
                    a.piece_dc, a.piece_w, a.nb, cost if row.size else a.table_cost, row,
                    a.flat, a.flat_of, a.onward_start, a.onward, source, goal,
                    g.cell, budget, self.dist, self.parent, self.touched, stack, lowest,
                    *landmarks,
                )
            ))
        if n >= 0:
            return n
        if n == -2:
            self.linked[id(a)] = a
        if self.pos.size == 0:  # a raw grid's workspace, whose stack outgrew its limit
            self.pos = np.full(self.dist.size, -1, dtype=np.int32)
            self.link = np.empty(2 * self.dist.size, dtype=np.int32)
        if goal >= 0 and self.hkey.size == 0:  # A*'s heap, only when asked for
            self.hkey = np.empty(self.dist.size)
            self.hidx = np.empty(self.dist.size, dtype=np.int32)
        return _kernels.search(
            *a, source, goal, g.cell, budget,
            self.dist, self.parent, self.pos, self.hkey, self.hidx, self.touched, self.link,
            *landmarks,
        )

    def _labelled(self, g: CostGrid, source: int, goal: int, budget: float,
                  landmarks: tuple) -> int:
        """`_kernels.search_labels` to ``goal``, its pool grown until it does not run
        out; sets `found`, returns the number of cells touched."""
        width = g.trail_width
        while True:
            if self.labels is None or self.labels.lv.shape[1] < width:
                self.labels = _Labels.pool(_LATTICE_POOL, width)
            if not self.beat.size:
                self.beat = np.full(self.dist.size, np.inf)
            n, self.found, self.used = _kernels.search_labels(
                *g.kernel_args, source, goal, g.cell, budget, g.merging, self.dist, self.pos,
                self.beat, self.touched, *landmarks, *self.labels,
            )
            if self.used >= 0:
                return n
            self.reset(n)
            self.labels = _Labels.pool(4 * self.labels.cost.size, width)

    def path(self, g: CostGrid, source: int, target: int) -> list[int]:
        """The cells from ``source`` to ``target`` of the last search (before `reset`)."""
        if g.depth > 0:
            return _kernels.trace_labels(self.labels.prev, self.labels.cell, self.found).tolist()
        return _trace(g, self.parent, source, target)

    def _stacked(self, rows: int, kernel) -> int:
        """Run a kernel on stack buckets (``kernel(stack)``), widening ``stack`` until
        no bucket outgrows its row; returns the cells it touched, or -2 (nothing
        touched) if the stack would outgrow ``_kernels.STACK_LIMIT``."""
        if self.stack.shape[0] < rows:
            width = self.stack.shape[1] or _kernels.stack_width(self.dist.size, rows)
            self.stack = np.empty((rows, width), dtype=np.int32)
        while (n := kernel(self.stack)) < 0:
            self.reset(-n)  # a bucket outgrew its row: again, with room
            if 2 * self.stack.size > _kernels.STACK_LIMIT:
                self.stack = np.empty((0, 0), dtype=np.int32)
                return -2
            self.stack = np.empty((self.stack.shape[0], 2 * self.stack.shape[1]), dtype=np.int32)
        return n

    def within(self, g: CostGrid | _RawGrid, source: int, budget: float):
        """Flat indices and costs of the cells within ``budget`` of ``source``.

        On ground priced per started quantum the costs are the rulebook's
        (`_quantised`), not the search's smooth ones.
        """
        if isinstance(g, CostGrid) and g.quantum.any():
            return _quantised(g, self, source, budget)
        n = self.run(g, source, -1, budget + _SLACK)
        try:
            idx = self.touched[:n].astype(np.int64)
            cost = self.dist[idx]
        finally:
            self.reset(n)
        keep = cost <= budget + _SLACK
        return idx[keep], cost[keep]

    def reset(self, n: int) -> None:
        _kernels.reset(self.touched, n, self.dist, self.parent, self.pos, self.beat)


@dataclass(eq=False)
class _Nodes:
    """`_kernels.theta_search`'s state for one grid size: a node per cell and one for a
    goal, at rest between searches (`_kernels.reset_nodes`)."""

    dist: np.ndarray
    parent: np.ndarray
    state: np.ndarray
    hkey: np.ndarray
    hidx: np.ndarray
    pos: np.ndarray
    touched: np.ndarray
    tried: np.ndarray
    stamp: np.ndarray

    @classmethod
    def for_cells(cls, n: int) -> _Nodes:
        return cls(
            dist=np.full(n + 1, np.inf),
            parent=np.full(n + 1, -1, dtype=np.int32),
            state=np.zeros(n + 1, dtype=np.uint8),
            hkey=np.empty(n + 1),
            hidx=np.empty(n + 1, dtype=np.int32),
            pos=np.empty(n + 1, dtype=np.int32),
            touched=np.empty(n + 1, dtype=np.int32),
            tried=np.full(n + 1, -1, dtype=np.int64),
            stamp=np.zeros(1, dtype=np.int64),
        )

    def run(self, g: CostGrid, source: int, start, goal: int = -1, end=(0.0, 0.0),
            budget: float = np.inf) -> int:
        """Theta* from the point ``start`` in cell ``source``, within ``budget`` or to the
        point ``end`` in cell ``goal`` (node ``g.base.size``); returns the nodes touched."""
        a = g.kernel_args
        return _kernels.theta_search(
            a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow, g.clearance,
            g.alike, g.least, a.cols, g.cell,
            source, float(start[0]), float(start[1]), goal,
            float(end[0]), float(end[1]), budget, *g.edge_steps, *g.longer_steps, self.dist,
            self.parent, self.state, self.hkey, self.hidx, self.pos, self.touched, self.tried,
            self.stamp,
        )

    def path(self, g: CostGrid, nt: int) -> list[int]:
        """The nodes of the last A* from its start to its goal node (empty if it did not
        reach it), the workspace put to rest."""
        goal = g.base.size
        nodes = []
        if self.dist[goal] < np.inf:
            v = goal
            while v >= 0:
                nodes.append(int(v))
                v = self.parent[v]
            nodes.reverse()
        _kernels.reset_nodes(self.touched, nt, self.dist, self.parent, self.state)
        return nodes


class _KeptLabels(NamedTuple):
    """The paths an any-angle reach keeps with rear ranks or near ground priced per
    started quantum: every label's cell, cost, the label it came from (-1 for the
    start's, label 0) and where it stands (the start for label 0, a point a hair
    from it for a first step that faces the unit another way, `facing_points`,
    else its cell's centre), and the cheapest label of each of the reach's cells,
    in its order; and the first of the labels of the step lattice's paths
    (`_with_lattice`), -1 if none are kept."""

    cell: np.ndarray
    cost: np.ndarray
    prev: np.ndarray
    x: np.ndarray
    y: np.ndarray
    best: np.ndarray
    lattice: int = -1


@dataclass(eq=False)
class _Trails:
    """`_kernels.theta_labels`' state for one grid size: per cell its cheapest cost, its
    labels' list and `beat` cost (at rest between searches), the straight moves
    priced, and the label pool, made bigger when it runs out."""

    dist: np.ndarray
    head: np.ndarray
    beat: np.ndarray
    touched: np.ndarray
    tried: np.ndarray
    stamp: np.ndarray
    labels: _Labels | None = None
    at: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    @classmethod
    def for_cells(cls, n: int) -> _Trails:
        return cls(
            dist=np.full(n, np.inf),
            head=np.full(n, -1, dtype=np.int64),
            beat=np.full(n, np.inf),
            touched=np.empty(n, dtype=np.int64),
            tried=np.full(n, -1, dtype=np.int64),
            stamp=np.zeros(1, dtype=np.int64),
        )

    def pool(self, width: int) -> _Labels:
        """The label pool (and `at`), made anew unless its trails hold ``width`` levels."""
        if self.labels is None or self.labels.lv.shape[1] < width:
            self.labels = _Labels.pool(_POOL, width)
            self.at = np.empty(self.labels.cost.size, dtype=np.int64)
        return self.labels


# A unit with rear ranks may first step this far (times the cell) in one of `FACINGS`
# directions, to stand its ranks behind it facing that way (`facing_points`).
FACE_STEP = 1e-3
FACINGS = 32
_TURNS = 2.0 * np.pi * np.arange(FACINGS) / FACINGS
# (rounded: exactly along an axis, 4 of them)
_FACING_DIRS = np.stack([np.round(np.cos(_TURNS), 12), np.round(np.sin(_TURNS), 12)], axis=1)


def facing_points(g: CostGrid, points: np.ndarray, ways: np.ndarray = _FACING_DIRS
                  ) -> np.ndarray:
    """For each of ``points`` (rows ``(x, y)``), the points a first step a hair long
    (`FACE_STEP` cells) reaches in each of the directions ``ways`` (rows of unit
    vectors; `FACINGS` of them unless given), kept on the table: ``out[u, k]`` is
    ``(x, y)``, NaN for a step kept on the table back to where it starts (straight
    off it)."""
    at = points[:, None, :]
    out = at + (FACE_STEP * g.cell) * ways[None, :, :]
    np.clip(out[..., 0], 0.0, g.grid.width, out=out[..., 0])
    np.clip(out[..., 1], 0.0, g.grid.height, out=out[..., 1])
    out[(out == at).all(axis=2)] = np.nan
    return out


def _theta_within(g: CostGrid, source: int, start, budget: float, aim=None) -> tuple:
    """Cells within ``budget`` of the point ``start`` (in cell ``source``): flat indices,
    costs and parents (the cell the cheapest path's last straight move leaves
    from; -1 for the start's cell), cheapest first, and with rear ranks the paths
    kept (`_KeptLabels`); searched in the any-angle workspace of ``g``'s
    battlefield (`_theta_runs`).  With rear ranks, ``aim`` (a point) keeps only
    the paths that may go on to it within ``budget`` (`_kernels.theta_labels`)."""
    space = _trails(g) if g.depth > 0 else _nodes(g)
    return _theta_runs(g, [start], [source], budget, [space],
                       None if aim is None else np.array([aim], dtype=np.float64))[0]


def _theta_many(g: CostGrid, points: list, sources: list[int], budget: float,
                threads: int) -> list[tuple]:
    """`_theta_within`'s answer for each of many starts, the points ``points`` in
    cells ``sources``, on ``threads`` threads, each in a workspace of its own kept
    with the battlefield (`_theta_runs`)."""
    if g.depth > 0:
        spaces = [_kept(g, ("trails_many", t), _Trails.for_cells) for t in range(threads)]
    else:
        spaces = [_kept(g, ("nodes_many", t), _Nodes.for_cells) for t in range(threads)]
    return _theta_runs(g, points, sources, budget, spaces)


def _theta_runs(g: CostGrid, points: list, sources: list[int], budget: float,
                spaces: list, aims: np.ndarray | None = None) -> list[tuple]:
    """The any-angle reaches within ``budget`` of the points ``points`` (in cells
    ``sources``), `_theta_within`'s answer for each: thread t of
    ``len(spaces)`` runs its share of them in one call of `_kernels.many_theta`
    (with rear ranks `_kernels.many_trails`, each aimed at its row of ``aims``,
    if given) in the workspace ``spaces[t]`` (`_Nodes`, `_Trails`).  The
    answers' arrays are views of a few buffers per thread, written one reach
    after another."""
    threads = len(spaces)
    n = len(sources)
    src = np.array(sources, dtype=np.int64)
    xy = np.array(points, dtype=np.float64).reshape(n, 2)
    if aims is None:
        aims = np.full((n, 2), np.nan)
    faces = facing_points(g, xy) if g.depth > 0 else None
    at, count = np.empty((2, 2, n), dtype=np.int64)  # where each reach's items are, how many
    # Every reached cell's centre lies within budget / least of its start: room for
    # that disc for each unit (pages never written are never resident).
    radius = budget / (g.least * g.cell) + 2.0
    size = -(-n // threads) * int(min(g.base.size, math.pi * radius * radius + 16))
    size = min(size, _BUFFER)
    a = g.kernel_args
    grid = (a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow, g.clearance, g.alike,
            g.least, a.cols, g.cell)
    out: list = [None] * threads
    if g.depth > 0:
        def work(t: int) -> None:
            s, width = spaces[t], g.trail_width
            done = _kernels.many_trails(
                t, threads, *grid, float(g.unit.depth), src, xy, aims, faces, budget + _SLACK,
                g.merging, *g.longer_steps[:2], s.dist, s.head, s.beat, s.touched, s.tried,
                s.stamp,
                tuple(s.pool(width)), s.at, width, np.empty(size, dtype=np.int64),
                np.empty(size), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
                at[0], count[0], np.empty(2 * size, dtype=np.int64), np.empty(2 * size),
                np.empty(2 * size, dtype=np.int64), np.empty(2 * size), np.empty(2 * size),
                at[1], count[1])
            out[t], s.labels, s.at = done[:9], _Labels(*done[9]), done[10]
    else:
        def work(t: int) -> None:
            s = spaces[t]
            out[t] = _kernels.many_theta(
                t, threads, *grid, src, xy, budget + _SLACK, *g.edge_steps, *g.longer_steps,
                s.dist, s.parent, s.state, s.hkey, s.hidx, s.pos, s.touched, s.tried, s.stamp,
                np.empty(size, dtype=np.int64), np.empty(size), np.empty(size, dtype=np.int64),
                at[0], count[0])

    on_threads(work, threads)
    found = []
    first, counts = at.tolist(), count.tolist()
    for u in range(n):
        bufs = out[u % threads]
        cut = slice(first[0][u], first[0][u] + counts[0][u])
        if g.depth == 0:
            found.append((bufs[0][cut], bufs[1][cut], bufs[2][cut]))
            continue
        labels = slice(first[1][u], first[1][u] + counts[1][u])
        found.append((bufs[0][cut], bufs[1][cut], bufs[2][cut], _KeptLabels(
            *(b[labels] for b in bufs[4:9]), bufs[3][cut])))
    return found


def _nodes(g: CostGrid) -> _Nodes:
    """The any-angle workspace of a grid's battlefield."""
    return _kept(g, "nodes", _Nodes.for_cells)


def _trails(g: CostGrid) -> _Trails:
    """The any-angle workspace of a grid's battlefield for a unit with rear ranks."""
    return _kept(g, "trails", _Trails.for_cells)


def _workspace(g: CostGrid) -> _Workspace:
    return _kept(g, "workspace", _Workspace.for_cells)


def _kept(g: CostGrid, key: str, make):
    """The battlefield's ``key`` workspace, made by ``make(cells)`` the first time."""
    cache = g.battlefield._cache
    ws = cache.get(key)
    if ws is None:
        ws = cache[key] = make(g.base.size)
    return ws


def _many_workspace(g: CostGrid, threads: int) -> tuple:
    """Per-thread search state for `reach_many`, cached on the battlefield."""
    key = ("workspace_many", threads, g.depth > 0)
    ws = g.battlefield._cache.get(key)
    if ws is None:
        n = g.base.size
        ws = g.battlefield._cache[key] = (
            np.full((threads, n), np.inf),
            np.full((threads, n), -1, dtype=np.int8),
            np.full((threads, n), -1, dtype=np.int32),
            np.empty((threads, n), dtype=np.int32),
            np.empty((threads, 2 * n), dtype=np.int32),
            np.full((threads, n if g.depth > 0 else 0), np.inf),  # `search_labels`' beat
        )
    return ws


def _quantised(g: CostGrid, ws: _Workspace, source: int, budget: float):
    """`_Workspace.within` on ground priced per started quantum.

    The search runs on the smooth multiplier, so no cell is cheaper by it than
    by the rulebook; then each cell's cost is recomputed along the paths the
    search kept (one a cell, or with rear ranks every label) with every
    stretch of quantised ground rounded up to whole quanta
    (`_kernels.settle_quanta`, the pricer's arithmetic), and only the cells
    still within the allowance are kept, at their cheapest.
    """
    # Of equally cheap steps into a cell the lowest-numbered, whatever the queue's order.
    n = ws.run(g, source, -1, budget + _SLACK, lowest=True)
    try:
        if g.depth > 0:  # every label kept: its cell, cost, the label and step it came from
            lab = ws.labels
            cost, cell, prev, step, state = (
                x[:ws.used] for x in (lab.cost, lab.cell, lab.prev, lab.step, lab.state))
            live = ((state & 3) != _kernels.DROPPED) & (cost <= budget + _SLACK)
            node = np.flatnonzero(live)
            cost, cell, prev, step = cost[node], cell[node], prev[node], step[node]
        else:
            cell, cost, step, prev = _steps_taken(g, ws, source, budget, n)
            node = cell
    finally:
        ws.reset(n)
    order = np.argsort(cost, kind="stable")
    cell, cost, step = cell[order].astype(np.int64), cost[order], step[order].astype(np.int64)
    # Parents by their place in this order (every parent is kept: it costs no more).
    ids, prev = node[order], prev[order]
    parent = _places(ids, prev)
    a = g.kernel_args
    out = np.empty(cell.size)
    _kernels.settle_quanta(
        cell, cost, parent, step, a.base, a.steep, a.slope_of, a.slopes, a.cols,
        a.step_dr, a.step_dc, a.step_len, a.ux, a.uy, a.piece_start, a.piece_dr, a.piece_dc,
        a.piece_w, g.cell_quantum, out,
    )
    # Each cell at its cheapest node, in the order the cheapest were found.
    by_cell = np.lexsort((out, cell))
    first = np.ones(by_cell.size, dtype=bool)
    first[1:] = cell[by_cell[1:]] != cell[by_cell[:-1]]
    best = np.sort(by_cell[first])
    keep = out[best] <= budget + _SLACK
    return cell[best][keep], out[best][keep]


def _places(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` is in ``ids`` (distinct, and holding every one of
    them that is not negative); -1 for a negative one."""
    by_id = np.argsort(ids)
    place = by_id[np.minimum(np.searchsorted(ids[by_id], wanted), ids.size - 1)]
    return np.where(wanted < 0, -1, place)


def _steps_taken(g: CostGrid, ws: _Workspace, source: int, budget: float, n: int):
    """The last search of ``ws`` on the step lattice from the centre of cell ``source``
    (a unit without rear ranks; ``n`` cells touched, not yet `reset`): each cell
    within ``budget``, its smooth cost, the step into it and the cell that step
    leaves (-1 for ``source``)."""
    cell = ws.touched[:n].astype(np.int64)
    cost = ws.dist[cell]
    step = ws.parent[cell] & (_kernels.CLOSED - 1)  # expanded: | CLOSED
    keep = cost <= budget + _SLACK
    cell, cost, step = cell[keep], cost[keep], step[keep]
    a = g.kernel_args
    prev = np.full(cell.size, -1, dtype=np.int64)
    moved = cell != source
    prev[moved] = cell[moved] - (a.step_dr * a.cols + a.step_dc)[step[moved]]
    return cell, cost, step, prev


def _with_lattice(g: CostGrid, start, budget: float, cells: np.ndarray, cost: np.ndarray,
                  parent: np.ndarray) -> _KeptLabels:
    """The paths of an any-angle reach without rear ranks (``cells``, ``cost`` and
    ``parent``, the start's first) beside those of the step lattice's search
    from the centre of the start's cell, reached from ``start`` by a straight
    move: `_quantised_moves`' candidates.  The smooth search crosses a strip
    of ground priced per started quantum where the smooth cost is least,
    often on a slant that starts one quantum more than crossing it square;
    the lattice's steps cross such a strip square where they can.  Each path
    keeps its smooth cost, so both are priced by the same rounding.
    """
    prev = _places(cells, parent)
    source = int(cells[0])
    ws = _workspace(g)
    n = ws.run(g, source, -1, budget + _SLACK, lowest=True)
    try:
        more, smooth, _, up = _steps_taken(g, ws, source, budget, n)
    finally:
        ws.reset(n)
    # The straight move from the start to its cell's centre, where the lattice starts.
    a, cols = g.kernel_args, g.grid.shape[1]
    cx, cy = (source % cols + 0.5) * g.cell, (source // cols + 0.5) * g.cell
    first = np.empty(1)
    _kernels.point_cost(cx, cy, np.array([float(start[0])]), np.array([float(start[1])]),
                        np.array([source]), np.zeros(1), a.base, a.steep, a.slope_of,
                        a.slopes, a.enter, a.narrow, g.clearance, cols, g.cell, first)
    up = _places(more, up)
    up = np.where(up < 0, 0, up + cells.size)  # from the start's centre: label 0's
    every = np.concatenate([cells, more])
    xs, ys = (every % cols + 0.5) * g.cell, (every // cols + 0.5) * g.cell
    xs[0], ys[0] = start  # the start's own node (label 0)
    return _KeptLabels(every, np.concatenate([cost, smooth + first[0]]),
                       np.concatenate([prev, up]), xs, ys, np.arange(cells.size), cells.size)


def _quantised_moves(g: CostGrid, start, budget: float, cells: np.ndarray, cost: np.ndarray,
                     parent: np.ndarray, kept: _KeptLabels | None = None):
    """An any-angle reach (`_theta_within`'s, ``kept`` its paths with rear ranks) on
    ground priced per started quantum: ``(cells, cost, parent, kept)``.

    The search runs on the smooth multiplier, so no path is cheaper by it than
    by the rulebook; then each path it kept (one a cell, or with rear ranks
    every label; without rear ranks, the step lattice's too, `_with_lattice`)
    is priced with every stretch of quantised ground rounded up to whole
    quanta (`_kernels.settle_moves`, the pricer's arithmetic), and each cell
    whose cheapest path is still within the allowance is kept at that price.
    ``kept`` holds the paths with their smooth costs (no more than their
    price: `Reach.cost_at`'s bound).
    """
    if kept is None:
        kept = _with_lattice(g, start, budget, cells, cost, parent)
    cols, cell = g.grid.shape[1], g.cell
    # Cheapest first, so every parent before its children (labels reuse the slots of
    # those beaten, so their numbers are not in that order).
    order = np.argsort(kept.cost, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    prev = kept.prev[order]
    a = g.kernel_args
    out = np.empty(kept.cell.size)
    _kernels.settle_moves(kept.x[order], kept.y[order], np.where(prev < 0, -1, rank[prev]),
                          kept.cost[order], a.base, a.steep, a.slope_of, a.slopes,
                          g.cell_quantum, cols, cell, budget + _SLACK, out)
    out = out[rank]
    # Each cell at its cheapest path within the allowance, cheapest first.
    live = np.flatnonzero(out < np.inf)
    live = live[np.lexsort((out[live], kept.cell[live]))]
    first = np.ones(live.size, dtype=bool)
    first[1:] = kept.cell[live[1:]] != kept.cell[live[:-1]]
    best = live[first]
    best = best[np.argsort(out[best], kind="stable")]
    up = kept.prev[best]
    return (kept.cell[best], out[best], np.where(up >= 0, kept.cell[np.maximum(up, 0)], -1),
            kept._replace(best=best))


def _trace(g: CostGrid, parent: np.ndarray, source: int, target: int) -> list[int]:
    """Cells from source to target, following the steps that reached them."""
    cols = g.grid.shape[1]
    st = g.steps
    cells = [target]
    while cells[-1] != source:
        k = parent[cells[-1]] & (_kernels.CLOSED - 1)  # expanded cells carry CLOSED
        cells.append(cells[-1] - int(st.dr[k]) * cols - int(st.dc[k]))
    cells.reverse()
    return cells
