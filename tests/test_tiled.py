"""Tiled maps: a .tmx or .tmj gives the battlefield its GeoJSON twin gives, in every
encoding and with every kind of tileset; named points; `engine convert` both ways;
and every map that does not fit the convention refused in one line naming the layer,
object or tile."""

import base64
import gzip
import json
import math
import shutil
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import engine
from engine import MapError, load_map
from engine.cli import main

from .conftest import MAPS, battlefield, feature, line, rect

TILED = MAPS / "tiled"
PX = 16  # pixels per tile side in these maps
TILE = 2.0  # table units per tile
S = PX / TILE  # pixels per table unit
COLS, ROWS = 20, 10  # a 40 x 20 cm table
FLIP_H, FLIP_V, FLIP_D = 0x80000000, 0x40000000, 0x20000000

# The tileset: 0 grass (no terrain), 1 woods, 2 clear, 3 a hill 2 cm high.
TILES = {1: {"terrain": "woods"}, 2: {"terrain": "clear"},
         3: {"terrain": "hill", "elevation": 2.0}}


# --- writing Tiled maps ----------------------------------------------------------------


def prop(name, value):
    kind = ("bool" if isinstance(value, bool) else "int" if isinstance(value, int)
            else "float" if isinstance(value, float) else "string")
    return {"name": name, "type": kind, "value": value}


def tileset_json(tiles=TILES, name="terrain", count=4, classes=None):
    """A tileset as Tiled's JSON has it (without firstgid)."""
    classes = classes or {}
    return {"name": name, "tilewidth": PX, "tileheight": PX, "tilecount": count,
            "columns": count, "image": "terrain.png", "imagewidth": PX * count,
            "imageheight": PX, "margin": 0, "spacing": 0, "type": "tileset",
            "version": "1.10", "tiledversion": "1.10.2",
            "tiles": [{"id": i, **({"type": classes[i]} if i in classes else {}),
                       "properties": [prop(k, v) for k, v in props.items()]}
                      for i, props in tiles.items()]}


def tile_layer(name, gids, **extra):
    return {"type": "tilelayer", "name": name, "id": 1, "x": 0, "y": 0, "width": COLS,
            "height": ROWS, "opacity": 1, "visible": True,
            "data": np.asarray(gids, dtype=np.uint32).ravel().tolist(), **extra}


def object_layer(name, objects, **extra):
    return {"type": "objectgroup", "name": name, "id": 2, "x": 0, "y": 0, "opacity": 1,
            "visible": True, "draworder": "index", "objects": objects, **extra}


def obj(oid, cls="", name="", x=0.0, y=0.0, w=0.0, h=0.0, rotation=0.0, **extra):
    props = extra.pop("props", {})
    return {"id": oid, "name": name, "type": cls, "x": x, "y": y, "width": w, "height": h,
            "rotation": rotation, "visible": True,
            **({"properties": [prop(k, v) for k, v in props.items()]} if props else {}),
            **extra}


def polyline(oid, cls, points, width, name=""):
    """A polyline object at the origin, its points in table units."""
    return obj(oid, cls, name, polyline=[{"x": x * S, "y": y * S} for x, y in points],
               props={"width": float(width)})


def tiled_map(layers, props=None, tilesets=None, **extra):
    """A Tiled JSON map document of COLS x ROWS tiles of PX pixels, TILE cm each."""
    props = {"units": "cm", "tile_size": TILE} if props is None else props
    tilesets = [{"firstgid": 1, **tileset_json()}] if tilesets is None else tilesets
    return {"type": "map", "version": "1.10", "tiledversion": "1.10.2",
            "orientation": "orthogonal", "renderorder": "right-down", "infinite": False,
            "width": COLS, "height": ROWS, "tilewidth": PX, "tileheight": PX,
            "compressionlevel": -1, "nextlayerid": 9, "nextobjectid": 99,
            "properties": [prop(k, v) for k, v in props.items()],
            "tilesets": tilesets, "layers": layers, **extra}


def write_tmj(folder, doc, name="field.tmj"):
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def _xml_properties(parent, props):
    if props:
        el = ET.SubElement(parent, "properties")
        for p in props:
            attrs = {"name": p["name"], "value": str(p["value"]).lower()
                     if isinstance(p["value"], bool) else str(p["value"])}
            if p["type"] != "string":
                attrs["type"] = p["type"]
            ET.SubElement(el, "property", attrs)


