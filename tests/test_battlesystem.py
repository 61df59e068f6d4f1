"""Battlesystem's special terrain rules: every worked example
through the API and the CLI, and a case for each rule that fails if it is priced wrong."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import InputError, load_map, load_rules
from engine.cli import main
from engine.search._state import _near_quanta

from .conftest import MAPS, battlefield, feature, grid_for, line, rect

BS = MAPS / "battlesystem"
Y = 2.125  # a row of cell centres (0.25" cells)


@pytest.fixture(scope="module")
def bs():
    return load_rules("battlesystem")


def grid(bs, feats, race="infantry", width=24, height=4, **unit):
    unit.setdefault("frontage", 4.0)  # the ruleset's: four figures abreast
    return grid_for(bs, feats, race, width, height, cell=0.25, **unit)


def cost(g, *path):
    return engine.price_path(g, path).cost


# --- the worked examples ---------------------------------------------------------------


def test_ten_inch_move_from_the_edge_of_light_woods_gets_six_inches_in(bs):
    g = engine.cost_grid(load_map(BS / "light-woods.geojson"), bs,
                         bs.unit("infantry", move=10, depth=0))
    assert cost(g, (2, Y), (8, Y)) == 9          # 3 quanta of 2"
    assert cost(g, (2, Y), (8 + 2 / 3, Y)) == 12  # 6.67" is a fourth quantum, over 10"
    priced = engine.price_path(g, [(2, Y), (8.5, Y)])
    assert [leg.kind for leg in priced.legs] == ["move", "quantum"]
    assert priced.legs[1].cost == pytest.approx(2.25)
    assert "6.5 charged as 4 started 2" in priced.legs[1].terrain[0]
    r = engine.reach(g, (2.125, Y))  # from the edge cell's centre
    assert r.reachable((8.1, Y)) and not r.reachable((8.3, Y))
    assert r.cost_at((8.1, Y)) == pytest.approx(9)
    rt = engine.route(g, (2, Y), (8, Y))
    assert rt.cost == 9 and rt.turns == 1


def test_cli_light_woods_example(capsys):
    assert main(["reach", str(BS / "light-woods.geojson"), "--rules", "battlesystem",
                 "--race", "infantry", "--move", "10", "--depth", "0", "--at", "2.1,2.1",
                 "--probe", "8.1,2.1", "--probe", "8.3,2.1", "--json"]) == 0
    probes = json.loads(capsys.readouterr().out)["probes"]
    assert probes[0]["cost"] == 9 and probes[0]["reachable"]
    assert probes[1]["cost"] is None and not probes[1]["reachable"]
    assert main(["price", str(BS / "light-woods.geojson"), "--rules", "battlesystem",
                 "--race", "infantry", "--depth", "0", "--path", "2,2", "8.5,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cost"] == 12 and out["legs"][-1]["kind"] == "quantum"


def test_climbing_within_light_woods_is_six_inches_per_two(bs, capsys):
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs,
                         bs.unit("infantry", depth=0))
    assert cost(g, (12, 2), (12, 4)) == pytest.approx(6)    # 2" x 1.5 x 2 (uphill)
    assert cost(g, (12, 2), (12, 3)) == pytest.approx(6)    # a started quantum: 6" all the same
    assert cost(g, (12, 2), (12, 6)) == pytest.approx(12)
    assert cost(g, (12, 4), (12, 2)) == pytest.approx(3)    # descending: no extra
    legs = engine.price_path(g, [(12, 2), (12, 4)]).legs
    assert legs[0].terrain == ["hill", "light woods", "uphill"]
    assert main(["price", str(BS / "uphill-woods.geojson"), "--rules", "battlesystem",
                 "--race", "infantry", "--depth", "0", "--path", "12,2", "12,4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == pytest.approx(6)


@pytest.mark.parametrize(("race", "kind", "figures", "expected"), [
    ("infantry", "frontage", 2, 3.0),       # light woods: 3" per 2 figures instead of 2"
    ("infantry", "frontage", 3, 6.0),       # two started groups of 2 figures
    ("special-small", "face", None, 8.0),   # left face on rough: 8" instead of 4"
])
def test_manoeuvres_pay_the_ground_rate(bs, race, kind, figures, expected):
    g = engine.cost_grid(load_map(BS / "manoeuvres.geojson"), bs, bs.unit(race))
    at = (5, 5) if kind == "frontage" else (15, 5)
    m = engine.manoeuvre(g, at, kind, figures)
    assert m.allowed and m.cost == expected
    clear = grid(bs, [], race)
    assert engine.manoeuvre(clear, (5, 2), kind, figures).cost == expected / (
        1.5 if kind == "frontage" else 2.0)


def test_cli_manoeuvre_examples(capsys):
    m = str(BS / "manoeuvres.geojson")
    assert main(["manoeuvre", m, "--rules", "battlesystem", "--race", "infantry", "--at", "5,5",
                 "--kind", "frontage", "--figures", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == 3.0
    assert main(["manoeuvre", m, "--rules", "battlesystem", "--race", "special-small",
                 "--at", "15,5", "--kind", "face"]) == 0
    assert "= 8 in" in capsys.readouterr().out


def test_reform_costs_three_inches_on_clear_ground_only(bs):
    g = engine.cost_grid(load_map(BS / "manoeuvres.geojson"), bs, bs.unit("infantry"))
    assert not engine.manoeuvre(g, (5, 5), "reform").allowed
    assert "clear, open ground" in engine.manoeuvre(g, (5, 5), "reform").reason
    assert engine.manoeuvre(grid(bs, []), (5, 2), "reform").cost == 3.0
    with pytest.raises(InputError, match="figures"):
        engine.manoeuvre(g, (5, 5), "frontage")
    with pytest.raises(InputError, match="unknown manoeuvre"):
        engine.manoeuvre(g, (5, 5), "wheel")


# --- measured as a tape measure away from ground charged per quantum --------------------

QUANTISED = [feature("light woods", rect(32, 0, 40, 20))]


def test_reach_is_any_angle_where_no_quantised_ground_is_within_the_allowance(bs):
    g = grid(bs, QUANTISED, width=40, height=20, move=6)
    start = (8.1, 10.13)  # not a cell's centre
    r = engine.reach(g, start)
    for k in range(24):  # exact to the point, at any angle (the lattice: up to 0.75% over)
        a = 2 * math.pi * k / 24
        q = (start[0] + 5.9 * math.cos(a), start[1] + 5.9 * math.sin(a))
        assert r.cost_at(q) == pytest.approx(5.9, rel=1e-9)
    lattice = engine.reach(g, start, any_angle=False)
    assert lattice.cost_at((13.1, 13.13)) > math.dist(start, (13.1, 13.13)) * (1 + 1e-4)
    rt = engine.route(g, start, (13.7, 12.9))  # within a turn: the reach's straight line
    assert rt.cost == pytest.approx(math.dist(start, (13.7, 12.9)), rel=1e-9)
    assert len(rt.path) == 2


def test_reach_near_quantised_ground_is_any_angle_too(bs):
    """5.5" from the light woods the reach is still measured from the unit's own point
    at any angle (the lattice: centre to centre, 5.25 where the tape says 5.4), and
    a path into the woods pays its started quanta; `reach_many` is one `reach` a
    start."""
    g = grid(bs, QUANTISED, width=40, height=20, move=6)
    start = (26.5, 10.13)
    near = engine.reach(g, start)
    assert near.parent is not None
    assert near.cost_at((31.9, 10.13)) == pytest.approx(5.4, rel=1e-9)
    assert engine.reach(g, start, any_angle=False).cost_at((31.9, 10.13)) == 5.25
    for k in range(24):
        a = 2 * math.pi * k / 24
        q = (start[0] + 5.4 * math.cos(a), start[1] + 5.4 * math.sin(a))
        assert near.cost_at(q) == pytest.approx(5.4, rel=1e-9)
    # 1" into the woods: 5.5" of clear ground and a started 2" of woods (3").
    assert near.cost_at((33.0, 10.13)) == math.inf
    wide = engine.reach(g, start, 9)
    assert wide.cost_at((33.0, 10.13)) == pytest.approx(5.5 + 3, rel=1e-9)
    rt = engine.route(g, start, (33.0, 10.13), allowance=9)
    assert rt.cost == pytest.approx(8.5, rel=1e-9) and rt.turns == 1
    starts = [(8.1, 10.13), (26.5, 10.13), (20.0, 3.3)]
    for one, many in zip([engine.reach(g, s) for s in starts], engine.reach_many(g, starts),
                         strict=True):
        assert np.array_equal(one.cells, many.cells) and np.array_equal(one.cost, many.cost)
        assert one.cost_at((20.2, 10.4)) == many.cost_at((20.2, 10.4))


# --- troop types in each terrain -------------------------------------------------------

AREAS = {"light woods": None, "dense woods": None, "swamp": None, "rough ground": None,
         "brush": None, "shallow water": None, "pool": None}
# The cost of 4" through each kind (from 2" to 6" into it), per profile; None: cannot enter.
EXPECTED = {
    "infantry":             {"light woods": 6, "dense woods": 8, "swamp": 12,
                             "rough ground": 8, "brush": 12, "shallow water": 12, "pool": None},
    "cavalry":              {"light woods": 8, "dense woods": None, "swamp": None,
                             "rough ground": None, "brush": 12, "shallow water": 12,
                             "pool": None},
    "special-small":        {"light woods": 6, "dense woods": None, "swamp": None,
                             "rough ground": 8, "brush": 12, "shallow water": 12, "pool": None},
    "special-cavalry-size": {"light woods": None, "dense woods": None, "swamp": None,
                             "rough ground": 8, "brush": 12, "shallow water": 12, "pool": None},
    "special-large":        {"light woods": None, "dense woods": None, "swamp": None,
                             "rough ground": 8, "brush": 12, "shallow water": 12, "pool": 12},
}


@pytest.mark.parametrize("race", EXPECTED)
@pytest.mark.parametrize("kind", AREAS)
def test_each_troop_type_in_each_terrain(bs, race, kind):
    g = grid(bs, [feature(kind, rect(4, -1, 30, 5))], race)
    expected = EXPECTED[race][kind]
    got = engine.price_path(g, [(2, Y), (10, Y)]).cost  # 2" clear, then 6" in
    if expected is None:
        assert math.isinf(got)
    else:
        per_inch = expected / 4
        extra = 2 + 6 * per_inch if kind != "light woods" or race == "cavalry" else 2 + 9
        assert got == pytest.approx(extra)


def test_deep_water_stops_everyone_but_a_bridge_carries_the_road(bs):
    river = feature("deep water", line((12, -1), (12, 5)), width=2)
    for race in EXPECTED:
        assert math.isinf(cost(grid(bs, [river], race), (2, Y), (20, Y)))
    bridge = feature("bridge", line((10, Y), (14, Y)), width=2)
    g = grid(bs, [river, bridge], frontage=1)
    assert cost(g, (2, Y), (20, Y)) == pytest.approx(18)
    ford = feature("ford", line((10, Y), (14, Y)), width=2)
    assert cost(grid(bs, [river, ford]), (2, Y), (20, Y)) == pytest.approx(16 + 2 * 3)


def test_a_bridge_over_shallow_water_is_free(bs):
    stream = feature("shallow water", line((12, -1), (12, 5)), width=2)
    bridge = feature("bridge", line((10, Y), (14, Y)), width=2)
    assert cost(grid(bs, [stream]), (2, Y), (20, Y)) == pytest.approx(16 + 2 * 3)
    assert cost(grid(bs, [stream, bridge], frontage=1), (2, Y), (20, Y)) == pytest.approx(18)


# --- elevation -------------------------------------------------------------------------

HILL = feature("hill", rect(0, -20, 40, 24), elevation=4)
STEEP = feature("hill", rect(0, -20, 40, 24), elevation=4, steep=True)


def test_climbing_costs_double_and_steep_triple_descending_free(bs):
    up, down = [(3, Y), (5, Y)], [(5, Y), (3, Y)]
    g = grid(bs, [HILL], width=40, height=4)
    assert cost(g, *up) == pytest.approx(4) and cost(g, *down) == pytest.approx(2)
    g = grid(bs, [STEEP], width=40, height=4)
    assert cost(g, *up) == pytest.approx(6) and cost(g, *down) == pytest.approx(2)
    legs = engine.price_path(g, up).legs
    assert legs[0].terrain == ["hill", "steep slope (uphill)"]


def test_a_scenario_may_make_a_slope_steeper(bs):
    cliffside = feature("hill", rect(0, -20, 40, 24), elevation=4, steep=True, climb=4)
    g = grid(bs, [cliffside], width=40, height=4)
    assert cost(g, (3, Y), (5, Y)) == pytest.approx(8) and cost(g, (5, Y), (3, Y)) == 2


def test_cliffs_are_impassable_both_ways(bs):
    cliff = feature("cliff", line((10, -1), (10, 5)), width=0.5)
    g = grid(bs, [cliff])
    assert math.isinf(cost(g, (2, Y), (20, Y))) and math.isinf(cost(g, (20, Y), (2, Y)))


# --- obstacles -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["wall", "fence", "hedge", "gully", "ditch"])
def test_obstacles_cost_four_inches_to_cross(bs, kind):
    g = grid(bs, [feature(kind, line((10, -1), (10, 5)), width=0.25)])
    priced = engine.price_path(g, [(2, Y), (20, Y)])
    assert priced.cost == pytest.approx(18 + 4)
    obstacle = [leg for leg in priced.legs if leg.kind == "obstacle"]
    assert len(obstacle) == 1 and obstacle[0].cost == 4 and kind in obstacle[0].terrain[0]
    assert engine.route(g, (2, Y), (20, Y)).cost == pytest.approx(22)
    r = engine.reach(g, (2.125, Y), 12)
    assert r.reachable((9.6, Y)) and not r.reachable((10.4, Y))
    assert r.cost_at((10.4, Y)) == math.inf


def test_a_deep_muddy_ditch_costs_what_the_map_says(bs):
    g = engine.cost_grid(load_map(BS / "charge.geojson"), bs, bs.unit("infantry", depth=0))
    assert cost(g, (15, 2), (19, 2)) == pytest.approx(4 + 6)
    assert cost(g, (15, 2), (19, 2), (15, 2)) == pytest.approx(8 + 12)  # each crossing pays


def test_road_pays_obstacles_and_slopes_but_not_woods(bs):
    woods = feature("light woods", rect(4, -1, 30, 5))
    road = feature("road", line((0, Y), (24, Y)), width=1)
    wall = feature("wall", line((10, -1), (10, 5)), width=0.25)
    assert cost(grid(bs, [woods, road]), (2, Y), (20, Y)) == pytest.approx(18)
    assert cost(grid(bs, [woods, road, wall]), (2, Y), (20, Y)) == pytest.approx(22)
    g = grid(bs, [HILL, woods, road], width=40, height=4)
    assert cost(g, (3, Y), (5, Y)) == pytest.approx(4)  # uphill still doubles


def test_trail_is_closed_to_cavalry(bs):
    woods = feature("light woods", rect(4, -1, 30, 5))
    trail = feature("trail", line((0, Y), (24, Y)), width=1)
    assert cost(grid(bs, [woods, trail], "cavalry"), (2, Y), (10, Y)) == pytest.approx(2 + 12)
    assert cost(grid(bs, [woods, trail], frontage=1), (2, Y), (10, Y)) == pytest.approx(8)


# --- formation -------------------------------------------------------------------------


def test_regular_formation_keeps_out_of_special_terrain_but_not_off_roads(bs):
    woods = feature("light woods", rect(4, -1, 30, 5))
    regular = grid(bs, [woods], formation="regular")
    assert math.isinf(cost(regular, (2, Y), (10, Y)))
    with pytest.raises(InputError, match="impassable ground"):
        engine.route(regular, (2, Y), (10, Y))
    road = feature("road", line((0, Y), (24, Y)), width=1)
    assert cost(grid(bs, [woods, road], formation="regular"), (2, Y), (10, Y)) == 8
    hedge = feature("hedge", line((10, -1), (10, 5)), width=0.25)
    assert math.isinf(cost(grid(bs, [hedge], formation="regular"), (2, Y), (20, Y)))
    assert cost(grid(bs, [hedge]), (2, Y), (20, Y)) == pytest.approx(22)


def test_a_unit_wider_than_a_bridge_narrows_for_three_inches(bs):
    river = feature("deep water", line((12, -1), (12, 5)), width=2)
    bridge = feature("bridge", line((10, Y), (14, Y)), width=2)
    rt = engine.route(grid(bs, [river, bridge]), (2, Y), (20, Y))  # frontage 4" > 2"
    assert rt.cost == pytest.approx(18 + 3)
    assert [leg.kind for leg in rt.legs].count("formation change") == 1


# --- charges ---------------------------------------------------------------------------


def charge_grid(bs, race="infantry"):
    return engine.cost_grid(load_map(BS / "charge.geojson"), bs, bs.unit(race))


def test_charge_through_woods_and_over_a_hedge(bs):
    c = engine.can_charge(charge_grid(bs), (2, 5), (14, 5), bonus=6, minimum_range=3)
    assert c.allowed and c.reasons == []
    assert c.checks == ["charge initiation check: crossing hedge at (8.75, 5)"]
    assert c.route.cost == pytest.approx(10 + 3 + 4)  # clear, the copse's 2" (3"), the hedge


def test_charge_refused_without_enough_move(bs):
    c = engine.can_charge(charge_grid(bs), (2, 5), (14, 5), bonus=5, minimum_range=3)
    assert c.allowed  # 17" of 12 + 5: just enough
    c = engine.can_charge(charge_grid(bs), (2, 5), (14, 5), bonus=4.5, minimum_range=3)
    assert not c.allowed and "more than the move and charge bonus (16.5 in)" in c.reasons[0]


def test_charge_refused_when_emerging_inside_the_minimum_range(bs):
    c = engine.can_charge(charge_grid(bs), (2, 5), (8, 5), bonus=6, minimum_range=3)
    assert not c.allowed
    assert "leaves special terrain 2.00 in from the target" in c.reasons[0]


def test_charge_refused_into_special_terrain(bs):
    c = engine.can_charge(charge_grid(bs), (2, 5), (5, 5), bonus=6, minimum_range=0)
    assert not c.allowed and "the target is in special terrain (light woods)" in c.reasons


def test_no_charge_after_moving_uphill_but_downhill_is_fine(bs):
    g = grid(bs, [HILL], width=40, height=4, depth=1)
    assert engine.can_charge(g, (5, Y), (3, Y), bonus=6, minimum_range=0).allowed
    up = engine.can_charge(g, (3, Y), (5, Y), bonus=6, minimum_range=0)
    assert not up.allowed and "climbs" in up.reasons[0]
    assert not engine.can_charge(g, (5, Y), (3, Y), bonus=6, minimum_range=0,
                                 climbed=True).allowed


def test_cli_charge(capsys):
    args = ["charge", str(BS / "charge.geojson"), "--rules", "battlesystem", "--race",
            "infantry", "--from", "2,5", "--to", "14,5", "--bonus", "6", "--min-range", "3"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] and out["checks"] and out["route"]["cost"] == 17
    assert main([*args[:-1], "9"]) == 0
    assert "cannot charge" in capsys.readouterr().out


# --- reach never claims what the pricing refuses ---------------------------------------


def _random_battlefield(bs, seed, depth, more=()):
    """A 20" x 12" grid: a hill, six random woods, brush and rough ground, the
    features ``more`` and a hedge across, for infantry ``depth`` deep."""
    rng = np.random.default_rng(seed)
    feats = [feature("hill", rect(3, 3, 17, 9), elevation=2)]
    for _ in range(6):
        x, y = rng.uniform(0, 16), rng.uniform(0, 9)
        kind = str(rng.choice(["light woods", "brush", "rough ground"]))
        feats.append(feature(kind, rect(x, y, x + rng.uniform(2, 6), y + rng.uniform(2, 6))))
    feats += [*more, feature("hedge", line((11, 0), (11, 12)), width=0.25)]
    return grid(bs, feats, width=20, height=12, depth=depth)


@pytest.mark.parametrize(("seed", "depth"), [(0, 0), (1, 0), (2, 0), (0, 2), (1, 1.5)])
def test_lattice_reach_agrees_with_the_pricing_of_its_paths(bs, seed, depth):
    """Random woods, brush, hills and hedges: every cell the lattice's reach claims,
    priced along the path the search kept, costs what reach says (quanta and flat
    costs included).  With rear ranks the search keeps several paths a cell: the
    cheapest of their prices."""
    g = _random_battlefield(bs, seed, depth)
    start = (2.125, 6.125)
    r = engine.reach(g, start, 12, any_angle=False)
    from engine.search import _kernels, _state, front
    from engine.search.paths import _polyline

    ws = _state._workspace(g)
    source = front._start_cell(g, start, "start")
    n = ws.run(g, source, -1, 12 + 1e-9, lowest=True)  # the search `reach` runs here
    try:
        if depth:  # every label kept at the cell
            lab = ws.labels
            cell, prev, state = (x[:ws.used] for x in (lab.cell, lab.prev, lab.state))
            live = (state & 3) != _kernels.DROPPED
            paths = {int(c): [_kernels.trace_labels(prev, cell, int(x)).tolist()
                              for x in np.flatnonzero(live & (cell == c))]
                     for c in r.cells[::7]}
        else:
            paths = {int(c): [_state._trace(g, ws.parent, source, int(c))] for c in r.cells[::7]}
    finally:
        ws.reset(n)
    assert r.cells.size > 50
    assert not depth or max(len(p) for p in paths.values()) > 1  # more than one path a cell
    for c, some in paths.items():
        if len(some[0]) < 2:
            continue
        priced = min(engine.price_path(g, _polyline(g, path)).cost for path in some)
        assert priced == pytest.approx(r.to_array().flat[c], rel=1e-9, abs=1e-9)
        assert priced <= 12 + 1e-9


@pytest.mark.parametrize("depth", [0, 1])
def test_a_path_out_of_light_woods_uses_the_whole_started_quantum(bs, depth):
    """From (3.06, 0.89) in the light woods (x >= 2) to (1.81, 3.85) in the open: any
    stretch of woods up to 2" costs 3", so the cheapest path leaves the woods where
    its stretch in them is exactly 2" long, at y = 0.89 + sqrt(4 - 1.06^2) on the
    edge, then runs straight on: 3 + 1.278 = 4.278.  The smooth search leaves the
    woods sooner (5.03; the lattice, 4.91); the reach's `cost_at` and the route,
    within a turn and beyond, move the bend to where the rounding costs least.
    With a rank 1" deep that path is no optimum, but nothing dearer is taken."""
    g = engine.cost_grid(load_map(BS / "light-woods.geojson"), bs,
                         bs.unit("infantry", move=10, depth=depth))
    start, goal = (3.06, 0.89), (1.81, 3.85)
    edge = (2.0, 0.89 + math.sqrt(4 - 1.06 ** 2))
    best = engine.price_path(g, [start, edge, goal]).cost
    if depth == 0:
        assert best == pytest.approx(3 + math.dist(edge, goal), rel=1e-9)
    else:  # the rank behind pays for the woods it stands in: a candidate, no optimum
        assert best > 3 + math.dist(edge, goal)
    assert engine.reach(g, start).cost_at(goal) <= best * (1 + 1e-6)
    for allowance in (10, 3):
        rt = engine.route(g, start, goal, allowance=allowance)
        assert rt.cost <= best * (1 + 1e-6) and engine.price_path(g, rt.path).cost == rt.cost
    if depth == 0:
        assert engine.reach(g, start).cost_at(goal) == pytest.approx(best, rel=1e-6)
        assert rt.cost == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize(("seed", "depth"), [(0, 0), (1, 0), (2, 0), (0, 2), (1, 1.5)])
