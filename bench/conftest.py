"""Shared inputs for the benchmarks: the demo battlefield and random weighted grids, and
the scripts' timer (`median_ms`)."""

import statistics
import time
from pathlib import Path

import numpy as np
import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def rules():
    return engine.load_rules("fantasy-warlord")


@pytest.fixture(scope="session")
def demo():
    return engine.load_map(ROOT / "maps" / "demo.geojson")


def median_ms(fn, rounds: int) -> float:
    """Median wall-clock time of ``rounds`` calls of ``fn`` after one warm-up call, ms."""
    fn()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def interleaved_ms(fns: dict, rounds: int) -> dict:
    """Median wall-clock time of ``rounds`` calls of each of ``fns`` (by name), ms,
    after one warm-up call of each: a round calls each once in turn, so that a
    slow spell of a shared machine weighs on all of them alike."""
    for fn in fns.values():
        fn()
    times: dict = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def random_grid(n: int, seed: int = 0) -> np.ndarray:
    """Costs 1..4, about 10% blocked (inf), the centre open."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 5, (n, n)).astype(np.float64)
    m[rng.random((n, n)) < 0.1] = np.inf
    m[n // 2, n // 2] = 1.0
    return m


def campaign_map(n: int, seed: int = 1) -> engine.Battlefield:
    """Wild country n x n cm at 1 cm cells: scrub everywhere, woods, broken ground and bog
    over it, and a road grid (six roads each way) whose roads bend."""
    rng = np.random.default_rng(seed)
    s = n / 4096
    features = []

    def add(kind, gtype, coords, **props):
        features.append({"type": "Feature", "properties": {"terrain": kind, **props},
                         "geometry": {"type": gtype, "coordinates": coords}})

    add("scrub", "Polygon", [[[-1, -1], [n + 1, -1], [n + 1, n + 1], [-1, n + 1], [-1, -1]]])
    for _ in range(300):
        cx, cy = rng.uniform(0, n, 2)
        angle = np.linspace(0, 2 * np.pi, 10)[:-1] + rng.uniform(0, 0.3, 9)
        r = rng.uniform(60, 260) * s * rng.uniform(0.7, 1.0, 9)
        ring = [[float(x), float(y)] for x, y in zip(cx + r * np.cos(angle),
                                                     cy + r * np.sin(angle), strict=True)]
        add(str(rng.choice(["woods", "broken ground", "bog"])), "Polygon", [ring + ring[:1]])
    for j in range(6):
        at = (300 + j * 700) * s
        along = np.linspace(0, n, 12)
        off = at + rng.uniform(-60, 60, 12) * s
        add("road", "LineString", [[float(x), float(y)] for x, y in zip(along, off, strict=True)],
            width=4)
        add("road", "LineString", [[float(y), float(x)] for x, y in zip(along, off, strict=True)],
            width=4)
    return engine.load_map({"type": "FeatureCollection", "features": features,
                            "battlefield": {"width": n, "height": n, "units": "cm", "cell": 1.0}})
