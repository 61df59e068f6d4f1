"""Movement semantics, each with a case that fails if it is priced wrong."""

import math
from importlib import resources

import numpy as np
import pytest

import engine

from .conftest import MAPS, feature, grid_for, line, rect

Y = 10.25


def cost(g, *points):
    return engine.price_path(g, list(points)).cost


class TestComposites:
    @pytest.mark.parametrize(("kind", "race", "expected"), [
        ("jungle", "humans", 2.0 * 2.0),        # woods x2 then scrub x2 (default)
        ("jungle", "wood elves", 1.25 * 2.0),   # woods x1.25 then scrub x2
        ("fen", "goblins", 2.0 * 2.0),          # scrub then marsh
        ("swamp", "wood elves", 1.25 * 2.0),    # woods then marsh
        ("swamp", "goblins", 2.0 * 2.0),
        ("bog", "goblins", 2.0),
        ("mire", "goblins", 2.0),
        ("woods", "wood elves", 1.25),
        ("clear", "humans", 1.0),
    ])
    def test_layers_multiply(self, rules, kind, race, expected):
        g = grid_for(rules, [feature(kind, rect(10, 0, 20, 20))], race)
        assert cost(g, (10, Y), (20, Y)) == pytest.approx(10 * expected)

    def test_overlapping_features_of_one_layer_count_once(self, rules):
        g = grid_for(rules, [feature("woods", rect(10, 0, 20, 20)),
                             feature("woods", rect(12, 0, 18, 20))])
        assert cost(g, (10, Y), (20, Y)) == pytest.approx(20.0)

    def test_woods_on_a_steep_hill_multiply(self, rules):
        g = grid_for(rules, [feature("hill", rect(0, -40, 40, 60), elevation=5, steep=True),
                             feature("woods", rect(0, 0, 40, 20))], move=18)
        assert cost(g, (2, Y), (6.5, Y)) == pytest.approx(18.0)  # 18 -> 9 -> 4.5 cm


class TestFootprint:
    def test_approaching_costs_nothing_leaving_costs_the_depth(self, rules):
        woods = [feature("woods", rect(10, 0, 20, 20))]
        deep = grid_for(rules, woods, depth=4)
        flat = grid_for(rules, woods, depth=0)
        assert cost(deep, (0, Y), (10, Y)) == pytest.approx(10.0)
        assert cost(flat, (0, Y), (30, Y)) == pytest.approx(20 + 10 * 2)
        assert cost(deep, (0, Y), (30, Y)) == pytest.approx(20 + 10 * 2 + 4 * (2 - 1))
        assert cost(deep, (0, Y), (22, Y)) == pytest.approx(10 + 10 * 2 + 2 * 2)

    def test_turning_away_does_not_shed_the_rear_ranks(self, rules):
        # Leaving the wood and turning at once: the ranks behind are still in the trees.
        g = grid_for(rules, [feature("woods", rect(0, 0, 10, 20))], depth=4)
        straight = cost(g, (5, Y), (10, Y), (14, Y))
        turned = cost(g, (5, Y), (10, Y), (10.5, Y), (10.5, Y + 3.5))
        assert straight == pytest.approx(10 + 4 * 2)
        assert turned == pytest.approx(10 + 4 * 2)

    def test_search_does_not_dodge_the_rear_rank_rule(self, rules):
        # Broken ground across the whole table: no bend in the route escapes the depth.
        g = grid_for(rules, [feature("broken ground", rect(1, -5, 6, 25))], depth=4)
        r = engine.reach(g, (0.25, Y))
        assert r.cost_at((11.25, Y)) == pytest.approx(20.0)
        rt = engine.route(g, (0, Y), (11, Y))
        assert rt.cost == pytest.approx(20.0)

    def test_a_unit_starting_inside_pays_until_clear(self, rules):
        g = grid_for(rules, [feature("woods", rect(0, 0, 10, 20))], depth=4)
        assert cost(g, (9, Y), (15, Y)) == pytest.approx(1 * 2 + 4 * 2 + 1)

    def test_linear_obstacles_straddled(self, rules):
        wall = [feature("wall", line((10.25, -1), (10.25, 21)), width=0.5)]
        for depth, expected in ((0, 10 + 0.5 * 2 + 9.5), (3, 10 + 3.5 * 2 + 6.5)):
            g = grid_for(rules, wall, "orcs", depth=depth)
            assert cost(g, (0, Y), (20, Y)) == pytest.approx(expected)


