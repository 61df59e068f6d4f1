"""Compile (or load from numba's disk cache) every kernel once, on tiny maps."""

from __future__ import annotations

import numpy as np

from .search.front import reach, reach_many, route
from .search.raw import GridRouter, cost_field

__all__ = ["warm_up"]


def warm_up() -> None:
    """Compile (or load from numba's disk cache) every kernel on a tiny map."""
    from .ai.visibility import viewshed, visible
    from .maps.geojson import load_map
    from .rules.load import load_rules
    from .search.flow import flow_field
    from .terrain.costgrid import cost_grid

    rules = load_rules("fantasy-warlord")
    bf = load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 4, "height": 4, "units": "cm"},
        "features": [{
            "type": "Feature", "properties": {"terrain": "hill", "elevation": 1, "steep": True},
            "geometry": {"type": "Polygon", "coordinates": [[[1, 1], [3, 1], [3, 3], [1, 1]]]},
        }],
    })
    for unit in (rules.unit("humans"), rules.unit("humans", depth=0)):
        g = cost_grid(bf, rules, unit)
        reach(g, (0.25, 0.25), 3)
        reach_many(g, [(0.25, 0.25)], 3)
        route(g, (0.25, 0.25), (3.75, 3.75))
        flow_field(g, [(3.75, 3.75)])
    viewshed(bf, rules, (0.25, 0.25))
    visible(bf, rules, (0.25, 0.25), (3.75, 3.75))
    cost_field(np.ones((4, 4)), (0, 0), directions=8)
    GridRouter(np.ones((4, 4)), directions=8).route((0, 0), (3, 3))
    bs = load_rules("battlesystem")  # ground priced per started quantum
    woods = load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 2, "height": 2, "units": "in"},
        "features": [{"type": "Feature", "properties": {"terrain": "light woods"},
                      "geometry": {"type": "Polygon",
                                   "coordinates": [[[1, 0], [2, 0], [2, 2], [1, 2], [1, 0]]]}}],
    })
    reach(cost_grid(woods, bs, bs.unit("infantry", depth=0)), (0.1, 0.1), 3)
