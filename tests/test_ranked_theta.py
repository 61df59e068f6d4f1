"""`theta_labels`, the any-angle search with the rear-rank trail, at kernel level: the
path each cell's cheapest label keeps is priced by `price_path` at the label's cost,
and on open ground a ranked unit's reach is the distance from its own point."""

import math

import numpy as np
import pytest

import engine
from engine.search import _kernels
from engine.search._kernels.anyangle import _source_sight
from engine.search._kernels.ranked import _STAMPS, _facing_clean, reset_labels, theta_labels
from engine.search._state import FACE_STEP, facing_points
from engine.terrain._kernels import TRAIL

FW = engine.load_rules("fantasy-warlord")


def _search(g, at, budget, least=None, tried=None, stamp=None, aim=(math.nan, math.nan),
            faced=True):
    """Each reached cell's cheapest cost and its label's path (cell centres, the start
    first at its own point, and a point a hair from it where the path first faces
    the unit another way); ``least`` and ``aim`` as `theta_labels` takes them
    (default `CostGrid.least`, inf: nothing settled at once; no aim); ``faced``:
    with the first steps to `facing_points` (else none)."""
    a, n = g.kernel_args, g.base.size
    pool = _kernels.label_pool(1 << 18, TRAIL)
    l_at = np.empty(1 << 18, dtype=np.int64)
    dist, head, beat = np.full(n, np.inf), np.full(n, -1, dtype=np.int64), np.full(n, np.inf)
    touched = np.empty(n, dtype=np.int64)
    tried = np.full(n, -1, dtype=np.int64) if tried is None else tried
    stamp = np.zeros(1, dtype=np.int64) if stamp is None else stamp
    r, c = g.grid.xy_to_rc(at)
    faces = facing_points(g, np.array([at], dtype=np.float64))[0] if faced else np.empty((0, 2))
    nt, used = theta_labels(
        a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow, g.clearance, g.alike,
        g.least if least is None else least, a.cols, g.cell, float(g.unit.depth),
        r * a.cols + c, float(at[0]), float(at[1]), *aim, faces, budget, False,
        *g.longer_steps[:2], dist, head, beat, touched, tried, stamp, *pool[:10], pool[11],
        pool[12], l_at)
    assert used > 0
    out = {}
    for v in touched[:nt].tolist():
        z, best = head[v], -1
        while z >= 0:
            if best < 0 or pool[0][z] < pool[0][best]:
                best = z
            z = pool[7][z]
        chain = [best]
        while pool[2][chain[-1]] >= 0:
            chain.append(pool[2][chain[-1]])
        path = [at]
        for z in chain[-2::-1]:
            k, face = pool[1][z], pool[3][z]
            path.append(tuple(faces[face - 1]) if face > 0 else
                        ((k % a.cols + 0.5) * g.cell, (k // a.cols + 0.5) * g.cell))
        out[v] = (float(dist[v]), path)
    reset_labels(touched, nt, dist, head, beat)
    return out


def test_marks_of_moves_tried_start_afresh_before_they_overflow():
    """Each straight move priced is marked with its search's stamp (not priced again);
    the search whose stamp would overflow the marks clears them first, so marks
    left from before (as the stamp after the reset, or the overflowing one,
    would write them) change nothing."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans"))
    at = (100.9, 60.2)
    fresh = _search(g, at, 20.0)
    y = np.arange(g.base.size, dtype=np.int64) % 64  # labels
    stale = np.where(y % 2 == 0, (1 << 32) + y, np.int64(-(1 << 63)) + y)
    stamp = np.array([_STAMPS - 1], dtype=np.int64)
    assert _search(g, at, 20.0, tried=stale, stamp=stamp) == fresh
    assert stamp[0] == 1


@pytest.mark.parametrize("at", [(40.3, 31.7), (100.9, 60.2), (150.25, 20.75)])
def test_each_cells_path_is_priced_at_its_cost(at):
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans"))
    assert g.depth > 0
    found = _search(g, at, 20.0)
    rng = np.random.default_rng(5)
    for v in rng.choice(sorted(found), size=min(60, len(found)), replace=False):
        cost, path = found[v]
        if len(path) > 1:
            assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-9, abs=1e-9)


def test_open_ground_is_the_distance_from_the_units_own_point():
    bf = engine.load_map({"type": "FeatureCollection", "features": [], "battlefield": {
        "width": 100, "height": 60, "units": "cm", "cell": 0.5}})
    g = engine.cost_grid(bf, FW, FW.unit("humans", ranks=2))
    at = (50.25, 30.25)  # a cell's corner
    found = _search(g, at, 20.0)
    cols = g.grid.shape[1]
    for v, (cost, path) in found.items():
        centre = ((v % cols + 0.5) * g.cell, (v // cols + 0.5) * g.cell)
        assert cost == pytest.approx(math.dist(at, centre), rel=1e-12, abs=1e-12)
        assert len(path) <= 2  # straight from the start


BY_HEAVIER = [(83.25, 108.25), (59.25, 65.25), (84.25, 16.25)]  # demo, within 2 cm of it


@pytest.mark.parametrize("at", BY_HEAVIER)
def test_a_start_by_heavier_ground_keeps_its_ranks_there(at):
    """From a cell's centre within a rank's depth of heavier ground, every cell's path
    is priced at its cost: none goes on from a move of no length to the start's own
    centre, which faces no way and would drop the ranks standing on that ground."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans", move=24))
    r, c = g.grid.xy_to_rc(at)
    assert g.grid.rc_to_xy((r, c)) == at and g.depth == 2.0
    assert g.base[r - 4:r + 5, c - 4:c + 5].max() > g.base[r, c]  # within 2 cm
    for cost, path in _search(g, at, 24.0).values():
        if len(path) > 1:
            assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("at", BY_HEAVIER)
def test_the_sight_settled_at_once_is_where_the_ranks_stand_on_the_starts_ground(at):
    """`_facing_clean` keeps in the start's plain sight only cells a straight move to
    prices at the start's multiplier times its length, ranks and all, and clears
    some where the ranks stand on heavier ground; the reach that settles the cells
    kept at once equals the search that settles nothing at once."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans", move=24))
    a, (r, c) = g.kernel_args, g.grid.xy_to_rc(at)
    rows, cols = g.grid.shape
    sight, r0, c0, w = _source_sight(g.alike, cols, rows, r * cols + c, *at, g.cell, 24.0)
    seen = sight.copy()
    _facing_clean(sight, r0, c0, w, r * cols + c, *at, g.depth, g.cell, cols, rows, a.base,
                  a.steep)
    centres = [((i % w + c0 + 0.5) * g.cell, (i // w + r0 + 0.5) * g.cell)
               for i in range(sight.size)]
    kept = [centres[i] for i in np.flatnonzero(sight) if centres[i] != at]
    cleared = [centres[i] for i in np.flatnonzero(seen & (sight == 0))]
    assert kept and cleared
    k0 = g.base[r, c]
    for q in kept[::7]:
        assert engine.price_path(g, [at, q]).cost == pytest.approx(k0 * math.dist(at, q),
                                                                   rel=1e-12)
    assert any(engine.price_path(g, [at, q]).cost > k0 * math.dist(at, q) + 1e-6
               for q in cleared)
    fast, slow = _search(g, at, 24.0), _search(g, at, 24.0, least=math.inf)
    assert sorted(fast) == sorted(slow)
    assert [fast[v][0] for v in sorted(fast)] == pytest.approx(
        [slow[v][0] for v in sorted(slow)], rel=1e-12)


@pytest.mark.parametrize(("at", "aim"), [((100.9, 60.2), (112.3, 71.6)),
                                         ((134.1, 70.9), (97.0, 51.1))])
def test_an_aimed_search_keeps_the_cheapest_ways_on_to_its_aim(at, aim):
    """Aimed at a point, the search keeps only cells whose cost plus the distance from
    their centre to the point is within the budget, and those at the cost the
    search that is not aimed gives them, so the cells around the aim too."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans"))
    budget = 1.25 * math.dist(at, aim) + 5.0
    full, aimed = _search(g, at, budget), _search(g, at, budget, aim=aim)
    cols = g.grid.shape[1]

    def on(v, cost):
        centre = ((v % cols + 0.5) * g.cell, (v // cols + 0.5) * g.cell)
        return cost + math.dist(centre, aim) <= budget

    wanted = {v for v, (cost, _) in full.items() if on(v, cost)}
    assert len(aimed) < len(full) / 2
    assert wanted <= set(aimed) and all(on(v, cost) for v, (cost, _) in aimed.items())
    assert all(aimed[v][0] == pytest.approx(full[v][0], rel=1e-12) for v in wanted)
    r, c = g.grid.xy_to_rc(aim)
    assert r * cols + c in wanted


def test_a_ranked_route_beyond_a_turn_is_as_cheap_as_in_one_turn():
    """Humans two ranks deep, starting by heavier ground: the step lattice, searched
    from the centre of the start's cell with the ranks behind that, finds a way
    costing 54.59; from the unit's own point, stepping aside first to face its
    ranks, there is one of 50.91 (a reach aimed at the goal finds it): the route
    takes that in turns of 20 as in one turn of 200, and the reach of 200's
    `cost_at` is within 1% of it (51.28: the reach not aimed keeps other paths).
    So for random routes: the allowance changes the turns, not the cost."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans", ranks=2))
    a, b = (134.1, 70.9), (97, 51.1)
    rt = engine.route(g, a, b)
    assert rt.cost == pytest.approx(50.9136, abs=1e-4) and rt.turns == 3
    assert rt.cost == pytest.approx(engine.route(g, a, b, 200).cost, rel=1e-9)
    assert rt.cost <= engine.reach(g, a, 200).cost_at(b) <= rt.cost * 1.01
    assert engine.price_path(g, rt.path).cost == rt.cost
    rng = np.random.default_rng(3)
    w, h = g.grid.width, g.grid.height
    tried = 0
    while tried < 10:
        p, q = tuple(rng.uniform((0, 0), (w, h))), tuple(rng.uniform((0, 0), (w, h)))
        if math.dist(p, q) > 80 or not (engine.connected(g, p, q) and all(
                g.base[g.grid.xy_to_rc(x)] < math.inf for x in (p, q))):
            continue
        tried += 1
        assert engine.route(g, p, q).cost == pytest.approx(engine.route(g, p, q, 300).cost,
                                                           rel=1e-9)


def test_a_route_may_first_step_aside_to_face_its_ranks_along_a_slope():
    """Humans two ranks deep (4 cm) a hair west of the steep wooded hill's crest
    (it runs north and south along x = 21): going straight to (15.18, 6) stands
    the ranks behind the unit, over the crest, where they climb it (x4 until
    they clear it: 20.48).  A first step a hair long along the contour stands
    them in the start's column, west of the crest, where they do not climb:
    x2 all the way, one turn of 20.  On the demo map the search bends a hair
    from the start, for its facing, where stepping aside first and then going
    straight is cheaper (6.22, not 6.32).  So for random routes on the hill:
    none costs more than a first step a little longer along either axis and
    then straight to the goal."""
    g = engine.cost_grid(engine.load_map("maps/examples/humans-hill.geojson"), FW,
                         FW.unit("humans", ranks=2))
    a, b = (20.95, 3.48), (15.18, 6.0)
    assert engine.price_path(g, [a, b]).cost == pytest.approx(20.4835, abs=1e-4)
    rt = engine.route(g, a, b)
    (x0, y0), (x1, y1) = rt.path[:2]
    assert x1 == x0 and 0 < abs(y1 - y0) < 1e-3
    assert rt.cost == pytest.approx(2 * rt.length) and rt.turns == 1
    assert engine.price_path(g, rt.path).cost == rt.cost
    demo = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", ranks=2))
    a, b = (86.308, 115.023), (80.826, 112.085)  # the search bends a hair from a for its facing
    rt = engine.route(demo, a, b)
    assert len(rt.path) == 3 and rt.cost == pytest.approx(6.21978, abs=1e-5)
    assert engine.price_path(demo, rt.path).cost == rt.cost
    rng = np.random.default_rng(8)
    w, h = g.grid.width, g.grid.height
    for _ in range(15):
        p, q = tuple(rng.uniform((0, 0), (w, h))), tuple(rng.uniform((0, 0), (w, h)))
        cost = engine.route(g, p, q).cost
        for ux, uy in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            aside = (p[0] + 0.01 * ux, p[1] + 0.01 * uy)
            if 0 <= aside[0] <= w and 0 <= aside[1] <= h:
                assert cost <= engine.price_path(g, [p, aside, q]).cost + 1e-9


def test_a_reach_point_cost_faces_the_ranks_as_a_route_does():
    """Beside heavier ground, `Reach.cost_at` tries a first step a hair long in each of
    32 directions to face the rear ranks, as `route` does: it is never dearer than
    without, cheaper at some points (up to 3.9 here), and each cost is the price of
    a path from the start."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans", ranks=2))
    a = (134.1, 70.9)
    rng = np.random.default_rng(1)
    points = [tuple(a + rng.uniform(-15, 15, 2)) for _ in range(30)]
    faced, square = engine.reach(g, a), engine.reach(g, a)
    for reach in (square, square._wide):  # the ranks facing each first move only
        reach.__dict__["_facings_matter"] = False
    assert faced._facings_matter
    cheaper = 0
    for q in points:
        one, other = faced.cost_at(q), square.cost_at(q)
        assert one <= other + 1e-12
        cheaper += one < other - 1e-6
        if one < math.inf:
            path, cost = faced._best_within(q)
            assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-12)
            assert cost == one
    assert cheaper >= 5



