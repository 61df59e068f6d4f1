"""The network highway: landmark-bounded A* finds what the full grid search finds."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import engine
from bench.conftest import campaign_map
from engine import terrain
from engine.search import _kernels as skern
from engine.search import highway
from engine.search._state import _NO_LANDMARKS, _workspace
from engine.search.front import _start_cell
from engine.search.highway import Highway
from engine.search.paths import _polyline

from .conftest import MAPS, battlefield, feature, line, rect

_HIGHWAYS = {}  # (map, depth) -> Highway, built once for the hypothesis examples


def lattice(g, a, b) -> float:
    """The cost of the route on the step lattice, as the highway finds it."""
    return engine.route(g, a, b, any_angle=False).cost


def wild(seed, n=120):
    """Scrub, woods and bog blobs, a river with a bridge, and bent roads: n x n cm, 1 cm cells."""
    rng = np.random.default_rng(seed)
    feats = [feature("scrub", rect(-1, -1, n + 1, n + 1))]
    for _ in range(25):
        x, y = rng.uniform(0, n, 2)
        r = rng.uniform(4, 15)
        feats.append(feature(str(rng.choice(["woods", "bog", "broken ground"])),
                             rect(x - r, y - r, x + r, y + r)))
    feats.append(feature("river", line((-1, 0.6 * n), (n + 1, 0.62 * n)), width=3))
    feats.append(feature("bridge", line((0.3 * n, 0.55 * n), (0.3 * n, 0.68 * n)), width=4))
    for j in (0.2, 0.5, 0.8):
        bends = [(x, j * n + rng.uniform(-5, 5)) for x in np.linspace(0, n, 6)]
        feats.append(feature("road", line(*bends), width=2))
        feats.append(feature("road", line(*[(y, x) for x, y in bends]), width=2))
    return engine.load_map(battlefield(feats, n, n, cell=1.0))


def _point(g, flat):
    """The centre of a cell given by its flat index."""
    return g.grid.rc_to_xy(divmod(int(flat), g.grid.shape[1]))


def cell_cost(grid, a, b, landmarks):
    ws = _workspace(grid)
    s, t = _start_cell(grid, a, "a"), _start_cell(grid, b, "b")
    n = ws.run(grid, s, t, math.inf, landmarks(t) if landmarks else _NO_LANDMARKS)
    d = ws.dist[t]
    ws.reset(n)
    return d, n


@pytest.mark.parametrize("seed", range(3))
def test_highway_cost_equals_the_full_grid_search(rules, seed):
    g = engine.cost_grid(wild(seed), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=6)
    assert hw.symmetric and len(hw.cells) == 6
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    for a, b in rng.choice(open_cells, (12, 2)):
        pa, pb = _point(g, a), _point(g, b)
        full, full_n = cell_cost(g, pa, pb, None)
        fast, fast_n = cell_cost(g, pa, pb, hw._bounds)
        assert fast == pytest.approx(full, rel=1e-12, abs=1e-9)  # cell to cell: exact
        assert fast_n <= full_n * 1.05
        assert abs(hw.route(pa, pb).cost - lattice(g, pa, pb)) <= g.cell


@pytest.mark.parametrize("race, depth", [("humans", 4.0), ("goblins", 2.0)])
def test_highway_with_rear_ranks_and_slopes_within_a_cell(rules, race, depth):
    bf = engine.load_map(MAPS / "demo.geojson")
    g = engine.cost_grid(bf, rules, rules.unit(race, depth=depth))
    hw = Highway(g, landmarks=4)
    assert not hw.symmetric  # steep hills, rear ranks and a narrow bridge
    for a, b in [((30, 40), (170, 95)), ((5, 60), (175, 60)), ((120, 110), (20, 20))]:
        assert abs(hw.route(a, b).cost - lattice(g, a, b)) <= g.cell


def test_highway_lower_bound_never_overestimates(rules):
    """Every landmark bound at every cell is at most the true cost to the goal."""
    g = engine.cost_grid(wild(5, n=60), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=5)
    goal = _start_cell(g, (50.5, 10.5), "goal")
    # symmetric costs
    to_goal = engine.reach(g, (50.5, 10.5), 1e9, any_angle=False).to_array().ravel()
    fields, bounds = hw._bounds(goal)
    ok = np.isfinite(to_goal)
    for f, fwd, back in zip(fields.T, bounds[0], bounds[1], strict=True):
        reached = ok & np.isfinite(f)
        assert (fwd - f[reached] <= to_goal[reached] + 1e-9).all()
        assert (f[reached] + back <= to_goal[reached] + 1e-9).all()


def test_highway_lower_bound_never_overestimates_uphill(rules):
    """Where slopes make costs depend on the direction, the bound uses each cell's cost to
    a landmark less the goal's, which the triangle inequality keeps below the cost to the
    goal (the field of costs to the goal is the flow field's)."""
    g = engine.cost_grid(engine.load_map(MAPS / "crossings.geojson"), rules,
                         rules.unit("humans", depth=0))
    hw = Highway(g, landmarks=4)
    assert not hw.symmetric
    for xy in [(60.5, 30.5), (150.5, 120.5)]:
        goal = _start_cell(g, xy, "goal")
        to_goal = engine.flow_field(g, [xy]).cost.ravel()
        fields, bounds = hw._bounds(goal)
        assert (bounds[0] == -np.inf).all()  # no bound the other way round
        ok = np.isfinite(to_goal)
        for f, back in zip(fields.T, bounds[1], strict=True):
            reached = ok & np.isfinite(f)
            assert (f[reached] + back <= to_goal[reached] + 1e-9).all()
            assert (f[reached] + back > to_goal[reached] - 1.0).mean() > 0.01  # some tight


@pytest.mark.parametrize("landmarks", [0, 4])
def test_a_star_on_shared_rows_finds_the_heap_search_costs(rules, monkeypatch, landmarks):
    """On a grid too big for the whole step table (made so), once the rows cells share
    are built (`CostGrid.outgoing_steps`, as `Highway` builds them) an A* reads them in
    list buckets: the costs of `search`'s heap, with the landmarks or without them, and
    after its first queue is outgrown."""
    monkeypatch.setattr(terrain.costgrid, "_TABLE_BYTES", 8 * 2**20)
    g = engine.cost_grid(engine.load_map(MAPS / "crossings.geojson"), rules,
                         rules.unit("humans", depth=0))
    a = g.kernel_args
    assert not a.table_cost.size and "outgoing_steps" not in vars(g)
    rng = np.random.default_rng(landmarks)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    pairs = [(_point(g, p), _point(g, q)) for p, q in rng.choice(open_cells, (6, 2))]
    heap = [cell_cost(g, p, q, None) for p, q in pairs]
    bounds = Highway(g, landmarks)._bounds if landmarks else None
    row, cost = g.outgoing_steps  # built by the highway, or here
    k = len(a.step_dr)
    into = np.flatnonzero((a.flat_of[a.flat] == 0.0) & np.isfinite(a.base))
    assert (row[into] >= 0).all() and cost.size < into.size * k  # shared, every one
    _workspace(g).stack = np.empty((0, 1), dtype=np.int32)  # outgrown at once

    def heap_search(*args):
        raise AssertionError("the heap search ran")

    monkeypatch.setattr(engine.search._kernels, "search", heap_search)
    for (p, q), (expected, _) in zip(pairs, heap, strict=True):
        assert cell_cost(g, p, q, bounds)[0] == pytest.approx(expected, rel=1e-12)
    assert _workspace(g).stack.shape[1] > 1


def test_shared_rows_of_steps_out_are_the_step_table_rows(rules, monkeypatch):
    def grid():
        return engine.cost_grid(engine.load_map(MAPS / "demo.geojson"), rules,
                                rules.unit("humans", depth=0))

    g = grid()
    a = g.kernel_args
    k = len(a.step_dr)
    row, cost = g.outgoing_steps
    into = np.flatnonzero(row >= 0)
    assert set(into) == set(np.flatnonzero((a.flat_of[a.flat] == 0.0) & np.isfinite(a.base)))
    np.testing.assert_array_equal(cost.reshape(-1, k)[row[into]],
                                  a.table_cost.reshape(-1, k)[into])
    assert len(np.unique(cost.reshape(-1, k), axis=0)) == cost.size // k < into.size
    # All or nothing: one row short of the budget, there are none (a search needs them all).
    monkeypatch.setattr(terrain.costgrid, "_TABLE_BYTES", (cost.size - k) * 8)
    monkeypatch.setattr(terrain.costgrid, "_ROWS_CHUNK", 1009)
    short = grid()
    assert [x.size for x in short.outgoing_steps] == [0, 0]
    assert short.incoming_steps[1].size > 0  # the flow fields' rows are kept while they fit


def test_highway_no_route(rules):
    feats = [feature("river", line((20, -1), (20, 21)), width=4),
             feature("road", line((0, 10), (40, 10)), width=2)]
    g = engine.cost_grid(engine.load_map(battlefield(feats)), rules, rules.unit("humans"))
    hw = Highway(g, landmarks=2)
    with pytest.raises(engine.NoRouteError):
        hw.route((5, 10), (35, 10))
    assert cell_cost(g, (5, 10), (15, 12), hw._bounds)[0] == pytest.approx(
        cell_cost(g, (5, 10), (15, 12), None)[0])
    # A place's field shows it too, before any search (it flooded the near bank).
    hw.add_place((35, 10))
    across = _start_cell(g, (5, 10), "a"), _start_cell(g, (35, 10), "b")
    assert hw._plan(*across)[2] is None  # (from it, rear ranks: the landmarks show it)
    front = Highway(engine.cost_grid(g.battlefield, g.rules, rules.unit("humans", depth=0)),
                    landmarks=2, places=[(35, 10)])
    assert front._reversible and front._plan(*across[::-1])[2] is None  # searched backwards
    for a, b in (((5, 10), (35, 10)), ((35, 10), (5, 10))):
        with pytest.raises(engine.NoRouteError, match=r"^no route from \(\d+, 10\) to "):
            hw.route(a, b)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_highway_refuses_bad_landmark_counts(rules, bad):
    g = engine.cost_grid(engine.load_map(battlefield([])), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match="landmarks"):
        Highway(g, landmarks=bad)


def test_landmarks_stand_on_the_network_and_spread_out(rules):
    g = engine.cost_grid(wild(1), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=4)
    pts = np.array(hw.landmarks)
    assert np.isfinite(g.base.ravel()[hw.cells]).all()
    exits = [np.hypot(*(p - q)) for i, p in enumerate(pts) for q in pts[i + 1:]]
    assert min(exits) > 40  # a 120 cm map: four landmarks far apart


@pytest.mark.parametrize(("seed", "depth"), [(0, 4.0), (0, 6.0), (1, 6.0)])
def test_highway_with_rear_ranks_within_a_cell_on_wild_maps(rules, seed, depth):
    g = engine.cost_grid(wild(seed), rules, rules.unit("humans", depth=depth, frontage=2))
    hw = Highway(g, landmarks=4)
    assert not hw.rows  # rear ranks: the trail search, not the shared rows
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    for a, b in rng.choice(open_cells, (15, 2)):
        pa, pb = _point(g, a), _point(g, b)
        assert abs(hw.route(pa, pb).cost - lattice(g, pa, pb)) <= g.cell


@settings(max_examples=60, deadline=None)
@given(which=st.sampled_from(["crossings", "wild 2", "wild 3"]), depth=st.sampled_from([0.0, 4.0]),
       pick=st.tuples(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True)))
