"""What the public functions accept: numpy's numbers as well as Python's; points,
yes/no options, grids, maps, rules and lists refused in one line when they are
something else (each case below was a traceback, or was read wrongly)."""

import numpy as np
import pytest

import engine
from engine.search import flow_field

from .conftest import MAPS


def _battlesystem_grid():
    bs = engine.load_rules("battlesystem")
    bf = engine.load_map(MAPS / "battlesystem" / "manoeuvres.geojson")
    return engine.cost_grid(bf, bs, bs.unit("infantry"))


@pytest.fixture(scope="module")
def demo(rules):
    bf = engine.load_map(MAPS / "demo.geojson")
    return bf, engine.cost_grid(bf, rules, rules.unit("humans"))


@pytest.mark.parametrize("at", ["12", ("30", "40"), (True, False), {30: 1, 40: 2}, (30, 40, 0),
                                None, 30.0])
def test_a_point_must_be_two_numbers(demo, at):
    with pytest.raises(engine.InputError, match=r"^a point must be two numbers x,y, got "):
        engine.reach(demo[1], at)  # "12" was read as (1, 2), True as 1


def test_a_cell_of_a_raw_grid_must_be_two_whole_numbers():
    router = engine.GridRouter(np.ones((5, 5)), directions=8)
    with pytest.raises(engine.InputError, match=r"^start must be \(row, col\), two whole"):
        router.route((True, False), (4, 4))  # was routed from (1, 0)
    assert router.route((np.int64(0), 0.0), (4, 4))[0] == pytest.approx(4 * 2**0.5)


def test_numpy_numbers_are_numbers(rules, demo):
    grid = demo[1]
    at = np.array([30.0, 40.0])
    assert engine.reach(grid, at, np.float32(5)).area == engine.reach(grid, (30, 40), 5).area
    assert engine.reach(grid, (np.float32(30), np.int64(40)), 5).area == 75.0
    assert rules.unit("humans", move=np.int64(20)).move == 20
    assert engine.load_rules("reglamento").unit("human", march=np.True_).move == 20
    assert rules.unit("humans", ranks=np.int64(2)).depth == rules.unit("humans", ranks=2).depth
    assert len(engine.Highway(grid, landmarks=np.int64(2)).cells) == 2
    assert flow_field(grid, [(30, 40)], limit=np.int64(5)).cost.min() == 0
    bf = engine.load_map({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"terrain": "road", "width": np.float32(2)},
         "geometry": {"type": "LineString", "coordinates": [[np.int64(2), 2], [30, 2]]}}],
        "battlefield": {"width": np.int64(40), "height": 20.0, "units": "cm"}})
    assert (bf.width, bf.features[0].width) == (40, 2)  # each was refused


@pytest.mark.parametrize(("call", "name"), [
    (lambda bf, r, g: engine.can_charge(g, (30, 40), (35, 40), minimum_range=1, climbed="no"),
     "climbed"),
    (lambda bf, r, g: engine.visible(bf, r, (30, 40), (35, 40), flying="yes"), "flying"),
    (lambda bf, r, g: engine.viewshed(bf, r, (30, 40), flying=1), "flying"),
    (lambda bf, r, g: engine.terrain_effects(bf, r, (30, 40), close_order="no"), "close_order"),
    (lambda bf, r, g: engine.terrain_effects(bf, r, (30, 40), stationary=0), "stationary"),
    (lambda bf, r, g: engine.charge_disorders(bf, r, [(30, 40), (35, 40)], close_order=None),
     "close_order"),
    (lambda bf, r, g: engine.threat_map(bf, r, [(r.unit("orcs"), (30, 40))], charge="no"),
     "charge"),
    (lambda bf, r, g: engine.choose_position(g, (30, 40), close_order="no"), "close_order"),
    (lambda bf, r, g: engine.grid_route(np.ones((5, 5)), (0, 0), (4, 4), corner_cutting="yes"),
     "corner_cutting"),
])
def test_a_yes_or_no_must_be_a_bool(rules, demo, call, name):
    with pytest.raises(engine.InputError, match=f"^{name} must be true or false, got "):
        call(demo[0], rules, demo[1])  # "no" was read as yes


