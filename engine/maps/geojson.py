"""Reading a battlefield map in the engine's GeoJSON dialect (`load_map`).

A map is a GeoJSON FeatureCollection with a top-level member
``"battlefield": {"width": W, "height": H, "units": "cm" | "in", "cell": C}``
(``cell`` optional: 0.5 for cm, 0.25 for inches).  Coordinates are table units,
x to the right, y down.  Every feature has ``properties.terrain``.  Areas are
(Multi)Polygons; linear features are (Multi)LineStrings with
``properties.width``; hills are polygons with ``properties.elevation`` and
optional ``properties.steep``.  Features are clipped to the table.  Point features
with ``properties.name`` are named places (`Battlefield.points`).  A Tiled map is
read as this dialect (`engine.maps.tiled`); `convert_map` writes either format.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, box, shape

from .._args import DuplicateKey, did_you_mean, real, shown, strict_json, tame
from .._limits import BYTES_PER_CELL, is_file, memory_bytes, read_limited
from ..errors import InputError, MapError
from .battlefield import _DEFAULT_CELL, Battlefield, Feature, Points
from .tiled import is_tiled, read_tiled, to_tiled

__all__ = ["MapTooLarge", "battlefield_of", "convert_map", "load_map", "map_document",
           "shipped_maps"]
_AREA_TYPES = ("Polygon", "MultiPolygon")
_LINE_TYPES = ("LineString", "MultiLineString")
_DATA = Path(__file__).resolve().parent / "data"
# Beyond this a table coordinate is a typo, and geometry would lose all precision.
_MAX_COORD = 1e9
# Coordinates nearer 0 than this (table units) are read as 0: far finer than any cell,
# and GEOS's arithmetic on subnormal numbers raises floating-point warnings.
_TINY = 1e-12
# Geometry: lines are buffered in pieces of this many segments (`_band`); a feature of
# more vertices than `_SIMPLIFY_ABOVE` is simplified below an eighth of a cell, and one
# still of more than `_MAX_VERTICES` refused, as is a line longer than `_MAX_LENGTH`
# times the table's perimeter.
_PIECE = 64
_SIMPLIFY_ABOVE = 1000
_MAX_VERTICES = 50_000
_MAX_LENGTH = 50
# The most features a map, and vertices a feature, may be given (before simplifying):
# reading them costs time in proportion.
_MAX_FEATURES = 100_000
_MAX_GIVEN = 1_000_000
# A feature's properties: the engine's, then free-form ones it keeps out of the way of:
# the simplestyle keys map editors such as geojson.io write, and any key beginning "x-".
_PROPERTIES = ("terrain", "id", "width", "elevation", "steep", "climb", "cost")
_STYLE = frozenset({"name", "title", "description", "stroke", "stroke-width",
                    "stroke-opacity", "fill", "fill-opacity", "marker-color", "marker-size",
                    "marker-symbol"})


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


class MapTooLarge(MapError):
    """A map whose grid would need more than half the machine's memory."""


def load_map(source: str | Path | dict) -> Battlefield:
    """Load and validate a battlefield: a GeoJSON map, or a Tiled map.

    Parameters
    ----------
    source : str, Path or dict
        A path to a ``.geojson`` file or a Tiled map (``.tmx``, ``.tmj``, or a
        ``.json`` Tiled wrote: `engine.maps.tiled`), the name of a map shipped
        with the engine (`shipped_maps`: ``"demo"``, ``"crossings"``) when no such
        file exists, or the parsed GeoJSON itself.

    Returns
    -------
    Battlefield
        Its `Battlefield.points` holds the map's named places (GeoJSON Point
        features with a ``name``; a Tiled map's point objects).

    Raises
    ------
    MapError
        One line naming the feature (index and id; a Tiled map's layer and
        object or tile) and the problem.

    Examples
    --------
    >>> bf = load_map({"type": "FeatureCollection",
    ...     "battlefield": {"width": 20, "height": 10, "units": "cm"},
    ...     "features": [{"type": "Feature", "properties": {"terrain": "woods"},
    ...         "geometry": {"type": "Polygon",
    ...                      "coordinates": [[[5, 0], [15, 0], [15, 30], [5, 30], [5, 0]]]}},
    ...         {"type": "Feature", "properties": {"name": "Blue Knights"},
    ...          "geometry": {"type": "Point", "coordinates": [2, 5]}}]})
    >>> bf.grid.shape, bf.features[0].area.area, bf.points["Blue Knights"]
    ((20, 40), 100.0, (2.0, 5.0))
    """
    return battlefield_of(*map_document(source))


