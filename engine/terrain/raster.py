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

__all__ = ["Layers", "layers"]

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
        Each cell's row of `slopes` (row 0, level ground, off hills).
    slopes : ndarray of float64, shape ``(n, 7)``
        The ground of the cells hills overlap, read from the hills themselves:
        per row the gradients (rise per table unit along x and y) of two
        planes and the line the ground folds along between them,
        ``(gax, gay, gbx, gby, nx, ny, off)``: plane a where
        ``off + nx * x + ny * y < 0`` (x, y in cells from the cell's centre),
        plane b elsewhere.  The fold is a crest, a hill's foot or a bend of its
        slope crossing the cell (one per cell: where two cross one cell, or
        two hills fold in one, the second is priced by its plane at the
        cell's centre); cells without one have the same plane twice.
        Overlapping hills add up.
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
            folds.append(_hill_slopes(grid, window, cells, f.full, f.elevation))
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


def _gather(grid: GridSpec, folds: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """`Layers.slope_of` and `Layers.slopes` from each hill's `_hill_slopes`: where hills
    overlap, their planes add up, the first that folds there giving the fold."""
    slope_of = np.zeros(grid.shape, dtype=np.int32)
    if not folds:
        return slope_of, np.zeros((1, 7))
    index = np.concatenate([f[0] for f in folds])
    rows = np.concatenate([f[1] for f in folds])
    fold = np.concatenate([f[2] for f in folds])
    order = np.lexsort((~fold, index))  # by cell, a folding row first
    index, rows = index[order], rows[order]
    first = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    plane = np.add.reduceat(rows[:, 0:2], first, axis=0)  # every hill's plane a, added up
    out = rows[first]
    out[:, 2:4] += plane - out[:, 0:2]
    out[:, 0:2] = plane
    slope_of.ravel()[index[first]] = np.arange(1, first.size + 1, dtype=np.int32)
    return slope_of, np.concatenate([np.zeros((1, 7)), out])


def _hill_height(grid: GridSpec, window, cells: np.ndarray, outline, elevation: float):
    """One hill's height at the centre of each cell of ``window`` it covers (0 elsewhere)."""
    r, c = window
    xs, ys = np.meshgrid(
        (np.arange(c.start, c.stop) + 0.5) * grid.cell,
        (np.arange(r.start, r.stop) + 0.5) * grid.cell,
    )
    centre = np.zeros(xs.shape)
    crest = shapely.maximum_inscribed_circle(outline).length
    centre[cells] = np.minimum(_tangent(outline, elevation, crest, xs[cells], ys[cells])[0],
                               elevation)
    return centre


def _tangent(outline, elevation: float, crest: float, px: np.ndarray, py: np.ndarray):
    """A hill's ground at points: its height and the gradient of the plane touching it
    there, ``(h, gx, gy)``.  The height rises linearly with the distance from the
    outline, ``elevation`` at ``crest`` (the largest inscribed circle's radius):
    inside, the plane rises straight away from the nearest point of the outline;
    outside, it is level at 0."""
    points = shapely.points(px, py)
    inside = shapely.contains_xy(outline, px, py) & (crest > 0)
    near = shapely.get_coordinates(shapely.shortest_line(outline.boundary, points))[::2]
    ax, ay = px - near[:, 0], py - near[:, 1]
    d = np.hypot(ax, ay)
    on = inside & (d > 0)
    slope = np.where(on, elevation / np.where(on, crest * d, 1.0), 0.0)
    h = np.where(on, elevation * d / np.where(on, crest, 1.0), 0.0)
    return h, ax * slope, ay * slope


def _hill_slopes(grid: GridSpec, window, cells: np.ndarray, outline, elevation: float):
    """One hill's ground over the cells of ``window`` it overlaps (``cells``): their
    flat indices and rows of `Layers.slopes`, and which rows fold.

    A cell's ground is the plane touching the hill at its centre, unless the hill
    at one of its corners lies off that plane (a crest, a hill's foot or a bend
    of its slope crosses the cell): then also the plane touching it at the
    corner farthest off, the ground folding where the two meet.
    """
    r, c = window
    rr, cc = np.nonzero(cells)
    rr, cc = rr + r.start, cc + c.start
    h = grid.cell
    cx, cy = (cc + 0.5) * h, (rr + 0.5) * h
    crest = shapely.maximum_inscribed_circle(outline).length
    hc, gax, gay = _tangent(outline, elevation, crest, cx, cy)
    off_plane = np.zeros(cx.shape)
    far = np.zeros((2, *cx.shape))
    for dx in (-0.5, 0.5):
        for dy in (-0.5, 0.5):
            hk = _tangent(outline, elevation, crest, cx + dx * h, cy + dy * h)[0]
            dev = np.abs(hk - (hc + (gax * dx + gay * dy) * h))
            farther = dev > off_plane
            off_plane = np.where(farther, dev, off_plane)
            far[0, farther], far[1, farther] = dx, dy
    fold = off_plane > 1e-9 * max(elevation, 1.0)
    rows = np.empty((cx.size, 7))
    rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3] = gax, gay, gax, gay
    rows[:, 4:6], rows[:, 6] = 0.0, -1.0
    if fold.any():
        fx, fy = far[0, fold], far[1, fold]
        hb, gbx, gby = _tangent(outline, elevation, crest, cx[fold] + fx * h,
                                cy[fold] + fy * h)
        nx, ny = (gax[fold] - gbx) * h, (gay[fold] - gby) * h  # (A - B) per cell from the centre
        off = hc[fold] - (hb - (gbx * fx + gby * fy) * h)
        flip = np.where(off + nx * fx + ny * fy < 0.0, -1.0, 1.0)  # A where it is negative
        rows[fold, 2], rows[fold, 3] = gbx, gby
        rows[fold, 4], rows[fold, 5], rows[fold, 6] = nx * flip, ny * flip, off * flip
    return rr * grid.shape[1] + cc, rows, fold