def test_any_angle_reach_agrees_with_the_pricing_of_its_paths(bs, seed, depth):
    """The same random battlefields, any-angle: every cell's cost is the price of the
    straight moves the search kept to it from the unit's own point, each stretch
    of light woods rounded up to whole started quanta (with rear ranks, of the
    cheapest path kept at the cell, which may first step a hair aside to face
    the ranks), within the allowance."""
    # Off the hill, 2.9" and 3.4" from the unit (on it, a slope triples their price).
    g = _random_battlefield(bs, seed, depth, [feature("light woods", rect(0.3, 9.1, 4.5, 12)),
                                              feature("light woods", rect(0.3, 0, 4.5, 2.8))])
    start = (2.1, 6.2)
    r = engine.reach(g, start, 12)
    kept = r._labels
    assert kept is not None and r.cells.size > 50
    rounded = 0
    for k in range(0, r.cells.size, 5):
        chain = [int(kept.best[k])]
        while kept.prev[chain[-1]] >= 0:
            chain.append(int(kept.prev[chain[-1]]))
        points = [start] + [(kept.x[b], kept.y[b]) for b in chain[-2::-1]]
        if len(points) < 2:
            continue
        priced = engine.price_path(g, points)
        assert priced.cost == pytest.approx(r.cost[k], rel=1e-9, abs=1e-9)
        assert priced.cost <= 12 + 1e-9
        rounded += any(leg.kind == "quantum" for leg in priced.legs)
    assert rounded > 10  # the rounding is in what was checked


