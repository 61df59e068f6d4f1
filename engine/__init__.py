"""Movement engine for fantasy wargame AI.

Where a unit can go this turn (`reach`), the cheapest way there (`route`) and
why it costs what it costs (`price_path`), priced as the tabletop rules price
movement.  Start with `load_map`, `load_rules` and `cost_grid`.
"""

from .ai import (
    FlowField,
    Option,
    Threat,
    choose_position,
    flow_field,
    reach_army,
    reach_turns,
    threat_map,
)
from .checks import BuildingEntry, ChargeCheck, Manoeuvre, can_charge, enter_building, manoeuvre
from .effects import Charge, Effects, charge_disorders, terrain_effects
from .errors import EngineError, InputError, MapError, NoRouteError, RulesError
from .grid import GridSpec
from .highway import Highway
from .maps import Battlefield, Feature, load_map
from .network import Chokepoint, Network, Region, chokepoints, describe, network
from .pricing import Leg, Pricing, price_path
from .regions import connected, regions
from .rules import Ruleset, Unit, load_rules, shipped_rulesets
from .search import (
    GridRouter,
    Reach,
    Route,
    cost_field,
    grid_route,
    reach,
    reach_many,
    route,
    warm_up,
)
from .terrain import CostGrid, cost_grid
from .visibility import Sight, viewshed, visible

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
    "Pricing",
    "Reach",
    "Region",
    "Route",
    "RulesError",
    "Ruleset",
    "Sight",
    "Threat",
    "Unit",
    "can_charge",
    "charge_disorders",
    "chokepoints",
    "choose_position",
    "connected",
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
    "shipped_rulesets",
    "terrain_effects",
    "threat_map",
    "viewshed",
    "visible",
    "warm_up",
]
