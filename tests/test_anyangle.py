"""Any-angle reach and routes: tape-measure answers against exact continuous optima.

The expected values are computed here without the engine's search: the
straight line on open ground, a one-dimensional minimisation over the crossing
point of one straight terrain edge, and the shortest path around a convex
impassable polygon by its corners (a visibility graph over them).
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

import engine
from engine.search import _kernels

from .conftest import battlefield, feature, line, rect
from .test_kernels import by_cell

FW = engine.load_rules("fantasy-warlord")


def _map(features, width=200, height=100, cell=0.5):
    """A map of the polygons ``features`` (kind, ring); a hill is 3 high and steep."""
    return engine.load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": width, "height": height, "units": "cm", "cell": cell},
        "features": [{"type": "Feature", "id": f"f{i}", "properties": {
                          "terrain": kind, **({"elevation": 3, "steep": True} if kind == "hill"
                                              else {})},
                      "geometry": {"type": "Polygon", "coordinates": [[*ring, ring[0]]]}}
                     for i, (kind, ring) in enumerate(features)],
    })


def _grid(features=(), cell=0.5, race="humans", **size):
    return engine.cost_grid(_map(features, cell=cell, **size), FW, FW.unit(race, depth=0))


OPEN_PAIRS = [((10, 10), (190, 47)), ((3.3, 91.7), (177.1, 4.2)), ((50, 50), (51.3, 98.9)),
              ((0.1, 0.1), (199.9, 99.9)), ((120.37, 20.11), (20.5, 80.25)),
              ((100, 50), (100, 50.3))]


@pytest.mark.parametrize("cell", [0.5, 1.25])
@pytest.mark.parametrize(("a", "b"), OPEN_PAIRS)
def test_open_ground_route_is_the_straight_line(a, b, cell):
    g = _grid(cell=cell)
    rt = engine.route(g, a, b, any_angle=True)
    line = math.dist(a, b)
    assert rt.path == [a, b]  # one straight move, no zigzag
    assert abs(rt.cost - line) <= 1e-4 * line  # within 0.01% (it is the line itself)
    assert engine.price_path(g, rt.path).cost == rt.cost


@pytest.mark.parametrize("depth", [2.0, 4.0])
@pytest.mark.parametrize(("a", "b"), [((30, 20), (49, 28)), *OPEN_PAIRS[:3]])
def test_open_ground_route_with_ranks_is_the_straight_line_too(a, b, depth):
    g = engine.cost_grid(_map(()), FW, FW.unit("humans", depth=depth))
    rt = engine.route(g, a, b)
    assert rt.path == [a, b]  # no bend that does not bend
    assert rt.cost == pytest.approx(math.dist(a, b), rel=1e-9)


def test_any_angle_is_the_default_and_the_lattice_an_option():
    g = _grid()
    assert engine.reach(g, (100.25, 50.25), 10).parent is not None
    assert engine.route(g, (10, 10), (190, 47)).path == [(10, 10), (190, 47)]
    assert engine.reach(g, (100.25, 50.25), 10, any_angle=False).parent is None
    assert len(engine.route(g, (10, 10), (190, 47), any_angle=False).path) > 2  # a zigzag
    (many,) = engine.reach_many(g, [(100.25, 50.25)], 10)
    assert many.parent is not None
    assert engine.reach_many(g, [(100.25, 50.25)], 10, any_angle=False)[0].parent is None
    with pytest.raises(engine.InputError, match="any_angle must be true or false"):
        engine.reach(g, (1, 1), 1, any_angle="yes")


def test_open_ground_reach_is_the_circle_from_the_units_own_point():
    g = _grid()
    at = (100.25, 50.25)  # on a cell corner: the old field measured from a centre 0.35 away
    r = engine.reach(g, at, 40, any_angle=True)
    worst = 0.0
    for angle in np.linspace(0, 2 * math.pi, 360, endpoint=False):
        q = (at[0] + 30 * math.cos(angle), at[1] + 30 * math.sin(angle))
        worst = max(worst, abs(r.cost_at(q) - 30.0) / 30.0)
    assert worst <= 1e-3  # within 0.1% of the distance
    assert r.cost_at(at) == 0.0
    # A unit 23.5 cm from its goal with a 24 cm move gets there; at 24.5 it does not.
    r24 = engine.reach(g, at, 24, any_angle=True)
    assert r24.reachable((at[0] + 23.5, at[1] + 3e-3))
    assert not r24.reachable((at[0] + 24.5, at[1]))
    assert abs(r.area / (math.pi * 40 * 40) - 1) < 0.01


def _refraction(start, goal, edge_a, edge_b, m_in):
    """The least cost from ``start`` (open ground) to ``goal`` (ground of multiplier
    ``m_in``) across the straight edge from ``edge_a`` to ``edge_b``."""
    def cost(t):
        x = (edge_a[0] + t * (edge_b[0] - edge_a[0]), edge_a[1] + t * (edge_b[1] - edge_a[1]))
        return math.dist(start, x) + m_in * math.dist(x, goal)
    best = minimize_scalar(cost, bounds=(0, 1), method="bounded", options={"xatol": 1e-12})
    return best.fun


WOODS_EDGES = [
    # An edge along cell boundaries, on the default grid and a coarse one; a slanted
    # edge, rasterised as a staircase of cells whose centres lie inside, on a fine grid
    # (on the default grid the staircase alone moves the optimum by about 0.15%).
    ([(100, -5), (205, -5), (205, 105), (100, 105)], ((100, -5), (100, 105)), 0.5),
    ([(100, -5), (205, -5), (205, 105), (100, 105)], ((100, -5), (100, 105)), 2.0),
    ([(80, -5), (205, -5), (205, 105), (120, 105)], ((80, -5), (120, 105)), 0.25),
]


@pytest.mark.parametrize(("ring", "edge", "cell"), WOODS_EDGES)
@pytest.mark.parametrize(("start", "goal"), [((20, 20), (150, 80)), ((10, 90), (140, 15)),
                                             ((60, 50), (180, 52))])
def test_route_into_woods_refracts_at_the_exact_optimum(ring, edge, cell, start, goal):
    g = _grid([("woods", ring)], cell=cell)
    m = FW.unit("humans").multipliers["woods"]
    best = _refraction(start, goal, *edge, m)
    rt = engine.route(g, start, goal, any_angle=True)
    assert abs(rt.cost - best) <= 1e-3 * best, (rt.cost, best)
    assert engine.price_path(g, rt.path).cost == rt.cost
    r = engine.reach(g, start, 1.01 * best, any_angle=True)
    assert abs(r.cost_at(goal) - best) <= 1e-3 * best


@pytest.mark.parametrize(("ring", "edge", "cell"), WOODS_EDGES[:2])
@pytest.mark.parametrize(("start", "goal"), [((150, 80), (20, 20)), ((104, 20), (30, 45)),
                                             ((190, 50), (40, 52))])
def test_route_out_of_woods_refracts_at_the_exact_optimum(ring, edge, cell, start, goal):
    """From inside the woods: the straight move the search finds first is bent on the
    edge where that is cheapest (from (104, 20) the straight line is 0.14% dearer)."""
    g = _grid([("woods", ring)], cell=cell)
    best = _refraction(goal, start, *edge, FW.unit("humans").multipliers["woods"])
    rt = engine.route(g, start, goal, any_angle=True)
    assert abs(rt.cost - best) <= 1e-3 * best, (rt.cost, best)
    assert engine.price_path(g, rt.path).cost == rt.cost
    r = engine.reach(g, start, 1.01 * best, any_angle=True)
    assert abs(r.cost_at(goal) - best) <= 1e-3 * best


def _around(poly, start, goal):
    """The shortest path from ``start`` to ``goal`` around the convex polygon ``poly``
    (a visibility graph over its corners)."""
    inside = Polygon(poly).buffer(-1e-7)  # moving along a side is allowed
    points = [start, goal, *poly]
    graph = nx.Graph()
    for p, q in itertools.combinations(points, 2):
        if not LineString([p, q]).intersects(inside):
            graph.add_edge(p, q, weight=math.dist(p, q))
    return nx.shortest_path_length(graph, start, goal, weight="weight")


BUILDINGS = [
    [(80, 30), (120, 30), (120, 70), (80, 70)],  # its raster is the polygon itself
    [(90, 25), (115, 35), (120, 60), (100, 75), (82, 55)],  # slanted sides: a staircase
]


def _raster_hull(g):
    """The convex hull of the impassable cells: what the engine's grid holds of a
    building (the cells whose centres lie inside it)."""
    rows, cols = np.nonzero(np.isinf(g.base))
    boxes = [box(c * g.cell, r * g.cell, (c + 1) * g.cell, (r + 1) * g.cell)
             for r, c in zip(rows.tolist(), cols.tolist(), strict=True)]
    return list(unary_union(boxes).convex_hull.exterior.coords)[:-1]


@pytest.mark.parametrize("poly", BUILDINGS)
@pytest.mark.parametrize(("start", "goal"), [((40, 50), (160, 50)), ((60, 20), (150, 80)),
                                             ((100, 5), (100, 95))])
def test_route_round_a_building_by_its_corners(poly, start, goal):
    """Within 0.1% of the shortest path round the building as the grid holds it, and,
    for a building whose sides lie on grid lines, round the polygon itself."""
    g = _grid([("building", poly)])
    rt = engine.route(g, start, goal, any_angle=True)
    best = _around(_raster_hull(g), start, goal)
    assert abs(rt.cost - best) <= 1e-3 * best, (rt.cost, best)
    assert engine.price_path(g, rt.path).cost == rt.cost
    if poly is BUILDINGS[0]:
        assert abs(rt.cost - _around(poly, start, goal)) <= 1e-3 * best


@pytest.mark.parametrize("poly", BUILDINGS)
def test_reach_round_a_building_by_its_corners(poly):
    """A reach's cost at points behind a building, and the route there, within 0.1% of
    the shortest path round the building as the grid holds it: the slanted one's
    sides are staircases of cells, whose outer corners the path follows."""
    g = _grid([("building", poly)])
    hull = _raster_hull(g)
    near = Polygon(hull).buffer(0.3)
    start = (40, 50)
    r = engine.reach(g, start, 140, any_angle=True)
    rng = np.random.default_rng(1)
    goals = [q for q in map(tuple, rng.uniform((100, 1), (199, 99), (200, 2)))
             if not near.contains(Point(q))]
    for q in goals[:40]:
        best = _around(hull, start, q)
        if best > 135:
            continue
        assert abs(r.cost_at(q) - best) <= 1e-3 * best, (q, r.cost_at(q), best)
    for q in goals[:6]:  # near goals: the path hugs a side
        rt = engine.route(g, start, q, any_angle=True)
        best = _around(hull, start, q)
        assert abs(rt.cost - best) <= 1e-3 * best, (q, rt.cost, best)
        assert engine.price_path(g, rt.path).cost == rt.cost


def _past_woods(poly, start, goal, m):
    """The least cost from ``start`` to ``goal`` (both in the open) past the convex
    woods ``poly`` of multiplier ``m``: round them by their corners (`_around`), or
    through them, entering by one side and leaving by another (a two-dimensional
    minimisation over the two crossing points, from several first guesses)."""
    best = _around(poly, start, goal)
    sides = list(itertools.pairwise([*poly, poly[0]]))
    for (a0, a1), (b0, b1) in itertools.permutations(sides, 2):
        def cost(t, a0=a0, a1=a1, b0=b0, b1=b1):
            p = np.add(a0, t[0] * np.subtract(a1, a0))
            r = np.add(b0, t[1] * np.subtract(b1, b0))
            return math.dist(start, p) + m * math.dist(p, r) + math.dist(r, goal)
        for guess in itertools.product([0.1, 0.5, 0.9], repeat=2):
            best = min(best, minimize(cost, guess, bounds=[(0, 1), (0, 1)]).fun)
    return best


@pytest.mark.parametrize(("start", "goal"), [((138.7179, 64.4132), (109.3747, 71.3137)),
                                             ((133.0329, 63.1985), (100.2759, 78.7477)),
                                             ((120.7277, 39.0617), (118.5323, 83.8049))])
def test_a_route_past_the_corner_of_woods_touches_it(start, goal):
    """A straight line that would clip the corner of a wood is cheapest bent exactly at
    the corner: the price rises on every side of it, so moving a bend a little at a
    time stops short (these were up to 0.044% dearer).  Route and `cost_at` within
    twenty parts per million of the least cost round or through the woods."""
    poly = [(80, 30), (120, 30), (120, 70), (80, 70)]
    g = _grid([("woods", poly)])
    best = _past_woods(poly, start, goal, FW.unit("humans").multipliers["woods"])
    rt = engine.route(g, start, goal, any_angle=True)
    assert abs(rt.cost - best) <= 2e-5 * best, (rt.cost, best)
    assert any(math.dist(p, (120, 70)) < 1e-5 for p in rt.path), rt.path
    assert engine.price_path(g, rt.path).cost == rt.cost
    cost = engine.reach(g, start, 1.01 * best, any_angle=True).cost_at(goal)
    assert abs(cost - best) <= 2e-5 * best, (cost, best)


def test_cost_at_moves_its_bends_as_a_route_does():
    """Among small patches of rough ground a reach's tree bends at cell centres (on the
    demo map up to 5% dearer than the straightened path): `cost_at` prices its path
    with the bends moved, as `route` does, so it is the price of a real path, the
    route is never dearer, and it is close to the route (which searches further)."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))
    at = (30, 40)
    r = engine.reach(g, at)
    rng = np.random.default_rng(3)
    gaps = []
    for q in map(tuple, at + rng.uniform(-20, 20, (120, 2))):
        cost = r.cost_at(q)
        if cost == math.inf:
            continue
        path, priced = r._best_path(q)
        assert priced == cost
        assert engine.price_path(g, path).cost == pytest.approx(cost, rel=1e-12, abs=1e-12)
        rt = engine.route(g, at, q)
        assert rt.cost <= cost + 1e-9
        gaps.append(cost / max(rt.cost, 1e-12) - 1)
    assert len(gaps) > 60
    assert max(gaps) < 0.005 and np.mean(gaps) < 0.0002, (max(gaps), np.mean(gaps))


