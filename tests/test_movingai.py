"""Moving AI loaders, conventions, and the engine's lengths against the published optima."""

import json
import math
import re

import numpy as np
import pytest

from engine import GridRouter, InputError, NoRouteError
from engine.cli import main
from engine.maps import load_grid_map, load_scenarios, map_for
from engine.search import run_scenarios

from .conftest import MOVINGAI

PAIRS = sorted(p.name[:-4] for p in MOVINGAI.glob("*.map")) if MOVINGAI.is_dir() else []
needs_data = pytest.mark.skipif(not PAIRS, reason="no Moving AI maps (set MOVINGAI_DIR)")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_map_and_classes(tmp_path):
    m = load_grid_map(write(tmp_path, "t.map", "type octile\nheight 2\nwidth 4\nmap\n.GSW\n@OT.\n"))
    assert m.cells.shape == (2, 4)
    assert [m.classes((0, c)) for c in range(4)] == [".", ".", ".", "W"]
    assert [m.classes((1, c)) for c in range(4)] == ["@", "@", "T", "."]
    assert m.multipliers(".").tolist() == [[1, 1, 1, math.inf], [math.inf] * 3 + [1]]
    assert m.multipliers("W").tolist() == [[math.inf] * 3 + [1], [math.inf] * 4]


def test_no_corner_cutting():
    m = np.ones((2, 2))
    assert GridRouter(m, directions=8).route((0, 0), (1, 1))[0] == pytest.approx(math.sqrt(2))
    m[0, 1] = np.inf  # one cell the diagonal cuts past is blocked: go round
    cost, cells = GridRouter(m, directions=8).route((0, 0), (1, 1))
    assert cost == pytest.approx(2.0) and cells == [(0, 0), (1, 0), (1, 1)]
    m[1, 0] = np.inf  # both blocked: no way through the corner
    with pytest.raises(NoRouteError):
        GridRouter(m, directions=8).route((0, 0), (1, 1))


@pytest.mark.parametrize(("text", "words"), [
    ("type octile\nheight 2\nwidth 3\nmap\n...\n", "expected 2 rows"),
    ("type octile\nheight 1\nwidth 3\nmap\n..\n", "line 5 has 2 cells"),
    ("type octile\nheight 1\nwidth 3\nmap\n.x.\n", "unknown cell 'x'"),
    ("type octile\nwidth 3\nmap\n...\n", "header needs"),
    ("type octile\nheight -4\nwidth 4\nmap\n", "width and height must be >= 1, got 4 x -4"),
    ("type octile\nheight 0\nwidth 4\nmap\n", "width and height must be >= 1, got 4 x 0"),
])
def test_bad_maps_refused(tmp_path, text, words):
    with pytest.raises(InputError, match=words):
        load_grid_map(write(tmp_path, "bad.map", text))


def test_scenarios_and_their_precision(tmp_path):
    scen = write(tmp_path, "t.map.scen", "version 1\n0\tt.map\t4\t2\t0\t0\t2\t0\t2.00000000\n"
                                         "1 t.map 4 2 0 0 1 0 1.41\n")
    sc = load_scenarios(scen)
    assert [(s.start, s.goal, s.decimals) for s in sc] == [((0, 0), (2, 0), 8), ((0, 0), (1, 0), 2)]
    assert sc[1].tolerance == pytest.approx(0.005, rel=1e-3)
    with pytest.raises(InputError, match="line 2"):
        load_scenarios(write(tmp_path, "bad.scen", "version 1\n0 t.map 4 2 0 0\n"))


def test_run_and_cli_on_a_tiny_pair(tmp_path, capsys):
    write(tmp_path, "t.map", "type octile\nheight 2\nwidth 4\nmap\n....\n.@..\n")
    scen = write(tmp_path, "t.map.scen", "version 1\n0 t.map 4 2 0 1 3 1 4.41421356\n"
                                         "0 t.map 4 2 0 0 3 0 3.00000000\n")
    assert map_for(scen, load_scenarios(scen)).name == "t.map"
    result = run_scenarios(load_grid_map(tmp_path / "t.map"), load_scenarios(scen))
    assert (result.scenarios, result.matched) == (2, 2)
    assert main(["movingai", str(scen), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"scenarios", "matched", "max_error", "seconds"}
    assert out["matched"] == 2


def test_routers_given_are_reused_and_added_to(tmp_path):
    grid_map = load_grid_map(write(tmp_path, "w.map", "type octile\nheight 2\nwidth 4\nmap\n"
                                                      "..WW\n.@WW\n"))
    scen = load_scenarios(write(tmp_path, "w.map.scen", "version 1\n0 w.map 4 2 0 0 0 1 1\n"
                                                        "0 w.map 4 2 2 0 3 1 1.41421356\n"))
    routers: dict = {}
    first = run_scenarios(grid_map, scen[:1], routers=routers)
    assert set(routers) == {"."} and first.matched == 1
    kept = routers["."]
    both = run_scenarios(grid_map, scen, routers=routers)
    assert routers["."] is kept and set(routers) == {".", "W"}  # one router a class
    assert both.lengths == run_scenarios(grid_map, scen).lengths and both.matched == 2


@needs_data
@pytest.mark.parametrize("name", PAIRS)
def test_engine_lengths_equal_the_published_optima(name):
    """A spread sample of each file's scenarios (every one runs in bench/)."""
    grid_map = load_grid_map(MOVINGAI / f"{name}.map")
    scenarios = load_scenarios(MOVINGAI / f"{name}.map.scen")
    sample = scenarios[:: max(1, len(scenarios) // 25)]
    if name == "icecrown":  # the scenarios that start on water and on trees
        sample += [s for s in scenarios if grid_map.classes(s.start[::-1]) in "WT"]
    result = run_scenarios(grid_map, sample)
    assert result.matched == result.scenarios, result


@pytest.mark.parametrize(("lines", "words"), [
    ("0 t.map 4 2 0 0 2 0 nan\n", "line 2: the optimal length must be a finite number >= 0"),
    ("0 t.map 4 2 0 0 2 0 -1\n", "line 2: the optimal length must be a finite number >= 0"),
    ("0 t.map 4 2 0 0 2 0 2\n0 u.map 4 2 0 0 1 0 1\n",
     "line 3 is on map 'u.map', the lines before on 't.map' (one map a file)"),
])
def test_bad_scenario_lines_refused(tmp_path, lines, words):
    with pytest.raises(InputError, match=re.escape(words)):  # were solved, counted unmatched
        load_scenarios(write(tmp_path, "bad.scen", "version 1\n" + lines))


@pytest.mark.parametrize(("line", "words"), [
    ("0 t.map 5 5 0 0 2 0 2\n", r"scenario \(0, 0\) -> \(2, 0\) is for a 5 x 5 map, not the 4 x 2"),
    ("0 t.map 4 2 0 0 1 1 1.4\n", r"scenario goal \(1, 1\) is on a blocked cell"),
])
def test_scenarios_that_do_not_fit_their_map_refused(tmp_path, line, words):
    grid_map = load_grid_map(write(tmp_path, "t.map", "type octile\nheight 2\nwidth 4\nmap\n"
                                                       "....\n.@..\n"))
    with pytest.raises(InputError, match=words):  # were "0 of 1 match", inf or not
        run_scenarios(grid_map, load_scenarios(write(tmp_path, "t.map.scen",
                                                     "version 1\n" + line)))