def map_document(source: str | Path | dict) -> tuple[Any, str, list[str] | None]:
    """A map's GeoJSON document, unvalidated: a Tiled map translated into it.

    Parameters
    ----------
    source : str, Path or dict
        As `load_map` takes it.

    Returns
    -------
    tuple
        ``(document, name, origins)``: the parsed GeoJSON, the name messages
        give the map, and for a Tiled map how it names each feature (its
        layer and object or tile; None for GeoJSON).  `battlefield_of`
        validates them.

    Raises
    ------
    MapError
        A file that cannot be read, is not JSON, or is a broken Tiled map.
    """
    if isinstance(source, dict):
        name = "<memory>"
        try:
            return tame(source), name, None
        except RecursionError:
            raise MapError(f"{name}: nested too deeply to be a map") from None
    if not isinstance(source, str | os.PathLike):
        raise MapError(f"a map is a path or a parsed GeoJSON dict, got {source!r:.80}")
    name = str(source)
    path = _shipped(name) if isinstance(source, str) and not is_file(source) else None
    path = path or Path(source)
    tiled = is_tiled(path)
    try:
        raw = read_limited(path)
        data = None if tiled else strict_json(raw.decode("utf-8-sig"))
    except DuplicateKey as exc:
        raise MapError(f"{name}: {exc}") from None
    except FileNotFoundError:
        raise MapError(f"no map file {name!r} (nor a shipped map of that name: "
                       f"{', '.join(shipped_maps())})") from None
    except json.JSONDecodeError as exc:
        raise MapError(f"{name}: not valid JSON: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MapError(f"cannot read map {name}: {exc}") from None
    except RecursionError:
        raise MapError(f"{name}: nested too deeply to be a map") from None
    if tiled or (isinstance(data, dict) and data.get("type") == "map"):  # Tiled's .json too
        doc, origins = read_tiled(path, name)
        return doc, name, origins
    return data, name, None


def convert_map(source: str | Path | dict, target: str | Path) -> Battlefield:
    """Write a map in the other format: a Tiled map as GeoJSON, a GeoJSON map as Tiled.

    ``source`` is read and validated as `load_map` reads it; ``target``'s suffix
    chooses what is written: ``.geojson`` or ``.json`` the engine's GeoJSON
    dialect (a Tiled map's tile layers become polygons, its points Point
    features), ``.tmj`` a Tiled JSON map with one object layer (`to_tiled`).
    Either, read back, gives the same battlefield.

    Parameters
    ----------
    source : str, Path or dict
        As `load_map` takes it.
    target : str or Path
        The file to write (replaced if it exists).

    Returns
    -------
    Battlefield
        The map, as ``source`` gives it.

    Raises
    ------
    MapError
        As `load_map`; a polygon with a hole for a ``.tmj``.
    InputError
        Another suffix, or a file that cannot be written.
    """
    if not isinstance(target, str | Path):
        raise InputError(f"target must be a file name, got {shown(target)}")
    data, name, origins = map_document(source)
    bf = battlefield_of(data, name, origins)
    target = Path(target)
    suffix = target.suffix.lower()
    if suffix == ".tmj":
        text = json.dumps(to_tiled(data, bf), indent=1) + "\n"
    elif suffix in (".geojson", ".json"):
        rest = {k: v for k, v in data.items() if k not in ("type", "battlefield", "features")}
        text = "".join([
            '{"type": "FeatureCollection",\n "battlefield": ', _json(data["battlefield"]),
            *(f",\n {_json(k)}: {_json(v)}" for k, v in rest.items()),
            ',\n "features": [\n  ', ",\n  ".join(_json(f) for f in data["features"]),
            "\n ]}\n"])
    else:
        raise InputError(f"cannot write a map as {target.name!r}: give a .geojson, .json or "
                         ".tmj file (Tiled opens a .tmj and saves it as .tmx)")
    try:
        target.write_text(text, "utf-8")
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write {target}: {exc}") from None
    return bf


def battlefield_of(data: Any, name: str = "<memory>",
                   origins: list[str] | None = None) -> Battlefield:
    """Validate a parsed GeoJSON map (`map_document`) into a `Battlefield`.

    Parameters
    ----------
    data : dict
        The GeoJSON FeatureCollection with its ``battlefield`` header.
    name : str
        What messages call the map.
    origins : list of str, optional
        How the map's own format names each feature (``data["features"][i]``):
        messages and `Feature.label` use it instead of ``feature i``.

    Returns
    -------
    Battlefield

    Raises
    ------
    MapError
        As `load_map`.
    """

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
    unknown = sorted(set(head) - {"width", "height", "units", "cell"})
    if unknown:
        raise fail(f"unknown battlefield key {unknown[0]!r}"
                   f"{did_you_mean(unknown[0], ('width', 'height', 'units', 'cell'))}")
    for what, v in (("width", width), ("height", height)):
        if v > _MAX_COORD:
            raise fail(f"battlefield {what} {v:g} is larger than {_MAX_COORD:g} table units")
        n = v / cell
        if not n < 1e12:  # (a subnormal cell: inf)
            raise fail(f"battlefield {what} {v:g} is {n:.3g} cells of {cell:g}, too large "
                       "for any grid; use a larger cell")
        if abs(n - round(n)) > 1e-9 * max(n, 1.0) or round(n) < 1:
            given = "" if "cell" in head else f" (the default for {units})"
            raise fail(f"battlefield {what} {v:g} is not a whole number of cells of "
                       f"{cell:g}{given} ({n:.4g}); give a cell that divides the width "
                       "and height")
    cells = (width / cell) * (height / cell)
    need = cells * BYTES_PER_CELL
    if not math.isfinite(need) or need > memory_bytes() // 2:
        raise MapTooLarge(
            f"{name}: a {width:g} x {height:g} table at cell {cell:g} is a grid of {cells:.3g} "
            f"cells, too large for memory (needs about {need / 2**30:.3g} GiB); use a larger cell"
        )

    raw = data.get("features")
    if not isinstance(raw, list):
        raise fail('"features" must be a list')
    if len(raw) > _MAX_FEATURES:
        raise fail(f"{len(raw)} features, more than the {_MAX_FEATURES} a map may have")
    table = box(0.0, 0.0, width, height)
    features, points = [], {}
    for i, f in enumerate(raw):
        origin = origins[i] if origins else None
        if not _is_point(f):
            features.append(_feature(i, f, table, cell, fail, origin))
            continue
        place, xy = _place(_label(i, f, origin), f, width, height, fail)
        if place in points:
            raise fail(f"{_label(i, f, origin)}: a second point named {place!r}")
        points[place] = xy
    return Battlefield(width, height, units, cell, tuple(features), name,
                       Points(points, name))


def _positive(value: Any, what: str, fail) -> float:
    if not real(value) or not math.isfinite(value) or value <= 0:
        raise fail(f"{what} must be a finite number > 0, got {value!r}")
    return float(value)


def _fid(raw: Any) -> Any:
    """A feature's ``id``, else its ``properties.id``, else None."""
    if not isinstance(raw, dict):
        return None
    props = raw.get("properties")
    fid = raw.get("id")
    return props.get("id") if fid is None and isinstance(props, dict) else fid


def _label(index: int, raw: Any, origin: str | None) -> str:
    """How messages name feature ``index``: `Feature.label`."""
    if origin is not None:
        return origin
    fid = _fid(raw)
    return f"feature {index}" + (f" (id {str(fid)!r})" if fid is not None else "")


def _is_point(raw: Any) -> bool:
    """Whether ``raw`` is a GeoJSON feature whose geometry is a Point (a named place)."""
    geom = raw.get("geometry") if isinstance(raw, dict) else None
    return isinstance(geom, dict) and geom.get("type") == "Point"


def _unknown_property(props: dict, known: tuple[str, ...], bad) -> None:
    """Refuse a property neither ``known``, a simplestyle key nor one beginning "x-"."""
    for key in props:
        if key not in known and key not in _STYLE and not str(key).startswith("x-"):
            raise bad(f"unknown property {str(key)!r:.60}{did_you_mean(key, known)} "
                      '(a property of your own must begin "x-")')


def _place(label: str, raw: dict, width: float, height: float,
           fail) -> tuple[str, tuple[float, float]]:
    """A Point feature's name and (x, y): a named place, on the table."""

    def bad(msg: str) -> MapError:
        return fail(f"{label}: {msg}")

    props = raw.get("properties")
    if not isinstance(props, dict) or not isinstance(props.get("name"), str) or not (
            props["name"].strip()):
        raise bad("a Point is a named place: it needs a name (properties.name)")
    if "terrain" in props:
        raise bad("a Point is a named place, not ground: terrain needs a Polygon or a "
                  "LineString")
    _unknown_property(props, ("name", "id"), bad)
    coords = _listed(raw["geometry"].get("coordinates"), 1)
    if not (_finite_coords(coords, _MAX_COORD, depth=1) and len(coords) == 2):
        raise bad("a Point needs one finite coordinate pair [x, y]")
    x, y = float(coords[0]), float(coords[1])
    if not (0 <= x <= width and 0 <= y <= height):
        raise bad(f"point {props['name']!r:.80} at ({x:g}, {y:g}) lies off the table "
                  f"(0..{width:g} x 0..{height:g})")
    return props["name"], (x, y)


def _feature(index: int, raw: Any, table, cell: float, fail, origin: str | None) -> Feature:
    fid = _fid(raw)
    label = _label(index, raw, origin)

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
    _unknown_property(props, _PROPERTIES, bad)
    geom = raw.get("geometry")
    if not isinstance(geom, dict) or "type" not in geom:
        raise bad("has no geometry")
    gtype = geom["type"]
    if gtype not in _AREA_TYPES + _LINE_TYPES:
        raise bad(
            f"geometry type {str(gtype)!r:.60} is not a Polygon, MultiPolygon, LineString, "
            "MultiLineString or Point"
        )
    coords = geom.get("coordinates")
    plain = _finite_coords(coords)
    if not plain:  # numpy arrays (a map built in Python) are read as lists
        coords = _listed(coords)
        geom = {**geom, "coordinates": coords}
        plain = _finite_coords(coords)
    if isinstance(coords, list) and not coords:
        raise bad(f"empty {gtype}")
    if not plain:
        raise bad("has a missing, malformed or non-finite coordinate")
    if not _finite_coords(coords, _MAX_COORD):
        raise bad(f"has a coordinate beyond +-{_MAX_COORD:g} table units")
    if (why := _misshapen(gtype, coords)) is not None:
        raise bad(f"malformed {gtype}: {why}")
    try:
        g = shape(geom)
    except (ValueError, TypeError, AttributeError, IndexError, shapely.errors.ShapelyError) as exc:
        raise bad(f"malformed {gtype}: {exc}") from None
    if g.is_empty:
        raise bad(f"empty {gtype}")
    g = shapely.transform(g, _flushed)
    if shapely.get_num_coordinates(g) > _MAX_GIVEN:
        raise bad(f"{gtype} has {shapely.get_num_coordinates(g)} vertices, more than the "
                  f"{_MAX_GIVEN} a feature may be given")
    try:
        return replace(_shaped(index, fid, terrain, props, gtype,
                               _bounded(g, gtype, table, cell, bad), table, bad), origin=origin)
    except shapely.errors.ShapelyError as exc:
        raise bad(f"geometry cannot be processed: {exc}") from None


def _flushed(xy: np.ndarray) -> np.ndarray:
    """Coordinates within `_TINY` of 0 set to 0."""
    return np.where(np.abs(xy) < _TINY, 0.0, xy)


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
        area = _band(g, width / 2.0)
        if area.is_empty or area.area <= 0:
            raise bad(f"width {width!r} is too small to give the {gtype} any area")
    else:
        if "width" in props:
            raise bad(f"width belongs to lines, not to a {gtype}: an area is the shape "
                      "it is drawn")
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
    if climb is not None and (not real(climb) or not 1 <= climb <= _MAX_COORD):
        raise bad(f"climb must be a number >= 1 and <= {_MAX_COORD:g}, got {climb!r}")
    if (steep or elevation or climb is not None) and linear:
        raise bad("elevation, steep and climb belong to hill polygons, not lines")
    cost = props.get("cost")
    if cost is not None and (not real(cost) or not 0 <= cost <= _MAX_COORD):
        raise bad(f"cost must be a finite number >= 0 and <= {_MAX_COORD:g}, got {cost!r}")

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


def _bounded(g, gtype: str, table, cell: float, bad):
    """``g`` simplified below an eighth of a cell if it has more than `_SIMPLIFY_ABOVE`
    vertices; refused if it still has more than `_MAX_VERTICES`, or if it is a line
    longer than `_MAX_LENGTH` times the table's perimeter (work on it grows with the
    square of its length: the places it crosses itself)."""
    if gtype in _LINE_TYPES and g.length > _MAX_LENGTH * table.length:
        raise bad(f"{gtype} is {g.length:.6g} table units long, more than {_MAX_LENGTH} times "
                  "the table's perimeter")
    if shapely.get_num_coordinates(g) > _SIMPLIFY_ABOVE:  # repeats first: they slow it most
        g = shapely.remove_repeated_points(g).simplify(
            cell / 8.0, preserve_topology=gtype not in _LINE_TYPES)
    n = shapely.get_num_coordinates(g)
    if n > _MAX_VERTICES:
        raise bad(f"{gtype} has {n} vertices where they are an eighth of a cell apart, more "
                  f"than the {_MAX_VERTICES} a feature may have")
    return g


def _band(g, half: float):
    """A line ``g`` widened by ``half`` on each side, flat at its ends: its buffer.

    A long line is buffered in pieces of `_PIECE` segments, with a disc where two
    meet (the buffer's round join), then united: GEOS buffers a line that crosses
    itself many times in time that grows far faster (a random walk of 50,000
    points: 178 s whole, 3.4 s in pieces).
    """
    lines = list(getattr(g, "geoms", [g]))
    if sum(len(line.coords) for line in lines) <= _PIECE + 1:
        return g.buffer(half, cap_style="flat")
    parts, joins = [], []
    for line in lines:
        xy = np.asarray(line.coords)[:, :2]
        parts += [LineString(xy[i:i + _PIECE + 1]) for i in range(0, len(xy) - 1, _PIECE)]
        joins.append(xy[_PIECE:len(xy) - 1:_PIECE])
    return shapely.union_all(np.concatenate([
        shapely.buffer(parts, half, cap_style="flat"),
        shapely.buffer(shapely.points(np.concatenate(joins)), half),
    ]))


# How many levels of lists each geometry's coordinates have (a point's [x, y] the last),
# and what they are, in words.
_NESTING = {
    "LineString": (2, "a list of [x, y] points"),
    "MultiLineString": (3, "a list of lines, each a list of [x, y] points"),
    "Polygon": (3, "a list of rings, each a list of [x, y] points"),
    "MultiPolygon": (4, "a list of polygons, each a list of rings of [x, y] points"),
}


def _misshapen(gtype: str, coords: list) -> str | None:
    """What is wrong with the nesting of a line's or an area's coordinates (lists of
    finite numbers or of lists, `_finite_coords`), in words, or None: each level a
    list, [x, y] points at the bottom, a line of two points or more, a ring of three
    or more."""
    levels, words = _NESTING[gtype]

    def nested(c: Any, k: int) -> bool:  # each list holds numbers only, or lists only
        if k == 2:  # a list of points
            return all(isinstance(x, list | tuple) and not isinstance(x[0], list | tuple)
                       for x in c)
        return all(isinstance(x, list | tuple) and nested(x, k - 1) for x in c)

    if not nested(coords, levels):
        return f"its coordinates must be {words}"
    if gtype in _LINE_TYPES:
        lines = [coords] if gtype == "LineString" else coords
        return "a line needs two points or more" if any(len(x) < 2 for x in lines) else None
    rings = coords if gtype == "Polygon" else [ring for poly in coords for ring in poly]
    return "a ring needs three points or more" if any(len(x) < 3 for x in rings) else None


def _json(value: Any) -> str:
    """``value`` as JSON text, numpy arrays and numbers in it (a map built in Python)
    as lists and numbers."""
    return json.dumps(value, default=_plain)


def _plain(value: Any) -> Any:
    """`json.dumps`'s ``default``: a numpy array or number as a list or number."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _listed(coords: Any, depth: int = 4) -> Any:
    """``coords`` with numpy arrays in it (a map built in Python) made lists, as parsed
    GeoJSON has them, at most ``depth`` levels down (a MultiPolygon's)."""
    if isinstance(coords, np.ndarray):
        return coords.tolist()
    if isinstance(coords, list | tuple) and depth > 0:
        return [_listed(c, depth - 1) for c in coords]
    return coords


def _finite_coords(coords: Any, limit: float = math.inf, depth: int = 4) -> bool:
    """True when ``coords`` is a nested list of finite numbers (``|v| <= limit``), pairs at
    the bottom, at most ``depth`` lists deep (a MultiPolygon's)."""
    if isinstance(coords, list | tuple) and depth > 0:
        if coords and all(real(v) for v in coords):
            return len(coords) >= 2 and all(math.isfinite(v) and abs(v) <= limit for v in coords)
        return bool(coords) and all(_finite_coords(c, limit, depth - 1) for c in coords)
    return False
