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
import shapely

from . import _flow, _kernels
from ._args import flag, instance, point
from .errors import InputError, MapError
from .grid import GridSpec, check_directions, neighbourhood, segment_cells
from .maps import Battlefield
from .rules import Ruleset, TerrainKind, Unit

__all__ = ["CostGrid", "Layers", "cost_grid", "layers"]

_MAX_KINDS = 64
# Largest per-grid table of precomputed step costs (bigger grids price steps as they go),
# and of the rows of steps into and out of cells that are not flat (`CostGrid.incoming_steps`,
# `CostGrid.outgoing_steps`).
_TABLE_BYTES = 128 * 2**20
_ROWS_CHUNK = 2**18  # cells whose rows of steps are built at a time (72 MiB at 32 directions)
# Most buckets a search's queue may have (a power of two): A* on a raw grid keeps four
# times as many rows of stack, at least 64 bytes each (`_kernels.stack_width`), so the
# first stack is at most 16 MiB; its sizes (8 bytes a row) are 2 MiB.
_MAX_BUCKETS = 2**16


@dataclass(frozen=True, eq=False)
class Layers:
    """A battlefield rasterised for one ruleset (profile independent).

    Attributes
    ----------
    grid : GridSpec
    kinds : tuple of str
        Terrain kinds, bit ``i`` of `mask` standing for ``kinds[i]``.
    mask : ndarray of uint64, shape ``grid.shape``
        Which kinds cover each cell.
    elevation : ndarray of float64
        Ground height (0 off hills).
    steep : ndarray of uint64
        Kinds of the steep hills covering each cell (bits as in `mask`).
    passage : dict of str to ndarray of float64
        For each passage kind on the map (``passage = true``: bridge, trail,
        gateway), the width of its narrowest feature covering each cell,
        ``inf`` where it has none.  A line's width is its ``width``; a
        polygon's is the diameter of the largest circle inside it.
    crossing : ndarray of float64
        Flat cost of crossing the obstacle covering each cell (its feature's
        ``cost``, else its kind's ``crossing_cost``; the largest where several
        do), 0 where there is none.
    climb : ndarray of float64
        The uphill multiplier a hill's ``climb`` sets (the largest where hills
        overlap), 0 where none does.
    """

    grid: GridSpec
    kinds: tuple[str, ...]
    mask: np.ndarray
    elevation: np.ndarray
    steep: np.ndarray
    passage: dict[str, np.ndarray]
    crossing: np.ndarray
    climb: np.ndarray

    def bits(self, kinds) -> np.uint64:
        """The mask bits of those of ``kinds`` this battlefield uses."""
        out = 0
        for i, k in enumerate(self.kinds):
            if k in kinds:
                out |= 1 << i
        return np.uint64(out)


