"""Battlefield maps: the shipped maps load, features are clipped, and every bad map is
refused with a MapError whose one-line message names the feature (index and id) and
the problem."""

import json

import numpy as np
import pytest

import engine
from engine import MapError, load_map, load_rules
from engine.cli import main

from .conftest import EXAMPLES, MAPS, battlefield, feature, line, rect

SHIPPED = [MAPS / "demo.geojson", MAPS / "crossings.geojson", *sorted(EXAMPLES.glob("*.geojson"))]
GOOD = feature("clear", rect(0, 0, 1, 1))  # index 0, so the bad feature is "feature 1"


def one_line(exc) -> str:
    msg = str(exc.value)
    assert msg and "\n" not in msg and "\r" not in msg, f"not one line: {msg!r}"
    return msg


def refused(data, *words):
    """``load_map(data)`` raises MapError in one line containing every one of ``words``."""
    with pytest.raises(MapError) as exc:
        load_map(data)
    msg = one_line(exc)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return msg


def bad_feature(f, *words):
    """A map whose second feature is ``f`` is refused, naming feature 1 and ``words``."""
    return refused(battlefield([GOOD, f]), "feature 1", *words)


# --- the shipped maps ------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_map_loads_and_checks(rules, path):
    bf = load_map(path)
    assert bf.features and bf.units == rules.units
    bf.check(rules)


@pytest.mark.parametrize("ruleset", ["battlesystem", "reglamento"])
def test_other_rulesets_maps_load_and_check(ruleset):
    paths = sorted((MAPS / ruleset).glob("*.geojson"))
    assert paths
    for path in paths:
        load_map(path).check(load_rules(ruleset))


def test_demo_uses_every_terrain_kind(rules):
    bf = load_map(MAPS / "demo.geojson")
    assert {f.terrain for f in bf.features} == set(rules.terrain)


# --- clipping to the table -------------------------------------------------------------


@pytest.mark.parametrize(("geometry", "on_table", "whole"), [
    (rect(-5, -5, 5, 5), 25.0, 100.0),                       # over a corner
    (rect(35, 10, 45, 30), 5 * 10, 10 * 20),                  # over two edges
    ({"type": "LineString", "coordinates": [[-4, 10], [4, 10]]}, 4 * 2, 8 * 2),
], ids=["corner", "edges", "line"])
def test_features_are_clipped_to_the_table(geometry, on_table, whole):
    props = {"width": 2} if geometry["type"] == "LineString" else {}
    (f,) = load_map(battlefield([feature("road", geometry, **props)])).features
    assert f.area.area == pytest.approx(on_table)
    assert f.full.area == pytest.approx(whole)
    x0, y0, x1, y1 = f.area.bounds
    assert 0 <= x0 and 0 <= y0 and x1 <= 40 and y1 <= 20


def test_feature_wholly_off_the_table_refused():
    bad_feature(feature("woods", rect(50, 0, 60, 5), fid="far-wood"),
                "(id 'far-wood')", "wholly off the table")


# --- terrain kinds belong to the rules -------------------------------------------------


def test_unknown_terrain_kind_loads_but_rules_refuse_it(rules):
    bf = load_map(battlefield([GOOD, feature("lava", rect(2, 2, 6, 6), fid="lake")]))
    assert bf.features[1].terrain == "lava"
    for attempt in (lambda: bf.check(rules),
                    lambda: engine.cost_grid(bf, rules, rules.unit("humans"))):
        with pytest.raises(MapError) as exc:
            attempt()
        msg = one_line(exc)
        assert "feature 1 (id 'lake')" in msg and "unknown terrain kind 'lava'" in msg


def test_map_units_must_match_the_rules(rules):
    bf = load_map(battlefield([GOOD], units="in"))
    with pytest.raises(MapError) as exc:
        bf.check(rules)
    msg = one_line(exc)
    assert "measures in inches but Fantasy Warlord measures in centimetres" in msg
    assert 'redraw the map in centimetres (its battlefield\'s "units": "cm")' in msg


def test_hill_given_as_a_line_refused_by_check(rules):
    bf = load_map(battlefield([GOOD, feature("hill", line((2, 2), (8, 2)), "ridge", width=2)]))
    with pytest.raises(MapError) as exc:
        bf.check(rules)
    assert "feature 1 (id 'ridge')" in one_line(exc)
    assert "a hill must be a polygon" in str(exc.value)