@example(which="wild 2", depth=4.0, pick=(0.9, 0.78125))  # 2.7 cm apart, one path a cell
def test_highway_on_random_pairs_of_the_small_maps(which, depth, pick):
    """Cell to cell the same cost as the full grid search, so route costs agree within
    a cell; with rear ranks too (each search keeps every path no other beats, whatever
    order it visits cells in), and each route costs its path's price, no less than the
    front alone would pay on it."""
    key = (which, depth)
    if key not in _HIGHWAYS:
        rules = engine.load_rules("fantasy-warlord")
        bf = (engine.load_map(MAPS / "crossings.geojson") if which == "crossings"
              else wild(int(which.split()[1])))
        g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))
        _HIGHWAYS[key] = Highway(g, landmarks=5)
    hw = _HIGHWAYS[key]
    g = hw.grid
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    pa, pb = (_point(g, open_cells[int(p * open_cells.size)]) for p in pick)
    try:
        full = engine.route(g, pa, pb, any_angle=False)
    except engine.NoRouteError:
        with pytest.raises(engine.NoRouteError):
            hw.route(pa, pb)
        return
    fast = hw.route(pa, pb)
    assert abs(fast.cost - full.cost) <= g.cell
    assert cell_cost(g, pa, pb, hw._bounds)[0] == pytest.approx(
        cell_cost(g, pa, pb, None)[0], rel=1e-9, abs=1e-9)
    if depth == 0.0:
        return
    front = engine.cost_grid(g.battlefield, g.rules, dataclasses.replace(g.unit, depth=0.0))
    for rt in (fast, full):
        assert rt.cost == pytest.approx(engine.price_path(g, rt.path).cost, rel=1e-12)
        assert engine.price_path(front, rt.path).cost <= rt.cost * (1 + 1e-12)