@pytest.mark.parametrize(("start", "goal"), [((51.5, 52.5), (53.8055, 52.0978)),
                                             ((51.3, 52.6), (53.7, 52.2)),
                                             ((51.5, 52.5), (43.88, 52.8158))])
def test_cost_at_along_an_edge_from_heavier_ground_bends_twice(start, goal):
    """Between two points in woods just inside their straight edge the cheapest path
    leaves the woods, runs along the edge and goes back in, bending twice (each
    crossing at the refraction angle) where the reach's tree reaches the point by
    one cell centre: `cost_at` puts a second bend in (it said 3.76 for the first,
    12.6% over)."""
    g = _grid([("woods", [(-5, 52), (205, 52), (205, 105), (-5, 105)])], cell=1.0)
    m = FW.unit("humans").multipliers["woods"]

    def cost(v):  # out of the woods at (v[0], 52), back in at (v[1], 52)
        return (m * math.dist(start, (v[0], 52)) + abs(v[1] - v[0])
                + m * math.dist((v[1], 52), goal))

    best = min(minimize(cost, [start[0], goal[0]], method="Nelder-Mead",
                        options={"xatol": 1e-10, "fatol": 1e-12}).fun,
               m * math.dist(start, goal))
    claimed = engine.reach(g, start).cost_at(goal)
    assert abs(claimed - best) <= 1e-4 * best, (claimed, best)
    assert claimed == pytest.approx(engine.route(g, start, goal).cost, rel=1e-4)



