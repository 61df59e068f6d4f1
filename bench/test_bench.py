"""pytest-benchmark: reach, route and a full cost field.

Run with ``python -m pytest bench`` (not part of the test run).  Each
benchmark checks its answer before it is timed.
"""

import math

import numpy as np
import pytest

import engine
from engine.grid import neighbourhood, segment_cells

from .conftest import random_grid

START = (15.0, 60.0)


@pytest.mark.parametrize("ranks", [0, 2], ids=["depth-0", "two-ranks"])
def test_reach_24cm_demo(benchmark, rules, demo, ranks):
    unit = rules.unit("humans", move=24, depth=2.0 * ranks)
    g = engine.cost_grid(demo, rules, unit)
    r = engine.reach(g, START, any_angle=False)  # the lattice (any-angle: the _point tests)
    probe = g.grid.rc_to_xy(divmod(int(r.cells[len(r.cells) // 3]), g.grid.shape[1]))
    start = g.grid.rc_to_xy(g.grid.xy_to_rc(START))
    assert r.cost_at(probe) == pytest.approx(engine.route(g, start, probe, any_angle=False).cost)
    assert r.area > 0.5 * math.pi * 24**2
    benchmark.extra_info["cells"] = len(r.cells)
    benchmark(engine.reach, g, START, any_angle=False)


@pytest.mark.parametrize("any_angle", [False, True], ids=["lattice", "any-angle"])
def test_reach_24cm_demo_point(benchmark, rules, demo, any_angle):
    """A unit as a point on the lattice and any-angle, side by side."""
    g = engine.cost_grid(demo, rules, rules.unit("humans", move=24, depth=0))
    r = engine.reach(g, START, any_angle=any_angle)
    assert r.cost_at(START) == (0.0 if any_angle else r.cost.min())
    assert r.area > 0.5 * math.pi * 24**2
    benchmark.extra_info["cells"] = len(r.cells)
    benchmark(engine.reach, g, START, any_angle=any_angle)


@pytest.mark.parametrize("any_angle", [False, True], ids=["lattice", "any-angle"])
def test_route_across_demo_point(benchmark, rules, demo, any_angle):
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    rt = engine.route(g, START, (170.0, 60.0), any_angle=any_angle)
    assert engine.price_path(g, rt.path).cost == rt.cost
    benchmark.extra_info["cost"] = rt.cost
    benchmark(engine.route, g, START, (170.0, 60.0), any_angle=any_angle)


def test_route_across_demo(benchmark, rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans", ranks=2))
    rt = engine.route(g, START, (170.0, 60.0))
    assert engine.price_path(g, rt.path).cost == pytest.approx(rt.cost)
    assert rt.cost >= math.dist(START, (170.0, 60.0))
    benchmark.extra_info["cost"] = rt.cost
    benchmark(engine.route, g, START, (170.0, 60.0))


def bellman_check(m: np.ndarray, field: np.ndarray, directions: int, samples: int = 2000) -> None:
    """Every sampled cell's cost is the best over its neighbours (edge costs by segment walk)."""
    rows, cols = m.shape
    rng = np.random.default_rng(1)
    offsets = neighbourhood(directions)
    reach = int(np.abs(offsets).max())  # the longest step: neighbours stay on the grid
    weights = []
    for dr, dc in offsets:
        pieces, corners = segment_cells((0.5, 0.5), (0.5 + dc, 0.5 + dr))
        weights.append(([(r, c, s1 - s0) for r, c, s0, s1 in pieces], corners))
    checked = 0
    while checked < samples:
        r, c = int(rng.integers(reach, rows - reach)), int(rng.integers(reach, cols - reach))
        if not math.isfinite(field[r, c]) or field[r, c] == 0:
            continue
        best = math.inf
        for (dr, dc), (pieces, corners) in zip(offsets, weights, strict=True):
            ar, ac = r - dr, c - dc  # the neighbour a stepping (dr, dc) onto (r, c)
            if any(math.isinf(m[ar + cr, ac + cc]) for cr, cc in corners):
                continue
            w = sum(length * m[ar + pr, ac + pc] for pr, pc, length in pieces)
            best = min(best, field[ar, ac] + w)
        assert field[r, c] == pytest.approx(best, rel=1e-12), (r, c)
        checked += 1


@pytest.mark.parametrize("directions", [8, 32], ids=["8-dir", "32-dir"])
@pytest.mark.parametrize("n", [256, 1024, 2048])
def test_full_field(benchmark, n, directions):
    """The engine on a raw grid: 8 directions (tcod's connectivity) and 32 (the default)."""
    m = random_grid(n)
    field = engine.cost_field(m, (n // 2, n // 2), directions=directions)
    bellman_check(m, field, directions)
    benchmark.extra_info["reached"] = int(np.isfinite(field).sum())
    benchmark.pedantic(
        engine.cost_field, (m, (n // 2, n // 2)), {"directions": directions},
        rounds=3 if n > 1024 else 5,
    )


@pytest.mark.parametrize("n", [256, 1024, 2048])
def test_full_field_tcod_dijkstra2d(benchmark, n):
    """The peer: python-tcod's 8-connected integer Dijkstra on the same grid (its costs)."""
    tcod = pytest.importorskip("tcod")
    m = random_grid(n)
    cost = np.where(np.isinf(m), 0, m).astype(np.int32)

    def run():
        dist = np.full(m.shape, np.iinfo(np.int32).max, dtype=np.int32)
        dist[n // 2, n // 2] = 0
        tcod.path.dijkstra2d(dist, cost, 2, 3, out=dist)
        return dist

    dist = run()
    assert dist[n // 2, n // 2] == 0 and (dist[np.isinf(m)] == np.iinfo(np.int32).max).all()
    benchmark.pedantic(run, rounds=3 if n > 1024 else 5)