def layers(battlefield: Battlefield, rules: Ruleset) -> Layers:
    """Rasterise a battlefield's features for a ruleset (cached on the battlefield).

    Raises
    ------
    MapError
        A feature the rules refuse (`Battlefield.check`), or an area that covers
        no cell's centre.
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    key = ("layers", rules.source, id(rules))
    cached = battlefield._cache.get(key)
    if cached is not None:
        return cached
    battlefield.check(rules)
    grid = battlefield.grid
    kinds = tuple(sorted({f.terrain for f in battlefield.features}))
    if len(kinds) > _MAX_KINDS:
        raise MapError(f"{battlefield.source}: uses {len(kinds)} terrain kinds; at most "
                       f"{_MAX_KINDS} are supported")
    bit = {k: np.uint64(1) << np.uint64(i) for i, k in enumerate(kinds)}
    mask = np.zeros(grid.shape, dtype=np.uint64)
    steep = np.zeros(grid.shape, dtype=np.uint64)
    elevation = np.zeros(grid.shape, dtype=np.float64)
    passage: dict[str, np.ndarray] = {}
    crossing = np.zeros(grid.shape)
    climb = np.zeros(grid.shape)
    for f in battlefield.features:
        window, cells = _cover(grid, f.area, f.linear)
        if not cells.any():  # it would change nothing
            raise MapError(f"{battlefield.source}: {f.label}: covers no cell's centre of the "
                           f"{grid.cell:g} grid; draw it larger or use a smaller cell")
        mask[window][cells] |= bit[f.terrain]
        if rules.terrain[f.terrain].passage:
            width = f.width if f.linear else 2.0 * shapely.maximum_inscribed_circle(f.full).length
            widths = passage.setdefault(f.terrain, np.full(grid.shape, np.inf))
            widths[window][cells] = np.minimum(widths[window][cells], width)
        flat = rules.terrain[f.terrain].crossing_cost if f.cost is None else f.cost
        if flat > 0:
            crossing[window][cells] = np.maximum(crossing[window][cells], flat)
        if f.elevation > 0:
            elevation[window] += _hill_height(grid, window, cells, f.full, f.elevation)
        if f.steep:
            steep[window][cells] |= bit[f.terrain]
        if f.climb is not None:
            climb[window][cells] = np.maximum(climb[window][cells], f.climb)
    result = Layers(grid, kinds, mask, elevation, steep, passage, crossing, climb)
    battlefield._cache[key] = result
    return result


def unit_mask(lay: Layers, rules: Ruleset, unit: Unit) -> np.ndarray:
    """The kinds a unit can make use of in each cell.

    Kinds ``closed_to`` the unit's troop type are dropped everywhere, and
    each passage kind where it is narrower than one of the unit's figures: a
    trail then no longer cancels the wood it runs through, a bridge no longer
    carries the unit over the river.
    """
    mask = lay.mask
    closed = lay.bits([k for k in lay.kinds if unit.troop in rules.terrain[k].closed_to])
    if closed:
        mask = mask & ~closed
    if unit.figure_width > 0:
        for kind, width in lay.passage.items():
            mask = np.where(width < unit.figure_width, mask & ~lay.bits([kind]), mask)
    return mask


def narrowing(lay: Layers, mask: np.ndarray, unit: Unit) -> np.ndarray:
    """Bits of the passage kinds under each cell (in ``mask``) narrower than the unit's
    frontage."""
    bits = np.zeros(lay.grid.shape, dtype=np.uint64)
    for kind, width in lay.passage.items():
        b = lay.bits([kind])
        bits |= np.where((mask & b != 0) & (width < unit.frontage), b, np.uint64(0))
    return bits


def _cover(grid: GridSpec, area, linear: bool) -> tuple[tuple[slice, slice], np.ndarray]:
    """Cells an area covers: a window of the grid and a boolean mask within it."""
    rows, cols = grid.shape
    x0, y0, x1, y1 = area.bounds
    c0, c1 = max(0, math.floor(x0 / grid.cell)), min(cols, math.ceil(x1 / grid.cell))
    r0, r1 = max(0, math.floor(y0 / grid.cell)), min(rows, math.ceil(y1 / grid.cell))
    window = (slice(r0, r1), slice(c0, c1))
    cs = np.arange(c0, c1) * grid.cell
    rs = np.arange(r0, r1) * grid.cell
    xs, ys = np.meshgrid(cs, rs)
    if linear:
        boxes = shapely.box(xs, ys, xs + grid.cell, ys + grid.cell)
        shapely.prepare(area)
        hit = np.flatnonzero(shapely.intersects(area, boxes))
        inside = np.zeros(xs.shape, dtype=bool)
        whole = shapely.contains_properly(area, boxes.flat[hit])  # no overlap to measure
        inside.flat[hit[whole]] = True
        edge = hit[~whole]
        inside.flat[edge] = (shapely.area(shapely.intersection(boxes.flat[edge], area))
                             > 1e-9 * grid.cell**2)
    else:
        half = 0.5 * grid.cell
        inside = shapely.contains_xy(area, xs + half, ys + half)
    return window, inside


def _hill_height(grid: GridSpec, window, cells: np.ndarray, outline, elevation: float):
    """Height field of one hill within ``window`` (0 outside the hill)."""
    r, c = window
    xs, ys = np.meshgrid(
        (np.arange(c.start, c.stop) + 0.5) * grid.cell,
        (np.arange(r.start, r.stop) + 0.5) * grid.cell,
    )
    crest = shapely.maximum_inscribed_circle(outline).length
    d = shapely.distance(outline.boundary, shapely.points(xs[cells], ys[cells]))
    height = np.zeros(xs.shape)
    height[cells] = elevation * np.minimum(d / crest, 1.0) if crest > 0 else 0.0
    return height


@dataclass(frozen=True, eq=False)
class Steps:
    """The search neighbourhood in the form the kernels take.

    Each step k moves ``(dr[k], dc[k])`` cells, ``length[k]`` table units;
    its pieces (the cells its straight segment crosses, with the fraction of
    the step in each; 0 for a corner touch) are
    ``piece_*[piece_start[k]:piece_start[k + 1]]``.  The steps worth taking
    out of a flat cell reached by step k are
    ``onward[onward_start[k]:onward_start[k + 1]]`` (`onward_steps`, whose
    shorter paths stop within ``onward_window`` of the cell); row K (the
    number of steps) holds them all.
    """

    dr: np.ndarray
    dc: np.ndarray
    length: np.ndarray
    ux: np.ndarray
    uy: np.ndarray
    piece_start: np.ndarray
    piece_dr: np.ndarray
    piece_dc: np.ndarray
    piece_w: np.ndarray
    onward_start: np.ndarray
    onward: np.ndarray
    onward_window: int


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first of each distinct row of ``rows`` (in order) and each row's number among them.

    Rows are told apart by a hash of their bits, checked row by row against the
    row they are taken for (a collision falls back to sorting the rows whole).
    """
    odd = np.uint64(0x9E3779B97F4A7C15) ** np.arange(rows.shape[1], dtype=np.uint64)
    mix = (rows.view(np.uint64) * odd).sum(axis=1)  # modulo 2**64
    _, first, which = np.unique(mix, return_index=True, return_inverse=True)
    if not (rows[first[which]] == rows).all():
        whole = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.itemsize * rows.shape[1])))
        _, first, which = np.unique(whole.ravel(), return_index=True, return_inverse=True)
    order = np.argsort(first)  # in the order the rows first come
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[which].astype(np.int32)


