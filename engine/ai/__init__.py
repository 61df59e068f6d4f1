"""The questions an AI opponent asks, built on reach, route and terrain.

`armies` (reach of many units, several turns ahead), `threat` (who can reach
a cell next turn), `position` (where to move), `checks` (charges, manoeuvres,
entering buildings) and `visibility` (lines of sight, viewsheds; numba kernels
in `_sight`).
"""

from .armies import reach_army, reach_turns
from .checks import BuildingEntry, ChargeCheck, Manoeuvre, can_charge, enter_building, manoeuvre
from .position import DEFAULT_WEIGHTS, Option, choose_position
from .threat import Threat, threat_map
from .visibility import Sight, viewshed, visible

__all__ = [
    "DEFAULT_WEIGHTS",
    "BuildingEntry",
    "ChargeCheck",
    "Manoeuvre",
    "Option",
    "Sight",
    "Threat",
    "can_charge",
    "choose_position",
    "enter_building",
    "manoeuvre",
    "reach_army",
    "reach_turns",
    "threat_map",
    "viewshed",
    "visible",
]