def _xml_tileset(parent, ts):
    el = ET.SubElement(parent, "tileset", {k: str(ts[k]) for k in ("name",)} | {
        "tilewidth": str(ts["tilewidth"]), "tileheight": str(ts["tileheight"]),
        "tilecount": str(ts["tilecount"]), "columns": str(ts["columns"])})
    ET.SubElement(el, "image", {"source": ts["image"], "width": str(ts["imagewidth"]),
                                "height": str(ts["imageheight"])})
    for t in ts["tiles"]:
        tile = ET.SubElement(el, "tile", {"id": str(t["id"]),
                                          **({"type": t["type"]} if "type" in t else {})})
        _xml_properties(tile, t["properties"])
    return el


def _xml_data(layer_el, gids, encoding):
    raw = np.asarray(gids, dtype="<u4").tobytes()
    if encoding == "csv":
        ET.SubElement(layer_el, "data", {"encoding": "csv"}).text = ",".join(
            str(v) for v in np.asarray(gids, dtype=np.uint32).ravel())
        return
    attrs = {"encoding": "base64"}
    if encoding == "zlib":
        raw, attrs["compression"] = zlib.compress(raw), "zlib"
    elif encoding == "gzip":
        raw, attrs["compression"] = gzip.compress(raw), "gzip"
    ET.SubElement(layer_el, "data", attrs).text = base64.b64encode(raw).decode()


def write_tmx(folder, doc, encoding="csv", name="field.tmx"):
    """``doc`` (a Tiled JSON map document) as a .tmx, its tile data in ``encoding``."""
    keys = ("version", "tiledversion", "orientation", "renderorder", "width", "height",
            "tilewidth", "tileheight", "nextlayerid", "nextobjectid")
    root = ET.Element("map", {k: str(doc[k]) for k in keys})
    root.set("infinite", "1" if doc["infinite"] else "0")
    _xml_properties(root, doc["properties"])
    for ts in doc["tilesets"]:
        if "source" in ts:
            ET.SubElement(root, "tileset", {"firstgid": str(ts["firstgid"]),
                                            "source": ts["source"]})
        else:
            _xml_tileset(root, ts).set("firstgid", str(ts["firstgid"]))
    for layer in doc["layers"]:
        if layer["type"] == "tilelayer":
            el = ET.SubElement(root, "layer", {"id": str(layer["id"]), "name": layer["name"],
                                               "width": str(COLS), "height": str(ROWS)})
            _xml_data(el, layer["data"], encoding)
            continue
        el = ET.SubElement(root, "objectgroup", {"id": str(layer["id"]),
                                                 "name": layer["name"]})
        for o in layer["objects"]:
            attrs = {k: str(o[k]) for k in ("id", "x", "y", "width", "height", "rotation")}
            attrs |= {k: str(o[k]) for k in ("name", "type", "gid") if o.get(k)}
            oe = ET.SubElement(el, "object", attrs)
            _xml_properties(oe, o.get("properties"))
            for shape in ("polygon", "polyline"):
                if shape in o:
                    ET.SubElement(oe, shape, {"points": " ".join(
                        f"{p['x']!r},{p['y']!r}" for p in o[shape])})
            for flag in ("ellipse", "point"):
                if o.get(flag):
                    ET.SubElement(oe, flag)
    path = folder / name
    ET.ElementTree(root).write(path, encoding="UTF-8", xml_declaration=True)
    return path


def write_tsx(folder, ts, name="terrain.tsx"):
    root = ET.Element("root")
    el = _xml_tileset(root, ts)
    ET.ElementTree(el).write(folder / name, encoding="UTF-8", xml_declaration=True)
    return name


# --- the same battlefield both ways -----------------------------------------------------

GROUND = np.ones((ROWS, COLS), dtype=np.uint32)  # grass everywhere (gid 1)
GROUND[1:4, 2:6] = 2  # woods: x 4..12, y 2..8
GROUND[6:9, 14:17] = 3  # clear tiles: open ground
RIVER = [(30, -1), (30, 21)]
BRIDGE = [(26, 10), (34, 10)]
ROAD = [(0, 10), (40, 10)]


def objects():
    """A woods polygon, a road, a river and its bridge, and two named points."""
    wood = obj(10, "woods", "spinney", x=16 * S, y=12 * S,
               polygon=[{"x": 0, "y": 0}, {"x": 6 * S, "y": 0}, {"x": 6 * S, "y": 5 * S},
                        {"x": 0, "y": 5 * S}])
    return [wood, polyline(11, "road", ROAD, 2, "high road"),
            polyline(12, "river", RIVER, 4, "river"), polyline(13, "bridge", BRIDGE, 3),
            obj(14, name="Blue Knights", x=3 * S, y=15 * S, point=True),
            obj(15, name="Red Orcs", x=37 * S, y=3 * S, point=True)]


def field(**extra):
    return tiled_map([tile_layer("ground", GROUND), object_layer("features", objects())],
                     **extra)