def test_a_polygon_that_covers_no_cell_is_refused(rules):
    speck = feature("woods", rect(10.1, 10.1, 10.2, 10.2), "speck")  # between cell centres
    bf = load_map(battlefield([GOOD, speck]))
    with pytest.raises(MapError) as exc:
        engine.cost_grid(bf, rules, rules.unit("humans"))  # was accepted, and did nothing
    assert one_line(exc).endswith("feature 1 (id 'speck'): covers no cell's centre of the 0.5 "
                                  "grid; draw it larger or use a smaller cell")


@pytest.mark.parametrize("props", [{"elevation": 3}, {"steep": True}, {"climb": 2}])
def test_hill_properties_on_other_ground_refused_by_check(rules, props):
    bf = load_map(battlefield([GOOD, feature("woods", rect(2, 2, 8, 8), "copse", **props)]))
    with pytest.raises(MapError) as exc:
        bf.check(rules)  # the elevation raised the ground; steep and climb did nothing
    assert one_line(exc).endswith("feature 1 (id 'copse'): elevation, steep and climb belong "
                                  "to hills, not to woods")


# --- geometry --------------------------------------------------------------------------


def polygon(*ring):
    return {"type": "Polygon", "coordinates": [[list(p) for p in ring]]}


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(("geometry", "problem"), [
    (polygon((0, 0), (4, 4), (4, 0), (0, 4), (0, 0)), "invalid Polygon: Self-intersection"),
    ({"type": "Polygon", "coordinates": []}, "empty Polygon"),
    (polygon((0, 0), (1, 1), (3, 3), (0, 0)), "Polygon has no area"),
    (polygon((0, 0), (NAN, 0), (1, 1), (0, 0)), "non-finite coordinate"),
    (polygon((0, 0), (INF, 0), (1, 1), (0, 0)), "non-finite coordinate"),
    (polygon((0, 0), ("1", 0), (1, 1), (0, 0)), "malformed or non-finite coordinate"),
    ({"type": "Polygon"}, "missing, malformed or non-finite coordinate"),
    ({"type": "Point", "coordinates": [1, 1]}, "a Point is a named place"),
    ({"type": "MultiPoint", "coordinates": [[1, 1]]}, "geometry type 'MultiPoint' is not a"),
], ids=["bow-tie", "empty", "zero-area", "nan", "inf", "string", "no-coordinates", "point",
        "multipoint"])
def test_bad_geometry_refused(geometry, problem):
    bad_feature(feature("woods", geometry, fid="w"), "(id 'w')", problem)


@pytest.mark.parametrize(("value", "token"), [(NAN, "NaN"), (-INF, "-Infinity")])
def test_nan_and_infinity_from_json_text_refused(tmp_path, value, token):
    ring = polygon((0, 0), (value, 0), (1, 1), (0, 0))
    path = tmp_path / "nan.geojson"
    path.write_text(json.dumps(battlefield([GOOD, feature("woods", ring)])))
    assert token in path.read_text()  # Python's json writes and reads NaN / Infinity
    refused(path, "feature 1", "non-finite coordinate")


# --- line features ---------------------------------------------------------------------


@pytest.mark.parametrize(("props", "problem"), [
    ({}, "a road line needs a width"),
    ({"width": 0}, "width must be a number > 0 and <= 1e+09, got 0"),
    ({"width": -1.5}, "width must be a number > 0 and <= 1e+09, got -1.5"),
    ({"width": "wide"}, "width must be a number > 0 and <= 1e+09, got 'wide'"),
    ({"width": True}, "width must be a number > 0 and <= 1e+09, got True"),
    ({"width": INF}, "width must be a number > 0 and <= 1e+09, got inf"),
], ids=["missing", "zero", "negative", "text", "boolean", "infinite"])
def test_bad_line_width_refused(props, problem):
    bad_feature(feature("road", line((1, 1), (9, 1)), fid="kings-road", **props),
                "(id 'kings-road')", problem)


@pytest.mark.parametrize("cost", [-1, "deep", INF, True, 1e308])
def test_bad_crossing_cost_refused(cost):
    bad_feature(feature("hedge", line((1, 1), (9, 1)), fid="h", width=1, cost=cost),
                "(id 'h')", f"cost must be a finite number >= 0 and <= 1e+09, got {cost!r}")