@pytest.mark.parametrize(("call", "words"), [
    (lambda bf, r, g: engine.reach(None, (30, 40)),
     "grid must be a CostGrid (from cost_grid), got NoneType"),
    (lambda bf, r, g: engine.reach(bf, (30, 40)),
     "grid must be a CostGrid (from cost_grid), got Battlefield"),
    (lambda bf, r, g: engine.route(bf, (30, 40), (40, 40)), "grid must be a CostGrid"),
    (lambda bf, r, g: engine.price_path(None, [(30, 40), (40, 40)]), "grid must be a CostGrid"),
    (lambda bf, r, g: engine.connected(None, (30, 40), (40, 40)), "grid must be a CostGrid"),
    (lambda bf, r, g: engine.Highway(bf), "grid must be a CostGrid"),
    (lambda bf, r, g: engine.cost_grid(None, r, r.unit("humans")),
     "battlefield must be a Battlefield (from load_map), got NoneType"),
    (lambda bf, r, g: engine.cost_grid(bf, None, r.unit("humans")),
     "rules must be a Ruleset (from load_rules), got NoneType"),
    (lambda bf, r, g: engine.network(bf, None), "rules must be a Ruleset"),
    (lambda bf, r, g: engine.chokepoints(bf, r, "humans"),
     "'humans' is not a unit of Fantasy Warlord: make it with that ruleset's unit()"),
    (lambda bf, r, g: engine.describe(bf, r, engine.load_rules("battlesystem").unit("infantry")),
     "'infantry' is not a unit of Fantasy Warlord"),  # was KeyError: 'broken'
    (lambda bf, r, g: engine.reach_many(g, None), "starts must be a list, got NoneType"),
    (lambda bf, r, g: engine.reach_army(bf, r, None), "units must be a list, got NoneType"),
    (lambda bf, r, g: flow_field(g, None), "goals must be a list, got NoneType"),
    (lambda bf, r, g: engine.charge_disorders(bf, r, None), "path must be a list, got NoneType"),
    (lambda bf, r, g: engine.choose_position(g, (30, 40), avoid=None),
     "avoid must be a list, got NoneType"),
    (lambda bf, r, g: engine.choose_position(g, (30, 40), weights=[1, 2]),
     "weights must be a mapping of names to numbers, got list"),
    (lambda bf, r, g: engine.choose_position(g, (30, 40), flow="x"),
     "flow must be a FlowField (from flow_field), got str"),
    (lambda bf, r, g: engine.choose_position(g, (30, 40), threat="x"),
     "threat must be a Threat (from threat_map), got str"),
    (lambda bf, r, g: bf.check(None), "rules must be a Ruleset (from load_rules), got NoneType"),
    (lambda bf, r, g: engine.price_path(g, "1234"), "path must be a list, got str"),
    (lambda bf, r, g: engine.price_path(g, [(1, 1), (500, 1)]),
     "path point 1: point (500, 1) is off the table"),  # the "path point 1" was missing
    (lambda bf, r, g: engine.cost_field(np.ones((2, 2)), (0, 0), directions=8, lengths="12"),
     "lengths must be 0 < straight <= diagonal, got '12'"),  # was read as (1, 2)
    (lambda bf, r, g: engine.cost_field(np.ones((2, 2)), (0, 0), directions=8,
                                        lengths=(True, True)), "lengths must be 0 < straight"),
    (lambda bf, r, g: engine.cost_field(np.broadcast_to(1.0, (100000, 100000)), (0, 0)),
     "a 100000 x 100000 grid is too large for memory"),  # ran, then MemoryError
    (lambda bf, r, g: engine.manoeuvre(_battlesystem_grid(), (1, 1), "face", 3),
     "figures are for a change of frontage, not a face"),  # was ignored
    (lambda bf, r, g: engine.cost_field(np.ma.masked_array(np.ones((3, 3)), mask=np.eye(3)),
                                        (0, 1)),
     "multipliers must be a plain array, not a masked one"),  # its mask was ignored
    (lambda bf, r, g: engine.cost_field(np.ones((4, 4), dtype=bool), (0, 0)),
     "multipliers must be real numbers, got an array of bool"),  # blamed the shape (4, 4)
    (lambda bf, r, g: engine.cost_field(np.ones((4, 4), dtype=complex), (0, 0)),
     "multipliers must be real numbers, got an array of complex128"),
    (lambda bf, r, g: engine.cost_field(np.ones(4), (0, 0)),
     "multipliers must be a non-empty 2-D numeric array, got shape (4,)"),
    (lambda bf, r, g: engine.grid_route(np.ones((5, 5)), (0, 0), (4, 4), bogus=1),
     "unknown option 'bogus' (the conventions are corner_cutting, lengths, pricing)"),
    (lambda bf, r, g: engine.can_charge(g, (30, 40), (30.0, 40.0), minimum_range=1),
     "the target (30, 40) is where the unit stands"),  # was allowed
])
def test_wrong_kinds_of_argument_are_named(rules, demo, call, words):
    with pytest.raises(engine.InputError) as exc:
        call(demo[0], rules, demo[1])  # each was an AttributeError, TypeError or KeyError
    assert str(exc.value).startswith(words)


@pytest.mark.parametrize(("size", "options", "words"), [
    ({"cell": 1e308}, {}, r"^steps up to inf table units long are too long"),
    ({"cell": 1e301}, {}, r"^steps up to 4.12e\+301 table units long are too long"),
    ({}, {"directions": 8, "lengths": (1e307, 1e307)}, r"^steps up to 1e\+307 table units"),
    ({"cell": 1e298, "dear": 1e8}, {},
     r"^costs would overflow: a path over the 4 x 4 grid, by steps up to 4.12e\+298 table "
     r"units long on multipliers up to 1e\+08, could cost 6.6e\+307$"),
])
def test_a_raw_grid_whose_costs_would_overflow_is_refused(size, options, words, recwarn):
    m = np.ones((4, 4))
    m[0, 1] = size.get("dear", 1.0)
    with pytest.raises(engine.InputError, match=words):
        engine.cost_field(m, (0, 0), cell=size.get("cell", 1.0), **options)
    assert not recwarn.list  # numpy's overflow warnings were printed before the error
    # (lengths of 1e307 gave inf for the far cell, as if it could not be reached)


def test_a_raw_grid_with_a_vast_but_finite_cell_is_priced():
    far = engine.cost_field(np.ones((4, 4)), (0, 0), cell=1e299)[3, 3]
    assert far == pytest.approx(3 * 2**0.5 * 1e299)  # was refused
