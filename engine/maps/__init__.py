"""Map readers: files in, a validated `Battlefield` (or a Moving AI grid) out.

`battlefield` holds the validated, clipped features every reader produces;
`geojson` reads the engine's own GeoJSON dialect, and converts between it and
Tiled; `tiled` translates Tiled maps into that dialect (and back); `movingai`
reads Moving AI's benchmark grids and scenario files.
"""

from .battlefield import Battlefield, Feature, Points
from .geojson import convert_map, load_map, shipped_maps
from .movingai import GridMap, Scenario, load_grid_map, load_scenarios, map_for

__all__ = [
    "Battlefield",
    "Feature",
    "GridMap",
    "Points",
    "Scenario",
    "convert_map",
    "load_grid_map",
    "load_map",
    "load_scenarios",
    "map_for",
    "shipped_maps",
]
