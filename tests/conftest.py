"""Shared fixtures: the shipped rules, and small maps built in memory."""

import itertools
import math
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


def _on(path, q):
    """The index of the segment of the polyline ``path`` that its point ``q`` lies on."""
    for i, (p0, p1) in enumerate(itertools.pairwise(path)):
        if abs(math.dist(p0, q) + math.dist(q, p1) - math.dist(p0, p1)) < 1e-9:
            return i
    raise AssertionError(f"{q} is not on the path")


def cut(path, a, b):
    """The part of the polyline ``path`` from its point ``a`` to its point ``b`` (each
    on it, ``b`` no nearer its start than ``a``)."""
    i, j = _on(path, a), _on(path, b)
    if (j, math.dist(path[j], b)) < (i, math.dist(path[i], a)):
        raise AssertionError(f"{b} comes before {a}")
    return [a, *path[i + 1:j + 1], b]


def farther(path, q, by):
    """The point ``by`` farther along the polyline ``path`` than its point ``q``, or None
    past its end."""
    for p0, p1 in itertools.pairwise(path[_on(path, q):]):
        left = math.dist(q, p1)
        if left >= by:
            f = by / math.dist(p0, p1)
            return q[0] + f * (p1[0] - p0[0]), q[1] + f * (p1[1] - p0[1])
        by -= left
        q = p1
    return None


def pytest_collection_modifyitems(config, items):
    """Skip the long fuzz run unless ``-m`` names it (``pytest -m fuzz``)."""
    if "fuzz" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="the long fuzz run: select it with pytest -m fuzz")
    for item in items:
        if "fuzz" in item.keywords:
            item.add_marker(skip)


VILLAGE_RULES = """
[ruleset]
name = "Village skirmish"
units = "cm"
rank_depth = 2.0

[layers]
mud = "area"

[terrain.clear]
[terrain.mud]
layers = ["mud"]

[defaults.multipliers]
mud = 2.0

[races.peasants]
move = 10.0
"""


def village_map() -> dict:
    """A small map in the village rules' terrain: mud across the middle."""
    return battlefield([feature("mud", rect(10, 0, 20, 20), fid="mire")], 30, 20)


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """A real ``engine serve`` on a free loopback port (with a maps folder holding
    ``village`` and the rules file ``village``): its base URL and the line it printed
    on starting. It stops at the end of the session, or by itself after 30 minutes."""
    import json
    import queue
    import shutil
    import subprocess
    import sys
    import threading
    import time

    folder = tmp_path_factory.mktemp("served")
    (folder / "maps").mkdir()
    (folder / "maps" / "village.geojson").write_text(json.dumps(village_map()))
    (folder / "village.toml").write_text(VILLAGE_RULES)
    limit = ["timeout", "-s", "INT", "1800"] if shutil.which("timeout") else []
    proc = subprocess.Popen(
        [*limit, sys.executable, "-m", "engine", "serve", "--port", "0", "--maps",
         str(folder / "maps"), "--rules", str(folder / "village.toml")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    deadline, said = time.monotonic() + 900, []  # a cold start compiles every kernel
    try:
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            except queue.Empty:
                raise TimeoutError("engine serve did not start: " + "".join(said)) from None
            said.append(line)
            if line.startswith("engine serve: http://"):
                break
            if proc.poll() is not None and lines.empty():
                raise RuntimeError("engine serve stopped: " + "".join(said))
        yield line.split()[2].rstrip("/"), line
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