def plan_cost(grid, a, b, plan):
    """Cell-to-cell cost and cells touched of the search `Highway._plan` chooses."""
    ws = _workspace(grid)
    s, t, bounds = plan(_start_cell(grid, a, "a"), _start_cell(grid, b, "b"))
    n = ws.run(grid, s, t, math.inf, bounds)
    d = ws.dist[t]
    ws.reset(n)
    return d, n


@pytest.mark.parametrize("seed", [0, 2])
def test_routes_to_and_from_places_cost_what_the_full_search_finds(rules, seed):
    g = engine.cost_grid(wild(seed), rules, rules.unit("humans", depth=0, frontage=2))
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    towns = [_point(g, c) for c in rng.choice(open_cells, 3, replace=False)]
    hw = Highway(g, landmarks=4, places=towns)
    assert hw.places == towns and hw._reversible
    alt = Highway(g, landmarks=4)
    ours = theirs = 0
    for c in rng.choice(open_cells, 8):
        for town in towns:
            for a, b in ((_point(g, c), town), (town, _point(g, c))):
                full = cell_cost(g, a, b, None)[0]
                fast, fast_n = plan_cost(g, a, b, hw._plan)
                assert fast == pytest.approx(full, rel=1e-12, abs=1e-9)  # cell to cell: exact
                assert abs(hw.route(a, b).cost - lattice(g, a, b)) <= g.cell
                ours += fast_n
                theirs += cell_cost(g, a, b, alt._bounds)[1]
    assert ours < 0.7 * theirs  # the place's own field bounds more tightly than landmarks


