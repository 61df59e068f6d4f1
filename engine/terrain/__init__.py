"""Terrain: a battlefield's features rasterised and priced for one unit profile.

`raster` turns features into layers (which kinds cover each cell, hill height,
steep ground); `ground` says what a unit pays on ground covered by some kinds
(the movement rules); `lattice` is the set of steps a search takes and how
each is priced; `costgrid` joins them into a unit's `CostGrid`, with its numba
step tables in `_kernels`.  Beside them: `effects` (cover, concealment,
disorder), `roads` (the road, trail, bridge and ford network and its
chokepoints) and `connectivity` (which ground joins which).
"""

from .connectivity import connected, regions
from .costgrid import CostGrid, cost_grid
from .effects import Charge, Effects, charge_disorders, terrain_effects
from .raster import Layers, layers
from .roads import Chokepoint, Network, Region, chokepoints, describe, network

__all__ = [
    "Charge",
    "Chokepoint",
    "CostGrid",
    "Effects",
    "Layers",
    "Network",
    "Region",
    "charge_disorders",
    "chokepoints",
    "connected",
    "cost_grid",
    "describe",
    "layers",
    "network",
    "regions",
    "terrain_effects",
]