def twin():
    """The GeoJSON twin of `field`."""
    return battlefield([
        feature("woods", rect(4, 2, 12, 8)),
        {**feature("woods", rect(16, 12, 22, 17)), "id": "spinney"},
        feature("road", line(*ROAD), "high road", width=2),
        feature("river", line(*RIVER), "river", width=4),
        feature("bridge", line(*BRIDGE), width=3),
        {"type": "Feature", "properties": {"name": "Blue Knights"},
         "geometry": {"type": "Point", "coordinates": [3, 15]}},
        {"type": "Feature", "properties": {"name": "Red Orcs"},
         "geometry": {"type": "Point", "coordinates": [37, 3]}},
    ])


def assert_same_ground(a, b, rules, units=(("humans", {"ranks": 2}), ("wood elves", {}))):
    """``a`` and ``b`` rasterise alike, kind by kind, and price ``units`` alike."""
    assert (a.width, a.height, a.units, a.cell) == (b.width, b.height, b.units, b.cell)
    la, lb = engine.terrain.layers(a, rules), engine.terrain.layers(b, rules)
    assert set(la.kinds) == set(lb.kinds)
    for kind in la.kinds:
        on_a = (la.mask & la.bits([kind])) != 0
        on_b = (lb.mask & lb.bits([kind])) != 0
        assert np.array_equal(on_a, on_b), kind
    assert np.array_equal(la.elevation, lb.elevation)
    for race, kw in units:
        unit = rules.unit(race, **kw)
        ga, gb = engine.cost_grid(a, rules, unit), engine.cost_grid(b, rules, unit)
        assert np.array_equal(ga.base, gb.base)
        assert np.array_equal(ga.narrow, gb.narrow)


def test_the_same_battlefield_both_ways(tmp_path, rules):
    bf = load_map(write_tmj(tmp_path, field()))
    geo = load_map(twin())
    assert_same_ground(bf, geo, rules)
    assert dict(bf.points) == dict(geo.points) == {"Blue Knights": (3.0, 15.0),
                                                   "Red Orcs": (37.0, 3.0)}
    unit = rules.unit("humans", ranks=2)
    ga, gb = engine.cost_grid(bf, rules, unit), engine.cost_grid(geo, rules, unit)
    ra, rb = engine.reach(ga, bf.points["Blue Knights"]), engine.reach(gb, (3, 15))
    assert np.array_equal(ra.cost, rb.cost, equal_nan=True)
    a = engine.route(ga, bf.points["Blue Knights"], bf.points["Red Orcs"])
    b = engine.route(gb, (3, 15), (37, 3))
    assert (a.cost, a.turns, a.path) == (b.cost, b.turns, b.path)
    assert "bridge" in {t for leg in a.legs for t in leg.terrain}  # it crossed the river


def test_tiles_of_one_terrain_are_one_feature_named_by_layer_and_tile(tmp_path):
    bf = load_map(write_tmj(tmp_path, field()))
    labels = [f.label for f in bf.features]
    assert labels[0] == "layer 'ground', tile 1 of tileset 'terrain' at column 2, row 1"
    assert labels[1:] == ["layer 'features', object 10 'spinney'",
                          "layer 'features', object 11 'high road'",
                          "layer 'features', object 12 'river'", "layer 'features', object 13"]
    assert bf.features[0].area.area == pytest.approx(8 * 6)  # clear tiles made nothing
    assert [f.id for f in bf.features[1:]] == ["spinney", "high road", "river", None]


@pytest.mark.parametrize("encoding", ["csv", "base64", "zlib", "gzip"])
@pytest.mark.parametrize("tileset", ["embedded", "tsx", "tsj"])
def test_tmx_in_every_encoding_and_tileset(tmp_path, rules, encoding, tileset):
    doc = field()
    if tileset != "embedded":
        ts = tileset_json()
        name = write_tsx(tmp_path, ts) if tileset == "tsx" else "terrain.tsj"
        if tileset == "tsj":
            (tmp_path / name).write_text(json.dumps(ts))
        doc["tilesets"] = [{"firstgid": 1, "source": name}]
    bf = load_map(write_tmx(tmp_path, doc, encoding))
    assert_same_ground(bf, load_map(twin()), rules)
    assert dict(bf.points) == {"Blue Knights": (3.0, 15.0), "Red Orcs": (37.0, 3.0)}


