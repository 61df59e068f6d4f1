"""Roads, trails, bridges and fords: the rules they carry, the graph they make and the
chokepoints they are (issue 4)."""

import json
import math

import networkx as nx
import numpy as np
import pytest

import engine
from engine import MapError, NoRouteError, load_rules
from engine.cli import main
from engine.terrain.costgrid import kernel_args
from engine.terrain.roads import chokepoints, describe, network

from .conftest import MAPS, ROOT, battlefield, feature, grid_for, line, rect
from .test_kernels import assert_reach_is_reference, by_cell, centre

Y = 10.25  # a row of cell centres (cell 0.5)
CROSSINGS = MAPS / "crossings.geojson"
RIVER = feature("river", line((20, -1), (20, 21)), width=4)


def cost(g, a, b):
    return engine.price_path(g, [a, b]).cost


@pytest.fixture(scope="module")
def mounted(tmp_path_factory):
    """The shipped rules with two races of our own: knights (cavalry) and giants (broad)."""
    text = (ROOT / "engine" / "rules" / "fantasy-warlord.toml").read_text("utf-8")
    text += ('\n[races.knights]\nmove = 30.0\ntroop = "cavalry"\n'
             '\n[races.giants]\nmove = 24.0\nfigure_width = 3.0\nfrontage = 3.0\n')
    path = tmp_path_factory.mktemp("rules") / "mounted.toml"
    path.write_text(text, "utf-8")
    return load_rules(path)


# --- what roads and trails cancel ------------------------------------------------------

WOOD = feature("woods", rect(10, 0, 30, 20))
ROAD = feature("road", line((0, Y), (40, Y)), width=2)


def test_road_cancels_a_woods_penalty(rules):
    assert cost(grid_for(rules, [WOOD]), (5, Y), (35, Y)) == pytest.approx(5 + 2 * 20 + 5)
    assert cost(grid_for(rules, [WOOD, ROAD]), (5, Y), (35, Y)) == pytest.approx(30)


def test_road_does_not_cancel_a_wall(rules):
    wall = feature("wall", line((20, 0), (20, 20)), width=1)
    with_road = cost(grid_for(rules, [ROAD, wall], "orcs"), (5, Y), (35, Y))
    assert with_road == pytest.approx(cost(grid_for(rules, [wall], "orcs"), (5, Y), (35, Y)))
    assert with_road == pytest.approx(30 + 1)  # 1 cm of wall at x2


def test_road_does_not_cancel_a_steep_climb(rules):
    hill = feature("hill", rect(10, -20, 30, 40), elevation=4, steep=True)
    g = grid_for(rules, [hill, ROAD])
    up = engine.price_path(g, [(5, Y), (19.75, Y)])
    assert any("steep slope (uphill)" in leg.terrain for leg in up.legs)
    assert up.cost > 14.75 + 1


def test_road_without_a_bridge_meets_the_river(rules):
    road = feature("road", line((0, Y), (40, Y)), width=2)
    assert math.isinf(cost(grid_for(rules, [RIVER, road]), (5, Y), (35, Y)))
    swim = cost(grid_for(rules, [RIVER, road], "hill trolls"), (5, Y), (35, Y))
    assert swim == pytest.approx(26 + 2 * 4)  # the river's own x2 over its 4 cm


def test_trail_is_closed_to_cavalry(rules, mounted):
    trail = feature("trail", line((0, Y), (40, Y)), width=2)
    foot = grid_for(mounted, [WOOD, trail], "humans")
    horse = grid_for(mounted, [WOOD, trail], "knights")
    assert cost(foot, (5, Y), (35, Y)) == pytest.approx(30)
    assert cost(horse, (5, Y), (35, Y)) == pytest.approx(50)  # the wood's x2 over 20 cm
    assert mounted.unit("knights").troop == "cavalry"


def test_trail_is_closed_to_figures_wider_than_it(mounted):
    trail = feature("trail", line((0, Y), (40, Y)), width=2)
    giants = grid_for(mounted, [WOOD, trail], "giants", frontage=3)
    assert cost(giants, (5, Y), (35, Y)) == pytest.approx(50)
    wide_trail = feature("trail", line((0, Y), (40, Y)), width=3)
    giants = grid_for(mounted, [WOOD, wide_trail], "giants", frontage=3)
    assert cost(giants, (5, Y), (35, Y)) == pytest.approx(30)


