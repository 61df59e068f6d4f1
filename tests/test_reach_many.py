"""`reach_many`: many reaches at once on every core, each the answer `reach` gives
for its start, bit for bit."""

import numba
import numpy as np
import pytest

import engine
from engine.search import _state

from .conftest import battlefield
from .test_kernels import by_cell, centre, first_open, random_map


def test_reach_many_takes_a_huge_allowance(rules):
    g = engine.cost_grid(engine.load_map(battlefield([], 40, 20)), rules, rules.unit("humans"))
    (r,) = engine.reach_many(g, [(1, 1)], 1e300)  # was an OverflowError sizing its rows
    assert len(r.cells) == g.base.size


@pytest.mark.parametrize("any_angle", [True, False], ids=["any-angle", "lattice"])
@pytest.mark.parametrize("depth", [0.0, 3.0])
def test_reach_many_equals_one_reach_per_start(rules, depth, any_angle):
    bf = random_map(7, hills=True)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))
    rng = np.random.default_rng(7)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    starts = [centre(g, c) for c in rng.choice(open_cells, 9)]
    many = engine.reach_many(g, starts, 7, any_angle=any_angle)
    assert len(many) == len(starts)
    for start, got in zip(starts, many, strict=True):
        one = engine.reach(g, start, 7, any_angle=any_angle)
        assert got.start == one.start
        assert by_cell(got) == pytest.approx(by_cell(one))
        assert got.cost_at(start) == one.cost_at(start)
    assert engine.reach_many(g, [], any_angle=any_angle) == []
    if any_angle and depth == 0:  # every thread's workspace at rest
        for t in range(min(numba.get_num_threads(), len(starts))):
            ws = g.battlefield._cache[("nodes_many", t)]
            assert np.isinf(ws.dist).all() and (ws.parent == -1).all() and not ws.state.any()
    elif any_angle:
        for t in range(min(numba.get_num_threads(), len(starts))):
            ws = g.battlefield._cache[("trails_many", t)]
            assert np.isinf(ws.dist).all() and (ws.head == -1).all() and np.isinf(ws.beat).all()
    else:
        ws = g.battlefield._cache[("workspace_many", numba.get_num_threads(), depth > 0)]
        assert np.isinf(ws[0]).all() and (ws[2] == -1).all()


def test_reach_many_names_a_bad_start(rules):
    g = engine.cost_grid(random_map(1), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match="start 1: point"):
        engine.reach_many(g, [centre(g, first_open(g, 1)), (-5, 0)], any_angle=False)


@pytest.mark.parametrize("depth", [0.0, 3.0])
def test_any_angle_reaches_fill_and_outgrow_their_buffers(rules, monkeypatch, depth):
    """Room for 8 cells and 64 labels a thread at first: the drivers grow their outputs
    and the label pool as they fill, and every answer, of `reach_many` and of
    `reach`, is the one `reach` gives with room to spare, bit for bit (cells,
    costs, parents, every label kept and where each cell's cheapest is); the pool
    a thread grew is kept for the next call."""
    def grid():  # a battlefield of its own: workspaces made afresh
        bf = random_map(11, hills=True)
        return engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))

    roomy = grid()
    rng = np.random.default_rng(11)
    starts = [tuple(np.add(centre(roomy, c), rng.uniform(-0.4, 0.4, 2)))
              for c in rng.choice(np.flatnonzero(np.isfinite(roomy.base.ravel())), 7)]
    want = [engine.reach(roomy, start, 9) for start in starts]
    monkeypatch.setattr(_state, "_BUFFER", 8)
    monkeypatch.setattr(_state, "_POOL", 64)
    g = grid()
    many = engine.reach_many(g, starts, 9)
    one_by_one = [engine.reach(g, start, 9) for start in starts]
    for start, one, *got in zip(starts, want, many, one_by_one, strict=True):
        for r in got:
            assert np.array_equal(r.cells, one.cells) and np.array_equal(r.cost, one.cost)
            assert np.array_equal(r.parent, one.parent)
            assert (r._labels is None) == (depth == 0)
            if depth:
                for mine, theirs in zip(r._labels, one._labels, strict=True):
                    assert np.array_equal(mine, theirs)
            q = (start[0] + 2.3, start[1] - 1.1)
            if 0 <= q[0] <= 18 and 0 <= q[1] <= 14:
                assert r.cost_at(q) == one.cost_at(q)
    if depth:
        pools = [g.battlefield._cache[key].labels.cost.size for key in ["trails", *(
            ("trails_many", t) for t in range(min(numba.get_num_threads(), len(starts))))]]
        assert min(pools) > 64