@pytest.mark.parametrize("encoding", ["base64", "zlib", "gzip"])
def test_tmj_with_encoded_tile_data(tmp_path, rules, encoding):
    raw = GROUND.astype("<u4").tobytes()
    compress = {"base64": bytes, "zlib": zlib.compress, "gzip": gzip.compress}[encoding]
    layer = tile_layer("ground", GROUND)
    layer |= {"encoding": "base64", "data": base64.b64encode(compress(raw)).decode(),
              "compression": "" if encoding == "base64" else encoding}
    doc = tiled_map([layer, object_layer("features", objects())])
    assert_same_ground(load_map(write_tmj(tmp_path, doc)), load_map(twin()), rules)


def test_a_json_map_tiled_wrote_and_an_external_tileset(tmp_path, rules):
    (tmp_path / "terrain.tsj").write_text(json.dumps(tileset_json()))
    doc = field(tilesets=[{"firstgid": 1, "source": "terrain.tsj"}])
    bf = load_map(write_tmj(tmp_path, doc, "field.json"))
    assert_same_ground(bf, load_map(twin()), rules)


def test_flipped_and_rotated_tiles_are_the_same_ground(tmp_path, rules):
    flipped = GROUND.copy()
    flipped[1, 2:6] |= np.array([FLIP_H, FLIP_V, FLIP_D, FLIP_H | FLIP_V | FLIP_D],
                                dtype=np.uint32)
    doc = tiled_map([tile_layer("ground", flipped), object_layer("features", objects())])
    assert_same_ground(load_map(write_tmj(tmp_path, doc)), load_map(twin()), rules)


def test_several_tilesets_and_stacked_tile_layers(tmp_path, rules):
    """Two tilesets (the second from gid 5), gid 0 for no tile, and a hill layer over
    a woods layer: they overlap as a wooded hill, as overlapping features do."""
    second = tileset_json({0: {"terrain": "hill", "elevation": 3.0}, 1: {}}, "hills", 2)
    woods = np.zeros((ROWS, COLS), dtype=np.uint32)
    woods[0:5, 0:6] = 2
    hills = np.zeros((ROWS, COLS), dtype=np.uint32)
    hills[2:8, 3:10] = 5
    hills[9, :] = 6  # a tile with no properties: open ground
    doc = tiled_map([tile_layer("woods", woods), tile_layer("hills", hills)],
                    tilesets=[{"firstgid": 1, **tileset_json()}, {"firstgid": 5, **second}])
    bf = load_map(write_tmj(tmp_path, doc))
    assert bf.cell == TILE  # tiles only: a cell is a tile
    geo = load_map(battlefield([feature("woods", rect(0, 0, 12, 10)),
                                feature("hill", rect(6, 4, 20, 16), elevation=3.0)],
                               cell=TILE))
    assert_same_ground(bf, geo, rules)
    assert [f.label for f in bf.features] == [
        "layer 'woods', tile 1 of tileset 'terrain' at column 0, row 0",
        "layer 'hills', tile 0 of tileset 'hills' at column 3, row 2"]
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    assert engine.price_path(g, [(7, 5), (7, 9)]).legs[0].terrain == ["hill", "woods"]


def test_object_rotation_tile_objects_ellipses_offsets_and_groups(tmp_path):
    tile_obj = obj(3, x=10 * S, y=20 * S, w=4 * S, h=2 * S, gid=2 | FLIP_H)  # woods tile
    layers = [
        object_layer("shapes", [
            obj(1, "woods", "turned", x=10 * S, y=2 * S, w=8 * S, h=4 * S, rotation=90),
            obj(2, "scrub", "pond", x=20 * S, y=2 * S, w=10 * S, h=6 * S, ellipse=True),
            tile_obj]),
        {"type": "group", "name": "moved", "id": 5, "x": 0, "y": 0, "opacity": 1,
         "visible": True, "offsetx": 2 * S, "offsety": 1 * S,
         "layers": [object_layer("inner", [obj(4, "bog", x=0, y=0, w=2 * S, h=2 * S)],
                                 offsetx=1 * S, offsety=0)]},
    ]
    bf = load_map(write_tmj(tmp_path, tiled_map(layers)))
    turned, pond, tile, bog = bf.features
    # Rotated 90 degrees clockwise about its corner (y down): x 6..10, y 2..10.
    assert turned.area.bounds == pytest.approx((6, 2, 10, 10))
    assert pond.area.area == pytest.approx(math.pi * 5 * 3, rel=0.005)
    assert pond.area.centroid.coords[0] == pytest.approx((25, 5))
    assert tile.terrain == "woods" and tile.area.bounds == pytest.approx((10, 18, 14, 20))
    assert tile.label == "layer 'shapes', object 3"
    assert bog.area.bounds == pytest.approx((3, 1, 5, 3))  # offsets 2 + 1 across, 1 down
    assert bog.label == "layer 'moved/inner', object 4"