@pytest.mark.parametrize(("seed", "depth"), [(3, 0), (4, 1.5), (5, 4)])
def test_routes_keep_the_reachs_word_on_random_battlefields(bs, seed, depth):
    """Random light woods, brush and rough ground, a hill and a hedge, from random
    points to random points up to a move away: a route's path prices to its cost,
    and a point the turn's reach puts within the allowance is routed there in one
    turn for no more."""
    g = _random_battlefield(bs, seed, depth, [feature("light woods", rect(0.3, 9.1, 4.5, 12))])
    rng = np.random.default_rng(seed)
    within = 0
    for _ in range(6):
        start = (float(rng.uniform(0.5, 19.5)), float(rng.uniform(0.5, 11.5)))
        r = engine.reach(g, start)
        for _ in range(3):
            turn, far = rng.uniform(0, 2 * math.pi), rng.uniform(1, 12)
            goal = (start[0] + far * math.cos(turn), start[1] + far * math.sin(turn))
            if not (0 < goal[0] < 20 and 0 < goal[1] < 12):
                continue
            rt = engine.route(g, start, goal)
            assert engine.price_path(g, rt.path).cost == pytest.approx(rt.cost, rel=1e-12)
            said = r.cost_at(goal)
            if said <= g.unit.move:
                assert rt.cost <= said + 1e-9 and rt.turns == 1
                within += 1
    assert within >= 5