STRIP = [(50, -5), (52, -5), (52, 105), (50, 105)]  # woods from x = 50 to 52


def _across_strip(seed, far):
    """30 random pairs ``(start, goal, best)`` across `STRIP`, from ``start`` (52.2 to
    ``52 + far`` cm) to ``goal`` (``50 - far`` to 49.8 cm), with ``best`` the least cost:
    into the woods at (52, y0), out at (50, y1), minimised over y0 and y1."""
    m = FW.unit("humans").multipliers["woods"]
    rng = np.random.default_rng(seed)
    for _ in range(30):
        start = (float(rng.uniform(52.2, 52 + far)), float(rng.uniform(30, 70)))
        goal = (float(rng.uniform(50 - far, 49.8)), start[1] + float(rng.uniform(-far, far)))

        def cost(v, start=start, goal=goal):
            return (math.dist(start, (52, v[0])) + m * math.dist((52, v[0]), (50, v[1]))
                    + math.dist((50, v[1]), goal))

        yield start, goal, minimize(cost, [start[1], goal[1]], method="Nelder-Mead",
                                    options={"xatol": 1e-10, "fatol": 1e-12}).fun


@pytest.mark.parametrize("cell", [0.5, 1.0])
def test_cost_at_across_a_strip_of_woods_refracts_at_both_edges(cell):
    """Across a strip of woods the cheapest path bends on both edges (refracting at
    each); where the reach's tree reaches the far side by one straight move, moving
    one bend at a time never finds that (a bend moved off the line alone only
    lengthens the path): `cost_at` also puts a bend on each edge the path crosses
    and moves those along the edges.  It was up to 0.7% over the exact optimum on
    a third of these pairs."""
    g = _grid([("woods", STRIP)], cell=cell)
    for start, goal, best in _across_strip(5, 5):
        claimed = engine.reach(g, start).cost_at(goal)
        assert abs(claimed - best) <= 1e-3 * best, (start, goal, claimed, best)


