"""The Reglamento (terreno y movimiento): every worked
example through the API and the CLI, and a case for each rule."""

import json
import math

import pytest

import engine
from engine import InputError, load_map, load_rules
from engine.cli import main

from .conftest import MAPS, ROOT, battlefield, feature, grid_for, line, rect

RG = MAPS / "reglamento"
Y = 2.25  # a row of cell centres (0.5 cm cells)


@pytest.fixture(scope="module")
def rg():
    return load_rules("reglamento")


def grid(rg, feats, race="human", width=40, height=6, **unit):
    return grid_for(rg, feats, race, width, height, **unit)


def cost(g, *path):
    return engine.price_path(g, path).cost


@pytest.mark.parametrize(("race", "move", "moves"), [
    ("dwarf", 8, 2), ("ogre", 15, 4), ("cavalry", 18, 5), ("human", 10, 3)])
def test_very_difficult_ground_leaves_a_quarter_rounded_half_up(rg, race, move, moves):
    g = engine.cost_grid(load_map(RG / "very-difficult.geojson"), rg, rg.unit(race, depth=0))
    assert g.unit.move == move
    assert cost(g, (2, Y), (2 + moves, Y)) == pytest.approx(move)
    r = engine.reach(g, (2.25, Y))  # from inside the thorns' first cell
    assert r.reachable((2.25 + moves, Y)) and not r.reachable((2.25 + moves + 0.5, Y))