@pytest.mark.parametrize(("start", "goal", "best"), [((0.3, 3.3), (8.3, 2.2), 9.15),
                                                    ((0.95, 3.67), (7.26, 2.61), 7.45)])
def test_a_strip_of_light_woods_is_crossed_square(bs, start, goal, best):
    """On the charge example the 2" strip of light woods (x 4 to 6) costs 3" crossed
    square; the smooth search's slant across it is 2.03" to 2.06" long, two
    started quanta (6").  Reach, route, charge and threat take the square
    crossing (``best``: the lattice route's cost, to the cent), not the slant."""
    g = engine.cost_grid(load_map(BS / "charge.geojson"), bs, bs.unit("infantry"))
    slant = engine.price_path(g, [start, goal]).cost
    assert slant > best + 2
    lattice = engine.route(g, start, goal, any_angle=False)
    assert lattice.cost == pytest.approx(best, abs=0.005)
    rt = engine.route(g, start, goal)
    assert rt.cost <= lattice.cost and engine.price_path(g, rt.path).cost == rt.cost
    assert any(leg.terrain == ["light woods"] and leg.length == pytest.approx(2, abs=1e-6)
               for leg in rt.legs)
    r = engine.reach(g, start)
    assert r.cost_at(goal) <= lattice.cost and r.reachable(goal)
    assert engine.reach_many(g, [start])[0].cost_at(goal) == r.cost_at(goal)
    assert engine.can_charge(g, start, goal, minimum_range=0).allowed


