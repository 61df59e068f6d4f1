"""Rasterising a battlefield's features into terrain layers (`Layers`).

An area feature covers the cells whose centre lies inside it; a line feature
(a strip of its width) covers every cell it overlaps with positive area, so a
wall or river is never thinner than the grid can see.  A ford drawn along a
river covers its fordable stretch (`Battlefield.fordable`: the river's whole
width between the ford's ends) as the river itself is covered, so the river
is open there from bank to bank.  A hill's height rises
linearly with the distance from its outline, from 0 on the outline to
``elevation`` on its crest; overlapping hills add up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from .._args import instance
from ..errors import MapError
from ..grid import GridSpec
from ..maps.battlefield import Battlefield, Feature
from ..rules.ruleset import Ruleset, Unit

__all__ = ["Layers", "kind_cells", "kinds_in", "layers"]

_MAX_KINDS = 64


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
        Ground height at each cell's centre (0 off hills).
    slope_of : ndarray of int32
        Where each cell's ground starts in `slopes` (0, level ground, off hills).
    slopes : ndarray of float64
        The ground of the cells hills overlap, read from the hills themselves,
        a block a cell: ``k``, the gradient per cell (along x and y) of the
        other hills overlapping it, then ``k`` planes, each its height at the
        cell's centre and gradient per cell.  The ground is the lowest of the
        planes where that is above 0, else 0 (a hill's foot), plus the other
        hills' plane: on a convex hill, exactly the hill's height (the crest,
        the foot and every bend of its slope wherever they cross the cell); on
        others, each edge's distance touched at the cell's centre.
    hills : ndarray of uint64
        Kinds of the hills overlapping each cell, however little (bits as in
        `mask`): where their slopes are priced.
    steep : ndarray of uint64
        Kinds of the steep hills overlapping each cell, however little.
    passage : dict of str to ndarray of float64
        For each passage kind on the map (``passage = true``: bridge, trail,
        gateway), the width of its narrowest feature covering each cell,
        ``inf`` where it has none.  A line's width is its ``width``; a
        polygon's (and a fordable stretch's) is the diameter of the largest
        circle inside it.
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
    slope_of: np.ndarray
    slopes: np.ndarray
    hills: np.ndarray
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


def kinds_in(kinds: tuple[str, ...], bits: Any) -> tuple[str, ...]:
    """The kinds a mask's ``bits`` (one cell's `Layers.mask`) stand for, bit ``i`` for
    ``kinds[i]``."""
    b = int(bits)
    return tuple(k for i, k in enumerate(kinds) if b >> i & 1)


def kind_cells(mask: np.ndarray, i: int) -> np.ndarray:
    """Which cells of a kind mask (`Layers.mask`, `hills`, `steep`) have kind ``i``'s bit
    set, as bools."""
    return (mask >> np.uint64(i) & np.uint64(1)).astype(bool)


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
    hills = np.zeros(grid.shape, dtype=np.uint64)
    elevation = np.zeros(grid.shape, dtype=np.float64)
    folds: list[tuple] = []
    passage: dict[str, np.ndarray] = {}
    crossing = np.zeros(grid.shape)
    climb = np.zeros(grid.shape)
    fords = battlefield.fordable(rules)
    for f in battlefield.features:
        area, strip = ground_of(f, fords)
        window, cells = _cover(grid, area, strip)
        if not cells.any():  # it would change nothing
            raise MapError(f"{battlefield.source}: {f.label}: covers no cell's centre of the "
                           f"{grid.cell:g} grid; draw it larger or use a smaller cell")
        mask[window][cells] |= bit[f.terrain]
        if rules.terrain[f.terrain].passage:
            stretch = f.index in fords
            if f.linear and not stretch:
                width = f.width
            else:  # an area, or a fordable stretch: its largest circle
                outline = area if stretch else f.full
                width = 2.0 * shapely.maximum_inscribed_circle(outline).length
            widths = passage.setdefault(f.terrain, np.full(grid.shape, np.inf))
            widths[window][cells] = np.minimum(widths[window][cells], width)
        flat = rules.terrain[f.terrain].crossing_cost if f.cost is None else f.cost
        if flat > 0:
            crossing[window][cells] = np.maximum(crossing[window][cells], flat)
        if f.elevation > 0:
            elevation[window] += _hill_height(grid, window, cells, f.full, f.elevation)
            window, cells = _cover(grid, area, True)  # its slopes reach every cell it touches
            folds.append(_hill_planes(grid, window, cells, f.full, f.elevation))
            hills[window][cells] |= bit[f.terrain]
        if f.steep:
            steep[window][cells] |= bit[f.terrain]
        if f.climb is not None:
            climb[window][cells] = np.maximum(climb[window][cells], f.climb)
    slope_of, slopes = _gather(grid, folds)
    result = Layers(grid, kinds, mask, elevation, slope_of, slopes, hills, steep, passage,
                    crossing, climb)
    battlefield._cache[key] = result
    return result


def ground_of(f: Feature, fords: dict[int, Any]) -> tuple[Any, bool]:
    """The ground a feature is rasterised on, and whether as a strip.

    Parameters
    ----------
    f : Feature
    fords : dict of int to shapely geometry
        The battlefield's fordable stretches (`Battlefield.fordable`).

    Returns
    -------
    area : shapely geometry
        A ford's fordable stretch when it is drawn along a river, else its own
        (clipped) area.
    strip : bool
        True to cover every cell the area overlaps (a line's strip, and a
        stretch, which lies over the river's cells as the river's strip does);
        False to cover the cells whose centre it holds (an area).
    """
    stretch = fords.get(f.index)
    return (f.area, f.linear) if stretch is None else (stretch, True)


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


def narrowing(lay: Layers, mask: np.ndarray, rules: Ruleset, unit: Unit) -> np.ndarray:
    """Bits of the passage kinds under each cell (in ``mask``) narrower than the unit's
    frontage, of the kinds a unit pays to narrow onto (`TerrainKind.narrowing`)."""
    bits = np.zeros(lay.grid.shape, dtype=np.uint64)
    for kind, width in lay.passage.items():
        if not rules.terrain[kind].narrowing:
            continue
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


def _gather(grid: GridSpec, hills: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """`Layers.slope_of` and `Layers.slopes` from each hill's `_hill_planes`.

    Where hills overlap, the cell keeps the planes of a hill whose ground folds
    there (the one with the most planes), and the others' lowest planes at its
    centre (where above 0) add their gradients as one plane under it all.
    """
    slope_of = np.zeros(grid.shape, dtype=np.int32)
    if not hills:
        return slope_of, np.zeros(3)
    index = np.concatenate([h[0] for h in hills])
    count = np.concatenate([h[1] for h in hills])
    lowest = np.concatenate([h[3] for h in hills])
    folds = np.concatenate([h[4] for h in hills])
    first_plane = np.cumsum(np.concatenate([[0], count]))[:-1]
    planes = np.concatenate([h[2] for h in hills])
    order = np.lexsort((-count, ~folds, index))  # by cell, folding and most planes first
    index, count, lowest, first_plane = (index[order], count[order], lowest[order],
                                         first_plane[order])
    head = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    extra = np.add.reduceat(lowest, head, axis=0) - lowest[head]  # the other hills'
    k = count[head]
    size = 3 + 3 * k
    start = np.cumsum(np.concatenate([[3], size]))[:-1]  # block 0: level ground
    out = np.zeros(3 + int(size.sum()))
    out[start], out[start + 1], out[start + 2] = k, extra[:, 0], extra[:, 1]
    rows = np.repeat(first_plane[head], k) + (np.arange(int(k.sum()))
                                              - np.repeat(np.cumsum(k) - k, k))
    at = np.repeat(start + 3, 3 * k) + (np.arange(int(3 * k.sum()))
                                        - np.repeat(np.cumsum(3 * k) - 3 * k, 3 * k))
    out[at] = planes[rows].ravel()
    if start[-1] > np.iinfo(np.int32).max:
        raise MapError(f"{grid.shape[0]} x {grid.shape[1]} cells of hills are too many to "
                       "price; use a larger cell")
    slope_of.ravel()[index[head]] = start
    return slope_of, out


def _hill_height(grid: GridSpec, window, cells: np.ndarray, outline, elevation: float):
    """One hill's height at the centre of each cell of ``window`` it covers (0 elsewhere):
    linear in the distance from its outline, ``elevation`` on its crest."""
    r, c = window
    xs, ys = np.meshgrid(
        (np.arange(c.start, c.stop) + 0.5) * grid.cell,
        (np.arange(r.start, r.stop) + 0.5) * grid.cell,
    )
    crest = shapely.maximum_inscribed_circle(outline).length
    centre = np.zeros(xs.shape)
    if crest > 0:
        d = shapely.distance(outline.boundary, shapely.points(xs[cells], ys[cells]))
        centre[cells] = elevation * np.minimum(d / crest, 1.0)
    return centre


def _hill_planes(grid: GridSpec, window, cells: np.ndarray, outline, elevation: float):
    """One hill's ground over the cells of ``window`` it overlaps (``cells``), as the
    planes whose lowest (where above 0) it is: ``(index, count, planes, lowest,
    folds)``, the cells' flat indices, how many planes each has, the planes in
    cell order (height at the cell's centre, gradient per cell along x and along
    y), the gradient of each cell's lowest plane at its centre (0 where that is
    below 0) and whether the ground folds in the cell (`_folds`).

    The hill's height is ``elevation`` times the distance from its outline over
    its largest inscribed circle's radius.  On a convex hill that is, exactly,
    the lowest over its edges of the distance from the edge's line (signed:
    negative outside), and a cell keeps the edges that can be lowest somewhere
    in it (within a cell's diagonal of the lowest at its centre: distances
    change no faster than the distance moved).  On any other hill each edge
    gives the plane touching the distance from it at the centre (from its
    nearest point: an end of it gives a cone, touched there), and a cell whose
    centre is outside keeps its nearest edge alone.
    """
    r, c = window
    rr, cc = np.nonzero(cells)
    index = (rr + r.start) * grid.shape[1] + cc + c.start
    h = grid.cell
    cx, cy = (cc + c.start + 0.5) * h, (rr + r.start + 0.5) * h
    crest = shapely.maximum_inscribed_circle(outline).length
    scale = elevation / crest if crest > 0 else 0.0
    oriented = shapely.orient_polygons(outline)  # the inside on each edge's left
    rings = [oriented.exterior, *oriented.interiors] if oriented.geom_type == "Polygon" \
        else [ring for p in oriented.geoms for ring in (p.exterior, *p.interiors)]
    ends = np.concatenate([np.stack([np.asarray(ring.coords)[:-1], np.asarray(ring.coords)[1:]],
                                    axis=1) for ring in rings])
    ends = ends[(ends[:, 0] != ends[:, 1]).any(axis=1)]  # a repeated vertex is no edge
    convex = shapely.equals(outline, shapely.convex_hull(outline))
    count = np.zeros(index.size, dtype=np.int64)
    planes, lowest, folds = [], np.zeros((index.size, 2)), np.zeros(index.size, dtype=bool)
    for lo in range(0, index.size, 4096):  # cells at a time, against every edge
        x, y = cx[lo:lo + 4096, None], cy[lo:lo + 4096, None]
        value, gx, gy = _edge_planes(ends, x, y, convex)
        if not convex:
            inside = shapely.contains_xy(outline, x[:, 0], y[:, 0])[:, None]
            value, gx, gy = (np.where(inside, v, -v) for v in (value, gx, gy))
        least = value.min(axis=1, keepdims=True)
        keep = value <= least + h * math.sqrt(2) + 1e-9 * h
        if not convex:  # outside, the nearest edge alone (its distance, negative)
            keep = np.where(inside, keep, value == value.max(axis=1, keepdims=True))
        count[lo:lo + 4096] = keep.sum(axis=1)
        planes.append(np.stack([value[keep] * scale, gx[keep] * scale * h,
                                gy[keep] * scale * h], axis=1))
        first = np.argmin(value, axis=1)
        on = (least[:, 0] > 0)[:, None]
        pick = np.arange(first.size)
        lowest[lo:lo + 4096] = np.where(on, np.stack([gx[pick, first], gy[pick, first]], 1)
                                        * scale * h, 0.0)
        near = (keep.sum(axis=1) > 1) | (np.abs(least[:, 0]) < h)  # may fold: look closer
        folds[lo:lo + 4096][near] = _folds(np.where(keep, value, np.inf)[near], gx[near] * h,
                                           gy[near] * h)
    return index, count, np.concatenate(planes), lowest, folds


def _folds(value: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Whether the ground of planes (rows: cells; ``value`` at the centre, inf for none;
    gradient per cell) folds within each cell, seen at 25 points across it: another
    plane lowest, or the lowest crossing 0."""
    at = np.linspace(-0.5, 0.5, 5)
    seen = [(v.argmin(axis=1), v.min(axis=1)) for v in
            (value + gx * dx + gy * dy for dx in at for dy in at)]
    which = np.stack([w for w, _ in seen], axis=1)
    height = np.stack([m for _, m in seen], axis=1)
    return ((which != which[:, :1]).any(axis=1)
            | ((height < 0).any(axis=1) & (height > 0).any(axis=1)))


def _edge_planes(ends: np.ndarray, x: np.ndarray, y: np.ndarray, convex: bool):
    """For points ``(x, y)`` (column vectors) and edges ``ends`` (from, to), the distance
    from each edge (its line's, signed by the inside on its left; or, ``convex``
    false, from its nearest point, unsigned) and its gradient along x and y."""
    (x0, y0), (x1, y1) = ends[:, 0].T, ends[:, 1].T
    ex, ey = x1 - x0, y1 - y0
    long = np.hypot(ex, ey)
    nx, ny = -ey / long, ex / long  # into the hill
    value = (x - x0) * nx + (y - y0) * ny
    gx, gy = np.broadcast_to(nx, value.shape), np.broadcast_to(ny, value.shape)
    if convex:
        return value, gx, gy
    along = ((x - x0) * ex + (y - y0) * ey) / long**2
    corner = (along < 0) | (along > 1)
    px = np.where(along < 0, x0, x1)
    py = np.where(along < 0, y0, y1)
    dx, dy = x - px, y - py
    d = np.maximum(np.hypot(dx, dy), 1e-300)
    return (np.where(corner, d, np.abs(value)), np.where(corner, dx / d, np.sign(value) * gx),
            np.where(corner, dy / d, np.sign(value) * gy))
