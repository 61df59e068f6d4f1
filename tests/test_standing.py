"""A point on the edge or corner of cells: the cell a unit there stands in
(`CostGrid.stand`), and the route, reach and price from and to it."""

import pytest

import engine
from engine.errors import InputError

from .conftest import MAPS, battlefield, feature, line


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