def test_a_strip_of_light_woods_is_crossed_square_where_the_tape_would_slant(bs):
    """From (3, 4) to (8, 3) on the charge example the straight line crosses 2.07" of
    the 2" strip of light woods: two started quanta, 9.05.  Crossed square, level
    with the point it enters at, it is one: 1.12 + 3 + 2.06 = 6.18 by hand, a
    little less with the bends moved.  The lattice's route slants too (9.10)."""
    g = engine.cost_grid(load_map(BS / "charge.geojson"), bs, bs.unit("infantry"))
    start, goal = (3.0, 4.0), (8.0, 3.0)
    by_hand = engine.price_path(g, [start, (4.0, 3.5), (6.0, 3.5), goal]).cost
    assert by_hand == pytest.approx(math.dist(start, (4, 3.5)) + 3 + math.dist((6, 3.5), goal))
    assert engine.price_path(g, [start, goal]).cost > 9
    rt = engine.route(g, start, goal, allowance=8)
    assert rt.cost <= by_hand and rt.turns == 1
    assert engine.price_path(g, rt.path).cost == rt.cost
    assert engine.reach(g, start, 8).cost_at(goal) <= by_hand


def test_any_angle_on_quantised_ground_is_no_dearer_than_the_lattice(bs):
    """From points all over the charge and uphill-woods examples, the default route
    costs no more than the lattice route's path priced, and where that path fits
    in the move the reach says the goal is reachable."""
    for name in ("charge", "uphill-woods"):
        g = engine.cost_grid(load_map(BS / f"{name}.geojson"), bs, bs.unit("infantry"))
        checked = 0
        for start in [(0.3, 0.4), (1.1, 1.9), (1.7, 3.3), (3.2, 2.2)]:
            r = engine.reach(g, start)
            for bx in range(5, 14, 2):
                for by in (0.6, 2.2, 3.7):
                    goal = (bx + 0.3, by)
                    try:
                        lattice = engine.price_path(
                            g, engine.route(g, start, goal, any_angle=False).path).cost
                    except engine.NoRouteError:
                        continue
                    assert engine.route(g, start, goal).cost <= lattice * (1 + 1e-9)
                    assert r.cost_at(goal) <= lattice * (1 + 1e-9) or lattice > g.unit.move
                    checked += 1
        assert checked > 40