STEEP_HILL = [feature("hill", rect(10, -30, 30, 50), elevation=4, steep=True)]


class TestSlopes:

    def test_uphill_only(self, rules):
        g = grid_for(rules, STEEP_HILL)
        assert cost(g, (10, Y), (14, Y)) == pytest.approx(8.0)   # up: x2
        assert cost(g, (30, Y), (26, Y)) == pytest.approx(8.0)   # up from the other side
        assert cost(g, (14, Y), (10, Y)) == pytest.approx(4.0)   # down: free
        assert cost(g, (12, 5.25), (12, 15.25)) == pytest.approx(10.0)  # along the contour

    def test_gentle_hill_is_free(self, rules):
        gentle = [feature("hill", rect(10, -30, 30, 50), elevation=4)]
        g = grid_for(rules, gentle)
        assert cost(g, (10, Y), (14, Y)) == pytest.approx(4.0)

    def test_reach_up_a_steep_hill_is_shorter_than_down(self, rules):
        g = grid_for(rules, STEEP_HILL)
        r = engine.reach(g, (20, Y), 4)  # on the crest
        assert r.reachable((16.25, Y))   # down: 3.75 cm
        assert not engine.reach(g, (20.5, Y), 4).reachable((16.25, Y))  # 0.5 up to it first
        g2 = grid_for(rules, STEEP_HILL)
        r2 = engine.reach(g2, (10.25, Y), 4)  # at the foot
        assert r2.reachable((12.25, Y)) and not r2.reachable((13.25, Y))


RIVER = feature("river", line((20, -1), (20, 21)), width=4)


class TestWater:

    def test_river_impassable_without_crossing(self, rules):
        g = grid_for(rules, [RIVER])
        assert math.isinf(cost(g, (10, Y), (30, Y)))
        with pytest.raises(engine.NoRouteError):
            engine.route(g, (10, Y), (30, Y))

    def test_bridge_is_free_ford_costs(self, rules):
        bridge = feature("bridge", line((15, 5), (25, 5)), width=3)
        ford = feature("ford", line((15, 15), (25, 15)), width=3)
        g = grid_for(rules, [RIVER, bridge, ford], "wood elves")
        assert cost(g, (10, 5.25), (30, 5.25)) == pytest.approx(20.0)
        assert cost(g, (10, 15.25), (30, 15.25)) == pytest.approx(16 + 4 * 1.25)
        assert math.isinf(cost(g, (10, Y), (30, Y)))
        rt = engine.route(g, (10, Y), (30, Y))
        assert rt.cost > 20
        assert any("bridge" in leg.terrain or "ford" in leg.terrain for leg in rt.legs)

    def test_flyers_ignore_ground_terrain(self, rules):
        g = grid_for(rules, [RIVER, feature("woods", rect(0, 0, 15, 20))], "giant eagles")
        assert cost(g, (0, Y), (30, Y)) == pytest.approx(30.0)

    def test_swimmers_cross_at_the_river_multiplier(self, rules):
        g = grid_for(rules, [RIVER], "hill trolls")
        assert cost(g, (10, Y), (30, Y)) == pytest.approx(16 + 4 * 2.0)


class TestBuildingsAndRoads:
    def test_building_impassable_but_through_a_gateway(self, rules):
        house = feature("building", rect(10, 0, 20, 20))
        gate = feature("gateway", line((8, Y), (22, Y)), width=2)
        g = grid_for(rules, [house])
        assert math.isinf(cost(g, (0, Y), (30, Y)))
        g = grid_for(rules, [house, gate])
        assert cost(g, (0, Y), (30, Y)) == pytest.approx(30.0)

    def test_road_cancels_woods_not_walls_or_slopes(self, rules):
        road = feature("road", line((-1, Y), (41, Y)), width=2)
        g = grid_for(rules, [road, feature("woods", rect(10, 0, 20, 20))])
        assert cost(g, (0, Y), (30, Y)) == pytest.approx(30.0)
        g = grid_for(rules, [road, feature("wall", line((10.25, -1), (10.25, 21)), width=0.5)],
                     "orcs")
        assert cost(g, (0, Y), (20, Y)) == pytest.approx(20.5)
        g = grid_for(rules, [road, feature("hill", rect(10, -30, 30, 50), elevation=4,
                                           steep=True)])
        assert cost(g, (10, Y), (14, Y)) == pytest.approx(8.0)


