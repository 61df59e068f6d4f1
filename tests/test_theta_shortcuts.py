"""The any-angle search's shortcuts against the walk that prices every move:
`line_price` and `_least_move`, the step prices kept with the grid, what a
reach settles at once and queues, the order of a reach's cells, and the
search with every shortcut against the same search walking every move.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import engine
from engine.search import _kernels

from .test_anyangle import FW, _grid, _map
from .test_kernels import by_cell


def _random_map(rng, width=40, height=30):
    """A map of up to eight random rectangles of ground of several kinds, hills too."""
    feats = []
    for _ in range(int(rng.integers(1, 9))):
        x, y = int(rng.integers(0, width - 5)), int(rng.integers(0, height - 5))
        w, h = int(rng.integers(2, 12)), int(rng.integers(2, 12))
        kind = str(rng.choice(["woods", "bog", "building", "broken ground", "scrub", "hill"]))
        feats.append((kind, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]))
    return _grid(feats, width=width, height=height)


@pytest.mark.parametrize("race", ["humans", "goblins", "hill trolls"])
def test_line_price_is_the_pricers_walk(race):
    """`sight.line_price`, where it answers, is `segment_cost`'s price to rounding:
    random moves over the demo map and random maps (hills, whose slopes it may
    not price, among them), between cell centres, on grid lines and corners.
    It answers for most, over more than one ground too."""
    rng = np.random.default_rng(13)
    grids = [engine.cost_grid(engine.load_map("demo"), FW, FW.unit(race, depth=0))]
    grids += [_random_map(rng) for _ in range(4)]
    answered, kinds = 0, set()
    for g in grids:
        a = g.kernel_args
        rows, cols = g.base.shape
        size = np.array([cols, rows]) * g.cell
        for k in range(1500):
            p = rng.uniform(0, size)
            q = np.clip(p + rng.normal(0, 12 if k % 2 else 40, 2), 0, size - 1e-9)
            if k % 3 == 0:  # cell centres
                p, q = (np.floor(p / g.cell) + 0.5) * g.cell, (np.floor(q / g.cell) + 0.5) * g.cell
            elif k % 3 == 1:  # on grid lines and corners
                p, q = np.round(p / g.cell) * g.cell, np.round(q * 2 / g.cell) * g.cell / 2
                p, q = np.minimum(p, size - 1e-9), np.minimum(q, size - 1e-9)
            r, c = g.grid.xy_to_rc(tuple(p))
            price, grounds = _kernels.sight.line_price(
                p[0] / g.cell, p[1] / g.cell, q[0] / g.cell, q[1] / g.cell, g.alike,
                g.clearance, cols, rows)
            if grounds == 0:
                assert price == -1.0
                continue
            walked, _ = _kernels.anyangle.segment_cost(
                p[0], p[1], q[0], q[1], r * cols + c, g.cell, cols, rows, a.base, a.steep,
                a.slope_of, a.slopes, a.enter, a.narrow, g.clearance)
            assert price * g.cell == pytest.approx(walked, rel=1e-12, abs=1e-12)
            answered += 1
            kinds.add(min(grounds, 3))
    assert answered > 0.5 * len(grids) * 1500 and kinds == {1, 2, 3}


def test_line_price_goes_on_through_a_corner_of_mixed_ground():
    """A line between cell centres through the corner where woods meet open ground
    (the walk takes its two crossings there for one) is priced by `line_price`
    as the walk prices it: open ground to the corner, woods from it.  Where an
    impassable cell touches the corner (the walk refuses the move), or the two
    crossings are a sliver apart (the walk prices the cell between), it cannot
    tell.  `line_stretches` gives the two stretches the line makes."""
    g = _grid([("woods", [(5, 0), (10, 0), (10, 5), (5, 5)]),
               ("building", [(1, 1), (2, 1), (2, 2), (1, 2)])], cell=1.0, width=10, height=10)
    a = g.kernel_args
    assert g.base[4, 5] == 2.0 and g.base[5, 4] == g.base[4, 4] == g.base[5, 5] == 1.0

    def both(p, q):
        r, c = g.grid.xy_to_rc(p)
        price, grounds = _kernels.sight.line_price(*p, *q, g.alike, g.clearance, 10, 10)
        walked, _ = _kernels.anyangle.segment_cost(
            *p, *q, r * 10 + c, 1.0, 10, 10, a.base, a.steep, a.slope_of, a.slopes, a.enter,
            a.narrow, g.clearance)
        return price, grounds, walked

    for p, q, open_length in [((2.5, 7.5), (7.5, 2.5), math.dist((2.5, 7.5), (5, 5))),
                              ((3.5, 5.5), (6.5, 4.5), math.dist((3.5, 5.5), (5, 5)))]:
        price, grounds, walked = both(p, q)
        want = open_length + 2.0 * (math.dist(p, q) - open_length)
        assert grounds == 2 and walked == pytest.approx(want, rel=1e-12)
        assert price == pytest.approx(walked, rel=1e-12)
        # Its stretches (`line_stretches`, which a ranked move steps its trail over):
        # open ground to the corner, woods from it; no room for them, it cannot tell.
        kinds, ends = np.empty(2), np.empty(2)
        assert _kernels.sight.line_stretches(*p, *q, g.alike, g.clearance, 10, 10, kinds,
                                             ends) == (price, 2)
        assert list(kinds) == [1.0, 2.0]
        assert ends == pytest.approx([open_length, math.dist(p, q)], rel=1e-12)
        assert _kernels.sight.line_stretches(*p, *q, g.alike, g.clearance, 10, 10, kinds[:1],
                                             ends[:1]) == (-1.0, 0)
    price, grounds, walked = both((0.5, 2.5), (2.5, 0.5))  # by the building's corners
    assert (price, grounds, walked) == (-1.0, 0, np.inf)
    price, grounds, walked = both((2.5, 7.5 + 1e-9), (7.5, 2.5))  # a sliver off the corner
    assert (price, grounds) == (-1.0, 0) and np.isfinite(walked)


def test_least_move_is_no_more_than_the_walk():
    """`_least_move` (the price of a move from its ends' boxes of alike ground) is
    a lower bound on the walked price, from cell centres and from a point."""
    rng = np.random.default_rng(17)
    tight = 0
    for g in [engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0)),
              _random_map(rng), _random_map(rng)]:
        a = g.kernel_args
        rows, cols = g.base.shape
        open_cells = np.flatnonzero(np.isfinite(a.base))
        for k in range(3000):
            p, q = (int(x) for x in rng.choice(open_cells, 2))
            if k % 9 == 0:
                q = p + int(rng.choice([-cols - 1, -cols, 1, cols + 1]))
                q = min(max(q, 0), a.base.size - 1)
                if not np.isfinite(a.base[q]):
                    continue  # the search offers no impassable cell
            exact = k % 2 == 0  # the start's own point, anywhere in its cell
            pr, pc = divmod(p, cols)
            qr, qc = divmod(q, cols)
            off = rng.uniform(0, 1, 2) if exact else (0.5, 0.5)
            px, py = (pc + off[0]) * g.cell, (pr + off[1]) * g.cell
            qx, qy = (qc + 0.5) * g.cell, (qr + 0.5) * g.cell
            far = math.hypot(qx - px, qy - py)
            least = _kernels.anyangle._least_move(
                2.0, far, g.cell, exact, a.base[p], g.alike[p], g.clearance[p], True, a.base[q],
                g.alike[q], g.clearance[q])
            walked, _ = _kernels.anyangle.segment_cost(
                px, py, qx, qy, p, g.cell, cols, rows, a.base, a.steep, a.slope_of, a.slopes,
                a.enter, a.narrow, g.clearance)
            assert least <= 2.0 + walked
            tight += least > 2.0 + far * (1.0 + 1e-9)
    assert tight > 100  # and often above the length alone


def _theta_field(g, at, budget, walk_all=False):
    """Costs of `theta_search` within ``budget`` of ``at``, without the lattice's
    longer steps (`CostGrid.longer_steps`); ``walk_all``: every move walked (no
    ground alike, no boxes of it), none priced by a shortcut."""
    a = g.kernel_args
    cols = g.base.shape[1]
    r, c = g.grid.xy_to_rc(at)
    ws = engine.search._state._Nodes.for_cells(g.base.size)
    alike = np.full_like(g.alike, np.nan) if walk_all else g.alike
    clear = np.zeros_like(g.clearance) if walk_all else g.clearance
    edges = (np.full(g.base.size, -1, dtype=np.int32), np.zeros(0)) if walk_all else g.edge_steps
    longer = (np.zeros((0, 2), dtype=np.int64), np.full(g.base.size, -1, dtype=np.int32),
              np.zeros(0))
    nt = _kernels.theta_search(
        a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow, clear, alike,
        -1.0 if walk_all else g.least, cols, g.cell, r * cols + c, float(at[0]), float(at[1]),
        -1, 0.0, 0.0, budget, *edges, *longer, ws.dist, ws.parent, ws.state, ws.hkey, ws.hidx,
        ws.pos, ws.touched, ws.tried, ws.stamp)
    out = ws.dist[:-1].copy()
    _kernels.reset_nodes(ws.touched, nt, ws.dist, ws.parent, ws.state)
    return np.where(out <= budget, out, np.inf)


def test_a_step_walked_once_is_kept_at_its_walked_price():
    """The search keeps each step it walks from a cell's centre to a neighbour's
    (`CostGrid.edge_steps`): after reaches over the demo map (woods, the steep
    hill, walls, the river), every price kept is `segment_cost`'s for that step,
    bit for bit, steps over slopes and flat costs and between two grounds among
    them; only cells on the edge of their ground have a row; and the reaches
    answer the same with the table filled as with it empty."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))
    row, cost = g.edge_steps
    assert np.array_equal(row >= 0, g.clearance == 0)
    starts = [(40.25, 30.75), (43.25, 46.25), (100.0, 60.0), (150.5, 70.25), (62.0, 95.5)]
    cold = [engine.reach(g, xy, 24) for xy in starts]
    kept = np.flatnonzero(cost > 0.0)
    a = g.kernel_args
    rows, cols = g.base.shape
    cells = np.flatnonzero(row >= 0)
    alike = set()
    for i in kept:
        u, k = cells[i // 8], i % 8
        j = k if k < 4 else k + 1
        r, c = divmod(int(u), cols)
        vr, vc = r + j // 3 - 1, c + j % 3 - 1
        walked, _ = _kernels.anyangle.segment_cost(
            (c + 0.5) * g.cell, (r + 0.5) * g.cell, (vc + 0.5) * g.cell, (vr + 0.5) * g.cell,
            u, g.cell, cols, rows, a.base, a.steep, a.slope_of, a.slopes, a.enter, a.narrow,
            g.clearance)
        assert cost[i] == walked, (u, j)
        alike.add((bool(np.isnan(g.alike[u])), bool(np.isnan(g.alike[vr * cols + vc]))))
    assert kept.size > 1000 and alike == {(False, False), (False, True), (True, False),
                                          (True, True)}
    for before, xy in zip(cold, starts, strict=True):
        again = engine.reach(g, xy, 24)
        assert np.array_equal(again.cells, before.cells)
        assert np.array_equal(again.cost, before.cost)


def test_a_grid_too_big_to_keep_its_steps_walks_them_all(monkeypatch):
    """Where the rows of kept steps would pass the table's limit, no cell has one
    (`CostGrid.edge_steps`), and no longer step is kept (`CostGrid.longer_steps`:
    the cells they are taken from stay marked), nothing is kept, and a reach is
    the same."""
    unit = FW.unit("humans", depth=0)
    kept = engine.reach(engine.cost_grid(engine.load_map("demo"), FW, unit), (43.25, 46.25), 24)
    monkeypatch.setattr(engine.terrain.costgrid, "_TABLE_BYTES", 1000)
    g = engine.cost_grid(engine.load_map("demo"), FW, unit)  # a grid of its own
    r = engine.reach(g, (43.25, 46.25), 24)
    row, cost = g.edge_steps
    assert (row == -1).all() and cost.size == 0
    _, long_row, long_cost = g.longer_steps
    assert (long_row >= 0).sum() > 1000 and long_cost.size == 0
    assert np.array_equal(r.cells, kept.cells) and np.array_equal(r.cost, kept.cost)


def test_a_longer_step_walked_once_is_kept_at_its_walked_price():
    """The lattice's longer steps the search takes near slopes and impassable ground
    (`CostGrid.longer_steps`: the 24 of 32 directions beyond the neighbours, from
    every cell within 4 cells of a steep or impassable one, found brute force
    here) keep their walked prices: after reaches round the demo map's steep
    hill and buildings, every price kept is `segment_cost`'s for that step, bit
    for bit, and the reaches answer the same with the table filled."""
    g = engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))
    offsets, row, cost = g.longer_steps
    assert len(offsets) == 24 and np.abs(offsets).max() == 4
    rows, cols = g.base.shape
    odd = np.pad((g.kernel_args.steep.reshape(rows, cols) != 1.0) | ~np.isfinite(g.base), 4)
    near = np.zeros((rows, cols), dtype=bool)
    for dr in range(-4, 5):
        for dc in range(-4, 5):
            near |= odd[4 + dr:rows + 4 + dr, 4 + dc:cols + 4 + dc]
    assert np.array_equal(row >= 0, near.ravel())
    starts = [(40.25, 30.75), (43.75, 40.75), (43.25, 46.25), (100.0, 60.0), (62.0, 95.5)]
    cold = [engine.reach(g, xy, 24) for xy in starts]
    kept = np.flatnonzero(cost > 0.0)
    a = g.kernel_args
    cells = np.flatnonzero(row >= 0)
    for i in kept:
        u, (dr, dc) = cells[i // 24], offsets[i % 24]
        r, c = divmod(int(u), cols)
        walked, _ = _kernels.anyangle.segment_cost(
            (c + 0.5) * g.cell, (r + 0.5) * g.cell, (c + dc + 0.5) * g.cell,
            (r + dr + 0.5) * g.cell, u, g.cell, cols, rows, a.base, a.steep, a.slope_of,
            a.slopes, a.enter, a.narrow, g.clearance)
        assert cost[i] == walked, (u, dr, dc)
    assert kept.size > 1000 and np.isinf(cost[kept]).any()
    for before, xy in zip(cold, starts, strict=True):
        again = engine.reach(g, xy, 24)
        assert np.array_equal(again.cells, before.cells)
        assert np.array_equal(again.cost, before.cost)


def test_shortcuts_against_walking_every_move():
    """On random maps, the search with its shortcuts (plain sight, boxes of alike
    ground, `line_price`, `_least_move`) against the same search walking every
    move.  Theta*'s answer hangs on ties that rounding breaks, and the
    shortcuts' prices differ from the walk's in the last bits, so a few cells
    may differ after such a tie (either way); the rest are the same to
    rounding, and no cell falls out of reach or comes into it."""
    rng = np.random.default_rng(19)
    searches = same = 0
    for _ in range(30):
        g = _random_map(rng)
        for at in rng.uniform([0, 0], [40, 30], (3, 2)):
            r, c = g.grid.xy_to_rc(tuple(at))
            if not np.isfinite(g.base[r, c]):
                continue
            fast = _theta_field(g, tuple(at), 25.0)
            slow = _theta_field(g, tuple(at), 25.0, walk_all=True)
            assert np.array_equal(np.isfinite(fast), np.isfinite(slow))
            both = np.isfinite(slow) & (slow > 0)
            rel = np.abs(fast[both] / slow[both] - 1.0)
            assert rel.max(initial=0.0) < 0.01
            searches += 1
            same += bool(rel.max(initial=0.0) <= 1e-12)
    assert same >= 0.9 * searches


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([0.0, 1.0, 2.5, 24.0, 5e-324]),
                          st.floats(0, 1e6, allow_nan=False)), max_size=300))
