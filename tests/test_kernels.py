"""The numba search against slow, obviously-right references.

With no footprint and no slopes a cell's cost is a plain shortest path, so the
kernel must match networkx's Dijkstra on the same 32-neighbour graph, whose
edge weights come from the pricer (itself checked against a walk in Python,
tests/test_pricing.py).  With a footprint the cost depends on
the path behind, so every cost the kernel reports must equal the pricer's
price of the path the kernel traced.
"""

import heapq
import itertools
import math

import networkx as nx
import numpy as np
import pytest

import engine
from engine.grid import neighbourhood, segment_cells
from engine.search import _kernels as skern
from engine.search import _state
from engine.search.paths import _polyline
from engine.terrain import _kernels as tkern
from engine.terrain.costgrid import kernel_args

from .conftest import battlefield, feature, rect

KINDS = ["clear", "woods", "scrub", "broken ground", "bog", "jungle", "building"]


@pytest.fixture(scope="module")
def demo():
    return engine.load_map("maps/demo.geojson")


def random_map(seed, rows=14, cols=18, hills=False):
    """A map of 1 cm cells, each a random terrain kind (buildings block)."""
    rng = np.random.default_rng(seed)
    feats = []
    for r in range(rows):
        for c in range(cols):
            kind = KINDS[rng.choice(len(KINDS), p=[0.35, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1])]
            if kind != "clear":
                feats.append(feature(kind, rect(c, r, c + 1, r + 1)))
    if hills:
        feats.append(feature("hill", rect(2, 2, cols - 3, rows - 2), elevation=3, steep=True))
    return engine.load_map(battlefield(feats, cols, rows, cell=1.0))


def centre(g, flat):
    return g.grid.rc_to_xy(divmod(int(flat), g.grid.shape[1]))


def reference_costs(g, source):
    """networkx Dijkstra; every edge priced by the pure pricer."""
    rows, cols = g.grid.shape
    graph = nx.DiGraph()
    for r in range(rows):
        for c in range(cols):
            if math.isinf(g.base[r, c]):
                continue
            for dr, dc in neighbourhood():
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols and not math.isinf(g.base[rr, cc]):
                    w = engine.price_path(g, [g.grid.rc_to_xy((r, c)), g.grid.rc_to_xy((rr, cc))])
                    if not math.isinf(w.cost):
                        graph.add_edge(r * cols + c, rr * cols + cc, weight=w.cost)
    return nx.single_source_dijkstra_path_length(graph, source)


def by_cell(r):
    """A reach's costs keyed by cell."""
    return dict(zip(r.cells.tolist(), r.cost.tolist(), strict=True))


def assert_reach_is_reference(g, source):
    """`reach` from flat cell ``source`` costs every cell as networkx does (`reference_costs`)."""
    expected = reference_costs(g, source)
    got = by_cell(engine.reach(g, centre(g, source), 1e9, any_angle=False))
    assert got.keys() == expected.keys()
    for cell, cost in expected.items():
        assert got[cell] == pytest.approx(cost, rel=1e-12, abs=1e-9)
    return expected


def first_open(g, seed):
    rng = np.random.default_rng(seed)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    return int(rng.choice(open_cells))


@pytest.mark.parametrize("seed", range(4))
def test_reach_matches_networkx(rules, seed):
    bf = random_map(seed)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    assert g.kernel_args.plain
    assert_reach_is_reference(g, first_open(g, seed))


def test_flat_cells_price_every_step_as_the_table_does(rules):
    """A cell whose steps all cross one multiplier skips the table (`tkern.flat_cells`)."""
    bf = engine.load_map(battlefield([feature("woods", rect(3, 2, 15, 12))], 18, 14, cell=1.0))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    a = g.kernel_args
    multiplier = a.flat_of[a.flat]
    flat = multiplier.reshape(g.grid.shape)
    inside, edge = g.grid.xy_to_rc((9.5, 7.5)), g.grid.xy_to_rc((4.5, 7.5))
    assert flat[inside] == g.base[inside] > 1.0
    assert flat[edge] == 0.0 and flat[0, 0] == 0.0  # steps leave the wood, or the table
    table = a.table_cost.reshape(a.flat.size, -1)
    f = multiplier[multiplier > 0]
    assert f.size == 8  # the wood's cells 4 or more from its edge (the (4, 1) steps)
    assert np.array_equal(table[multiplier > 0], f[:, None] * a.step_len)
    r, c = g.grid.xy_to_rc((2.5, 2.5))
    assert_reach_is_reference(g, r * g.grid.shape[1] + c)


def test_step_table_marks_uniform_and_rising_steps(rules):
    """Across a wood one cell wide, a step from open ground into it is ``RISING``, one
    out of it neither (the ranks stay in the wood), one along it ``UNIFORM``; the
    rear-rank search, skipping the rising steps' piece walk, costs every cell as the
    search over every trail does (`state_search`, which walks every piece).  (The trail
    such a step leaves shows on hills, where the next step's ground may be lighter:
    `test_label_search_is_the_search_over_every_trail`.)"""
    bf = engine.load_map(battlefield([feature("woods", rect(6, -1, 7, 15))], 18, 14, cell=1.0))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=2.0), directions=8)
    a = g.kernel_args
    flag = a.table_uniform.reshape(a.flat.size, -1)
    cols = g.grid.shape[1]
    east, west, north = (int(np.flatnonzero((a.step_dr == dr) & (a.step_dc == dc))[0])
                         for dr, dc in ((0, 1), (0, -1), (-1, 0)))
    outside, inside = 7 * cols + 5, 7 * cols + 6  # either side of the wood's west edge
    assert g.base.flat[outside] == 1.0 < g.base.flat[inside]
    assert flag[outside, east] == tkern.RISING and flag[outside, west] == tkern.UNIFORM
    assert flag[inside, east] == flag[inside, west] == 0 and flag[inside, north] == tkern.UNIFORM
    for source in (7 * cols + 1, 3 * cols + 4, inside):
        got = by_cell(engine.reach(g, centre(g, source), 1e9, any_angle=False))
        assert got == pytest.approx(state_search(g, source, 1e9 + _state._SLACK), rel=1e-9)