def test_a_reach_faces_its_ranks_with_a_first_step_as_a_route_does():
    """Humans two ranks deep a hair west of the steep wooded hill's crest: a move west
    stands the ranks behind the unit, over the crest, where they climb it.  The
    search also labels the start's cell with a first step a hair long to each of
    `facing_points` (the ranks standing behind it, facing that way): every
    cell's path, through such a point where it pays, is priced at its cost, no
    cell costs more than a first step to any of those points and then straight
    to its centre (to 0.2%: the search's bends stand at cells' centres; 0.13% at
    most here), and 176 of the 275 cells the search without those first steps
    reaches cost less (it reaches 374)."""
    g = engine.cost_grid(engine.load_map("maps/examples/humans-hill.geojson"), FW,
                         FW.unit("humans", ranks=2))
    a = (20.95, 3.48)
    faced, square = _search(g, a, 20.0), _search(g, a, 20.0, faced=False)
    assert set(square) <= set(faced)
    assert all(faced[v][0] <= square[v][0] * (1 + 1e-12) for v in square)
    cheaper = [v for v in square if faced[v][0] < square[v][0] - 1e-6]
    assert len(cheaper) > len(square) / 2 and len(faced) > 1.25 * len(square)
    cols = g.grid.shape[1]
    firsts = [tuple(p) for p in facing_points(g, np.array([a]))[0]]
    rng = np.random.default_rng(2)
    for v in rng.choice(sorted(faced), size=40, replace=False):
        cost, path = faced[v]
        if len(path) > 1:
            assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-9, abs=1e-9)
        centre = ((v % cols + 0.5) * g.cell, (v // cols + 0.5) * g.cell)
        assert cost <= min(engine.price_path(g, [a, q, centre]).cost for q in firsts) * 1.002


@pytest.mark.parametrize(("race", "at", "goal", "cost"), [
    ("humans", (162.0931, 70.0848), (144.8749, 79.4114), 19.6605),
    ("orcs", (123.6523, 48.4620), (130.5404, 38.6796), 11.9727)])
def test_a_point_a_route_reaches_in_a_turn_is_within_the_reach(race, at, goal, cost):
    """Units 4 cm deep on the demo map whose way to a point within a turn first faces
    them another way, for their ranks: the reach's own paths take such first
    steps, so `cost_at` finds a way within the turn, within 0.1% of the route's
    (whose bends move farther), where without them it said the point was out of
    reach."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit(race, depth=4.0))
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(cost, abs=1e-4) and rt.turns == 1
    reach = engine.reach(g, at)
    path, found = reach._best_within(goal)
    assert rt.cost <= found <= min(rt.cost * 1.001, g.unit.move)
    assert engine.price_path(g, path).cost == pytest.approx(found, rel=1e-12)
    assert reach.cost_at(goal) == found


def test_a_point_the_reach_prices_just_past_the_turn_is_routed_within_it():
    """Hill trolls 2 cm deep on the demo map, from (165.0751, 16.0132) to (174.5401,
    30.4615): the reach's own paths price the point a hair past the turn's 20
    (20.0094), the route's search finds a way within it, round the corner at
    (165, 17); where the reach's paths price a point past the allowance but
    within 5% of it, `cost_at` asks the route's search too, so it says what the
    route says."""
    at, goal, cost = (165.0751, 16.0132), (174.5401, 30.4615), 19.9929
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("hill trolls", depth=2.0))
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(cost, abs=1e-4) and rt.turns == 1
    reach = engine.reach(g, at)
    assert reach._best_within(goal) is None
    assert 20.0 < reach._wide._best_path(goal)[1] <= 20.02
    assert reach.cost_at(goal) == pytest.approx(rt.cost, rel=1e-12)


def test_a_path_that_faces_the_ranks_first_keeps_that_step_as_its_bends_move():
    """Hill trolls 1 cm deep on the demo map, from (105.8732, 32.7877) to (90.6864,
    24.2931): the reach's path first faces the ranks with a step a hair long.  Its
    bends moved as a unit without ranks would move them, that step was dropped,
    and the point was priced a hair past the turn's 20 (20.016); moved with the
    step kept, the reach's own path prices it as the route does, 19.7973."""
    at, goal = (105.8732, 32.7877), (90.6864, 24.2931)
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("hill trolls", depth=1.0))
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(19.7973, abs=1e-4) and rt.turns == 1
    reach = engine.reach(g, at)
    path, found = reach._best_within(goal)
    assert found == pytest.approx(rt.cost, rel=1e-9)
    assert math.dist(path[0], path[1]) <= FACE_STEP * g.cell * (1 + 1e-9)
    assert engine.price_path(g, path).cost == pytest.approx(found, rel=1e-12)
    assert reach.cost_at(goal) == found


def test_a_reach_point_faces_the_ranks_past_an_edge_of_ground():
    """Goblins 2 cm deep on the demo map, from (36, 30.0090), by a wood on a hill, to
    (34.6154, 26.5850): after a first step facing 148 degrees the rear ranks stand in
    the wood but off the hill's steep slope, 3.9244; facing 147 they climb it too.
    No facing of the 32 (11.25 degrees apart) comes within 6% of that, and
    `cost_at` took the best of them (4.1731).
    `route` found the facing from the lattice's path; `cost_at` now also tries the
    facings that put the ranks just past each edge of ground near them."""
    at, goal = (36.0, 30.008963539589356), (34.61540159046082, 26.585012851712104)
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("goblins", depth=2.0))
    rt = engine.route(g, at, goal)
    assert rt.cost == pytest.approx(3.9244, abs=1e-4)
    steps = facing_points(g, np.array([at]))[0]
    assert min(engine.price_path(g, [at, tuple(q), goal]).cost for q in steps) > rt.cost * 1.06
    assert engine.reach(g, at).cost_at(goal) == pytest.approx(rt.cost, rel=1e-9)
