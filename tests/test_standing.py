"""A point on the edge or corner of cells: the cell a unit there stands in
(`CostGrid.stand`), and the route, reach and price from and to it."""

import math

import numpy as np
import pytest

import engine
from engine.errors import InputError

from .conftest import MAPS, battlefield, feature, line, rect


@pytest.fixture(scope="module")
def bs():
    return engine.load_rules("battlesystem")


@pytest.fixture(scope="module")
def hedged():
    """A hedge (4" to cross) over the cells x = 10.75 .. 11.25 (0.25" cells)."""
    return engine.load_map(battlefield([feature("hedge", line((11, 0), (11, 10)), width=0.25)],
                                       30, 10, units="in", cell=0.25))


@pytest.fixture(scope="module")
def demo(rules):
    return engine.cost_grid(engine.load_map(MAPS / "demo.geojson"), rules,
                            rules.unit("humans", depth=0))


def test_a_point_stands_in_the_cell_holding_it_or_outside_what_charges_at_once(hedged, bs):
    g = engine.cost_grid(hedged, bs, bs.unit("infantry", depth=0))
    assert g.stand((10.8, 5.1)) == (20, 43)  # inside a hedge cell
    assert g.stand((10.75, 5.1)) == (20, 42)  # on its near edge: the open cell before it
    assert g.stand((10.75, 5)) == (20, 42)  # on a corner too
    assert g.stand((11.25, 5.1)) == (20, 45)  # on its far edge: the open cell after it
    assert g.stand((10.75 - 1e-14, 5.1)) == (20, 42)  # within the walk's tolerance
    assert g.stand((20, 5)) == (20, 80)  # open both sides: the cell holding it
    assert g.stand((30, 10)) == (39, 119) and g.stand((0, 0)) == (0, 0)  # the table's corners
    with pytest.raises(InputError, match=r"off the table"):
        g.stand((30.5, 5))


@pytest.mark.parametrize("unit", [{"depth": 0}, {"ranks": 2}])
def test_a_unit_on_a_hedges_edge_pays_to_cross_it(hedged, bs, unit):
    """From the hedge's near edge, 7.9" on cost 4 more (the crossing) whichever way it
    is asked, as from a hair before it; from its far edge, nothing more."""
    g = engine.cost_grid(hedged, bs, bs.unit("infantry", **unit))
    for x in (10.75, 10.7499):
        end = (x + 7.9, 5)
        rt = engine.route(g, (x, 5), end)
        assert rt.cost == pytest.approx(11.9)
        assert engine.price_path(g, [(x, 5), end]).cost == pytest.approx(11.9)
        assert engine.reach(g, (x, 5), 12).cost_at(end) == pytest.approx(11.9)
        assert not engine.reach(g, (x, 5), 12).reachable((x + 8.1, 5))
    assert engine.route(g, (11.25, 5), (19.15, 5)).cost == pytest.approx(7.9)
    assert engine.route(g, (11.25, 5), (5, 5)).cost == pytest.approx(10.25)


def test_a_unit_on_a_bridges_edge_changes_formation_to_go_onto_it(rules):
    """Fantasy Warlord humans at the near end of a 5-wide bridge (its cells begin at
    y = 18): stepping on costs the 5 cm formation change, as from before it."""
    bf = engine.load_map(battlefield([feature("river", line((-1, 20), (21, 20)), width=4),
                                      feature("bridge", line((10, 16), (10, 24)), width=5)],
                                     20, 40))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    assert g.narrow[g.grid.xy_to_rc((10, 18))] > 0 and g.narrow[g.grid.xy_to_rc((10, 17.9))] == 0
    for y in (18, 17.999):
        assert engine.route(g, (10, y), (10, y + 4)).cost == pytest.approx(9)
        assert engine.price_path(g, [(10, y), (10, y + 4)]).cost == pytest.approx(9)


