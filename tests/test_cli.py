"""The command line: demo, pictures, JSON shapes and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine.cli import main

from .conftest import EXAMPLES, MAPS, ROOT, battlefield, feature, line, rect

PNG = b"\x89PNG\r\n\x1a\n"


def test_demo_prints_a_summary_and_draws(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert main(["demo", "--png", str(out)]) == 0
    text = capsys.readouterr().out
    assert "within reach this turn" in text and "turns" in text and str(out) in text
    assert out.read_bytes().startswith(PNG) and out.stat().st_size > 50_000
    network = tmp_path / "demo-network.png"
    assert text.count("chokepoint:") == 3 and "1 formation change(s)" in text
    assert network.read_bytes().startswith(PNG) and str(network) in text


def test_demo_to_a_path_it_cannot_write_stops_before_its_summary(tmp_path, capsys):
    folder = tmp_path / "named.png"
    folder.mkdir()
    assert main(["demo", "--png", str(folder)]) == 2  # a directory
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(folder) in err  # printed it all first


def test_reach_and_route_pictures(tmp_path, capsys):
    demo = str(MAPS / "demo.geojson")
    reach_png, route_png = tmp_path / "reach.png", tmp_path / "route.png"
    assert main(["reach", demo, "--race", "goblins", "--at", "15,60", "--png", str(reach_png)]) == 0
    assert main(["route", demo, "--race", "orcs", "--from", "15,60", "--to", "170,100",
                 "--png", str(route_png)]) == 0
    assert reach_png.read_bytes().startswith(PNG)
    assert route_png.read_bytes().startswith(PNG)
    assert "goblins at (15, 60)" in capsys.readouterr().out


def test_route_json_shape(capsys):
    assert main(["route", str(MAPS / "demo.geojson"), "--race", "humans", "--ranks", "2",
                 "--from", "15,60", "--to", "170,100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"cost", "length", "turns", "path", "stops", "legs"}
    assert out["path"][0] == [15, 60] and out["path"][-1] == [170, 100]
    assert len(out["stops"]) == out["turns"] - 1
    assert sum(leg["cost"] for leg in out["legs"]) == pytest.approx(out["cost"])
    assert {"from", "to", "cost", "terrain"} <= set(out["legs"][0])


def test_lattice_option_answers_as_the_api_does(capsys):
    """Any-angle by default, from the unit's own point; --lattice: the step lattice."""
    demo = str(MAPS / "demo.geojson")
    g = engine.cost_grid(engine.load_map(demo), engine.load_rules("fantasy-warlord"),
                         engine.load_rules("fantasy-warlord").unit("humans", depth=0))
    common = ["--race", "humans", "--depth", "0", "--json"]
    for lattice in (False, True):
        flag = ["--lattice"] if lattice else []
        assert main(["reach", demo, "--at", "30.1,40.3", "--probe", "40.2,47.9",
                     *common, *flag]) == 0
        reach = json.loads(capsys.readouterr().out)
        r = engine.reach(g, (30.1, 40.3), any_angle=not lattice)
        assert reach["probes"][0]["cost"] == round(r.cost_at((40.2, 47.9)), 6)
        assert reach["cells"] == len(r.cells)
        assert main(["route", demo, "--from", "30,40", "--to", "150,60", *common, *flag]) == 0
        route = json.loads(capsys.readouterr().out)
        rt = engine.route(g, (30, 40), (150, 60), any_angle=not lattice)
        assert route["cost"] == round(rt.cost, 6) and len(route["path"]) == len(rt.path)
    assert reach["probes"][0]["cost"] != round(
        engine.reach(g, (30.1, 40.3)).cost_at((40.2, 47.9)), 6)  # the two answers differ