# --- bridge, ford, swimming ------------------------------------------------------------

BRIDGE = feature("bridge", line((15, Y), (25, Y)), width=3)
FORD = feature("ford", line((15, Y), (25, Y)), width=3)


def test_bridge_versus_ford_versus_swimming(rules):
    a, b = (5, Y), (35, Y)
    assert math.isinf(cost(grid_for(rules, [RIVER]), a, b))
    assert cost(grid_for(rules, [RIVER, BRIDGE]), a, b) == pytest.approx(30)  # no penalty
    assert cost(grid_for(rules, [RIVER, FORD]), a, b) == pytest.approx(26 + 2 * 4)  # ford x2
    elves = grid_for(rules, [RIVER, FORD], "wood elves")
    assert cost(elves, a, b) == pytest.approx(26 + 1.25 * 4)
    trolls = grid_for(rules, [RIVER], "hill trolls")
    assert cost(trolls, a, b) == pytest.approx(26 + 2 * 4)  # they swim at the river's x2
    eagles = grid_for(rules, [RIVER], "giant eagles")
    assert cost(eagles, a, b) == pytest.approx(30)


def test_a_ford_drawn_over_a_bridge_leaves_the_bridge_free(rules):
    # Where both lie over the water the unit takes the cheaper way over: the bridge.
    # (Before, the ford's x2 was charged on the bridge too: 34 rather than 30.)
    assert cost(grid_for(rules, [RIVER, BRIDGE, FORD]), (5, Y), (35, Y)) == pytest.approx(30)
    assert cost(grid_for(rules, [RIVER, FORD, BRIDGE]), (5, Y), (35, Y)) == pytest.approx(30)
    # A unit wider than the bridge re-forms to use it (+5), as it does to use a trail
    # through woods: each cell is priced one way, and the bridge's is the lower
    # multiplier. Wading the ford in formation would cost 34 here.
    wide = grid_for(rules, [RIVER, BRIDGE, FORD], frontage=8)
    assert cost(wide, (5, Y), (35, Y)) == pytest.approx(30 + 5)


# --- frontage and formation changes ----------------------------------------------------


def test_a_frontage_wider_than_a_bridge_changes_formation(rules):
    wide = grid_for(rules, [RIVER, BRIDGE], frontage=8)
    rt = engine.route(wide, (5, Y), (35, Y))
    changes = [leg for leg in rt.legs if leg.kind == "formation change"]
    assert len(changes) == 1
    assert changes[0].cost == rules.formation_change == 5.0
    assert changes[0].length == 0 and "bridge 3 wide, frontage 8" in changes[0].terrain[0]
    assert 18 <= changes[0].start[0] <= 18.5  # where the front leaves the bank
    assert rt.cost == pytest.approx(30 + 5)
    assert changes[0].as_dict()["kind"] == "formation change"
    narrow = grid_for(rules, [RIVER, BRIDGE], frontage=3)
    rt = engine.route(narrow, (5, Y), (35, Y))
    assert rt.cost == pytest.approx(30) and all(leg.kind == "move" for leg in rt.legs)


def test_formation_change_is_paid_once_per_passage(rules):
    g = grid_for(rules, [RIVER, BRIDGE], frontage=8)
    there_and_back = engine.price_path(g, [(5, Y), (35, Y), (5, Y)])
    assert there_and_back.cost == pytest.approx(60 + 2 * 5)
    on = engine.price_path(g, [(19, Y), (21, Y)])  # already on the bridge: nothing to narrow
    assert on.cost == pytest.approx(2)


def test_a_figure_wider_than_a_bridge_cannot_cross(mounted):
    g = grid_for(mounted, [RIVER, feature("bridge", line((15, Y), (25, Y)), width=2)], "giants",
                 frontage=3)
    with pytest.raises(NoRouteError):
        engine.route(g, (5, Y), (35, Y))


def test_a_gateway_narrower_than_the_frontage(rules):
    house = feature("building", rect(10, 0, 20, 20))
    gate = feature("gateway", line((8, Y), (22, Y)), width=3)
    g = grid_for(rules, [house, gate], frontage=8)
    assert engine.route(g, (0, Y), (30, Y)).cost == pytest.approx(30 + 5)