@pytest.mark.parametrize("cell", [0.5, 1.0])
def test_route_across_a_strip_of_woods_refracts_at_both_edges(cell):
    """A route too tries a bend on each edge it crosses: over these pairs it was up
    to 0.18% over the exact optimum, a few times more than 0.03%."""
    g = _grid([("woods", STRIP)], cell=cell)
    for start, goal, best in _across_strip(9, 25):
        rt = engine.route(g, start, goal)
        assert abs(rt.cost - best) <= 3e-4 * best, (start, goal, rt.cost, best)
        assert engine.price_path(g, rt.path).cost == rt.cost

def test_reach_tree_prices_what_it_claims():
    """Every reached cell's cost is the price of its chain of straight moves back to
    the start (the slow reference: `price_path`'s walk)."""
    bf = engine.load_map("demo")
    g = engine.cost_grid(bf, FW, FW.unit("humans", depth=0))
    at = (30.2, 40.1)
    r = engine.reach(g, at, 20, any_angle=True)
    cols = g.grid.shape[1]
    index = {int(c): k for k, c in enumerate(r.cells)}
    rng = np.random.default_rng(7)
    for k in rng.choice(len(r.cells), 200, replace=False):
        chain = [int(r.cells[k])]
        while r.parent[index[chain[-1]]] >= 0:
            chain.append(int(r.parent[index[chain[-1]]]))
        points = [at] + [((c % cols + 0.5) * g.cell, (c // cols + 0.5) * g.cell)
                         for c in reversed(chain[:-1])]
        if len(points) == 1:
            continue
        priced = engine.price_path(g, points).cost
        assert abs(priced - r.cost[k]) <= 1e-9 * max(1.0, priced)


@pytest.mark.parametrize("race", ["humans", "goblins", "hill trolls", "giant eagles"])
def test_segment_cost_is_the_pricers_walk(race):
    """`_kernels.segment_cost` against `price_path` on random moves over the demo map."""
    bf = engine.load_map("demo")
    g = engine.cost_grid(bf, FW, FW.unit(race, depth=0))
    a = g.kernel_args
    rng = np.random.default_rng(3)
    walked = np.zeros_like(g.clearance)  # no box of alike ground: every piece walked
    for k in range(600):
        p = rng.uniform(0, [bf.width, bf.height])
        spread = 15 if k % 2 else 80  # long moves cross boxes of alike ground unwalked
        q = np.clip(p + rng.normal(0, spread, 2), 0, [bf.width - 1e-9, bf.height - 1e-9])
        if rng.random() < 0.3:  # on grid lines and corners
            p, q = np.round(p * 2) / 2, np.round(q * 4) / 4
        p, q = (float(p[0]), float(p[1])), (float(q[0]), float(q[1]))
        r, c = g.grid.xy_to_rc(p)
        args = (*p, *q, r * a.cols + c, g.cell, a.cols, g.base.shape[0], a.base, a.steep,
                a.slope_of, a.slopes, a.enter, a.narrow)
        cost, end = _kernels.anyangle.segment_cost(*args, g.clearance)
        ref = engine.price_path(g, [p, q]).cost
        assert cost == ref or abs(cost - ref) <= 1e-9 * max(1.0, ref)
        assert (cost, end) == pytest.approx(_kernels.anyangle.segment_cost(*args, walked),
                                            rel=1e-12)


def _sight(g, at, budget):
    """`_kernels.anyangle._source_sight`'s window from the point ``at``, as a boolean
    grid the shape of ``g``'s."""
    rows, cols = g.base.shape
    r, c = g.grid.xy_to_rc(at)
    sight, r0, c0, w = _kernels.anyangle._source_sight(
        g.alike, cols, rows, r * cols + c, float(at[0]), float(at[1]), g.cell, float(budget))
    seen = np.zeros((rows, cols), dtype=bool)
    if sight.size:
        seen[r0:r0 + sight.size // w, c0:c0 + w] = sight.reshape(-1, w) == 1
    return seen


@pytest.mark.parametrize("race", ["humans", "goblins", "hill trolls"])
def test_plain_sight_marks_only_moves_priced_by_their_length(race):
    """A cell the start's plain sight marks is one a straight move to prices as the
    start's multiplier times its length (the search takes it so, unwalked):
    checked against `price_path` from random points of the demo map, on grid
    lines and corners too, where a line touches cells at their corners."""
    bf = engine.load_map("demo")
    g = engine.cost_grid(bf, FW, FW.unit(race, depth=0))
    rng = np.random.default_rng(5)
    marked = 0
    for k in range(40):
        at = rng.uniform(0, [bf.width, bf.height])
        if k % 3 == 0:
            at = np.round(at * 2) / 2  # on a cell corner
        at = (float(at[0]), float(at[1]))
        r, c = g.grid.xy_to_rc(at)
        if not np.isfinite(g.base[r, c]):
            continue
        seen = _sight(g, at, 20.0)
        rows, cols = np.nonzero(seen)
        marked += rows.size
        for rr, cc in zip(rows[::5], cols[::5], strict=True):
            q = ((cc + 0.5) * g.cell, (rr + 0.5) * g.cell)
            want = g.base[r, c] * math.dist(at, q)
            assert engine.price_path(g, [at, q]).cost == pytest.approx(want, rel=1e-12)
    assert marked > 20_000  # the demo map is mostly open: most lines are plain


def test_plain_sight_on_open_ground_and_behind_a_building():
    """On open ground every cell within the allowance is in sight, the diagonals
    through the start (by cell corners) too; a building hides what lies
    behind it (slopes within 5 / 10 of the line through its middle), and the cells
    outside its shadow are still marked."""
    at = (50.0, 50.0)  # a cell corner: its diagonals run through cell corners
    seen = _sight(_grid(), at, 20.0)
    yy, xx = np.mgrid[0:200, 0:400]
    dx, dy = (xx + 0.5) * 0.5 - at[0], (yy + 0.5) * 0.5 - at[1]
    assert not seen[np.maximum(np.abs(dx), np.abs(dy)) > 20.0 + 2 * 0.5].any()  # its window
    inside = np.hypot(dx, dy) <= 20.0
    assert seen[inside].all()
    house = ("building", [(60, 45), (64, 45), (64, 55), (60, 55)])
    seen = _sight(_grid([house]), at, 30.0)
    behind = (dx > 16) & (np.abs(dy) < 2) & (np.hypot(dx, dy) <= 30)
    assert behind.any() and not seen[behind].any()
    assert seen[(dx > 16) & (np.abs(dy) > 0.6 * dx) & (np.hypot(dx, dy) <= 28)].all()
    # A building's corner on the diagonal: a move along it touches the building.
    post = ("building", [(55, 54.5), (55.5, 54.5), (55.5, 55), (55, 55)])
    seen = _sight(_grid([post]), at, 20.0)
    diagonal = np.isclose(dx, dy)
    assert not seen[diagonal & (dx > 5)].any() and seen[diagonal & (dx > 0) & (dx < 5)].all()
    # A unit at the edge of a wood (its cell's neighbours unlike it) sees the open side.
    wood = ("woods", [(50.5, 0), (100, 0), (100, 100), (50.5, 100)])
    seen = _sight(_grid([wood]), (50.4, 50.2), 20.0)
    ddx, ddy = (xx + 0.5) * 0.5 - 50.4, (yy + 0.5) * 0.5 - 50.2
    open_side = (xx < 101) & (np.hypot(ddx, ddy) <= 20.0)
    assert seen[open_side].all() and not seen[xx >= 101].any()


@settings(max_examples=30, deadline=None)
@given(st.tuples(st.floats(1, 39), st.floats(1, 29)), st.tuples(st.floats(1, 39), st.floats(1, 29)),
       st.lists(st.tuples(st.sampled_from(["woods", "bog", "building"]),
                          st.integers(0, 30), st.integers(0, 20), st.integers(3, 12),
                          st.integers(3, 12)), max_size=4))
def test_any_angle_invariants(a, b, blocks):
    """On random maps: a route costs its price and at least its length; reach never
    claims less than the distance.  (A route may cost a little more than the
    reach's cost at its goal: A* and Dijkstra settle Theta*'s cells in other
    orders, so they keep other parents, and straightening cannot move a path to
    the other side of a wood.  Cases at 0.13% and 0.71% are known: from (1, 1)
    in a 3 cm wood to (22, 3) past a 3 x 7 wood at (10, 0), the route crosses
    the second wood, 26.11, where over its top corner costs 25.93.)"""
    feats = [(kind, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)])
             for kind, x, y, w, h in blocks]
    g = _grid(feats, width=40, height=30)
    try:
        rt = engine.route(g, a, b, any_angle=True)
    except engine.InputError:
        return  # a point on a building
    except engine.NoRouteError:
        return
    assert engine.price_path(g, rt.path).cost == rt.cost
    assert rt.cost >= math.dist(a, b) * (1 - 1e-12)
    r = engine.reach(g, a, rt.cost + 1, any_angle=True)
    assert r.cost_at(b) >= math.dist(a, b) * (1 - 1e-12)
    assert rt.cost <= r.cost_at(b) * 1.01


def test_a_goal_reach_says_is_reachable_this_turn_is_reached_this_turn():
    """`route` may keep other Theta* parents than `reach` (A* and Dijkstra settle cells
    in other orders) and so cost a little more; to a goal within one turn's
    allowance it takes the reach's path when that is cheaper, so the two agree."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))
    rng = np.random.default_rng(11)
    pairs = 0
    while pairs < 300:
        a = tuple(rng.uniform([1, 1], [179, 119]))
        b = tuple(np.array(a) + rng.normal(0, 15, 2))
        if not (0 < b[0] < 180 and 0 < b[1] < 120):
            continue
        try:
            claimed = engine.reach(g, a, 40).cost_at(b)
        except engine.InputError:
            continue  # a start on impassable ground
        if not 0 < claimed < math.inf:
            continue
        pairs += 1
        rt = engine.route(g, a, b, claimed)  # the reach's cost at b as the allowance
        assert rt.turns == 1 and rt.cost <= claimed + 1e-9, (a, b, claimed, rt.cost)


def test_a_route_is_straightened_from_the_cheaper_of_both_searches():
    """Theta* bends at cell centres.  From (3.8, 22.7) to (76.14, 66.1) on the demo map
    its path bends at a centre clear of the steep hill's corner at (36, 44) and meets
    the road at the mire's corner: 84.87 once straightened.  The lattice's path,
    string-pulled, grazes that corner and meets the road farther on: 84.64.  On random
    pairs a route is never dearer than the lattice's route between the same points."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))
    rt = engine.route(g, (3.8, 22.7), (76.14, 66.1))
    assert rt.cost < 84.64
    assert engine.price_path(g, rt.path).cost == rt.cost
    rng = np.random.default_rng(5)
    pairs = 0
    while pairs < 150:
        a, b = (tuple(rng.uniform([0, 0], [180, 120])) for _ in range(2))
        try:
            lattice = engine.route(g, a, b, any_angle=False)
        except (engine.InputError, engine.NoRouteError):
            continue  # a point on impassable ground, or cut off
        pairs += 1
        assert engine.route(g, a, b).cost <= lattice.cost * (1 + 1e-9), (a, b)


# A unit with rear ranks (Fantasy Warlord's default: one rank, 2 cm deep).


def _ranked(features=(), cell=0.5):
    return engine.cost_grid(_map(features, cell=cell), FW, FW.unit("humans"))


def test_ranked_reach_is_the_circle_from_the_units_own_point():
    g = _ranked()
    assert g.depth > 0
    at = (100.25, 50.25)
    r = engine.reach(g, at, 40)
    assert r.parent is not None
    worst = max(abs(r.cost_at((at[0] + 30 * math.cos(a), at[1] + 30 * math.sin(a))) - 30) / 30
                for a in np.linspace(0, 2 * math.pi, 120, endpoint=False))
    assert worst <= 1e-3
    r24 = engine.reach(g, at, 24)
    assert r24.reachable((at[0] + 23.5, at[1] + 3e-3))
    assert not r24.reachable((at[0] + 24.5, at[1]))
    assert abs(r.area / (math.pi * 40 * 40) - 1) < 0.01
    lattice = engine.reach(g, at, 24, any_angle=False)
    assert lattice.parent is None and not lattice.reachable((at[0] + 23.9, at[1] + 3.0))


@pytest.mark.parametrize(("ring", "edge", "cell"), WOODS_EDGES[:2])
@pytest.mark.parametrize(("start", "goal"), [((20, 20), (150, 80)), ((10, 90), (140, 15)),
                                             ((60, 50), (180, 52))])
def test_ranked_reach_into_woods_refracts_at_the_exact_optimum(ring, edge, cell, start, goal):
    """Going into woods the ranks behind the front stand on open ground, lighter than
    the woods under it: they add nothing, so the optimum is a point's."""
    g = _ranked([("woods", ring)], cell=cell)
    best = _refraction(start, goal, *edge, FW.unit("humans").multipliers["woods"])
    r = engine.reach(g, start, 1.01 * best)
    assert abs(r.cost_at(goal) - best) <= 1e-3 * best, (r.cost_at(goal), best)
    points, cost = r._best_path(goal)
    assert engine.price_path(g, points).cost == cost


def test_ranked_reach_out_of_woods_pays_for_the_ranks():
    """Leaving woods the ranks pay the woods' multiplier for their depth (2 cm) more
    than a unit without ranks, whichever way it crosses the edge; going in, nothing."""
    woods = [("woods", [(-5, -5), (100, -5), (100, 105), (-5, 105)])]
    g, point = _ranked(woods), _grid(woods)
    m = FW.unit("humans").multipliers["woods"]
    for start, goal in [((90, 50), (130, 60)), ((80, 20), (120, 45)), ((95.3, 70.1), (104, 66))]:
        r, r0 = engine.reach(g, start, 80), engine.reach(point, start, 80)
        assert r.cost_at(goal) == pytest.approx(r0.cost_at(goal) + (m - 1) * 2.0, rel=1e-12)
        best = _refraction(goal, start, (100, -5), (100, 105), m) + (m - 1) * 2.0
        assert abs(r.cost_at(goal) - best) <= 1e-3 * best
        rt = engine.route(g, start, goal)
        assert abs(rt.cost - best) <= 1e-3 * best, (rt.cost, best)
        back = engine.reach(g, goal, 80), engine.reach(point, goal, 80)
        assert back[0].cost_at(start) == pytest.approx(back[1].cost_at(start), rel=1e-12)


def test_ranked_reach_round_a_building_by_its_corners():
    g = _ranked([("building", BUILDINGS[0])])
    start = (40, 50)
    r = engine.reach(g, start, 140)
    for goal in [(160, 50), (130, 80), (125, 60), (150, 20)]:
        best = _around(BUILDINGS[0], start, goal)
        assert abs(r.cost_at(goal) - best) <= 1e-3 * best, (goal, r.cost_at(goal), best)


def test_ranked_route_within_a_turn_costs_no_more_than_the_reach_says():
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans"))
    rng = np.random.default_rng(4)
    checked = 0
    while checked < 12:
        start = tuple(rng.uniform((5, 5), (175, 115)).tolist())
        goal = (start[0] + rng.uniform(-15, 15), start[1] + rng.uniform(-15, 15))
        if not (np.isfinite(g.base[g.grid.xy_to_rc(start)])
                and 0 < goal[0] < 180 and 0 < goal[1] < 120
                and np.isfinite(g.base[g.grid.xy_to_rc(goal)])):
            continue
        c = engine.reach(g, start, g.unit.move).cost_at(goal)
        if c == math.inf:
            continue
        rt = engine.route(g, start, goal)
        assert rt.cost <= c * (1 + 1e-12), (start, goal, rt.cost, c)
        assert rt.turns == 1
        checked += 1


def test_ranked_cost_at_follows_a_path_back_through_the_start_cell():
    """Standing just in front of a hedge, the unit first sidesteps 0.43 cm to turn its
    ranks off the hedge (the straight move leaves them on it: 20.78); the reach's
    path runs back through the start's cell, whose centre is not the unit's point."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW, FW.unit("humans"))
    start, stop = (37.324812679969895, 85.69817617137518), (41.1930684006315, 66.48356825321581)
    sidestep = engine.price_path(g, [start, (37.75, 85.75), stop]).cost
    assert engine.price_path(g, [start, stop]).cost > sidestep + 0.7
    r = engine.reach(g, start, 20.5)
    points, cost = r._best_path(stop)
    assert cost <= sidestep * (1 + 1e-9) and engine.price_path(g, points).cost == cost
    assert r.reachable(stop) and engine.route(g, start, stop).cost <= cost * (1 + 1e-12)


@pytest.mark.parametrize("depth, point", [(0.0, (149.25, 84.75)), (2.0, (149.25, 82.75))])
def test_cost_at_near_the_edge_of_a_reach_is_what_a_wider_reach_says(depth, point):
    """The path to ``point`` runs by cells whose centres the search, bending at cell
    centres, prices over the allowance: the reach must still find it."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), FW,
                         FW.unit("humans", depth=depth, move=24))
    start = (144.22940373715144, 69.85944432772413)
    wide = engine.reach(g, start, 26).cost_at(point)
    assert wide <= 24
    r = engine.reach(g, start, 24)
    assert r.cost_at(point) == pytest.approx(wide, rel=1e-9) and r.reachable(point)
    rt = engine.route(g, start, point)
    assert rt.cost <= wide * (1 + 1e-12) and rt.turns == 1


