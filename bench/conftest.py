"""Shared inputs for the benchmarks: the demo battlefield and random weighted grids."""

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


def random_grid(n: int, seed: int = 0) -> np.ndarray:
    """Costs 1..4, about 10% blocked (inf), the centre open."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 5, (n, n)).astype(np.float64)
    m[rng.random((n, n)) < 0.1] = np.inf
    m[n // 2, n // 2] = 1.0
    return m