def test_price_json(capsys):
    assert main(["price", str(EXAMPLES / "wood-elves.geojson"), "--race", "humans",
                 "--path", "0,0.25", "10,0.25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cost"] is None  # straight through the river beside the ford
    assert any("impassable" in t for leg in out["legs"] for t in leg["terrain"])


@pytest.mark.parametrize(("argv", "words"), [
    (["route", "{demo}", "--race", "humans", "--from", "15,60", "--to", "108.5,30"],
     "impassable ground"),
    (["route", "{walled}", "--race", "humans", "--from", "1,1", "--to", "20,1"],
     "no route from"),
    (["reach", "{demo}", "--race", "elves", "--at", "15,60"], "unknown race 'elves'"),
    (["reach", "{demo}", "--race", "humans", "--at", "15,600"], "off the table"),
    (["reach", "{demo}", "--race", "humans", "--at", "15;60"], "expected points X,Y or X Y"),
    (["reach", "{demo}", "--race", "humans", "--at", "15,60", "--move", "-2"], "move"),
    (["reach", "{demo}", "--race", "humans", "--at", "15,60", "--rules", "nope.toml"],
     "no rules file"),
    (["reach", "missing.geojson", "--race", "humans", "--at", "1,1"], "no map file"),
    (["reach", "{demo}", "--race", "humans", "--at", "15,60", "--png", "/no/such/dir/x.png"],
     "x.png"),
    (["reach", "{demo}", "--race", "humans"], "--at"),
    (["threat", "{demo}", "--enemy", "elves@150,60"], "unknown race 'elves'"),
    (["threat", "{demo}", "--enemy", "orcs@500,60"], "unit 0: point (500, 60) is off the table"),
    (["threat", "{demo}", "--enemy", "orcs150,60"], "expected RACE@X,Y"),
    (["threat", "{demo}"], "--enemy"),
    (["flow", "{demo}", "--race", "humans", "--goal", "90,300"], "goal 0: point"),
    (["flow", "{demo}", "--race", "humans", "--goal", "108.5,30"], "impassable ground"),
    (["flow", "{demo}", "--race", "humans", "--goal", "90,30", "--limit", "-1"], "--limit"),
    (["reach", "{demo}", "--race", "humans", "--at", "15,60", "--depth", "1e6"],
     "deeper than the 180 x 120 table"),  # hung building the footprint
    (["reach", "{dear}", "--race", "humans", "--at", "1,1"], "too large"),  # OverflowError
    (["reach", "{demo}", "--race", "humans", "--at", "-0.0001,60"],
     "point (-0.0001, 60) is off the table"),  # was "--at: expected one argument"
    (["reach", "{demo}", "--race", "humans", "--at", "180.0001,60"],
     "point (180.0001, 60) is off the table"),  # was "(180, 60)", which looks on it
    (["reach", "{demo}", "--race", "humans", "--at", "-inf,60"],
     "point '-inf,60' is not finite"),  # was "--at: expected at least one argument"
    (["reach", "{demo}", "--race", "wood  elves", "--at", "15,60"],
     "unknown race 'wood  elves'"),  # was 'wood elves', which it knows
    (["manoeuvre", str(MAPS / "battlesystem" / "manoeuvres.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--at", "1,1", "--kind", "frontage", "--figures", "1" + "0" * 30],
     "figures from 1 to 1000000"),
    (["price", "{demo}", "--race", "humans", "--path", "10,10", "-3,4"],
     "point (-3, 4) is off the table"),
    (["manoeuvre", str(MAPS / "battlesystem" / "manoeuvres.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--at", "1,1", "--kind", "frontage"],
     "--kind frontage needs --figures N"),  # was "needs figures >= 1, got None"
])
def test_errors_are_one_line_exit_2(capsys, tmp_path, argv, words):
    walled = tmp_path / "walled.geojson"
    walled.write_text(json.dumps(battlefield([feature("building", rect(10, -1, 11, 7))], 30, 6)))
    dear = tmp_path / "dear.geojson"
    dear.write_text(json.dumps(battlefield([feature("hedge", line((5, 0), (5, 20)), width=1,
                                                    cost=1e9)])))
    argv = [a.format(demo=MAPS / "demo.geojson", walled=walled, dear=dear) for a in argv]
    with pytest.raises(SystemExit) as exit_info:
        sys.exit(main(argv))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_console_entry_point_exit_status():
    run = subprocess.run([sys.executable, "-m", "engine", "reach", "missing.geojson",
                          "--race", "humans", "--at", "1,1"], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert run.stderr.startswith("engine: error:") and run.stderr.count("\n") == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_answer_that_cannot_be_written_is_one_line():
    """Out of room to write (a full disk: /dev/full) is the user's to fix, status 2,
    not an internal error, and nothing more is said at exit."""
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "engine", "reach", "demo", "--race",
                              "humans", "--at", "30,40"], cwd=ROOT, stdout=full,
                             stderr=subprocess.PIPE, text=True)
    err = [line for line in run.stderr.splitlines() if "compiling" not in line]
    assert run.returncode == 2, run.stderr
    assert err == ["engine: error: cannot write the answer: No space left on device"]


def test_threat_text_json_and_picture(tmp_path, capsys):
    demo = str(MAPS / "demo.geojson")
    png = tmp_path / "threat.png"
    argv = ["threat", demo, "--enemy", "orcs@150,60", "--enemy", "goblins@150,80",
            "--probe", "150,70", "--probe", "10,10"]
    assert main([*argv, "--png", str(png)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("2 enemies: ") and "up to 2 at once" in text[0]
    assert text[1] == "  (150, 70): 2 can reach it: #0 orcs (margin 9.5), #1 goblins " \
        "(margin 9.11318)"
    assert text[2] == "  (10, 10): 0 can reach it"
    assert png.read_bytes().startswith(PNG)
    assert main([*argv, "--json", "--charge"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["charge"] is True and out["most"] == 2 and out["probes"][1]["by"] == []
    assert out["probes"][0]["by"][0] == {"enemy": 0, "race": "orcs", "margin": 9.5}


def test_flow_text_json_and_picture(tmp_path, capsys):
    demo = str(MAPS / "demo.geojson")
    png = tmp_path / "flow.png"
    argv = ["flow", demo, "--race", "humans", "--goal", "90,30", "--from", "20,20"]
    assert main([*argv, "--png", str(png)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == "  from (20, 20): cost 71.2311 cm, 80 steps, 4 turn(s)"
    assert png.read_bytes().startswith(PNG)
    assert main([*argv, "--json", "--limit", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["probes"] == [{"from": [20.0, 20.0], "cost": None, "path": []}]
    assert main([*argv, "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["probes"][0]["path"]
    assert path[0] == [20.25, 20.25] and path[-1] == [90.25, 30.25]


def test_flow_at_move_0_counts_no_turns(capsys):
    argv = ["flow", str(MAPS / "demo.geojson"), "--race", "humans", "--goal", "90,30",
            "--from", "20,20", "--move", "0"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("80 steps, never at move 0")  # was 0


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"engine {engine.__version__} (tabletop-movement)\n"
