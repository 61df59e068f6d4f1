"""pytest-benchmark: army reach, a threat map and flow fields (engine.ai).

Each answer is checked before it is timed: the army's reaches against one
`reach` per unit, the threat map against the union of its enemies' reaches,
and the flow field against `route` on sampled cells.
"""

import math

import numpy as np
import pytest

import engine
from engine import flow_field, reach_army, threat_map

from .test_visibility_bench import big_battlefield

PROFILES = (("humans", {"depth": 0}), ("humans", {"ranks": 2}), ("goblins", {}),
            ("wood elves", {}))


def army(demo, rules, n: int, seed: int = 0) -> list:
    """``n`` units of the four profiles on passable cells of the demo map."""
    rng = np.random.default_rng(seed)
    units = [rules.unit(race, **kw) for race, kw in PROFILES]
    out = []
    while len(out) < n:
        unit = units[len(out) % len(units)]
        xy = (float(rng.uniform(1, demo.width - 1)), float(rng.uniform(1, demo.height - 1)))
        g = engine.cost_grid(demo, rules, unit)
        if math.isfinite(g.base[g.grid.xy_to_rc(xy)]):
            out.append((unit, xy))
    return out


def test_reach_army_200_units(benchmark, rules, demo):
    units = army(demo, rules, 200)
    got = reach_army(demo, rules, units)
    for i in range(0, 200, 23):
        unit, xy = units[i]
        one = engine.reach(engine.cost_grid(demo, rules, unit), xy)
        np.testing.assert_allclose(got[i].to_array(), one.to_array(), atol=1e-9)
    benchmark.extra_info["cells"] = int(sum(len(r.cells) for r in got))
    benchmark.pedantic(reach_army, (demo, rules, units), rounds=15, warmup_rounds=1)


@pytest.mark.parametrize("charge", [False, True], ids=["move", "charge"])
def test_threat_map_50_enemies(benchmark, rules, demo, charge):
    enemies = army(demo, rules, 50, seed=1)
    t = threat_map(demo, rules, enemies, charge=charge)
    within = [np.isfinite(engine.reach(engine.cost_grid(demo, rules, u), xy).to_array())
              for u, xy in enemies]
    np.testing.assert_array_equal(t.count, np.sum(within, axis=0))
    benchmark.extra_info["threatened_cells"] = int((t.count > 0).sum())
    benchmark.pedantic(threat_map, (demo, rules, enemies), {"charge": charge}, rounds=15,
                       warmup_rounds=1)


@pytest.mark.parametrize("directions", [8, 32], ids=["8-dir", "32-dir"])
@pytest.mark.parametrize("limit", [math.inf, 100.0], ids=["whole", "within-100cm"])
def test_flow_field_2048(benchmark, rules, directions, limit):
    bf = big_battlefield()
    assert bf.grid.shape == (2048, 2048)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0), directions=directions)
    goal = (512.25, 512.25)
    f = flow_field(g, [goal], limit)
    rng = np.random.default_rng(0)
    near = np.flatnonzero(np.isfinite(f.cost))
    for flat in rng.choice(near, 3, replace=False):
        xy = g.grid.rc_to_xy(divmod(int(flat), 2048))
        lattice = engine.route(g, xy, goal, any_angle=False)  # a flow field's steps
        assert lattice.cost == pytest.approx(f.cost.flat[flat], rel=1e-9)
    benchmark.extra_info["cells"] = int(near.size)
    benchmark.pedantic(flow_field, (g, [goal], limit), rounds=7,
                       warmup_rounds=1)