@pytest.mark.parametrize("climb", [0.5, "steep", INF, 1e308])
def test_bad_climb_refused(climb):
    bad_feature(feature("hill", rect(1, 1, 5, 5), fid="tor", elevation=2, climb=climb),
                "(id 'tor')", f"climb must be a number >= 1 and <= 1e+09, got {climb!r}")


def test_zero_length_line_refused():
    bad_feature(feature("hedge", line((3, 3), (3, 3)), fid="h", width=1),
                "(id 'h')", "LineString has zero length")


# --- hills -----------------------------------------------------------------------------


@pytest.mark.parametrize(("props", "problem"), [
    ({"elevation": -2}, "elevation must be a number >= 0 and <= 1e+09, got -2"),
    ({"elevation": "high"}, "elevation must be a number >= 0 and <= 1e+09, got 'high'"),
    ({"elevation": 3, "steep": "yes"}, "steep must be true or false, got 'yes'"),
], ids=["negative-elevation", "text-elevation", "steep-not-bool"])
def test_bad_hill_refused(props, problem):
    bad_feature(feature("hill", rect(2, 2, 8, 8), fid="knoll", **props), "(id 'knoll')", problem)


@pytest.mark.parametrize("props", [{}, {"elevation": 0}, {"steep": True}, {"climb": 3}],
                         ids=["none", "zero", "steep-only", "climb-only"])
def test_a_hill_without_elevation_is_refused_by_check(rules, props):
    """A hill of no height is flat ground: nothing climbs it, nothing hides behind it
    (it was loaded so, without a word, "steep" and all)."""
    bf = load_map(battlefield([GOOD, feature("hill", rect(2, 2, 8, 8), "knoll", **props)]))
    with pytest.raises(MapError) as exc:
        bf.check(rules)
    assert one_line(exc).endswith("feature 1 (id 'knoll'): a hill needs an elevation > 0 "
                                  "(properties.elevation, its crest's height above the ground "
                                  "around); without one it would be flat ground")


@pytest.mark.parametrize(("terrain", "width"), [("woods", -3), ("woods", "narrow"),
                                                ("woods", 2), ("bridge", 2)])
def test_a_width_on_an_area_is_refused(terrain, width):
    """An area is the shape it is drawn (a passage drawn as a polygon is as wide as the
    largest circle inside it): a width on one was loaded and ignored, whatever it was."""
    bad_feature(feature(terrain, rect(2, 2, 8, 8), "patch", width=width), "(id 'patch')",
                "width belongs to lines, not to a Polygon: an area is the shape it is drawn")


# --- the battlefield header ------------------------------------------------------------

HEAD = {"width": 40, "height": 20, "units": "cm", "cell": 0.5}


def with_head(**changes):
    head = {k: v for k, v in {**HEAD, **changes}.items() if v is not None}
    return {"type": "FeatureCollection", "battlefield": head, "features": [GOOD]}


@pytest.mark.parametrize(("data", "problem"), [
    ({"type": "FeatureCollection", "features": [GOOD]}, 'missing "battlefield"'),
    (with_head(units="furlongs"), "battlefield units must be \"cm\" or \"in\", got 'furlongs'"),
    (with_head(units=None), "battlefield units must be \"cm\" or \"in\", got None"),
    (with_head(width=0), "battlefield width must be a finite number > 0, got 0"),
    (with_head(height=-20), "battlefield height must be a finite number > 0, got -20"),
    (with_head(cell=0), "battlefield cell must be a finite number > 0, got 0"),
    (with_head(cell="fine"), "battlefield cell must be a finite number > 0, got 'fine'"),
    (with_head(scale=2), "unknown battlefield key 'scale'"),
    (with_head(cell=25), "battlefield width 40 is not a whole number of cells of 25 (1.6)"),
    (with_head(cell=0.3), "battlefield width 40 is not a whole number of cells of 0.3 (133.3); "
                          "give a cell that divides the width and height"),
    (with_head(cell=50), "battlefield width 40 is not a whole number of cells of 50 (0.8)"),
    ({**with_head(), "battlefield": {"width": 40.1, "height": 20, "units": "cm"}},
     "battlefield width 40.1 is not a whole number of cells of 0.5 (the default for cm) "
     "(80.2)"),
], ids=["missing", "furlongs", "no-units", "width-0", "height-negative", "cell-0",
        "cell-text", "unknown-key", "cell-25", "cell-0.3", "cell-over-table", "default-cell"])
