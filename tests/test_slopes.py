"""Routes and `Reach.cost_at` over slopes, mostly Battlesystem's on the uphill-woods
example (a hill over the whole table, 3" high on its crest): climbing pays over
every inch of a move that gains height, however little, and rear ranks pay for the
slope the front climbed while they still stand on it, so the cheapest path may go
exactly level along a slope first and climb last, which moving bends a little at a
time never finds from the searches' paths, bent at cell centres."""

import math

import pytest

import engine
from engine import load_map, load_rules
from engine.search._state import FACE_STEP

from .conftest import MAPS

BS = MAPS / "battlesystem"


@pytest.fixture(scope="module")
def bs():
    return load_rules("battlesystem")


@pytest.mark.parametrize(("race", "at", "goal", "before"), [
    ("cavalry", (32.0804, 0.0625), (37.7417, 0.8888), 9.0925),
    ("special-small", (37.4926, 19.9418), (30.5155, 18.7833), 10.9837),
    ("special-small", (39.99161764940828, 8.426654554355359),
     (39.3347618510869, 12.821533062838238), 7.5326)])
def test_with_rear_ranks_a_point_is_priced_climbing_last(bs, race, at, goal, before):
    """Rear ranks pay for the slope the front climbed while they still stand on it, so
    with ranks 2" deep on the uphill-woods example a climb is cheaper last: along
    the contour first, exactly level with the start, and up at the end, as the
    route goes.  The reach's paths bend at cell centres and climbed first
    (``before``, 2" dearer); `cost_at` tries each pair of a path's moves in the
    other order too, once the bends on a straight line are dropped (in the last
    case, moving the bends split the level move in two, and no pair of moves
    swapped made it level)."""
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs, bs.unit(race, depth=2.0))
    rt = engine.route(g, at, goal)
    assert rt.turns == 1 and rt.cost < before - 1.9
    path, cost = engine.reach(g, at)._best_path(goal)
    assert cost == pytest.approx(rt.cost, rel=1e-9)
    assert min(abs(path[1][0] - at[0]), abs(path[1][1] - at[1])) < 1e-9  # level
    assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-12)


def test_with_rear_ranks_moving_the_bends_keeps_the_step_that_faces_the_ranks(bs):
    """Special-large 2" deep on the uphill-woods example, from (2.3026, 16.8310) to
    (2.9784, 12.0125) at full precision: the route faces the ranks with a first
    step a hair long, then goes exactly along the contour and climbs at the end,
    5.9891.  The reach's path has such a step too, but with its bends at cell
    centres.  Moved as a unit without ranks would move them, the step was dropped
    and the ranks faced along the first move, dearer (7.07), so `cost_at` kept the
    bends at cell centres: 6.3110.  The bends are now moved with the step kept
    too."""
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs,
                         bs.unit("special-large", depth=2.0))
    at, goal = (2.3026470249885733, 16.831048652487127), (2.9784499629247407, 12.012508710465982)
    rt = engine.route(g, at, goal)
    assert rt.turns == 1 and rt.cost == pytest.approx(5.9891, abs=1e-4)
    path, cost = engine.reach(g, at)._best_path(goal)
    assert cost == pytest.approx(rt.cost, rel=1e-4)
    assert math.dist(path[0], path[1]) <= FACE_STEP * g.cell * (1 + 1e-9)  # the facing step
    assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-12)


def test_with_rear_ranks_a_route_goes_level_first_and_climbs_last(bs):
    """Infantry 1" deep on the uphill-woods example, from (11.8094, 16.9400) to
    (4.9784, 14.6718), 8" through the light woods either way: level with the start
    first and then up the slope, 16.18; the same two moves the other way round,
    17.68, as the rear ranks pay for the slope while the front goes on level.
    The route's search bent at cell centres and climbed first; it also tries each
    pair of its moves in the other order."""
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs, bs.unit("infantry", depth=1.0))
    at, goal = (11.8094, 16.94), (4.9784, 14.6718)
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(16.1772, abs=1e-3)
    assert len(rt.path) == 3 and rt.path[1][1] == pytest.approx(at[1], abs=1e-6)
    bx, by = rt.path[1]
    climb_first = [at, (at[0] + goal[0] - bx, at[1] + goal[1] - by), goal]  # its moves swapped
    assert engine.price_path(g, climb_first).cost == pytest.approx(17.6775, abs=1e-3)


@pytest.mark.parametrize(("depth", "at", "goal", "before"), [
    (0.0, (34.51202243834206, 14.936798885979272), (39.90889824225938, 9.398855285771496),
     8.0331),
    (2.0, (34.51202243834206, 14.936798885979272), (39.90889824225938, 9.398855285771496),
     8.1027),
    (0.0, (26.824976587745212, 12.943790231485002), (35.89447817414895, 8.954184460355947),
     11.2167)])
def test_a_path_level_along_the_slope_first_is_found(bs, depth, at, goal, before):
    """Cavalry on the uphill-woods example.  The hill's slope up from its far edge
    (y = 20) meets the slope up from its right edge (x = 40) on the line
    x - y = 20.  From a point on the first slope the cheapest path goes exactly
    level along it to that line, then straight down the second, never climbing:
    priced at its length, the least any path to the goal below the start's
    height can cost without climbing, and climbing doubles every inch however
    little it gains.  The searches' paths bend at cell centres, and moving bends
    a little at a time never makes a move exactly level: route and `cost_at`
    were ``before``.  Both now try the first bend on the start's contour line."""
    g = engine.cost_grid(load_map(BS / "uphill-woods.geojson"), bs,
                         bs.unit("cavalry", depth=depth))
    fold = (at[1] + 20.0, at[1])
    exact = (fold[0] - at[0]) + math.dist(fold, goal)
    assert exact < before - 0.1
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(exact, rel=1e-6)
    assert rt.path[1][1] == at[1]  # level
    assert engine.reach(g, at).cost_at(goal) == pytest.approx(exact, rel=1e-6)
    assert engine.price_path(g, rt.path).cost == pytest.approx(rt.cost, rel=1e-12)


def test_cost_at_moves_the_bends_again_after_levelling_the_last_move():
    """Fantasy Warlord dwarves 2 cm deep on the demo map, from (40.58, 28.9) to
    (36.51, 31.66), through the woods on the hill's steep slope: the route goes
    round and never climbs, 5.05 cm at x2 (woods), 10.1069.  The reach's path, bent
    at cell centres, climbed at the end (x4), and `cost_at` said 11.5114: its last
    bend was put on the goal's contour line, but the bend before it stayed where the
    move from it climbed.  A path made cheaper so now has its bends moved again."""
    fw = load_rules("fantasy-warlord")
    g = engine.cost_grid(load_map("demo"), fw, fw.unit("dwarves", depth=2.0))
    at, goal = (40.58, 28.9), (36.51, 31.66)
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(10.1069, abs=1e-4)
    legs = engine.price_path(g, rt.path).legs
    assert not any("uphill" in name for leg in legs for name in leg.terrain)
    assert engine.reach(g, at).cost_at(goal) == pytest.approx(rt.cost, rel=1e-9)