def test_break_formation_check(rules):
    bf = engine.load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 40, "height": 20, "units": "cm"},
        "features": [feature("building", rect(10, 5, 20, 15), "inn")],
    })
    near = engine.enter_building(bf, rules, (25, 10))
    far = engine.enter_building(bf, rules, (25.5, 10))
    assert near.allowed and near.distance == 5.0 and near.order == "Break Formation"
    assert "whole move" in near.reason
    assert not far.allowed and "inn" in far.reason


def test_impassable_kinds_and_multipliers_block(tmp_path):
    shipped = resources.files("engine") / "rules" / "fantasy-warlord.toml"
    text = shipped.read_text("utf-8").replace(
        "[terrain.clear]", "[terrain.cliff]\nimpassable = true\n\n[terrain.clear]"
    ).replace('multipliers = { woods = 1.25, ford = 1.25 }',
              'multipliers = { woods = "impassable", ford = 1.25 }')
    path = tmp_path / "cliffs.toml"
    path.write_text(text)
    rules = engine.load_rules(path)
    cliff = [feature("cliff", rect(10, 0, 12, 20))]
    assert math.isinf(cost(grid_for(rules, cliff), (0, Y), (20, Y)))
    woods = [feature("woods", rect(10, 0, 12, 20))]
    assert math.isinf(cost(grid_for(rules, woods, "wood elves"), (0, Y), (20, Y)))
    assert cost(grid_for(rules, woods, "humans"), (0, Y), (20, Y)) == pytest.approx(22.0)


@pytest.mark.parametrize(("directions", "gap"), [(8, (1, 1)), (16, (2, 1)), (32, (4, 1)),
                                                 (48, (4, 1))])
def test_routes_on_open_ground_stay_near_the_straight_line(directions, gap):
    """At most ``1 / cos(gap / 2) - 1`` longer (`engine.grid.neighbourhood`), where ``gap``
    is the widest angle between steps: here between (1, 0) and the step given."""
    worst = 1 / math.cos(math.atan2(gap[1], gap[0]) / 2) - 1 + 1e-12
    router = engine.GridRouter(np.ones((121, 121)), directions=directions)
    excess = []
    for tenth in range(0, 450, 3):  # one octant; the others are its mirror images
        a = math.radians(tenth / 10)
        goal = (round(60 + 60 * math.sin(a)), round(60 + 60 * math.cos(a)))
        excess.append(router.route((60, 60), goal)[0] / math.dist((60, 60), goal) - 1)
    assert worst * 0.8 < max(excess) <= worst


@pytest.mark.parametrize("directions", [0, 12, 64, "32"])
def test_unknown_neighbourhoods_are_refused(directions):
    with pytest.raises(engine.InputError, match="8, 16, 32, 48 directions"):
        engine.GridRouter(np.ones((4, 4)), directions=directions)


@pytest.mark.parametrize(("features", "unit", "words"), [
    ([feature("hedge", line((5, 0), (5, 20)), width=1, cost=1e9)], {},
     "a flat cost .a crossing's, a climb's .* is too large"),  # was an OverflowError
    ([feature("hill", rect(5, 5, 10, 10), elevation=1, climb=1e9)], {},
     "a flat cost .a crossing's, a climb's .* is too large"),
    ([], {"depth": 1e6}, r"humans are 1e\+06 cm deep, deeper than the 40 x 20 table"),  # hung
    ([], {"ranks": 10**5, "depth": None}, "deeper than the 40 x 20 table"),  # MemoryError
])
def test_absurd_costs_and_depths_are_refused(rules, features, unit, words):
    with pytest.raises(engine.InputError, match=words):
        engine.reach(grid_for(rules, features, **unit), (1, 1))


def test_an_absurd_formation_change_is_named(tmp_path):
    shipped = resources.files("engine") / "rules" / "fantasy-warlord.toml"
    text = shipped.read_text("utf-8").replace("formation_change = 5.0", "formation_change = 1e9")
    path = tmp_path / "slow-drill.toml"
    path.write_text(text)
    rules = engine.load_rules(path)
    river = feature("river", line((20, -1), (20, 21)), width=4)
    bridge = feature("bridge", line((15, Y), (25, Y)), width=3)
    with pytest.raises(engine.InputError, match=r"the rules' formation_change\) is too large"):
        engine.reach(grid_for(rules, [river, bridge], frontage=8), (1, 1))


