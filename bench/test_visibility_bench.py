"""pytest-benchmark: a viewshed on a 2048 x 2048 grid.

A 1024 cm square table at 0.5 cm cells with 60 seeded hills (3 to 8 cm high)
and woods, jungle and scrub.  The answer is checked against `engine.visible`
on sampled cells before it is timed.
"""

import numpy as np
import pytest

import engine

OBSERVER = (512.0, 512.0)


def big_battlefield(n_features: int = 60, size: float = 1024.0, seed: int = 3):
    """A ``size``-cm square table (2048 cells a side at 0.5 cm) with seeded terrain."""
    rng = np.random.default_rng(seed)
    kinds = ["hill", "hill", "woods", "scrub", "jungle"]
    features = []
    for _ in range(n_features):
        x, y = rng.uniform(0, size - 60, 2)
        w, h = rng.uniform(15, 60, 2)
        kind = str(kinds[rng.integers(len(kinds))])
        props = {"terrain": kind}
        if kind == "hill":
            props["elevation"] = float(rng.uniform(3, 8))
        ring = [[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]]
        features.append({"type": "Feature", "properties": props,
                         "geometry": {"type": "Polygon", "coordinates": [ring]}})
    return engine.load_map({"type": "FeatureCollection",
                            "battlefield": {"width": size, "height": size, "units": "cm",
                                            "cell": 0.5},
                            "features": features})


@pytest.mark.parametrize("flying", [False, True], ids=["ground", "flyer"])
def test_viewshed_2048(benchmark, rules, flying):
    bf = big_battlefield()
    assert bf.grid.shape == (2048, 2048)
    seen = engine.viewshed(bf, rules, OBSERVER, flying=flying)
    rng = np.random.default_rng(0)
    for r, c in zip(rng.integers(0, 2048, 300), rng.integers(0, 2048, 300), strict=True):
        target = bf.grid.rc_to_xy((int(r), int(c)))
        assert engine.visible(bf, rules, OBSERVER, target, flying=flying).seen == seen[r, c]
    assert 0.05 < seen.mean() < 0.99
    benchmark.extra_info["seen_fraction"] = float(seen.mean())
    benchmark.pedantic(engine.viewshed, (bf, rules, OBSERVER), {"flying": flying}, rounds=7,
                       warmup_rounds=1)