def test_cell_defaults_and_the_cell_property(tmp_path):
    only_tiles = tiled_map([tile_layer("ground", GROUND)])
    assert load_map(write_tmj(tmp_path, only_tiles)).cell == TILE
    assert load_map(write_tmj(tmp_path, field())).cell == 0.5  # 2 cm tiles in quarters
    inches = field(props={"units": "in", "tile_size": 1.0})
    assert load_map(write_tmj(tmp_path, inches)).cell == 0.25
    coarse = field(props={"units": "cm", "tile_size": TILE, "cell": 1.0})
    assert load_map(write_tmj(tmp_path, coarse)).cell == 1.0


def test_custom_properties_pass_through(tmp_path):
    hill = obj(1, "hill", x=0, y=0, w=10 * S, h=6 * S,
               props={"elevation": 4.0, "steep": True, "x-owner": "blue"})
    wall = polyline(2, "wall", [(0, 15), (20, 15)], 0.5)
    wall["properties"].append(prop("cost", 6.0))
    bf = load_map(write_tmj(tmp_path, tiled_map([object_layer("o", [hill, wall])])))
    assert (bf.features[0].elevation, bf.features[0].steep) == (4.0, True)
    assert (bf.features[1].width, bf.features[1].cost) == (0.5, 6.0)


# --- points --------------------------------------------------------------------------------


def test_points_read_only_and_an_unknown_name_is_refused(tmp_path):
    bf = load_map(write_tmj(tmp_path, field()))
    assert list(bf.points) == ["Blue Knights", "Red Orcs"] and "Nobody" not in bf.points
    assert bf.points.get("Nobody") is None
    with pytest.raises(engine.InputError, match=r"no point named 'Nobody' .*'Blue Knights'"):
        bf.points["Nobody"]
    with pytest.raises(KeyError):
        bf.points["Nobody"]
    with pytest.raises(TypeError):
        bf.points["Nobody"] = (1, 1)
    assert dict(load_map(MAPS / "demo.geojson").points) == {}


@pytest.mark.parametrize(("point", "words"), [
    ({"properties": {}, "coordinates": [1, 1]}, "needs a name"),
    ({"properties": {"name": "A", "terrain": "woods"}, "coordinates": [1, 1]}, "not ground"),
    ({"properties": {"name": "A", "widht": 2}, "coordinates": [1, 1]}, "unknown property"),
    ({"properties": {"name": "A"}, "coordinates": [50, 1]}, "'A' at (50, 1) lies off the table"),
    ({"properties": {"name": "A"}, "coordinates": [1, float("nan")]}, "finite coordinate"),
    ({"properties": {"name": "A"}, "coordinates": [[1, 1]]}, "finite coordinate"),
])
def test_bad_geojson_points_are_refused(point, words):
    raw = {"type": "Feature", "properties": point["properties"],
           "geometry": {"type": "Point", "coordinates": point["coordinates"]}}
    with pytest.raises(MapError, match="feature 1") as exc:
        load_map(battlefield([feature("clear", rect(0, 0, 1, 1)), raw]))
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_two_points_of_one_name_are_refused(tmp_path):
    doc = tiled_map([object_layer("o", [obj(1, name="A", x=8, y=8, point=True),
                                        obj(2, name="A", x=16, y=8, point=True)])])
    with pytest.raises(MapError, match=r"layer 'o', object 2 'A': a second point named 'A'"):
        load_map(write_tmj(tmp_path, doc))


# --- what is refused ------------------------------------------------------------------------


def refused(tmp_path, doc, *words, write=write_tmj):
    with pytest.raises(MapError) as exc:
        load_map(write(tmp_path, doc))
    msg = str(exc.value)
    assert msg and "\n" not in msg
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return msg


def test_an_unknown_terrain_kind_names_the_tile_or_object(tmp_path, rules):
    lava = tileset_json({1: {"terrain": "lava"}})
    doc = tiled_map([tile_layer("ground", GROUND)], tilesets=[{"firstgid": 1, **lava}])
    with pytest.raises(MapError, match=r"field.tmj: layer 'ground', tile 1 of tileset "
                       r"'terrain' at column 2, row 1: unknown terrain kind 'lava'"):
        load_map(write_tmj(tmp_path, doc)).check(rules)
    doc = tiled_map([object_layer("o", [obj(7, "lava", "pit", w=16, h=16)])])
    with pytest.raises(MapError, match=r"layer 'o', object 7 'pit': unknown terrain kind"):
        load_map(write_tmj(tmp_path, doc)).check(rules)


@pytest.mark.parametrize("orientation", ["isometric", "staggered", "hexagonal"])
def test_only_orthogonal_maps(tmp_path, orientation):
    extra = {"staggeraxis": "y", "staggerindex": "odd", "hexsidelength": 8}
    refused(tmp_path, field(orientation=orientation, **extra), f"{orientation} map",
            "only orthogonal")