def test_a_place_searches_with_its_own_exact_field(rules):
    g = engine.cost_grid(wild(3, n=60), rules, rules.unit("humans", depth=0, frontage=2))
    town = (50.5, 10.5)
    hw = Highway(g, landmarks=3, places=[town, (50.2, 10.9)])  # one cell: one place
    assert hw.places == [town]
    here = _start_cell(g, (5.5, 40.5), "start")
    goal = _start_cell(g, town, "goal")
    to_town = engine.flow_field(g, [town]).cost.ravel()
    for source, target in ((here, goal), (goal, here)):  # from the town: searched backwards
        s, t, (fields, bounds) = hw._plan(source, target)
        assert (s, t) == (here, goal) and fields.shape == (g.base.size, 1)
        ok = np.isfinite(to_town)
        bound = np.maximum(bounds[0] - fields[:, 0], fields[:, 0] + bounds[1])
        assert (bound[ok] <= to_town[ok] + 1e-9).all()
        assert np.allclose(bound[ok], to_town[ok], rtol=1e-6, atol=1e-3)  # tight everywhere


@pytest.mark.parametrize(("mapname", "depth"), [("demo", 0.0), ("wild", 4.0)])
def test_a_route_from_a_place_is_not_searched_backwards_where_direction_matters(
        rules, mapname, depth):
    bf = engine.load_map(MAPS / "demo.geojson") if mapname == "demo" else wild(1)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth, frontage=2))
    a, b = ((30.25, 40.25), (170.25, 95.25)) if mapname == "demo" else ((5.5, 5.5), (110.5, 100.5))
    hw = Highway(g, landmarks=3, places=[a])
    assert not hw._reversible  # slopes on the demo map; rear ranks on the wild one
    source, target = _start_cell(g, a, "a"), _start_cell(g, b, "b")
    s, t, (fields, _) = hw._plan(source, target)
    assert (s, t) == (source, target) and fields is hw.fields
    assert abs(hw.route(a, b).cost - lattice(g, a, b)) <= g.cell
    assert abs(hw.route(b, a).cost - lattice(g, b, a)) <= g.cell  # to the place


def test_a_place_added_later_serves_as_one_given_at_first(rules, monkeypatch):
    g = engine.cost_grid(wild(3, n=60), rules, rules.unit("humans", depth=0, frontage=2))
    town, here = (50.5, 10.5), (5.5, 40.5)
    given = Highway(g, landmarks=3, places=[town])
    later = Highway(g, landmarks=3)
    later.add_place(town)
    later.add_place((50.9, 10.1))  # the same cell: nothing new
    assert later.places == given.places == [town]
    cells = _start_cell(g, here, "a"), _start_cell(g, town, "b")
    np.testing.assert_array_equal(later._plan(*cells)[2][0], given._plan(*cells)[2][0])
    assert later.route(here, town).cost == given.route(here, town).cost
    monkeypatch.setattr("engine.search.highway.memory_bytes", lambda: 2 * later.fields.nbytes)
    with pytest.raises(engine.InputError, match=r"^no room for another place: the 1 places "):
        later.add_place(here)
    assert later.places == [town]


def path_cost(g, cells):
    """What the cell path costs, step by step (its straight runs priced whole)."""
    if len(cells) < 2:
        return 0.0
    return engine.price_path(g, _polyline(g, cells)).cost


@pytest.mark.parametrize(("seed", "threads"), [(0, 2), (1, 2), (2, 2), (0, 1), (1, 1)])
def test_routes_searched_from_both_ends_cost_what_the_full_search_finds(rules, seed, threads,
                                                                        monkeypatch):
    """On two threads (one a side) and on one (popping the lower side)."""
    monkeypatch.setattr("engine.search.highway._FIRST_POOL", 16)  # its lists must grow, and do
    monkeypatch.setattr("numba.get_num_threads", lambda: threads)
    g = engine.cost_grid(wild(seed), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=4)
    assert hw._both_ways
    rng = np.random.default_rng(seed + 10)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    for a, b in rng.choice(open_cells, (25, 2)):
        pa, pb = _point(g, a), _point(g, b)
        full = cell_cost(g, pa, pb, None)[0]
        cells, _ = hw._find(int(a), int(b))
        assert cells[0] == a and cells[-1] == b
        assert path_cost(g, cells) == pytest.approx(full, rel=1e-9, abs=1e-9)
        assert abs(hw.route(pa, pb).cost - lattice(g, pa, pb)) <= g.cell
    assert hw._work.pool.shape[1] > 2 * 16 and hw._work.touched.shape[1] > 16
    assert np.isinf(hw._work.dist).all() and (hw._work.parent == -1).all()  # all reset