def onward_steps(dr: np.ndarray, dc: np.ndarray, length: np.ndarray) -> tuple:
    """The steps worth taking out of a flat cell a reached by step k.

    Around a flat cell (`_kernels.flat_cells`) every cell within ``reach``
    rows and columns (the longest step's) is alike, and a step's pieces lie
    between its two ends, so any step between two cells of that box costs
    its length times a's multiplier.  Step j out of a is left out when a
    path from the cell before, ``a - s_k``, to ``a + s_j`` through the box
    is shorter than s_k then s_j by more than rounding (a millionth): the
    cell before offered that target less, so no cheapest path takes s_k
    then s_j.  Going back to the cell before is left out too.  Equally long
    paths are kept, so ties are broken as before; the pairs kept are kept
    either way round (j then k as well, as flow fields use them).  With 32
    directions 3 to 5 of the 32 steps remain.

    The shorter paths need stop only within ``window`` rows and columns of
    a (the least that leaves out as much: 1 for 8 and 16 directions, 3 for
    32 and 48): `_kernels.search_labels` needs the trails of those cells
    alone to hold nothing heavier than a's ground.

    Returns
    -------
    onward_start : (K + 2,) int64
        Row k's steps are ``onward[onward_start[k]:onward_start[k + 1]]``;
        row K is every step (a cell with no step behind it).
    onward : int64
    window : int
    """
    reach = int(max(np.abs(dr).max(), np.abs(dc).max()))
    k_steps = dr.shape[0]
    side = 4 * reach + 1  # offsets -2 reach .. 2 reach from a
    steps = list(zip(dr.tolist(), dc.tolist(), length.tolist(), strict=True))

    def stepped(paths: np.ndarray) -> np.ndarray:
        """The cheapest of every path one step further on."""
        out = np.full_like(paths, np.inf)
        for sr, sc, slen in steps:
            to = (slice(None), slice(max(sr, 0), side + min(sr, 0)),
                  slice(max(sc, 0), side + min(sc, 0)))
            at = (slice(None), slice(max(-sr, 0), side + min(-sr, 0)),
                  slice(max(-sc, 0), side + min(-sc, 0)))
            np.minimum(out[to], paths[at] + slen, out=out[to])
        return out

    o = 2 * reach
    offsets = np.abs(np.arange(-o, o + 1))
    chebyshev = np.maximum(offsets[:, None], offsets[None, :])
    before = np.full((k_steps, side, side), np.inf)  # [k]: at the cell before, a - s_k
    before[np.arange(k_steps), o - dr, o - dc] = 0.0
    one = stepped(before)
    kept = []
    for window in range(reach + 1):
        # Paths from the cell before that stop only within `window` of a.
        inside = chebyshev <= window
        paths = np.where(inside, one, np.inf)
        while True:
            longer = np.where(inside, np.minimum(paths, stepped(paths)), np.inf)
            if np.array_equal(longer, paths):
                break
            paths = longer
        best = np.minimum(np.minimum(before, one), stepped(paths))
        via = best[:, o + dr, o + dc]  # [k, j]: a - s_k to a + s_j
        kept.append(~(via < (length[:, None] + length[None, :]) * (1.0 - 1e-6)))
    window = next(w for w in range(reach + 1) if np.array_equal(kept[w], kept[reach]))
    rows = [np.flatnonzero(row) for row in kept[reach]] + [np.arange(k_steps)]
    start = np.cumsum([0] + [len(r) for r in rows])
    return start.astype(np.int64), np.concatenate(rows).astype(np.int64), window


