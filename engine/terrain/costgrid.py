"""Terrain layers and per-unit cost grids.

Data flows one way: a `Battlefield`'s features are rasterised once into
terrain layers (`Layers`: which kinds cover each cell, hill elevation, steep
ground), then priced for one unit profile into a `CostGrid`: a multiplier per
cell, the extra paid uphill on steep ground with the slopes that decide it,
the step neighbourhood and the footprint the unit starts with.  Both are
cached on the battlefield; the search applies the rear-rank trail itself.

Rasterising: an area feature covers the cells whose centre lies inside it; a
line feature (a strip of its width) covers every cell it overlaps with positive
area, so a wall or river is never thinner than the grid can see.

Hills: a hill's height rises linearly with the distance from its outline, from
0 on the outline to ``elevation`` on its crest, the points farthest from the
outline (the centre of its largest inscribed circle; a ridge for a long hill).
Overlapping hills add up.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.ndimage import distance_transform_cdt, maximum_filter

from .._args import instance, non_negative
from .._threads import on_threads, thread_count
from ..errors import InputError
from ..grid import _EPS, GridSpec, check_directions
from ..maps.battlefield import Battlefield
from ..rules.ruleset import Ruleset, Unit
from . import _kernels
from .ground import combo_quantum, price_kinds
from .lattice import Steps, _distinct_rows, bucket_count, steps, trail_behind
from .raster import Layers, kind_cells, layers, narrowing, unit_mask

__all__ = ["CostGrid", "cost_grid"]
# Largest per-grid table of precomputed step costs (bigger grids price steps as they go),
# of the rows of steps into and out of cells that are not flat (`CostGrid.incoming_steps`,
# `CostGrid.outgoing_steps`), and of the steps the any-angle search keeps (`edge_steps`).
_TABLE_BYTES = 128 * 2**20
_ROWS_CHUNK = 2**18  # cells whose rows of steps are built at a time (72 MiB at 32 directions)


@dataclass(frozen=True, eq=False)
class CostGrid:
    """What one unit pays on one battlefield: the input of every search.

    Attributes
    ----------
    battlefield : Battlefield
    rules : Ruleset
    unit : Unit
    layers : Layers
    base : ndarray of float64
        Direction-free multiplier per cell (product of its layers; ``inf``
        where impassable).
    steep : ndarray of float64
        Extra multiplier paid moving uphill (1 where the ground is not steep).
    slope : tuple of ndarray
        ``(slope_of, slopes)``: each cell's row of the table of its ground's
        slopes (`Layers.slope_of`, `Layers.slopes`).
    combo : ndarray of int32
        Index into `combos`: which kinds cover the cell.
    combos : list of tuple of str
    steps : Steps
    footprint : tuple of ndarray
        ``(start, dr, dc, rem)``: for each step direction, the cells under a
        footprint standing straight behind a cell centre (`trail_behind`),
        ``rem`` in table units.
    enter : ndarray of float64
        An obstacle's flat crossing cost, paid stepping into a cell from one
        with another (or none); 0 elsewhere.
    narrow : ndarray of float64
        The ruleset's ``formation_change`` on passages narrower than the
        unit's frontage that it relies on (ground it could not enter, or would
        pay more for, without them), paid stepping in from a cell without one
        (`_kernels.entry`); 0 elsewhere.
    quantum : ndarray of float64
        Per combo (like `combos`): the quantum its ground is charged in (a
        ruleset's "per started 2 inches"), 0 for none.
    """

    battlefield: Battlefield
    rules: Ruleset
    unit: Unit
    layers: Layers
    base: np.ndarray
    steep: np.ndarray
    slope: tuple
    combo: np.ndarray
    combos: list
    steps: Steps
    footprint: tuple
    enter: np.ndarray
    narrow: np.ndarray
    quantum: np.ndarray

    @property
    def grid(self) -> GridSpec:
        """The raster this grid lives on."""
        return self.layers.grid

    @property
    def cell(self) -> float:
        """Side of a cell in table units."""
        return self.grid.cell

    @property
    def depth(self) -> float:
        """The unit's footprint depth."""
        return self.unit.depth

    def _for(self, unit: Unit) -> CostGrid:
        """This grid for a unit that pays the same (the same `Unit.key`) but moves
        differently (its allowance, its charge bonus): the costs, and what has been
        built from them so far, are shared."""
        twin = dataclasses.replace(self, unit=unit)
        twin.__dict__.update((k, v) for k, v in vars(self).items() if k not in vars(twin))
        return twin

    def stand(self, xy: tuple[float, float]) -> tuple[int, int]:
        """The cell a unit at the table point ``xy`` stands in, as ``(row, column)``.

        That is the cell holding ``xy``, unless ``xy`` lies on the edge or
        corner of cells (within the pricing walk's tolerance): then it is the
        passable one of them that charges least at once on entry (an
        obstacle's crossing, a formation change); on a tie, the cell holding
        it, else the one beside that in its row.  A unit standing on the edge
        of a hedge or a bridge has not crossed or entered it: a move onto it
        pays what entering it costs; and a point on a building's edge can be
        reached from outside.

        Raises
        ------
        InputError
            ``xy`` is off the table.
        """
        r, c = self.grid.xy_to_rc(xy)
        rows, cols = self.grid.shape
        r0, r1 = _kernels.touched_lines(float(xy[1]) / self.cell, r, rows, _EPS)
        c0, c1 = _kernels.touched_lines(float(xy[0]) / self.cell, c, cols, _EPS)
        best, least = (r, c), (math.inf, True, True)
        for rr in range(r0, r1 + 1):
            for cc in range(c0, c1 + 1):
                if self.base[rr, cc] < math.inf:  # the least at once, then nearest (r, c)
                    key = (float(self.enter[rr, cc] + self.narrow[rr, cc]), rr != r, cc != c)
                    if key < least:
                        best, least = (rr, cc), key
        return best

    def stand_index(self, xy: tuple[float, float]) -> int:
        """`stand` as a flat index of the grid's cells (row x columns + column)."""
        r, c = self.stand(xy)
        return r * self.grid.shape[1] + c

    def within_turn(self, allowance: float) -> CostGrid:
        """This grid with the passable cells a turn of ``allowance`` cannot enter made
        impassable: those charging more than that at once on entry (an obstacle, a
        formation change) or for their first started quantum; itself if none.
        `InputError` unless ``allowance`` is a finite number >= 0."""
        non_negative("allowance", allowance)
        with np.errstate(invalid="ignore"):  # inf x 0: no quantum on impassable ground
            first = self.quantum[self.combo] * self.base
        block = np.isfinite(self.base) & ((self.enter > allowance) | (self.narrow > allowance)
                                          | (first > allowance))
        if not block.any():
            return self
        return dataclasses.replace(self, base=np.where(block, np.inf, self.base))

    @functools.cached_property
    def kernel_args(self) -> KernelArgs:
        """What the search kernels take (built once, step table included)."""
        return kernel_args(self.base, self.steps, self.steep, self.slope, self.unit.depth,
                           self.footprint, enter=self.enter, narrow=self.narrow)

    @functools.cached_property
    def alike(self) -> np.ndarray:
        """Per cell (flat, float64): the multiplier of ground a straight move prices
        as that multiplier times its length, NaN elsewhere.

        Ground is alike where the multipliers are equal and finite, with no
        steep multiplier (uphill depends on the direction) and no flat entry
        cost; any other cell (NaN) is alike to none.
        """
        return np.where(np.isfinite(self.base) & (self.steep == 1.0) & (self.enter == 0.0)
                        & (self.narrow == 0.0), self.base, np.nan).ravel()

    @functools.cached_property
    def least(self) -> float:
        """The lowest multiplier anywhere (``inf`` if all is impassable): no move costs
        less than this times its length."""
        finite = self.base[np.isfinite(self.base)]
        return float(finite.min()) if finite.size else math.inf

    @functools.cached_property
    def clearance(self) -> np.ndarray:
        """Per cell (flat, int32): how many cells each way the ground around it is
        `alike`, so that a straight move inside that square box costs the cell's
        multiplier times its length (the any-angle search prices it so, unwalked).

        The box reaches as far as the nearest cell with a neighbour unlike
        itself (a chessboard distance transform).
        """
        kind = self.alike.reshape(self.base.shape)
        edge = np.isnan(kind)
        h, w = kind.shape
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):  # each pair of neighbours once
            a = (slice(0, h - dr), slice(max(-dc, 0), w - max(dc, 0)))
            b = (slice(dr, h), slice(max(dc, 0), w + min(dc, 0)))
            unlike = kind[a] != kind[b]
            edge[a] |= unlike
            edge[b] |= unlike
        if not edge.any():  # alike everywhere (the transform would answer -1)
            return np.full(kind.size, max(h, w), dtype=np.int32)
        return distance_transform_cdt(~edge, metric="chessboard").astype(np.int32).ravel()

    @functools.cached_property
    def edge_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Where the any-angle search keeps the prices of the steps it walks, for a
        unit without rear ranks: ``(row, cost)``, ``cost[row[a] * 8 + k]`` the
        price of the straight move from the centre of cell ``a`` to its k-th
        neighbour's (row by row, the cell itself skipped), 0 until a search
        walks it (a price of 0 is walked again).

        Only a cell on the edge of its ground (`clearance` 0) has a row: a step
        from any other stays on one alike ground and costs its multiplier times
        its length, unwalked.  ``row`` is -1 elsewhere (flat, int32), and
        everywhere if the rows would take more than ``_TABLE_BYTES`` (128
        MiB: then every step is walked as it comes).  The searches fill ``cost`` as they
        go, on every thread: each writes a step's price, the same whoever
        walks it, so a value read is either 0 or that price.  Its pages are
        taken only as rows are written.
        """
        edge = self.clearance == 0
        count = int(np.count_nonzero(edge))
        if 8 * 8 * count > _TABLE_BYTES:
            edge[:], count = False, 0
        row = np.where(edge, np.cumsum(edge) - 1, -1).astype(np.int32)
        return row, np.zeros(8 * count)

    @functools.cached_property
    def longer_steps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The steps of the grid's lattice (`steps`) longer than to a neighbour, which
        the any-angle search also takes from a cell near a slope or impassable
        ground, and where it keeps their prices: ``(offsets, row, cost)``.

        ``offsets[k]`` is step k's ``(drow, dcol)`` (int64, shape ``(K, 2)``; no
        rows where no cell takes them).
        ``row`` (flat, int32) is -1 but for the cells the steps are taken from:
        those within the steps' reach (chessboard) of a cell with a steep
        multiplier (a move's price there hangs on its direction) or of an
        impassable one.  ``cost[row[a] * K + k]`` is the price of step k from
        the centre of cell ``a``, 0 until a search walks it, filled as
        `edge_steps`' are; empty (each such step walked as it comes) if the rows
        would take more than ``_TABLE_BYTES``.
        """
        st = self.steps
        reach = np.maximum(np.abs(st.dr), np.abs(st.dc))
        longer = reach > 1
        offsets = np.ascontiguousarray(np.stack([st.dr[longer], st.dc[longer]], axis=1),
                                       dtype=np.int64)
        near = np.zeros(self.base.shape, dtype=bool)
        if longer.any():
            near = maximum_filter((self.steep != 1.0) | ~np.isfinite(self.base),
                                  size=2 * int(reach.max()) + 1)
        near = near.ravel()
        count = int(np.count_nonzero(near))
        if count == 0:  # none taken: the searches need not look at ``row``
            offsets = offsets[:0]
        row = np.where(near, np.cumsum(near) - 1, -1).astype(np.int32)
        k = len(offsets)
        return offsets, row, np.zeros(k * count if 8 * k * count <= _TABLE_BYTES else 0)

    @functools.cached_property
    def cell_quantum(self) -> np.ndarray:
        """The quantum each cell's ground is charged in (0: smooth), flat (float64)."""
        return np.ascontiguousarray(self.quantum[self.combo].ravel())

    @functools.cached_property
    def quantised(self) -> np.ndarray:
        """Summed-area table of the cells charged per started quantum (int64,
        ``(rows + 1, cols + 1)``): ``[r, c]`` counts those in rows ``< r`` and
        columns ``< c``, so any box of cells is counted in four reads."""
        mark = (self.cell_quantum > 0.0).astype(np.int64).reshape(self.combo.shape)
        out = np.zeros((mark.shape[0] + 1, mark.shape[1] + 1), dtype=np.int64)
        out[1:, 1:] = mark.cumsum(axis=0).cumsum(axis=1)
        return out

    @functools.cached_property
    def levels(self) -> int:
        """How many levels of ground a rear-rank trail here could hold: the
        distinct multipliers, and each times steep (uphill)."""
        b, s = self.base.ravel(), self.steep.ravel()
        ok = np.isfinite(b)
        return int(np.unique(np.concatenate([b[ok], (b * s)[ok & (s != 1.0)]])).size)

    @property
    def trail_width(self) -> int:
        """Most levels a trail here holds: `levels`, up to `_kernels.TRAIL`."""
        return min(self.levels, _kernels.TRAIL)

    @property
    def merging(self) -> bool:
        """Whether a trail here could hold more levels than `_kernels.TRAIL`, so
        that its lightest two would merge (`_kernels.push`)."""
        return self.levels > _kernels.TRAIL

    @functools.cached_property
    def incoming_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Every step's price into passable cells that are not flat, for flow fields.

        ``(row, cost)``: ``cost[row[b] * K + k]`` is step k's price into cell b,
        ``row`` -1 for the other cells (`_kernels.step_table`'s incoming rows,
        built on every thread by `_step_rows`).  Cells with equal rows
        share one (the cells along a wood's straight edge): 976 rows serve the
        116k such cells of the 2048² battlefield in bench/, and 99k the 1.1M
        of the 2048² campaign map, so the table kept is small.  Rows are built
        ``_ROWS_CHUNK`` cells at a time (9 bytes a step while a chunk is
        built), and new rows are kept while the table fits in ``_TABLE_BYTES``
        (128 MiB: 524k rows at 32 directions); the flow kernel walks the pieces
        of the steps into cells whose row did not fit.
        """
        return self._shared_rows(incoming=True)

    @functools.cached_property
    def outgoing_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Every step's price out of passable cells that are not flat, shared like
        `incoming_steps`: ``cost[row[a] * K + k]`` is step k's price out of cell a
        (``inf`` off the grid or blocked).  `Highway` builds it, and once it is
        built `_kernels.search_plain`'s A* reads it: with landmarks, or on a grid
        too big for the whole table.  All or nothing: if some such cell's row
        does not fit, both arrays are empty."""
        return self._shared_rows(incoming=False)

    def _shared_rows(self, incoming: bool) -> tuple[np.ndarray, np.ndarray]:
        """`incoming_steps` or `outgoing_steps` (all or nothing: empty arrays as soon
        as a row does not fit)."""
        a = self.kernel_args
        k = len(a.step_dr)
        into = np.flatnonzero((a.flat_of[a.flat] == 0.0) & np.isfinite(a.base))
        row = np.full(a.base.size, -1, dtype=np.int32)
        room = _TABLE_BYTES // (8 * k)  # rows the table may keep
        kept = np.empty((0, k))
        for lo in range(0, into.size, _ROWS_CHUNK):
            cells = into[lo:lo + _ROWS_CHUNK]
            cost = np.empty(cells.size * k)
            _step_rows(a, incoming, cells, cost)
            # The kept rows are distinct and come first, so they keep their numbers.
            both = np.concatenate([kept, cost.reshape(cells.size, k)])
            first, which = _distinct_rows(both)
            which = which[len(kept):]
            if not incoming and (which >= room).any():
                return np.empty(0, dtype=np.int32), np.empty(0)
            row[cells] = np.where(which < room, which, -1)
            kept = both[first[:room]]
        return row, kept.ravel()


class KernelArgs(NamedTuple):
    """The cost arguments of `_kernels.search`, in its order."""

    base: np.ndarray
    steep: np.ndarray
    slope_of: np.ndarray
    slopes: np.ndarray
    cols: int
    plain: bool
    step_dr: np.ndarray
    step_dc: np.ndarray
    step_len: np.ndarray
    ux: np.ndarray
    uy: np.ndarray
    piece_start: np.ndarray
    piece_dr: np.ndarray
    piece_dc: np.ndarray
    piece_w: np.ndarray
    depth: float
    fp_start: np.ndarray
    fp_dr: np.ndarray
    fp_dc: np.ndarray
    fp_rem: np.ndarray
    nb: int
    table_cost: np.ndarray
    table_uniform: np.ndarray
    flat: np.ndarray
    flat_of: np.ndarray
    enter: np.ndarray
    narrow: np.ndarray
    onward_start: np.ndarray
    onward: np.ndarray


def kernel_args(
    base: np.ndarray,
    st: Steps,
    steep: np.ndarray | None = None,
    slope: tuple | None = None,
    depth: float = 0.0,
    footprint: tuple | None = None,
    table: bool = True,
    enter: np.ndarray | None = None,
    narrow: np.ndarray | None = None,
    flat: bool = True,
) -> KernelArgs:
    """Flatten a grid's multipliers (and slopes, footprint) into the kernels' arguments.

    With ``table``, every step is priced once (9 bytes a step) unless that
    would take more than ``_TABLE_BYTES``: it halves a reach on a battle map.
    With ``flat``, `_kernels.flat_cells` marks the cells whose steps all cost
    their length times the cell's multiplier (1 byte a cell; table or not):
    the searches price those without the table or the pieces.  Raw grids
    (`engine.search`) build neither: they go to `_kernels.search_plain`, the
    fastest on big grids, where a table's memory traffic costs more than it
    saves.  A cost grid without a table goes to `_kernels.search`, which
    prices slopes, footprints and entry costs as it goes.
    """
    f, i = np.empty(0), np.empty(0, dtype=np.int64)
    flat_steep = f if steep is None else steep.ravel()
    level = np.zeros(0 if steep is None else base.size, dtype=np.int32)  # no slope: row 0
    flat_slope = (level, np.zeros(3)) if slope is None else (slope[0].ravel(), slope[1])
    plain = depth == 0 and (steep is None or not (steep != 1.0).any())
    finite = base[np.isfinite(base)]
    top = float(finite.max()) if finite.size else 1.0
    if steep is not None:
        top *= float(steep.max())
    cells = (
        base.ravel(), flat_steep, *flat_slope, base.shape[1], plain,
        st.dr, st.dc, st.length, st.ux, st.uy,
        st.piece_start, st.piece_dr, st.piece_dc, st.piece_w,
    )
    flats = (f, f)
    if any(a is not None and a.any() for a in (enter, narrow)):
        flats = tuple(np.zeros(base.size) if a is None else a.ravel() for a in (enter, narrow))
    flat_cells, flat_of = np.empty(0, dtype=np.uint8), f
    if flat:
        flat_cells, multiplier = np.empty(base.size, dtype=np.uint8), np.zeros(_kernels.WIDE)
        reach = int(max(np.abs(st.dr).max(), np.abs(st.dc).max()))
        calm = np.empty(0, dtype=np.uint8)
        if depth > 0:  # as far as the trails of the shorter paths' stops reach
            calm = np.empty(base.size, dtype=np.uint8)
            _kernels.calm_cells(base.ravel(), flat_steep, base.shape[1],
                                st.onward_window + _kernels.trail_cells(st.length, depth), calm)
        _kernels.flat_cells(base.ravel(), flat_steep, *flats, base.shape[1], reach, calm,
                            flat_cells, multiplier)
        flat_of = np.concatenate([multiplier, multiplier])  # a mark with its WIDE bit too
    priced = (f, np.empty(0, dtype=np.int8))
    n = base.size * len(st.dr)
    if table and n * 9 <= _TABLE_BYTES:
        priced = (np.empty(n), np.empty(n, dtype=np.int8))
        _kernels.step_table(*cells, *flats, flat_cells, flat_of, False, i, *priced)
    # The costliest step: its length at multiplier `top` plus the flat costs of each cell
    # it crosses; with a table, the dearest step in it (flat costs included), plus what
    # a rear-rank trail can add to a step (its length at `top`).
    most = sum(float(a.max(initial=0.0)) for a in flats)
    with np.errstate(over="ignore"):  # inf: refused by bucket_count
        costliest = float(np.max(st.length * top + np.diff(st.piece_start) * most))
    if priced[0].size:
        finite = priced[0][np.isfinite(priced[0])]
        trail = float(st.length.max()) * top if depth > 0 else 0.0
        costliest = min(costliest, float(finite.max(initial=0.0)) + trail)
    return KernelArgs(*cells, float(depth), *(footprint or (i, i, i, f)),
                      bucket_count(st, costliest), *priced, flat_cells, flat_of, *flats,
                      st.onward_start, st.onward)


def _step_rows(a: KernelArgs, incoming: bool, cells: np.ndarray, cost: np.ndarray) -> None:
    """`_kernels.step_table`'s rows for ``cells`` into ``cost`` (steps into them with
    ``incoming``, else out of them), the cells shared out in one block per thread."""
    k = len(a.step_dr)
    uniform = np.empty(cost.size, dtype=np.int8)
    threads = thread_count()

    def block(t: int) -> None:
        lo, hi = cells.size * t // threads, cells.size * (t + 1) // threads
        if hi > lo:  # an empty block would ask for every cell's row
            _kernels.step_table(*a[:15], a.enter, a.narrow, a.flat, a.flat_of, incoming,
                                cells[lo:hi], cost[lo * k:hi * k], uniform[lo * k:hi * k])

    on_threads(block, threads)


def cost_grid(
    battlefield: Battlefield, rules: Ruleset, unit: Unit, directions: int = 32
) -> CostGrid:
    """Price a battlefield for one unit; built once per (map, unit) and cached.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    unit : Unit
        From ``rules.unit(...)``.
    directions : int
        Steps of the search neighbourhood: 32 (default), 8, 16 or 48
        (`engine.grid.neighbourhood`).

    Returns
    -------
    CostGrid

    Raises
    ------
    InputError
        A unit that is not one of these rules' profiles, a unit deeper than
        the table's diagonal, or a neighbourhood that does not exist.
    MapError
        A feature names a terrain kind the rules do not define.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> bf = load_map("maps/examples/archers.geojson")
    >>> g = cost_grid(bf, rules, rules.unit("humans", ranks=2))
    >>> float(g.base.max())
    2.0
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    rules.check_unit(unit)
    check_directions(directions)
    diagonal = math.hypot(battlefield.width, battlefield.height)
    if unit.depth > diagonal:
        raise InputError(
            f"{unit.race} are {unit.depth:g} {battlefield.units} deep, deeper than the "
            f"{battlefield.width:g} x {battlefield.height:g} table's diagonal ({diagonal:.4g})"
        )
    key = ("cost", id(rules), unit.key, directions)
    cached = battlefield._cache.get(key)
    if cached is not None:
        if cached.unit == unit:
            return cached
        # A unit that pays the same but moves differently: its own grid, kept too, so
        # that asking again gives the same grid (flow fields and regions are per grid).
        twin = battlefield._cache.get((*key, unit))
        if twin is None:
            twin = battlefield._cache[(*key, unit)] = cached._for(unit)
        return twin
    lay = layers(battlefield, rules)
    shape = lay.grid.shape
    mask = unit_mask(lay, rules, unit)
    combos, combo, base = price_kinds(mask, lay, rules, unit)
    enter = np.zeros(shape) if unit.flying else lay.crossing
    narrow = np.zeros(shape)
    narrows = narrowing(lay, mask, rules, unit)
    if narrows.any() and rules.formation_change > 0 and not unit.flying:
        _, _, without = price_kinds(mask & ~narrows, lay, rules, unit)
        narrow[(narrows != 0) & (base < without)] = rules.formation_change

    steep = np.ones(shape)
    if not unit.flying:
        for i, name in enumerate(lay.kinds):
            kind = rules.terrain[name]
            for layer_names, covered in ((kind.uphill_layers, lay.mask | lay.hills),
                                         (kind.steep_layers, lay.steep)):
                if layer_names:
                    factor = math.prod(unit.multipliers[s] for s in layer_names)
                    on = kind_cells(covered, i)
                    steep[on] = np.maximum(steep[on], factor)
        steep = np.maximum(steep, lay.climb)
        if rules.combine == "worst":  # climbing costs the worse of the slope and the ground
            ok = np.isfinite(base) & (steep > 1.0)
            steep[ok] = np.maximum(steep[ok] / base[ok], 1.0)
    st = steps(lay.grid.cell, directions)

    fp_start, fp_dr, fp_dc, fp_rem = [0], [], [], []
    for ux, uy in zip(st.ux, st.uy, strict=True):
        for r, c, rem in trail_behind((0.5, 0.5), (ux, uy), unit.depth / lay.grid.cell):
            fp_dr.append(r)
            fp_dc.append(c)
            fp_rem.append(rem * lay.grid.cell)
        fp_start.append(len(fp_dr))
    footprint = (
        np.array(fp_start, dtype=np.int64),
        np.array(fp_dr, dtype=np.int64),
        np.array(fp_dc, dtype=np.int64),
        np.array(fp_rem, dtype=np.float64),
    )
    quantum = np.array([combo_quantum(c, rules, unit) for c in combos], dtype=np.float64)
    result = CostGrid(
        battlefield, rules, unit, lay, base, steep, (lay.slope_of, lay.slopes), combo,
        combos, st, footprint, enter, narrow, quantum,
    )
    battlefield._cache[key] = result
    return result