def islands(rules):
    """Scrub with a road and a wood, and two islands in moats: the grid and a point on
    each island, and one on the shore."""
    n = 80
    feats = [feature("scrub", rect(-1, -1, n + 1, n + 1)), feature("woods", rect(5, 5, 25, 20)),
             feature("road", line((0, 10), (80, 12)), width=2)]
    for x0, y0, x1, y1 in ((30, 30, 50, 50), (56, 36, 72, 52)):
        ring = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
        feats += [feature("river", line(a, b), width=3) for a, b in itertools.pairwise(ring)]
    g = engine.cost_grid(engine.load_map(battlefield(feats, n, n, cell=1.0)), rules,
                         rules.unit("humans", depth=0))
    return g, (40.5, 40.5), (64.5, 44.5), (60.5, 65.5)


@pytest.mark.parametrize("threads", [1, 2])
def test_both_ends_empty_a_queue_and_regrow_on_every_route(rules, threads, monkeypatch):
    """Moats wall off two islands where no landmark stands, so no landmark bound shows
    one cut off from the other: a side must empty its queue.  Both sides' lists are
    shrunk before every route, so every route searched outgrows them and starts
    again.  (The blocks' bound does show it, as the islands' costs out of their
    blocks are inf: `test_blocks_show_islands_cut_off`; here it is left out.)"""
    monkeypatch.setattr("numba.get_num_threads", lambda: threads)
    g, one, other, shore = islands(rules)
    hw = Highway(g, landmarks=4)
    assert hw._both_ways and hw._blocks is not None
    hw._blocks = None
    for xy in (one, other):
        assert np.isinf(hw.fields[_start_cell(g, xy, "a")]).all()  # no landmark bound there
    rng = np.random.default_rng(3)
    pairs = [(one, other), (other, one), (one, (35.5, 44.5)), (shore, one)]
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    pairs += [(_point(g, a), _point(g, b)) for a, b in rng.choice(open_cells, (12, 2))]
    emptied = 0
    for pa, pb in pairs:
        a, b = _start_cell(g, pa, "a"), _start_cell(g, pb, "b")
        hw._find(a, b)  # makes `_work`
        hw._work.pool = np.empty((2, 2), dtype=np.int32)
        hw._work.touched = np.empty((2, 1), dtype=np.int32)
        cells, searched = hw._find(a, b)
        full = cell_cost(g, pa, pb, None)[0]
        if full == math.inf:
            assert cells is None
            emptied += searched > 2  # not shown cut off by the landmarks before searching
        else:
            assert cells[0] == a and cells[-1] == b
            assert path_cost(g, cells) == pytest.approx(full, rel=1e-9, abs=1e-9)
        assert hw._work.touched.shape[1] > 1 or searched <= 2  # it grew
        assert np.isinf(hw._work.dist).all() and (hw._work.parent == -1).all()  # all reset
    assert emptied >= 2


@pytest.mark.parametrize("threads", [1, 2])
def test_blocks_show_islands_cut_off(rules, threads, monkeypatch):
    """An island's cells have no way out of their block (cost inf), so a route between
    the islands, or from the shore to one, is known to fail before any search; one
    within an island is searched and costs what the full search finds."""
    monkeypatch.setattr("numba.get_num_threads", lambda: threads)
    g, one, other, shore = islands(rules)
    hw = Highway(g, landmarks=4)
    for xy in (one, other):
        assert hw._blocks.cells[_start_cell(g, xy, "a"), 1] == np.inf
    for pa, pb in [(one, other), (other, one), (shore, one), (one, shore)]:
        assert hw._find(_start_cell(g, pa, "a"), _start_cell(g, pb, "b")) == (None, 2)
        with pytest.raises(engine.NoRouteError):
            hw.route(pa, pb)
    near = (35.5, 44.5)
    cells, searched = hw._find(_start_cell(g, one, "a"), _start_cell(g, near, "b"))
    assert searched > 2
    assert path_cost(g, cells) == pytest.approx(cell_cost(g, one, near, None)[0], rel=1e-9)