def test_formation_change_costs_in_the_search_match_the_reference(rules):
    """Kernel (with and without a step table) against networkx over the pure pricer."""
    feats = [feature("woods", rect(0, 0, 18, 14)),
             feature("river", line((9, -1), (9, 15)), width=2)]
    feats += [feature("bridge", line((7, 3.5), (11, 3.5)), width=2),
              feature("trail", line((0, 9.5), (18, 9.5)), width=2),
              feature("building", rect(13, 0, 16, 6)),
              feature("gateway", line((12, 2.5), (17, 2.5)), width=2)]
    bf = engine.load_map(battlefield(feats, 18, 14, cell=1.0))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0, frontage=4))
    assert g.narrow.any() and g.kernel_args.table_cost.size
    source = int(np.flatnonzero(np.isfinite(g.base.ravel()))[0])
    expected = assert_reach_is_reference(g, source)
    untabled = kernel_args(g.base, g.steps, g.steep, g.slope, 0.0, g.footprint,
                                          table=False, enter=g.enter, narrow=g.narrow)
    assert untabled.table_cost.size == 0
    g.__dict__["kernel_args"] = untabled  # the cached property, replaced
    r2 = engine.reach(g, centre(g, source), 1e9, any_angle=False)
    assert by_cell(r2) == pytest.approx(expected)


# --- the graph -------------------------------------------------------------------------


def test_network_of_the_shipped_map(rules):
    bf = engine.load_map(CROSSINGS)
    g = network(bf, rules)
    assert isinstance(g, nx.MultiGraph)
    kinds = {}
    for _, _, d in g.edges(data=True):
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    # Each crossing is cut at both banks: three pieces.
    assert kinds == {"road": 7, "trail": 2, "bridge": 6, "ford": 3}
    banks = [d["pos"] for _, d in g.nodes(data=True) if d["kind"] == "bank"]
    assert len(banks) == 6
    ends = sorted(d["pos"] for _, d in g.nodes(data=True) if d["kind"] == "end")
    assert ends[0] == (0.0, 30.0) and len(ends) == 5  # roads clipped at the table's edge
    assert nx.is_connected(g)  # roads, bridges, trails and the ford: one network
    crossroads = [n for n, d in g.nodes(data=True) if d["pos"] == (50.0, 30.0)]
    assert len(crossroads) == 1 and g.degree(crossroads[0]) == 4
    # Lengths add up to the lines' own.
    total = sum(d["length"] for _, _, d in g.edges(data=True)
                if d["feature"].endswith("'old-bridge')"))
    assert total == pytest.approx(19.0)


def test_lines_that_nearly_meet_join(rules):
    a = feature("road", line((0, 10), (20, 10)), width=2)
    b = feature("road", line((20.3, 10.2), (40, 10.2)), width=2)  # 0.36 cm short
    c = feature("road", line((10, 10.4), (10, 20)), width=2)      # 0.4 cm off the first road
    bf = engine.load_map(battlefield([a, b, c]))
    g = network(bf, rules)  # tolerance: one cell, 0.5 cm
    assert nx.is_connected(g) and g.number_of_nodes() == 5
    apart = network(bf, rules, tolerance=0.1)
    assert nx.number_connected_components(apart) == 3
    with pytest.raises(engine.InputError, match="tolerance"):
        network(bf, rules, tolerance=-1)


def test_crossing_roads_meet_at_a_junction(rules):
    a = feature("road", line((0, 10), (40, 10)), width=2)
    b = feature("trail", line((20, 0), (20, 20)), width=1)
    g = network(engine.load_map(battlefield([a, b])), rules)
    middle = [n for n, d in g.nodes(data=True) if d["kind"] == "junction"]
    assert len(middle) == 1 and g.nodes[middle[0]]["pos"] == (20.0, 10.0)
    assert g.degree(middle[0]) == 4 and g.number_of_edges() == 4


# --- chokepoints -----------------------------------------------------------------------


