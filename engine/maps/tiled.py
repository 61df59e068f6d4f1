"""Tiled maps (the Tiled editor's ``.tmx``, and ``.tmj`` or ``.json``) as the engine's
GeoJSON dialect: `read_tiled` translates one into the dialect's document, which
`engine.maps.geojson` validates like any other map; `to_tiled` writes a GeoJSON
map back as a Tiled JSON map with one object layer.

pytiled-parser reads the file: JSON or XML, tile data as CSV, base64, or
zlib or gzip compressed base64, tilesets embedded or external (``.tsj``,
``.tsx``).  The convention (docs/maps.md):

- map properties ``units`` ("cm" or "in"), ``tile_size`` (table units per
  tile side, default 1) and ``cell`` (the grid's cell; by default a tile, or
  the largest tile fraction no larger than the units' default cell when
  objects are drawn).  Table coordinates are Tiled's pixels scaled by
  ``tile_size / tilewidth`` (x) and ``tile_size / tileheight`` (y); y runs
  down in both.
- a tile's ``terrain`` property (or its class) names its terrain kind;
  ``clear`` or none is open ground.  Its other properties are the feature's.
  A tile layer's tiles of one terrain and properties make one feature, so
  each tile layer stacks over the others as overlapping features do.
- an object's class (or ``terrain`` property) names its kind: rectangles,
  ellipses (as 64-sided polygons), polygons and tile objects are areas,
  polylines are lines with a ``width`` property, points are named places.
  Rotation and layer offsets are honoured.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import pytiled_parser as tiled
import shapely
from shapely.geometry import mapping

from .._args import did_you_mean, finite, shown, whole
from .._limits import read_limited
from ..errors import MapError
from .battlefield import _DEFAULT_CELL, Battlefield

__all__ = ["is_tiled", "read_tiled", "to_tiled"]

_SUFFIXES = (".tmx", ".tmj")
# A gid's top four bits flip or rotate the tile (horizontally, vertically,
# diagonally, and by 120 degrees on hexagonal maps); the rest name it.
_GID = 0x0FFFFFFF
_ELLIPSE_SIDES = 64
# The most tiles a map may have (a 4096 x 4096 map): each is a Python int in
# pytiled-parser's lists, and compressed data could otherwise unpack to any size.
_MAX_TILES = 2**24
_MAP_PROPERTIES = ("units", "tile_size", "cell")
# `to_tiled`: pixels per tile side in the maps it writes.
_TILE_PX = 32


def is_tiled(path: Path) -> bool:
    """Whether ``path`` names a Tiled map by its suffix (``.tmx``, ``.tmj``).  A
    ``.json`` file is one too when it says ``"type": "map"`` (`load_map` looks)."""
    return path.suffix.lower() in _SUFFIXES


def read_tiled(path: Path, name: str) -> tuple[dict, list[str]]:
    """A Tiled map as the engine's GeoJSON dialect.

    Parameters
    ----------
    path : Path
        The map file; its tilesets and templates are found relative to it.
    name : str
        What messages call the map.

    Returns
    -------
    tuple
        ``(document, origins)``: the GeoJSON FeatureCollection with its
        ``battlefield`` header, and for each of its features how the Tiled map
        names it (``layer 'ground', tile 3 of tileset 'terrain' at column 4,
        row 0``; ``layer 'objects', object 7 'oak wood'``).

    Raises
    ------
    MapError
        One line naming the layer, object or tile and the problem: a file
        pytiled-parser cannot read, a missing tileset file, an isometric,
        staggered or hexagonal map, an infinite map, missing or bad map
        properties, a tile of no tileset, an object of no terrain kind.
    """

    def fail(msg: str) -> MapError:
        return MapError(f"{name}: {msg}")

    m = _parse(path, fail)
    if m.orientation != "orthogonal":
        kind = " ".join(str(m.orientation).split())[:40]
        raise fail(f"a{'n' if kind[:1] in 'aeiou' else ''} {kind} map: only orthogonal maps "
                   "are read")
    if m.infinite:
        raise fail("an infinite map: only fixed-size maps are read (untick Infinite in "
                   "Tiled's Map Properties)")
    cols, rows = (_whole(v, f"map {w}", fail) for v, w in zip(m.map_size, ("width", "height"),
                                                               strict=True))
    tw, th = (_whole(v, f"map {w}", fail) for v, w in zip(m.tile_size, ("tilewidth", "tileheight"),
                                                           strict=True))
    if cols * rows > _MAX_TILES:
        raise fail(f"a map of {cols} x {rows} tiles, more than the {_MAX_TILES} a map may have")
    props = _properties(m.properties, "map", fail)
    for key in props:
        if key not in _MAP_PROPERTIES and not str(key).startswith("x-"):
            raise fail(f"unknown map property {str(key)!r:.60}"
                       f"{did_you_mean(key, _MAP_PROPERTIES)} (one of your own must begin "
                       '"x-")')
    units = props.get("units")
    if units is None:
        raise fail('needs a map property "units": "cm" or "in"')
    if not isinstance(units, str) or units not in _DEFAULT_CELL:
        raise fail(f'map property units must be "cm" or "in", got {shown(units)}')
    tile = props.get("tile_size", 1)
    if not finite(tile) or tile <= 0:
        raise fail(f"map property tile_size must be a number > 0 (table units per tile), "
                   f"got {shown(tile)}")
    read = _Reader(m, float(tile), (float(tile) / tw, float(tile) / th), fail)
    read.layers(m.layers, "", (0.0, 0.0))
    if "cell" in props:
        cell = props["cell"]
        if not finite(cell) or cell <= 0:
            raise fail(f"map property cell must be a number > 0, got {shown(cell)}")
    else:
        fine = _DEFAULT_CELL[units]
        cell = tile if not read.drawn or tile <= fine else tile / math.ceil(tile / fine - 1e-9)
    head = {"width": cols * tile, "height": rows * tile, "units": units, "cell": cell}
    doc = {"type": "FeatureCollection", "battlefield": head, "features": read.features}
    return doc, read.origins


def _packed(raw: bytes) -> tuple[Any, Any, list[tuple[str, str]]]:
    """A map file's width and height in tiles and its compressed tile data, each as
    (compression, base64 text), read ahead of pytiled-parser; nothing for a file
    neither JSON nor XML (pytiled-parser says what is wrong with it)."""
    try:
        if raw.lstrip()[:1] == b"<":
            root = ElementTree.fromstring(raw)
            blobs = [(d.get("compression"), d.text) for d in root.iter("data")]
            size = [root.get(k, "") for k in ("width", "height")]
            return (*(int(v) if v.isdigit() else None for v in size), blobs)
        doc = json.loads(raw)
    except (ElementTree.ParseError, ValueError, LookupError, RecursionError):
        return None, None, []
    if not isinstance(doc, dict):
        return None, None, []
    blobs, layers = [], doc.get("layers")
    layers = list(layers) if isinstance(layers, list) else []
    while layers:
        layer = layers.pop()
        if isinstance(layer, dict):
            if isinstance(layer.get("layers"), list):  # a group's
                layers += layer["layers"]
            chunks = layer.get("chunks") if isinstance(layer.get("chunks"), list) else []
            blobs += [(part.get("compression", layer.get("compression")), part.get("data"))
                      for part in [layer, *chunks] if isinstance(part, dict)]
    return doc.get("width"), doc.get("height"), blobs


def _parse(path: Path, fail) -> tiled.TiledMap:
    """pytiled-parser's reading of ``path``; any failure of it is a `MapError`.

    Compressed tile data is first unpacked here, up to four bytes a tile of the
    map, and refused if it holds more: pytiled-parser would unpack it whole.
    """
    try:
        raw = read_limited(path)
    except (OSError, ValueError) as exc:
        raise fail(f"cannot read the map: {exc}") from None
    cols, rows, blobs = _packed(raw)
    if finite(cols) and finite(rows) and 0 < cols * rows <= _MAX_TILES:
        limit = 4 * int(cols) * int(rows)
        for compression, text in blobs:
            if compression in ("zlib", "gzip") and isinstance(text, str):
                try:
                    unpack = zlib.decompressobj(47)  # zlib or gzip, told by its header
                    size = len(unpack.decompress(base64.b64decode(text.strip()), limit + 1))
                except (ValueError, zlib.error):
                    continue  # pytiled-parser refuses it
                if size > limit:
                    raise fail(f"{compression} tile data unpacks to more than the map's "
                               f"{int(cols)} x {int(rows)} tiles")
    try:
        return tiled.parse_map(path)
    except FileNotFoundError as exc:
        missing = Path(str(exc.filename))
        suffix = missing.suffix.lower()
        what = ("tileset " if suffix in (".tsx", ".tsj", ".json")
                else "template " if suffix in (".tx", ".tj") else "")
        raise fail(f"{what}file {missing.name!r} not found (looked for {missing})") from None
    except MemoryError:
        raise
    except KeyError as exc:  # a JSON map without a key Tiled always writes
        key = repr(exc.args[0]) if exc.args else "key it needs"
        raise fail(f"not a Tiled map pytiled-parser can read: it has no {key}"
                   + (" (a GeoJSON map? name it .geojson)" if _geojson(raw) else "")) from None
    except Exception as exc:  # pytiled-parser raises anything at all on a broken file
        text = " ".join(str(exc).split())[:160]
        raise fail(f"not a Tiled map pytiled-parser can read: {type(exc).__name__}"
                   + (f": {text}" if text else "")) from None


def _geojson(raw: bytes) -> bool:
    """Whether ``raw`` is a GeoJSON document (a map given a Tiled name)."""
    try:
        return json.loads(raw.decode("utf-8-sig")).get("type") == "FeatureCollection"
    except (ValueError, AttributeError):
        return False


def _whole(value: Any, what: str, fail) -> int:
    """``value`` as a whole number >= 1, or a `MapError`."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise fail(f"{what} must be a whole number >= 1, got {shown(value)}")
    return int(value)