def test_moving_a_bend_along_the_move_before_it_ends(bs):
    """A hang guard, not a timing: infantry 4" deep on the uphill-woods example, a
    bend by the start of a route through light woods slides along the move before
    it as its price falls, which only the smallest steps of the compass search
    can follow.  Without a bound on the moves at each step size that took 8
    million steps (a minute and a half) for one bend of one of the facings the
    route tries; the route now takes about a second, run here in a process of its
    own so that a hang fails the test instead of stalling the suite."""
    start, goal = (22.075912138043225, 7.025761299521751), (19.892151962155943, 13.48471406283754)
    code = (
        "import engine\n"
        "bs = engine.load_rules('battlesystem')\n"
        f"bf = engine.load_map({str(BS / 'uphill-woods.geojson')!r})\n"
        "g = engine.cost_grid(bf, bs, bs.unit('infantry', depth=4.0))\n"
        f"rt = engine.route(g, {start}, {goal})\n"
        "assert engine.price_path(g, rt.path).cost == rt.cost\n"
        "print(repr(rt.cost))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs, bs.unit("infantry", depth=4))
    straight = engine.price_path(g, [start, goal]).cost  # 16.13: up through the woods
    assert math.dist(start, goal) < float(done.stdout) <= straight


def test_reach_many_with_quanta_equals_one_reach(bs):
    g = engine.cost_grid(load_map(BS / "light-woods.geojson"), bs, bs.unit("infantry", move=10))
    starts = [(2.1, 2.1), (10.1, 1.1)]
    for got, start in zip(engine.reach_many(g, starts), starts, strict=True):
        one = engine.reach(g, start)
        assert np.array_equal(got.cells, one.cells) and np.array_equal(got.cost, one.cost)


# --- flat costs where passages and obstacles meet --------------------------------------


def test_a_unit_on_a_trail_crossing_a_fence_pays_the_fence_only(bs):
    feats = [feature("swamp", rect(-1, -1, 25, 5)),
             feature("trail", line((-1, 2), (25, 2)), width=1.0),
             feature("fence", line((12, -1), (12, 5)), width=0.5)]
    g = grid(bs, feats)  # frontage 4" on a 1" trail: nothing to enter it
    priced = engine.price_path(g, [(2, Y), (20, Y)])
    assert priced.cost == pytest.approx(18 + 4)
    assert [(leg.kind, leg.cost) for leg in priced.legs if leg.kind != "move"] == [
        ("obstacle", 4.0)]


def test_a_narrow_trail_over_a_wide_bridge_does_not_narrow_the_unit(bs):
    feats = [feature("deep water", line((-1, 10), (25, 10)), width=2),
             feature("bridge", line((12, 7), (12, 13)), width=6)]
    for trail in (1.0, 0.5):  # narrower than the frontage; narrower than a figure
        over = [*feats, feature("trail", line((12, 0), (12, 20)), width=trail)]
        g = grid(bs, over, width=24, height=20)
        priced = engine.price_path(g, [(12.125, 5), (12.125, 15)])
        assert priced.cost == pytest.approx(10) and all(leg.kind == "move"
                                                        for leg in priced.legs)


@pytest.mark.parametrize("depth", [0, 2])
def test_steps_paying_several_flat_costs_stay_in_the_bucket_ring(rules, depth):
    """A step may cross two obstacles of large costs at once: Dial's ring must span it."""
    from .conftest import battlefield

    feats = [feature("wall", line((10.5, 70), (10.5, 130)), width=1, cost=100),
             feature("hedge", line((11.5, 70), (11.5, 130)), width=1, cost=200)]
    bf = load_map(battlefield(feats, 40, 200, cell=1.0))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth, frontage=2))
    start = (5.5, 100.5)
    r = engine.reach(g, start, 10000, any_angle=False)
    for goal in [(12.5, 100.5), (20.5, 100.5)]:
        assert r.cost_at(goal) == pytest.approx(engine.route(g, start, goal,
                                                             any_angle=False).cost)


def test_charge_at_a_target_on_ground_the_charger_cannot_enter(bs):
    g = grid(bs, [feature("rough ground", rect(10, -1, 14, 5))], "cavalry")
    c = engine.can_charge(g, (2, Y), (12, Y), bonus=6, minimum_range=3)
    assert not c.allowed and c.route is None
    assert c.reasons == ["the target is in special terrain (rough ground)",
                         "cavalry cannot enter the target's ground (rough ground)"]


def test_special_terrain_is_the_grounds_not_the_chargers(bs):
    woods = feature("light woods", rect(10, -1, 14, 5))
    road = feature("road", line((0, Y), (24, Y)), width=1)
    on_road = engine.can_charge(grid(bs, [woods, road]), (2, Y), (12, Y), bonus=6,
                                minimum_range=0)
    assert on_road.allowed  # a road "is treated as clear, open terrain"
    for race in ("infantry", "cavalry", "special-large"):  # whoever charges
        c = engine.can_charge(grid(bs, [woods], race), (2, Y), (12, Y), bonus=6,
                              minimum_range=0)
        assert "the target is in special terrain (light woods)" in c.reasons