@pytest.mark.parametrize(("path", "unit"), [
    ("maps/demo.geojson", {"depth": 0}), ("maps/demo.geojson", {"ranks": 2}),
    ("maps/crossings.geojson", {"frontage": 6}),
])
def test_step_table_writes_flat_cells_as_their_pieces_price_them(rules, path, unit):
    """`step_table` skips the piece walk out of flat cells: the table is bit for bit the
    one walked piece by piece everywhere."""
    g = engine.cost_grid(engine.load_map(path), rules, rules.unit("humans", **unit))
    a = g.kernel_args
    assert (a.flat > 0).mean() > 0.3 and a.table_cost.size
    cost, uniform = np.empty_like(a.table_cost), np.empty_like(a.table_uniform)
    tkern.step_table(a.base, a.steep, a.slope_of, a.slopes, a.cols, a.plain,
                        a.step_dr, a.step_dc, a.step_len, a.ux, a.uy, a.piece_start,
                        a.piece_dr, a.piece_dc, a.piece_w, a.enter, a.narrow,
                        np.empty(0, dtype=np.uint8), np.empty(0), False,
                        np.empty(0, dtype=np.int64), cost, uniform)
    assert np.array_equal(cost, a.table_cost) and np.array_equal(uniform, a.table_uniform)


def flat_by_definition(g):
    """`tkern.flat_cells` written out: a cell's box of the longest step, all alike."""
    a = g.kernel_args
    reach = int(np.abs(a.step_dr).max())
    rows, cols = g.grid.shape
    layers = [g.base, g.steep, *(x.reshape(rows, cols) for x in (a.enter, a.narrow) if x.size)]
    out = np.zeros((rows, cols))
    for r in range(reach, rows - reach):
        for c in range(reach, cols - reach):
            box = (slice(r - reach, r + reach + 1), slice(c - reach, c + reach + 1))
            if (np.isfinite(g.base[r, c]) and g.steep[r, c] == 1.0
                    and all((x[box] == x[r, c]).all() for x in layers)):
                out[r, c] = g.base[r, c]
    return out


def calm_by_definition(base, steep, half):
    """`tkern.calm_cells` written out: no cell within ``half`` rows and columns (on
    the grid) whose ground, uphill at its steep multiplier, is heavier than the cell's."""
    rows, cols = base.shape
    top = np.where(np.isfinite(base), base * steep, 0.0)
    out = np.zeros((rows, cols), dtype=bool)
    for r in range(rows):
        for c in range(cols):
            box = top[max(r - half, 0):r + half + 1, max(c - half, 0):c + half + 1]
            out[r, c] = (box <= base[r, c]).all()
    return out


@pytest.mark.parametrize(("rows", "cols", "half"), [(1, 9, 2), (9, 1, 3), (7, 11, 0),
                                                    (13, 17, 1), (20, 6, 4), (5, 5, 9)])
def test_calm_cells_is_the_box_maximum(rows, cols, half):
    rng = np.random.default_rng(rows * 100 + cols)
    base = rng.choice([1.0, 1.5, 2.0, 3.0, np.inf], (rows, cols), p=[0.4, 0.2, 0.2, 0.1, 0.1])
    steep = rng.choice([1.0, 1.0, 2.0], (rows, cols))
    for st in (steep, np.ones_like(steep)):
        out = np.empty(base.size, dtype=np.uint8)
        tkern.calm_cells(base.ravel(), st.ravel() if st is steep else np.empty(0), cols,
                            half, out)
        assert np.array_equal(out.reshape(rows, cols) == 1, calm_by_definition(base, st, half))


@pytest.mark.parametrize(("path", "directions", "depth"), [
    ("maps/demo.geojson", 32, 2.0), ("maps/demo.geojson", 8, 0.0),
    ("maps/crossings.geojson", 16, 1.0),
])
def test_flat_cells_are_the_cells_of_a_uniform_box(rules, path, directions, depth):
    bf = engine.load_map(path)
    g = engine.cost_grid(bf, rules, rules.unit("humans", frontage=6, depth=depth),
                         directions=directions)
    a = g.kernel_args
    got = a.flat_of[a.flat].reshape(g.grid.shape)
    assert np.array_equal(got, flat_by_definition(g))
    assert 0.3 < (got > 0).mean() < 0.99
    wide = (a.flat >= tkern.WIDE).reshape(g.grid.shape)
    if depth > 0:  # nothing heavier as far again as the ranks' depth, for `search_trail`
        half = g.steps.onward_window + math.floor(depth / bf.cell + 0.5)
        assert np.array_equal(wide, (got > 0) & calm_by_definition(g.base, g.steep, half))
        assert 0.1 < wide.mean() < (got > 0).mean()
    else:
        assert not wide.any()
    assert a.flat.dtype == np.uint8 and a.flat_of[0] == 0.0
    ids = a.flat_of[:tkern.WIDE][a.flat_of[:tkern.WIDE] > 0]
    assert len(set(ids)) == len(ids)  # each multiplier once
    assert np.array_equal(a.flat_of[tkern.WIDE:], a.flat_of[:tkern.WIDE])