def test_an_infinite_map_is_refused(tmp_path):
    doc = field()
    doc["infinite"] = True
    doc["layers"][0] = {**tile_layer("ground", GROUND), "chunks": [], "startx": 0, "starty": 0}
    del doc["layers"][0]["data"]
    refused(tmp_path, doc, "infinite map")


@pytest.mark.parametrize("write", [write_tmj, write_tmx], ids=["tmj", "tmx"])
def test_a_missing_tileset_file_is_refused(tmp_path, write):
    doc = field(tilesets=[{"firstgid": 1, "source": "gone.tsx"}])
    refused(tmp_path, doc, "tileset file 'gone.tsx' not found", write=write)


def test_a_geojson_map_named_tmj_is_told_its_name(tmp_path):
    """It was "KeyError: 'tilesets'"."""
    path = tmp_path / "demo.tmj"
    path.write_text((MAPS / "demo.geojson").read_text())
    with pytest.raises(MapError) as exc:
        load_map(path)
    assert str(exc.value) == (f"{path}: not a Tiled map pytiled-parser can read: it has no "
                              "'tilesets' (a GeoJSON map? name it .geojson)")


def test_a_missing_template_file_is_refused(tmp_path):
    """It was "file file 'missing.tj' not found"."""
    doc = field()
    doc["layers"].append(object_layer("features", [{"id": 50, "template": "missing.tj",
                                                     "x": 0, "y": 0}]))
    msg = refused(tmp_path, doc, "template file 'missing.tj' not found (looked for "
                  f"{tmp_path / 'missing.tj'})")
    assert "file file" not in msg


@pytest.mark.parametrize("tile_size", [0, -2.0, "big", float("inf")])
def test_tile_size_must_be_positive(tmp_path, tile_size):
    refused(tmp_path, field(props={"units": "cm", "tile_size": tile_size}),
            "map property tile_size must be a number > 0")


@pytest.mark.parametrize(("props", "words"), [
    ({"tile_size": 2.0}, 'needs a map property "units"'),
    ({"units": "mm"}, 'units must be "cm" or "in"'),
    ({"units": "cm", "tilesize": 2.0}, "unknown map property 'tilesize', did you mean 'tile_size'"),
    ({"units": "cm", "cell": -1.0}, "map property cell must be a number > 0"),
    ({"units": "cm", "tile_size": 2.0, "cell": 0.3}, "not a whole number of cells of 0.3"),
])
def test_bad_map_properties(tmp_path, props, words):
    refused(tmp_path, field(props=props), words)


def test_map_properties_of_your_own_begin_x(tmp_path):
    assert load_map(write_tmj(tmp_path, field(props={"units": "cm", "tile_size": TILE,
                                                     "x-music": "drums"}))).width == 40


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["layers"][0]["data"].__setitem__(5, 77),
     "layer 'ground': tile id 77 belongs to no tileset"),
    (lambda d: d["layers"][0]["data"].pop(), "layer 'ground': its data is not 20 x 10 tile ids"),
    (lambda d: d["layers"][0]["data"].__setitem__(5, 1.5), "its data is not 20 x 10 tile ids"),
    (lambda d: d["tilesets"][0].__setitem__("firstgid", 0), "firstgid must be a whole number"),
    (lambda d: d["layers"][1]["objects"].append(obj(50, w=16, h=16)),
     "object 50: has no class"),
    (lambda d: d["layers"][1]["objects"].append(obj(51, "woods", w=16, h=16,
                                                    props={"terrain": "bog"})),
     "object 51: class 'woods' and terrain property 'bog' disagree"),
    (lambda d: d["layers"][1]["objects"].append(obj(52, "road", polyline=[
        {"x": 0, "y": 0}, {"x": 40, "y": 0}])),
     "layer 'features', object 52: a road line needs a width"),
    (lambda d: d["layers"][1]["objects"].append(obj(53, x=8, y=8, point=True)),
     "object 53: a point is a named place; give it a name"),
    (lambda d: d["layers"][1]["objects"].append(obj(54, "woods", w=0, h=0)),
     "object 54: Polygon has no area"),
    (lambda d: d["layers"][1]["objects"].append(obj(55, "woods", "far", x=900, y=900, w=16,
                                                    h=16)),
     "object 55 'far': lies wholly off the table"),
    (lambda d: d["layers"][1]["objects"].append(obj(56, "woods", rotation="x", w=1, h=1)),
     "object 56 rotation must be a finite number"),
    (lambda d: d["layers"][1]["objects"][0].setdefault("properties", []).append(
        prop("colour", "green")),
     "object 10 'spinney': unknown property 'colour'"),
    (lambda d: d["tilesets"][0]["tiles"][0]["properties"].append(prop("speed", 2)),
     "tile 1 of tileset 'terrain' at column 2, row 1: unknown property 'speed'"),
])
def test_broken_layers_objects_and_tiles(tmp_path, change, words):
    doc = field()
    change(doc)
    refused(tmp_path, doc, words)