@functools.lru_cache(maxsize=16)
def _onward(dr: tuple, dc: tuple, length: tuple) -> tuple:
    """`onward_steps`, once per neighbourhood (a few milliseconds for 32 directions)."""
    return onward_steps(np.array(dr), np.array(dc), np.array(length))


PRICINGS = ("segment", "midpoint", "destination")


def steps(
    cell: float,
    directions: int = 32,
    pricing: str = "segment",
    corner_cutting: bool = False,
    lengths: tuple[float, float] | None = None,
) -> Steps:
    """Build the step tables of a neighbourhood (see `grid.neighbourhood`).

    Parameters
    ----------
    cell : float
    directions : int
        8, 16, 32 or 48.
    pricing : str
        ``"segment"`` (the engine's): the multiplier integrated along the
        straight step through every cell it crosses.  For comparing with
        other pathfinders on raw grids, 8 directions only: ``"midpoint"``, the mean
        of the two cells' multipliers (scikit-image's ``MCP_Geometric``), and
        ``"destination"``, the multiplier of the cell stepped onto (python-tcod,
        pyastar2d).
    corner_cutting : bool
        Let a diagonal step pass between two cells that block.
    lengths : (straight, diagonal), optional
        Step lengths in table units for 8 directions (tcod's integers 2 and 3,
        pyastar2d's 1 and 1); default the geometric ``cell`` and
        ``cell * sqrt(2)``.
    """
    if not isinstance(pricing, str) or pricing not in PRICINGS:
        raise InputError(f"pricing must be one of {', '.join(PRICINGS)}, got {pricing!r}")
    corner_cutting = flag("corner_cutting", corner_cutting)
    if (pricing != "segment" or lengths is not None) and directions != 8:
        raise InputError("other pricings and step lengths are for 8 directions only")
    offsets = neighbourhood(directions)
    start, pdr, pdc, pw = [0], [], [], []
    for dr, dc in offsets:
        pieces, corners = segment_cells((0.5, 0.5), (0.5 + dc, 0.5 + dr))
        hyp = math.hypot(dr, dc)
        if pricing == "segment":
            shares = [(r, c, (s1 - s0) / hyp) for r, c, s0, s1 in pieces]
        elif pricing == "midpoint":
            shares = [(0, 0, 0.5), (dr, dc, 0.5)]
        else:
            shares = [(dr, dc, 1.0)]
        if not corner_cutting:
            shares += [(r, c, 0.0) for r, c in corners]
        for r, c, w in shares:
            pdr.append(r)
            pdc.append(c)
            pw.append(w)
        start.append(len(pw))
    dr = offsets[:, 0].copy()
    dc = offsets[:, 1].copy()
    hyp = np.hypot(dr, dc)
    with np.errstate(over="ignore"):  # a vast cell: refused below
        length = hyp * cell
    if lengths is not None:
        try:
            straight, diagonal = point(lengths)  # two real numbers
        except InputError:
            straight = diagonal = math.nan
        if not (0 < straight <= diagonal < math.inf):
            raise InputError(f"lengths must be 0 < straight <= diagonal, got {lengths!r}")
        length = np.where(hyp > 1, diagonal, straight)
    if not length.max() < 1e300:  # the onward steps sum a few lengths
        raise InputError(f"steps up to {length.max():.3g} table units long are too long "
                         "(a smaller cell or shorter lengths): costs would overflow")
    onward_start, onward, window = _onward(
        tuple(dr.tolist()), tuple(dc.tolist()), tuple(length.tolist()))
    return Steps(
        dr=dr,
        dc=dc,
        length=length,
        ux=dc / hyp,
        uy=dr / hyp,
        piece_start=np.array(start, dtype=np.int64),
        piece_dr=np.array(pdr, dtype=np.int64),
        piece_dc=np.array(pdc, dtype=np.int64),
        piece_w=np.array(pw, dtype=np.float64),
        onward_start=onward_start,
        onward=onward,
        onward_window=window,
    )