def test_blocks_across_a_river_no_one_crosses(rules):
    """A river one cell wide, no bridge, cuts the table in two, and long steps jump it:
    each block lies on both banks, and its rim's costs to the northern landmarks come
    from the north bank alone (woods), while the southern bank's roads join the
    blocks' southern halves cheaply.  The bound holds on both banks."""
    n = 80
    feats = [feature("scrub", rect(-1, -1, n + 1, n + 1)),
             feature("woods", rect(-1, -1, n + 1, 39)),
             feature("river", line((-1, 40), (n + 1, 40)), width=1),
             feature("road", line((-1, 62), (n + 1, 62)), width=2)]
    feats += [feature("road", line((x, -1), (x, n + 1)), width=2) for x in (20, 60)]
    g = engine.cost_grid(engine.load_map(battlefield(feats, n, n, cell=1.0)), rules,
                         rules.unit("humans", depth=0))
    hw = Highway(g, landmarks=6)
    label = hw._blocks.cells[:, 0].reshape(g.grid.shape)
    assert (np.unique(label[35]) == np.unique(label[45])).all()  # the banks share blocks
    assert np.isinf(hw.fields[_start_cell(g, (70.5, 50.5), "b")]).any()
    for end in [(70.5, 50.5), (10.5, 75.5)]:
        cell = _start_cell(g, end, "b")
        exact = engine.flow_field(g, [end]).cost.ravel()
        assert (_bounds_to(hw, cell) <= exact + 2 * hw.slack).all()
    a, b = _start_cell(g, (10.5, 50.5), "a"), _start_cell(g, (70.5, 50.5), "b")
    cells, _ = hw._find(a, b)
    assert path_cost(g, cells) == pytest.approx(cell_cost(g, (10.5, 50.5), (70.5, 50.5), None)[0])


def test_blocks_with_no_rim_at_all(rules, monkeypatch):
    """Open ground (the cheapest) everywhere but for a scrub island in a wide moat: the
    island is the one block, and no cell of no block is a step from it, so nothing
    has a way out and no route leaves it."""
    feats = [feature("scrub", rect(10, 10, 30, 30))]
    ring = [(10, 10), (30, 10), (30, 30), (10, 30), (10, 10)]
    feats += [feature("river", line(a, b), width=10) for a, b in itertools.pairwise(ring)]
    g = engine.cost_grid(engine.load_map(battlefield(feats, 40, 40, cell=1.0)), rules,
                         rules.unit("humans", depth=0))
    monkeypatch.setattr("engine.search.highway._cost_to_any", None)  # no field to build
    hw = Highway(g, landmarks=2)
    island = _start_cell(g, (20.5, 20.5), "a")
    assert hw._blocks.cells[:, 0].max() == 0 and hw._blocks.cells[island, 0] == 0
    assert np.isinf(hw._blocks.cells[:, 1][hw._blocks.cells[:, 0] == 0]).all()
    assert hw._find(island, _start_cell(g, (2.5, 2.5), "b")) == (None, 2)
    assert hw.route((20.5, 20.5), (23.5, 19.5)).cost == pytest.approx(
        engine.route(g, (20.5, 20.5), (23.5, 19.5), any_angle=False).cost)


def test_a_field_to_many_cells_is_built_in_halves_where_its_queue_would_overflow(
        rules, monkeypatch):
    g = engine.cost_grid(wild(0), rules, rules.unit("humans", depth=0))
    cells = np.flatnonzero(np.isfinite(g.base.ravel()))[::7]
    whole = highway._cost_to_any(g, cells)
    assert np.array_equal(whole, engine.flow_field(g, [_point(g, c) for c in cells]).cost.ravel())
    real, asked = highway._costs_to, []

    def small(grid, some):  # a queue for at most 50 cells
        asked.append(some.size)
        return real(grid, some) if some.size <= 50 else None

    monkeypatch.setattr("engine.search.highway._costs_to", small)
    assert np.array_equal(highway._cost_to_any(g, cells), whole)
    assert asked[0] == cells.size and sum(n for n in asked if n <= 50) == cells.size
    monkeypatch.setattr("engine.search.highway._costs_to", lambda grid, some: None)
    with pytest.raises(engine.InputError, match="would outgrow its queue"):
        highway._cost_to_any(g, cells[:3])


def _step_costs(g):
    """Every step's price out of every cell, (cells, steps): inf off the grid or blocked."""
    a = g.kernel_args
    row, table = g.outgoing_steps
    k = len(a.step_dr)
    flat = a.flat_of[a.flat]
    cost = np.where(row[:, None] >= 0, table.reshape(-1, k)[np.maximum(row, 0)], np.inf)
    cost = np.where(flat[:, None] > 0, flat[:, None] * a.step_len[None, :], cost)
    return np.where(np.isfinite(a.base)[:, None], cost, np.inf)


def _neighbours(g):
    """Each cell's neighbour one step away, (cells, steps): -1 off the grid."""
    a = g.kernel_args
    rows, cols = g.grid.shape
    r, c = np.divmod(np.arange(g.base.size), cols)
    nr, nc = r[:, None] + a.step_dr[None, :], c[:, None] + a.step_dc[None, :]
    return np.where((nr >= 0) & (nr < rows) & (nc >= 0) & (nc < cols), nr * cols + nc, -1)