def test_flat_cells_mark_at_most_127_multipliers():
    """Blocks of 300 different multipliers: the first 127 met are marked, the rest not."""
    block, reach = 11, 2
    values = 1.0 + np.arange(300) / 7.0
    base = np.repeat(np.repeat(values.reshape(15, 20), block, axis=0), block, axis=1)
    calm = (np.arange(base.size) % 3 == 0).astype(np.uint8)
    out, multiplier = np.empty(base.size, dtype=np.uint8), np.empty(tkern.WIDE)
    used = tkern.flat_cells(base.ravel(), np.empty(0), np.empty(0), np.empty(0),
                               base.shape[1], reach, calm, out, multiplier)
    assert used == tkern.WIDE
    got = multiplier[out % tkern.WIDE].reshape(base.shape)
    marked = got > 0
    assert np.array_equal(got[marked], base[marked])
    # every block's middle can be marked, by its box; 127 of the 300 are, and those
    # marked ``calm`` have the WIDE bit
    middles = marked[block // 2::block, block // 2::block]
    assert middles.sum() == 127 and marked.sum() == 127 * (block - 2 * reach) ** 2
    assert np.array_equal(out >= tkern.WIDE, marked.ravel() & (calm == 1))


def onward_by_search(st, window=None):
    """`terrain.lattice.onward_steps` written out: per step k, a Dijkstra from a - s_k that
    stops only within ``window`` (default the longest step's reach) of a; step j
    stays unless it finds a + s_j nearer than s_k then s_j, or a + s_j is a - s_k."""
    steps = list(zip(st.dr.tolist(), st.dc.tolist(), st.length.tolist(), strict=True))
    reach = max(max(abs(r), abs(c)) for r, c, _ in steps) if window is None else window
    rows = []
    for kr, kc, klen in steps:
        best, heap, ends = {(-kr, -kc): 0.0}, [(0.0, -kr, -kc)], {(-kr, -kc): 0.0}
        while heap:
            d, r, c = heapq.heappop(heap)
            if d > best[(r, c)]:
                continue
            for sr, sc, slen in steps:
                n = (r + sr, c + sc)
                ends[n] = min(ends.get(n, math.inf), d + slen)
                if max(abs(n[0]), abs(n[1])) <= reach and d + slen < best.get(n, math.inf):
                    best[n] = d + slen
                    heapq.heappush(heap, (d + slen, *n))
        rows.append([j for j, (sr, sc, slen) in enumerate(steps)
                     if ends.get((sr, sc), math.inf) >= (klen + slen) * (1 - 1e-6)])
    return rows


@pytest.mark.parametrize(("directions", "lengths"), [
    (8, None), (8, (1.0, 1.0)), (8, (2.0, 3.0)), (16, None), (32, None), (48, None),
])
def test_onward_steps_leave_out_the_pairs_a_shorter_path_beats(directions, lengths):
    st = engine.terrain.lattice.steps(0.5, directions, lengths=lengths)
    k = len(st.dr)
    rows = [st.onward[st.onward_start[i]:st.onward_start[i + 1]].tolist() for i in range(k + 1)]
    assert rows[:k] == onward_by_search(st)
    assert rows[k] == list(range(k))  # no step behind: all of them
    # The least window that leaves out as much (what `search_trail` relies on)
    w = st.onward_window
    assert lengths is not None or w == {8: 1, 16: 1, 32: 3, 48: 3}[directions]
    assert onward_by_search(st, w) == rows[:k]
    assert w == 0 or onward_by_search(st, w - 1) != rows[:k]
    keep = np.zeros((k, k), dtype=bool)
    for i, row in enumerate(rows[:k]):
        keep[i, row] = True
        assert i in row and 3 <= len(row) <= 5  # straight on is never beaten
    assert (keep == keep.T).all()  # kept either way round (the flow field's use)


@pytest.mark.parametrize(("directions", "pricing", "corners"), [
    (8, "segment", False), (8, "segment", True), (8, "midpoint", False),
    (8, "destination", False), (16, "segment", False), (32, "segment", False),
    (48, "segment", False),
])
def test_a_steps_pieces_lie_between_its_ends(directions, pricing, corners):
    """What `terrain.lattice.onward_steps` relies on: a step between two cells of a flat
    cell's box crosses no cell outside it."""
    st = engine.terrain.lattice.steps(0.5, directions, pricing=pricing, corner_cutting=corners)
    for k in range(len(st.dr)):
        pieces = slice(st.piece_start[k], st.piece_start[k + 1])
        rows, cols = st.piece_dr[pieces], st.piece_dc[pieces]
        assert (min(0, st.dr[k]) <= rows).all() and (rows <= max(0, st.dr[k])).all()
        assert (min(0, st.dc[k]) <= cols).all() and (cols <= max(0, st.dc[k])).all()


def without_pruning(g):
    """Replace ``g``'s kernel arguments by a copy whose every row of onward steps is all."""
    a = g.kernel_args
    k = len(a.step_dr)
    g.__dict__["kernel_args"] = a._replace(  # the cached property, replaced
        onward_start=np.arange(k + 2, dtype=np.int64) * k,
        onward=np.tile(np.arange(k, dtype=np.int64), k + 1))


def open_battlefield():
    """Wide open ground with a few woods, a hill and scrub: most cells deep in flat ground."""
    feats = [feature("woods", rect(5, 5, 25, 18)), feature("scrub", rect(30, 3, 55, 30)),
             feature("hill", rect(8, 24, 28, 38), elevation=3, steep=True),
             feature("woods", rect(40, 34, 52, 39))]
    return engine.load_map(battlefield(feats, 90, 60, cell=0.5))


def patchy_battlefield(seed):
    """Small patches of ground close together: most flat cells lie a few cells from
    other ground."""
    rng = np.random.default_rng(seed)
    feats = []
    for _ in range(45):
        x, y = rng.uniform(0, 36), rng.uniform(0, 26)
        w, h = rng.uniform(1.0, 4.0, 2)
        kind = str(rng.choice(["woods", "scrub", "broken ground", "bog", "building"]))
        feats.append(feature(kind, rect(x, y, x + w, y + h)))
    return engine.load_map(battlefield(feats, 40, 30, cell=0.25))


@pytest.mark.parametrize("depth", [0.0, 1.0, 3.0])
@pytest.mark.parametrize("seed", range(3))
def test_pruning_near_other_ground_changes_no_cost(rules, seed, depth):
    """Where other ground lies just beyond a flat cell's box, pruning keeps every cost."""
    g = engine.cost_grid(patchy_battlefield(seed), rules, rules.unit("humans", depth=depth))
    assert 0.2 < (g.kernel_args.flat > 0).mean() < 0.8
    rng = np.random.default_rng(seed)
    starts = [centre(g, c) for c in rng.choice(np.flatnonzero(np.isfinite(g.base.ravel())), 40)]
    pruned = [by_cell(r) for r in engine.reach_many(g, starts, 8.0, any_angle=False)]
    without_pruning(g)
    assert [by_cell(r) for r in engine.reach_many(g, starts, 8.0, any_angle=False)] == pruned


def kept_steps(g, source, budget):
    """Costs and kept steps (``parent``) of a reach's cells, by cell."""
    ws = _state._Workspace.for_cells(g.base.size)
    n = ws.run(g, source, -1, budget, lowest=True)
    cells = ws.touched[:n].copy()
    out = dict(zip(cells.tolist(), zip(ws.dist[cells].tolist(),
                                       (ws.parent[cells] & (skern.CLOSED - 1)).tolist(),
                                       strict=True), strict=True))
    ws.reset(n)
    return out


@pytest.mark.parametrize("directions", [8, 32])
def test_pruning_keeps_the_parents_and_quantised_costs(directions):
    """For a reach priced per started quantum (settled along the steps the search
    kept), of offers equal to the bit a cell keeps the lowest step, whatever the
    queue's order, so pruning changes no step kept nor any cost.  (Before the tie
    rule, 4 of the first start's 647 cells came out 1e-16 apart.)"""
    bs = engine.load_rules("battlesystem")
    g = engine.cost_grid(engine.load_map("maps/battlesystem/light-woods.geojson"), bs,
                         bs.unit("infantry", depth=0.0), directions=directions)
    assert g.quantum.any()
    starts = [(2.875, 0.125), (10.125, 2.375), (20.625, 3.875)]
    sources = [first_open(g, seed) for seed in range(6)]
    pruned = [by_cell(engine.reach(g, s, any_angle=False)) for s in starts]
    kept = [kept_steps(g, s, 12.0) for s in sources]
    without_pruning(g)
    assert [by_cell(engine.reach(g, s, any_angle=False)) for s in starts] == pruned
    assert [kept_steps(g, s, 12.0) for s in sources] == kept


@pytest.mark.parametrize("depth", [4.0, 7.0])
def test_pruning_behind_rear_ranks_changes_no_cost(rules, demo, depth):
    """Ranks deep over other ground leave a trail into the flat ground ahead: a cell
    there may be reached more cheaply with that trail, and offer less than a path of
    light steps would.  `search_trail` prunes only where no trail can hold other
    ground (`tkern.trail_cells`), so its reaches stay those of every step."""
    g = engine.cost_grid(demo, rules, rules.unit("humans", move=24, depth=depth))
    rng = np.random.default_rng(1)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    starts = [centre(g, c) for c in rng.choice(open_cells, 60)]
    pruned = [by_cell(r) for r in engine.reach_many(g, starts, any_angle=False)]
    without_pruning(g)
    assert [by_cell(r) for r in engine.reach_many(g, starts, any_angle=False)] == pruned


@pytest.mark.parametrize("depth", [2.0, 4.0, 7.0])
def test_pruning_near_a_footprint_over_other_ground_changes_no_cost(rules, depth):
    """Starts just out of a wood, ranks still in it: the footprint holds the wood's
    ground no longer than a trail would (`tkern.trail_cells`), so the ``WIDE``
    marks cover it; every cost is the unpruned search's."""
    feats = [feature("woods", rect(0, 0, 20, 30)), feature("bog", rect(34, 10, 40, 14))]
    g = engine.cost_grid(engine.load_map(battlefield(feats, 40, 30, cell=0.25)), rules,
                         rules.unit("humans", depth=depth))
    wide = (g.kernel_args.flat >= tkern.WIDE).reshape(g.grid.shape)
    assert wide[:, 100:].any()  # open ground that prunes, beyond the trail's reach
    starts = [(20.0 + dx, y) for dx in (0.125, 0.375, 0.625, 1.125) for y in (5.1, 15.3, 24.9)]
    pruned = [by_cell(r) for r in engine.reach_many(g, starts, 10.0, any_angle=False)]
    without_pruning(g)
    assert [by_cell(r) for r in engine.reach_many(g, starts, 10.0, any_angle=False)] == pruned


@pytest.mark.parametrize("table", [True, False], ids=["table", "no-table"])
@pytest.mark.parametrize("depth", [0.0, 2.0, 5.0])
@pytest.mark.parametrize("directions", [8, 32])
def test_pruned_searches_equal_the_searches_of_every_step(rules, depth, directions, table):
    """Pruning a deep cell's steps (`terrain.lattice.onward_steps`) changes no cost, bit for bit:
    Dijkstra and A* with a table (`search_plain`, `search_trail`) and without
    (`search`)."""
    g = engine.cost_grid(open_battlefield(), rules, rules.unit("humans", depth=depth),
                         directions=directions)
    if not table:
        g.__dict__["kernel_args"] = kernel_args(  # the cached property, replaced
            g.base, g.steps, g.steep, g.slope, depth, g.footprint, table=False)
    assert (g.kernel_args.flat > 0).mean() > 0.5
    assert (g.kernel_args.table_cost.size > 0) == table
    rng = np.random.default_rng(int(depth) + directions)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    starts = [centre(g, c) for c in rng.choice(open_cells, 12)]
    ends = [centre(g, c) for c in rng.choice(open_cells, 4)]

    def answers():
        many = [by_cell(r) for r in engine.reach_many(g, starts, 15.0, any_angle=False)]
        one = [by_cell(engine.reach(g, s, 15.0, any_angle=False)) for s in starts[:4]]
        routes = [engine.route(g, s, e, any_angle=False).cost
                  for s, e in zip(starts[:4], ends, strict=True)]
        return many, one, routes

    pruned = answers()
    without_pruning(g)
    every = answers()
    assert every[:2] == pruned[:2]
    # A* may settle a cell from another of its equally cheap paths (in the last bit)
    assert every[2] == pytest.approx(pruned[2], rel=1e-14)


@pytest.mark.parametrize(("seed", "depth"), [(0, 0.0), (1, 3.0), (2, 5.0)])
def test_flat_cells_without_a_table_price_as_the_table_does(rules, seed, depth):
    """Big grids have no table: their flat cells are priced from ``flat`` alone."""
    feats = [feature("woods", rect(2, 2, 12, 10)), feature("hill", rect(10, 6, 17, 13),
                                                           elevation=3, steep=True)]
    bf = engine.load_map(battlefield(feats, 18, 14, cell=0.5))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))
    source = first_open(g, seed)
    tabled = engine.reach(g, centre(g, source), 12.0, any_angle=False)
    a = g.kernel_args
    assert (a.flat > 0).any() and a.table_cost.size
    g.__dict__["kernel_args"] = kernel_args(  # the cached property, replaced
        g.base, g.steps, g.steep, g.slope, depth, g.footprint, table=False)
    untabled = engine.reach(g, centre(g, source), 12.0, any_angle=False)
    got = by_cell(untabled)
    assert got == pytest.approx(by_cell(tabled), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_route_is_optimal(rules, seed):
    bf = random_map(seed + 10)
    g = engine.cost_grid(bf, rules, rules.unit("goblins", depth=0))
    source = first_open(g, seed)
    expected = reference_costs(g, source)
    rng = np.random.default_rng(seed)
    for goal in rng.choice(list(expected), size=8):
        rt = engine.route(g, centre(g, source), centre(g, goal), any_angle=False)
        assert rt.cost == pytest.approx(expected[int(goal)], rel=1e-12, abs=1e-9)


@pytest.mark.parametrize(("seed", "depth", "hills"), [(0, 2.0, False), (1, 3.5, True),
                                                      (2, 0.0, True), (3, 5.0, True)])
def test_costs_are_the_price_of_the_traced_path(rules, seed, depth, hills):
    bf = random_map(seed, hills=hills)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))
    source = first_open(g, seed)
    ws = _state._workspace(g)
    n = ws.run(g, source, -1, math.inf)
    try:
        cells = ws.touched[:n].copy()
        dist = ws.dist[cells].copy()
        some = cells[:: max(1, n // 40)]
        if depth > 0:  # each cell's cheapest label, and the labels it came from
            cost, cell, prev = (x[:ws.used] for x in ws.labels[:3])
            live = (ws.labels.state[:ws.used] & 3) != skern.DROPPED
            paths = {}
            for c in some:
                label = np.flatnonzero(live & (cell == c))
                label = int(label[np.argmin(cost[label])])
                paths[int(c)] = skern.trace_labels(prev, cell, label).tolist()
        else:
            paths = {int(c): _state._trace(g, ws.parent, source, int(c)) for c in some}
    finally:
        ws.reset(n)
    costs = dict(zip(cells.tolist(), dist.tolist(), strict=True))
    for cell, path in paths.items():
        if len(path) < 2:
            continue
        priced = engine.price_path(g, _polyline(g, path))
        assert priced.cost == pytest.approx(costs[cell], rel=1e-9, abs=1e-9)


def test_workspace_is_clean_after_each_query(rules):
    g = engine.cost_grid(random_map(5), rules, rules.unit("humans", depth=2))
    ws = _state._workspace(g)
    a = engine.reach(g, centre(g, first_open(g, 5)), 6, any_angle=False)
    assert np.isinf(ws.dist).all() and (ws.pos == -1).all() and (ws.parent == -1).all()
    b = engine.reach(g, centre(g, first_open(g, 5)), 6, any_angle=False)
    assert np.array_equal(a.cells, b.cells) and np.array_equal(a.cost, b.cost)


def test_reach_touches_only_cells_within_the_allowance(rules):
    bf = engine.load_map(battlefield([], 200, 200, cell=0.5))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    ws = _state._workspace(g)
    n = ws.run(g, 200 * 400 + 200, -1, 10.0)
    ws.reset(n)
    # Settled cells lie within 20 cells (plus a bucket, 1 cell); queued ones one step beyond.
    assert n <= math.pi * (20 + 1 + math.hypot(3, 2)) ** 2 < 0.02 * g.base.size


def test_unreachable_goal_raises(rules):
    bf = engine.load_map(battlefield([feature("building", rect(10, -1, 12, 21))], 40, 20))
    g = engine.cost_grid(bf, rules, rules.unit("humans"))
    with pytest.raises(engine.NoRouteError, match="no route from"):
        engine.route(g, (2, 2), (30, 2))


@pytest.mark.parametrize("bad", [(-1, 2), (2, 20.5), (math.nan, 1), "x"])
def test_points_off_the_table_are_refused(rules, bad):
    bf = engine.load_map(battlefield([], 40, 20))
    g = engine.cost_grid(bf, rules, rules.unit("humans"))
    with pytest.raises(engine.InputError):
        engine.reach(g, bad)


@pytest.mark.parametrize("allowance", [-1, math.inf, math.nan, "5"])
def test_bad_allowances_are_refused(rules, allowance):
    bf = engine.load_map(battlefield([], 40, 20))
    g = engine.cost_grid(bf, rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match="allowance"):
        engine.reach(g, (5, 5), allowance)


@pytest.mark.parametrize(("grid", "source", "words"), [
    (np.ones((3, 3, 3)), (0, 0), "2-D"),
    (np.ones((3, 3)) * 0.5, (0, 0), ">= 1"),
    (np.full((3, 3), np.nan), (0, 0), "NaN"),
    (np.ones((3, 3)), (3, 0), "off the 3 x 3 grid"),
    (np.array([[np.inf, 1.0]]), (0, 0), "blocked"),
    (np.ones((3, 3)), (0.5, 1), "two whole numbers"),  # was silently cell (0, 1)
    (np.ones((3, 3)), (math.inf, 0), "two whole numbers"),  # was an OverflowError
    ([[1.0, 1.0], [1.0]], (0, 0), "ragged"),  # was numpy's ValueError
    # was a warning, its imaginary part dropped
    (np.array([[1 + 1j, 1.0]]), (0, 0), "real numbers, got an array of complex128"),
    (np.array([[1.0, 1e7]]), (0, 0), "too large"),  # was a MemoryError in the kernel
    (np.array([[1.0, 1e300]]), (0, 0), "too large"),  # was a numba TypingError
])
def test_cost_field_refuses_bad_input(grid, source, words):
    with pytest.raises(engine.InputError, match=words):
        engine.cost_field(grid, source)


@pytest.mark.parametrize("lengths", [(1,), "ab", (math.nan, 1)])
def test_malformed_step_lengths_are_refused(lengths):
    with pytest.raises(engine.InputError, match="lengths must be"):
        engine.grid_route(np.ones((3, 3)), (0, 0), (2, 2), directions=8, lengths=lengths)


def test_huge_multiplier_route_is_refused_not_a_kernel_crash():
    with pytest.raises(engine.InputError, match="multiplier or a flat cost"):
        engine.grid_route(np.array([[1.0, 1e6, 1.0]]), (0, 0), (0, 2), directions=8)


def test_dear_but_accepted_steps_keep_the_queue_small():
    """A wall of multiplier 1e4 (about 14,000 buckets) is searched within
    `skern.STACK_LIMIT`; 2e5 is refused (the review found it asking for 32 GiB)."""
    m = np.ones((300, 300))
    m[150, :] = 1e4
    m[150, 0] = 1.0  # a gap
    router = engine.GridRouter(m, directions=8)
    cost, cells = router.route((0, 0), (299, 299))
    assert (150, 0) in cells and cost == pytest.approx(
        engine.cost_field(m, (0, 0), directions=8)[299, 299])
    # A*'s ties on open ground fill one bucket of 65,536: past the limit it took `search`.
    assert router._ws.linked and router._ws.stack.size <= engine.search._kernels.STACK_LIMIT
    assert router.route((0, 0), (299, 299)) == (cost, cells)
    m[150, 1:] = 2e5
    with pytest.raises(engine.InputError, match="too large"):
        engine.GridRouter(m, directions=8)


def test_stacks_past_their_limit_take_the_linked_buckets(rules, monkeypatch):
    """`reach` and `reach_many` fall back to `skern.search` alike (limit made tiny)."""
    g = engine.cost_grid(engine.load_map("maps/demo.geojson"), rules,
                         rules.unit("humans", move=24, depth=0))
    starts = [(20.25, 60.25), (90.25, 30.25), (150.25, 100.25)]
    expected = [engine.reach(g, xy, any_angle=False) for xy in starts]
    monkeypatch.setattr(engine.search._kernels, "stack_width", lambda n, rows: 1)
    monkeypatch.setattr(engine.search._kernels, "STACK_LIMIT", 1)
    _state._workspace(g).stack = np.empty((0, 0), dtype=np.int32)
    answers = engine.reach_many(g, starts, any_angle=False)
    for xy, one, many in zip(starts, expected, answers, strict=True):
        got = engine.reach(g, xy, any_angle=False)
        for r in (got, many):
            assert by_cell(r) == pytest.approx(
                by_cell(one), rel=1e-12)
    assert id(g.kernel_args) in _state._workspace(g).linked
    with pytest.raises(engine.InputError, match="flow field's queue"):
        engine.flow_field(g, [(90.25, 30.25)])


@pytest.mark.parametrize("depth", [0.0, 2.0])
def test_a_table_without_flat_cells_is_priced_piece_by_piece(rules, depth):
    """``kernel_args(flat=False)`` leaves ``flat`` empty; no kernel may read it then."""
    bf = engine.load_map(battlefield([feature("woods", rect(3, 2, 15, 12))], 18, 14, cell=1.0))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=depth))
    expected = engine.reach(g, (1.5, 1.5), 10.0, any_angle=False)
    g.__dict__["kernel_args"] = kernel_args(  # the cached property, replaced
        g.base, g.steps, g.steep, g.slope, depth, g.footprint, enter=g.enter, narrow=g.narrow,
        flat=False)
    assert g.kernel_args.flat.size == 0 and g.kernel_args.table_cost.size
    got = engine.reach(g, (1.5, 1.5), 10.0, any_angle=False)
    assert by_cell(got) == pytest.approx(
        by_cell(expected), rel=1e-12)