def bucket_count(st: Steps, costliest: float) -> int:
    """Buckets as wide as the shortest step that outspan a step costing ``costliest``.

    A power of two, so the kernel picks a bucket with a mask.

    Raises
    ------
    InputError
        The costliest step would need more than ``_MAX_BUCKETS`` buckets: a
        multiplier or flat cost (crossing, climb, formation change) so large (yet
        finite) that the search's queue would not fit in memory.
    """
    ratio = costliest / float(st.length.min())
    if not ratio < _MAX_BUCKETS - 2:  # also NaN and inf
        raise InputError(
            f"the costliest step costs {costliest:.3g} table units, {ratio:.3g} times the "
            f"shortest step; at most {_MAX_BUCKETS - 2:g} times is supported: a "
            "multiplier or a flat cost (a crossing's, a climb's or the rules' "
            "formation_change) is too large (use inf or \"impassable\" for ground nobody "
            "enters)"
        )
    return 1 << (int(ratio) + 2).bit_length()


def trail_behind(p: tuple[float, float], u: tuple[float, float], depth_cells: float) -> list:
    """The footprint of a unit standing at ``p`` (cell units) facing ``u``.

    Its ranks trail straight back ``depth_cells``.  Returns ``(row, col,
    rem)`` for each cell under it, farthest first, where ``rem`` is how far the
    front must advance (in cells) before that cell leaves the footprint.
    """
    if depth_cells <= 0:
        return []
    tail = (p[0] - u[0] * depth_cells, p[1] - u[1] * depth_cells)
    pieces, _ = segment_cells(p, tail)
    return [(r, c, depth_cells - s0) for r, c, s0, _ in reversed(pieces)]


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
    slope : tuple of ndarray of float64
        ``(gxf, gxb, gyf, gyb)``: rise per table unit to the next cell along
        +x, from the previous cell along x, and likewise along y.
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

    @functools.cached_property
    def kernel_args(self) -> KernelArgs:
        """What the search kernels take (built once, step table included)."""
        return kernel_args(self.base, self.steps, self.steep, self.slope, self.unit.depth,
                           self.footprint, enter=self.enter, narrow=self.narrow)

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
        built on every thread by `_flow.step_rows`).  Cells with equal rows
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
            _flow.step_rows(*a[:17], a.enter, a.narrow, a.flat, a.flat_of, incoming, cells,
                            cost, np.empty(cost.size, dtype=np.int8))
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
    gxf: np.ndarray
    gxb: np.ndarray
    gyf: np.ndarray
    gyb: np.ndarray
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
    flat_slope = (f, f, f, f) if slope is None else tuple(s.ravel() for s in slope)
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
    combos, combo, base = _price(mask, lay, rules, unit)
    enter = np.zeros(shape) if unit.flying else lay.crossing
    narrow = np.zeros(shape)
    narrows = narrowing(lay, mask, unit)
    if narrows.any() and rules.formation_change > 0 and not unit.flying:
        _, _, without = _price(mask & ~narrows, lay, rules, unit)
        narrow[(narrows != 0) & (base < without)] = rules.formation_change

    steep = np.ones(shape)
    if not unit.flying:
        for i, name in enumerate(lay.kinds):
            kind = rules.terrain[name]
            for layer_names, covered in ((kind.uphill_layers, lay.mask),
                                         (kind.steep_layers, lay.steep)):
                if layer_names:
                    factor = math.prod(unit.multipliers[s] for s in layer_names)
                    on = (covered >> np.uint64(i) & np.uint64(1)).astype(bool)
                    steep[on] = np.maximum(steep[on], factor)
        steep = np.maximum(steep, lay.climb)
        if rules.combine == "worst":  # climbing costs the worse of the slope and the ground
            ok = np.isfinite(base) & (steep > 1.0)
            steep[ok] = np.maximum(steep[ok] / base[ok], 1.0)
    h = lay.elevation / lay.grid.cell
    gxf, gxb, gyf, gyb = (np.zeros(shape) for _ in range(4))
    gxf[:, :-1] = gxb[:, 1:] = h[:, 1:] - h[:, :-1]
    gyf[:-1, :] = gyb[1:, :] = h[1:, :] - h[:-1, :]
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
    quantum = np.array([_combo_quantum(c, rules, unit) for c in combos], dtype=np.float64)
    result = CostGrid(
        battlefield, rules, unit, lay, base, steep, (gxf, gxb, gyf, gyb), combo, combos, st,
        footprint, enter, narrow, quantum,
    )
    battlefield._cache[key] = result
    return result


