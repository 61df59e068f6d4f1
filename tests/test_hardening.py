"""Hostile inputs found by fuzzing, each now refused in one line naming the file,
feature and value (or, where it is a real question, answered): numbers beyond a
float, files and grids beyond what the process may hold, lines of vast numbers
of points, and the command line's output and last line of defence."""

import json
import math
import re
import sys
import warnings

import numpy as np
import pytest

import engine
from engine import cli
from engine.cli import main
from engine.maps.movingai import load_grid_map, load_scenarios, map_for
from engine.render import (
    flow_arrows,
    render_ai_png,
    render_png,
    render_viewshed_png,
    terrain_image,
)
from engine.search.scenarios import run_scenarios

from .conftest import MAPS, battlefield, feature, line, rect

GOBLINS = str(MAPS / "examples" / "goblins.geojson")
ROUTE = ["route", GOBLINS, "--race", "goblins", "--from", "0,3.25", "--to", "24.5,3.25"]


def run(argv, capsys):
    """``engine ARGV`` in-process: (exit status, stdout, stderr)."""
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def refused(argv, capsys, words):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and words in err, err
    return err


def write_map(tmp_path, text: str, name="m.geojson"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def goblins_text(**head) -> str:
    doc = json.loads((MAPS / "examples" / "goblins.geojson").read_text())
    doc["battlefield"].update(head)
    return json.dumps(doc)


@pytest.mark.parametrize(("digits", "words"), [
    (401, "battlefield width must be a finite number > 0, got a 401-digit integer"),
    (5000, "battlefield width must be a finite number > 0, got a 5000-digit integer"),
])
def test_an_integer_beyond_a_float_is_named(tmp_path, capsys, digits, words):
    text = goblins_text(width=0).replace('"width": 0', '"width": ' + "9" * digits)
    err = refused(["reach", write_map(tmp_path, text), "--race", "goblins", "--at", "1,1"],
                  capsys, words)  # were OverflowError and ValueError
    assert len(err) < 300


def test_a_coordinate_of_5000_digits_names_its_feature(tmp_path):
    doc = json.loads((MAPS / "examples" / "goblins.geojson").read_text())
    doc["features"][0]["geometry"]["coordinates"][0][1] = [1, 1]
    text = json.dumps(doc).replace("[1, 1]", "[" + "7" * 5000 + ", 1]", 1)
    with pytest.raises(engine.MapError, match=r"m.geojson: feature 0 \(id '[^']+'\): "):
        engine.load_map(write_map(tmp_path, text))


def test_a_map_dict_with_a_vast_integer_is_refused():
    bf = battlefield([feature("woods", rect(0, 0, 10**400, 5))])
    with pytest.raises(engine.MapError, match="feature 0: has a missing, malformed or "
                       "non-finite coordinate"):
        engine.load_map(bf)


def test_a_subnormal_cell_is_refused(tmp_path, capsys):
    refused(["reach", write_map(tmp_path, goblins_text(cell=1e-310)), "--race", "goblins",
             "--at", "1,1"], capsys, "battlefield width 40 is inf cells of 1e-310, too large "
            "for any grid; use a larger cell")  # was OverflowError


def test_grids_are_sized_against_the_memory_the_process_may_use(tmp_path, capsys, monkeypatch):
    path = write_map(tmp_path, goblins_text(width=1000, height=1000))
    monkeypatch.setenv("ENGINE_MEMORY_MB", "64")
    refused(["reach", path, "--race", "goblins", "--at", "1,1"], capsys,
            "a 1000 x 1000 table at cell 0.5 is a grid of 4e+06 cells, too large for memory")
    monkeypatch.setenv("ENGINE_MEMORY_MB", "lots")
    refused(["reach", path, "--race", "goblins", "--at", "1,1"], capsys,
            "ENGINE_MEMORY_MB must be a number of MiB > 0, got 'lots'")


def test_memory_running_out_is_one_line(capsys, monkeypatch):
    def greedy(args):
        raise MemoryError

    monkeypatch.setitem(cli._COMMANDS, "route", greedy)
    refused(ROUTE, capsys, "engine: error: out of memory for this question")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /dev/zero")
def test_an_endless_file_is_refused_at_the_size_limit(capsys):
    refused(["reach", "/dev/zero", "--race", "goblins", "--at", "1,1"], capsys,
            "cannot read map /dev/zero: larger than the 256 MiB a file may be")  # MemoryError


def test_the_file_size_limit_is_overridable(tmp_path, capsys, monkeypatch):
    path = write_map(tmp_path, goblins_text() + " " * 2**20)
    monkeypatch.setenv("ENGINE_MAX_FILE_MB", "1")
    refused(["reach", path, "--race", "goblins", "--at", "1,1"], capsys,
            "larger than the 1 MiB a file may be (ENGINE_MAX_FILE_MB raises the limit)")
    monkeypatch.setenv("ENGINE_MAX_FILE_MB", "2")
    assert run(["reach", path, "--race", "goblins", "--at", "1,1"], capsys)[0] == 0


def test_a_smooth_river_of_200000_points_is_simplified_and_answered(rules):
    x = np.linspace(0.0, 40.0, 200_000)
    river = feature("river", line(*zip(x, 10 + 3 * np.sin(x / 2), strict=True)), width=2)
    bf = engine.load_map(battlefield([river]))  # did not answer in 30 s
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    assert engine.reach(g, (20, 2), 4).reachable((20, 5))
    assert not engine.reach(g, (20, 2), 4).reachable((20, 18))


def test_a_tangled_line_of_200000_points_is_refused_by_its_vertex_count():
    steps = np.random.default_rng(5).normal(0, 0.1, (200_000, 2))
    walk = 75 - np.abs(np.cumsum(steps, axis=0) % 150 - 75)  # kept on the table by reflection
    with pytest.raises(engine.MapError, match=r"feature 0: LineString has \d+ vertices where "
                       r"they are an eighth of a cell apart, more than the 50000"):
        engine.load_map(battlefield([feature("river", line(*walk), width=1)], 200, 150))


def test_a_line_far_longer_than_the_table_is_refused():
    zigzag = [(0, 0), (40, 20)] * 2000
    with pytest.raises(engine.MapError, match="more than 50 times the table's perimeter"):
        engine.load_map(battlefield([feature("river", line(*zigzag), width=1)]))


def test_a_tiny_move_is_refused_by_its_turn_count(capsys):
    refused([*ROUTE, "--move", "1e-320"], capsys,
            "the route costs 44, more than 32767 turns")  # was OverflowError


def test_a_vast_rules_multiplier_is_refused_for_price_as_for_route(tmp_path, capsys):
    shipped = (MAPS.parent / "engine" / "rules" / "fantasy-warlord.toml").read_text()
    rules = tmp_path / "marsh.toml"
    rules.write_text(shipped.replace("marsh = 2.0", "marsh = 1e308", 1))
    for argv in (["price", GOBLINS, "--rules", str(rules), "--race", "goblins", "--path",
                  "0,3.25", "24.5,3.25"], [*ROUTE, "--rules", str(rules)]):
        refused(argv, capsys, "[defaults.multipliers] marsh must be a number from 1 to 1e+09, "
                "\"impassable\"")  # price was an OverflowError in fsum


@pytest.mark.parametrize("xy", [np.array([1.0, 3.25]), (np.float32(1), np.int64(3)), [1, 3]])
def test_numpy_and_list_coordinates_are_points(rules, xy):
    bf = engine.load_map(GOBLINS)
    g = engine.cost_grid(bf, rules, rules.unit("goblins"))
    want = engine.route(g, (float(xy[0]), float(xy[1])), (20, 3.25)).cost
    assert engine.route(g, xy, (20, 3.25)).cost == want
    assert engine.reach(g, xy).cost_at((20, 3.25)) == engine.reach(g, tuple(map(float, xy))
                                                                   ).cost_at((20, 3.25))
    assert engine.price_path(g, [xy, (20, 3.25)]).cost > 0


@pytest.mark.parametrize(("xy", "words"), [
    ((6, True), "a point must be two numbers x,y, got (6, True)"),  # was read as (6, 1)
    ((6, 3, 99), "a point must be two numbers"),  # the 99 was dropped
    ((6, "3"), "a point must be two numbers"),
    (None, "a point must be two numbers x,y, got None"),  # a TypeError
    (np.array([[6, 3]]), "a point must be two numbers"),  # a TypeError
    ((6, 10**400), "point (6, a 401-digit integer) is not finite"),  # an OverflowError
    ((60, 3), "point (60, 3) is off the table"),
])
@pytest.mark.parametrize("any_angle", [True, False])
def test_a_reach_asked_about_a_bad_point_says_what_is_wrong(rules, xy, words, any_angle):
    g = engine.cost_grid(engine.load_map(GOBLINS), rules, rules.unit("goblins"))
    r = engine.reach(g, (1, 1), any_angle=any_angle)
    for ask in (r.cost_at, r.reachable):
        with pytest.raises(engine.InputError, match=re.escape(words)):
            ask(xy)


def test_other_api_calls_refuse_bad_arguments_in_one_line(rules):
    """Each was a bare TypeError, an OverflowError's message, or a silent answer."""
    bf = engine.load_map(GOBLINS)
    g = engine.cost_grid(bf, rules, rules.unit("goblins"))
    rows, cols = bf.grid.shape
    calls = [
        (lambda: engine.charge_disorders(bf, rules, [(1, 1), None]),
         "path point 1: a point must be two numbers x,y, got None"),
        (lambda: g.within_turn(math.nan), "allowance must be a finite number >= 0, got nan"),
        (lambda: g.within_turn(-1), "allowance must be a finite number >= 0, got -1"),  # all shut
        (lambda: g.within_turn(None), "allowance must be a finite number >= 0, got None"),
        (lambda: bf.grid.rc_to_xy((-1, 5)), f"cell (-1, 5) is not a row and column of the "
                                             f"{rows} x {cols} grid"),  # off the table
        (lambda: bf.grid.rc_to_xy((1.5, 2)), "cell (1.5, 2) is not a row and column"),
        (lambda: bf.grid.rc_to_xy(None), "cell None is not a row and column"),
        (lambda: engine.convert_map(GOBLINS, None), "target must be a file name, got None"),
        (lambda: engine.reach_turns(g, (1, 1), 3, 1e308),
         "3 turns of 1e+308 is more than a number can hold"),  # said "got inf"
    ]
    for call, words in calls:
        with pytest.raises(engine.InputError, match="^" + re.escape(words)):
            call()
    assert bf.grid.rc_to_xy((rows - 1, cols - 1)) == ((cols - 0.5) * bf.cell,
                                                      (rows - 0.5) * bf.cell)


@pytest.mark.parametrize("cell", [5e-324, 1e-310, 0.0, math.nan, 10**400],
                         ids=["5e-324", "1e-310", "0", "nan", "401-digits"])
def test_a_raw_grid_cell_that_would_zero_every_cost_is_refused(cell):
    with pytest.raises(engine.InputError, match="cell must be a finite number >= 1e-300"):
        engine.cost_field(np.ones((3, 3)), (0, 0), cell=cell)  # 5e-324 gave all zeros


@pytest.mark.parametrize("value", [10**400, 10**5000, -(10**400)], ids=["401", "5001", "-401"])
def test_api_numbers_beyond_a_float_are_named(rules, value):
    g = engine.cost_grid(engine.load_map(GOBLINS), rules, rules.unit("goblins"))
    for call in (lambda: engine.reach(g, (1, 1), value), lambda: rules.unit("goblins", move=value),
                 lambda: engine.route(g, (value, 1), (2, 2))):
        with pytest.raises(engine.InputError, match="digit integer"):
            call()


def test_run_scenarios_limit_must_be_whole(tmp_path):
    (tmp_path / "s.map").write_text("type octile\nheight 2\nwidth 3\nmap\n...\n...\n")
    (tmp_path / "s.map.scen").write_text("version 1\n0\ts.map\t3\t2\t0\t0\t2\t1\t2.41421356\n"
                                         "0\ts.map\t3\t2\t0\t1\t2\t0\t2.41421356\n")
    grid_map, scenarios = load_grid_map(tmp_path / "s.map"), load_scenarios(tmp_path / "s.map.scen")
    for limit in (1.5, -1, "2", True):  # 1.5 was a TypeError, -1 ran all but one
        with pytest.raises(engine.InputError, match="limit must be a whole number >= 0"):
            run_scenarios(grid_map, scenarios, limit)
    assert [run_scenarios(grid_map, scenarios, n).scenarios for n in (0, 1, None)] == [0, 1, 2]


def test_moving_ai_calls_refuse_bad_arguments_in_one_line(tmp_path):
    """Each was a TypeError from pathlib or an AttributeError."""
    (tmp_path / "s.map").write_text("type octile\nheight 2\nwidth 3\nmap\n...\n...\n")
    grid_map = load_grid_map(tmp_path / "s.map")
    calls = [
        (lambda: load_grid_map(None), "path must be a file's path, got NoneType"),
        (lambda: load_grid_map(5), "path must be a file's path, got int"),
        (lambda: load_scenarios(None), "path must be a file's path, got NoneType"),
        (lambda: map_for(None, []), "scen must be a file's path, got NoneType"),
        (lambda: map_for(tmp_path / "x.scen", [3]),
         "scenarios[0] must be a Scenario (from load_scenarios), got int"),
        (lambda: run_scenarios(grid_map, None), "scenarios must be a list, got NoneType"),
        (lambda: run_scenarios(grid_map, "x"), "scenarios must be a list, got str"),
        (lambda: run_scenarios(None, []),
         "grid_map must be a GridMap (from load_grid_map), got NoneType"),
        (lambda: run_scenarios(grid_map, [1]),
         "scenarios[0] must be a Scenario (from load_scenarios), got int"),
        (lambda: run_scenarios(grid_map, [], routers=3), "routers must be a dict or None, got int"),
    ]
    for call, words in calls:
        with pytest.raises(engine.InputError, match="^" + re.escape(words) + "$"):
            call()


def test_pictures_refuse_bad_arguments_in_one_line(rules, tmp_path):
    """Each was an AttributeError, a TypeError or a ValueError from deep in the drawing."""
    g = engine.cost_grid(engine.load_map(GOBLINS), rules, rules.unit("goblins"))
    lay, png = g.layers, tmp_path / "p.png"
    blank = np.zeros(lay.grid.shape, dtype=bool)
    calls = [
        (lambda: terrain_image(None), "lay must be a Layers (from engine.terrain.layers), got "
                                      "NoneType"),
        (lambda: flow_arrows(None), "flow must be a FlowField (from flow_field), got NoneType"),
        (lambda: render_png(png, None), "grid must be a CostGrid (from cost_grid), got NoneType"),
        (lambda: render_png(png, g, reach=g), "reach must be a Reach (from reach), got CostGrid"),
        (lambda: render_viewshed_png(png, lay, (1, 1), np.zeros((3, 3), dtype=bool)),
         f"seen must be an array of the grid's shape {lay.grid.shape}, got shape (3, 3)"),
        (lambda: render_viewshed_png(png, lay, (1, 1), blank, target=(1, 2)),
         "target: a point must be two numbers x,y, got 1"),
        (lambda: render_viewshed_png(png, lay, (1, 1), blank, target=((1, 2), "yes")),
         "target's seen must be true or false, got 'yes'"),
        (lambda: render_ai_png(png, lay, threat=3), "threat must be a Threat (from threat_map), "
                                                    "got int"),
        (lambda: render_ai_png(png, lay, units=[((1, 1), -1, "a")]),
         "units[0]: side must be a whole number >= 0, got -1"),
        (lambda: render_ai_png(png, lay, units=[((1, 1), 0)]),
         "units[0] must be ((x, y), side, label), got ((1, 1), 0)"),
        (lambda: render_ai_png(png, lay, units=[((1, "a"), 0, "x")]),
         "units[0]: a point must be two numbers x,y, got (1, 'a')"),
        (lambda: render_viewshed_png(png, lay, None, blank),
         "observer: a point must be two numbers x,y, got None"),
    ]
    for call, words in calls:
        with pytest.raises(engine.InputError, match="^" + re.escape(words) + "$"):
            call()
    assert not png.exists()
    render_ai_png(png, lay, units=[(np.array([1.0, 1.0]), np.int64(1), "a")])
    assert png.exists()


def test_json_output_is_strict_json(tmp_path, capsys):
    (tmp_path / "s.map").write_text("type octile\nheight 1\nwidth 3\nmap\n.@.\n")
    (tmp_path / "s.map.scen").write_text("version 1\n0\ts.map\t3\t1\t0\t0\t2\t0\t2\n")
    rc, out, _ = run(["movingai", str(tmp_path / "s.map.scen"), "--json"], capsys)
    assert rc == 0
    answer = json.loads(out, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert answer["max_error"] is None and answer["matched"] == 0  # was Infinity


@pytest.mark.parametrize(("name", "magic"), [("r.png", b"\x89PNG"), ("r.svg", b"<?xml"),
                                             ("r.pdf", b"%PDF")])
def test_pictures_are_written_in_the_format_their_suffix_names(tmp_path, capsys, name, magic):
    path = tmp_path / name
    assert run([*ROUTE, "--png", str(path)], capsys)[0] == 0
    assert path.read_bytes().startswith(magic)  # .svg and .pdf held PNG bytes


@pytest.mark.parametrize(("name", "words"), [
    ("", "a picture needs a file name, got ''"),  # wrote nothing, said nothing
    ("r.jpg", "a picture's name must end in .png, .svg or .pdf"),
    ("no/such/folder/r.png", "/no/such/folder' does not exist"),
])
def test_pictures_that_cannot_be_written_are_refused(tmp_path, capsys, monkeypatch, name, words):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run([*ROUTE, "--png", name], capsys)
    assert rc == 2 and words in err and err.count("\n") == 1 and not list(tmp_path.iterdir())


def test_an_internal_error_is_one_line_unless_debugging(capsys, monkeypatch):
    def broken(args):
        raise RuntimeError("the kernel fell over\nbadly")

    monkeypatch.setitem(cli._COMMANDS, "route", broken)
    rc, _, err = run(ROUTE, capsys)
    assert rc == 3 and err.count("\n") == 1 and "Traceback" not in err
    assert err == ("engine: internal error: RuntimeError: the kernel fell over badly (rerun with "
                   "--debug for the traceback, and please report it)\n")
    for argv in (["--debug", *ROUTE], [*ROUTE, "--debug"]):
        with pytest.raises(RuntimeError, match="the kernel fell over"):
            main(argv)


@pytest.mark.parametrize("name", ["9" * 400, "a\x00b", "."])
@pytest.mark.parametrize("command", [
    ["reach", "{}", "--race", "goblins", "--at", "1,1"],
    ["route", GOBLINS, "--rules", "{}", "--race", "goblins", "--from", "1,1", "--to", "2,2"],
    ["movingai", "{}"], ["movingai", "{}.scen"],
], ids=["map", "rules", "scen", "scen-map"])
def test_a_file_name_the_system_cannot_take_is_refused(capsys, name, command):
    rc, out, err = run([a.replace("{}", name) for a in command], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1, err  # 400 characters: OSError


def test_a_polygon_of_repeated_points_is_simplified_quickly():
    ring = [p for p in [[0, 0], [10, 0], [10, 5], [0, 5]] for _ in range(200_000)] + [[0, 0]]
    bf = engine.load_map(battlefield([feature("woods", {"type": "Polygon",
                                                        "coordinates": [ring]})]))
    assert bf.features[0].area.area == pytest.approx(50)  # took 20 s at a million points


def test_the_features_and_vertices_a_map_is_given_are_bounded():
    woods = feature("woods", rect(1, 1, 2, 2))
    with pytest.raises(engine.MapError, match="100001 features, more than the 100000 a map "
                       "may have"):
        engine.load_map(battlefield([woods] * 100_001))
    walk = [[1 + (i % 7) / 7, 1 + (i % 5) / 5] for i in range(1_000_001)]
    with pytest.raises(engine.MapError, match="feature 0: LineString has 1000001 vertices, more "
                       "than the 1000000 a feature may be given"):
        engine.load_map(battlefield([feature("river", line(*walk), width=1)]))


def test_a_subnormal_coordinate_is_read_as_0_without_warnings(rules):
    """A hill whose corner is 1e-310 off 0 (found by the long fuzz run) made GEOS warn
    of a division by zero on its crest; it is the hill with the corner at 0."""
    def answers(y):
        hill = feature("hill", {"type": "Polygon", "coordinates": [
            [[0, 0], [40, 0], [40, 20], [0, y], [0, 0]]]}, elevation=3)
        bf = engine.load_map(battlefield([hill, feature("woods", rect(4, 0, 20, 20))],
                                         units="cm", cell=1.0))
        g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
        return g.base.copy(), engine.reach(g, (30, 5), 12).cost_at((22, 9))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = answers(1e-310)
    base, cost = answers(0)
    assert np.array_equal(tiny[0], base) and tiny[1] == cost


@pytest.mark.parametrize("ask", [
    lambda g, xy: engine.flow_field(g, [xy]),
    lambda g, xy: engine.Highway(g, places=[xy]),
    lambda g, xy: engine.reach_many(g, [xy]),
    lambda g, xy: engine.route(g, xy, (30, 40)),
])
def test_a_fraction_on_impassable_ground_is_named(ask):
    """A point of `Fraction`s (real numbers, taken as points) on impassable ground gets
    the engine's one line, not a TypeError from formatting it."""
    from fractions import Fraction

    rules = engine.load_rules("fantasy-warlord")
    g = engine.cost_grid(engine.load_map("demo"), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match=r"\(100\.25, 0\.25\) is on impassable ground"):
        ask(g, (Fraction(401, 4), Fraction(1, 4)))