@pytest.mark.parametrize(("path", "words"), [
    ([(5, 5), "a"], "path point 1: a point must be two numbers"),
    ([(5, 5), (math.nan, 1)], "path point 1: point"),
])
def test_price_path_names_a_bad_point(rules, path, words):
    g = engine.cost_grid(engine.load_map(battlefield([], 40, 20)), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match=words):
        engine.price_path(g, path)


def test_route_with_an_absurdly_small_allowance_is_refused(rules):
    g = engine.cost_grid(engine.load_map(battlefield([], 40, 20)), rules, rules.unit("humans"))
    with pytest.raises(engine.InputError, match="allowance 1e-10 is too small"):
        # was a MemoryError building 3e11 stops
        engine.route(g, (1, 1), (30, 1), 1e-10, any_angle=False)


def test_cost_field_matches_reach_on_open_ground(rules):
    bf = engine.load_map(battlefield([], 20, 10, cell=0.5))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    field = engine.cost_field(np.ones(g.grid.shape), (10, 20), cell=0.5, allowance=6)
    r = engine.reach(g, g.grid.rc_to_xy((10, 20)), 6, any_angle=False)
    assert np.array_equal(np.isfinite(field), np.isfinite(r.to_array()))
    assert np.allclose(field[np.isfinite(field)], r.to_array()[np.isfinite(field)])


