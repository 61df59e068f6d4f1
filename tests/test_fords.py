"""Fordable stretches: a ford drawn along a river fords the river's whole width between
its ends (`Battlefield.fordable`).

The Fantasy Warlord text: "any length of river can be declared fordable, provided it
is acceptable to all commanders before the battle commences".  The river here runs
along y = 20, 8 cm wide (its banks at y = 16 and y = 24); the ford is drawn along
its centreline from x = 15 to x = 45, so the 30 cm of river between them is fordable
bank to bank.  The rules' ford multipliers: humans x2 (the default), wood elves x1.25
("the ford will cost them 1/4 more to traverse than clear terrain").
"""

import math

import networkx as nx
import pytest

import engine
from engine import MapError
from engine.terrain.roads import chokepoints, network

from .conftest import battlefield, feature, grid_for, line, rect

W, H = 60, 40
Y = 20.25  # a row of cell centres in the river (cell 0.5)
RIVER = feature("river", line((-1, 20), (61, 20)), "river", width=8)
FORD = feature("ford", line((15, 20), (45, 20)), "shallows", width=2)
HUMANS, ELVES = 2.0, 1.25  # the rules' ford multipliers, checked below


def grid(rules, features, race="humans", **unit):
    return grid_for(rules, features, race, W, H, **unit)


def cost(g, *points):
    return engine.price_path(g, list(points)).cost


def test_the_multipliers_are_the_rules(rules):
    assert rules.unit("humans").multipliers["ford"] == HUMANS
    assert rules.unit("wood elves").multipliers["ford"] == ELVES


def test_the_stretch_is_the_river_bank_to_bank_between_the_fords_ends(rules):
    bf = engine.load_map(battlefield([RIVER, FORD], W, H))
    stretch = bf.fordable(rules)[1]
    assert stretch.bounds == (15.0, 16.0, 45.0, 24.0)
    assert stretch.area == pytest.approx(30 * 8)
    assert set(bf.fordable(rules)) == {1}  # the river is no ford
    # A ford drawn along one bank, or as a polygon, fords the same stretch.
    for ford in (feature("ford", line((15, 17), (45, 17)), width=2),
                 feature("ford", rect(15, 18, 45, 22))):
        bf = engine.load_map(battlefield([RIVER, ford], W, H))
        assert bf.fordable(rules)[1].bounds == (15.0, 16.0, 45.0, 24.0)
    # Along a diagonal river: the stretch is as long as the ford, as wide as the river.
    river = feature("river", line((-1, -1), (41, 41)), width=4)
    ford = feature("ford", line((10, 10), (20, 20)), width=1)
    bf = engine.load_map(battlefield([river, ford], 40, 40))
    assert bf.fordable(rules)[1].area == pytest.approx(10 * math.sqrt(2) * 4)


def test_a_ford_across_from_bank_to_bank_is_a_crossing(rules):
    """Its line's ends on the banks, its strip a little past them: a crossing."""
    river = feature("river", line((-1, 20), (W + 1, 20)), width=4)
    ford = feature("ford", line((8, 18), (12, 22)), width=2)
    bf = engine.load_map(battlefield([river, ford], W, H))
    assert bf.fordable(rules) == {}
    assert math.isfinite(engine.route(grid(rules, [river, ford]), (10, 5), (10, 35)).cost)


def test_a_ford_across_the_river_fords_no_stretch(rules):
    across = feature("ford", line((30, 10), (30, 30)), width=3)
    bf = engine.load_map(battlefield([RIVER, across], W, H))
    assert bf.fordable(rules) == {}
    assert cost(grid(rules, [RIVER, across]), (30, 10), (30, 30)) == pytest.approx(12 + 8 * 2)


# --- (1) crossing the river at the stretch ----------------------------------------------


@pytest.mark.parametrize(("race", "m"), [("humans", HUMANS), ("wood elves", ELVES)])
def test_crossing_at_the_stretch_pays_the_ford_over_the_rivers_width(rules, race, m):
    # From y = 10 to y = 30 at x = 30, 15 cm from the ford's line's end: 12 cm of
    # bank free, the river's 8 cm at the ford's multiplier.
    point = grid(rules, [RIVER, FORD], race)
    assert cost(point, (30, 10), (30, 30)) == pytest.approx(12 + 8 * m)  # 28 / 22
    # One rank (2 cm): the rank stays in the ford until it is 2 cm past the far bank,
    # "8 cm wide and the depth of the elf unit is 2 cm, which equals a total of 10 cm".
    ranked = grid(rules, [RIVER, FORD], race, depth=None, ranks=1)
    assert ranked.depth == 2
    assert cost(ranked, (30, 10), (30, 30)) == pytest.approx(10 + 10 * m)  # 30 / 22.5
    # Anywhere along the stretch, at its very ends too.
    assert cost(point, (15.25, 10), (15.25, 30)) == pytest.approx(12 + 8 * m)
    assert cost(point, (44.75, 10), (44.75, 30)) == pytest.approx(12 + 8 * m)


