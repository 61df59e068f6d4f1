"""Shared fixtures: the shipped rules, and small maps built in memory."""

import os
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent
MAPS = ROOT / "maps"
EXAMPLES = MAPS / "examples"
# Moving AI's benchmark maps: MOVINGAI_DIR, else the folder laid beside the project.
MOVINGAI = Path(os.environ.get("MOVINGAI_DIR") or ROOT.parent / "shared" / "movingai")


@pytest.fixture(scope="session")
def rules():
    return engine.load_rules("fantasy-warlord")


def rect(x0, y0, x1, y1):
    """A rectangle polygon geometry."""
    return {"type": "Polygon", "coordinates": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]]}


def line(*points):
    """A line string geometry."""
    return {"type": "LineString", "coordinates": [list(p) for p in points]}


def feature(terrain, geometry, fid=None, **props):
    f = {"type": "Feature", "properties": {"terrain": terrain, **props}, "geometry": geometry}
    if fid is not None:
        f["id"] = fid
    return f


def battlefield(features, width=40, height=20, units="cm", cell=0.5):
    """A map dict ready for `engine.load_map`."""
    return {
        "type": "FeatureCollection",
        "battlefield": {"width": width, "height": height, "units": units, "cell": cell},
        "features": features,
    }


def grid_for(rules, features, race="humans", width=40, height=20, cell=0.5, **unit):
    """Cost grid of an in-memory map in the rules' units for one unit (depth 0 and one
    figure wide unless given)."""
    unit.setdefault("depth", 0)
    unit.setdefault("frontage", rules.figure_width)
    bf = engine.load_map(battlefield(features, width, height, units=rules.units, cell=cell))
    return engine.cost_grid(bf, rules, rules.unit(race, **unit))


def pytest_collection_modifyitems(config, items):
    """Skip the long fuzz run unless ``-m`` names it (``pytest -m fuzz``)."""
    if "fuzz" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="the long fuzz run: select it with pytest -m fuzz")
    for item in items:
        if "fuzz" in item.keywords:
            item.add_marker(skip)