def test_a_point_on_a_buildings_edge_is_reached_from_outside(demo):
    """(141.25, 68) lies on a building's top edge on the demo map: the unit can walk to
    it and from it, and route, reach and price agree."""
    edge, above = (141.25, 68), (141.25, 63)
    assert demo.base[demo.grid.xy_to_rc(edge)] == float("inf")
    assert engine.route(demo, above, edge).cost == pytest.approx(5)
    assert engine.route(demo, edge, above).cost == pytest.approx(5)
    assert engine.reach(demo, above, 20).cost_at(edge) == pytest.approx(5)
    assert engine.reach(demo, edge, 20).cost_at(above) == pytest.approx(5)
    assert engine.connected(demo, edge, (15, 60))
    with pytest.raises(InputError, match=r"goal \(141\.25, 68\.1\) is on impassable ground"):
        engine.route(demo, above, (141.25, 68.1))


@pytest.mark.parametrize("name", ["demo", "crossings"])
@pytest.mark.parametrize("unit", [{"depth": 0}, {"ranks": 2}])
def test_a_move_from_a_cells_edge_costs_what_it_costs_from_a_hair_inside_its_cell(
        rules, name, unit):
    """From points on the edges of cells that charge at once (obstacles, passages) or
    are impassable, a straight move of up to 6 cm any way costs what it costs from
    1e-7 inside the cell the point stands in (`CostGrid.stand`): the pricing walk
    starts the front where `stand` says, wherever the move goes."""
    g = engine.cost_grid(engine.load_map(MAPS / f"{name}.geojson"), rules,
                         rules.unit("humans", **unit))
    cell, cols = g.cell, g.grid.shape[1]
    special = np.flatnonzero(((g.enter > 0) | (g.narrow > 0) | ~np.isfinite(g.base)).ravel())
    rng = np.random.default_rng(2)
    moved = tried = 0
    while tried < 150:
        r, c = divmod(int(rng.choice(special)), cols)
        t = float(rng.uniform(0.05, 0.95))
        x, y = [((c + t) * cell, r * cell), ((c + t) * cell, (r + 1) * cell),
                (c * cell, (r + t) * cell), ((c + 1) * cell, (r + t) * cell)][rng.integers(4)]
        if not (0 < x < g.grid.width and 0 < y < g.grid.height):
            continue
        sr, sc = g.stand((x, y))
        if g.base[sr, sc] == math.inf:
            continue
        tried += 1
        moved += (sr, sc) != g.grid.xy_to_rc((x, y))
        inside = (x + 1e-7 * np.sign((sc + 0.5) * cell - x),
                  y + 1e-7 * np.sign((sr + 0.5) * cell - y))
        a, far = rng.uniform(0, 2 * math.pi), rng.uniform(0.3, 6)
        q = (min(max(x + far * math.cos(a), 0), g.grid.width),
             min(max(y + far * math.sin(a), 0), g.grid.height))
        cost = engine.price_path(g, [(x, y), q]).cost
        assert cost == pytest.approx(engine.price_path(g, [inside, q]).cost, rel=1e-5,
                                     abs=1e-5), ((x, y), q)
    assert moved > 20  # many stand outside the cell holding them


def test_ranks_through_the_corner_of_woods_along_its_edge_stand_beside_it(rules):
    """Ranks 2 cm deep standing straight behind a unit on a line through the corner
    (19, 22) of woods, nearly along its edge x = 19 (out of the woods both sides of
    the corner): whether the line is in the woods' corner cell for a hair turns on the
    last digit of the unit's point.  They stand on the open ground either way: a move
    costs its length, priced or routed."""
    bf = engine.load_map(battlefield([feature("woods", rect(19, 22, 23, 30))], 40, 30))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=2))
    for slant in (1e-7, 1e-6, 1e-5):
        for y in np.linspace(22.1, 23.9, 10):
            p = (19 - slant * (y - 22), y)
            q = (p[0] - slant, p[1] + 1)
            length = math.hypot(slant, 1)
            assert engine.price_path(g, [p, q]).cost == pytest.approx(length, rel=1e-12)
            assert engine.route(g, p, q).cost == pytest.approx(length, rel=1e-12)