# Settling the start's plain sight at once where no cheaper ground is near.


def _scrub_with_road(road_y, depth=0.0):
    """Scrub (x2) over a 60 x 40 cm table with a road (x1) along y = ``road_y``."""
    feats = [feature("scrub", rect(-1, -1, 61, 41)),
             feature("road", line((0, road_y), (60, road_y)), width=1)]
    bf = engine.load_map(battlefield(feats, 60, 40, cell=0.5))
    return engine.cost_grid(bf, FW, FW.unit("humans", depth=depth))


@pytest.mark.parametrize("depth", [0.0, 2.0])
def test_a_reach_settles_its_sight_at_once_only_where_no_cheaper_ground_is_near(depth):
    """A unit on scrub with the road (x1) beyond any path its allowance pays for
    settles all it sees at once, the scrub being the cheapest ground a path
    meets (`_settle_limit`), each cell at twice its distance, the exact answer
    on scrub alone.  With the road 2 cm away, only what is nearer than the road
    (less the ranks' depth) is, and the cell beside the road at (22.25, 11.25)
    costs the way along the road, far less than straight over the scrub."""
    far, near = _scrub_with_road(35, depth), _scrub_with_road(12.5, depth)
    assert far.least == near.least == 1.0
    at = (10.0, 10.0)

    def limit(g, budget):
        rows, cols = g.base.shape
        r, c = g.grid.xy_to_rc(at)
        sight, r0, c0, w = _kernels.anyangle._source_sight(g.alike, cols, rows, r * cols + c,
                                                           *at, g.cell, budget)
        return _kernels.anyangle._settle_limit(sight, r0, c0, w, r * cols + c, *at,
                                               g.kernel_args.base, cols, g.cell, g.least,
                                               budget, depth)

    def road_distance(g):  # from the unit's point to the nearest road cell, brute force
        r, c = np.nonzero(g.base < 2.0)
        dx = np.maximum.reduce([c * g.cell - at[0], at[0] - (c + 1) * g.cell, 0 * c])
        dy = np.maximum.reduce([r * g.cell - at[1], at[1] - (r + 1) * g.cell, 0 * r])
        return float(np.hypot(dx, dy).min())

    assert road_distance(near) == 2.0 and road_distance(far) == 24.5
    assert limit(far, 12.0) == (12.0, 2.0)
    assert limit(near, 30.0) == (pytest.approx(2 * max(2.0 - depth, 0.0)), 1.0)
    assert limit(far, math.inf) == (pytest.approx(2 * (24.5 - depth)), 1.0)
    r = engine.reach(far, at, 12)
    rows, cols = far.base.shape
    ys, xs = (np.indices((rows, cols)) + 0.5) * far.cell
    exact = 2 * np.hypot(xs - at[0], ys - at[1]).ravel()
    inside = set(np.flatnonzero(exact <= 12).tolist())
    inside.add(int(far.grid.xy_to_rc(at)[0] * cols + far.grid.xy_to_rc(at)[1]))
    assert set(r.cells.tolist()) == inside
    for cell, cost in by_cell(r).items():
        assert cost == pytest.approx(exact[cell], rel=1e-12) or cost == 0.0
    beside = 22 * 120 + 44  # the cell holding (22.25, 11.25)
    assert by_cell(engine.reach(near, at, 30))[beside] < 2 * math.dist(at, (22.25, 11.25)) - 5