@pytest.mark.parametrize(("text", "words"), [
    ('{"type": "map", "orientation": "orthogonal"}', "pytiled-parser can read"),
    ("<?xml version='1.0'?>\n<map version='1.10'><layer>", "pytiled-parser can read"),
    ("", "pytiled-parser can read"),
    ("<?xml version='1.0' encoding='TTF-8'?>\n<map/>", "LookupError: unknown encoding"),
])
def test_files_pytiled_parser_cannot_read(tmp_path, text, words):
    path = tmp_path / "broken.tmx"
    path.write_text(text)
    with pytest.raises(MapError, match=words):
        load_map(path)


@pytest.mark.parametrize("write", [write_tmj, write_tmx], ids=["tmj", "tmx"])
def test_tile_data_that_unpacks_past_the_map_is_refused(tmp_path, write):
    """Compressed data is unpacked only as far as the map's tiles need (4 bytes each)."""
    doc = field()
    if write is write_tmj:
        doc["layers"][0] |= {"encoding": "base64", "compression": "zlib", "data":
                             base64.b64encode(zlib.compress(bytes(10**7))).decode()}
        refused(tmp_path, doc, "zlib tile data unpacks to more than the map's 20 x 10 tiles")
        return
    path = write(tmp_path, doc, "gzip")
    text = path.read_text()
    start = text.index('compression="gzip">') + len('compression="gzip">')
    end = text.index("</data>", start)
    path.write_text(text[:start] + base64.b64encode(gzip.compress(bytes(10**7))).decode()
                    + text[end:])
    with pytest.raises(MapError, match="gzip tile data unpacks to more than the map's 20 x 10"):
        load_map(path)


def test_a_map_of_too_many_tiles_is_refused(tmp_path):
    doc = tiled_map([object_layer("o", [])], width=5000, height=4000)
    refused(tmp_path, doc, "a map of 5000 x 4000 tiles, more than the 16777216")


def test_a_missing_map_file(tmp_path):
    with pytest.raises(MapError, match="no map file"):
        load_map(tmp_path / "nowhere.tmj")


# --- the shipped example and converting ------------------------------------------------------


def test_the_shipped_example_in_both_formats(rules):
    tmx, tmj = load_map(TILED / "field.tmx"), load_map(TILED / "field.tmj")
    assert_same_ground(tmx, tmj, rules)
    assert dict(tmx.points) == dict(tmj.points)
    assert set(tmx.points) == {"Blue Knights", "Red Orcs", "Objective"}
    tmx.check(rules)
    assert {f.terrain for f in tmx.features} == {"woods", "bog", "hill", "river", "road",
                                                 "bridge"}


@pytest.mark.parametrize("source", [TILED / "field.tmx", MAPS / "demo.geojson",
                                    MAPS / "crossings.geojson", MAPS / "battlesystem" /
                                    "uphill-woods.geojson"], ids=lambda p: p.name)
def test_convert_round_trip_gives_equal_grids(tmp_path, source):
    if "battlesystem" in str(source):
        rules = engine.load_rules("battlesystem")
        units = (("infantry", {"depth": 1}), ("cavalry", {}))
    else:
        rules, units = engine.load_rules("fantasy-warlord"), (("humans", {"ranks": 2}),
                                                               ("wood elves", {}))
    original = load_map(source)
    geo, tmj = tmp_path / "map.geojson", tmp_path / "map.tmj"
    engine.convert_map(source, geo)
    engine.convert_map(geo, tmj)
    for bf in (load_map(geo), load_map(tmj)):
        assert_same_ground(original, bf, rules, units)
        assert dict(bf.points) == dict(original.points)


@pytest.mark.parametrize("numpy", [False, True], ids=["lists", "numpy"])
def test_convert_keeps_every_corner_and_takes_numpy(tmp_path, numpy):
    """An unclosed ring lost its last corner in a .tmj (a square became a triangle), and
    a map built with numpy coordinates could not be written as GeoJSON."""
    ring = [[1, 1], [8, 1], [8, 8], [1, 8]]  # GeoJSON's rings close, shapely's need not
    doc = battlefield([
        {"type": "Feature", "id": "copse", "properties": {"terrain": "woods"},
         "geometry": {"type": "Polygon", "coordinates": np.array([ring]) if numpy else [ring]}},
        {"type": "Feature", "properties": {"name": "Camp"},
         "geometry": {"type": "Point", "coordinates": np.array([3.0, 4.5]) if numpy
                      else [3.0, 4.5]}}])
    for name in ("copse.tmj", "copse.geojson"):
        engine.convert_map(doc, tmp_path / name)
        bf = load_map(tmp_path / name)
        assert bf.features[0].area.area == pytest.approx(49.0), name
        assert dict(bf.points) == {"Camp": (3.0, 4.5)}