def test_chokepoints_of_the_shipped_map_are_its_two_bridges_and_its_ford(rules):
    bf = engine.load_map(CROSSINGS)
    found, regions = chokepoints(bf, rules, rules.unit("humans"))
    assert [(c.kind, c.feature.split("'")[1]) for c in found] == [
        ("bridge", "old-bridge"), ("bridge", "mill-bridge"), ("ford", "shallows")]
    assert len(regions) == 4
    named = {c.feature.split("'")[1]: c for c in found}
    where = {r.id: r.at for r in regions}

    def side(region_id):
        x, y = where[region_id]
        return ("N" if y < 71 else "S") + ("W" if x < (100 if y < 71 else 140) else "E")

    assert {side(r.id) for r in named["old-bridge"].joins} == {"NW", "SW"}
    assert {side(r.id) for r in named["mill-bridge"].joins} == {"NW", "NE"}
    assert {side(r.id) for r in named["shallows"].joins} == {"SW", "SE"}
    x, y = named["shallows"].at
    assert 131 <= x <= 149 and 106 <= y <= 114


def test_no_chokepoints_for_swimmers_and_flyers(rules):
    bf = engine.load_map(CROSSINGS)
    for race in ("hill trolls", "giant eagles"):
        found, regions = chokepoints(bf, rules, rules.unit(race))
        assert found == [] and len(regions) == 1


def test_a_second_crossing_makes_neither_a_chokepoint(rules):
    two = [RIVER, BRIDGE, feature("ford", line((15, 3), (25, 3)), width=3)]
    bf = engine.load_map(battlefield(two))
    assert chokepoints(bf, rules, rules.unit("humans"))[0] == []
    one = engine.load_map(battlefield([RIVER, BRIDGE]))
    assert [c.kind for c in chokepoints(one, rules, rules.unit("humans"))[0]] == ["bridge"]


def test_a_road_through_forbidden_ground_is_a_pass(rules, tmp_path):
    text = (ROOT / "engine" / "rules" / "fantasy-warlord.toml").read_text("utf-8")
    path = tmp_path / "r.toml"
    path.write_text(text + '\n[races.horde]\nmove = 20.0\nmultipliers = { woods = "impassable" }\n')
    mine = load_rules(path)
    wall_of_trees = feature("woods", rect(15, -1, 25, 21))
    bf = engine.load_map(battlefield([wall_of_trees, ROAD]))
    found, regions = chokepoints(bf, mine, mine.unit("horde"))
    assert [c.kind for c in found] == ["road"] and len(regions) == 2


def test_connected_agrees_with_the_chokepoints(rules):
    bf = engine.load_map(CROSSINGS)
    g = engine.cost_grid(bf, rules, rules.unit("humans"))
    assert engine.connected(g, (10, 20), (190, 130))
    assert not engine.connected(g, (10, 20), (100, 72))  # in the river


# --- bad network geometry --------------------------------------------------------------


