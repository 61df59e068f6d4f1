"""The label search (a unit with rear ranks, on the step lattice) against slow,
obviously-right references: the search over every trail as its own state
(`state_search`), trails that fill up and merge, and a trail's bookkeeping."""

import itertools
import math

import numpy as np
import pytest

import engine
from engine.grid import segment_cells
from engine.search import _kernels as skern
from engine.search import _state
from engine.terrain import _kernels as tkern
from engine.terrain.costgrid import kernel_args

from .conftest import battlefield, feature, rect
from .test_kernels import centre, random_map, state_search


def test_labels_on_the_demo_map(rules):
    """Walls, a narrow bridge and hills: `reach` and `reach_many` agree exactly, and a
    route's A* finds the reach's cost of its goal."""
    bf = engine.load_map("maps/demo.geojson")
    g = engine.cost_grid(bf, rules, rules.unit("humans", move=24, depth=4.0))
    assert g.kernel_args.enter.size and (g.steep != 1.0).any()
    rng = np.random.default_rng(3)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    sources = rng.choice(open_cells, 6)
    many = engine.reach_many(g, [centre(g, c) for c in sources], any_angle=False)
    ws = _state._workspace(g)
    for source, got in zip(sources, many, strict=True):
        one = engine.reach(g, centre(g, source), any_angle=False)
        assert np.array_equal(got.cells, one.cells) and np.array_equal(got.cost, one.cost)
        for goal in rng.choice(one.cells, 5):
            n = ws.run(g, int(source), int(goal), math.inf)
            assert ws.dist[goal] == pytest.approx(one.cost_at(centre(g, goal)), rel=1e-9)
            ws.reset(n)


@pytest.mark.parametrize(("seed", "depth", "hills"), [(0, 2.0, False), (1, 3.5, True),
                                                      (2, 4.0, True)])
def test_label_search_is_the_search_over_every_trail(rules, seed, depth, hills):
    """`search_labels` keeps fewer paths than one per trail, and finds the same costs, as
    A* and as Dijkstra; some cells' cheapest paths run through a path that is not the
    cheapest to its own cell, which a search keeping one path a cell would miss."""
    g = engine.cost_grid(random_map(seed, rows=16, cols=22, hills=hills), rules,
                         rules.unit("humans", depth=depth))
    ws = _state._Workspace.for_cells(g.base.size)
    ws.labels = _state._Labels.pool(8, tkern.TRAIL)  # runs out at once: the retry is exercised
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    dearer = 0
    for source in rng.choice(open_cells, 3):
        expected = state_search(g, int(source), 12.0)
        for goal in rng.choice(list(expected), 4):  # A*, as routes run it
            n = ws.run(g, int(source), int(goal), math.inf)
            assert ws.dist[goal] == pytest.approx(expected[goal], rel=1e-9)
            cells = ws.path(g, int(source), int(goal))
            ws.reset(n)
            assert cells[0] == source and cells[-1] == goal
        n = ws.run(g, int(source), -1, 12.0)  # Dijkstra, as reaches run it
        got = {int(c): float(ws.dist[c]) for c in ws.touched[:n]}
        # Cells whose cheapest path runs through a label dearer than its cell's cheapest:
        # a search keeping one path a cell would have found them dearer.
        cost, cell, prev = (x[:ws.used] for x in ws.labels[:3])
        for c in expected:
            label = np.flatnonzero(cell == c)
            x = int(prev[label[np.argmin(cost[label])]])
            while x > 0 and cost[x] <= got[int(cell[x])] * (1 + 1e-9):
                x = int(prev[x])
            dearer += x > 0
        ws.reset(n)
        assert got.keys() == expected.keys()
        assert all(got[c] == pytest.approx(expected[c], rel=1e-9) for c in got)
    assert ws.labels.cost.size > 8 and np.isinf(ws.dist).all() and (ws.pos == -1).all()
    assert dearer > 0  # what the labels are for: cells a one-path search would overprice