def test_cli_very_difficult_examples(capsys):
    for race, moves in (("dwarf", 2), ("ogre", 4), ("cavalry", 5)):
        assert main(["price", str(RG / "very-difficult.geojson"), "--rules", "reglamento",
                     "--race", race, "--depth", "0", "--path", "2,2", f"{2 + moves},2",
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["cost"] == pytest.approx({"dwarf": 8, "ogre": 15, "cavalry": 18}[race])


def test_human_walks_five_in_the_open_then_two_and_a_half_into_a_wood(rg, capsys):
    g = engine.cost_grid(load_map(RG / "woods.geojson"), rg, rg.unit("human", depth=0))
    priced = engine.price_path(g, [(0, Y), (7.5, Y)])
    assert priced.cost == pytest.approx(10)
    assert [(leg.length, leg.multiplier) for leg in priced.legs] == [(5, 1), (2.5, 2)]
    r = engine.reach(g, (0.25, Y))
    assert r.reachable((7.4, Y)) and not r.reachable((7.8, Y))
    rt = engine.route(g, (0, Y), (7.5, Y))
    assert rt.cost == pytest.approx(10) and rt.turns == 1
    assert main(["route", str(RG / "woods.geojson"), "--rules", "reglamento", "--race",
                 "human", "--depth", "0", "--from", "0,2.25", "--to", "7.5,2.25",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == pytest.approx(10)


def test_difficult_until_the_last_model_leaves(rg):
    wood = feature("woods", rect(-1, -1, 10, 7))
    deep = grid(rg, [wood], depth=2.5)   # one rank, 2.5 cm deep (the default)
    assert rg.unit("human").depth == 2.5
    # From 1 cm inside the wood's edge: 1 cm and then 2.5 cm more for the rear rank at x2.
    assert cost(deep, (9, Y), (20, Y)) == pytest.approx((1 + 2.5) * 2 + 7.5)
    assert cost(grid(rg, [wood]), (9, Y), (20, Y)) == pytest.approx(2 + 10)


def test_march_is_a_double_move_through_open_ground_only(rg, capsys):
    g = engine.cost_grid(load_map(RG / "march.geojson"), rg, rg.unit("human", march=True))
    assert g.unit.move == 20
    r = engine.reach(g, (2, 3))
    assert r.reachable((14, 3)) and not r.reachable((16, 3))  # the wood starts at 15
    assert r.reachable((20, 8))                               # along the road through it
    walk = engine.cost_grid(load_map(RG / "march.geojson"), rg, rg.unit("human"))
    assert engine.reach(walk, (12, 3)).reachable((16, 3))     # not marching: it may enter
    assert main(["reach", str(RG / "march.geojson"), "--rules", "reglamento", "--race",
                 "human", "--march", "--at", "2,3", "--probe", "16,3", "--probe", "20,8",
                 "--json"]) == 0
    probes = json.loads(capsys.readouterr().out)["probes"]
    assert [p["reachable"] for p in probes] == [False, True]
    with pytest.raises(InputError, match="no march moves"):
        load_rules("fantasy-warlord").unit("humans", march=True)


@pytest.mark.parametrize("depth", [0.0, 1.0])
def test_cavalry_past_the_corner_of_the_wood_touches_it(rg, depth):
    """On the march example cavalry from (12.5931, 6.5027) to (30.2578, 4.1829) is
    cheapest bent exactly at the wood's corner (25, 6), all in the open: 17.98 of
    its 18.  Bent off the corner (at (24.28, 6.25) it crossed a hair of the wood)
    the route cost 18.015, past the move, and the point was out of reach."""
    g = engine.cost_grid(load_map(RG / "march.geojson"), rg, rg.unit("cavalry", depth=depth))
    start, goal = (12.5931, 6.5027), (30.2578, 4.1829)
    best = math.dist(start, (25, 6)) + math.dist((25, 6), goal)
    assert best < g.unit.move == 18
    rt = engine.route(g, start, goal)
    assert rt.cost == pytest.approx(best, rel=1e-8)
    assert engine.reach(g, start).cost_at(goal) == pytest.approx(best, rel=1e-8)


def test_open_ground_categories(rg):
    for kind in ("road", "path", "clear", "open"):
        assert cost(grid(rg, [feature(kind, rect(5, -1, 30, 7))]), (2, Y), (20, Y)) == 18
    hill = feature("hill", rect(5, -10, 35, 16), elevation=3)
    assert cost(grid(rg, [hill]), (6, Y), (10, Y)) == pytest.approx(4)  # a hill is open


@pytest.mark.parametrize("kind", ["bushes", "orchard", "scree", "ruins", "rubble",
                                  "ploughed field", "flooded field", "muddy field", "sand",
                                  "dunes", "stairs", "woods"])
def test_difficult_ground_halves(rg, kind):
    assert cost(grid(rg, [feature(kind, rect(5, -1, 30, 7))]), (3, Y), (9, Y)) == 2 + 8


@pytest.mark.parametrize("kind", ["dense woods", "fast river"])
def test_very_difficult_kinds(rg, kind):
    g = grid(rg, [feature(kind, rect(5, -1, 30, 7))], "dwarf")
    assert cost(g, (3, Y), (7, Y)) == pytest.approx(2 + 2 * 4)


def test_near_vertical_hills_are_very_difficult_to_climb(rg):
    cliffside = feature("hill", rect(5, -10, 35, 16), elevation=6, steep=True)
    g = grid(rg, [cliffside], "dwarf")
    assert cost(g, (6, Y), (7, Y)) == pytest.approx(4)   # up: x4 for a dwarf
    assert cost(g, (7, Y), (6, Y)) == pytest.approx(1)   # down


@pytest.mark.parametrize("kind", ["lake", "deep swamp", "cliff"])
def test_impassable_kinds(rg, kind):
    assert math.isinf(cost(grid(rg, [feature(kind, rect(5, -1, 8, 7))]), (2, Y), (20, Y)))


def test_wide_rivers_need_a_bridge(rg):
    river = feature("river", line((10, -1), (10, 7)), width=3)
    assert math.isinf(cost(grid(rg, [river]), (2, Y), (20, Y)))
    bridge = feature("bridge", line((7, Y), (13, Y)), width=3)
    assert cost(grid(rg, [river, bridge]), (2, Y), (20, Y)) == 18


def test_categories_do_not_stack(rg):
    """Woods on a steep hill, dense woods over woods: the worse category, not the product."""
    steep = feature("hill", rect(5, -10, 35, 16), elevation=6, steep=True)
    woods = feature("woods", rect(5, -1, 30, 7))
    g = grid(rg, [steep, woods], "dwarf")
    assert cost(g, (6, Y), (7, Y)) == pytest.approx(4)   # climbing: very difficult, x4
    assert cost(g, (7, Y), (6, Y)) == pytest.approx(2)   # down: the wood's x2
    thorns = feature("dense woods", rect(5, -1, 30, 7))
    assert cost(grid(rg, [woods, thorns], "dwarf"), (6, Y), (7, Y)) == pytest.approx(4)


def test_gateways_are_open_ground_through_a_building(rg):
    house = feature("building", rect(10, -1, 20, 7))
    assert math.isinf(cost(grid(rg, [house]), (2, Y), (30, Y)))
    gate = feature("gateway", line((9, Y), (21, Y)), width=2)
    assert cost(grid(rg, [house, gate]), (2, Y), (30, Y)) == pytest.approx(28)


def test_a_march_multiplier_that_would_make_the_move_infinite_is_named(tmp_path):
    text = (ROOT / "engine" / "rules" / "reglamento.toml").read_text("utf-8")
    assert text.count("march = 2.0") == 1
    path = tmp_path / "fast.toml"
    path.write_text(text.replace("march = 2.0", "march = 1e308"), "utf-8")
    with pytest.raises(engine.RulesError, match=r"fast.toml: \[ruleset\] march must be at most "
                                                r"1e\+09, got 1e\+308$"):
        load_rules(path)  # was "move must be finite, got inf" when a march was asked for


@pytest.mark.parametrize("cell", [0.5, 1.0, 0.1, 0.4, 1.2])
def test_a_near_vertical_slope_climbed_to_its_crest_on_any_grid(rg, cell):
    """'laderas de colinas casi verticales que deban treparse' are very difficult
    ground, where a unit moves 'una cuarta parte de su movimiento' (rounded to the
    nearest cm): a human (10 cm) moves 3 cm there, so climbing 3 cm up such a slope
    to its crest (a hill 6 cm across, x 10 to 16) spends the whole 10 cm, on every
    grid; coming down the far side 3 cm is open ground, 3 cm."""
    slope = feature("hill", rect(10, -10, 16, 16), elevation=4, steep=True)
    bf = engine.load_map(battlefield([slope], 30, 6, units="cm", cell=cell))
    g = engine.cost_grid(bf, rg, rg.unit("human", depth=0))
    assert cost(g, (10, 3), (13, 3)) == pytest.approx(10, abs=1e-6)
    assert cost(g, (13, 3), (16, 3)) == pytest.approx(3, abs=1e-6)
    assert cost(g, (7, 3), (19, 3)) == pytest.approx(3 + 10 + 3 + 3, abs=1e-6)