def _price(mask: np.ndarray, lay: Layers, rules: Ruleset, unit: Unit):
    """``(combos, combo, base)`` of a kind mask: the kind sets, each cell's index
    into them and each cell's multiplier."""
    combo_ids, inverse = np.unique(mask, return_inverse=True)
    combos = [tuple(k for i, k in enumerate(lay.kinds) if int(b) >> i & 1) for b in combo_ids]
    prices = np.array([_combo_multiplier(c, rules, unit) for c in combos], dtype=np.float64)
    combo = inverse.reshape(mask.shape).astype(np.int32)
    return combos, combo, prices[combo]


def _combo_multiplier(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> float:
    """Multiplier of ground covered by ``kinds`` for ``unit`` (DESIGN.md section 3).

    Layers multiply; each layer counts once however many features bring it.
    """
    on = _combo_layers(kinds, rules, unit)
    return math.inf if on is None else _layers_multiplier(on, rules, unit)


def _layers_multiplier(on: set[str], rules: Ruleset, unit: Unit) -> float:
    """Multiplier of the layers ``on`` for ``unit``, combined as the rules say."""
    rates = [unit.multipliers[name] for name in on]
    return max(rates, default=1.0) if rules.combine == "worst" else math.prod(rates)


def _combo_quantum(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> float:
    """The quantum the ground covered by ``kinds`` is charged in (0: none; the
    smallest where several layers have one)."""
    on = _combo_layers(kinds, rules, unit) or ()
    return min((unit.quanta[name] for name in on if name in unit.quanta), default=0.0)


def _combo_layers(kinds: tuple[str, ...], rules: Ruleset, unit: Unit) -> set[str] | None:
    """The layers a unit pays on ground covered by ``kinds``; None where it is impassable.

    A river is impassable unless a crossing (bridge, ford) lies over it, whose
    own layers then apply (of overlapping crossings, those with the lowest
    multiplier: a unit too wide for that one re-forms to use it, `narrowing`), or
    the unit swims; a building is impassable but through a gateway.  Road-like
    kinds cancel whole layer classes.  Flyers ignore ground terrain.
    """
    if unit.flying:
        return set()
    specs: list[TerrainKind] = [rules.terrain[k] for k in kinds]
    roles = {s.role for s in specs}
    if any(s.impassable for s in specs):
        return None
    on_layers: set[str] = set()
    for s in specs:
        if s.role in ("ground", "hill"):
            on_layers.update(s.layers)
    ways: list[tuple[str, ...]] = [()]  # the layers of each way over a river
    if "river" in roles:
        if "crossing" in roles:
            ways = [s.layers for s in specs if s.role == "crossing"]
        elif unit.swimming:
            ways = [tuple(name for s in specs if s.role == "river" for name in s.layers)]
        else:
            return None
    if "building" in roles:
        if "gateway" not in roles:
            return None
        for s in specs:
            if s.role == "gateway":
                on_layers.update(s.layers)
    cancelled = {c for s in specs for c in s.cancels}
    options = [{name for name in on_layers.union(way) if rules.layers[name] not in cancelled}
               for way in ways]
    return min(options, key=lambda on: _layers_multiplier(on, rules, unit))