def test_bad_header_refused(data, problem):
    refused(data, problem)


def test_grid_too_large_for_memory_refused():
    refused(with_head(width=1e6, height=1e6, cell=0.001), "too large for memory")


# --- the collection and its features ---------------------------------------------------


@pytest.mark.parametrize(("data", "problem"), [
    ({**battlefield([]), "type": "Feature"}, "a map must be a GeoJSON FeatureCollection"),
    ({**battlefield([]), "features": {"0": GOOD}}, '"features" must be a list'),
    (battlefield([GOOD, "woods"]), "feature 1: is not a GeoJSON Feature"),
    (battlefield([GOOD, {"type": "Feature", "id": "x", "geometry": rect(0, 0, 1, 1)}]),
     "feature 1 (id 'x'): has no properties"),
    (battlefield([GOOD, feature(None, rect(0, 0, 1, 1), fid="x")]),
     "feature 1 (id 'x'): has no \"terrain\" property"),
], ids=["a-feature", "features-dict", "feature-string", "no-properties", "no-terrain"])
def test_bad_structure_refused(data, problem):
    refused(data, problem)


@pytest.mark.parametrize(("where", "fid"), [("feature", "north-wood"), ("properties", "oaks")])
def test_messages_use_the_feature_id(where, fid):
    f = feature("woods", rect(50, 0, 60, 5))
    (f if where == "feature" else f["properties"])["id"] = fid
    bad_feature(f, f"feature 1 (id {fid!r}): lies wholly off the table")


# --- files -----------------------------------------------------------------------------


def test_missing_file_refused(tmp_path):
    path = tmp_path / "nowhere.geojson"
    refused(path, "no map file", str(path))


def test_file_that_is_not_json_refused(tmp_path):
    path = tmp_path / "notes.geojson"
    path.write_text("woods at 10,10\nhill at 30,5\n")
    refused(path, str(path), "not valid JSON")


@pytest.mark.parametrize(("depth", "words"), [
    (100, "feature 0: has a missing, malformed or non-finite coordinate"),
    (5000, "nested too deeply to be a map"),
])
def test_coordinates_nested_too_deep_refused(tmp_path, depth, words):
    path = tmp_path / "deep.geojson"
    coords = "[" * depth + "[[0, 0], [1, 0], [1, 1]]" + "]" * depth  # was a RecursionError
    path.write_text('{"type": "FeatureCollection", "battlefield": {"width": 40, "height": 30, '
                    '"units": "cm"}, "features": [{"type": "Feature", "properties": {"terrain": '
                    f'"woods"}}, "geometry": {{"type": "Polygon", "coordinates": {coords}}}}}]}}')
    refused(path, words)


def test_a_key_given_twice_in_one_object_is_refused(tmp_path):
    """JSON lets the last of two equal keys win: a feature drawn as woods, then given
    "terrain": "road" further down, was loaded as a road without a word."""
    path = tmp_path / "twice.geojson"
    text = json.dumps(battlefield([GOOD, feature("woods", rect(2, 2, 8, 8))]))
    path.write_text(text.replace('"terrain": "woods"', '"terrain": "woods", "terrain": "road"'))
    refused(path, str(path), "key 'terrain' appears twice in one object")


def test_file_holding_a_json_array_refused(tmp_path):
    path = tmp_path / "list.geojson"
    path.write_text(json.dumps([GOOD]))
    refused(path, str(path), "a map must be a GeoJSON FeatureCollection")


def test_directory_refused(tmp_path):
    refused(tmp_path, "cannot read map", str(tmp_path))


