"""Regions answer "can it get there at all?" exactly as the search would."""

import numpy as np
import pytest

import engine

from .conftest import feature as feat
from .conftest import grid_for, line
from .test_kernels import centre, random_map

RIVER = feat("river", line((20, -1), (20, 21)), width=4)


def test_a_river_splits_the_table_until_a_crossing(rules):
    g = grid_for(rules, [RIVER])
    assert engine.regions(g)[1] == 2
    assert not engine.connected(g, (5, 5), (35, 5))
    assert engine.connected(g, (5, 5), (5, 15))
    bridged = grid_for(rules, [RIVER, feat("bridge", line((15, 10), (25, 10)), width=2)])
    assert engine.connected(bridged, (5, 5), (35, 5))
    assert engine.connected(grid_for(rules, [RIVER], "hill trolls"), (5, 5), (35, 5))  # swims
    assert not engine.connected(g, (5, 5), (20, 5))  # in the river itself


@pytest.mark.parametrize("seed", range(3))
def test_connected_exactly_when_a_route_exists(rules, seed):
    g = engine.cost_grid(random_map(seed), rules, rules.unit("humans", depth=2))
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    for a, b in rng.choice(open_cells, (12, 2)):
        try:
            engine.route(g, centre(g, a), centre(g, b))
            routed = True
        except engine.NoRouteError:
            routed = False
        assert engine.connected(g, centre(g, a), centre(g, b)) == routed