@example([0.0, 5e-324, 0.0, 0.0, 5e-324, 1e-310, 0.0, 5e-324])
@example([5e-324] * 9)
def test_a_reach_orders_its_cells_as_a_stable_sort_by_cost(costs):
    """`by_cost`, which puts a reach's cells cheapest first, is a stable sort by cost
    (as ``np.argsort(kind="stable")``), ties and one cost alone included, and so
    are the tiniest costs (``bins / top`` overflows for them)."""
    cost = np.array(costs, dtype=np.float64)
    k = len(cost)
    cells = np.arange(k, dtype=np.int64)
    other = np.arange(k, dtype=np.int64)[::-1].copy()
    # Room past k, as a reach's buffers have: it must stay as it was.
    cells, cost, other = (np.append(a, a[:3] if k else np.zeros(3, a.dtype))
                          for a in (cells, cost, other))
    tail = cost[k:].copy()
    order = np.argsort(cost[:k], kind="stable")
    want = cells[order], cost[order], other[order]
    _kernels.anyangle.by_cost(cells, cost, other, k)
    assert np.array_equal(cells[:k], want[0]) and np.array_equal(other[:k], want[2])
    assert np.array_equal(cost[:k], want[1]) and np.array_equal(cost[k:], tail)


@pytest.mark.parametrize("seed", [23, 29])
def test_reach_tree_prices_what_it_claims_on_random_maps(seed):
    """Every reached cell's cost is the walked price of its chain of straight moves
    back to the start, on random maps of several grounds and hills (where
    `line_price` and the boxes of alike ground price most moves unwalked)."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        g = _random_map(rng)
        at = tuple(rng.uniform([0, 0], [40, 30]))
        try:
            r = engine.reach(g, at, 30)
        except engine.InputError:
            continue  # a start on a building
        cols = g.grid.shape[1]
        index = {int(c): k for k, c in enumerate(r.cells)}
        for k in rng.choice(len(r.cells), min(60, len(r.cells)), replace=False):
            chain = [int(r.cells[k])]
            while r.parent[index[chain[-1]]] >= 0:
                chain.append(int(r.parent[index[chain[-1]]]))
            points = [at] + [((c % cols + 0.5) * g.cell, (c // cols + 0.5) * g.cell)
                             for c in reversed(chain[:-1])]
            if len(points) > 1:
                priced = engine.price_path(g, points).cost
                assert abs(priced - r.cost[k]) <= 1e-9 * max(1.0, priced)


def test_presettle_queues_exactly_the_rim():
    """`_presettle` queues exactly the cells it settles that touch a passable cell it
    did not and that the start's multiplier times the distance keeps within the
    budget (the rim, found brute force here), on the demo map and random maps; near
    a slope or impassable ground a cell a longer step of the lattice reaches
    counts as touching (`CostGrid.longer_steps`)."""
    rng = np.random.default_rng(31)
    grids = [engine.cost_grid(engine.load_map("demo"), FW, FW.unit("humans", depth=0))]
    grids += [_random_map(rng) for _ in range(6)]
    queued = 0
    for g in grids:
        rows, cols = g.base.shape
        for _ in range(8):
            at = rng.uniform(0, [cols * g.cell, rows * g.cell])
            r, c = g.grid.xy_to_rc(tuple(at))
            source = r * cols + c
            if g.base[r, c] != g.least:
                continue
            budget = float(rng.uniform(2, 25))
            sight, r0, c0, w = _kernels.anyangle._source_sight(
                g.alike, cols, rows, source, at[0], at[1], g.cell, budget)
            ws = engine.search._state._Nodes.for_cells(g.base.size)
            ws.state[source], ws.dist[source] = 1, 0.0  # queued first, as `theta_search` does
            longer, long_row, _ = g.longer_steps
            _, n = _kernels.anyangle._presettle(
                sight, r0, c0, w, source, at[0], at[1], g.kernel_args.base, cols, g.cell,
                g.least, budget, budget, ws.dist, ws.parent, ws.state, ws.hkey, ws.hidx, ws.pos,
                ws.touched, 0, 0, longer, long_row)
            state = ws.state[:-1].reshape(rows, cols)
            ys, xs = (np.indices((rows, cols)) + 0.5) * g.cell
            near = g.least * np.hypot(xs - at[0], ys - at[1]) <= budget
            free = np.pad((state == 0) & np.isfinite(g.base) & near, 4)
            beside = np.zeros((rows, cols), dtype=bool)
            steps = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)]
            takes = (long_row >= 0).reshape(rows, cols)
            for k, (dr, dc) in enumerate(steps + longer.tolist()):
                on = free[4 + dr:rows + 4 + dr, 4 + dc:cols + 4 + dc]
                beside |= on if k < len(steps) else on & takes
            rim = (state > 0) & beside
            rim.flat[source] = False
            queued_now = state == 1
            queued_now.flat[source] = False
            assert np.array_equal(queued_now, rim) and n == rim.sum()
            queued += n
    assert queued > 500


@pytest.mark.parametrize("depth", [0.0, 2.0])
def test_settling_at_once_stops_short_of_cheaper_ground(depth):
    """From inside woods 1.9 cm from open ground, the cells the start sees over the
    woods are settled at once only up to twice that distance (less the rear
    ranks' depth, `_settle_limit`); one 40 cm along the edge, which the start's
    multiplier alone would put within the allowance, is cheaper out over the
    open ground, and costs no more than that path's price, with ranks or
    without."""
    woods = ("woods", [(0, 0), (60, 0), (60, 100), (0, 100)])
    g = engine.cost_grid(_map([woods]), FW, FW.unit("humans", depth=depth))
    rows, cols = g.base.shape
    at = (58.1, 10.1)
    r, c = g.grid.xy_to_rc(at)
    source = r * cols + c
    sight, r0, c0, w = _kernels.anyangle._source_sight(g.alike, cols, rows, source, *at,
                                                       g.cell, 60.0)
    limit, lowest = _kernels.anyangle._settle_limit(sight, r0, c0, w, source, *at,
                                                    g.kernel_args.base, cols, g.cell, 1.0,
                                                    60.0, depth)
    assert limit == pytest.approx(2.0 * max(1.9 - depth, 0.0)) and lowest == 1.0
    assert _kernels.anyangle._settle_limit(sight, r0, c0, w, source, *at, g.kernel_args.base,
                                           cols, g.cell, 2.0, 60.0, depth) == (60.0, 2.0)
    assert _kernels.anyangle._settle_limit(sight, r0, c0, w, source, *at, g.kernel_args.base,
                                           cols, g.cell, math.inf, 60.0, depth) == (0.0, math.inf)
    goal = (58.25, 50.25)
    detour = engine.price_path(g, [at, (60.5, 12.5), (60.5, 48.5), goal]).cost
    assert detour < 2.0 * math.dist(at, goal) - 20.0
    gr, gc = g.grid.xy_to_rc(goal)
    assert by_cell(engine.reach(g, at, 100.0))[gr * cols + gc] <= detour
