"""Movement engine for fantasy wargame AI.

Where a unit can go this turn (`reach`), the cheapest way there (`route`) and
why it costs what it costs (`price_path`), priced as the tabletop rules price
movement.  Start with `load_map`, `load_rules` and `cost_grid`.
"""

from . import _cache

_cache.configure()  # before any kernel module is imported

from ._version import __version__  # noqa: E402
from .ai import (  # noqa: E402
    BuildingEntry,
    ChargeCheck,
    Manoeuvre,
    Option,
    Sight,
    Threat,
    can_charge,
    choose_position,
    enter_building,
    manoeuvre,
    reach_army,
    reach_turns,
    threat_map,
    viewshed,
    visible,
)
from .errors import EngineError, InputError, MapError, NoRouteError, RulesError  # noqa: E402
from .grid import GridSpec  # noqa: E402
from .maps import Battlefield, Feature, Points, convert_map, load_map, shipped_maps  # noqa: E402
from .rules import Ruleset, Unit, load_rules, shipped_rulesets  # noqa: E402
from .search import (  # noqa: E402
    FlowField,
    GridRouter,
    Highway,
    Leg,
    Pricing,
    Reach,
    Route,
    cost_field,
    flow_field,
    grid_route,
    price_path,
    reach,
    reach_many,
    route,
)
from .terrain import (  # noqa: E402
    Charge,
    Chokepoint,
    CostGrid,
    Effects,
    Network,
    Region,
    charge_disorders,
    chokepoints,
    connected,
    cost_grid,
    describe,
    network,
    regions,
    terrain_effects,
)
from .warmup import warm_up  # noqa: E402

__all__ = [
    "Battlefield",
    "BuildingEntry",
    "Charge",
    "ChargeCheck",
    "Chokepoint",
    "CostGrid",
    "Effects",
    "EngineError",
    "Feature",
    "FlowField",
    "GridRouter",
    "GridSpec",
    "Highway",
    "InputError",
    "Leg",
    "Manoeuvre",
    "MapError",
    "Network",
    "NoRouteError",
    "Option",
    "Points",
    "Pricing",
    "Reach",
    "Region",
    "Route",
    "RulesError",
    "Ruleset",
    "Sight",
    "Threat",
    "Unit",
    "__version__",
    "can_charge",
    "charge_disorders",
    "chokepoints",
    "choose_position",
    "connected",
    "convert_map",
    "cost_field",
    "cost_grid",
    "describe",
    "enter_building",
    "flow_field",
    "grid_route",
    "load_map",
    "load_rules",
    "manoeuvre",
    "network",
    "price_path",
    "reach",
    "reach_army",
    "reach_many",
    "reach_turns",
    "regions",
    "route",
    "shipped_maps",
    "shipped_rulesets",
    "terrain_effects",
    "threat_map",
    "viewshed",
    "visible",
    "warm_up",
]