@pytest.mark.parametrize("unit", [{}, {"depth": None, "ranks": 1}])
def test_beside_the_stretch_the_river_stays_impassable(rules, unit):
    g = grid(rules, [RIVER, FORD], **unit)
    for x in (10, 14.75, 45.25, 50):
        assert math.isinf(cost(g, (x, 10), (x, 30)))
    rt = engine.route(g, (10, 10), (10, 30))
    # The way round: to the stretch's end at x = 15 and back, at least the straight
    # lines there and back (2 x hypot(5, 6)) plus the river at x2.
    assert rt.cost >= 2 * math.hypot(5, 6) + 8 * HUMANS - 1e-9
    assert all(x >= 15 for x, y in rt.path if 16 < y < 24)
    r = engine.reach(g, (30.25, 10.25), 100)
    assert r.reachable((30.25, 29.75)) and not r.reachable((10.25, Y))
    assert not r.reachable((45.25, Y)) and r.reachable((44.75, Y))


# --- (2) a ford along 30 cm of a river crossed lengthwise -------------------------------


@pytest.mark.parametrize(("race", "m"), [("humans", HUMANS), ("wood elves", ELVES)])
def test_walking_the_stretch_lengthwise_pays_30_times_the_multiplier(rules, race, m):
    g = grid(rules, [RIVER, FORD], race)
    assert cost(g, (15, Y), (45, Y)) == pytest.approx(30 * m)  # 60 / 37.5
    assert cost(g, (15, 17.25), (45, 17.25)) == pytest.approx(30 * m)  # near the bank
    assert math.isinf(cost(g, (15, Y), (45.5, Y)))  # out of the stretch: the river
    # One rank deep, starting with its rank on the stretch: 28 cm to the end.
    ranked = grid(rules, [RIVER, FORD], race, depth=None, ranks=1)
    assert cost(ranked, (17, Y), (45, Y)) == pytest.approx(28 * m)  # 56 / 35
    # The search wades 10 cm along it rather than climb out and back (at least 4.25 cm
    # out and back in the water, then the bank: 24.7 for humans).  Over 30 cm the
    # bank is the cheaper way: the search takes it.
    r = engine.reach(g, (15.25, Y), 100)
    assert r.cost_at((25.25, Y)) == pytest.approx(10 * m)  # 20 / 12.5
    assert r.cost_at((44.75, Y)) < 29.5 * m
    rt = engine.route(g, (15.25, Y), (25.25, Y))
    assert rt.cost == pytest.approx(10 * m) and {leg.multiplier for leg in rt.legs} == {m}


# --- (3) the wood elves' worked example, the ford drawn along the river -----------------


class TestWoodElvesAlongTheRiver:
    """The worked example's map (a river 8 cm wide at x = 3..11), its ford drawn along
    the river from y = 1 to y = 5 instead of across it: the elves cross the 8 cm river
    on the stretch at y = 3.25.  "3 cm + 12.5 cm = 15.5 cm ... leaves them with a
    further 8.5 cm"."""

    MAP = battlefield([feature("river", line((7, -2), (7, 8)), "river", width=8),
                       feature("ford", line((7, 1), (7, 5)), "ford", width=2)], 30, 6)
    Y = 3.25

    def grid(self, rules, race="wood elves"):
        return engine.cost_grid(engine.load_map(self.MAP), rules, rules.unit(race))

    def test_price(self, rules):
        g = self.grid(rules)
        assert g.depth == 2
        # 3 + (8 + 2) x 1.25 = 15.5; and 8.5 more on clear ground: 24.
        assert cost(g, (0, self.Y), (13, self.Y)) == pytest.approx(15.5)
        assert cost(g, (0, self.Y), (21.5, self.Y)) == pytest.approx(24.0)
        humans = self.grid(rules, "humans")
        assert cost(humans, (0, self.Y), (13, self.Y)) == pytest.approx(3 + 10 * 2.0)

    def test_reach(self, rules):
        r = engine.reach(self.grid(rules), (0.25, self.Y))
        x = 0.25
        while r.reachable((x + 0.5, self.Y)):
            x += 0.5
        assert x - 0.25 == pytest.approx(21.5)
        assert not r.reachable((7, 0.25))  # the river beyond the stretch


# --- (4) fords the checks refuse --------------------------------------------------------