def test_convert_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(engine.InputError, match=r"give a \.geojson, \.json or \.tmj"):
        engine.convert_map(TILED / "field.tmj", tmp_path / "field.tmx")
    ring = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
    hole = [[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]
    holed = battlefield([{"type": "Feature", "id": "donut", "properties": {"terrain": "woods"},
                          "geometry": {"type": "Polygon", "coordinates": [ring, hole]}}])
    with pytest.raises(MapError, match=r"feature 0 \(id 'donut'\): a polygon with a hole"):
        engine.convert_map(holed, tmp_path / "donut.tmj")
    with pytest.raises(engine.InputError, match="cannot write"):
        engine.convert_map(TILED / "field.tmj", tmp_path / "no" / "such" / "x.geojson")


# --- the command line -----------------------------------------------------------------------


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_points_by_name(capsys):
    tmj = str(TILED / "field.tmj")
    rc, out, _ = cli(capsys, "reach", tmj, "--race", "humans", "--at", "@Blue Knights",
                     "--probe", "@Objective", "--probe", "10,30", "--json")
    by_name = json.loads(out)
    rc2, out2, _ = cli(capsys, "reach", tmj, "--race", "humans", "--at", "8,32", "--probe",
                       "30,21.25", "--probe", "10,30", "--json")
    assert rc == rc2 == 0 and by_name == json.loads(out2)
    rc, out, _ = cli(capsys, "route", str(TILED / "field.tmx"), "--race", "humans", "--from",
                     "@Blue Knights", "--to", "@Red Orcs", "--json")
    bf = load_map(TILED / "field.tmx")
    grid = engine.cost_grid(bf, engine.load_rules("fantasy-warlord"), engine.load_rules(
        "fantasy-warlord").unit("humans"))
    assert rc == 0 and json.loads(out)["cost"] == pytest.approx(
        engine.route(grid, (8, 32), (52, 8)).cost)
    rc, out, _ = cli(capsys, "price", tmj, "--race", "humans", "--path", "@Blue Knights",
                     "20", "32", "@Objective", "--json")
    assert rc == 0 and json.loads(out)["length"] == pytest.approx(
        12 + math.dist((20, 32), (30, 21.25)))
    rc, out, _ = cli(capsys, "threat", tmj, "--enemy", "orcs@@Red Orcs", "--probe",
                     "@Red Orcs", "--json")
    assert rc == 0 and json.loads(out)["enemies"] == [{"race": "orcs", "at": [52.0, 8.0]}]


@pytest.mark.parametrize("argv", [
    ["reach", str(TILED / "field.tmj"), "--race", "humans", "--at", "@Green Men"],
    ["visible", str(TILED / "field.tmj"), "--from", "@Nobody"],
    ["route", "demo", "--race", "humans", "--from", "@Blue Knights", "--to", "5,5"],
])
def test_cli_unknown_point_name_is_one_line(capsys, argv):
    rc, _, err = cli(capsys, *argv)
    assert rc == 2 and err.count("\n") == 1 and "no point named" in err


def test_cli_convert(tmp_path, capsys, rules):
    target = tmp_path / "field.geojson"
    rc, out, _ = cli(capsys, "convert", str(TILED / "field.tmx"), str(target))
    assert rc == 0
    assert out == f"{target}: 60 x 40 cm (cell 0.5), 7 features, 3 named points\n"
    rc, out, _ = cli(capsys, "convert", str(target), str(tmp_path / "back.tmj"))
    assert rc == 0
    assert_same_ground(load_map(TILED / "field.tmx"), load_map(tmp_path / "back.tmj"), rules)
    rc, _, err = cli(capsys, "convert", str(TILED / "field.tmx"), str(tmp_path / "x.tmx"))
    assert rc == 2 and err.startswith("engine: error: cannot write a map as 'x.tmx'")


def test_the_example_folder_is_self_contained(tmp_path):
    for name in ("field.tmx", "field.tmj", "terrain.tsx", "terrain.png"):
        shutil.copy(TILED / name, tmp_path / name)
    assert len(load_map(tmp_path / "field.tmx").features) == 7