def test_blocks_part_the_ground_no_step_joins(rules):
    """No step joins two blocks; the rims' costs to the landmarks and the cells' costs
    out of their blocks are what the fields and a flow field from every cell of no
    block give."""
    g = engine.cost_grid(wild(0), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=6)
    b = hw._blocks
    label = b.cells[:, 0].astype(np.int64)
    count = label.max() + 1
    assert count >= 4 and (label[np.isinf(g.base.ravel())] == -1).all()
    assert (g.base.ravel()[label >= 0] > g.base[np.isfinite(g.base)].min()).all()
    nb = _neighbours(g)
    there = np.where(nb >= 0, label[np.maximum(nb, 0)], -1)
    inside = (label[:, None] >= 0) & (there >= 0)
    assert (there[inside] == np.broadcast_to(label[:, None], there.shape)[inside]).all()
    open_ = np.isfinite(g.base.ravel())
    for j in range(count):
        rim = open_ & (label == -1) & (there == j).any(axis=1)
        costs = hw.fields[rim].astype(np.float64)
        costs[np.isinf(costs)] = np.nan
        assert b.lo[j] == pytest.approx(np.nanmin(costs, axis=0))
        assert b.hi[j] == pytest.approx(np.nanmax(costs, axis=0))
    free = np.flatnonzero(open_ & (label == -1))
    out = engine.flow_field(g, [_point(g, c) for c in free]).cost.ravel()
    assert b.cells[:, 1] == pytest.approx(out.astype(np.float32), rel=1e-6)


def _bounds_to(hw, end, blocks=True):
    """`skern.bounds._bound_to` at every cell, to one end, with the blocks' terms or not."""
    rows, exits = hw._bound_to(end)
    if not blocks:
        exits[0] = -np.inf
    return np.array([skern.bounds._bound_to(hw.fields, rows, exits, hw._blocks.cells, v, 0.0)
                     for v in range(hw.grid.base.size)])


@pytest.mark.parametrize("seed", [0, 1])
def test_blocks_bound_never_overestimates_and_never_falls_faster_than_a_step(rules, seed):
    """The bounds to ends deep in blocks, at every cell: never above the exact cost to
    the end, never more apart along a step than the step costs (but for the float32
    slack) where the step's cells reach the end, and well above the landmarks' alone
    somewhere, both within the end's block and beyond it."""
    g = engine.cost_grid(wild(seed), rules, rules.unit("humans", depth=0, frontage=2))
    hw = Highway(g, landmarks=4)
    out = hw._blocks.cells[:, 1]
    ends = np.argsort(np.where(np.isfinite(out), out, -1.0))[-3:]  # the deepest
    cost, nb = _step_costs(g), _neighbours(g)
    for end in ends:
        h = _bounds_to(hw, end)
        exact = engine.flow_field(g, [_point(g, end)]).cost.ravel()
        assert (h <= exact + 2 * hw.slack).all()
        step = np.isfinite(cost) & (nb >= 0) & np.isfinite(exact)[:, None]
        u, k = np.nonzero(step)
        assert (h[u] <= cost[u, k] + h[nb[u, k]] + 2 * hw.slack).all()
        raised = h - _bounds_to(hw, end, blocks=False)
        inside = hw._blocks.cells[:, 0] == hw._blocks.cells[end, 0]
        assert raised[inside].max() > 0.1 * out[end] and raised[~inside].max() > out[end]


def test_both_ends_with_no_route_between_them_or_one_cell(rules):
    feats = [feature("river", line((20, -1), (20, 21)), width=4),
             feature("road", line((0, 10), (40, 10)), width=2)]
    g = engine.cost_grid(engine.load_map(battlefield(feats)), rules,
                         rules.unit("humans", depth=0))
    hw = Highway(g, landmarks=2)
    assert hw._both_ways
    with pytest.raises(engine.NoRouteError):
        hw.route((5, 10), (35, 10))
    here = _start_cell(g, (5.1, 10.1), "a")
    assert hw._find(here, here)[0] == [here]
    assert hw.route((5.1, 10.1), (5.2, 10.2)).cost == pytest.approx(
        engine.route(g, (5.1, 10.1), (5.2, 10.2), any_angle=False).cost)