@pytest.mark.parametrize(("feats", "words"), [
    # Across the middle of the river, reaching neither bank: no stretch to ford.
    ([RIVER, feature("ford", line((30, 18), (30, 22)), "f1", width=2)],
     "feature 1 (id 'f1'): a ford lying wholly in the water must run along a river, to "
     "ford it bank to bank between its ends; this one reaches neither bank nor runs along "
     "the river: its ends meet the river's centreline at one point (30, 20)"),
    # A river drawn as a polygon has no centreline to run along.
    ([feature("river", rect(-1, 16, 61, 24)), feature("ford", line((15, 20), (45, 20)),
                                                      "f2", width=2)],
     "feature 1 (id 'f2'): a ford lying wholly in the water must run along a river, to "
     "ford it bank to bank between its ends; it lies in no river drawn as a line"),
    # A bridge must still reach both banks.
    ([RIVER, feature("bridge", line((15, 20), (45, 20)), "b1", width=2)],
     "feature 1 (id 'b1'): a bridge must reach a bank; it lies wholly in the water"),
    # A ford wider than the river is not in the water: its line is.
    ([RIVER, feature("ford", line((15, 20), (45, 20)), "f3", width=10)],
     "feature 1 (id 'f3'): a ford drawn along a river must lie wholly in the water; this "
     "one is wider than the river"),
    # One end on land, the other in the water.
    ([RIVER, feature("ford", line((30, 10), (30, 20)), "f4", width=2)],
     "feature 1 (id 'f4'): a ford must reach a bank at each end; its end (30, 20) is in "
     "the water"),
])
def test_fords_in_the_water_that_run_along_nothing_are_refused(rules, feats, words):
    bf = engine.load_map(battlefield(feats, W, H))
    for use in (bf.check, bf.fordable, engine.terrain.layers, network):
        with pytest.raises(MapError) as exc:
            use(rules) if use in (bf.check, bf.fordable) else use(bf, rules)
        assert words in str(exc.value) and "\n" not in str(exc.value)


# --- (5) effects, chokepoints and the network treat the stretch as a ford ---------------


def test_the_stretch_is_ford_ground_for_effects(rules):
    bf = engine.load_map(battlefield([RIVER, FORD], W, H))
    e = engine.terrain_effects(bf, rules, (30.25, 17.25))  # off the ford's drawn strip
    assert "ford" in e.terrain and e.disorders
    assert "any unit charging in ford is disordered" in e.reasons
    c = engine.charge_disorders(bf, rules, [(30.25, 10.25), (30.25, 30.25)])
    assert c.disordered and c.terrain == "ford" and 16 <= c.at[1] <= 17
    beside = engine.charge_disorders(bf, rules, [(5.25, 10.25), (5.25, 14.25)])
    assert not beside.disordered


def test_the_stretch_is_a_chokepoint_joining_the_banks(rules):
    bf = engine.load_map(battlefield([RIVER, FORD], W, H))
    found, regions = chokepoints(bf, rules, rules.unit("humans"))
    assert [(c.kind, c.feature) for c in found] == [("ford", "feature 1 (id 'shallows')")]
    assert len(regions) == 2 and len(found[0].joins) == 2
    x, y = found[0].at
    assert 15 <= x <= 45 and 16 <= y <= 24
    assert {r.at[1] < 20 for r in found[0].joins} == {True, False}  # both banks
    g = engine.cost_grid(bf, rules, rules.unit("humans"))
    assert engine.connected(g, (5, 5), (5, 35))
    assert engine.regions(g)[1] == 1
    # A bridge elsewhere: neither is needed.
    bridge = feature("bridge", line((5, 10), (5, 30)), width=3)
    both = engine.load_map(battlefield([RIVER, FORD, bridge], W, H))
    assert chokepoints(both, rules, rules.unit("humans"))[0] == []


def test_roads_down_to_the_stretch_join_the_ford_in_the_network(rules):
    north = feature("road", line((30, 0), (30, 16)), "north", width=2)
    south = feature("road", line((30, 24), (30, 40)), "south", width=2)
    bf = engine.load_map(battlefield([RIVER, FORD, north, south], W, H))
    g = network(bf, rules)
    assert nx.is_connected(g)
    fords = sorted((round(d["length"], 9), tuple(d["geometry"][0]))
                   for _, _, d in g.edges(data=True) if d["kind"] == "ford")
    # The ford's line cut at x = 30 (15 + 15), and a 4 cm piece of ford from each bank.
    assert [length for length, _ in fords] == [4.0, 4.0, 15.0, 15.0]
    banks = sorted(d["pos"] for _, d in g.nodes(data=True) if d["kind"] == "bank")
    assert banks == [(30.0, 16.0), (30.0, 24.0)]
    path = nx.shortest_path(g, *(n for n, d in g.nodes(data=True)
                                 if d["pos"] in ((30.0, 0.0), (30.0, 40.0))), weight="length")
    assert len(path) == 5  # road, ford, ford, road
    # Without the ford the roads are two pieces.
    alone = network(engine.load_map(battlefield([RIVER, north, south], W, H)), rules)
    assert nx.number_connected_components(alone) == 2
