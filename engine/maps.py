"""Battlefield maps: GeoJSON in, validated and clipped features out.

A map is a GeoJSON FeatureCollection with a top-level member
``"battlefield": {"width": W, "height": H, "units": "cm" | "in", "cell": C}``
(``cell`` optional: 0.5 for cm, 0.25 for inches).  Coordinates are table units,
x to the right, y down.  Every feature has ``properties.terrain``.  Areas are
(Multi)Polygons; linear features are (Multi)LineStrings with
``properties.width``; hills are polygons with ``properties.elevation`` and
optional ``properties.steep``.  Features are clipped to the table.

Which terrain kinds exist is the ruleset's business: `Battlefield.check`
refuses kinds a ruleset does not define.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import shapely
from shapely.geometry import box, shape

from ._args import instance, real
from .errors import MapError
from .grid import GridSpec
from .rules import Ruleset

__all__ = ["Battlefield", "Feature", "load_map"]

_DEFAULT_CELL = {"cm": 0.5, "in": 0.25}
_AREA_TYPES = ("Polygon", "MultiPolygon")
_LINE_TYPES = ("LineString", "MultiLineString")
# Bytes a cell may need across the grids of one cost model and a search
# workspace (layers, a direction stack of 32 float64 multipliers, search state).
_BYTES_PER_CELL = 8 * 32 + 64
# Beyond this a table coordinate is a typo, and geometry would lose all precision.
_MAX_COORD = 1e9


@dataclass(frozen=True)
class Feature:
    """One validated map feature.

    Attributes
    ----------
    index : int
        Position in the file's ``features`` array.
    id : str or None
        The feature's ``id`` (or ``properties.id``).
    terrain : str
        Terrain kind, as the ruleset names it.
    area : shapely geometry
        Ground covered, clipped to the table: the polygon itself, or a line's
        strip of its ``width`` (flat ends).
    full : shapely geometry
        The same before clipping (a hill's slopes are measured from its whole
        outline, even where it runs off the table).
    linear : bool
        Given as a line with a width.
    width : float or None
        A line's width in table units.
    elevation : float
        A hill's crest height (0 for anything else).
    steep : bool
        A hill designated steep.
    centreline : shapely geometry or None
        A line feature's own line, clipped to the table (None for areas).
    cost : float or None
        ``properties.cost``: the flat cost of crossing this feature, overriding
        its kind's ``crossing_cost`` (a deep muddy ditch: 6" where a ditch is 4").
    climb : float or None
        ``properties.climb`` on a hill: what climbing it costs per unit
        travelled, as a scenario sets it (Battlesystem: "3" (or more)").
    """

    index: int
    id: str | None
    terrain: str
    area: Any = field(repr=False)
    full: Any = field(repr=False)
    linear: bool = False
    width: float | None = None
    elevation: float = 0.0
    steep: bool = False
    centreline: Any = field(default=None, repr=False)
    cost: float | None = None
    climb: float | None = None

    @property
    def label(self) -> str:
        """How messages name this feature: ``feature 3 (id 'north-wood')``."""
        return f"feature {self.index}" + (f" (id {self.id!r})" if self.id is not None else "")


@dataclass(frozen=True, eq=False)
class Battlefield:
    """A validated battlefield: table size, units, grid and features."""

    width: float
    height: float
    units: str
    cell: float
    features: tuple[Feature, ...]
    source: str = "<memory>"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def grid(self) -> GridSpec:
        """The raster laid over this table."""
        return GridSpec(self.width, self.height, self.cell)

    def check(self, rules: Ruleset) -> None:
        """Refuse what the ruleset makes wrong: a terrain kind it does not define
        (naming the kinds that exist), a hill that is a line, hill properties on
        other ground, a road, trail or crossing whose centreline is off the table, a
        crossing that does not cross water from bank to bank, a gateway set in no
        building.

        Raises
        ------
        MapError
            Naming the first offending feature and what is wrong with it.
        """
        instance("rules", rules, Ruleset, "load_rules")
        if rules.units != self.units:
            raise MapError(
                f"{self.source}: the map is in {self.units} but the rules "
                f"{rules.name!r} are in {rules.units}"
            )
        for f in self.features:
            kind = rules.terrain.get(f.terrain)
            if kind is None:
                known = ", ".join(sorted(rules.terrain))
                raise MapError(
                    f"{self.source}: {f.label}: unknown terrain kind {f.terrain!r} "
                    f"for {rules.name} (known: {known})"
                )
            if kind.role == "hill" and f.linear:
                raise MapError(f"{self.source}: {f.label}: a hill must be a polygon")
            if kind.role != "hill" and (f.elevation or f.steep or f.climb is not None):
                raise MapError(f"{self.source}: {f.label}: elevation, steep and climb belong "
                               f"to hills, not to {f.terrain}")
            if f.linear and (kind.cancels or kind.role == "crossing") and not any(
                    part.length > 0 for part in _line_parts(f.centreline)):
                # Its strip may still reach the table, but the network follows centrelines.
                raise MapError(f"{self.source}: {f.label}: a {f.terrain}'s centreline must "
                               "run on the table; it lies wholly off it")
        def wet(kind) -> bool:
            return kind.role == "river" or any(rules.layers[n] == "water" for n in kind.layers)

        rivers = [f.area for f in self.features
                  if rules.terrain[f.terrain].role != "crossing" and wet(rules.terrain[f.terrain])]
        water = shapely.union_all(rivers) if rivers else None
        walls = [f.area for f in self.features if rules.terrain[f.terrain].role == "building"]
        building = shapely.union_all(walls) if walls else None
        for f in self.features:
            if rules.terrain[f.terrain].role == "gateway" and (
                    building is None or f.area.intersection(building).area <= 0):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must be set in a "
                               "building; it overlaps none")
        for f in self.features:
            if rules.terrain[f.terrain].role != "crossing":
                continue
            if water is None or not f.area.intersects(water):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must cross a river; "
                               "it touches no water")
            if f.area.intersection(water).area <= 0:
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must cross a river; "
                               "it only touches the water's edge")
            if water.contains(f.area):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a bank; "
                               "it lies wholly in the water")
            # Each end on land, or at the table's edge (the bank may lie beyond it).
            lines = _line_parts(f.centreline) if f.linear else []
            for end in (p for line in lines for p in (line.coords[0], line.coords[-1])):
                x, y = end
                inside = 0 < x < self.width and 0 < y < self.height
                if inside and water.contains(shapely.Point(end)):
                    raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a "
                                   f"bank at each end; its end ({x:g}, {y:g}) is in the water")


def _line_parts(centreline) -> list:
    """The non-empty line strings of a centreline clipped to the table."""
    if centreline is None or centreline.is_empty:
        return []
    parts = getattr(centreline, "geoms", [centreline])
    return [g for g in parts if g.geom_type == "LineString" and not g.is_empty]


def load_map(source: str | Path | dict) -> Battlefield:
    """Load and validate a GeoJSON battlefield.

    Parameters
    ----------
    source : str, Path or dict
        A path to a ``.geojson`` file, or the parsed GeoJSON itself.

    Returns
    -------
    Battlefield

    Raises
    ------
    MapError
        One line naming the feature (index and id) and the problem.

    Examples
    --------
    >>> bf = load_map({"type": "FeatureCollection",
    ...     "battlefield": {"width": 20, "height": 10, "units": "cm"},
    ...     "features": [{"type": "Feature", "properties": {"terrain": "woods"},
    ...         "geometry": {"type": "Polygon",
    ...                      "coordinates": [[[5, 0], [15, 0], [15, 30], [5, 30], [5, 0]]]}}]})
    >>> bf.grid.shape, bf.features[0].area.area
    ((20, 40), 100.0)
    """
    if isinstance(source, dict):
        data, name = source, "<memory>"
    elif not isinstance(source, str | os.PathLike):
        raise MapError(f"a map is a path or a parsed GeoJSON dict, got {source!r:.80}")
    else:
        name = str(source)
        try:
            data = json.loads(Path(source).read_text("utf-8"))
        except FileNotFoundError:
            raise MapError(f"no map file {name!r}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise MapError(f"cannot read map {name}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise MapError(f"{name}: not valid JSON: {exc}") from None
        except RecursionError:
            raise MapError(f"{name}: nested too deeply to be a map") from None

    def fail(msg: str) -> MapError:
        return MapError(f"{name}: {msg}")

    if not isinstance(data, dict) or data.get("type") != "FeatureCollection":
        raise fail("a map must be a GeoJSON FeatureCollection")
    head = data.get("battlefield")
    if not isinstance(head, dict):
        raise fail('missing "battlefield": {"width": W, "height": H, "units": "cm" | "in"}')
    units = head.get("units")
    if not isinstance(units, str) or units not in _DEFAULT_CELL:
        raise fail(f'battlefield units must be "cm" or "in", got {units!r}')
    width = _positive(head.get("width"), "battlefield width", fail)
    height = _positive(head.get("height"), "battlefield height", fail)
    cell = _positive(head.get("cell", _DEFAULT_CELL[units]), "battlefield cell", fail)
    unknown = set(head) - {"width", "height", "units", "cell"}
    if unknown:
        raise fail(f"unknown battlefield key {sorted(unknown)[0]!r}")
    for what, v in (("width", width), ("height", height)):
        if v > _MAX_COORD:
            raise fail(f"battlefield {what} {v:g} is larger than {_MAX_COORD:g} table units")
        n = v / cell
        if abs(n - round(n)) > 1e-9 * max(n, 1.0) or round(n) < 1:
            given = "" if "cell" in head else f" (the default for {units})"
            raise fail(f"battlefield {what} {v:g} is not a whole number of cells of "
                       f"{cell:g}{given} ({n:.4g}); give a cell that divides the width "
                       "and height")
    cells = (width / cell) * (height / cell)
    need = cells * _BYTES_PER_CELL
    if not math.isfinite(need) or need > _memory_bytes() // 2:
        raise fail(
            f"a {width:g} x {height:g} table at cell {cell:g} is a grid of {cells:.3g} cells, "
            f"too large for memory (needs about {need / 2**30:.3g} GiB); use a larger cell"
        )

    raw = data.get("features")
    if not isinstance(raw, list):
        raise fail('"features" must be a list')
    table = box(0.0, 0.0, width, height)
    features = tuple(_feature(i, f, table, fail) for i, f in enumerate(raw))
    return Battlefield(width, height, units, cell, features, name)


def _positive(value: Any, what: str, fail) -> float:
    if not real(value) or not math.isfinite(value) or value <= 0:
        raise fail(f"{what} must be a finite number > 0, got {value!r}")
    return float(value)


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def _feature(index: int, raw: Any, table, fail) -> Feature:
    fid = None
    if isinstance(raw, dict):
        fid = raw.get("id")
        props = raw.get("properties")
        if fid is None and isinstance(props, dict):
            fid = props.get("id")
    label = f"feature {index}" + (f" (id {str(fid)!r})" if fid is not None else "")

    def bad(msg: str) -> MapError:
        return fail(f"{label}: {msg}")

    if not isinstance(raw, dict) or raw.get("type") != "Feature":
        raise bad("is not a GeoJSON Feature")
    props = raw.get("properties")
    if not isinstance(props, dict):
        raise bad("has no properties")
    terrain = props.get("terrain")
    if not isinstance(terrain, str) or not terrain:
        raise bad('has no "terrain" property')
    geom = raw.get("geometry")
    if not isinstance(geom, dict) or "type" not in geom:
        raise bad("has no geometry")
    gtype = geom["type"]
    if gtype not in _AREA_TYPES + _LINE_TYPES:
        raise bad(
            f"geometry type {gtype!r} is not a Polygon, MultiPolygon, LineString "
            "or MultiLineString"
        )
    coords = geom.get("coordinates")
    if coords == []:
        raise bad(f"empty {gtype}")
    if not _finite_coords(coords):
        raise bad("has a missing, malformed or non-finite coordinate")
    if not _finite_coords(coords, _MAX_COORD):
        raise bad(f"has a coordinate beyond +-{_MAX_COORD:g} table units")
    try:
        g = shape(geom)
    except (ValueError, TypeError, AttributeError, IndexError, shapely.errors.ShapelyError) as exc:
        raise bad(f"malformed {gtype}: {exc}") from None
    if g.is_empty:
        raise bad(f"empty {gtype}")
    try:
        return _shaped(index, fid, terrain, props, gtype, g, table, bad)
    except shapely.errors.ShapelyError as exc:
        raise bad(f"geometry cannot be processed: {exc}") from None


def _shaped(index: int, fid, terrain: str, props: dict, gtype: str, g, table, bad) -> Feature:
    """Check a parsed geometry against its properties; clip it to the table."""
    linear = gtype in _LINE_TYPES
    width = None
    if linear:
        if "width" not in props:
            raise bad(f"a {terrain} line needs a width (properties.width, table units)")
        width = props["width"]
        if not real(width) or not math.isfinite(width) or width <= 0 or width > _MAX_COORD:
            raise bad(f"width must be a number > 0 and <= {_MAX_COORD:g}, got {width!r}")
        if g.length <= 0:
            raise bad(f"{gtype} has zero length")
        area = g.buffer(width / 2.0, cap_style="flat")
        if area.is_empty or area.area <= 0:
            raise bad(f"width {width!r} is too small to give the {gtype} any area")
    else:
        if g.convex_hull.area <= 0:
            raise bad(f"{gtype} has no area (its points are in a line)")
        if not g.is_valid:
            reason = shapely.is_valid_reason(g)
            raise bad(f"invalid {gtype}: {reason}")
        area = g

    elevation = props.get("elevation", 0.0)
    if not real(elevation) or not 0 <= elevation <= _MAX_COORD:  # NaN fails the range
        raise bad(f"elevation must be a number >= 0 and <= {_MAX_COORD:g}, got {elevation!r}")
    steep = props.get("steep", False)
    if not isinstance(steep, bool):
        raise bad(f"steep must be true or false, got {steep!r}")
    climb = props.get("climb")
    if climb is not None and (not real(climb) or not math.isfinite(climb) or climb < 1):
        raise bad(f"climb must be a number >= 1, got {climb!r}")
    if (steep or elevation or climb is not None) and linear:
        raise bad("elevation, steep and climb belong to hill polygons, not lines")
    cost = props.get("cost")
    if cost is not None and (not real(cost) or not math.isfinite(cost) or cost < 0):
        raise bad(f"cost must be a finite number >= 0, got {cost!r}")

    clipped = area.intersection(table)
    if clipped.is_empty or clipped.area <= 0:
        raise bad("lies wholly off the table")
    return Feature(
        index=index,
        id=None if fid is None else str(fid),
        terrain=terrain,
        area=clipped,
        full=area,
        linear=linear,
        width=None if width is None else float(width),
        elevation=float(elevation),
        steep=steep,
        centreline=g.intersection(table) if linear else None,
        cost=None if cost is None else float(cost),
        climb=None if climb is None else float(climb),
    )


def _finite_coords(coords: Any, limit: float = math.inf, depth: int = 4) -> bool:
    """True when ``coords`` is a nested list of finite numbers (``|v| <= limit``), pairs at
    the bottom, at most ``depth`` lists deep (a MultiPolygon's)."""
    if isinstance(coords, list | tuple) and depth > 0:
        if coords and all(real(v) for v in coords):
            return len(coords) >= 2 and all(math.isfinite(v) and abs(v) <= limit for v in coords)
        return bool(coords) and all(_finite_coords(c, limit, depth - 1) for c in coords)
    return False