def _properties(raw: Any, what: str, fail) -> dict[str, Any]:
    """Tiled custom properties as plain values: a colour as ``"#rrggbb"`` (or
    ``"#aarrggbb"``), a file as its path."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(f"{what}: properties must be a list of name, type and value")
    out = {}
    for key, value in raw.items():
        if isinstance(value, tiled.Color):
            rgb = "".join(f"{c:02x}" for c in value[:3])
            value = f"#{rgb}" if value.alpha == 255 else f"#{value.alpha:02x}{rgb}"
        elif isinstance(value, Path):
            value = value.as_posix()
        out[str(key)] = value
    return out


def _terrain(kind: Any, props: dict, what: str, fail) -> str | None:
    """The terrain kind a class and a ``terrain`` property name (None: neither)."""
    given = props.pop("terrain", None)
    kinds = [k for k in (kind or None, given) if k is not None]
    if len(kinds) == 2 and kinds[0] != kinds[1]:
        raise fail(f"{what}: class {shown(kind)} and terrain property {shown(given)} "
                   "disagree; give one")
    if not kinds:
        return None
    terrain = kinds[0]
    if not isinstance(terrain, str) or not terrain.strip():
        raise fail(f"{what}: terrain must be the name of a terrain kind, got {shown(terrain)}")
    return terrain


class _Reader:
    """Walks a Tiled map's layers, collecting GeoJSON features and their origins."""

    def __init__(self, m: tiled.TiledMap, tile: float, scale: tuple[float, float], fail):
        self.m, self.tile, self.scale, self.fail = m, tile, scale, fail
        self.features: list[dict] = []
        self.origins: list[str] = []
        self.drawn = False  # any object drawn as an area or a line
        if not all(whole(first) and first >= 1 for first in m.tilesets):
            raise fail("a tileset's firstgid must be a whole number >= 1")
        self.firsts = sorted(m.tilesets)

    def add(self, feature: dict, origin: str) -> None:
        self.features.append(feature)
        self.origins.append(origin)

    def layers(self, layers: Any, path: str, offset: tuple[float, float]) -> None:
        for layer in layers or []:
            where = f"{path}/{layer.name}" if path else str(layer.name)
            ox, oy = (_number(v, f"layer {where!r} offset", self.fail) for v in layer.offset)
            at = (offset[0] + ox, offset[1] + oy)
            if isinstance(layer, tiled.LayerGroup):
                self.layers(layer.layers, where, at)
            elif isinstance(layer, tiled.TileLayer):
                self.tile_layer(layer, where, at)
            elif isinstance(layer, tiled.ObjectLayer):
                for obj in layer.tiled_objects:
                    self.tiled_object(obj, where, at)

    def tile_of(self, gid: int, what: str) -> tuple[tiled.Tileset, int]:
        """The tileset holding ``gid`` (flags removed) and its id there."""
        i = int(np.searchsorted(self.firsts, gid, side="right")) - 1
        if i >= 0:
            ts = self.m.tilesets[self.firsts[i]]
            local = gid - self.firsts[i]
            if local < ts.tile_count or local in (ts.tiles or {}):
                return ts, local
        raise self.fail(f"{what}: tile id {gid} belongs to no tileset of the map")

    def tile_kind(self, gid: int, what: str) -> tuple[str | None, dict, str]:
        """A tile's terrain kind, its other properties, and how messages name it."""
        ts, local = self.tile_of(gid, what)
        t = (ts.tiles or {}).get(local)
        named = f"{what}, tile {local} of tileset {ts.name!r}"
        props = _properties(None if t is None else t.properties, named, self.fail)
        return _terrain(None if t is None else t.class_, props, named, self.fail), props, named

    def tile_layer(self, layer: tiled.TileLayer, where: str, at: tuple[float, float]) -> None:
        cols, rows = self.m.map_size
        try:
            gids = np.array(layer.data or [])
        except (ValueError, TypeError, OverflowError):  # rows of unequal length
            gids = np.zeros(0)
        if gids.dtype.kind not in "iu" or gids.shape != (rows, cols) or (gids < 0).any():
            raise self.fail(f"layer {where!r}: its data is not {cols} x {rows} tile ids "
                            "(whole numbers >= 0), one per tile of the map")
        ids = gids & _GID
        groups: dict[tuple, list] = defaultdict(list)
        for gid in np.unique(ids[ids > 0]).tolist():
            r, c = (int(v[0]) for v in np.nonzero(ids == gid))
            terrain, props, named = self.tile_kind(gid, f"layer {where!r}")
            if terrain is not None and terrain != "clear":
                key = (terrain, json.dumps(props, sort_keys=True, default=str))
                groups[key].append((gid, f"{named} at column {c}, row {r}", props))
        for (terrain, _), members in groups.items():
            mask = np.isin(ids, [gid for gid, _, _ in members])
            self.add({"type": "Feature", "properties": {**members[0][2], "terrain": terrain},
                      "geometry": mapping(self.tiles(mask, at))}, members[0][1])

    def tiles(self, mask: np.ndarray, at: tuple[float, float]):
        """The union of a layer's tiles where ``mask`` holds, in table units."""
        x0, y0 = at[0] * self.scale[0], at[1] * self.scale[1]
        rr, c0, c1 = [], [], []
        for r in np.flatnonzero(mask.any(axis=1)):
            edges = np.diff(np.concatenate([[0], mask[r].astype(np.int8), [0]]))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
            rr += [r] * len(starts)
            c0 += starts.tolist()
            c1 += ends.tolist()
        rr, c0, c1 = np.array(rr), np.array(c0), np.array(c1)
        runs = shapely.box(x0 + c0 * self.tile, y0 + rr * self.tile, x0 + c1 * self.tile,
                           y0 + (rr + 1) * self.tile)
        return shapely.coverage_union_all(runs).simplify(0.0)  # no vertex between two tiles

    def tiled_object(self, obj: Any, where: str, at: tuple[float, float]) -> None:
        what = f"layer {where!r}, object {obj.id}" + (f" {obj.name!r}" if obj.name else "")
        if isinstance(obj, tiled.tiled_object.Text):
            return  # a label drawn on the map, not ground
        fail = self.fail
        props = _properties(obj.properties, what, fail)
        if isinstance(obj, tiled.tiled_object.Point):
            if not isinstance(obj.name, str) or not obj.name.strip():
                raise fail(f"{what}: a point is a named place; give it a name")
            (x, y), = self.placed(obj, [(0.0, 0.0)], at, what)
            self.add({"type": "Feature", "properties": {"name": obj.name},
                      "geometry": {"type": "Point", "coordinates": [x, y]}}, what)
            return
        kind = obj.class_
        if isinstance(obj, tiled.tiled_object.Tile):
            tile_terrain, tile_props, _ = self.tile_kind(
                int(_number(obj.gid, f"{what} gid", fail)) & _GID, what)
            props = {**tile_props, **props}
            kind = kind or tile_terrain
        terrain = _terrain(kind, props, what, fail)
        if terrain is None:
            raise fail(f"{what}: has no class (its terrain kind; or a terrain property)")
        geometry = self.shape(obj, at, what)
        self.drawn = True
        feature = {"type": "Feature", "properties": {**props, "terrain": terrain},
                   "geometry": geometry}
        if obj.name:
            feature["id"] = obj.name
        self.add(feature, what)

    def shape(self, obj: Any, at: tuple[float, float], what: str) -> dict:
        """An area or line object's GeoJSON geometry, in table units."""
        w, h = (_number(v, f"{what} size", self.fail) for v in obj.size)
        if isinstance(obj, tiled.tiled_object.Polyline | tiled.tiled_object.Polygon):
            points = [(_number(p[0], f"{what} point", self.fail),
                       _number(p[1], f"{what} point", self.fail)) for p in obj.points]
            if not points:
                raise self.fail(f"{what}: has no points")
            xy = self.placed(obj, points, at, what)
            if isinstance(obj, tiled.tiled_object.Polyline):
                return {"type": "LineString", "coordinates": xy}
            return {"type": "Polygon", "coordinates": [[*xy, xy[0]]]}
        if isinstance(obj, tiled.tiled_object.Ellipse):
            turn = np.linspace(0.0, 2.0 * math.pi, _ELLIPSE_SIDES, endpoint=False)
            corners = list(zip((w / 2) * (1 + np.cos(turn)), (h / 2) * (1 + np.sin(turn)),
                               strict=True))
        elif isinstance(obj, tiled.tiled_object.Tile):  # drawn from its bottom-left corner
            corners = [(0.0, -h), (w, -h), (w, 0.0), (0.0, 0.0)]
        else:
            corners = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]
        xy = self.placed(obj, corners, at, what)
        return {"type": "Polygon", "coordinates": [[*xy, xy[0]]]}

    def placed(self, obj: Any, points: list, at: tuple[float, float],
               what: str) -> list[list[float]]:
        """``points`` relative to ``obj``, rotated as it is (clockwise, in degrees, about
        its position) and moved by its layer's offset ``at``, in table units."""
        x0, y0 = (_number(v, f"{what} position", self.fail) for v in obj.coordinates)
        turn = math.radians(_number(obj.rotation, f"{what} rotation", self.fail))
        c, s = (1.0, 0.0) if turn == 0 else (math.cos(turn), math.sin(turn))
        sx, sy = self.scale
        return [[(at[0] + x0 + (px * c - py * s if s else px)) * sx,
                 (at[1] + y0 + (px * s + py * c if s else py)) * sy] for px, py in points]