@pytest.mark.parametrize(("feats", "unit"), [
    ([feature("hedge", line((20, 0), (20, 20)), width=1, cost=2.0)], {}),  # a flat cost
    ([feature("river", line((20, -1), (20, 21)), width=4),
      feature("bridge", line((15, 10.25), (25, 10.25)), width=3)], {"frontage": 8}),  # narrow
])
def test_entry_costs_and_narrow_passages_keep_routes_from_places_forwards(rules, feats, unit):
    g = engine.cost_grid(engine.load_map(battlefield(feats)), rules,
                         rules.unit("humans", depth=0, **unit))
    town, far = (5.25, 10.25), (35.25, 10.25)
    hw = Highway(g, landmarks=2, places=[town])
    assert g.enter.any() or g.narrow.any()
    assert not hw.symmetric and not hw._reversible
    cells = _start_cell(g, town, "a"), _start_cell(g, far, "b")
    assert hw._plan(*cells)[:2] == cells
    assert abs(hw.route(town, far).cost - lattice(g, town, far)) <= g.cell


@pytest.mark.parametrize(("places", "words"), [
    ("12", "^places must be a list, got str$"),
    (["12"], "^place 0: a point must be two numbers x,y, got '12'$"),
    ([(5, 5), (500, 5)], r"^place 1: point \(500, 5\) is off the table"),
    ([(20, 10)], r"^place 0: place \(20, 10\) is on impassable ground \(river\)$"),
])
def test_highway_refuses_bad_places(rules, places, words):
    feats = [feature("river", line((20, -1), (20, 21)), width=4)]
    g = engine.cost_grid(engine.load_map(battlefield(feats)), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match=words):
        Highway(g, landmarks=2, places=places)


def test_highway_on_a_campaign_map(rules, monkeypatch):
    """The benchmark's map at its --quick size: long routes between towns and random
    pairs cost exactly what the full grid search finds, touching fewer cells; to and
    from a town kept as a place, far fewer still."""
    n = 1024
    s = n / 4096
    g = engine.cost_grid(campaign_map(n), rules, rules.unit("humans", depth=0))
    town = (3800 * s, 3800 * s)
    hw = Highway(g, landmarks=8, places=[town])
    assert hw.fields.shape == (g.base.size, len(hw.cells))
    assert hw.rows and not g.kernel_args.table_cost.size  # shared rows, no whole table
    pairs = [((300 * s, 300 * s), (3800 * s, 3800 * s)), ((2 * s, 1700 * s), (4090 * s, 2400 * s)),
             ((1700 * s, 2 * s), (3100 * s, 4090 * s))]
    rng = np.random.default_rng(4)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    pairs += [(_point(g, a), _point(g, b)) for a, b in rng.choice(open_cells, (5, 2))]
    for pa, pb in pairs:
        full, full_n = cell_cost(g, pa, pb, None)
        fast, fast_n = cell_cost(g, pa, pb, hw._bounds)
        assert fast == pytest.approx(full, rel=1e-12, abs=1e-9)
        assert fast_n <= full_n
        assert abs(hw.route(pa, pb).cost - lattice(g, pa, pb)) <= g.cell
    for pa, pb in pairs[:3]:  # from both ends: the same cost, far fewer cells
        a, b = _start_cell(g, pa, "a"), _start_cell(g, pb, "b")
        cells, both_n = hw._both(a, b)  # (SE is a place: `route` would use its field)
        full, one_n = cell_cost(g, pa, pb, hw._bounds)
        assert path_cost(g, cells) == pytest.approx(full, rel=1e-9)
        assert both_n < one_n / 1.5
    # Between two points deep in blocks of roads the blocks' bound cuts the cells searched;
    # between two random points, each in a block, it raises the bound between the ends
    # too little to be taken (by 0 and 4%), and the search is the landmarks' alone (on
    # one thread: the same cells either way).
    monkeypatch.setattr("numba.get_num_threads", lambda: 1)
    moor, fen = (1350 * s, 2050 * s), (650 * s, 3450 * s)
    for pa, pb in [(moor, fen), pairs[3], pairs[5]]:
        assert all(hw._blocks.cells[_start_cell(g, xy, "a"), 0] >= 0 for xy in (pa, pb))
        a, b = _start_cell(g, pa, "a"), _start_cell(g, pb, "b")
        cells, blocks_n = hw._both(a, b)
        hw._blocks, blocks = None, hw._blocks
        alone, landmarks_n = hw._both(a, b)
        hw._blocks = blocks
        full = cell_cost(g, pa, pb, None)[0]
        assert path_cost(g, cells) == pytest.approx(full, rel=1e-9)
        assert path_cost(g, alone) == pytest.approx(full, rel=1e-9)
        if pa == moor:
            assert blocks_n < landmarks_n / 1.3
        else:
            assert blocks_n == landmarks_n
    for pa, pb in [((300 * s, 300 * s), town), (town, (2 * s, 1700 * s))]:
        full = cell_cost(g, pa, pb, None)[0]
        fast, fast_n = plan_cost(g, pa, pb, hw._plan)
        assert fast == pytest.approx(full, rel=1e-12, abs=1e-9)
        assert fast_n < cell_cost(g, pa, pb, hw._bounds)[1] / 3
        assert abs(hw.route(pa, pb).cost - lattice(g, pa, pb)) <= g.cell