def levels_rules(tmp_path, levels):
    """A ruleset of ``levels`` area kinds t0, t1, ... dearer one after another."""
    kinds = "".join(f'[terrain.t{i}]\nlayers = ["l{i}"]\n\n' for i in range(levels))
    toml = (
        '[ruleset]\nname = "Levels"\nunits = "cm"\nrank_depth = 2.0\ntroops = ["infantry"]\n'
        "figure_width = 1.0\nfrontage = 1.0\nformation_change = 5.0\n\n[layers]\n"
        + "".join(f'l{i} = "area"\n' for i in range(levels))
        + "\n[terrain.clear]\n\n" + kinds + '[terrain.building]\nrole = "building"\n\n'
        + "[defaults.multipliers]\n"
        + "".join(f"l{i} = {1.1 + 0.6 * i:.1f}\n" for i in range(levels))
        + "\n[races.men]\nmove = 20.0\nmultipliers = {}\n"
    )
    path = tmp_path / "levels.toml"
    path.write_text(toml, "utf-8")
    return engine.load_rules(path)


@pytest.mark.parametrize(("levels", "seed"), [(5, 0), (12, 1), (12, 2)])
def test_label_search_where_trails_fill_up(tmp_path, levels, seed):
    """Ground falling a level at a time fills a trail; past ``TRAIL`` levels its lightest
    two merge (`skern.push`), and the bound a label beats another by no longer holds,
    so on such a grid (`CostGrid.merging`) only the same trail is beaten.  Costs equal
    the search over every trail either way, without a step table too (no label may
    cost inf when the budget is)."""
    rules = levels_rules(tmp_path, levels)
    rng = np.random.default_rng(seed)
    feats = []
    for r in range(10):
        for c in range(14):
            k = (c + r + int(rng.integers(-1, 2))) % (levels + 2) - 1
            kind = "building" if k == levels and rng.random() < 0.4 else (
                f"t{k}" if 0 <= k < levels else None)
            if kind:
                feats.append(feature(kind, rect(c, r, c + 1, r + 1)))
    g = engine.cost_grid(engine.load_map(battlefield(feats, 14, 10, cell=1.0)), rules,
                         rules.unit("men", depth=6.0), directions=8)
    assert g.levels == levels + 1 and g.merging == (levels + 1 > tkern.TRAIL)
    ws = _state._Workspace.for_cells(g.base.size)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    for table in (True, False):
        if not table:
            g.__dict__["kernel_args"] = kernel_args(
                g.base, g.steps, g.steep, g.slope, g.depth, g.footprint, table=False)
        for source in rng.choice(open_cells, 2):
            expected = state_search(g, int(source), 40.0)
            n = ws.run(g, int(source), -1, 40.0)
            got = {int(c): float(ws.dist[c]) for c in ws.touched[:n]}
            ws.reset(n)
            assert got == pytest.approx(expected, rel=1e-9)
            for goal in rng.choice(list(expected), 3):
                n = ws.run(g, int(source), int(goal), math.inf)
                assert n == len(set(ws.touched[:n].tolist()))  # each cell touched once
                assert ws.dist[goal] == pytest.approx(expected[goal], rel=1e-9)
                ws.reset(n)
    assert np.isinf(ws.dist).all() and (ws.pos == -1).all() and np.isinf(ws.beat).all()
    assert ws.labels.lv.shape[1] == g.trail_width == min(g.levels, tkern.TRAIL)


def _trail(levels_rems):
    lv, rem, org = np.zeros(tkern.TRAIL), np.zeros(tkern.TRAIL), np.zeros(
        tkern.TRAIL, dtype=np.int64)
    n = 0
    for level, r in levels_rems:
        n = skern.push(lv, rem, org, n, level, r, 0)
    return lv, rem, n