def _number(value: Any, what: str, fail) -> float:
    """``value`` as a finite float, or a `MapError` naming ``what``."""
    if not finite(value):
        raise fail(f"{what} must be a finite number, got {shown(value)}")
    return float(value)


def to_tiled(data: dict, battlefield: Battlefield) -> dict:
    """A validated GeoJSON map as a Tiled JSON map (``.tmj``) with one object layer.

    Areas become polygon objects, lines polyline objects with their ``width``,
    named points point objects; the terrain kind is each object's class and
    the other properties its custom properties.  The map's tiles are one
    table unit when the table is a whole number of them, else one cell;
    ``units``, ``tile_size`` and ``cell`` are map properties, so `read_tiled`
    gives back the same battlefield.

    Parameters
    ----------
    data : dict
        The GeoJSON document ``battlefield`` was validated from.
    battlefield : Battlefield

    Returns
    -------
    dict
        The Tiled map, for `json.dump`.

    Raises
    ------
    MapError
        A polygon with a hole, which Tiled cannot draw.

    Examples
    --------
    >>> from engine.maps.geojson import battlefield_of
    >>> doc = {"type": "FeatureCollection",
    ...        "battlefield": {"width": 4, "height": 2, "units": "cm"},
    ...        "features": [{"type": "Feature", "properties": {"terrain": "road", "width": 1},
    ...                      "geometry": {"type": "LineString", "coordinates": [[0, 1], [4, 1]]}}]}
    >>> tmj = to_tiled(doc, battlefield_of(doc))
    >>> tmj["width"], tmj["height"], tmj["layers"][0]["objects"][0]["polyline"][1]
    (4, 2, {'x': 128.0, 'y': 32.0})
    """
    bf = battlefield
    whole = float(bf.width).is_integer() and float(bf.height).is_integer()
    tile = 1.0 if whole else bf.cell
    px = _TILE_PX / tile
    objects = []
    for i, raw in enumerate(data["features"]):
        geom, props = raw["geometry"], dict(raw["properties"])
        label = next((f.label for f in bf.features if f.index == i), f"feature {i}")
        base = {"name": "", "type": "", "x": 0, "y": 0, "width": 0, "height": 0,
                "rotation": 0, "visible": True}
        if geom["type"] == "Point":
            x, y = (float(v) * px for v in geom["coordinates"])
            objects.append({**base, "name": props["name"], "x": x, "y": y, "point": True})
            continue
        base["type"] = props.pop("terrain")
        fid = raw.get("id", props.pop("id", None))
        base["name"] = "" if fid is None else str(fid)
        base["properties"] = [_property(k, v) for k, v in props.items()]
        parts = geom["coordinates"] if geom["type"].startswith("Multi") else [
            geom["coordinates"]]
        for part in parts:
            if geom["type"].endswith("LineString"):
                objects.append({**base, "polyline": _pixels(part, px)})
            elif len(part) > 1:
                raise MapError(f"{bf.source}: {label}: a polygon with a hole cannot be drawn "
                               "in Tiled; draw it as polygons without holes")
            else:
                ring = part[0]  # Tiled's polygons close themselves: no last point again
                closed = len(ring) > 1 and list(ring[0]) == list(ring[-1])
                objects.append({**base, "polygon": _pixels(ring[:-1] if closed else ring, px)})
    for n, obj in enumerate(objects, 1):
        obj["id"] = n
    return {
        "type": "map", "version": "1.10", "tiledversion": "1.10.2",
        "orientation": "orthogonal", "renderorder": "right-down", "infinite": False,
        "width": round(bf.width / tile), "height": round(bf.height / tile),
        "tilewidth": _TILE_PX, "tileheight": _TILE_PX, "compressionlevel": -1,
        "nextlayerid": 2, "nextobjectid": len(objects) + 1, "tilesets": [],
        "properties": [_property("units", bf.units), _property("tile_size", tile),
                       _property("cell", bf.cell)],
        "layers": [{"id": 1, "name": "terrain", "type": "objectgroup", "draworder": "index",
                    "opacity": 1, "visible": True, "x": 0, "y": 0, "objects": objects}],
    }


def _pixels(coords: list, px: float) -> list[dict]:
    """Table coordinates as Tiled's points (pixels from the map's corner)."""
    return [{"x": float(x) * px, "y": float(y) * px} for x, y, *_ in coords]


def _property(name: str, value: Any) -> dict:
    """A Tiled custom property: bool, int, float or string (anything else as JSON text)."""
    if isinstance(value, bool):
        return {"name": name, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"name": name, "type": "int", "value": value}
    if isinstance(value, float):
        return {"name": name, "type": "float", "value": value}
    text = value if isinstance(value, str) else json.dumps(value)
    return {"name": name, "type": "string", "value": text}