def test_turns_to_a_cell_count_quanta_as_route_does(bs):
    g = engine.cost_grid(load_map(BS / "light-woods.geojson"), bs,
                         bs.unit("infantry", move=10, depth=0))
    turns = engine.reach_turns(g, (2.125, Y), 3)
    for x in (8.125, 8.375, 12.375):
        rt = engine.route(g, (2.125, Y), (x, Y))
        assert turns[g.grid.xy_to_rc((x, Y))] == rt.turns


# --- the text's own model of a unit: no rank depth, nothing charged for a trail ---------


def _plain(rules, feats, cell, frontage=4.0):
    """A grid for infantry as the ruleset makes it by default (no depth given),
    ``frontage`` abreast, on a 16" x 4" table of cells of ``cell``."""
    bf = load_map(battlefield(feats, 16, 4, units="in", cell=cell))
    return engine.cost_grid(bf, rules, rules.unit("infantry", frontage=frontage))


@pytest.mark.parametrize("cell", [0.25, 0.5, 0.125])
def test_infantry_crossing_a_two_inch_copse_pays_three_inches(bs, cell):
    """'Infantry units moving through light woods pay 3" of movement for every 2" (or
    fraction of 2") traveled through that terrain': 6" of clear ground, 2" of light
    woods (one started 2": 3"), 2" of clear ground: 6 + 3 + 2 = 11.  The text has no
    rank depth, so the unit is a point unless given one."""
    g = _plain(bs, [feature("light woods", rect(6, -1, 8, 5))], cell)
    assert g.unit.depth == 0
    assert cost(g, (0, 2), (10, 2)) == pytest.approx(11)
    assert engine.route(g, (0, 2), (10, 2)).cost == pytest.approx(11)
    # Half an inch more of woods is a second started 2": 6 + 6 + 1.5 = 13.5.
    g = _plain(bs, [feature("light woods", rect(6, -1, 8.5, 5))], cell)
    assert cost(g, (0, 2), (10, 2)) == pytest.approx(6 + 6 + 1.5)


def test_ranks_given_under_battlesystem_trail_one_inch_each(bs):
    """Given ranks, a Battlesystem unit has the ruleset's rank depth (1" each); given
    none, its race's ranks or else the ruleset's default depth (0)."""
    assert bs.unit("infantry").depth == 0
    assert bs.unit("infantry", ranks=2).depth == 2.0
    assert bs.unit("infantry", depth=1.5).depth == 1.5
    assert load_rules("fantasy-warlord").unit("humans").depth == 2.0  # one rank of 2 cm


@pytest.mark.parametrize("cell", [0.25, 0.5, 0.125])
def test_a_trail_through_brush_is_clear_ground_with_nothing_to_enter_it(bs, cell):
    """'A trail is similar to a road ... it is treated as clear, open terrain': a unit
    four figures (4") abreast going 2" over clear ground and then 12" along a 1.5"
    trail through brush pays 2 + 12 = 14.  The text's 3" ('a unit can reassume
    regular formation ... for the standard movement cost of 3"') is for re-forming
    on open ground, not for entering a trail, so nothing is charged for it."""
    feats = [feature("brush", rect(2, -1, 17, 5)),
             feature("trail", line((2, 2), (17, 2)), width=1.5)]
    g = _plain(bs, feats, cell)
    priced = engine.price_path(g, [(0, 2), (14, 2)])
    assert priced.cost == pytest.approx(14)
    assert all(leg.kind == "move" for leg in priced.legs)
    assert engine.route(g, (0, 2), (14, 2)).cost == pytest.approx(14)
    # Off the trail the brush costs "3" ... per 1"": 2 + 12 x 3.
    assert cost(g, (0, 3.5), (14, 3.5)) == pytest.approx(2 + 36)


def test_a_ruleset_may_charge_narrowing_onto_a_trail(tmp_path):
    """``narrowing`` is the ruleset's: where a trail charges it, a unit wider than
    the trail pays the formation change (3") once, entering it from clear ground."""
    text = (Path(engine.rules.__file__).parent / "battlesystem.toml").read_text()
    assert text.count("narrowing = false") == 1
    rules_file = tmp_path / "narrowing.toml"
    rules_file.write_text(text.replace("narrowing = false", "narrowing = true"))
    rules = load_rules(rules_file)
    feats = [feature("brush", rect(2, -1, 17, 5)),
             feature("trail", line((2, 2), (17, 2)), width=1.5)]
    priced = engine.price_path(_plain(rules, feats, 0.25), [(0, 2), (14, 2)])
    assert priced.cost == pytest.approx(14 + 3)
    assert [leg.kind for leg in priced.legs].count("formation change") == 1
    assert cost(_plain(rules, feats, 0.25, frontage=1.5), (0, 2), (14, 2)) == pytest.approx(14)


# --- slopes priced from the hill's own geometry, on any grid ----------------------------


@pytest.mark.parametrize("cell", [0.25, 1.0, 0.05, 0.4])
def test_climbing_one_inch_to_a_crest_pays_two_on_any_grid(bs, cell):
    """'a unit pays 2" of movement to climb 1" of elevation ... Descending ... at no
    additional cost': a ridge 1" high, 2" across (x 4 to 6, crest at x = 5).  Over
    it from x = 0 to x = 10: 4 clear + 1 up (2) + 1 down + 4 clear = 11, on every
    grid, the cell below the crest included; up to the crest alone: 4 + 2 = 6.  On
    0.4" cells the crest runs through the middle of one."""
    ridge = feature("hill", rect(4, -1, 6, 5), elevation=1)
    bf = load_map(battlefield([ridge], 16, 4, units="in", cell=cell))
    g = engine.cost_grid(bf, bs, bs.unit("infantry", frontage=4.0))
    assert cost(g, (0, 2), (10, 2)) == pytest.approx(11, abs=1e-6)
    assert cost(g, (0, 2), (5, 2)) == pytest.approx(6, abs=1e-6)
    assert cost(g, (10, 2), (0, 2)) == pytest.approx(11, abs=1e-6)  # the same the other way
    assert cost(g, (5, 2), (6, 2)) == pytest.approx(1, abs=1e-6)    # down: no extra
    assert engine.route(g, (0, 2), (10, 2)).cost == pytest.approx(11, abs=1e-6)
    assert engine.route(g, (0, 2), (10, 2), any_angle=False).cost == pytest.approx(11, abs=1e-6)