def test_raw_grids_take_the_plain_kernel_without_a_table():
    raw = engine.GridRouter(np.ones((8, 8)), directions=8)._raw
    assert raw.kernel_args.plain and raw.kernel_args.table_cost.size == 0


def raw_reference(m, source, directions, pricing, corner_cutting, lengths):
    """networkx Dijkstra on a raw grid, each step priced from `segment_cells` directly."""
    rows, cols = m.shape
    graph = nx.DiGraph()
    for dr, dc in neighbourhood(directions):
        pieces, corners = segment_cells((0.5, 0.5), (0.5 + dc, 0.5 + dr))
        hyp = math.hypot(dr, dc)
        length = hyp if lengths is None else lengths[hyp > 1]
        for r in range(rows):
            for c in range(cols):
                rr, cc = r + dr, c + dc
                if not (0 <= rr < rows and 0 <= cc < cols):
                    continue
                if not corner_cutting and any(math.isinf(m[r + pr, c + pc]) for pr, pc in corners):
                    continue
                if pricing == "segment":
                    w = sum((s1 - s0) / hyp * length * m[r + pr, c + pc]
                            for pr, pc, s0, s1 in pieces)
                elif pricing == "midpoint":
                    w = length * 0.5 * (m[r, c] + m[rr, cc])
                else:
                    w = length * m[rr, cc]
                if math.isfinite(m[r, c]) and math.isfinite(w):
                    graph.add_edge(r * cols + c, rr * cols + cc, weight=w)
    return graph, nx.single_source_dijkstra_path_length(graph, source[0] * cols + source[1])