def test_unit_of_another_ruleset_is_refused(rules):
    bf = engine.load_map({"type": "FeatureCollection", "features": [],
                          "battlefield": {"width": 4, "height": 4, "units": "cm"}})
    infantry = engine.load_rules("battlesystem").unit("infantry")
    with pytest.raises(engine.InputError, match="'infantry' is not a unit of Fantasy Warlord"):
        engine.cost_grid(bf, rules, infantry)  # was KeyError: 'marsh'
    with pytest.raises(engine.InputError, match="8, 16, 32, 48 directions, got \\[8\\]"):
        engine.cost_grid(bf, rules, rules.unit("humans"), directions=[8])


def test_a_cached_grid_serves_a_unit_that_moves_differently_as_that_unit(rules):
    bf = engine.load_map(MAPS / "demo.geojson")
    full = engine.cost_grid(bf, rules, rules.unit("humans"))
    args = full.kernel_args  # built once, shared with the grid below
    slow = engine.cost_grid(bf, rules, rules.unit("humans", move=5))
    assert (full.unit.move, slow.unit.move) == (20, 5)  # was 20 for both: the cached grid
    assert slow.kernel_args is args and slow.base is full.base
    fresh = engine.cost_grid(engine.load_map(MAPS / "demo.geojson"), rules,
                             rules.unit("humans", move=5))
    assert engine.reach(slow, (30, 40)).area == engine.reach(fresh, (30, 40)).area == 75.0
    assert engine.reach(full, (30, 40)).area == 1073.75
    # asked again, the same grid: flow fields and regions belong to one grid
    assert engine.cost_grid(bf, rules, rules.unit("humans", move=5)) is slow


def test_distinct_rows_numbers_rows_by_content_even_when_their_hashes_collide():
    from engine.terrain.lattice import _distinct_rows

    rng = np.random.default_rng(5)
    rows = rng.integers(0, 3, (400, 8)).astype(float)
    rows[200:] = rows[rng.integers(0, 200, 200)]
    first, which = _distinct_rows(rows)
    np.testing.assert_array_equal(rows[first][which], rows)
    assert (np.diff(first) > 0).all() and len(first) == len(np.unique(rows, axis=0))
    # Bit patterns (odd, 0) and (0, 1) hash alike: odd * 1 + 0 * odd = 0 * 1 + 1 * odd.
    odd = np.array([0x9E3779B97F4A7C15, 0, 0, 1], dtype=np.uint64).view(float).reshape(2, 2)
    collide = np.vstack([odd, odd[::-1], odd])
    first, which = _distinct_rows(collide)
    assert first.tolist() == [0, 1] and which.tolist() == [0, 1, 1, 0, 0, 1]
    empty = _distinct_rows(np.empty((0, 4)))
    assert empty[0].size == empty[1].size == 0


@pytest.mark.parametrize("cell", [0.5, 1.0, 0.1, 0.4, 1.2])
def test_a_steep_hill_is_climbed_to_its_crest_on_any_grid(rules, cell):
    """'steep hills slow soldiers down as they travel up the slope ... no movement
    modifier for moving down': humans (steep x2) climbing 3 cm to the crest of a
    steep hill 6 cm across pay 6, every centimetre of it, the last cell below the
    crest included; down the far side, 3.  On 0.4 cm cells the crest runs through
    the middle of a cell; on 1.2 cm cells the crest and both feet do."""
    hill = feature("hill", rect(10, -10, 16, 16), elevation=3, steep=True)
    g = grid_for(rules, [hill], "humans", 30, 6, cell=cell)
    assert engine.price_path(g, [(10, 3), (13, 3)]).cost == pytest.approx(6, abs=1e-6)
    assert engine.price_path(g, [(13, 3), (16, 3)]).cost == pytest.approx(3, abs=1e-6)
    assert engine.route(g, (7, 3), (19, 3)).cost == pytest.approx(3 + 6 + 3 + 3, abs=1e-6)



@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("ring", [
    [(10, -10), (16, -10), (16, 16), (10, 16)],  # convex
    [(10, -10), (16, -10), (16, 4), (13, 4), (13, 16), (10, 16)],  # an L
])
def test_a_repeated_vertex_in_a_hill_changes_nothing(rules, ring):
    """A polygon may repeat a vertex (a zero-length edge, as hand-edited maps do): the
    hill is the same, and no edge of no length divides by zero."""
    def grid(points):
        coords = [list(p) for p in [*points, points[0]]]
        hill = feature("hill", {"type": "Polygon", "coordinates": [coords]}, elevation=3,
                       steep=True)
        return grid_for(rules, [hill], "humans", 30, 20, cell=0.5)

    clean = grid(ring)
    for k in range(len(ring)):
        twice = grid([*ring[:k + 1], ring[k], *ring[k + 1:]])
        for name in ("base", "steep"):
            assert np.array_equal(getattr(twice, name), getattr(clean, name)), (k, name)
        path = [(7, 3), (19, 3), (11.5, 14)]
        assert engine.price_path(twice, path).cost == engine.price_path(clean, path).cost