def test_cli_bad_map_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "bad.geojson"
    path.write_text(json.dumps(battlefield([GOOD, feature("road", line((1, 1), (5, 1)), "r")])))
    assert main(["reach", str(path), "--race", "humans", "--at", "1,1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("engine: error:")
    assert "feature 1 (id 'r')" in err and "needs a width" in err and "Traceback" not in err


# --- inputs that once crashed or split the message over lines


@pytest.mark.parametrize("units", [["cm"], {"cm": 1}], ids=["list", "object"])
def test_units_of_the_wrong_type_are_refused(units):
    refused(with_head(units=units), "battlefield units")


@pytest.mark.parametrize(("head", "words"), [
    ({"width": 1e6, "height": 1e6, "cell": 1e-300}, "too large"),
    ({"width": 1e300, "height": 1e300, "cell": 1e-300}, "larger than 1e+09"),
], ids=["tiny-cell", "huge-table"])
def test_absurd_grids_are_refused(head, words):
    refused(with_head(**head), words)


@pytest.mark.parametrize("geometry", [
    {"type": "LineString", "coordinates": [[1, 1]]},
    {"type": "MultiLineString", "coordinates": [[[1, 1], [2, 1]], [[3, 3]]]},
], ids=["line", "multiline"])
def test_one_point_line_is_refused_in_one_line(geometry):
    bad_feature(feature("road", geometry, width=1),
                f"malformed {geometry['type']}: a line needs two points or more")


_RING = [[1, 1], [3, 1], [3, 3], [1, 1]]


@pytest.mark.parametrize(("geometry", "words"), [
    ({"type": "MultiPolygon", "coordinates": [_RING]},
     "malformed MultiPolygon: its coordinates must be a list of polygons, each a list of "
     "rings of [x, y] points"),
    ({"type": "Polygon", "coordinates": _RING},
     "malformed Polygon: its coordinates must be a list of rings, each a list of [x, y] points"),
    ({"type": "Polygon", "coordinates": [_RING, [1, 2]]}, "malformed Polygon: its coordinates"),
    ({"type": "LineString", "coordinates": [_RING]},
     "malformed LineString: its coordinates must be a list of [x, y] points"),
    ({"type": "Polygon", "coordinates": [[[1, 1], [3, 1]]]},
     "malformed Polygon: a ring needs three points or more"),
    ({"type": "MultiPolygon", "coordinates": [[_RING], [[[1, 1], [3, 1]]]]},
     "malformed MultiPolygon: a ring needs three points or more"),
], ids=["multipolygon-of-rings", "polygon-of-points", "ragged", "line-of-rings", "short-ring",
        "short-ring-in-multi"])
def test_misnested_coordinates_are_refused_in_words(geometry, words):
    """Coordinates nested one level off, or too few points, are refused saying what the
    geometry's coordinates must be (they once gave a library's own words: "'int'
    object is not iterable")."""
    linear = "Line" in geometry["type"]
    msg = bad_feature(feature("road", geometry, width=1) if linear else feature("woods", geometry),
                      words)
    assert "iterable" not in msg and "Exception" not in msg


def test_numpy_coordinates_load_as_lists_do():
    """A map built in Python may give its coordinates as numpy arrays (they raised a bare
    ValueError)."""
    ring = [[5, 0], [15, 0], [15, 8], [5, 8], [5, 0]]
    as_lists = battlefield([feature("woods", {"type": "Polygon", "coordinates": [ring]}),
                            feature("road", {"type": "LineString",
                                             "coordinates": [[0, 5], [40, 5]]}, width=2)])
    as_arrays = battlefield([
        feature("woods", {"type": "Polygon", "coordinates": np.array([ring])}),
        feature("road", {"type": "LineString", "coordinates": [np.array([0, 5]),
                                                               np.array([40, 5])]}, width=2)])
    a, b = load_map(as_lists), load_map(as_arrays)
    assert [f.terrain for f in b.features] == ["woods", "road"]
    assert all(fa.area.equals(fb.area) for fa, fb in zip(a.features, b.features, strict=True))
    refused(battlefield([feature("road", {"type": "LineString", "coordinates": np.array([])},
                                 width=2)]), "feature 0: empty LineString")


def test_huge_coordinates_are_refused():
    bad_feature(feature("road", line((-1e308, 1), (1e308, 1)), width=1), "beyond +-1e+09")


def test_terrain_name_with_newline_stays_one_line():
    bad_feature(feature("dirt\nroad", line((1, 1), (5, 1))), "needs a width")


def test_huge_elevation_is_refused():
    # 1e308 loaded, then overflowed the slopes to NaN and printed 300-digit heights
    bad_feature(feature("hill", rect(2, 2, 8, 8), fid="alp", elevation=1e308), "(id 'alp')",
                "elevation must be a number >= 0 and <= 1e+09")


@pytest.mark.parametrize("source", [None, 5, ["x.geojson"]])
def test_a_map_that_is_neither_a_path_nor_a_dict_is_refused(source):
    refused(source, "a map is a path or a parsed GeoJSON dict")
