"""Search: reach, routes and their prices over a `CostGrid`.

`front` answers `reach`, `reach_many` and `route`; `pricing` prices a path
leg by leg; `flow` builds flow fields to goals; `highway` plans long routes
on campaign maps; `raw` searches plain multiplier arrays (`cost_field`,
`GridRouter`); `scenarios` runs Moving AI's benchmark.  The numba kernels are
in `_kernels`, one module per algorithm.
"""

from .flow import FlowField, flow_field
from .front import Reach, Route, reach, reach_many, route
from .highway import Highway
from .pricing import Leg, Pricing, price_path
from .raw import GridRouter, cost_field, grid_route
from .scenarios import ScenarioResults, run_scenarios

__all__ = [
    "FlowField",
    "GridRouter",
    "Highway",
    "Leg",
    "Pricing",
    "Reach",
    "Route",
    "ScenarioResults",
    "cost_field",
    "flow_field",
    "grid_route",
    "price_path",
    "reach",
    "reach_many",
    "route",
    "run_scenarios",
]