def _diagonal_ridge():
    """A ridge 2 wide and 40 long, its crest the line x - y = 8 through (11, 3)."""
    d, n = np.array([1.0, 1.0]) / math.sqrt(2), np.array([1.0, -1.0]) / math.sqrt(2)
    c = np.array([11.0, 3.0])
    corners = [c + 20 * d + n, c - 20 * d + n, c - 20 * d - n, c + 20 * d - n]
    return {"type": "Polygon", "coordinates": [[p.tolist() for p in corners + corners[:1]]]}


@pytest.mark.parametrize("cell", [0.5, 1.0, 0.3])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_steep_ridge_at_an_angle_is_climbed_to_its_crest(rules, cell, reverse):
    """'steep hills slow soldiers down as they travel up the slope': a steep ridge
    2 cm across and 1 cm high, its crest the line x - y = 8 (at 45 degrees to the
    grid, so it crosses cells anywhere in them).  Humans (steep x2) crossing it
    along y = 3 go 2 x sqrt(2) cm over it, half of it up to the crest: 12 cm from
    x = 5 to 17 cost 12 + sqrt(2), either way."""
    ridge = feature("hill", _diagonal_ridge(), elevation=1, steep=True)
    g = grid_for(rules, [ridge], "humans", 30, 6, cell=cell)
    path = [(5, 3), (17, 3)][::-1] if reverse else [(5, 3), (17, 3)]
    assert engine.price_path(g, path).cost == pytest.approx(12 + math.sqrt(2), abs=1e-6)
    up = [(11 - math.sqrt(2), 3), (11, 3)]  # foot to crest, along y = 3
    assert engine.price_path(g, up).cost == pytest.approx(2 * math.sqrt(2), abs=1e-6)


@pytest.mark.parametrize("hills", ["ridge", "overlap"])
def test_the_folds_follow_the_hills_along_random_pieces(rules, hills):
    """Each cell's two planes and fold (`Layers.slopes`, read by `_kernels.fold`) against
    the hills' own height, sampled along random pieces inside random hill cells: the
    share of each piece that gains height agrees to the sampling's resolution.  A
    ridge at an angle to the grid (its crest and feet cross cells anywhere, never
    two in one cell), and with a gentle hill overlapping it (their planes add up)."""
    import shapely

    from engine.terrain import _kernels as tkern
    from engine.terrain.raster import layers

    feats = [feature("hill", _diagonal_ridge(), elevation=1, steep=True)]
    if hills == "overlap":
        feats.append(feature("hill", rect(0, -10, 40, 30), elevation=3))
    g = grid_for(rules, feats, "humans", 30, 6, cell=0.3)
    lay = layers(g.battlefield, rules)

    def height(x, y):  # every hill's, from its outline (independent of the engine)
        h = np.zeros(x.shape)
        for f in g.battlefield.features:
            crest = shapely.maximum_inscribed_circle(f.full).length
            d = shapely.distance(f.full.boundary, shapely.points(x, y))
            h += np.where(shapely.contains_xy(f.full, x, y), f.elevation * d / crest, 0.0)
        return h

    rng = np.random.default_rng(30)
    cells = np.argwhere(lay.steep != 0)  # the ridge's
    folded = 0
    for r, c in cells[rng.choice(len(cells), 400)]:
        a, b = rng.uniform(-0.5, 0.5, 2), rng.uniform(-0.5, 0.5, 2)
        u = (b - a) / np.linalg.norm(b - a)
        t1, t2, m0, m1, m2 = tkern.fold(2.0, lay.slopes, lay.slope_of[r, c], u[0], u[1], *a, *b)
        model = t1 * (m0 == 2.0) + (t2 - t1) * (m1 == 2.0) + (1 - t2) * (m2 == 2.0)
        s = np.linspace(0, 1, 4001)
        x = (c + 0.5 + a[0] + s * (b[0] - a[0])) * 0.3
        y = (r + 0.5 + a[1] + s * (b[1] - a[1])) * 0.3
        rises = np.diff(height(x, y)) > 1e-12
        assert model == pytest.approx(rises.mean(), abs=1e-3), (r, c, a, b)
        folded += 0.0 < t1 < 1.0
    assert folded > 20  # pieces that cross a fold were checked
