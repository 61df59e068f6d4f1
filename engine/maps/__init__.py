"""Map readers: files in, a validated `Battlefield` (or a Moving AI grid) out.

`battlefield` holds the validated, clipped features every reader produces;
`geojson` reads the engine's own GeoJSON dialect; `movingai` reads Moving AI's
benchmark grids and scenario files.
"""

from .battlefield import Battlefield, Feature
from .geojson import load_map, shipped_maps
from .movingai import GridMap, Scenario, load_grid_map, load_scenarios, map_for

__all__ = [
    "Battlefield",
    "Feature",
    "GridMap",
    "Scenario",
    "load_grid_map",
    "load_map",
    "load_scenarios",
    "map_for",
    "shipped_maps",
]