def _future(trail, pieces, depth):
    """What moving on over ``pieces`` (ground, length) costs with ``trail`` behind."""
    lv, rem, n = (x.copy() if isinstance(x, np.ndarray) else x for x in trail)
    no_f, no_i = np.empty(0), np.empty(0, dtype=np.int64)
    org = np.zeros(tkern.TRAIL, dtype=np.int64)
    total = 0.0
    for ground, length in pieces:
        cost, n, _ = skern.trail.advance(lv, rem, org, n, ground, 0, length, depth, no_f, no_f,
                                      no_i, False)
        total += cost
    return total


def _excess(y, z):
    """`search_labels`' bound: the integral of max(0, max(w_y, 1) - max(w_z, 1))."""
    def weight(trail, t):
        lv, rem, n = trail
        return next((max(lv[j], 1.0) for j in range(n) if rem[j] > t), 1.0)
    cuts = sorted({0.0, *y[1][:y[2]], *z[1][:z[2]]})
    return sum(max(0.0, weight(y, (a + b) / 2) - weight(z, (a + b) / 2)) * (b - a)
               for a, b in itertools.pairwise(cuts))


def test_a_trail_adds_at_most_its_excess_unless_it_merges():
    """The bound `search_labels` drops paths by: moving on, trail y costs at most the
    excess of y over z more than trail z, whatever the ground ahead, while neither
    holds more than ``TRAIL`` levels (random trails and ground from ``TRAIL`` levels).
    A full trail merges its lightest two upwards, and then it may cost more: why a grid
    with more levels (`CostGrid.merging`) drops only paths with the same trail."""
    rng = np.random.default_rng(0)
    few = np.linspace(1.0, 6.0, tkern.TRAIL)
    for _ in range(3000):
        depth = float(rng.choice([2.0, 4.0, 6.0]))

        y, z = (_trail(zip(sorted(rng.choice(few, k), reverse=True),
                           sorted(rng.uniform(0, depth, k)), strict=True))
                for k in rng.integers(0, 5, 2))
        ahead = [(float(rng.choice(few)), float(rng.choice([0.25, 0.5, 0.7071, 1.0])))
                 for _ in range(int(rng.integers(1, 14)))]
        assert _future(y, ahead, depth) - _future(z, ahead, depth) <= _excess(y, z) + 1e-9
    # Full: the lightest two merge as the front steps onto clear ground.
    depth = 8.0
    y = _trail((9.0 - j, 1.0 + j) for j in range(tkern.TRAIL))
    z = _trail([(9.0, 1.0)])
    ahead = [(1.0, 0.5)] * 16
    assert _future(y, ahead, depth) - _future(z, ahead, depth) > _excess(y, z) + 0.5


def test_segment_crossings_merge_into_the_sorted_order():
    # `_segment_breaks` merges its two runs of grid-line crossings (each ascending or
    # descending, by the segment's direction) instead of sorting them.
    rng = np.random.default_rng(5)
    for _ in range(300):
        n1, n2 = rng.integers(0, 6, 2)
        runs = [np.sort(rng.random(n)) * 10 for n in (n1, n2)]
        runs = [r[::-1] if rng.random() < 0.5 else r for r in runs]
        cross = np.concatenate([*runs, np.empty(2)])  # room past the end is ignored
        got = skern.trail._merged(cross.copy(), n1, n1 + n2)
        np.testing.assert_array_equal(got, np.sort(np.concatenate(runs)))
    # The walk's cuts, through it, are still the reference's for every direction.
    for dx, dy in [(3.3, 1.7), (-3.3, 1.7), (3.3, -1.7), (-2.1, -5.9), (4.0, 4.0), (0.0, -3.2)]:
        breaks, _ = skern.trail._segment_breaks(0.3, 0.6, dx, dy, math.hypot(dx, dy))
        pieces, _ = segment_cells((0.3, 0.6), (0.3 + dx, 0.6 + dy))
        assert len(breaks) - 1 == len(pieces)
