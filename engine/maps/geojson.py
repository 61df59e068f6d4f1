"""Reading a battlefield map in the engine's GeoJSON dialect (`load_map`).

A map is a GeoJSON FeatureCollection with a top-level member
``"battlefield": {"width": W, "height": H, "units": "cm" | "in", "cell": C}``
(``cell`` optional: 0.5 for cm, 0.25 for inches).  Coordinates are table units,
x to the right, y down.  Every feature has ``properties.terrain``.  Areas are
(Multi)Polygons; linear features are (Multi)LineStrings with
``properties.width``; hills are polygons with ``properties.elevation`` and
optional ``properties.steep``.  Features are clipped to the table.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import shapely
from shapely.geometry import box, shape

from .._args import real
from .._memory import BYTES_PER_CELL, memory_bytes
from ..errors import MapError
from .battlefield import _DEFAULT_CELL, Battlefield, Feature

__all__ = ["load_map", "shipped_maps"]
_AREA_TYPES = ("Polygon", "MultiPolygon")
_LINE_TYPES = ("LineString", "MultiLineString")
_DATA = Path(__file__).resolve().parent / "data"
# Beyond this a table coordinate is a typo, and geometry would lose all precision.
_MAX_COORD = 1e9


def shipped_maps() -> list[str]:
    """The names of the maps shipped with the engine, which `load_map` and the CLI's
    ``MAP`` take as well as a path."""
    return sorted(p.name.removesuffix(".geojson") for p in _DATA.iterdir()
                  if p.name.endswith(".geojson"))


def _shipped(name: str) -> Path | None:
    """The shipped map called ``name`` (``"demo"`` or ``"demo.geojson"``), or None."""
    stem = name.removesuffix(".geojson")
    if "/" in stem or os.sep in stem:
        return None
    return _DATA / f"{stem}.geojson" if stem in shipped_maps() else None


def load_map(source: str | Path | dict) -> Battlefield:
    """Load and validate a GeoJSON battlefield.

    Parameters
    ----------
    source : str, Path or dict
        A path to a ``.geojson`` file, the name of a map shipped with the engine
        (`shipped_maps`: ``"demo"``, ``"crossings"``) when no such file exists, or
        the parsed GeoJSON itself.

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
        path = _shipped(name) if isinstance(source, str) and not Path(source).exists() else None
        try:
            data = json.loads((path or Path(source)).read_text("utf-8"))
        except FileNotFoundError:
            raise MapError(f"no map file {name!r} (nor a shipped map of that name: "
                           f"{', '.join(shipped_maps())})") from None
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
    need = cells * BYTES_PER_CELL
    if not math.isfinite(need) or need > memory_bytes() // 2:
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