@pytest.mark.parametrize("cell", [0.25, 1.0, 0.4])
def test_a_crest_and_foot_inside_cells_are_priced_exactly(bs, cell):
    """'a unit pays 2" of movement to climb 1" of elevation ... Descending ... at no
    additional cost': the ridge of the test above moved 0.1" along (x 4.1 to 6.1),
    so that its feet and crest run through the middle of cells on every one of
    these grids.  From x = 0 to x = 10: 4.1 clear + 1 up (2) + 1 down + 3.9 clear
    = 11; to the crest: 4.1 + 2 = 6.1; each way, and on the step lattice too."""
    ridge = feature("hill", rect(4.1, -1, 6.1, 5), elevation=1)
    bf = load_map(battlefield([ridge], 16, 4, units="in", cell=cell))
    g = engine.cost_grid(bf, bs, bs.unit("infantry", frontage=4.0))
    assert cost(g, (0, 2), (10, 2)) == pytest.approx(11, abs=1e-6)
    assert cost(g, (10, 2), (0, 2)) == pytest.approx(11, abs=1e-6)
    assert cost(g, (0, 2), (5.1, 2)) == pytest.approx(6.1, abs=1e-6)
    assert cost(g, (5.1, 2), (6.1, 2)) == pytest.approx(1, abs=1e-6)
    assert cost(g, (4.3, 2), (4.9, 2)) == pytest.approx(1.2, abs=1e-6)  # up, within cells
    assert cost(g, (4, 2), (4.2, 2)) == pytest.approx(0.1 + 0.2, abs=1e-6)  # over the foot
    assert cost(g, (5, 2), (5.2, 2)) == pytest.approx(0.2 + 0.1, abs=1e-6)  # over the crest
    assert cost(g, (5.2, 2), (5, 2)) == pytest.approx(0.2 + 0.1, abs=1e-6)
    assert engine.route(g, (0, 2), (10, 2)).cost == pytest.approx(11, abs=1e-6)


@pytest.mark.parametrize("cell", [0.25, 0.4, 1.0])
def test_a_round_hill_is_climbed_to_its_summit_on_any_grid(bs, cell):
    """'a unit pays 2" of movement to climb 1" of elevation ... Descending ... at no
    additional cost': a round hill 3" across the radius and 1" high, its summit at
    (8.1, 3.1), inside a cell on every one of these grids.  Across it through the
    summit: 2 clear + 3 up (6) + 3 down + 2 clear = 13, either way; from the clear
    ground 3" from the summit, up to it at an angle: twice the distance inside the
    hill's outline (a polygon of 64 sides) plus the rest, measured by shapely."""
    import shapely

    circle = shapely.Point(8.1, 3.1).buffer(3, quad_segs=16)
    hill = feature("hill", json.loads(shapely.to_geojson(circle)), elevation=1)
    bf = load_map(battlefield([hill], 16, 6, units="in", cell=cell))
    g = engine.cost_grid(bf, bs, bs.unit("infantry", frontage=4.0))
    assert cost(g, (3.1, 3.1), (13.1, 3.1)) == pytest.approx(13, abs=1e-6)
    assert cost(g, (13.1, 3.1), (3.1, 3.1)) == pytest.approx(13, abs=1e-6)
    assert cost(g, (3.1, 3.1), (8.1, 3.1)) == pytest.approx(2 + 6, abs=1e-6)
    start = (8.1 - 3 * 0.6, 3.1 - 3 * 0.8)
    inside = shapely.LineString([start, (8.1, 3.1)]).intersection(circle).length
    assert cost(g, start, (8.1, 3.1)) == pytest.approx(2 * inside + (3 - inside), abs=1e-6)
    # A route may do better than the straight line: into the polygon where an edge,
    # not a corner, lies a little nearer the summit (climbing costs twice).
    assert 7.99 < engine.route(g, (3.1, 3.1), (8.1, 3.1)).cost <= 8 + 1e-9


@pytest.mark.parametrize(("name", "race", "depth", "at", "goal", "cost", "before"), [
    ("uphill-woods", "infantry", 1.0, (9.9401, 10.6756), (12.7078, 7.5094), 9.0, 10.5673),
    ("uphill-woods", "special-small", 1.0, (10.0897, 11.7456), (15.9426, 11.2058), 10.5959,
     math.inf),
    ("manoeuvres", "special-small", 0.0, (11.5123, 1.0618), (9.6879, 7.4529), 11.7792,
     math.inf)])
def test_a_point_costs_what_its_route_costs_by_light_woods(bs, name, race, depth, at, goal,
                                                           cost, before):
    """By light woods (3" per started 2") the reach searches on the smooth multiplier,
    and a way that starts fewer quanta (round the wood's edge, say) can be one its
    paths miss: `cost_at` asks the route's own search too, so it prices a point
    within the turn as the route does (from its own paths alone, ``before``: inf
    says out of reach)."""
    g = engine.cost_grid(load_map(BS / f"{name}.geojson"), bs, bs.unit(race, depth=depth))
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(cost, abs=1e-4) and rt.turns == 1
    reach = engine.reach(g, at)
    assert _near_quanta(g, at, reach.allowance)
    assert reach.cost_at(goal) == pytest.approx(rt.cost, rel=1e-12)
    found = reach._best_within(goal)
    assert (math.inf if found is None else found[1]) == pytest.approx(before, abs=1e-4)