def test_a_ranked_reach_from_the_corner_of_heavier_ground_pays_for_the_ranks_behind():
    """Humans one rank deep stand at (3, 1), on the corner where woods (cells x2 below and
    to the left) meet clear ground above and to the right (found by the property test).
    The cell holding the point is wooded and nothing near is heavier, but a move up
    and right leaves it at once with the ranks still in the woods: the reach must not
    price it as a point's (0.79 over the clear ground) where `price_path`, with the
    ranks standing in the woods, says it costs more than the allowance of 1."""
    woods = [[4, 4], [4, 1], [0, 1], [0, 4]]
    g = engine.cost_grid(_map([("woods", woods)] + [("woods", [[0, 0], [0, 3], [3, 3], [3, 0]])]
                              * 4, width=40, height=30), FW, FW.unit("humans", depth=2.0))
    at, clear = (3.0, 1.0), (3.75, 0.75)
    assert g.base[1, 7] == 1.0 and g.base[2, 6] == 2.0  # clear above right, woods below left
    assert engine.price_path(g, [at, clear]).cost > 1.0
    r = engine.reach(g, at, 1.0)
    assert 1 * 80 + 7 not in r.cells.tolist()
    for cell in r.cells:
        goal = at if cell == 2 * 80 + 6 else g.grid.rc_to_xy(divmod(int(cell), 80))
        assert r.cost_at(goal) <= 1.0 + 1e-9