@pytest.mark.parametrize(("seed", "directions", "convention"), [
    (0, 8, {}),
    (1, 16, {}),
    (2, 32, {}),
    (7, 48, {}),
    (3, 8, {"pricing": "destination", "corner_cutting": True, "lengths": (1, 1.41)}),
    (4, 8, {"pricing": "destination", "corner_cutting": True, "lengths": (1, 1)}),
    (5, 8, {"pricing": "midpoint", "corner_cutting": True}),
    (6, 8, {"pricing": "destination", "lengths": (2, 3)}),
])
def test_plain_kernel_matches_networkx(seed, directions, convention):
    """`cost_field` (Dijkstra) and `GridRouter.route` (A*) on raw grids, every cell."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 5, (13, 17)).astype(float)
    m[rng.random(m.shape) < 0.2] = np.inf
    m[6, 8] = 1.0
    graph, expected = raw_reference(m, (6, 8), directions, convention.get("pricing", "segment"),
                             convention.get("corner_cutting", False), convention.get("lengths"))
    field = engine.cost_field(m, (6, 8), directions=directions, **convention)
    assert {int(i) for i in np.flatnonzero(np.isfinite(field))} == expected.keys()
    router = engine.GridRouter(m, directions=directions, **convention)
    router._ws.stack = np.empty((0, 1), dtype=np.int32)  # outgrown at once: the retry runs
    cols = m.shape[1]
    for cell, cost in expected.items():
        assert field.flat[cell] == pytest.approx(cost, rel=1e-12)
        got, path = router.route((6, 8), divmod(cell, cols))
        assert got == pytest.approx(cost, rel=1e-12)
        flat = [r * cols + c for r, c in path]
        assert flat[0] == 6 * cols + 8 and flat[-1] == cell
        assert sum(graph[a][b]["weight"] for a, b in itertools.pairwise(flat)) == pytest.approx(
            cost, rel=1e-12)
    assert router._ws.stack.shape[1] > 1 and np.isinf(router._ws.dist).all()
    blocked = np.argwhere(np.isfinite(m) & np.isinf(field))
    for rc in blocked[:3]:
        with pytest.raises(engine.NoRouteError):
            router.route((6, 8), tuple(rc))


def state_search(g, source, budget):
    """Cheapest cost of every cell within ``budget``: Dijkstra over (cell, trail) states,
    every trail its own state (none dropped), each step walked piece by piece."""
    a = g.kernel_args
    rows, cols = a.base.size // a.cols, a.cols
    org = np.empty(tkern.TRAIL, dtype=np.int64)
    no_f, no_i = np.empty(0), np.empty(0, dtype=np.int64)
    best, done = {}, set()
    heap, count = [(0.0, 0, source, None)], 1
    while heap:
        d, _, c, trail = heapq.heappop(heap)
        if (c, trail) in done:
            continue
        done.add((c, trail))
        best.setdefault(c, d)
        r0, c0 = divmod(c, cols)
        for k in range(len(a.step_dr)):
            if not (0 <= r0 + a.step_dr[k] < rows and 0 <= c0 + a.step_dc[k] < cols):
                continue
            lv, rem, n = np.empty(tkern.TRAIL), np.empty(tkern.TRAIL), 0
            if trail is None:  # the source: ranks straight behind the front
                for j in range(a.fp_start[k], a.fp_start[k + 1]):
                    rr, cc = r0 + a.fp_dr[j], c0 + a.fp_dc[j]
                    if 0 <= rr < rows and 0 <= cc < cols:
                        i = rr * cols + cc
                        w = tkern.through(a.base, a.steep, a.slope_of, a.slopes, i,
                                          a.ux[k], a.uy[k])
                        if w != math.inf:
                            n = skern.push(lv, rem, org, n, w, a.fp_rem[j], i)
            else:
                n = len(trail[0])
                lv[:n], rem[:n] = trail
            total, prev, t = 0.0, c, 0.0
            for j in range(a.piece_start[k], a.piece_start[k + 1]):
                i = c + a.piece_dr[j] * cols + a.piece_dc[j]
                if a.base[i] == math.inf:  # a corner touched is enough to block
                    total = math.inf
                    break
                if a.piece_w[j] == 0.0:
                    continue
                ends = [(t + e * a.piece_w[j]) * a.step_dc[k] - a.piece_dc[j] for e in (0, 1)]
                ends += [(t + e * a.piece_w[j]) * a.step_dr[k] - a.piece_dr[j] for e in (0, 1)]
                t += a.piece_w[j]
                cut = (1.0, 1.0, 1.0, 1.0, 1.0)
                if a.steep[i] != 1.0:  # the stretches between the folds it crosses
                    cut = tkern.fold(a.steep[i], a.slopes, a.slope_of[i], a.ux[k], a.uy[k],
                                     ends[0], ends[2], ends[1], ends[3])
                length = a.piece_w[j] * a.step_len[k]
                parts = [tkern.stretch(cut, part, length) for part in range(3)]
                for along, m in [p for n_, p in enumerate(parts) if p[0] > 0 or n_ == 0]:
                    w = a.base[i] * m
                    cost, n, _ = skern.trail.advance(lv, rem, org, n, w, i, along, a.depth,
                                                     no_f, no_f, no_i, False)
                    total += cost
                if a.enter.size:
                    total += tkern.entry(a.enter[i], a.enter[prev], a.narrow[i], a.narrow[prev])
                prev = i
            if d + total <= budget:
                b = c + a.step_dr[k] * cols + a.step_dc[k]
                state = (tuple(np.round(lv[:n], 9)), tuple(np.round(rem[:n], 9)))
                if (b, state) not in done:
                    heapq.heappush(heap, (d + total, count, b, state))
                    count += 1
    return best


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1000])
def test_flow_offers_sort_by_cost_keeping_ties_in_order(n):
    from engine.search._kernels.flow import _by_cost, _widest

    rng = np.random.default_rng(n)
    dist = rng.integers(0, 5, 2 * n + 1).astype(np.float64)  # many ties
    cells = rng.permutation(2 * n + 1)[:n].astype(np.int64)
    want = cells[np.argsort(dist[cells], kind="stable")]
    assert _by_cost(cells, dist).tolist() == want.tolist()
    dr, dc = rng.integers(-4, 5, n + 1), rng.integers(-4, 5, n + 1)
    assert _widest(dr, dc) == max(np.abs(dr).max(), np.abs(dc).max())