@pytest.mark.parametrize(("feats", "words"), [
    ([feature("bridge", line((5, 5), (15, 5)), "b1", width=3)],
     "feature 0 (id 'b1'): a bridge must cross a river; it touches no water"),
    # A ford in the water fords the river between its ends (tests/test_fords.py); this
    # one's ends meet the river's centreline at one point.
    ([RIVER, feature("ford", line((19, 5), (21, 5)), "f1", width=1)],
     "feature 1 (id 'f1'): a ford lying wholly in the water must run along a river, to "
     "ford it bank to bank between its ends; this one reaches neither bank nor runs along "
     "the river: its ends meet the river's centreline at one point (20, 5)"),
    ([RIVER, feature("bridge", line((20, 5), (20, 15)), "b0", width=1)],
     "feature 1 (id 'b0'): a bridge must reach a bank; it lies wholly in the water"),
    ([RIVER, feature("bridge", line((10, 5), (18, 5)), "b2", width=3)],
     "feature 1 (id 'b2'): a bridge must cross a river; it only touches the water's edge"),
    ([RIVER, feature("bridge", line((12, 5), (20, 5)), "b3", width=3)],
     "feature 1 (id 'b3'): a bridge must reach a bank at each end; its end (20, 5) is in "
     "the water"),
    ([RIVER, feature("ford", line((21, 5), (30, 5)), "f2", width=2)],
     "feature 1 (id 'f2'): a ford must reach a bank at each end; its end (21, 5) is in the "
     "water"),
    ([feature("road", line((0, 5), (40, 5)), "r0", width=0)],
     "feature 0 (id 'r0'): width must be a number > 0"),
    ([feature("gateway", line((5, 5), (15, 5)), "g1", width=2)],
     "feature 0 (id 'g1'): a gateway must be set in a building; it overlaps none"),
    ([feature("road", line((0, 5), (40, 5)), "r1", width=1e-300)],
     "feature 0 (id 'r1'): width 1e-300 is too small to give the LineString any area"),
    # Its strip reaches the table, its centreline does not: it was left out of the
    # network while its strip still cancelled the ground under it.
    ([feature("road", line((-1, -1), (41, -1)), "r2", width=4)],
     "feature 0 (id 'r2'): a road's centreline must run on the table; it lies wholly off it"),
    # The same for a bridge (which once crashed the bank check with an IndexError).
    ([feature("river", line((10, -1), (10, 21)), width=4),
      feature("bridge", line((7, -0.5), (13, -0.5)), "b4", width=2)],
     "feature 1 (id 'b4'): a bridge's centreline must run on the table; it lies wholly off it"),
])
def test_bad_network_geometry_is_refused(rules, feats, words):
    bf_dict = battlefield(feats)
    with pytest.raises(MapError) as exc:
        bf = engine.load_map(bf_dict)
        network(bf, rules)
    assert words in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("feats", [
    # a river along the table's edge, the bridge's far bank beyond the table
    [feature("river", rect(0, 0, 40, 3)), feature("bridge", line((20, 6), (20, 0)), width=2)],
    # a river that ends under the bridge
    [feature("river", line((0, 10), (20, 10)), width=2),
     feature("bridge", line((19, 6), (19, 14)), width=4)],
])
def test_crossings_with_a_bank_off_the_table_or_round_the_river_end_load(rules, feats):
    network(engine.load_map(battlefield(feats)), rules)  # refused by a both-banks test


# --- the command line ------------------------------------------------------------------


def test_cli_network_json_and_png(capsys, tmp_path):
    png = tmp_path / "net.png"
    assert main(["network", str(CROSSINGS), "--race", "humans", "--json", "--png", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["nodes"] == 19 and out["edges"] == 19 - 2 + 1
    assert [c["kind"] for c in out["chokepoints"]] == ["bridge", "bridge", "ford"]
    assert all(len(c["at"]) == 2 and len(c["joins"]) == 2 for c in out["chokepoints"])
    assert len(out["graph"]["nodes"]) == out["nodes"] and len(out["graph"]["edges"]) == out["edges"]
    assert png.stat().st_size > 10_000


def test_cli_network_text_defaults_to_the_first_race(capsys):
    assert main(["network", str(CROSSINGS)]) == 0
    out = capsys.readouterr().out
    assert "4 regions for humans" in out and out.count("chokepoint:") == 3


def test_cli_route_reports_the_formation_change(capsys):
    assert main(["route", str(CROSSINGS), "--race", "humans", "--from", "50,40",
                 "--to", "50,100", "--json"]) == 0
    legs = json.loads(capsys.readouterr().out)["legs"]
    assert [leg["kind"] for leg in legs].count("formation change") == 1
    assert main(["route", str(CROSSINGS), "--race", "humans", "--frontage", "4", "--from", "50,40",
                 "--to", "50,100", "--json"]) == 0
    legs = json.loads(capsys.readouterr().out)["legs"]
    assert [leg["kind"] for leg in legs].count("formation change") == 0


def test_cli_network_errors_are_one_line(capsys, tmp_path):
    assert main(["network", str(CROSSINGS), "--race", "elves"]) == 2
    err = capsys.readouterr().err
    assert "unknown race 'elves'" in err and err.count("\n") == 1


def test_describe_as_dict_is_json(rules):
    net = describe(engine.load_map(CROSSINGS), rules, rules.unit("humans"))
    assert json.loads(json.dumps(net.as_dict()))["nodes"] == 19


def test_a_tolerance_of_zero_still_joins_lines_that_meet(rules):
    bf = engine.load_map(CROSSINGS)
    assert network(bf, rules, 0).number_of_nodes() == network(bf, rules).number_of_nodes() == 19
    # was 27 nodes in 9 pieces: the shared points differed by a rounding error