@pytest.mark.parametrize(("depth", "cell", "before"), [(0.0, (79, 100), 16.47),
                                                        (2.0, (80, 96), 10.83)])
def test_up_a_slope_a_reach_takes_the_lattices_longer_steps(depth, cell, before):
    """On the demo map's steep hill a move's price hangs on its direction, and Theta*
    (a neighbour's step, or the straight move from that neighbour's parent) could
    not go the way a lattice step goes: from (43.75, 40.75) the reach priced the
    centre of this cell at ``before`` (24% and 19% over the lattice's) and
    `cost_at` followed it.  Near a slope the search takes the lattice's longer
    steps too: the cell costs what the lattice says, and `cost_at` what the
    route does."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=depth))
    at, cols = (43.75, 40.75), g.base.shape[1]
    r = engine.reach(g, at)
    lattice = engine.reach(g, at, any_angle=False)
    k = cell[0] * cols + cell[1]
    cost = r.cost[r.cells.tolist().index(k)]
    assert cost == pytest.approx(lattice.cost[lattice.cells.tolist().index(k)], rel=1e-12)
    assert cost < before / 1.15
    centre = g.grid.rc_to_xy(cell)
    assert r.cost_at(centre) == pytest.approx(engine.route(g, at, centre).cost, rel=1e-9)


@pytest.mark.parametrize("depth", [0.0, 2.0])
def test_by_slopes_and_buildings_no_cell_costs_more_than_the_lattice_says(depth):
    """On random maps of steep hills and buildings on open ground, from cell centres
    (where the lattice starts too): every cell the lattice reaches the any-angle
    reach reaches, and within 0.5% of the lattice's cost (with one rank, where
    the ranks' facing at the start can tell, 3%), all but a few cells no
    dearer at all.  Without the lattice's longer steps near slopes and
    buildings, cells were missed and others priced up to a fifth dearer."""
    rng = np.random.default_rng(5)
    dearer = cells = 0
    for _ in range(25):
        feats = []
        for _ in range(int(rng.integers(1, 4))):
            x, y, w, h = rng.uniform(0, 30), rng.uniform(0, 20), *rng.uniform(3, 14, 2)
            kind = "building" if rng.random() < 0.3 else "hill"
            feats.append((kind, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]))
        g = engine.cost_grid(_map(feats, width=40, height=30), FW,
                             FW.unit("humans", depth=depth))
        cols = g.base.shape[1]
        for c in rng.choice(np.flatnonzero(np.isfinite(g.base.ravel())), 3):
            at = g.grid.rc_to_xy(divmod(int(c), cols))
            ours = dict(zip(engine.reach(g, at, 12).cells.tolist(),
                            engine.reach(g, at, 12).cost.tolist(), strict=True))
            lattice = engine.reach(g, at, 12, any_angle=False)
            for k, cost in zip(lattice.cells.tolist(), lattice.cost.tolist(), strict=True):
                assert ours[k] <= cost * (1.005 if depth == 0 else 1.03) + 1e-12, (feats, at, k)
                dearer += ours[k] > cost * (1 + 1e-9) + 1e-12
                cells += 1
    assert cells > 20_000 and dearer < 0.005 * cells
